"""What a sync leaves for the dashboard (docs/dashboard.md): a metrics snapshot per sync, the
ledger and the plan as computed, and the backfill of a fork's history.

The builders are pure (plain data in, rows out); :func:`record_sync` and :func:`backfill` are
the edges that write them through :mod:`bot.sync.store`.
"""
from __future__ import annotations

import json
import time
from dataclasses import replace
from datetime import date, timedelta
from typing import Iterable

from bot.config.forksync import ForksyncConfig
from bot.model import CommitInfo, Disposition, Evidence, LedgerEntry, Plan
from bot.store import Store
from bot.sync import store as sync_store
from bot.sync.status import SyncStatus


def areas_of(paths: Iterable[str]) -> tuple[str, ...]:
    """The areas a commit touches: each path's first two directories (``lib/Dialect``,
    ``python/triton``, ``third_party/amd``), or its first directory for a shallower path, or
    ``(root)`` for a file at the top. Sorted, without repeats."""
    out = set()
    for p in paths:
        parts = p.split("/")
        out.add("/".join(parts[:2]) if len(parts) > 2 else (parts[0] if len(parts) == 2 else "(root)"))
    return tuple(sorted(out))


def ledger_rows(repo: str, entries: Iterable[LedgerEntry], commits: dict[str, CommitInfo],
                cfg: ForksyncConfig | None = None) -> list[dict]:
    """``ledger_snapshot`` rows for the fork's ledger entries (``commits``: upstream CommitInfo by
    sha). Each entry's areas: the names of ``cfg``'s areas its paths match (the names the plan
    labels units with) when the config defines areas, else :func:`areas_of`'s directories."""
    out = []
    for e in entries:
        c = commits.get(e.sha)
        areas = () if c is None else cfg.areas_for_paths(sorted(c.paths)) if cfg is not None and cfg.areas \
            else areas_of(c.paths)
        out.append({"key": f"{repo}:{e.sha}", "repo": repo, "idx": e.index, "sha": e.sha, "pr": e.pr,
                    "subject": e.subject, "time": e.committer_time, "disposition": e.disposition.value,
                    "fork_commit": e.fork_commit or "", "reason": e.reason, "isolated": int(e.isolated),
                    "areas": "," + ",".join(areas) + "," if areas else "",
                    "evidence_json": json.dumps([{"rule": x.rule, "fork_commit": x.fork_commit, "detail": x.detail}
                                                 for x in e.evidence])})
    return out


def with_published(entries: Iterable[LedgerEntry], branches: Iterable[dict]) -> list[LedgerEntry]:
    """The ledger as the fork has it once this sync's branches are pushed: the ledger a sync
    computes comes before it publishes, so a PENDING commit it has just pushed on a
    ``forksync/*`` branch becomes IN_FLIGHT here, with the ``in-flight`` evidence the next
    computation gives it (bot.core.ledger: an undecided commit carried by a sync branch).
    ``branches``: ``sync_branches`` rows (``branch``, ``shas_json``, ``pushed_tip``,
    ``conflict_sha``); a branch never pushed carries nothing, and a chain stopped at a conflict
    carries only the picks before it (the conflict commit has no ``Upstream-Commit:``)."""
    carried: dict[str, str] = {}
    for b in branches:
        if not b.get("pushed_tip"):
            continue
        for sha in json.loads(b.get("shas_json") or "[]"):
            if sha == b.get("conflict_sha"):
                break
            carried.setdefault(sha, b["branch"])
    return [replace(e, disposition=Disposition.IN_FLIGHT, evidence=e.evidence + (Evidence("in-flight", None, carried[e.sha]),))
            if e.disposition is Disposition.PENDING and e.sha in carried else e for e in entries]


def plan_units(plan: Plan) -> list[dict]:
    """The plan's units as ``plan_snapshot`` records (upstream order kept)."""
    return [{"id": u.id, "kind": u.kind, "shas": list(u.shas), "depends_on": list(u.depends_on), "areas": list(u.areas),
             "reason": u.reason} for u in plan.units]


def snapshot_row(st: SyncStatus, *, at: float, contiguous_lag_days: float, source: str, stale_after_s: float = 0.0) -> dict:
    """A ``metrics_snapshots`` row from a fork's status (``source``: sync | refresh | fetch-failed | backfill |
    backfill-before-fork)."""
    return {"stale_after_s": stale_after_s, "repo": st.repo, "at": at, "upstream_as_of": st.upstream_seen_at, "upstream_head": st.upstream_head,
            "frontier": st.frontier, "contiguous_pin": st.contiguous_pin, "days_behind": st.days_behind,
            "contiguous_lag_days": contiguous_lag_days, "backlog": st.backlog, "not_reached": st.not_reached,
            "open_units": sum(1 for u in st.units if not u.get("waiting")), "source": source, "fetch_error": st.last_fetch_error}


def record_sync(store: Store, st: SyncStatus, *, at: float, contiguous_lag_days: float | None = None,
                ledger: list[dict] | None = None, plan: list[dict] | None = None,
                keep_days: float = sync_store.KEEP_SNAPSHOT_DAYS, stale_after_s: float | None = None) -> None:
    """After a sync or an upstream refresh: one snapshot row, and the ledger and plan when given
    (None: keep the last). ``source`` is ``fetch-failed`` when the status carries a fetch error,
    ``sync`` when the numbers were computed (a ledger is given), else ``refresh`` (upstream seen
    again, unchanged). ``contiguous_lag_days`` and ``stale_after_s`` (the fork's
    ``github.stale_after_s``) None keep the last snapshot's."""
    source = "fetch-failed" if st.last_fetch_error else ("sync" if ledger is not None else "refresh")
    if contiguous_lag_days is None or stale_after_s is None:
        prev = sync_store.last_snapshot(store, st.repo) or {}
        contiguous_lag_days = prev.get("contiguous_lag_days") or 0.0 if contiguous_lag_days is None else contiguous_lag_days
        stale_after_s = prev.get("stale_after_s") or 0.0 if stale_after_s is None else stale_after_s
    sync_store.record_snapshot(store, snapshot_row(st, at=at, contiguous_lag_days=contiguous_lag_days, source=source,
                                                   stale_after_s=stale_after_s), keep_days)
    if ledger is not None:
        sync_store.replace_ledger(store, st.repo, ledger)
    if plan is not None:
        sync_store.save_plan(store, st.repo, at, plan)


def backfill_dates(first: date, last: date, step_days: int) -> list[str]:
    """``YYYY-MM-DD`` from ``last`` back to ``first`` every ``step_days``, oldest first (the
    newest point is always ``last``, so the series ends at today)."""
    if step_days < 1:
        raise ValueError("the backfill step must be at least 1 day")
    out, d = [], last
    while d >= first:
        out.append(d.isoformat())
        d -= timedelta(days=step_days)
    return out[::-1]


def backfill(store: Store, repo: str, cfg: ForksyncConfig, *, days: int = 365, step_days: int = 7,
             today: date | None = None, progress=None) -> int:
    """Fill ``metrics_snapshots`` for ``repo`` from its history when it has none: one point per
    ``step_days`` over the last ``days`` days, computed as ``forksync status --series`` does
    (:func:`bot.sync.ingest.series`: the state at the end of each UTC day). Also writes the
    ledger of the newest point when the fork has no ledger snapshot. Returns the number of
    points written (0 when the fork already had snapshots). Raises what ``series`` raises."""
    from bot.sync.ingest import before_first_own_commit, series  # lazy: git and the core load only for a backfill

    if sync_store.has_snapshots(store, repo):
        return 0
    last = today or date.fromtimestamp(time.time())
    dates = backfill_dates(last - timedelta(days=days), last, step_days)
    rows, newest = [], None
    own = []            # per row: whether the fork had an own commit by then (states are not kept: memory)
    for d in dates:
        for d, s in series(cfg, d, d, 1, progress=progress):
            end = _end_of_day(d)
            up_time = s.pins.upstream_tip.committer_time if s.pins.upstream_tip else 0
            rows.append({"repo": repo, "at": end, "upstream_as_of": float(up_time or end),
                         "upstream_head": s.upstream_tip, "frontier": s.pins.frontier.sha or "",
                         "contiguous_pin": s.pins.contiguous.sha or "", "days_behind": float(s.pins.days_behind),
                         "contiguous_lag_days": float(s.pins.contiguous_lag_days), "backlog": int(s.pins.backlog),
                         "not_reached": int(s.pins.not_reached), "open_units": len(s.in_flight), "source": "backfill",
                         "fetch_error": ""})
            own.append(bool(s.fork_commits))
            newest = s
    for row, early in zip(rows, before_first_own_commit(own)):
        if early:
            row["source"] = "backfill-before-fork"
    sync_store.record_snapshots(store, rows)
    if newest is not None:
        total, _ = sync_store.query_ledger(store, repo, limit=1)
        if not total:
            sync_store.replace_ledger(store, repo, ledger_rows(repo, newest.ledger.entries, newest.upstream, cfg))
    return len(rows)


def _end_of_day(d: str) -> float:
    import calendar
    y, m, dd = map(int, d.split("-"))
    return float(calendar.timegm((y, m, dd, 23, 59, 59)))


__all__ = ["areas_of", "ledger_rows", "plan_units", "snapshot_row", "record_sync", "backfill_dates", "backfill"]
