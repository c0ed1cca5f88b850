"""forksync's merges set their own rename limit: a user's low ``merge.renameLimit`` no longer
turns a fork's renamed file into a conflict at its old path (apply and plan alike); with a limit
too low (config ``rename_limit``) the skip is said, plan and apply agree, and a conflict on a
renamed file names both paths."""
from __future__ import annotations

import subprocess

import pygit2

from bot.git import repo as gitio
from bot.git.apply import apply_unit, conflicts_of
from bot.model import PlanItem, Unit
from bot.plan.predict import MergePredictor


def git(cwd, *args) -> str:
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                       env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd), "PATH": "/usr/bin:/bin",
                            "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"})
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def lines(name: str, n: int = 50) -> str:
    return "".join(f"{name} line {i}\n" for i in range(1, n + 1))


def renamed_fork(tmp_path, *, fork_edits_line_25: bool):
    """A fork that renamed f1 → g1 and f2 → g2 with small edits (inexact renames), and an upstream
    commit that edits f1's line 25. The user's config says ``merge.renameLimit = 1``."""
    r = tmp_path / "fork.git"
    git(tmp_path, "init", "-q", "-b", "main", str(r))
    git(r, "config", "user.email", "a@example.com")
    git(r, "config", "user.name", "a")
    git(r, "config", "merge.renameLimit", "1")           # the user's setting forksync must not inherit
    for i in (1, 2, 3):
        (r / f"f{i}.txt").write_text(lines(f"file{i}"))
    git(r, "add", ".")
    git(r, "commit", "-qm", "base")
    git(r, "branch", "up")
    git(r, "mv", "f1.txt", "g1.txt")
    git(r, "mv", "f2.txt", "g2.txt")
    g1 = lines("file1") + "fork tail 1\n"
    if fork_edits_line_25:
        g1 = g1.replace("file1 line 25\n", "file1 line 25 FORK\n")
    (r / "g1.txt").write_text(g1)
    (r / "g2.txt").write_text(lines("file2") + "fork tail 2\n")
    git(r, "add", "-A")
    git(r, "commit", "-qm", "fork: rename f1 and f2")
    git(r, "checkout", "-q", "up")
    (r / "f1.txt").write_text(lines("file1").replace("file1 line 25\n", "file1 line 25 UP\n"))
    git(r, "commit", "-qam", "upstream: edit f1 (#7)")
    up = git(r, "rev-parse", "HEAD")
    git(r, "checkout", "-q", "main")
    base = git(r, "rev-parse", "HEAD")
    repo = pygit2.Repository(str(r))
    return r, repo, base, up, {up: gitio.commit_info(repo, up)}


def chain(up: str) -> Unit:
    return Unit(id=f"chain-{up[:12]}", kind="chain", items=(PlanItem(up, "chain"),))


def test_a_low_user_rename_limit_is_not_inherited_plan_and_apply_land_the_change_on_the_new_path(tmp_path):
    r, repo, base, up, commits = renamed_fork(tmp_path, fork_edits_line_25=False)
    # git left to the user's config skips the renames: a modify/delete at the old path
    p = subprocess.run(["git", "merge-tree", "--write-tree", "main", "up"], cwd=r, capture_output=True, text=True)
    assert "CONFLICT (modify/delete): f1.txt deleted in main" in p.stdout
    u, m = repo.revparse_single("up").peel(pygit2.Commit), repo.revparse_single("main").peel(pygit2.Commit)
    assert repo.merge_trees(u.parents[0].tree, m.tree, u.tree).conflicts is not None      # libgit2 too
    res = apply_unit(str(r), chain(up), base=base, commits=commits, when=1)
    assert (res.conflict, res.renames_skipped, [s for s, _ in res.picked]) == (None, "", [up])
    tree = repo[res.tip].peel(pygit2.Commit).tree
    assert "file1 line 25 UP\n" in tree["g1.txt"].data.decode() and "f1.txt" not in [e.name for e in tree]
    pred = MergePredictor(repo, base).predict(commits[up])
    assert (pred.outcome, pred.detail) == ("clean", "")


def test_a_limit_too_low_is_said_and_plan_and_apply_agree(tmp_path):
    r, repo, base, up, commits = renamed_fork(tmp_path, fork_edits_line_25=False)
    res = apply_unit(str(r), chain(up), base=base, commits=commits, when=1, rename_limit=1)
    assert res.conflict == up
    assert [(f.path, f.kind, f.old_path) for f in res.conflicts] == [("f1.txt", "delete/modify", "")]
    assert res.renames_skipped == ("exhaustive rename detection was skipped due to too many files.; "
                                   "you may want to set your merge.renamelimit variable to at least 2 and retry the command.")
    pred = MergePredictor(repo, base, rename_limit=1).predict(commits[up])
    assert (pred.outcome, pred.conflicts, pred.detail) == (
        "conflict", ("f1.txt",), "inexact rename detection was skipped: 2 rename candidates exceed rename_limit 1 "
                                 "(set rename_limit to at least 2)")


def test_a_conflict_on_a_renamed_file_names_the_old_and_the_new_path(tmp_path):
    r, repo, base, up, commits = renamed_fork(tmp_path, fork_edits_line_25=True)
    res = apply_unit(str(r), chain(up), base=base, commits=commits, when=1)
    assert [(f.path, f.kind, f.old_path) for f in res.conflicts] == [("g1.txt", "content", "f1.txt")]
    msg = repo[res.conflict_commit].message
    assert "- g1.txt (content, renamed from f1.txt)\n" in msg
    assert [(f.path, f.kind, f.old_path) for f in conflicts_of(repo, repo[res.conflict_commit])] == \
        [("g1.txt", "content", "f1.txt")]
    pred = MergePredictor(repo, base).predict(commits[up])
    assert pred.outcome == "conflict"
