"""Only the live status issue acts on its ticked boxes, end to end on the local GitHub with the real
bot: a box ticked on a closed duplicate (or on a status issue a person closed) runs nothing, and the
person who ticked it is told, once, where to tick instead."""
from __future__ import annotations

from bot.sync import status_issue as si
from tests.support.e2e import adopt_and_move_upstream, job_context, open_sync_prs, status_issue


def _edited(bot, seen: frozenset = frozenset()) -> list[str]:
    """The outcomes of the ``issues.edited`` deliveries handled, but those of ``seen`` (ids)."""
    return [d.outcome for d in bot.deliveries("done") if d.event == "issues" and d.action == "edited"
            and d.id not in seen]


def _seen(bot) -> frozenset:
    return frozenset(d.id for d in bot.deliveries())


async def _comments(gh, number: int) -> list[str]:
    return [c["body"] async for c in gh.getiter(f"/repos/meta/triton/issues/{number}/comments")]


async def test_a_box_ticked_on_a_closed_duplicate_runs_nothing_and_says_where_to_tick(world):
    """A duplicate status issue (an older release, a create whose answer was lost) was closed, the
    oldest kept. What alice saw on ticking *re-plan* on the closed duplicate: a whole sync ran (and
    again on every later edit of that issue, its box never un-ticked). What she should see: nothing
    runs, and one comment on the duplicate naming the status issue to tick instead."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    assert len(await open_sync_prs(alice)) == 2
    [live] = await status_issue(alice)
    ctx = await job_context(bot)(inst.id)
    dup = await ctx.gh.post("/repos/meta/triton/issues", data={"title": live["title"], "body": live["body"]})
    said = await bot.svc.refresh_status_issue(ctx, "meta/triton")
    assert f"1 duplicate(s) closed (#{dup['number']})" in said
    await bot.settle()
    before = _seen(bot)
    closed = await alice.getitem(f"/repos/meta/triton/issues/{dup['number']}")
    assert closed["state"] == "closed" and "- [ ] <!-- replan -->" in closed["body"]
    ticked = closed["body"].replace("- [ ] <!-- replan -->", "- [x] <!-- replan -->")
    await alice.patch(f"/repos/meta/triton/issues/{dup['number']}", data={"body": ticked})
    await bot.settle()
    outcomes = _edited(bot, before)
    assert all("re-plan" not in o for o in outcomes) and any(f"#{live['number']}" in o for o in outcomes), outcomes
    notes = await _comments(alice, dup["number"])
    told = [n for n in notes if "does not act on the boxes" in n]
    assert len(told) == 1 and f"#{live['number']}" in told[0], notes
    # the live status issue is as it was: no sync re-rendered it for the closed one's box
    [still] = await status_issue(alice)
    assert still["number"] == live["number"]
    # ticking again says nothing more
    await alice.patch(f"/repos/meta/triton/issues/{dup['number']}", data={"body": ticked + "\n"})
    await bot.settle()
    assert len([n for n in await _comments(alice, dup["number"]) if "does not act on the boxes" in n]) == 1
    assert all("re-plan" not in o for o in _edited(bot, before))
    assert bot.deliveries("dead") == []


async def test_a_box_ticked_on_the_live_status_issue_still_replans(world):
    """The live status issue keeps acting on its box (the check above must not stop it)."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    [live] = await status_issue(alice)
    assert si.MARK in live["body"]
    ticked = live["body"].replace("- [ ] <!-- replan -->", "- [x] <!-- replan -->")
    await alice.patch(f"/repos/meta/triton/issues/{live['number']}", data={"body": ticked})
    await bot.settle()
    assert any("status issue: re-plan" in o for o in _edited(bot))
    assert not [n for n in await _comments(alice, live["number"]) if "does not act on the boxes" in n]


async def test_a_box_ticked_on_an_issue_a_person_marked_runs_nothing(world):
    """An issue a person opened with the status issue's marker and boxes (copied from it) is not
    the status issue: its boxes run nothing."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    [live] = await status_issue(alice)
    before = _seen(bot)
    ticked = live["body"].replace("- [ ] <!-- replan -->", "- [x] <!-- replan -->")
    await alice.post("/repos/meta/triton/issues", data={"title": "copy", "body": live["body"]})
    [copy] = [i for i in await status_issue(alice) if i["number"] != live["number"]]
    await alice.patch(f"/repos/meta/triton/issues/{copy['number']}", data={"body": ticked})
    await bot.settle()
    assert all("re-plan" not in o for o in _edited(bot, before))
