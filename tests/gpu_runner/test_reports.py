"""Report parsers (gpu_runner/reports.py), the fingerprint's nvidia-smi parsing, and the result
schema against real result files from the H200 run (tests/data/gpu_runner/)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_runner.fingerprint import parse_nvidia_smi
from gpu_runner.reports import ReportError, counts_of, parse_benchmark_json, parse_junit, parse_lit, pytest_total
from gpu_runner.result import RunResult

DATA = Path(__file__).resolve().parents[1] / "data" / "gpu_runner"

JUNIT = ("""<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1"
skipped="1" tests="4" time="1.5"><testcase classname="t.test_a" name="test_ok" file="t/test_a.py" time="0.25"/>
<testcase classname="t.test_a" name="test_bad[fp16]" time="0.5">"""
         """<failure message="AssertionError: relative error 3.1e-02 exceeds bound 2.0e-03; seed=7">def test_bad():
&gt;       assert err &lt;= bound
E       AssertionError: relative error 3.1e-02 exceeds bound 2.0e-03; seed=7</failure></testcase>
<testcase classname="t.test_a" name="test_err" time="0.125"><error message="failed on setup with &quot;OSError&quot;">fixture text</error></testcase>
<testcase classname="t.test_a" name="test_skip" time="0">"""
         """<skipped type="pytest.skip" message="no GPU visible">t/test_a.py:9: no GPU visible</skipped></testcase>
</testsuite></testsuites>""")


def test_junit_outcomes_messages_and_tracebacks(tmp_path):
    p = tmp_path / "j.xml"
    p.write_text(JUNIT)
    tests = parse_junit([p])
    assert [(t.id, t.outcome, t.duration_s) for t in tests] == [
        ("t.test_a::test_ok", "passed", 0.25), ("t.test_a::test_bad[fp16]", "failed", 0.5),
        ("t.test_a::test_err", "error", 0.125), ("t.test_a::test_skip", "skipped", 0.0)]
    bad = tests[1]
    assert bad.message == "AssertionError: relative error 3.1e-02 exceeds bound 2.0e-03; seed=7"
    assert bad.traceback.splitlines()[-1] == "E       AssertionError: relative error 3.1e-02 exceeds bound 2.0e-03; seed=7"
    assert tests[0].file == "t/test_a.py" and tests[1].file is None
    c = counts_of(tests, 4)
    assert (c.total, c.passed, c.failed, c.error, c.skipped, c.ran, c.harness_total) == (4, 1, 1, 1, 1, 3, 4)


def test_junit_several_files_and_a_bare_testsuite_root(tmp_path):
    a, b = tmp_path / "a.xml", tmp_path / "b.xml"
    a.write_text(JUNIT)
    b.write_text('<testsuite name="x" tests="1"><testcase classname="" name="lonely" time="1"/></testsuite>')
    assert [t.id for t in parse_junit([a, b])][-2:] == ["t.test_a::test_skip", "lonely"]


@pytest.mark.parametrize("text", ["", "<testsuites><testsuite>", "not xml at all", "<html><body/></html>"])
def test_junit_unparsable_names_the_file(tmp_path, text):
    p = tmp_path / "j.xml"
    p.write_text(text)
    with pytest.raises(ReportError, match=r"j\.xml: not valid JUnit XML"):
        parse_junit([p])


@pytest.mark.parametrize("stdout,total", [
    ("....\n30 passed in 5.82s\n", 30),
    ("==== 2 failed, 28 passed, 1 warning in 5.40s ====\n", 30),
    ("1 failed, 27 passed, 2 skipped, 1 error, 3 deselected in 1.00s", 31),
    ("= 3 passed, 1 xfailed, 1 xpassed, 2 rerun in 0.10s =", 5),
    ("collected 0 items\n\n==== no tests ran in 0.01s ====", 0),
    ("5 passed in 1.0s\n...\n7 passed in 2.0s\n", 7),        # the last summary counts
    ("Segmentation fault (core dumped)\n", None),
])
def test_pytest_total(stdout, total):
    assert pytest_total(stdout) == total


LIT = """-- Testing: 4 tests, 2 workers --
PASS: Triton :: Conversion/a.mlir (1 of 4)
FAIL: Triton :: Conversion/b.mlir (2 of 4)
******************** TEST 'Triton :: Conversion/b.mlir' FAILED ********************
Exit Code: 1

Command Output (stderr):
--
b.mlir:12:11: error: CHECK: expected string not found in input
// CHECK: tt.dot
--

********************
UNSUPPORTED: Triton :: Conversion/c.mlir (3 of 4)
XFAIL: Triton :: Conversion/d.mlir (4 of 4)
********************
Failed Tests (1):
  Triton :: Conversion/b.mlir


Testing Time: 0.25s

Total Discovered Tests: 4
  Unsupported      : 1 (25.00%)
  Passed           : 1 (25.00%)
  Expectedly Failed: 1 (25.00%)
  Failed           : 1 (25.00%)
"""


def test_lit_output():
    tests, harness = parse_lit(LIT)
    assert harness == 4
    assert [(t.id, t.outcome) for t in tests] == [
        ("Triton :: Conversion/a.mlir", "passed"), ("Triton :: Conversion/b.mlir", "failed"),
        ("Triton :: Conversion/c.mlir", "skipped"), ("Triton :: Conversion/d.mlir", "passed")]
    b = tests[1]
    assert (b.classname, b.name, b.message) == ("Triton", "Conversion/b.mlir", "FAIL: Triton :: Conversion/b.mlir")
    assert "error: CHECK: expected string not found in input" in b.traceback
    assert b.traceback.startswith("Exit Code: 1")


def test_lit_short_run_disagrees_with_its_own_total():
    # lit killed after two results: the (k of N) lines still say 4
    tests, harness = parse_lit("\n".join(LIT.splitlines()[:3]))
    assert (len(tests), harness) == (2, 4)


@pytest.mark.parametrize("text", ["", "Segmentation fault\n", "lit: error: no tests found\n"])
def test_lit_without_results_is_unparsable(text):
    with pytest.raises(ReportError, match="no lit result lines"):
        parse_lit(text)


def test_benchmark_json_errors_name_the_field():
    with pytest.raises(ReportError, match=r"b\.json: not JSON \(line 1, column 2"):
        parse_benchmark_json("{,}", "b.json")
    with pytest.raises(ReportError, match="expected an object with schema 'forksync-bench/1'"):
        parse_benchmark_json('{"points": []}', "b.json")
    with pytest.raises(ReportError, match=r"b\.json: points\.1\.value: Input should be a valid number"):
        parse_benchmark_json(json.dumps({"schema": "forksync-bench/1", "points": [
            {"benchmark": "m", "shape": "1", "dtype": "fp16", "impl": "t", "metric": "tflops", "unit": "TFLOP/s",
             "value": 1.0},
            {"benchmark": "m", "shape": "1", "dtype": "fp16", "impl": "t", "metric": "tflops", "unit": "TFLOP/s",
             "value": "fast"}]}), "b.json")


def test_nvidia_smi_text_from_the_h200():
    banner = "| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |"
    assert parse_nvidia_smi("NVIDIA H200, 580.159.04\n", banner) == ("NVIDIA H200", 1, "580.159.04", "13.0")
    assert parse_nvidia_smi("NVIDIA H200, 580.159.04\nNVIDIA H200, 580.159.04\n", None) == (
        "NVIDIA H200", 2, "580.159.04", None)
    assert parse_nvidia_smi(None, None) == (None, 0, None, None)


# --- the schema against real results of the H200 run (docs/validation.md, "H200 run") ---------

def test_h200_green_result_reads_back():
    r = RunResult.from_json((DATA / "h200-l1-green.json").read_text())
    assert (r.suite, r.verdict, r.outcome, r.platform) == ("kernels", "green", "pass", "h200")
    assert (r.counts.total, r.counts.passed, r.counts.harness_total) == (30, 30, 30)
    e = r.environment
    assert (e.gpu_model, e.driver, e.cuda, e.torch, e.triton) == ("NVIDIA H200", "580.159.04", "13.0", "2.11.0", "3.6.0")
    assert json.loads(r.to_json())["schema"] == "forksync-result/1"


def test_h200_out_of_resources_is_a_test_failure_with_the_real_text():
    r = RunResult.from_json((DATA / "h200-l1-outofresources.json").read_text())
    assert (r.verdict, r.outcome, [x.code for x in r.reasons]) == ("red", "fail", ["test-failures"])
    assert r.failing == ("examples.kernels.test_kernels::test_matmul[ragged-128x256x64-g8-w8-s3-fp32]",
                         "examples.kernels.test_kernels::test_matmul[ragged-256x128x64-g8-w8-s3-fp32]")
    t = next(t for t in r.tests if t.outcome == "failed")
    assert t.message == ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 294912, "
                         "Hardware limit: 232448. Reducing block sizes or `num_stages` may help.")


def test_h200_without_gpu_is_red_not_skipped_green():
    r = RunResult.from_json((DATA / "h200-l1-nogpu.json").read_text())
    assert (r.verdict, r.outcome, r.counts.skipped) == ("red", "error", 30)
    assert [(x.code, x.detail) for x in r.reasons] == [("zero-tests", "no test ran: all 30 were skipped")]


def test_h200_sweep_points():
    r = RunResult.from_json((DATA / "h200-l2-sweep.json").read_text())
    assert (r.verdict, r.level, len(r.benchmarks)) == ("green", "L2", 20)
    b = next(p for p in r.benchmarks if (p.shape, p.dtype, p.impl) == ("8192x8192x8192", "bf16", "torch.matmul"))
    assert (b.unit, b.repeats, len(b.repeat_medians_ms)) == ("TFLOP/s", 5, 5)
    assert b.value == pytest.approx(2 * 8192 ** 3 / (b.median_ms * 1e-3) / 1e12)
