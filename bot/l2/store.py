"""L2 series in the store: one row per (series, trunk commit) point.

A series is keyed by (benchmark, impl, metric, shape, dtype, platform); ``impl`` keeps the Triton
kernel and its reference (``torch`` / cuBLAS) apart. Points come from the runner's result JSON
(``gpu_runner.result.RunResult.benchmarks``, ``forksync-bench/1``), in landing order (``seq``:
the commit's position on the fork's first-parent line, supplied by the caller; time breaks ties).
Detection itself is pure (:mod:`bot.l2.detection`); this module is the edge that feeds it.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

from bot import store as store_mod
from bot.l2.detection import Point, SeriesKey

L2_POINTS = store_mod.table("l2_points", {
    "id": int, "repo": str, "benchmark": str, "impl": str, "metric": str, "shape": str, "dtype": str, "platform": str,
    "unit": str, "sha": str, "seq": int, "time": int, "value": float, "repeats_json": str, "ok": int,
}, pk="id", indexes=[("repo", "benchmark", "impl", "metric", "shape", "dtype", "platform")],
    unique_indexes=[("repo", "benchmark", "impl", "metric", "shape", "dtype", "platform", "sha")])

L2_RUNS = store_mod.table("l2_runs", {"key": str, "repo": str, "sha": str, "seq": int, "time": float},
                          pk="key", indexes=[("repo",)])

#: ``status`` is the text people read (the dashboard, the tick's notes); ``status_code`` what
#: code decides on: one of :data:`STATUS_CODES` ("" for a row whose text no release wrote)
L2_REGRESSIONS = store_mod.table("l2_regressions", {
    "key": str, "repo": str, "series": str, "good": str, "bad": str, "status": str, "culprit": str,
    "issue": int, "backout_pr": int, "time": float, "status_code": str,
}, pk="key", indexes=[("repo",)])

# the codes of an investigated regression (``l2_regressions.status_code``)
NOT_CONFIRMED = "not-confirmed"     # the confirmation run did not find it (or could not measure)
BISECTED = "bisected"               # confirmed; bisection named one culprit
SUSPECTS = "suspects"               # confirmed; bisection left several suspects
NOT_BISECTED = "not-bisected"       # confirmed; no commit named (history rewritten, or not reproduced on re-test)
STATUS_CODES = (NOT_CONFIRMED, BISECTED, SUSPECTS, NOT_BISECTED)
#: the codes of a regression the confirmation run found
CONFIRMED = frozenset({BISECTED, SUSPECTS, NOT_BISECTED})


@dataclass(frozen=True)
class RegressionStatus:
    """Where the investigation of one alerting change point ended: ``code`` (one of
    :data:`STATUS_CODES`) and ``text``, the words people read."""

    code: str
    text: str

#: Units where a larger value is better; anything else (ms, us, s …) is a time: smaller is better.
HIGHER_IS_BETTER_UNITS = frozenset({"TFLOP/s", "GFLOP/s", "GB/s", "TB/s", "tokens/s", "items/s"})


def series_key(benchmark: str, impl: str, shape: str, dtype: str, platform: str, unit: str) -> SeriesKey:
    """The :class:`SeriesKey` of one (benchmark, impl) on a platform (``impl`` folded into the
    benchmark name as ``benchmark[impl]``)."""
    return SeriesKey(f"{benchmark}[{impl}]", shape, dtype, platform, unit, unit in HIGHER_IS_BETTER_UNITS)


def record_result(db: "store_mod.Store", repo: str, result, seq: int, time: int | None = None) -> int:
    """Store every benchmark point of a runner result (``RunResult``: ``commit``, ``platform``,
    ``benchmarks``) measured on fork ``repo`` (``owner/name``: each fork's series are its own, even
    where two forks name their benchmarks alike); a point already stored for the same fork, series
    and sha is replaced (a re-run). ``seq``: the commit's first-parent position on the fork's trunk.
    Points marked ``ok: false`` (wrong result while measured) and points whose value is not a
    finite number (a 0 ms timer reading gives inf TFLOP/s; 0/0 NaN: no measurement, stored with a
    NULL value) are stored but never enter a series. Returns the number of points written."""
    rows = []
    for b in result.benchmarks:
        finite = b.value is not None and math.isfinite(float(b.value))
        repeats = _repeats_in_unit(b) if finite else []
        rows.append({"repo": repo, "benchmark": b.benchmark, "impl": b.impl, "metric": b.metric, "shape": b.shape,
                     "dtype": b.dtype, "platform": result.platform, "unit": b.unit, "sha": result.commit,
                     "seq": seq, "time": int(time if time is not None else getattr(result, "finished_at", 0)),
                     "value": float(b.value) if finite else None, "repeats_json": json.dumps(repeats),
                     "ok": int(bool(b.ok) and finite)})
    with db.lock:
        t = db.db[L2_POINTS.name]
        for r in rows:
            t.delete_where("repo = ? and benchmark = ? and impl = ? and metric = ? and shape = ? and dtype = ? "
                           "and platform = ? and sha = ?", [repo, r["benchmark"], r["impl"], r["metric"], r["shape"], r["dtype"],
                                           r["platform"], r["sha"]])
            t.insert(r)
    return len(rows)


def _repeats_in_unit(b) -> list[float]:
    """Repeat medians in the point's own unit: ms as they are for a time unit; for a throughput,
    ``value · median_ms / repeat_ms`` (throughput ∝ 1 / time). Empty when not derivable."""
    reps = [float(r) for r in (getattr(b, "repeat_medians_ms", None) or []) if r and r > 0]
    if not reps:
        return []
    if b.unit == "ms":
        return reps
    med = getattr(b, "median_ms", None)
    if b.unit in HIGHER_IS_BETTER_UNITS and med:
        return [float(b.value) * med / r for r in reps]
    return []


def series_keys(db: "store_mod.Store", repo: str) -> list[tuple[str, str, str, str, str, str, str]]:
    """Every series stored for fork ``repo`` as (benchmark, impl, metric, shape, dtype, platform,
    unit), sorted."""
    rows = db.db.execute("select distinct benchmark, impl, metric, shape, dtype, platform, unit from l2_points "
                         "where repo = ? order by 1, 2, 3, 4, 5, 6", [repo]).fetchall()
    return [tuple(r) for r in rows]


def load_series(db: "store_mod.Store", repo: str, benchmark: str, impl: str, metric: str, shape: str, dtype: str,
                platform: str) -> list[Point]:
    """Fork ``repo``'s series: its points in landing order (``seq``, then time), ``ok`` points only."""
    rows = db.db[L2_POINTS.name].rows_where(
        "repo = ? and benchmark = ? and impl = ? and metric = ? and shape = ? and dtype = ? and platform = ? and ok = 1",
        [repo, benchmark, impl, metric, shape, dtype, platform], order_by="seq, time, id")
    return [Point(r["sha"], r["value"], tuple(json.loads(r["repeats_json"])), r["time"]) for r in rows]


def ensure(db: "store_mod.Store") -> None:
    """Create the L2 tables when the store was opened before they were declared."""
    db.ensure(L2_RUNS, L2_REGRESSIONS, L2_POINTS)


def runs(db: "store_mod.Store", repo: str) -> list[dict]:
    """The fork's L2 runs on trunk, newest first (``key``, ``sha``, ``seq``, ``time``)."""
    with db.lock:
        return list(db.db[L2_RUNS.name].rows_where("repo = ?", [repo], order_by="time desc"))


def record_run(db: "store_mod.Store", repo: str, sha: str, seq: int, now: float) -> None:
    with db.lock:
        db.db[L2_RUNS.name].upsert({"key": f"{repo}@{sha}", "repo": repo, "sha": sha, "seq": seq, "time": now},
                                   pk="key")


def regression_known(db: "store_mod.Store", key: str) -> bool:
    """Whether the regression ``key`` (``<fork>:<series>:<first bad sha>``) was investigated."""
    with db.lock:
        return any(db.db[L2_REGRESSIONS.name].rows_where("key = ?", [key]))


def save_regression(db: "store_mod.Store", row: dict) -> None:
    with db.lock:
        db.db[L2_REGRESSIONS.name].upsert(row, pk="key")


def regressions(db: "store_mod.Store", repo: str) -> list[dict]:
    """The fork's investigated regressions (``l2_regressions`` rows), oldest first; a row is
    confirmed when its ``status_code`` is in :data:`CONFIRMED`."""
    with db.lock:
        return list(db.db[L2_REGRESSIONS.name].rows_where("repo = ?", [repo], order_by="time, key"))


def series_points(db: "store_mod.Store", repo: str, benchmark: str, impl: str, metric: str, shape: str, dtype: str,
                  platform: str) -> tuple[int, list[dict]]:
    """``(a version that changes whenever the series gains or changes a point, rows)`` of fork
    ``repo``'s series: its ``ok`` points in landing order, ``sha``, ``value``, ``time``."""
    with db.lock:
        cur = db.conn.execute("SELECT id, sha, value, time FROM l2_points WHERE repo = ? AND benchmark = ? AND impl = ? "
                              "AND metric = ? AND shape = ? AND dtype = ? AND platform = ? AND ok = 1 "
                              "ORDER BY seq, time, id", [repo, benchmark, impl, metric, shape, dtype, platform])
        rows = [{"id": i, "sha": s, "value": v, "time": t} for i, s, v, t in cur.fetchall()]
    return hash(tuple(r["id"] for r in rows)), rows
