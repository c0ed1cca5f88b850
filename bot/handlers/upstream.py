"""Upstream tracking: a ``push`` to upstream's branch (app installed where upstream lives) and a
poller for upstreams it is not installed on. Either way a new upstream head runs a sync of every
fork tracking it.

Tracked forks (table ``tracked_forks``) are recorded when the bot reads a fork's configuration
(installation events, or any sync). The poller asks ``repos/get-branch`` with ``If-None-Match``
(the GitHub client's per-installation ETag cache; a 304 costs no rate limit) every
``github.poll_interval_s`` seconds and syncs when the head differs from the last one seen. A
failed poll marks the fork's numbers stale (``sync_status.last_fetch_error``).
"""
from __future__ import annotations

import logging
import time

import gidgethub
from gidgethub import routing

from bot import sync_status
from bot.handlers.common import RepoRef, split_repo
from bot.store import Store, table

log = logging.getLogger(__name__)

TRACKED = table("tracked_forks", {
    "fork": str, "upstream": str, "upstream_ref": str, "installation_id": int, "poll_interval_s": int,
    "last_poll_at": float,
}, pk="fork", indexes=[("upstream",)])

router = routing.Router()


def track(store: Store, fork: str, upstream: str, upstream_ref: str, installation_id: int | None,
          poll_interval_s: int) -> None:
    with store.lock:
        old = list(store.db["tracked_forks"].rows_where("fork = ?", [fork]))
        store.db["tracked_forks"].upsert({"fork": fork, "upstream": upstream, "upstream_ref": upstream_ref,
                                          "installation_id": installation_id, "poll_interval_s": poll_interval_s,
                                          "last_poll_at": old[0]["last_poll_at"] if old else 0.0}, pk="fork")


def forks_tracking(store: Store, upstream: str, ref: str) -> list[dict]:
    with store.lock:
        return list(store.db["tracked_forks"].rows_where("upstream = ? and upstream_ref = ?", [upstream, ref],
                                                         order_by="fork"))


def due_for_poll(rows: list[dict], now: float) -> list[dict]:
    """Pure: tracked forks whose poll interval has passed (interval 0 = never poll)."""
    return [r for r in rows if r["poll_interval_s"] and now - (r["last_poll_at"] or 0) >= r["poll_interval_s"]]


@router.register("push")
async def on_upstream_push(event, ctx) -> None:
    repo = RepoRef.model_validate(event.data["repository"])
    ref = event.data.get("ref") or ""
    if not isinstance(ref, str) or not ref.startswith("refs/heads/"):
        return
    forks = forks_tracking(ctx.store, repo.full_name, ref[len("refs/heads/"):])
    if not forks:
        return
    from bot.sync_service import service_of
    svc = service_of(ctx)
    for f in forks:
        sub = ctx if f["installation_id"] == ctx.installation_id else await _ctx_for(ctx, svc, f["installation_id"])
        ctx.note(await svc.sync(sub, f["fork"], reason=f"upstream push {str(event.data.get('after'))[:12]}"))


async def _ctx_for(ctx, svc, installation_id):
    from dataclasses import replace
    gh = await svc.client_for(installation_id)
    return replace(ctx, gh=gh, installation_id=installation_id, outcome=ctx.outcome)


async def poll_once(store: Store, svc, make_ctx, now: float | None = None) -> list[str]:
    """Poll every due tracked fork's upstream once; sync those whose head moved. Returns notes.
    ``make_ctx(installation_id)`` gives a handler context for the fork's installation."""
    now = time.time() if now is None else now
    with store.lock:
        rows = list(store.db["tracked_forks"].rows_where(order_by="fork"))
    out = []
    for r in due_for_poll(rows, now):
        ctx = await make_ctx(r["installation_id"])
        with store.lock:
            store.db["tracked_forks"].update(r["fork"], {"last_poll_at": now})
        st = sync_status.load(store, r["fork"]) or sync_status.SyncStatus(repo=r["fork"], upstream=r["upstream"])
        try:
            branch = await ctx.gh.getitem("/repos/{owner}/{repo}/branches/{branch}",
                                          {**split_repo(r["upstream"]), "branch": r["upstream_ref"]})
            head = branch["commit"]["sha"]
        except (gidgethub.HTTPException, OSError, KeyError, TypeError) as e:
            from dataclasses import replace
            sync_status.save(store, replace(st, last_fetch_at=now, last_fetch_error=f"poll of {r['upstream']} failed: {e}"[:300]))
            out.append(f"{r['fork']}: poll failed: {e}")
            try:
                await svc.refresh_status_issue(ctx, r["fork"])
            except Exception as e2:  # noqa: BLE001 - reported in the note; the next poll retries
                out.append(f"{r['fork']}: status issue not refreshed: {e2}")
            continue
        if head == st.upstream_head and not st.last_fetch_error:
            from dataclasses import replace
            sync_status.save(store, replace(st, upstream_seen_at=now, last_fetch_at=now))
            out.append(f"{r['fork']}: upstream unchanged")
            continue
        out.append(await svc.sync(ctx, r["fork"], reason=f"poll: upstream at {head[:12]}"))
    return out
