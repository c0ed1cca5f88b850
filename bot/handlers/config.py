"""``push`` to the fork's default branch that touches ``.github/forksync.yml``: validate the file and
report it as the ``forksync/config`` check run (:func:`bot.github.fork_config.report_config`)."""
from __future__ import annotations

from gidgethub import routing

from bot.github.common import RepoRef, from_payload
from bot.github.fork_config import config_touched, report_config

router = routing.Router()


@router.register("push")
async def on_push_config(event, ctx) -> None:
    repo = from_payload(RepoRef, event.data, "repository")
    ref = event.data.get("ref")
    if ref != f"refs/heads/{repo.default_branch}":
        return
    after = event.data.get("after")
    if not isinstance(after, str) or set(after) == {"0"}:
        return
    if config_touched(event.data.get("commits")):
        ctx.note(await report_config(ctx, repo.full_name, after, ref))
