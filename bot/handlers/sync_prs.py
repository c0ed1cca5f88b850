"""``pull_request.synchronize`` on a sync branch: a person's resolution pushed to a chain is checked
(:func:`bot.sync.prs.on_pushed`); a folded resolution gives the PR a new head that forksync pushed
itself (its own event is dropped by the loop guard), so the new head is validated here."""
from __future__ import annotations

from gidgethub import routing

from bot.github.common import PullRef, RepoRef, from_payload, payload_object
from bot.sync import prs

router = routing.Router()


@router.register("pull_request", action="synchronize")
async def on_synchronize(event, ctx) -> None:
    repo = from_payload(RepoRef, event.data, "repository")
    pr = payload_object(event.data, "pull_request", needs=PullRef)
    if await prs.on_pushed(ctx, ctx.sync, repo.full_name, pr) == "folded" \
            and ctx.validation:
        for n in await ctx.validation.validate_pr(ctx, repo.full_name, int(pr["number"])):
            ctx.note(n)
