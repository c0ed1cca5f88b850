"""One upstream poller per workdir: the process whose workers poll upstream and tick the
validation schedules holds an exclusive ``flock`` on ``<workdir>/poller.lock`` for its life.

Workers sharing a workdir are safe (deliveries under leases, syncs under the fork's lock, each
lookup-then-write under its claim: docs/design.md, "What runs concurrently"), but the schedules'
ticks are not serialised across processes: two pollers whose nightly ticks overlap both find the
nightly due and both dispatch its suites. A deploy that starts the new ``serve`` before it stops
the old one would do that; the second poller is refused at its start instead
(:class:`PollerRunning`), naming the workdir and the process holding it.

The file holds ``<pid> <host>`` of its holder, for that message; the kernel drops the lock when
the holder exits, however it ends (SIGKILL included), so a stale file never blocks a restart.
"""
from __future__ import annotations

import fcntl
import os
import socket
from dataclasses import dataclass
from pathlib import Path


@dataclass
class PollerRunning(Exception):
    """Another process polls ``workdir``: ``pid`` on ``host`` (each ``"?"`` when its lock file
    does not say: written by a release without it, or read while being written)."""

    workdir: str
    pid: str
    host: str

    def __str__(self) -> str:
        return f"{self.workdir} is polled by pid {self.pid} on {self.host}"


class PollerLock:
    """The held lock (an open file); :meth:`release` (or the process's exit) lets it go."""

    def __init__(self, fd: int, path: Path):
        self.fd, self.path = fd, path

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)       # closing the only descriptor drops the flock
            self.fd = -1

    def __enter__(self) -> "PollerLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def hold_poller(workdir: str | os.PathLike) -> PollerLock:
    """Take ``<workdir>/poller.lock`` (the workdir is created when missing) without waiting and
    write this process's pid and host into it. Raises :class:`PollerRunning` when another
    process holds it, ``OSError`` when the workdir cannot be created or the file opened."""
    folder = Path(workdir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "poller.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").split()
        finally:
            os.close(fd)
        pid, host = (holder + ["?", "?"])[:2]
        raise PollerRunning(str(folder.resolve()), pid, host) from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()} {socket.gethostname()}\n".encode(), 0)
    return PollerLock(fd, path)


__all__ = ["PollerLock", "PollerRunning", "hold_poller"]
