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
                                                   "pre_existing": [], "listed": []}
    state["pr"]["colour"] = "red"
    f.write_text(json.dumps(state))
    assert main(["gate", "explain", "--pr-state", str(f)]) == 2
    assert "pr: unknown field(s) ['colour']" in capsys.readouterr().err


def _result(suite, sha, tests, platform="cpu"):
    """A runner result file's content: ``tests`` maps test id → outcome."""
    from gpu_runner.result import Counts, Environment, RunResult, TestResult, outcome_for
    from gpu_runner.saturation import RunFacts, judge

    ts = tuple(TestResult(id=i, name=i, outcome=o) for i, o in tests.items())
    c = Counts(total=len(ts), **{k: sum(t.outcome == k for t in ts) for k in ("passed", "failed", "error", "skipped")})
    verdict, reasons = judge(RunFacts(expected_tests=10, report_state="ok", tests=ts, counts=c,
                                      exit_code=1 if c.failed or c.error else 0))
    return RunResult(suite=suite, level="L1", commit=sha, platform=platform, verdict=verdict,
                     outcome=outcome_for(reasons), reasons=reasons, counts=c, tests=list(ts),
                     environment=Environment(runner_id="t")).to_json()


CONFIG = """\
areas:
  - {name: docs, paths: ["docs/**"]}
suites:
  - name: kernels
    command: pytest
    report: {format: junit, path: out/k.xml}
    expected_tests: 10
"""


def test_gate_explain_dry_run_on_a_real_repository(tmp_path, capsys):
    from bot.demo.repobuilder import RepoBuilder

    r = RepoBuilder.init(tmp_path / "repo")
    base = r.commit("base", {"src/a.py": "x = 1\n", "docs/index.rst": "Title\n=====\n"}, when=1_700_000_000)
    r.git("checkout", "-q", "-b", "topic")
    clean = r.commit("a clean change", {"src/a.py": "x = 2\n", "docs/index.rst": "Title\n=======\n\ntext\n"},
                     when=1_700_000_100)
    cfg = tmp_path / "forksync.yml"
    cfg.write_text(CONFIG)
    results = tmp_path / "results"
    results.mkdir()
    tests = {f"t::{i}": "passed" for i in range(10)}
    (results / "base.json").write_text(_result("kernels", base, tests))
    (results / "head.json").write_text(_result("kernels", clean, tests))
    argv = ["gate", "explain", "--repo", str(r.path), "--base", "main", "--head", "topic", "--results", str(results),
            "--config", str(cfg)]
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("## Ready to merge\n")

    # nine of the ten tests marked skip on the head: red by count, and newly skipped against the base
    hidden = {"t::0": "passed", **{f"t::{i}": "skipped" for i in range(1, 10)}}
    skipper = r.commit("skip the tests it breaks", {"src/a.py": "x = 3\n"}, when=1_700_000_200)
    (results / "head.json").write_text(_result("kernels", skipper, hidden))
    assert main(argv + ["--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [(f["code"], f["subject"]) for f in out["blocking"]] == [("suite-error", "kernels/cpu"),
                                                                    ("newly-skipped", "kernels/cpu")]
    assert "9 skipped or xfail tests do not count" in out["blocking"][0]["detail"]

    # a 9-character, tab-terminated conflict left behind, and a conflict commit in the range
    (results / "head.json").unlink()
    up = "a" * 40
    r.commit("resolve", {"src/a.py": "<<<<<<<<<\tHEAD\nx = 1\n=========\nx = 3\n>>>>>>>>>\tupstream\n"},
             when=1_700_000_300)
    marker = r.commit(f"conflict picking x\n\nForksync-Conflict: {up}\n", {"src/b.py": "y = 1\n"}, when=1_700_000_400)
    assert main(argv + ["--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [(f["code"], f["subject"]) for f in out["blocking"]] == [
        ("conflict-markers", ""), ("conflict-commit", marker[:12]), ("missing-result", "kernels/cpu")]
    assert out["blocking"][0]["detail"] == "the head adds conflict markers in: src/a.py"

    assert main(["gate", "explain", "--repo", str(r.path), "--base", "main", "--head", "nope"]) == 2
    assert "ref 'nope' not found in repository" in capsys.readouterr().err
    assert main(["gate", "explain", "--repo", str(r.path), "--base", "main"]) == 2
    assert "(missing: --head)" in capsys.readouterr().err


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
