"""A person's conflict resolution answered "kept, not folded yet" because an upstream rewind held its
chain is folded once upstream comes back, however it comes back: the "held" answer is remembered
on the chain's row (``sync_branches.held_head``), not only by the one sync that sees the rewind's
record end — so a sync that fails after upstream's return, or a rewind no sync ever recorded (its
fetch failed while upstream stood moved back), still leaves the resolution to be folded by the
next sync. Real git repositories, the local GitHub, the real bot and store."""
from __future__ import annotations

import pytest

from bot.sync import store as sync_store
from bot.sync.service import SyncError
from tests.e2e.test_upstream_rewind import rewind_upstream
from tests.support.github import commit_files, git
from tests.support.sync_world import bot_comments as comments_on
from tests.support.sync_world import chain_world, fork_git, push_resolution, stop_chain


@pytest.fixture
async def chain(fake_github, tmp_path):
    async with chain_world(fake_github, tmp_path) as w:
        yield w


def folds(comments: list[str]) -> int:
    return len([c for c in comments if "checked and folded" in c])


async def test_a_held_resolution_on_a_two_commit_chain_is_folded_once_when_upstream_returns(chain, tmp_path):
    w, up_src, upstream = chain
    before = git(up_src, "rev-parse", "HEAD")
    pr, branch, c2, c3 = await stop_chain(w, up_src, upstream, then_z=True)
    rewind_upstream(up_src, upstream, before)
    await w.bot.settle()
    st = sync_store.load_status(w.bot.store, "meta/triton")
    assert st.rewound and [u["branch"] for u in st.rewound["units"]] == [branch], st.rewound
    _, good = push_resolution(w, tmp_path, branch)
    await w.bot.settle()
    assert fork_git(w, "rev-parse", branch) == good
    git(up_src, "reset", "-q", "--hard", c3)
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    comments = await comments_on(w, pr["number"])
    assert folds(comments) == 1, comments
    assert w.bot.deliveries("dead") == []
    assert not sync_store.branch_row(w.bot.store, "meta/triton", branch).get("held_head")


async def test_a_held_resolution_is_folded_after_the_sync_that_saw_upstream_return_failed(chain, tmp_path):
    w, up_src, upstream = chain
    before = git(up_src, "rev-parse", "HEAD")
    pr, branch, c2, c3 = await stop_chain(w, up_src, upstream)
    rewind_upstream(up_src, upstream, before)
    await w.bot.settle()
    assert sync_store.load_status(w.bot.store, "meta/triton").rewound
    _, good = push_resolution(w, tmp_path, branch)
    await w.bot.settle()
    svc = w.bot.svc
    real = svc.refresh_status_issue
    calls = []

    async def flaky(*a, **k):
        # the sync that sees upstream return saves its status (the rewind's record ends), then
        # fails before it checks the held resolution (GitHub refuses the status issue once)
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("status issue: GitHub answered 502")
        return await real(*a, **k)
    svc.refresh_status_issue = flaky
    git(up_src, "reset", "-q", "--hard", c2)
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    # one more upstream commit: another sync
    commit_files(up_src, {"python/a.py": "a = 9\n"}, "Unrelated (#104)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    assert calls and not sync_store.load_status(w.bot.store, "meta/triton").rewound
    comments = await comments_on(w, pr["number"])
    assert folds(comments) == 1, comments
    assert not sync_store.branch_row(w.bot.store, "meta/triton", branch).get("held_head")


async def test_a_resolution_held_while_no_sync_saw_the_rewind_is_folded_on_return(chain, tmp_path):
    w, up_src, upstream = chain
    before = git(up_src, "rev-parse", "HEAD")
    pr, branch, c2, c3 = await stop_chain(w, up_src, upstream)
    svc = w.bot.svc
    real = svc.fetch

    async def down(*a, **k):
        raise SyncError("fetch: GitHub answered 502")     # the syncs of the moved-back window fail to fetch
    svc.fetch = down
    rewind_upstream(up_src, upstream, before)
    _, good = push_resolution(w, tmp_path, branch)
    await w.bot.settle()
    comments = await comments_on(w, pr["number"])
    assert any("not folded yet" in c for c in comments), comments
    assert not sync_store.load_status(w.bot.store, "meta/triton").rewound
    svc.fetch = real
    git(up_src, "reset", "-q", "--hard", c2)
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    commit_files(up_src, {"python/a.py": "a = 9\n"}, "Unrelated (#104)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    comments = await comments_on(w, pr["number"])
    assert folds(comments) == 1, comments
    assert not sync_store.branch_row(w.bot.store, "meta/triton", branch).get("held_head")
