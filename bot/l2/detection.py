"""L2 regression detection on trunk benchmark series: pure functions over floats.

A *series* is one (benchmark, shape, dtype, platform) in landing order on the fork's trunk; each
*point* is the median of ``n`` repeats of one run. Detection:

1. **Noise σ** (:func:`noise_sigma`): a robust spread of the per-point medians, relative to their
   level — Tukey's biweight midvariance (MAD-based, outlier-robust, ≈ 87 % efficient) of the
   residuals around each segment's median (segments between change points), or of first
   differences / √2 before segmentation; either way a step does not inflate σ.
2. **Change points** (:func:`change_points`): apache-otava's E-divisive variant ("Hunter",
   Fleming et al., https://doi.org/10.1145/3578244.3583719 — windowed E-divisive split, then a
   t-test merge), ``otava.analysis.compute_change_points`` (the installed package imports as
   ``otava``).
3. **Boundaries** (:func:`_boundaries`): a change point below the threshold next to a segment
   too short for the rule below (fewer than ``min_before`` / ``min_after`` points) is merged
   away, smallest first, re-measuring the rest, so a sub-threshold wobble just before a
   regression no longer leaves it without a baseline; each change point is measured between
   the boundaries left on either side, its p-value the t-test on those segments.
4. **Alert rule** (:func:`detect`): a change point alerts when it is a *regression* (lower
   throughput, or higher time), significant (p ≤ ``max_pvalue``), at least ``min_after``
   points follow it and ``min_before`` precede it within its segments (a blip of a few points
   is no baseline), and its size reaches the threshold ``max(2 %, 3σ)`` within the one-sided
   97.5 % error band of (shift estimate − threshold estimate) — so a shift of exactly the
   threshold alerts ≥ 95 % of the time instead of half the time; the price is that shifts
   somewhat below it (≈ 2–2.5σ with few points after the change) may alert too, and
   confirmation weeds out noise.
5. **Confirmation** (:func:`confirm`): re-run last-good and first-bad on one machine, ``n``
   repeats each; a one-sided Mann-Whitney U test (scipy) p ≤ ``alpha`` and the banded
   threshold. Only a confirmed regression is bisected (:mod:`bot.git.bisect`).

Measured detection quality: ``bench/bench_detection.py``; with sub-threshold change points around a
regression: ``bench/bench_l2_wobbles.py`` (docs/validation.md).
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

MIN_REL_SHIFT = 0.02    # alert on shifts ≥ max(2 %, 3σ)
SIGMAS = 3.0
Z_BAND = 1.96           # one-sided 97.5 % normal quantile: the alert band


@dataclass(frozen=True)
class SeriesKey:
    """Identifies one L2 series. ``unit`` says how to read values (e.g. ``TFLOP/s``, ``ms``);
    ``higher_is_better`` is True for throughput, False for time."""

    benchmark: str
    shape: str
    dtype: str
    platform: str
    unit: str = "TFLOP/s"
    higher_is_better: bool = True

    def __str__(self) -> str:
        return f"{self.benchmark}:{self.shape}:{self.dtype}@{self.platform}"


@dataclass(frozen=True)
class Point:
    """One run on trunk: ``value`` is the median of ``repeats``; ``sha`` the fork commit measured."""

    sha: str
    value: float
    repeats: tuple[float, ...] = ()
    time: int = 0


def point(sha: str, repeats: Sequence[float], time: int = 0) -> Point:
    """A :class:`Point` from raw repeats. Raises ValueError for no repeats or a non-finite value."""
    if not repeats:
        raise ValueError(f"point for {sha[:12]}: no repeats")
    if any(not math.isfinite(r) for r in repeats):
        raise ValueError(f"point for {sha[:12]}: non-finite repeat in {list(repeats)}")
    return Point(sha, float(statistics.median(repeats)), tuple(float(r) for r in repeats), time)


def noise_sigma(values: Sequence[float], breaks: Sequence[int] = ()) -> float:
    """Relative noise σ of per-point medians (a fraction of the level, e.g. 0.03 = 3 %).

    Residuals are taken from each segment's median (segments split at ``breaks``, e.g. the
    change points; with no breaks, first differences / √2 are used so a step does not inflate
    the estimate), and their spread is Tukey's biweight midvariance (MAD-based start, c = 9;
    ≈ 87 % efficient on Gaussian noise against 37 % for the bare MAD, still robust to outliers),
    divided by the median level. 0.0 for fewer than 3 points. Raises ValueError when the level
    is not positive."""
    vals = [float(v) for v in values]
    if len(vals) < 3:
        return 0.0
    level = statistics.median(vals)
    if level <= 0:
        raise ValueError(f"series level {level} is not positive; L2 values must be positive")
    if breaks:
        bounds = [0] + sorted(b for b in breaks if 0 < b < len(vals)) + [len(vals)]
        res = []
        for a, b in zip(bounds, bounds[1:]):
            seg = vals[a:b]
            m = statistics.median(seg)
            res += [v - m for v in seg]
        scale = _biweight(res) * math.sqrt(len(res) / max(1, len(res) - (len(bounds) - 1)))
    else:
        scale = _biweight([b - a for a, b in zip(vals, vals[1:])]) / math.sqrt(2)
    return scale / level


def _biweight(x: Sequence[float], c: float = 9.0) -> float:
    """Tukey's biweight midvariance, as a standard deviation (Mosteller & Tukey 1977)."""
    m = statistics.median(x)
    mad = statistics.median(abs(v - m) for v in x)
    if mad == 0:
        return 0.0
    num = den = 0.0
    for v in x:
        u = (v - m) / (c * mad)
        if abs(u) < 1:
            num += (v - m) ** 2 * (1 - u * u) ** 4
            den += (1 - u * u) * (1 - 5 * u * u)
    return math.sqrt(len(x) * num) / abs(den) if den else 0.0


def threshold(sigma: float) -> float:
    """The alert threshold, a relative shift: ``max(2 %, 3σ)``."""
    return max(MIN_REL_SHIFT, SIGMAS * sigma)


@dataclass(frozen=True)
class ChangePoint:
    """A shift between ``values[index - n_before:index]`` and ``values[index:index + n_after]``:
    the segments between the nearest boundaries on either side (the change points left after
    merging, :func:`_boundaries`). ``rel_shift`` = mean after / mean before − 1 (signed);
    ``regression`` applies the series' direction; ``alert`` is the rule of this module's
    docstring; ``pvalue`` is otava's t-test on those two segments. ``merged``: merged away as
    a sub-threshold change point next to a too-short segment; its figures are those measured
    when it was merged, and it never alerts. ``merged_into``: the index of the kept change point
    it was merged into (None where it is not merged, or none is kept); ``merged_from``: on a kept
    one, the indexes of the change points merged into it, oldest first (each shift between its
    boundaries is the sum of those steps and its own)."""

    index: int
    before: float
    after: float
    rel_shift: float
    pvalue: float
    n_before: int
    n_after: int
    sigma: float
    threshold: float
    regression: bool
    alert: bool
    merged: bool = False
    merged_into: int | None = None
    merged_from: tuple[int, ...] = ()


def change_points(values: Sequence[float], max_pvalue: float = 0.001, window_len: int = 50) -> list[tuple[int, float]]:
    """``[(index, pvalue), …]`` of otava's change points (E-divisive split + t-test merge).
    ``window_len`` is otava's sliding window (points)."""
    if len(values) < 4:
        return []
    from otava.analysis import compute_change_points

    cps, _ = compute_change_points([float(v) for v in values], window_len=window_len, max_pvalue=max_pvalue)
    return [(int(c.index), float(c.stats.pvalue)) for c in cps]


def detect(values: Sequence[float], higher_is_better: bool = True, *, max_pvalue: float = 0.001,
           min_after: int = 3, min_before: int = 5, sigma: float | None = None,
           window_len: int = 50, merge: bool = True) -> list[ChangePoint]:
    """Change points of a series with the alert decision (see the module docstring).

    ``values``: per-point medians, oldest first, all > 0 and finite (ValueError naming the first
    point that is not finite). ``sigma``: relative noise; estimated
    with :func:`noise_sigma` when None. Returns every change point otava reports (improvements
    and sub-threshold shifts too, with ``alert=False``), oldest first, each measured between the
    nearest *boundaries* on either side (:func:`_boundaries`; the others have ``merged=True``).
    ``merge=False`` measures each between otava's own neighbouring change points instead — the
    rule before sub-threshold change points were merged, kept so that
    ``bench/bench_l2_wobbles.py`` compares both on the same series in one run."""
    vals = [float(v) for v in values]
    if not vals:
        return []
    bad = next((i for i, v in enumerate(vals) if not math.isfinite(v)), None)
    if bad is not None:     # one inf makes every shift inf and hides every later regression
        raise ValueError(f"point {bad} of the series is {vals[bad]}, not a measurement")
    cps = change_points(vals, max_pvalue, window_len)
    # σ from otava's full segmentation: a sub-threshold level shift is a step, not noise
    sig = noise_sigma(vals, [i for i, _ in cps]) if sigma is None else sigma
    thr = threshold(sig)
    # relative standard error of the biweight σ estimate (≈ 87 % efficient): 0.76 / √n
    thr_se = SIGMAS * sig * 0.76 / math.sqrt(len(vals)) if sigma is None and SIGMAS * sig > MIN_REL_SHIFT else 0.0
    rule = _Rule(higher_is_better, thr, max_pvalue, min_after, min_before, sig, thr_se)
    if merge:
        measured, into = _boundaries(vals, [i for i, _ in cps], rule)
        shifts = [measured[i] for i, _ in cps]
    else:   # otava's p-values, as otava reported them
        kept, into = [i for i, _ in cps], {}
        shifts = [rule.measure(vals, *_around(i, kept, len(vals)), pvalue=p) for i, p in cps]
    return [ChangePoint(i, m.before, m.after, m.rel, m.pvalue, m.n_before, m.n_after, sig, thr,
                        rule.worse(m) > 0, i not in into and rule.alerts(m), i in into, into.get(i),
                        tuple(sorted(j for j, k in into.items() if k == i)))
            for (i, _), m in zip(cps, shifts)]


@dataclass(frozen=True)
class _Shift:
    """A change point measured between two segments: their means, the relative shift, the t-test's
    p-value, their sizes, and the standard error of the alert band (relative units)."""

    before: float
    after: float
    rel: float
    pvalue: float
    n_before: int
    n_after: int
    se: float


@dataclass(frozen=True)
class _Rule:
    """The alert rule of one series (module docstring, step 4) and how a shift is measured for it."""

    higher_is_better: bool
    thr: float
    max_pvalue: float
    min_after: int
    min_before: int
    sigma: float
    thr_se: float

    def measure(self, vals: Sequence[float], lo: int, idx: int, hi: int, pvalue: float | None = None) -> _Shift:
        """``vals[lo:idx]`` against ``vals[idx:hi]``. The p-value is otava's merge-step test
        (two-sided Student t) on exactly these segments unless ``pvalue`` is given: otava re-tests
        only the right-hand neighbour of a change point it merges away, so the left one can keep
        the p-value of a segment that no longer exists (seen: 0.00027 reported, 0.0038 on its
        segments)."""
        left, right = vals[lo:idx], vals[idx:hi]
        before, after = statistics.fmean(left), statistics.fmean(right)
        if pvalue is None:
            from otava.analysis import TTestSignificanceTester

            pvalue = float(TTestSignificanceTester(max_pvalue=self.max_pvalue).compare(left, right).pvalue)
        # one-sided 97.5 % band of (shift estimate − threshold estimate), in relative units
        se = math.hypot(self.sigma * math.sqrt(1.0 / len(left) + 1.0 / len(right)), self.thr_se)
        return _Shift(before, after, after / before - 1.0, pvalue, len(left), len(right), se)

    def worse(self, m: _Shift) -> float:
        """The shift in the bad direction (> 0: a regression)."""
        return -m.rel if self.higher_is_better else m.rel

    def alerts(self, m: _Shift) -> bool:
        worse = self.worse(m)
        return (worse > 0 and m.pvalue <= self.max_pvalue and m.n_after >= self.min_after
                and m.n_before >= self.min_before and worse + Z_BAND * m.se >= self.thr)

    def weak(self, m: _Shift, first: bool, last: bool) -> bool:
        """Below the threshold (or not significant) and next to a segment too short for the
        alert rule: fewer than ``min_before`` points before it (its own baseline, or the after-side
        of the change point before it), or fewer than ``min_after`` after it (and fewer than
        ``min_before`` where that segment is the baseline of the change point after it).
        ``first``/``last``: no change point is left before / after this one."""
        inner = max(self.min_before, self.min_after)
        short = (m.n_before < (self.min_before if first else inner)
                 or m.n_after < (self.min_after if last else inner))
        return short and (abs(m.rel) < self.thr or m.pvalue > self.max_pvalue)


def _boundaries(vals: Sequence[float], indexes: Sequence[int], rule: _Rule) -> tuple[dict[int, _Shift], dict[int, int | None]]:
    """``(measured, into)``: every change point of ``indexes`` with its figures — a kept one
    measured between the boundaries left, a merged one as it was when it showed weak — and each
    merged one with the kept change point it went into (None when none is kept): the nearest one
    left when it was merged away, whose segment it joined on its short side (the larger shift
    where two are as near), followed through that one's own merge. The weak ones (:meth:`_Rule.weak`)
    are merged away one at a time, the smallest ``|shift|`` first, and every one left is measured
    again between the boundaries left, until none is weak.

    otava keeps every significant change point however small, and a 0.2–1 % level wobble a few
    points from a real regression cut its baseline short: the regression, measured against that
    short segment, fell below ``min_before`` or short of its band and went unreported
    (``bench/bench_l2_wobbles.py``: 4.9 % of regressions with a wobble 2–10 points before them,
    1.4 % once merged). This is otava's own merge step (Fleming et al., above) with the alert
    rule's threshold and segment lengths as its criteria. Only a change point next to a segment
    too short is merged: across a long segment merging gains no baseline, it only adds the
    wobble's level to the neighbour's shift (two sub-threshold wobbles one way would add up to
    an alert at the second), and a real step, an improvement just below the threshold as
    measured included, is the level the next regression must be measured against. The point
    estimate decides, not the alert's band: the band of a wobble measured over the 2–4 points
    before a regression is wide enough to keep it. A merged change point never alerts (its
    figures are those that showed it weak). Ends: each round merges one change point."""
    live = sorted(indexes)
    merged: dict[int, _Shift] = {}
    into: dict[int, int | None] = {}
    while True:
        shifts = {i: rule.measure(vals, *_around(i, live, len(vals))) for i in live}
        weak = [(abs(m.rel), i) for i, m in shifts.items() if rule.weak(m, i == live[0], i == live[-1])]
        if not weak:
            return {**merged, **shifts}, {i: _kept(i, into) for i in into}
        drop = min(weak)[1]
        merged[drop] = shifts[drop]
        live.remove(drop)
        into[drop] = min(live, key=lambda b: (abs(b - drop), -abs(shifts[b].rel)), default=None)


def _kept(i: int, into: dict[int, int | None]) -> int | None:
    """The kept change point merged change point ``i`` ended in, following ``into`` through the
    later merges of the ones it went into."""
    j = into[i]
    while j is not None and j in into:
        j = into[j]
    return j


def _around(idx: int, kept: Sequence[int], n: int) -> tuple[int, int, int]:
    """``(lo, idx, hi)``: the nearest kept index (or the series' ends) before and after ``idx``."""
    return (max((b for b in kept if b < idx), default=0), idx, min((b for b in kept if b > idx), default=n))


def alerts(values: Sequence[float], higher_is_better: bool = True, **kw) -> list[ChangePoint]:
    """Only the change points that alert (regressions past the threshold)."""
    return [c for c in detect(values, higher_is_better, **kw) if c.alert]


@dataclass(frozen=True)
class Confirmation:
    """Result of re-running last-good vs first-bad on one machine. ``rel_shift`` = median(bad) /
    median(good) − 1; ``pvalue`` one-sided Mann-Whitney U (bad worse than good)."""

    confirmed: bool
    pvalue: float
    rel_shift: float
    threshold: float
    n_good: int
    n_bad: int
    reason: str


def confirm(good: Sequence[float], bad: Sequence[float], higher_is_better: bool = True, *,
            sigma: float = 0.0, alpha: float = 0.01) -> Confirmation:
    """Confirm a regression from repeats of last-good and first-bad measured back to back on one
    machine: a one-sided Mann-Whitney U test (``scipy.stats.mannwhitneyu``; bad worse than good)
    with p ≤ ``alpha``, and a median shift that reaches :func:`threshold` (``sigma``: the series'
    relative noise) within the same 97.5 % band as :func:`detect` (standard error of a difference
    of medians, 1.2533 · s · √(1/n_good + 1/n_bad), s the pooled biweight spread of the repeats).
    With fewer than 5 repeats per side p cannot reach 0.01: use n ≥ 5 (10 recommended).
    Raises ValueError on an empty side or a non-positive median."""
    from scipy.stats import mannwhitneyu

    if not good or not bad:
        raise ValueError("confirm: both last-good and first-bad need at least one repeat")
    thr = threshold(sigma)
    mg, mb = statistics.median(good), statistics.median(bad)
    if mg <= 0:
        raise ValueError(f"confirm: median of last-good repeats is {mg}; values must be positive")
    rel = mb / mg - 1.0
    worse = -rel if higher_is_better else rel
    alt = "less" if higher_is_better else "greater"
    p = float(mannwhitneyu(list(bad), list(good), alternative=alt).pvalue)
    mgood = statistics.median(good)
    mbad = statistics.median(bad)
    pooled = [v - mgood for v in good] + [v - mbad for v in bad]
    s = _biweight(pooled) / mg if len(pooled) >= 3 else 0.0
    se = 1.2533 * s * math.sqrt(1.0 / len(good) + 1.0 / len(bad))
    if p > alpha:
        return Confirmation(False, p, rel, thr, len(good), len(bad), f"not significant (p={p:.3g} > {alpha})")
    if worse + Z_BAND * se < thr:
        return Confirmation(False, p, rel, thr, len(good), len(bad),
                            f"shift {-worse:+.2%} does not reach the threshold {thr:.2%}")
    return Confirmation(True, p, rel, thr, len(good), len(bad),
                        f"regression of {worse:.2%} (p={p:.3g}, threshold {thr:.2%})")
