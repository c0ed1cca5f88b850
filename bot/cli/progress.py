"""Progress of long commands (status, ledger, plan, apply, bench resolve) on stderr.

On a terminal: rich bars that vanish when done. Off a terminal (CI logs, containers, a pipe):
plain lines, one when a stage starts, then every ``every_s`` seconds while it runs — even when the
stage reports nothing (a heartbeat thread asks) — and one when it ends, each with the count and
the time since the command started::

    forksync: opening the repositories (0 s)
    forksync: analysing commits 0/5418 (2 s)
    forksync: analysing commits 1830/5418, 34% (7 s)
    forksync: analysing commits 5418/5418, done (19 s)

``--quiet`` turns both off. Stages and counts come from the callers' ``progress(step, done,
total)`` callbacks (``total == 0``: a stage without a count).
"""
from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

from bot.cli.text import text as cli_text

Progress = Callable[[str, int, int], None]

#: Seconds between two plain lines of one running stage.
EVERY_S = 5.0
#: Seconds a command runs before its first plain line: a quick command prints none.
AFTER_S = 2.0


_warned: set[str] = set()


def warn_once(text: str, stream: TextIO | None = None) -> None:
    """Print ``forksync: warning: <text>`` on stderr the first time this command run sees
    ``text`` (one command can load the same history more than once, e.g. ``resolve --continue``,
    and the demo runs several commands in one process). :func:`new_run` starts a run."""
    if text not in _warned:
        _warned.add(text)
        print(cli_text("progress", "warning", warning=text), file=stream if stream is not None else sys.stderr)


def new_run() -> None:
    """Forget the warnings printed so far (called once per ``forksync`` invocation)."""
    _warned.clear()


def label(step: str) -> str:
    """What a step of :func:`bot.sync.ingest.load_state`, the planner or the bench is called in a
    log line and on a bar (``templates/cli/progress.txt.j2``); an unknown step by its name."""
    return cli_text("progress", "label", step=step)


class PlainProgress:
    """A ``progress(step, done, total)`` callback that writes plain lines through ``write``.

    ``clock`` returns seconds (monotonic); ``every_s`` is the least time between two lines of the
    same stage; nothing is written before ``after_s`` (then the running stage's line comes first).
    :meth:`tick` writes the running stage's line when ``every_s`` has passed (called by each
    callback and by the heartbeat). Thread-safe: the heartbeat runs in another thread."""

    def __init__(self, write: Callable[[str], None], clock: Callable[[], float] = time.monotonic, every_s: float = EVERY_S,
                 after_s: float | None = None):
        self.write, self.clock, self.every_s = write, clock, every_s
        self.after_s = AFTER_S if after_s is None else after_s
        self.start = clock()
        self.step: str | None = None
        self.done = self.total = 0
        self.last = self.start
        self.lines = 0
        self._lock = threading.Lock()

    def __call__(self, step: str, done: int, total: int) -> None:
        with self._lock:
            if step != self.step:
                self.step, self.done, self.total = step, done, total
                self._line()
                return
            finished = total > 0 and done >= total > self.done
            self.done, self.total = done, total
            if finished:
                self._line()
        self.tick()

    def tick(self) -> None:
        with self._lock:
            if self.step is None:
                return
            if self.clock() - self.last >= self.every_s or (self.lines == 0 and self.clock() - self.start >= self.after_s):
                self._line()

    def _line(self) -> None:
        now = self.clock()
        if now - self.start < self.after_s:
            return
        self.write(cli_text("progress", "line", label=label(self.step or ""), done=self.done, total=self.total,
                            seconds=now - self.start))
        self.last = now
        self.lines += 1


@contextmanager
def heartbeat(reporter: PlainProgress, every_s: float = 1.0) -> Iterator[None]:
    """Call ``reporter.tick()`` every ``every_s`` seconds in a daemon thread until the block ends,
    so a stage that reports nothing for a while still shows it is alive."""
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(every_s):
            reporter.tick()

    t = threading.Thread(target=run, name="forksync-progress", daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


@contextmanager
def reporter(args=None, *, stream: TextIO | None = None) -> Iterator[Progress | None]:
    """A ``progress(step, done, total)`` callback for one command, or None with ``--quiet``
    (``args.quiet``). ``stream`` (default stderr) on a terminal gets rich bars; any other stream
    gets plain lines (:class:`PlainProgress`). ``--json`` documents go to stdout, so progress never
    mixes into them (a script reading ``2>&1`` passes ``--quiet``)."""
    stream = stream if stream is not None else sys.stderr
    if getattr(args, "quiet", False):
        yield None
        return
    if stream.isatty():
        with _bars(stream) as cb:
            yield cb
        return
    plain = PlainProgress(lambda s: print(s, file=stream, flush=True))
    with heartbeat(plain):
        yield plain


@contextmanager
def _bars(stream: TextIO) -> Iterator[Progress]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bars

    with Bars(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
              console=Console(file=stream), transient=True) as bars:
        tasks: dict[str, int] = {}

        def cb(step: str, done: int, total: int) -> None:
            if total <= 0:          # a stage without a count: the bars show counted stages only
                return
            if step not in tasks:
                tasks[step] = bars.add_task(label(step), total=total)
            bars.update(tasks[step], completed=done, total=total)
        yield cb
