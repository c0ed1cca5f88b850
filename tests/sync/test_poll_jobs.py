"""The poller's failing "poll" job: recorded on the fork's status when its polled sync fails, and
gone from the status issue once a polled sync succeeds again."""
from __future__ import annotations

from types import SimpleNamespace

from bot.store import Store
from bot.sync import store as sync_store
from bot.sync.status import SyncStatus
from bot.sync.upstream import poll_once


class _GH:
    def __init__(self):
        self.head = "a" * 40

    async def getitem(self, url, params=None):
        return {"commit": {"sha": self.head}}


class _Svc:
    """A sync service whose sync fails or succeeds as told, and renders the status issue at its
    end (as the real one does); ``issues`` holds the failing jobs each render showed."""

    def __init__(self, store):
        self.store = store
        self.fail = True
        self.issues: list[list[str]] = []

    async def sync(self, ctx, full, *, reason):
        if self.fail:
            raise RuntimeError("GitHub answered 502")
        await self.refresh_status_issue(ctx, full)
        return f"{full}: synced"

    async def refresh_status_issue(self, ctx, full, **_):
        self.issues.append([j["job"] for j in sync_store.load_status(self.store, full).failing_jobs])
        return "status issue refreshed"


def _tracked_fork(tmp_path):
    """``meta/fork`` tracked and polled every 60 s, its sync failing until told otherwise:
    ``(store, service, GitHub, make_ctx)``."""
    store = Store(tmp_path / "s.db")
    sync_store.track(store, "meta/fork", "up/triton", "main", 1, poll_interval_s=60)
    sync_store.save_status(store, SyncStatus(repo="meta/fork", upstream="up/triton"))
    svc, gh = _Svc(store), _GH()

    async def make_ctx(_inst):
        return SimpleNamespace(gh=gh, store=store)
    return store, svc, gh, make_ctx


async def test_a_polled_sync_that_succeeds_again_clears_poll_from_the_status_issue(tmp_path):
    store, svc, gh, make_ctx = _tracked_fork(tmp_path)

    notes = await poll_once(store, svc, make_ctx, now=1000.0)
    assert notes[0].startswith("meta/fork: sync failed: RuntimeError: GitHub answered 502"), notes
    assert svc.issues[-1] == ["poll"]                        # the failure is on the status issue
    svc.fail = False
    gh.head = "b" * 40
    await poll_once(store, svc, make_ctx, now=2000.0)
    assert sync_store.load_status(store, "meta/fork").failing_jobs == ()
    # the status issue as last rendered no longer says the poll is failing
    assert svc.issues[-1] == [], svc.issues


async def test_a_failing_poll_is_cleared_once_another_sync_caught_the_fork_up(tmp_path):
    """The polled sync failed, then a sync started otherwise (a landing, a replan) reached the same
    upstream head: the poller finds upstream unchanged, and the poll is no longer failing."""
    store, svc, gh, make_ctx = _tracked_fork(tmp_path)

    for at in (1000.0, 2000.0):
        await poll_once(store, svc, make_ctx, now=at)
    assert [(j["job"], j["count"]) for j in sync_store.load_status(store, "meta/fork").failing_jobs] == [("poll", 2)]
    # another sync succeeds at the head the poller saw
    sync_store.save_status(store, SyncStatus(repo="meta/fork", upstream="up/triton", upstream_head=gh.head))
    notes = await poll_once(store, svc, make_ctx, now=3000.0)
    assert notes == ["meta/fork: upstream unchanged"]
    assert sync_store.load_status(store, "meta/fork").failing_jobs == ()
    assert svc.issues[-1] == [], svc.issues


async def test_an_unchanged_upstream_renders_the_status_issue_again_once_an_hour(tmp_path):
    """The status issue says when upstream was last seen, a UTC time written into its body. A poll
    that finds upstream unchanged renders it again only when the hour turned since upstream was
    last seen: at most one edit an hour, and the issue's "last seen" is never more than an hour
    and a poll behind the poller (without it, it kept the last sync's time while polls went on)."""
    store, svc, gh, make_ctx = _tracked_fork(tmp_path)
    sync_store.save_status(store, SyncStatus(repo="meta/fork", upstream="up/triton", upstream_head=gh.head,
                                             upstream_seen_at=7200.0))
    for at in (7260.0, 7320.0, 10740.0):           # the same hour (02:00–02:59 UTC of day 0)
        assert await poll_once(store, svc, make_ctx, now=at) == ["meta/fork: upstream unchanged"]
    assert svc.issues == []
    await poll_once(store, svc, make_ctx, now=10860.0)     # 03:01: the hour turned
    assert len(svc.issues) == 1
    assert sync_store.load_status(store, "meta/fork").upstream_seen_at == 10860.0
    await poll_once(store, svc, make_ctx, now=10920.0)
    assert len(svc.issues) == 1


async def test_a_blocked_unit_a_sync_does_not_retry_does_not_make_every_poll_sync_again(tmp_path):
    """The fork is on hold (``/forksync hold``: a sync publishes nothing) and a unit of it was
    refused a push by a 502 before the hold. A polled sync leaves that unit as it was, raises
    nothing, and clears the failing poll job; upstream does not move. What the maintainer sees:
    every poll runs a whole sync of the fork again (a fetch and a plan, minutes on a real fork)
    for a unit none of them tries, for as long as the hold lasts. What they should see: the
    poll retry a blocked unit while the polled sync that left it blocked is failing, then
    "upstream unchanged"."""
    store, svc, gh, make_ctx = _tracked_fork(tmp_path)
    svc.fail = False
    sync_store.save_status(store, SyncStatus(repo="meta/fork", upstream="up/triton", upstream_head=gh.head,
                                             held=True))
    sync_store.save_branch(store, repo="meta/fork", branch="forksync/bundle-1", unit_id="bundle-1", kind="bundle",
                           state="open", pr=7, shas_json="[]", blocked_reason="502 Bad Gateway",
                           blocked_requires="", blocked_step="push", blocked_at=500.0)
    calls = []
    real_sync = svc.sync

    async def counting_sync(ctx, full, *, reason):
        calls.append(reason)
        return await real_sync(ctx, full, reason=reason)
    svc.sync = counting_sync

    notes = [n for at in (1000.0, 2000.0, 3000.0) for n in await poll_once(store, svc, make_ctx, now=at)]
    assert len(calls) <= 1, (calls, notes)
    assert notes[-1] == "meta/fork: upstream unchanged", notes


async def test_a_unit_github_keeps_refusing_is_not_retried_by_every_poll_for_ever(tmp_path):
    """A polled sync left a unit blocked by a refusal that may pass on its own (its PR create
    answered 422, which forksync cannot tell from a passing one), and GitHub refuses it again on
    every retry (a 422 "No commits between" stays). Upstream does not move. What the maintainer
    sees: every poll runs a whole sync of the fork again (a fetch and a plan, minutes on a real
    fork), for ever — a delivery that fails so is dead-lettered after the queue's attempts. What
    they should see: the poll give up after as many failed syncs (QueuePolicy.max_attempts, 5),
    the failing poll job kept (the alarm) and the unit blocked on the status issue."""
    store, svc, gh, make_ctx = _tracked_fork(tmp_path)
    sync_store.save_status(store, SyncStatus(repo="meta/fork", upstream="up/triton", upstream_head=gh.head))
    sync_store.save_branch(store, repo="meta/fork", branch="forksync/bundle-1", unit_id="bundle-1", kind="bundle",
                           state="blocked", pr=0, shas_json="[]", blocked_reason="422 Validation Failed",
                           blocked_requires="", blocked_step="pr", blocked_at=500.0)
    sync_store.record_job(store, "meta/fork", "poll", "meta/fork: 1 unit(s) blocked, retrying", 900.0)
    calls = []

    async def refused_sync(ctx, full, *, reason):
        calls.append(reason)
        raise RuntimeError(f"{full}: 1 unit(s) blocked, retrying: bundle-1: 422 Validation Failed")
    svc.sync = refused_sync

    notes = [n for k in range(12) for n in await poll_once(store, svc, make_ctx, now=1000.0 + 100 * k)]
    assert len(calls) == 4, (calls, notes)          # the first failure and 4 retries: 5 failed syncs
    [job] = sync_store.load_status(store, "meta/fork").failing_jobs
    assert (job["job"], job["count"]) == ("poll", 5)
    assert "not retried" in notes[-1], notes
