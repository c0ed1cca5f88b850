"""The in-memory pick predictor agrees with real ``git cherry-pick`` (clean, conflict, empty, renames)."""
from __future__ import annotations

import subprocess

import pygit2
import pytest

from bot.demo.repobuilder import RepoBuilder, run_git
from bot.git import repo as gitio
from bot.plan.predict import MergePredictor, scratch_repo
from bot.store import Store
from tests.support.plan_repos import T0, build_pair, file_becomes_directory


def real_pick(fork: RepoBuilder, tmp, start: str, shas: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    """Replay ``shas`` with ``git cherry-pick`` in a worktree at ``start``: [(outcome, conflicts)].
    A clean pick is committed (so the next one sees it); a conflicting one is aborted."""
    wt = tmp / f"wt-{len(list(tmp.iterdir()))}"
    run_git(fork.path, "worktree", "add", "--detach", "-q", str(wt), start)
    dates = {"GIT_AUTHOR_DATE": f"@{T0} +0000", "GIT_COMMITTER_DATE": f"@{T0} +0000"}
    out = []
    try:
        for sha in shas:
            rc = subprocess.run(["git", "cherry-pick", "--no-commit", sha], cwd=wt, capture_output=True).returncode
            unmerged = tuple(sorted(run_git(wt, "diff", "--name-only", "--diff-filter=U").split()))
            if rc != 0:
                assert unmerged, "cherry-pick failed without a conflict"
                run_git(wt, "cherry-pick", "--abort", check=False)
                run_git(wt, "reset", "--hard", "-q", "HEAD")
                out.append(("conflict", unmerged))
            elif subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=wt).returncode == 0:
                out.append(("empty", ()))
            else:
                run_git(wt, "commit", "-q", "--no-verify", "-m", f"pick {sha[:8]}", env=dates)
                out.append(("clean", ()))
    finally:
        run_git(fork.path, "worktree", "remove", "--force", str(wt))
    return out


def predicted(pred: MergePredictor, infos, advance: bool):
    out = []
    for c in infos:
        p = pred.predict(c)
        out.append((p.outcome, p.conflicts))
        if advance and p.outcome == "clean":
            pred.advance(c, p)
    return out


def test_each_pick_on_the_fork_tip_matches_git(tmp_path):
    pair = build_pair(tmp_path)
    infos = pair.infos()
    pred = MergePredictor(pair.repo, pair.fork_tip)
    got = [pred.predict(c) for c in infos]
    want = [real_pick(pair.fork, tmp_path, pair.fork_tip, [c.sha])[0] for c in infos]
    assert [(p.outcome, p.conflicts) for p in got] == want
    assert want == [("clean", ()), ("conflict", ("lib/Dialect/Ops.cpp",)), ("clean", ()),
                    ("conflict", ("lib/Dialect/Ops.cpp",)), ("conflict", ("lib/WS/WarpSpec.cpp",)),
                    ("clean", ()), ("clean", ()), ("empty", ()), ("conflict", ("python/triton/language.py",))]


def test_running_tree_sequence_matches_git(tmp_path):
    pair = build_pair(tmp_path)
    infos = pair.infos(["u1", "u3", "u6", "u7", "u9"])
    pred = MergePredictor(pair.repo, pair.fork_tip)
    got = predicted(pred, infos, advance=True)
    want = real_pick(pair.fork, tmp_path, pair.fork_tip, [c.sha for c in infos])
    assert got == want == [("clean", ())] * 5
    # without u1 applied first, u9 conflicts (it edits u1's line) — in git as in the predictor
    assert real_pick(pair.fork, tmp_path, pair.fork_tip, [pair.u["u9"]]) == [("conflict", ("python/triton/language.py",))]


def rename_pair(tmp_path):
    up = RepoBuilder.init(tmp_path / "up")
    body = "".join(f"line {i}\n" for i in range(40))
    up.commit("init", {"src/a.py": body}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("fork edits a.py", {"src/a.py": body.replace("line 3\n", "line 3 fork\n")}, when=T0 + 10)
    up.rename("src/a.py", "src/b.py")
    r1 = up.commit("rename a.py to b.py (#1)", when=T0 + 20)
    r2 = up.commit("edit b.py (#2)", {"src/b.py": body.replace("line 30\n", "line 30 up\n")}, when=T0 + 30)
    fork.add_remote("upstream", up.path)
    return up, fork, [r1, r2]


def test_renames_match_git_with_rename_detection(tmp_path):
    up, fork, shas = rename_pair(tmp_path)
    repo = pygit2.Repository(str(fork.path))
    infos = gitio.commit_infos(repo, shas)
    pred = MergePredictor(repo, fork.head(), rename_detection=True)
    got = predicted(pred, [infos[s] for s in shas], advance=True)
    assert got == real_pick(fork, tmp_path, fork.head(), shas) == [("clean", ()), ("clean", ())]
    # with rename detection off the fork's edit of a.py meets a deletion: a modify/delete conflict
    off = MergePredictor(repo, fork.head(), rename_detection=False)
    assert off.predict(infos[shas[0]]).outcome == "conflict"
    assert off.predict(infos[shas[0]]).conflicts == ("src/a.py",)


def test_predictions_are_cached_in_the_store_and_scratch_repo(tmp_path):
    pair = build_pair(tmp_path)
    infos = pair.infos()
    store = Store(tmp_path / "db.sqlite")
    cache = tmp_path / "cache"
    p1 = MergePredictor(scratch_repo(pair.repo.path, cache), pair.fork_tip, store=store)
    first = predicted(p1, infos, advance=True)
    p1.flush()
    assert p1.merges == 9 and p1.cache_hits == 0
    p2 = MergePredictor(scratch_repo(pair.repo.path, cache), pair.fork_tip, store=Store(tmp_path / "db.sqlite"))
    assert predicted(p2, infos, advance=True) == first
    assert p2.merges == 0 and p2.cache_hits == 9
    # the fork repository itself received no objects from the predictions
    assert not (pair.fork.path / ".git" / "objects" / "info" / "alternates").exists()
    assert first[0] == ("clean", ()) and first[8] == ("clean", ())


def test_missing_objects_give_unknown_not_a_crash(tmp_path):
    pair = build_pair(tmp_path)
    info = pair.infos(["u1"])[0]
    # a shallow-like copy: a repository that has the fork but not the upstream commits
    lonely = RepoBuilder.init(tmp_path / "lonely", bare=True)
    run_git(lonely.path, "fetch", "-q", str(pair.fork.path), "main:main")
    pred = MergePredictor(pygit2.Repository(str(lonely.path)), pair.fork_tip)
    p = pred.predict(info)
    assert p.outcome == "unknown"
    assert p.detail.startswith("missing objects:")


def test_advance_refuses_a_conflict(tmp_path):
    pair = build_pair(tmp_path)
    info = pair.infos(["u2"])[0]
    pred = MergePredictor(pair.repo, pair.fork_tip)
    with pytest.raises(ValueError, match="only a clean prediction"):
        pred.advance(info, pred.predict(info))


def test_a_missing_blob_the_pick_does_not_touch_is_carried(tmp_path):
    """Real snapshots lack some large blobs (the Triton fork misses a PDF): a pick that does not
    touch such a file is still predicted; one that must read it is ``unknown``."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("init", {"a.py": "x = 1\n", "doc.pdf": "%PDF big\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("fork", {"b.py": "y = 1\n", "doc.pdf": "%PDF big\n%fork\n"}, when=T0 + 10)
    s1 = up.commit("edit a (#1)", {"a.py": "x = 2\n"}, when=T0 + 20)
    s2 = up.commit("edit pdf (#2)", {"doc.pdf": "%PDF bigger\n"}, when=T0 + 30)
    fork.add_remote("upstream", up.path)
    repo = pygit2.Repository(str(fork.path))
    infos = gitio.commit_infos(repo, [s1, s2])
    blob = str(repo[fork.head()].tree["doc.pdf"].id)
    (fork.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    pred = MergePredictor(pygit2.Repository(str(fork.path)), fork.head())
    assert pred.predict(infos[s1]).outcome == "clean"
    # the fork changed the pdf too: a content merge needs the missing blob
    bad = pred.predict(infos[s2])
    assert bad.outcome == "unknown" and bad.detail.startswith("missing objects:")


def test_clean_merge_trees_edited_in_place_equal_the_written_index(tmp_path):
    """Without rename detection a clean pick's tree is written by editing the running tree at the
    pick's paths (bot.plan.predict._write_changed); it must be the very tree the merged index gives."""
    from bot.plan.predict import _write_changed, _write_tree

    pair = build_pair(tmp_path)
    repo = pair.repo
    ours = repo[pair.fork_tip].peel(pygit2.Commit).tree
    checked = 0
    for c in pair.infos():
        commit = repo[c.sha]
        anc = repo[commit.parent_ids[0]].tree
        idx = repo.merge_trees(anc, ours, commit.tree, flags=0)
        if idx.conflicts is not None:
            continue
        fast = _write_changed(idx, repo, anc, ours, commit.tree)
        assert fast is not None and fast == _write_tree(idx, repo)
        ours = repo[fast]              # a running tree, as the planner advances it
        checked += 1
    assert checked == 6                # the clean (and empty) picks of the scripted pair, in order
    # a file replaced by a directory: not edited in place (None: the caller writes the index)
    r, base, sha = file_becomes_directory(tmp_path)
    t_base, t_new = r[base].peel(pygit2.Commit).tree, r[sha].peel(pygit2.Commit).tree
    idx = r.merge_trees(t_base, t_base, t_new, flags=0)
    assert _write_changed(idx, r, t_base, t_base, t_new) is None
    assert _write_tree(idx, r) == str(t_new.id)
