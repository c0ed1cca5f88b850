"""The dashboard's figures as plotly JSON (bot/dashboard/plots.py), read without a browser."""
from __future__ import annotations

import json

from bot.dashboard.plots import overview_figure


def test_days_behind_ticks_never_get_si_suffixes():
    """A fork a few seconds behind upstream has Days Behind of about 0.0002: plotly's default tick
    labels write that with SI suffixes ("200μ" days, "1.5k" days), which read as nonsense for a
    number of days. The days axis writes plain numbers: no SI or power exponent, and no d3 ``s``
    (SI-prefix) tick format."""
    series = [{"at": f"2026-12-0{i + 1}T00:00:00Z", "source": "sync", "days_behind": d, "backlog": b,
               "contiguous_lag_days": d} for i, (d, b) in enumerate([(0.0002, 1), (0.0004, 2), (0.0, 0)])]
    fig = json.loads(overview_figure({"series": series, "landings": []}))
    days = fig["layout"]["yaxis"]
    assert days["title"]["text"] == "days"
    assert days.get("exponentformat") == "none", days
    assert not str(days.get("tickformat", "")).endswith("s"), days
    # the traces drawn against days are on that axis (none on the commits axis but the backlog)
    assert [t["name"] for t in fig["data"] if t.get("yaxis") == "y2"] == ["Backlog Commits"]


def test_points_before_the_forks_first_own_commit_stay_out_of_the_lines():
    """A backfilled point from before the fork's first own commit is upstream's own past: a gap in
    Days Behind and Backlog, drawn in a faint trace of its own that names it."""
    series = [{"at": f"2026-12-0{i + 1}T00:00:00Z", "source": src, "days_behind": d, "backlog": b,
               "contiguous_lag_days": d}
              for i, (src, d, b) in enumerate([("backfill-before-fork", 30.0, 0), ("backfill-before-fork", 31.0, 0),
                                               ("backfill", 2.0, 5), ("sync", 1.0, 3)])]
    fig = json.loads(overview_figure({"series": series, "landings": []}))
    by = {t["name"]: t for t in fig["data"]}
    assert by["Days Behind"]["y"] == [None, None, 2.0, 1.0]
    assert by["Backlog Commits"]["y"] == [None, None, 5, 3]
    early = by["before the fork's first own commit"]
    assert early["x"] == ["2026-12-01T00:00:00Z", "2026-12-02T00:00:00Z"] and early["y"] == [30.0, 31.0]
    assert "upstream not seen (refresh failed)" not in by
