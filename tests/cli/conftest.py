"""Fixtures shared by the CLI tests."""
from __future__ import annotations

import pytest

from bot.cli.main import main
from tests.support.plan_repos import build_pair


@pytest.fixture
def stopped(tmp_path, monkeypatch, capsys):
    """A chain applied by the CLI and stopped at its first pick, with a conflict commit: ``(pair,
    global flags, unit id)``."""
    pair = build_pair(tmp_path)
    monkeypatch.chdir(tmp_path)
    g = ["--fork", str(pair.fork.path), "--upstream", str(pair.up.path)]
    unit = f"chain-{pair.u['u2'][:12]}"
    assert main(["apply", unit, *g]) == 1            # stops at its first pick, with a conflict commit
    capsys.readouterr()
    return pair, g, unit
