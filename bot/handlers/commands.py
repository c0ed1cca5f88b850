"""``/forksync <verb>`` in issue and PR comments: permission check, ack, run once, reply.

Flow for each command in a created or edited comment (parser: :mod:`bot.commands`):

1. Already run for this comment (table ``command_runs``, key comment id + canonical line)? Skip:
   editing a comment runs only the commands it did not hold before.
2. Permission: the commenter's collaborator permission must be write, maintain or admin
   (``repos/get-collaborator-permission-level``); ``signoff`` instead needs the commenter to be
   an owner of the area (``areas[].owners`` in the fork's config). Refused → a reply saying why.
3. Ack with a 👀 reaction, run the effect (:mod:`bot.sync_service`), answer with one comment.
   Replies carry a hidden marker per (comment, command), so a redelivery never doubles them.

Unknown or malformed commands get a reply listing the verbs (``command_help.md.j2``).
"""
from __future__ import annotations

import hashlib

from gidgethub import routing
from pydantic import BaseModel, ConfigDict

from bot import commands as cm
from bot.handlers.common import (WRITE_LEVELS, Account, RepoRef, comment_once, permission, react, render)
from bot.store import table

COMMAND_RUNS = table("command_runs", {
    "key": str, "repo": str, "comment_id": int, "line": str, "by": str, "result": str, "time": float,
}, pk="key")

router = routing.Router()


class _Comment(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: int
    body: str | None = ""
    user: Account
    html_url: str = ""


class _Issue(BaseModel):
    model_config = ConfigDict(extra="allow")
    number: int
    pull_request: dict | None = None


def run_key(repo: str, comment_id: int, line: str) -> str:
    return f"{repo}#{comment_id}:" + hashlib.sha1(line.encode()).hexdigest()[:16]


def _already_ran(store, key: str) -> bool:
    with store.lock:
        return store.conn.execute("SELECT 1 FROM command_runs WHERE key=?", (key,)).fetchone() is not None


def _record(store, key: str, repo: str, comment_id: int, line: str, by: str, result: str, now: float) -> None:
    with store.lock:
        store.db["command_runs"].upsert({"key": key, "repo": repo, "comment_id": comment_id, "line": line,
                                         "by": by, "result": result[:2000], "time": now}, pk="key")


def help_rows() -> list[dict]:
    return [{"usage": cm.usage(v), "help": h} for v, (_a, h) in cm.VERBS.items()]


@router.register("issue_comment", action="created")
@router.register("issue_comment", action="edited")
async def on_comment(event, ctx) -> None:
    comment = _Comment.model_validate(event.data["comment"])
    issue = _Issue.model_validate(event.data["issue"])
    repo = RepoRef.model_validate(event.data["repository"])
    parsed = cm.parse_comment(comment.body)
    if not parsed:
        return
    user = comment.user.login
    cfg = None
    for cmd in parsed:
        key = run_key(repo.full_name, comment.id, cmd.line)
        if _already_ran(ctx.store, key):
            ctx.note(f"{cmd.line}: already ran")
            continue
        mark = f"reply:{comment.id}:{key.rsplit(':', 1)[1]}"
        if isinstance(cmd, cm.CommandError):
            body = render("command_help.md.j2", marker="", user=user, line=cmd.line, message=cmd.message,
                          verbs=help_rows())
            await comment_once(ctx.gh, repo.full_name, issue.number, mark, body)
            await react(ctx.gh, repo.full_name, comment.id, "confused")
            _record(ctx.store, key, repo.full_name, comment.id, cmd.line, user, "malformed", ctx.now())
            ctx.note(f"{cmd.line}: malformed")
            continue
        if cfg is None:
            from bot.handlers.config import load_fork_config
            cfg = await load_fork_config(ctx, repo.full_name)
        refusal, owners = await _refusal(ctx, repo.full_name, user, cmd, cfg)
        if refusal:
            body = render("command_denied.md.j2", marker="", user=user, line=cmd.line, reason=refusal, owners=owners)
            await comment_once(ctx.gh, repo.full_name, issue.number, mark, body)
            await react(ctx.gh, repo.full_name, comment.id, "-1")
            _record(ctx.store, key, repo.full_name, comment.id, cmd.line, user, "refused: " + refusal, ctx.now())
            ctx.note(f"{cmd.line}: refused ({refusal})")
            continue
        await react(ctx.gh, repo.full_name, comment.id, "eyes")
        from bot.sync_service import run_command
        reply = await run_command(ctx, cmd, repo=repo, number=issue.number, is_pr=issue.pull_request is not None,
                                  user=user, cfg=cfg, comment_url=comment.html_url)
        await comment_once(ctx.gh, repo.full_name, issue.number, mark, reply)
        _record(ctx.store, key, repo.full_name, comment.id, cmd.line, user, "ran", ctx.now())
        ctx.note(f"{cmd.line}: ran")


async def _refusal(ctx, full_name: str, user: str, cmd, cfg) -> tuple[str, list[str]]:
    """Why ``user`` may not run ``cmd`` ("" when allowed) and who may."""
    level = await permission(ctx.gh, full_name, user)
    if isinstance(cmd, cm.Signoff):
        by_name = {a.name: a for a in cfg.areas}
        if cmd.subject in by_name:
            owners = list(by_name[cmd.subject].owners)
            if user in owners:
                return "", owners
            return f"only owners of area `{cmd.subject}` may sign it off", owners
        owners = sorted({o for a in cfg.areas for o in a.owners})
        if user in owners or level == "admin":
            return "", owners
        return f"`{cmd.subject}` is a metric; only area owners may sign off metrics", owners
    if level in WRITE_LEVELS:
        return "", []
    return f"@{user} has `{level}` permission; `{cmd.verb}` needs write or admin", []
