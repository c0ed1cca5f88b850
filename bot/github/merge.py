"""The gate's two GitHub actions on a PR: bring the branch up to the base, and merge.

* :func:`update_branch` — ``PUT pulls/{n}/update-branch`` with ``expected_head_sha``: GitHub
  *merges the base into the branch* (never a rebase: a person's commits are not rewritten), then
  the new head appears asynchronously; it is polled ``polls`` times. 422 (the head moved, or the
  base conflicts) → ``refused``, with GitHub's answer.
* :func:`merge_pr` — ``PUT pulls/{n}/merge`` with ``sha`` (the head-sha guard) and the configured
  method (``rebase`` by default, ``merge`` allowed; ``squash`` is never used: one fork commit per
  upstream commit). Before it, ``mergeable`` is read until GitHub has computed it (``null`` while
  computing, polled ``polls`` times); ``false`` → not merged (``conflict``); then, given the base tip
  the gate decided on, the base branch is read once more and a base that moved since → not merged
  (``base-moved``: the caller re-validates). GitHub's merge has a guard for the head (``sha``) but
  none for the base: a rebase or merge onto a base that moved after the decision would land
  something no suite ran on. The read narrows that window to one request; branch protection's
  "require branches to be up to date" (strict) closes it. 405 (not mergeable, a required status
  check GitHub expects, a disallowed method: ``refused``, with GitHub's answer) and 409 (the head
  moved: ``head-moved``) are returned, never retried here: the caller re-validates (409) or the
  next event/tick re-checks (405). A 405 on a
  PR that is merged at ``head`` is the client's retry of a merge GitHub made but whose answer was
  lost (5xx): the PR is read again and the merge reported as made (``merged``), so the caller lands it.
  A rate limit that outlasted the client's waits is no refusal either: returned as
  ``rate-limited``, so the next event or reconcile tick merges it.

Both return an :class:`Outcome`: its ``code`` is what the caller decides on, its ``text`` the note
for people (the gate check run's text, a command's reply), written for reading and free to change.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import gidgethub

from bot.github.client import rate_limited
from bot.github.common import base_tip, split_repo

# the codes of an Outcome
MERGED = "merged"                   # merged now, at the head asked for
ALREADY_MERGED = "already-merged"   # merged before this call (by a person, another delivery)
HEAD_MOVED = "head-moved"           # the head is not the one decided on: re-validate
BASE_MOVED = "base-moved"           # the base tip is not the one decided on: re-validate
CONFLICT = "conflict"               # GitHub says not mergeable (mergeable: false)
PENDING = "pending"                 # GitHub has not finished: mergeability, or the updated head
RATE_LIMITED = "rate-limited"       # the rate limit outlasted the client's waits: the next event or tick retries
REFUSED = "refused"                 # GitHub refused the request itself (merge 405, update-branch 422)
UPDATED = "updated"                 # update-branch: the base is merged into the branch, a new head


@dataclass(frozen=True)
class Outcome:
    """What :func:`merge_pr` or :func:`update_branch` came to. ``code``: one of the module's codes
    (``merged``, ``already-merged``, ``head-moved``, ``base-moved``, ``conflict``, ``pending``,
    ``rate-limited``, ``refused``, ``updated``); ``text``: the note for people; ``github_error``:
    GitHub's answer when it refused (``refused``), whose ``message`` holds GitHub's own words."""

    code: str
    text: str
    github_error: gidgethub.HTTPException | None = field(default=None, compare=False)


async def update_branch(gh, full: str, number: int, head: str, *, polls: int = 5,
                        poll_s: float = 1.0) -> Outcome:
    """Merge the base into PR ``number``'s branch while its head is ``head``: ``updated`` (a new
    head appeared), ``refused`` (422: the head moved, or the base conflicts) or ``pending`` (GitHub
    accepted it; no new head after ``polls`` reads ``poll_s`` seconds apart). Other errors raise."""
    rv = {**split_repo(full), "number": number}
    try:
        await gh.put("/repos/{owner}/{repo}/pulls/{number}/update-branch", rv, data={"expected_head_sha": head})
    except gidgethub.HTTPException as e:
        if int(e.status_code) == 422:
            return Outcome(REFUSED, f"update-branch refused by GitHub: {e}", e)
        raise
    for _ in range(max(1, polls)):          # GitHub updates the branch asynchronously
        cur = await gh.getitem("/repos/{owner}/{repo}/pulls/{number}", rv)
        if cur["head"]["sha"] != head:
            return Outcome(UPDATED, f"base merged into the branch: {head[:12]} → {cur['head']['sha'][:12]}")
        await asyncio.sleep(poll_s)
    return Outcome(PENDING, "update-branch accepted; the new head has not appeared yet")


async def merge_pr(gh, full: str, number: int, head: str, method: str, *, base: str | None = None, polls: int = 5,
                   poll_s: float = 1.0) -> Outcome:
    """Merge PR ``number`` at exactly ``head`` by ``method``, only while its base branch's tip is still
    ``base`` (the tip the gate decided on; None: not checked); returns what happened (see module):
    ``merged``, ``already-merged``, ``head-moved`` (also GitHub's 409), ``base-moved``,
    ``conflict``, ``pending`` (``mergeable`` still null after ``polls`` reads), ``rate-limited`` or
    ``refused`` (405, with GitHub's answer). Other errors (403, 422 …) raise."""
    rv = {**split_repo(full), "number": number}
    if method not in ("rebase", "merge"):       # never squash
        method = "rebase"
    cur: dict = {}
    for _ in range(max(1, polls)):
        cur = await gh.getitem("/repos/{owner}/{repo}/pulls/{number}", rv)
        if cur.get("merged"):
            return Outcome(ALREADY_MERGED, f"already merged ({(cur.get('merge_commit_sha') or '')[:12]})")
        if cur["head"]["sha"] != head:
            return Outcome(HEAD_MOVED, f"head moved from {head[:12]} to {cur['head']['sha'][:12]}: re-validating")
        if cur.get("mergeable") is not None:
            break
        await asyncio.sleep(poll_s)
    else:
        return Outcome(PENDING, "not merged yet: GitHub is still computing mergeability; the next event or tick retries")
    if cur.get("mergeable") is False:
        return Outcome(CONFLICT, "not merged: the branch conflicts with the base (GitHub says not mergeable)")
    if base:
        tip = await base_tip(gh, full, cur["base"]["ref"])
        if tip != base:
            return Outcome(BASE_MOVED, f"base moved from {base[:12]} to {tip[:12]}: re-validating")
    try:
        res = await gh.put("/repos/{owner}/{repo}/pulls/{number}/merge", rv, data={"sha": head, "merge_method": method})
    except gidgethub.HTTPException as e:
        code = int(e.status_code)
        if code == 405:
            # a merge GitHub made but whose answer was lost (a 5xx the client retried) is answered
            # 405 on the retry: the PR says whether it is merged
            cur = await gh.getitem("/repos/{owner}/{repo}/pulls/{number}", rv)
            if cur.get("merged") and cur["head"]["sha"] == head:
                return Outcome(MERGED, f"merged `{head[:12]}` by {method} as `{(cur.get('merge_commit_sha') or '')[:12]}`")
            return Outcome(REFUSED, f"not merged: GitHub answered 405 ({e}); the next event or tick re-checks", e)
        if code == 409:
            return Outcome(HEAD_MOVED, f"head moved from {head[:12]} (GitHub answered 409): re-validating")
        if rate_limited(e):
            return Outcome(RATE_LIMITED, f"not merged: GitHub's rate limit is spent ({code} {getattr(e, 'message', '') or e}); "
                                         "the next event or tick retries")
        raise
    return Outcome(MERGED, f"merged `{head[:12]}` by {method} as `{(res or {}).get('sha', '')[:12]}`")
