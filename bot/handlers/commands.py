"""``issue_comment`` created or edited: the ``/forksync <verb>`` commands in it run once each, with
their permission check, ack and reply (:func:`bot.commands.runner.on_comment`)."""
from __future__ import annotations

from gidgethub import routing

from bot.commands import runner

router = routing.Router()


@router.register("issue_comment", action="created")
@router.register("issue_comment", action="edited")
async def on_comment(event, ctx) -> None:
    await runner.on_comment(ctx, event.data)
