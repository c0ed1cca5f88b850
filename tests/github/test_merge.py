"""The gate's merge on the local GitHub: the head guard GitHub has, and the base check it lacks."""
from __future__ import annotations

import pytest

from bot.github.merge import merge_pr
from tests.support.github import R, commit_files, git, open_pr, pr_world, push_branch


@pytest.fixture
def world(fake_github, github_app, tmp_path):
    return pr_world(fake_github, github_app, tmp_path)


async def test_a_base_that_moved_after_the_decision_is_not_merged_onto(world):
    """The gate decided on base tip ``base``; the base moves before the merge: a rebase would land the
    pick onto a tree no suite ran on, so nothing is merged and the caller is told to re-validate."""
    fake, fork, gh, src, base = world
    head = push_branch(src, fork, "u", [({"c.txt": "c\n"}, "u", "ann")])[-1]
    pr = await open_pr(gh, "u")
    commit_files(src, {"d.txt": "d\n"}, "main moves")
    git(src, "push", "-q", str(fork.path), "main")
    moved = fork.git.ref("refs/heads/main")
    assert moved != base
    out = await merge_pr(gh, "meta/triton", pr["number"], head, "rebase", base=base, poll_s=0)
    assert (out.code, out.text) == ("base-moved", f"base moved from {base[:12]} to {moved[:12]}: re-validating")
    got = await gh.getitem("/repos/{owner}/{repo}/pulls/{n}", dict(R, n=pr["number"]))
    assert got["merged"] is False and fork.git.ref("refs/heads/main") == moved
    # decided on the current tip, it merges
    out = await merge_pr(gh, "meta/triton", pr["number"], head, "rebase", base=moved, poll_s=0)
    assert out.code == "merged" and out.text.startswith(f"merged `{head[:12]}` by rebase as ")
    assert git(fork.path, "log", "-1", "--format=%s", "main") == "u"
