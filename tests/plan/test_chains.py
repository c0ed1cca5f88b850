"""Reviewable chains: the chain size cap and stacked chains (``Unit.depends_on``),
predictions on a chain's own running tree, the symbol scope of divergent-area patterns, and
``Plan.no_ops``. Pure tables first, then the demo scenario's real repositories."""
from __future__ import annotations

import pytest

from bot.config.forksync import Area, load_config
from bot.demo.scenario import build_scenario
from bot.git.apply import apply_unit
from bot.model import Plan, PlanItem
from bot.plan.partition import Prediction, build_plan, no_op_candidates
from bot.plan.planner import fork_paths, plan_state
from bot.sync.ingest import load_state
from tests.plan.test_rules import CONFLICT, TablePredictor, commit, ids, sha, table_symbols


def cid(n: int) -> str:
    return f"chain-{sha(n)[:12]}"


class TreePredictor(TablePredictor):
    """Also predicts onto a chain's running tree: ``on[(n, tree)]`` (default clean → ``t<n>``)."""

    def __init__(self, outcomes=None, on=None):
        super().__init__(outcomes)
        self.on = on or {}
        self.asked: list[tuple[int, str]] = []

    def predict_on(self, c, tree):
        n = int(c.sha[:2])
        self.asked.append((n, tree))
        return self.on.get((n, tree), Prediction("clean", result_tree=f"t{n}"))


def test_a_full_chain_is_continued_by_a_stacked_chain():
    commits = [commit(n, "a.cpp") for n in range(1, 7)]
    syms = table_symbols({(n, "a.cpp"): {"f"} for n in range(1, 7)})
    plan = build_plan(commits, predictor=TablePredictor({1: CONFLICT}), symbols=syms, chain_size_cap=2)
    assert ids(plan) == [(cid(1), [1, 2]), (cid(3), [3, 4]), (cid(5), [5, 6])]
    assert [u.depends_on for u in plan.units] == [(), (cid(1),), (cid(3),)]
    like = f"touches a.cpp (f) like {sha(1)[:12]} of {cid(1)}"
    assert [i.reason for i in plan.units[1].items] == [
        f"{like}; {cid(1)} is full (cap 2); stacked on {cid(1)}", f"touches a.cpp (f) like {sha(3)[:12]} of {cid(3)}"]
    assert plan.units[2].items[0].reason == (f"{like}; {cid(1)} is full (cap 2); {cid(3)} is full (cap 2); "
                                             f"stacked on {cid(3)}")
    assert plan.units[2].reason == plan.units[2].items[0].reason
    # the default cap (25) keeps the six together; the same input gives the same plan
    assert ids(build_plan(commits, predictor=TablePredictor({1: CONFLICT}), symbols=syms)) == [(cid(1), [1, 2, 3, 4, 5, 6])]
    assert build_plan(commits, predictor=TablePredictor({1: CONFLICT}), symbols=syms, chain_size_cap=2) == plan
    with pytest.raises(ValueError, match="chain_size_cap must be at least 1"):
        build_plan(commits, predictor=TablePredictor(), chain_size_cap=0)


def test_file_only_followers_stack_and_fill_the_stacked_chain():
    # 1 conflicts (root chain); 2..5 conflict in a.cpp, which chain 1 changes, without sharing its
    # symbol: they must land after chain 1 but are not part of it — one stacked chain takes them
    commits = [commit(n, "a.cpp") for n in range(1, 6)]
    syms = table_symbols({(1, "a.cpp"): {"f"}, **{(n, "a.cpp"): {f"g{n}"} for n in range(2, 6)}})
    conflicts = {n: CONFLICT for n in range(1, 6)}
    plan = build_plan(commits, predictor=TablePredictor(conflicts), symbols=syms, chain_size_cap=3)
    assert ids(plan) == [(cid(1), [1]), (cid(2), [2, 3, 4]), (cid(5), [5])]
    assert [u.depends_on for u in plan.units] == [(), (cid(1),), (cid(2),)]
    follows = "predicted cherry-pick conflicts in a.cpp; follows {}, which changes a.cpp"
    assert [i.reason for i in plan.units[1].items] == [
        follows.format(cid(1)) + f"; stacked on {cid(1)}",
        follows.format(cid(2)), follows.format(cid(2))]        # 3: links chains 1 and 2 → joins 2
    assert plan.units[2].items[0].reason == follows.format(cid(1)) + f"; {cid(2)} is full (cap 3); stacked on {cid(2)}"
    assert all(i.conflicts == ("a.cpp",) for i in plan.units[1].items)


def test_chain_items_are_predicted_on_the_chains_running_tree():
    ws = [Area(name="ws", paths=["lib/WS/**"], divergent=True)]
    commits = [commit(n, "lib/WS/x.cpp") for n in range(1, 5)]
    base_conflict = Prediction("conflict", ("lib/WS/x.cpp",))
    pred = TreePredictor({1: Prediction("clean", result_tree="t1"), 2: base_conflict, 3: base_conflict,
                          4: base_conflict},
                         on={(3, "t2"): Prediction("conflict", ("lib/WS/x.cpp",))})
    plan = build_plan(commits, predictor=pred, areas=ws)
    assert ids(plan) == [(cid(1), [1, 2, 3, 4])]
    items = plan.units[0].items
    follows = f"predicted cherry-pick conflicts in lib/WS/x.cpp; follows {cid(1)}, which changes lib/WS/x.cpp"
    # 2 conflicts on the fork tip but picks cleanly after 1: no conflict in the chain's order
    assert (items[1].reason, items[1].conflicts) == (
        f"predicted conflicts without the chain in lib/WS/x.cpp; follows {cid(1)}, which changes lib/WS/x.cpp; "
        "picks cleanly after the chain's earlier picks", ())
    # 3 conflicts after 1 and 2: a real conflict in the chain's order, and the tree stops there
    assert (items[2].reason, items[2].conflicts) == (
        f"{follows}; predicted cherry-pick conflicts in lib/WS/x.cpp after the chain's earlier picks", ("lib/WS/x.cpp",))
    # 4 comes after a predicted conflict: its conflicts are those on the fork tip, no chain tree asked
    assert (items[3].reason, items[3].conflicts) == (follows, ("lib/WS/x.cpp",))
    assert pred.asked == [(2, "t1"), (3, "t2")]
    assert pred.advanced == []               # chain picks never move the bundles' running tree


def test_a_file_only_follower_that_picks_cleanly_on_the_chain_tree_joins_it():
    commits = [commit(1, "lib/WS/x.cpp"), commit(2, "lib/WS/x.cpp")]
    syms = table_symbols({(1, "lib/WS/x.cpp"): {"f"}, (2, "lib/WS/x.cpp"): {"g"}})
    ws = [Area(name="ws", paths=["lib/WS/x.cpp"], divergent=True)]
    # 2 also touches the area, so it is strongly linked either way; without the area it would be a
    # file-only follower — and still joins, because it picks cleanly after chain 1's picks
    pred = TreePredictor({1: Prediction("clean", result_tree="t1"), 2: Prediction("conflict", ("lib/WS/x.cpp",))})
    first = build_plan(commits[:1], predictor=pred, areas=ws, symbols=syms)
    assert ids(first) == [(cid(1), [1])]
    plan = build_plan(commits, predictor=TreePredictor({1: Prediction("clean", result_tree="t1"),
                                                        2: Prediction("conflict", ("lib/WS/x.cpp",))}),
                      areas=[Area(name="ws", paths=["lib/WS/x.cpp"], divergent=True, symbols=[])], symbols=syms)
    assert ids(plan) == [(cid(1), [1, 2])] and plan.units[0].depends_on == ()
    assert plan.units[0].items[1].conflicts == ()


def test_divergent_symbol_patterns_only_in_files_the_fork_diverges_on():
    areas = [Area(name="ws", paths=["lib/WS/**"], symbols=[r"^warpSpec"], divergent=True)]
    commits = [commit(1, "lib/y.cpp"), commit(2, "lib/z.cpp")]
    syms = table_symbols({(1, "lib/y.cpp"): {"warpSpecA"}, (2, "lib/z.cpp"): {"warpSpecB"}})
    asked = []

    def counting(c, p):
        asked.append((int(c.sha[:2]), p))
        return syms(c, p)

    # the fork changed lib/z.cpp only: lib/y.cpp equals upstream's base there, so 1 is bundled
    plan = build_plan(commits, predictor=TablePredictor(), areas=areas, symbols=counting,
                      fork_paths=["lib/z.cpp", "README.md"])
    assert ids(plan) == [(f"bundle-{sha(1)[:12]}", [1]), (cid(2), [2])]
    assert plan.units[1].items[0].reason == "touches divergent area 'ws': lib/z.cpp (warpSpecB)"
    assert asked == [(2, "lib/z.cpp")]
    # without a scope every file counts; a commit that conflicts is not asked at all (it is a chain anyway)
    asked.clear()
    plan = build_plan(commits, predictor=TablePredictor({2: Prediction("conflict", ("lib/z.cpp",))}),
                      areas=areas, symbols=counting)
    assert ids(plan) == [(cid(1), [1]), (cid(2), [2])]
    assert asked == [(1, "lib/y.cpp")]


def test_no_op_candidates_are_plan_items():
    plan = build_plan([commit(1, "a"), commit(2, "b")], predictor=TablePredictor({1: Prediction("empty")}))
    why = "its pick would be empty on the fork tip + 0 earlier bundle picks (already satisfied); record it as NO_OP"
    assert plan.no_ops == (PlanItem(sha(1), why),) and plan.notes == ()
    assert no_op_candidates(plan) == [(sha(1), why)]
    # plans written before Plan.no_ops (NO_OP lines in notes) still read
    assert no_op_candidates(Plan(units=(), notes=(f"NO_OP candidate {sha(3)}: old",))) == [(sha(3), "old")]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    s = build_scenario(tmp_path_factory.mktemp("demo-stack"))
    cfg = load_config(str(s.config_path))
    cfg = cfg.model_copy(update={"cache_dir": str(tmp_path_factory.mktemp("cache"))})
    return s, load_state(cfg)


def test_demo_chain_item_is_predicted_after_the_chain_and_applies_cleanly(demo):
    s, state = demo
    plan = plan_state(state).plan
    ws = next(u for u in plan.units if u.id == f"chain-{s.sha['u12'][:12]}")
    assert ws.shas == (s.sha["u12"], s.sha["u13"]) and ws.depends_on == ()
    assert ws.items[1].conflicts == ()
    assert ws.items[1].reason.endswith("; picks cleanly after the chain's earlier picks")
    res = apply_unit(state.git_dir, ws, base=state.fork_tip, commits=state.upstream, when=1_800_000_000)
    assert res.conflict is None and [u for u, _ in res.picked] == [s.sha["u12"], s.sha["u13"]]


def test_fork_paths_is_the_forks_diff_since_the_merge_base(demo):
    s, state = demo
    paths = fork_paths(state.repo, state.merge_base, state.fork_tip)
    assert "lib/Dialect/TritonGPU/Transforms/WarpSpecialization.cpp" in paths
    assert fork_paths(state.repo, None, state.fork_tip) is None
