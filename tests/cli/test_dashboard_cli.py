"""``forksync dashboard``: names for the pages' links, and bad input answered before serving."""
from __future__ import annotations

from bot.cli.dashboard import fork_name, github_name
from bot.cli.main import main
from bot.config.forksync import load_config


def test_names_from_urls(tmp_path):
    assert github_name("https://github.com/triton-lang/triton.git") == "triton-lang/triton"
    assert github_name("git@github.com:facebookexperimental/triton.git") == "facebookexperimental/triton"
    assert github_name("/work/mirror/repo") is None
    cfg = load_config(None, {"fork.url": str(tmp_path / "my fork.git"), "upstream.url": "https://github.com/o/u"})
    assert fork_name(cfg) == "local/my-fork"


def test_missing_database_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FORKSYNC_DB", raising=False)
    assert main(["dashboard", "--db", str(tmp_path / "none.db")]) == 2
    err = capsys.readouterr().err
    assert f"no database at {tmp_path / 'none.db'}: pass --db" in err
