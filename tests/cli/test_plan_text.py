"""The human form of ``forksync plan``: each reason once, what a chain waits for said truthfully,
a note repeated on every prediction printed once with its count."""
from __future__ import annotations

from types import SimpleNamespace as NS

from bot.cli.plan import plan_lines, waits_for
from bot.model import InFlightBranch, Plan, PlanItem, Unit

A, B, C, D, E = ("a" * 40, "b" * 40, "c" * 40, "d" * 40, "e" * 40)
OFF = " (renames not detected: object not found - no match for id (2b33))"
UP = {A: NS(pr=1, subject="[README] a"), B: NS(pr=2, subject="[README] b"), C: NS(pr=3, subject="c"),
      D: NS(pr=None, subject="d"), E: NS(pr=5, subject="e")}


def lines(units, in_flight=(), notes=()):
    plan = Plan(units=tuple(units), notes=tuple(notes))
    state = NS(fork_tip="f" * 40, upstream=UP, in_flight=list(in_flight), upstream_tip="e" * 40,
               upstream_as_of=1764918000, upstream_as_of_unknown=None)
    return plan_lines(state, NS(plan=plan, pending=[s for u in units for s in u.shas]))


def test_each_reason_once_and_what_a_stacked_chain_waits_for():
    conflict = "predicted cherry-pick conflicts in README.md"
    first = Unit(f"chain-{A[:12]}", "chain", (PlanItem(A, conflict, ("README.md",)),), reason=conflict)
    stacked = Unit(f"chain-{B[:12]}", "chain", (
        PlanItem(B, f"{conflict}; follows chain-{A[:12]}, which changes README.md; stacked on chain-{A[:12]}"),
        PlanItem(C, f"{conflict}; follows chain-{B[:12]}, which changes README.md; picks cleanly after the chain's earlier picks")),
        reason=f"{conflict}; follows chain-{A[:12]}, which changes README.md; stacked on chain-{A[:12]}",
        depends_on=(f"chain-{A[:12]}",))
    bundle = Unit(f"bundle-{D[:12]}", "bundle", (
        PlanItem(D, "predicted clean pick onto the fork tip + 0 earlier bundle picks" + OFF),
        PlanItem(E, "predicted clean pick onto the fork tip + 1 earlier bundle pick" + OFF)),
        reason="bundle 1 of 1: 2 commits predicted to pick cleanly in order (cap 50)")
    assert lines([first, stacked, bundle]) == [
        "plan: 5 pending upstream commits up to upstream eeeeeeeeeeee (upstream as of 2025-12-05T07:00:00Z) onto fork tip "
        "ffffffffffff",
        "  1 bundle(s) with 2 commits, 2 chain(s) with 3 commits, 0 NO_OP candidate(s); 0 branch(es) in flight",
        "",
        "chain-aaaaaaaaaaaa  chain, 1 commit(s)",
        "  why: predicted cherry-pick conflicts in README.md",
        "  aaaaaaaaaaaa      #1  [README] a",
        "",
        "chain-bbbbbbbbbbbb  chain, 2 commit(s)",
        "  why: predicted cherry-pick conflicts in README.md; follows chain-aaaaaaaaaaaa, which changes README.md",
        "  waits for: chain-aaaaaaaaaaaa (earlier in this plan: apply and land it first)",
        "  bbbbbbbbbbbb      #2  [README] b",
        "  cccccccccccc      #3  c",
        "               picks cleanly after the chain's earlier picks",
        "",
        "bundle-dddddddddddd  bundle, 2 commit(s)",
        "  why: bundle 1 of 1: 2 commits predicted to pick cleanly in order (cap 50)",
        "  dddddddddddd       -  d",
        "  eeeeeeeeeeee      #5  e",
        "note: rename detection was off for 2 prediction(s) (a missing object stops libgit2's rename search; a renamed "
        "file may show at its old path): object not found - no match for id (2b33)",
    ]


def test_waits_for_names_where_each_dependency_is():
    unit = Unit("chain-x", "chain", (PlanItem(A, "r"),), depends_on=("chain-p", "bundle-f", "chain-gone"))
    plan = Plan(units=(Unit("chain-p", "chain", (PlanItem(B, "r"),)), unit))
    flying = [InFlightBranch(name="forksync/bundle-f", unit_id="bundle-f", kind="bundle", upstream_shas=(C,))]
    assert waits_for(unit, plan, flying) == (
        "chain-p (earlier in this plan: apply and land it first); bundle-f (branch forksync/bundle-f, in flight: merge it "
        "first); chain-gone (not in this plan and not in flight)")


def test_a_commit_that_says_more_than_its_unit_keeps_its_own_reason():
    u = Unit(f"chain-{A[:12]}", "chain", (PlanItem(A, "touches divergent area 'ws': x.cpp"),
                                          PlanItem(B, "touches divergent area 'ws': y.cpp")),
             reason="touches divergent area 'ws': x.cpp")
    assert lines([u])[4:] == ["  why: touches divergent area 'ws': x.cpp", "  aaaaaaaaaaaa      #1  [README] a",
                              "  bbbbbbbbbbbb      #2  [README] b", "               touches divergent area 'ws': y.cpp"]


def test_a_long_subject_is_cut_with_an_ellipsis():
    long = "[AMD] Enable the ragged TMA descriptors for warp-specialized matmul on GB200 (#8637)"
    exact = "x" * 70
    up = {A: NS(pr=8637, subject=long), B: NS(pr=2, subject=exact)}
    unit = Unit(f"bundle-{A[:12]}", "bundle", (
        PlanItem(A, "predicted clean pick onto the fork tip + 0 earlier bundle picks"),
        PlanItem(B, "predicted clean pick onto the fork tip + 1 earlier bundle pick")),
        reason="bundle 1 of 1: 2 commits predicted to pick cleanly in order (cap 50)")
    state = NS(fork_tip="f" * 40, upstream=up, in_flight=[], upstream_tip="e" * 40, upstream_as_of=None,
               upstream_as_of_unknown="no fetch recorded")
    out = plan_lines(state, NS(plan=Plan(units=(unit,)), pending=[A, B]))
    assert out[0].endswith("(upstream as of unknown: no fetch recorded) onto fork tip ffffffffffff")
    assert f"  aaaaaaaaaaaa   #8637  {long[:69]}…" in out      # 70 characters, the last one the ellipsis
    assert f"  bbbbbbbbbbbb      #2  {exact}" in out          # a subject that fits is not cut


def test_the_header_names_the_branches_in_flight_then_counts_the_rest():
    unit = Unit(f"chain-{A[:12]}", "chain", (PlanItem(A, "r"),), reason="r")
    flying = [InFlightBranch(f"forksync/chain-{c * 12}", f"chain-{c * 12}", "chain", (c * 40,) * n)
              for c, n in (("1", 1), ("2", 2), ("3", 1), ("4", 3), ("5", 1))]
    assert lines([unit], flying[:2])[1].endswith(
        "; 2 branch(es) in flight: forksync/chain-111111111111 (1 upstream), forksync/chain-222222222222 (2 upstream)")
    assert lines([unit], flying)[1].endswith(
        "; 5 branch(es) in flight: forksync/chain-111111111111 (1 upstream), forksync/chain-222222222222 (2 upstream), "
        "forksync/chain-333333333333 (1 upstream) and 2 more (`plan --json` in_flight lists them)")
    assert lines([unit])[1].endswith("; 0 branch(es) in flight")
