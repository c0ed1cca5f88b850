"""Landing, in any order: a sync PR merged or closed unmerged.

* Merged (``pull_request.closed`` with ``merged: true``): the ledger, pins and metrics are
  rebuilt from the fork's history (:meth:`bot.sync_service.SyncService.refresh`), the status
  issue is refreshed and the branch deleted. Bundles and chains may land in any order; the
  ledger is rebuilt from git, so order does not matter.
* Closed unmerged: the branch is deleted and the closer's reason (their last comment on the PR,
  else "closed without a reason") is recorded in ``refs/notes/forksync`` for each upstream commit
  of the unit: they return to PENDING, or DEFERRED_BLOCKED when the reason starts with
  "defer"/"deferred" (the closer says so).
"""
from __future__ import annotations

import json
import re

import gidgethub
from gidgethub import routing

from bot.handlers.common import RepoRef, comment_once, render, split_repo
from bot.handlers.sync_prs import branch_row, save_branch
from bot.model import Disposition

router = routing.Router()

DEFER_RE = re.compile(r"^\s*(defer|deferred)\b[:\s-]*", re.IGNORECASE)


def closer_disposition(reason: str) -> tuple[Disposition, str]:
    """Pure: ``(disposition, reason text)`` of a closer's reason (see the module doc)."""
    m = DEFER_RE.match(reason)
    if m:
        return Disposition.DEFERRED_BLOCKED, reason[m.end():].strip() or reason.strip()
    return Disposition.PENDING, reason.strip()


async def delete_branch(gh, full_name: str, branch: str) -> bool:
    try:
        await gh.delete("/repos/{owner}/{repo}/git/refs/{ref}", {**split_repo(full_name), "ref": f"heads/{branch}"})
        return True
    except gidgethub.HTTPException as e:
        if int(e.status_code) in (404, 422):   # already gone
            return False
        raise


async def closer_reason(gh, full_name: str, number: int, closer: str, bot_login: str | None) -> str:
    last = ""
    async for c in gh.getiter("/repos/{owner}/{repo}/issues/{number}/comments",
                              {**split_repo(full_name), "number": number}):
        if c.get("user", {}).get("login") == closer and (c.get("body") or "").strip():
            last = c["body"].strip()
    return last.splitlines()[0][:500] if last else ""


@router.register("pull_request", action="closed")
async def on_closed(event, ctx) -> None:
    repo = RepoRef.model_validate(event.data["repository"])
    pr = event.data["pull_request"]
    branch = pr["head"]["ref"]
    row = branch_row(ctx.store, repo.full_name, branch)
    if row is None:
        return
    from bot.sync_service import service_of
    svc = service_of(ctx)
    shas = json.loads(row["shas_json"])
    if pr.get("merged"):
        save_branch(ctx.store, **{**row, "state": "merged"})
        await delete_branch(ctx.gh, repo.full_name, branch)
        ctx.note(f"{row['unit_id']} merged")
        ctx.note(await svc.refresh(ctx, repo.full_name, reason=f"{row['unit_id']} merged"))
        return
    closer = (event.data.get("sender") or {}).get("login", "")
    reason = await closer_reason(ctx.gh, repo.full_name, pr["number"], closer, svc.bot_login)
    disposition, text = closer_disposition(reason)
    text = text or "closed without a reason"
    await svc.record_close(ctx, repo.full_name, shas, disposition, f"closed unmerged by @{closer}: {text}", closer)
    save_branch(ctx.store, **{**row, "state": "closed"})
    await delete_branch(ctx.gh, repo.full_name, branch)
    await comment_once(ctx.gh, repo.full_name, pr["number"], f"closed:{pr['number']}",
                       render("closed_unmerged.md.j2", branch=branch, shas=shas,
                              disposition=disposition.value, reason=text))
    ctx.note(f"{row['unit_id']} closed unmerged: {disposition.value}")
    ctx.note(await svc.refresh(ctx, repo.full_name, reason=f"{row['unit_id']} closed"))
