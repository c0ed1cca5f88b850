"""The sync concern's tables and their named operations (one database layer for the concern).

* ``sync_status``: per fork, the numbers last computed and when upstream was last seen
  (:class:`bot.sync.status.SyncStatus`);
* ``sync_branches``: per sync branch, the tip forksync pushed last, a person's verified
  resolution, the unit's upstream shas, its base and its PR, and the PRs of the units the branch
  carried before; a row whose unit ended (merged, closed, re-planned) is kept as its history
  (:func:`bot.sync.prs.speaks_for`: it speaks for its own PR only);
* ``sync_pushes``: per sync branch, the tip forksync is pushing, written before the push and
  cleared once the push is recorded in ``sync_branches``: a worker that dies between the push and
  that record leaves it, and the next sync that finds GitHub's branch at it knows the tip for
  forksync's own push (:func:`begin_push`);
* ``tracked_forks``: forks whose upstream is followed (push events and the poller);
* ``suspended_installations``: installations an owner suspended (GitHub refuses their tokens):
  their forks stay tracked but are paused; ``unfollowed_forks``: why a fork is no longer tracked
  (uninstalled, removed from the installation), for the dashboard;
* ``app_jobs``: the App's own scheduled jobs failing now, those that name no fork (listing the
  App's installations and their repositories to adopt what their events missed);
* ``commit_analysis`` and ``pin_history``: the ingest's cache of commit analyses (rebuildable
  from git) and the pins recorded at each refresh.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace

from bot.agents.redact import scrub
from bot.model import UNDECIDED
from bot.store import Store, table
from bot.sync.status import SyncStatus

SYNC_STATUS = table("sync_status", {
    "repo": str,                 # fork "owner/name"
    "upstream": str,             # upstream "owner/name" or URL
    "upstream_head": str,
    "fork_head": str,
    "frontier": str,
    "contiguous_pin": str,
    "days_behind": float,
    "backlog": int,
    "not_reached": int,          # upstream commits newer than the frontier
    "upstream_seen_at": float,   # last successful fetch of upstream (epoch s)
    "computed_at": float,
    "last_fetch_at": float,
    "last_fetch_error": str,
    "held": int,                 # /forksync hold
    "held_by": str,              # the comment that last set ``held``: "<created_at>#<comment id, 20 digits>" (sorts in time)
    "deferred_json": str,        # [{"sha","subject","reason"}]
    "units_json": str,           # [{"id","kind","pr","url","state"}]
    "blocked_json": str,         # [{"id","branch","pr","url","reason","requires","path","step","at"}]: refused units
    "etag": str,                 # poller ETag of the upstream branch
    "failing_jobs_json": str,    # [{"job","error","since","at","count"}]: scheduled jobs failing now
    "upstream_head_at": float,   # committer time of upstream_head (epoch s): Days Behind is measured to it
    "frontier_at": float,        # committer time of frontier (epoch s)
    "upstream_unknown": str,     # why upstream_seen_at is 0 for computed numbers (pinned to a sha, …); "" known
    "contiguous_pin_at": float,  # committer time of contiguous_pin (epoch s)
    "contiguous_lag_days": float,
    "holder": str,               # the oldest upstream commit not handled: it holds the contiguous pin
    "holder_pr": int,
    "holder_disposition": str,
    "backlog_by_json": str,      # [[disposition, count]]: the Backlog per disposition
    "not_reached_handled": int,  # of not_reached, handled already (isolated picks, no-ops)
    "check_waits_json": str,     # [{"pr","branch","unit","head","checks","since","overdue","limit_s"}]: gates waiting on unreported checks
    "repaired_json": str,        # {"files","rebuilt","at"}: the working repository repaired at a worker's start; "" never
    "rewound_json": str,         # {"ref","from","to","commits","units","at"}: units held while upstream moved back; "" none
    # when (epoch s) the last sync that got past its fetch began, and whether the fork was on hold
    # then: an open unit published before it was not refreshed by it (bot.sync.status.not_refreshed);
    # 0 / NULL before the first such sync, and in rows written before
    "synced_at": float,
    "synced_on_hold": int,
}, pk="repo")


SYNC_BRANCHES = table("sync_branches", {
    "key": str,               # "<fork>:<branch>"
    # kind: bundle | chain, or backout: an L2 back-out branch (bot.l2.service.open_backout), kept
    # only so its PR is known as forksync's own; its state is "backout" while its PR is open, so
    # it is never taken for an open unit (the sync-PR cap, the status issue, landing, the
    # dashboard's units), and merged or closed once its PR is (bot.sync.landing.backout_ended)
    "repo": str, "branch": str, "unit_id": str, "kind": str,
    "pushed_tip": str,        # the tip forksync pushed last
    "verified_tip": str,      # a person's resolution that passed verification
    "pr": int, "state": str,  # open | merged | closed | decided | blocked | replanned | backout
    "shas_json": str,         # upstream shas of the unit, in order
    "base_sha": str,
    # the branch the unit's PR goes into (fork.ref when forksync pushed it): a PR from the branch
    # into any other base is not the unit's (bot.sync.prs.unit_base); "" in rows written before
    "base": str,
    "conflict_sha": str,      # upstream commit the chain stopped at (its conflict commit is the tip); "" when none
    # GitHub refused the unit's push, PR or merge (bot.sync.blocked); "" / 0 when not blocked.
    # A unit refused before its first push has a row with state "blocked" and no PR.
    "blocked_reason": str,    # GitHub's words
    "blocked_requires": str,  # workflows | contents | protection | permission | person | rebase | ""
    "blocked_path": str,      # the workflow file GitHub named
    "blocked_step": str,      # push | pr | merge | apply
    "blocked_at": float,      # epoch s
    "blocked_tip": str,       # the tip that was refused
    # 1 when a ``rebase`` block's branch holds no commit of a person, only forksync's pick folding
    # their conflict resolution (bot.sync.blocked.Refusal.folded); 0 / NULL otherwise and in rows written before
    "blocked_folded": int,
    # 1 when a ``rebase`` block's branch holds forksync's pick folding a person's conflict
    # resolution, with or without their commits beside it (bot.sync.blocked.Refusal.by_hand): the
    # hint then names that pick among what a rebase carries; 0 / NULL otherwise and in rows written before
    "blocked_by_hand": int,
    # JSON [PR numbers] of the units this branch name carried before the current one (closed,
    # merged or re-planned, then planned again under the same unit id): none of them is the
    # current unit's PR. "" / NULL in rows written before, and while there was none
    "earlier_prs": str,
    # 1 when forksync opened the unit's PR as a draft (a chain at a conflict, or decided by rules),
    # 0 when it opened it ready, a person opened it, or a person converted it to a draft
    # (record_person_draft: their draft state is theirs): only its own
    # drafts does it take out of draft (bot.validation.gate_inputs.person_draft); NULL in rows
    # written before (taken as forksync's)
    "draft_by_forksync": int,
    # 1 while the unit's PR is a draft on GitHub, 0 while it is ready for review, as forksync last
    # saw it: the PR it opened or updated, the PR each gate evaluation reads, the draft state the
    # gate took it out of, and GitHub's ready_for_review / converted_to_draft. The status issue and
    # the dashboard say "draft" by it; NULL in rows written before (then said "open")
    "pr_draft": int,
    # why the unit is a bundle or a chain as its PR last said it (Unit.reason): a later plan that
    # finds the branch only in flight keeps it; "" / NULL in rows written before
    "reason": str,
    # JSON [{"sha","folded","commit","decided","declined"}]: what forksync's rules decided on the
    # branch, as its PR last said it; a later sync keeps each while its rule commit (or the pick
    # it was folded into) is on the branch. "" / NULL none, and in rows written before
    "by_rules_json": str,
    # when (epoch s) the sync's conflict agent first had no time left for the chain's conflict
    # (bot.sync.service.agent_deadline): the next sync publishes such chains first, oldest
    # first; 0 / NULL once the agent is asked, and in rows written before
    "agent_waiting_since": float,
    # when (epoch s) the sync's deadline last cut the conflict agent's call on the chain's
    # conflict before it had an answer (bot.sync.service.SyncService._ask_agent): while the
    # chain waits (``agent_waiting_since``), the status issue and the dashboard say its call was
    # cut rather than "not yet tried"; 0 / NULL when its turn came after the deadline, once the
    # agent answered, and in rows written before
    "agent_cut_at": float,
    # JSON [unit ids] the unit lands after as last published (Unit.depends_on): a re-plan that
    # re-lists the open branch, or extends it with commits of no dependency, keeps those still
    # planned or in flight (bot.sync.service.CoreResult.units_to_publish); "" / NULL in rows written before
    "depends_json": str,
    # "<fork tip>:<branch tip>" at which building a resolved chain again on the moved fork did not
    # keep the person's resolution (bot.git.resolution.rebuild_keeps): the same build at the same
    # pair gives the same answer, so it is tried again only when either moves; "" / NULL none
    "rebuild_refused": str,
    # the PR head (a person's conflict resolution) answered "kept, not folded yet" because an
    # upstream rewind held the commit the chain stopped at (SyncService.finish_conflict): every
    # sync checks it again once no standing rewind holds that commit
    # (bot.sync.rewind.held_to_recheck), and clears it once checked; "" / NULL none, and in rows written before
    "held_head": str,
    # when (epoch s) a sync or command last published the unit (applied it, pushed its branch when
    # it moved, opened or updated its PR): a sync that began after it left its PR, and its row on
    # the status issue, as that publish made them (bot.sync.status.not_refreshed); 0 / NULL when
    # never, and in rows written before
    "published_at": float,
    # when (epoch s) the unit was first planned, and its areas (JSON [names]), as the last plan that
    # listed it said: the planner plans pending commits only, so a unit in flight leaves the saved
    # plan at the next sync that does not re-list it, and its age and areas are read here from
    # then on (save_plan); 0 / NULL and "" / NULL in rows written before, and before any plan listed it
    "first_planned_at": float,
    "areas_json": str,
}, pk="key", indexes=[("repo", "unit_id")])

#: ``kind`` and ``state`` of a back-out branch's row in ``sync_branches``.
BACKOUT = "backout"
#: ``state`` of a unit whose PR forksync closed itself because every upstream commit on its
#: branch was decided while it was open (bot.sync.shrink): its close is no person's decision.
DECIDED = "decided"
#: ``state``s of a ``sync_branches`` row whose unit is in flight: pushed with its PR open or about
#: to be (``open``), refused by GitHub before it had a branch or PR (``blocked``), an L2 back-out
#: (``backout``, until its PR is merged or closed). Any other state (``merged``, ``closed``,
#: ``decided``, ``replanned``) is a unit (or back-out) that ended: its row is history.
IN_FLIGHT = ("open", "blocked", BACKOUT)


def ended(row: dict | None) -> bool:
    """Pure: is ``row`` the record of a unit that ended (landed, closed unmerged, re-planned)?"""
    return row is not None and row.get("state") not in IN_FLIGHT


def earlier_prs(row: dict | None) -> list[int]:
    """Pure: the PRs of the units ``row``'s branch carried before the current one, oldest first —
    with the row's own PR when its unit ended (a new unit on the branch starts from this list)."""
    out = [int(n) for n in json.loads((row or {}).get("earlier_prs") or "[]")]
    if ended(row) and int(row.get("pr") or 0) and int(row["pr"]) not in out:
        out.append(int(row["pr"]))
    return out


#: The push of a sync branch forksync began and has not recorded yet (:func:`begin_push`).
SYNC_PUSHES = table("sync_pushes", {
    "key": str,               # "<fork>:<branch>"
    "tip": str,               # the commit the push sends
    "at": float,              # when the push began (epoch s)
    # JSON: what recording the push does, for a push whose record needs more than a sync can
    # compute again (a fold: the row to save, the comment to post); "" / NULL when none
    "record": str,
}, pk="key")

TRACKED = table("tracked_forks", {
    "fork": str, "upstream": str, "upstream_ref": str, "installation_id": int, "poll_interval_s": int,
    "last_poll_at": float,
    "keep_days": float,     # the fork's github.metrics_keep_days: the poller's snapshots are trimmed by it
}, pk="fork", indexes=[("upstream",)])

SUSPENDED = table("suspended_installations", {"installation_id": int, "at": float, "by": str}, pk="installation_id")
UNFOLLOWED = table("unfollowed_forks", {"fork": str, "reason": str, "at": float}, pk="fork")
APP_JOBS = table("app_jobs", {"job": str, "error": str, "since": float, "at": float, "count": int}, pk="job")

COMMIT_TABLE = table("commit_analysis", {"sha": str, "version": int, "data": str}, pk="sha")
PIN_TABLE = table("pin_history", {"id": int, "recorded_at": int, "as_of": int, "fork_tip": str,
                                  "upstream_tip": str, "data": str}, pk="id", indexes=[("as_of",)])


def load_status(store: Store, repo: str) -> SyncStatus | None:
    with store.lock:
        rows = list(store.db["sync_status"].rows_where("repo = ?", [repo]))
    return _status_from_row(rows[0]) if rows else None


#: the poller's job (bot.sync.upstream.poll_once): its read of upstream, or the sync it started,
#: failed; cleared by the next poll that reaches upstream and finds the fork synced, and a failed
#: sync also by a sync that succeeds, whatever brought it (bot.sync.service.SyncService.sync)
POLL_JOB = "poll"
#: the poll's step that reads upstream's branch through GitHub's API (:func:`record_job`'s
#: ``step``): only a poll that reaches upstream clears its failure, not a sync another event brought
POLL_READ = "read"


def record_job(store: Store, repo: str, job: str, error: str | None, now: float, *, step: str = "",
               unless: str | None = None) -> bool:
    """Record how scheduled ``job`` of fork ``repo`` ended at ``now``: ``error`` (None = it
    succeeded, which clears it; stored through :func:`bot.agents.redact.scrub`), failing at
    ``step`` (a name of the job's own: the poll's ``read`` of upstream, or "" for the job as a
    whole). ``unless``: a success that says nothing of that step keeps a failure of it (a sync
    another event brought does not read upstream's branch through GitHub's API as the poll
    does, :data:`POLL_READ`). Returns whether the set of failing jobs changed (the status issue
    then needs a refresh). Writes only the failing-jobs column (read and written under the store's
    lock, in one transaction), so a sync saving its status meanwhile neither loses nor restores a job."""
    with store.transaction():
        st = load_status(store, repo) or SyncStatus(repo=repo)
        jobs = {j["job"]: j for j in st.failing_jobs}
        before = set(jobs)
        if error is None:
            if unless is None or (jobs.get(job) or {}).get("step", "") != unless:
                jobs.pop(job, None)
        else:
            old = jobs.get(job) or {"since": now, "count": 0}
            # shown on the status issue and /healthz: scrubbed like a dead letter's reason
            jobs[job] = {"job": job, "error": scrub(error)[:300], "since": old["since"], "at": now, "count": old["count"] + 1,
                         **({"step": step} if step else {})}
        if jobs == {j["job"]: j for j in st.failing_jobs}:
            return False
        _write(store, replace(st, failing_jobs=tuple(jobs[k] for k in sorted(jobs))), only=("failing_jobs_json",))
    return set(jobs) != before


def record_check_waits(store: Store, repo: str, pr: int, wait: dict | None, *, keep=None) -> bool:
    """Record that sync PR ``pr`` of fork ``repo`` waits on required checks with no run or status
    on its head (``wait``: :attr:`bot.sync.status.SyncStatus.check_waits`' shape; None: it waits on
    none now, which clears it). ``keep(wait) -> bool``, when given, also drops the other waits it
    answers False for (their PR closed meanwhile). Writes only the ``check_waits_json`` column in
    one transaction, as :func:`record_job` does. Returns whether what a person reads changed (a
    new wait, one gone, other checks or head, one turned overdue), for the status issue's refresh."""
    with store.transaction():
        st = load_status(store, repo) or SyncStatus(repo=repo)
        waits = [w for w in st.check_waits if w.get("pr") != pr and (keep is None or keep(w))]
        if wait is not None:
            waits.append({**wait, "pr": pr})
        waits.sort(key=lambda w: w["pr"])
        if waits == list(st.check_waits):
            return False
        _write(store, replace(st, check_waits=tuple(waits)), only=("check_waits_json",))

    def shown(ws):
        return {(w["pr"], w.get("head"), tuple(w.get("checks") or ()), bool(w.get("overdue"))) for w in ws}
    return shown(waits) != shown(st.check_waits)


def set_hold(store: Store, repo: str, on: bool, held_by: str) -> bool:
    """Put fork ``repo`` on hold (``on``) or take it off, as the comment ``held_by`` (its
    ``comment_order``; "" = now, keeping the stored one) says, unless the stored hold was set by a
    later comment: returns whether it was applied. The check and the write are one transaction
    (another worker may store a hold meanwhile). Writes only the hold columns, so a sync that
    loaded the status before the command and saves it after keeps the hold (:func:`save_status`
    never writes them)."""
    with store.transaction():
        st = load_status(store, repo) or SyncStatus(repo=repo)
        if held_by and st.held_by and held_by < st.held_by:
            return False
        _write(store, replace(st, held=on, held_by=held_by or st.held_by), only=("held", "held_by"))
    return True


def save_rewound(store: Store, repo: str, rewound: dict | None) -> None:
    """Store only the status's ``rewound`` (:func:`bot.sync.rewind.record`) of ``repo``, as soon as
    a sync has judged upstream's move: the gate reads it (``upstream-rewound``) for every PR event,
    and a sync publishes for minutes before it saves the whole status."""
    with store.transaction():
        st = load_status(store, repo) or SyncStatus(repo=repo)
        _write(store, replace(st, rewound=rewound), only=("rewound_json",))


def failing_jobs(store: Store) -> list[dict]:
    """Every fork's failing scheduled jobs: ``[{"repo", "job", "error", "since", "at", "count"}]``."""
    return [{"repo": st.repo, **j} for st in load_all_statuses(store) for j in st.failing_jobs]


def record_app_job(store: Store, job: str, error: str | None, now: float) -> bool:
    """Record how the App's own scheduled ``job`` (one naming no fork, e.g. ``installations``)
    ended at ``now`` (epoch s): ``error`` (None: it succeeded, which clears it; stored through
    :func:`bot.agents.redact.scrub`, cut to 300 characters), counted as :func:`record_job` counts a
    fork's. Returns whether the set of failing App jobs changed."""
    with store.transaction():
        rows = list(store.db[APP_JOBS.name].rows_where("job = ?", [job]))
        if error is None:
            if rows:
                store.db[APP_JOBS.name].delete(job)
            return bool(rows)
        old = rows[0] if rows else {"since": now, "count": 0}
        store.db[APP_JOBS.name].upsert({"job": job, "error": scrub(error)[:300], "since": old["since"], "at": now,
                                        "count": old["count"] + 1}, pk="job")
        return not rows


def failing_app_jobs(store: Store) -> list[dict]:
    """The App's own failing scheduled jobs, in :func:`failing_jobs`' shape with ``repo`` ``""``
    (they name no fork): ``[{"repo", "job", "error", "since", "at", "count"}]``, by job."""
    with store.lock:
        return [{"repo": "", **r} for r in store.db[APP_JOBS.name].rows_where(order_by="job")]


def load_all_statuses(store: Store) -> list[SyncStatus]:
    with store.lock:
        return [_status_from_row(r) for r in store.db["sync_status"].rows_where(order_by="repo")]


#: Columns with writers of their own (a hold command, the scheduler), which :func:`save_status`
#: leaves as they are on a stored row: a sync loads its status, works for minutes, and saves it,
#: and a hold set or a job failing meanwhile must survive that save.
OWNED_COLUMNS = ("held", "held_by", "failing_jobs_json", "check_waits_json")


def save_status(store: Store, status: SyncStatus) -> None:
    """Store ``status``, except :data:`OWNED_COLUMNS` of a row already stored (written by
    :func:`set_hold` and :func:`record_job`); a new row gets them from ``status``."""
    _write(store, status, keep=OWNED_COLUMNS)


def _write(store: Store, status: SyncStatus, *, keep: tuple[str, ...] = (), only: tuple[str, ...] = ()) -> None:
    row = {k: v for k, v in status.__dict__.items()
           if k not in ("deferred", "units", "held", "blocked", "failing_jobs", "backlog_by", "check_waits", "repaired",
                         "rewound")}
    row["repaired_json"] = json.dumps(status.repaired) if status.repaired else ""
    row["rewound_json"] = json.dumps(status.rewound) if status.rewound else ""
    row["backlog_by_json"] = json.dumps([list(p) for p in status.backlog_by])
    row["failing_jobs_json"] = json.dumps(list(status.failing_jobs))
    row["check_waits_json"] = json.dumps(list(status.check_waits))
    row["blocked_json"] = json.dumps(list(status.blocked))
    row["held"] = int(status.held)
    row["deferred_json"] = json.dumps(list(status.deferred))
    row["units_json"] = json.dumps(list(status.units))
    with store.transaction():
        stored = list(store.db["sync_status"].rows_where("repo = ?", [status.repo])) if keep or only else []
        if stored and only:
            row = {**stored[0], **{k: row[k] for k in only}}
        elif stored:
            row.update({k: stored[0][k] for k in keep if k in stored[0]})
        store.db["sync_status"].upsert(row, pk="repo")


def _status_from_row(r: dict) -> SyncStatus:
    return SyncStatus(
        repo=r["repo"], upstream=r["upstream"] or "", upstream_head=r["upstream_head"] or "",
        fork_head=r["fork_head"] or "", frontier=r["frontier"] or "",
        contiguous_pin=r["contiguous_pin"] or "", days_behind=r["days_behind"] or 0.0,
        backlog=r["backlog"] or 0, not_reached=r.get("not_reached") or 0, upstream_seen_at=r["upstream_seen_at"] or 0.0,
        computed_at=r["computed_at"] or 0.0, last_fetch_at=r["last_fetch_at"] or 0.0,
        last_fetch_error=r["last_fetch_error"] or "", held=bool(r["held"]),
        deferred=tuple(json.loads(r["deferred_json"] or "[]")),
        units=tuple(json.loads(r["units_json"] or "[]")), etag=r["etag"] or "",
        blocked=tuple(json.loads(r.get("blocked_json") or "[]")), held_by=r.get("held_by") or "",
        failing_jobs=tuple(json.loads(r.get("failing_jobs_json") or "[]")),
        upstream_head_at=r.get("upstream_head_at") or 0.0, frontier_at=r.get("frontier_at") or 0.0,
        upstream_unknown=r.get("upstream_unknown") or "",
        contiguous_pin_at=r.get("contiguous_pin_at") or 0.0, contiguous_lag_days=r.get("contiguous_lag_days") or 0.0,
        holder=r.get("holder") or "", holder_pr=r.get("holder_pr") or 0, holder_disposition=r.get("holder_disposition") or "",
        backlog_by=tuple((d, n) for d, n in json.loads(r.get("backlog_by_json") or "[]")),
        not_reached_handled=r.get("not_reached_handled") or 0,
        check_waits=tuple(json.loads(r.get("check_waits_json") or "[]")),
        repaired=json.loads(r.get("repaired_json") or "null"),
        rewound=json.loads(r.get("rewound_json") or "null"),
        synced_at=r.get("synced_at") or 0.0, synced_on_hold=bool(r.get("synced_on_hold")))


# ---------------------------------------------------------------------- sync branches
def branch_row(store, repo: str, branch: str) -> dict | None:
    with store.lock:
        rows = list(store.db["sync_branches"].rows_where("key = ?", [f"{repo}:{branch}"]))
    return rows[0] if rows else None


def save_branch(store, **row) -> None:
    row["key"] = f"{row['repo']}:{row['branch']}"
    with store.lock:
        store.db["sync_branches"].upsert(row, pk="key", alter=True)


def drafted_since_seen_ready(row: dict | None, draft: bool) -> bool:
    """Pure: whether a sync PR that is a draft now (``draft``) was made one by a person since its
    row (``sync_branches``) last saw it ready (``pr_draft`` 0): forksync never converts a PR, so
    the draft is theirs — whichever read finds it first (a gate evaluation, a publish, GitHub's
    ``converted_to_draft``). Rows written before the column (NULL) say nothing."""
    return bool(draft) and (row or {}).get("pr_draft") == 0


def record_pr_draft(store, repo: str, branch: str, number: int, draft: bool) -> bool:
    """Record that PR ``number`` of ``branch`` of fork ``repo`` is a draft (``draft``) or ready,
    on the unit's open row that speaks for that PR (``sync_branches.pr``). A draft the row last saw
    ready is a person's (``draft_by_forksync`` 0: forksync never converts a PR). Returns whether the
    row changed (the status issue then wants a render)."""
    row = _row_of_pr(store, repo, branch, number)
    if row is None or row.get("pr_draft") == int(draft):
        return False
    # kept so once the row says draft (bot.validation.gate_inputs.person_draft)
    person = {"draft_by_forksync": 0} if drafted_since_seen_ready(row, draft) else {}
    save_branch(store, repo=repo, branch=branch, pr_draft=int(draft), **person)
    return True


def record_person_draft(store, repo: str, branch: str, number: int) -> bool:
    """Record that a person made PR ``number`` of ``branch`` of fork ``repo`` a draft (GitHub's
    ``converted_to_draft``; forksync only ever opens drafts, never converts one): the draft is
    theirs to end (``draft_by_forksync`` 0, :func:`bot.validation.gate_inputs.person_draft`), on
    the unit's open row that speaks for that PR. Returns whether the row changed."""
    row = _row_of_pr(store, repo, branch, number)
    if row is None or row.get("draft_by_forksync") == 0:
        return False
    save_branch(store, repo=repo, branch=branch, draft_by_forksync=0)
    return True


def _row_of_pr(store, repo: str, branch: str, number: int) -> dict | None:
    row = branch_row(store, repo, branch)
    return row if row and row.get("state") == "open" and int(row.get("pr") or 0) == int(number) else None


def begin_push(store: Store, repo: str, branch: str, tip: str, at: float, record: dict | None = None) -> None:
    """Record that forksync is about to push ``tip`` to ``branch`` of fork ``repo`` (``at``: epoch
    s), before the push: a process killed after GitHub took the push and before
    ``sync_branches.pushed_tip`` recorded it leaves this row, and :func:`begun_push` then tells
    the next run that the tip it finds on GitHub is forksync's own push, not a person's.
    ``record``: JSON-able data that run needs to record the push as this one would have."""
    with store.lock:
        store.db[SYNC_PUSHES.name].upsert({"key": f"{repo}:{branch}", "tip": tip, "at": at,
                                           "record": json.dumps(record) if record is not None else ""}, pk="key")


def begun_push(store: Store, repo: str, branch: str) -> dict | None:
    """``{"tip", "at", "record"}`` of ``branch``'s push that :func:`begin_push` recorded and
    nothing has ended since (:func:`end_push`; ``record``: its data, None when none); None when
    there is none."""
    with store.lock:
        rows = list(store.db[SYNC_PUSHES.name].rows_where("key = ?", [f"{repo}:{branch}"]))
    if not rows:
        return None
    return {"tip": rows[0]["tip"], "at": rows[0]["at"],
            "record": json.loads(rows[0]["record"]) if rows[0].get("record") else None}


def end_push(store: Store, repo: str, branch: str) -> None:
    """``branch``'s push is recorded (or was never made): its :func:`begin_push` row goes."""
    with store.lock:
        store.db[SYNC_PUSHES.name].delete_where("key = ?", [f"{repo}:{branch}"])


def open_branches(store: Store, repo: str) -> list[dict]:
    """The fork's sync branches whose PR is open, by branch name."""
    with store.lock:
        return list(store.db[SYNC_BRANCHES.name].rows_where("repo = ? and state = 'open'", [repo], order_by="branch"))


def set_held_head(store: Store, repo: str, branch: str, head: str) -> bool:
    """Write ``held_head`` (a PR head answered "held by a rewind", ``""`` none) on ``branch``'s row
    of fork ``repo`` while it is open. Returns whether a row was written."""
    return _set_where(store, SYNC_BRANCHES.name, {"held_head": head}, f"{repo}:{branch}", {"state": "open"})


def clear_held_head(store: Store, repo: str, branch: str, head: str) -> bool:
    """Clear ``branch``'s ``held_head`` only while it still names ``head``: a push answered "held"
    again meanwhile keeps its own mark. Returns whether it was cleared."""
    return _set_where(store, SYNC_BRANCHES.name, {"held_head": ""}, f"{repo}:{branch}", {"held_head": head})


def _set_where(store: Store, table_name: str, values: Mapping[str, object], key: str,
               expected: Mapping[str, object]) -> bool:
    """Compare-and-set, one transaction: write ``values`` (``{column: value}``) on the row of
    ``table_name`` whose ``key`` column is ``key``, only while every ``expected`` holds there:
    ``{expression: value}`` compared with SQL's ``=`` (NULL equals nothing: write
    ``coalesce(column, '')`` as the expression where NULL counts as ``""``), or ``{expression:
    (value, …)}`` compared with ``IN``. Expressions and columns come from this module, never from
    input. Returns whether a row was written."""
    conds = ["key = ?"]
    args: list[object] = [*values.values(), key]
    for expr, want in expected.items():
        if isinstance(want, tuple):
            conds.append(f"{expr} IN ({', '.join('?' * len(want))})")
            args += want
        else:
            conds.append(f"{expr} = ?")
            args.append(want)
    sets = ", ".join(f"{column} = ?" for column in values)
    with store.transaction() as conn:
        return conn.execute(f"UPDATE {table_name} SET {sets} WHERE {' AND '.join(conds)}", args).rowcount == 1


def blocked_branches(store: Store, repo: str) -> list[dict]:
    """The fork's blocked sync branches (open PR or none yet; GitHub refused them, their pick failed
    without a conflict, or they wait for a person), by branch name."""
    with store.lock:
        return list(store.db[SYNC_BRANCHES.name].rows_where(
            "repo = ? and state in ('open', 'blocked') and coalesce(blocked_reason, '') != ''", [repo],
            order_by="branch"))


def depends_of(row: dict, rows: Sequence[dict]) -> list[str]:
    """Pure: the unit ids ``row``'s unit lands after — its ``depends_json`` as last published; for a
    row written before that column (NULL or ""), what nothing recorded is taken to be: every other
    in-flight unit of ``rows`` (``sync_branches`` rows, state ``open`` or ``blocked``) whose PR is
    older (a smaller number; a row without a PR lands after every one with a PR). A unit is
    published after the units it lands after (bot.sync.service._deps_first), so their PRs are the
    older ones; taking them all may hold a unit longer than its plan would, never land it before
    a bundle its picks were predicted on (docs/plan.md "Landing after earlier bundles"), and the
    PR order admits no cycle."""
    stored = row.get("depends_json")
    if stored:
        return list(json.loads(stored))
    mine = int(row.get("pr") or 0)
    return [r["unit_id"] for r in rows
            if r.get("state") in ("open", "blocked") and r.get("kind") != BACKOUT and r.get("unit_id") != row.get("unit_id")
            and int(r.get("pr") or 0) and (not mine or int(r["pr"]) < mine)]


def in_flight_deps(row: dict, rows: Sequence[dict]) -> list[tuple[str, int]]:
    """Pure: ``(unit id, PR number; 0 when it has none)`` of each unit ``row``'s unit lands after
    (:func:`depends_of`, in its order) whose row among ``rows`` (the fork's ``sync_branches``
    rows in flight: state ``open`` or ``blocked``) is still in flight — what the gate's
    ``lands-after`` holds a sync PR for (:func:`bot.validation.gate_inputs.lands_after`)."""
    by_branch = {r["branch"]: r for r in rows}
    out = []
    for uid in depends_of(row, rows):
        dep = by_branch.get(f"forksync/{uid}") or {}
        if dep.get("state") in ("open", "blocked"):
            out.append((uid, int(dep.get("pr") or 0)))
    return out


def unit_waits(rows: Sequence[dict], closed: Mapping[str, Sequence[dict]]) -> dict[str, dict]:
    """Pure: per unit id of ``rows`` (the fork's rows in flight), what it waits for and how many
    wait for it — ``{"waits_for": [{"id", "pr", "state", "shas"}], "waited_by": n}``. ``waits_for``
    holds first the units it lands after that were closed unmerged (``closed``: per unit id, their
    rows, :func:`closed_deps`; ``state`` ``closed`` or ``decided``, ``shas`` their upstream
    commits: a person must act), then those still in flight (:func:`in_flight_deps`; ``state``
    ``open``, ``shas`` ``[]``); ``waited_by`` counts the units of ``rows`` whose ``waits_for``
    names it in flight. Shown on the status issue's unit lines (docs/github.md "The status issue")."""
    deps = {r["unit_id"]: in_flight_deps(r, rows) for r in rows}
    waited: dict[str, int] = {}
    for ds in deps.values():
        for uid, _ in ds:
            waited[uid] = waited.get(uid, 0) + 1
    return {uid: {"waits_for": [{"id": d["unit_id"], "pr": int(d.get("pr") or 0), "state": str(d.get("state")),
                                 "shas": list(json.loads(d.get("shas_json") or "[]"))} for d in closed.get(uid, ())]
                               + [{"id": u, "pr": n, "state": "open", "shas": []} for u, n in ds],
                  "waited_by": waited.get(uid, 0)}
            for uid, ds in deps.items()}


def waits(store: Store, repo: str, rows: Sequence[dict] | None = None) -> dict[str, dict]:
    """:func:`unit_waits` of the fork's units in flight (``rows``, as the caller read them; None:
    read here), with the units each one lands after that were closed unmerged (:func:`ended_deps`,
    read once for all of ``rows``) as its ``depends_json`` names them.

    The status issue is rendered from rows and never knows GitHub's head of a branch, so it cannot
    tell a person's commits there the way the gate does (:func:`person_work` with the PR's head).
    It needs not: a closed unit stays in a row's ``depends_json`` only where a sync kept it for a
    person's work (a person's commits or a folded resolution, at the branch tip that sync fetched
    from GitHub; the closed unit's commits not planned again nor all picked) — the sync that
    followed a person's close (:func:`bot.sync.service._kept_after`: every sync publishes every
    open unit's row again, a blocked one included), or the sync that closed the unit itself because
    every commit of it was decided, which publishes the units landing after it while it is still
    live and then drops it from the rows whose branch held no person's work (:func:`without_closed`;
    forksync's own close is followed by no sync) — which is the row the gate's
    ``lands-after-closed`` reads (:func:`bot.validation.gate_inputs.lands_after_closed`). Dropped
    once, it is named no more: what a person pushes after is made on the fork without its picks.
    A unit no sync published since (the fork on hold, a unit held by an upstream rewind, a shrunk
    one left to a person) shows what the last one did."""
    if rows is None:
        rows = open_branches(store, repo) + blocked_only_branches(store, repo)
    ended = {d["unit_id"]: d for d in ended_deps(store, repo, rows)}
    # in the gate's order (closed_deps: by unit id)
    closed = {r["unit_id"]: [ended[u] for u in sorted(set(json.loads(r.get("depends_json") or "[]"))) if u in ended]
              for r in rows}
    return unit_waits(rows, closed)


#: the states of a unit closed without merging: by a person, or by forksync once every upstream
#: commit of it was decided while its PR was open (bot.sync.landing.close_decided)
CLOSED_UNMERGED = ("closed", DECIDED)


def person_work(row: dict, tip: str | None) -> bool:
    """Pure: does the branch of ``row`` (a ``sync_branches`` row; its tip ``tip``, None when
    unknown) hold a person's work — a resolution forksync verified and folded (``verified_tip``),
    or a tip forksync did not push (``pushed_tip``)?"""
    return bool(row.get("verified_tip")) or bool(tip and tip != row.get("pushed_tip"))


def without_closed(rows: Sequence[dict], closed: Mapping[str, Sequence[str]], worked: set[str] | frozenset,
                   picked: set[str] | frozenset = frozenset()) -> list[dict]:
    """Pure: the rows to write after a sync closed units itself (``closed``: unit id → its upstream
    shas, each unit whose PR it closed because every commit was decided:
    :func:`bot.sync.landing.close_decided`). Each row of ``rows`` (``sync_branches``, in flight,
    as after the sync published them) whose ``depends_json`` names a unit of ``closed``, with the
    ids it no longer lands after dropped — as the next sync's :func:`bot.sync.service._kept_after`
    would drop them, and no later sync follows from forksync's own close: a closed unit stays only
    where the row's unit is in ``worked`` (unit ids whose branch held a person's work at the tip
    that sync fetched before publishing, :func:`person_work`) and not every one of its commits is
    ``picked`` (PICKED in the ledger). Rows with nothing dropped are left out; ``[]`` when none."""
    out = []
    for r in rows:
        deps = json.loads(r.get("depends_json") or "[]")
        keep = [d for d in deps if d not in closed
                or (r.get("unit_id") in worked and not all(s in picked for s in closed[d]))]
        if keep != deps:
            out.append({**r, "depends_json": json.dumps(keep)})
    return out


def ended_deps(store: Store, repo: str, rows: Sequence[dict]) -> list[dict]:
    """The rows of the units that the in-flight ``rows`` say they land after (their stored
    ``depends_json``) and that were closed without merging and are not in flight again under their
    id (state in :data:`CLOSED_UNMERGED`), by unit id: what :class:`bot.sync.service.CoreResult`
    reads to decide whether a unit still waits for their commits (docs/plan.md "Landing after
    earlier bundles")."""
    ids = sorted({d for r in rows for d in json.loads(r.get("depends_json") or "[]")})
    out = []
    for uid in ids:
        dep = branch_row(store, repo, f"forksync/{uid}")
        if dep is not None and dep.get("unit_id") == uid and dep.get("state") in CLOSED_UNMERGED:
            out.append(dep)
    return out


def closed_deps(store: Store, repo: str, row: dict) -> list[dict]:
    """The rows of the units ``row``'s unit lands after (its stored ``depends_json``) that were
    closed without merging (:func:`ended_deps`). The sync keeps such a unit there only for a branch
    holding a person's work made while that unit's picks were to land first, whose commits are
    not planned again and not all picked (:func:`bot.sync.service._kept_after`): the gate holds
    it (``lands-after``), the status issue and its PR say so."""
    return ended_deps(store, repo, [row])


def lands_after_it(store: Store, repo: str, branch: str) -> list[dict]:
    """The rows of the fork's open sync PRs (state ``open``, a PR number) whose unit lands after the
    unit of ``branch`` (their ``depends_json`` names its ``unit_id``), by branch name: the PRs whose
    gate (``lands-after``) waits for it. ``[]`` when ``branch`` has no row. Read before the unit
    lands: the sync its landing runs publishes them again without it."""
    row = branch_row(store, repo, branch)
    if row is None or not row.get("unit_id"):
        return []
    rows = open_branches(store, repo) + blocked_only_branches(store, repo)
    return [r for r in open_branches(store, repo)
            if int(r.get("pr") or 0) and row["unit_id"] in depends_of(r, rows)]


def save_depends(store: Store, repo: str, branch: str, depends_json: str, *, was: str) -> bool:
    """Write ``depends_json`` (a JSON list of unit ids) on the in-flight row of ``branch``, only
    while it still says ``was`` and is in flight (state ``open`` or ``blocked``): a landing that
    does not wait for the fork's lock may have written the row since it was read, and its write
    wins. Returns whether the row was written."""
    return _set_where(store, SYNC_BRANCHES.name, {"depends_json": depends_json}, f"{repo}:{branch}",
                      {"coalesce(depends_json, '')": was or "", "state": ("open", "blocked")})


def blocked_only_branches(store: Store, repo: str) -> list[dict]:
    """Units refused before GitHub had their branch (state ``blocked``, no PR), by branch name."""
    with store.lock:
        return list(store.db[SYNC_BRANCHES.name].rows_where("repo = ? and state = 'blocked'", [repo],
                                                            order_by="branch"))


# ---------------------------------------------------------------------- tracked forks
def track(store: Store, fork: str, upstream: str, upstream_ref: str, installation_id: int | None,
          poll_interval_s: int, keep_days: float | None = None) -> None:
    with store.lock:
        old = list(store.db["tracked_forks"].rows_where("fork = ?", [fork]))
        store.db[UNFOLLOWED.name].delete_where("fork = ?", [fork])
        store.db["tracked_forks"].upsert({"fork": fork, "upstream": upstream, "upstream_ref": upstream_ref,
                                          "installation_id": installation_id, "poll_interval_s": poll_interval_s,
                                          "last_poll_at": old[0]["last_poll_at"] if old else 0.0,
                                          "keep_days": KEEP_SNAPSHOT_DAYS if keep_days is None else keep_days}, pk="fork")


def update_tracking(store: Store, fork: str, *, poll_interval_s: int, keep_days: float) -> None:
    """The poller's settings of tracked ``fork`` as its configuration says now (each sync reads
    it): a ``github.poll_interval_s`` or ``metrics_keep_days`` changed after adoption takes effect
    at the next sync. A fork not tracked is left untracked."""
    with store.lock:
        store.db.execute("UPDATE tracked_forks SET poll_interval_s = ?, keep_days = ? WHERE fork = ?",
                         [poll_interval_s, keep_days, fork])


def untrack(store: Store, fork: str, installation_id: int | None = None, *, reason: str = "", at: float = 0.0) -> bool:
    """Stop following ``fork`` (the App was uninstalled from it): no more polls or scheduled
    ticks, and its failing jobs are cleared (they would fail for good and keep ``/healthz`` red).
    Its status, metrics history and ledger stay, for the dashboard, which shows ``reason`` (e.g.
    "the App was uninstalled"; kept with ``at``, epoch s, until the fork is tracked again).
    ``installation_id``: only when the fork is tracked under that installation (a later
    reinstall tracks it under a new one). Returns whether it was tracked."""
    with store.transaction():
        rows = list(store.db["tracked_forks"].rows_where("fork = ?", [fork]))
        if not rows or (installation_id is not None and rows[0]["installation_id"] != installation_id):
            return False
        store.db["tracked_forks"].delete(fork)
        if reason:
            store.db[UNFOLLOWED.name].upsert({"fork": fork, "reason": reason, "at": at}, pk="fork")
        if list(store.db["sync_status"].rows_where("repo = ?", [fork])):
            store.db["sync_status"].update(fork, {"failing_jobs_json": "[]"})
    return True


def forks_tracking(store: Store, upstream: str, ref: str) -> list[dict]:
    with store.lock:
        return list(store.db["tracked_forks"].rows_where("upstream = ? and upstream_ref = ?", [upstream, ref],
                                                         order_by="fork"))


def tracked_forks(store: Store) -> list[dict]:
    """Every tracked fork, by name."""
    with store.lock:
        return list(store.db[TRACKED.name].rows_where(order_by="fork"))


def unfollowed(store: Store) -> dict[str, str]:
    """Why each fork that was tracked no longer is: ``{fork: reason}`` (:func:`untrack`)."""
    with store.lock:
        return {r["fork"]: r["reason"] for r in store.db[UNFOLLOWED.name].rows_where()}


def set_suspended(store: Store, installation_id: int, suspended: bool, *, at: float = 0.0, by: str = "") -> bool:
    """Record that an owner suspended installation ``installation_id`` at ``at`` (epoch s; ``by``:
    the login GitHub names), or lifted it (``suspended`` off). Its forks stay tracked, but their
    polls, scheduled jobs and syncs pause meanwhile: GitHub refuses the installation's tokens
    (403 "This installation has been suspended"). Returns whether anything changed."""
    with store.transaction():
        known = bool(list(store.db[SUSPENDED.name].rows_where("installation_id = ?", [installation_id])))
        if suspended and not known:
            store.db[SUSPENDED.name].insert({"installation_id": installation_id, "at": at, "by": by})
        elif known and not suspended:
            store.db[SUSPENDED.name].delete(installation_id)
    return suspended != known


def suspended(store: Store) -> dict[int, dict]:
    """The suspended installations: ``{installation_id: {"installation_id", "at", "by"}}``."""
    with store.lock:
        return {r["installation_id"]: r for r in store.db[SUSPENDED.name].rows_where()}


def paused_forks(store: Store) -> list[dict]:
    """Tracked forks whose installation is suspended, by name: ``[{"fork", "installation_id",
    "since", "by"}]`` (``since``: epoch s)."""
    off = suspended(store)
    return [{"fork": r["fork"], "installation_id": r["installation_id"], "since": off[r["installation_id"]]["at"],
             "by": off[r["installation_id"]]["by"]} for r in tracked_forks(store) if r["installation_id"] in off]


def mark_polled(store: Store, fork: str, now: float) -> None:
    with store.lock:
        store.db[TRACKED.name].update(fork, {"last_poll_at": now})


# ---------------------------------------------------------------------- ingest caches
def cached_analyses(store: Store, shas: list[str]) -> list[tuple[str, int, str]]:
    """``(sha, version, data)`` rows of ``commit_analysis`` for ``shas`` (queried 500 at a time)."""
    out = []
    with store.lock:
        for i in range(0, len(shas), 500):
            chunk = shas[i:i + 500]
            out += store.conn.execute(
                f"SELECT sha, version, data FROM commit_analysis WHERE sha IN ({','.join('?' * len(chunk))})",
                chunk).fetchall()
    return out


def save_analyses(store: Store, rows: list[dict]) -> None:
    with store.lock:
        store.db[COMMIT_TABLE.name].insert_all(rows, pk="sha", replace=True, batch_size=500)


def record_pins(store: Store, row: dict) -> None:
    """Append one ``pin_history`` row (``recorded_at``, ``as_of``, ``fork_tip``, ``upstream_tip``, ``data``)."""
    with store.lock:
        store.db[PIN_TABLE.name].insert(row)


# ---------------------------------------------------------------------- the dashboard's history
# What the dashboard pages read (docs/dashboard.md): the numbers of every sync over time, and
# the ledger and plan as last computed, so no page recomputes anything from git.
METRICS_SNAPSHOTS = table("metrics_snapshots", {
    "id": int,
    "repo": str,
    "at": float,                  # when the numbers were computed (epoch s); a backfilled point: the end of its day
    "upstream_as_of": float,      # last successful fetch of upstream at that time (epoch s); 0 = never
    "upstream_head": str, "frontier": str, "contiguous_pin": str,
    "days_behind": float, "contiguous_lag_days": float, "backlog": int, "not_reached": int,
    "open_units": int,
    "source": str,                # sync | refresh | fetch-failed | backfill | backfill-before-fork
    "fetch_error": str,
    "stale_after_s": float,       # the fork's github.stale_after_s when written (0: not known)
}, pk="id", indexes=[("repo", "at")])

LEDGER_SNAPSHOT = table("ledger_snapshot", {
    "key": str,                   # "<fork>:<upstream sha>"
    "repo": str, "idx": int, "sha": str, "pr": int, "subject": str, "time": int, "disposition": str,
    "fork_commit": str, "reason": str, "isolated": int,
    "areas": str,                 # ",area,area," (commas at both ends, for LIKE '%,area,%')
    "evidence_json": str,         # [{"rule","fork_commit","detail"}]
}, pk="key", indexes=[("repo", "idx"), ("repo", "disposition")])

PLAN_SNAPSHOT = table("plan_snapshot", {
    "repo": str, "at": float,
    "units_json": str,            # [{"id","kind","shas","depends_on","areas","reason"}]
}, pk="repo")

#: Metrics snapshots older than this many days are dropped when a newer one is written.
KEEP_SNAPSHOT_DAYS = 400.0


def record_snapshot(store: Store, row: dict, keep_days: float = KEEP_SNAPSHOT_DAYS) -> None:
    """Append one ``metrics_snapshots`` row and drop the fork's rows older than ``keep_days``
    before its ``at``."""
    with store.lock:
        store.db[METRICS_SNAPSHOTS.name].insert({k: v for k, v in row.items() if k != "id"})
        store.conn.execute("DELETE FROM metrics_snapshots WHERE repo = ? AND at < ?",
                           [row["repo"], row["at"] - keep_days * 86_400])


def record_snapshots(store: Store, rows: list[dict]) -> None:
    """Append many ``metrics_snapshots`` rows in one transaction (a backfill)."""
    with store.lock:
        store.db[METRICS_SNAPSHOTS.name].insert_all([{k: v for k, v in r.items() if k != "id"} for r in rows])


def snapshots(store: Store, repo: str, since: float = 0.0) -> list[dict]:
    """The fork's ``metrics_snapshots`` rows at or after ``since`` (epoch s), oldest first."""
    with store.lock:
        return list(store.db[METRICS_SNAPSHOTS.name].rows_where("repo = ? AND at >= ?", [repo, since],
                                                                order_by="at, id"))


def last_snapshot(store: Store, repo: str) -> dict | None:
    """The fork's newest ``metrics_snapshots`` row, or None."""
    with store.lock:
        rows = list(store.db[METRICS_SNAPSHOTS.name].rows_where("repo = ?", [repo], order_by="at desc, id desc", limit=1))
    return rows[0] if rows else None


def recorded_stale_after_s(store: Store, repo: str) -> float | None:
    """The fork's ``github.stale_after_s`` as its last sync recorded it (None: none recorded), by
    which the dashboard and ``/metrics`` judge its numbers stale, as the status issue does."""
    last = last_snapshot(store, repo)
    return (last or {}).get("stale_after_s") or None


def snapshot_repos(store: Store) -> list[str]:
    """Every fork with a metrics history."""
    with store.lock:
        return [r[0] for r in store.conn.execute("SELECT DISTINCT repo FROM metrics_snapshots ORDER BY repo")]


def has_snapshots(store: Store, repo: str) -> bool:
    with store.lock:
        return store.conn.execute("SELECT 1 FROM metrics_snapshots WHERE repo = ? LIMIT 1", [repo]).fetchone() is not None


def replace_ledger(store: Store, repo: str, rows: list[dict]) -> None:
    """The fork's ``ledger_snapshot`` becomes ``rows`` (one transaction: a reader sees the old or the new one)."""
    with store.transaction() as conn:
        conn.execute("DELETE FROM ledger_snapshot WHERE repo = ?", [repo])
        cols = list(LEDGER_SNAPSHOT.columns)
        conn.executemany(f"INSERT INTO ledger_snapshot ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                         [[r.get(c) for c in cols] for r in rows])


def save_plan(store: Store, repo: str, at: float, units: list[dict]) -> None:
    """The fork's plan becomes ``units``; each keeps ``first_planned_at`` (epoch s) from the last
    plan that held the same unit id, else from its row in flight, else ``at`` (a unit id is
    stable: its age). Each unit in flight (its ``sync_branches`` row open or blocked) that this
    plan or the last one lists gets that time and its areas on its row, where they stay once a
    plan no longer lists it (:func:`kept_plan_facts`)."""
    with store.lock:
        old = load_plan(store, repo)
        rows = {r["unit_id"]: r for r in store.db[SYNC_BRANCHES.name].rows_where(
            "repo = ? and state in ('open', 'blocked') and coalesce(unit_id, '') != ''", [repo])}
        before = {u["id"]: u.get("first_planned_at", at) for u in old}
        units = [{**u, "first_planned_at": before.get(u["id"]) or rows.get(u["id"], {}).get("first_planned_at") or at}
                 for u in units]
        store.db[PLAN_SNAPSHOT.name].upsert({"repo": repo, "at": at, "units_json": json.dumps(units)}, pk="repo")
        # the new plan's facts win over the last one's (a re-listed unit's areas may have grown)
        for u in [*old, *units]:
            row = rows.get(u["id"])
            if row is None:
                continue
            facts = {"first_planned_at": row.get("first_planned_at") or u.get("first_planned_at") or at,
                     "areas_json": json.dumps(list(u.get("areas") or []))}
            if any(row.get(k) != v for k, v in facts.items()):
                row.update(facts)
                store.db[SYNC_BRANCHES.name].update(row["key"], facts)


def kept_plan_facts(row: dict) -> dict:
    """Pure: what a ``sync_branches`` row kept of the last plan that listed its unit (:func:`save_plan`):
    ``{"first_planned_at": epoch s or None, "areas": [names]}`` (None and ``[]`` when none did)."""
    return {"first_planned_at": row.get("first_planned_at") or None, "areas": list(json.loads(row.get("areas_json") or "[]"))}


def load_plan(store: Store, repo: str) -> list[dict]:
    """The units of the fork's last plan (``[]`` when it was never planned)."""
    with store.lock:
        rows = list(store.db[PLAN_SNAPSHOT.name].rows_where("repo = ?", [repo]))
    return json.loads(rows[0]["units_json"]) if rows else []


def all_branches(store: Store, repo: str) -> list[dict]:
    """Every sync branch row of the fork, by branch name."""
    with store.lock:
        return list(store.db[SYNC_BRANCHES.name].rows_where("repo = ?", [repo], order_by="branch"))


def _like_literal(text: str) -> str:
    """``text`` as a part of a LIKE pattern with ``ESCAPE '\\'`` that matches itself only: ``%``
    and ``_`` are wildcards to LIKE, and a filter value is a name, not a pattern."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def query_ledger(store: Store, repo: str, *, dispositions: tuple[str, ...] = (), area: str = "",
                 since: int | None = None, until: int | None = None, sha_prefix: str = "", pr: int | None = None,
                 words: str = "", offset: int = 0, limit: int = 100) -> tuple[int, list[dict]]:
    """``(matching count, rows)`` of the fork's ``ledger_snapshot`` in upstream order. Filters
    combine with AND: ``dispositions`` (any of), ``area`` (exact: ``%`` and ``_`` are no
    wildcards), ``since``/``until`` (commit time, epoch s, inclusive/exclusive), ``sha_prefix``
    (hex digits), ``pr``, ``words`` (all in the subject, case-insensitive)."""
    where, args = ["repo = ?"], [repo]
    if dispositions:
        where.append(f"disposition IN ({', '.join('?' * len(dispositions))})")
        args += list(dispositions)
    if area:
        where.append("areas LIKE ? ESCAPE '\\'")
        args.append(f"%,{_like_literal(area)},%")
    if since is not None:
        where.append("time >= ?")
        args.append(since)
    if until is not None:
        where.append("time < ?")
        args.append(until)
    if sha_prefix:
        where.append("sha LIKE ?")
        args.append(sha_prefix.lower() + "%")
    if pr is not None:
        where.append("pr = ?")
        args.append(pr)
    for w in words.split():
        where.append("subject LIKE ? ESCAPE '\\'")
        args.append(f"%{_like_literal(w)}%")
    sql = " AND ".join(where)
    with store.lock:
        total = store.conn.execute(f"SELECT count(*) FROM ledger_snapshot WHERE {sql}", args).fetchone()[0]
        cur = store.conn.execute(f"SELECT * FROM ledger_snapshot WHERE {sql} ORDER BY idx LIMIT ? OFFSET ?",
                                 [*args, limit, offset])
        names = [d[0] for d in cur.description]
        return total, [dict(zip(names, r)) for r in cur.fetchall()]


def upstream_of_fork_commit(store: Store, repo: str, fork_commit: str) -> str | None:
    """The upstream sha whose pick is ``fork_commit`` in the fork's ``ledger_snapshot``, else None."""
    with store.lock:
        row = store.conn.execute("SELECT sha FROM ledger_snapshot WHERE repo = ? AND fork_commit = ? ORDER BY idx LIMIT 1",
                                 [repo, fork_commit]).fetchone()
    return row[0] if row else None


def branches_carrying(store: Store, repo: str, sha: str) -> list[dict]:
    """The fork's ``sync_branches`` rows (open or ended) whose unit carried upstream ``sha`` (full,
    in its ``shas_json``), oldest PR first."""
    with store.lock:
        rows = list(store.db[SYNC_BRANCHES.name].rows_where("repo = ? AND shas_json LIKE ?", [repo, f'%"{sha}"%'],
                                                            order_by="pr, branch"))
    return [r for r in rows if sha in json.loads(r.get("shas_json") or "[]")]


def decided_among(store: Store, repo: str, shas: list[str]) -> list[dict]:
    """``[{"sha", "disposition", "reason"}]``: those of ``shas`` (full upstream shas, an open unit's)
    that the fork's ``ledger_snapshot`` (the last sync's ledger) gives a disposition other than
    :data:`bot.model.UNDECIDED` — decided while the unit was open — in the order of ``shas``; a sha
    the snapshot does not hold is not decided."""
    if not shas:
        return []
    with store.lock:
        rows = store.conn.execute(f"SELECT sha, disposition, reason FROM ledger_snapshot WHERE repo = ? "
                                  f"AND sha IN ({', '.join('?' * len(shas))})", [repo, *shas]).fetchall()
    known = {s: (d, r or "") for s, d, r in rows}
    return [{"sha": s, "disposition": known[s][0], "reason": known[s][1]} for s in shas
            if s in known and known[s][0] not in UNDECIDED]


def ledger_summary(store: Store, repo: str) -> tuple[dict[str, int], list[str]]:
    """``(entries per disposition, every area)`` of the fork's ``ledger_snapshot``."""
    with store.lock:
        counts = dict(store.conn.execute("SELECT disposition, count(*) FROM ledger_snapshot WHERE repo = ? "
                                         "GROUP BY disposition", [repo]).fetchall())
        areas = set()
        for (a,) in store.conn.execute("SELECT DISTINCT areas FROM ledger_snapshot WHERE repo = ?", [repo]):
            areas.update(x for x in (a or "").split(",") if x)
    return counts, sorted(areas)
