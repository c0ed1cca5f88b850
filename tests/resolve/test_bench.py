"""Replay and scoring on a small real history with one resolved pick per kind of rule
(tests/support/resolve_history.py), and the live entry point ``resolve_conflicts``."""
from __future__ import annotations

import pygit2
import pytest

from bot.config.forksync import RESOLVE_RULES, parse_config
from bot.resolve.bench import outcome, score, split, to_json
from bot.resolve.replay import file_kind, find_resolved_picks, memory_from_history, replay, resolve_conflicts
from bot.resolve.rules import Decision, Declined, Memory
from tests.support.resolve_history import build_history


@pytest.fixture
def history(tmp_path):
    return build_history(tmp_path / "repo")


def _replayed(h, cfg):
    repo = pygit2.Repository(str(h.path))
    fork_tip, up_tip = h.git("rev-parse", "main"), h.git("rev-parse", "upstream")
    picks, skipped = find_resolved_picks(repo, fork_tip, up_tip, cfg)
    return picks, skipped, replay(repo, picks, cfg, up_tip)


def test_finds_the_resolved_picks_and_says_why_others_are_skipped(history):
    h = history
    picks, skipped, _ = _replayed(h, parse_config({}))
    assert [(p.fork_commit, p.upstream) for p in picks] == [
        (h.fork["p_ahead"], h.up["u8"]), (h.fork["p_lag"], h.up["u2"]), (h.fork["p_ci1"], h.up["u3"]), (h.fork["p_ci2"], h.up["u4"]),
        (h.fork["p_union"], h.up["u5"]), (h.fork["p_rerere"], h.up["u6"]), (h.fork["p_rerere2"], h.up["u6"])]
    assert all(p.marker == r"subject \[RESOLVED\]" for p in picks)
    assert [(s.what, s.why) for s in skipped] == [(h.fork["bundle"], "names 2 upstream commits (a bundle)"),
                                                  (h.fork["revert"], "a revert or back-out")]
    # markers are configurable: with none that match, nothing is found
    none = parse_config({"resolve": {"picks": {"subject_patterns": [r"\[NOPE\]"], "body_patterns": [], "trailer": ""}}})
    assert _replayed(h, none)[0] == []


def test_replay_gives_the_conflicts_their_facts_and_what_the_fork_landed(history):
    h = history
    cfg = parse_config({"areas": [{"name": "ci", "paths": ["ci.yml"]}]})
    _, _, reps = _replayed(h, cfg)
    files = {(r.pick.fork_commit, f.conflict.path): f for r in reps for f in r.files}
    assert sorted((k[1], r) for k in files for r in h.fork if h.fork[r] == k[0]) == [
        ("ahead.txt", "p_ahead"), ("ci.yml", "p_ci1"), ("ci.yml", "p_ci2"), ("core.c", "p_union"), ("lag.txt", "p_lag"), ("ops.c", "p_rerere"),
        ("ops.c", "p_rerere2"), ("reg.h", "p_union")]
    lag = files[(h.fork["p_lag"], "lag.txt")]
    assert (lag.conflict.base, lag.conflict.ours, lag.conflict.theirs) == (
        "alpha\nbeta one\ngamma\n", "alpha\nbeta\ngamma\n", "alpha\nbeta two\ngamma\n")
    assert lag.conflict.fork_is_upstream_version is True and lag.landed == "alpha\nbeta two\ngamma\n"
    assert lag.conflict.merged == ("alpha\n<<<<<<< fork\nbeta\n||||||| base\nbeta one\n=======\nbeta two\n>>>>>>> upstream\n"
                                   "gamma\n")
    ci = files[(h.fork["p_ci1"], "ci.yml")]
    assert ci.conflict.ours is None and ci.landed is None and ci.conflict.areas == ("ci",) and ci.kind == "CI yaml"
    assert files[(h.fork["p_union"], "core.c")].conflict.fork_is_upstream_version is False
    assert "beta one" in files[(h.fork["p_lag"], "lag.txt")].conflict.upstream_lines
    ahead = files[(h.fork["p_ahead"], "ahead.txt")].conflict
    assert (ahead.fork_is_later_upstream_version, ahead.fork_is_upstream_version) == (True, False)
    assert lag.conflict.fork_is_later_upstream_version is False
    # upstream's versions after the picked commit, known when the pick was made: their lines, the newest text
    assert (ahead.latest_upstream, ahead.later_upstream_lines) == ("one\ntwo-b\n", frozenset({"one", "two-b"}))
    assert (lag.conflict.latest_upstream, lag.conflict.later_upstream_lines) == (None, frozenset())
    reg = files[(h.fork["p_union"], "reg.h")].conflict
    assert reg.latest_upstream == "#pragma once\nvoid a();\nvoid b_upstream();\nvoid c();\n"


def test_score_per_rule_chain_and_baseline_with_the_held_out_split(history):
    h = history
    _, _, reps = _replayed(h, parse_config({}))
    dev, held, boundary = split(reps)
    assert [r.pick.fork_commit for r in held] == [h.fork["p_union"], h.fork["p_rerere"], h.fork["p_rerere2"]]
    assert boundary == held[0].pick.time
    res = score(reps, ["rerere", "fork-deleted", "fork-ahead", "upstream-file", "additive-union"])
    rows = {(r["fork_commit"], r["path"]): r for r in res.outcomes}

    def out(pick, path):
        return rows[(h.fork[pick], path)]

    assert out("p_lag", "lag.txt")["chain_rule"] == "upstream-file"
    assert out("p_ahead", "ahead.txt")["chain_rule"] == "fork-ahead"
    assert out("p_ci1", "ci.yml")["outcomes"]["fork-deleted"] == "declined"     # nothing learned yet
    assert out("p_ci2", "ci.yml")["chain_rule"] == "fork-deleted"
    assert out("p_union", "reg.h")["chain_rule"] == "additive-union"
    assert out("p_union", "core.c")["outcomes"]["chain"] == "declined"
    assert out("p_union", "core.c")["outcomes"]["ours"] == "wrong"
    assert out("p_rerere", "ops.c")["outcomes"]["rerere"] == "declined"
    assert out("p_rerere2", "ops.c")["chain_rule"] == "rerere" and out("p_rerere2", "ops.c")["outcomes"]["chain"] == "exact"
    chain = res.score("all", "chain")
    assert (chain.files, chain.exact, chain.ws, chain.wrong, chain.declined) == (8, 5, 0, 0, 3)
    assert res.score("held-out", "chain").as_json() == {"files": 4, "exact": 2, "ws": 0, "wrong": 0, "declined": 2,
                                                        "precision": 1.0, "coverage": 0.5}
    assert res.score("all", "ours", "CI yaml").exact == 2
    assert res.picks == {"all": 7, "dev": 4, "held-out": 3} and res.conflicting_picks == {"all": 7, "dev": 4, "held-out": 3}
    doc = to_json(res, chain=["rerere"], skipped=[])
    assert doc["schema"] == "forksync.resolve-bench/1" and doc["scores"]["dev"]["chain"]["*"]["exact"] == 3
    assert set(doc["scores"]["all"]) == {"chain", *RESOLVE_RULES, "ours", "theirs", "ours-hunks", "theirs-hunks", "union"}


def test_missing_blobs_skip_only_the_files_that_need_them(history):
    h = history
    cfg = parse_config({})
    before = score(_replayed(h, cfg)[2], ["fork-deleted", "upstream-file"]).outcomes
    h.drop_blob("# the fork's own notes\n")                # fork-only: the merge never needs it
    _, _, reps = _replayed(h, cfg)
    assert score(reps, ["fork-deleted", "upstream-file"]).outcomes == before
    assert all(r.set_aside == ("doc/fork-only.md",) and r.skipped == [] for r in reps)
    h.drop_blob("alpha\nbeta two\ngamma\n")               # upstream's lag.txt of u2, which p_lag needs
    _, _, reps = _replayed(h, cfg)
    assert [(s.what, s.why) for r in reps for s in r.skipped] == [
        (f"{h.fork['p_lag']}:lag.txt", "a blob the pick needs is missing; the file was left out")]
    assert sorted(f.conflict.path for r in reps for f in r.files) == [
        "ahead.txt", "ci.yml", "ci.yml", "core.c", "ops.c", "ops.c", "reg.h"]


def test_outcome_and_file_kinds():
    assert outcome("a\n", "a\n") == "exact" and outcome(None, None) == "exact"
    assert outcome("a  b\n\n", "a b\n") == "ws" and outcome("a\n", None) == "wrong"
    assert outcome(Declined(("x",)), "a") == "declined"
    assert [file_kind(p) for p in ("lib/a.cpp", "x.h", "t.py", "t.mlir", "Ops.td", "CMakeLists.txt",
                                   ".github/workflows/a.yml", "README.md")] == [
        "C++", "C++", "Python", "MLIR", "TableGen", "CMake/txt", "CI yaml", "other"]


def test_resolve_conflicts_on_a_live_pick(history):
    h = history
    cfg = parse_config({"resolve": {"rules": ["rerere", "fork-deleted", "upstream-file"]}})
    tip = h.git("rev-parse", "main")
    got = resolve_conflicts(str(h.path), h.fork["own"], h.up["u2"], cfg)
    assert got == [("lag.txt", Decision("alpha\nbeta two\ngamma\n", "took upstream's file", got[0][1].reason, "upstream-file"))]
    assert "never diverged" in got[0][1].reason
    ci = resolve_conflicts(str(h.path), tip, h.up["u4"], cfg)
    assert ci == [("ci.yml", Declined(("rerere", "fork-deleted", "upstream-file")))]
    learned = Memory(kept_deleted=frozenset({"ci.yml"}))
    assert resolve_conflicts(str(h.path), tip, h.up["u4"], cfg, memory=learned)[0][1].rule == "fork-deleted"
    # the same memory, learned from the fork's history
    history = memory_from_history(str(h.path), "main", "upstream", cfg)
    assert history.kept_deleted == frozenset({"ci.yml"})
    assert sorted(history.resolutions.values()) == ["  return fork() + 2;\n", "  return kf + k6;\n", "beta two\n", "two-b\n",
                                                    "void tlx();\nvoid b_upstream();\n"]
    assert resolve_conflicts(str(h.path), tip, h.up["u4"], cfg, memory=history)[0][1].rule == "fork-deleted"
    assert resolve_conflicts(str(h.path), h.fork["own"], h.up["u1"], cfg) == []   # the fork never changed lag.txt: clean
    # fork-ahead needs upstream's versions after the picked commit: upstream's tip
    assert resolve_conflicts(str(h.path), tip, h.up["u8"], cfg) == [("ahead.txt", Declined(("rerere", "fork-deleted", "upstream-file")))]
    ahead_cfg = parse_config({"resolve": {"rules": ["fork-ahead"]}})
    got = resolve_conflicts(str(h.path), tip, h.up["u8"], ahead_cfg, upstream_tip="upstream")
    assert got == [("ahead.txt", Decision("one\ntwo-b\n", "kept the fork's file", got[0][1].reason, "fork-ahead"))]
    with pytest.raises(ValueError, match="unknown revision"):
        resolve_conflicts(str(h.path), tip, "0" * 40, cfg)
