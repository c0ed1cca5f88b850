"""A unit's row on the status issue after a sync that waited for the fork's lock: were the sync's start
(``sync_status.synced_at``) read before it takes the lock, a unit another sync published
while this one waited would count as published by it (``published_at >= synced_at``,
bot.sync.status.not_refreshed) even where this sync held the unit and published nothing of it.
End to end on the local GitHub with the real bot; time from an injected clock; the other sync runs
in full where this one waits (before the lock), so nothing depends on timing."""
from __future__ import annotations

from bot.dashboard.views import Policy, units
from bot.templating import utc_minute
from tests.e2e.test_status_rows_not_refreshed import Clock, _row
from tests.support.e2e import adopt_and_move_upstream, job_context, status_issue
from tests.support.github import git


async def test_a_unit_held_by_a_rewind_this_sync_saw_is_stale_though_another_sync_published_it_while_this_one_waited(world):
    """Sync A begins (t) and waits for the fork's lock; sync B holds it and publishes both units
    (t + 60 s); upstream's ``main`` is then reset to before their commits; A fetches that,
    holds both units (a rewind) and publishes neither. What the status issue says: both rows as
    current, though the last sync did not refresh them and their PRs are as B left them, before
    the rewind A reports. What it should say: not refreshed by the last sync (held by the rewind),
    as last published by B."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    clock = Clock(1_800_000_000.0)
    bot.svc.now = clock
    c1, _ = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    clock.t += 600
    svc = bot.svc
    real_land_closed = svc.land_closed
    calls = []
    published_by_b = []

    async def land_closed(ctx, full_name):
        calls.append(full_name)
        if len(calls) == 1:
            # A has read its start and waits for the lock: B runs and publishes the two units
            clock.t += 60
            published_by_b.append(clock.t)
            await svc.sync(ctx, full_name, reason="test: B, holding the lock")
            clock.t += 60
            git(up_src, "reset", "-q", "--hard", f"{c1}~1")
            git(up_src, "push", "-q", "-f", str(upstream.path), "HEAD:refs/heads/main")
        return await real_land_closed(ctx, full_name)

    svc.land_closed = land_closed
    a_began = clock.t
    await svc.sync(await job_context(bot)(inst.id), "meta/triton", reason="test: A, waiting for the lock")
    svc.land_closed = real_land_closed
    # what A left, before the deliveries of upstream's reset run a sync of their own
    [live] = await status_issue(alice)
    for prefix in ("bundle-", "chain-"):
        row = _row(live["body"], prefix)
        # the sync's time is when it took the lock (after B and the reset), not when it was asked for
        assert a_began < published_by_b[0] < published_by_b[0] + 60 == clock.t
        assert f"not refreshed by the last sync, the sync of {utc_minute(clock.t)} (held: upstream's branch moved " \
               f"back past its commits); as last published {utc_minute(published_by_b[0])}" in row, row
    doc = units(bot.store, "meta/triton", clock.t, Policy())
    assert all(u["not_refreshed"] and u["not_refreshed"]["why"] == "rewind" for u in doc["units"] if u["pr"]), doc["units"]
