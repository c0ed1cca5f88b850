"""Upstream tracking: a ``push`` to upstream's branch (where the App is installed upstream) syncs every
fork tracking that branch, and a poller checks each tracked fork's upstream, the App installed there
or not, and syncs that fork when upstream's head moved.

Tracked forks (table ``tracked_forks``, :mod:`bot.sync.store`) are recorded when the App adopts a
repository whose configuration names an upstream (installation events, :func:`adopt`). The poller
asks ``repos/get-branch`` with ``If-None-Match`` (the GitHub client's per-installation ETag cache; a
304 costs no rate limit) every ``github.poll_interval_s`` seconds (the fork's value when it was
adopted) and syncs when the head differs from the last one seen — or when the last polled sync failed
leaving a unit blocked by a failure that may pass on its own (a 5xx, a raced push:
:func:`bot.sync.blocked.retried_by_sync`), which the poll retries as the queue retries a failed
delivery (a polled sync has none; without it the unit waited for upstream's next move, and the
poll that found upstream "unchanged" cleared the failing job). A polled sync that succeeds ends
the retries: one that tried no unit (a fork on hold) would otherwise be run again on every poll;
so do :data:`POLL_RETRIES` failed ones in a row, as the queue dead-letters a delivery, keeping the
failing job (a 422 forksync cannot tell from a passing refusal may stay). A failed poll marks the fork's
numbers stale (``sync_status.last_fetch_error``) and is a failing ``poll`` job (status issue,
``/healthz``); so is a polled sync that failed, and its numbers, of an older upstream head than
the one seen, are stale too until a sync of that head succeeds — as are those of a fork whose sync
of the head an upstream ``push`` announced failed (:func:`mark_behind`; the delivery is retried). A poll GitHub refuses because the
fork's installation is suspended pauses its forks instead, as ``installation.suspend`` would (a
webhook missed while forksync was down is not redelivered); the poller keeps asking, and the first
poll GitHub answers again resumes them.
"""
from __future__ import annotations

import logging
import time
from dataclasses import replace

import gidgethub

from bot.agents.redact import error_text, scrub
from bot.github.client import installation_suspended
from bot.github.common import error_to_raise, split_repo
from bot.store import Store
from bot.sync import blocked as blocked_mod
from bot.sync import snapshots
from bot.sync import status as sync_status
from bot.sync import store as sync_store

log = logging.getLogger(__name__)

#: Polled syncs in a row that may fail on a unit blocked by a refusal that may pass on its own
#: before the poll stops retrying it (:func:`poll_once`): the queue's attempts for a delivery
#: (:attr:`bot.app.queue.QueuePolicy.max_attempts`' default).
POLL_RETRIES = 5


def due_for_poll(rows: list[dict], now: float) -> list[dict]:
    """Pure: tracked forks whose poll interval has passed at ``now`` (epoch s; interval 0 = never
    poll). A last poll in the future is due: the clock was stepped back since (NTP correcting a
    clock that ran fast), and waiting for it to catch up would hold polling for as long."""
    def due(r: dict) -> bool:
        last = r["last_poll_at"] or 0
        return last > now or now - last >= r["poll_interval_s"]
    return [r for r in rows if r["poll_interval_s"] and due(r)]


async def on_upstream_push(ctx, sync, upstream: str, ref: str, after: str) -> None:
    """Upstream ``upstream`` moved its branch ``ref`` (a ``refs/heads/…`` ref) to ``after``: sync
    every fork tracking that branch, each through its own installation's client. A fork whose
    installation is suspended is skipped; GitHub refusing one's sync for that reason
    (:func:`bot.github.client.installation_suspended`) records the suspension of the fork's
    installation at ``ctx.now()``, as ``installation.suspend`` would, and is no failure."""
    if not isinstance(ref, str) or not ref.startswith("refs/heads/"):
        return
    forks = sync_store.forks_tracking(ctx.store, upstream, ref[len("refs/heads/"):])
    off = sync_store.suspended(ctx.store)
    errors: list[BaseException] = []
    for f in forks:
        if f["installation_id"] in off:     # caught up when the suspension is lifted
            ctx.note(f"{f['fork']}: paused (its installation is suspended)")
            continue
        # one fork failing (GitHub refusing it, its git) must not leave the others unsynced: one
        # error (a retryable one first) is re-raised after all of them ran, so the delivery is
        # retried (syncs are idempotent) and, past its attempts, dead-lettered on the forks'
        # status issues
        sub = ctx
        before = (sync_store.load_status(ctx.store, f["fork"]) or sync_status.SyncStatus(repo=f["fork"])).computed_at
        try:
            sub = ctx if f["installation_id"] == ctx.installation_id else await _ctx_for(ctx, sync, f["installation_id"])
            ctx.note(await sync.sync(sub, f["fork"], reason=f"upstream push {str(after)[:12]}"))
        except Exception as e:  # noqa: BLE001 - re-raised below
            if installation_suspended(e):
                # the fork's installation was suspended and its webhook missed: paused as that
                # webhook would have it (the fork's, which need not be this delivery's); the
                # catch-up sync when the suspension is lifted brings this push in
                sync_store.set_suspended(ctx.store, f["installation_id"], True, at=ctx.now())
                off.setdefault(f["installation_id"], {})
                ctx.note(f"{f['fork']}: paused (its installation is suspended)")
                continue
            ctx.note(f"{f['fork']}: sync failed: {type(e).__name__}")
            errors.append(e)
            # the push told of a head the fork's numbers are not of: stale until a sync of it succeeds
            if mark_behind(ctx.store, f["fork"], str(after), error_text(e, 300), ctx.now(), keep_days=f.get("keep_days"),
                           computed_before=before):
                for line in await refresh_quietly(sync, sub, f["fork"], create=False):
                    ctx.note(line)
    if errors:
        raise error_to_raise(errors)


def mark_behind(store: Store, fork: str, head: str, error: str, now: float, *, keep_days: float | None = None,
                default: sync_status.SyncStatus | None = None, computed_before: float | None = None) -> bool:
    """A sync of upstream's ``head`` (a sha GitHub announced: a poll or a ``push``) failed with
    ``error``: the stored numbers, of an older head, are stale (as a failed fetch is,
    ``sync_status.last_fetch_error``) until a sync of ``head`` succeeds, and a ``fetch-failed``
    snapshot is written (``keep_days``: the fork's ``github.metrics_keep_days``; None the
    default). Nothing is changed when the numbers are of ``head`` already, a failure is recorded
    (the first error says more), or the failed sync computed them after all (their
    ``computed_at`` is no longer ``computed_before``, the one read before it ran: upstream may have
    moved past ``head`` meanwhile, and the numbers are of that newer head). ``default``: the status
    when none is stored. Returns whether it changed the status."""
    cur = sync_store.load_status(store, fork) or default
    if cur is None or cur.upstream_head == head or cur.last_fetch_error:
        return False
    if computed_before is not None and cur.computed_at != computed_before:
        return False
    cur = replace(cur, last_fetch_at=now, last_fetch_error=f"{sync_status.UPSTREAM_MOVED}{head[:12]}; its sync failed: {error}"[:300])
    sync_store.save_status(store, cur)
    snapshots.record_sync(store, cur, at=now, keep_days=keep_days or sync_store.KEEP_SNAPSHOT_DAYS)
    return True


async def _ctx_for(ctx, svc, installation_id):
    gh = await svc.client_for(installation_id)
    return replace(ctx, gh=gh, installation_id=installation_id, outcome=ctx.outcome)


async def refresh_quietly(svc, ctx, fork: str, *, create: bool = True) -> list[str]:
    """Render ``fork``'s status issue again (``create`` off: only an open one is updated); its
    failure is returned as a note rather than raised (what the issue would say is on ``/healthz``
    already, and the next change renders it again)."""
    try:
        await svc.refresh_status_issue(ctx, fork, create=create)
    except Exception as e:  # noqa: BLE001 - see the docstring
        return [f"{fork}: status issue not refreshed: {error_text(e, 300)}"]
    return []


async def job_ended(store: Store, svc, ctx, fork: str, job: str, error: str | None, now: float, *,
                    create: bool = True, refresh: bool = False) -> list[str]:
    """Record how ``job`` of ``fork`` ended (:func:`bot.sync.store.record_job`) and, when the set
    of failing jobs changed either way, render the status issue again: a failure appears there,
    and a success clears it (a sync that succeeded rendered the issue before its job was cleared).
    ``refresh``: render an open one again even so (never create one for it). ``create``: as for
    :func:`refresh_quietly`. Returns the notes of :func:`refresh_quietly`."""
    if not sync_store.record_job(store, fork, job, error, now):
        return await refresh_quietly(svc, ctx, fork, create=False) if refresh else []
    return await refresh_quietly(svc, ctx, fork, create=create)


async def poll_once(store: Store, svc, make_ctx, now: float | None = None, *, catch_up: bool = False) -> list[str]:
    """Poll every due tracked fork's upstream once; sync those whose head moved, or which hold a
    unit blocked by a failure that may pass on its own (see the module doc). Returns notes.
    ``catch_up``: the worker's first pass after it started — every tracked fork is polled, due or
    not, and one holding open units is synced even when upstream did not move: what GitHub sent
    while forksync was down (a sync PR's ``pull_request.closed``: merged or closed by a person) is
    never sent again, and the sync lands the PRs GitHub shows closed first
    (:meth:`bot.sync.service.SyncService.land_closed`), so the store, the numbers and the status
    issue agree with GitHub again without waiting for upstream's next push.
    GitHub refusing a poll because the fork's installation is suspended
    (:func:`bot.github.client.installation_suspended`) records the suspension at ``now`` (epoch s;
    suspender unknown), as ``installation.suspend`` does; a poll of a suspended installation's fork
    that GitHub answers lifts it (:func:`bot.sync.store.set_suspended`).
    ``make_ctx(installation_id)`` gives a handler context for the fork's installation."""
    now = time.time() if now is None else now
    off = sync_store.suspended(store)
    out = []
    # a suspended installation's forks are polled too, as the one way to learn that the suspension
    # was lifted when ``installation.unsuspend`` was missed: GitHub's refusal keeps them paused
    tracked = sync_store.tracked_forks(store)
    for r in (tracked if catch_up else due_for_poll(tracked, now)):
        ctx = await make_ctx(r["installation_id"])
        sync_store.mark_polled(store, r["fork"], now)
        keep = r.get("keep_days") or sync_store.KEEP_SNAPSHOT_DAYS      # the fork's metrics_keep_days
        st = sync_store.load_status(store, r["fork"]) or sync_status.SyncStatus(repo=r["fork"], upstream=r["upstream"])
        try:
            branch = await ctx.gh.getitem("/repos/{owner}/{repo}/branches/{branch}",
                                          {**split_repo(r["upstream"]), "branch": r["upstream_ref"]})
            head = branch["commit"]["sha"]
        except (gidgethub.HTTPException, OSError, KeyError, TypeError) as e:
            if installation_suspended(e):
                # an owner suspended the installation (its webhook may have been missed): paused
                # as the webhook would have it, with nothing counted as failing or stale
                sync_store.set_suspended(store, r["installation_id"], True, at=now)
                off.setdefault(r["installation_id"], {})
                out.append(f"{r['fork']}: paused (its installation is suspended)")
                continue
            # scrubbed whole before the cut: it is stored and shown on the status issue and dashboard
            why = scrub(str(e))
            st = replace(st, last_fetch_at=now, last_fetch_error=f"poll of {r['upstream']} failed: {why}"[:300])
            sync_store.save_status(store, st)
            snapshots.record_sync(store, st, at=now, keep_days=keep)
            out.append(f"{r['fork']}: poll failed: {why}")
            # a failing "poll" job too (status issue, /healthz), cleared by the next poll that
            # reaches upstream, not by a sync another event brought (sync_store.POLL_READ); the
            # issue is rendered again either way (its numbers turned stale)
            sync_store.record_job(store, r["fork"], sync_store.POLL_JOB, f"poll of {r['upstream']} failed: {why}", now,
                                  step=sync_store.POLL_READ)
            out += await refresh_quietly(svc, ctx, r["fork"])
            continue
        if r["installation_id"] in off:
            # GitHub answered the installation again: the suspension was lifted (its webhook may
            # have been missed), so its forks resume, this one with the poll's catch-up sync
            sync_store.set_suspended(store, r["installation_id"], False)
            off.pop(r["installation_id"])
            out.append(f"{r['fork']}: resumed (its installation's suspension was lifted)")
        # a unit the last sync left blocked by a failure that may pass on its own waits for a
        # sync to retry it: a delivery's is retried by the queue, a polled sync's by this poll —
        # while that polled sync is failing for it. A sync that tries no unit (a fork on hold)
        # succeeds and clears the job, and a unit still blocked then is no reason to sync on
        # every poll (a fetch and a plan each, minutes on a real fork)
        job = next((j for j in st.failing_jobs if j.get("job") == sync_store.POLL_JOB), None)
        retry = blocked_mod.retried_by_sync(sync_store.blocked_branches(store, r["fork"])) if job else []
        # the status issue writes when upstream was last seen into its body: a poll that syncs
        # nothing renders it again when the hour turned since then (at most one edit an hour)
        hour_turned = not st.upstream_seen_at or int(st.upstream_seen_at // 3600) != int(now // 3600)
        given_up = bool(retry) and job["count"] >= POLL_RETRIES
        missed = catch_up and r["installation_id"] not in off and bool(sync_store.open_branches(store, r["fork"]))
        if head == st.upstream_head and not st.last_fetch_error and (not retry or given_up) and not missed:
            st = replace(st, upstream_seen_at=now, last_fetch_at=now)
            sync_store.save_status(store, st)
            snapshots.record_sync(store, st, at=now, keep_days=keep)
            if given_up:
                # as the queue dead-letters a delivery past its attempts: the failing job stays
                # (the alarm) and the unit blocked on the status issue, until upstream moves, a
                # person ticks its retry box or permissions change
                out.append(f"{r['fork']}: upstream unchanged; {len(retry)} blocked unit(s) not retried after "
                           f"{job['count']} failed polled syncs")
                if hour_turned:
                    out += await refresh_quietly(svc, ctx, r["fork"], create=False)
            else:
                out.append(f"{r['fork']}: upstream unchanged")
                # the fork is synced to the head polled (another sync got there): the poll is not failing
                out += await job_ended(store, svc, ctx, r["fork"], sync_store.POLL_JOB, None, now, refresh=hour_turned)
            continue
        try:
            why = f"poll: upstream at {head[:12]}" if head != st.upstream_head or st.last_fetch_error else \
                f"poll: retrying {len(retry)} blocked unit(s)" if retry and not given_up else \
                "poll: catching up after a start (events sent while forksync was down are not sent again)"
            out.append(await svc.sync(ctx, r["fork"], reason=why))
            error = None
        except Exception as e:  # noqa: BLE001 - one fork's failure must not skip the others' polls
            log.warning("poll: sync of %s failed", r["fork"], exc_info=True)
            error = error_text(e, 300)
            out.append(f"{r['fork']}: sync failed: {error}")
            mark_behind(store, r["fork"], head, error, now, keep_days=keep, default=st, computed_before=st.computed_at)
        # a failed polled sync has no delivery to dead-letter: it is kept as a failing "poll" job
        # (status issue, /healthz), cleared by the next sync that succeeds, polled or not
        out += await job_ended(store, svc, ctx, r["fork"], sync_store.POLL_JOB, error, now)
    return out


async def adopt(ctx, sync, full_name: str) -> str:
    """Read the repo's config; track and sync it when it names an upstream."""
    cfg = await sync.fork_config(ctx, full_name)
    upstream, ref = sync.upstream_of(cfg)
    if not upstream:
        return f"{full_name}: not a fork to sync (no upstream in .github/forksync.yml)"
    sync_store.track(ctx.store, full_name, upstream, ref, ctx.installation_id, cfg.github.poll_interval_s,
                     cfg.github.metrics_keep_days)
    return await sync.sync(ctx, full_name, reason="installed", cfg=cfg)
