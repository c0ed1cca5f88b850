"""``issue_comment`` created, edited or deleted, and ``pull_request_review`` submitted: the
``/forksync <verb>`` commands in a comment or a review's body run once each, with their
permission check, ack and reply (:func:`bot.commands.runner.on_comment`,
:func:`bot.commands.runner.on_review`); an edit that removes a sign-off's line, or the comment's
deletion, withdraws it."""
from __future__ import annotations

from gidgethub import routing

from bot.commands import runner

router = routing.Router()


@router.register("issue_comment", action="created")
@router.register("issue_comment", action="edited")
@router.register("issue_comment", action="deleted")
async def on_comment(event, ctx) -> None:
    await runner.on_comment(ctx, event.data)


@router.register("pull_request_review", action="submitted")
async def on_review(event, ctx) -> None:
    await runner.on_review(ctx, event.data)
