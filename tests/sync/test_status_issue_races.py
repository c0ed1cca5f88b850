"""Two writers of one fork's status issue at once: worker 0's upstream poller renders it beside the
delivery being handled (one event loop), and ``serve --workers N`` runs several processes on one
workdir. Each looks the issue up, then creates it when none is open: two that both look before
either creates open two status issues.

Two services on one workdir stand for two worker processes (``flock`` locks are per open file);
one service with two callers for the poller beside a delivery. Each caller has its own client: the
local GitHub holds the first create until the test releases it, which a shared client (one request
in flight per installation) would wait behind. No sleeps: the test releases the held create once
the second writer has either finished or is waiting for the first."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

import aiohttp
import pytest

from bot.config.forksync import ForksyncConfig
from bot.github.client import GitHubApp
from bot.store import Store
from bot.sync.service import SyncService
from bot.sync.status_issue import MARK
from tests.support.github import FAST_RETRY, make_source_repo

FORK = "meta/triton"
BOT = "forksync[bot]"


@pytest.fixture
async def fork_world(fake_github, tmp_path):
    """``(fake, installation id, session, store)``: ``meta/triton`` with the App installed, no issue yet."""
    make_source_repo(tmp_path / "src", [{"a.txt": "1\n"}])
    fake_github.create_repo(FORK, source=tmp_path / "src", required_checks=[])
    inst = fake_github.install("meta")
    async with aiohttp.ClientSession() as session:
        yield fake_github, inst.id, session, Store(tmp_path / "forksync.sqlite")


def _client(fake, session, inst: int):
    """A client of its own (another worker's, or another request slot)."""
    app = GitHubApp(session, app_id=fake.app.id, private_key=fake.app.private_key_pem, base_url=fake.url, retry=FAST_RETRY)
    return app.installation(inst)


async def _status_issues(gh, state: str = "open") -> list[dict]:
    return [i async for i in gh.getiter("/repos/meta/triton/issues{?state,per_page}", {"state": state, "per_page": 100})
            if MARK in (i.get("body") or "")]


async def _first_then_second(first, second, hold, waited: asyncio.Event):
    """Run ``first`` until its held request arrives, then ``second`` until it finishes or waits for
    ``first`` (``waited``), then release the hold; both results."""
    a = asyncio.create_task(first)
    reached = asyncio.create_task(hold.reached.wait())
    await asyncio.wait({a, reached}, return_when=asyncio.FIRST_COMPLETED)
    b = asyncio.create_task(second)
    waiting = asyncio.create_task(waited.wait())
    await asyncio.wait({a, b, waiting}, return_when=asyncio.FIRST_COMPLETED)
    hold.release()
    try:
        return await asyncio.gather(a, b)
    finally:
        for t in (reached, waiting):
            t.cancel()


@pytest.mark.parametrize("workers", [1, 2], ids=["poller-beside-a-delivery", "two-workers"])
async def test_two_renders_at_once_open_one_status_issue(fork_world, tmp_path, workers):
    fake, inst, session, store = fork_world
    a = SyncService(workdir=tmp_path / "work", git_url="", bot_login=BOT)
    b = a if workers == 1 else SyncService(workdir=tmp_path / "work", git_url="", bot_login=BOT)
    waited = asyncio.Event()
    b.claims.on_wait = lambda full, key: waited.set()
    hold = fake.faults.hold("POST", "/repos/meta/triton/issues")
    cfg = ForksyncConfig()
    said = await _first_then_second(
        a.refresh_status_issue(SimpleNamespace(store=store, gh=_client(fake, session, inst)), FORK, cfg=cfg),
        b.refresh_status_issue(SimpleNamespace(store=store, gh=_client(fake, session, inst)), FORK, cfg=cfg),
        hold, waited)
    issues = await _status_issues(_client(fake, session, inst))
    assert [i["number"] for i in issues] == [1], (said, [(i["number"], i["title"]) for i in issues])
    assert sorted(said) == ["status issue #1 created", "status issue #1 unchanged"]


async def test_duplicate_status_issues_left_by_an_older_release_are_closed_but_the_oldest(fork_world, tmp_path):
    """Duplicates made anyway (by a release without the claim, or a create whose answer was lost
    while another render ran) are harmless: the oldest is the status issue, kept current; the
    others are closed with a note that names it. GitHub lists issues newest first."""
    fake, inst, session, store = fork_world
    gh = _client(fake, session, inst)
    for _ in range(3):
        await gh.post("/repos/meta/triton/issues", data={"title": "forksync status", "body": f"{MARK}\nold render"})
    svc = SyncService(workdir=tmp_path / "work", git_url="", bot_login=BOT)
    said = await svc.refresh_status_issue(SimpleNamespace(store=store, gh=gh), FORK, cfg=ForksyncConfig())
    assert said == "status issue #1 updated; 2 duplicate(s) closed (#3, #2)"
    [kept] = await _status_issues(gh)
    assert kept["number"] == 1 and "old render" not in kept["body"]
    closed = {i["number"]: i for i in await _status_issues(gh, "closed")}
    assert sorted(closed) == [2, 3] and all(i["state_reason"] == "not_planned" for i in closed.values())
    for n in (2, 3):
        notes = [c["body"] async for c in gh.getiter(f"/repos/meta/triton/issues/{n}/comments")]
        assert len(notes) == 1 and "#1" in notes[0], notes
    # a second render finds one status issue and closes nothing more
    assert await svc.refresh_status_issue(SimpleNamespace(store=store, gh=gh), FORK, cfg=ForksyncConfig()) \
        == "status issue #1 unchanged"
