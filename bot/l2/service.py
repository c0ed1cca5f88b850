"""L2 on the fork's trunk as a scheduled service: measure, detect, confirm,
bisect, file the regression issue, open the back-out PR.

:func:`l2_tick` runs the L2 suites (benchmark JSON) on the tip of the branch forksync syncs
(``fork.ref``: the trunk sync PRs land on) when due (local
backend) and stores the points in :mod:`bot.l2.store` at the tip's first-parent position. For
each series the newest alerting change point (:func:`bot.l2.detection.alerts`: shifts ≥ max(2 %, 3σ)) is
investigated once (table ``l2_regressions``): last-good and first-bad are re-measured on this
machine and compared (:func:`bot.l2.detection.confirm`, Mann-Whitney U); a confirmed regression is bisected
over the commits that landed between them (:func:`bot.git.bisect.landed_commits` descends into
merges, so the culprit is one upstream commit; :func:`bot.git.bisect.perf_test`), the culprit verified
against its parent; an issue is filed with the numbers and an SVG plot (committed to the
``forksync-evidence`` branch through the Git Data API and linked); when the culprit carries
``Upstream-Commit`` (a sync pick) a back-out PR is opened whose commit carries
``Upstream-Reverted: <sha> <reason>`` — once it lands the ledger shows REVERTED; a revert that
does not apply on trunk opens none, and the issue says so. A range trunk's history no longer
holds (force-pushed between the two points) is recorded ``not-bisected``, never retried.
"""
from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import os
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

from bot.agents.redact import scrub
from bot.config.schedules import Schedule, as_schedule
from bot.git.bisect import BisectError, BisectResult, GitDag, bisect, landed_commits, perf_test, reverts_in
from bot.github.common import base_tip, issue_current, split_repo
from bot.github.fork_config import default_branch
from bot.l2 import detection as l2
from bot.l2 import store as l2_store
from bot.l2.report import (
    Evidence,
    PlotUnavailable,
    backout_message,
    plot_svg,
    render_backout_pr,
    render_issue,
    upstream_commit_url,
    upstream_sha_of,
)
from bot.l2.store import RegressionStatus
from bot.model import short_branch, sync_branch
from bot.sync import landing
from bot.sync import store as sync_store
from bot.sync.prs import open_or_update_pr, unit_base
from bot.sync.store import BACKOUT

EVIDENCE_BRANCH = "forksync-evidence"
BOT_IDENTITY = {"GIT_AUTHOR_NAME": "forksync[bot]", "GIT_AUTHOR_EMAIL": "forksync[bot]@users.noreply.github.com",
                "GIT_COMMITTER_NAME": "forksync[bot]", "GIT_COMMITTER_EMAIL": "forksync[bot]@users.noreply.github.com"}

log = logging.getLogger(__name__)


def l2_due(last_run_at: float | None, tip_measured: bool, now: float, interval_s: int | Schedule = 86_400) -> bool:
    """An L2 run is due when the trunk tip has no points yet and its schedule (seconds, or a
    :class:`Schedule`: interval or cron) has come round since the last run (or it never ran)."""
    return not tip_measured and as_schedule(interval_s).due(last_run_at, now)


def regression_window(points: list, change: l2.ChangePoint) -> tuple[str, str]:
    """(last-good sha, first-bad sha) around an alerting change point of a series."""
    return points[change.index - 1].sha, points[change.index].sha


async def l2_tick(ctx, full: str, *, now: float, interval_s: int | Schedule | None = None) -> list[str]:
    """Measure the trunk tip when due (``interval_s`` None: the fork's ``schedules.l2``), then
    investigate new alerting regressions. Returns notes."""
    l2_store.ensure(ctx.store)
    v = ctx.validation
    tr = await v.trusted(ctx, full)
    suites = [s for s in tr.suites if s.level == "L2"]
    if not suites:
        return []
    tip = await base_tip(ctx.gh, full, tr.base)
    mirror = await v.local.fetch(full, tip)
    runs = l2_store.runs(ctx.store, full)
    measured = any(r["sha"] == tip for r in runs)
    notes = []
    if l2_due(runs[0]["time"] if runs else None, measured, now, tr.cfg.schedules.l2 if interval_s is None else interval_s):
        seq = int(_git(mirror, "rev-list", "--count", "--first-parent", tip))
        for s in suites:
            for plat in s.platforms:
                result = await v.local.run(full, tip, s, plat, tr.text)
                n = l2_store.record_result(ctx.store, full, result, seq, time=int(now))
                notes.append(f"L2 {s.name}@{plat} on {tip[:12]}: {result.verdict}, {n} point(s)")
        l2_store.record_run(ctx.store, full, tip, seq, now)
    notes += await investigate(ctx, v, full, tr, suites, mirror, now=now)
    return notes


async def investigate(ctx, v, full: str, tr, suites, mirror: Path, *, now: float) -> list[str]:
    """Every series' newest alerting regression, once: confirm → bisect → issue → back-out PR."""
    notes = []
    for key in l2_store.series_keys(ctx.store, full):
        benchmark, impl, metric, shape, dtype, platform, unit = key
        pts = l2_store.load_series(ctx.store, full, benchmark, impl, metric, shape, dtype, platform)
        sk = l2_store.series_key(benchmark, impl, shape, dtype, platform, unit)
        alerts = l2.alerts([p.value for p in pts], sk.higher_is_better)
        if not alerts:
            continue
        cp = alerts[-1]
        good, bad = regression_window(pts, cp)
        rkey = f"{full}:{sk}:{bad}"
        if l2_store.regression_known(ctx.store, rkey):
            continue
        candidates = [s for s in suites if platform in s.platforms] or list(suites)
        chosen: list = []          # the suite that produces this series, found on the first measurement

        def measure(sha: str, _key=(benchmark, impl, metric, shape, dtype), _plat=platform) -> list[float]:
            for s in (chosen or candidates):
                res = v.local.run_sync(mirror, sha, s, _plat, tr.text)
                for b in res.benchmarks:
                    if (b.benchmark, b.impl, b.metric, b.shape, b.dtype) == _key and b.ok:
                        chosen[:] = [s]
                        return l2_store._repeats_in_unit(b) or [float(b.value)]     # noqa: SLF001
            return []

        ev, status = await asyncio.to_thread(_confirm_and_bisect, mirror, sk, pts, cp, good, bad, measure,
                                             lambda: (chosen or candidates)[0], tr.cfg.upstream.url)
        row = {"key": rkey, "repo": full, "series": str(sk), "good": good, "bad": bad, "status": status.text,
               "status_code": status.code, "culprit": (ev.bisect.culprit or "") if ev else "", "issue": 0,
               "backout_pr": 0, "time": now}
        if ev is not None:
            ev = await _attach_plot(ctx.gh, full, ev, rkey)
            culprit = ev.bisect.culprit
            title = (f"forksync: L2 regression {cp.rel_shift:+.1%} on {sk}"
                     + (f" — culprit {culprit[:12]}" if culprit and ev.bisect.verified else ""))
            row["issue"] = await file_regression(ctx.gh, full, title, ev)
            notes.append(f"L2 regression on {sk}: issue #{row['issue']}"
                         + (f" ({status.text})" if status.code == l2_store.NOT_BISECTED else ""))
            if culprit and ev.bisect.verified and ev.upstream_sha:
                try:
                    row["backout_pr"] = await open_backout(ctx, v, full, tr.base, mirror, ev, row["issue"])
                    notes.append(f"back-out PR #{row['backout_pr']} for {culprit[:12]}")
                    # recorded before the issue names it: an edit GitHub refuses must not lose the
                    # open PR, or the next tick would bisect the regression again and open another
                    l2_store.save_regression(ctx.store, row)
                    try:
                        # the issue promised one: it names it now (the PR links the issue as evidence)
                        await file_regression(ctx.gh, full, title, replace(ev, backout_pr=row["backout_pr"]))
                    except Exception as e:  # noqa: BLE001 - the other series are still investigated
                        log.warning("%s: issue #%s could not be edited to name back-out PR #%s: %s", full,
                                    row["issue"], row["backout_pr"], scrub(str(e))[:300])
                        notes.append(f"issue #{row['issue']} not edited to name back-out PR #{row['backout_pr']}: "
                                     f"{type(e).__name__}")
                except RevertConflict as e:
                    # the issue promised a back-out: it says why none comes, and the regression is
                    # recorded, or every tick would bisect it again to fail the same way
                    await file_regression(ctx.gh, full, title, replace(ev, backout_error=str(e)))
                    notes.append(f"back-out of {culprit[:12]} not opened: {e}")
        else:
            notes.append(f"L2 change on {sk} at {bad[:12]}: {status.text}")
        l2_store.save_regression(ctx.store, row)
    return notes


async def file_regression(gh, full: str, title: str, ev: Evidence) -> int:
    """The regression issue titled ``title`` showing evidence ``ev`` (:func:`render_issue`):
    opened, or — one of that title still open (the same regression investigated again, or its
    back-out refused) — its evidence section rewritten in place, so nobody reads the old numbers
    and what people wrote there stays (:func:`bot.github.common.issue_current`). Returns its number."""
    number, _ = await issue_current(gh, full, title, "regression", render_issue(ev))
    return number


def _git(repo: Path, *args: str, env: dict | None = None, cwd: str | None = None) -> str:
    p = subprocess.run(["git", *(["-C", cwd] if cwd else [f"--git-dir={repo}"]), *args], capture_output=True,
                       text=True, env={**os.environ, **(env or {})})
    if p.returncode != 0:
        # scrubbed whole, then cut: the text is stored and shown on the regression issue
        raise RuntimeError(scrub(f"git {' '.join(args[:2])} failed: {p.stderr.strip()}")[:360])
    return p.stdout.strip()


class RevertConflict(RuntimeError):
    """The culprit's ``git revert`` does not apply on trunk (later commits changed its lines): no
    back-out PR until a person reverts it by hand; the message quotes git."""


def _confirm_and_bisect(mirror: Path, sk, pts, cp, good: str, bad: str, measure, suite_of, upstream_repo: str = ""):
    """Blocking: confirmation re-run, then bisection over the landed commits.
    ``(Evidence | None, RegressionStatus)``: evidence for every confirmed regression — one that
    could not be bisected (history rewritten between the two points, no landed range) carries a
    bisection with no steps whose note says why. ``upstream_repo``: the upstream's URL, for the culprit's upstream commit link."""
    good_s, bad_s = measure(good), measure(bad)
    if not good_s or not bad_s:
        return None, RegressionStatus(l2_store.NOT_CONFIRMED, "not confirmed: no measurement on last-good or first-bad")
    conf = l2.confirm(good_s, bad_s, sk.higher_is_better, sigma=cp.sigma)
    if not conf.confirmed:
        return None, RegressionStatus(l2_store.NOT_CONFIRMED, f"not confirmed: {conf.reason}")
    why = ""
    if subprocess.run(["git", f"--git-dir={mirror}", "merge-base", "--is-ancestor", good, bad],
                      capture_output=True).returncode != 0:
        # trunk was force-pushed between the two measurements: there is no landed range to search
        why = (f"trunk's history was rewritten between last good {good[:12]} and first bad {bad[:12]} "
               f"({good[:12]} is no longer an ancestor of {bad[:12]})")
    else:
        try:
            cands = landed_commits(str(mirror), good, bad)
        except BisectError as e:
            why = str(e)
    if why:
        # confirmed all the same: filed (the issue says why it was not bisected), never silent
        result = BisectResult(good, bad, (), None, False, (), (), 0, why)
    else:
        result = bisect(cands, good, perf_test(measure, good_s, bad_s, sk.higher_is_better),
                        parent_of=lambda s: _git(mirror, "rev-parse", f"{s}^"), reverts=reverts_in(str(mirror)),
                        dag=GitDag(str(mirror)))
    subject, up, author = "", None, ""
    if result.culprit:
        msg = _git(mirror, "log", "-1", "--format=%B", result.culprit)
        subject, up = msg.splitlines()[0] if msg else "", upstream_sha_of(msg)
        author = _git(mirror, "log", "-1", "--format=%an", result.culprit)
    ev = Evidence(title=f"L2 regression on {sk}", key=sk, values=tuple(p.value for p in pts),
                  shas=tuple(p.sha for p in pts), change=cp, confirmation=conf, bisect=result,
                  culprit_subject=subject, upstream_sha=up, command=suite_of().command, culprit_author=author,
                  upstream_url=upstream_commit_url(upstream_repo, up))
    if result.culprit:
        return ev, RegressionStatus(l2_store.BISECTED, "bisected")
    if result.suspects:
        return ev, RegressionStatus(l2_store.SUSPECTS, "suspects")
    return ev, RegressionStatus(l2_store.NOT_BISECTED, f"confirmed, not bisected: {result.note}")


async def _attach_plot(gh, full: str, ev, key: str):
    """Commit the series plot (SVG) to the ``forksync-evidence`` branch (Git Data API) and point
    the evidence at it. Returns the evidence with ``plot_path`` set."""
    rv = split_repo(full)
    try:
        svg = await asyncio.to_thread(plot_svg, ev.values, ev.change.index if ev.change else None, ev.title,
                                      ev.key.unit if ev.key else "")
    except PlotUnavailable as e:
        log.warning("regression %s: no plot attached: %s", key, e)    # the issue carries the numbers without it
        return ev
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


async def open_backout(ctx, v, full: str, trunk: str, mirror: Path, ev, issue: int) -> int:
    """Revert the culprit on top of ``trunk`` (the branch forksync syncs, which the gate acts on)
    in a worktree of the mirror, commit with
    :func:`bot.l2.report.backout_message` (``Upstream-Reverted: …``), push
    ``forksync/backout-<sha12>`` and open the PR (``templates/prs/backout.md.j2``). Returns its number.
    The branch is named per fork ref as a unit's sync branch is (:func:`bot.model.sync_branch`,
    the repository's default branch read from GitHub): ``trunk`` other than the default branch gets
    ``forksync/<trunk>/backout-<sha12>``, so two fork refs that took the same culprit (a release
    branch cut after it landed) each get their own back-out, never the other's open PR.
    A back-out of the culprit into ``trunk`` still in flight is found by its row (unit and base),
    whatever name it was opened under (before names carried the fork ref, or while ``trunk`` was
    the default branch); a name another trunk's back-out holds is never reused.

    The branch is recorded in ``sync_branches`` (kind and state ``backout``) as soon as it is
    pushed, before its PR exists: the record, not the PR's author, is what makes the PR forksync's
    own when the bot's login is unknown (token mode without one: :func:`bot.sync.prs.not_forksyncs`).
    A back-out is no sync unit: the state keeps it out of the open units, their cap and the
    status issue. A back-out of the same culprit that ended on this branch name (its PR merged or
    closed: :func:`bot.sync.landing.backout_ended`) is history: this one starts a fresh row with
    that PR among the earlier ones, never taken for its own. One whose PR is still open answers
    for this regression too: its number is returned and nothing is pushed (another series the
    same culprit slowed)."""
    culprit = ev.bisect.culprit
    backout_id = f"backout-{culprit[:12]}"
    rows = [r for r in sync_store.all_branches(ctx.store, full) if r.get("unit_id") == backout_id]
    # this trunk's back-out of the culprit still in flight answers under whatever name it was
    # opened (before names carried the fork ref, or while this trunk was the default branch)
    # (a row written before back-outs recorded their base was opened into the trunk forksync syncs)
    mine = [r for r in rows if not sync_store.ended(r) and unit_base(r, trunk) == trunk]
    if mine:
        branch = mine[0]["branch"]
    else:
        branch = sync_branch(backout_id, trunk, default=await default_branch(ctx.gh, full))
        if any(r["branch"] == branch and not sync_store.ended(r) and unit_base(r, trunk) != trunk for r in rows):
            # another fork ref's back-out is in flight under this name (the default branch moved
            # since it was opened): never answer with its PR, take this trunk's own name
            branch = f"forksync/{short_branch(trunk)}/{backout_id}"
    prior = sync_store.branch_row(ctx.store, full, branch)
    if prior is not None and not sync_store.ended(prior) and int(prior.get("pr") or 0):
        # one upstream commit usually slows several kernels: each series bisects to it, and the
        # back-out still open for it answers them all (a new revert pushed over it is refused)
        pr = await ctx.gh.getitem("/repos/{owner}/{repo}/pulls/{number}", {**split_repo(full), "number": int(prior["pr"])})
        if pr.get("state") == "open":
            return int(prior["pr"])
        # closed or merged, and that event never handled (a lost delivery): end it as it would
        # have, or the old revert left on the branch refuses this one's push on every pass
        await landing.backout_ended(ctx, full, pr, prior)
        prior = sync_store.branch_row(ctx.store, full, branch)
    tip = await v.local.fetch(full) and _git(mirror, "rev-parse", f"refs/heads/{trunk}")
    url, secrets = await v._remote_url(full)     # noqa: SLF001
    pushed: list[str] = []

    def build() -> None:
        with tempfile.TemporaryDirectory(prefix="forksync-backout-") as tmp:
            wt = str(Path(tmp) / "wt")
            _git(mirror, "worktree", "add", "--detach", "--quiet", wt, tip)
            try:
                p = subprocess.run(["git", "-C", wt, "revert", "--no-commit", culprit], capture_output=True, text=True,
                                   env={**os.environ, **BOT_IDENTITY})
                if p.returncode != 0:
                    raise RevertConflict(f"git revert of {culprit[:12]} does not apply on trunk: "
                                         f"{scrub(p.stderr).strip().splitlines()[0][:300] if p.stderr.strip() else ''}")
                _git(mirror, "commit", "-q", "-m", backout_message(ev), cwd=wt, env=BOT_IDENTITY)
                p = subprocess.run(["git", "-C", wt, "push", "-q", url, f"HEAD:refs/heads/{branch}"],
                                   capture_output=True, text=True)
                if p.returncode != 0:
                    err = p.stderr
                    for s in secrets:
                        err = err.replace(s, "***")
                    raise RuntimeError(f"push of {branch} failed: {scrub(err).strip()[:300]}")
                pushed.append(_git(mirror, "rev-parse", "HEAD", cwd=wt))
            finally:
                _git(mirror, "worktree", "remove", "--force", wt)

    await asyncio.to_thread(build)
    live = None if sync_store.ended(prior) else prior
    row = {"repo": full, "branch": branch, "unit_id": backout_id, "kind": BACKOUT,
           "pushed_tip": pushed[0], "verified_tip": "", "pr": int((live or {}).get("pr") or 0), "state": BACKOUT,
           "shas_json": "[]", "base_sha": tip, "base": trunk, "conflict_sha": "",
           "earlier_prs": json.dumps(sync_store.earlier_prs(prior))}
    sync_store.save_branch(ctx.store, **row)
    title = f'Back out "{ev.culprit_subject or culprit[:12]}" (L2 regression)'
    pr, _ = await open_or_update_pr(ctx.gh, full, branch=branch, base=trunk, title=title,
                                    body=render_backout_pr(ev, issue), labels=[])
    sync_store.save_branch(ctx.store, **{**row, "pr": int(pr["number"])})
    return int(pr["number"])
