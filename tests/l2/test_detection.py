"""L2 detection: σ, threshold, change points with alerts, confirmation — exact values on fixed
seeded series."""
from __future__ import annotations

import numpy as np
import pytest

from bot.l2.detection import alerts, confirm, detect, noise_sigma, point, threshold


def series(cv, n=100, shift=0.0, k=None, seed=3, higher=True):
    rng = np.random.default_rng(seed)
    x = 100.0 * (1 + cv * rng.standard_normal(n))
    if k is not None:
        x[k:] *= (1 - shift) if higher else (1 + shift)
    return [float(v) for v in x]


def test_point_is_median_of_repeats():
    p = point("a" * 40, [3.0, 1.0, 2.0, 10.0], time=5)
    assert (p.value, p.repeats, p.time) == (2.5, (3.0, 1.0, 2.0, 10.0), 5)
    with pytest.raises(ValueError, match="no repeats"):
        point("a" * 40, [])
    with pytest.raises(ValueError, match="non-finite"):
        point("a" * 40, [1.0, float("nan")])


def test_threshold_is_max_of_2pct_and_3_sigma():
    assert threshold(0.0) == 0.02
    assert threshold(0.005) == 0.02
    assert threshold(0.03) == pytest.approx(0.09)


def test_noise_sigma_robust_to_steps_and_outliers():
    assert noise_sigma([1.0, 2.0]) == 0.0
    flat = series(0.03, n=400)
    assert noise_sigma(flat) == pytest.approx(0.03, rel=0.1)
    stepped = series(0.03, n=400, shift=0.2, k=200)
    assert noise_sigma(stepped) == pytest.approx(0.03, rel=0.12)
    assert noise_sigma(stepped, [200]) == pytest.approx(0.03, rel=0.12)   # σ 3 and 2.4 over level ≈ 90
    spiky = list(flat)
    spiky[10] = spiky[100] = 1000.0
    assert noise_sigma(spiky) == pytest.approx(noise_sigma(flat), rel=0.05)
    with pytest.raises(ValueError, match="not positive"):
        noise_sigma([-1.0, -1.0, -1.0])


def test_flat_series_no_alert():
    assert alerts(series(0.03)) == []
    assert alerts([100.0] * 50) == []
    assert detect([]) == []


@pytest.mark.parametrize("cv", [0.015, 0.03, 0.06])
def test_threshold_shift_alerts_near_the_shift(cv):
    x = series(cv, shift=threshold(cv), k=60)
    (a,) = alerts(x)
    assert abs(a.index - 60) <= 2 and a.regression and a.rel_shift < 0


def test_improvement_and_small_shift_do_not_alert():
    up = series(0.03, shift=-0.15, k=50)      # throughput up 15 %
    cps = detect(up)
    assert cps and all(not c.alert and not c.regression for c in cps)
    small = series(0.03, shift=0.03, k=50)    # 1σ: below max(2 %, 3σ)
    assert alerts(small) == []


def test_lower_is_better_series():
    t = series(0.02, shift=0.10, k=70, higher=False)   # time up 10 %
    (a,) = alerts(t, higher_is_better=False)
    assert abs(a.index - 70) <= 2 and a.rel_shift > 0
    assert alerts(t, higher_is_better=True) == []


def test_needs_points_after_the_change():
    x = series(0.015, shift=0.2, k=98)        # two points after: not yet
    assert alerts(x) == []


def test_confirm_rank_test():
    rng = np.random.default_rng(1)
    good = list(100 * (1 + 0.03 * rng.standard_normal(10)))
    bad = list(91 * (1 + 0.03 * rng.standard_normal(10)))
    c = confirm(good, bad, sigma=0.03)
    assert c.confirmed and c.pvalue < 0.001 and c.n_good == c.n_bad == 10
    same = confirm(good, list(100 * (1 + 0.03 * rng.standard_normal(10))), sigma=0.03)
    assert not same.confirmed and same.reason.startswith("not significant")
    tiny = confirm([100.0 + i * 0.01 for i in range(10)], [99.0 + i * 0.01 for i in range(10)], sigma=0.001)
    assert not tiny.confirmed and tiny.reason == "shift -1.00% does not reach the threshold 2.00%"
    three = confirm([1.0, 1.1, 1.2], [2.0, 2.1, 2.2], higher_is_better=False)   # exact test: 1/C(6,3)
    assert three.pvalue == pytest.approx(0.05) and not three.confirmed
    with pytest.raises(ValueError, match="at least one repeat"):
        confirm([], [1.0])


def test_sub_threshold_change_point_no_longer_hides_a_regression():
    """A +0.8 % level wobble three points before a 4 % regression: otava reports both, and measured
    against the three points between them the regression had no baseline (``min_before`` 5)."""
    x = np.array(series(0.007, n=80, shift=0.04, k=55, seed=39))
    x[52:] *= 1.008
    x = [float(v) for v in x]
    assert [(c.index, c.n_before, c.alert) for c in detect(x, merge=False)] == [(52, 52, False), (55, 3, False)]
    wobble, reg = detect(x)
    assert (wobble.index, wobble.merged, wobble.alert) == (52, True, False)
    assert abs(wobble.rel_shift) < wobble.threshold
    assert (reg.index, reg.n_before, reg.n_after, reg.merged, reg.alert) == (55, 55, 25, False, True)
    assert reg.rel_shift == pytest.approx(-0.0347, abs=5e-4)
    assert [c.index for c in alerts(x)] == [55]


@pytest.mark.parametrize("seed", [0, 6, 152, 244])
def test_sub_threshold_wobbles_alone_do_not_alert(seed):
    """A +0.9 % bump of three points and a −0.8 % dip of four, nothing else. Measured between
    otava's own change points, the dip's first edge over its three or four points alerted for
    seeds 152 and 244; merged into the flat level around it, it does not."""
    x = np.array(series(0.005, n=100, seed=seed))
    x[40:43] *= 1.009
    x[70:74] *= 0.992
    x = [float(v) for v in x]
    cps = detect(x)
    assert any(c.merged for c in cps)
    assert [c for c in cps if c.alert] == []


def test_improvement_before_a_regression_stays_its_baseline():
    """+3 % at 55, then −3 % (the threshold) at 64: the improvement is below the threshold as
    measured, but its nine points are baseline enough, so it is no wobble to merge and the
    regression is still measured against the improved level."""
    x = np.array(series(0.01, shift=0.03, k=64, seed=3))
    x[55:] *= 1.03
    imp, reg = detect([float(v) for v in x])
    assert (imp.index, imp.merged, imp.alert) == (55, False, False) and abs(imp.rel_shift) < imp.threshold
    assert (reg.index, reg.n_before, reg.merged, reg.alert) == (64, 9, False, True)


def test_pvalue_is_measured_on_the_reported_segments():
    """otava re-tests only the right-hand neighbour of a change point its merge step removes, so
    the one on the left kept the p-value of a weak segment (0.00018 here for a 4 % step over 30
    and 50 points); detect reports the same t-test on the segments it measures the shift on."""
    from otava.analysis import TTestSignificanceTester

    x = series(0.007, n=80, shift=0.04, k=30, seed=1)
    assert detect(x, merge=False)[0].pvalue == pytest.approx(1.77e-4, rel=0.01)
    (c,) = detect(x)
    assert (c.index, c.n_before, c.n_after) == (30, 30, 50)
    assert c.pvalue == pytest.approx(TTestSignificanceTester(0.001).compare(x[:30], x[30:]).pvalue)
    assert c.pvalue < 1e-40


def test_a_kept_change_point_names_the_change_points_merged_into_it():
    """The +0.8 % wobble three points before the 4 % regression is merged into the regression, the
    kept change point whose short segment it joined: each names the other. Without merging none
    is merged into anything."""
    x = np.array(series(0.007, n=80, shift=0.04, k=55, seed=39))
    x[52:] *= 1.008
    x = [float(v) for v in x]
    wobble, reg = detect(x)
    assert (wobble.merged, wobble.merged_into, wobble.merged_from) == (True, 55, ())
    assert (reg.merged, reg.merged_into, reg.merged_from) == (False, None, (52,))
    assert [(c.merged_into, c.merged_from) for c in detect(x, merge=False)] == [(None, ()), (None, ())]


@pytest.mark.parametrize("seed, expected", [
    (0, [(41, None, (43,)), (43, 41, ())]),
    (6, [(70, None, (74,)), (74, 70, ())]),
    (152, [(69, None, (72,)), (72, 69, ())]),
    (244, [(70, 73, ()), (73, None, (70,))]),
])
def test_the_edges_of_a_short_dip_are_merged_into_one_change_point(seed, expected):
    """A bump of three points and a dip of four: the two edges otava reports around one of them
    sit next to a segment too short for the rule, the smaller is merged into the other, and the
    kept one names it: (index, merged_into, merged_from) of each."""
    x = np.array(series(0.005, n=100, seed=seed))
    x[40:43] *= 1.009
    x[70:74] *= 0.992
    assert [(c.index, c.merged_into, c.merged_from) for c in detect([float(v) for v in x])] == expected
