"""Saturated validation (gpu_runner/saturation.py): every case that must turn a run red, table-driven
over plain facts, with the exact reasons."""
from __future__ import annotations

import pytest

from gpu_runner.result import BenchmarkPoint, Counts, Environment, RunResult, TestResult, outcome_for
from gpu_runner.saturation import RunFacts, judge, missing_required, ran_short


def make_tests(passed=0, failed=0, error=0, skipped=0):
    out = []
    for outcome, n in (("passed", passed), ("failed", failed), ("error", error), ("skipped", skipped)):
        out += [TestResult(id=f"t::{outcome}{i}", name=f"{outcome}{i}", outcome=outcome) for i in range(n)]
    return tuple(out)


def facts(passed=30, failed=0, error=0, skipped=0, harness=None, **kw):
    t = make_tests(passed, failed, error, skipped)
    c = Counts(total=len(t), passed=passed, failed=failed, error=error, skipped=skipped,
               harness_total=len(t) if harness is None else harness)
    base = dict(expected_tests=30, report_state="ok", report_path="out/junit.xml", exit_code=1 if failed or error else 0,
                tests=t, counts=c, timeout_s=900.0)
    base.update(kw)
    return RunFacts(**base)


def codes(f):
    verdict, reasons = judge(f)
    return verdict, [r.code for r in reasons]


CASES = [
    # (id, facts, verdict, reason codes)
    ("all-passed", facts(), "green", []),
    ("report-missing", facts(report_state="missing", tests=(), counts=Counts()), "red", ["report-missing"]),
    ("report-stale", facts(report_state="stale"), "red", ["report-stale"]),
    ("report-unparsable", facts(report_state="unparsable", report_error="out/junit.xml: not valid JUnit XML"),
     "red", ["report-unparsable"]),
    ("zero-tests", facts(passed=0, expected_tests=None, min_tests=1, exit_code=5), "red",
     ["runner-crashed", "zero-tests", "below-floor"]),
    ("zero-tests-exit-0", facts(passed=0, expected_tests=None, min_tests=None, exit_code=0), "red", ["zero-tests"]),
    ("all-skipped", facts(passed=0, skipped=30), "red", ["zero-tests", "count-mismatch"]),
    ("all-skipped-floor-only", facts(passed=0, skipped=30, expected_tests=None, min_tests=1), "red",
     ["zero-tests", "below-floor"]),
    # skipped and xfail (JUnit <skipped>) tests do not count towards expected_tests
    ("nine-of-ten-skipped", facts(passed=1, skipped=9, expected_tests=10), "red", ["count-mismatch"]),
    ("skipped-on-top-of-expected", facts(passed=30, skipped=2), "green", []),
    ("skips-hide-missing-tests", facts(passed=28, skipped=2), "red", ["count-mismatch"]),
    ("failing-and-skipped", facts(passed=5, failed=1, skipped=4, expected_tests=10), "red",
     ["count-mismatch", "test-failures"]),
    ("per-platform-count", facts(passed=28, skipped=2, expected_tests=28, expected_field="expected_tests.cpu"),
     "green", []),
    ("fewer-than-expected", facts(passed=28), "red", ["count-mismatch"]),
    ("more-than-expected", facts(passed=31), "red", ["count-mismatch"]),
    ("below-floor", facts(passed=8, skipped=2, expected_tests=None, min_tests=9), "red", ["below-floor"]),
    ("at-floor", facts(passed=9, skipped=2, expected_tests=None, min_tests=9), "green", []),
    ("harness-disagrees", facts(harness=31), "red", ["count-disagrees-with-harness"]),
    ("test-failures", facts(passed=28, failed=1, error=1), "red", ["test-failures"]),
    ("timed-out", facts(timed_out=True, exit_code=None), "red", ["timed-out"]),
    ("killed-by-signal", facts(exit_code=-9), "red", ["runner-crashed"]),
    ("internal-error-exit", facts(exit_code=3), "red", ["runner-crashed"]),
    ("exit-1-without-failures", facts(exit_code=1), "red", ["exit-status-disagrees"]),
    ("exit-0-with-failures", facts(passed=29, failed=1, exit_code=0), "red", ["test-failures", "exit-status-disagrees"]),
    ("build-failed", facts(has_build=True, build_exit_code=2, exit_code=None, report_state="missing", tests=(),
                           counts=Counts()), "red", ["build-failed", "report-missing"]),
    ("infra-error-left", facts(infra_error="No space left on device", exit_code=1, report_state="missing", tests=(),
                               counts=Counts()), "red", ["infra-error", "report-missing"]),
]


@pytest.mark.parametrize("f,verdict,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_judge(f, verdict, expected):
    assert codes(f) == (verdict, expected)


def test_reasons_say_what_and_how_many():
    _, reasons = judge(facts(passed=28))
    # fewer: what to do when the change removed them on purpose, as "more" says
    assert reasons[0].detail == ("28 tests ran, the suite expects exactly 30 (fewer: tests went missing; if they "
                                 "were removed on purpose, set expected_tests: 28)")
    _, reasons = judge(facts(passed=31))
    assert reasons[0].detail == "31 tests ran, the suite expects exactly 30 (more: set expected_tests: 31)"
    _, reasons = judge(facts(passed=1, skipped=9, expected_tests=10))
    assert reasons[0].detail == ("1 tests ran, the suite expects exactly 10: 9 skipped or xfail tests do not count; "
                                 "make them run, or, if they are meant to skip here, set expected_tests: 1")
    _, reasons = judge(facts(passed=26, skipped=2, expected_tests=28, expected_field="expected_tests.h200"))
    assert reasons[0].detail == ("26 tests ran, the suite expects exactly 28: 2 skipped or xfail tests do not count; "
                                 "make them run, or, if they are meant to skip here, set expected_tests.h200: 26")
    _, reasons = judge(facts(passed=8, skipped=2, expected_tests=None, min_tests=9))
    assert reasons[0].detail == ("8 tests ran (2 skipped or xfail, which do not count), fewer than the floor "
                                 "min_tests=9: make the skipped tests run, or lower min_tests if they are meant to skip here")
    _, reasons = judge(facts(harness=31))
    assert reasons[0].detail == "the report holds 30 tests but the harness reported 31"
    _, reasons = judge(facts(passed=0, skipped=30))
    assert reasons[0].detail == "no test ran: all 30 were skipped"
    _, reasons = judge(facts(timed_out=True, exit_code=None))
    assert reasons[0].detail == "build + command ran past timeout_s=900s and were killed"
    _, reasons = judge(facts(exit_code=-9))
    assert reasons[0].detail == "the suite's command was killed by signal 9"


def test_failing_names_are_capped_at_ten():
    _, reasons = judge(facts(passed=18, failed=12))
    assert reasons == [reasons[0]] and reasons[0].code == "test-failures"
    assert reasons[0].detail.startswith("12 failed, 0 errors: t::failed0, t::failed1,")
    assert reasons[0].detail.endswith("t::failed9 and 2 more")


def point(ok=True, shape="64x64x64"):
    return BenchmarkPoint(benchmark="matmul", shape=shape, dtype="fp16", impl="triton", metric="tflops",
                          unit="TFLOP/s", value=1.0, ok=ok)


BENCH = [
    ("bench-ok", dict(benchmarks=(point(), point()), min_tests=2), "green", []),
    ("bench-empty", dict(benchmarks=(), min_tests=1), "red", ["zero-tests", "below-floor"]),
    ("bench-short", dict(benchmarks=(point(),), min_tests=2), "red", ["below-floor"]),
    ("bench-count", dict(benchmarks=(point(),), expected_tests=2), "red", ["count-mismatch"]),
    ("bench-wrong-result", dict(benchmarks=(point(), point(ok=False)), min_tests=2, exit_code=1), "red",
     ["benchmark-failed"]),
    ("bench-exit-without-failed-point", dict(benchmarks=(point(),), min_tests=1, exit_code=1), "red",
     ["exit-status-disagrees"]),
]


@pytest.mark.parametrize("kw,verdict,expected", [c[1:] for c in BENCH], ids=[c[0] for c in BENCH])
def test_judge_benchmarks(kw, verdict, expected):
    f = RunFacts(level="L2", report_format="benchmark-json", report_state="ok", exit_code=kw.pop("exit_code", 0), **kw)
    assert codes(f) == (verdict, expected)


@pytest.mark.parametrize("f, counts", [
    (facts(passed=20, skipped=10), [("count-mismatch", 20, 30, True)]),
    (facts(passed=40), [("count-mismatch", 40, 30, False)]),
    (facts(passed=0, skipped=5, expected_tests=None, min_tests=3), [("zero-tests", 0, None, True),
                                                                    ("below-floor", 0, 3, True)]),
    (RunFacts(level="L2", report_format="benchmark-json", report_state="ok", exit_code=0, benchmarks=(point(),),
              expected_tests=2, min_tests=2), [("count-mismatch", 1, 2, True), ("below-floor", 1, 2, True)]),
])
def test_count_reasons_carry_their_counts_so_a_shortfall_is_told_without_words(f, counts):
    # the dashboard's "short" reads these numbers: a reworded detail changes nothing
    _, reasons = judge(f)
    assert [(r.code, r.ran, r.expected, ran_short(r)) for r in reasons] == counts
    assert [ran_short(r.model_copy(update={"detail": "in other words"})) for r in reasons] == [c[3] for c in counts]
    assert [(r.ran, r.expected) for r in RunResult.from_json(_result(reasons).to_json()).reasons] == [c[1:3] for c in counts]


def _result(reasons):
    return RunResult(suite="s", level="L1", commit="c" * 40, verdict="red", outcome=outcome_for(reasons), reasons=reasons,
                     environment=Environment(runner_id="r"))


def test_nothing_is_green_by_default():
    # the facts a run has before anything is known: no report → red
    assert codes(RunFacts()) == ("red", ["runner-crashed", "report-missing"])


def test_required_suite_absent():
    reasons = missing_required(["kernels", "lit", "smoke"], ["smoke"])
    assert [(r.code, r.detail) for r in reasons] == [
        ("suite-absent", "required suite 'kernels' has no result in this run"),
        ("suite-absent", "required suite 'lit' has no result in this run")]
    assert missing_required(["kernels"], ["kernels", "extra"]) == []


def test_outcome_for_gate():
    assert outcome_for([]) == "pass"
    assert outcome_for(judge(facts(passed=29, failed=1))[1]) == "fail"
    assert outcome_for(judge(facts(passed=28, failed=1))[1]) == "error"   # short count: not trustworthy


def test_a_suite_where_no_test_ran_is_not_told_to_expect_zero_tests():
    """The shortfall's hint "if they were removed on purpose, set expected_tests: <ran>" told a
    suite that ran nothing (a collection error, a wrong path) to set expected_tests: 0, a value
    the configuration refuses (it must be at least 1)."""
    _, reasons = judge(facts(passed=0))
    [mismatch] = [r for r in reasons if r.code == "count-mismatch"]
    assert "expected_tests: 0" not in mismatch.detail, mismatch.detail
