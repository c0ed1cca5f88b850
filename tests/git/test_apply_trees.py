"""In-memory picks against real ``git cherry-pick``: the same trees for clean picks, and conflicts
as git leaves them (same files, same kinds, same content once the marker labels are set aside).

Every pick is replayed with ``git -c merge.conflictStyle=diff3 cherry-pick --no-commit [-m 1]`` in a
worktree of the same start: on the demo scenario, on a scenario with each kind of conflict, and on
~30 real Triton commits when the real fork's snapshot is present (skipped otherwise)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pygit2
import pytest

from bot.demo.repobuilder import RepoBuilder, run_git
from bot.demo.scenario import build_scenario
from bot.git import apply as apply_mod
from bot.git import repo as gitio
from bot.git.apply import apply_unit
from bot.model import PlanItem, Unit

T0 = 1_767_225_600
REAL = Path(os.environ.get("FORKSYNC_REAL_FORK", "/work/.mirror/facebookexperimental+triton/repo"))
_MARKER = re.compile(rb"^(<{7}|\|{7}|>{7})( .*)?$", re.MULTILINE)
_GIT_KIND = [
    (re.compile(r"^CONFLICT \(content\): Merge conflict in (.+)$"), "content"),
    (re.compile(r"^CONFLICT \(add/add\): Merge conflict in (.+)$"), "add/add"),
    (re.compile(r"^CONFLICT \(modify/delete\): (.+) deleted in HEAD and modified in .*$"), "delete/modify"),
    (re.compile(r"^CONFLICT \(modify/delete\): (.+) deleted in .* and modified in HEAD\..*$"), "modify/delete"),
    (re.compile(r"^CONFLICT \(rename/delete\): (?:.+) renamed to (.+) in .*$"), "rename"),
]
_BINARY = re.compile(r"^warning: Cannot merge binary files: (.+?) \(")


def _env():
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
    for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(k, None)
    return env


def git_pick(wt: Path, repo: pygit2.Repository, sha: str) -> dict:
    """``git cherry-pick --no-commit`` of ``sha`` at the worktree's HEAD, then back to HEAD.
    Clean: ``{"tree": id}``; conflict: ``{"kinds": {path: kind}, "tree": id of the work tree as git
    left it (markers with their labels removed)}``; git failing otherwise: ``{"error": text}``."""
    argv = ["git", "-c", "merge.conflictStyle=diff3", "cherry-pick", "--no-commit", "--allow-empty"]
    if len(repo[sha].parent_ids) > 1:
        argv += ["-m", "1"]
    p = subprocess.run([*argv, sha], cwd=wt, env=_env(), capture_output=True, text=True)
    try:
        if p.returncode == 0:
            return {"tree": run_git(wt, "write-tree").strip()}
        out = (p.stdout + p.stderr).splitlines()
        kinds = {}
        for line in out:
            for rx, kind in _GIT_KIND:
                m = rx.match(line)
                if m:
                    kinds[m.group(1)] = kind
        for line in out:
            m = _BINARY.match(line)
            if m:
                kinds[m.group(1)] = "binary"
        if not kinds:
            return {"error": p.stderr.strip()}
        for path in kinds:
            f = wt / path
            if f.is_file():
                f.write_bytes(_MARKER.sub(rb"\1", f.read_bytes()))
        run_git(wt, "add", "-A")
        return {"kinds": kinds, "tree": run_git(wt, "write-tree").strip()}
    finally:
        run_git(wt, "reset", "-q", "--hard", "HEAD")
        run_git(wt, "clean", "-qfd")


def unlabelled_tree(repo: pygit2.Repository, tree_id: str, paths) -> str:
    """``tree_id`` with the marker lines of ``paths`` stripped of their labels."""
    idx = pygit2.Index()
    idx.read_tree(repo[tree_id])
    for path in paths:
        if path in idx:
            e = idx[path]
            if e.mode in (0o100644, 0o100755):
                blob = repo.create_blob(_MARKER.sub(rb"\1", repo[e.id].data))
                idx.add(pygit2.IndexEntry(path, blob, e.mode))
    pygit2.settings.enable_strict_object_creation(False)
    try:
        return str(idx.write_tree(repo))
    finally:
        pygit2.settings.enable_strict_object_creation(True)


def one(sha: str) -> Unit:
    return Unit(id=f"chain-{sha[:12]}", kind="chain", items=(PlanItem(sha, "test"),))


def compare_each(git_dir: Path, wt: Path, start: str, shas: list[str], commits: dict) -> dict:
    """Pick each of ``shas`` alone onto ``start`` both ways and assert they agree. Returns counts."""
    repo = pygit2.Repository(str(git_dir))
    counts = {"clean": 0, "conflict": 0, "git error": 0}
    for sha in shas:
        want = git_pick(wt, repo, sha)
        if "error" in want:
            counts["git error"] += 1
            continue
        res = apply_unit(git_dir, one(sha), base=start, commits=commits, when=T0)
        repo = pygit2.Repository(str(git_dir))
        if "kinds" not in want:
            assert res.conflict is None and res.error == "", (sha, res.conflicts, res.error)
            assert str(repo[res.tip].tree_id) == want["tree"], f"tree of {sha} differs from git cherry-pick's"
            counts["clean"] += 1
        else:
            assert res.conflict == sha and res.conflict_commit == res.tip, (sha, res)
            assert {f.path: f.kind for f in res.conflicts} == want["kinds"], sha
            got = unlabelled_tree(repo, str(repo[res.tip].tree_id), want["kinds"])
            assert got == want["tree"], f"conflict commit of {sha} differs from what git leaves"
            counts["conflict"] += 1
        run_git(git_dir, "update-ref", "-d", f"refs/heads/{res.branch}")
    return counts


def fork_with_upstream(root: Path, fork: Path, upstream: Path) -> Path:
    """A clone of ``fork`` that also holds ``upstream``'s objects (refs/remotes/upstream/*)."""
    work = root / "work"
    run_git(root, "clone", "-q", "--no-local", str(fork), str(work))
    run_git(work, "fetch", "-q", str(upstream), "+refs/heads/*:refs/remotes/upstream/*")
    return work


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo-trees")
    s = build_scenario(root / "scn")
    work = fork_with_upstream(root, s.fork.path, s.upstream.path)
    return s, work


def test_demo_scenario_picks_equal_git_cherry_pick(demo, tmp_path):
    s, work = demo
    tip = run_git(work, "rev-parse", "HEAD").strip()
    repo = pygit2.Repository(str(work))
    shas = gitio.rev_list(repo, run_git(work, "rev-parse", "refs/remotes/upstream/main").strip(), [tip])
    commits = gitio.commit_infos(repo, shas)
    wt = tmp_path / "wt"
    run_git(work, "worktree", "add", "-q", "--detach", str(wt), tip)
    counts = compare_each(work, wt, tip, shas, commits)
    assert counts["clean"] >= 10 and counts["conflict"] >= 1 and counts["git error"] == 0, counts


@pytest.fixture
def kinds(tmp_path):
    """Upstream commits with each kind of conflict (and clean renames and a merge) over a fork."""
    lines = "".join(f"line {i}: some text that makes this line unique enough {i * 7}\n" for i in range(60))
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("base", {"a.txt": lines, "r.txt": lines.replace("line", "row"), "d.txt": lines.upper(),
                       "m.txt": lines.replace("text", "words"), "keep.txt": lines.replace("some", "any"),
                       "f.txt": lines.replace("unique", "distinct")}, when=T0)
    (up.path / "bin.dat").write_bytes(b"\0binary\0" * 50)
    up.git("add", "bin.dat")
    up.commit("base binary", when=T0 + 1)
    fork = up.clone(tmp_path / "fork")
    fork.commit("fork edits", {"a.txt": lines.replace("line 10:", "line 10 fork:"),
                               "r.txt": lines.replace("line", "row").replace("row 10:", "row 10 fork:"),
                               "d.txt": None, "m.txt": lines.replace("text", "words").replace("line 5:", "line 5 fork:"),
                               "n.txt": "fork's new file\nwith two lines\n"}, when=T0 + 10)
    (fork.path / "bin.dat").write_bytes(b"\0fork\0" * 50)
    fork.git("add", "bin.dat")
    fork.rename("f.txt", "sub/f2.txt")
    fork.commit("fork binary and a rename", when=T0 + 11)
    c = {}
    c["clean"] = up.commit("clean edit", {"a.txt": lines.replace("line 40:", "line 40 up:")}, when=T0 + 20)
    c["content"] = up.commit("content (#7)", {"a.txt": lines.replace("line 40:", "line 40 up:")
                                              .replace("line 10:", "line 10 up:")}, when=T0 + 21)
    up.rename("r.txt", "r2.txt")
    c["rename-content"] = up.commit("rename with an edit", {"r2.txt": lines.replace("line", "row")
                                                            .replace("row 10:", "row 10 up:")}, when=T0 + 22)
    up.rename("keep.txt", "kept.txt")
    c["clean-rename"] = up.commit("clean rename", {"kept.txt": lines.replace("some", "any").replace("line 3:", "l3:")},
                                  when=T0 + 23)
    c["delete/modify"] = up.commit("edit d", {"d.txt": lines.upper().replace("LINE 20:", "LINE 20 UP:")}, when=T0 + 24)
    c["modify/delete"] = up.commit("drop m", {"m.txt": None}, when=T0 + 25)
    c["add/add"] = up.commit("add n", {"n.txt": "upstream's new file\nwith two lines\n"}, when=T0 + 26)
    (up.path / "bin.dat").write_bytes(b"\0upstream\0" * 50)
    up.git("add", "bin.dat")
    c["binary"] = up.commit("binary edit", when=T0 + 27)
    c["empty"] = up.commit("nothing", when=T0 + 28, allow_empty=True)
    c["fork-rename"] = up.commit("edit f", {"f.txt": lines.replace("unique", "distinct").replace("line 50:", "l50:")},
                                 when=T0 + 29)
    up.checkout("main", "side")
    up.commit("side work", {"s.txt": "side\n"}, when=T0 + 30)
    up.checkout("main")
    c["merge"] = up.merge("side", when=T0 + 31, message="Merge side")
    work = fork_with_upstream(tmp_path, fork.path, up.path)
    return work, c


@pytest.mark.parametrize("by", ["git merge-tree", "libgit2 and git merge-file"])
def test_each_kind_of_conflict_as_git_leaves_it(kinds, tmp_path, monkeypatch, by):
    if by != "git merge-tree":     # the fallback where git cannot merge (objects it needs are missing)
        monkeypatch.setattr(apply_mod, "git_merge_tree", lambda *a, **k: None)
    work, c = kinds
    tip = run_git(work, "rev-parse", "HEAD").strip()
    repo = pygit2.Repository(str(work))
    commits = gitio.commit_infos(repo, list(c.values()))
    wt = tmp_path / "wt"
    run_git(work, "worktree", "add", "-q", "--detach", str(wt), tip)
    kinds_seen = {}
    for name, sha in c.items():
        want = git_pick(wt, repo, sha)
        kinds_seen[name] = sorted(set(want.get("kinds", {}).values())) or ["clean"]
    assert kinds_seen == {"clean": ["clean"], "content": ["content"], "rename-content": ["content"],
                          "clean-rename": ["clean"], "delete/modify": ["delete/modify"],
                          "modify/delete": ["modify/delete"], "add/add": ["add/add"], "binary": ["binary"],
                          "empty": ["clean"], "fork-rename": ["clean"], "merge": ["clean"]}
    counts = compare_each(work, wt, tip, list(c.values()), commits)
    assert counts == {"clean": 5, "conflict": 6, "git error": 0}


def test_a_bundle_in_sequence_equals_git_cherry_picks_in_sequence(kinds, tmp_path):
    work, c = kinds
    tip = run_git(work, "rev-parse", "HEAD").strip()
    seq = [c[n] for n in ("clean", "clean-rename", "empty", "fork-rename", "merge")]
    repo = pygit2.Repository(str(work))
    commits = gitio.commit_infos(repo, seq)
    wt = tmp_path / "wt"
    run_git(work, "worktree", "add", "-q", "--detach", str(wt), tip)
    want = []
    for sha in seq:
        argv = ["-m", "1"] if len(repo[sha].parent_ids) > 1 else []
        run_git(wt, "cherry-pick", "--no-commit", "--allow-empty", *argv, sha)
        want.append(run_git(wt, "write-tree").strip())
        run_git(wt, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    res = apply_unit(work, Unit(id=f"bundle-{seq[0][:12]}", kind="bundle", items=tuple(PlanItem(s, "t") for s in seq)),
                     base=tip, commits=commits, when=T0)
    repo = pygit2.Repository(str(work))
    assert [str(repo[f].tree_id) for _, f in res.picked] == want


def test_a_clone_without_unrelated_blobs_applies(kinds, tmp_path):
    """The fork's n.txt blob is gone (a partial snapshot): the picks that do not read it apply."""
    work, c = kinds
    tip = run_git(work, "rev-parse", "HEAD").strip()
    lean = tmp_path / "lean.git"
    run_git(tmp_path, "init", "-q", "--bare", str(lean))
    n_blob = run_git(work, "rev-parse", f"{tip}:n.txt").strip()
    objs = run_git(work, "rev-list", "--objects", "--all").split("\n")
    keep = "\n".join(line.split(" ")[0] for line in objs if line.strip() and not line.startswith(n_blob)) + "\n"
    pack = subprocess.run(["git", "pack-objects", "-q", str(lean / "objects" / "pack" / "pack")], cwd=work,
                          input=keep, capture_output=True, text=True, env=_env(), check=True)
    assert pack.stdout.strip()
    run_git(lean, "update-ref", "refs/heads/main", tip)
    assert subprocess.run(["git", "cat-file", "-e", n_blob], cwd=lean, env=_env()).returncode != 0
    # (not the fork-rename pick: without rename detection it is a delete/modify conflict)
    seq = [c[n] for n in ("clean", "clean-rename", "empty", "merge")]
    repo = pygit2.Repository(str(lean))
    commits = gitio.commit_infos(repo, seq)
    res = apply_unit(lean, Unit(id=f"bundle-{seq[0][:12]}", kind="bundle", items=tuple(PlanItem(s, "t") for s in seq)),
                     base=tip, commits=commits, when=T0)
    assert res.conflict is None and [u for u, _ in res.picked] == seq
    full = apply_unit(work, Unit(id=f"bundle-{seq[0][:12]}", kind="bundle", items=tuple(PlanItem(s, "t") for s in seq)),
                      base=tip, commits=commits, when=T0)
    # the same commits as in the full clone (rename detection was dropped: it reads every added blob)
    assert [f for _, f in res.picked] == [f for _, f in full.picked]
    assert res.renames_off != "" and full.renames_off == ""
    # a pick that needs the missing blob (the add/add on n.txt) stops with an error, not a conflict commit
    blocked = apply_unit(lean, one(c["add/add"]), base=tip, commits=gitio.commit_infos(repo, [c["add/add"]]), when=T0)
    assert blocked.conflict == c["add/add"] and blocked.conflict_commit is None and n_blob[:7] in blocked.error


# ---------------------------------------------------------------------------------------------
# the real Triton fork (skipped without its snapshot)

needs_real = pytest.mark.skipif(not (REAL / "objects").is_dir(), reason="the real Triton fork's snapshot is not here")
BUNDLE = Path(__file__).parent.parent / "data" / "apply" / "triton-first-bundle-2026-04-15.txt"


def without_missing_blobs(repo: pygit2.Repository, tip: str) -> str:
    """A commit on ``tip`` whose tree lacks the blobs this snapshot lacks: git cannot check out a
    tree whose blobs are missing (the in-memory apply never needs them)."""
    tree = repo[tip].peel(pygit2.Commit).tree
    missing = [e for e in _walk(tree, "") if e[1] not in repo.odb]
    assert len(missing) <= 4, missing
    idx = pygit2.Index()
    idx.read_tree(tree)
    for path, _ in missing:
        idx.remove(path)
    sig = pygit2.Signature("t", "t@t", T0, 0)
    return str(repo.create_commit(None, sig, sig, "drop the blobs this snapshot lacks\n", idx.write_tree(repo), [tip]))


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    root = tmp_path_factory.mktemp("triton")
    scratch = root / "triton.git"
    # a copy: a --shared clone would touch the real pack's mtime (git and libgit2 "freshen" it)
    shutil.copytree(REAL, scratch, symlinks=True)
    return scratch


@needs_real
def test_real_triton_picks_equal_git_cherry_pick(real, tmp_path):
    repo = pygit2.Repository(str(real))
    start = without_missing_blobs(repo, str(repo.references["refs/heads/main"].peel(pygit2.Commit).id))
    shas = gitio.rev_list(repo, str(repo.revparse_single("a4ce9c2a2").id), [start])
    sample = shas[::max(1, len(shas) // 30)][:30]
    commits = gitio.commit_infos(repo, sample)
    wt = tmp_path / "wt"
    run_git(real, "worktree", "add", "-q", "--detach", str(wt), start)
    counts = compare_each(real, wt, start, sample, commits)
    print(f"real Triton picks onto the fork tip compared with git cherry-pick: {counts}")
    assert counts["clean"] + counts["conflict"] >= 25, counts


@needs_real
def test_real_triton_first_bundle_equals_git_cherry_picks_in_sequence(real, tmp_path):
    """The benchmark's bundle (bench/bench_apply.py): 50 picks onto the fork tip of 2026-04-15."""
    lines = [x for x in BUNDLE.read_text().splitlines() if x and not x.startswith("#")]
    tip = re.search(r"fork tip ([0-9a-f]{40})", BUNDLE.read_text()).group(1)
    repo = pygit2.Repository(str(real))
    start = without_missing_blobs(repo, tip)
    commits = gitio.commit_infos(repo, lines)
    wt = tmp_path / "wt"
    run_git(real, "worktree", "add", "-q", "--detach", str(wt), start)
    want = []
    for sha in lines:
        argv = ["-m", "1"] if len(repo[sha].parent_ids) > 1 else []
        run_git(wt, "cherry-pick", "--no-commit", "--allow-empty", *argv, sha)
        want.append(run_git(wt, "write-tree").strip())
        run_git(wt, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    unit = Unit(id=f"bundle-{lines[0][:12]}", kind="bundle", items=tuple(PlanItem(s, "t") for s in lines))
    res = apply_unit(real, unit, base=start, commits=commits, when=T0)
    repo = pygit2.Repository(str(real))
    assert res.conflict is None and len(res.picked) == 50
    assert [str(repo[f].tree_id) for _, f in res.picked] == want


def _walk(tree, prefix):
    for e in tree:
        if e.type_str == "tree":
            yield from _walk(e, f"{prefix}{e.name}/")
        elif e.type_str == "blob":
            yield (f"{prefix}{e.name}", e.id)
