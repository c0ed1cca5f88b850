"""The chain's PR body that GitHub refused to write again after the sync closed the bundle it
lands after (bot.sync.service ``_retell_lands_after``): the body on GitHub still says "Lands
after" the closed bundle, a refresh that failed. Its row on the status issue and the dashboard
should say it was not refreshed (bot.sync.status.not_refreshed, "a stale or failed refresh is
shown as stale, never as current", docs/design.md), as a unit whose PR write GitHub refused in
``publish`` is. End to end on the local GitHub with the real bot."""
from __future__ import annotations

from bot.dashboard.views import Policy, units
from tests.e2e.test_conflict_owed import source, stacked_world  # noqa: F401
from tests.e2e.test_decided_dependency_waits import bundle_and_chain, defer_the_bundle_held_at_its_close


async def test_a_chain_whose_new_body_github_refused_is_marked_not_refreshed(stacked_world):  # noqa: F811
    w, up_src, upstream = stacked_world
    b0, bundle, chain = await bundle_and_chain(w, up_src, upstream)
    hold, said = await defer_the_bundle_held_at_its_close(w, b0, bundle)
    w.fake.faults.add("PATCH", f"/repos/meta/triton/pulls/{chain['number']}", 403,
                      "Resource not accessible by integration")
    hold.release()
    await said
    assert "Lands after" in (await w.pr(chain["number"]))["body"], "refused: GitHub still has the old body"

    doc = units(w.bot.store, "meta/triton", w.bot.svc.now(), Policy())
    [row] = [u for u in doc["units"] if u["pr"] == chain["number"]]
    assert row["not_refreshed"] is not None, row
