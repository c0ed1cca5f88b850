"""Scheduled validation on the fork's trunk: the nightly L1 run (with its silence alarm), periodic
L2 benchmark runs with regression detection, confirmation, bisection, the regression issue and
the back-out PR; and a reconcile pass that validates open PRs the webhooks did not reach.

Pure "what is due" functions (:func:`nightly_due`, :func:`bot.l2.service.l2_due`)
and async ticks that take a handler context (``ctx.gh``, ``ctx.store``, ``ctx.validation``) and a
fork — the worker's periodic loop calls :func:`tick_all` for every tracked fork.

* **Nightly** (:func:`nightly_tick`): on the fork's ``schedules.nightly`` (forksync.yml: an
  interval, default a day, or a cron expression in UTC; :mod:`bot.config.schedules`) the
  required L1 suites run on the tip of the branch forksync syncs (``fork.ref``; local: now;
  github-actions: dispatched). A nightly whose results have not *all* arrived ``schedules.nightly_deadline_s`` after dispatch raises one alarm issue
  (:func:`bot.validation.nightly.missing_nightly`, ``templates/issues/nightly_missing.md.j2``): silence is
  not green. One issue per nightly (its number is stored; an open issue with the same title is
  reused after a crash); a cron nightly whose last run was a catch-up just before its time
  (:meth:`bot.config.schedules.Schedule.slot_near`) on the same trunk tip and suites is not run
  again at that time (:func:`repeats_last`; the tick's note says so); once the late results are all in, the alarm is closed with a comment
  saying when they came (:func:`close_answered_alarms`), and a later silence files a new one.
* **L2** (:func:`bot.l2.service.l2_tick`): benchmarks on the trunk tip, detection,
  confirmation, bisection, regression issue, back-out PR.
* **Collect** (:func:`collect_tick`): completed github-actions runs of pending results.
* **Reconcile** (:func:`reconcile_tick`): open PRs without a gate check on their head (the bot's
  own sync PRs, whose webhooks the loop guard drops; any PR whose head moved) are validated, and
  PRs whose other checks changed after the gate decided are re-evaluated (:func:`checks_changed_since`).
"""
from __future__ import annotations

import json
import time
from typing import Callable

from bot.agents.redact import error_text
from bot.config.schedules import Schedule, as_schedule
from bot.github.client import installation_suspended
from bot.github.common import base_branch, base_tip, comment_once, issue_once, split_repo
from bot.l2 import store as l2_store
from bot.l2.service import l2_tick
from bot.sync import store as sync_store
from bot.sync.prs import is_own_sync_pr
from bot.sync.upstream import refresh_quietly
from bot.templating import utc_minute
from bot.triage.nightly import triage_stored_nightly
from bot.validation import store as vstore
from bot.validation.checks import LANDS_AFTER, LANDS_AFTER_CLOSED, parse_gate_external_id, required_fingerprint
from bot.validation.gate import GATE_CHECK
from bot.validation.gate_inputs import branch_rules, combined_status, lands_after, lands_after_closed, required_checks
from bot.validation.l3 import answer_l3_result, l3_tick
from bot.validation.nightly import all_arrived_at, expected_pairs, missing_nightly, render_alarm, render_arrived
from bot.validation.service import downloader_for, superseded_note
from gpu_runner.github_actions import WORKFLOW_FILE, Dispatch, missing_result, parse_run_name


# ---------------------------------------------------------------------- pure: what is due
def nightly_due(last_dispatched_at: float | None, now: float, interval_s: int | Schedule = 86_400) -> bool:
    """A nightly is due when none ran yet or its schedule (seconds, or a :class:`Schedule` with an
    interval or a cron expression) has come round since the last dispatch."""
    return as_schedule(interval_s).due(last_dispatched_at, now)


def repeats_last(schedule: Schedule, last_at: float, last_sha: str, last_pairs: str, slot: float, sha: str,
                 pairs: str) -> bool:
    """Pure: is the nightly due at ``slot`` (epoch s) the one the last run already was? It is when
    the last run (started at ``last_at`` on ``last_sha``, running ``last_pairs``) stands for that
    scheduled time (:meth:`Schedule.slot_near`: a catch-up just before it) and ran the same suites
    on the same trunk tip — running it again would measure nothing new. Intervals never repeat:
    they count from the last run. ``pairs``: JSON of the sorted (suite, platform) pairs."""
    return (schedule.slot_near(last_at) == slot and last_sha == sha and bool(last_pairs) and last_pairs == pairs)


def alarm_title(sha: str) -> str:
    return f"forksync: nightly L1 results missing for {sha[:12]}"


# ---------------------------------------------------------------------- nightly
async def nightly_tick(ctx, full: str, *, now: float, interval_s: int | Schedule | None = None,
                       deadline_s: int | None = None) -> list[str]:
    """Raise the alarm for the last nightly if results are missing past the deadline; start a
    new nightly when due. ``interval_s``/``deadline_s``: None takes the fork's ``schedules``
    (forksync.yml). Returns notes."""
    vstore.ensure(ctx.store)
    l2_store.ensure(ctx.store)
    v = ctx.validation
    tr = await v.trusted(ctx, full)
    schedule = as_schedule(tr.cfg.schedules.nightly if interval_s is None else interval_s)
    deadline_s = tr.cfg.schedules.nightly_deadline_s if deadline_s is None else deadline_s
    expected = expected_pairs(tr.suites)
    notes: list[str] = []
    runs = vstore.nightly_runs(ctx.store, full)
    last = runs[0] if runs else None
    if last and not last["alarm_issue"]:
        received = {(r["suite"], r["platform"]): int(r["updated_at"]) for r in vstore.rows_for(ctx.store, full, shas=(last["sha"],))
                    if r["status"] == "done"}
        missing = missing_nightly(expected, last["sha"], int(last["dispatched_at"]), received, int(now), deadline_s)
        if missing:
            number = await issue_once(ctx.gh, full, alarm_title(last["sha"]), render_alarm(missing))
            vstore.set_nightly_alarm(ctx.store, last["key"], number)
            notes.append(f"nightly {last['sha'][:12]}: {len(missing)} result(s) missing → issue #{number}")
    notes += await close_answered_alarms(ctx, full, runs, expected, now=now)
    if last:    # every result of the last nightly in: triage it (bot.triage.nightly; a no-op once done)
        try:
            notes += await triage_stored_nightly(ctx, full, last, expected, cfg=tr.cfg, suites=tr.suites)
        except Exception as e:  # noqa: BLE001 - triage trouble must not stop the next nightly
            notes.append(f"nightly triage {last['sha'][:12]} failed: {error_text(e, 300)}")
    last_at = max(last["dispatched_at"], last.get("covers") or 0) if last else None
    if expected and nightly_due(last_at, now, schedule):
        sha = await base_tip(ctx.gh, full, tr.base)
        pairs = json.dumps(sorted(expected))
        slot = schedule.next_run(last_at) if last else 0.0
        if last and repeats_last(schedule, last["dispatched_at"], last["sha"], last.get("pairs") or "", slot, sha, pairs):
            vstore.cover_nightly(ctx.store, last["key"], slot)
            notes.append(f"nightly {sha[:12]}: the {utc_minute(slot)} run not started: the catch-up run of "
                         f"{utc_minute(last['dispatched_at'])} ran the same suites on this trunk tip")
            return notes
        vstore.record_nightly(ctx.store, full, sha, now, pairs)
        by_name = {s.name: s for s in tr.suites}
        for suite, plat in expected:
            notes.append("nightly " + await v.run_suite(ctx, full, 0, sha, by_name[suite], plat, tr))
    return notes


async def close_answered_alarms(ctx, full: str, runs: list[dict], expected, *, now: float) -> list[str]:
    """Close the alarm issue of every nightly in ``runs`` (stored rows) whose results all came after
    all, late (a stuck runner queue), with a comment saying when
    (:func:`bot.validation.nightly.render_arrived`): an open alarm whose results are in would have
    people hunt a silence that ended. An alarm a person closed already is only recorded. Returns notes."""
    notes = []
    for run in runs:
        if not run["alarm_issue"] or run.get("alarm_closed_at"):
            continue
        received = {(r["suite"], r["platform"]): int(r["updated_at"]) for r in vstore.rows_for(ctx.store, full, shas=(run["sha"],))
                    if r["status"] == "done"}
        came = all_arrived_at(expected, int(run["dispatched_at"]), received)
        if came is None:
            continue
        number = int(run["alarm_issue"])
        issue = await ctx.gh.getitem("/repos/{owner}/{repo}/issues/{number}", {**split_repo(full), "number": number})
        if issue.get("state") == "open":
            await comment_once(ctx.gh, full, number, f"nightly-arrived:{run['key']}",
                               render_arrived(run["sha"], int(run["dispatched_at"]), came))
            await ctx.gh.patch("/repos/{owner}/{repo}/issues/{number}", {**split_repo(full), "number": number},
                               data={"state": "closed", "state_reason": "completed"})
        vstore.close_nightly_alarm(ctx.store, run["key"], now)
        notes.append(f"nightly {run['sha'][:12]}: all results in, alarm #{number} closed")
    return notes


# ---------------------------------------------------------------------- reconcile + all ticks
async def reconcile_tick(ctx, full: str) -> list[str]:
    """Validate open PRs into the branch forksync syncs (``fork.ref``) whose head has no finished forksync gate check
    (the bot's own PRs and updates: their webhooks are dropped by the loop guard; a run whose
    worker died: its pending result is re-run once it is older than the suite may take), and
    re-evaluate forksync's own sync PRs whose gate said "Ready to merge" but are still open (a 405
    or an unknown mergeability earlier: the merge is retried), or held them (``lands-after``) for
    units that have landed since (a landing the poller's sync found: no event re-evaluated them),
    and any PR whose other checks or commit statuses changed after its gate completed."""
    v = ctx.validation
    rv = split_repo(full)
    tr = await v.trusted(ctx, full)
    cfg = tr.cfg
    prefix = cfg.github.branch_prefix
    required_now: dict[str, str] = {}      # base ref → fingerprint of its required checks now
    notes = []
    async for pr in ctx.gh.getiter("/repos/{owner}/{repo}/pulls{?state,base}",
                                   {**rv, "state": "open", "base": tr.base}):
        runs = [r async for r in ctx.gh.getiter("/repos/{owner}/{repo}/commits/{ref}/check-runs{?check_name}",
                                                 {**rv, "ref": pr["head"]["sha"], "check_name": GATE_CHECK},
                                                 iterable_key="check_runs")]
        if not runs or runs[0].get("status") != "completed":
            notes += await v.validate_pr(ctx, full, int(pr["number"]))
        elif runs[0].get("conclusion") == "success" and is_own_sync_pr(
                ctx.store, full, pr, prefix=prefix, bot_login=v.bot_login, fork_ref=tr.base):
            notes += await v.evaluate(ctx, full, int(pr["number"]))
        elif _landed_since(ctx.store, full, pr, runs[0]) and is_own_sync_pr(
                ctx.store, full, pr, prefix=prefix, bot_login=v.bot_login, fork_ref=tr.base):
            # a unit it lands after landed in a way no event told (the poller's sync found it
            # closed): the landing's own re-evaluation never ran
            notes += [f"#{pr['number']}: the units it lands after have landed since the gate"] + \
                await v.evaluate(ctx, full, int(pr["number"]))
        elif await _required_changed(ctx.gh, full, pr["base"]["ref"], cfg, runs[0], required_now):
            notes += [f"#{pr['number']}: required checks changed since the gate"] + await v.evaluate(ctx, full, int(pr["number"]))
        elif await checks_changed_since(ctx.gh, full, pr["head"]["sha"], runs[0].get("completed_at") or ""):
            # another CI reported on the head after the gate decided (its event may never have
            # reached forksync: runs from forks carry no PR list, statuses have no handler)
            notes += [f"#{pr['number']}: checks changed since the gate"] + await v.evaluate(ctx, full, int(pr["number"]))
    return notes


def _landed_since(store, full: str, pr: dict, gate_run: dict) -> bool:
    """Did the completed gate run ``gate_run`` hold ``pr`` for a unit it lands after (its
    ``external_id``'s holds, :func:`bot.validation.checks.gate_external_id` — data, not the
    summary's words) that is no longer in flight (:func:`bot.validation.gate_inputs.lands_after`)
    and was not closed unmerged under a person's work on its branch
    (:func:`bot.validation.gate_inputs.lands_after_closed`: that one holds until a person acts)? Or
    for one closed unmerged that is so no more — its commits planned again (``/forksync
    reconsider``), which moves nothing on this PR: its gate then names the new PR."""
    holds = parse_gate_external_id(gate_run.get("external_id"))[1]
    if gate_run.get("conclusion") == "success" or not holds & {LANDS_AFTER, LANDS_AFTER_CLOSED}:
        return False
    closed = lands_after_closed(store, full, pr)
    return (not lands_after(store, full, pr) and not closed) or (not closed and LANDS_AFTER_CLOSED in holds)


async def _required_changed(gh, full: str, base_ref: str, cfg, gate_run: dict, memo: dict[str, str]) -> bool:
    """Are the base branch's required checks (protection + its rulesets' + ``gate.required_checks``)
    other than those the gate run decided with (its ``external_id``'s fingerprint,
    :func:`bot.validation.checks.required_fingerprint`)?"""
    if base_ref not in memo:
        req = required_checks(await base_branch(gh, full, base_ref), await branch_rules(gh, full, base_ref),
                              cfg.gate.required_checks or ())
        memo[base_ref] = required_fingerprint(req.names, req.apps)
    return parse_gate_external_id(gate_run.get("external_id"))[0] != memo[base_ref]


async def checks_changed_since(gh, full: str, sha: str, gate_completed_at: str) -> bool:
    """Did another app's check run or another CI's commit status on ``sha`` complete or change
    after ``gate_completed_at`` (ISO 8601, GitHub's ``YYYY-MM-DDTHH:MM:SSZ``)? forksync's own
    runs (``forksync/*``) do not count."""
    rv = {**split_repo(full), "ref": sha}
    async for r in gh.getiter("/repos/{owner}/{repo}/commits/{ref}/check-runs", rv, iterable_key="check_runs"):
        if str(r.get("name", "")).startswith("forksync/"):
            continue
        if (r.get("completed_at") or r.get("started_at") or "") > gate_completed_at:
            return True
    combined = await combined_status(gh, full, sha)
    return any((st.get("updated_at") or "") > gate_completed_at for st in combined.get("statuses") or [])


async def collect_tick(ctx, full: str, *, now: float | None = None, grace_s: int = 3600) -> list[str]:
    """Pick up completed github-actions runs of pending results by listing the workflow's runs
    (the ``workflow_run`` webhook's sender is the bot itself, which the loop guard drops); a
    result still missing after its dispatch for as long as the runner may take
    (:attr:`SuiteConfig.run_limit_s`: ``timeout_s`` per attempt, infrastructure retries included)
    plus ``grace_s`` becomes red (``workflow-failed``): silence is not green."""
    now = time.time() if now is None else now
    pending = {r["request_id"]: r for r in vstore.pending_dispatches(ctx.store, full)}
    if not pending:
        return []
    v = ctx.validation
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
        limit = (suite.run_limit_s if suite else 3600) + grace_s
        if now - row["updated_at"] < limit:
            continue
        d = Dispatch(row["suite"], row["sha"], row["platform"], rid)
        result = missing_result(d, f"no result {int(now - row['updated_at'])} s after the dispatch "
                                   f"(limit {limit} s: the suite's timeout × its attempts + {grace_s} s)", level=row["level"])
        lost_to = await v.record(ctx, full, row["pr"], result, suite, answers=rid)
        if lost_to:         # re-dispatched since the pending rows were read: the re-run is waited for
            notes.append(superseded_note(result, rid, lost_to))
            continue
        notes.append(f"{row['suite']}@{row['platform']} on {row['sha'][:12]}: no result, counted red")
        if row["level"] == "L3":
            # the /forksync l3 request is finished and answered too, or it stays "running" for good
            notes += await answer_l3_result(ctx, full, result, suite)
        if row["pr"]:
            notes += await v.evaluate(ctx, full, row["pr"], tr=tr)
    return notes


#: fork → the monotonic time (s) of its last tick in this process
_LAST_TICK: dict[str, float] = {}


async def tick_tracked(store, make_ctx, *, now: float | None = None, min_interval_s: float = 300.0,
                       monotonic: Callable[[], float] = time.monotonic, **kw) -> list[str]:
    """:func:`tick_all` for every tracked fork (table ``tracked_forks``) but those of a suspended
    installation (:func:`bot.sync.store.paused_forks`), at most once per
    ``min_interval_s`` per fork. ``make_ctx(installation_id)`` gives a handler context (the
    worker's poll loop has one). ``now``: epoch s, for the jobs; the throttle measures with
    ``monotonic`` instead, which NTP never steps back (a wall-clock time of the last tick would
    lie in the future after such a step, and hold every tick until the clock caught up).
    Returns notes."""
    now = time.time() if now is None else now
    out = []
    off = sync_store.suspended(store)
    for r in sync_store.tracked_forks(store):
        if r["installation_id"] in off:     # paused: GitHub refuses the installation's tokens
            continue
        at = monotonic()
        if at - _LAST_TICK.get(r["fork"], float("-inf")) < min_interval_s:
            continue
        _LAST_TICK[r["fork"]] = at
        ctx = await make_ctx(r["installation_id"])
        out += await tick_all(ctx, r["fork"], now=now, **kw)
    return out


async def tick_all(ctx, full: str, *, now: float, nightly_interval_s: int | None = None, l2_interval_s: int | None = None,
                   nightly_deadline_s: int | None = None) -> list[str]:
    """Every scheduled job for one fork, each failure reported as a note (the next tick retries);
    GitHub refusing one because the fork's installation is suspended
    (:func:`bot.github.client.installation_suspended`) records the suspension at ``now`` (epoch s)
    and ends the tick, nothing counted as failing (:func:`bot.sync.upstream.poll_once` resumes it).
    The schedules are the fork's (forksync.yml ``schedules``) unless given here."""
    notes = []
    changed = False
    for name, job in (("collect", lambda: collect_tick(ctx, full)),
                      ("reconcile", lambda: reconcile_tick(ctx, full)),
                      ("l3", lambda: l3_tick(ctx, full)),
                      ("nightly", lambda: nightly_tick(ctx, full, now=now, interval_s=nightly_interval_s,
                                                       deadline_s=nightly_deadline_s)),
                      ("l2", lambda: l2_tick(ctx, full, now=now, interval_s=l2_interval_s))):
        try:
            notes += await job()
            error = None
        except Exception as e:  # noqa: BLE001 - one job's failure must not stop the others
            if installation_suspended(e):
                # an owner suspended the installation (its webhook may have been missed): its
                # forks pause as the webhook would have them; the other jobs would be refused too
                sync_store.set_suspended(ctx.store, ctx.installation_id, True, at=now)
                return [*notes, f"{full}: paused (its installation is suspended)"]
            error = error_text(e, 300)
            notes.append(f"{full}: {name} tick failed: {error}")
        # kept on the fork's status (status issue, /healthz, /api/v1), cleared by the next success
        changed |= sync_store.record_job(ctx.store, full, name, error, now)
    if changed and ctx.sync:
        notes += await refresh_quietly(ctx.sync, ctx, full)
    return notes
