"""Breaks of the runner's report reading and verdict (helper ``valgate``): real lit and pytest runs
whose correct outcome the runner misjudges, and benchmark values that are no measurement."""
from __future__ import annotations

import json
import sys

import pytest
import yaml

from bot.config.suites import SuiteConfig
from bot.validation.backends import LocalBackend
from gpu_runner.runner import run_local
from tests.gpu_runner.test_runner import LIT_SUITE, PYTEST, codes, commit, suite

#: six lit tests that pass (no failing one: a green suite)
LIT_GREEN = {
    "lit/lit.cfg.py": LIT_SUITE["lit/lit.cfg.py"],
    **{f"lit/t{i}.txt": "# RUN: echo hello | grep hello\n" for i in range(1, 7)},
}


def test_a_sharded_lit_suite_whose_shards_all_pass_is_green(repo, tmp_path):
    """A lit suite with ``shards: 2`` (docs/gpu-runners.md "Sharding": lit gets LIT_NUM_SHARDS /
    LIT_RUN_SHARD) whose six tests all pass. What a user sees: every shard red with
    ``count-disagrees-with-harness: the report holds 3 tests but the harness reported 6`` — lit's
    ``Total Discovered Tests:`` counts the whole suite (the other shard's tests are "Excluded"),
    while the shard ran 3 (``-- Testing: 3 of 6 tests``, ``(k of 3)``) — so the merged result is red
    and the PR can never merge. What they should see: a green result with 6 tests that ran."""
    sha = commit(repo, LIT_GREEN, "a lit suite")
    text = yaml.safe_dump({"suites": [dict(name="litsuite", command="lit -v lit", report={"format": "lit", "path": "-"},
                                           expected_tests=6, timeout_s=120, infra_retries=0, shards=2)]})
    s = SuiteConfig.model_validate(yaml.safe_load(text)["suites"][0])
    r = LocalBackend(tmp_path / "work", remote_url=None, python=sys.executable).run_sync(repo, sha, s, "cpu", text)
    assert "Excluded" in r.stdout_tail          # lit really ran as shards
    assert [(x.code, x.detail) for x in r.reasons] == []
    assert (r.verdict, r.shard, r.counts.ran) == ("green", "all/2", 6)


def test_a_lit_run_with_a_filter_counts_the_tests_it_selected(repo):
    """A lit suite whose command leaves some tests out (``lit -v --filter-out 't[56]' lit``, or
    ``LIT_FILTER_OUT`` in its env) — a common way to keep slow tests out of L1. Four tests run and
    pass and ``expected_tests: 4``. What a user sees: red ``count-disagrees-with-harness: the report
    holds 4 tests but the harness reported 6`` (lit's ``Total Discovered Tests`` includes the
    excluded ones). What they should see: green — lit itself says ``-- Testing: 4 of 6 tests`` and
    ``(k of 4)``."""
    commit(repo, LIT_GREEN, "a lit suite")
    r = run_local(suite(build=None, command="lit -v --filter-out 't[56]' lit", report={"format": "lit", "path": "-"},
                        expected_tests=4), repo, "HEAD")
    assert "Testing: 4 of 6 tests" in r.stdout_tail
    assert (r.verdict, codes(r), r.counts.ran) == ("green", [], 4)


def test_a_junit_glob_of_two_pytest_runs_is_green(repo):
    """docs/validation.md: a JUnit report is "one file or a glob (merged)". A suite running two
    pytest invocations, each writing its own file (``out/*.xml``), 3 + 3 tests all passing. What a
    user sees: red ``count-disagrees-with-harness: the report holds 6 tests but the harness
    reported 3`` — only pytest's *last* summary line is taken as the harness count. What they
    should see: green (both runs' summaries together say 6, as the merged report does)."""
    commit(repo, {"tests2/test_more.py": "import pytest\n\n@pytest.mark.parametrize('x', [1, 2, 3])\n"
                                         "def test_more(x):\n    assert x\n"}, "a second test folder")
    cmd = f"{PYTEST} tests --junitxml=out/a.xml && {PYTEST} tests2 --junitxml=out/b.xml"
    r = run_local(suite(command=cmd, report={"format": "junit", "path": "out/*.xml"}, expected_tests=6), repo, "HEAD")
    assert r.counts.ran == 6 and r.counts.failed == 0
    assert (r.verdict, codes(r)) == ("green", [])


BENCH_TEMPLATE = """\
import json, os
os.makedirs("out", exist_ok=True)
value = float("{value}")
json.dump({{"schema": "forksync-bench/1", "points": [{{
    "benchmark": "matmul", "shape": "64x64x64", "dtype": "fp16", "impl": "triton", "metric": "tflops",
    "unit": "TFLOP/s", "value": value, "median_ms": 0.0, "repeat_medians_ms": [0.0, 0.0, 0.0], "repeats": 3,
    "ok": True}}]}}, open("out/bench.json", "w"))
"""


@pytest.mark.parametrize("value", ["inf", "nan"])
def test_a_non_finite_benchmark_value_is_not_a_green_measurement(repo, value):
    """An L2 benchmark whose timer read 0 ms writes ``"value": Infinity`` TFLOP/s (Python's json
    writes it so; a 0/0 gives NaN). What a user sees: a green L2 result with an ``ok`` point of
    value inf/nan, which enters the trunk series (and silences its regression detection, see
    tests/l2/test_valgate_breaks.py). What they should see: a red result naming the point (it is
    no measurement), or at least the point not counted as ok."""
    commit(repo, {"bench.py": BENCH_TEMPLATE.format(value=value)}, "bench")
    r = run_local(suite(name="bench", level="L2", build=None, command="python3 bench.py",
                        report={"format": "benchmark-json", "path": "out/bench.json"}, expected_tests=None), repo,
                  "HEAD")
    assert len(r.benchmarks) == 1
    ok_points = [p for p in r.benchmarks if p.ok]
    assert r.verdict == "red" or ok_points == [], (r.verdict, json.loads(r.to_json())["benchmarks"])


#: What pytest 9.2.0 with pytest-rerunfailures (``--reruns 2``) leaves behind when ``test_flaky``
#: fails twice and passes on its third try and ``test_ok`` passes: one ``<testcase>`` per *attempt*
#: (the reruns written without a child, i.e. as passes), while the testsuite's own ``tests="2"``
#: and pytest's summary count tests. Captured from a real run.
RERUN_JUNIT = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0" '
    'failures="0" skipped="0" tests="2" time="0.066" timestamp="2026-12-04T15:28:41.386980+00:00" hostname="vm">'
    '<testcase classname="tests.test_f" name="test_flaky" time="0.001" />'
    '<testcase classname="tests.test_f" name="test_flaky" time="0.001" />'
    '<testcase classname="tests.test_f" name="test_flaky" time="0.001" />'
    '<testcase classname="tests.test_f" name="test_ok" time="0.000" /></testsuite></testsuites>')
RERUN_SUMMARY = "2 passed, 2 rerun in 0.04s"


def test_a_flaky_test_that_passes_on_a_rerun_is_counted_once(repo):
    """A suite run with pytest-rerunfailures (``--reruns 2``, common for flaky GPU tests), two tests,
    ``expected_tests: 2``; one test passes on its third try. What a user sees: red with
    ``count-mismatch: 4 tests ran, the suite expects exactly 2 (more: set expected_tests: 4)`` and
    ``count-disagrees-with-harness`` — each rerun attempt is counted as a test that ran (and the
    advice to raise expected_tests to 4 is wrong: the next run without a rerun would be red again).
    What they should see: green, 2 tests ran (the last attempt of each test is its outcome)."""
    commit(repo, {"emit.py": f"import os\nos.makedirs('out', exist_ok=True)\n"
                             f"open('out/junit.xml', 'w').write({RERUN_JUNIT!r})\nprint({RERUN_SUMMARY!r})\n"},
           "a suite whose pytest reran a flaky test")
    r = run_local(suite(build=None, command="python3 emit.py", expected_tests=2), repo, "HEAD")
    assert (r.verdict, codes(r), r.counts.ran, r.counts.harness_total) == ("green", [], 2, 2)
