"""Claims on (repository, key): one holder at a time across coroutines and processes (two
:class:`Claims` on one folder stand for two processes: ``flock`` locks belong to an open file).
No sleeps: a waiter says it waits (``on_wait``), and the holder lets go only then."""
from __future__ import annotations

import asyncio

import pytest

from bot.github.claims import ClaimOrderError, Claims, lock_name


@pytest.mark.parametrize("full, key, name", [
    ("meta/triton", "", "meta+triton.lock"),                         # the fork lock keeps its file
    ("meta/triton", "status-issue", "meta+triton@status-issue.lock"),
    ("meta/triton", "comments-412", "meta+triton@comments-412.lock"),
    ("meta/triton", "a/b:c d", "meta+triton@a_b_c_d.lock"),          # no path or odd character from a key
])
def test_lock_names(full, key, name):
    assert lock_name(full, key) == name


@pytest.mark.parametrize("processes", [1, 2], ids=["one-process", "two-processes"])
async def test_a_claim_waits_for_its_holder_and_other_keys_do_not(tmp_path, processes):
    waits: list[tuple[str, str]] = []
    waiting = asyncio.Event()

    def on_wait(full: str, key: str) -> None:
        waits.append((full, key))
        waiting.set()

    a = Claims(tmp_path, poll_s=0)
    b = a if processes == 1 else Claims(tmp_path, poll_s=0)
    b.on_wait = on_wait
    order: list[str] = []
    held, let_go = asyncio.Event(), asyncio.Event()

    async def holder() -> None:         # a task of its own: nothing is claimed under an object claim
        async with a.hold("meta/triton", "comments-7"):
            held.set()
            await let_go.wait()
            order.append("first out")

    first = asyncio.create_task(holder())
    await held.wait()
    for full, key in (("meta/triton", "comments-8"), ("meta/triton", ""), ("meta/other", "comments-7")):
        async with b.hold(full, key):
            pass
    order.append("others free")
    second = asyncio.create_task(_enter(b, order))
    await waiting.wait()
    let_go.set()
    await asyncio.gather(first, second)
    assert order == ["others free", "first out", "second in"]
    assert waits == [("meta/triton", "comments-7")]


async def _enter(claims: Claims, order: list[str], key: str = "comments-7") -> None:
    async with claims.hold("meta/triton", key):
        order.append("second in")


async def test_a_cancelled_wait_leaves_the_claim_free(tmp_path):
    a, b = Claims(tmp_path, poll_s=0), Claims(tmp_path, poll_s=0)
    waiting = asyncio.Event()
    b.on_wait = lambda full, key: waiting.set()
    async with a.hold("meta/triton", "status-issue"):
        waiter = asyncio.create_task(b.hold("meta/triton", "status-issue").__aenter__())
        await waiting.wait()
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
    async with b.hold("meta/triton", "status-issue"):
        assert not a.locked("meta/triton", "status-issue") and b.locked("meta/triton", "status-issue")


async def test_nothing_is_claimed_under_an_object_claim(tmp_path):
    """Claims on objects are leaves: a claim asked under one — of the same :class:`Claims` or
    another's, an object or the fork — raises at once instead of waiting (two such nestings in
    opposite orders would wait on each other for ever); under the fork lock an object is claimed."""
    a, b = Claims(tmp_path, poll_s=0), Claims(None, poll_s=0)
    async with a.hold("meta/triton", "status-issue"):
        for claims, key in ((a, "comments-3"), (b, "comments-3"), (a, ""), (b, "status-issue")):
            with pytest.raises(ClaimOrderError, match="status-issue of meta/triton is held"):
                async with claims.hold("meta/triton", key):
                    pass
    async with a.hold("meta/triton"), b.hold("meta/triton", "comments-3"):
        assert a.locked("meta/triton") and b.locked("meta/triton", "comments-3")
    async with a.hold("meta/triton", "comments-3"):     # let go: free again
        assert not b.locked("meta/triton", "comments-3")


async def test_a_released_claim_leaves_no_lock_file(tmp_path):
    """One lock file per (repository, key) was kept for ever: a fork with years of PRs and issues
    (a comments claim each) left tens of thousands of files in ``<workdir>/locks``. A claim's
    file is removed by its holder as it lets go."""
    a = Claims(tmp_path, poll_s=0)
    for n in range(50):
        async with a.hold("meta/triton", f"comments-{n}"):
            assert (tmp_path / f"meta+triton@comments-{n}.lock").exists()
    async with a.hold("meta/triton"), a.hold("meta/triton", "status-issue"):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == []


async def test_a_waiter_on_a_removed_lock_file_does_not_hold_beside_a_new_holder(tmp_path):
    """The lock-file race: ``b`` opened the file and waits on its lock; the holder ``a`` removes the
    file as it lets go, and ``c`` creates a new one and takes its lock. ``b`` then gets the lock of
    the removed file — a lock no one else will ever ask for — and must see that the name now
    holds another file, and wait for ``c`` instead of holding beside it."""
    a, b, c = (Claims(tmp_path, poll_s=0) for _ in range(3))
    waiting = asyncio.Event()
    b.on_wait = lambda full, key: waiting.set()
    order: list[str] = []
    async with a.hold("meta/triton", "status-issue"):
        second = asyncio.create_task(_enter(b, order, "status-issue"))
        await waiting.wait()
    async with c.hold("meta/triton", "status-issue"):
        for _ in range(20):
            await asyncio.sleep(0)          # b polls its lock again and again meanwhile
        order.append("third out")
    await second
    assert order == ["third out", "second in"]
    assert list(tmp_path.iterdir()) == []


async def test_sweep_removes_the_lock_files_no_one_holds(tmp_path):
    """Lock files an earlier release left (one per key ever claimed) are removed by ``sweep``,
    except the one a claim holds now; other files of the folder are left alone."""
    for n in range(5):
        (tmp_path / f"meta+triton@comments-{n}.lock").write_text("")
    (tmp_path / "notes.txt").write_text("kept")
    a, b = Claims(tmp_path, poll_s=0), Claims(tmp_path, poll_s=0)
    async with a.hold("meta/triton", "comments-3"):
        assert b.sweep() == 4
        assert sorted(p.name for p in tmp_path.iterdir()) == ["meta+triton@comments-3.lock", "notes.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
