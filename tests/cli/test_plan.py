"""``forksync plan`` / ``forksync apply`` end to end on a real upstream/fork pair."""
from __future__ import annotations

import json

from bot.cli.main import main
from bot.demo.repobuilder import run_git
from tests.support.plan_repos import build_pair


def test_plan_json_and_apply(tmp_path, monkeypatch, capsys):
    pair = build_pair(tmp_path)
    monkeypatch.chdir(tmp_path)
    g = ["--fork", str(pair.fork.path), "--upstream", str(pair.up.path)]
    assert main(["plan", "--json", *g]) == 0
    out = json.loads(capsys.readouterr().out)
    u = pair.u
    assert out["schema"] == "forksync.plan/1" and out["pending"] == 9 and out["base"] == pair.fork_tip
    assert [(x["id"], x["kind"], [i["sha"] for i in x["items"]]) for x in out["units"]] == [
        (f"bundle-{u['u1'][:12]}", "bundle", [u["u1"], u["u3"], u["u6"], u["u7"], u["u9"]]),
        (f"chain-{u['u2'][:12]}", "chain", [u["u2"], u["u4"]]),
        (f"chain-{u['u5'][:12]}", "chain", [u["u5"]])]
    assert out["units"][1]["items"][0] == {"sha": u["u2"], "pr": 102, "subject": "[dialect] fold mul overflow (#102)",
                                           "reason": "predicted cherry-pick conflicts in lib/Dialect/Ops.cpp",
                                           "conflicts": ["lib/Dialect/Ops.cpp"]}
    assert [x["sha"] for x in out["no_op_candidates"]] == [u["u8"]]
    assert out["chain_size_cap"] == 25 and [x["depends_on"] for x in out["units"]] == [[], [], []]

    assert main(["apply", f"bundle-{u['u1'][:8]}", *g]) == 0
    text = capsys.readouterr().out
    assert f"forksync/bundle-{u['u1'][:12]} created" in text and text.count("  picked ") == 5
    # re-planning: the bundle is in flight, the chains keep their ids
    assert main(["plan", "--json", *g]) == 0
    again = json.loads(capsys.readouterr().out)
    assert [x["id"] for x in again["units"]] == [f"chain-{u['u2'][:12]}", f"chain-{u['u5'][:12]}"]
    assert [b["name"] for b in again["in_flight"]] == [f"forksync/bundle-{u['u1'][:12]}"]
    # a chain that conflicts: exit 1, with the files
    assert main(["apply", f"chain-{u['u2'][:12]}", *g]) == 1
    text = capsys.readouterr().out
    assert "conflicts in: lib/Dialect/Ops.cpp" in text
    assert run_git(pair.fork.path, "rev-parse", f"forksync/chain-{u['u2'][:12]}").strip() == pair.fork_tip
    # an unknown unit: exit 2 with the ids
    assert main(["apply", "chain-nope", *g]) == 2
    assert f"units: chain-{u['u2'][:12]}" in capsys.readouterr().err
