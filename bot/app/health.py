"""What ``GET /healthz`` answers (pure): healthy only when deliveries are really being processed.

:func:`problems` lists what is wrong; an empty list is healthy (200), anything else 503 — the
Dockerfile's ``HEALTHCHECK`` and any load balancer rely on that status. Rules:

=====================  ============================================================================
rule                   unhealthy when
=====================  ============================================================================
deliveries stored      the webhook intake's store refused the newest delivery it was given (full
                       volume, read-only or failing disk: each is answered 503 and lost unless
                       redelivered); storing one again clears it, and so does a write of the
                       intake's own, tried by ``/healthz`` at most every ``PROBE_EVERY_S`` (10 s)
worker alive           a worker is expected (``forksync serve --workers N>0``) and no worker has
                       beaten its heartbeat for ``heartbeat_stale_s`` (a worker that crashes at
                       start never beats: a crash loop shows here); while the store cannot be
                       written the heartbeat is said to be unknown instead (its write is refused
                       too: the worker may well run)
worker restarts        ``forksync serve`` restarted its workers ``max_restarts`` times or more in
                       the last ``restart_window_s``
queue moving           a delivery has been due (queued, or failed with its retry time reached) for
                       longer than ``stuck_after_s`` without being claimed
no hung deliveries     a delivery's last attempt ran past the delivery time limit
                       (``FORKSYNC_DELIVERY_TIMEOUT_S``) and was cancelled, and the delivery has not
                       succeeded since (the worker would otherwise renew a hung handler's lease for
                       ever); a retry that succeeds clears it, one that ends dead is a dead letter
no dead letters        a delivery is dead-lettered: a person must look (``forksync queue --state
                       dead``, then ``--retry ID``, or ``--dismiss ID`` for one that can never
                       succeed: a dismissed dead letter is no alarm)
scheduled jobs         a fork's scheduled job (poll, reconcile, collect, l3, nightly, l2) failed on its
                       last ``job_failures`` ticks in a row (one failure shows on the status issue)
=====================  ============================================================================

:func:`warnings` lists what is degraded while deliveries are still processed: said in the answer
(``warnings``), never turning it 503 — a load balancer or ``HEALTHCHECK`` would then take away
the webhook intake, which works. Three rules: a live worker that does not know the bot's own
login (token mode, ``GET /user`` unanswered; asked again with backoff, and the warning goes once
it is learnt); a fork paused because an owner suspended its installation (GitHub refuses the
installation's tokens; its polls and scheduled jobs wait, and resume with a catch-up sync when the
suspension is lifted; recorded from GitHub's refusal as well when the webhook was missed) — an owner's decision, not a fault to page anyone for.
A third: a fork whose syncing is degraded — a unit blocked because GitHub refused its push, PR or
merge, or because one of its picks failed (no unit vanishes unseen; the other units go on), or a
sync PR whose gate waits on a required check never reported on its head
(``gate.unreported_after_s``: a workflow filtered out by ``paths:``, disabled, or a renamed check),
or open units held because upstream's branch moved back past their commits (:mod:`bot.sync.rewind`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True)
class HealthPolicy:
    """Thresholds of :func:`problems`, in seconds and counts."""

    heartbeat_stale_s: float = 30.0
    stuck_after_s: float = 300.0
    max_restarts: int = 3
    restart_window_s: float = 300.0
    job_failures: int = 2


class Problem(NamedTuple):
    """One of :func:`judge`'s problems: the fork it names (``""``: the App as a whole) and its line.
    The dashboard shows a fork's problem only to a reader who may read that fork."""

    fork: str
    text: str


def problems(now: float, **facts) -> list[str]:
    """Why the app is unhealthy at ``now`` (epoch s), one line each; empty when healthy. ``facts``:
    those of :func:`judge`."""
    return [p.text for p in judge(now, **facts)]


def judge(now: float, *, counts: dict[str, int], oldest_due_at: float | None, last_beat_at: float | None,
          expect_worker: bool, recent_restarts: int = 0, policy: HealthPolicy = HealthPolicy(),
          failing_jobs: list[dict] = (), timed_out: list[dict] = (),
          store_refused: dict | None = None) -> list[Problem]:
    """Why the app is unhealthy at ``now`` (epoch s), each with the fork it names; empty when
    healthy. ``counts``: deliveries per state; ``oldest_due_at``: since when the longest-due delivery waits (None: nothing due);
    ``last_beat_at``: newest worker heartbeat (None: never); ``recent_restarts``: worker restarts
    within ``policy.restart_window_s``; ``failing_jobs``: scheduled jobs failing now
    (``[{"repo", "job", "error", "count"}]``, :func:`bot.sync.store.failing_jobs`; ``repo`` ``""``:
    the App's own, :func:`bot.sync.store.failing_app_jobs`); ``timed_out``:
    deliveries whose last attempt was stopped at the time limit (``[{"id", "event", "repo", "error"}]``,
    :func:`bot.app.queue.timed_out`); ``store_refused``: deliveries the intake could not store since
    it last stored one (``{"since", "at", "count", "error"}``, epoch s;
    :meth:`bot.app.web.GroupCommitter.refused`; ``count`` 0: none refused yet, a write of the
    intake's own was), None when the newest was stored."""
    out: list[Problem] = []
    if store_refused and not store_refused["count"]:
        # found by a write of /healthz's own before any delivery came
        out.append(Problem("", f"the store cannot be written: {store_refused['error']}; the next delivery will be "
                               f"refused (answered 503) and workers cannot record their work"))
    elif store_refused:
        n = store_refused["count"]
        out.append(Problem("", f"deliveries cannot be stored: {n} refused (answered 503, lost unless redelivered) in the "
                               f"last {max(0.0, now - store_refused['since']):.0f} s and none stored since; the store "
                               f"cannot be written: {store_refused['error']}"))
    if expect_worker:
        if store_refused and (last_beat_at is None or now - last_beat_at > policy.heartbeat_stale_s):
            # the heartbeat is a write to that store: refused like every other, it says nothing of
            # whether a worker runs (a worker on a full volume runs, its every write refused)
            seen = "none recorded yet" if last_beat_at is None else \
                f"the last one recorded is {now - last_beat_at:.0f} s old"
            out.append(Problem("", f"the workers' heartbeat is unknown: the store cannot be written, so no worker "
                                   f"can record it ({seen})"))
        elif last_beat_at is None:
            out.append(Problem("", "no worker has started processing the queue"))
        elif now - last_beat_at > policy.heartbeat_stale_s:
            out.append(Problem("", f"no worker heartbeat for {now - last_beat_at:.0f} s (limit {policy.heartbeat_stale_s:g} s)"))
    if recent_restarts >= policy.max_restarts:
        out.append(Problem("", f"workers restarted {recent_restarts} times in the last {policy.restart_window_s:g} s"))
    if oldest_due_at is not None and now - oldest_due_at > policy.stuck_after_s:
        out.append(Problem("", f"the queue is stuck: a delivery has been due for {now - oldest_due_at:.0f} s "
                               f"(limit {policy.stuck_after_s:g} s)"))
    for d in timed_out:
        where = f"{d['event']} on {d['repo']}" if d["repo"] else d["event"]
        out.append(Problem(d["repo"] or "", f"delivery {d['id']} ({where}) hung: {d['error']} (`forksync queue`)"))
    dead = counts.get("dead", 0)
    if dead:
        out.append(Problem("", f"{dead} dead-lettered deliver{'y' if dead == 1 else 'ies'}: see `forksync queue --state dead`"))
    for j in failing_jobs:
        if j["count"] >= policy.job_failures:
            # a job naming no fork (``repo`` "") is the App's own: listing its installations
            out.append(Problem(j["repo"], f"{j['repo'] or 'the App'}: the scheduled {j['job']} job failed {j['count']} "
                                          f"times in a row: {j['error']}"))
    return out


def warnings(*, login_unknown: list[dict] = (), paused: list[dict] = (), paused_deliveries: list[dict] = (),
             suspended: dict | None = None, now: float = 0.0, degraded: list[dict] = ()) -> list[Problem]:
    """What is degraded though deliveries are processed (see the module doc). ``login_unknown``:
    the live workers that do not know the bot's login (``[{"worker_id", "login_unknown"}]``,
    :func:`bot.app.queue.login_unknown`); one line per distinct reason. ``paused``: the forks of
    suspended installations (``[{"fork", "installation_id", "since", "by"}]``, ``since`` in epoch s,
    :func:`bot.sync.store.paused_forks`), one line each, with how long (to ``now``, epoch s).
    ``paused_deliveries``: the deliveries set aside until an installation's suspension is lifted
    (``[{"installation_id", "count", "since"}]``, :func:`bot.app.queue.paused_by_installation`), one
    line per installation — the only word of them where the installation follows no fork (nothing
    polls it, so a missed ``installation.unsuspend`` leaves them waiting); the line names the first
    (by name) of the installation's forks in ``paused``, ``""`` when it follows none; ``suspended``:
    :func:`bot.sync.store.suspended`, for who suspended it. ``degraded``: the forks whose syncing
    is degraded (``[{"fork", "reason"}]``, :meth:`bot.sync.status.SyncStatus.degraded`: a unit
    GitHub refused, or whose pick failed, units held while upstream's branch moved back), one line each — the other units go on, so no problem.
    Each as a :class:`Problem`: the fork it names (``""``: the App as a whole), so a page shows a
    fork's line only to a reader who may read that fork."""
    out: list[Problem] = []
    for d in degraded:
        out.append(Problem(d["fork"], f"{d['fork']}: syncing is degraded: {d['reason']} (its status issue says what to do)"))
    for p in paused:
        by = f" by {p['by']}" if p["by"] else ""
        out.append(Problem(p["fork"], f"{p['fork']}: paused: the App's installation {p['installation_id']} is suspended{by} "
                   f"(for {max(0.0, now - p['since']) / 3600:.1f} h); its polls and scheduled jobs resume, with a "
                   "catch-up sync, when the suspension is lifted"))
    for p in paused_deliveries:
        who = (suspended or {}).get(p["installation_id"], {}).get("by") or ""
        n = p["count"]
        # the line names who suspended the installation: a reader who may not read the fork it
        # follows is told only that there is a warning, as for that fork's own paused line
        fork = next((f["fork"] for f in sorted(paused, key=lambda f: f["fork"])
                     if f["installation_id"] == p["installation_id"]), "")
        out.append(Problem(fork, f"{n} deliver{'y waits' if n == 1 else 'ies wait'} for the App's installation "
                           f"{p['installation_id']}, suspended{f' by {who}' if who else ''} (paused for "
                           f"{max(0.0, now - p['since']) / 3600:.1f} h): they run when the suspension is lifted "
                           "(`forksync queue --state paused`)"))
    for why in dict.fromkeys(w["login_unknown"] for w in login_unknown):
        workers = [w["worker_id"] for w in login_unknown if w["login_unknown"] == why]
        out.append(Problem("", f"the bot's own GitHub login is unknown to {len(workers)} worker{'s' if len(workers) != 1 else ''} "
                   f"({', '.join(workers)}): {why}; until it is learnt (asked again with backoff) the loop guard cannot "
                   "recognise forksync's own events and a PR forksync opens counts as its own only on a branch it "
                   "recorded — set FORKSYNC_BOT_LOGIN to the login GitHub shows as the author of forksync's PRs"))
    return out


def unnamed(lines: list[Problem], noun: str) -> list[str]:
    """``lines`` (:func:`judge`'s problems or :func:`warnings`, ``noun`` "problem" or "warning") as
    ``/healthz`` says them: the App's own lines whole, the lines naming a fork counted in one last
    line that points to the dashboard's health page. ``/healthz`` asks for no login and cannot
    tell a private fork from a public one, so it names none: a fork's name, its error and who
    suspended its installation are shown by the health page, to a reader who may read the fork."""
    own = [p.text for p in lines if not p.fork]
    n = len(lines) - len(own)
    if not n:
        return own
    return [*own, f"{n} {noun}{'s' if n != 1 else ''} of {'a fork' if n == 1 else 'forks'}: the dashboard's health "
                  f"page (/health) names {'it' if n == 1 else 'them'} to who may read the fork"]


__all__ = ["HealthPolicy", "Problem", "judge", "problems", "unnamed", "warnings"]
