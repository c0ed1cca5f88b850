"""The suite check run's summary: time to signal side by side, what did not run, and an
infrastructure error told apart from a failure of the commit."""
from __future__ import annotations

from pathlib import Path

from bot.validation.checks import suite_summary, title_of
from gpu_runner.result import Durations, Reason, RunResult, TestResult

ROOT = Path(__file__).resolve().parents[2]
GREEN = RunResult.from_json((ROOT / "tests/data/gpu_runner/h200-l1-green.json").read_text())


def test_summary_shows_process_wall_beside_test_bodies():
    r = GREEN.model_copy(update={"durations": Durations(command=9.7, tests=4.5, outside_tests=5.2, total=10.1),
                                 "triton_cache": "per-runner"})
    text = suite_summary(r)
    assert ("Time to signal: suite process 9.7 s wall, of which test bodies 4.5 s and 5.2 s outside them "
            "(interpreter, imports, collection, GPU start-up) · runner total 10.1 s · Triton cache per-runner.") in text


def test_a_killed_suite_names_what_did_not_run():
    tests = [TestResult(id="k::test_a", name="test_a", outcome="passed"),
             TestResult(id="k::test_b", name="test_b", outcome="failed", message="AssertionError: boom")]
    r = GREEN.model_copy(update={"verdict": "red", "outcome": "error", "tests": tests, "not_run": ["k::test_c", "k::test_d"],
                                 "reasons": [Reason(code="timed-out", detail="killed"),
                                             Reason(code="tests-not-run", detail="2 collected tests did not finish")]})
    text = suite_summary(r)
    assert "### Did not run (2: the suite stopped first)\n\n- `k::test_c`\n- `k::test_d`\n" in text
    assert "| `k::test_b` | failed | AssertionError: boom |" in text


def test_an_infrastructure_error_says_retry_on_another_runner():
    r = GREEN.model_copy(update={"verdict": "red", "outcome": "infrastructure",
                                 "reasons": [Reason(code="infra-error", detail="gpu-missing: No CUDA GPUs are available")]})
    assert title_of(r) == "Infrastructure error on the runner: retry on another runner"
    assert "**Infrastructure error, not a failure of this commit: retry on another runner.**" in suite_summary(r)
