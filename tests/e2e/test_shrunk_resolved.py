"""A chain a person resolved by hand (their resolution folded into forksync's pick) that loses
another of its commits to a decision while its PR is open: its branch is not built again without
it — a rebuild would pick the resolved commit afresh, back at its conflict, and the person's
resolution would leave the PR (bot/sync/shrink.py, "tell")."""
from __future__ import annotations

from tests.e2e.test_conflict_owed import picked, stacked_world  # noqa: F401
from tests.e2e.test_dependency_lands import resolved_by_hand
from tests.support.e2e import status_command, status_issue
from tests.support.sync_world import fork_git


async def test_a_decision_on_a_chain_a_person_resolved_keeps_their_resolution_on_the_branch(stacked_world, tmp_path):  # noqa: F811
    """alice resolved the chain's second pick by hand (h = 3, her own); then she defers the
    chain's first commit. What she sees: the chain built again on the fork without it, its
    second pick at the conflict once more — her resolution gone from the PR (kept only under
    ``refs/forksync/resolutions/``). What she should see: the branch as it was, with her
    resolution, and the PR saying which commit was decided and that the branch still carries it."""
    w, up_src, upstream = stacked_world
    b0, c1, c2, bundle, chain = await resolved_by_hand(w, up_src, upstream, tmp_path, h="h = 3\n")
    branch = chain["head"]["ref"]
    held = (await w.pr(chain["number"]))["head"]["sha"]
    assert fork_git(w, "show", f"{branch}:python/h.py") == "h = 3"
    [issue] = await status_issue(w.alice)
    await status_command(w.alice, w.bot, issue["number"], f"/forksync defer {c1[:12]} waits for the LLVM bump")
    pr = await w.pr(chain["number"])
    assert pr["state"] == "open"
    assert fork_git(w, "show", f"{branch}:python/h.py") == "h = 3", fork_git(w, "log", "--format=%h %s", "-3", branch)
    assert pr["head"]["sha"] == held
    said = "\n".join([c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{chain['number']}/comments")
                      if c["user"]["login"] == "forksync[bot]"])
    assert f"`{c1[:12]}`" in said, said
