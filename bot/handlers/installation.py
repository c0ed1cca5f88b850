"""``ping`` and installation events: answer pings, adopt the repositories the app is installed on,
stop following those it is removed from (``installation.deleted``,
``installation_repositories.removed``: :func:`bot.sync.store.untrack`).

A repository is a *fork to sync* when its ``.github/forksync.yml`` names an upstream; it is then
tracked (for upstream pushes and the poller) and synced once (:func:`bot.sync.upstream.adopt`).
Installation events missed while forksync was down (GitHub does not retry them) are made up by
the polling worker, which lists the App's installations at start and hourly, adopts what is not
tracked through :func:`adopt_all` and, when every page of every listing was read, stops following
what the App is no longer installed on through :func:`unfollow` (:mod:`bot.app.installations`).

``installation.new_permissions_accepted`` (an owner accepted the App's new permissions, e.g.
``workflows``): every tracked fork of the installation whose adoption failed is adopted again, and
one with a unit GitHub refused is synced again, which retries the blocked units
(:mod:`bot.sync.blocked`).

``installation.suspend`` (an owner suspended the App on the account; GitHub refuses the
installation's tokens until it is lifted): its forks stay tracked but pause — no scheduled jobs
or syncs, polls that only learn whether GitHub still refuses them, nothing counted as failing — and
``/healthz`` and the dashboard say so. ``installation.unsuspend`` resumes them with a catch-up sync
(upstream may have moved meanwhile). Either webhook may be missed (GitHub does not redeliver it):
the poller and the scheduled ticks then record the same pause from GitHub's refusal, and lift it
at the first poll GitHub answers (:func:`bot.sync.upstream.poll_once`).
"""
from __future__ import annotations

from gidgethub import routing

from bot.agents.redact import error_text
from bot.github.common import error_to_raise
from bot.sync import store as sync_store
from bot.sync.upstream import adopt, job_ended

router = routing.Router()


@router.register("ping")
async def on_ping(event, ctx) -> None:
    ctx.note("pong")


async def adopt_all(ctx, repositories: list) -> None:
    """Adopt each repository of an installation event; one failing does not stop the others (a
    repository GitHub refuses must not keep the rest of the installation unsynced). One error is
    re-raised afterwards, unchanged (the dispatcher classifies it; a retryable one before a
    permanent one, :func:`bot.github.common.error_to_raise`), so the delivery is retried and,
    past its attempts, dead-lettered; adopting again is idempotent.

    A delivery naming several repositories cannot be one fork's dead letter, so each failure is
    also kept as the repository's failing ``adopt`` job (its status issue, the dashboard,
    ``/healthz``), cleared, and taken off the status issue, when an adoption of it succeeds."""
    errors: list[BaseException] = []
    for r in repositories:
        name = r["full_name"]
        try:
            ctx.note(await adopt(ctx, ctx.sync, name))
            error = None
        except Exception as e:  # noqa: BLE001 - re-raised below, after the other repositories
            ctx.note(f"{name}: adoption failed: {type(e).__name__}")
            errors.append(e)
            error = error_text(e, 300)
        # when the failing set changes, a failure is rendered on the status issue (opening it:
        # whether the repository is a fork is not known yet); a success after a failure renders it
        # again, as the adoption's sync rendered it while the failure was still recorded. A
        # repository that turned out to be no fork only has an issue the failure opened updated,
        # never a new one opened to say nothing is wrong.
        may_open = error is not None or any(t["fork"] == name for t in sync_store.tracked_forks(ctx.store))
        for note in await job_ended(ctx.store, ctx.sync, ctx, name, "adopt", error, ctx.now(), create=may_open):
            ctx.note(note)
    if errors:
        raise error_to_raise(errors)


@router.register("installation", action="created")
async def on_installed(event, ctx) -> None:
    await adopt_all(ctx, event.data.get("repositories") or [])


@router.register("installation_repositories", action="added")
async def on_repos_added(event, ctx) -> None:
    await adopt_all(ctx, event.data.get("repositories_added") or [])


def _forks_of(ctx, inst) -> list[dict]:
    return [r for r in sync_store.tracked_forks(ctx.store) if r["installation_id"] == inst]


#: Why a fork is no longer followed, as the dashboard shows it (:func:`bot.sync.store.untrack`),
#: and the note said: the App was uninstalled, or the repository was taken off its installation.
UNINSTALLED = ("the App was uninstalled", "the App was uninstalled")
REMOVED = ("removed from the App's installation", "removed from the installation")


def unfollow(store, fork: str, installation_id: int, why: tuple[str, str], at: float) -> str | None:
    """Stop following ``fork`` when it is tracked under ``installation_id`` (:func:`bot.sync.store.untrack`:
    no more polls or scheduled jobs, its failing jobs cleared, ``why`` — :data:`UNINSTALLED` or
    :data:`REMOVED` — kept for the dashboard with ``at``, epoch s). Returns the note, or None when
    it was not tracked under that installation. Used by the events and by the worker's pass over
    the installations (:mod:`bot.app.installations`), which makes up for the ones it missed."""
    reason, said = why
    if sync_store.untrack(store, fork, installation_id, reason=reason, at=at):
        return f"{fork}: no longer followed ({said})"
    return None


@router.register("installation", action="deleted")
async def on_uninstalled(event, ctx) -> None:
    """The App was uninstalled: its forks are no longer followed (their polls and scheduled jobs
    would fail for good, keeping ``/healthz`` red); their history stays on the dashboard, which
    says why they are no longer followed."""
    inst = (event.data.get("installation") or {}).get("id")
    for row in _forks_of(ctx, inst):
        if note := unfollow(ctx.store, row["fork"], inst, UNINSTALLED, ctx.now()):
            ctx.note(note)
    if inst is not None:
        sync_store.set_suspended(ctx.store, inst, False)


@router.register("installation_repositories", action="removed")
async def on_repos_removed(event, ctx) -> None:
    inst = (event.data.get("installation") or {}).get("id")
    for r in event.data.get("repositories_removed") or []:
        if note := unfollow(ctx.store, r["full_name"], inst, REMOVED, ctx.now()):
            ctx.note(note)


@router.register("installation", action="suspend")
async def on_suspended(event, ctx) -> None:
    """An owner suspended the App on the account: its forks pause until it is lifted (GitHub
    refuses every call meanwhile; failing on each tick would page on-call for a decision made on
    purpose)."""
    data = event.data.get("installation") or {}
    if data.get("id") is None:
        return
    by = ((data.get("suspended_by") or {}).get("login")) or ""
    sync_store.set_suspended(ctx.store, data["id"], True, at=ctx.now(), by=by)
    for row in _forks_of(ctx, data["id"]):
        ctx.note(f"{row['fork']}: paused (its installation is suspended{f' by {by}' if by else ''})")


@router.register("installation", action="unsuspend")
async def on_unsuspended(event, ctx) -> None:
    """The suspension was lifted: each fork of the installation is synced at once, catching up
    with what upstream did meanwhile (its poller would wait for its interval, and an ETag may say
    nothing changed since the last poll before the pause)."""
    inst = (event.data.get("installation") or {}).get("id")
    if inst is None:
        return
    sync_store.set_suspended(ctx.store, inst, False)
    forks = _forks_of(ctx, inst)
    for row in forks:
        ctx.note(f"{row['fork']}: resumed (its installation's suspension was lifted)")
    await adopt_all(ctx, [{"full_name": r["fork"]} for r in forks])


@router.register("installation", action="new_permissions_accepted")
async def on_permissions_accepted(event, ctx) -> None:
    inst = (event.data.get("installation") or {}).get("id")
    failed = {j["repo"] for j in sync_store.failing_jobs(ctx.store) if j["job"] == "adopt"}
    again = []
    for row in _forks_of(ctx, inst):
        if row["fork"] in failed:      # GitHub refused its adoption, perhaps for the missing permission
            again.append({"full_name": row["fork"]})
            continue
        blocked = sync_store.blocked_branches(ctx.store, row["fork"])
        if not blocked:
            ctx.note(f"{row['fork']}: permissions changed; nothing blocked")
            continue
        ctx.note(await ctx.sync.sync(ctx, row["fork"], reason=f"permissions changed: retrying {len(blocked)} blocked unit(s)"))
    await adopt_all(ctx, again)
