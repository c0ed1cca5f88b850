"""Triage's tables, per fork: the root causes it tracks, the nightly runs it processed (and those
it refused), the last green run of each test, and the follow-ups (bisection, proposed fix) done
per root cause.

The lifecycle's state (:class:`bot.triage.lifecycle.TriageState`) is stored as plain rows here and
turned into values by :mod:`bot.triage.issues`; a run is marked processed in the same transaction
that stores the state, so a crash never loses or repeats an issue action.
"""
from __future__ import annotations

import time as _time

from bot.store import Store, table

#: Every row names the fork whose nightlies it comes from (``repo``, ``owner/name``): each fork has
#: its own lifecycle. ``repo = ""``: recorded before rows named their fork and not traceable to one
#: (the store's versioned step ``0002_triage_rows_name_their_fork``); kept, shown as unassigned.
TRACKED = table("triage_tracked", {"repo": str, "key": str, "data": str, "updated_at": int}, pk=("repo", "key"))
#: ``nightly_at``: when the nightly ran (its own time: ``--date``, the dispatch time), epoch s; NULL
#: on rows written before it was kept. ``processed_at``: when triage processed it.
RUNS = table("triage_runs", {"repo": str, "run": str, "processed_at": int, "actions": str, "nightly_at": int},
             pk=("repo", "run"))
GREEN = table("triage_green", {"repo": str, "test": str, "commit_sha": str, "time": int, "run": str}, pk=("repo", "test"))
#: small named values of the lifecycle (``flood``: the causes waiting in the flood issue, as JSON)
META = table("triage_meta", {"repo": str, "key": str, "data": str}, pk=("repo", "key"))

#: nightlies triage refused because they ran before the newest one it had processed
#: (:class:`bot.triage.lifecycle.OlderNightly`), with that newest one (``newest_run``,
#: ``newest_at``): kept so the refusal is said once though the nightly tick meets the same nightly
#: again on every tick, and stays where a person looks (the dashboard's triage page). Times epoch s.
REFUSED = table("triage_refused", {"repo": str, "run": str, "nightly_at": int, "newest_run": str, "newest_at": int,
                                   "refused_at": int}, pk=("repo", "run"))

FOLLOWUPS = table("nightly_followups", {
    "key": str,            # "<owner>/<repo>:<root cause>"
    "repo": str, "cause": str, "issue": int,
    "bisected": int,       # 1 once bisection ran (found or not): it is not repeated every night
    "culprit": str,        # confirmed first bad commit ("" when none)
    "fix": str,            # proposed | rejected | skipped | "" (not yet)
    "updated_at": int,
}, pk="key", indexes=[("repo",)])


def state_rows(store: Store, repo: str) -> tuple[list[dict], list[dict], list[dict], dict[str, str]]:
    """``(tracked, runs, green, meta)`` rows of fork ``repo`` as stored (``meta``: key → data);
    ``repo=""``: the unassigned rows."""
    db = store.db
    with store.lock:
        meta = {r["key"]: r["data"] for r in db[META.name].rows_where("repo = ?", [repo])}
        return (list(db[TRACKED.name].rows_where("repo = ?", [repo])), list(db[RUNS.name].rows_where("repo = ?", [repo])),
                list(db[GREEN.name].rows_where("repo = ?", [repo])), meta)


def tracked_rows(store: Store, repo: str) -> list[dict]:
    """Fork ``repo``'s tracked root causes as stored (``key``, ``data``: JSON, ``updated_at``)."""
    with store.lock:
        return list(store.db[TRACKED.name].rows_where("repo = ?", [repo]))


def save_state_rows(store: Store, repo: str, tracked: list[tuple], green: list[tuple], run: tuple,
                    meta: list[tuple] = (), drop: tuple[str, ...] = ()) -> None:
    """Write fork ``repo``'s tracked causes ``(key, data, updated_at)``, last greens ``(test,
    commit_sha, time, run)``, named values ``(key, data)`` and the processed run ``(run,
    processed_at, actions[, nightly_at])`` (epoch s), and delete its tracked causes ``drop`` (re-keyed under a new
    signature version), in one transaction (``BEGIN IMMEDIATE``)."""
    with store.transaction() as conn:
        conn.executemany("DELETE FROM triage_tracked WHERE repo = ? AND key = ?", [(repo, k) for k in drop])
        conn.executemany("INSERT OR REPLACE INTO triage_tracked (repo, key, data, updated_at) VALUES (?, ?, ?, ?)",
                         [(repo, *t) for t in tracked])
        conn.executemany("INSERT OR REPLACE INTO triage_green (repo, test, commit_sha, time, run) VALUES (?, ?, ?, ?, ?)",
                         [(repo, *g) for g in green])
        conn.executemany("INSERT OR REPLACE INTO triage_meta (repo, key, data) VALUES (?, ?, ?)", [(repo, *m) for m in meta])
        run = (*run, None) if len(run) == 3 else tuple(run)
        conn.execute("INSERT OR REPLACE INTO triage_runs (repo, run, processed_at, actions, nightly_at) VALUES (?, ?, ?, ?, ?)",
                     (repo, *run))


def adopt_unassigned(store: Store, repo: str) -> int:
    """Give the unassigned rows (``repo = ""``) to fork ``repo`` — for a store that serves one
    fork, whose fork is known (the configured fork of ``forksync triage nightly``). A row the fork
    already has under the same key keeps the fork's. Returns how many rows moved."""
    moved = 0
    with store.transaction() as conn:
        for t in (TRACKED, RUNS, GREEN, META):
            moved += conn.execute(f"UPDATE OR IGNORE {t.name} SET repo = ? WHERE repo = ''", [repo]).rowcount
    return moved


def repos(store: Store) -> list[str]:
    """The forks with triage rows (``""`` for unassigned rows, when there are any)."""
    with store.lock:
        return sorted({r[0] for t in (TRACKED, RUNS) for r in store.conn.execute(f"SELECT DISTINCT repo FROM {t.name}")})


def followup(store: Store, key: str) -> dict:
    """The follow-up row of root cause ``key`` (``{}`` when none)."""
    with store.lock:
        rows = list(store.db[FOLLOWUPS.name].rows_where("key = ?", [key]))
    return rows[0] if rows else {}


def save_followup(store: Store, row: dict) -> None:
    with store.lock:
        store.db[FOLLOWUPS.name].upsert({**row, "updated_at": int(_time.time())}, pk="key")


def followups(store: Store, repo: str | None = None) -> list[dict]:
    """The follow-up rows (``repo``, ``cause``, ``issue``, ``culprit`` …) of fork ``repo`` (every
    fork's when None), by key."""
    with store.lock:
        if repo is None:
            return list(store.db[FOLLOWUPS.name].rows_where(order_by="key"))
        return list(store.db[FOLLOWUPS.name].rows_where("repo = ?", [repo], order_by="key"))


def record_refusal(store: Store, repo: str, run: str, nightly_at: int, newest_run: str, newest_at: int, *,
                   now: int) -> bool:
    """Keep that fork ``repo``'s nightly ``run`` (ran at ``nightly_at``) was refused at ``now``
    because ``newest_run`` (ran at ``newest_at``) was already processed. Returns whether this is
    its first refusal (False: it was refused before and the first record stands — the newest
    processed nightly only moves on, so a refusal never changes)."""
    with store.transaction() as conn:
        cur = conn.execute("INSERT OR IGNORE INTO triage_refused (repo, run, nightly_at, newest_run, newest_at, refused_at) "
                           "VALUES (?, ?, ?, ?, ?, ?)", (repo, run, nightly_at, newest_run, newest_at, now))
        return cur.rowcount == 1


def refused_runs(store: Store, repo: str, limit: int = 30) -> list[dict]:
    """Fork ``repo``'s ``limit`` most recently refused nightlies (``repo``, ``run``, ``nightly_at``,
    ``newest_run``, ``newest_at``, ``refused_at``), newest refusal first."""
    with store.lock:
        return list(store.db[REFUSED.name].rows_where("repo = ?", [repo], order_by="refused_at desc, run desc",
                                                      limit=limit))


def recent_runs(store: Store, repo: str, limit: int = 30) -> list[dict]:
    """Fork ``repo``'s ``limit`` newest nightlies (``run``, ``nightly_at``: when it ran or None when
    not kept, ``processed_at``), oldest first, by when they ran (when processed, for rows without
    it): a nightly processed late sits where it ran."""
    with store.lock:
        rows = list(store.db[RUNS.name].rows_where("repo = ?", [repo], select="run, nightly_at, processed_at",
                                                   order_by="coalesce(nightly_at, processed_at) desc, run desc", limit=limit))
    return rows[::-1]
