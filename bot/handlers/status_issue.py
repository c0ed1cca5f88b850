"""``issues.edited`` on the status issue: ticked boxes re-plan or rebuild a unit
(:func:`bot.sync.status_issue.on_ticked`)."""
from __future__ import annotations

from gidgethub import routing

from bot.github.common import Numbered, RepoRef, from_payload, payload_object
from bot.sync import status_issue

router = routing.Router()


@router.register("issues", action="edited")
async def on_issue_edited(event, ctx) -> None:
    issue = payload_object(event.data, "issue", needs=Numbered)
    if status_issue.MARK not in (issue.get("body") or ""):
        return
    repo = from_payload(RepoRef, event.data, "repository")
    await status_issue.on_ticked(ctx, ctx.sync, repo.full_name, issue)
