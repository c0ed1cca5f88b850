"""Which open PRs an event without a PR list is about.

GitHub leaves ``check_run.pull_requests`` (and ``check_suite.pull_requests``) empty for runs on
commits pushed from another repository — every PR from a fork of the fork — and for runs it could
not associate (source: docs.github.com, "Webhook events and payloads" → check_run:
"pull_requests … does not include pull requests from forks"). Such an event is matched to the
open PRs by head sha, and to forksync's own sync branches by the run's head branch name.
"""
from __future__ import annotations

from bot.github.common import split_repo


def match_prs(prs: list[dict], full: str, head_sha: str, head_branch: str | None, branch_prefix: str) -> list[int]:
    """Pure: numbers of the open ``prs`` whose head is ``head_sha``, or — for a branch of
    ``full`` named with ``branch_prefix`` (a sync branch) — whose head ref is ``head_branch``;
    ascending, no duplicates."""
    out = set()
    for p in prs:
        head = p.get("head") or {}
        if head_sha and head.get("sha") == head_sha:
            out.add(int(p["number"]))
        elif (head_branch and head_branch.startswith(branch_prefix) and head.get("ref") == head_branch
              and ((head.get("repo") or {}).get("full_name") or full) == full):
            out.add(int(p["number"]))
    return sorted(out)


async def open_prs_for_head(gh, full: str, head_sha: str, head_branch: str | None, branch_prefix: str, *,
                            base: str) -> list[int]:
    """:func:`match_prs` over the open PRs of ``full`` into ``base`` (one listing, paginated; the
    caller passes the default branch: a PR from a sync branch into another base is not the
    unit's, and the gate acts on none)."""
    prs = [p async for p in gh.getiter("/repos/{owner}/{repo}/pulls{?state,base,per_page}",
                                       {**split_repo(full), "state": "open", "base": base, "per_page": 100})]
    return match_prs(prs, full, head_sha, head_branch, branch_prefix)


__all__ = ["match_prs", "open_prs_for_head"]
