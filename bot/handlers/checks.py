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

from bot.github.common import CheckRunRef, RepoRef, from_payload, payload_object, split_repo
from bot.sync.prs import off_base
from bot.validation import signoff
from bot.validation import store as vstore
from bot.validation.checks import parse_external_id
from bot.validation.gate import GATE_CHECK
from bot.validation.service import downloader_for

router = routing.Router()


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
        notes = await _rerun_l3(ctx, repo.full_name, number, run["head_sha"], ext[1], event.data)
    else:
        notes = await svc.validate_pr(ctx, repo.full_name, number, only=ext[1], force=True)
    for n in notes:
        ctx.note(n)


async def _rerun_l3(ctx, full: str, number: int, head: str, workload: str, data: dict) -> list[str]:
    """Re-run of a ``forksync/L3/<workload>`` check run: queue the workload again on that head, as
    ``/forksync l3 <workload>`` by the person who clicked it would (GitHub shows Re-run only to
    people with write access), and decide the gate again (``l3-pending`` until the tick runs it).
    An L3 suite is no required L1 suite: running it as a retest found nothing to run."""
    tr = await ctx.validation.trusted(ctx, full)
    if tr.error:
        return [f"#{number}: L3 {workload} not queued: {tr.error}"]
    who = (data.get("sender") or {}).get("login", "")
    try:
        asked = signoff.request_l3(ctx.store, full, number, head, workload, tr.suites, who, int(ctx.now()))
    except signoff.SignoffError as e:
        return [f"#{number}: L3 {workload} not queued: {e}"]
    notes = [f"#{number}: L3 {workload} queued again by @{who} ({len(asked.new)} run(s)) on {head[:12]}"]
    return notes + await ctx.validation.evaluate(ctx, full, number)


@router.register("workflow_run", action="completed")
async def on_workflow_run(event, ctx) -> None:
    # the service reads the run's repository once it knows the run is a forksync dispatch
    from_payload(RepoRef, event.data, "repository")
    svc = ctx.validation
    for n in await svc.on_workflow_run(ctx, event.data, downloader_for(ctx)):
        ctx.note(n)
