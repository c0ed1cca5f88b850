"""A store holding what the dashboard shows, built without git: a fork's status and metrics
history, its ledger, plan and sync branches, suite results, L2 series and triage records.

``fill(store, size="small")`` gives a handful of each (tests); ``size="real"`` the size of the
real Triton fork (about 1,700 upstream commits in the ledger, a year of daily snapshots, 500 L2
points, 100 root causes) for bench/bench_dashboard.py. Deterministic: the same call gives the
same rows.
"""
from __future__ import annotations

import json
import random

from bot.store import Store
from bot.sync import store as sync_store
from bot.sync.status import SyncStatus
from bot.triage import store as triage_store

FORK = "meta/triton"
UPSTREAM = "triton-lang/triton"
NOW = 1_780_000_000.0          # 2026-05-28T20:26:40Z
DAY = 86_400
DISPS = ["PICKED"] * 12 + ["NO_OP", "WONT_PORT", "SKIP_FOR_CURRENT_BASE", "DEFERRED_BLOCKED", "REVERTED", "PENDING", "PENDING"]
AREAS = ["lib/Dialect", "python/triton", "third_party/amd", "third_party/nvidia", "test/Conversion", "include/triton"]


def sha(kind: str, i: int) -> str:
    import hashlib
    return hashlib.sha1(f"{kind}{i}".encode()).hexdigest()


def fill(store: Store, size: str = "small", *, fork: str = FORK, now: float = NOW, stale: bool = False, shared: bool = True) -> dict:
    """Fill ``store``; returns the counts written (``ledger``, ``snapshots``, ``l2``, ``causes``, ``units``).
    ``shared``: also the rows no fork owns (L2 points, triage); False for a second fork in one store."""
    rnd = random.Random(7)
    n_ledger, n_days, n_l2, n_causes = (1700, 365, 500, 100) if size == "real" else (40, 6, 12, 4)
    # ledger: upstream order, the last tenth pending (past the frontier)
    entries = []
    for i in range(n_ledger):
        d = "PENDING" if i >= n_ledger * 0.9 else rnd.choice(DISPS)
        picked = d in ("PICKED", "REVERTED")
        entries.append({"key": f"{fork}:{sha('u', i)}", "repo": fork, "idx": i, "sha": sha("u", i), "pr": 5000 + i,
                        "subject": f"[{rnd.choice(['BACKEND', 'FRONTEND', 'AMD', 'NVIDIA'])}] change number {i} (#{5000 + i})",
                        "time": int(now - (n_ledger - i) * 0.2 * DAY), "disposition": d,
                        "fork_commit": sha("f", i) if picked else "", "reason": "waits for the LLVM bump" if d == "DEFERRED_BLOCKED" else "",
                        "isolated": 0, "areas": "," + ",".join(sorted(set(rnd.sample(AREAS, 2)))) + ",",
                        "evidence_json": json.dumps([{"rule": "trailer:Upstream-Commit", "fork_commit": sha("f", i),
                                                      "detail": f"Upstream-Commit: {sha('u', i)}"}] if picked else [])})
    sync_store.replace_ledger(store, fork, entries)
    frontier = sha("u", int(n_ledger * 0.9) - 1)
    units = [{"id": f"bundle-{sha('u', 1600)[:12]}", "kind": "bundle", "pr": 301, "url": f"https://github.com/{fork}/pull/301", "state": "open"},
             {"id": f"chain-{sha('u', 1650)[:12]}", "kind": "chain", "pr": 302, "url": f"https://github.com/{fork}/pull/302",
              "state": "draft, stopped at a conflict"}]
    st = SyncStatus(repo=fork, upstream=UPSTREAM, upstream_head=sha("u", n_ledger - 1), fork_head=sha("f", n_ledger),
                    frontier=frontier, contiguous_pin=sha("u", int(n_ledger * 0.5)), days_behind=3.25, backlog=42,
                    not_reached=n_ledger - int(n_ledger * 0.9), upstream_seen_at=now - (3 * DAY if stale else 600),
                    computed_at=now - 600, last_fetch_at=now - 600,
                    upstream_head_at=now - 3 * 3600, frontier_at=now - 3 * 3600 - 3.25 * DAY,
                    last_fetch_error="fetch of triton-lang/triton failed: 502" if stale else "", units=tuple(units))
    sync_store.save_status(store, st)
    rows = []
    for k in range(n_days):
        at = now - (n_days - 1 - k) * DAY - 600
        rows.append({"repo": fork, "at": at, "upstream_as_of": at, "upstream_head": sha("u", k), "frontier": sha("u", k // 3),
                     "contiguous_pin": sha("u", k // 5), "days_behind": round(2 + 3 * rnd.random(), 3),
                     "contiguous_lag_days": round(5 + 4 * rnd.random(), 3), "backlog": 30 + rnd.randrange(30),
                     "not_reached": 100 + rnd.randrange(80), "open_units": 2, "source": "sync", "fetch_error": ""})
    sync_store.record_snapshots(store, rows)
    # plan and branches: a bundle, a chain stacked on it, a chain whose PR was deleted, one planned
    b, c = [u["id"] for u in units]
    gone, planned = f"chain-{sha('u', 1660)[:12]}", f"bundle-{sha('u', 1690)[:12]}"
    sync_store.save_plan(store, fork, now - 5 * DAY, [
        {"id": b, "kind": "bundle", "shas": [sha("u", i) for i in range(1600, 1610)], "depends_on": [], "areas": ["python/triton"], "reason": ""},
        {"id": c, "kind": "chain", "shas": [sha("u", 1650), sha("u", 1651)], "depends_on": [b], "areas": ["lib/Dialect"], "reason": "conflict"},
        {"id": gone, "kind": "chain", "shas": [sha("u", 1660)], "depends_on": [c], "areas": ["lib/Dialect"], "reason": "touches chain"},
        {"id": planned, "kind": "bundle", "shas": [sha("u", 1690)], "depends_on": [], "areas": [], "reason": ""}])
    for uid, kind, pr, extra in ((b, "bundle", 301, {}), (c, "chain", 302, {"conflict_sha": sha("u", 1651)}), (gone, "chain", 303, {})):
        sync_store.save_branch(store, repo=fork, branch=f"forksync/{uid}", unit_id=uid, kind=kind, pushed_tip=sha("h", pr),
                               verified_tip="", pr=pr, state="open", shas_json="[]", base_sha=sha("f", 0),
                               conflict_sha=extra.get("conflict_sha", ""), blocked_reason="")
    # suite results: trunk (pr 0) went red two commits ago; the bundle's PR head is green
    t = store.db["suite_results"]
    for k in range(6):
        verdict = "fail" if k >= 4 else "pass"
        for suite, plat in (("kernels", "h100"), ("lit", "cpu")):
            v = verdict if suite == "kernels" else "pass"
            t.insert({"key": f"{fork}:{sha('t', k)}:{suite}:{plat}", "repo": fork, "pr": 0, "sha": sha("t", k), "suite": suite,
                      "platform": plat, "level": "L1", "status": "done", "verdict": v,
                      "failing_json": "[]", "reason": "test_matmul failed" if v == "fail" else "", "check_run_id": 0, "check_url": "",
                      "backend": "local", "request_id": "", "result_json": "", "updated_at": now - (6 - k) * 3600}, replace=True)
    t.insert({"key": f"{fork}:{sha('h', 301)}:kernels:h100", "repo": fork, "pr": 301, "sha": sha("h", 301), "suite": "kernels",
              "platform": "h100", "level": "L1", "status": "done", "verdict": "pass", "failing_json": "[]", "reason": "",
              "check_run_id": 1, "check_url": f"https://github.com/{fork}/runs/1", "backend": "local", "request_id": "",
              "result_json": "", "updated_at": now - 1800}, replace=True)
    t.insert({"key": f"{fork}:{sha('h', 301)}:lit:cpu", "repo": fork, "pr": 301, "sha": sha("h", 301), "suite": "lit",
              "platform": "cpu", "level": "L1", "status": "done", "verdict": "fail", "failing_json": "[]",
              "reason": "below-floor: 80 tests ran, fewer than the floor min_tests=100", "check_run_id": 2, "check_url": "",
              "backend": "local", "request_id": "", "result_json": "", "updated_at": now - 1700}, replace=True)
    if not shared:
        return {"ledger": n_ledger, "snapshots": n_days, "l2": 0, "causes": 0, "units": 4}
    # L2: one series with a step down at 70 %, and a one-point series
    p = store.db["l2_points"]
    step = int(n_l2 * 0.7)
    for k in range(n_l2):
        value = (100.0 if k < step else 90.0) * (1 + 0.004 * rnd.uniform(-1, 1))
        p.insert({"repo": fork, "benchmark": "matmul", "impl": "triton", "metric": "tflops", "shape": "4096x4096x4096", "dtype": "fp16",
                  "platform": "h100", "unit": "TFLOP/s", "sha": sha("l", k), "seq": k, "time": int(now - (n_l2 - k) * 3600),
                  "value": value, "repeats_json": "[]", "ok": 1})
    p.insert({"repo": fork, "benchmark": "softmax", "impl": "triton", "metric": "ms", "shape": "8192", "dtype": "fp32", "platform": "h100",
              "unit": "ms", "sha": sha("l", 0), "seq": 0, "time": int(now - 3600), "value": 0.25, "repeats_json": "[]", "ok": 1})
    store.db["l2_regressions"].insert({"key": f"{fork}:matmul:{sha('l', step)}", "repo": fork,
                                       "series": "matmul[triton]:4096x4096x4096:fp16@h100",
                                       "good": sha("l", step - 1), "bad": sha("l", step), "status": "bisected", "status_code": "bisected",
                                       "culprit": sha("f", 1), "issue": 77, "backout_pr": 78, "time": now - DAY}, replace=True)
    # triage: nightlies and root causes of each class
    runs = [f"nightly-{k}" for k in range(30)]
    tracked = []
    for k in range(n_causes):
        cls = ["real", "real", "infrastructure", "flaky"][k % 4]
        fails = [r for j, r in enumerate(runs) if (j + k) % 3 == 0]
        d = {"key": f"cause-{k:03d}", "cls": cls, "title": f"RuntimeError: failure number {k}", "signature": f"sig{k}",
             "state": "open" if cls == "real" else "tracked", "issue": 400 + k if cls == "real" else None,
             "fail_runs": [[r, int(now - (30 - runs.index(r)) * DAY), sha("t", 0)] for r in fails],
             "platforms": ["h100"], "tests": [f"test_{k}_{j}" for j in range(3)], "first_seen": int(now - 30 * DAY),
             "last_seen": int(now - DAY), "green_streak": 0, "crash": False, "labels": [], "sample": "",
             "last_green": sha("t", 0), "first_red": sha("t", 1)}
        tracked.append((d["key"], json.dumps(d), int(now)))
    for j, r in enumerate(runs):
        # each nightly processed an hour after it ran
        ran = int(now - (30 - j) * DAY)
        triage_store.save_state_rows(store, fork, tracked if j == len(runs) - 1 else [], [], (r, ran + 3600, "[]", ran))
    triage_store.save_followup(store, {"key": f"{fork}:cause-000", "repo": fork, "cause": "cause-000", "issue": 400, "bisected": 1,
                                       "culprit": sha("t", 4), "fix": "proposed"})
    return {"ledger": n_ledger, "snapshots": n_days, "l2": n_l2 + 1, "causes": n_causes, "units": 4}


__all__ = ["fill", "FORK", "UPSTREAM", "NOW", "sha"]


#: a stored L2 unit holding plotly's own syntax: a template field, markup and an entity, each to
#: be shown as written
HOSTILE_UNIT = "%{y}<b>x</b> &amp;"


def hostile_l2_point(store: Store, *, now: float = NOW) -> None:
    """One L2 point (value 1.5) whose stored unit is :data:`HOSTILE_UNIT` and whose benchmark
    name is markup too: a series of its own."""
    store.db["l2_points"].insert({"repo": FORK, "benchmark": "<i>mm</i>", "impl": "triton", "metric": "ms", "shape": "8",
                                  "dtype": "fp16", "platform": "h100", "unit": HOSTILE_UNIT, "sha": sha("l", 0),
                                  "seq": 0, "time": int(now - 3600), "value": 1.5, "repeats_json": "[]", "ok": 1})


#: the L2 series of :func:`wobbly_l2_series`: a +0.8 % level wobble at point 52, three points
#: before a 4 % regression at 55 (tests/l2/test_detection.py: the wobble is merged into it)
WOBBLE, REGRESSION = 52, 55


def wobbly_l2_series(store: Store, *, now: float = NOW) -> list[str]:
    """An 80-point throughput series ``attn[triton]:1024:bf16@h100`` whose sub-threshold change
    point at :data:`WOBBLE` detection merges into the regression at :data:`REGRESSION`; returns
    its shas in landing order."""
    import numpy as np

    rng = np.random.default_rng(39)
    x = 100.0 * (1 + 0.007 * rng.standard_normal(80))
    x[REGRESSION:] *= 0.96
    x[WOBBLE:] *= 1.008
    shas = [sha("w", k) for k in range(len(x))]
    store.db["l2_points"].insert_all(
        {"repo": FORK, "benchmark": "attn", "impl": "triton", "metric": "tflops", "shape": "1024", "dtype": "bf16", "platform": "h100",
         "unit": "TFLOP/s", "sha": s, "seq": k, "time": int(now - (len(x) - k) * 3600), "value": float(v),
         "repeats_json": "[]", "ok": 1} for k, (s, v) in enumerate(zip(shas, x)))
    return shas
