"""Issues kept in the local store, for ``forksync triage nightly`` without a GitHub (the embedded
default): the same lifecycle, the same texts, the issues as rows of table ``triage_local_issues``.

:class:`LocalIssues` answers the few calls :class:`bot.triage.issues.TriageIssues` makes of a
gidgethub-style client (``getiter``/``getitem``/``post``/``patch`` on ``/repos/{o}/{r}/issues…``)
with plain rows, so a nightly triaged locally can later be replayed onto a real GitHub (the hidden
markers find nothing there and issues open once). Any other URL raises ``ValueError`` naming it.
"""
from __future__ import annotations

import json
import re
import time as _time
from typing import Any, AsyncIterator

from bot.store import Store, table

__all__ = ["LocalIssues", "ISSUES"]

ISSUES = table("triage_local_issues", {
    "repo": str, "number": int, "title": str, "body": str, "state": str, "state_reason": str,
    "labels": str,          # JSON list of names
    "comments": str,        # JSON list of bodies, oldest first
    "updated_at": int,
}, pk=("repo", "number"))

_ISSUES = re.compile(r"^/repos/([^/]+/[^/?]+)/issues(?:/(\d+)(/comments)?)?(?:\?.*)?$")


class LocalIssues:
    """A gidgethub-style client over ``triage_local_issues`` (see the module docstring)."""

    def __init__(self, store: Store, clock=_time.time):
        self.store, self.clock = store, clock
        store.ensure(ISSUES)

    def _parse(self, url: str) -> tuple[str, int | None, bool]:
        m = _ISSUES.match(url)
        if not m:
            raise ValueError(f"local issues: {url!r} is not an issues URL (only /repos/OWNER/REPO/issues[/N[/comments]])")
        return m.group(1), int(m.group(2)) if m.group(2) else None, bool(m.group(3))

    def _rows(self, repo: str) -> list[dict]:
        with self.store.lock:
            return list(self.store.db[ISSUES.name].rows_where("repo = ?", [repo], order_by="number"))

    @staticmethod
    def _issue(row: dict) -> dict:
        return {"number": row["number"], "title": row["title"], "body": row["body"], "state": row["state"],
                "state_reason": row["state_reason"] or None,
                "labels": [{"name": n} for n in json.loads(row["labels"] or "[]")],
                "comments": len(json.loads(row["comments"] or "[]"))}

    def _row(self, repo: str, number: int) -> dict:
        for r in self._rows(repo):
            if r["number"] == number:
                return r
        raise ValueError(f"local issues: {repo} has no issue #{number}")

    def _save(self, row: dict) -> None:
        with self.store.lock:
            self.store.db[ISSUES.name].upsert({**row, "updated_at": int(self.clock())}, pk=("repo", "number"))

    async def getiter(self, url: str, *args, **kwargs) -> AsyncIterator[dict]:
        repo, number, comments = self._parse(url)
        if number is not None and comments:
            for body in json.loads(self._row(repo, number)["comments"] or "[]"):
                yield {"body": body}
            return
        for r in self._rows(repo):
            yield self._issue(r)

    async def getitem(self, url: str, *args, **kwargs) -> dict:
        repo, number, _ = self._parse(url)
        if number is None:
            raise ValueError(f"local issues: getitem needs an issue number in {url!r}")
        return self._issue(self._row(repo, number))

    async def post(self, url: str, *args, data: Any = None, **kwargs) -> dict:
        repo, number, comments = self._parse(url)
        data = data or {}
        if number is None:
            rows = self._rows(repo)
            row = {"repo": repo, "number": (rows[-1]["number"] + 1) if rows else 1, "title": data.get("title", ""),
                   "body": data.get("body", ""), "state": "open", "state_reason": "",
                   "labels": json.dumps(list(data.get("labels", []))), "comments": "[]"}
            self._save(row)
            return self._issue(row)
        if not comments:
            raise ValueError(f"local issues: cannot POST to {url!r}")
        row = self._row(repo, number)
        row["comments"] = json.dumps(json.loads(row["comments"] or "[]") + [data.get("body", "")])
        self._save(row)
        return {"body": data.get("body", "")}

    async def patch(self, url: str, *args, data: Any = None, **kwargs) -> dict:
        repo, number, comments = self._parse(url)
        if number is None or comments:
            raise ValueError(f"local issues: cannot PATCH {url!r}")
        row = self._row(repo, number)
        for k in ("title", "body", "state", "state_reason"):
            if k in (data or {}):
                row[k] = data[k] or ""
        if "labels" in (data or {}):
            row["labels"] = json.dumps(list(data["labels"]))
        self._save(row)
        return self._issue(row)


def move_issues(store: Store, old: str, new: str) -> int:
    """Move the issues kept for fork ``old`` to fork ``new`` when ``new`` has none yet (a store whose
    nightlies were triaged under ``old`` before they named their fork). Returns how many moved."""
    store.ensure(ISSUES)
    with store.lock:
        db = store.db[ISSUES.name]
        if old == new or db.count_where("repo = ?", [new]):
            return 0
        return store.conn.execute(f"UPDATE {ISSUES.name} SET repo = ? WHERE repo = ?", [new, old]).rowcount
