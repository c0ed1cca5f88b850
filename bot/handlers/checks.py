"""Suite check runs: "Re-run" on a ``forksync/L1/<suite>``, ``forksync/L3/<suite>`` or ``forksync/gate`` check run
(``check_run.rerequested``) and results of the github-actions backend (``workflow_run.completed``).

A re-run of a suite's check run runs that suite again on the check run's commit (for the PR it
belongs to) and re-evaluates the gate; an L3 suite's is queued again for the next L3 tick, as
``/forksync l3`` queues it; a re-run of ``forksync/gate`` re-evaluates the gate.
Events for check runs of other apps are ignored. (The bot's own ``check_run`` events never reach
here: the dispatcher's loop guard drops them.)
"""
from __future__ import annotations

from gidgethub import routing

from bot.github.common import WRITE_LEVELS, CheckRunRef, RepoRef, comment_once, from_payload, payload_object, permission, render, split_repo
from bot.sync.prs import off_base
from bot.validation import signoff
from bot.validation import store as vstore
from bot.validation.checks import parse_external_id
from bot.validation.gate import GATE_CHECK
from bot.validation.service import downloader_for, l3_head_refusal

router = routing.Router()

#: why a Re-run of an L3 check run queued nothing (said on the PR, as ``/forksync l3`` answers)
L3_RERUN_CLOSED = "this PR is {state}: nothing is run for it"
L3_RERUN_OLD_HEAD = ("this check run is on `{head}`, no longer the PR's head `{current}`: a run there would be "
                     "stale before it started — use Re-run on the check run of `{current}`, or `/forksync l3`")
L3_RERUN_BOT = "@{who} is an App's account, and only a collaborator with write access may queue an L3 run"
L3_RERUN_PERMISSION = "@{who} has `{level}` permission; an L3 run needs write or admin"


async def _pr_for_sha(ctx, full: str, sha: str, listed: list, base: str) -> int | None:
    """The open PR into ``base`` (the branch forksync syncs) whose head is ``sha``: a check run on
    forksync's branch lists every PR from it, and one into another base would take the re-run away
    from the unit's."""
    for p in listed or []:
        if isinstance(p, dict) and p.get("number") and not off_base(p, base):
            return int(p["number"])
    for r in vstore.rows_for(ctx.store, full, shas=(sha,)):
        if r["pr"]:
            return int(r["pr"])
    async for pr in ctx.gh.getiter("/repos/{owner}/{repo}/pulls{?state,base}",
                                   {**split_repo(full), "state": "open", "base": base}):
        if pr["head"]["sha"] == sha:
            return int(pr["number"])
    return None


@router.register("check_run", action="rerequested")
async def on_rerequested(event, ctx) -> None:
    run = payload_object(event.data, "check_run", needs=CheckRunRef)
    repo = from_payload(RepoRef, event.data, "repository")
    ext = parse_external_id(run.get("external_id"))
    if run.get("name") != GATE_CHECK and ext is None:
        return
    base = (await ctx.validation.trusted(ctx, repo.full_name)).base
    number = await _pr_for_sha(ctx, repo.full_name, run["head_sha"], run.get("pull_requests"), base)
    if number is None:
        ctx.note(f"{run['name']}: no open PR has head {run['head_sha'][:12]}")
        return
    svc = ctx.validation
    if ext is None:
        notes = await svc.evaluate(ctx, repo.full_name, number)
    elif ext[0] == "L3":
        notes = await _rerun_l3(ctx, repo.full_name, number, run["head_sha"], ext[1], ext[2], event.data)
    else:
        notes = await svc.validate_pr(ctx, repo.full_name, number, only=ext[1], force=True)
    for n in notes:
        ctx.note(n)


async def _rerun_l3(ctx, full: str, number: int, head: str, workload: str, platform: str, data: dict) -> list[str]:
    """Re-run of a ``forksync/L3/<workload>@<platform>`` check run: queue the workload again on
    that platform, as ``/forksync l3 <workload>`` by the person who clicked it would, and decide
    the gate again (``l3-pending`` until the tick runs it). The command's rules hold: only a
    collaborator with write access (any App with ``checks: write`` can ask GitHub for a re-run,
    and the heavy workload runs the PR's code on GPU runners), only on an open PR and only on its
    current head (a run on an older head is one the gate calls stale). A refusal is said on the
    PR. An L3 suite is no required L1 suite: running it as a retest found nothing to run."""
    tr = await ctx.validation.trusted(ctx, full)
    if tr.error:
        return [f"#{number}: L3 {workload} not queued: {tr.error}"]
    sender = data.get("sender") or {}
    who = sender.get("login", "")
    pr = await ctx.gh.getitem("/repos/{owner}/{repo}/pulls/{number}", {**split_repo(full), "number": number})
    refusal = await _l3_rerun_refusal(ctx, full, pr, head, sender)
    if refusal:
        if who and sender.get("type") != "Bot":
            name = (data.get("check_run") or {}).get("name") or f"forksync/L3/{workload}"
            body = render("l3_rerun_refused.md.j2", user=who, check=name, reason=refusal)
            await comment_once(ctx.gh, full, number, f"l3-rerun-refused:{head}:{workload}:{platform}:{who}", body)
        return [f"#{number}: L3 {workload}@{platform} not queued for @{who or '?'}: {refusal}"]
    try:
        asked = signoff.request_l3(ctx.store, full, number, head, workload, tr.suites, who, int(ctx.now()),
                                   platform=platform)
    except signoff.SignoffError as e:
        return [f"#{number}: L3 {workload} not queued: {e}"]
    notes = [f"#{number}: L3 {workload}@{platform} queued again by @{who} ({len(asked.new)} run(s)) on {head[:12]}"]
    return notes + await ctx.validation.evaluate(ctx, full, number)


async def _l3_rerun_refusal(ctx, full: str, pr: dict, head: str, sender: dict) -> str:
    """Why the Re-run ``sender`` asked of an L3 check run on ``head`` queues nothing ("" when it
    may): the rules ``/forksync l3`` applies to its commenter and the PR."""
    if pr.get("state") != "open":
        return L3_RERUN_CLOSED.format(state="merged" if pr.get("merged") else "closed")
    if pr["head"]["sha"] != head:
        return L3_RERUN_OLD_HEAD.format(head=head[:12], current=pr["head"]["sha"][:12])
    who = sender.get("login", "")
    if not who or sender.get("type") == "Bot":
        return L3_RERUN_BOT.format(who=who or "?")
    level = await permission(ctx.gh, full, who)
    if level not in WRITE_LEVELS:
        return L3_RERUN_PERMISSION.format(who=who, level=level)
    return await l3_head_refusal(ctx, full, pr, 0)


@router.register("workflow_run", action="completed")
async def on_workflow_run(event, ctx) -> None:
    # the service reads the run's repository once it knows the run is a forksync dispatch
    from_payload(RepoRef, event.data, "repository")
    svc = ctx.validation
    for n in await svc.on_workflow_run(ctx, event.data, downloader_for(ctx)):
        ctx.note(n)
