"""Summaries of test results for sync PRs.

The counts and the failing tests shown to reviewers are computed here from the runner's result
JSON (never taken from the agent); the agent adds a few sentences of prose, sanitised by the
output rails. With agents off, the same section renders without the prose and says why.

The result JSON's shape belongs to ``gpu_runner/result.py``; until that contract settles this
module reads any JSON object by walking it for lists of test records: objects with an outcome
(``outcome``/``status``/``result``) and a name (``nodeid``/``id``/``name``/``test``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bot.agents.client import AgentClient, AgentSkipped, unfinished
from bot.agents.conflict_rails import RailViolation
from bot.agents.output import Cleaner, check_prose
from bot.agents.redact import Redactor
from bot.agents.render import data_block, new_nonce, render

MAX_RESULT_CHARS = 30_000
MAX_FAILING_SHOWN = 20
FAILED = ("failed", "error", "failure", "crashed", "timeout", "timed_out")
_OUTCOME_KEYS = ("outcome", "status", "result")
_NAME_KEYS = ("nodeid", "id", "name", "test")


@dataclass(frozen=True)
class SummaryOutcome:
    body: str
    summary: str = ""
    reason: str = ""
    counts: dict | None = None


def result_records(result: Any) -> list[tuple[str, str]]:
    """Every ``(name, outcome)`` in the result JSON, in document order (outcome lower-cased)."""
    out: list[tuple[str, str]] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            outcome = next((x[k] for k in _OUTCOME_KEYS if isinstance(x.get(k), str)), None)
            name = next((x[k] for k in _NAME_KEYS if isinstance(x.get(k), str)), None)
            if outcome is not None and name is not None:
                out.append((name, outcome.lower()))
                return
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(result)
    return out


def count_outcomes(result: Any) -> tuple[dict[str, int], list[str]]:
    """(``{outcome: count}`` sorted by outcome name, failing test names in order)."""
    recs = result_records(result)
    counts: dict[str, int] = {}
    for _, o in recs:
        counts[o] = counts.get(o, 0) + 1
    return dict(sorted(counts.items())), [n for n, o in recs if o in FAILED]


def verdict_line(result: Any) -> str:
    """``"red (fail): test-failures — 2 failed"``-style line from a ``forksync-result/1`` object
    (``gpu_runner/result.py``), or "" when the result has no verdict."""
    if not isinstance(result, dict) or not isinstance(result.get("verdict"), str):
        return ""
    reasons = "; ".join(f"{r.get('code', '')}: {r.get('detail', '')}".strip(": ")
                        for r in result.get("reasons") or [] if isinstance(r, dict))
    head = result["verdict"] + (f" ({result['outcome']})" if isinstance(result.get("outcome"), str) else "")
    return f"{head}: {reasons}" if reasons else head


async def summarize_results(client: AgentClient | None, result: Any, title: str = "") -> SummaryOutcome:
    """Render the test-results section; ``client`` None (or agents off) renders it without prose.
    ``result``: the runner's result (``gpu_runner.result.RunResult`` or its JSON as a dict)."""
    if hasattr(result, "model_dump"):
        result = result.model_dump(by_alias=True, mode="json")
    counts, failing = count_outcomes(result)
    base = dict(title=title, counts=counts, failing=failing[:MAX_FAILING_SHOWN],
                more_failing=max(0, len(failing) - MAX_FAILING_SHOWN), verdict=verdict_line(result))
    if client is None:
        reason = "agents are off"
        base["verdict"] = Redactor().redact(base["verdict"])
        base["failing"] = [Redactor().redact(t) for t in base["failing"]]
        return SummaryOutcome(render("test_summary.md.j2", summary="", reason=reason, model="",
                                     sanitized_notes=[], **base), reason=reason, counts=counts)
    cleaner = Cleaner(client.settings)
    base["failing"] = [cleaner.secret_free(t) for t in base["failing"]]
    base["verdict"] = cleaner.secret_free(base["verdict"])
    reason = ""
    reply = None
    if not client.settings.summaries:
        reason = "the summary agent is off (`agents.summaries: false`)"
    else:
        redactor = Redactor()
        nonce = new_nonce()
        text = json.dumps(result, indent=1, sort_keys=True, default=str)[:MAX_RESULT_CHARS]
        user = render("prompts/summary.md.j2", counts=counts,
                      results_block=data_block("test-results", redactor.redact(text, "results"), nonce))
        try:
            reply = await client.call("summary", system=render("prompts/system.md.j2", nonce=nonce, task=""),
                                      messages=[{"role": "user", "content": user}], max_tokens=1024,
                                      redactor=redactor)
        except AgentSkipped as e:
            reason = e.reason
        else:
            try:
                if (cut := unfinished(reply)) is not None:
                    raise RailViolation("output parses", cut)
                check_prose(client.settings, [reply.text])
            except RailViolation as v:
                reason = f"the agent's summary was rejected by the rails ({v.rail}: {v.detail})"
                reply = None
        if reply is not None and not reason:
            summary = cleaner.text(reply.text.strip(), 1200)
            if summary:
                body = render("test_summary.md.j2", summary=summary, reason="", model=cleaner.text(reply.model, 80),
                              sanitized_notes=cleaner.notes, **base)
                return SummaryOutcome(body, summary=summary, counts=counts)
            reason = "the agent returned no text"
    body = render("test_summary.md.j2", summary="", reason=cleaner.text(reason, 500), model="",
                  sanitized_notes=[], **base)
    return SummaryOutcome(body, reason=reason, counts=counts)
