"""The validation sub-commands end to end through ``forksync`` (bot.cli.main.main)."""
from __future__ import annotations

import json

import numpy as np

from bot.cli.main import main
from tests.git.test_bisect import make_history

H, B = "h" * 40, "b" * 40


def test_gate_explain(tmp_path, capsys):
    state = {"pr": {"number": 7, "head_sha": H, "base_sha": B, "head_contains_base": True, "areas": ["amd"],
                    "results": [{"suite": "kernels", "sha": H, "platform": "cpu", "verdict": "pass"}],
                    "reviews": [{"login": "carol", "state": "APPROVED", "time": 5}]},
             "suites": [{"name": "kernels", "platforms": ["cpu", "h200"]}],
             "areas": [{"name": "amd", "owners": ["carol"]}]}
    f = tmp_path / "state.json"
    f.write_text(json.dumps(state))
    assert main(["gate", "explain", "--pr-state", str(f)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("## Blocked: 1 condition not met\n")
    assert f"| ❌ | `missing-result` | kernels/h200 | no result on {H[:12]} |" in out
    state["pr"]["results"].append({"suite": "kernels", "sha": H, "platform": "h200", "verdict": "pass"})
    f.write_text(json.dumps(state))
    assert main(["gate", "explain", "--pr-state", str(f), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"allowed": True, "actions": ["merge"], "blocking": [],
                                                   "pre_existing": []}
    state["pr"]["colour"] = "red"
    f.write_text(json.dumps(state))
    assert main(["gate", "explain", "--pr-state", str(f)]) == 2
    assert "pr: unknown field(s) ['colour']" in capsys.readouterr().err


def test_l2_detect(tmp_path, capsys):
    rng = np.random.default_rng(4)
    x = 100 * (1 + 0.02 * rng.standard_normal(80))
    x[50:] *= 0.9
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"values": [float(v) for v in x]}))
    assert main(["l2", "detect", str(f)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("80 points; noise σ ") and "point 50: " in out and "REGRESSION ALERT" in out
    f.write_text(json.dumps([1, "x"]))
    assert main(["l2", "detect", str(f)]) == 2
    assert "expected a list of positive numbers" in capsys.readouterr().err


def test_bisect_command(tmp_path, capsys):
    repo, root, shas = make_history(tmp_path, 20, {13: "broken"})
    issue = tmp_path / "issue.md"
    assert main(["bisect", "--repo", repo, "--good", root, "--bad", shas[-1], "--cmd", "test ! -f broken",
                 "--issue-out", str(issue)]) == 0
    out = capsys.readouterr().out
    assert f"culprit {shas[12]} (verified) — [sync] upstream change 13" in out
    assert f"**Culprit:** `{shas[12]}` — [sync] upstream change 13" in issue.read_text()
    assert main(["bisect", "--repo", repo, "--good", shas[-1], "--bad", root, "--cmd", "true"]) == 2
    assert "is not an ancestor of bad" in capsys.readouterr().err
