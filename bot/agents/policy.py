"""What an agent-resolved pick requires before it may leave draft and before it may merge (pure).

The GitHub side (handlers, merge gate) asks these questions; the answers are plain data:

* :func:`agent_resolved_commits` — which commits of a PR carry ``Agent-Resolved:``;
* :func:`may_leave_draft` — a PR with agent-resolved commits leaves draft only when the L1 suite
  passed on the PR's *current head* and that head contains them (a later push needs L1 again);
* :func:`may_merge` — additionally a person (not a bot, not the PR's own author when that is the
  bot) approved the current head.

Nothing in :mod:`bot.agents` merges; these functions only say *no* or *yes, a person may*.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from bot.core.logins import login_key, same_login

AGENT_TRAILER = re.compile(r"^Agent-Resolved:\s*(\S+)\s*(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str


def agent_resolved(message: str) -> tuple[str, str] | None:
    """``(model, summary)`` from a commit message's ``Agent-Resolved:`` trailer, or None."""
    m = AGENT_TRAILER.search(message or "")
    return (m.group(1), m.group(2).strip()) if m else None


def agent_resolved_commits(commits) -> tuple[str, ...]:
    """Shas of ``[(sha, message), …]`` whose message carries ``Agent-Resolved:``."""
    return tuple(sha for sha, msg in commits if agent_resolved(msg))


def may_leave_draft(head_sha: str, commits, l1_conclusion_on_head: str | None) -> Verdict:
    """``commits``: ``[(sha, message), …]`` of the PR. ``l1_conclusion_on_head``: the L1 check
    run's conclusion on ``head_sha`` (``"success"``, ``"failure"``, … or None: not run yet)."""
    agent = agent_resolved_commits(commits)
    if not agent:
        return Verdict(True, "no agent-resolved commits")
    if l1_conclusion_on_head != "success":
        state = l1_conclusion_on_head or "not run yet"
        return Verdict(False, f"{len(agent)} agent-resolved commit(s): L1 must pass on {head_sha[:12]} "
                              f"before this PR leaves draft (L1: {state})")
    return Verdict(True, f"L1 passed on {head_sha[:12]}, which contains the agent-resolved commit(s)")


def may_merge(head_sha: str, commits, l1_conclusion_on_head: str | None, approvals,
              bot_logins=("forksync[bot]",)) -> Verdict:
    """``approvals``: ``[(login, commit_sha_approved), …]``. Agent-resolved PRs need L1 on the
    head and an approval of the head by a person (a login not in ``bot_logins`` and not ending
    in ``[bot]``, in any case: :func:`bot.core.logins.same_login`)."""
    draft = may_leave_draft(head_sha, commits, l1_conclusion_on_head)
    if not agent_resolved_commits(commits):
        return Verdict(True, "no agent-resolved commits")
    if not draft.ok:
        return draft
    people = sorted({login for login, sha in approvals
                     if sha == head_sha and not any(same_login(login, b) for b in bot_logins)
                     and not login_key(login).endswith("[bot]")})
    if not people:
        return Verdict(False, f"agent-resolved commits need a person's approval of {head_sha[:12]}")
    return Verdict(True, f"approved by {', '.join(people)} after L1 passed")
