"""`forksync bench resolve` and `forksync dashboard` meet a mistyped ref or a repository path that
names nothing as `status` and `plan` do (``bot.cli.ledger.state_errors``): the ref, the near
name ("did you mean"), and where the setting was given (the flag, or the key at
FILE:LINE:COLUMN). Both said only "ref 'main-perf' not found …" or "repository path … does not
exist", which names neither the near branch nor the key to fix (ROCm/triton's fork branch is
`main_perf`)."""
from __future__ import annotations

import pytest

from bot.demo.repobuilder import RepoBuilder
from tests.support.cli import run

T0 = 1_775_000_000          # 2026-03-31
DAY = 86_400


@pytest.fixture
def rocm(tmp_path, monkeypatch):
    """A clone of upstream whose fork branch is `main_perf` beside `main` (ROCm/triton's shape);
    the working folder is ``tmp_path``."""
    up = RepoBuilder.init(tmp_path / "triton")
    up.commit("[CI] bump yapf version (#4997)", {"a.py": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "rocm")
    fork.checkout("main", new_branch="main_perf")
    fork.commit("Add gemm tuning configs for weekly tuning CI (#662)", {"tune.py": "t\n"}, when=T0 + DAY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FORKSYNC_DB", raising=False)
    return fork


COMMANDS = [["bench", "resolve"], ["dashboard", "--port", "0"]]


@pytest.mark.parametrize("command", COMMANDS, ids=["bench-resolve", "dashboard"])
def test_a_mistyped_fork_ref_names_the_branch_it_meant_and_the_flag(rocm, capsys, command):
    rc, out, err = run(capsys, ["--upstream", "rocm", "--upstream-ref", "main", "--fork", "rocm", "--fork-ref", "main-perf",
                                *command])
    assert (rc, out) == (2, "")
    assert "ref 'main-perf' not found in repository fork" in err
    assert "did you mean `main_perf`?" in err
    assert "given by --fork-ref" in err


@pytest.mark.parametrize("command", COMMANDS, ids=["bench-resolve", "dashboard"])
def test_a_mistyped_ref_in_a_file_names_its_key_line_and_column(rocm, tmp_path, capsys, command):
    (tmp_path / "rocm.yml").write_text("upstream:\n  ref: main\nfork:\n  ref: main-perf\n")
    rc, _, err = run(capsys, ["--config", "rocm.yml", "--upstream", "rocm", "--fork", "rocm", *command])
    assert rc == 2
    assert "did you mean `main_perf`?" in err and "fork.ref at rocm.yml:4:8" in err


@pytest.mark.parametrize("command", COMMANDS, ids=["bench-resolve", "dashboard"])
def test_a_missing_upstream_repository_names_its_key(rocm, tmp_path, capsys, command):
    (tmp_path / "rocm.yml").write_text("upstream:\n  url: tritn\n  ref: main\nfork:\n  url: rocm\n  ref: main_perf\n")
    rc, _, err = run(capsys, ["--config", "rocm.yml", *command])
    assert rc == 2
    assert f"repository path {tmp_path}/tritn does not exist" in err
    assert "upstream.url at rocm.yml:2:8" in err
