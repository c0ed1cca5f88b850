"""PR events that start validation or re-evaluate the merge gate.

* ``pull_request`` opened / reopened / synchronize → run the head's required L1 suites, then
  the gate (:meth:`bot.validation.service.ValidationService.validate_pr`);
* ``pull_request_review.submitted`` / ``dismissed`` and ``pull_request.labeled`` / ``unlabeled``
  (the hold label, area labels) → re-evaluate (an owner's approval may be what was missing);
* ``pull_request.ready_for_review`` / ``converted_to_draft`` → re-evaluate, which records the
  PR's draft state for the status issue and the dashboard; a conversion to draft makes the draft
  the person's (the gate leaves it a draft);
* ``check_run.completed`` of another app's check on a PR head → re-evaluate (the no-suites
  fallback reads those checks). forksync's own check runs are dropped by the loop guard. A run
  whose ``pull_requests`` is empty (from another repository, or not associated by GitHub) is
  matched to open PRs by head sha and to sync branches by name (:mod:`bot.github.matching`).

Only PRs into the branch forksync syncs are validated (``fork.ref`` of the default branch's
forksync.yml: the base sync PRs are opened into; a PR from forksync's branch into another base
shares the unit's head): :class:`bot.validation.service.ValidationService` turns any other away
with a note (:func:`bot.sync.prs.off_base`), for a ``pull_request`` event as for a check run
(which lists every open PR with its head, whatever the base) and every other event, command and
tick.
"""
from __future__ import annotations

from gidgethub import routing

from bot.github.common import CheckRunRef, PullRef, RepoRef, ReviewRef, from_payload, payload_object
from bot.github.matching import open_prs_for_head
from bot.validation.gate import GATE_CHECK

router = routing.Router()


async def _on_open_pr(event, ctx, step: str) -> None:
    """Run ``ValidationService.<step>`` (``validate_pr`` or ``evaluate``) for an open PR; one into
    another base than the branch forksync syncs is turned away there, with a note (that branch is
    the trusted configuration's ``fork.ref``, which the event cannot tell)."""
    repo = from_payload(RepoRef, event.data, "repository")
    pr = payload_object(event.data, "pull_request", needs=PullRef)
    if pr.get("state") != "open":
        return
    for n in await getattr(ctx.validation, step)(ctx, repo.full_name, int(pr["number"])):
        ctx.note(n)


@router.register("pull_request", action="opened")
@router.register("pull_request", action="reopened")
@router.register("pull_request", action="synchronize")
async def on_pull_request(event, ctx) -> None:
    await _on_open_pr(event, ctx, "validate_pr")


@router.register("pull_request_review", action="submitted")
@router.register("pull_request_review", action="dismissed")
@router.register("pull_request", action="labeled")
@router.register("pull_request", action="unlabeled")
@router.register("pull_request", action="ready_for_review")     # a person's draft made ready: decide again
async def on_review(event, ctx) -> None:
    if event.event == "pull_request_review":
        # the review is the event's subject: a payload without a whole one is malformed for each
        # of its handlers (the command handler reads it), so the gate does not act on half of it
        from_payload(ReviewRef, event.data, "review")
    await _on_open_pr(event, ctx, "evaluate")


@router.register("pull_request", action="converted_to_draft")
async def on_converted_to_draft(event, ctx) -> None:
    """A person turned an open PR into a draft (forksync never converts one; its own
    drafts are opened so): on a sync PR the draft is theirs — the gate does not take it out of
    draft (:func:`bot.validation.gate_inputs.person_draft`) — and the status issue and the
    dashboard say draft; then the gate decides again."""
    repo = from_payload(RepoRef, event.data, "repository")
    pr = payload_object(event.data, "pull_request", needs=PullRef)
    if pr.get("state") != "open":
        return
    ctx.validation.drafted_by_person(ctx, repo.full_name, pr)
    await _on_open_pr(event, ctx, "evaluate")


@router.register("check_run", action="completed")
async def on_check_completed(event, ctx) -> None:
    run = payload_object(event.data, "check_run", needs=CheckRunRef)
    if run.get("name") == GATE_CHECK or str(run.get("name", "")).startswith("forksync/"):
        return
    repo = from_payload(RepoRef, event.data, "repository")
    numbers = [int(p["number"]) for p in run.get("pull_requests") or []]
    if not numbers:
        # runs from other repositories (PRs from forks) and unassociated runs come without a PR
        # list: match the open PRs by head sha, and the sync branches by name
        tr = await ctx.validation.trusted(ctx, repo.full_name)
        numbers = await open_prs_for_head(ctx.gh, repo.full_name, run.get("head_sha") or "",
                                          (run.get("check_suite") or {}).get("head_branch"),
                                          tr.cfg.github.branch_prefix, base=tr.base)
        if not numbers:
            ctx.note(f"check_run {run.get('name')!r} on {str(run.get('head_sha'))[:12]}: no open PR into "
                     f"{tr.base} has that head")
    for number in numbers:
        for n in await ctx.validation.evaluate(ctx, repo.full_name, number):
            ctx.note(n)
