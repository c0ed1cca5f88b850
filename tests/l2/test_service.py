"""The L2 back-out PR (``bot.l2.service.open_backout``) on the local GitHub with real git: its
branch is recorded as forksync's, so the PR is forksync's own whether or not the bot's login is
known (token mode without FORKSYNC_BOT_LOGIN, where the PR's author says nothing)."""
from __future__ import annotations

import pytest

from bot.git.bisect import BisectResult
from bot.l2 import service as l2_service
from bot.l2.report import Evidence
from bot.sync import prs as sync_prs
from bot.sync import store as sync_store
from tests.support.github import commit_files, git
from tests.support.validation_world import close_world, make_world, tick_ctx

UPSTREAM_SHA = "9" * 40


@pytest.fixture
async def world(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path)
    yield w
    await close_world(w)


async def test_the_backout_branch_is_recorded_so_its_pr_is_forksyncs_without_a_login(world):
    w = world
    git(w.work, "fetch", "-q", "origin")
    git(w.work, "checkout", "-q", "-B", "main-work", "origin/main")
    culprit = commit_files(w.work, {"lib.py": "def add(a, b):\n    return a + b + 0\n"},
                           f"[BACKEND] Slow the toy kernel\n\nUpstream-Commit: {UPSTREAM_SHA}")
    git(w.work, "push", "-q", "origin", "main-work:refs/heads/main")
    ev = Evidence(title="L2 regression on toy", key=None, values=(), shas=(), change=None, confirmation=None,
                  bisect=BisectResult(good=culprit, bad=culprit, candidates=(culprit,), culprit=culprit, verified=True,
                                      steps=()),
                  culprit_subject="[BACKEND] Slow the toy kernel", upstream_sha=UPSTREAM_SHA, command="bench")
    ctx = await tick_ctx(w)
    mirror = await w.svc.local.fetch("meta/triton")
    number = await l2_service.open_backout(ctx, w.svc, "meta/triton", "main", mirror, ev, issue=1)

    pr = await w.pr(number)
    branch = f"forksync/backout-{culprit[:12]}"
    assert pr["head"]["ref"] == branch
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert row is not None
    assert (row["kind"], row["unit_id"], row["pr"], row["pushed_tip"], row["shas_json"]) == (
        "backout", f"backout-{culprit[:12]}", number, pr["head"]["sha"], "[]")
    # forksync's own even when the bot's login is unknown (token mode without FORKSYNC_BOT_LOGIN)
    assert sync_prs.foreign_reason(w.bot.store, "meta/triton", pr, bot_login=None, fork_ref="main") == ""
    assert sync_prs.is_own_sync_pr(w.bot.store, "meta/triton", pr, prefix="forksync/", bot_login=None,
                                   fork_ref="main")
    # a back-out is no sync unit: it takes no sync PR slot and is listed as no unit
    assert sync_store.open_branches(w.bot.store, "meta/triton") == []
    # closing it lands, closes or records nothing of a unit: the row and the branch stay as they were
    await w.alice.patch(f"/repos/meta/triton/pulls/{number}", data={"state": "closed"})
    await w.bot.settle()
    assert w.bot.deliveries("dead") == []
    assert sync_store.branch_row(w.bot.store, "meta/triton", branch)["state"] == "backout"
    assert git(w.work, "ls-remote", "origin", f"refs/heads/{branch}").split()[0] == pr["head"]["sha"]
    assert [c async for c in w.alice.getiter(f"/repos/meta/triton/issues/{number}/comments")] == []
