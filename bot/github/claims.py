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
The rule is checked: a claim asked by a task while that task holds an object claim (of any
:class:`Claims`) raises :class:`ClaimOrderError` at once, before it waits.

One :class:`Claims` per worker process, on ``<workdir>/locks``: built by the runtime
(:class:`bot.app.runtime.Clients`), carried by every GitHub client it makes
(:attr:`bot.github.client.GitHubClient.claims`, so every marked comment is claimed:
:func:`bot.github.common.comment_once`) and shared with the sync service (the fork lock, the
status issue).
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import fcntl
import logging
import os
import re
from pathlib import Path
from typing import AsyncIterator, Callable

POLL_S = 0.2        # how often a claim held by another process is looked at again

log = logging.getLogger(__name__)

#: the object claim ``(task, repository, key)`` held where this context was entered (None: none);
#: a task started under it inherits the value but is not its holder, and claims on its own
_HELD: contextvars.ContextVar[tuple[object, str, str] | None] = contextvars.ContextVar("forksync_object_claim",
                                                                                        default=None)


class ClaimOrderError(RuntimeError):
    """A claim was asked while an object claim is held (claims on objects are leaves)."""


def log_wait(full_name: str, key: str) -> None:
    """The services' ``on_wait``: one log line each time a claim waits for another holder."""
    log.info("%s: waiting for %s held by another sync or delivery", full_name,
             f"the claim on {key}" if key else "the fork lock")


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
        """Hold the claim on ``(full_name, key)`` for the block. Raises :class:`ClaimOrderError`
        when this task holds an object claim already (module doc)."""
        held = _HELD.get()
        if held is not None and held[0] is asyncio.current_task():
            raise ClaimOrderError(f"{full_name}: the claim on {key or 'the fork'} was asked while the claim on "
                                  f"{held[2]} of {held[1]} is held (claims on objects are leaves)")
        lock = self._locks.setdefault((full_name, key), asyncio.Lock())
        if lock.locked() and self.on_wait is not None:
            self.on_wait(full_name, key)
        async with lock:
            if self.folder is None:
                async with self._marked(full_name, key):
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
                async with self._marked(full_name, key):
                    yield
            finally:
                os.close(fd)        # closing the last descriptor releases the flock

    @staticmethod
    @contextlib.asynccontextmanager
    async def _marked(full_name: str, key: str) -> AsyncIterator[None]:
        """Mark an object claim as held by this task for the block (the fork lock is not marked:
        an object may be claimed under it)."""
        if not key:
            yield
            return
        token = _HELD.set((asyncio.current_task(), full_name, key))
        try:
            yield
        finally:
            _HELD.reset(token)
