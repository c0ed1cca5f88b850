"""One upstream poller per workdir and per database: the process whose workers poll upstream and
tick the validation schedules holds an exclusive ``flock`` on ``<workdir>/poller.lock`` and on
``<database>.poller.lock`` (beside the database file) for its life.

Workers sharing a workdir are safe (deliveries under leases, syncs under the fork's lock, each
lookup-then-write under its claim: docs/design.md, "What runs concurrently"), but the schedules'
ticks are not serialised across processes: two pollers whose nightly ticks overlap both find the
nightly due and both dispatch its suites. A deploy that starts the new ``serve`` before it stops
the old one would do that; so would a serve started from another folder (the default workdir is
relative) on the same database, whose state says which nightly ran. The second poller is refused
at its start instead (:class:`PollerRunning`), naming the workdir or database and the process
holding it.

Each file holds ``<pid> <host>`` of its holder, for that message; the kernel drops the lock when
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
    """Another process polls ``path``, a workdir (``kind`` ``"workdir"``) or a database
    (``"database"``): ``pid`` on ``host`` (each ``"?"`` when its lock file does not say: read
    while being written)."""

    kind: str
    path: str
    pid: str
    host: str

    def __str__(self) -> str:
        return f"the {self.kind} {self.path} is polled by pid {self.pid} on {self.host}"


class PollerLock:
    """The held locks (open files); :meth:`release` (or the process's exit) lets them go."""

    def __init__(self, fds: list[int]):
        self.fds = fds

    def release(self) -> None:
        while self.fds:
            os.close(self.fds.pop())      # closing the only descriptor drops its flock

    def __enter__(self) -> "PollerLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def hold_poller(workdir: str | os.PathLike, db: str | os.PathLike | None = None) -> PollerLock:
    """Take ``<workdir>/poller.lock`` (the workdir is created when missing) and, for a database
    file ``db`` (not ``:memory:``), ``<db>.poller.lock`` (beside the file a symbolic link ``db``
    names), without waiting, and write this
    process's pid and host into each. Raises :class:`PollerRunning` when another process holds
    either (nothing is held then), ``OSError`` (its ``filename`` set) when the workdir cannot be
    created or a lock file opened. A database whose folder is missing gets no lock: opening the
    store says so."""
    folder = Path(workdir)
    folder.mkdir(parents=True, exist_ok=True)
    held = PollerLock([])
    try:
        held.fds.append(_take(folder / "poller.lock", "workdir", folder))
        if db is not None and str(db) != ":memory:" and Path(db).parent.is_dir():   # else the store's own error says so
            # beside the file itself: a symbolic link to the database is the same database
            real = Path(db).resolve()
            held.fds.append(_take(Path(f"{real}.poller.lock"), "database", real))
    except BaseException:
        held.release()
        raise
    return held


def _take(path: Path, kind: str, named: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").split()
        finally:
            os.close(fd)
        pid, host = (holder + ["?", "?"])[:2]
        raise PollerRunning(kind, str(named.resolve()), pid, host) from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()} {socket.gethostname()}\n".encode(), 0)
    return fd


__all__ = ["PollerLock", "PollerRunning", "hold_poller"]
