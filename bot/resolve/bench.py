"""Scoring deterministic resolvers against the fork's own resolved picks (pure; no git, no I/O).

Input: the replayed picks and merges (:class:`bot.resolve.replay.PickReplay`), each conflicted
file with the file the fork landed (a merge: the merge commit's file). Every strategy answers
every file, and each answer is scored:

* ``exact`` — byte for byte the landed file (a deletion matches a deleted file);
* ``ws`` — equal after whitespace normalisation (blank lines dropped, runs of blanks → one space,
  lines stripped) but not exact;
* ``wrong`` — decided and neither; ``declined`` — the strategy said it cannot decide.

Precision = exact / decided; coverage = exact / files. Strategies: each rule alone, the chain of
the configured rules (``chain``), and the baselines ``ours`` / ``theirs`` (a side's whole file),
``ours-hunks`` / ``theirs-hunks`` / ``union`` (every conflict hunk one side or both, as
``git merge-file --ours|--theirs|--union``).

The held-out split is frozen by a rule, never by looking at results: picks (and merges) ordered
by the fork commit's committer time (then sha), the newest ⌈N/3⌉ of the N found are
``held-out``, the others ``dev``; rules were developed on ``dev`` only. Memory-based rules
(``rerere``, ``fork-deleted``) learn only from picks and merges the fork landed before the one
scored (a file landed with conflict markers teaches no resolution).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Sequence

from bot.resolve.rules import RULES, Declined, Memory, baseline, resolve_file

SCHEMA = "forksync.resolve-bench/1"
BASELINES = ("ours", "theirs", "ours-hunks", "theirs-hunks", "union")
KINDS = ("C++", "Python", "MLIR", "TableGen", "CMake/txt", "CI yaml", "other")
SPLIT_RULE = "picks ordered by fork committer time (then sha); the newest ceil(N/3) are held out"
_SOURCE_COUNTS = ("replayed", "conflicting", "files", "files_with_markers", "with_markers")


def normalize_ws(text: str | None) -> str | None:
    if text is None:
        return None
    return "\n".join(" ".join(ln.split()) for ln in text.splitlines() if ln.strip())


@dataclass
class Score:
    files: int = 0
    exact: int = 0
    ws: int = 0
    wrong: int = 0
    declined: int = 0

    def add(self, outcome: str) -> None:
        self.files += 1
        setattr(self, outcome, getattr(self, outcome) + 1)

    @property
    def decided(self) -> int:
        return self.exact + self.ws + self.wrong

    @property
    def precision(self) -> float | None:
        return self.exact / self.decided if self.decided else None

    @property
    def coverage(self) -> float | None:
        return self.exact / self.files if self.files else None

    def as_json(self) -> dict:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 4)
        return {"files": self.files, "exact": self.exact, "ws": self.ws, "wrong": self.wrong, "declined": self.declined,
                "precision": r(self.precision), "coverage": r(self.coverage)}


@dataclass
class Result:
    """Scores per part (``all``, ``dev``, ``held-out``) → strategy → kind (``*`` = every kind).
    ``picks`` / ``conflicting_picks`` count picks and merges together; ``sources``: per source
    (``pick``, ``merge``) and part, ``replayed``, ``conflicting``, ``files`` and the files (and
    picks or merges) the fork landed with conflict markers in them, ``files_with_markers`` /
    ``with_markers`` — scored like any other file, only flagged."""

    split_time: int | None
    picks: dict[str, int]
    conflicting_picks: dict[str, int]
    scores: dict[str, dict[str, dict[str, Score]]] = field(default_factory=dict)
    outcomes: list[dict] = field(default_factory=list)
    sources: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)

    def score(self, part: str, strategy: str, kind: str = "*") -> Score:
        return self.scores.setdefault(part, {}).setdefault(strategy, {}).setdefault(kind, Score())


def outcome(answer, landed: str | None, normalized: dict[str, str | None] | None = None) -> str:
    """``exact`` / ``ws`` / ``wrong`` / ``declined`` for one answer (text, None = deletion, or Declined).
    ``normalized``: a cache of :func:`normalize_ws` by text, shared by the answers for one file
    (several strategies often give the same text; normalizing a large file dominates scoring)."""
    if isinstance(answer, Declined):
        return "declined"
    if answer == landed:
        return "exact"
    if answer is not None and landed is not None:
        cache = {} if normalized is None else normalized
        for t in (answer, landed):
            if t not in cache:
                cache[t] = normalize_ws(t)
        if cache[answer] == cache[landed]:
            return "ws"
    return "wrong"


def split(replays: Sequence) -> tuple[list, list, int | None]:
    """``(dev, held_out, boundary)`` by :data:`SPLIT_RULE`; ``boundary`` is the committer time of
    the oldest held-out pick (None when there are none)."""
    order = sorted(replays, key=lambda r: (r.pick.time, r.pick.fork_commit))
    k = math.ceil(len(order) / 3)
    dev, held = order[:len(order) - k], order[len(order) - k:]
    return dev, held, (held[0].pick.time if held else None)


def score(replays: Sequence, chain: Sequence[str], strategies: Sequence[str] | None = None) -> Result:
    """Score every strategy on every conflicted file (see the module docstring). ``chain`` is the
    rule order of the ``chain`` strategy; ``strategies`` the rules scored alone (default: all)."""
    dev, held, boundary = split(replays)
    part_of = {id(r): "dev" for r in dev} | {id(r): "held-out" for r in held}
    rules = list(strategies if strategies is not None else RULES)
    res = Result(boundary, {"all": len(replays), "dev": len(dev), "held-out": len(held)},
                 {"all": 0, "dev": 0, "held-out": 0})
    for p in ("all", "dev", "held-out"):       # every part and strategy, with no file too: the document keeps its shape
        for name in (*BASELINES, *rules, "chain"):
            res.score(p, name)
    memory = Memory()
    for rep in dev + held:
        part = part_of[id(rep)]
        if rep.files:
            res.conflicting_picks["all"] += 1
            res.conflicting_picks[part] += 1
        src = res.sources.setdefault(rep.pick.source, {p: dict.fromkeys(_SOURCE_COUNTS, 0) for p in ("all", "dev", "held-out")})
        marked = sum(f.landed_markers for f in rep.files)
        for p in ("all", part):
            for k, n in (("replayed", 1), ("conflicting", int(bool(rep.files))), ("files", len(rep.files)),
                         ("files_with_markers", marked), ("with_markers", int(bool(marked)))):
                src[p][k] += n
        for f in rep.files:
            c = memory.apply(f.conflict)
            answers: dict[str, object] = {}
            for name in BASELINES:
                answers[name] = baseline(name, c) if not c.binary else Declined((name,), "binary")
            for name in rules:
                d = RULES[name](c) if not c.binary else None
                answers[name] = Declined((name,)) if d is None else d.text
            chosen = resolve_file(c, chain)
            answers["chain"] = chosen if isinstance(chosen, Declined) else chosen.text
            row = {"fork_commit": rep.pick.fork_commit, "upstream": rep.pick.upstream, "path": c.path, "kind": f.kind,
                   "part": part, "source": rep.pick.source, "landed_markers": f.landed_markers,
                   "chain_rule": None if isinstance(chosen, Declined) else chosen.rule, "outcomes": {}}
            normalized: dict[str, str | None] = {}
            for name, ans in answers.items():
                o = outcome(ans, f.landed, normalized)
                row["outcomes"][name] = o
                for p in ("all", part):
                    res.score(p, name).add(o)
                    res.score(p, name, f.kind).add(o)
            res.outcomes.append(row)
        # the fork's answers become memory only after the pick landed
        for f in rep.files:
            memory = memory.learn(f.conflict, f.landed)
    return res


def json_text(value):
    """``value`` (a document of dicts, lists, str and numbers) with every str valid UTF-8. git
    paths are bytes; one that is not UTF-8 reaches Python with its bytes as lone surrogates
    (``surrogateescape``), which ``json.dumps`` writes as ``\\udcXX`` escapes that strict JSON
    readers reject or garble: such a byte is written ``\\xe9``, as Python's ``backslashreplace``
    does."""
    if isinstance(value, str):
        if value.isascii():
            return value
        try:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:       # a surrogate no byte stands for
            return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {json_text(k): json_text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_text(v) for v in value]
    return value


def to_json(res: Result, *, chain: Sequence[str], skipped: Sequence, extra: dict | None = None) -> dict:
    """The ``forksync.resolve-bench/1`` document (every text valid UTF-8: :func:`json_text`)."""
    return json_text({
        "schema": SCHEMA,
        "split": {"rule": SPLIT_RULE, "boundary_time": res.split_time,     # epoch seconds, and as ISO 8601 (UTC)
                  "boundary": datetime.fromtimestamp(res.split_time, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
                  if res.split_time is not None else None},
        "chain": list(chain),
        "picks": res.picks,
        "conflicting_picks": res.conflicting_picks,
        "sources": res.sources,
        "skipped": [{"what": s.what, "why": s.why} for s in skipped],
        "scores": {part: {strat: {kind: sc.as_json() for kind, sc in kinds.items()} for strat, kinds in strats.items()}
                   for part, strats in res.scores.items()},
        "files": res.outcomes,
        **(extra or {}),
    })
