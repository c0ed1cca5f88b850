"""Scheduled validation on the fork's trunk: the nightly L1 run (with its silence alarm), periodic
L2 benchmark runs with regression detection, confirmation, bisection, the regression issue and
the back-out PR; and a reconcile pass that validates open PRs the webhooks did not reach.

Pure "what is due" functions (:func:`nightly_due`, :func:`bot.l2_service.l2_due`)
and async ticks that take a handler context (``ctx.gh``, ``ctx.store``, ``ctx.services``) and a
fork — the worker's periodic loop calls :func:`tick_all` for every tracked fork.

* **Nightly** (:func:`nightly_tick`): every ``interval_s`` the required L1 suites run on the
  default branch's tip (local: now; github-actions: dispatched). A nightly whose results have not
  *all* arrived ``deadline_s`` after dispatch raises one alarm issue
  (:func:`bot.nightly.missing_nightly`, ``templates/issues/nightly_missing.md.j2``): silence is
  not green. One issue per nightly (its number is stored; an open issue with the same title is
  reused after a crash).
* **L2** (:func:`bot.l2_service.l2_tick`): benchmarks on the trunk tip, detection,
  confirmation, bisection, regression issue, back-out PR.
* **Collect** (:func:`collect_tick`): completed github-actions runs of pending results.
* **Reconcile** (:func:`reconcile_tick`): open PRs without a gate check (the bot's own sync PRs,
  whose webhooks the loop guard drops) are validated.
"""
from __future__ import annotations

from bot import l2_store
from bot import store as store_mod
from bot import validation_store as vstore
from bot.handlers.common import split_repo
from bot.nightly import expected_pairs, missing_nightly, render_alarm

NIGHTLY_RUNS = store_mod.table("nightly_runs", {
    "key": str, "repo": str, "sha": str, "dispatched_at": float, "alarm_issue": int,
}, pk="key", indexes=[("repo",)])


# ---------------------------------------------------------------------- pure: what is due
def nightly_due(last_dispatched_at: float | None, now: float, interval_s: int = 86_400) -> bool:
    """A nightly is due when none ran yet or ``interval_s`` passed since the last dispatch."""
    return last_dispatched_at is None or now - last_dispatched_at >= interval_s


def alarm_title(sha: str) -> str:
    return f"forksync: nightly L1 results missing for {sha[:12]}"


# ---------------------------------------------------------------------- helpers
def _ensure(store) -> None:
    from bot.l2_service import L2_REGRESSIONS, L2_RUNS

    with store.lock:
        if any(not store.db[t.name].exists() for t in (NIGHTLY_RUNS, L2_RUNS, L2_REGRESSIONS, vstore.SUITE_RESULTS,
                                                       l2_store.L2_POINTS)):
            store.migrate()


def _rows(store, table: str, where: str, args: list, order: str = "") -> list[dict]:
    with store.lock:
        return list(store.db[table].rows_where(where, args, order_by=order or None))


async def _open_issue_titled(gh, full: str, title: str) -> int | None:
    async for it in gh.getiter("/repos/{owner}/{repo}/issues{?state}", {**split_repo(full), "state": "open"}):
        if it.get("title") == title and "pull_request" not in it:
            return int(it["number"])
    return None


async def issue_once(gh, full: str, title: str, body: str) -> int:
    """Open an issue titled ``title`` unless an open one exists; returns its number."""
    found = await _open_issue_titled(gh, full, title)
    if found:
        return found
    it = await gh.post("/repos/{owner}/{repo}/issues", split_repo(full), data={"title": title, "body": body})
    return int(it["number"])


# ---------------------------------------------------------------------- nightly
async def nightly_tick(ctx, full: str, *, now: float, interval_s: int = 86_400, deadline_s: int = 6 * 3600) -> list[str]:
    """Raise the alarm for the last nightly if results are missing past the deadline; start a
    new nightly when due. Returns notes."""
    from bot.gate_inputs import base_tip
    from bot.validation_service import validation_of

    _ensure(ctx.store)
    v = validation_of(ctx)
    tr = await v.trusted(ctx, full)
    expected = expected_pairs(tr.suites)
    notes: list[str] = []
    runs = _rows(ctx.store, NIGHTLY_RUNS.name, "repo = ?", [full], "dispatched_at desc")
    last = runs[0] if runs else None
    if last and not last["alarm_issue"]:
        received = {(r["suite"], r["platform"]): int(r["updated_at"]) for r in vstore.rows_for(ctx.store, full, shas=(last["sha"],))
                    if r["status"] == "done"}
        missing = missing_nightly(expected, last["sha"], int(last["dispatched_at"]), received, int(now), deadline_s)
        if missing:
            number = await issue_once(ctx.gh, full, alarm_title(last["sha"]), render_alarm(missing))
            with ctx.store.lock:
                ctx.store.db[NIGHTLY_RUNS.name].update(last["key"], {"alarm_issue": number})
            notes.append(f"nightly {last['sha'][:12]}: {len(missing)} result(s) missing → issue #{number}")
    if last:    # every result of the last nightly in: triage it (F3, bot.nightly_triage; a no-op once done)
        try:
            from bot.nightly_triage import triage_stored_nightly
            notes += await triage_stored_nightly(ctx, full, last, expected, cfg=tr.cfg, suites=tr.suites)
        except Exception as e:  # noqa: BLE001 - triage trouble must not stop the next nightly
            notes.append(f"nightly triage {last['sha'][:12]} failed: {type(e).__name__}: {str(e)[:300]}")
    if expected and nightly_due(last["dispatched_at"] if last else None, now, interval_s):
        sha = await base_tip(ctx.gh, full, tr.default_branch)
        with ctx.store.lock:
            ctx.store.db[NIGHTLY_RUNS.name].upsert({"key": f"{full}@{sha}@{int(now)}", "repo": full, "sha": sha,
                                                    "dispatched_at": now, "alarm_issue": 0}, pk="key")
        by_name = {s.name: s for s in tr.suites}
        for suite, plat in expected:
            notes.append("nightly " + await v.run_suite(ctx, full, 0, sha, by_name[suite], plat, tr))
    return notes


# ---------------------------------------------------------------------- L3 on demand
def _claim_l3(store, full: str, platform: str):
    """Claim the oldest queued L3 run of ``full`` on ``platform`` (status → running), or None."""
    from bot import signoff

    with store.lock:
        t = store.db[signoff.L3_RUNS.name]
        rows = list(t.rows_where("repo = ? and platform = ? and status = 'queued'", [full, platform],
                                 order_by="requested_at, id", limit=1))
        if not rows:
            return None
        t.update(rows[0]["id"], {"status": "running"})
        return signoff.L3Run(**{**rows[0], "status": "running"})


async def answer_l3(ctx, full: str, run, result, suite) -> None:
    """Finish an L3 run (:func:`bot.signoff.finish_l3`) and answer once on its PR."""
    from bot import signoff
    from bot.handlers.common import comment_once
    from bot.validation_checks import check_name, title_of
    from bot.validation_render import render

    row = vstore.get(ctx.store, full, run.head_sha, suite.name, run.platform) or {}
    signoff.finish_l3(ctx.store, run.id, result.outcome, row.get("check_url", ""), int(result.finished_at))
    name = check_name(suite.name, run.platform, len(suite.platforms), "L3")
    body = render("validation/l3_result.md.j2", run=run, result=result, title=title_of(result), check=name,
                  url=row.get("check_url", ""))
    await comment_once(ctx.gh, full, run.pr, f"l3:{run.id}", body)


async def answer_l3_result(ctx, full: str, result, suite) -> list[str]:
    """For a result that arrived later (github-actions): answer the running L3 run it belongs to."""
    from bot import signoff

    with ctx.store.lock:
        rows = list(ctx.store.db[signoff.L3_RUNS.name].rows_where(
            "repo = ? and head_sha = ? and workload = ? and platform = ? and status = 'running'",
            [full, result.commit, result.suite, result.platform]))
    for r in rows:
        await answer_l3(ctx, full, signoff.L3Run(**r), result, suite)
    return [f"L3 {result.suite}@{result.platform} on #{r['pr']}: {result.verdict}" for r in rows]


async def l3_tick(ctx, full: str, *, platforms: tuple[str, ...] = ("cpu",), limit: int = 1) -> list[str]:
    """Run up to ``limit`` queued ``/forksync l3 <workload>`` runs whose platform this machine
    serves (local backend): a check run ``forksync/L3/<workload>`` on the PR head, the verdict
    recorded (:func:`bot.signoff.finish_l3`) and one reply on the PR
    (``templates/validation/l3_result.md.j2``)."""
    from bot import signoff
    from bot.validation_service import validation_of

    v = validation_of(ctx)
    notes: list[str] = []
    tr = None
    for plat in platforms:
        while len(notes) < limit:
            run = _claim_l3(ctx.store, full, plat)
            if run is None:
                break
            tr = tr or await v.trusted(ctx, full)
            suite = next((s for s in tr.suites if s.name == run.workload and s.level == "L3"), None)
            if suite is None:
                signoff.finish_l3(ctx.store, run.id, "error", "", int(v.now()))
                notes.append(f"L3 {run.workload}: no such L3 suite on the default branch any more")
                continue
            note = await v.run_suite(ctx, full, run.pr, run.head_sha, suite, plat, tr)
            row = vstore.get(ctx.store, full, run.head_sha, suite.name, plat)
            if row["status"] != "done":          # github-actions: the result comes later
                notes.append(f"L3 {note}")
                continue
            from gpu_runner.result import RunResult
            result = RunResult.from_json(row["result_json"])
            await answer_l3(ctx, full, run, result, suite)
            notes.append(f"L3 {run.workload}@{plat} on #{run.pr}: {result.verdict}")
    return notes


# ---------------------------------------------------------------------- reconcile + all ticks
async def reconcile_tick(ctx, full: str) -> list[str]:
    """Validate open PRs into the default branch whose head has no finished forksync gate check
    (the bot's own PRs and updates: their webhooks are dropped by the loop guard; a run whose
    worker died: its pending result is re-run once it is older than the suite may take), and
    re-evaluate sync PRs whose gate said "Ready to merge" but are still open (a 405 or an unknown
    mergeability earlier: the merge is retried)."""
    from bot.gate import GATE_CHECK
    from bot.validation_service import validation_of

    v = validation_of(ctx)
    rv = split_repo(full)
    repo = await ctx.gh.getitem("/repos/{owner}/{repo}", rv)
    prefix = (await v.trusted(ctx, full)).cfg.github.branch_prefix
    notes = []
    async for pr in ctx.gh.getiter("/repos/{owner}/{repo}/pulls{?state,base}",
                                   {**rv, "state": "open", "base": repo.get("default_branch") or "main"}):
        runs = [r async for r in ctx.gh.getiter("/repos/{owner}/{repo}/commits/{ref}/check-runs{?check_name}",
                                                 {**rv, "ref": pr["head"]["sha"], "check_name": GATE_CHECK},
                                                 iterable_key="check_runs")]
        if not runs or runs[0].get("status") != "completed":
            notes += await v.validate_pr(ctx, full, int(pr["number"]))
        elif runs[0].get("conclusion") == "success" and pr["head"]["ref"].startswith(prefix):
            notes += await v.evaluate(ctx, full, int(pr["number"]))
    return notes


async def collect_tick(ctx, full: str, *, now: float | None = None, grace_s: int = 3600) -> list[str]:
    """Pick up completed github-actions runs of pending results by listing the workflow's runs
    (the ``workflow_run`` webhook's sender is the bot itself, which the loop guard drops); a
    result still missing ``timeout_s + grace_s`` after its dispatch becomes red
    (``workflow-failed``): silence is not green."""
    import time

    from gpu_runner.github_actions import WORKFLOW_FILE, Dispatch, missing_result, parse_run_name
    from bot.validation_service import downloader_for, validation_of

    now = time.time() if now is None else now
    with ctx.store.lock:
        pending = {r["request_id"]: r for r in ctx.store.db[vstore.SUITE_RESULTS.name].rows_where(
            "repo = ? and status = 'pending' and request_id != ''", [full])}
    if not pending:
        return []
    v = validation_of(ctx)
    notes = []
    async for run in ctx.gh.getiter("/repos/{owner}/{repo}/actions/workflows/{workflow}/runs{?status}",
                                    {**split_repo(full), "workflow": WORKFLOW_FILE, "status": "completed"},
                                    iterable_key="workflow_runs"):
        d = parse_run_name(run.get("display_title") or run.get("name"))
        if d is not None and d.request_id in pending:
            notes += await v.on_workflow_run(ctx, {"action": "completed", "workflow_run": run,
                                                   "repository": {"full_name": full}}, downloader_for(ctx))
            pending.pop(d.request_id)
    tr = None
    for rid, row in pending.items():
        tr = tr or await v.trusted(ctx, full)
        suite = next((s for s in tr.suites if s.name == row["suite"]), None)
        limit = (suite.timeout_s if suite else 3600) + grace_s
        if now - row["updated_at"] < limit:
            continue
        d = Dispatch(row["suite"], row["sha"], row["platform"], rid)
        result = missing_result(d, f"no result {int(now - row['updated_at'])} s after the dispatch "
                                   f"(limit {limit} s: the suite's timeout + {grace_s} s)", level=row["level"])
        await v.record(ctx, full, row["pr"], result, suite)
        notes.append(f"{row['suite']}@{row['platform']} on {row['sha'][:12]}: no result, counted red")
        if row["pr"]:
            notes += await v.evaluate(ctx, full, row["pr"], tr=tr)
    return notes


_LAST_TICK: dict[str, float] = {}


async def tick_tracked(store, make_ctx, *, now: float | None = None, min_interval_s: float = 300.0, **kw) -> list[str]:
    """:func:`tick_all` for every tracked fork (table ``tracked_forks``), at most once per
    ``min_interval_s`` per fork. ``make_ctx(installation_id)`` gives a handler context (the
    worker's poll loop has one). Returns notes."""
    import time

    from bot.handlers.upstream import TRACKED

    now = time.time() if now is None else now
    out = []
    for r in _rows(store, TRACKED.name, "1 = 1", [], "fork"):
        if now - _LAST_TICK.get(r["fork"], float("-inf")) < min_interval_s:
            continue
        _LAST_TICK[r["fork"]] = now
        ctx = await make_ctx(r["installation_id"])
        out += await tick_all(ctx, r["fork"], now=now, **kw)
    return out


async def tick_all(ctx, full: str, *, now: float, nightly_interval_s: int = 86_400, l2_interval_s: int = 86_400,
                   nightly_deadline_s: int = 6 * 3600) -> list[str]:
    """Every scheduled job for one fork, each failure reported as a note (the next tick retries)."""
    from bot.l2_service import l2_tick

    notes = []
    for name, job in (("collect", lambda: collect_tick(ctx, full)),
                      ("reconcile", lambda: reconcile_tick(ctx, full)),
                      ("l3", lambda: l3_tick(ctx, full)),
                      ("nightly", lambda: nightly_tick(ctx, full, now=now, interval_s=nightly_interval_s,
                                                       deadline_s=nightly_deadline_s)),
                      ("l2", lambda: l2_tick(ctx, full, now=now, interval_s=l2_interval_s))):
        try:
            notes += await job()
        except Exception as e:  # noqa: BLE001 - one job's failure must not stop the others
            notes.append(f"{full}: {name} tick failed: {type(e).__name__}: {str(e)[:300]}")
    return notes
