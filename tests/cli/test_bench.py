"""``forksync bench resolve`` on a small real history (tests/support/resolve_history.py)."""
from __future__ import annotations

import json

from bot.cli import progress as prog
from bot.cli.main import main
from tests.support.merge_history import build_merge_history
from tests.support.resolve_history import build_history


def test_bench_resolve_json_table_and_bad_input(tmp_path, monkeypatch, capsys):
    h = build_history(tmp_path / "repo")
    monkeypatch.chdir(tmp_path)
    g = ["--fork", str(h.path), "--upstream", str(h.path), "--upstream-ref", "upstream", "--fork-ref", "main"]
    assert main([*g, "bench", "resolve", "--json", "--rules", "rerere,fork-deleted,upstream-file"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "forksync.resolve-bench/1"
    assert doc["chain"] == ["rerere", "fork-deleted", "upstream-file"]
    assert doc["picks"] == {"all": 7, "dev": 4, "held-out": 3}
    assert [s["why"] for s in doc["skipped"]] == ["names 2 upstream commits (a bundle)", "a revert or back-out"]
    assert doc["scores"]["all"]["chain"]["*"] == {"files": 8, "exact": 3, "ws": 0, "wrong": 0, "declined": 5,
                                                  "precision": 1.0, "coverage": 0.375}
    assert doc["fork_tip"] == h.git("rev-parse", "main") and doc["files_set_aside"]["paths"] == []
    # the default chain (resolve.rules), as tables
    assert main([*g, "bench", "resolve"]) == 0
    text = capsys.readouterr().out
    assert "resolved picks: 7 (dev 4, held-out 3); conflicting again: 7" in text
    assert "chain: rerere, fork-deleted, fork-ahead" in text and "held-out picks" in text
    # --since keeps only the later picks
    assert main([*g, "bench", "resolve", "--json", "--since", "2026-01-01"]) == 0
    assert json.loads(capsys.readouterr().out)["picks"]["all"] == 0
    # bad input: exit 2, the message names what
    assert main([*g, "bench", "resolve", "--rules", "nope"]) == 2
    assert "--rules: unknown rule(s) nope" in capsys.readouterr().err
    assert main([*g, "bench", "resolve", "--since", "yesterday"]) == 2
    assert "--since 'yesterday'" in capsys.readouterr().err
    assert main([*g[:-2], "--fork-ref", "no-such-branch", "bench", "resolve"]) == 2
    assert "no-such-branch" in capsys.readouterr().err
    assert main([*g[:-2], "bench", "resolve", "--ref", "no-such-branch"]) == 2      # --ref is --fork-ref
    assert "no-such-branch" in capsys.readouterr().err


def test_bench_resolve_merges_of_a_fork_that_syncs_by_merging(tmp_path, monkeypatch, capsys):
    h = build_merge_history(tmp_path / "repo")
    monkeypatch.chdir(tmp_path)
    g = ["--fork", str(h.path), "--upstream", str(h.path), "--upstream-ref", "upstream", "--fork-ref", "main"]
    assert main([*g, "bench", "resolve", "--json"]) == 0          # picks only (resolve.merges is off): none here
    doc = json.loads(capsys.readouterr().out)
    assert (doc["picks"]["all"], doc["merges"], doc["sources"]) == (0, False, {})
    assert main([*g, "bench", "resolve", "--json", "--merges"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["merges"] is True and doc["picks"] == {"all": 5, "dev": 3, "held-out": 2}
    assert doc["sources"]["merge"]["all"] == {"replayed": 5, "conflicting": 3, "files": 6, "files_with_markers": 1, "with_markers": 1}
    assert doc["scores"]["all"]["chain"]["*"] == {"files": 6, "exact": 2, "ws": 0, "wrong": 0, "declined": 4,
                                                  "precision": 1.0, "coverage": 0.3333}
    assert [(s["what"], s["why"][:20]) for s in doc["skipped"]] == [(h.fork["m4"], "a criss-cross merge:")]
    assert {r["source"] for r in doc["files"]} == {"merge"}
    # resolve.merges in the config does the same; --no-merges turns it off again
    (tmp_path / "forksync.yml").write_text("resolve:\n  merges: true\n")
    c = ["--config", str(tmp_path / "forksync.yml"), *g]
    assert main([*c, "bench", "resolve"]) == 0
    text = capsys.readouterr().out
    assert "resolved picks and merges: 5 (dev 3, held-out 2); conflicting again: 3" in text
    assert ("merges of upstream: 5 (dev 3, held-out 2); conflicting again: 3 in 6 files (held-out 1 in 2); landed with "
            "conflict markers (scored, flagged): 1 (1 files)") in text
    assert main([*c, "bench", "resolve", "--json", "--no-merges"]) == 0
    assert json.loads(capsys.readouterr().out)["picks"]["all"] == 0


def test_bench_resolve_reports_its_stages_off_a_terminal_and_nothing_with_quiet(tmp_path, monkeypatch, capsys):
    """Off a terminal (a CI log) the stages go to stderr as plain lines, the replay with its count;
    --quiet turns them off; stdout holds only the document."""
    h = build_history(tmp_path / "repo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(prog, "AFTER_S", 0.0)          # the history is small: show every stage
    g = ["--fork", str(h.path), "--upstream", str(h.path), "--upstream-ref", "upstream", "--fork-ref", "main"]
    assert main([*g, "bench", "resolve", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["picks"]["all"] == 7
    lines = [line.split(" (")[0] for line in err.splitlines()]
    assert "forksync: finding resolved picks and merges" in lines
    assert "forksync: replaying resolved picks and merges 7/7, done" in lines
    assert "forksync: reading upstream's versions of the conflicted files 7/7, done" in lines
    assert "forksync: scoring the rules" in lines
    assert main(["-q", *g, "bench", "resolve", "--json"]) == 0
    assert capsys.readouterr().err == ""
