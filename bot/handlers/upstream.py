"""``push`` to an upstream branch that tracked forks follow: sync each of them
(:func:`bot.sync.upstream.on_upstream_push`). The poller (:func:`bot.sync.upstream.poll_once`, run by
the worker in :mod:`bot.app.runtime`) checks every tracked fork's upstream as well, so upstreams the
App is not installed on are followed too."""
from __future__ import annotations

from gidgethub import routing

from bot.github.common import RepoRef, from_payload
from bot.sync import upstream

router = routing.Router()


@router.register("push")
async def on_upstream_push(event, ctx) -> None:
    repo = from_payload(RepoRef, event.data, "repository")
    await upstream.on_upstream_push(ctx, ctx.sync, repo.full_name, event.data.get("ref") or "",
                                    event.data.get("after"))
