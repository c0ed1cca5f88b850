"""Failure records from the runner's result JSON, JUnit XML, lit output and raw logs."""
from __future__ import annotations

import pytest

from bot.triage.records import RecordError, from_junit, from_lit, from_log, from_run_result, normalize_test_id
from gpu_runner.result import Attempt, Environment, Reason, RunResult, TestResult

SHA = "a" * 40


@pytest.mark.parametrize("raw,norm", [
    ("python/test/unit/language/test_core.py::test_dot[64-64-fp16]", "python/test/unit/language/test_core.py::test_dot"),
    ("/home/ci/triton/python/test/unit/x.py::TestA::test_b[1-[2,3]]", "python/test/unit/x.py::TestA::test_b"),
    ("examples.kernels.test_kernels::test_add[small-fp32]", "examples/kernels/test_kernels.py::test_add"),
    ("test_k::test_busy", "test_k.py::test_busy"),
    ("python.test.unit.language.test_core.TestX::test_y[1]", "python/test/unit/language/test_core.py::TestX::test_y"),
    ("TRITON :: TritonGPU/combine.mlir", "lit:TritonGPU/combine.mlir"),
    ("job:build-wheels", "job:build-wheels"),
])
def test_normalize_test_id(raw, norm):
    assert normalize_test_id(raw) == norm


def _result(**kw) -> RunResult:
    base = dict(suite="kernels", level="L1", commit=SHA, platform="h200", verdict="red", outcome="fail",
                environment=Environment(runner_id="r1"), started_at=1_764_460_800)
    base.update(kw)
    return RunResult(**base)


def test_from_run_result_reads_tests_and_passes():
    res = _result(tests=[
        TestResult(id="examples.kernels.test_kernels::test_add[small-fp32]", name="test_add[small-fp32]", outcome="passed"),
        TestResult(id="examples.kernels.test_kernels::test_matmul[128-bf16]", name="test_matmul[128-bf16]",
                   outcome="failed", message="AssertionError: Tensor-likes are not close!",
                   traceback="E   AssertionError: Tensor-likes are not close!\nE   Mismatched elements: 3 / 16384 (0.0%)"),
    ])
    recs = from_run_result(RunResult.from_json(res.to_json()), run="nightly-1")
    assert [(r.test, r.outcome, r.run, r.platform, r.commit, r.time) for r in recs] == [
        ("examples/kernels/test_kernels.py::test_add", "passed", "nightly-1", "h200", SHA, 1_764_460_800),
        ("examples/kernels/test_kernels.py::test_matmul", "failed", "nightly-1", "h200", SHA, 1_764_460_800),
    ]
    assert recs[1].output.startswith("E   AssertionError: Tensor-likes are not close!")


def test_from_run_result_red_without_failing_test_is_a_job_record():
    res = _result(outcome="error", reasons=[Reason(code="infra-error", detail="GPU busy")],
                  attempts=[Attempt(number=1, exit_code=1,
                                    infra_error="CUDA error: all CUDA-capable devices are busy or unavailable")])
    recs = from_run_result(res.model_dump(by_alias=True), run="n2")
    assert len(recs) == 1
    r = recs[0]
    assert (r.test, r.outcome, r.stage) == ("job:kernels", "error", "job")
    assert "all CUDA-capable devices are busy" in r.text


def test_from_run_result_bad_shape_names_the_place():
    with pytest.raises(RecordError, match=r"tests\[0\] has no outcome"):
        from_run_result({"suite": "s", "commit": SHA, "tests": [{"id": "t"}]})
    with pytest.raises(RecordError, match="'tests' must be a list"):
        from_run_result({"suite": "s", "commit": SHA, "tests": {"a": 1}})


JUNIT = ("""<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="4">
<testcase classname="examples.kernels.test_kernels" name="test_add[small-fp32]" time="0.1"/>
<testcase classname="examples.kernels.test_kernels" name="test_matmul[128-bf16]" time="0.2">
  <failure message="triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144, Hardware limit: 232448.">Traceback…
triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144, Hardware limit: 232448.</failure>
</testcase>
<testcase classname="examples.kernels.test_kernels" name="test_softmax[97]" time="0.0"><skipped message="no GPU"/></testcase>
<testcase classname="examples.kernels.test_kernels" name="test_layernorm" time="0.0">"""
         """<error message="fixture failed">E  RuntimeError: boom</error></testcase>
</testsuite></testsuites>""")


def test_from_junit():
    recs = from_junit(JUNIT, run="n1", commit=SHA, platform="h200", time=5)
    assert [(r.test, r.outcome) for r in recs] == [
        ("examples/kernels/test_kernels.py::test_add", "passed"),
        ("examples/kernels/test_kernels.py::test_matmul", "failed"),
        ("examples/kernels/test_kernels.py::test_softmax", "skipped"),
        ("examples/kernels/test_kernels.py::test_layernorm", "error"),
    ]
    assert "Required: 262144" in recs[1].text


def test_from_junit_rejects_garbage():
    with pytest.raises(RecordError, match="not valid JUnit XML"):
        from_junit("<not closed", where="out/kernels-junit.xml")


@pytest.mark.parametrize("xml", [
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" '
    'skipped="0" tests="0" time="0.01"/></testsuites>',
    '<testsuite name="pytest" tests="0"></testsuite>'])
def test_from_junit_refuses_a_report_with_no_test_case(xml):
    """pytest writes such a file when it collected nothing (a path typo, a conftest that skipped the
    module, ``-k`` matching nothing): a suite that ran no test is no green nightly, and reading it
    as one would also use up the nightly's run id. Refused, saying why, like an empty file."""
    with pytest.raises(RecordError, match=r"out/kernels-junit\.xml: JUnit XML with no test case"):
        from_junit(xml, where="out/kernels-junit.xml")


LIT = """-- Testing: 3 tests, 2 workers --
FAIL: TRITON :: TritonGPU/loop-pipeline-hopper.mlir (1 of 3)
******************** TEST 'TRITON :: TritonGPU/loop-pipeline-hopper.mlir' FAILED ********************
Exit Code: 1

# | /work/triton/test/TritonGPU/loop-pipeline-hopper.mlir:39:12: error: CHECK: expected string not found in input
# |  // CHECK: ttng.warp_group_dot {{.*}} {isAsync = true}
********************
PASS: TRITON :: TritonGPU/combine.mlir (2 of 3)
UNSUPPORTED: TRITON :: TritonGPU/amd/x.mlir (3 of 3)
"""


def test_from_lit():
    recs = from_lit(LIT, run="n1")
    assert [(r.test, r.outcome) for r in recs] == [
        ("lit:TritonGPU/loop-pipeline-hopper.mlir", "failed"),
        ("lit:TritonGPU/combine.mlir", "passed"),
        ("lit:TritonGPU/amd/x.mlir", "skipped"),
    ]
    assert "expected string not found" in recs[0].text
    with pytest.raises(RecordError, match="no result line"):
        from_lit("hello")


def test_from_log_job_fallback():
    log = "\n".join(f"line {i}" for i in range(1000)) + "\nNo space left on device"
    (r,) = from_log(log, job="build-wheels", run="n1")
    assert (r.test, r.outcome) == ("job:build-wheels", "failed")
    assert r.text.endswith("No space left on device") and "line 500" not in r.text
    with pytest.raises(RecordError, match="needs the job's name"):
        from_log("x", job="")


def test_from_a_real_pytest_junit_report(tmp_path):
    """Run pytest on a small suite (a parametrized numeric failure, a pass, a flaky-looking
    error) and read its real JUnit XML: the parametrizations collapse into one test id and one
    signature."""
    import subprocess
    import sys

    from bot.triage.group import Grouper

    (tmp_path / "test_k.py").write_text(
        "import pytest, torch\n"
        "@pytest.mark.parametrize('n', [8, 16, 32])\n"
        "def test_mm(n):\n"
        "    a = torch.ones(n, n)\n"
        "    torch.testing.assert_close(a @ a + (a[0, 0] if n > 8 else 0), a @ a)\n"
        "def test_ok():\n"
        "    assert True\n"
        "def test_busy():\n"
        "    raise RuntimeError('CUDA error: all CUDA-capable devices are busy or unavailable')\n")
    xml = tmp_path / "junit.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_k.py"),
                    f"--junitxml={xml}", "-o", "junit_family=xunit1"], cwd=tmp_path, capture_output=True, check=False)
    recs = from_junit(xml.read_text(), run="n1", commit=SHA, platform="cpu")
    assert sorted((r.test, r.outcome) for r in recs) == [
        ("test_k.py::test_busy", "failed"), ("test_k.py::test_mm", "failed"), ("test_k.py::test_mm", "failed"),
        ("test_k.py::test_mm", "passed"), ("test_k.py::test_ok", "passed")]
    groups = {g.signature.key: g for g in Grouper().group(recs)}
    assert sorted(groups) == ["AssertionError|Tensor-likes are not close!|test_k.py::test_mm",
                              "Infrastructure|gpu-busy"]
    # test_mm[8] passed while test_mm[16]/[32] failed: different cases, so real, not flaky
    assert groups["AssertionError|Tensor-likes are not close!|test_k.py::test_mm"].cls == "real"
