"""The dashboard's documents (docs/dashboard.md, ``forksync.dashboard.*/1``), read from the stores.

Each function returns the JSON twin of one page as plain data; the page renders the same
document, so the numbers on a page and in its JSON are the same numbers. Nothing here touches
git or GitHub; a missing fork raises :class:`NotFound`, a bad query value :class:`BadQuery`
(answered 404 / 400 by :mod:`bot.dashboard.web`).
"""
from __future__ import annotations

import calendar
import datetime
import json
import re
import threading
import time
from dataclasses import dataclass
from typing import Callable

from bot.l2 import detection
from bot.l2 import store as l2_store
from bot.store import Store
from bot.sync import blocked as blocked_mod
from bot.sync import rewind as rewind_mod
from bot.sync import store as sync_store
from bot.sync.status import SyncStatus, followed, not_refreshed, not_refreshed_text
from bot.templating import duration, render_part
from bot.triage import store as triage_store
from bot.validation import store as validation_store

V = "forksync.dashboard"
DISPOSITIONS = ("PICKED", "NO_OP", "DEFERRED_BLOCKED", "SKIP_FOR_CURRENT_BASE", "WONT_PORT", "REVERTED", "IN_FLIGHT", "PENDING")
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
#: the dashboard's own words inside its documents, one block each
TEXTS = "dashboard/texts.txt.j2"


class NotFound(Exception):
    """An unknown fork, page, commit or unit (404)."""


class BadQuery(Exception):
    """A query value that cannot be read (400); the message names the parameter and what it takes."""


@dataclass(frozen=True)
class Policy:
    """``stale_after_s``: numbers older than this are stale (``github.stale_after_s``'s default)."""

    stale_after_s: float = 86_400.0


def iso(t: float | int | None) -> str | None:
    """Epoch seconds → ``YYYY-MM-DDTHH:MM:SSZ`` (None for 0/None)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)) if t else None


def fork_github(fork: str, tail: str = "") -> str | None:
    """The GitHub address of fork ``owner/name`` (``tail``: a path under it, e.g. ``commit/<sha>``);
    None for a fork the CLI named after a local path (``local/<dir>``): it is on no GitHub."""
    if not fork or fork.startswith("local/"):
        return None
    return f"https://github.com/{fork}" + (f"/{tail}" if tail else "")


def github_of(upstream: str) -> str | None:
    """The GitHub web address of a repository named ``owner/name`` or by its https URL; None for a path."""
    if _REPO.match(upstream or ""):
        return f"https://github.com/{upstream}"
    m = re.match(r"^https://github\.com/([\w.\-]+/[\w.\-]+?)(?:\.git)?/?$", upstream or "")
    return f"https://github.com/{m.group(1)}" if m else None


def fork_policy(store: Store, fork: str, policy: Policy) -> Policy:
    """``policy`` with the fork's own ``github.stale_after_s`` as recorded by its last sync, if any."""
    limit = sync_store.recorded_stale_after_s(store, fork)
    return Policy(stale_after_s=limit) if limit else policy


def followed_by(store: Store) -> Callable[[str], str]:
    """``why(fork)``: why a fork's work stopped on an owner's decision ("" when it is followed),
    :func:`bot.sync.status.followed` over the store's suspended installations and unfollowed forks,
    both read once here (a page asks it of every fork)."""
    paused, gone = {p["fork"] for p in sync_store.paused_forks(store)}, sync_store.unfollowed(store)
    return lambda fork: followed(fork, paused=paused, unfollowed=gone)


def stale_of(st: SyncStatus | None, now: float, policy: Policy, paused: str = "") -> dict:
    """``{"stale", "reason"}`` by the rule of :mod:`bot.sync.status` (:meth:`SyncStatus.stale_reason`).
    ``paused``: :func:`followed_by`'s reason; numbers an owner stopped are not stale, only old."""
    if paused:
        return {"stale": False, "reason": ""}
    if st is None:
        return {"stale": True, "reason": render_part(TEXTS, "never_synced")}
    reason = st.stale_reason(policy.stale_after_s, now)
    return {"stale": bool(reason), "reason": reason}


def fork_names(store: Store) -> list[str]:
    """Every fork the store knows: synced, tracked, with triaged nightlies, or with a metrics history."""
    names = {s.repo for s in sync_store.load_all_statuses(store)} | {r["fork"] for r in sync_store.tracked_forks(store)}
    names |= {f["repo"] for f in triage_store.followups(store) if f.get("repo")}
    names |= {r for r in triage_store.repos(store) if r}
    return sorted(names | set(sync_store.snapshot_repos(store)))


def _status(store: Store, fork: str) -> SyncStatus | None:
    st = sync_store.load_status(store, fork)
    if st is None and fork not in fork_names(store):
        raise NotFound(render_part(TEXTS, "no_fork", fork=repr(fork)))
    return st


def _common(store: Store, fork: str, st: SyncStatus | None, now: float, policy: Policy, name: str) -> dict:
    upstream = st.upstream if st else next((r["upstream"] for r in sync_store.tracked_forks(store) if r["fork"] == fork), "")
    return {"schema": f"{V}.{name}/1", "fork": fork, "github": fork_github(fork), "upstream": upstream,
            "upstream_github": github_of(upstream),
            "upstream_as_of": iso(st.upstream_seen_at) if st else None,
            "upstream_as_of_unknown": (st.upstream_unknown or None) if st and not st.upstream_seen_at else None,
            "followed": (why := followed_by(store)(fork)),
            "stale": stale_of(st, now, fork_policy(store, fork, policy), why)}


def forks(store: Store, now: float, policy: Policy, allowed: Callable[[str], bool] = lambda f: True) -> dict:
    out = []
    why_of = followed_by(store)
    for f in fork_names(store):
        if not allowed(f):
            continue
        st = sync_store.load_status(store, f)
        why = why_of(f)
        out.append({"fork": f, "upstream": st.upstream if st else "", "synced": bool(st and st.computed_at),
                    "upstream_as_of": iso(st.upstream_seen_at) if st else None, "followed": why,
                    "stale": stale_of(st, now, fork_policy(store, f, policy), why),
                    "days_behind": st.days_behind if st and st.computed_at else None,
                    "backlog": st.backlog if st and st.computed_at else None})
    return {"schema": f"{V}.forks/1", "forks": out}


def _pin(fork: str, sha: str) -> dict | None:
    return {"sha": sha, "url": fork_github(fork, f"commit/{sha}")} if sha else None


def overview(store: Store, fork: str, now: float, policy: Policy, queue_counts: dict[str, int] | None = None) -> dict:
    """``forksync.dashboard.overview/1``. ``queue_counts``: deliveries per state (the App's queue)."""
    st = _status(store, fork)
    doc = _common(store, fork, st, now, policy, "overview")
    up = doc["upstream_github"]
    rows = sync_store.snapshots(store, fork)
    last = rows[-1] if rows else None
    series = [{"at": iso(r["at"]), "upstream_as_of": iso(r["upstream_as_of"]), "days_behind": r["days_behind"],
               "contiguous_lag_days": r["contiguous_lag_days"], "backlog": r["backlog"], "not_reached": r["not_reached"],
               "open_units": r["open_units"], "frontier": r["frontier"], "source": r["source"]} for r in rows]
    # a frontier move from a point before the fork's first own commit is upstream's own past
    # (the fork's tip was one of upstream's commits then), not a landing of the fork's
    landings = [{"at": iso(b["at"]), "frontier": b["frontier"]} for a, b in zip(rows, rows[1:])
                if b["frontier"] and a["frontier"] and a["frontier"] != b["frontier"]
                and a["source"] != "backfill-before-fork"]
    synced = bool(st and st.computed_at)
    doc.update({
        "synced": synced,
        "frontier": ({"sha": st.frontier, "url": f"{up}/commit/{st.frontier}" if up else None} if synced and st.frontier else None),
        "contiguous_pin": ({"sha": st.contiguous_pin, "url": f"{up}/commit/{st.contiguous_pin}" if up else None}
                           if synced and st.contiguous_pin else None),
        "upstream_head": (st.upstream_head or None) if st else None, "fork_head": (st.fork_head or None) if st else None,
        # Days Behind is measured between these two commits' times, not to "now"
        "upstream_head_at": iso(st.upstream_head_at) if st and st.upstream_head_at else None,
        "frontier_at": iso(st.frontier_at) if synced and st.frontier_at else None,
        "computed_at": iso(st.computed_at) if st else None,
        "days_behind": st.days_behind if synced else None,
        "contiguous_lag_days": (last["contiguous_lag_days"] if last else None) if synced else None,
        "backlog": st.backlog if synced else None, "not_reached": st.not_reached if synced else None,
        # the figure over the list counts the list: units in flight (a PR, or a branch or a refusal
        # that stands for one); planned units waiting for a free slot are not open, and are said
        # after the list, as the status issue says them
        "open_units": [{**u, "not_refreshed": _with_text(u.get("not_refreshed"))} for u in st.units if not u.get("waiting")]
                      if st else [],
        "planned_waiting": [{"id": u["id"], "kind": u.get("kind", "")} for u in (st.units if st else ()) if u.get("waiting")],
        "max_open_sync_prs": next((u.get("cap") for u in (st.units if st else ()) if u.get("waiting")), None),
        "open_root_causes": sum(1 for c in _causes(store, fork) if c["state"] == "open"),
        "queue": dict(queue_counts or {}),
        "series": series, "landings": landings,
        "upstream_moved_back": _moved_back(st),
    })
    return doc


def _with_text(mark: dict | None) -> dict | None:
    """A unit's :func:`bot.sync.status.not_refreshed` mark with its words added (``"text"``); None
    when the last sync refreshed the unit."""
    return {**mark, "text": not_refreshed_text(mark)} if mark else None


def _moved_back(st: SyncStatus | None) -> dict | None:
    """The overview's line while upstream's branch stands moved back (:attr:`SyncStatus.rewound`):
    ``{"line", "degraded", "from", "to", "held": int, "landed": [{"sha","subject"}]}``; None when not."""
    r = st.rewound if st else None
    if not r:
        return None
    return {"line": render_part("github/upstream_rewound.txt.j2", "notice", r=r), "degraded": rewind_mod.degrades(r),
            "from": r["from"], "to": r["to"], "held": len(r.get("units", ())), "landed": list(r.get("landed", ()))}


# --------------------------------------------------------------------------- units
def units(store: Store, fork: str, now: float, policy: Policy) -> dict:
    """``forksync.dashboard.units/1``: open and blocked sync units, then branches in flight that no PR
    carries yet (recorded by ``forksync dashboard --config`` from the fork's ``forksync/*`` branches),
    then planned ones not yet opened."""
    st = _status(store, fork)
    doc = _common(store, fork, st, now, policy, "units")
    plan = {u["id"]: u for u in sync_store.load_plan(store, fork)}
    open_prs = {u.get("pr") for u in (st.units if st else ()) if u.get("pr")}
    waiting = {u["id"]: u for u in (st.units if st else ()) if u.get("waiting")}
    # the gate's wait on required checks not reported on the PR's head (bot.sync.status.SyncStatus.check_waits)
    check_waits = {w.get("branch"): w for w in (st.check_waits if st else ())}
    out, seen = [], set()
    for r in sync_store.all_branches(store, fork):
        if r.get("state") not in ("open", "blocked"):
            continue
        uid = r.get("unit_id") or r["branch"].split("/")[-1]
        seen.add(uid)
        p = plan.get(uid, {})
        shas = json.loads(r.get("shas_json") or "[]") or p.get("shas", [])
        # decided while the PR was open and still on the branch (a person's commits keep it there)
        decided = sync_store.decided_among(store, fork, shas)
        pr = r.get("pr") or None
        suites = _unit_suites(store, fork, pr, r.get("pushed_tip") or "")
        blocked = ({"reason": r["blocked_reason"], "requires": r.get("blocked_requires") or "", "step": r.get("blocked_step") or ""}
                   if r.get("blocked_reason") else None)
        if r["state"] == "blocked":
            pr_state = "blocked"
        elif pr and pr not in open_prs and open_prs:
            pr_state = "missing"         # recorded open, but the last sync found no such PR any more
        elif not pr:
            pr_state = "missing"
        else:
            pr_state = "draft" if r.get("pr_draft") else "open"     # as forksync last saw the PR
        cw = check_waits.get(r["branch"])
        check_wait = ({"checks": list(cw.get("checks") or ()), "since": cw.get("since") or None,
                       "age_s": (now - cw["since"]) if cw.get("since") else None, "overdue": bool(cw.get("overdue")),
                       "head": cw.get("head") or ""} if cw and r["state"] == "open" else None)
        gate = ("blocked: a pick failed" if blocked and blocked["step"] == "apply"
                else "blocked at a conflict" if r.get("conflict_sha") else "blocked by GitHub" if blocked
                else "not opened" if pr_state == "missing"
                else "waiting on a check that never reported" if check_wait and check_wait["overdue"] else _gate(suites))
        kept = sync_store.kept_plan_facts(r)
        started = p.get("first_planned_at") or kept["first_planned_at"] or r.get("blocked_at") or None
        out.append({"id": uid, "kind": r.get("kind") or p.get("kind", ""), "pr": pr, "branch": r["branch"],
                    "url": fork_github(fork, f"pull/{pr}") if pr and pr_state != "missing" else None,
                    "pr_state": pr_state, "state": _words(r, pr_state, gate, decided, check_wait), "gate": gate, "upstream": shas,
                    "decided": decided,
                    # out of the plan: what the unit lands after as its PR was last published
                    "depends_on": p["depends_on"] if "depends_on" in p else json.loads(r.get("depends_json") or "[]"),
                    "areas": p.get("areas") or kept["areas"],
                    "conflict_sha": r.get("conflict_sha") or None, "blocked": blocked, "suites": suites,
                    "agent_waiting_since": (r.get("agent_waiting_since") or None) if r.get("conflict_sha") else None,
                    "check_wait": check_wait, "age_s": (now - started) if started else None,
                    # the last sync did not refresh it (on hold, held by a rewind, skipped or refused)
                    "not_refreshed": _with_text(not_refreshed(r, st))})
    for u in (st.units if st else ()):
        # a branch in the fork that no PR carries yet (`forksync apply`, or a push not yet opened)
        if not u.get("in_flight") or u["id"] in seen:
            continue
        seen.add(u["id"])
        p = plan.get(u["id"], {})
        out.append({"id": u["id"], "kind": u.get("kind") or p.get("kind", ""), "pr": None, "url": None,
                    "pr_state": "in-flight", "branch": u.get("branch"), "decided": [], "state": u.get("state") or render_part(TEXTS, "in_flight"),
                    "gate": "not opened", "upstream": list(u.get("upstream") or p.get("shas", [])),
                    "depends_on": p.get("depends_on", []), "areas": p.get("areas", []), "conflict_sha": None,
                    "blocked": None, "suites": [], "agent_waiting_since": None, "check_wait": None, "age_s": None,
                    "not_refreshed": None})
    for uid, p in plan.items():
        if uid in seen:
            continue
        out.append({"id": uid, "kind": p["kind"], "pr": None, "url": None, "pr_state": "planned", "branch": None, "decided": [],
                    "state": render_part(TEXTS, "planned", cap=waiting[uid]["cap"] if uid in waiting else None),
                    "gate": "not opened", "upstream": p["shas"],
                    "depends_on": p.get("depends_on", []), "areas": p.get("areas", []), "conflict_sha": None,
                    "blocked": None, "suites": [], "agent_waiting_since": None, "check_wait": None,
                    "age_s": (now - p["first_planned_at"]) if p.get("first_planned_at") else None, "not_refreshed": None})
    ids = {u["id"] for u in out}
    doc["units"] = out
    doc["edges"] = [{"from": u["id"], "to": d} for u in out for d in u["depends_on"] if d in ids]
    return doc


def _unit_suites(store: Store, fork: str, pr: int | None, head: str) -> list[dict]:
    if not pr:
        return []
    rows = [r for r in validation_store.rows_for(store, fork, pr=pr) if not head or r["sha"] == head]
    latest = {(r["suite"], r["platform"]): r for r in rows}
    return [{"suite": s, "platform": p, "verdict": r["verdict"], "superseded": _superseded(r)} for (s, p), r in sorted(latest.items())]


def _superseded(row: dict) -> list[dict]:
    """What a suite result's row keeps aside (results a re-run replaced, or that arrived after
    one was asked): shown apart, never the row's verdict, so no count or gate reads them."""
    return [{"at": x["at"], "attempt": x["attempt"], "outcome": x["outcome"], "by": x["by"], "how": x["how"],
             "check_url": x["check_url"], "text": x["text"]} for x in validation_store.superseded_runs(row)]


def _gate(suites: list[dict]) -> str:
    """The unit's L1 at a glance: green only when every suite passed. Any other verdict (``fail``,
    ``error``, ``infrastructure``, one a later runner adds) blocks the gate
    (:func:`bot.validation.gate.decide`, rule 5), so it is red here too."""
    if not suites or any(s["verdict"] == "pending" for s in suites):
        return "waiting for L1"
    if any(s["verdict"] != "pass" for s in suites):
        return "red"
    return "green"


def _words(r: dict, pr_state: str, gate: str, decided: list[dict] = (), check_wait: dict | None = None) -> str:
    if decided:
        # a resolution of a commit decided not to be taken now is asked of no one
        return render_part(TEXTS, "decided", decided=decided)
    if r.get("blocked_reason") and r.get("blocked_step") == "apply":
        # a failed pick (no conflict) records the upstream commit it stopped at as conflict_sha
        return render_part(TEXTS, "pick_failed", what=blocked_mod.what(r), reason=r["blocked_reason"])
    if r.get("conflict_sha"):
        # the sync's agent time ran out before its turn or cut its call (bot.sync.service._ask_agent):
        # the status issue and its PR say the agent still tries it, and so does this page
        return render_part(TEXTS, "conflict", sha=r["conflict_sha"], waiting=bool(r.get("agent_waiting_since")),
                           cut=bool(r.get("agent_cut_at")))
    if r.get("blocked_reason"):
        return render_part(TEXTS, "refused", step=r.get("blocked_step") or "", reason=r["blocked_reason"])
    if pr_state == "missing":
        return render_part(TEXTS, "gone")
    if check_wait and check_wait["overdue"]:
        return render_part("validation/check_wait.txt.j2", "unit", w=check_wait,
                           age=duration(check_wait["age_s"]) if check_wait["age_s"] is not None
                           else render_part(TEXTS, "unknown_time"))
    return render_part(TEXTS, "l1", gate=gate)


# --------------------------------------------------------------------------- ledger
def _day(value: str, name: str) -> int:
    """``YYYY-MM-DD`` → epoch s of its UTC midnight. A day the calendar does not have is refused:
    ``calendar.timegm`` alone rolls 2026-02-30 over to 2026-03-02 and would filter by that."""
    m = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", value)
    try:
        if not m:
            raise ValueError(value)
        return calendar.timegm(datetime.date(*(int(x) for x in m.groups())).timetuple())
    except ValueError:
        raise BadQuery(render_part(TEXTS, "bad_date", name=name, value=repr(value))) from None


def _count(value: str, name: str, default: int) -> int:
    """A whole number written in ASCII digits, at most 9 of them (SQLite's LIMIT and OFFSET take
    64-bit integers; a longer one overflowed there). ``int()`` alone also reads ``1_0``, ``+5``,
    `` 5`` and other scripts' digits, which no one means as a count."""
    if not value:
        return default
    if not re.fullmatch(r"[0-9]{1,9}", value):
        raise BadQuery(render_part(TEXTS, "bad_count", name=name, value=repr(value)))
    return int(value)


def _entry(r: dict, fork: str, up: str | None) -> dict:
    return {"index": r["idx"], "sha": r["sha"], "url": f"{up}/commit/{r['sha']}" if up else None, "pr": r["pr"],
            "pr_url": f"{up}/pull/{r['pr']}" if up and r["pr"] else None, "subject": r["subject"], "date": iso(r["time"]),
            "disposition": r["disposition"], "fork_commit": r["fork_commit"] or None,
            "fork_commit_url": fork_github(fork, f"commit/{r['fork_commit']}") if r["fork_commit"] else None,
            "reason": r["reason"], "isolated": bool(r["isolated"]), "areas": [a for a in (r["areas"] or "").split(",") if a],
            "evidence": json.loads(r["evidence_json"] or "[]")}


def ledger(store: Store, fork: str, now: float, policy: Policy, query: dict[str, list[str]]) -> dict:
    """``forksync.dashboard.ledger/1``; ``query``: the page's query string, each name → its values."""
    st = _status(store, fork)
    doc = _common(store, fork, st, now, policy, "ledger")
    for k, v in query.items():
        # the last value would win in silence: "limit=abc&limit=5" answered as limit=5
        if k != "disposition" and len(v) > 1:
            raise BadQuery(render_part(TEXTS, "repeated", name=k, times=len(v)))
    one = {k: (v[-1] if v else "") for k, v in query.items()}
    disp = tuple(d for v in query.get("disposition", []) for d in v.split(",") if d)
    for d in disp:
        if d not in DISPOSITIONS:
            raise BadQuery(render_part(TEXTS, "bad_disposition", value=repr(d), dispositions=DISPOSITIONS))
    offset = _count(one.get("offset") or "", "offset", 0)
    limit = _count(one.get("limit") or "", "limit", 100)
    if offset < 0 or not 1 <= limit <= 500:
        raise BadQuery(render_part(TEXTS, "out_of_range"))
    q = (one.get("q") or "").strip()
    for name in ("q", "area"):
        # SQLite ends a LIKE pattern at a NUL: the search would match every commit, not none
        if "\x00" in (one.get(name) or ""):
            raise BadQuery(render_part(TEXTS, "nul", name=name, value=repr(one[name])))
    kw: dict = {}
    if re.fullmatch(r"#?\d{1,7}", q):
        kw["pr"] = int(q.lstrip("#"))
    elif re.fullmatch(r"[0-9a-fA-F]{4,40}", q):
        kw["sha_prefix"] = q.lower()
    elif q:
        kw["words"] = q
    total, rows = sync_store.query_ledger(
        store, fork, dispositions=disp, area=one.get("area") or "",
        since=_day(one["since"], "since") if one.get("since") else None,
        until=_day(one["until"], "until") + 86_400 if one.get("until") else None,
        offset=offset, limit=limit, **kw)
    counts, areas = sync_store.ledger_summary(store, fork)
    up = doc["upstream_github"]
    doc.update({"query": {"disposition": list(disp), "area": one.get("area") or "", "since": one.get("since") or "",
                          "until": one.get("until") or "", "q": q, "offset": offset, "limit": limit},
                "total": total, "counts": {d: counts.get(d, 0) for d in DISPOSITIONS}, "areas": areas,
                "entries": [_entry(r, fork, up) for r in rows]})
    return doc


def ledger_entry(store: Store, fork: str, now: float, policy: Policy, sha: str) -> dict:
    """``forksync.dashboard.ledger-entry/1`` for an upstream sha or unique prefix (≥ 7 hex)."""
    st = _status(store, fork)
    doc = _common(store, fork, st, now, policy, "ledger-entry")
    if not re.fullmatch(r"[0-9a-fA-F]{7,40}", sha):
        raise BadQuery(render_part(TEXTS, "not_a_commit", value=repr(sha)))
    total, rows = sync_store.query_ledger(store, fork, sha_prefix=sha.lower(), limit=2)
    if total == 0:
        raise NotFound(render_part(TEXTS, "not_in_ledger", sha=sha, fork=fork))
    if total > 1:
        raise BadQuery(render_part(TEXTS, "ambiguous", sha=sha, total=total))
    doc["entry"] = _entry(rows[0], fork, doc["upstream_github"])
    # units that ended (merged, closed by a person or by forksync) leave the Units page: the
    # commit is where their history stays findable
    doc["entry"]["units"] = [{"id": r.get("unit_id") or r["branch"].split("/")[-1], "kind": r.get("kind") or "",
                              "pr": r.get("pr") or None, "url": fork_github(fork, f"pull/{r['pr']}") if r.get("pr") else None,
                              "state": r.get("state") or ""}
                             for r in sync_store.branches_carrying(store, fork, rows[0]["sha"])]
    return doc


# --------------------------------------------------------------------------- validation
def _cell_state(r: dict) -> str:
    if r["status"] == "pending" or r["verdict"] == "pending":
        return "pending"
    if r["verdict"] == "pass":
        return "green"
    if validation_store.only_short(r):
        return "short"
    return "red"


def trunk_red(history: list[dict], now: float) -> dict:
    """Whether trunk is red now (the newest result of some suite × platform failed) and since which
    result: the first failing result after the last moment every suite × platform was green.
    ``history``: :func:`bot.validation.store.trunk_history` rows, oldest first."""
    latest: dict[tuple[str, str], str] = {}
    since = None
    for r in history:
        latest[(r["suite"], r["platform"])] = r["verdict"]
        red = any(v in ("fail", "error") for v in latest.values())
        if red and since is None:
            since = r
        elif not red:
            since = None
    if since is None:
        return {"red": False, "since_sha": None, "since": None, "for_s": None, "results": len(latest)}
    return {"red": True, "since_sha": since["sha"], "since": iso(since["updated_at"]), "for_s": max(0.0, now - since["updated_at"]),
            "results": len(latest)}


_CP_CACHE: dict[tuple, list] = {}
_CP_LOCK = threading.Lock()


def _change_points(key: tuple, version: int, values: list[float], higher_is_better: bool) -> list:
    """Detected change points of a stored series, cached until the series changes (detection is
    pure, and the series only grows when an L2 run lands)."""
    with _CP_LOCK:
        hit = _CP_CACHE.get(key)
        if hit and hit[0] == version:
            return hit[1]
    try:
        cps = detection.detect(values, higher_is_better) if len(values) >= 4 else []
    except (ValueError, ZeroDivisionError):
        cps = []
    with _CP_LOCK:
        _CP_CACHE[key] = (version, cps)
    return cps


def _merging(c: detection.ChangePoint, pts: list[dict]) -> dict:
    """How change point ``c`` of a series of points ``pts`` took part in merging: ``merged`` (it
    was merged away), ``merged_into`` (the sha of the kept change point it went into, or None),
    ``merged_from`` (on a kept one that others were merged into: the shas of all the change points
    it stands for, itself included, in landing order; else empty)."""
    into = c.merged_into if c.merged_into is not None and 0 <= c.merged_into < len(pts) else None
    return {"merged": c.merged, "merged_into": pts[into]["sha"] if into is not None else None,
            "merged_from": [pts[i]["sha"] for i in sorted({c.index, *c.merged_from}) if 0 <= i < len(pts)]
            if c.merged_from else []}


def validation(store: Store, fork: str, now: float, policy: Policy, commits: int = 40) -> dict:
    """``forksync.dashboard.validation/1``."""
    st = _status(store, fork)
    doc = _common(store, fork, st, now, policy, "validation")
    rows = validation_store.recent_results(store, fork, commits)
    suites = sorted({r["suite"] for r in rows})
    platforms = sorted({r["platform"] for r in rows})
    by_sha: dict[str, dict] = {}
    for r in rows:
        c = by_sha.setdefault(r["sha"], {"sha": r["sha"], "url": fork_github(fork, f"commit/{r['sha']}"),
                                         "pr": r["pr"] or None, "updated_at": r["updated_at"], "cells": {}})
        c["updated_at"] = max(c["updated_at"], r["updated_at"])
        c["cells"].setdefault(r["suite"], []).append({"platform": r["platform"], "state": _cell_state(r),
                                                       "reason": r["reason"] or "", "check_url": r["check_url"] or None,
                                                       "superseded": _superseded(r)})
    out = []
    for c in by_sha.values():
        for s in suites:
            c["cells"].setdefault(s, [{"platform": "", "state": "missing", "reason": render_part(TEXTS, "no_result"),
                                       "check_url": None, "superseded": []}])
        out.append({**c, "updated_at": iso(c["updated_at"])})
    regs = l2_store.regressions(store, fork)
    series = []
    for key in l2_store.series_keys(store, fork):
        benchmark, impl, metric, shape, dtype, platform, unit = key
        version, pts = l2_store.series_points(store, fork, benchmark, impl, metric, shape, dtype, platform)
        sk = l2_store.series_key(benchmark, impl, shape, dtype, platform, unit)
        cps = _change_points((fork, *key), version, [p["value"] for p in pts], sk.higher_is_better)
        mine = [g for g in regs if g["series"] == str(sk)]
        confirmed = {g["bad"] for g in mine if g["status_code"] in l2_store.CONFIRMED}
        series.append({"series": str(sk), "metric": metric, "unit": unit, "higher_is_better": sk.higher_is_better,
                       "points": [{"sha": p["sha"], "value": p["value"], "time": iso(p["time"])} for p in pts],
                       "change_points": [{"index": c.index, "sha": pts[c.index]["sha"], "rel_shift": c.rel_shift,
                                          "alert": c.alert, "confirmed": pts[c.index]["sha"] in confirmed,
                                          "p_value": c.pvalue, **_merging(c, pts)}
                                         for c in cps if 0 <= c.index < len(pts)],
                       "regressions": [{"good": g["good"], "bad": g["bad"], "culprit": g["culprit"] or None,
                                        "culprit_upstream": (sync_store.upstream_of_fork_commit(store, fork, g["culprit"])
                                                             if g["culprit"] else None),
                                        "status": g["status"], "status_code": g["status_code"] or "",
                                        "issue": g["issue"] or None,
                                        "issue_url": fork_github(fork, f"issues/{g['issue']}") if g["issue"] else None,
                                        "backout_pr": g["backout_pr"] or None} for g in mine]})
    doc.update({"suites": suites, "platforms": platforms, "commits": out,
                "trunk_red": trunk_red(validation_store.trunk_history(store, fork), now), "l2": series})
    return doc


# --------------------------------------------------------------------------- triage
def _causes(store: Store, fork: str) -> list[dict]:
    """The root causes of ``fork`` (``fork=""``: the unassigned ones), each with its follow-up."""
    tracked = triage_store.tracked_rows(store, fork)
    follow = {f["cause"]: f for f in triage_store.followups(store, fork)} if tracked and fork else {}
    return [{**(d := json.loads(r["data"])), "followup": follow.get(d["key"], {})} for r in tracked]


def _cause_rows(causes: list[dict], fork: str, ids: list[str]) -> dict[str, list]:
    groups: dict[str, list] = {"real": [], "infrastructure": [], "flaky": []}
    for c in sorted(causes, key=lambda c: (-c["last_seen"], c["key"])):
        failed = {x[0] for x in c["fail_runs"]}
        f = c["followup"]
        issue = c.get("issue") or f.get("issue") or None
        groups.setdefault(c["cls"], []).append({
            "key": c["key"], "class": c["cls"], "title": c["title"], "state": c["state"],
            "first_seen": iso(c["first_seen"]), "last_seen": iso(c["last_seen"]),
            "failing": [1 if r in failed else 0 for r in ids], "runs": len(c["fail_runs"]),
            "tests": sorted(c["tests"]), "platforms": sorted(c["platforms"]),
            "suspects": {"culprit": f.get("culprit") or None, "first_red": c.get("first_red") or None,
                         "last_green": c.get("last_green") or None},
            "issue": issue, "issue_url": fork_github(fork, f"issues/{issue}") if issue and fork else None})
    return groups


def _nightly(row: dict) -> dict:
    # "time" is when the nightly ran (its --date / dispatch time), not when triage got to it: a
    # nightly replayed or retried days later still sits on its own night
    return {"run": row["run"], "time": iso(row["nightly_at"]), "processed_at": iso(row["processed_at"])}


def _refused(row: dict) -> dict:
    return {"run": row["run"], "time": iso(row["nightly_at"]), "newest_run": row["newest_run"],
            "newest_time": iso(row["newest_at"]), "refused_at": iso(row["refused_at"])}


def triage(store: Store, fork: str, now: float, policy: Policy, nightlies: int = 30) -> dict:
    """``forksync.dashboard.triage/1``. The root causes of this fork's nightlies, the nightlies
    triage refused (``refused``: they ran before the newest one it had processed), and apart
    (``unassigned``) those recorded before nightlies named their fork that could not be traced
    to one (the store's versioned step ``0002_triage_rows_name_their_fork``)."""
    st = _status(store, fork)
    doc = _common(store, fork, st, now, policy, "triage")
    runs = triage_store.recent_runs(store, fork, nightlies)
    ids = [r["run"] for r in runs]
    old = triage_store.recent_runs(store, "", nightlies)
    doc.update({"nightlies": [_nightly(r) for r in runs],
                "refused": [_refused(r) for r in triage_store.refused_runs(store, fork, nightlies)],
                "causes": _cause_rows(_causes(store, fork), fork, ids),
                "unassigned": {"nightlies": [_nightly(r) for r in old],
                               "causes": _cause_rows(_causes(store, ""), "", [r["run"] for r in old])}})
    return doc


# --------------------------------------------------------------------------- health
def health(store: Store, now: float, policy: Policy, app_facts: dict, allowed: Callable[[str], bool] = lambda f: True) -> dict:
    """``forksync.dashboard.health/1``: ``app_facts`` is what the App reports (``status``,
    ``problems`` with ``problem_forks``, ``warnings``, ``deliveries``, ``dead``, ``dismissed``, ``recent_errors``,
    ``worker_heartbeat``: epoch s or None; :func:`bot.app.web.app_facts`)."""
    beat = app_facts.get("worker_heartbeat")
    forks_out = []
    why_of = followed_by(store)
    for f in fork_names(store):
        if not allowed(f):
            continue
        st = sync_store.load_status(store, f)
        forks_out.append({"fork": f, "github": fork_github(f), "last_sync": iso(st.computed_at) if st else None,
                          "upstream_as_of": iso(st.upstream_seen_at) if st else None,
                          "last_fetch_error": st.last_fetch_error if st else "",
                          "followed": (why := why_of(f)),
                          "stale": stale_of(st, now, fork_policy(store, f, policy), why),
                          "blocked": [{"id": b.get("id"), "pr": b.get("pr") or None, "url": b.get("url") or None,
                                       "reason": b.get("reason", ""), "step": b.get("step", ""), "sha": b.get("sha", "")}
                                      for b in (st.blocked if st else ())],
                          "failing_jobs": [{"job": j["job"], "error": j["error"], "count": j["count"], "since": iso(j["since"])}
                                           for j in (st.failing_jobs if st else ())]})
    return {"schema": f"{V}.health/1", "status": app_facts.get("status", "ok"), "problems": _problems(app_facts, allowed),
            "warnings": _lines(app_facts, "warnings", "warning_forks", allowed, "warning"),
            "deliveries": dict(app_facts.get("deliveries", {})),
            "dead": [{k: d.get(k) for k in ("id", "event", "repo", "reason")} for d in app_facts.get("dead", [])
                     if not d.get("repo") or allowed(d["repo"])],
            # settled by an operator: no alarm any more, but shown, so a dismissal is never silent
            "dismissed": [{**{k: d.get(k) for k in ("id", "event", "repo", "reason", "by", "why")}, "at": iso(d.get("at"))}
                          for d in app_facts.get("dismissed", []) if not d.get("repo") or allowed(d["repo"])],
            "recent_errors": [{**e, "at": iso(e.get("at"))} for e in app_facts.get("recent_errors", [])
                              if not e.get("repo") or allowed(e["repo"])],
            "worker_heartbeat": iso(beat), "worker_heartbeat_age_s": (now - beat) if beat else None, "forks": forks_out}


def _problems(app_facts: dict, allowed: Callable[[str], bool]) -> list[str]:
    """The App's problems a reader may see: a problem of a fork they may not read is counted, not
    said (its line names the fork and quotes its error), so the status they see stays explained."""
    return _lines(app_facts, "problems", "problem_forks", allowed, "problem")


def _lines(app_facts: dict, key: str, forks_key: str, allowed: Callable[[str], bool], noun: str) -> list[str]:
    """``app_facts[key]``'s lines a reader may see (``app_facts[forks_key]``: the fork each names,
    ``""`` for the App as a whole): those of a fork they may not read are counted in one line."""
    texts = list(app_facts.get(key, []))
    forks = list(app_facts.get(forks_key, [])) + [""] * len(texts)
    shown = [t for t, f in zip(texts, forks) if not f or allowed(f)]
    hidden = len(texts) - len(shown)
    if hidden:
        shown.append(render_part(TEXTS, "hidden", n=hidden, noun=noun))
    return shown


__all__ = ["NotFound", "BadQuery", "Policy", "iso", "github_of", "stale_of", "fork_names", "forks", "overview", "units",
           "ledger", "ledger_entry", "validation", "trunk_red", "triage", "health", "DISPOSITIONS"]
