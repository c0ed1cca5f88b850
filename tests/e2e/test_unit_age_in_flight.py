"""A unit whose PR is open keeps its age and areas on the dashboard's units page after a later
sync plans without it. The planner plans only pending commits, so a unit in flight leaves the
saved plan at the next sync that does not re-list it, and what the page read from the plan (when
it was first planned, its areas) has to come from the unit's own row from then on."""
from __future__ import annotations

import pytest

from bot.dashboard import views
from bot.sync import store as sync_store
from tests.support.github import commit_files, git
from tests.support.sync_world import chain_world, open_prs, stop_chain


@pytest.fixture
async def world(fake_github, tmp_path):
    async with chain_world(fake_github, tmp_path) as w:
        yield w


async def test_an_open_chain_keeps_its_age_and_areas_once_the_plan_no_longer_lists_it(world):
    w, up_src, upstream = world
    _, branch, c2, _ = await stop_chain(w, up_src, upstream)
    unit = f"chain-{c2[:12]}"
    [planned] = [u for u in sync_store.load_plan(w.bot.store, "meta/triton") if u["id"] == unit]
    first, areas = planned["first_planned_at"], planned["areas"]
    assert areas == ["amd"]

    # upstream moves on in a file of no area: a bundle of it opens, and this sync's plan has only that bundle
    c4 = commit_files(up_src, {"python/a.py": "a = 4\n"}, "Frontend: a = 4 (#104)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    assert {p["head"]["ref"] for p in await open_prs(w.alice)} == {branch, f"forksync/bundle-{c4[:12]}"}
    assert unit not in {u["id"] for u in sync_store.load_plan(w.bot.store, "meta/triton")}

    by = {u["id"]: u for u in views.units(w.bot.store, "meta/triton", now=first + 3600.0, policy=views.Policy())["units"]}
    assert by[unit]["pr_state"] == "draft"
    assert by[unit]["age_s"] == 3600.0
    assert by[unit]["areas"] == ["amd"]
