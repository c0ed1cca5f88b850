"""Check runs for validation: one per suite (``forksync/L1/<suite>``) and the gate (``forksync/gate``).

Pure parts: :func:`check_name`, :func:`parse_external_id`, :func:`gate_external_id`, :func:`annotations` (failing tests →
Checks API annotations), :func:`suite_summary`. Edges: :func:`start_suite_run`,
:func:`finish_suite_run` and :func:`publish_gate` call the Checks API.

GitHub limits (REST docs, "Update a check run"): at most 50 annotations per request; further
annotations are *appended* by later updates of the same run, so :func:`finish_suite_run` sends
the first 50 with the conclusion and the rest in follow-up PATCHes of 50. Summaries are capped
at 65 535 characters.
"""
from __future__ import annotations

import hashlib
import re
from datetime import datetime, timezone

from bot.github.common import split_repo
from bot.templating import render
from bot.validation.gate import GATE_CHECK, GateDecision, PRState, render_summary

MAX_ANNOTATIONS_PER_UPDATE = 50
MAX_SUMMARY = 65_000
L1_PREFIX = "forksync/L1/"


def check_name(suite: str, platform: str, platforms_of_suite: int = 1, level: str = "L1") -> str:
    """``forksync/L1/<suite>`` (``forksync/L1/<suite>@<platform>`` when the suite runs on several
    platforms, one check run each)."""
    base = f"forksync/{level}/{suite}"
    return base if platforms_of_suite <= 1 else f"{base}@{platform}"


def external_id(suite: str, platform: str, level: str = "L1") -> str:
    return f"{level}:{suite}:{platform}"


def parse_external_id(value: str | None) -> tuple[str, str, str] | None:
    """``(level, suite, platform)`` of a suite check run's ``external_id``, else None
    (the gate's ``"gate:<required checks hash>"`` and foreign check runs)."""
    m = re.fullmatch(r"(L[123]):([A-Za-z0-9_.\-]+):([a-z0-9]+)", value or "")
    return (m.group(1), m.group(2), m.group(3)) if m else None


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def failing_test_path(t) -> str:
    """The repository path a failing test lives in: JUnit ``file``; lit's path after `` :: ``;
    else the id's part before ``::`` when it looks like a path; else the dotted classname as a
    module path (a trailing CamelCase class dropped)."""
    if getattr(t, "file", None):
        return t.file
    if " :: " in t.id:                       # lit: "<suite> :: <path in the suite>"
        return t.id.split(" :: ", 1)[1].strip()
    head = t.id.split("::", 1)[0].strip()
    if "/" in head or head.endswith(".py"):
        return head
    mod = (t.classname or head).split("::")[0]
    parts = [p for p in mod.split(".") if p]
    # pytest classnames may end with a class (CamelCase): drop it
    while parts and parts[-1][:1].isupper():
        parts.pop()
    return "/".join(parts) + ".py" if parts else head or "unknown"


def failing_test_line(path: str, traceback: str) -> int:
    """The last line number the traceback gives for ``path`` (``path:LINE``), else 1."""
    hits = re.findall(re.escape(path) + r":(\d+)", traceback or "")
    return int(hits[-1]) if hits else 1


def annotations(result) -> list[dict]:
    """One ``failure`` annotation per failed or errored test of a ``RunResult``, in report order."""
    out = []
    for t in result.tests:
        if t.outcome not in ("failed", "error"):
            continue
        path = failing_test_path(t)
        line = failing_test_line(path, t.traceback)
        msg = (t.message or (t.traceback.strip().splitlines() or [t.outcome])[-1]).strip() or t.outcome
        out.append({"path": path, "start_line": line, "end_line": line, "annotation_level": "failure",
                    "title": t.id[:255], "message": msg[:4000],
                    **({"raw_details": t.traceback[:16000]} if t.traceback else {})})
    return out


def conclusion_of(result) -> str:
    return "success" if result.verdict == "green" else "failure"


def title_of(result) -> str:
    c = result.counts
    if result.verdict == "green":
        return f"{c.passed} passed" + (f", {c.skipped} skipped" if c.skipped else "")
    codes = sorted({r.code for r in result.reasons})
    if result.outcome == "infrastructure":
        return "Infrastructure error on the runner: retry on another runner"
    if codes == ["test-failures"]:
        return f"{c.failed + c.error} failing of {c.total}"
    return "Red: " + ", ".join(codes)


def suite_summary(result, suite=None, max_failing: int = 20, earlier_red: list[dict] = ()) -> str:
    """The check run's markdown summary (``templates/checks/suite.md.j2``). ``earlier_red``: red
    results of earlier runs of the same commit a re-run replaced
    (:func:`bot.validation.store.superseded_runs` entries), shown on a green one as a flake."""
    failing = [t for t in result.tests if t.outcome in ("failed", "error")]
    skipped = [t.id for t in result.tests if t.outcome == "skipped"]
    expected = "—"
    if suite is not None:
        n = suite.expected_for(result.platform)
        expected = str(n) if n else (f"≥ {suite.min_tests}" if suite.min_tests else "—")
    text = render("checks/suite.md.j2", title=title_of(result), r=result, failing=failing,
                  shown=failing[:max_failing], expected=expected, skipped=skipped, skipped_shown=skipped[:max_failing],
                  earlier_red=list(earlier_red))
    return text[:MAX_SUMMARY]


async def start_suite_run(gh, full: str, sha: str, name: str, ext_id: str, *, suite: str, level: str,
                          platform: str, backend: str, now: float) -> dict:
    """Create the suite's check run ``in_progress`` on ``sha``; returns GitHub's check run."""
    return await gh.post("/repos/{owner}/{repo}/check-runs", split_repo(full), data={
        "name": name, "head_sha": sha, "status": "in_progress", "external_id": ext_id, "started_at": _iso(now),
        "output": {"title": f"Running on {platform}", "summary": render(
            "checks/suite_started.md.j2", suite=suite, level=level, platform=platform, sha=sha, backend=backend)}})


async def finish_suite_run(gh, full: str, run_id: int, result, suite=None, *, now: float,
                           earlier_red: list[dict] = ()) -> int:
    """Complete the check run with the result's conclusion, summary and annotations (≤ 50 per
    update, the rest appended by further updates); ``earlier_red`` as :func:`suite_summary`.
    Returns the number of annotations sent."""
    rv = {**split_repo(full), "check_run_id": run_id}
    notes = annotations(result)
    first, rest = notes[:MAX_ANNOTATIONS_PER_UPDATE], notes[MAX_ANNOTATIONS_PER_UPDATE:]
    title, summary = title_of(result), suite_summary(result, suite, earlier_red=earlier_red)
    await gh.patch("/repos/{owner}/{repo}/check-runs/{check_run_id}", rv, data={
        "status": "completed", "conclusion": conclusion_of(result), "completed_at": _iso(now),
        "output": {"title": title, "summary": summary, "annotations": first}})
    for i in range(0, len(rest), MAX_ANNOTATIONS_PER_UPDATE):
        await gh.patch("/repos/{owner}/{repo}/check-runs/{check_run_id}", rv, data={
            "output": {"title": title, "summary": summary, "annotations": rest[i:i + MAX_ANNOTATIONS_PER_UPDATE]}})
    return len(notes)


#: Findings that mean "still working on it" (the gate check stays in progress, not red): results
#: on their way, the bot's base update, a hold (a person's, or upstream's branch moved back past
#: the PR's commits), another required check still running, or the required checks themselves
#: unread (the reconcile tick re-checks in-progress gates, so lifting the hold, upstream returning,
#: a commit status turning green or GitHub answering again lets the PR go on without another event).
WAITING_CODES = frozenset({"pending-result", "missing-result", "stale-result", "stale-base", "hold", "check-pending",
                           "checks-unread", "upstream-rewound"})


def gate_conclusion(decision: GateDecision) -> str | None:
    """``success`` when allowed; None (in progress) while only waiting for results or a base
    update the bot is doing; else ``failure``."""
    if decision.allowed:
        return "success"
    if all(f.code in WAITING_CODES for f in decision.blocking):
        return None
    return "failure"


def required_fingerprint(required, apps=()) -> str:
    """The gate check run's ``external_id``: ``gate:<sha1 of the sorted required check names, 12
    hex>`` — the reconcile tick re-evaluates a PR whose required checks are no longer these.
    ``apps``: ``(name, app id)`` of the checks branch protection binds to one app; a binding
    enters as ``name@app``, so binding a check (or moving it to another app) changes the
    fingerprint too, while unbound names hash as before."""
    names = set(required) | {f"{n}@{a}" for n, a in apps}
    return "gate:" + hashlib.sha1("\n".join(sorted(names)).encode()).hexdigest()[:12]


#: what the gate held a PR for, as its check run's ``external_id`` carries it (:func:`gate_external_id`):
#: a unit it lands after still in flight, one closed unmerged that is not planned again
LANDS_AFTER, LANDS_AFTER_CLOSED = "lands-after", "lands-after-closed"


def gate_external_id(decision: GateDecision, pr: PRState) -> str:
    """The gate check run's ``external_id``: :func:`required_fingerprint` of the checks it decided
    with, then ``;lands-after`` and/or ``;lands-after-closed`` when its ``lands-after`` finding held
    the PR for a unit still in flight or one closed unmerged (``pr.lands_after`` /
    ``pr.lands_after_closed``). The reconcile tick reads what the gate decided from this, never from
    the summary's words (a template's). E.g. ``gate:0123456789ab;lands-after``."""
    holds = []
    if any(f.code == "lands-after" for f in decision.blocking):
        holds += [LANDS_AFTER] if pr.lands_after else []
        holds += [LANDS_AFTER_CLOSED] if pr.lands_after_closed else []
    return ";".join([required_fingerprint(pr.required_checks, pr.check_apps), *holds])


def parse_gate_external_id(value: str | None) -> tuple[str, frozenset[str]]:
    """``(required checks fingerprint, holds)`` of a gate check run's ``external_id``
    (:func:`gate_external_id`); ``("", frozenset())`` for none. A run written before the holds were
    carried reads as holding nothing."""
    fingerprint, *holds = (value or "").split(";")
    return fingerprint, frozenset(holds)


async def publish_gate(gh, full: str, decision: GateDecision, pr: PRState, *, now: float,
                       notes: list[str] = (), conclusion: str | None = None) -> dict:
    """Create or update the ``forksync/gate`` check run on the PR's head: title, the list of what
    is missing (``templates/checks/gate.md.j2``) and ``notes`` (merge attempts) as its text.
    ``conclusion`` overrides :func:`gate_conclusion` (e.g. a base update GitHub refused)."""
    rv = split_repo(full)
    existing = None
    async for r in gh.getiter("/repos/{owner}/{repo}/commits/{ref}/check-runs{?check_name}",
                              {**rv, "ref": pr.head_sha, "check_name": GATE_CHECK}, iterable_key="check_runs"):
        existing = r
        break
    concl = conclusion or gate_conclusion(decision)
    output = {"title": decision.title, "summary": render_summary(decision, pr)[:MAX_SUMMARY]}
    if notes:
        output["text"] = render("checks/gate_note.md.j2", notes=list(notes))[:MAX_SUMMARY]
    body: dict = {"output": output, "external_id": gate_external_id(decision, pr)}
    if concl:
        body.update(status="completed", conclusion=concl, completed_at=_iso(now))
    else:
        body.update(status="in_progress")
    if existing is not None and not (existing.get("status") == "completed" and concl is None):
        return await gh.patch("/repos/{owner}/{repo}/check-runs/{check_run_id}",
                              {**rv, "check_run_id": existing["id"]}, data=body)
    return await gh.post("/repos/{owner}/{repo}/check-runs", rv,
                         data={"name": GATE_CHECK, "head_sha": pr.head_sha, **body})
