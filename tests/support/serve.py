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

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not exited within a minute; nothing if it has exited."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
