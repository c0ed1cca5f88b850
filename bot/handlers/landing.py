"""``pull_request.closed``: a sync PR merged or closed unmerged lands through
:func:`bot.sync.landing.on_closed` (the validation service calls the same function for PRs the
bot merged itself); then the gate of each open sync PR that lands after it is decided again
(:func:`bot.validation.service.after_landing`)."""
from __future__ import annotations

from gidgethub import routing

from bot.github.common import PullRef, RepoRef, from_payload, payload_object
from bot.sync import landing
from bot.sync import store as sync_store
from bot.validation.service import after_landing

router = routing.Router()


@router.register("pull_request", action="closed")
async def on_closed(event, ctx) -> None:
    repo = from_payload(RepoRef, event.data, "repository")
    pr = payload_object(event.data, "pull_request", needs=PullRef)
    # read before the landing: the sync it runs publishes them again without the landed unit
    waiting = sync_store.lands_after_it(ctx.store, repo.full_name, (pr.get("head") or {}).get("ref") or "")
    await landing.on_closed(ctx, ctx.sync, repo.full_name, pr, sender=event.data.get("sender"))
    for n in await after_landing(ctx, repo.full_name, waiting):
        ctx.note(n)
