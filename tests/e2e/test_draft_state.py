"""A sync PR's draft state, as GitHub has it, on the status issue and the dashboard: forksync opens
a chain its rules resolved as a draft, a person marks it ready or turns it back into a draft
(GitHub's ``pull_request`` ``ready_for_review`` / ``converted_to_draft``), and both say what the
PR is. A draft a person made stays theirs: the gate does not take it out of draft when L1 is
green (:func:`bot.validation.gate_inputs.person_draft`)."""
from __future__ import annotations

from bot.app import schedules
from bot.dashboard import views
from tests.support.sync_world import status_body, the_rules_resolve_the_amd_chain
from tests.support.validation_world import tick_ctx

TO_DRAFT = ("mutation($id: ID!) { convertPullRequestToDraft(input: {pullRequestId: $id}) "
            "{ pullRequest { number isDraft } } }")
READY = TO_DRAFT.replace("convertPullRequestToDraft", "markPullRequestReadyForReview")



async def person_sets_draft(w, number: int, draft: bool) -> None:
    """alice changes the PR's draft state on GitHub, and GitHub tells the App
    (``converted_to_draft`` / ``ready_for_review``, which the local GitHub sends as GitHub does)."""
    pr = await w.pr(number)
    await w.alice.graphql(TO_DRAFT if draft else READY, endpoint=f"{w.fake.url}/graphql", id=pr["node_id"])
    pr = await w.pr(number)
    assert pr["draft"] is draft
    await w.bot.settle()


def pr_states(w) -> list[str]:
    return [u["pr_state"] for u in views.units(w.bot.store, "meta/triton", now=0.0, policy=views.Policy())["units"]]


async def test_the_status_issue_and_the_dashboard_say_draft_while_the_pr_is_one(ahead_world):
    w, up_src, upstream = ahead_world
    c2, _, chain = await the_rules_resolve_the_amd_chain(w, up_src, upstream)
    n, unit = chain["number"], f"chain-{c2[:12]}"
    assert chain["draft"] is True and "## Resolved by forksync's rules" in chain["body"]
    line = next(x for x in (await status_body(w)).splitlines() if f"retry `{unit}`" in x)
    assert f"#{n}](https://github.com/meta/triton/pull/{n}), draft: leaves draft once L1 is green on its head" in line
    assert pr_states(w) == ["draft"]

    await person_sets_draft(w, n, False)
    line = next(x for x in (await status_body(w)).splitlines() if f"retry `{unit}`" in x)
    assert f"#{n}](https://github.com/meta/triton/pull/{n}), open" in line
    assert pr_states(w) == ["open"]

    await person_sets_draft(w, n, True)
    line = next(x for x in (await status_body(w)).splitlines() if f"retry `{unit}`" in x)
    assert (f"#{n}](https://github.com/meta/triton/pull/{n}), draft: made a draft by a person; forksync does not "
            "merge it until they mark it ready") in line
    assert pr_states(w) == ["draft"]
    # L1 goes green on its head: the draft is the person's, so it stays one and is not merged
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    after = await w.pr(n)
    assert (after["draft"], after["merged"]) == (True, False)
    assert "`draft`" in w.run_of(after["head"]["sha"], "forksync/gate").output["summary"]
    assert w.bot.deliveries("dead") == []


async def test_a_draft_a_person_made_stays_theirs_when_the_gate_runs_before_its_event(ahead_world):
    """The person turns the ready PR back into a draft, and the gate evaluates it (a check run
    completed, the reconcile tick) before ``converted_to_draft`` is handled: deliveries run on
    several workers, in any order. The row still says forksync drafted the PR once, but it also
    says the PR was last seen ready: a draft now is the person's, and the gate leaves it one."""
    w, up_src, upstream = ahead_world
    c2, _, chain = await the_rules_resolve_the_amd_chain(w, up_src, upstream)
    n = chain["number"]
    assert c2 and chain["draft"] is True
    await person_sets_draft(w, n, False)
    assert pr_states(w) == ["open"]
    pr = await w.pr(n)
    w.fake.webhooks.auto_deliver = False
    await w.alice.graphql(TO_DRAFT, endpoint=f"{w.fake.url}/graphql", id=pr["node_id"])     # no event handled yet
    await w.alice.post(f"/repos/meta/triton/issues/{n}/labels", data={"labels": ["needs-look"]})
    # GitHub does not guarantee order: the label's event reaches the gate before converted_to_draft
    assert [(d.event, d.action) for d in await w.fake.webhooks.flush(order="reverse")] == [
        ("pull_request", "labeled"), ("pull_request", "converted_to_draft")]
    w.fake.webhooks.auto_deliver = True
    await w.bot.settle()
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    after = await w.pr(n)
    assert (after["draft"], after["merged"]) == (True, False)
    assert pr_states(w) == ["draft"]
