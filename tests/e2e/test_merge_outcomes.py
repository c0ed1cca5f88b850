"""What the gate does after GitHub answers its merge is told by what GitHub answered, not by the
words of the note written for people: GitHub's own words for a refused merge reach the unit's
block (its PR comment and the status issue) whole, whatever they hold."""
import pytest

from bot.sync import store as sync_store
from tests.support.e2e import adopt_and_move_upstream, open_sync_prs

#: CircleCI reports its jobs as commit statuses named ``ci/circleci: <job>``; a branch protection or
#: ruleset that requires one makes GitHub answer a merge without it with these words.
CHECK = 'Required status check "ci/circleci: build" is expected.'


@pytest.mark.parametrize("said, reason, requires", [
    (CHECK, f"405 {CHECK}", ""),
    # a ruleset's refusal, in the shape GitHub answers it (observed: "Repository rule violations
    # found\n\n<rule>\n\n"): a rule a person changes, not something a retry passes
    (f"Repository rule violations found\n\n{CHECK}\n\n", CHECK, "protection"),
], ids=["branch-protection", "ruleset"])
async def test_a_refused_merge_blocks_its_unit_with_githubs_whole_words(world, said, reason, requires):
    """A sync PR whose merge GitHub refuses (405) for a required status check named
    ``ci/circleci: build``. The person sees on the unit's PR and the status issue
    ``405 build" is expected.`` — the words after the last colon, picked out of the bot's note —
    and for a ruleset's refusal a hint that forksync retries by itself. They should see GitHub's
    words whole, naming the check it waits for, and the ruleset told as a rule a person changes."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, _chain = await open_sync_prs(alice)
    gh = bot.clients._impl.installation(inst.id)
    # a green check, so the gate's no-suites rule lets it merge
    await gh.post("/repos/meta/triton/check-runs", data={"name": "ci", "head_sha": bundle["head"]["sha"],
                                                          "status": "completed", "conclusion": "success"})
    fake.faults.add("PUT", "/repos/meta/triton/pulls/*/merge", 405, said, name="merge-405")
    await alice.post(f"/repos/meta/triton/issues/{bundle['number']}/comments", data={"body": "/forksync merge"})
    await bot.settle()
    assert [f.name for f in fake.faults.fired] == ["merge-405"]
    [row] = sync_store.blocked_branches(bot.store, "meta/triton")
    assert (row["blocked_step"], row["blocked_reason"], row["blocked_requires"]) == ("merge", reason, requires)
    [blocked] = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{bundle['number']}/comments")
                 if "forksync:blocked" in c["body"]]
    assert f"> {reason}\n" in blocked
    assert (await alice.getitem(f"/repos/meta/triton/pulls/{bundle['number']}"))["merged"] is False
