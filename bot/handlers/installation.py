"""``ping`` and installation events: answer pings, adopt the repositories the app is installed on.

A repository is a *fork to sync* when its ``.github/forksync.yml`` names an upstream; it is then
tracked (for upstream pushes and the poller) and synced once (:func:`bot.sync.upstream.adopt`).

``installation.new_permissions_accepted`` (an owner accepted the App's new permissions, e.g.
``workflows``): every tracked fork of the installation with a unit GitHub refused is synced again,
which retries the blocked units (:mod:`bot.sync.blocked`).
"""
from __future__ import annotations

from gidgethub import routing

from bot.sync import store as sync_store
from bot.sync.upstream import adopt

router = routing.Router()


@router.register("ping")
async def on_ping(event, ctx) -> None:
    ctx.note("pong")


@router.register("installation", action="created")
async def on_installed(event, ctx) -> None:
    for r in event.data.get("repositories") or []:
        ctx.note(await adopt(ctx, ctx.sync, r["full_name"]))


@router.register("installation_repositories", action="added")
async def on_repos_added(event, ctx) -> None:
    for r in event.data.get("repositories_added") or []:
        ctx.note(await adopt(ctx, ctx.sync, r["full_name"]))


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
