"""Triage's tables: the root causes it tracks, the nightly runs it processed, the last green run of
each test, and the follow-ups (bisection, proposed fix) done per root cause.

The lifecycle's state (:class:`bot.triage.lifecycle.TriageState`) is stored as plain rows here and
turned into values by :mod:`bot.triage.issues`; a run is marked processed in the same transaction
that stores the state, so a crash never loses or repeats an issue action.
"""
from __future__ import annotations

import time as _time

from bot.store import Store, table

TRACKED = table("triage_tracked", {"key": str, "data": str, "updated_at": int}, pk="key")
RUNS = table("triage_runs", {"run": str, "processed_at": int, "actions": str}, pk="run")
GREEN = table("triage_green", {"test": str, "commit_sha": str, "time": int, "run": str}, pk="test")
#: small named values of the lifecycle (``flood``: the causes waiting in the flood issue, as JSON)
META = table("triage_meta", {"key": str, "data": str}, pk="key")

FOLLOWUPS = table("nightly_followups", {
    "key": str,            # "<owner>/<repo>:<root cause>"
    "repo": str, "cause": str, "issue": int,
    "bisected": int,       # 1 once bisection ran (found or not): it is not repeated every night
    "culprit": str,        # confirmed first bad commit ("" when none)
    "fix": str,            # proposed | rejected | skipped | "" (not yet)
    "updated_at": int,
}, pk="key", indexes=[("repo",)])


def state_rows(store: Store) -> tuple[list[dict], list[dict], list[dict], dict[str, str]]:
    """``(tracked, runs, green, meta)`` rows as stored (``meta``: key → data)."""
    db = store.db
    meta = {r["key"]: r["data"] for r in db[META.name].rows}
    return list(db[TRACKED.name].rows), list(db[RUNS.name].rows), list(db[GREEN.name].rows), meta


def save_state_rows(store: Store, tracked: list[tuple], green: list[tuple], run: tuple,
                    meta: list[tuple] = (), drop: tuple[str, ...] = ()) -> None:
    """Write tracked causes ``(key, data, updated_at)``, last greens ``(test, commit_sha, time, run)``,
    named values ``(key, data)`` and the processed run ``(run, processed_at, actions)``, and delete
    the tracked causes ``drop`` (re-keyed under a new signature version), in one transaction
    (``BEGIN IMMEDIATE``)."""
    with store.lock:
        conn = store.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("DELETE FROM triage_tracked WHERE key = ?", [(k,) for k in drop])
            conn.executemany("INSERT OR REPLACE INTO triage_tracked (key, data, updated_at) VALUES (?, ?, ?)", tracked)
            conn.executemany("INSERT OR REPLACE INTO triage_green (test, commit_sha, time, run) VALUES (?, ?, ?, ?)", green)
            conn.executemany("INSERT OR REPLACE INTO triage_meta (key, data) VALUES (?, ?)", meta)
            conn.execute("INSERT OR REPLACE INTO triage_runs (run, processed_at, actions) VALUES (?, ?, ?)", run)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


def followup(store: Store, key: str) -> dict:
    """The follow-up row of root cause ``key`` (``{}`` when none)."""
    with store.lock:
        rows = list(store.db[FOLLOWUPS.name].rows_where("key = ?", [key]))
    return rows[0] if rows else {}


def save_followup(store: Store, row: dict) -> None:
    with store.lock:
        store.db[FOLLOWUPS.name].upsert({**row, "updated_at": int(_time.time())}, pk="key")


def followups(store: Store) -> list[dict]:
    """Every follow-up row (``repo``, ``cause``, ``issue``, ``culprit`` …), by key."""
    with store.lock:
        return list(store.db[FOLLOWUPS.name].rows_where(order_by="key"))


def recent_runs(store: Store, limit: int = 30) -> list[dict]:
    """The ``limit`` newest processed nightlies (``run``, ``processed_at``), oldest first."""
    with store.lock:
        rows = list(store.db[RUNS.name].rows_where(select="run, processed_at", order_by="processed_at desc, run desc",
                                                   limit=limit))
    return rows[::-1]
