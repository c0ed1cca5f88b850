"""Decisions that land no commit, recorded as git notes on the upstream commit.

Notes live under ``refs/notes/forksync`` (``ProvenanceRules.notes_ref``) in the fork repository,
so the ledger never depends on the database alone. One note may hold several decisions (``git
notes append`` separates them with a blank line); each decision is a block of lines::

    forksync-decision: DEFERRED_BLOCKED needs the LLVM bump (#9552) first
    forksync-by: alice
    forksync-date: 2026-04-01T10:00:00Z

The first word after ``forksync-decision:`` is ``DEFERRED_BLOCKED``, ``SKIP_FOR_CURRENT_BASE``,
``WONT_PORT``, ``NO_OP`` (forksync's own: the commit's pick onto the fork changes nothing, it is
already in the fork) or ``RECONSIDER`` (which lifts an earlier decision: the commit is PENDING again);
the rest of the line is the reason. Aliases: ``defer``, ``skip``, ``wont-port``. ``by`` and
``date`` (ISO 8601, UTC when no offset) are optional; lines of other forms are ignored, so a
person may add free text. Parsing is pure (:func:`parse_note`); :func:`read_decisions` and
:func:`write_decision` are the git edge.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone

import pygit2

from bot.git.repo import git
from bot.model import Decision, Disposition

DEFAULT_REF = "refs/notes/forksync"
_ALIASES = {
    "deferred_blocked": Disposition.DEFERRED_BLOCKED, "deferred": Disposition.DEFERRED_BLOCKED,
    "defer": Disposition.DEFERRED_BLOCKED,
    "skip_for_current_base": Disposition.SKIP_FOR_CURRENT_BASE, "skip": Disposition.SKIP_FOR_CURRENT_BASE,
    "skipped": Disposition.SKIP_FOR_CURRENT_BASE,
    "wont_port": Disposition.WONT_PORT, "wont-port": Disposition.WONT_PORT,
    "no_op": Disposition.NO_OP, "no-op": Disposition.NO_OP,
    "reconsider": None,
}
_LINE = re.compile(r"^forksync-(decision|by|date):[ \t]*(.*)$", re.IGNORECASE)


def _iso(ts: int) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(text: str) -> int:
    try:
        dt = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return 0
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp())


def format_decision(disposition: Disposition | None, reason: str = "", by: str = "", time: int = 0) -> str:
    """The note text of one decision (``disposition`` None = RECONSIDER)."""
    if disposition is not None and disposition not in (Disposition.DEFERRED_BLOCKED, Disposition.WONT_PORT,
                                                       Disposition.SKIP_FOR_CURRENT_BASE, Disposition.NO_OP):
        raise ValueError(f"a note records DEFERRED_BLOCKED, SKIP_FOR_CURRENT_BASE, WONT_PORT, NO_OP or RECONSIDER, "
                         f"not {disposition.value}")
    name = disposition.value if disposition is not None else "RECONSIDER"
    reason = " ".join(reason.split())
    lines = [f"forksync-decision: {name}" + (f" {reason}" if reason else "")]
    if by:
        lines.append(f"forksync-by: {by}")
    if time:
        lines.append(f"forksync-date: {_iso(time)}")
    return "\n".join(lines) + "\n"


def parse_note(upstream_sha: str, text: str, default_time: int = 0) -> list[Decision]:
    """All decisions in one note, in order. Unknown decision words are skipped (see module doc).
    ``default_time`` (e.g. the notes commit time) is used when a block has no date."""
    out: list[Decision] = []
    cur: dict | None = None

    def flush():
        if cur and cur.get("ok"):
            out.append(Decision(upstream_sha=upstream_sha, disposition=cur["disp"], reason=cur["reason"],
                                by=cur.get("by", ""), time=cur.get("time", default_time), source="note"))

    for raw in text.splitlines():
        m = _LINE.match(raw.strip())
        if not m:
            continue
        key, value = m.group(1).lower(), m.group(2).strip()
        if key == "decision":
            flush()
            word, _, reason = value.partition(" ")
            k = word.lower()
            cur = {"ok": k in _ALIASES, "disp": _ALIASES.get(k), "reason": reason.strip()}
        elif cur is not None and key == "by":
            cur["by"] = value
        elif cur is not None and key == "date":
            cur["time"] = _parse_time(value) or default_time
    flush()
    return out


def read_decisions(repo: pygit2.Repository, ref: str = DEFAULT_REF) -> list[Decision]:
    """Every decision recorded under ``ref`` (empty when the ref does not exist), sorted by time."""
    try:
        repo.references[ref]
    except KeyError:
        return []
    out: list[Decision] = []
    ref_time = int(repo.references[ref].peel(pygit2.Commit).committer.time)
    for note in repo.notes(ref):
        try:
            text = note.message
        except (KeyError, pygit2.GitError):
            continue
        out += parse_note(str(note.annotated_id), text, default_time=ref_time)
    return sorted(out, key=lambda d: (d.time, d.upstream_sha))


def write_decision(git_dir: str, upstream_sha: str, decision_text: str, ref: str = DEFAULT_REF) -> None:
    """Append a decision (from :func:`format_decision`) to the note on ``upstream_sha``."""
    git(git_dir, "notes", "--ref", ref, "append", "-m", decision_text.rstrip("\n"), upstream_sha)
