"""A backfill point before the fork's first own commit (``source: backfill-before-fork``) is
upstream's own past: the fork's tip then was one of upstream's commits, and its frontier moved
with upstream's history. The overview's landings (the frontier moved between two points) are the
fork taking upstream's commits; such a move is none, and the plot draws a landing marker at each."""
from __future__ import annotations

import json

from bot.dashboard import views
from bot.dashboard.plots import overview_figure
from bot.store import Store
from bot.sync import store as sync_store
from tests.support.dashboard_world import FORK, NOW, fill, sha

DAY = 86400.0


def test_frontier_moves_before_the_forks_first_own_commit_are_no_landings():
    store = Store()
    fill(store)
    old = sync_store.snapshots(store, FORK)[0]["at"]
    # a torch-spyre-like fork: four days where its tip followed upstream (the frontier is the tip),
    # then its first own commit (the backfill's first ordinary point keeps the last frontier)
    rows = [{"repo": FORK, "at": old - (10 - k) * DAY, "upstream_as_of": old - (10 - k) * DAY,
             "upstream_head": sha("u", 200 + k), "frontier": sha("u", 100 + k), "contiguous_pin": sha("u", 100 + k),
             "days_behind": 30.0 + k, "contiguous_lag_days": 30.0 + k, "backlog": 0, "not_reached": 0,
             "open_units": 0, "source": "backfill-before-fork" if k < 4 else "backfill", "fetch_error": ""}
            for k in range(5)]
    for r in rows[4:]:
        r["frontier"] = sha("u", 103)
    sync_store.record_snapshots(store, rows)
    doc = views.overview(store, FORK, NOW, views.Policy())
    marked = [p["at"] for p in doc["series"] if p["source"] == "backfill-before-fork"]
    assert len(marked) == 4
    landed = [ld["at"] for ld in doc["landings"]]
    assert not set(landed) & set(marked), landed
    fig = json.loads(overview_figure(doc))
    tri = next(t for t in fig["data"] if t["name"] == "landing (frontier moved)")
    assert not set(tri["x"]) & set(marked), tri["x"]
