"""A unit's row on the status issue that the last sync did not refresh says so, why and since when,
end to end on the local GitHub with the real bot: while the fork is on hold a sync publishes no
unit, and each open unit's row is what an earlier sync wrote — shown as stale ("a stale or failed
refresh is shown as stale, never as current", docs/design.md), never as current. Once the hold is
lifted the next sync publishes them again, and the mark is gone. Time comes from an injected clock."""
from __future__ import annotations

from bot.dashboard.views import Policy, units
from bot.templating import utc_minute
from tests.support.e2e import adopt_and_move_upstream, status_command, status_issue
from tests.support.github import git


class Clock:
    def __init__(self, t: float):
        self.t = t

    def __call__(self) -> float:
        return self.t


def _row(body: str, unit_prefix: str) -> str:
    [line] = [ln for ln in body.splitlines() if ln.startswith("- [ ] <!-- retry:") and f"`{unit_prefix}" in ln]
    return line


async def _replan(bot, gh) -> str:
    """Tick the live status issue's re-plan box (a whole sync); the body it leaves."""
    [live] = await status_issue(gh)
    ticked = live["body"].replace("- [ ] <!-- replan -->", "- [x] <!-- replan -->")
    await gh.patch(f"/repos/meta/triton/issues/{live['number']}", data={"body": ticked})
    await bot.settle()
    [live] = await status_issue(gh)
    return live["body"]


async def test_a_row_no_sync_refreshed_says_so_while_on_hold_and_not_after(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    clock = Clock(1_800_000_000.0)
    bot.svc.now = clock
    published = clock.t
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    [live] = await status_issue(alice)
    bundle = _row(live["body"], "bundle-")
    assert "not refreshed" not in live["body"], bundle

    reply = await status_command(alice, bot, live["number"], "/forksync hold")
    assert "on hold" in reply
    clock.t += 7200                                   # two hours later, a sync while on hold
    body = await _replan(bot, alice)
    bundle = _row(body, "bundle-")
    chain = _row(body, "chain-")
    for row in (bundle, chain):
        assert "not refreshed by the last sync" in row, row
        assert f"sync of {utc_minute(clock.t)}" in row, row
        assert "the fork was on hold" in row, row
        assert f"as last published {utc_minute(published)}" in row, row
        assert "upstream as of then" in row, row
    # the dashboard's unit list says the same of the same rows
    doc = units(bot.store, "meta/triton", clock.t, Policy())
    marks = {u["id"].split("-")[0]: u["not_refreshed"] for u in doc["units"]}
    assert marks["bundle"]["why"] == "hold" and marks["bundle"]["since"] == published, marks
    assert "the fork was on hold" in marks["chain"]["text"], marks
    assert utc_minute(published) in marks["chain"]["text"], marks

    reply = await status_command(alice, bot, live["number"], "/forksync unhold")
    assert "hold lifted" in reply
    clock.t += 3600
    body = await _replan(bot, alice)
    assert "not refreshed" not in body, _row(body, "bundle-")
    doc = units(bot.store, "meta/triton", clock.t, Policy())
    assert [u["not_refreshed"] for u in doc["units"] if u["pr"]] == [None, None], doc["units"]
    assert bot.deliveries("dead") == []


async def test_a_unit_held_by_an_upstream_rewind_says_its_row_is_not_refreshed_until_upstream_returns(world):
    """Upstream's ``main`` reset to before the two commits the open units carry: the sync holds
    both units, publishing neither, and their rows say why and since when; upstream returns and
    the next sync publishes them again."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    clock = Clock(1_800_000_000.0)
    bot.svc.now = clock
    published = clock.t
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    clock.t += 600
    git(up_src, "reset", "-q", "--hard", f"{c1}~1")
    git(up_src, "push", "-q", "-f", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    [live] = await status_issue(alice)
    for prefix in ("bundle-", "chain-"):
        row = _row(live["body"], prefix)
        assert f"not refreshed by the last sync, the sync of {utc_minute(clock.t)} (held: upstream's branch moved " \
               f"back past its commits); as last published {utc_minute(published)} (upstream as of then)" in row, row
    clock.t += 600
    git(up_src, "reset", "-q", "--hard", c2)
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    [live] = await status_issue(alice)
    assert "not refreshed" not in live["body"], live["body"]
    assert bot.deliveries("dead") == []
