"""The fork's configuration: ``.github/forksync.yml`` read through the contents API.

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

from bot.config.forksync import ConfigError, ForksyncConfig, on_default_branch, parse_config_text
from bot.github import store as github_store
from bot.github.common import render, split_repo

CONFIG_PATH = ".github/forksync.yml"
CHECK_NAME = "forksync/config"


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


def validate(text: str | None) -> tuple[ForksyncConfig | None, list[tuple[str, str, int | None]]]:
    """Pure: the config, or the problems ``[(key path, reason, line or None)]`` (key path by name,
    ``areas[autows].divergent``; line 1-based). None text → defaults."""
    if text is None:
        return ForksyncConfig(), []
    try:
        return parse_config_text(text, CONFIG_PATH), []
    except ConfigError as e:
        return None, [(p, r, pos[0] if pos else None) for (p, r), pos in zip(e.problems, e.positions)]


async def load_fork_config(ctx, full_name: str) -> ForksyncConfig:
    """The fork's effective configuration: the file if valid, else the last valid one, else
    defaults — with ``fork.ref`` the repository's default branch where it names none
    (:func:`bot.config.forksync.on_default_branch`; ``GET /repos/{owner}/{repo}``)."""
    text, sha = await fetch_config_text(ctx.gh, full_name)
    cfg, problems = validate(text)
    if cfg is not None:
        if text is not None:
            github_store.save_fork_config(ctx.store, full_name, sha, text)
    else:
        last = github_store.last_fork_config(ctx.store, full_name)
        cfg = (validate(last)[0] if last is not None else None) or ForksyncConfig()
    return on_default_branch(cfg, await default_branch(ctx.gh, full_name))


async def default_branch(gh, full_name: str) -> str:
    """The repository's default branch on GitHub (``""`` when GitHub's answer names none)."""
    repo = await gh.getitem("/repos/{owner}/{repo}", split_repo(full_name))
    return str(repo.get("default_branch") or "") if isinstance(repo, dict) else ""


def last_valid_config(ctx, full_name: str) -> ForksyncConfig:
    """The fork's last stored valid configuration, else the defaults (no GitHub call)."""
    last = github_store.last_fork_config(ctx.store, full_name)
    good = validate(last)[0] if last is not None else None
    return good or ForksyncConfig()


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
        had = github_store.last_fork_config(ctx.store, full_name) is not None
        body = {"name": CHECK_NAME, "head_sha": head_sha, "status": "completed", "conclusion": "failure",
                "output": {"title": f"forksync.yml: {len(problems)} problem(s)",
                           "summary": render("config_invalid.md.j2", ref=ref, problems=problems, had_valid=had)[:65000]}}
    await ctx.gh.post("/repos/{owner}/{repo}/check-runs", rv, data=body)
    return "config valid" if cfg is not None else "config invalid: " + "; ".join(f"{p}: {r}" for p, r, _ in problems)


def config_touched(commits: list) -> bool:
    """Pure: whether a push's ``commits`` (webhook payload entries) touch the config file; a
    payload without file lists counts as touching it (every such push is validated)."""
    commits = [c for c in commits or [] if isinstance(c, dict)]
    listed = any(c.get("added") or c.get("modified") or c.get("removed") for c in commits)
    touched = any(CONFIG_PATH in (c.get("added") or []) + (c.get("modified") or []) for c in commits)
    return touched or not listed


def config_hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()
