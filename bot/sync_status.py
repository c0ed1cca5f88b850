"""Per-fork sync status as last computed (table ``sync_status``): pins, Days Behind, Backlog and
*when upstream was last seen*, so that old numbers are never shown as current.

Written by :mod:`bot.sync_service` after every ingest (and when a fetch of upstream fails); read
by ``/metrics`` (:mod:`bot.app_metrics`) and the status issue (:mod:`bot.handlers.status_issue`).

Staleness rule (issue 3, item 4): the numbers are *stale* when the last fetch of upstream failed
after the last success, or upstream was last seen more than ``github.stale_after_s`` seconds ago
(default 1 day); an *alarm* is raised past ``github.alarm_after_s`` (default 3 days).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass

from bot.store import Store, table

SYNC_STATUS = table("sync_status", {
    "repo": str,                 # fork "owner/name"
    "upstream": str,             # upstream "owner/name" or URL
    "upstream_head": str,
    "fork_head": str,
    "frontier": str,
    "contiguous_pin": str,
    "days_behind": float,
    "backlog": int,
    "not_reached": int,          # upstream commits newer than the frontier
    "upstream_seen_at": float,   # last successful fetch of upstream (epoch s)
    "computed_at": float,
    "last_fetch_at": float,
    "last_fetch_error": str,
    "held": int,                 # /forksync hold
    "deferred_json": str,        # [{"sha","subject","reason"}]
    "units_json": str,           # [{"id","kind","pr","url","state"}]
    "etag": str,                 # poller ETag of the upstream branch
}, pk="repo")


@dataclass(frozen=True)
class SyncStatus:
    repo: str
    upstream: str = ""
    upstream_head: str = ""
    fork_head: str = ""
    frontier: str = ""
    contiguous_pin: str = ""
    days_behind: float = 0.0
    backlog: int = 0
    not_reached: int = 0
    upstream_seen_at: float = 0.0
    computed_at: float = 0.0
    last_fetch_at: float = 0.0
    last_fetch_error: str = ""
    held: bool = False
    deferred: tuple[dict, ...] = ()
    units: tuple[dict, ...] = ()
    etag: str = ""

    def stale(self, max_age_s: float | None = None, now: float | None = None) -> bool:
        """The last upstream fetch failed after the last success, upstream was never seen, or
        (with ``max_age_s``) it was last seen longer ago than that."""
        if self.last_fetch_error or not self.upstream_seen_at:
            return True
        return max_age_s is not None and (self.upstream_age_s(now) or 0.0) > max_age_s

    def upstream_age_s(self, now: float | None = None) -> float | None:
        if not self.upstream_seen_at:
            return None
        return max(0.0, (time.time() if now is None else now) - self.upstream_seen_at)

    def alarm(self, max_age_s: float, now: float | None = None) -> bool:
        age = self.upstream_age_s(now)
        return age is None or age > max_age_s


def load(store: Store, repo: str) -> SyncStatus | None:
    with store.lock:
        rows = list(store.db["sync_status"].rows_where("repo = ?", [repo]))
    return _from_row(rows[0]) if rows else None


def load_all(store: Store) -> list[SyncStatus]:
    with store.lock:
        return [_from_row(r) for r in store.db["sync_status"].rows_where(order_by="repo")]


def save(store: Store, status: SyncStatus) -> None:
    row = {k: v for k, v in status.__dict__.items() if k not in ("deferred", "units", "held")}
    row["held"] = int(status.held)
    row["deferred_json"] = json.dumps(list(status.deferred))
    row["units_json"] = json.dumps(list(status.units))
    with store.lock:
        store.db["sync_status"].upsert(row, pk="repo")


def _from_row(r: dict) -> SyncStatus:
    return SyncStatus(
        repo=r["repo"], upstream=r["upstream"] or "", upstream_head=r["upstream_head"] or "",
        fork_head=r["fork_head"] or "", frontier=r["frontier"] or "",
        contiguous_pin=r["contiguous_pin"] or "", days_behind=r["days_behind"] or 0.0,
        backlog=r["backlog"] or 0, not_reached=r.get("not_reached") or 0, upstream_seen_at=r["upstream_seen_at"] or 0.0,
        computed_at=r["computed_at"] or 0.0, last_fetch_at=r["last_fetch_at"] or 0.0,
        last_fetch_error=r["last_fetch_error"] or "", held=bool(r["held"]),
        deferred=tuple(json.loads(r["deferred_json"] or "[]")),
        units=tuple(json.loads(r["units_json"] or "[]")), etag=r["etag"] or "")


__all__ = ["SyncStatus", "load", "load_all", "save"]
