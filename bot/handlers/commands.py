"""``issue_comment`` and ``pull_request_review_comment`` created, edited or deleted, and
``pull_request_review`` submitted, edited or dismissed: the ``/forksync <verb>`` commands in a
comment, a comment on a diff line or a review's body run once each, with their permission check,
ack and reply (:func:`bot.commands.runner.on_comment`, :func:`bot.commands.runner.on_review_comment`,
:func:`bot.commands.runner.on_review`); an edit that removes a command's line, the comment's
deletion, or the review's dismissal withdraws it (a sign-off that ran; one not run yet never runs)."""
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
@router.register("pull_request_review", action="edited")
@router.register("pull_request_review", action="dismissed")
async def on_review(event, ctx) -> None:
    await runner.on_review(ctx, event.data)


@router.register("pull_request_review_comment", action="created")
@router.register("pull_request_review_comment", action="edited")
@router.register("pull_request_review_comment", action="deleted")
async def on_review_comment(event, ctx) -> None:
    await runner.on_review_comment(ctx, event.data)
