"""Pins and metrics: exact values on tables of entries and on the real scenario repos."""
from __future__ import annotations

from dataclasses import replace

import pytest

from bot.config.forksync import IsolatedPickRules, TrailerRule, load_config
from bot.core.pins import compute_pins, isolated_entries
from bot.model import Disposition as D
from bot.model import LedgerEntry
from bot.store import Store
from bot.sync.ingest import load_state
from tests.support.ledger_scenario import DAY, T0, build

P, N, R, DEF, PEN, W, S, IF = D.PICKED, D.NO_OP, D.REVERTED, D.DEFERRED_BLOCKED, D.PENDING, D.WONT_PORT, \
    D.SKIP_FOR_CURRENT_BASE, D.IN_FLIGHT


def entries(*disps, isolated=()):
    return [LedgerEntry(sha=f"{i:040x}", index=i, disposition=d, pr=1000 + i, committer_time=T0 + (i + 1) * DAY,
                        isolated=i in isolated) for i, d in enumerate(disps)]


def pins(es, **kw):
    return compute_pins(es, base_sha="b" * 40, base_time=T0, **kw)


def test_frontier_contiguous_days_behind_backlog():
    es = entries(P, N, P, PEN, DEF, P, R, P, PEN, PEN)
    p = pins(es)
    assert p.frontier.index == 7 and p.frontier.pr == 1007 and p.frontier.committer_time == T0 + 8 * DAY
    assert p.contiguous.index == 2
    assert p.upstream_tip.index == 9
    assert p.days_behind == 2.0 and p.contiguous_lag_days == 7.0
    assert p.backlog == 3 and p.backlog_by_disposition == {"DEFERRED_BLOCKED": 1, "PENDING": 1, "REVERTED": 1}
    assert p.not_reached == 2 and p.not_reached_handled == 0 and p.total == 10


def test_nothing_reached_means_the_base_is_the_frontier():
    p = pins(entries(PEN, N, PEN), upstream_tip_time=T0 + 3 * DAY + 43200)
    assert p.frontier.before_range and p.frontier.sha == "b" * 40 and p.contiguous.before_range
    assert p.days_behind == 3.5 and p.backlog == 0 and p.not_reached == 3 and p.not_reached_handled == 1


def test_empty_commit_at_the_tip_does_not_move_the_frontier_but_extends_the_pin():
    p = pins(entries(P, P, N))
    assert p.frontier.index == 1 and p.contiguous.index == 2 and p.days_behind == 1.0


def test_urgent_pick_is_isolated():
    p = pins(entries(P, PEN, PEN, P, isolated={3}))
    assert p.frontier.index == 0 and p.isolated == (f"{3:040x}",) and p.not_reached_handled == 1


def test_fallback_island_far_ahead_is_isolated():
    rules = IsolatedPickRules(max_gap=3, min_run=2)
    es = entries(P, P, PEN, PEN, PEN, PEN, PEN, P, PEN, PEN)
    assert isolated_entries(es, rules) == {f"{7:040x}"}
    assert pins(es, rules=rules).frontier.index == 1
    # a run of min_run picks far ahead is sequential ingestion, not an island
    es2 = entries(P, P, PEN, PEN, PEN, PEN, PEN, P, P, PEN)
    assert isolated_entries(es2, rules) == set()
    assert pins(es2, rules=rules).frontier.index == 8
    # an island near the base is not isolated (the first cluster may start anywhere within max_gap)
    assert isolated_entries(entries(PEN, PEN, P, PEN), rules) == set()


def test_decisions_are_reached_in_flight_is_not():
    p = pins(entries(P, IF, W, S, IF))
    assert p.frontier.index == 3 and p.contiguous.index == 0 and p.backlog == 1
    assert p.backlog_by_disposition == {"IN_FLIGHT": 1}


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    return build(tmp_path_factory.mktemp("scn"))


def test_pins_on_the_real_scenario(scenario, tmp_path):
    cfg = load_config(None, scenario.cfg_overrides())
    cfg = cfg.model_copy(update={"cache_dir": str(tmp_path), "provenance": cfg.provenance.model_copy(update={
        "trailers": [TrailerRule(name="r", pattern=r"^Reactor Cherry-pick Revision:\s*(?P<sha>[0-9a-f]{7,40})")]})})
    p = load_state(cfg, store=Store()).pins
    u = scenario.u
    assert p.frontier.sha == u["u16"] and p.frontier.pr == 116          # u18 is urgent: isolated
    assert p.isolated == (u["u18"],)
    assert p.contiguous.sha == u["u8"]                                  # u9 is in flight
    assert p.days_behind == 2.0 and p.contiguous_lag_days == 10.0
    assert p.backlog == 4 and p.backlog_by_disposition == {"IN_FLIGHT": 1, "PENDING": 2, "REVERTED": 1}
    assert p.not_reached == 2 and p.not_reached_handled == 1


@pytest.mark.parametrize("disps, holder, disp", [
    ((P, N, P, PEN, DEF, P), 3, "PENDING"),
    ((P, DEF, P), 1, "DEFERRED_BLOCKED"),
    ((R, P), 0, "REVERTED"),
    ((P, N, W, S), None, ""),
])
def test_the_oldest_unhandled_entry_holds_the_contiguous_pin(disps, holder, disp):
    p = pins(entries(*disps))
    assert (p.holder.index if p.holder else None) == holder and p.holder_disposition == disp
    if holder is not None:
        assert p.holder.committer_time == T0 + (holder + 1) * DAY and p.contiguous.index == holder - 1


def test_without_a_merge_base_the_lag_runs_from_upstreams_oldest_commit_not_1970():
    # fork and upstream share no history: nothing to fall back to, so a pin no entry holds is no
    # commit, and the fork lacks all of the range: behind by its whole span, not since the epoch
    es = entries(PEN, P, PEN)
    p = compute_pins(es, base_sha=None, base_time=0, upstream_tip_time=T0 + 5 * DAY)
    assert p.contiguous.sha is None and p.contiguous.before_range
    assert p.contiguous_lag_days == 4.0          # from the oldest entry (T0 + 1 day)
    assert p.frontier.index == 1 and p.days_behind == 3.0
    none = compute_pins(entries(PEN, PEN), base_sha=None, base_time=0, upstream_tip_time=T0 + 5 * DAY)
    assert none.frontier.sha is None and none.days_behind == 4.0 and none.contiguous_lag_days == 4.0
    empty = compute_pins([], base_sha=None, base_time=0, upstream_tip_time=T0)
    assert empty.days_behind == 0.0


def test_a_landed_pick_that_changes_nothing_moves_the_frontier():
    """NO_OP with a fork commit: a resolution kept the fork's files, and the fork's empty pick of it
    landed — sequential ingestion walked over it, unlike an empty upstream commit nobody picked."""
    es = entries(P, P, N)
    es[2] = replace(es[2], fork_commit="f" * 40)
    p = pins(es)
    assert p.frontier.index == 2 and p.contiguous.index == 2 and p.days_behind == 0.0
    assert p.not_reached == 0
    # the same entry in the fallback for isolated picks: an island like any other reached entry
    rules = IsolatedPickRules(max_gap=3, min_run=2)
    far = entries(P, P, PEN, PEN, PEN, PEN, PEN, N)
    far[7] = replace(far[7], fork_commit="f" * 40)
    assert isolated_entries(far, rules) == {f"{7:040x}"}
