"""Detection quality of the L2 regression detector (bot/l2/detection.py) on synthetic series.

Per-point noise (the median of one run's repeats) is Gaussian with the coefficient of variation
measured on an NVIDIA H200 (``../shared/notes/runtime-facts.md``: repeated ``do_bench`` medians
varied by CV 1.5–6 %), buckets 1.5 %, 3 %, 6 %. For each bucket:

* **recall @ max(2 %, 3σ)** — a regression of exactly the alert threshold at a random position
  k ∈ [30, 90); counted when the detector, given only the points up to k + 5 (five runs after
  the shift landed), raises an alert located within ±5 points of k. Target ≥ 95 %.
* **recall @ full series** — the same shift, the whole 100-point series given (info).
* **false alarms** — share of flat 100-point series with any alert, checked once over the whole
  series (offline) and after every new point from the 20th on (online, i.e. over the series'
  life as trunk grows). Target ≤ 1 %.
* **+confirmed** — the same, after the confirmation step of ``bot/l2.confirm``: last-good and
  first-bad re-run 10 times each on one machine (same per-point noise), one-sided Mann-Whitney
  U at p ≤ 0.01 and the banded threshold. For false alarms, any alert of the series' life that
  survives confirmation counts.
* **recall @ 5 %** — a 5 % regression, five runs after it (info; below 3σ for the 3 % and 6 %
  buckets, so it is not expected to alert there).

Run: ``.venv/bin/python bench/bench_detection.py [--trials N] [--seed S] [--noise gauss|t4]`` (defaults 400, 2026;
≈ 4 min on 2 cores). Fixed seeds: the same command prints the same table.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.l2.detection import alerts, confirm, threshold  # noqa: E402

BUCKETS = (0.015, 0.03, 0.06)
LENGTH = 100
LEVEL = 100.0   # TFLOP/s


NOISE = "gauss"


def flat(rng, cv, n=LENGTH):
    if NOISE == "t4":   # heavier tails (Student t, 4 d.o.f.), scaled to the same standard deviation
        return LEVEL * (1.0 + cv * rng.standard_t(4, n) / np.sqrt(2.0))
    return LEVEL * (1.0 + cv * rng.standard_normal(n))


def shifted(rng, cv, rel, k, n=LENGTH):
    x = flat(rng, cv, n)
    x[k:] *= (1.0 - rel)     # throughput drops: a regression
    return x


def hit(values, k, tol=5):
    return any(abs(c.index - k) <= tol for c in alerts(list(values)))


REPEATS = 10   # confirmation: repeats of last-good and of first-bad, back to back on one machine


def confirmed(rng, cv, rel):
    """Simulated confirmation re-run: REPEATS per side, each with the per-point noise CV."""
    good = flat(rng, cv, REPEATS)
    bad = (1.0 - rel) * flat(rng, cv, REPEATS)
    return confirm(list(good), list(bad), sigma=cv).confirmed


def run_bucket(cv, trials, seed):
    rng = np.random.default_rng([seed, int(cv * 1000)])
    thr = threshold(cv)
    rec_online = rec_full = rec5 = fa_off = fa_on = rec_conf = fa_on_conf = 0
    online_trials = max(1, trials // 4)
    for t in range(trials):
        k = int(rng.integers(30, 90))
        x = shifted(rng, cv, thr, k)
        h = hit(x[:k + 5], k)
        rec_online += h
        rec_conf += h and confirmed(rng, cv, thr)
        rec_full += hit(x, k)
        y = shifted(rng, cv, 0.05, k)
        rec5 += hit(y[:k + 5], k)
        f = flat(rng, cv)
        fa_off += bool(alerts(list(f)))
        if t < online_trials:
            raised = [m for m in range(20, LENGTH + 1) if alerts(list(f[:m]))]
            fa_on += bool(raised)
            fa_on_conf += any(confirmed(rng, cv, 0.0) for _ in raised)
    return dict(cv=cv, shift=thr, recall_online=rec_online / trials, recall_full=rec_full / trials,
                fa_offline=fa_off / trials, fa_online=fa_on / online_trials, online_trials=online_trials,
                recall_5=rec5 / trials, trials=trials, recall_conf=rec_conf / trials,
                fa_online_conf=fa_on_conf / online_trials)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=400, help="series per bucket and measure (default 400)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--noise", choices=("gauss", "t4"), default="gauss",
                    help="per-point noise: Gaussian (default) or Student t with 4 d.o.f. (outlier-prone)")
    args = ap.parse_args(argv)
    global NOISE
    NOISE = args.noise
    t0 = time.perf_counter()
    rows = [run_bucket(cv, args.trials, args.seed) for cv in BUCKETS]
    print(f"L2 detection quality — {args.trials} series per bucket (online false alarms: "
          f"{rows[0]['online_trials']}), seed {args.seed}, {LENGTH}-point series, "
          f"{'Gaussian' if NOISE == 'gauss' else 'Student-t(4)'} per-point noise")
    print(f"{'CV':>5} | {'shift':>6} | {'recall k+5':>10} | {'+confirmed':>10} | {'recall full':>11} | "
          f"{'FA offline':>10} | {'FA online':>9} | {'+confirmed':>10} | {'recall 5% (info)':>16}")
    print("-" * 118)
    ok = True
    for r in rows:
        print(f"{r['cv']:>5.1%} | {r['shift']:>6.1%} | {r['recall_online']:>10.1%} | {r['recall_conf']:>10.1%} | "
              f"{r['recall_full']:>11.1%} | {r['fa_offline']:>10.2%} | {r['fa_online']:>9.2%} | "
              f"{r['fa_online_conf']:>10.2%} | {r['recall_5']:>16.1%}")
        ok &= r["recall_online"] >= 0.95 and r["fa_offline"] <= 0.01
    print(f"targets: recall ≥ 95 % (shift max(2 %, 3σ), alert within ±5 points, 5 points after the shift), "
          f"false alarms ≤ 1 % per flat series — {'MET' if ok else 'NOT MET'}; {time.perf_counter() - t0:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
