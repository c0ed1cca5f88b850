"""``forksync serve`` and ``forksync worker`` as real subprocesses (``app.py``), for the tests
of what an operator meets running them: start one, wait until it listens (or exits), ask its
``/healthz``, stop it."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class ForksyncProcess:
    """``python app.py *argv`` run in ``cwd`` with exactly ``env``; its stdout is dropped and its
    stderr drained on a thread into ``lines`` (so a chatty process never blocks on a full pipe)."""

    def __init__(self, cwd: Path, argv: Sequence[str], env: Mapping[str, str]):
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), *argv], cwd=cwd, env=dict(env),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.listening = threading.Event()
        self._drained = threading.Thread(target=self._drain, daemon=True)
        self._drained.start()

    def _drain(self) -> None:
        for line in self.proc.stderr:
            self.lines.append(line)
            if "listening on" in line:
                self.listening.set()

    @property
    def log(self) -> str:
        """All the process wrote to stderr so far."""
        return "".join(self.lines)

    def started_or_exited(self, limit_s: float = 120) -> str:
        """"listening" once serve listens, "exited" once the process ended (whichever first). The
        limit bounds a broken test (AssertionError with the log), it is no budget."""
        end = time.monotonic() + limit_s
        while time.monotonic() < end:
            if self.listening.wait(1.0):
                return "listening"
            if self.proc.poll() is not None:
                self._drained.join(10)
                return "listening" if self.listening.is_set() else "exited"
        raise AssertionError(f"neither listening nor exited: {self.log}")

    @property
    def port(self) -> int:
        """The port of serve's "listening on http://127.0.0.1:PORT" line (it must have listened)."""
        line = next(x for x in self.lines if "listening on" in x)
        return int(line.split("127.0.0.1:")[1].split()[0])

    def healthz(self) -> tuple[int, dict]:
        """``GET /healthz``: ``(HTTP status, the JSON body)``."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=60) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def wait(self, timeout: float) -> int:
        """Wait until the process has exited (``subprocess.TimeoutExpired`` after ``timeout``
        seconds) and its stderr was read to the end (a child still holding it is waited for up to
        ``timeout`` seconds more): its exit status, with :attr:`log` whole."""
        rc = self.proc.wait(timeout=timeout)
        self._drained.join(timeout)
        return rc

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not exited within a minute; nothing if it has exited."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


_WORKER_UNTIL_IDLE = """
import asyncio, os, threading
from bot.app import queue as q
from bot.app.worker import Worker
from bot.store import Store

DB, RAN = {db!r}, {ran!r}
store = Store(DB)

{process}

stop = threading.Event()

def idle_watch():               # stop once nothing is left to do (the test's stand-in for SIGTERM)
    watch = Store(DB)
    while not stop.wait(1):
        c = q.counts(watch)
        if c["queued"] + c["processing"] + c["failed"] == 0:
            stop.set()

threading.Thread(target=idle_watch, daemon=True).start()
asyncio.run(Worker(store, process, {worker_args}).run(stop))
"""


def worker_until_idle(db: Path, ran: Path, process: str, worker_args: str) -> str:
    """The text of a Python program (for ``python -c``, with ``PYTHONPATH`` at the repository) that
    runs a real :class:`bot.app.worker.Worker` on the queue of the database ``db`` and stops once no
    delivery is queued, processing or failed. ``process`` is the source of its handler
    ``async def process(d)``, which sees ``DB``, ``RAN`` (the path ``ran``, for what it handled),
    ``os`` and ``q``; ``worker_args``: the Worker's keyword arguments, as source."""
    return _WORKER_UNTIL_IDLE.format(db=str(db), ran=str(ran), process=process.strip(), worker_args=worker_args)
