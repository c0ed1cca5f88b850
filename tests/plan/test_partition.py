"""The plan on a real upstream/fork pair (tests/plan_repos.py): exact units, cap, stable ids,
in-flight exclusion — predictions by the real in-memory merge, symbols by tree-sitter."""
from __future__ import annotations

import pytest

from bot.git import repo as gitio
from bot.git.apply import apply_unit
from bot.plan.partition import build_plan, no_op_candidates
from bot.plan.predict import MergePredictor
from bot.plan.symbol_index import SymbolIndex
from tests.support.plan_repos import AREAS, T0, build_pair


def plan_for(pair, pending, cap=50, in_flight=(), lookup=None):
    repo = pair.repo
    return build_plan(pending, predictor=MergePredictor(repo, pair.fork_tip), areas=AREAS, bundle_size_cap=cap,
                      in_flight=in_flight, commit_lookup=lookup, symbols=SymbolIndex(repo), base=pair.fork_tip)


def shape(plan, u):
    inv = {v: k for k, v in u.items()}
    return [(unit.id, [inv[s] for s in unit.shas]) for unit in plan.units]


@pytest.fixture
def pair(tmp_path):
    return build_pair(tmp_path)


def test_exact_units_and_reasons(pair):
    u = pair.u
    plan = plan_for(pair, pair.infos())
    assert shape(plan, u) == [
        (f"bundle-{u['u1'][:12]}", ["u1", "u3", "u6", "u7", "u9"]),
        (f"chain-{u['u2'][:12]}", ["u2", "u4"]),
        (f"chain-{u['u5'][:12]}", ["u5"]),
    ]
    bundle, chain, ws = plan.units
    assert [i.reason for i in bundle.items] == [
        f"predicted clean pick onto the fork tip + {n} earlier bundle pick{'' if n == 1 else 's'}" for n in range(5)]
    assert bundle.areas == ("dialect", "python") and bundle.kind == "bundle"
    assert bundle.reason == "bundle 1 of 1: 5 commits predicted to pick cleanly in order (cap 50)"
    assert chain.items[0].reason == "predicted cherry-pick conflicts in lib/Dialect/Ops.cpp"
    assert chain.items[0].conflicts == ("lib/Dialect/Ops.cpp",)
    # u4 is predicted first: it conflicts in Ops.cpp, which the chain changes, so it follows the
    # chain without needing symbols (u3, also Ops.cpp but foldAdd, was clean and symbol-disjoint)
    assert chain.items[1].reason == (f"predicted cherry-pick conflicts in lib/Dialect/Ops.cpp; "
                                     f"follows chain-{u['u2'][:12]}, which changes lib/Dialect/Ops.cpp")
    assert chain.areas == ("dialect",) and chain.kind == "chain"
    assert ws.items[0].reason == "touches divergent area 'warp-spec': lib/WS/WarpSpec.cpp"
    assert ws.areas == ("warp-spec",)
    assert no_op_candidates(plan) == [(u["u8"], "its pick would be empty on the fork tip + 4 earlier bundle picks "
                                                "(already satisfied); record it as NO_OP")]
    assert plan.base == pair.fork_tip


def test_bundle_size_cap_starts_new_bundles(pair):
    u = pair.u
    plan = plan_for(pair, pair.infos(), cap=2)
    assert shape(plan, u) == [
        (f"bundle-{u['u1'][:12]}", ["u1", "u3"]),
        (f"chain-{u['u2'][:12]}", ["u2", "u4"]),
        (f"chain-{u['u5'][:12]}", ["u5"]),
        (f"bundle-{u['u6'][:12]}", ["u6", "u7"]),
        (f"bundle-{u['u9'][:12]}", ["u9"]),
    ]
    # the third bundle is predicted on top of the first two: u9 needs u1, so it lands after bundle 1
    assert plan.units[4].reason == (f"bundle 3 of 3: 1 commit predicted to pick cleanly in order (cap 2); lands after "
                                    f"bundle-{u['u1'][:12]} (python/triton/language.py): predicted on the picks of "
                                    "that bundle, which change the same files")
    assert plan.units[4].depends_on == (f"bundle-{u['u1'][:12]}",) and plan.units[3].depends_on == ()
    assert plan.units[4].items[0].reason == "predicted clean pick onto the fork tip + 4 earlier bundle picks"


def test_replanning_gives_the_same_units(pair):
    assert plan_for(pair, pair.infos()) == plan_for(pair, pair.infos())


def test_in_flight_commits_are_not_planned_again_and_ids_stay(pair, tmp_path):
    u = pair.u
    infos = pair.infos()
    first = plan_for(pair, infos)
    bundle = first.units[0]
    res = apply_unit(pair.fork.path / ".git", bundle, base=pair.fork_tip, commits={c.sha: c for c in infos},
                     when=T0 + 5000)
    assert res.conflict is None and len(res.picked) == 5
    flights = gitio.in_flight_branches(pair.repo, pair.fork_tip)
    assert [(f.name, f.unit_id, f.kind) for f in flights] == [(f"forksync/{bundle.id}", bundle.id, "bundle")]
    assert set(flights[0].upstream_shas) == set(bundle.shas)
    carried = set(flights[0].upstream_shas)
    pending = [c for c in infos if c.sha not in carried]
    again = plan_for(pair, pending, in_flight=flights, lookup={c.sha: c for c in infos})
    assert shape(again, u) == [(f"chain-{u['u2'][:12]}", ["u2", "u4"]), (f"chain-{u['u5'][:12]}", ["u5"])]
    ids = [x.id for x in again.units]
    assert len(ids) == len(set(ids)) and bundle.id not in ids
    assert not carried & {s for x in again.units for s in x.shas}
    # u2 touches Ops.cpp like the in-flight bundle's u3, but another function: not made dependent
    assert again.units[0].items[0].reason == "predicted cherry-pick conflicts in lib/Dialect/Ops.cpp"
    # planning an in-flight commit again is refused
    with pytest.raises(ValueError, match="both PENDING and on an open forksync branch"):
        plan_for(pair, infos, in_flight=flights, lookup={c.sha: c for c in infos})


def test_same_function_clean_pick_joins_the_chain_other_function_does_not(tmp_path):
    from bot.demo.repobuilder import RepoBuilder

    body = lambda f2="", f10="", g2="": (  # noqa: E731
        "int f(int x) {\n" + f"  int a = x{f2};\n" + "".join(f"  a += {i};\n" for i in range(3, 10))
        + f"  return a{f10};\n" + "}\n\n" + "int g(int y) {\n" + f"  return y{g2};\n" + "}\n")
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("init", {"k.cpp": body()}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("fork tweak of f", {"k.cpp": body(f10=" * 2")}, when=T0 + 10)
    a = up.commit("f: return more (#1)", {"k.cpp": body(f10=" + 1")}, when=T0 + 20)
    b = up.commit("f: start differently (#2)", {"k.cpp": body(f10=" + 1", f2=" - 1")}, when=T0 + 30)
    c = up.commit("g: change (#3)", {"k.cpp": body(f10=" + 1", f2=" - 1", g2=" + 3")}, when=T0 + 40)
    fork.add_remote("upstream", up.path)
    import pygit2

    repo = pygit2.Repository(str(fork.path))
    infos = gitio.commit_infos(repo, [a, b, c])
    pred = MergePredictor(repo, fork.head())
    # b alone would pick cleanly (it edits another line of f) — the symbol rule makes it follow a
    assert pred.predict(infos[b]).outcome == "clean"
    plan = build_plan([infos[s] for s in (a, b, c)], predictor=MergePredictor(repo, fork.head()),
                      symbols=SymbolIndex(repo), base=fork.head())
    assert [(x.id, x.shas) for x in plan.units] == [(f"chain-{a[:12]}", (a, b)), (f"bundle-{c[:12]}", (c,))]
    assert plan.units[0].items[1].reason == f"touches k.cpp (f) like {a[:12]} of chain-{a[:12]}"
