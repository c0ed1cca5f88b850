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

A lock file lives only while its claim is held: the holder removes it before it lets go, so the
folder does not keep one file per issue or PR ever commented on (a fork with years of PRs would
keep tens of thousands). Removing a locked file by name has a known race — a waiter that opened
the file before it was removed then locks a file no one else will ever open, beside a new holder
of a new file under the same name — so a claim is held only once its locked file is still the
one the name points to (same device and inode, ``fstat`` against ``stat``); otherwise it opens
the name again. Every process using the folder must follow this rule (a release that keeps its
files and one that removes them must not share a folder). :meth:`Claims.sweep` removes the files
an earlier release left, the same way.

Claims on objects are leaves: nothing else is claimed while one is held, so claims never wait on
each other in a cycle (the fork lock may be held while an object is claimed, never the reverse).
The rule is checked: a claim asked by a task while that task holds an object claim (of any
:class:`Claims`) raises :class:`ClaimOrderError` at once, before it waits.

One :class:`Claims` per worker process, on ``<workdir>/locks``: built by the runtime
(:class:`bot.app.runtime.Clients`), carried by every GitHub client it makes
(:attr:`bot.github.client.GitHubClient.claims`, so every marked comment is claimed:
:func:`bot.github.common.comment_once`, and every issue found by its title:
:func:`bot.github.common.issue_once`) and shared with the sync service (the fork lock, the
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
        self._users: dict[tuple[str, str], int] = {}      # coroutines holding or waiting, per key

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
        self._users[(full_name, key)] = self._users.get((full_name, key), 0) + 1
        try:
            async with lock:
                async with self._file(full_name, key):
                    async with self._marked(full_name, key):
                        yield
        finally:
            # forgotten once no coroutine holds or waits for it: one lock per key ever claimed
            # would grow as the lock files did
            self._users[(full_name, key)] -= 1
            if not self._users[(full_name, key)]:
                del self._users[(full_name, key)]
                del self._locks[(full_name, key)]

    @contextlib.asynccontextmanager
    async def _file(self, full_name: str, key: str) -> AsyncIterator[None]:
        """The flock part of :meth:`hold` (see the module doc), with this process's lock held."""
        if self.folder is None:
            yield
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / lock_name(full_name, key)
        told = False
        while True:
            fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
            try:
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if not told and self.on_wait is not None:
                            self.on_wait(full_name, key)
                        told = True
                        await asyncio.sleep(self.poll_s)
            except BaseException:
                os.close(fd)
                raise
            if _names(path, fd):
                break
            os.close(fd)        # locked a file its holder removed: the name's file is another one
        try:
            yield
        finally:
            # removed while locked, then closed (which releases the flock): a waiter that
            # locks the removed file sees that the name no longer points to it
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            os.close(fd)

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

    def sweep(self) -> int:
        """Remove the lock files of ``folder`` that no claim holds (files an earlier release
        kept, one per key ever claimed), under the same rule as a claim: each is locked without
        waiting and removed only while it is still the file its name points to. Files whose
        name does not end in ``.lock`` are left alone. Returns how many were removed (0 without
        a folder). Safe beside processes holding claims on the folder."""
        if self.folder is None or not self.folder.is_dir():
            return 0
        removed = 0
        for path in sorted(self.folder.glob("*.lock")):
            try:
                fd = os.open(path, os.O_RDWR)
            except FileNotFoundError:
                continue
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue            # held now: its holder removes it
                if _names(path, fd):
                    os.unlink(path)
                    removed += 1
            finally:
                os.close(fd)
        return removed


@contextlib.asynccontextmanager
async def client_claim(gh, full_name: str, key: str) -> AsyncIterator[None]:
    """Hold the claim on ``(full_name, key)`` of the claims GitHub client ``gh`` carries
    (``gh.claims``: the worker process's) for the block; nothing when it carries none (a client
    that is the only writer of its objects: a person's token in tests, a CLI run). Raises
    :class:`ClaimOrderError` as :meth:`Claims.hold` does."""
    claims: Claims | None = getattr(gh, "claims", None)
    if claims is None:
        yield
        return
    async with claims.hold(full_name, key):
        yield

def _names(path: Path, fd: int) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (same device and inode)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)
