"""Suite results and retest grants in the store (the GitHub side of validation).

Table ``suite_results``: one row per (fork, commit, suite, platform) — the latest run's state
(``pending`` while a runner works, ``done`` with the runner's verdict), the check run that shows
it, and the full result JSON (``gpu_runner.result.RunResult``). A run is one *attempt*
(``attempt``: the Actions request id, or a token of a ``local`` run): a result is stored only when
it answers the attempt the row waits for, so after a forced re-run (``/forksync retest``) the
earlier run's result, arriving late, never stands for the re-run; it is kept in ``superseded``
(one line each) and the gate goes on waiting. A finished result a re-run replaces is kept there
too, with the address of the check run that showed it, so what the re-run replaced (a red, say)
can still be read and opened (:func:`superseded_runs`). The gate reads these rows as
:class:`bot.validation.gate.SuiteOutcome` values; a row on an older head of the PR makes ``stale-result``,
no row ``missing-result`` (silence is not green).

Table ``pr_units``: per PR, the digest of its own commits (non-merge commits and merges with content of their own:
:func:`bot.validation.gate_inputs.own_commits`) and since when they are
what they are, so approvals and sign-offs given before a push never count for what it brought,
whatever dates its commits carry.

Table ``retest_grants``: a writer's ``/forksync retest`` on a PR head, which lets a
non-collaborator's code run on GPU runners (``PRState.retest_by_writer_on``).
"""
from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from dataclasses import dataclass

from bot import store as store_mod
from bot.validation.gate import SuiteOutcome
from gpu_runner.result import Reason
from gpu_runner.saturation import ran_short

SUITE_RESULTS = store_mod.table("suite_results", {
    "key": str,                      # "<repo>:<sha>:<suite>:<platform>"
    "repo": str, "pr": int, "sha": str, "suite": str, "platform": str, "level": str,
    "status": str,                   # pending | done
    "verdict": str,                  # pending | pass | fail | error
    "failing_json": str, "reason": str,
    "check_run_id": int, "check_url": str,
    "backend": str, "request_id": str,
    "result_json": str,
    "updated_at": float,
    "attempt": str,                  # the run the row waits for / was answered by ("" before attempts were kept)
    "superseded": str,               # results of earlier attempts a re-run replaced or that arrived after it, one per line
    "definition": str,               # digest of the suite's configuration the run ran under (:func:`definition_of`)
}, pk="key", indexes=[("repo", "sha"), ("repo", "pr"), ("request_id",)])

L3_RUNS = store_mod.table("l3_runs", {
    "id": int, "repo": str, "pr": int, "head_sha": str, "workload": str, "platform": str,
    "requested_by": str, "requested_at": int, "status": str, "verdict": str, "result_url": str,
    "finished_at": int,
    "claimed_at": float,             # when a tick last claimed it (status running)
}, pk="id", indexes=[("repo", "pr"), ("status",)])

SIGNOFFS = store_mod.table("signoffs", {
    "id": int, "repo": str, "pr": int, "head_sha": str, "target": str, "by": str, "time": int,
    "comment_url": str,
}, pk="id", indexes=[("repo", "pr")])

NIGHTLY_RUNS = store_mod.table("nightly_runs", {
    "key": str, "repo": str, "sha": str, "dispatched_at": float, "alarm_issue": int,
    "alarm_closed_at": float,        # when its alarm was closed, every result being in (0: open or none)
    "pairs": str,                    # the (suite, platform) pairs it ran, JSON, sorted ("" before they were kept)
    "covers": float,                 # a later scheduled time this run stood for, nothing new to run then (0: none)
}, pk="key", indexes=[("repo",)])

PR_UNITS = store_mod.table("pr_units", {
    "key": str,                      # "<repo>#<pr>"
    "repo": str, "pr": int, "digest": str, "since": float,
    "heads_json": str,               # the heads seen carrying that digest, oldest first
}, pk="key")

PR_HEADS = store_mod.table("pr_heads", {
    "key": str,                      # "<repo>#<pr>@<head sha>"
    "repo": str, "pr": int, "head_sha": str, "seen": float,
}, pk="key")

RETEST_GRANTS = store_mod.table("retest_grants", {
    "key": str, "repo": str, "pr": int, "head_sha": str, "by": str, "time": float,
}, pk="key", indexes=[("repo", "pr")])


def result_key(repo: str, sha: str, suite: str, platform: str) -> str:
    return f"{repo}:{sha}:{suite}:{platform}"


def _upsert(db, row: dict) -> None:
    with db.lock:
        db.db[SUITE_RESULTS.name].upsert(row, pk="key", alter=True)


def get(db, repo: str, sha: str, suite: str, platform: str) -> dict | None:
    with db.lock:
        rows = list(db.db[SUITE_RESULTS.name].rows_where("key = ?", [result_key(repo, sha, suite, platform)]))
    return rows[0] if rows else None


def attempt_of(row: dict) -> str:
    """The attempt a row waits for (or was answered by); rows stored before attempts were kept
    name their Actions request only."""
    return row.get("attempt") or row.get("request_id") or ""


#: the most a row's ``superseded`` keeps, in characters: its newest whole lines
SUPERSEDED_CAP = 4000


def _with_check_url(line: str, check_url: str) -> str:
    """``line`` with the superseded run's check run address appended, when the line stays one
    whole line within :data:`SUPERSEDED_CAP` with it (a blank or line break in the address, or one
    too long, would make the line unreadable by :func:`superseded_runs`: it is left out)."""
    if not check_url or not re.fullmatch(r"\S+", check_url) or len(line) + 1 + len(check_url) > SUPERSEDED_CAP:
        return line
    return f"{line} {check_url}"


def _with_note(notes: str, line: str) -> str:
    """``notes`` with ``line`` appended, then its oldest lines dropped until the whole fits in
    :data:`SUPERSEDED_CAP`: a line cut in the middle could no longer be read (:func:`superseded_runs`)."""
    lines = [x for x in notes.splitlines() if x] + [line[-SUPERSEDED_CAP:]]
    while len(lines) > 1 and len("\n".join(lines)) > SUPERSEDED_CAP:
        lines.pop(0)
    return "\n".join(lines)


def definition_of(suite) -> str:
    """A digest of ``suite`` (a ``SuiteConfig``): two runs of a commit under different digests ran
    different suites (another command, another expected count), so one's red and the other's green
    say nothing about a flake."""
    return hashlib.sha256(suite.model_dump_json().encode()).hexdigest()[:16]


def mark_pending(db, *, repo: str, pr: int, sha: str, suite: str, platform: str, level: str, backend: str,
                 now: float, check_run_id: int = 0, check_url: str = "", request_id: str = "",
                 definition: str = "") -> str:
    """A run was started (or dispatched): the gate shows ``pending-result`` until it reports.
    Returns the run's attempt (``request_id``, else a new ``local-…`` token), which its result
    must answer (:func:`record`). The earlier notes of superseded results are kept, and a finished
    result this run replaces (a forced re-run on the same commit) joins them, with the address of
    the check run that showed it: the row (and its ``check_url``) is the re-run's from now on, and
    a person can still see and open what it replaced."""
    attempt = request_id or f"local-{uuid.uuid4().hex[:16]}"
    key = result_key(repo, sha, suite, platform)
    # one transaction: another worker process's result is not written between the read and the write
    with db.transaction():
        old = get(db, repo, sha, suite, platform) or {}
        notes = old.get("superseded") or ""
        if old.get("status") == "done":
            # the replaced result's reason codes and suite definition stay with it: only a red of
            # failing tests under the same definition is a flake once a re-run is green
            codes = ",".join(dict.fromkeys(r.code for r in row_reasons(old)))
            line = (f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now))} request {attempt_of(old) or '?'}: "
                    f"{old['verdict']}[{codes}]" + (f"@{old['definition']}" if old.get("definition") else "")
                    + f" (replaced by a re-run, request {attempt}; not counted)")
            notes = _with_note(notes, _with_check_url(line, old.get("check_url") or ""))
        _upsert(db, {"key": key, "repo": repo, "pr": pr, "sha": sha, "suite": suite,
                     "platform": platform, "level": level, "status": "pending", "verdict": "pending",
                     "failing_json": "[]", "reason": "", "check_run_id": check_run_id, "check_url": check_url,
                     "backend": backend, "request_id": request_id, "result_json": "", "updated_at": now,
                     "attempt": attempt, "superseded": notes, "definition": definition})
    return attempt


#: Where a reason starts in a row's ``reason``: its code (lowercase words joined by hyphens) at
#: the start or after the "; " that :func:`record` joins reasons with, then ": ".
_REASON_AT = re.compile(r"(?:^|; )([a-z][a-z0-9]*(?:-[a-z0-9]+)+): ")


def reasons_of(text: str) -> list[Reason]:
    """The reasons of a row's ``reason`` (``"code: detail; code: detail"``, as :func:`record`
    writes them), in order; a text in no such form is one reason with code ``""``. Only for a
    row with no readable result JSON: the text is for a person, its details may hold anything."""
    starts = list(_REASON_AT.finditer(text or ""))
    if not starts:
        return [Reason(code="", detail=text)] if text else []
    ends = [m.start() for m in starts[1:]] + [len(text)]
    return [Reason(code=m[1], detail=text[m.end():end]) for m, end in zip(starts, ends)]


def row_reasons(row: dict) -> list[Reason]:
    """The reasons of a ``suite_results`` row, in order: those of its result JSON
    (``result_json``: each with its code, detail and, for the count reasons, its counts), as the
    runner wrote them. A row without a readable result JSON (pending, or written by hand or by an
    earlier release) falls back to its ``reason`` text read by :func:`reasons_of`."""
    try:
        found = json.loads(row.get("result_json") or "null")
        if isinstance(found, dict):
            return [Reason.model_validate(r) for r in found.get("reasons") or []]
    except (ValueError, TypeError):
        pass                # pydantic's ValidationError is a ValueError: fall back to the text
    return reasons_of(row.get("reason") or "")


def only_short(row: dict) -> bool:
    """Whether every reason of a ``suite_results`` row (:func:`row_reasons`) is a shortfall of
    the suite's count of tests (:func:`gpu_runner.saturation.ran_short`): the suite ran fewer
    tests than it promises, and nothing else is wrong with it."""
    reasons = row_reasons(row)
    return bool(reasons) and all(ran_short(r) for r in reasons)


def record(db, *, repo: str, pr: int, result, now: float, check_run_id: int = 0, check_url: str = "",
           answers: str | None = None) -> str | None:
    """Store a finished run (``RunResult``). Keeps the check run of the pending row when none is given.
    ``answers``: the attempt the result is of (:func:`mark_pending`'s answer). When the row now
    waits for another attempt (a re-run was asked after this run started) the result is not
    stored: a line goes to the row's ``superseded`` and the attempt it lost to is returned (None
    when stored). Without ``answers`` (a result not tied to a run) it is stored as before."""
    key = result_key(repo, result.commit, result.suite, result.platform)
    # one transaction: a re-run marked pending by another process lands before or after, never between
    with db.transaction():
        old = get(db, repo, result.commit, result.suite, result.platform) or {}
        current = attempt_of(old)
        if answers is not None and old and current != answers:
            line = (f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now))} request {answers}: {result.outcome} "
                    f"(arrived after a re-run, request {current or '?'}, was asked; not counted)")
            _upsert(db, {**old, "superseded": _with_note(old.get("superseded") or "", line)})
            return current or "?"
        reason = "; ".join(f"{r.code}: {r.detail}" for r in result.reasons)
        _upsert(db, {"key": key, "repo": repo,
                     "pr": pr or old.get("pr", 0), "sha": result.commit, "suite": result.suite,
                     "platform": result.platform, "level": result.level, "status": "done", "verdict": result.outcome,
                     "failing_json": json.dumps(list(result.failing)), "reason": reason[:4000],
                     "check_run_id": check_run_id or old.get("check_run_id", 0),
                     "check_url": check_url or old.get("check_url", ""), "backend": result.backend,
                     "request_id": old.get("request_id", ""), "result_json": result.to_json(), "updated_at": now,
                     "attempt": answers if answers is not None else current, "superseded": old.get("superseded") or "",
                     "definition": old.get("definition") or ""})
    return None


_SUPERSEDED = re.compile(r"(?P<at>\S+) request (?P<attempt>\S+): (?P<outcome>[^\s\[@]+)(?:\[(?P<codes>[^\]\s]*)\])?"
                         r"(?:@(?P<definition>[0-9a-f]+))? \((?:arrived after a re-run, request "
                         r"(?P<late_by>\S+), was asked|replaced by a re-run, request (?P<replaced_by>\S+)); not counted\)"
                         r"(?: (?P<check_url>\S+))?")


def superseded_runs(row: dict) -> list[dict]:
    """The results a row keeps aside (its ``superseded`` lines), oldest first, each
    ``{"at": "YYYY-MM-DDTHH:MM:SSZ" | None, "attempt", "outcome": "pass" | "fail" | "error" | …,
    "codes": its reasons' codes (None for a line written before they were kept), "definition": the
    suite definition it ran under (:func:`definition_of`; "" when unknown),
    "by": the attempt that replaced it, "how": "replaced" (a finished result a re-run replaced) |
    "late" (it arrived after a re-run was asked) | "" (a line not in either form, e.g. one cut by
    the column's cap before whole lines were kept), "check_url": the check run that showed it (a
    replaced result's; None for a late one, which completed no check run, and for lines stored
    before it was kept), "text": the line}``. None of them is the row's result."""
    out = []
    for line in (row.get("superseded") or "").splitlines():
        m = _SUPERSEDED.fullmatch(line.strip())
        if m is None:
            out.append({"at": None, "attempt": "", "outcome": "", "codes": None, "definition": "", "by": "", "how": "",
                        "check_url": None, "text": line})
            continue
        late = m["late_by"] is not None
        out.append({"at": m["at"], "attempt": m["attempt"], "outcome": m["outcome"],
                    "codes": None if m["codes"] is None else tuple(c for c in m["codes"].split(",") if c),
                    "definition": m["definition"] or "",
                    "by": m["late_by"] if late else m["replaced_by"], "how": "late" if late else "replaced",
                    "check_url": m["check_url"], "text": line})
    return out


def stood_in(row: dict) -> bool:
    """True when the row's result is one the bot stood in for a run that sent none — its only
    reason (:func:`row_reasons`) ``workflow-failed`` (the collect tick's "no result" after its time
    limit, a completed run without its artifact), a code no runner writes. The run's own result,
    arriving later for the same attempt (a queued self-hosted runner), replaces it."""
    reasons = row_reasons(row)
    return bool(reasons) and all(r.code == "workflow-failed" for r in reasons)


def by_request(db, request_id: str) -> dict | None:
    with db.lock:
        rows = list(db.db[SUITE_RESULTS.name].rows_where("request_id = ?", [request_id]))
    return rows[0] if rows else None


def rows_for(db, repo: str, *, shas: tuple[str, ...] = (), pr: int | None = None) -> list[dict]:
    """Rows of ``repo`` on any of ``shas`` or of PR ``pr`` (older heads included)."""
    out: dict[str, dict] = {}
    with db.lock:
        t = db.db[SUITE_RESULTS.name]
        for s in shas:
            for r in t.rows_where("repo = ? and sha = ?", [repo, s]):
                out[r["key"]] = r
        if pr:
            for r in t.rows_where("repo = ? and pr = ?", [repo, pr]):
                out[r["key"]] = r
    return sorted(out.values(), key=lambda r: (r["updated_at"], r["key"]))


def outcome(row: dict) -> SuiteOutcome:
    """The gate's view of one row: verdict, failing tests, and the ids of the tests that were
    skipped (or xfail) and that ran, read from the stored result JSON (empty while pending)."""
    skipped: tuple[str, ...] = ()
    ran: tuple[str, ...] = ()
    if row.get("result_json"):
        try:
            tests = json.loads(row["result_json"]).get("tests") or []
        except (ValueError, AttributeError):
            tests = []
        skipped = tuple(t.get("id", "") for t in tests if t.get("outcome") == "skipped")
        ran = tuple(t.get("id", "") for t in tests if t.get("outcome") in ("passed", "failed", "error"))
    return SuiteOutcome(row["suite"], row["sha"], row["platform"], row["verdict"],
                        tuple(json.loads(row["failing_json"] or "[]")), row["reason"], row["check_url"],
                        skipped=skipped, ran=ran)


def latest_trunk_rows(db, repo: str, suites: tuple[str, ...]) -> list[dict]:
    """The newest finished trunk result (rows stored with ``pr`` 0: runs on the base, nightlies)
    of each suite and platform in ``suites``, oldest first — the base's last result when none is
    on the current base tip."""
    out: dict[tuple[str, str], dict] = {}
    with db.lock:
        t = db.db[SUITE_RESULTS.name]
        for name in suites:
            for r in t.rows_where("repo = ? and suite = ? and pr = 0 and status = 'done'", [repo, name],
                                  order_by="updated_at"):
                out[(r["suite"], r["platform"])] = r
    return sorted(out.values(), key=lambda r: (r["updated_at"], r["key"]))


def unit_seen(db, repo: str, pr: int, digest: str, *, first: float, now: float, head: str = "",
              record: bool = True) -> tuple[float, tuple[str, ...]]:
    """Since when PR ``pr``'s own commits (``digest``: :func:`bot.validation.gate_inputs.unit_digest`)
    are what they are now, and the heads forksync saw carrying exactly them (``head`` added): the
    stored time while the digest is unchanged; ``now`` (stored) when it changed since the last look;
    ``first`` the first time the PR is seen. A review given on one of those heads saw these commits.
    ``record=False`` answers the same without storing (a digest taken while the trees could not be
    read, which must not become the one later looks compare with)."""
    key = f"{repo}#{pr}"
    with db.lock:
        t = db.db[PR_UNITS.name]
        rows = list(t.rows_where("key = ?", [key]))
        if rows and rows[0]["digest"] == digest:
            since = rows[0]["since"]
            heads = tuple(json.loads(rows[0].get("heads_json") or "[]"))
        else:
            since = now if rows else first
            heads = ()
        if head and head not in heads:
            heads += (head,)
        if record:
            t.upsert({"key": key, "repo": repo, "pr": pr, "digest": digest, "since": since,
                      "heads_json": json.dumps(list(heads))}, pk="key", alter=True)
        return since, heads


def head_seen(db, repo: str, pr: int, head_sha: str, now: float) -> float:
    """When forksync first saw ``head_sha`` as PR ``pr``'s head (``now``, stored, the first time)."""
    key = f"{repo}#{pr}@{head_sha}"
    with db.lock:
        t = db.db[PR_HEADS.name]
        rows = list(t.rows_where("key = ?", [key]))
        if rows:
            return rows[0]["seen"]
        t.insert({"key": key, "repo": repo, "pr": pr, "head_sha": head_sha, "seen": now}, pk="key")
        return now


def grant_retest(db, repo: str, pr: int, head_sha: str, by: str, now: float) -> None:
    with db.lock:
        db.db[RETEST_GRANTS.name].upsert({"key": f"{repo}#{pr}@{head_sha}", "repo": repo, "pr": pr,
                                          "head_sha": head_sha, "by": by, "time": now}, pk="key")


def retest_shas(db, repo: str, pr: int) -> tuple[str, ...]:
    with db.lock:
        return tuple(r["head_sha"] for r in db.db[RETEST_GRANTS.name].rows_where("repo = ? and pr = ?", [repo, pr],
                                                                                 order_by="time"))


def ensure(db) -> None:
    """Create the validation tables (results, retest grants, sign-offs, L3 runs, nightlies) when the
    store was opened before they were declared."""
    db.ensure(SUITE_RESULTS, RETEST_GRANTS, SIGNOFFS, L3_RUNS, NIGHTLY_RUNS, PR_UNITS, PR_HEADS)


def pending_dispatches(db, repo: str) -> list[dict]:
    """Results still pending for a dispatched run (``request_id`` set), as stored rows."""
    with db.lock:
        return list(db.db[SUITE_RESULTS.name].rows_where("repo = ? and status = 'pending' and request_id != ''",
                                                         [repo]))


def nightly_runs(db, repo: str) -> list[dict]:
    """The fork's nightly runs, newest dispatch first."""
    with db.lock:
        return list(db.db[NIGHTLY_RUNS.name].rows_where("repo = ?", [repo], order_by="dispatched_at desc"))


def record_nightly(db, repo: str, sha: str, now: float, pairs: str = "") -> None:
    """A nightly dispatched at ``now`` (epoch s) on trunk ``sha``, running ``pairs`` (JSON)."""
    with db.lock:
        db.db[NIGHTLY_RUNS.name].upsert({"key": f"{repo}@{sha}@{int(now)}", "repo": repo, "sha": sha,
                                         "dispatched_at": now, "alarm_issue": 0, "pairs": pairs}, pk="key")


def cover_nightly(db, key: str, slot: float) -> None:
    """Record that nightly ``key`` stood for the scheduled time ``slot`` (epoch s) too."""
    with db.lock:
        db.db[NIGHTLY_RUNS.name].update(key, {"covers": slot})


def set_nightly_alarm(db, key: str, issue: int) -> None:
    with db.lock:
        db.db[NIGHTLY_RUNS.name].update(key, {"alarm_issue": issue})


def close_nightly_alarm(db, key: str, now: float) -> None:
    """Record that nightly ``key``'s alarm was closed at ``now`` (epoch s): its results all came."""
    with db.lock:
        db.db[NIGHTLY_RUNS.name].update(key, {"alarm_closed_at": now})


# ---------------------------------------------------------------------- sign-offs and L3 runs
@dataclass(frozen=True)
class L3Run:
    id: int
    repo: str
    pr: int
    head_sha: str
    workload: str
    platform: str
    requested_by: str
    requested_at: int
    status: str = "queued"
    verdict: str = ""
    result_url: str = ""
    finished_at: int = 0
    claimed_at: float | None = 0


def insert_signoff(db, row: dict) -> None:
    with db.lock:
        db.db[SIGNOFFS.name].insert(row)


def signoff_rows(db, repo: str, pr: int) -> list[dict]:
    """The sign-off rows of ``repo#pr``, oldest first."""
    return list(db.db[SIGNOFFS.name].rows_where("repo = ? and pr = ?", [repo, pr], order_by="time, id"))


def withdraw_signoffs(db, repo: str, pr: int, target: str, by: str, comment_url: str) -> int:
    """Delete ``by``'s sign-offs of ``target`` on ``repo#pr`` recorded from the comment (or review)
    at ``comment_url``; returns how many there were."""
    with db.lock:
        cur = db.conn.execute("DELETE FROM signoffs WHERE repo = ? AND pr = ? AND target = ? AND by = ? "
                              "AND comment_url = ?", [repo, pr, target, by, comment_url])
        return cur.rowcount


def queue_l3_runs(db, repo: str, pr: int, head_sha: str, workload: str, platforms, requested_by: str,
                  time: int) -> tuple[L3Run, ...]:
    """One queued run of ``workload`` per platform; a run already queued or running for the same
    head, workload and platform is returned instead of a new one."""
    return tuple(run for run, _ in queue_l3_runs_marked(db, repo, pr, head_sha, workload, platforms, requested_by, time))


def queue_l3_runs_marked(db, repo: str, pr: int, head_sha: str, workload: str, platforms, requested_by: str,
                         time: int) -> tuple[tuple[L3Run, bool], ...]:
    """:func:`queue_l3_runs`, each run paired with whether this call queued it (False: it was
    already queued or running), decided under the store's lock so two requests at once never
    both say they queued it."""
    out = []
    with db.lock:
        t = db.db[L3_RUNS.name]
        for plat in platforms:
            existing = list(t.rows_where(
                "repo = ? and pr = ? and head_sha = ? and workload = ? and platform = ? and status in ('queued','running')",
                [repo, pr, head_sha, workload, plat]))
            if existing:
                out.append((L3Run(**existing[0]), False))
                continue
            row = {"repo": repo, "pr": pr, "head_sha": head_sha, "workload": workload, "platform": plat,
                   "requested_by": requested_by, "requested_at": time, "status": "queued", "verdict": "",
                   "result_url": "", "finished_at": 0}
            rid = t.insert(row).last_pk
            out.append((L3Run(id=rid, **row), True))
    return tuple(out)


def claim_l3(db, platform: str, repo: str | None = None, *, now: float = 0.0,
             stale_before: float | None = None) -> L3Run | None:
    """Claim the oldest queued L3 run on ``platform`` (of ``repo`` when given): status → running,
    ``claimed_at`` = ``now`` (epoch s). With ``stale_before`` (epoch s), a run still ``running``
    from a claim made before it (or before claims were dated) is claimed again: the worker that
    held it died, or its tick failed before the run could be put back, and nothing else would
    ever run or answer it."""
    where = "status = 'queued'"
    args: list = []
    if stale_before is not None:
        where = "(status = 'queued' or (status = 'running' and coalesce(claimed_at, 0) < ?))"
        args.append(stale_before)
    where += " and platform = ?"
    args.append(platform)
    if repo is not None:
        where += " and repo = ?"
        args.append(repo)
    with db.lock:
        t = db.db[L3_RUNS.name]
        rows = list(t.rows_where(where, args, order_by="requested_at, id", limit=1))
        if not rows:
            return None
        t.update(rows[0]["id"], {"status": "running", "claimed_at": now})
        return L3Run(**{**rows[0], "status": "running", "claimed_at": now})


def release_l3(db, run_id: int) -> bool:
    """Put a claimed run that did not get to run back in the queue (status running → queued);
    a run finished or cancelled meanwhile is left as it is. Returns whether it was put back."""
    with db.lock:
        cur = db.conn.execute("UPDATE l3_runs SET status = 'queued', claimed_at = 0 WHERE id = ? AND "
                              "status = 'running'", [run_id])
        return cur.rowcount > 0


def finish_l3_run(db, run_id: int, verdict: str, result_url: str, time: int) -> L3Run | None:
    """Record an L3 run's verdict; None for an unknown id."""
    with db.lock:
        t = db.db[L3_RUNS.name]
        try:
            t.get(run_id)
        except Exception:
            return None
        t.update(run_id, {"status": "done", "verdict": verdict, "result_url": result_url, "finished_at": time})
        return L3Run(**t.get(run_id))


def cancel_l3_run(db, run_id: int, time: int) -> None:
    """A claimed L3 run that will not run (its PR's head moved, or the PR closed): status →
    cancelled, so it neither runs nor counts (the gate shows ``l3-stale``)."""
    with db.lock:
        db.db[L3_RUNS.name].update(run_id, {"status": "cancelled", "finished_at": time})


def l3_runs_of(db, repo: str, pr: int) -> tuple[L3Run, ...]:
    return tuple(L3Run(**r) for r in db.db[L3_RUNS.name].rows_where("repo = ? and pr = ?", [repo, pr], order_by="id"))


def running_l3_of(db, repo: str, platform: str) -> bool:
    """Whether any L3 run of ``repo`` on ``platform`` is ``running``."""
    with db.lock:
        return db.conn.execute("SELECT 1 FROM l3_runs WHERE repo = ? AND platform = ? AND status = 'running' LIMIT 1",
                               [repo, platform]).fetchone() is not None


def running_l3(db, repo: str, head_sha: str, workload: str, platform: str) -> tuple[L3Run, ...]:
    """The running L3 runs a result of (head, workload, platform) answers."""
    with db.lock:
        rows = list(db.db[L3_RUNS.name].rows_where(
            "repo = ? and head_sha = ? and workload = ? and platform = ? and status = 'running'",
            [repo, head_sha, workload, platform]))
    return tuple(L3Run(**r) for r in rows)


def recent_results(db, repo: str, commits: int = 60) -> list[dict]:
    """Every ``suite_results`` row of the ``commits`` commits of ``repo`` whose newest result is
    most recent (trunk and PR heads alike), newest commit first, then suite and platform."""
    with db.lock:
        shas = [r[0] for r in db.conn.execute(
            "SELECT sha FROM suite_results WHERE repo = ? GROUP BY sha ORDER BY max(updated_at) DESC LIMIT ?",
            [repo, commits]).fetchall()]
        if not shas:
            return []
        cur = db.conn.execute(f"SELECT * FROM suite_results WHERE repo = ? AND sha IN ({', '.join('?' * len(shas))})",
                              [repo, *shas])
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r)) for r in cur.fetchall()]
    order = {s: i for i, s in enumerate(shas)}
    return sorted(rows, key=lambda r: (order[r["sha"]], r["suite"], r["platform"]))


def trunk_history(db, repo: str) -> list[dict]:
    """Finished trunk results of ``repo`` (``pr`` 0), oldest first: ``sha``, ``suite``,
    ``platform``, ``verdict``, ``updated_at``."""
    with db.lock:
        cur = db.conn.execute("SELECT sha, suite, platform, verdict, updated_at FROM suite_results WHERE repo = ? AND "
                              "pr = 0 AND status = 'done' ORDER BY updated_at, key", [repo])
        return [dict(zip(("sha", "suite", "platform", "verdict", "updated_at"), r)) for r in cur.fetchall()]
