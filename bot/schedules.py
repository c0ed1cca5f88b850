"""Scheduled validation on the fork's trunk: the nightly L1 run (with its silence alarm), periodic
L2 benchmark runs with regression detection, confirmation, bisection, the regression issue and
the back-out PR; and a reconcile pass that validates open PRs the webhooks did not reach.

Pure "what is due" functions (:func:`nightly_due`, :func:`l2_due`, :func:`regression_window`)
and async ticks that take a handler context (``ctx.gh``, ``ctx.store``, ``ctx.services``) and a
fork — the worker's periodic loop calls :func:`tick_all` for every tracked fork.

* **Nightly** (:func:`nightly_tick`): every ``interval_s`` the required L1 suites run on the
  default branch's tip (local: now; github-actions: dispatched). A nightly whose results have not
  *all* arrived ``deadline_s`` after dispatch raises one alarm issue
  (:func:`bot.nightly.missing_nightly`, ``templates/issues/nightly_missing.md.j2``): silence is
  not green. One issue per nightly (its number is stored; an open issue with the same title is
  reused after a crash).
* **L2** (:func:`l2_tick`): every ``interval_s`` the L2 suites run on the trunk tip (local
  backend); points go to :mod:`bot.l2_store` at the tip's first-parent position. For each series
  the newest alerting change point (:func:`bot.l2.alerts`) is investigated once: last-good and
  first-bad are re-measured on this machine and compared (:func:`bot.l2.confirm`); a confirmed
  regression is bisected over the landed commits (:func:`bot.bisect.landed_commits`, merges
  descended into, :func:`bot.bisect.perf_test`), the culprit verified against its parent; an issue
  is filed with the numbers and an SVG plot (committed to the ``forksync-evidence`` branch through
  the Git Data API and linked); when the culprit carries ``Upstream-Commit`` (a sync pick) a
  back-out PR is opened whose commit carries ``Upstream-Reverted: <sha> <reason>``.
"""
from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import tempfile
from pathlib import Path

from bot import l2, l2_store
from bot import store as store_mod
from bot import validation_store as vstore
from bot.handlers.common import split_repo
from bot.nightly import expected_pairs, missing_nightly, render_alarm

NIGHTLY_RUNS = store_mod.table("nightly_runs", {
    "key": str, "repo": str, "sha": str, "dispatched_at": float, "alarm_issue": int,
}, pk="key", indexes=[("repo",)])

L2_RUNS = store_mod.table("l2_runs", {"key": str, "repo": str, "sha": str, "seq": int, "time": float},
                          pk="key", indexes=[("repo",)])

L2_REGRESSIONS = store_mod.table("l2_regressions", {
    "key": str, "repo": str, "series": str, "good": str, "bad": str, "status": str, "culprit": str,
    "issue": int, "backout_pr": int, "time": float,
}, pk="key", indexes=[("repo",)])

EVIDENCE_BRANCH = "forksync-evidence"
BOT_IDENTITY = {"GIT_AUTHOR_NAME": "forksync[bot]", "GIT_AUTHOR_EMAIL": "forksync[bot]@users.noreply.github.com",
                "GIT_COMMITTER_NAME": "forksync[bot]", "GIT_COMMITTER_EMAIL": "forksync[bot]@users.noreply.github.com"}


# ---------------------------------------------------------------------- pure: what is due
def nightly_due(last_dispatched_at: float | None, now: float, interval_s: int = 86_400) -> bool:
    """A nightly is due when none ran yet or ``interval_s`` passed since the last dispatch."""
    return last_dispatched_at is None or now - last_dispatched_at >= interval_s


def l2_due(last_run_at: float | None, tip_measured: bool, now: float, interval_s: int = 86_400) -> bool:
    """An L2 run is due when the trunk tip has no points yet and ``interval_s`` passed (or never ran)."""
    return not tip_measured and (last_run_at is None or now - last_run_at >= interval_s)


def regression_window(points: list, change: l2.ChangePoint) -> tuple[str, str]:
    """(last-good sha, first-bad sha) around an alerting change point of a series."""
    return points[change.index - 1].sha, points[change.index].sha


def alarm_title(sha: str) -> str:
    return f"forksync: nightly L1 results missing for {sha[:12]}"


# ---------------------------------------------------------------------- helpers
def _ensure(store) -> None:
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
    if expected and nightly_due(last["dispatched_at"] if last else None, now, interval_s):
        sha = await base_tip(ctx.gh, full, tr.default_branch)
        with ctx.store.lock:
            ctx.store.db[NIGHTLY_RUNS.name].upsert({"key": f"{full}@{sha}@{int(now)}", "repo": full, "sha": sha,
                                                    "dispatched_at": now, "alarm_issue": 0}, pk="key")
        by_name = {s.name: s for s in tr.suites}
        for suite, plat in expected:
            notes.append("nightly " + await v.run_suite(ctx, full, 0, sha, by_name[suite], plat, tr))
    return notes


# ---------------------------------------------------------------------- L2
async def l2_tick(ctx, full: str, *, now: float, interval_s: int = 86_400) -> list[str]:
    """Measure the trunk tip when due, then investigate new alerting regressions. Returns notes."""
    from bot.gate_inputs import base_tip
    from bot.validation_service import validation_of

    _ensure(ctx.store)
    v = validation_of(ctx)
    tr = await v.trusted(ctx, full)
    suites = [s for s in tr.suites if s.level == "L2"]
    if not suites:
        return []
    tip = await base_tip(ctx.gh, full, tr.default_branch)
    mirror = await v.local.fetch(full, tip)
    runs = _rows(ctx.store, L2_RUNS.name, "repo = ?", [full], "time desc")
    measured = any(r["sha"] == tip for r in runs)
    notes = []
    if l2_due(runs[0]["time"] if runs else None, measured, now, interval_s):
        seq = int(_git(mirror, "rev-list", "--count", "--first-parent", tip))
        for s in suites:
            for plat in s.platforms:
                result = await v.local.run(full, tip, s, plat, tr.text)
                n = l2_store.record_result(ctx.store, result, seq, time=int(now))
                notes.append(f"L2 {s.name}@{plat} on {tip[:12]}: {result.verdict}, {n} point(s)")
        with ctx.store.lock:
            ctx.store.db[L2_RUNS.name].upsert({"key": f"{full}@{tip}", "repo": full, "sha": tip, "seq": seq,
                                               "time": now}, pk="key")
    notes += await investigate(ctx, v, full, tr, suites, mirror, now=now)
    return notes


async def investigate(ctx, v, full: str, tr, suites, mirror: Path, *, now: float) -> list[str]:
    """Every series' newest alerting regression, once: confirm → bisect → issue → back-out PR."""
    notes = []
    for key in l2_store.series_keys(ctx.store):
        benchmark, impl, metric, shape, dtype, platform, unit = key
        pts = l2_store.load_series(ctx.store, benchmark, impl, metric, shape, dtype, platform)
        sk = l2_store.series_key(benchmark, impl, shape, dtype, platform, unit)
        alerts = l2.alerts([p.value for p in pts], sk.higher_is_better)
        if not alerts:
            continue
        cp = alerts[-1]
        good, bad = regression_window(pts, cp)
        rkey = f"{full}:{sk}:{bad}"
        if _rows(ctx.store, L2_REGRESSIONS.name, "key = ?", [rkey]):
            continue
        suite = next((s for s in suites if s.platforms and platform in s.platforms), suites[0])

        def measure(sha: str) -> list[float]:
            res = v.local.run_sync(mirror, sha, suite, platform, tr.text)
            for b in res.benchmarks:
                if (b.benchmark, b.impl, b.metric, b.shape, b.dtype) == (benchmark, impl, metric, shape, dtype) and b.ok:
                    return l2_store._repeats_in_unit(b) or [float(b.value)]     # noqa: SLF001
            return []

        ev, status = await asyncio.to_thread(_confirm_and_bisect, mirror, sk, pts, cp, good, bad, measure, suite)
        row = {"key": rkey, "repo": full, "series": str(sk), "good": good, "bad": bad, "status": status,
               "culprit": (ev.bisect.culprit or "") if ev else "", "issue": 0, "backout_pr": 0, "time": now}
        if ev is not None:
            ev = await _attach_plot(ctx.gh, full, ev, rkey)
            from bot.bisect_report import render_issue
            culprit = ev.bisect.culprit
            title = (f"forksync: L2 regression {cp.rel_shift:+.1%} on {sk}"
                     + (f" — culprit {culprit[:12]}" if culprit and ev.bisect.verified else ""))
            row["issue"] = await issue_once(ctx.gh, full, title, render_issue(ev))
            notes.append(f"L2 regression on {sk}: issue #{row['issue']}")
            if culprit and ev.bisect.verified and ev.upstream_sha:
                row["backout_pr"] = await open_backout(ctx, v, full, tr.default_branch, mirror, ev, row["issue"])
                notes.append(f"back-out PR #{row['backout_pr']} for {culprit[:12]}")
        else:
            notes.append(f"L2 change on {sk} at {bad[:12]}: {status}")
        with ctx.store.lock:
            ctx.store.db[L2_REGRESSIONS.name].upsert(row, pk="key")
    return notes


def _git(repo: Path, *args: str, env: dict | None = None, cwd: str | None = None) -> str:
    p = subprocess.run(["git", *(["-C", cwd] if cwd else [f"--git-dir={repo}"]), *args], capture_output=True,
                       text=True, env={**os.environ, **(env or {})})
    if p.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:2])} failed: {p.stderr.strip()[:300]}")
    return p.stdout.strip()


def _confirm_and_bisect(mirror: Path, sk, pts, cp, good: str, bad: str, measure, suite):
    """Blocking: confirmation re-run, then bisection over the landed commits. ``(Evidence|None, status)``."""
    from bot.bisect import bisect, landed_commits, perf_test
    from bot.bisect_report import Evidence, upstream_sha_of

    good_s, bad_s = measure(good), measure(bad)
    if not good_s or not bad_s:
        return None, "not confirmed: no measurement on last-good or first-bad"
    conf = l2.confirm(good_s, bad_s, sk.higher_is_better, sigma=cp.sigma)
    if not conf.confirmed:
        return None, f"not confirmed: {conf.reason}"
    cands = landed_commits(str(mirror), good, bad)
    result = bisect(cands, good, perf_test(measure, good_s, bad_s, sk.higher_is_better),
                    parent_of=lambda s: _git(mirror, "rev-parse", f"{s}^"))
    subject, up = "", None
    if result.culprit:
        msg = _git(mirror, "log", "-1", "--format=%B", result.culprit)
        subject, up = msg.splitlines()[0] if msg else "", upstream_sha_of(msg)
    ev = Evidence(title=f"L2 regression on {sk}", key=sk, values=tuple(p.value for p in pts),
                  shas=tuple(p.sha for p in pts), change=cp, confirmation=conf, bisect=result,
                  culprit_subject=subject, upstream_sha=up, command=suite.command)
    return ev, "bisected" if result.culprit else "suspects"


async def _attach_plot(gh, full: str, ev, key: str):
    """Commit the series plot (SVG) to the ``forksync-evidence`` branch (Git Data API) and point
    the evidence at it. Returns the evidence with ``plot_path`` set."""
    import hashlib
    from dataclasses import replace

    from bot.bisect_report import plot_svg

    rv = split_repo(full)
    svg = plot_svg(ev.values, ev.change.index if ev.change else None, ev.title, ev.key.unit if ev.key else "")
    path = f"l2/{hashlib.sha1(key.encode()).hexdigest()[:12]}.svg"
    parent = None
    try:
        ref = await gh.getitem("/repos/{owner}/{repo}/git/ref/{ref}", {**rv, "ref": f"heads/{EVIDENCE_BRANCH}"})
        parent = ref["object"]["sha"]
    except Exception:  # noqa: BLE001 - no evidence branch yet
        parent = None
    blob = await gh.post("/repos/{owner}/{repo}/git/blobs", rv,
                         data={"content": base64.b64encode(svg.encode()).decode(), "encoding": "base64"})
    tree_body = {"tree": [{"path": path, "mode": "100644", "type": "blob", "sha": blob["sha"]}]}
    if parent:
        pc = await gh.getitem("/repos/{owner}/{repo}/git/commits/{commit_sha}", {**rv, "commit_sha": parent})
        tree_body["base_tree"] = pc["tree"]["sha"]
    tree = await gh.post("/repos/{owner}/{repo}/git/trees", rv, data=tree_body)
    commit = await gh.post("/repos/{owner}/{repo}/git/commits", rv, data={
        "message": f"Evidence plot for {ev.title}", "tree": tree["sha"], "parents": [parent] if parent else []})
    if parent:
        await gh.patch("/repos/{owner}/{repo}/git/refs/{ref}", {**rv, "ref": f"heads/{EVIDENCE_BRANCH}"},
                       data={"sha": commit["sha"]})
    else:
        await gh.post("/repos/{owner}/{repo}/git/refs", rv, data={"ref": f"refs/heads/{EVIDENCE_BRANCH}",
                                                                  "sha": commit["sha"]})
    repo = await gh.getitem("/repos/{owner}/{repo}", rv)
    return replace(ev, plot_path=f"{repo['html_url']}/blob/{commit['sha']}/{path}?raw=true")


async def open_backout(ctx, v, full: str, default_branch: str, mirror: Path, ev, issue: int) -> int:
    """Revert the culprit on top of trunk in a worktree of the mirror, commit with
    :func:`bot.bisect_report.backout_message` (``Upstream-Reverted: …``), push
    ``forksync/backout-<sha12>`` and open the PR (``templates/prs/backout.md.j2``). Returns its number."""
    from bot.bisect_report import backout_message, render_backout_pr
    from bot.handlers.sync_prs import open_or_update_pr

    culprit = ev.bisect.culprit
    branch = f"forksync/backout-{culprit[:12]}"
    tip = await v.local.fetch(full) and _git(mirror, "rev-parse", f"refs/heads/{default_branch}")
    url, secrets = await v._remote_url(full)     # noqa: SLF001

    def build() -> None:
        with tempfile.TemporaryDirectory(prefix="forksync-backout-") as tmp:
            wt = str(Path(tmp) / "wt")
            _git(mirror, "worktree", "add", "--detach", "--quiet", wt, tip)
            try:
                p = subprocess.run(["git", "-C", wt, "revert", "--no-commit", culprit], capture_output=True, text=True,
                                   env={**os.environ, **BOT_IDENTITY})
                if p.returncode != 0:
                    raise RuntimeError(f"git revert of {culprit[:12]} does not apply on trunk: {p.stderr.strip()[:300]}")
                _git(mirror, "commit", "-q", "-m", backout_message(ev), cwd=wt, env=BOT_IDENTITY)
                p = subprocess.run(["git", "-C", wt, "push", "-q", url, f"HEAD:refs/heads/{branch}"],
                                   capture_output=True, text=True)
                if p.returncode != 0:
                    err = p.stderr
                    for s in secrets:
                        err = err.replace(s, "***")
                    raise RuntimeError(f"push of {branch} failed: {err.strip()[:300]}")
            finally:
                _git(mirror, "worktree", "remove", "--force", wt)

    await asyncio.to_thread(build)
    title = f'Back out "{ev.culprit_subject or culprit[:12]}" (L2 regression)'
    pr, _ = await open_or_update_pr(ctx.gh, full, branch=branch, base=default_branch, title=title,
                                    body=render_backout_pr(ev, issue), labels=[])
    return int(pr["number"])


# ---------------------------------------------------------------------- reconcile + all ticks
async def reconcile_tick(ctx, full: str) -> list[str]:
    """Validate open PRs into the default branch whose head has no forksync gate check yet (the
    bot's own PRs and updates: their webhooks are dropped by the loop guard)."""
    from bot.gate import GATE_CHECK
    from bot.validation_service import validation_of

    v = validation_of(ctx)
    rv = split_repo(full)
    repo = await ctx.gh.getitem("/repos/{owner}/{repo}", rv)
    notes = []
    async for pr in ctx.gh.getiter("/repos/{owner}/{repo}/pulls{?state,base}",
                                   {**rv, "state": "open", "base": repo.get("default_branch") or "main"}):
        runs = [r async for r in ctx.gh.getiter("/repos/{owner}/{repo}/commits/{ref}/check-runs{?check_name}",
                                                 {**rv, "ref": pr["head"]["sha"], "check_name": GATE_CHECK},
                                                 iterable_key="check_runs")]
        if not runs:
            notes += await v.validate_pr(ctx, full, int(pr["number"]))
    return notes


async def collect_tick(ctx, full: str) -> list[str]:
    """Pick up completed github-actions runs of pending results by listing the workflow's runs
    (the ``workflow_run`` webhook's sender is the bot itself, which the loop guard drops)."""
    from gpu_runner.github_actions import WORKFLOW_FILE, parse_run_name
    from bot.validation_service import downloader_for, validation_of

    with ctx.store.lock:
        pending = {r["request_id"] for r in ctx.store.db[vstore.SUITE_RESULTS.name].rows_where(
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
    return notes


async def tick_all(ctx, full: str, *, now: float, nightly_interval_s: int = 86_400, l2_interval_s: int = 86_400,
                   nightly_deadline_s: int = 6 * 3600) -> list[str]:
    """Every scheduled job for one fork, each failure reported as a note (the next tick retries)."""
    notes = []
    for name, job in (("collect", lambda: collect_tick(ctx, full)),
                      ("reconcile", lambda: reconcile_tick(ctx, full)),
                      ("nightly", lambda: nightly_tick(ctx, full, now=now, interval_s=nightly_interval_s,
                                                       deadline_s=nightly_deadline_s)),
                      ("l2", lambda: l2_tick(ctx, full, now=now, interval_s=l2_interval_s))):
        try:
            notes += await job()
        except Exception as e:  # noqa: BLE001 - one job's failure must not stop the others
            notes.append(f"{full}: {name} tick failed: {type(e).__name__}: {str(e)[:300]}")
    return notes
