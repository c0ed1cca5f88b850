"""Scoring the conflict agent on the fork's own resolved picks (the model call is the edge).

The benchmark (:mod:`bot.resolve.bench`) scores the deterministic rules; the agent is asked only
about what they declined, exactly as on a live chain. For each replayed pick with declined files,
one request (:func:`bot.agents.conflict.propose`: the same prompt, redaction and rails 1–5 as a
live resolution) is made with those files; each answer is scored against the file the fork landed
(``exact`` / ``ws`` / ``wrong``), and a pick the agent did not answer — rejected by a rail, skipped
(budget, API trouble, an unsupported conflict such as a deletion or a binary file) — scores its
files ``declined`` with the reason. ``chain+agent`` is what a live sync would do: the rules'
answer where they decide, else the agent's.

Runs are recorded in the store (table ``resolve_agent_runs``: model, prompt digest, snapshot,
part, the scores and the whole document) so that a later run — another model, another prompt —
is compared with the earlier ones on the same picks.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Callable, Sequence
from urllib.parse import urlsplit

from bot.agents.client import AgentClient
from bot.agents.conflict import propose
from bot.agents.conflict_rails import ConflictCase, ConflictFile, relabel
from bot.agents.redact import redact
from bot.resolve.bench import Result, Score, outcome, split
from bot.store import Store, table
from bot.templating import environment

SCHEMA = "forksync.resolve-agent-bench/1"
PARTS = ("all", "dev", "held-out")

RUNS_TABLE = table(
    "resolve_agent_runs",
    {"id": int, "recorded_at": float, "model": str, "api": str, "prompt_digest": str, "fork_tip": str, "upstream_tip": str,
     "part": str, "picks": int, "files": int, "exact": int, "ws": int, "wrong": int, "declined": int,
     "combined_exact": int, "combined_files": int, "doc_json": str},
    pk="id",
)


@dataclass(frozen=True)
class AgentAsk:
    """One replayed pick's files the rules declined (``files``: :class:`bot.resolve.replay.ReplayedFile`)."""

    replay: object
    part: str
    files: tuple


def asks(replays: Sequence, res: Result, part: str = "held-out", limit: int | None = None) -> list[AgentAsk]:
    """Pure: the picks of ``part`` (``all``, ``dev``, ``held-out``) whose files the rules' chain
    declined in ``res`` (:func:`bot.resolve.bench.score`), oldest first, at most ``limit`` picks."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}, not {part!r}")
    dev, held, _ = split(replays)
    part_of = {id(r): "dev" for r in dev} | {id(r): "held-out" for r in held}
    declined = {(r["fork_commit"], r["path"]) for r in res.outcomes if r["outcomes"]["chain"] == "declined"}
    out = []
    for rep in dev + held:
        if part != "all" and part_of[id(rep)] != part:
            continue
        files = tuple(f for f in rep.files if (rep.pick.fork_commit, f.conflict.path) in declined)
        if files:
            out.append(AgentAsk(rep, part_of[id(rep)], files))
    return out[:limit] if limit is not None else out


def case_of(ask: AgentAsk, upstream_message: str) -> ConflictCase:
    """Pure: the agent's case for one ask, from the replay's texts (markers relabelled as a live
    case has them). A deletion on either side or a binary file makes it unsupported."""
    pick = ask.replay.pick
    files, unsupported = [], []
    for f in ask.files:
        c = f.conflict
        # a side without the file has no merge output either: said as a deletion, as live
        if c.ours is None or c.theirs is None:
            unsupported.append(f"{c.path}: deleted on one side and changed on the other")
        elif c.binary or c.merged is None:
            unsupported.append(f"{c.path}: binary file")
        else:
            files.append(ConflictFile(c.path, relabel(c.merged, pick.upstream), c.base, c.ours, c.theirs))
    return ConflictCase(upstream_sha=pick.upstream, upstream_message=upstream_message, fork_tip=pick.onto,
                        files=tuple(files), unsupported="; ".join(unsupported))


def prompt_digest() -> str:
    """sha256 (first 16 hex digits) of the prompt templates the agent is asked with, so runs with
    different prompts are told apart."""
    h = hashlib.sha256()
    env = environment()
    for name in ("agents/prompts/system.md.j2", "agents/prompts/conflict.md.j2"):
        h.update(env.loader.get_source(env, name)[0].encode("utf-8"))
    return h.hexdigest()[:16]


async def score_agent(client: AgentClient, replays: Sequence, res: Result, *, message_of: Callable[[str], str],
                      part: str = "held-out", limit: int | None = None) -> dict:
    """Ask the agent about every declined file of ``part`` and score it; returns the
    ``forksync.resolve-agent-bench/1`` document: ``scores[part]`` for ``agent`` (the asked files)
    and ``chain+agent`` (every conflicted file of the scored picks' part), per-file ``outcomes``
    with the agent's status and reason, and ``model`` / ``prompt_digest``. ``message_of(sha)``
    gives an upstream commit's message. Never raises for agent trouble (a ``declined`` file)."""
    todo = asks(replays, res, part, limit)
    rows, models, tokens = [], [], 0
    agent = {p: Score() for p in PARTS}
    for ask in todo:
        prop = await propose(client, case_of(ask, message_of(ask.replay.pick.upstream)))
        if prop.api_failure:
            # an API that refuses or cannot be reached would score every later file "declined"
            # like a model that declines: the run stops, and nothing is recorded
            raise AgentAPIError(f"the Anthropic API at {api_of(client)} failed on pick {ask.replay.pick.fork_commit[:12]}: "
                                f"{prop.reason}. Check the URL (--base-url or "
                                "agents.base_url) and the key (FORKSYNC_ANTHROPIC_KEY); nothing was recorded")
        if prop.model:
            models.append(prop.model)
        tokens += prop.prompt_tokens
        answers = {f.path: f.content for f in prop.resolution.files} if prop.resolution else {}
        # a rail's detail may quote the fork's text: redacted, as the live report's is
        why = redact(prop.reason or (f"{prop.rail}: {prop.detail}" if prop.rail else ""))
        for f in ask.files:
            path = f.conflict.path
            got = outcome(answers[path], f.landed) if path in answers else "declined"
            for p in ("all", ask.part):
                agent[p].add(got)
            rows.append({"fork_commit": ask.replay.pick.fork_commit, "upstream": ask.replay.pick.upstream, "path": path,
                         "kind": f.kind, "part": ask.part, "status": prop.status, "outcome": got,
                         "why": "" if got != "declined" else why})
    # chain+agent over every conflicted file of the picks' part: the rules' answer, else the agent's
    asked = {(r["fork_commit"], r["path"]): r["outcome"] for r in rows}
    scored_picks = {a.replay.pick.fork_commit for a in todo}
    # a pick beyond the limit (declined files, not asked) is left out of the combined figure with
    # all its files: its rule-decided files alone would raise the figure
    not_asked = {r["fork_commit"] for r in res.outcomes
                 if r["outcomes"]["chain"] == "declined" and r["fork_commit"] not in scored_picks}
    combined = {p: Score() for p in PARTS}
    for r in res.outcomes:
        if part != "all" and r["part"] != part:
            continue
        if limit is not None and r["fork_commit"] in not_asked:
            continue
        o = r["outcomes"]["chain"]
        if o == "declined":
            o = asked.get((r["fork_commit"], r["path"]), "declined")
        for p in ("all", r["part"]):
            combined[p].add(o)
    return {"schema": SCHEMA, "model": models[-1] if models else client.settings.model,
            "api": api_of(client), "prompt_digest": prompt_digest(), "part": part, "limit": limit, "picks": len(todo),
            "prompt_tokens_estimated": tokens,
            "scores": {p: {"agent": agent[p].as_json(), "chain+agent": combined[p].as_json()}
                       for p in (PARTS if part == "all" else (part,)) if combined[p].files or agent[p].files},
            "outcomes": rows}


class AgentAPIError(RuntimeError):
    """The API refused a request or could not be reached during a benchmark run."""


def api_of(client: AgentClient) -> str:
    """The API the client talks to, as ``scheme://host[:port]`` (no path, no credentials)."""
    url = getattr(client, "base_url", None) or "https://api.anthropic.com"
    parts = urlsplit(url if "://" in url else "//" + url)
    host = parts.hostname or url
    return f"{parts.scheme or '(no scheme)'}://{host}" + (f":{parts.port}" if parts.port else "")


def record(store: Store, doc: dict, *, fork_tip: str, upstream_tip: str, now: float) -> int:
    """Store one run (``doc`` from :func:`score_agent`); returns its id."""
    s = doc["scores"].get(doc["part"], {"agent": Score().as_json(), "chain+agent": Score().as_json()})
    a, c = s["agent"], s["chain+agent"]
    with store.lock:
        store.db[RUNS_TABLE.name].insert({
            "recorded_at": now, "model": doc["model"], "api": doc.get("api", ""), "prompt_digest": doc["prompt_digest"], "fork_tip": fork_tip,
            "upstream_tip": upstream_tip, "part": doc["part"], "picks": doc["picks"], "files": a["files"],
            "exact": a["exact"], "ws": a["ws"], "wrong": a["wrong"], "declined": a["declined"],
            "combined_exact": c["exact"], "combined_files": c["files"], "doc_json": json.dumps(doc, sort_keys=True)})
        return int(store.db.execute("SELECT max(id) FROM resolve_agent_runs").fetchone()[0])


def earlier_runs(store: Store, *, fork_tip: str | None = None, limit: int = 10) -> list[dict]:
    """The last ``limit`` recorded runs, newest first (optionally only on ``fork_tip``), without
    their documents."""
    where, args = ("WHERE fork_tip = ?", [fork_tip]) if fork_tip else ("", [])
    cols = [c for c in RUNS_TABLE.columns if c != "doc_json"]
    with store.lock:
        cur = store.db.execute(f"SELECT {', '.join(cols)} FROM resolve_agent_runs {where} ORDER BY id DESC LIMIT ?",
                               [*args, limit])
        return [dict(zip(cols, row)) for row in cur.fetchall()]


__all__ = ["SCHEMA", "AgentAsk", "AgentAPIError", "api_of", "asks", "case_of", "prompt_digest", "score_agent", "record", "earlier_runs", "RUNS_TABLE"]
