"""One nightly triaged from report files (``forksync triage nightly``): records → signatures,
classes and the issue lifecycle (:func:`bot.triage.service.triage_nightly`, the same core the
deployed nightly calls) → the actions as plain JSON-ready data.

Issues are kept in the store (:class:`bot.triage.local_issues.LocalIssues`, the embedded default)
or on a GitHub when ``github_url`` is given (a token client; the local GitHub works the same way).
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import aiohttp

from bot.config.triage import TriageSettings
from bot.github.claims import Claims, log_wait
from bot.github.client import token_client
from bot.store import Store
from bot.triage.issues import load_state
from bot.triage.lifecycle import Tracked
from bot.triage.local_issues import LocalIssues
from bot.triage.records import FailureRecord
from bot.triage.rules import RulesTable
from bot.triage.service import NightlyReport, triage_nightly

__all__ = ["nightly_actions", "actions_json"]

#: action kind → the JSON key it is listed under
KEYS = {"open": "opened", "update": "updated", "refresh": "updated", "close": "closed", "reopen": "reopened"}


def _cause(t: Tracked | None, key: str, group=None) -> dict:
    if t is None and group is not None:
        return {"key": key, "class": group.cls, "title": group.title, "issue": None, "tests": list(group.cases)}
    return {"key": key, "class": t.cls, "title": t.issue_title or t.title, "issue": t.issue, "state": t.state,
            "tests": sorted(t.tests)}


def actions_json(report: NightlyReport, tracked: dict[str, Tracked], *, run: str, commit: str, records: int) -> dict:
    """``{"run", "commit", "records", "opened", "updated", "closed", "reopened", "pending",
    "infrastructure", "flaky", "flood"}``: each list holds one object per root cause
    (``key``, ``class``, ``title``, ``issue``, ``tests`` — the test cases with parameters);
    ``updated`` entries say whether the cause ``failed`` in this nightly (a clean night only
    refreshes the status table); ``pending`` lists real causes seen but not (yet) opened;
    ``flood`` is ``{"waiting": [keys], "closed": bool}`` or None."""
    out: dict = {"run": run, "commit": commit, "records": records, "opened": [], "updated": [], "closed": [],
                 "reopened": [], "pending": [], "infrastructure": [], "flaky": [], "flood": None}
    groups = {g.id: g for g in report.groups}
    acted: set[str] = set()
    for a in report.actions:
        if a.kind == "flood":
            out["flood"] = {"waiting": list(a.keys), "closed": False}
            continue
        if a.kind == "flood-close":
            out["flood"] = {"waiting": [], "closed": True}
            continue
        key = a.keys[0]
        acted.add(key)
        item = _cause(tracked.get(key), key, groups.get(key))
        if a.kind in ("update", "refresh"):
            item["failed"] = a.kind == "update"
        out[KEYS[a.kind]].append(item)
    for g in report.groups:
        if g.id in acted:
            continue
        t = tracked.get(g.id)
        cls = t.cls if t is not None else g.cls
        bucket = cls if cls in ("infrastructure", "flaky") else "pending"
        item = _cause(t, g.id, g)
        item["tests"] = list(g.cases)
        out[bucket].append(item)
    return out


async def nightly_actions(store: Store, records: Sequence[FailureRecord], *, table: RulesTable,
                          settings: TriageSettings, run: str, time: int, commit: str, owner: str, repo: str,
                          github_url: str | None = None, token: str | None = None,
                          locks: str | Path | None = None) -> dict:
    """Triage one nightly's ``records`` and return :func:`actions_json`. A run already processed
    returns the same shape with empty action lists (idempotent). ``locks``: with ``github_url``,
    the folder of the App's claims (``<workdir>/locks``): the fork's issues are written under its
    triage claim there (:meth:`bot.triage.issues.TriageIssues.process`), so this run and the
    App's do not both open one per cause."""
    seen = run in load_state(store, f"{owner}/{repo}").processed
    if github_url:
        async with aiohttp.ClientSession() as session:
            claims = Claims(locks, on_wait=log_wait) if locks is not None else None
            gh = token_client(session, token or "", base_url=github_url.rstrip("/"), claims=claims)
            report = await triage_nightly(store=store, gh=gh, owner=owner, repo=repo, settings=settings,
                                          table=table, run=run, time=time, commit=commit, records=records)
    else:
        report = await triage_nightly(store=store, gh=LocalIssues(store), owner=owner, repo=repo, settings=settings,
                                      table=table, run=run, time=time, commit=commit, records=records)
    out = actions_json(report, load_state(store, f"{owner}/{repo}").tracked, run=run, commit=commit, records=len(records))
    out["already_processed"] = seen
    return out
