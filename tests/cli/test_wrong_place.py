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
