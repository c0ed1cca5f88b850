"""``forksync resolve`` in local mode: a worktree at the conflict, ``--continue`` folds the
resolution into one pick and applies the chain's next picks (stopping again at the next conflict),
``--abort`` leaves the branch as it was, and bad input gets a clear answer."""
from __future__ import annotations

import re

from bot.cli.main import main
from bot.demo.repobuilder import run_git


def resolve_markers(path, replacement: str) -> None:
    text = path.read_text()
    path.write_text(re.sub(r"<<<<<<< fork\n.*?>>>>>>> [^\n]*\n", replacement, text, flags=re.S))


def branch_log(pair, branch):
    out = run_git(pair.fork.path, "log", "--reverse", "--format=%s%x1f%B%x1e", branch, "^main")
    return [e.strip("\n") for e in out.split("\x1e") if e.strip()]


def test_resolve_continue_folds_and_goes_on_to_the_next_conflict(stopped, tmp_path, capsys):
    pair, g, unit = stopped
    u = pair.u
    conflict_tip = run_git(pair.fork.path, "rev-parse", f"forksync/{unit}")
    assert main(["resolve", unit, *g]) == 0
    out = capsys.readouterr().out
    wt = tmp_path / ".forksync-resolve" / unit
    assert f"worktree: {wt}" in out and "lib/Dialect/Ops.cpp: 1 conflicting hunk(s)" in out
    # nothing edited yet: refused, nothing changed
    assert main(["resolve", unit, "--continue", *g]) == 1
    assert capsys.readouterr().err == ("forksync: the worktree still holds the conflict commit's files unchanged; "
                                       f"edit them in {wt} first\n")
    resolve_markers(wt / "lib/Dialect/Ops.cpp", "  return r + 1 + 0 /* fork */;\n")
    assert main(["resolve", unit, "--continue", "--reason", "lib/Dialect/Ops.cpp=both the overflow fix and the tuning",
                 *g]) == 1                          # folded, then stopped again at u4
    out = capsys.readouterr().out
    assert "Action: merged by hand  Reason: both the overflow fix and the tuning" in out
    assert f"conflict: upstream {u['u4']}" in out
    assert f"edit the files (no marker may remain), then: forksync resolve {unit} --continue" in out
    log = branch_log(pair, f"forksync/{unit}")
    assert log[0].startswith("[RESOLVED] [dialect] fold mul overflow (#102)\x1f")
    assert f"Upstream-Commit: {u['u2']}" in log[0] and "Resolved-by: " in log[0]
    assert log[1].startswith("[CONFLICT] [dialect] fold mul again\x1f") and f"Forksync-Conflict: {u['u4']}" in log[1]
    # the conflict commit and the resolution are kept, not lost
    kept = run_git(pair.fork.path, "for-each-ref", "--format=%(refname)", f"refs/forksync/resolutions/{unit}").strip()
    assert "\n" not in kept and kept.startswith(f"refs/forksync/resolutions/{unit}/")
    assert run_git(pair.fork.path, "rev-parse", kept.strip() + "~1") == conflict_tip
    # the second conflict: take upstream's side this time; the chain is then whole
    assert "<<<<<<< fork" in (wt / "lib/Dialect/Ops.cpp").read_text()
    resolve_markers(wt / "lib/Dialect/Ops.cpp", "  return r + 2;\n")
    assert main(["resolve", unit, "--continue", *g]) == 0
    out = capsys.readouterr().out
    assert "is whole" in out and not wt.exists()
    log = branch_log(pair, f"forksync/{unit}")
    assert [entry.split("\x1f")[0] for entry in log] == [
        "[RESOLVED] [dialect] fold mul overflow (#102)", "[RESOLVED] [dialect] fold mul again (#104)"]
    text = run_git(pair.fork.path, "show", f"forksync/{unit}:lib/Dialect/Ops.cpp")
    assert "<<<<<<<" not in text and "return r + 2;" in text


def test_abort_keeps_the_branch_and_no_conflict_is_a_clear_answer(stopped, tmp_path, capsys):
    pair, g, unit = stopped
    tip = run_git(pair.fork.path, "rev-parse", f"forksync/{unit}")
    assert main(["resolve", unit, *g]) == 0
    assert main(["resolve", unit, "--abort", *g]) == 0
    assert "as before" in capsys.readouterr().out
    assert run_git(pair.fork.path, "rev-parse", f"forksync/{unit}") == tip
    assert not (tmp_path / ".forksync-resolve" / unit).exists()
    assert main(["resolve", unit, "--abort", *g]) == 2
    assert capsys.readouterr() == ("", f"forksync: no resolution of {unit} in progress; nothing to abort\n")
    # a clean bundle has nothing to resolve
    bundle = f"bundle-{pair.u['u1'][:12]}"
    assert main(["apply", bundle, *g]) == 0
    capsys.readouterr()
    assert main(["resolve", bundle, *g]) == 2
    err = capsys.readouterr().err
    # a bundle has no "next picks" to apply
    assert err.startswith(f"forksync: forksync/{bundle} has no conflict to resolve") and "next picks" not in err
    # a unit with no branch: where to find the units, not an `apply` of a name that may be no unit
    assert main(["resolve", "chain-nope", *g]) == 2
    err = capsys.readouterr().err
    assert "no branch forksync/chain-nope" in err and "`forksync plan` lists the units" in err
    assert "apply chain-nope" not in err


def test_a_resolution_with_a_marker_left_is_refused_and_nothing_moves(stopped, tmp_path, capsys):
    pair, g, unit = stopped
    tip = run_git(pair.fork.path, "rev-parse", f"forksync/{unit}")
    assert main(["resolve", unit, *g]) == 0
    wt = tmp_path / ".forksync-resolve" / unit
    f = wt / "lib/Dialect/Ops.cpp"
    f.write_text(f.read_text().replace("return r + 1;", "return r + 3;"))
    assert main(["resolve", unit, "--continue", *g]) == 1
    err = capsys.readouterr().err
    assert err.startswith("forksync: the resolution is not complete; nothing was changed:\n  - ")
    assert "conflict markers remain in `lib/Dialect/Ops.cpp`" in err
    assert run_git(pair.fork.path, "rev-parse", f"forksync/{unit}") == tip


def test_a_checkout_missing_a_blob_no_step_needs_leaves_it_out_and_the_fold_keeps_it(stopped, tmp_path, capsys):
    """A snapshot (no promisor remote) lacking README.md's blob, which chain u2 neither conflicts in
    nor changes: the worktree is made without it and says so, git sees no deletion there, the
    folded pick holds README.md with the same blob, and --abort at the next conflict removes the
    worktree as usual. (A blob the resolution needs is an error: tests/cli/test_partial_clone.py.)"""
    import os

    import pygit2

    pair, g, unit = stopped
    repo = pygit2.Repository(str(pair.fork.path))
    blob = str(repo.revparse_single(f"forksync/{unit}").peel(pygit2.Commit).tree["README.md"].id)
    loose = os.path.join(repo.path, "objects", blob[:2], blob[2:])
    assert os.path.exists(loose), "the scenario's objects are loose"
    os.remove(loose)
    assert main(["resolve", unit, *g]) == 0
    assert "1 file(s) left out of the worktree: README.md; the repository lacks their blobs" in capsys.readouterr().err
    wt = tmp_path / ".forksync-resolve" / unit
    assert not (wt / "README.md").exists() and (wt / "python/triton/language.py").exists()
    assert run_git(wt, "status", "--porcelain") == ""
    resolve_markers(wt / "lib/Dialect/Ops.cpp", "  return r + 1 + 0 /* fork */;\n")
    assert main(["resolve", unit, "--continue", *g]) == 1         # folded, then stopped again at u4
    assert run_git(pair.fork.path, "rev-parse", f"forksync/{unit}~1:README.md").strip() == blob
    assert run_git(pair.fork.path, "rev-parse", f"forksync/{unit}:README.md").strip() == blob
    assert not (wt / "README.md").exists() and "<<<<<<< fork" in (wt / "lib/Dialect/Ops.cpp").read_text()
    before = run_git(pair.fork.path, "worktree", "list")
    assert main(["resolve", unit, "--abort", *g]) == 0
    assert not wt.exists() and run_git(pair.fork.path, "worktree", "list") != before


def test_an_edit_to_a_left_out_file_is_refused_not_dropped(stopped, tmp_path, capsys):
    """A file left out of the worktree (its blob absent) that the person writes anyway and stages
    (clearing git's skip-worktree bit, as `git sparse-checkout disable` would) is their edit: the
    fold must not swap it back for the conflict commit's blob and remove the worktree with it.
    It is refused, named, and nothing moves; the file is still there."""
    import os

    import pygit2

    pair, g, unit = stopped
    tip = run_git(pair.fork.path, "rev-parse", f"forksync/{unit}")
    repo = pygit2.Repository(str(pair.fork.path))
    blob = str(repo.revparse_single(f"forksync/{unit}").peel(pygit2.Commit).tree["README.md"].id)
    os.remove(os.path.join(repo.path, "objects", blob[:2], blob[2:]))
    assert main(["resolve", unit, *g]) == 0
    capsys.readouterr()
    wt = tmp_path / ".forksync-resolve" / unit
    (wt / "README.md").write_text("the person's own words\n")
    run_git(wt, "update-index", "--no-skip-worktree", "README.md")
    run_git(wt, "add", "README.md")
    resolve_markers(wt / "lib/Dialect/Ops.cpp", "  return r + 1 + 0 /* fork */;\n")
    assert main(["resolve", unit, "--continue", *g]) == 1
    err = capsys.readouterr().err
    assert "README.md" in err and "left out of the worktree" in err and "nothing was changed" in err
    assert run_git(pair.fork.path, "rev-parse", f"forksync/{unit}") == tip
    assert (wt / "README.md").read_text() == "the person's own words\n"


def test_resolve_for_another_fork_branch_works_on_that_branchs_chain(tmp_path, monkeypatch, capsys):
    # the chain main stopped on is planned for release too (two fork branches of one repository):
    # release's is forksync/release/<unit>, resolved beside main's, which stays as it was
    from tests.support.plan_repos import with_release_branch
    pair, g, rel = with_release_branch(tmp_path)
    fork = pair.fork
    monkeypatch.chdir(tmp_path)
    unit = f"chain-{pair.u['u2'][:12]}"
    assert main(["apply", unit, *g]) == 1 and main(["apply", unit, *rel]) == 1     # both stop at u2
    capsys.readouterr()
    main_tip = run_git(fork.path, "rev-parse", f"forksync/{unit}")
    assert main(["resolve", unit, *rel]) == 0
    wt = tmp_path / ".forksync-resolve" / "release" / unit
    assert f"worktree: {wt}" in capsys.readouterr().out
    assert main(["resolve", unit, *g]) == 0              # main's own, beside it
    assert f"worktree: {tmp_path / '.forksync-resolve' / unit}" in capsys.readouterr().out
    resolve_markers(wt / "lib/Dialect/Ops.cpp", "  return r + 1 + 0 /* fork */;\n")
    assert main(["resolve", f"forksync/release/{unit}", "--continue", *rel]) == 1    # folded, stopped at u4
    out = capsys.readouterr().out
    assert f"conflict: upstream {pair.u['u4']}" in out
    log = run_git(fork.path, "log", "--format=%s", f"forksync/release/{unit}", "^release").splitlines()
    assert log == ["[CONFLICT] [dialect] fold mul again", "[RESOLVED] [dialect] fold mul overflow (#102)"]
    assert run_git(fork.path, "merge-base", f"forksync/release/{unit}", "release").strip() == fork.head("release")
    assert run_git(fork.path, "rev-parse", f"forksync/{unit}").strip() == main_tip.strip()


def test_resolve_finds_a_fork_refs_branch_after_a_checkout_moved_head(tmp_path, monkeypatch, capsys):
    # A checkout with no refs/remotes/origin/HEAD (a clone made with `git init` + `git fetch`, or
    # `git remote set-head origin -d`): bot.git.repo.default_branch reads HEAD, the branch checked
    # out. `apply --fork-ref release` run on main names release's chain forksync/release/<unit>; the
    # person then checks out release to work on it, and `resolve <unit> --fork-ref release` looks
    # for forksync/<unit> (release is "the default branch" now), which does not exist: "no branch",
    # though `plan --fork-ref release` lists forksync/release/<unit> in flight for that fork ref.
    from tests.support.plan_repos import with_release_branch
    pair, _, rel = with_release_branch(tmp_path)
    fork = pair.fork
    fork.git("remote", "set-head", "origin", "-d")
    monkeypatch.chdir(tmp_path)
    unit = f"chain-{pair.u['u2'][:12]}"
    assert main(["apply", unit, *rel]) == 1                 # stops at u2's conflict
    assert run_git(fork.path, "rev-parse", "--verify", "-q", f"refs/heads/forksync/release/{unit}").strip()
    fork.checkout("release")
    capsys.readouterr()
    assert main(["resolve", unit, *rel]) == 0, capsys.readouterr().err
    assert f"worktree: {tmp_path / '.forksync-resolve' / 'release' / unit}" in capsys.readouterr().out
