"""End to end on the demo scenario: the CLI's ledger, pins and plan against the dispositions the
scenario knows by construction (bot/demo/scenario.py), through ``forksync`` itself."""
from __future__ import annotations

import contextlib
import io
import json

import pytest

from bot.cli.main import main as cli_main
from bot.demo.scenario import build_scenario


def run_json(*argv: str) -> dict:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = cli_main(list(argv))
    assert rc == 0, buf.getvalue()
    return json.loads(buf.getvalue())


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    return build_scenario(tmp_path_factory.mktemp("demo"))


def test_every_upstream_commit_gets_its_true_disposition(scenario):
    cfg = str(scenario.config_path)
    ledger = run_json("--config", cfg, "ledger", "export", "--json")
    got = {e["sha"]: e["disposition"] for e in ledger["entries"]}
    assert len(got) == 18
    for label, want in scenario.expected.items():
        assert got[scenario.sha[label]] == want.value, label
    by_sha = {e["sha"]: e for e in ledger["entries"]}
    rules = {label: [ev["rule"] for ev in by_sha[scenario.sha[label]]["evidence"]]
             for label in ("u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9", "u17")}
    assert rules["u1"][0] == "trailer:Upstream-Commit"
    assert rules["u2"][0] == "cherry-picked-from"
    assert rules["u3"][0] == "patch-id"
    assert rules["u4"][0] == rules["u5"][0] == "pr-citation"
    assert "revert" in rules["u6"]
    assert by_sha[scenario.sha["u6"]]["fork_commit"] == scenario.fork_sha["p6"]
    assert by_sha[scenario.sha["u4"]]["fork_commit"] == scenario.fork_sha["bundle"]
    assert by_sha[scenario.sha["u17"]]["isolated"] is True


def test_pins_and_metrics(scenario):
    st = run_json("--config", str(scenario.config_path), "status", "--json")
    assert st["commits_in_range"] == 18
    assert st["frontier"]["sha"] == scenario.sha["u9"]          # the urgent pick of u17 does not move it
    assert st["contiguous_pin"]["sha"] == scenario.sha["u5"]    # u6 was backed out
    # upstream tip u18 is 18 h after the base; the frontier u9 is 9 h after it
    assert st["days_behind"] == pytest.approx(9 / 24, abs=1e-6)
    assert st["backlog"] == {"total": 2, "by_disposition": {"DEFERRED_BLOCKED": 1, "REVERTED": 1}, "reverted_after_merge": [], "holes": []}


def test_plan_partitions_pending_commits_into_a_bundle_and_two_chains(scenario):
    plan = run_json("--config", str(scenario.config_path), "plan", "--json")
    units = {u["id"]: u for u in plan["units"]}
    s = scenario.sha
    bundle = units[f"bundle-{s['u10'][:12]}"]
    assert [i["sha"] for i in bundle["items"]] == [s["u10"], s["u11"], s["u15"], s["u16"], s["u18"]]
    ws_chain = units[f"chain-{s['u12'][:12]}"]
    assert [i["sha"] for i in ws_chain["items"]] == [s["u12"], s["u13"]]
    assert "warp-specialization" in ws_chain["items"][0]["reason"]
    layout_chain = units[f"chain-{s['u14'][:12]}"]
    assert layout_chain["items"][0]["conflicts"] == ["include/triton/Dialect/TritonGPU/IR/TritonGPUAttrDefs.td"]
    assert len(units) == 3
    # planning again yields the same units
    again = run_json("--config", str(scenario.config_path), "plan", "--json")
    assert [u["id"] for u in again["units"]] == [u["id"] for u in plan["units"]]



def test_as_of_before_either_history_is_a_clear_error_not_todays_state(scenario, capsys):
    rc = cli_main(["--config", str(scenario.config_path), "status", "--as-of", "2026-01-04", "--json"])
    assert rc == 2
    assert "has no commit yet" in capsys.readouterr().err


def test_applying_a_unit_again_says_it_is_in_flight(tmp_path):
    s = build_scenario(tmp_path / "d")
    cfg = str(s.config_path)
    unit = f"bundle-{s.sha['u10'][:12]}"
    first = run_json("--config", cfg, "apply", unit, "--json")
    assert first["created"] is True and len(first["picked"]) == 5
    again = run_json("--config", cfg, "apply", unit, "--json")
    assert again["in_flight"] is True and again["branch"] == f"forksync/{unit}"
    assert again["already"] == [s.sha[k] for k in ("u10", "u11", "u15", "u16", "u18")]


def test_a_demo_into_a_folder_that_holds_one_is_a_clear_error(tmp_path, capsys):
    """``forksync demo --dir DIR`` run twice: one line naming the folder, exit 2, nothing changed."""
    from bot.cli.main import main
    (tmp_path / "fork").mkdir()
    assert main(["demo", "--dir", str(tmp_path), "--local-only"]) == 2
    out = capsys.readouterr()
    assert (out.out, out.err) == ("", f"forksync: {tmp_path} already holds a demo scenario; choose an empty folder (or remove it)\n")
    assert [p.name for p in tmp_path.iterdir()] == ["fork"]
