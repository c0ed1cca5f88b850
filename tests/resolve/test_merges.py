"""The fork's merges of upstream as the benchmark's second source, on a small real history of a
fork that syncs by merging (tests/support/merge_history.py)."""
from __future__ import annotations

import subprocess
from datetime import datetime, timezone

import pygit2
import pytest

from bot.config.forksync import parse_config
from bot.resolve.bench import score, to_json
from bot.resolve.replay import find_resolved_merges, find_resolved_picks, memory_from_history, replay
from tests.support.merge_history import build_merge_history
from tests.support.resolve_history import History


@pytest.fixture
def history(tmp_path):
    return build_merge_history(tmp_path / "repo")


def _replayed(h, cfg=None):
    cfg = cfg or parse_config({})
    repo = pygit2.Repository(str(h.path))
    merges, skipped = find_resolved_merges(repo, h.git("rev-parse", "main"), h.git("rev-parse", "upstream"))
    return merges, skipped, replay(repo, merges, cfg, h.git("rev-parse", "upstream"))


def test_finds_every_merge_of_upstream_with_its_merge_base(history):
    h = history
    merges, skipped, _ = _replayed(h)
    # m1 is on a pull request's branch (not main's first-parent line); land1 merges that branch (not
    # upstream) and upstream's own merge of its side branch is not the fork's
    assert [(m.fork_commit, m.onto, m.upstream, m.base) for m in merges] == [
        (h.fork["m1"], h.git("rev-parse", "pr1~1"), h.up["u1"], h.up["u0"]),
        (h.fork["m2"], h.fork["f2"], h.up["u2"], h.up["u1"]),
        (h.fork["m3"], h.fork["m2"], h.up["u3"], h.up["u2"]),
        (h.fork["m3b"], h.fork["m3"], h.up["s1"], h.up["u2"]),
        (h.fork["m5"], h.fork["f3"], h.up["u4"], h.up["umerge"])]
    assert merges[0].subject == f"Merge commit '{h.up['u1']}'" and merges[0].source == "merge"
    assert [s.what for s in skipped] == [h.fork["m4"]]
    why = skipped[0].why
    assert why.startswith("a criss-cross merge: 2 merge bases (") and why.endswith("); not replayed")
    assert h.up["u3"][:10] in why and h.up["s1"][:10] in why
    # a pick-based finder sees none of them (no pick markers)
    repo = pygit2.Repository(str(h.path))
    assert find_resolved_picks(repo, h.git("rev-parse", "main"), h.git("rev-parse", "upstream"), parse_config({})) == ([], [])
    # --since: only merges committed on or after it
    later, _ = find_resolved_merges(repo, "main", "upstream", since=repo[h.fork["m3b"]].commit_time)
    assert [m.fork_commit for m in later] == [h.fork["m3b"], h.fork["m5"]]


def test_replay_merges_the_parents_over_the_base_with_the_facts_of_a_pick(history):
    h = history
    _, _, reps = _replayed(h)
    files = {(r.pick.fork_commit, f.conflict.path): f for r in reps for f in r.files}
    name = {v: k for k, v in h.fork.items()}
    assert sorted((name[k[0]], k[1]) for k in files) == [
        ("m1", "ci.yml"), ("m1", "core.c"), ("m2", "ci.yml"), ("m2", "notes.md"), ("m5", "ahead.txt"), ("m5", "notes.md")]
    core = files[(h.fork["m1"], "core.c")]
    # ancestor: the merge base; ours: the first parent's; theirs: the upstream commit's; landed: the merge commit's
    assert (core.conflict.base, core.conflict.ours, core.conflict.theirs, core.landed) == (
        "int a;\nint b = 0;\nint c;\n", "int a;\nint b = 1; // xpu\nint c;\n", "int a;\nint b = 2;\nint c;\n",
        "int a;\nint b = 2; // xpu\nint c;\n")
    assert core.conflict.fork_is_upstream_version is False and core.conflict.upstream_lines == frozenset({"int a;", "int b = 0;", "int c;"})
    ci = files[(h.fork["m2"], "ci.yml")]
    assert (ci.conflict.ours, ci.conflict.theirs, ci.landed, ci.kind) == (None, "on: push\njobs:\n  build: linux-24\n", None, "CI yaml")
    # the fork's ahead.txt is upstream's u5 file, after the merged u4, committed before the merge
    ahead = files[(h.fork["m5"], "ahead.txt")].conflict
    assert (ahead.fork_is_later_upstream_version, ahead.latest_upstream, ahead.later_upstream_lines) == (True, "v3\n", frozenset({"v3"}))
    notes = files[(h.fork["m5"], "notes.md")]
    assert notes.landed_markers is True and notes.landed.startswith("one\n<<<<<<< HEAD\n")
    assert sum(f.landed_markers for f in files.values()) == 1
    assert [r.files for r in reps if r.pick.fork_commit in (h.fork["m3"], h.fork["m3b"])] == [[], []]     # clean again


def test_score_merges_as_picks_rules_chain_split_and_flagged_markers(history):
    h = history
    _, skipped, reps = _replayed(h)
    res = score(reps, ["fork-deleted", "fork-ahead"])
    rows = {(r["fork_commit"], r["path"]): r for r in res.outcomes}

    def out(merge, path):
        return rows[(h.fork[merge], path)]

    assert out("m1", "ci.yml")["outcomes"]["fork-deleted"] == "declined"      # nothing learned yet
    assert out("m2", "ci.yml")["chain_rule"] == "fork-deleted" and out("m2", "ci.yml")["outcomes"]["chain"] == "exact"
    assert out("m5", "ahead.txt")["chain_rule"] == "fork-ahead" and out("m5", "ahead.txt")["outcomes"]["chain"] == "exact"
    assert out("m1", "core.c")["outcomes"] == {**out("m1", "core.c")["outcomes"], "chain": "declined", "ours": "wrong",
                                               "theirs": "wrong", "ours-hunks": "wrong", "theirs-hunks": "wrong"}
    assert (out("m5", "notes.md")["landed_markers"], out("m5", "notes.md")["source"], out("m5", "notes.md")["part"]) == (
        True, "merge", "held-out")
    assert res.score("all", "chain").as_json() == {"files": 6, "exact": 2, "ws": 0, "wrong": 0, "declined": 4,
                                                   "precision": 1.0, "coverage": 0.3333}
    assert res.score("dev", "chain").as_json()["exact"] == 1 and res.score("held-out", "chain").as_json()["exact"] == 1
    assert [(s, res.score("all", s).exact, res.score("all", s).declined) for s in ("fork-deleted", "fork-ahead", "ours", "theirs")] == [
        ("fork-deleted", 1, 5), ("fork-ahead", 1, 5), ("ours", 3, 0), ("theirs", 0, 0)]
    # the held-out third: the newest ceil(5/3) = 2 merges by committer time
    assert res.picks == {"all": 5, "dev": 3, "held-out": 2} and res.conflicting_picks == {"all": 3, "dev": 2, "held-out": 1}
    doc = to_json(res, chain=["fork-deleted", "fork-ahead"], skipped=skipped)
    assert doc["sources"] == {"merge": {
        "all": {"replayed": 5, "conflicting": 3, "files": 6, "files_with_markers": 1, "with_markers": 1},
        "dev": {"replayed": 3, "conflicting": 2, "files": 4, "files_with_markers": 0, "with_markers": 0},
        "held-out": {"replayed": 2, "conflicting": 1, "files": 2, "files_with_markers": 1, "with_markers": 1}}}
    t = pygit2.Repository(str(h.path))[h.fork["m3b"]].commit_time
    assert doc["split"]["boundary_time"] == t
    assert doc["split"]["boundary"] == datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert [s["what"] for s in doc["skipped"]] == [h.fork["m4"]]


def test_missing_blobs_skip_only_the_files_a_merge_needs(history):
    h = history
    h.drop_blob("one\ntwo (upstream)\nthree\n")        # u2's notes.md: m2's upstream side, m5's merge base
    _, _, reps = _replayed(h)
    name = {v: k for k, v in h.fork.items()}
    assert [(name[s.what.split(":")[0]], s.what.split(":")[1], s.why) for r in reps for s in r.skipped] == [
        ("m2", "notes.md", "a blob the merge needs is missing; the file was left out"),
        ("m5", "notes.md", "a blob the merge needs is missing; the file was left out")]
    assert sorted((name[r.pick.fork_commit], f.conflict.path) for r in reps for f in r.files) == [
        ("m1", "ci.yml"), ("m1", "core.c"), ("m2", "ci.yml"), ("m5", "ahead.txt")]
    # m3 and m3b do not need it (upstream leaves notes.md alone there): merged without it
    assert [(name[r.pick.fork_commit], r.set_aside) for r in reps if r.set_aside] == [
        ("m2", ("notes.md",)), ("m3", ("notes.md",)), ("m3b", ("notes.md",)), ("m5", ("notes.md",))]


def test_memory_learns_from_merges_with_resolve_merges(history):
    h = history
    assert memory_from_history(str(h.path), "main", "upstream", parse_config({})).kept_deleted == frozenset()
    learned = memory_from_history(str(h.path), "main", "upstream", parse_config({"resolve": {"merges": True}}))
    assert learned.kept_deleted == frozenset({"ci.yml"})
    # m5's notes.md was committed with conflict markers: it teaches no resolution (rerere would replay the markers)
    assert sorted(learned.resolutions.values()) == ["int b = 2; // xpu\n", "two (xpu, upstream)\n", "v3\n"]


def test_a_missing_commit_skips_the_merges_whose_history_it_cuts(history):
    h = history
    sha = h.up["s1"]                                      # upstream's side branch: m3b merges it, m4 and m5 reach it
    (h.path / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    merges, skipped = find_resolved_merges(pygit2.Repository(str(h.path)), h.git("rev-parse", "main"), h.up["u5"])
    assert [m.fork_commit for m in merges] == [h.fork["m1"], h.fork["m2"], h.fork["m3"]]
    name = {v: k for k, v in h.fork.items()}
    assert sorted((name[s.what], s.why) for s in skipped) == [
        ("m3b", "a merge whose parent commit is missing from the repository: whether it merges upstream is unknown"),
        ("m4", "a parent's history is incomplete in the repository (a missing commit): the merge base is unknown"),
        ("m5", "a parent's history is incomplete in the repository (a missing commit): the merge base is unknown")]


def test_a_file_one_side_renamed_is_one_conflict_at_its_new_path(tmp_path):
    # libgit2 records each stage of such a conflict at its own side's path and pygit2 groups
    # stages by path: the old path looked like a change against a deletion, the new one like a file
    # the fork had deleted (ours None) — git reports one conflict, at the new path
    lines = [f"int v{i} = {i};\n" for i in range(20)]

    def text(**changed):
        return "".join(changed.get(f"l{i}", line) for i, line in enumerate(lines))
    h = History(tmp_path / "repo")
    h.path.mkdir(parents=True)
    h.git("init", "-q", "-b", "upstream")
    h.up["u0"] = h.commit({"lib/Combine.cpp": text(), "tool.py": text()}, "Initial (#1)")
    h.git("branch", "main")
    h.git("mv", "lib/Combine.cpp", "lib/Remove.cpp")
    h.up["u1"] = h.commit({"lib/Remove.cpp": text(l2="int v2 = 22;\n"), "tool.py": text(l5="int v5 = 55;\n")},
                          "Rename Combine.cpp (#2)")
    h.git("checkout", "-q", "main")
    (h.path / "tools").mkdir()
    h.git("mv", "tool.py", "tools/tool.py")
    h.fork["f1"] = h.commit({"lib/Combine.cpp": text(l2="int v2 = -2; // fork\n"), "tools/tool.py": text(l5="int v5 = -5;\n")},
                            "Fork: own changes, tool.py moved")
    landed_cpp, landed_py = text(l2="int v2 = 22; // fork\n"), text(l5="int v5 = 55; // both\n")
    h.fork["m1"] = h.merge(h.up["u1"], {"lib/Remove.cpp": landed_cpp, "tools/tool.py": landed_py})
    _, _, reps = _replayed(h)
    files = [f for r in reps for f in r.files]
    assert [(f.conflict.path, f.conflict.base, f.conflict.ours, f.conflict.theirs, f.landed) for f in files] == [
        ("lib/Remove.cpp", text(), text(l2="int v2 = -2; // fork\n"), text(l2="int v2 = 22;\n"), landed_cpp),
        ("tools/tool.py", text(), text(l5="int v5 = -5;\n"), text(l5="int v5 = 55;\n"), landed_py)]
    assert all(f.conflict.merged.count("<<<<<<<") == 1 for f in files)
    # the same as git, which merges the renamed file's changes at the new path (exit 1: conflicts)
    git = subprocess.run(["git", "merge-tree", "--write-tree", "--name-only", "--no-messages", h.fork["f1"], h.up["u1"]],
                         cwd=h.path, capture_output=True, text=True)
    assert (git.returncode, git.stdout.split("\n")[1:]) == (1, ["lib/Remove.cpp", "tools/tool.py", ""])
