"""Every injected GitHub fault ends in a retry or a visible report, never a duplicate PR,
comment or issue. Each case runs the real sync flow against the local GitHub
with one fault armed on the calls that create things."""
import pytest

from bot.sync import store as sync_store
from tests.support.e2e import adopt_and_move_upstream, open_sync_prs, status_issue

FAULTS = {
    "429 retry-after on PR create": lambda f: f.rate_limited("/repos/meta/triton/pulls", "POST", retry_after=1),
    "secondary limit on PR create": lambda f: f.secondary_limit("/repos/meta/triton/pulls", "POST", retry_after=None),
    "primary limit on labels": lambda f: f.primary_limit("/repos/meta/triton/issues/*/labels", "POST", reset_in_s=1),
    "502 twice on PR create": lambda f: f.server_error("/repos/meta/triton/pulls", "POST", times=2),
    "503 outlasting the client's retries": lambda f: f.server_error("/repos/meta/triton/pulls", "POST", status=503,
                                                                    times=6),
    "expired token on issue create": lambda f: f.expired_token("/repos/meta/triton/issues", "POST"),
    "502 on status issue update": lambda f: f.server_error("/repos/meta/triton/issues/*", "PATCH", times=5),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_fault_ends_in_retry_never_a_duplicate(world, fault):
    fake, bot, alice, up_src, upstream, fork, inst = world
    FAULTS[fault](fake.faults)
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    assert fake.faults.fired, "the fault never fired"
    assert fake.faults.pending() == []
    assert [x.dead_reason for x in bot.deliveries("dead")] == []       # retried to success
    prs = await open_sync_prs(alice)
    assert [p["head"]["ref"] for p in prs] == [f"forksync/bundle-{c1[:12]}", f"forksync/chain-{c2[:12]}"]
    assert len(await status_issue(alice)) == 1
    issues = [i async for i in alice.getiter("/repos/meta/triton/issues?state=all")]
    assert len(issues) == 3                                                # 2 PRs + 1 status issue
    for p in prs:
        labels = [lab["name"] async for lab in alice.getiter(f"/repos/meta/triton/issues/{p['number']}/labels")]
        assert len(labels) == len(set(labels)) >= 1


async def test_unprocessable_pr_create_blocks_its_unit_visibly_and_is_retried_not_a_loop(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    fake.faults.unprocessable("/repos/meta/triton/pulls", "POST", message="Validation Failed", times=1)
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    # the refused PR blocked its unit only; the other unit went on; a 422 may pass later, so the
    # delivery was retried once and opened it, with no duplicates
    [push] = [d for d in bot.deliveries("done") if d.event == "push" and d.repo == "triton-lang/triton"]
    assert push.attempts == 2 and bot.deliveries("dead") == []
    assert len(await open_sync_prs(alice)) == 2
    assert sync_store.blocked_branches(bot.store, "meta/triton") == []


async def test_a_pr_create_refused_for_good_is_a_visible_dead_letter_not_a_loop(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    fake.faults.unprocessable("/repos/meta/triton/pulls", "POST", message="Validation Failed", times=50)
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    [dead] = bot.deliveries("dead")
    assert dead.event == "push" and "2 unit(s) blocked, retrying: " in dead.dead_reason
    blocked = sync_store.blocked_branches(bot.store, "meta/triton")
    assert [(b["blocked_step"], b["blocked_reason"]) for b in blocked] == [(
        "pr", "422 Validation Failed: 'injected by the fake' [{'resource': 'Issue', 'code': 'custom', "
              "'message': 'injected by the fake'}]")] * 2
    [issue] = await status_issue(alice)
    assert "**Syncing is degraded: 2 unit(s) blocked.**" in issue["body"]
    assert "webhook delivery for this fork failed for good** (dead-lettered)" in issue["body"]
    fake.faults.clear()
    # the next upstream move (or a redelivery) recovers, still with no duplicates
    await fake.webhooks.redeliver(dead.delivery_id)
    await bot.settle()
    assert bot.deliveries("dead") == []
    assert len(await open_sync_prs(alice)) == 2
    assert sync_store.blocked_branches(bot.store, "meta/triton") == []


async def test_merge_405_and_409_are_answered_not_retried(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, _chain = await open_sync_prs(alice)
    head = bundle["head"]["sha"]
    # a green check, so the gate's no-suites rule lets it merge
    fake.app
    gh = bot.clients._impl.installation(inst.id)
    await gh.post("/repos/meta/triton/check-runs", data={"name": "ci", "head_sha": head, "status": "completed",
                                                          "conclusion": "success"})
    fake.faults.not_mergeable()
    await alice.post(f"/repos/meta/triton/issues/{bundle['number']}/comments", data={"body": "/forksync merge"})
    await bot.settle()
    replies = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{bundle['number']}/comments")
               if c["user"]["login"] == "forksync[bot]" and "forksync:blocked" not in c["body"]]
    assert len(replies) == 1
    assert "#2 gate: Ready to merge; not merged: GitHub answered 405 (" in replies[0]
    # the refused merge blocks the unit visibly (on the PR) until a merge goes through
    [blocked] = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{bundle['number']}/comments")
                 if "forksync:blocked" in c["body"]]
    assert "GitHub refused the merge** of" in blocked and "> 405 Pull Request is not mergeable" in blocked
    assert "the next event or tick re-checks" in replies[0]
    assert bot.deliveries("dead") == [] and [p["number"] for p in await open_sync_prs(alice)][0] == bundle["number"]
    # 409: the head is re-validated (never merged blindly); it has not really moved, so the gate merges it once
    fake.faults.head_changed()
    await alice.post(f"/repos/meta/triton/issues/{bundle['number']}/comments", data={"body": "/forksync merge"})
    await bot.settle()
    replies = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{bundle['number']}/comments")
               if c["user"]["login"] == "forksync[bot]" and "forksync:blocked" not in c["body"]]
    assert len(replies) == 2
    assert f"head moved from {head[:12]} (GitHub answered 409): re-validating; #2 gate: Ready to merge; " \
           f"merged `{head[:12]}` by rebase as `" in replies[1]
    assert bot.deliveries("dead") == [] and bundle["number"] not in [p["number"] for p in await open_sync_prs(alice)]
