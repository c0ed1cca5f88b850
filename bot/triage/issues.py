"""The issue lifecycle's edge: state in the store, issues on the fork through a gidgethub-style
client (``bot.github.client.GitHubClient``: ``getiter``/``getitem``/``post``/``patch``), texts from
``templates/triage/``.

Idempotency: every issue carries a hidden marker ``<!-- forksync:triage:<key> -->``. Before
creating one, the fork's issues with the triage label (any state) are listed and a matching
marker is reused; the nightly's run id is stored as processed only after all its actions ran.
A restart or a redelivered nightly therefore repeats nothing, and a crash half-way through
re-runs the same decisions, which find the issues already made.

Sections: the status table lives between ``<!-- forksync:status:start/end -->`` and is the only
part a nightly rewrites; the blame section (``<!-- forksync:blame:start/end -->``) is written
when the issue opens (ranked suspects) and when bisection confirms a culprit, never by a
status refresh; anything a person adds outside the sections stays.
"""
from __future__ import annotations

import json
import re
import time as _time
from dataclasses import asdict, replace
from typing import Any, Awaitable, Callable, Sequence

from bot import templating
from bot.config.triage import TriageSettings
from bot.store import Store
from bot.triage import store as triage_store
from bot.triage.lifecycle import Action, Nightly, Tracked, TriageState, decide, rekey
from bot.triage.signature import SIGNATURE_VERSION
from bot.triage.suspects import Suspect

__all__ = ["TriageIssues", "load_state", "save_state", "render", "marker", "replace_section"]


def render(name: str, **ctx) -> str:
    """Render ``templates/triage/<name>``."""
    return templating.render(f"triage/{name}", **ctx)


def marker(key: str) -> str:
    return f"<!-- forksync:triage:{key} -->"


def replace_section(body: str, name: str, new: str) -> str:
    """``body`` with the ``<!-- forksync:<name>:start -->…end -->`` section replaced by ``new``
    (which carries its own markers); appended when the body has no such section."""
    rx = re.compile(rf"<!-- forksync:{name}:start -->.*?<!-- forksync:{name}:end -->\n?", re.S)
    new = new if new.endswith("\n") else new + "\n"
    if rx.search(body):
        return rx.sub(lambda _: new, body, count=1)
    return body.rstrip("\n") + "\n\n" + new


# --------------------------------------------------------------------------- state in the store
def _tracked_to_json(t: Tracked) -> str:
    d = asdict(t)
    d["platforms"] = sorted(t.platforms)
    d["tests"] = sorted(t.tests)
    return json.dumps(d)


def _tracked_from_json(s: str) -> Tracked:
    d = json.loads(s)
    d["platforms"] = frozenset(d["platforms"])
    d["tests"] = frozenset(d["tests"])
    d["fail_runs"] = tuple(tuple(x) for x in d["fail_runs"])
    d["labels"] = tuple(d["labels"])
    d["aliases"] = tuple(d.get("aliases", ()))     # rows written before signature versions had neither
    d.setdefault("version", 1)
    return Tracked(**d)


def load_state(store: Store) -> TriageState:
    tracked_rows, run_rows, green_rows = triage_store.state_rows(store)
    tracked = {r["key"]: _tracked_from_json(r["data"]) for r in tracked_rows}
    processed = frozenset(r["run"] for r in run_rows)
    green = {r["test"]: (r["commit_sha"], r["time"]) for r in green_rows}
    return TriageState(tracked, processed, green)


def save_state(store: Store, state: TriageState, run: str, actions: Sequence[Action], now: int,
               drop: Sequence[str] = ()) -> None:
    """Write the state and mark ``run`` processed, in one transaction (``BEGIN IMMEDIATE``);
    ``drop``: keys no longer tracked (re-keyed causes' old keys)."""
    tracked = [(k, _tracked_to_json(t), now) for k, t in state.tracked.items()]
    green = [(k, c, tm) for k, (c, tm) in state.last_green.items()]
    triage_store.save_state_rows(store, tracked, green, (run, now, json.dumps([asdict(a) for a in actions])),
                                 tuple(k for k in drop if k not in state.tracked))


def _utc(t: int) -> str:
    return _time.strftime("%Y-%m-%d %H:%M", _time.gmtime(t)) if t else "—"


# --------------------------------------------------------------------------- the edge
SuspectsFor = Callable[[Tracked], Awaitable[tuple[Sequence[Suspect], str, str]]]


class TriageIssues:
    """Runs the lifecycle for one fork: ``await process(nightly)`` decides (pure core), then
    opens/updates/closes/reopens issues and saves the state.

    ``gh``: a gidgethub-style client for the fork's installation; ``suspects_for(tracked)`` (optional)
    returns ``(suspects, good, bad)`` for a newly opened real issue, shown at once.
    ``key_of(sample, test)`` (optional): the root-cause key the current signatures give an output
    — with it, causes tracked under an older signature version are re-keyed
    (:func:`bot.triage.lifecycle.rekey`, old key kept as an alias) and an issue whose body only
    holds an older marker is still found through its sample output, so none is filed twice.
    """

    def __init__(self, store: Store, gh: Any, owner: str, repo: str, settings: TriageSettings, *,
                 suspects_for: SuspectsFor | None = None, rule_titles: dict[str, str] | None = None,
                 suggestions: dict[str, dict] | None = None, clock: Callable[[], float] = _time.time,
                 key_of: Callable[[str, str], str] | None = None):
        self.store, self.gh, self.owner, self.repo, self.settings = store, gh, owner, repo, settings
        self.suspects_for = suspects_for
        self.rule_titles = rule_titles or {}
        self.suggestions = suggestions or {}
        self.clock = clock
        self.key_of = key_of
        self._issues: dict[str, dict] | None = None

    @property
    def _base(self) -> str:
        return f"/repos/{self.owner}/{self.repo}"

    async def process(self, nightly: Nightly) -> list[Action]:
        state = load_state(self.store)
        stored = tuple(state.tracked)
        if self.key_of is not None:
            key_of = self.key_of
            state = rekey(state, lambda t: key_of(t.sample, min(t.tests, default="")) if t.sample else None,
                          SIGNATURE_VERSION)
        new, actions = decide(state, nightly, self.settings)
        if not actions and nightly.run in state.processed:
            return []
        self._issues = None
        for a in actions:
            if a.kind == "flood":
                await self._flood(new, a, nightly)
                continue
            key = a.keys[0]
            t = new.tracked[key]
            if a.kind == "open":
                t = await self._open(t, nightly)
            elif a.kind == "update":
                t = await self._update(t)
            elif a.kind == "reopen":
                t = await self._reopen(t, nightly)
            elif a.kind == "close":
                t = await self._close(t, nightly)
            new.tracked[key] = t
        save_state(self.store, new, nightly.run, actions, int(self.clock()), drop=stored)
        return actions

    # ---- finding issues by marker
    async def _known(self) -> dict[str, dict]:
        if self._issues is None:
            found: dict[str, dict] = {}
            labels = ",".join(self.settings.labels[:1])
            url = f"{self._base}/issues?state=all&per_page=100" + (f"&labels={labels}" if labels else "")
            derived: dict[str, dict] = {}
            async for issue in self.gh.getiter(url):
                body = issue.get("body") or ""
                for m in re.finditer(r"<!-- forksync:triage:([\w.:\-]+) -->", body):
                    found.setdefault(m.group(1), issue)
                if self.key_of is not None and "<!-- forksync:triage:sig-" in body:
                    # filed under an older signature version: the key its sample output has now
                    sample, test = _sample_and_test(body)
                    if sample:
                        derived.setdefault(self.key_of(sample, test), issue)
            for k, issue in derived.items():
                found.setdefault(k, issue)
            self._issues = found
        return self._issues

    async def _find(self, t: Tracked) -> dict | None:
        if t.issue:
            return await self.gh.getitem(f"{self._base}/issues/{t.issue}")
        known = await self._known()
        for k in (t.key, *t.aliases):
            if k in known:
                return known[k]
        return None

    # ---- rendering
    def _status(self, t: Tracked) -> str:
        runs = [{"run": r, "time": _utc(tm), "commit": c} for r, tm, c in t.fail_runs]
        return render("status.md.j2", runs=runs, platforms=sorted(t.platforms), tests=sorted(t.tests),
                      first_seen=_utc(t.first_seen), last_seen=_utc(t.last_seen), green_streak=t.green_streak,
                      close_after=self.settings.close_after_green_nights)

    def _labels(self, t: Tracked) -> list[str]:
        labels = list(self.settings.labels) + list(t.labels)
        if t.crash and self.settings.crash_label:
            labels.append(self.settings.crash_label)
        return list(dict.fromkeys(labels))

    async def _open(self, t: Tracked, n: Nightly) -> Tracked:
        existing = await self._find(t)
        if existing is not None:                       # made before a restart: reuse it
            t = replace(t, issue=existing["number"])
            return await (self._reopen(t, n) if existing["state"] == "closed" else self._update(t))
        suspects, good, bad = (), t.last_green, t.first_red
        if self.suspects_for is not None and t.cls == "real":
            suspects, good, bad = await self.suspects_for(t)
        blame = render("blame.md.j2", culprit=None, suspects=[_sus(s) for s in suspects], good=good or "", bad=bad or "")
        body = render("issue.md.j2", marker=marker(t.key), key=t.key, rule_title=self.rule_titles.get(t.key, ""),
                      cls=t.cls, crash=t.crash, signature=t.signature, status=self._status(t), blame=blame,
                      sample=t.sample, suggested_rule=self.suggestions.get(t.key))
        title = render("title.txt.j2", title=t.title, crash=t.crash).strip()
        issue = await self.gh.post(f"{self._base}/issues", data={"title": title, "body": body, "labels": self._labels(t)})
        (await self._known())[t.key] = issue
        return replace(t, issue=issue["number"])

    async def _update(self, t: Tracked) -> Tracked:
        issue = await self._find(t)
        if issue is None:
            return replace(t, issue=None)
        body = replace_section(issue.get("body") or "", "status", self._status(t))
        if marker(t.key) not in body and body.startswith("<!-- forksync:triage:"):
            body = marker(t.key) + "\n" + body      # re-keyed: the current key's marker joins the old one
        if body != issue.get("body"):
            await self.gh.patch(f"{self._base}/issues/{issue['number']}", data={"body": body})
        return replace(t, issue=issue["number"])

    async def _reopen(self, t: Tracked, n: Nightly) -> Tracked:
        issue = await self._find(t)
        if issue is None:
            return await self._open(replace(t, issue=None), n)
        t = replace(t, issue=issue["number"])
        if issue["state"] == "closed":
            await self.gh.patch(f"{self._base}/issues/{issue['number']}", data={"state": "open"})
            await self.gh.post(f"{self._base}/issues/{issue['number']}/comments",
                               data={"body": render("reopened.md.j2", run=n.run, commit=n.commit)})
        return await self._update(t)

    async def _close(self, t: Tracked, n: Nightly) -> Tracked:
        issue = await self._find(t)
        if issue is None:
            return t
        t = await self._update(replace(t, issue=issue["number"]))
        if issue["state"] == "open":
            await self.gh.post(f"{self._base}/issues/{issue['number']}/comments",
                               data={"body": render("closed.md.j2", streak=t.green_streak, run=n.run, commit=n.commit)})
            await self.gh.patch(f"{self._base}/issues/{issue['number']}",
                                data={"state": "closed", "state_reason": "completed"})
        return t

    async def _flood(self, state: TriageState, a: Action, n: Nightly) -> None:
        tracked = [state.tracked[k] for k in a.keys]
        body = render("flood.md.j2", keys=a.keys, run=n.run, cap=self.settings.max_new_issues_per_run,
                      tracked=tracked)
        existing = (await self._known()).get("flood")
        labels = list(dict.fromkeys(list(self.settings.labels) + [self.settings.flood_label]))
        title = render("flood_title.txt.j2", count=len(a.keys), run=n.run).strip()
        if existing is None:
            issue = await self.gh.post(f"{self._base}/issues", data={"title": title, "body": body, "labels": labels})
            (await self._known())["flood"] = issue
            return
        data: dict = {"body": body, "title": title}
        if existing["state"] == "closed":
            data["state"] = "open"
        await self.gh.patch(f"{self._base}/issues/{existing['number']}", data=data)

    # ---- blame (after bisection)
    async def write_blame(self, key: str, culprit: Suspect, *, mention: str = "",
                          suspects: Sequence[Suspect] = (), good: str = "", bad: str = "") -> int:
        """Write the confirmed culprit into the issue's blame section and comment, mentioning
        ``mention`` (``@login`` or a name). Returns the issue number. Raises KeyError when the
        root cause has no issue."""
        state = load_state(self.store)
        t = state.tracked[key]
        issue = await self._find(t)
        if issue is None:
            raise KeyError(f"root cause {key!r} has no issue on {self.owner}/{self.repo}")
        c = _sus(culprit)
        blame = render("blame.md.j2", culprit=c, suspects=[_sus(s) for s in suspects], good=good, bad=bad)
        body = replace_section(issue.get("body") or "", "blame", blame)
        await self.gh.patch(f"{self._base}/issues/{issue['number']}", data={"body": body})
        await self.gh.post(f"{self._base}/issues/{issue['number']}/comments",
                           data={"body": render("culprit.md.j2", culprit=c, mention=mention)})
        return issue["number"]


_SAMPLE = re.compile(r"<summary>Sample output \(redacted\)</summary>\s*```text\n(.*?)\n```", re.S)
_TEST_ITEM = re.compile(r"\*\*Affected tests[^\n]*\n- `([^`\n]+)`")


def _sample_and_test(body: str) -> tuple[str, str]:
    """The sample output and the first affected test written into an issue body ("" when absent)."""
    m = _SAMPLE.search(body)
    t = _TEST_ITEM.search(body)
    return (m.group(1) if m else ""), (t.group(1) if t else "")


def _sus(s: Suspect) -> dict:
    return {"sha": s.sha, "subject": s.subject, "author": s.author, "score": s.score,
            "reasons": list(s.reasons), "upstream": s.upstream}
