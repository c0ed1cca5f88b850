"""L2 points from runner results into the real SQLite store, and back as series for detection."""
from __future__ import annotations

import numpy as np
import pytest

from bot.l2.detection import alerts
from bot.l2.store import load_series, record_result, series_key, series_keys
from bot.store import Store
from gpu_runner.result import BenchmarkPoint, Environment, RunResult


def result(sha, tflops, ok=True):
    pts = [BenchmarkPoint(benchmark="matmul", shape="4096x4096x4096", dtype="bf16", impl="triton", metric="tflops",
                          unit="TFLOP/s", value=tflops, median_ms=0.2, repeat_medians_ms=[0.2, 0.25, 0.1],
                          repeats=3, ok=ok),
           BenchmarkPoint(benchmark="matmul", shape="4096x4096x4096", dtype="bf16", impl="torch", metric="tflops",
                          unit="TFLOP/s", value=700.0)]
    return RunResult(suite="matmul-sweep", level="L2", commit=sha, platform="h200", verdict="green", outcome="pass",
                     benchmarks=pts, environment=Environment(runner_id="r"), finished_at=1000)


def test_record_and_load(tmp_path):
    with Store(tmp_path / "db.sqlite") as db:
        rng = np.random.default_rng(2)
        for i in range(60):
            v = 650.0 * (1 + 0.015 * rng.standard_normal()) * (0.9 if i >= 40 else 1.0)
            assert record_result(db, "meta/triton", result(f"{i:040x}", v), seq=i) == 2
        record_result(db, "meta/triton", result(f"{5:040x}", 1.0, ok=False), seq=5)     # a wrong-result re-run
        assert series_keys(db, "meta/triton") == [
            ("matmul", "torch", "tflops", "4096x4096x4096", "bf16", "h200", "TFLOP/s"),
            ("matmul", "triton", "tflops", "4096x4096x4096", "bf16", "h200", "TFLOP/s")]
        pts = load_series(db, "meta/triton", "matmul", "triton", "tflops", "4096x4096x4096", "bf16", "h200")
        assert len(pts) == 59 and pts[0].sha == f"{0:040x}" and f"{5:040x}" not in [p.sha for p in pts]
        assert pts[0].repeats == pytest.approx((pts[0].value, pts[0].value * 0.8, pts[0].value * 2))
        key = series_key("matmul", "triton", "4096x4096x4096", "bf16", "h200", "TFLOP/s")
        assert str(key) == "matmul[triton]:4096x4096x4096:bf16@h200" and key.higher_is_better
        assert not series_key("softmax", "triton", "4096", "fp32", "h200", "ms").higher_is_better
        (a,) = alerts([p.value for p in pts], key.higher_is_better)
        assert pts[a.index].sha == f"{40:040x}"
