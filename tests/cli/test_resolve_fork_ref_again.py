"""The command `forksync resolve` gives to run again, once a blob a partial clone lacks is there, is for the
same branch: a fork ref's `forksync/<fork ref>/<unit>` keeps its --fork-ref, as every other advice of resolve
does (``ref_arg``)."""
from __future__ import annotations

import pygit2

from bot.cli.main import main
from bot.demo.repobuilder import run_git
from tests.cli.test_partial_clone import argv, blob_of, pair, resolve_markers  # noqa: F401 (fixture)
from tests.support.partial_clone import blobless_clone
from tests.support.plan_repos import T0


def test_the_run_again_advice_for_a_fork_refs_branch_keeps_its_fork_ref(pair, tmp_path, capsys):  # noqa: F811
    """Release is cut from main with one commit of its own; u2's chain stopped at its conflict on release's
    sync branch (where the App applied it). In a blob-less clone lacking upstream u2's Ops.cpp, `resolve
    <unit> --fork-ref release` (and the branch's whole name) says what it lacks and to run
    `forksync resolve <unit>` again: run as written, that opens the default branch's forksync/<unit>."""
    fork = pair.fork
    fork.checkout("main", new_branch="release")
    fork.commit("[release] pin the version", {"README.md": "release 3.2\n"}, when=T0 + 300)
    fork.checkout("main")
    chain = f"chain-{pair.u['u2'][:12]}"
    g = ["--fork", str(fork.path), "--upstream", str(pair.up.path)]
    assert main(["apply", chain, *g, "--fork-ref", "release"]) == 1
    capsys.readouterr()
    gone = blob_of(pair.up.path, pair.u["u2"], "lib/Dialect/Ops.cpp")
    part = blobless_clone(fork.path, tmp_path / "part.git", missing=[gone])
    assert f"refs/heads/forksync/release/{chain}" in pygit2.Repository(str(part.path)).references
    for given in ([chain, "--fork-ref", "release"], [f"forksync/release/{chain}"]):
        assert main([*argv(part), "resolve", *given]) == 2
        err = capsys.readouterr().err
        assert "again once it is there" in err, err
        assert (f"run `forksync resolve {chain} --fork-ref release` again" in err
                or f"run `forksync resolve forksync/release/{chain}` again" in err), err


def test_the_continue_advice_for_a_fork_refs_pushed_resolution_keeps_its_fork_ref(pair, tmp_path, capsys):  # noqa: F811
    """u2's chain stopped on release's sync branch and a resolution was pushed on its conflict commit
    from elsewhere; a blob-less clone lacks that resolution's Ops.cpp, which --continue's marker check
    reads. Its advice to run `--continue` again once the blob is there named no --fork-ref: run as
    written, it reads the default branch's forksync/<unit>."""
    fork = pair.fork
    fork.checkout("main", new_branch="release")
    fork.commit("[release] pin the version", {"README.md": "release 3.2\n"}, when=T0 + 300)
    fork.checkout("main")
    chain = f"chain-{pair.u['u2'][:12]}"
    g = ["--fork", str(fork.path), "--upstream", str(pair.up.path)]
    assert main(["apply", chain, *g, "--fork-ref", "release"]) == 1
    capsys.readouterr()
    branch = f"forksync/release/{chain}"
    elsewhere = tmp_path / "elsewhere"
    run_git(fork.path, "worktree", "add", "-q", str(elsewhere), branch)
    resolve_markers(elsewhere / "lib/Dialect/Ops.cpp", "  return r + 1 + 0 /* fork */;\n")
    run_git(elsewhere, "commit", "-qam", "Resolve foldMul")
    run_git(fork.path, "worktree", "remove", "--force", str(elsewhere))
    resolved = blob_of(fork.path, branch, "lib/Dialect/Ops.cpp")
    part = blobless_clone(fork.path, tmp_path / "part.git", missing=[resolved])
    assert main([*argv(part), "resolve", chain, "--fork-ref", "release", "--continue"]) == 2
    err = capsys.readouterr().err
    assert f"run `forksync resolve {chain} --fork-ref release --continue` again once it is there" in err, err
