"""One sync per fork at a time across worker processes: ``serve --workers N`` runs N processes on
one working directory, and two syncs of one fork there would run git in the same repository at
once. Two services on one workdir stand for two processes (``flock`` locks are per open file, so
they exclude each other within one process as across processes)."""
import asyncio

from bot.sync.service import SyncService


async def test_two_workers_on_one_workdir_never_hold_one_forks_lock_at_once(tmp_path):
    a, b = SyncService(workdir=tmp_path, git_url=""), SyncService(workdir=tmp_path, git_url="")
    order: list[str] = []
    a_holds = asyncio.Event()

    async def first():
        async with a._lock("meta/triton"):
            order.append("a in")
            a_holds.set()
            await asyncio.sleep(0.3)             # b must wait all this time, however long it is
            order.append("a out")

    async def second():
        await a_holds.wait()
        async with b._lock("meta/triton"):
            order.append("b in")
        async with b._lock("meta/other"):       # another fork's lock is free meanwhile
            order.append("b other")

    await asyncio.gather(first(), second())
    assert order == ["a in", "a out", "b in", "b other"]


async def test_a_cancelled_wait_leaves_the_lock_free(tmp_path):
    a, b = SyncService(workdir=tmp_path, git_url=""), SyncService(workdir=tmp_path, git_url="")
    async with a._lock("meta/triton"):
        waiter = asyncio.create_task(b._lock("meta/triton").__aenter__())
        await asyncio.sleep(0.05)
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
    async with b._lock("meta/triton"):          # nothing was left holding it
        pass
