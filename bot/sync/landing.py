"""Landing, in any order: a sync PR merged or closed unmerged.

* Merged (``pull_request.closed`` with ``merged: true``): the ledger, pins and metrics are
  rebuilt from the fork's history (:meth:`bot.sync.service.SyncService.refresh`), the status
  issue is refreshed and the branch deleted. Bundles and chains may land in any order; the
  ledger is rebuilt from git, so order does not matter. A branch a person pushed to after the
  merge (its tip neither the merged head nor forksync's push) is left where it is.
* Either way the PR is read again first: one a person reopened while the ``closed`` delivery
  waited in the queue is left open, its branch and unit untouched.
* Closed unmerged: the branch is deleted — when someone other than forksync pushed commits to it
  (its head is not the tip forksync last pushed), that head is first kept under
  ``refs/forksync/closed/<unit id>/<head sha12>`` on the fork, so a person's commits are never
  lost — and the closer's reason (their last comment on the PR,
  else "closed without a reason") is recorded in ``refs/notes/forksync`` for each upstream commit
  of the unit still in flight (one decided while the PR was open keeps that decision): they
  return to PENDING, or DEFERRED_BLOCKED when the reason starts with
  "defer"/"deferred" (the closer says so).
* An L2 back-out's PR merged or closed: its branch's row ends (:func:`backout_ended`); no unit,
  no decision to record; merged, the ledger is rebuilt on the trunk that holds its revert.
* Closed by forksync itself because every upstream commit of the unit was decided while the PR
  was open (:func:`close_decided`): the row says so (state ``decided``) before the PR is closed,
  and the close records nothing — the commits keep the decisions that closed it, whether the
  event is dropped by the loop guard, handled (the bot's login unknown) or found by a later sync.
"""
from __future__ import annotations

import json
import re

import gidgethub

from bot.config.forksync import ProvenanceRules
from bot.core.logins import same_login
from bot.core.provenance import unpicked
from bot.github.common import comment_once, render, split_repo
from bot.github.fork_config import last_valid_config
from bot.model import Disposition
from bot.sync import prs as sync_prs
from bot.sync import store as sync_store
from bot.sync.errors import SyncError

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


async def retire_branch(ctx, full_name: str, branch: str, number: int, *, merged: bool) -> bool:
    """Delete forksync's ``branch`` once its PR #``number`` is merged or closed — unless another
    open PR uses it as its head (a person's PR from it into another base, or the unit's PR a person
    moved to another base): GitHub closes a PR whose head branch is deleted. Then the branch stays
    and each such PR says why, once (``templates/github/branch_kept.md.j2``). PRs from a fork of the
    fork only share the name, not the branch. Returns False when the branch stays for such a PR,
    True when it is gone (deleted now, or already: a person pressed "Delete branch" first)."""
    others = await other_heads(ctx.gh, full_name, branch, number)
    if not others:
        await delete_branch(ctx.gh, full_name, branch)
        return True
    for p in others:
        await comment_once(ctx.gh, full_name, p["number"], f"branch-kept:{number}",
                           render("branch_kept.md.j2", branch=branch, number=number, merged=merged))
    ctx.note(f"{branch} kept: open pull request{'s' if len(others) > 1 else ''} "
             + ", ".join(f"#{p['number']}" for p in others) + " use it")
    return False


async def other_heads(gh, full_name: str, branch: str, number: int) -> list[dict]:
    """The open PRs other than #``number`` whose head is the fork's ``branch`` (a fork of the
    fork's PR only shares the name): deleting the branch would close them (:func:`retire_branch`)."""
    rv = split_repo(full_name)
    return [p async for p in gh.getiter("/repos/{owner}/{repo}/pulls{?state,head,per_page}",
                                        {**rv, "state": "open", "head": f"{rv['owner']}:{branch}", "per_page": 100})
            if int(p.get("number") or 0) != int(number) and (p.get("head") or {}).get("ref") == branch]


async def branch_tip(gh, full_name: str, branch: str) -> str:
    """The sha ``branch`` is at on the fork now ("" when it is gone)."""
    try:
        ref = await gh.getitem("/repos/{owner}/{repo}/git/ref/{ref}", {**split_repo(full_name), "ref": f"heads/{branch}"})
    except gidgethub.HTTPException as e:
        if int(e.status_code) == 404:
            return ""
        raise
    return str(((ref or {}).get("object") or {}).get("sha") or "")


def closed_ref(unit_id: str, head: str) -> str:
    """Pure: where a person's commits on a branch closed unmerged are kept before it goes."""
    return f"refs/forksync/closed/{unit_id}/{head[:12]}"


async def keep_head(gh, full_name: str, ref: str, sha: str) -> None:
    """Create ``ref`` at ``sha`` on the fork (``git/create-ref``); a ref already there (a retried
    delivery) is fine."""
    try:
        await gh.post("/repos/{owner}/{repo}/git/refs", split_repo(full_name), data={"ref": ref, "sha": sha})
    except gidgethub.HTTPException as e:
        if int(e.status_code) != 422 or "already exists" not in str(e):
            raise


async def keep_unpushed_head(gh, full_name: str, row: dict, head: str) -> str:
    """Before a unit's branch goes: a ``head`` that is not the tip forksync pushed (``row``'s
    ``pushed_tip``) may hold someone else's commits, so it is kept on the fork as
    ``refs/forksync/closed/<unit id>/<head sha12>`` (:func:`keep_head`). Returns that ref, ``""``
    when nothing needed keeping."""
    if not head or head == row.get("pushed_tip"):
        return ""
    kept = closed_ref(row["unit_id"], head)
    await keep_head(gh, full_name, kept, head)
    return kept


async def closer_reason(gh, full_name: str, number: int, closer: str, bot_login: str | None) -> str:
    last = ""
    async for c in gh.getiter("/repos/{owner}/{repo}/issues/{number}/comments",
                              {**split_repo(full_name), "number": number}):
        if same_login(c.get("user", {}).get("login"), closer) and (c.get("body") or "").strip():
            last = c["body"].strip()
    return last.splitlines()[0][:500] if last else ""


async def backout_ended(ctx, full_name: str, pr: dict, row: dict) -> None:
    """An L2 back-out's own PR (``row``: its branch's ``sync_branches`` row, kind ``backout``) was
    merged or closed unmerged: its row ends (state ``merged`` or ``closed``), kept as history that
    speaks for this PR only (:func:`bot.sync.prs.speaks_for`), so a later back-out of the same
    culprit on the same branch name starts a fresh row with this PR among its earlier ones
    (:func:`bot.l2.service.open_backout`). Its branch is deleted, which also lets that later
    back-out push the name again. A person's commits on it are never lost: after an unmerged close
    they are kept first under ``refs/forksync/closed/<backout id>/<head sha12>``, as for a closed
    chain, and the PR says where (``templates/github/backout_closed.md.j2``); after a merge, a head
    that moved past the merged one is left where it is."""
    branch = pr["head"]["ref"]
    merged = bool(pr.get("merged"))
    sync_store.save_branch(ctx.store, **{**row, "state": "merged" if merged else "closed"})
    head = await branch_tip(ctx.gh, full_name, branch)
    ours = {row.get("pushed_tip")} | ({str((pr.get("head") or {}).get("sha") or "")} if merged else set())
    if head and head not in ours and merged:
        ctx.note(f"{row['unit_id']} merged; {branch} left: it holds commits forksync did not push ({head[:12]})")
        return
    if head and head not in ours:
        kept = closed_ref(row["unit_id"], head)
        await keep_head(ctx.gh, full_name, kept, head)
        deleted = await retire_branch(ctx, full_name, branch, pr["number"], merged=merged)
        await comment_once(ctx.gh, full_name, pr["number"], f"closed:{pr['number']}",
                           render("backout_closed.md.j2", branch=branch, kept=kept, head=head, deleted=deleted))
        ctx.note(f"{row['unit_id']} closed; commits forksync did not push kept as {kept}")
        return
    if head:
        await retire_branch(ctx, full_name, branch, pr["number"], merged=merged)
    ctx.note(f"{row['unit_id']} {'merged' if merged else 'closed'}")


async def _picks_lost(gh, full: str, pr: dict, shas: list[str], rules: ProvenanceRules) -> list[str]:
    """The unit's upstream commits that no commit the merge landed claims as a pick (the ledger's
    own reading with the fork's ``rules``, :func:`bot.core.provenance.unpicked`), when the merge does not hold the PR's head:
    a squash merge by hand. A merge commit holds the head; a rebase merge re-creates each pick with
    its trailer. ``[]`` when nothing was lost."""
    head, landed = str(pr["head"]["sha"]), str(pr.get("merge_commit_sha") or "")
    if not landed or landed == head:
        return []
    # one compare says both whether the merge holds the head (nothing behind) and what it landed
    cmp = await gh.getitem("/repos/{owner}/{repo}/compare/{basehead}", {**split_repo(full), "basehead": f"{head}...{landed}"})
    if int(cmp.get("behind_by", 1)) == 0:
        return []
    return unpicked(shas, [str((x.get("commit") or {}).get("message") or "") for x in cmp.get("commits") or []], rules)


async def on_closed(ctx, sync, full_name: str, pr: dict, *, sender, fork_ref: str | None = None,
                    refresh: bool = True) -> None:
    """A sync PR merged or closed unmerged (see the module doc); ``sender`` is the event's
    ``sender`` object (read only for an unmerged close), ``fork_ref`` the configuration's
    ``fork.ref`` (the unit's base when its row records none: :func:`bot.sync.prs.unit_base`; read
    then when not given, :func:`bot.sync.prs.fallback_ref`). PRs on branches
    forksync did not push are left alone, and so are PRs only named like forksync's branch (from a
    fork of the fork), a person's second PR from forksync's branch, and any PR from it into another
    base than the unit's, whether or not the unit has its own PR yet
    (:func:`bot.sync.prs.not_forksyncs`) — closing or merging one never closes, lands, deletes or
    re-plans the unit. An L2 back-out's branch is forksync's but no unit (``kind`` ``backout``):
    its row ends as a unit's does (:func:`backout_ended`), with nothing of a unit to land or close
    and no upstream commits to record a decision on; merged, the ledger is rebuilt on the trunk
    that now holds its revert. ``refresh``: rebuild the ledger afterwards
    (:meth:`bot.sync.service.SyncService.refresh`); off for a sync that computes it next anyway."""
    branch = pr["head"]["ref"]
    row = sync_store.branch_row(ctx.store, full_name, branch)
    if row is None:
        return
    # the handler of the close and the poller's sync (land_closed) may land one PR at once, each
    # having read its row open: each comment is said under the claim on the PR's comments
    # (bot.github.common.comment_once)
    foreign = sync_prs.row_reason(pr, full_name, row, bot_login=getattr(sync, "bot_login", None),
                                  fork_ref=await sync_prs.fallback_ref(ctx, full_name, row, fork_ref))
    if foreign:
        ctx.note(f"#{pr.get('number')}: {branch} is not forksync's sync branch ({foreign}); left alone")
        return
    if row.get("state") == sync_store.DECIDED and not pr.get("merged"):
        # forksync's own close: the closer's last comment is forksync's reply, not a reason, and
        # recording it would lift the decisions that closed the PR back to PENDING. (A merge that
        # won the race with that close — the gate merges on its own — lands as any merge does.)
        ctx.note(f"#{pr['number']}: closed by forksync, every upstream commit of {row['unit_id']} decided; "
                 "nothing to record")
        return
    # the PR as it is now, not as the event saw it: a person may have reopened it while this
    # delivery waited in the queue, and closing the unit then would delete the branch under the
    # reopened PR (which closes it again)
    pr = await ctx.gh.getitem("/repos/{owner}/{repo}/pulls/{number}", {**split_repo(full_name), "number": pr["number"]})
    if pr.get("state") == "open":
        ctx.note(f"#{pr['number']}: open again since it was closed; nothing landed or closed")
        return
    if row.get("kind") == sync_store.BACKOUT:
        await backout_ended(ctx, full_name, pr, row)
        if pr.get("merged") and sync and refresh:
            # the revert is on trunk now: its Upstream-Reverted trailer changes the ledger
            ctx.note(await sync.refresh(ctx, full_name, reason=f"{row['unit_id']} merged"))
        return
    if not sync:        # no sync service in this process: retried later, before anything changes
        raise SyncError("no sync service configured in this process")
    shas = json.loads(row["shas_json"])
    if pr.get("merged"):
        sync_store.save_branch(ctx.store, **{**row, "state": "merged"})
        lost = await _picks_lost(ctx.gh, full_name, pr, shas, last_valid_config(ctx, full_name).provenance)
        if lost:
            # squashed by hand: the picks did not land as themselves, so no fork commit names these
            # upstream commits — say so where the merger looks, before the ledger is rebuilt
            landed, merger = str(pr["merge_commit_sha"]), str((pr.get("merged_by") or {}).get("login")
                                                                  or (sender or {}).get("login") or "someone")
            await comment_once(ctx.gh, full_name, pr["number"], f"landed-squashed:{pr['number']}",
                               render("landed_squashed.md.j2", merger=merger, landed=landed, head=pr["head"]["sha"],
                                      shas=lost, unit_id=row["unit_id"], number=pr["number"]))
            ctx.note(f"{row['unit_id']}: landed as {landed[:12]}, which names {len(lost)} of its upstream commits no more")
        # a person may have pushed to the branch after the merge (GitHub no longer moves a merged
        # PR's head): a tip that is neither the merged head nor forksync's push is theirs, left where it is
        head = await branch_tip(ctx.gh, full_name, branch)
        if head and head not in {row.get("pushed_tip"), str(pr["head"]["sha"])}:
            ctx.note(f"{row['unit_id']} merged; {branch} left: it holds commits forksync did not push ({head[:12]})")
        else:
            await retire_branch(ctx, full_name, branch, pr["number"], merged=True)
            ctx.note(f"{row['unit_id']} merged")
        if refresh:
            ctx.note(await sync.refresh(ctx, full_name, reason=f"{row['unit_id']} merged"))
        return
    closer = (sender or {}).get("login", "")
    reason = await closer_reason(ctx.gh, full_name, pr["number"], closer, sync.bot_login)
    disposition, text = closer_disposition(reason)
    text = text or "closed without a reason"
    # a commit decided while the PR was open (skipped, deferred, picked by hand) keeps that
    # decision: the close speaks for the commits still in flight only
    kept_decided = sync_store.decided_among(ctx.store, full_name, shas)
    shas = [s for s in shas if s not in {d["sha"] for d in kept_decided}]
    if shas:
        await sync.record_close(ctx, full_name, shas, disposition, f"closed unmerged by @{closer}: {text}", closer)
    # the branch as it is now, not as the event saw it: a person may have pushed to it after the
    # close (the PR's head no longer follows the branch) and before this delivery was handled
    head = await branch_tip(ctx.gh, full_name, branch) or str((pr.get("head") or {}).get("sha") or "")
    # someone else's commits are on the branch (or a tip forksync cannot say it pushed): kept on
    # the fork before it goes
    kept = await keep_unpushed_head(ctx.gh, full_name, row, head)
    sync_store.save_branch(ctx.store, **{**row, "state": "closed"})
    deleted = await retire_branch(ctx, full_name, branch, pr["number"], merged=False)
    await comment_once(ctx.gh, full_name, pr["number"], f"closed:{pr['number']}",
                       render("closed_unmerged.md.j2", branch=branch, shas=shas, deleted=deleted,
                              disposition=disposition.value, reason=text, kept=kept, head=head,
                              kept_decided=kept_decided))
    ctx.note(f"{row['unit_id']} closed unmerged: {disposition.value}")
    if refresh:
        ctx.note(await sync.refresh(ctx, full_name, reason=f"{row['unit_id']} closed"))


async def close_decided(ctx, full_name: str, row: dict, decided: list[dict]) -> str:
    """Close the unit of ``row`` (its ``sync_branches`` row, open with a PR) because every upstream
    commit on its branch was decided while the PR was open (``decided``: the
    :class:`bot.sync.shrink.Decided` of each, as dicts, for the comment). The row is marked
    ``decided`` first, so the close's own ``pull_request.closed`` records nothing
    (:func:`on_closed`); then, as for a close by a person, a head forksync did not push is kept
    under ``refs/forksync/closed/<unit id>/<head sha12>``, the PR says why
    (``templates/github/unit_decided.md.j2``; before the close, so a failure of either is retried
    by the next sync and the PR is never left closed without its reason), is closed, and the
    branch retired (:func:`retire_branch`). A PR GitHub no longer shows open (merged or closed since the ledger
    was read) is left to its landing. A failed close puts the row back open (the next sync tries
    again) and raises ``gidgethub.HTTPException``. Returns the sync's line."""
    branch, number = row["branch"], int(row["pr"])
    rv = {**split_repo(full_name), "number": number}
    pr = await ctx.gh.getitem("/repos/{owner}/{repo}/pulls/{number}", rv)
    if pr.get("state") != "open":
        # merged or closed since the sync read the ledger (the gate merges on its own): the
        # landing of that close records it, and a merged unit's commits are PICKED by it, not decided
        return f"{row['unit_id']}: PR #{number} already {'merged' if pr.get('merged') else 'closed'}; left to its landing"
    head = await branch_tip(ctx.gh, full_name, branch)
    sync_store.save_branch(ctx.store, **{**row, "state": sync_store.DECIDED})
    try:
        kept = await keep_unpushed_head(ctx.gh, full_name, row, head)
        # said before the close, as a duplicate status issue's note is: said after it, a comment
        # GitHub failed would leave the PR closed without a word for ever (the row says decided,
        # and no later sync looks at it again); said first, a close that fails after it is tried
        # again by the next sync, which finds the comment said (its marker)
        deleted = not head or not await other_heads(ctx.gh, full_name, branch, number)
        await comment_once(ctx.gh, full_name, number, f"decided:{number}",
                           render("unit_decided.md.j2", branch=branch, decided=decided, deleted=deleted, kept=kept,
                                  head=head))
        await ctx.gh.patch("/repos/{owner}/{repo}/pulls/{number}", rv, data={"state": "closed"})
    except gidgethub.HTTPException:
        sync_store.save_branch(ctx.store, **row)
        raise
    if head:
        await retire_branch(ctx, full_name, branch, number, merged=False)
    return (f"{row['unit_id']}: PR #{number} closed, every upstream commit decided ("
            + ", ".join(f"{d['sha'][:12]} {d['disposition']}" for d in decided) + ")"
            + (f"; commits forksync did not push kept as {kept}" if kept else ""))
