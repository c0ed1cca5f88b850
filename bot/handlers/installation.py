"""``ping`` and installation events: answer pings, adopt the repositories the app is installed on,
stop following those it is removed from (``installation.deleted``,
``installation_repositories.removed``: :func:`bot.sync.store.untrack`).

A repository is a *fork to sync* when its ``.github/forksync.yml`` names an upstream; it is then
tracked (for upstream pushes and the poller) and synced once (:func:`bot.sync.upstream.adopt`).

``installation.new_permissions_accepted`` (an owner accepted the App's new permissions, e.g.
``workflows``): every tracked fork of the installation with a unit GitHub refused is synced again,
which retries the blocked units (:mod:`bot.sync.blocked`).
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


@router.register("installation", action="deleted")
async def on_uninstalled(event, ctx) -> None:
    """The App was uninstalled: its forks are no longer followed (their polls and scheduled jobs
    would fail for good, keeping ``/healthz`` red); their history stays on the dashboard."""
    inst = (event.data.get("installation") or {}).get("id")
    for row in sync_store.tracked_forks(ctx.store):
        if row["installation_id"] == inst and sync_store.untrack(ctx.store, row["fork"], inst):
            ctx.note(f"{row['fork']}: no longer followed (the App was uninstalled)")


@router.register("installation_repositories", action="removed")
async def on_repos_removed(event, ctx) -> None:
    inst = (event.data.get("installation") or {}).get("id")
    for r in event.data.get("repositories_removed") or []:
        if sync_store.untrack(ctx.store, r["full_name"], inst):
            ctx.note(f"{r['full_name']}: no longer followed (removed from the installation)")


@router.register("installation", action="new_permissions_accepted")
async def on_permissions_accepted(event, ctx) -> None:
    inst = (event.data.get("installation") or {}).get("id")
    for row in sync_store.tracked_forks(ctx.store):
        if row["installation_id"] != inst:
            continue
        blocked = sync_store.blocked_branches(ctx.store, row["fork"])
        if not blocked:
            ctx.note(f"{row['fork']}: permissions changed; nothing blocked")
            continue
        ctx.note(await ctx.sync.sync(ctx, row["fork"], reason=f"permissions changed: retrying {len(blocked)} blocked unit(s)"))
