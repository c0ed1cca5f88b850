"""``ping`` and installation events: answer pings, track the forks the app is installed on.

A repository is a *fork to sync* when its ``.github/forksync.yml`` names an upstream; it is then
recorded in ``tracked_forks`` (for upstream pushes and the poller) and synced once.
"""
from __future__ import annotations

from gidgethub import routing

router = routing.Router()


@router.register("ping")
async def on_ping(event, ctx) -> None:
    ctx.note("pong")


async def adopt(ctx, full_name: str) -> str:
    """Read the repo's config; track and sync it when it names an upstream."""
    from bot.handlers.upstream import track
    from bot.sync_service import service_of
    svc = service_of(ctx)
    cfg = await svc.fork_config(ctx, full_name)
    upstream, ref = svc.upstream_of(cfg)
    if not upstream:
        return f"{full_name}: not a fork to sync (no upstream in .github/forksync.yml)"
    track(ctx.store, full_name, upstream, ref, ctx.installation_id, cfg.github.poll_interval_s)
    return await svc.sync(ctx, full_name, reason="installed", cfg=cfg)


@router.register("installation", action="created")
async def on_installed(event, ctx) -> None:
    for r in event.data.get("repositories") or []:
        ctx.note(await adopt(ctx, r["full_name"]))


@router.register("installation_repositories", action="added")
async def on_repos_added(event, ctx) -> None:
    for r in event.data.get("repositories_added") or []:
        ctx.note(await adopt(ctx, r["full_name"]))
