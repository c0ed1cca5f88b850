"""Upstream commits of odd shapes picked by ``apply_unit`` (the code ``forksync apply`` and the App
use) and predicted by ``MergePredictor``, each checked against real ``git cherry-pick -x`` in a
worktree of the same fork tip: the predicted outcome, apply's outcome and git's must agree, and a
pick git would stop on must never be committed as a clean pick."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2
import pytest

from bot.demo.repobuilder import RepoBuilder, run_git
from bot.git import repo as gitio
from bot.git.apply import apply_unit
from bot.model import PlanItem, Unit
from bot.plan.predict import MergePredictor

T0 = 1_767_225_600
LINES = "".join(f"line {i}: some text that makes this line unique {i * 7}\n" for i in range(40))


def _env() -> dict:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
    for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(k, None)
    return env


def one(sha: str) -> Unit:
    return Unit(id=f"chain-{sha[:12]}", kind="chain", items=(PlanItem(sha, "test"),))


def git_cherry_pick(git_dir: Path, start: str, sha: str, tmp: Path) -> tuple[str, list[str], str]:
    """``git cherry-pick -x`` of ``sha`` in a fresh worktree at ``start``: ``(outcome, unmerged
    paths, the new commit's message)`` — outcome ``clean``, ``empty`` or ``conflict``."""
    wt = tmp / f"oracle-{sha[:8]}"
    run_git(git_dir, "worktree", "add", "-q", "--detach", str(wt), start)
    try:
        argv = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "merge.conflictStyle=diff3",
                "cherry-pick", "-x", "--allow-empty", "--keep-redundant-commits", sha]
        p = subprocess.run(argv, cwd=wt, env=_env(), capture_output=True, text=True)
        if p.returncode != 0:
            unmerged = sorted(set(run_git(wt, "diff", "--name-only", "--diff-filter=U").split()))
            assert unmerged, f"git cherry-pick failed without a conflict: {p.stderr}"
            return "conflict", unmerged, ""
        same = run_git(wt, "rev-parse", "HEAD^{tree}").strip() == run_git(wt, "rev-parse", f"{start}^{{tree}}").strip()
        return ("empty" if same else "clean"), [], run_git(wt, "log", "-1", "--format=%B")
    finally:
        run_git(git_dir, "worktree", "remove", "--force", str(wt))


def set_gitlink(b: RepoBuilder, path: str, sha: str) -> None:
    b.git("update-index", "--add", "--cacheinfo", f"160000,{sha},{path}")


def test_a_submodule_bump_against_the_forks_own_bump_stops_with_a_conflict_commit(tmp_path):
    """Upstream bumps a submodule (a gitlink) the fork bumped to another commit. `git cherry-pick`
    stops with a conflict at the submodule. What a user sees: `forksync apply` (and the App's
    unit) dies with `ValueError: invalid literal for int() with base 10: b'Recursive merging with
    submodules currently only supports trivial cases…'` — git merge-tree's advice paragraph is
    parsed as a conflict record (bot/git/apply.py git_merge_tree). What they should see: the chain
    stops at that pick with a conflict commit naming `sub`, keeping the fork's gitlink."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("base", {"a.txt": "a\n"}, when=T0)
    set_gitlink(up, "third_party/sub", "1" * 40)
    up.commit("add the submodule", when=T0 + 1)
    fork = up.clone(tmp_path / "fork")
    set_gitlink(fork, "third_party/sub", "2" * 40)
    fork.commit("[fork] bump sub", when=T0 + 10)
    set_gitlink(up, "third_party/sub", "3" * 40)
    sha = up.commit("Bump sub (#5)", when=T0 + 20)
    fork.add_remote("upstream", up.path)
    start = fork.head()
    assert git_cherry_pick(fork.path, start, sha, tmp_path)[:2] == ("conflict", ["third_party/sub"])
    repo = pygit2.Repository(str(fork.path))
    res = apply_unit(fork.path, one(sha), base=start, commits=gitio.commit_infos(repo, [sha]), when=T0)
    assert res.conflict == sha and res.conflict_commit is not None and res.tip == res.conflict_commit
    assert res.conflict_files == ("third_party/sub",)
    tip = pygit2.Repository(str(fork.path))[res.tip].peel(pygit2.Commit)
    assert str(tip.tree["third_party/sub"].id) == "2" * 40          # the fork's gitlink, as git leaves it


def _attr_pair(tmp_path: Path, attr: str, bare: bool):
    """A fork whose committed .gitattributes gives a.txt ``attr``; the fork and upstream edit
    a.txt in lines far apart (a text merge would be clean)."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("base", {"a.txt": LINES, ".gitattributes": f"a.txt {attr}\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[fork] edit line 3", {"a.txt": LINES.replace("line 3:", "line 3 fork:")}, when=T0 + 10)
    sha = up.commit("Edit line 30 (#7)", {"a.txt": LINES.replace("line 30:", "line 30 up:")}, when=T0 + 20)
    fork.add_remote("upstream", up.path)
    if not bare:
        return fork.path, fork.head(), sha
    mirror = tmp_path / "fork.git"
    run_git(tmp_path, "clone", "-q", "--bare", str(fork.path), str(mirror))
    run_git(mirror, "fetch", "-q", str(up.path), "+refs/heads/main:refs/remotes/upstream/main")
    return mirror, fork.head(), sha


@pytest.mark.parametrize("bare", [False, True], ids=["fork clone", "bare mirror"])
@pytest.mark.parametrize("attr", ["merge=binary", "-merge", "binary"])
def test_a_file_the_fork_marks_not_to_auto_merge_conflicts_as_git_does(tmp_path, attr, bare):
    """The fork's .gitattributes says a.txt must not be merged automatically (`merge=binary`,
    `-merge`, `binary`): `git cherry-pick` stops with a conflict on it even for edits far apart.
    What a user sees: `forksync apply` commits a clean pick with the two edits merged as text
    (libgit2 conflicts, then `git merge-tree` run in the git dir, where no .gitattributes is
    read, says clean and wins); on a bare mirror (the App's) the plan predicts it clean too, and
    in a fork clone the plan predicts a conflict that apply then does not have. What they should
    see: plan and apply both stop at a.txt, as git does."""
    git_dir, start, sha = _attr_pair(tmp_path, attr, bare)
    assert git_cherry_pick(git_dir, start, sha, tmp_path)[:2] == ("conflict", ["a.txt"])
    repo = pygit2.Repository(str(git_dir))
    info = gitio.commit_infos(repo, [sha])
    pred = MergePredictor(pygit2.Repository(str(git_dir)), start, rename_detection=False)
    res = apply_unit(git_dir, one(sha), base=start, commits=info, when=T0)
    assert (res.conflict, res.conflict_files) == (sha, ("a.txt",)), "apply committed a pick git stops on"
    assert pred.predict(info[sha]).outcome == "conflict"


def test_both_sides_adding_the_same_file_with_different_modes_conflicts_as_git_does(tmp_path):
    """The fork added tools/run.sh as a plain file; upstream adds the same content as an
    executable. `git cherry-pick` stops: CONFLICT (add/add) on tools/run.sh (100644 vs 100755).
    What a user sees: the plan puts it in a bundle as clean and apply commits it with one of the
    two modes picked silently. What they should see: a conflict predicted and a conflict commit,
    as git has it."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("base", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[fork] add the run script", {"tools/run.sh": "#!/bin/sh\nexec python -m tool\n"}, when=T0 + 10)
    up.write({"tools/run.sh": "#!/bin/sh\nexec python -m tool\n"})
    up.git("update-index", "--chmod=+x", "tools/run.sh")
    sha = up.commit("Add tools/run.sh (#8)", when=T0 + 20)
    fork.add_remote("upstream", up.path)
    start = fork.head()
    assert git_cherry_pick(fork.path, start, sha, tmp_path)[:2] == ("conflict", ["tools/run.sh"])
    repo = pygit2.Repository(str(fork.path))
    info = gitio.commit_infos(repo, [sha])
    assert MergePredictor(pygit2.Repository(str(fork.path)), start).predict(info[sha]).outcome == "conflict"
    res = apply_unit(fork.path, one(sha), base=start, commits=info, when=T0)
    assert (res.conflict, res.conflict_files) == (sha, ("tools/run.sh",))


def _trailers(message: str) -> list[str]:
    return subprocess.run(["git", "interpret-trailers", "--parse"], input=message, capture_output=True, text=True,
                          env=_env(), check=True).stdout.splitlines()


def test_the_upstream_trailer_block_stays_a_trailer_block_in_the_pick(tmp_path):
    """An upstream message whose trailer block git recognises though not every line is `Key: value`
    (a sign-off chain with a maintainer's `[note]` line, as kernel-style projects write them).
    `git cherry-pick -x` appends to that block, so `git interpret-trailers --parse` (and GitHub's
    Co-authored-by credit, which reads the final trailer block) still sees Signed-off-by and
    Co-authored-by. What a user sees: forksync starts a new paragraph for Upstream-Commit, so the
    pick's trailers are only Upstream-Commit / Forksync-Unit and the co-author and sign-offs are
    no longer trailers. What they should see: one trailer block holding upstream's trailers and
    forksync's (bot/git/apply.py _has_trailer_block, templates/commit/pick.txt.j2)."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("base", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[fork] own file", {"f.txt": "f\n"}, when=T0 + 10)
    msg = ("[BUILD] Fix the wheel name (#9)\n\nThe wheel lost its platform tag.\n\n"
           "Co-authored-by: Bo <bo@example.org>\nSigned-off-by: Al <al@example.org>\n"
           "[cy@example.org: reworded the commit message]\nSigned-off-by: Cy <cy@example.org>\n")
    sha = up.commit(msg, {"a.txt": "a\nb\n"}, when=T0 + 20)
    fork.add_remote("upstream", up.path)
    start = fork.head()
    outcome, _, git_msg = git_cherry_pick(fork.path, start, sha, tmp_path)
    want = ["Co-authored-by: Bo <bo@example.org>", "Signed-off-by: Al <al@example.org>",
            "Signed-off-by: Cy <cy@example.org>"]
    assert outcome == "clean" and all(t in _trailers(git_msg) for t in want)     # git keeps them trailers
    repo = pygit2.Repository(str(fork.path))
    res = apply_unit(fork.path, one(sha), base=start, commits=gitio.commit_infos(repo, [sha]), when=T0)
    pick = pygit2.Repository(str(fork.path))[res.tip].message
    got = _trailers(pick)
    assert f"Upstream-Commit: {sha}" in got
    assert [t for t in want if t not in got] == [], pick
