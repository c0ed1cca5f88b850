"""``forksync resolve --continue --push`` from a clone whose chain branch is behind the fork's: the
push is refused, and what the person's clone holds afterwards."""
from __future__ import annotations

import re

from bot.cli.main import main
from bot.demo.repobuilder import run_git

OPS = "lib/Dialect/Ops.cpp"


def resolve_markers(path, replacement: str) -> None:
    text = path.read_text()
    path.write_text(re.sub(r"<<<<<<< fork\n.*?>>>>>>> [^\n]*\n", replacement, text, flags=re.S))


def test_a_push_the_remote_refuses_leaves_the_branch_where_it_was(stopped, tmp_path, capsys):
    """alice's clone has the chain branch at its conflict commit; on the fork (remote ``shared``) bob
    has already pushed a commit on top of it. She resolves in forksync's worktree and runs
    ``--continue --push shared``: git refuses the push (not a fast-forward) and forksync exits 2
    — "bad input, nothing changed" — but her local ``forksync/<unit>`` has already been moved to
    her resolution commit. ``--abort`` then says "forksync/<unit> is at <conflict commit> as
    before" while the branch is not: the state file still names the conflict commit. What she
    should see: the refused push named, her branch left at the conflict commit (her resolution
    still in the worktree, or kept under refs/forksync/resolutions/), and an ``--abort`` that
    tells the truth (bot/cli/resolve.py ``_continue``: the ref moves before the push)."""
    pair, g, unit = stopped
    branch = f"forksync/{unit}"
    tip = run_git(pair.fork.path, "rev-parse", branch).strip()
    origin = tmp_path / "origin.git"
    run_git(tmp_path, "clone", "-q", "--bare", str(pair.fork.path), str(origin))
    bob = tmp_path / "bob"
    run_git(tmp_path, "clone", "-q", "-b", branch, str(origin), str(bob))
    (bob / "NOTES.md").write_text("bob was here\n")
    run_git(bob, "add", "-A")
    run_git(bob, "-c", "user.name=Bob", "-c", "user.email=bob@fork.example", "commit", "-q", "-m", "bob's try")
    run_git(bob, "push", "-q", "origin", f"HEAD:{branch}")
    run_git(pair.fork.path, "remote", "add", "shared", str(origin))

    assert main(["resolve", unit, *g]) == 0
    wt = tmp_path / ".forksync-resolve" / unit
    resolve_markers(wt / OPS, "  return r + 1 + 0 /* fork */;\n")
    capsys.readouterr()
    rc = main(["resolve", unit, "--continue", "--push", "shared", *g])
    err = capsys.readouterr().err
    assert rc != 0 and "push" in err, err
    assert run_git(pair.fork.path, "rev-parse", branch).strip() == tip, \
        "the local branch moved to the resolution although the push was refused"
    assert main(["resolve", unit, "--abort", *g]) == 0
    out = capsys.readouterr().out
    if "as before" in out:
        assert run_git(pair.fork.path, "rev-parse", branch).strip() == tip, out


def test_a_clone_without_the_local_chain_branch_is_pointed_at_the_fork_s_branch(stopped, tmp_path, capsys):
    """alice clones the fork to finish the chain PR GitHub shows stopped at a conflict: her clone
    has ``origin/forksync/<unit>`` but no local branch of that name (git makes one only on
    checkout). ``forksync resolve <unit>`` answers "there is no branch forksync/<unit> …;
    `forksync apply <unit>` makes a unit's branch" — and following that writes a second, local
    conflict commit (another sha: forksync's commit time) beside the one on the fork: a
    resolution on it is one the App never folds (not the conflict commit it pushed) and a push of
    it is refused. What she should see: the fork's own branch named (``origin/forksync/<unit>``)
    with the command that makes it hers (``git branch forksync/<unit> origin/forksync/<unit>``)."""
    pair, g, unit = stopped
    branch = f"forksync/{unit}"
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(pair.fork.path), str(clone))
    assert run_git(clone, "branch", "--list", branch).strip() == ""
    assert run_git(clone, "rev-parse", f"origin/{branch}").strip() == run_git(pair.fork.path, "rev-parse", branch).strip()
    capsys.readouterr()
    rc = main(["resolve", unit, "--fork", str(clone), "--upstream", str(pair.up.path)])
    err = capsys.readouterr().err
    assert rc == 2
    assert f"origin/{branch}" in err, err
