"""``ping`` and installation events: answer pings, adopt the repositories the app is installed on.

A repository is a *fork to sync* when its ``.github/forksync.yml`` names an upstream; it is then
tracked (for upstream pushes and the poller) and synced once (:func:`bot.sync.upstream.adopt`).
"""
from __future__ import annotations

from gidgethub import routing

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
