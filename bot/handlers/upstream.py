"""``push`` to an upstream branch that tracked forks follow: sync each of them
(:func:`bot.sync.upstream.on_upstream_push`; the poller in :mod:`bot.app.runtime` covers upstreams
the app is not installed on)."""
from __future__ import annotations

from gidgethub import routing

from bot.github.common import RepoRef
from bot.sync import upstream

router = routing.Router()


@router.register("push")
async def on_upstream_push(event, ctx) -> None:
    repo = RepoRef.model_validate(event.data["repository"])
    await upstream.on_upstream_push(ctx, ctx.sync, repo.full_name, event.data.get("ref") or "",
                                    event.data.get("after"))
