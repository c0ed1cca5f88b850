"""``pull_request.closed``: a sync PR merged or closed unmerged lands through
:func:`bot.sync.landing.on_closed` (the validation service calls the same function for PRs the
bot merged itself)."""
from __future__ import annotations

from gidgethub import routing

from bot.github.common import RepoRef
from bot.sync import landing

router = routing.Router()


@router.register("pull_request", action="closed")
async def on_closed(event, ctx) -> None:
    repo = RepoRef.model_validate(event.data["repository"])
    await landing.on_closed(ctx, ctx.sync, repo.full_name, event.data["pull_request"], sender=event.data.get("sender"))
