"""``hold`` and ``unhold`` re-evaluate the gates of open sync PRs: a gate that finished red only
for the hold does not keep saying "held" after ``unhold``, and the PR merges without another
nudge; a gate waiting for something else says "held" at once, and no longer after ``unhold``."""
import pytest

from tests.support.validation_world import approved_and_held, close_world, gate_failing, make_world


@pytest.fixture
async def world(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path)
    yield w
    await close_world(w)


async def test_unhold_lifts_the_hold_from_a_finished_gate_and_the_pr_merges(world):
    w = world
    pr, head, issue = await approved_and_held(w)
    assert (await w.pr(pr["number"]))["merged"] is False
    await w.comment(issue, "/forksync unhold")
    assert (await w.pr(pr["number"]))["merged"] is True
    assert w.run_of(head, "forksync/gate").conclusion == "success"


async def test_hold_shows_on_a_waiting_gate_at_once_and_unhold_takes_it_off(world):
    w = world
    head = w.push_branch("forksync/bundle-amd", {"amd/kernel.txt": "v2\n"}, "Touch amd")
    pr = await w.open_pr("forksync/bundle-amd")
    await w.bot.settle()
    assert gate_failing(w, head) == ["approval-missing"]         # the owned area waits for its owner
    issue = await w.alice.post("/repos/meta/triton/issues", data={"title": "ops", "body": "x"})
    await w.comment(issue["number"], "/forksync hold")
    assert gate_failing(w, head) == ["hold", "approval-missing"]
    await w.comment(issue["number"], "/forksync unhold")
    assert gate_failing(w, head) == ["approval-missing"]
    assert (await w.pr(pr["number"]))["merged"] is False
