"""Claims: one writer at a time of one object of a repository, across coroutines and processes.

A claim is held on ``(repository, key)``: ``key`` ``""`` is the repository's working repository
(the fork lock of :class:`bot.sync.service.SyncService`), any other key one object on GitHub that
is looked up and then written (the status issue; the comments of one issue or PR). Without it two
writers of the same object — worker 0's upstream poller beside a delivery in one event loop, or
two workers of ``serve --workers N`` — both find nothing and both create it.

Held as an asyncio lock per ``(repository, key)`` in this process, then, when ``folder`` is given,
an exclusive ``flock`` on ``<folder>/<owner>+<repo>[@<key>].lock`` shared by the processes that use
the same folder (``flock`` locks belong to an open file, so two :class:`Claims` on one folder
exclude each other within one process too). Waited for without blocking the event loop (polled
every ``poll_s``, so a cancelled wait holds nothing); the OS releases a dead process's claims.

Claims on objects are leaves: nothing else is claimed while one is held, so claims never wait on
each other in a cycle (the fork lock may be held while an object is claimed, never the reverse).
"""
from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import re
from pathlib import Path
from typing import AsyncIterator, Callable

POLL_S = 0.2        # how often a claim held by another process is looked at again


def lock_name(full_name: str, key: str = "") -> str:
    """Pure: the lock file's name of ``(full_name, key)``: ``owner+repo.lock``, or
    ``owner+repo@key.lock`` with every character but ``[A-Za-z0-9_.-]`` of ``key`` as ``_``."""
    base = full_name.replace("/", "+")
    return f"{base}@{re.sub(r'[^A-Za-z0-9_.-]', '_', key)}.lock" if key else f"{base}.lock"


class Claims:
    """Claims on ``(repository, key)`` (see the module doc). ``folder``: where the lock files
    are (None: this process only); ``on_wait(full_name, key)``: called once each time a claim
    must wait for another holder (logged by the services, observed by tests)."""

    def __init__(self, folder: str | Path | None = None, *, poll_s: float = POLL_S,
                 on_wait: Callable[[str, str], None] | None = None):
        self.folder = Path(folder) if folder is not None else None
        self.poll_s = poll_s
        self.on_wait = on_wait
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    def locked(self, full_name: str, key: str = "") -> bool:
        """Whether a coroutine of this process holds the claim on ``(full_name, key)`` now."""
        lock = self._locks.get((full_name, key))
        return lock is not None and lock.locked()

    @contextlib.asynccontextmanager
    async def hold(self, full_name: str, key: str = "") -> AsyncIterator[None]:
        """Hold the claim on ``(full_name, key)`` for the block."""
        lock = self._locks.setdefault((full_name, key), asyncio.Lock())
        if lock.locked() and self.on_wait is not None:
            self.on_wait(full_name, key)
        async with lock:
            if self.folder is None:
                yield
                return
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.folder / lock_name(full_name, key), os.O_CREAT | os.O_RDWR, 0o600)
            try:
                told = False
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if not told and self.on_wait is not None:
                            self.on_wait(full_name, key)
                        told = True
                        await asyncio.sleep(self.poll_s)
                yield
            finally:
                os.close(fd)        # closing the last descriptor releases the flock
