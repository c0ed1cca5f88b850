"""Sub-threshold change points around an L2 regression: detection before and after merging them.

otava reports every significant change point, also level shifts far below the alert threshold
max(2 %, 3σ) (a 0.5 % wobble). Measured between otava's own neighbouring change points, a real
regression a few points after such a wobble has too short a baseline to alert. ``bot.l2.detection``
now merges, before deciding, the change points below the threshold that cut a segment too short
for the alert rule (``_boundaries``); ``detect(..., merge=False)`` is the rule before, so both columns come from the same series in
one run.

Series: ``n`` nightly points, n uniform in [40, 120]; per-point noise Gaussian with a relative σ
uniform in [0.5 %, 1 %] (so the threshold is 2–3 %); level 100 TFLOP/s. Scenarios, 1,000
series each by default:

* **regression** — a drop of 3–5 % at k uniform in [10, n − 10];
* **+ wobble before / after / both** — the same, plus a level shift of ±0.2–1 % that lands
  2–10 points before k, after k, or one on each side;
* **+ improvement before** — a real +3–5 % step 5–15 points before k (a boundary the merge must
  keep: the regression is measured against the improved level);
* **flat**, **flat + 2 wobbles** — no regression; the wobbles (±0.2–1 %) anywhere in [5, n − 3].

Per scenario and rule: **detected** — an alert at k ± 1 over the whole series; **at k+5** — the
same with only the points up to k + 5 given (five runs after the regression landed, what the
nightly L2 sees first); **other alerts** — series with an alert anywhere else (on the flat
scenarios: false alerts). Targets: merging detects at least as many regressions in every
scenario, and false alerts stay no higher than before on both flat scenarios and ≤ 1 % on flat
series. (On "flat + 2 wobbles" both rules alert on about 2 % of series: two wobbles one way
add up to a step near the threshold, which the alert's band lets through; confirmation re-runs
weed those out.)

Run: ``.venv/bin/python bench/bench_l2_wobbles.py [--trials N] [--seed S]`` (defaults 1000,
2026; ≈ 2 min on one core). Fixed seeds: the same command prints the same table.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.l2.detection import alerts  # noqa: E402

LEVEL = 100.0   # TFLOP/s
TOL = 1         # an alert at k ± 1 is the right commit
AFTER = 5       # "at k+5": points given after the regression landed

# name, regression?, wobbles before k, wobbles after k, improvement before k
SCENARIOS = (
    ("regression", True, 0, 0, False),
    ("+ wobble before", True, 1, 0, False),
    ("+ wobble after", True, 0, 1, False),
    ("+ wobbles both sides", True, 1, 1, False),
    ("+ improvement before", True, 0, 0, True),
    ("flat", False, 0, 0, False),
    ("flat + 2 wobbles", False, 0, 0, False),
)


def wobble(rng) -> float:
    """A sub-threshold level shift: ±0.2–1 %."""
    return float(rng.choice([-1.0, 1.0]) * rng.uniform(0.002, 0.01))


def series(rng, regression: bool, before: int, after: int, improvement: bool, flat_wobbles: int):
    """``(values, k)``: one simulated series and where its regression landed."""
    n = int(rng.integers(40, 121))
    sigma = rng.uniform(0.005, 0.01)
    level = np.ones(n)
    k = int(rng.integers(10, n - 9))
    if regression:
        level[k:] *= 1.0 - rng.uniform(0.03, 0.05)
    for _ in range(before):
        level[k - int(rng.integers(2, 11)):] *= 1.0 + wobble(rng)
    for _ in range(after):
        level[min(n - 1, k + int(rng.integers(2, 11))):] *= 1.0 + wobble(rng)
    if improvement:
        level[k - int(rng.integers(5, 16)):] *= 1.0 + rng.uniform(0.03, 0.05)
    for _ in range(flat_wobbles):
        level[int(rng.integers(5, n - 2)):] *= 1.0 + wobble(rng)
    return LEVEL * level * (1.0 + sigma * rng.standard_normal(n)), k


def score(values, k: int, merge: bool) -> tuple[bool, bool]:
    """(an alert at k ± TOL, an alert elsewhere)."""
    found = alerts([float(v) for v in values], merge=merge)
    return any(abs(c.index - k) <= TOL for c in found), any(abs(c.index - k) > TOL for c in found)


def run_scenario(index: int, trials: int, seed: int) -> dict:
    name, regression, before, after, improvement = SCENARIOS[index]
    rng = np.random.default_rng([seed, index])
    counts = {f"{m}_{rule}": 0 for m in ("hit", "early", "other") for rule in ("before", "after")}
    for _ in range(trials):
        x, k = series(rng, regression, before, after, improvement, 2 if name == "flat + 2 wobbles" else 0)
        for rule, merge in (("before", False), ("after", True)):
            hit, other = score(x, k, merge)
            counts[f"other_{rule}"] += other if regression else (hit or other)
            if regression:
                counts[f"hit_{rule}"] += hit
                counts[f"early_{rule}"] += score(x[:k + AFTER], k, merge)[0]
    return dict(name=name, regression=regression, trials=trials, **{k: v / trials for k, v in counts.items()})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=1000, help="series per scenario (default 1000)")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = [run_scenario(i, args.trials, args.seed) for i in range(len(SCENARIOS))]
    print(f"L2 detection with sub-threshold change points — {args.trials} series per scenario, seed {args.seed}, "
          f"40–120 points, relative σ 0.5–1 %, regression 3–5 %, wobbles ±0.2–1 %; before → after merging")
    print(f"{'scenario':<22} | {'detected (k±1)':>16} | {'at k+5':>16} | {'other alerts':>16}")
    print("-" * 80)

    def pair(r, m):
        return f"{r[m + '_before']:>6.1%} → {r[m + '_after']:>6.1%}"

    ok = True
    for r in rows:
        hits = (pair(r, "hit"), pair(r, "early")) if r["regression"] else ("—", "—")
        print(f"{r['name']:<22} | {hits[0]:>16} | {hits[1]:>16} | {pair(r, 'other'):>16}")
        if r["regression"]:
            ok &= r["hit_after"] >= r["hit_before"] and r["early_after"] >= r["early_before"]
        else:
            ok &= r["other_after"] <= r["other_before"] and (r["name"] != "flat" or r["other_after"] <= 0.01)
    print(f"targets: merging detects at least as many regressions in every scenario; false alerts no higher "
          f"than before, ≤ 1 % on flat series — {'MET' if ok else 'NOT MET'}; "
          f"{time.perf_counter() - t0:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
