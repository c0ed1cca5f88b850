"""``pull_request.synchronize`` on a sync branch: a person's resolution pushed to a chain is checked
(:func:`bot.sync.prs.on_pushed`)."""
from __future__ import annotations

from gidgethub import routing

from bot.github.common import RepoRef
from bot.sync import prs

router = routing.Router()


@router.register("pull_request", action="synchronize")
async def on_synchronize(event, ctx) -> None:
    repo = RepoRef.model_validate(event.data["repository"])
    await prs.on_pushed(ctx, ctx.sync, repo.full_name, event.data["pull_request"])
