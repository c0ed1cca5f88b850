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
from bot.github.claims import client_claim
from bot.github.sections import placed_section, replace_section
from bot.store import Store
from bot.triage import store as triage_store
from bot.triage.lifecycle import Action, Nightly, Tracked, TriageState, decide, rekey
from bot.triage.records import test_function
from bot.triage.signature import SIGNATURE_VERSION
from bot.triage.suspects import Suspect

__all__ = ["TriageIssues", "load_state", "save_state", "render", "marker", "replace_section", "placed_section"]


def render(name: str, **ctx) -> str:
    """Render ``templates/triage/<name>``."""
    return templating.render(f"triage/{name}", **ctx)


def marker(key: str) -> str:
    return f"<!-- forksync:triage:{key} -->"


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


def load_state(store: Store, repo: str) -> TriageState:
    """Fork ``repo``'s lifecycle state (``owner/name``; ``""``: the unassigned rows)."""
    tracked_rows, run_rows, green_rows, meta = triage_store.state_rows(store, repo)
    tracked = {r["key"]: _tracked_from_json(r["data"]) for r in tracked_rows}
    processed = frozenset(r["run"] for r in run_rows)
    green = {r["test"]: (r["commit_sha"], r["time"], r.get("run") or "") for r in green_rows}
    flood = json.loads(meta.get("flood") or "{}")
    # of two nightlies of one time, the one processed later is the newest
    dated = [r for r in run_rows if r.get("nightly_at")]
    top = max(dated, key=lambda r: (r["nightly_at"], r["processed_at"] or 0, r["run"])) if dated else None
    newest = (top["run"], int(top["nightly_at"])) if top else ("", 0)
    return TriageState(tracked, processed, green, tuple(flood.get("waiting", ())), tuple(flood.get("opened", ())), newest)


def save_state(store: Store, repo: str, state: TriageState, run: str, actions: Sequence[Action], now: int,
               drop: Sequence[str] = (), run_at: int | None = None) -> None:
    """Write fork ``repo``'s state and mark its nightly ``run`` processed at ``now``, in one
    transaction (``BEGIN IMMEDIATE``); ``run_at``: when the nightly ran (epoch s); ``drop``: keys
    no longer tracked (re-keyed causes' old keys)."""
    tracked = [(k, _tracked_to_json(t), now) for k, t in state.tracked.items()]
    green = [(k, v[0], v[1], v[2] if len(v) > 2 else "") for k, v in state.last_green.items()]
    meta = [("flood", json.dumps({"waiting": list(state.flood), "opened": list(state.flood_opened)}))]
    triage_store.save_state_rows(store, repo, tracked, green, (run, now, json.dumps([asdict(a) for a in actions]), run_at), meta,
                                 tuple(k for k in drop if k not in state.tracked))


def _utc(t: int) -> str:
    return _time.strftime("%Y-%m-%d %H:%M", _time.gmtime(t)) if t else "—"


# --------------------------------------------------------------------------- the edge
#: the key of the fork's claim (:mod:`bot.github.claims`) under which its triage state is loaded,
#: its issues looked up and written, and the state saved: :meth:`TriageIssues.process`
TRIAGE_CLAIM = "triage-issues"

SuspectsFor = Callable[[Tracked], Awaitable[tuple[Sequence[Suspect], str, str]]]


class TriageIssues:
    """Runs the lifecycle for one fork (its own state: causes, processed nightlies, last greens): ``await process(nightly)`` decides (pure core), then
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
    def full_name(self) -> str:
        """The fork, ``owner/name``: the lifecycle state this instance reads and writes is its."""
        return f"{self.owner}/{self.repo}"

    @property
    def _base(self) -> str:
        return f"/repos/{self.owner}/{self.repo}"

    async def process(self, nightly: Nightly) -> list[Action]:
        """Decide on ``nightly`` and act on the fork's issues; the actions taken (none when the
        nightly was processed already). Held under the fork's triage claim (:data:`TRIAGE_CLAIM`)
        of the claims ``self.gh`` carries (:attr:`bot.github.client.GitHubClient.claims`: the worker
        process's, on ``<workdir>/locks``): two runs at once — two workers' pollers, ``forksync
        triage nightly --github-url`` on the App's workdir — would both load the state, both list the issues (``_known``) and
        both open one per cause. The claim is a leaf (:mod:`bot.github.claims`): inside it only
        GitHub requests are made and git is read (``suspects_for``); its comments are posted plain,
        never through :func:`bot.github.common.comment_once` (which claims, and would raise
        :class:`bot.github.claims.ClaimOrderError` here). A client without claims acts unclaimed.
        Raises :class:`bot.github.claims.ClaimOrderError` when called under another object's claim."""
        async with client_claim(self.gh, self.full_name, TRIAGE_CLAIM):
            return await self._process(nightly)

    async def _process(self, nightly: Nightly) -> list[Action]:
        state = load_state(self.store, self.full_name)
        stored = tuple(state.tracked)
        if self.key_of is not None:
            key_of = self.key_of
            state = rekey(state, lambda t: key_of(t.sample, test_function(min(t.tests, default=""))) if t.sample else None,
                          SIGNATURE_VERSION)
        new, actions = decide(state, nightly, self.settings)
        if not actions and nightly.run in state.processed:
            return []
        self._issues = None
        for a in actions:
            if a.kind == "flood":
                await self._flood(new, a, nightly)
                continue
            if a.kind == "flood-close":
                await self._flood_close(new, a, nightly)
                continue
            key = a.keys[0]
            t = new.tracked[key]
            if a.kind == "open":
                t = await self._open(t, nightly, new)
            elif a.kind == "update":       # failed again: a person's close is undone (below)
                t = await self._update(t, nightly, failed_again=True)
            elif a.kind == "refresh":
                t = await self._update(t, nightly)
            elif a.kind == "reopen":
                t = await self._reopen(t, nightly)
            elif a.kind == "close":
                t = await self._close(t, nightly)
            new.tracked[key] = t
        save_state(self.store, self.full_name, new, nightly.run, actions, int(self.clock()), drop=stored,
                   run_at=nightly.time or None)
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
    def _status(self, t: Tracked, n: Nightly | None = None) -> str:
        runs = [{"run": r, "time": _utc(tm), "commit": c} for r, tm, c in t.fail_runs]
        latest = None
        if n is not None:
            failed = bool(t.tests & (n.ran - n.passed)) or any(g.key == t.key for g in n.groups)
            ran = bool(t.tests) and t.tests <= n.ran
            latest = {"run": n.run, "commit": n.commit, "time": _utc(n.time),
                      "result": "failed" if failed else "passed" if ran else "did not run (no evidence)"}
        return render("status.md.j2", runs=runs, platforms=sorted(t.platforms), tests=affected_tests(t.tests, n),
                      cases=len(t.tests), first_seen=_utc(t.first_seen), last_seen=_utc(t.last_seen),
                      green_streak=t.green_streak, close_after=self.settings.close_after_green_nights,
                      latest=latest, last_green=t.last_green, last_green_run=t.last_green_run)

    def _labels(self, t: Tracked) -> list[str]:
        labels = list(self.settings.labels) + list(t.labels)
        if t.crash and self.settings.crash_label:
            labels.append(self.settings.crash_label)
        return list(dict.fromkeys(labels))

    def _title(self, t: Tracked, state: TriageState | None) -> str:
        """``[nightly] <test>: <fault>``, unique among the tracked causes' issues (a clash gets
        the root cause id appended: two faults never share a title)."""
        title = render("title.txt.j2", title=t.title, crash=t.crash, tests=title_tests(t.tests)).strip()
        taken = {x.issue_title for k, x in (state.tracked.items() if state else ()) if k != t.key and x.issue_title}
        if title in taken:
            title = f"{title} ({t.key})"
        return title

    async def _open(self, t: Tracked, n: Nightly, state: TriageState | None = None) -> Tracked:
        existing = await self._find(t)
        if existing is not None:                       # made before a restart: reuse it
            t = replace(t, issue=existing["number"], issue_title=existing.get("title") or t.issue_title)
            return await (self._reopen(t, n) if existing["state"] == "closed" else self._update(t, n))
        suspects, good, bad = (), t.last_green, t.first_red
        if self.suspects_for is not None and t.cls == "real":
            suspects, good, bad = await self.suspects_for(t)
        bad_run = t.fail_runs[0][0] if t.fail_runs else ""
        blame = render("blame.md.j2", culprit=None, suspects=[_sus(s) for s in suspects], good=good or "", bad=bad or "",
                       good_run=t.last_green_run if good == t.last_green else "", bad_run=bad_run)
        body = render("issue.md.j2", marker=marker(t.key), key=t.key, rule_title=self.rule_titles.get(t.key, ""),
                      cls=t.cls, crash=t.crash, signature=t.signature, status=self._status(t, n), blame=blame,
                      sample=t.sample, suggested_rule=self.suggestions.get(t.key))
        title = self._title(t, state)
        issue = await self.gh.post(f"{self._base}/issues", data={"title": title, "body": body, "labels": self._labels(t)})
        (await self._known())[t.key] = issue
        return replace(t, issue=issue["number"], issue_title=title)

    async def _update(self, t: Tracked, n: Nightly | None = None, *, failed_again: bool = False) -> Tracked:
        issue = await self._find(t)
        if issue is None:
            return replace(t, issue=None)
        if failed_again and n is not None and issue.get("state") == "closed" and issue.get("state_reason") != "not_planned":
            # a person closed it as done, yet the cause failed again: reopened, as forksync's own
            # close would be; closed as not planned (a person's "won't fix") it stays closed
            await self._reopen_on_github(issue, n)
        body = placed_section(issue.get("body") or "", "status", self._status(t, n))
        if marker(t.key) not in body and body.startswith("<!-- forksync:triage:"):
            body = marker(t.key) + "\n" + body      # re-keyed: the current key's marker joins the old one
        if body != issue.get("body"):
            await self.gh.patch(f"{self._base}/issues/{issue['number']}", data={"body": body})
            issue["body"] = body
        return replace(t, issue=issue["number"])

    async def _reopen(self, t: Tracked, n: Nightly) -> Tracked:
        issue = await self._find(t)
        if issue is None:
            return await self._open(replace(t, issue=None), n)
        t = replace(t, issue=issue["number"])
        if issue["state"] == "closed":
            await self._reopen_on_github(issue, n)
        return await self._update(t, n)

    async def _reopen_on_github(self, issue: dict, n: Nightly) -> None:
        """Reopen ``issue`` with the comment saying which nightly failed again."""
        await self.gh.patch(f"{self._base}/issues/{issue['number']}", data={"state": "open"})
        await self.gh.post(f"{self._base}/issues/{issue['number']}/comments",
                           data={"body": render("reopened.md.j2", run=n.run, commit=n.commit)})
        issue["state"] = "open"

    async def _close(self, t: Tracked, n: Nightly) -> Tracked:
        issue = await self._find(t)
        if issue is None:
            return t
        t = await self._update(replace(t, issue=issue["number"]), n)
        if issue["state"] == "open":
            await self.gh.post(f"{self._base}/issues/{issue['number']}/comments",
                               data={"body": render("closed.md.j2", streak=t.green_streak, run=n.run, commit=n.commit)})
            await self.gh.patch(f"{self._base}/issues/{issue['number']}",
                                data={"state": "closed", "state_reason": "completed"})
        return t

    async def _flood(self, state: TriageState, a: Action, n: Nightly) -> None:
        waiting = [state.tracked[k] for k in a.keys]
        opened = [state.tracked[k] for k in state.flood_opened if k in state.tracked]
        body = render("flood.md.j2", run=n.run, commit=n.commit, cap=self.settings.max_new_issues_per_run,
                      waiting=[dict(_flood_row(t), failed=any(g.key == t.key for g in n.groups)) for t in waiting],
                      opened=[_flood_row(t) for t in opened])
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
        existing.update(data)

    async def _flood_close(self, state: TriageState, a: Action, n: Nightly) -> None:
        existing = (await self._known()).get("flood")
        if existing is None or existing["state"] == "closed":
            return
        await self.gh.post(f"{self._base}/issues/{existing['number']}/comments",
                           data={"body": render("flood_closed.md.j2", run=n.run, commit=n.commit)})
        await self.gh.patch(f"{self._base}/issues/{existing['number']}", data={"state": "closed", "state_reason": "completed"})
        existing["state"] = "closed"

    # ---- blame (after bisection)
    async def write_blame(self, key: str, culprit: Suspect, *, mention: str = "",
                          suspects: Sequence[Suspect] = (), good: str = "", bad: str = "") -> int:
        """Write the confirmed culprit into the issue's blame section and comment, mentioning
        ``mention`` (``@login`` or a name). Returns the issue number. Raises KeyError when the
        root cause has no issue."""
        state = load_state(self.store, self.full_name)
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


def _flood_row(t: Tracked) -> dict:
    return {"key": t.key, "cls": t.cls, "runs": t.runs, "issue": t.issue, "title": t.title,
            "tests": title_tests(t.tests), "cases": len(t.tests), "signature": t.signature}


def affected_tests(cases, n: Nightly | None = None) -> list[dict]:
    """The affected test cases grouped by test function, for the status table:
    ``[{"test": "k.py::test_dot", "params": ["64-fp16", …], "of": 8 | None}]`` — ``of`` is how many
    cases of that function ran in nightly ``n`` (None when unknown)."""
    by_fn: dict[str, list[str]] = {}
    for c in sorted(cases):
        fn = test_function(c)
        by_fn.setdefault(fn, [])
        if c != fn:
            by_fn[fn].append(c[len(fn) + 1:-1])
    out = []
    for fn, params in by_fn.items():
        of = None
        if params and n is not None:
            of = sum(1 for c in n.ran if c != fn and test_function(c) == fn) or None
        out.append({"test": fn, "params": params, "of": of})
    return out


def title_tests(cases) -> str:
    """The tests a title names: ``test_dot[64-fp16]`` for one case, ``test_dot (4 cases)`` for
    several of one function, ``test_dot, test_add`` for two functions, ``test_dot and 3 more``."""
    fns: dict[str, list[str]] = {}
    for c in sorted(cases):
        fns.setdefault(test_function(c), []).append(c)
    short = lambda x: x.rsplit("::", 1)[-1] if "::" in x else x.rsplit("/", 1)[-1]  # noqa: E731
    if not fns:
        return ""
    if len(fns) == 1:
        fn, cs = next(iter(fns.items()))
        return short(cs[0]) if len(cs) == 1 else f"{short(fn)} ({len(cs)} cases)"
    names = [short(fn) for fn in fns]
    return ", ".join(names) if len(names) == 2 else f"{names[0]} and {len(names) - 1} more"


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
