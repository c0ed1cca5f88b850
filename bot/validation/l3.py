"""L3 on demand: ``/forksync l3 <workload>`` runs queued by :mod:`bot.validation.signoff`, run on
the machine that serves their platform, recorded, and answered once on their PR.

A run is claimed (status ``queued`` → ``running``) before it starts, so two workers never run one
request; its verdict is recorded with :func:`bot.validation.signoff.finish_l3` and answered with
``templates/validation/l3_result.md.j2`` under a hidden marker per run (a redelivery never
doubles the reply). Results that arrive later (github-actions) are answered by
:func:`answer_l3_result` from the validation service.
"""
from __future__ import annotations

from bot import templating
from bot.github.common import comment_once, split_repo
from bot.sync import prs as sync_prs
from bot.validation import signoff
from bot.validation import store as vstore
from bot.validation.checks import check_name, title_of
from gpu_runner.result import RunResult


async def answer_l3(ctx, full: str, run, result, suite) -> None:
    """Finish an L3 run (:func:`bot.validation.signoff.finish_l3`) and answer once on its PR.
    ``suite`` is None when the trusted config no longer has it (a result that times out then)."""
    row = vstore.get(ctx.store, full, run.head_sha, run.workload, run.platform) or {}
    # dated when forksync records and answers it, the earliest an owner can read it (the gate
    # counts only sign-offs given after it); never before the runner says it finished
    v = getattr(ctx, "validation", None)
    now = v.now() if v else result.finished_at
    signoff.finish_l3(ctx.store, run.id, result.outcome, row.get("check_url", ""), int(max(result.finished_at, now)))
    name = check_name(run.workload, run.platform, len(suite.platforms) if suite else 1, "L3")
    body = templating.render("validation/l3_result.md.j2", run=run, result=result, title=title_of(result), check=name,
                  url=row.get("check_url", ""))
    await comment_once(ctx.gh, full, run.pr, f"l3:{run.id}", body)


async def answer_l3_result(ctx, full: str, result, suite) -> list[str]:
    """For a result that arrived later (github-actions): answer the running L3 run it belongs to."""
    runs = vstore.running_l3(ctx.store, full, result.commit, result.suite, result.platform)
    for run in runs:
        await answer_l3(ctx, full, run, result, suite)
    return [f"L3 {result.suite}@{result.platform} on #{run.pr}: {result.verdict}" for run in runs]


async def _not_run(ctx, full: str, run, why: str, next_step: str) -> None:
    """Answer once on the PR that ``run`` was not run, and why (a queued request never vanishes
    silently: the person who asked is waiting for it)."""
    body = templating.render("validation/l3_not_run.md.j2", run=run, why=why, next=next_step)
    await comment_once(ctx.gh, full, run.pr, f"l3:{run.id}", body)


#: What the collect tick waits past a suite's timeout before counting a dispatched result missing.
COLLECT_GRACE_S = 3600


def claim_lease_s(suites) -> int:
    """Pure: how long (s) a claimed L3 run may stay ``running`` before it is taken for abandoned and
    claimed again: longer than any trusted L3 suite (``SuiteConfig`` values) may take with its
    retries, plus the collect tick's grace for a dispatched result (which finishes the run first),
    so a run still at work is never run twice. Without L3 suites, a default suite's."""
    budgets = [s.timeout_s * (s.infra_retries + 1) for s in suites if s.level == "L3"]
    return max(budgets, default=2 * 3600) + COLLECT_GRACE_S + 120


async def l3_tick(ctx, full: str, *, platforms: tuple[str, ...] = ("cpu",), limit: int = 1) -> list[str]:
    """Run up to ``limit`` queued ``/forksync l3 <workload>`` runs whose platform this machine
    serves (local backend): a check run ``forksync/L3/<workload>`` on the PR head, the verdict
    recorded (:func:`bot.validation.signoff.finish_l3`) and one reply on the PR
    (``templates/validation/l3_result.md.j2``). A run whose handling fails (GitHub refusing its
    check run, say) goes back to the queue before the error is raised, so the tick fails visibly
    and the next one runs it; a run left ``running`` past :func:`claim_lease_s` (its worker died)
    is claimed again."""
    v = ctx.validation
    notes: list[str] = []
    tr = None
    for plat in platforms:
        while len(notes) < limit:
            now = v.now()
            if tr is None and vstore.running_l3_of(ctx.store, full, plat):
                tr = await v.trusted(ctx, full)
            stale_before = now - claim_lease_s(tr.suites) if tr is not None else None
            run = vstore.claim_l3(ctx.store, plat, repo=full, now=now, stale_before=stale_before)
            if run is None:
                break
            try:
                tr = tr or await v.trusted(ctx, full)
                notes += await _run_claimed(ctx, full, run, plat, tr)
            except BaseException:
                # left running, nothing would ever run or answer it: the gate would show it
                # "running" for good
                vstore.release_l3(ctx.store, run.id)
                raise
    return notes


async def _run_claimed(ctx, full: str, run, plat: str, tr) -> list[str]:
    """Run (or answer why not) one claimed L3 run; returns notes."""
    v = ctx.validation
    notes: list[str] = []
    pr = await ctx.gh.getitem("/repos/{owner}/{repo}/pulls/{number}", {**split_repo(full), "number": run.pr})
    # a PR whose base was changed away from the branch forksync syncs after the run was
    # queued is one the gate no longer acts on (bot.sync.prs.off_base)
    off = sync_prs.off_base(pr, tr.base) if pr.get("state") == "open" else ""
    if pr.get("state") != "open" or pr["head"]["sha"] != run.head_sha or off:
        # a heavy run on a tree nobody will merge is wasted, and its green would read as
        # evidence for the new head: cancelled, and the gate shows l3-stale
        vstore.cancel_l3_run(ctx.store, run.id, int(v.now()))
        why = (f"the PR is {pr.get('state')}" if pr.get("state") != "open"
               else f"the PR is {off}" if off
               else f"the head moved from `{run.head_sha[:12]}` to `{pr['head']['sha'][:12]}`")
        await _not_run(ctx, full, run, why, f"`/forksync l3 {run.workload}` runs it on the current head.")
        notes.append(f"L3 {run.workload}@{plat} on #{run.pr}: not run, {why.replace('`', '')}")
        if pr.get("state") == "open":
            notes += await v.evaluate(ctx, full, run.pr)
        return notes
    suite = next((s for s in tr.suites if s.name == run.workload and s.level == "L3"), None)
    if suite is None:
        signoff.finish_l3(ctx.store, run.id, "error", "", int(v.now()))
        why = (f"the trusted `.github/forksync.yml` on the default branch is invalid, so its L3 suites "
               f"are unknown:\n\n```\n{tr.error}\n```\n" if tr.error
               else f"the default branch's `.github/forksync.yml` has no L3 suite named `{run.workload}` "
               "any more")
        await _not_run(ctx, full, run, why, "Nothing merges on this L3 result; fix the configuration, then ask "
                       f"again with `/forksync l3 {run.workload}`.")
        notes.append(f"L3 {run.workload}: not run, " + ("the trusted config is invalid" if tr.error
                                                      else "no such L3 suite on the default branch any more"))
        notes += await v.evaluate(ctx, full, run.pr, tr=tr)
        return notes
    note = await v.run_suite(ctx, full, run.pr, run.head_sha, suite, plat, tr)
    row = vstore.get(ctx.store, full, run.head_sha, suite.name, plat)
    if row["status"] != "done":          # github-actions: the result comes later
        notes.append(f"L3 {note}")
        return notes
    result = RunResult.from_json(row["result_json"])
    await answer_l3(ctx, full, run, result, suite)
    notes.append(f"L3 {run.workload}@{plat} on #{run.pr}: {result.verdict}")
    # the gate counts the PR's L3 results: it showed this run pending until now
    notes += await v.evaluate(ctx, full, run.pr, tr=tr)
    return notes
