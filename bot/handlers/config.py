"""Configuration from the fork: ``.github/forksync.yml`` read through the contents API.

An invalid file never crashes the bot: the last valid configuration (table ``fork_configs``) or
the defaults stay in force, and the problem is reported on the fork as a failing check run
``forksync/config`` on the commit that changed the file, naming each field and reason
(``templates/github/config_invalid.md.j2``). A push to the default branch that touches the file
re-validates it.
"""
from __future__ import annotations

import base64
import hashlib

import gidgethub
from gidgethub import routing

from bot.config import ConfigError, ForksyncConfig, parse_config_text
from bot.handlers.common import RepoRef, render, split_repo
from bot.store import table

CONFIG_PATH = ".github/forksync.yml"
CHECK_NAME = "forksync/config"

FORK_CONFIGS = table("fork_configs", {"repo": str, "blob_sha": str, "text": str}, pk="repo")

router = routing.Router()


async def fetch_config_text(gh, full_name: str, ref: str | None = None) -> tuple[str | None, str]:
    """``(text, blob sha)`` of ``.github/forksync.yml`` (``(None, "")`` when absent)."""
    params = {**split_repo(full_name), "path": CONFIG_PATH}
    url = "/repos/{owner}/{repo}/contents/{path}" + ("{?ref}" if ref else "")
    if ref:
        params["ref"] = ref
    try:
        data = await gh.getitem(url, params)
    except gidgethub.HTTPException as e:
        if int(e.status_code) == 404:
            return None, ""
        raise
    if not isinstance(data, dict) or data.get("type") != "file":
        return None, ""
    raw = base64.b64decode(data.get("content") or "")
    return raw.decode("utf-8", errors="replace"), str(data.get("sha") or "")


def validate(text: str | None) -> tuple[ForksyncConfig | None, list[tuple[str, str]]]:
    """Pure: the config, or the problems ``[(field path, reason)]``. None text → defaults."""
    if text is None:
        return ForksyncConfig(), []
    try:
        return parse_config_text(text, CONFIG_PATH), []
    except ConfigError as e:
        return None, list(e.problems)


async def load_fork_config(ctx, full_name: str) -> ForksyncConfig:
    """The fork's effective configuration: the file if valid, else the last valid one, else defaults."""
    text, sha = await fetch_config_text(ctx.gh, full_name)
    cfg, problems = validate(text)
    if cfg is not None:
        if text is not None:
            with ctx.store.lock:
                ctx.store.db["fork_configs"].upsert({"repo": full_name, "blob_sha": sha, "text": text}, pk="repo")
        return cfg
    with ctx.store.lock:
        rows = list(ctx.store.db["fork_configs"].rows_where("repo = ?", [full_name]))
    if rows:
        good, _ = validate(rows[0]["text"])
        if good is not None:
            return good
    return ForksyncConfig()


async def report_config(ctx, full_name: str, head_sha: str, ref: str) -> str:
    """Validate the file at ``head_sha`` and record a ``forksync/config`` check run on it."""
    text, _ = await fetch_config_text(ctx.gh, full_name, head_sha)
    if text is None:
        return "no .github/forksync.yml"
    cfg, problems = validate(text)
    rv = split_repo(full_name)
    if cfg is not None:
        body = {"name": CHECK_NAME, "head_sha": head_sha, "status": "completed", "conclusion": "success",
                "output": {"title": "forksync.yml is valid", "summary": f"`{CONFIG_PATH}` parsed and validated."}}
    else:
        with ctx.store.lock:
            had = bool(list(ctx.store.db["fork_configs"].rows_where("repo = ?", [full_name])))
        body = {"name": CHECK_NAME, "head_sha": head_sha, "status": "completed", "conclusion": "failure",
                "output": {"title": f"forksync.yml: {len(problems)} problem(s)",
                           "summary": render("config_invalid.md.j2", ref=ref, problems=problems, had_valid=had)[:65000]}}
    await ctx.gh.post("/repos/{owner}/{repo}/check-runs", rv, data=body)
    return "config valid" if cfg is not None else "config invalid: " + "; ".join(f"{p}: {r}" for p, r in problems)


@router.register("push")
async def on_push_config(event, ctx) -> None:
    repo = RepoRef.model_validate(event.data["repository"])
    ref = event.data.get("ref")
    if ref != f"refs/heads/{repo.default_branch}":
        return
    after = event.data.get("after")
    if not isinstance(after, str) or set(after) == {"0"}:
        return
    commits = [c for c in event.data.get("commits") or [] if isinstance(c, dict)]
    listed = any(c.get("added") or c.get("modified") or c.get("removed") for c in commits)
    touched = any(CONFIG_PATH in (c.get("added") or []) + (c.get("modified") or []) for c in commits)
    if touched or not listed:       # payloads without file lists: validate every push
        ctx.note(await report_config(ctx, repo.full_name, after, ref))


def config_hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()
