"""Rewritten upstream history: forksync's own records that name vanished commits are reported,
never silently dropped (bad input gets a clear message and loses nothing)."""
from __future__ import annotations

import contextlib
import io
import json

from bot.cli.main import main as cli_main
from bot.demo.scenario import build_scenario


def test_force_pushed_upstream_is_reported(tmp_path, capsys):
    s = build_scenario(tmp_path / "d")
    up = s.upstream
    # rewrite upstream after #102: same changes, new committer dates → new shas
    up.git("checkout", "-q", "-b", "rewritten", s.sha["u2"])
    for label in [f"u{i}" for i in range(3, 19)]:
        up.git("cherry-pick", "--allow-empty", "--keep-redundant-commits", s.sha[label], when=1_800_000_000)
    up.git("branch", "-f", "main", "rewritten")
    up.git("checkout", "-q", "main")
    cfg = str(s.config_path)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cli_main(["--config", cfg, "status", "--json"]) == 0
    doc = json.loads(buf.getvalue())
    named = {(r["upstream_sha"], r["rule"]) for r in doc["unresolved_provenance"]}
    assert (s.sha["u9"], "trailer:Upstream-Wont-Port") in named      # the won't-port decision
    assert (s.sha["u7"], "note") in named                              # the deferral note
    capsys.readouterr()
    assert cli_main(["--config", cfg, "status"]) == 0
    err = capsys.readouterr().err
    assert "not in the upstream range" in err and "rewritten" in err
