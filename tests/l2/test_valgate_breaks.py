"""Breaks of L2 (helper ``valgate``): series in the real store that detection misreads."""
from __future__ import annotations

import numpy as np
import pytest

from bot.l2.detection import alerts
from bot.l2.store import load_series, record_result, series_key
from bot.store import Store
from tests.l2.test_store import result


@pytest.mark.parametrize("bad", [float("inf"), float("nan")])
def test_one_non_finite_point_does_not_hide_a_later_regression(tmp_path, bad):
    """60 nightly points of a matmul series with a real 10 % regression at point 40; at point 10 the
    benchmark once reported a non-finite TFLOP/s (a 0 ms timer reading: inf; 0/0: NaN), which the
    runner passes as an ok point (tests/gpu_runner/test_valgate_breaks.py). What a user sees: with
    inf, ``alerts`` finds nothing — the 10 % regression is never reported, for as long as that point
    is in the series; with NaN, SQLite stores it as NULL and the series no longer loads into
    detection at all. What they should see: the regression at point 40 alerted, the bad point
    left out of the series (or refused when recorded)."""
    with Store(tmp_path / "db.sqlite") as db:
        rng = np.random.default_rng(2)
        for i in range(60):
            v = 650.0 * (1 + 0.015 * rng.standard_normal()) * (0.9 if i >= 40 else 1.0)
            record_result(db, "meta/triton", result(f"{i:040x}", bad if i == 10 else v), seq=i)
        pts = load_series(db, "meta/triton", "matmul", "triton", "tflops", "4096x4096x4096", "bf16", "h200")
        key = series_key("matmul", "triton", "4096x4096x4096", "bf16", "h200", "TFLOP/s")
        found = alerts([p.value for p in pts], key.higher_is_better)
        assert [pts[a.index].sha for a in found] == [f"{40:040x}"]
