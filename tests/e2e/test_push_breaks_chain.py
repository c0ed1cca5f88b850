"""A person's resolution pushes to a chain stopped at a conflict, seen through webhooks that
arrive after the branch moved on (GitHub sends one ``pull_request.synchronize`` per push; the
worker handles them later, in order)."""
from __future__ import annotations

import pytest

from tests.support import sync_world
from tests.support.github import commit_files, git
from tests.support.sync_world import MIDDLE, bot_comments, open_prs


@pytest.fixture
async def chain_world(fake_github, tmp_path):
    """The world of tests/e2e/test_chain_conflict.py: the fork tuned ``x`` in the AMD file."""
    async with sync_world.chain_world(fake_github, tmp_path) as w:
        yield w


async def test_a_synchronize_for_a_head_the_branch_has_moved_past_is_no_dead_letter(chain_world, tmp_path):
    """alice pushes a good resolution R onto the conflict commit and, a moment later, another
    commit X on top (an unrelated file). GitHub sends ``synchronize`` for R, then for X. forksync
    handles R's event when the branch is already at X: it checks R (fine), folds it, then its own
    ``git update-ref <branch> <fold> R`` fails ("is at X but expected R") — raised as a SyncError,
    retried with the same result and dead-lettered: the status issue and /healthz raise a
    "webhook delivery failed for good" alarm with a git lock error, for nothing but a stale
    event. What she should see: the stale event left to the newer one (X's check answers on the
    PR: "changes files the conflict did not need"), no dead letter, no git error."""
    w, up_src, upstream = chain_world
    commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n"}, "AMD: new x (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [chain] = await open_prs(w.alice)
    branch = chain["head"]["ref"]
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    w.fake.webhooks.auto_deliver = False
    commit_files(wt, {"third_party/amd/x.cpp": "int x = 12;\n" + MIDDLE + "int z;\n"}, "resolve x")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.fake.refresh()                               # GitHub's synchronize for R
    x = commit_files(wt, {"python/other.py": "o = 1\n"}, "unrelated")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.fake.refresh()                               # and for X
    w.fake.webhooks.auto_deliver = True
    await w.fake.webhooks.flush("fifo")
    await w.bot.settle()
    assert [c for c in await bot_comments(w, chain["number"]) if f"forksync:resolution:{x}" in c]
    dead = w.bot.deliveries("dead")
    assert dead == [], dead[0].dead_reason
