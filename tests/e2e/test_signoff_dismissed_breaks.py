"""Breaking a sign-off written in a review's body the way GitHub takes a review back: a submitted
review cannot be deleted, only dismissed (``pull_request_review.dismissed``)."""
import copy

import pytest

from bot.validation import signoff
from tests.support.validation_world import close_world, gate_failing, make_world, opened_while_held


@pytest.fixture
async def world(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path)
    yield w
    await close_world(w)


async def test_a_signoff_in_a_dismissed_review_no_longer_counts(world):
    """carol approves the llvm sync PR with the review body ``/forksync signoff llvm``; forksync
    records the sign-off. A maintainer then dismisses her review ("Dismiss review": carol
    approved the wrong PR) — GitHub's way to take a submitted review back, which stops her
    approval counting (``pull_request_review.dismissed``, the review's state ``dismissed``).
    What they see: the sign-off goes on counting and the gate's ``l3-signoff-missing`` stays
    satisfied. What they should see: the sign-off withdrawn with the review, as when its line is
    edited out, and the gate asking for a sign-off again."""
    w = world
    # held, so that the gate waits instead of merging once she approved
    pr, head, _issue = await opened_while_held(w, "forksync/bundle-llvm", {"llvm/pin.txt": "llvm 21\n"},
                                               "Bump the LLVM pin")
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews",
                                 data={"event": "APPROVE", "body": "/forksync signoff llvm"})
    await w.bot.settle()
    assert [s.by for s in signoff.signoffs_for(w.bot.store, "meta/triton", pr["number"])] == ["carol"]
    assert gate_failing(w, head) == ["hold"]
    [sub] = [d for d in w.fake.webhooks.of("pull_request_review", "submitted")]
    payload = copy.deepcopy(sub.payload)
    payload["action"] = "dismissed"
    payload["review"]["state"] = "dismissed"
    payload["sender"] = {**payload["sender"], "login": "alice"}
    await w.fake.webhooks.deliver("pull_request_review", payload, validate=False)
    await w.bot.settle()
    assert list(signoff.signoffs_for(w.bot.store, "meta/triton", pr["number"])) == []
    # (the local fake GitHub keeps no dismissed state on the review: the approval is not under test)
    assert "l3-signoff-missing" in gate_failing(w, head)
    replies = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{pr['number']}/comments")
               if c["user"]["login"] == "forksync[bot]"]
    assert any("withdrawn: @alice dismissed the review" in r for r in replies)
