"""The reference kernels suite (examples/kernels) through the runner, on CPU under
TRITON_INTERPRET=1, as CI runs it: green on the kernels as shipped; red when a commit breaks a
kernel and silently drops a test."""
from __future__ import annotations

import shutil
from pathlib import Path

from gpu_runner.runner import LocalOptions, run_local
from gpu_runner.suites_file import find_suite, load_suites
from tests.gpu_runner.test_runner import commit, git

KERNELS = Path(__file__).resolve().parents[2] / "examples" / "kernels"
FILES = ("kernels.py", "test_kernels.py", "conftest.py", "suites.yml", "bench_matmul.py")


def test_kernels_suite_green_then_red_on_a_broken_kernel(tmp_path):
    repo = tmp_path / "fork"
    (repo / "examples" / "kernels").mkdir(parents=True)
    for f in FILES:
        shutil.copy(KERNELS / f, repo / "examples" / "kernels" / f)
    git(repo, "init", "-q", "-b", "main")
    good = commit(repo, {}, "reference kernels")
    cfg = repo / "examples" / "kernels" / "suites.yml"
    suite = find_suite(load_suites(cfg), "kernels-cpu", cfg)

    r = run_local(suite, repo, good, LocalOptions(platform="cpu"))
    assert (r.verdict, r.counts.total, r.counts.passed, r.counts.harness_total) == ("green", 30, 30, 30), r.reasons
    assert {t.id.split("::")[1].split("[")[0] for t in r.tests} == {
        "test_vector_add", "test_softmax", "test_layernorm", "test_matmul"}

    src = (repo / "examples/kernels/kernels.py").read_text()
    tests = (repo / "examples/kernels/test_kernels.py").read_text()
    cut = tests.index('@pytest.mark.parametrize("dtype", list(DTYPES))\n@pytest.mark.parametrize("shape", list(ROW_SHAPES))\ndef test_layernorm')
    end = tests.index("@pytest.mark.parametrize", cut + 60)
    bad = commit(repo, {"examples/kernels/kernels.py": src.replace("x.to(tl.float32) + y.to(tl.float32)",
                                                                   "x.to(tl.float32) - y.to(tl.float32)"),
                        "examples/kernels/test_kernels.py": tests[:cut] + tests[end:]},
                 "an upstream pick that breaks add and loses the layernorm tests")
    r = run_local(suite, repo, bad, LocalOptions(platform="cpu"))
    assert (r.verdict, r.outcome, [x.code for x in r.reasons]) == ("red", "error", ["count-mismatch", "test-failures"])
    assert r.reasons[0].detail == ("24 tests ran, the suite expects exactly 30 (fewer: tests went missing; "
                                   "if they were removed on purpose, set expected_tests: 24)")
    assert len(r.failing) == 6 and all("test_vector_add[" in f for f in r.failing)
    assert "relative error" in next(t for t in r.tests if t.outcome == "failed").message


def test_matmul_sweep_through_the_runner_emits_benchmark_points(tmp_path):
    from bot.config.suites import SuiteConfig

    repo = tmp_path / "fork"
    (repo / "examples" / "kernels").mkdir(parents=True)
    for f in FILES:
        shutil.copy(KERNELS / f, repo / "examples" / "kernels" / f)
    git(repo, "init", "-q", "-b", "main")
    sha = commit(repo, {}, "reference kernels")
    suite = SuiteConfig(name="sweep", level="L2", report={"format": "benchmark-json", "path": "out/b.json"},
                        command="mkdir -p out && python3 examples/kernels/bench_matmul.py --out out/b.json "
                                "--shapes 64x64x64 --dtypes fp16 --repeats 2",
                        min_tests=2, env={"TRITON_INTERPRET": "1"}, infra_retries=0)
    r = run_local(suite, repo, sha)
    assert (r.verdict, r.level, [(p.impl, p.shape, p.dtype, p.repeats, p.ok) for p in r.benchmarks]) == (
        "green", "L2", [("triton", "64x64x64", "fp16", 2, True), ("torch.matmul", "64x64x64", "fp16", 2, True)])
    assert r.benchmarks[0].value == 2 * 64 ** 3 / (r.benchmarks[0].median_ms * 1e-3) / 1e12


def test_matmul_configs_fit_the_h200_shared_memory():
    import sys
    sys.path.insert(0, str(KERNELS))
    import kernels as K

    big = K.MatmulConfig(128, 256, 64, 8, 8, 3)
    assert big.smem_bytes(4) == 294912            # Triton's "Required: 294912" on the H200 (fp32, 3 stages)
    assert big.fitted(4).num_stages == 2 and big.fitted(4).smem_bytes(4) == 196608 <= K.SMEM_LIMIT
    assert big.fitted(2) is big                   # fp16/bf16: 147456 bytes, fits as given
    assert all(c.fitted(4).smem_bytes(4) <= K.SMEM_LIMIT for c in K.MATMUL_CONFIGS)


def test_two_sweeps_of_one_commit_check_the_same_inputs(tmp_path):
    """The L2 sweep's correctness check draws its inputs from a seed of the point (shape, dtype),
    as the L1 tests seed by their name: two sweeps (each a process of its own, as the runner starts
    them) give the same errors, so a wrong value cannot appear in one run and vanish in the next."""
    import json
    import os
    import subprocess
    import sys

    def errors(n: int) -> list:
        out = tmp_path / f"b{n}.json"
        subprocess.run([sys.executable, str(KERNELS / "bench_matmul.py"), "--out", str(out), "--shapes", "32x48x40",
                        "--dtypes", "fp16", "--repeats", "1"], check=True, capture_output=True,
                       # one thread: on the CPU the interpreter's dot and the float64 reference
                       # sum in an order that depends on the thread count (1 and 2 threads give
                       # errors 1.7e-7 apart), which is no difference of the inputs checked
                       env={**os.environ, "TRITON_INTERPRET": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                            "OPENBLAS_NUM_THREADS": "1"})
        return [p["rel_err"] for p in json.loads(out.read_text())["points"] if p["impl"] == "triton"]

    first, second = errors(1), errors(2)
    assert first == second and len(first) == 1 and first[0] > 0
