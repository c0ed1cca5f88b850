"""The partition rules as a pure function: tables of commits, predictions and symbols in, exact
units out (git's part is covered by tests/test_plan.py and tests/test_predict.py)."""
from __future__ import annotations

import pytest

from bot.config.forksync import Area
from bot.model import CommitInfo, FileChange, InFlightBranch
from bot.plan.partition import Prediction, build_plan, find_unit, no_op_candidates


def sha(n: int) -> str:
    return f"{n:02d}" * 20


def commit(n: int, *paths: str) -> CommitInfo:
    return CommitInfo(sha=sha(n), parents=(sha(n - 1),), message=f"change {n} (#{n})",
                      files=tuple(FileChange(p) for p in paths), pr=n)


class TablePredictor:
    """Outcomes by commit number (default clean); records the order of advances."""

    def __init__(self, outcomes: dict[int, Prediction] | None = None):
        self.outcomes = outcomes or {}
        self.advanced: list[str] = []

    def predict(self, c):
        return self.outcomes.get(int(c.sha[:2]), Prediction("clean", result_tree=f"tree-{c.sha[:4]}"))

    def advance(self, c, p):
        self.advanced.append(c.sha)


def table_symbols(table: dict[tuple[int, str], set[str] | None]):
    return lambda c, path: (frozenset(table[(int(c.sha[:2]), path)]) if table.get((int(c.sha[:2]), path)) is not None
                            else None)


def ids(plan):
    return [(u.id, [int(s[:2]) for s in u.shas]) for u in plan.units]


CONFLICT = Prediction("conflict", ("a.cpp",))


def test_same_function_chains_other_function_bundles():
    commits = [commit(1, "a.cpp"), commit(2, "a.cpp"), commit(3, "a.cpp"), commit(4, "a.cpp")]
    syms = table_symbols({(1, "a.cpp"): {"f"}, (2, "a.cpp"): {"g"}, (3, "a.cpp"): {"f", "h"}, (4, "a.cpp"): None})
    pred = TablePredictor({1: CONFLICT})
    plan = build_plan(commits, predictor=pred, symbols=syms)
    # 2 touches g (not f): predicted and bundled; 3 touches f: joins; 4 has unknown symbols: file level
    assert ids(plan) == [(f"chain-{sha(1)[:12]}", [1, 3, 4]), (f"bundle-{sha(2)[:12]}", [2])]
    assert plan.units[0].items[2].reason == f"touches a.cpp (file) like {sha(1)[:12]} of chain-{sha(1)[:12]}"
    assert pred.advanced == [sha(2)]
    # without a symbol source everything is file level
    assert ids(build_plan(commits, predictor=TablePredictor({1: CONFLICT}))) == [(f"chain-{sha(1)[:12]}", [1, 2, 3, 4])]


def test_a_commit_touching_two_chains_starts_a_chain_stacked_on_both():
    commits = [commit(1, "a.cpp"), commit(2, "b.cpp"), commit(3, "c.py"), commit(4, "b.cpp", "a.cpp"), commit(5, "b.cpp")]
    plan = build_plan(commits, predictor=TablePredictor({1: CONFLICT, 2: Prediction("conflict", ("b.cpp",))}))
    c1, c2, c4 = (f"chain-{sha(n)[:12]}" for n in (1, 2, 4))
    # chains are never merged: 4 must land after both, so it starts a chain depending on both;
    # 5 touches b.cpp like chain 2 and chain 4, and chain 4 already lands after chain 2: it joins 4
    assert ids(plan) == [(c1, [1]), (c2, [2]), (f"bundle-{sha(3)[:12]}", [3]), (c4, [4, 5])]
    assert [u.depends_on for u in plan.units] == [(), (), (), (c1, c2)]
    assert plan.notes == ()
    assert plan.units[3].items[0].reason == f"touches a.cpp (file) like {sha(1)[:12]} of {c1}; stacked on {c1}, {c2}"
    assert plan.units[3].items[1].reason == f"touches b.cpp (file) like {sha(4)[:12]} of {c4}"


def test_divergent_area_by_path_and_by_symbol():
    areas = [Area(name="ws", paths=["lib/WS/**"], symbols=[r"^warpSpec"], divergent=True),
             Area(name="lib", paths=["lib/**"])]
    commits = [commit(1, "lib/WS/x.cpp"), commit(2, "lib/y.cpp"), commit(3, "lib/z.cpp"), commit(4, "lib/WS/x.cpp")]
    syms = table_symbols({(2, "lib/y.cpp"): {"other"}, (3, "lib/z.cpp"): {"warpSpecHelper"}})
    plan = build_plan(commits, predictor=TablePredictor(), areas=areas, symbols=syms)
    c1 = f"chain-{sha(1)[:12]}"
    assert ids(plan) == [(c1, [1, 3, 4]), (f"bundle-{sha(2)[:12]}", [2])]
    assert [i.reason for i in plan.units[0].items] == [
        "touches divergent area 'ws': lib/WS/x.cpp",
        "touches divergent area 'ws': lib/z.cpp (warpSpecHelper) of " + c1,
        f"touches lib/WS/x.cpp (file) like {sha(1)[:12]} of {c1}"]
    assert plan.units[0].areas == ("lib", "ws")


def test_open_chain_branch_is_continued_open_bundle_makes_a_dependent_chain():
    flights = [
        InFlightBranch(name="forksync/chain-aaaaaaaaaaaa", unit_id="chain-aaaaaaaaaaaa", kind="chain",
                       upstream_shas=(sha(90)[:12],), paths=frozenset({"a.cpp"})),
        InFlightBranch(name="forksync/bundle-bbbbbbbbbbbb", unit_id="bundle-bbbbbbbbbbbb", kind="bundle",
                       upstream_shas=(sha(91),), paths=frozenset({"b.cpp"})),
    ]
    lookup = {sha(90): commit(90, "a.cpp"), sha(91): commit(91, "b.cpp")}
    commits = [commit(1, "a.cpp"), commit(2, "b.cpp"), commit(3, "c.cpp"), commit(4, "a.cpp")]
    plan = build_plan(commits, predictor=TablePredictor(), in_flight=flights, commit_lookup=lookup)
    assert ids(plan) == [("chain-aaaaaaaaaaaa", [1, 4]), (f"chain-{sha(2)[:12]}", [2]),
                         (f"bundle-{sha(3)[:12]}", [3])]
    cont, dep, _ = plan.units
    assert cont.reason == "continues forksync/chain-aaaaaaaaaaaa (in flight, 1 commit on it)"
    dep_reason = (f"touches b.cpp (file) like {sha(91)[:12]} of forksync/bundle-bbbbbbbbbbbb (in flight); "
                  f"stacked on bundle-bbbbbbbbbbbb")
    assert dep.reason == dep_reason and dep.items[0].reason == dep_reason
    assert dep.depends_on == ("bundle-bbbbbbbbbbbb",) and cont.depends_on == ()
    assert cont.items[0].reason == f"touches a.cpp (file) like {sha(90)[:12]} of forksync/chain-aaaaaaaaaaaa (in flight)"
    # a commit touching both: a new chain stacked on the in-flight continuation and on chain 2
    # (which already lands after the open bundle)
    both = build_plan(commits + [commit(5, "b.cpp", "a.cpp")], predictor=TablePredictor(), in_flight=flights,
                      commit_lookup=lookup)
    c2, c5 = f"chain-{sha(2)[:12]}", f"chain-{sha(5)[:12]}"
    assert ids(both) == [("chain-aaaaaaaaaaaa", [1, 4]), (c2, [2]), (f"bundle-{sha(3)[:12]}", [3]), (c5, [5])]
    assert both.units[3].depends_on == ("chain-aaaaaaaaaaaa", c2)
    # an in-flight branch without commit data is matched by its paths
    bare = [InFlightBranch(name="forksync/chain-cccccccccccc", unit_id="chain-cccccccccccc", kind="chain",
                           upstream_shas=("deadbeef",), paths=frozenset({"c.cpp"}))]
    assert ids(build_plan(commits[2:3], predictor=TablePredictor(), in_flight=bare)) == [("chain-cccccccccccc", [3])]


def test_empty_and_unknown_predictions():
    commits = [commit(1, "a"), commit(2, "b"), commit(3, "c")]
    plan = build_plan(commits, predictor=TablePredictor({
        1: Prediction("empty"), 2: Prediction("unknown", detail="missing objects: blob 1234 (b)")}))
    assert ids(plan) == [(f"chain-{sha(2)[:12]}", [2]), (f"bundle-{sha(3)[:12]}", [3])]
    assert plan.units[0].items[0].reason == ("pick cannot be predicted (missing objects: blob 1234 (b)); "
                                             "a person checks it")
    assert [s for s, _ in no_op_candidates(plan)] == [sha(1)]


def test_cap_and_lookup_helpers():
    commits = [commit(i, f"f{i}") for i in range(1, 6)]
    plan = build_plan(commits, predictor=TablePredictor(), bundle_size_cap=2)
    assert ids(plan) == [(f"bundle-{sha(1)[:12]}", [1, 2]), (f"bundle-{sha(3)[:12]}", [3, 4]),
                         (f"bundle-{sha(5)[:12]}", [5])]
    assert find_unit(plan, f"bundle-{sha(3)[:12]}") is plan.units[1]
    assert find_unit(plan, "bundle-03") is plan.units[1]
    assert find_unit(plan, "bundle-0") is None      # ambiguous
    with pytest.raises(ValueError, match="at least 1"):
        build_plan(commits, predictor=TablePredictor(), bundle_size_cap=0)


def test_file_scope_lines_are_left_to_the_merge_and_a_file_only_follower_is_stacked():
    commits = [commit(1, "a.cpp"), commit(2, "a.cpp"), commit(3, "a.cpp"), commit(4, "a.cpp")]
    syms = table_symbols({(1, "a.cpp"): {"<top-level>", "f"}, (2, "a.cpp"): {"<top-level>"},
                          (3, "a.cpp"): {"<top-level>", "g"}, (4, "a.cpp"): {"f"}})
    # 2 shares only file-scope lines (includes) with chain 1: predicted, clean → bundle;
    # 3 conflicts in a.cpp, which chain 1 changes, but shares no symbol with it: a new chain
    # stacked on chain 1 (and after bundle 2: it was predicted on 2's pick of a.cpp)
    plan = build_plan(commits[:3], predictor=TablePredictor({1: CONFLICT, 3: CONFLICT}), symbols=syms)
    c1, c3 = f"chain-{sha(1)[:12]}", f"chain-{sha(3)[:12]}"
    assert ids(plan) == [(c1, [1]), (f"bundle-{sha(2)[:12]}", [2]), (c3, [3])]
    assert [u.depends_on for u in plan.units] == [(), (), (c1, f"bundle-{sha(2)[:12]}")]
    assert plan.units[2].items[0].reason == (f"predicted cherry-pick conflicts in a.cpp; follows {c1}, which changes "
                                             f"a.cpp; stacked on {c1}")
    assert plan.units[2].items[0].conflicts == ("a.cpp",)
    # 4 conflicts in a.cpp too and shares f with chain 1 (a strong link), but it must also land
    # after chain 3, which changes a.cpp: chain 1 does not land after chain 3, chain 3 lands after
    # chain 1 — so 4 joins chain 3
    plan = build_plan(commits, predictor=TablePredictor({1: CONFLICT, 3: CONFLICT, 4: CONFLICT}), symbols=syms)
    assert ids(plan) == [(c1, [1]), (f"bundle-{sha(2)[:12]}", [2]), (c3, [3, 4])]
    assert plan.units[2].items[1].reason == f"predicted cherry-pick conflicts in a.cpp; follows {c3}, which changes a.cpp"
    # without 3, 4 joins chain 1 itself (same symbol)
    plan = build_plan([commits[0], commits[1], commits[3]], predictor=TablePredictor({1: CONFLICT, 4: CONFLICT}),
                      symbols=syms)
    assert ids(plan) == [(c1, [1, 4]), (f"bundle-{sha(2)[:12]}", [2])]
