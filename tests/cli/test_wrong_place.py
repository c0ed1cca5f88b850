"""Run in the wrong folder, or with a mistyped --config: one line saying what was looked for and
where, not a git error about "." or a configuration "problem" with no key."""
from __future__ import annotations

import pytest

from bot.cli.main import main

COMMANDS = (["status"], ["plan"], ["ledger", "show", "#1"], ["apply", "chain-1"], ["resolve", "chain-1"])


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_no_config_no_fork_and_no_repository_here(tmp_path, monkeypatch, capsys, command):
    monkeypatch.chdir(tmp_path)
    assert main(command) == 2
    assert capsys.readouterr() == ("", (
        "forksync: no forksync.yml was found in the current directory, no --fork was given, and the current "
        f"directory {tmp_path} is not a git repository: run forksync in the fork's checkout, or name the fork "
        "with --fork PATH|URL or with --config FILE\n"))


def test_a_configuration_naming_no_fork_outside_a_repository(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "forksync.yml").write_text("upstream: {url: https://github.com/triton-lang/triton}\n")
    assert main(["status"]) == 2
    assert capsys.readouterr().err == (
        "forksync: forksync.yml names no fork.url, no --fork was given, and the current directory "
        f"{tmp_path} is not a git repository: run forksync in the fork's checkout, or name the fork with "
        "--fork PATH|URL or with --config FILE\n")


def test_a_config_file_that_does_not_exist(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for command in (["status"], ["plan"]):
        assert main(["--config", "examples/trition-fork.yml", *command]) == 2
        assert capsys.readouterr() == ("", f"forksync: the configuration file {tmp_path}/examples/trition-fork.yml "
                                           "does not exist\n")


def test_a_default_ref_the_repository_lacks_names_the_branch_its_head_is(tmp_path, monkeypatch, capsys):
    """``main`` is the CLI's default for upstream.ref and fork.ref; a repository whose branch is
    ``master`` gets one line naming that branch and how to pass it, not only "not found"."""
    import subprocess

    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b",
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q", "-b", "master", "up"], cwd=tmp_path, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "one"], cwd=tmp_path / "up", check=True, env=env)
    subprocess.run(["git", "clone", "-q", "--bare", "up", "fork.git"], cwd=tmp_path, check=True, env=env)
    monkeypatch.chdir(tmp_path)
    assert main(["--upstream", "up", "--upstream-ref", "master", "--fork", "fork.git", "status"]) == 2
    assert capsys.readouterr().err == (
        f"forksync: ref 'main' not found in repository fork ({tmp_path}/fork.git) (check the branch or sha, or fetch "
        "it: `git fetch <remote> main`); fork.ref was not given and `main` is its default: this repository's HEAD is "
        "`master` (--fork-ref master)\n")
    assert main(["--upstream", "up", "--fork", "fork.git", "--fork-ref", "master", "status"]) == 2
    assert "upstream.ref was not given and `main` is its default: this repository's HEAD is `master` " \
           "(--upstream-ref master)\n" in capsys.readouterr().err
    assert main(["--upstream", "up", "--upstream-ref", "master", "--fork", "fork.git", "--fork-ref", "nope", "status"]) == 2
    assert "is its default" not in capsys.readouterr().err
