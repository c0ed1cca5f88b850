"""Forks that sync by *merging* upstream (pure core): is the fork one, and which merged upstream
commits did it take back out.

A fork that merges upstream (intel/intel-xpu-backend-for-triton merges triton-lang/triton every
few days) holds upstream by ancestry: its frontier is the newest upstream commit its state
contains by ancestry, and a cherry-pick of a newer upstream commit, taken ahead of the merge that
will reach it, is an *isolated* pick (:mod:`bot.core.pins`). Upstream commits before the merge
base are outside the ledger's range, so the fork's reverts of them — a merge brought them in,
the fork took them out — are found here and counted in the Backlog as *holes*:

* a fork commit (of ``fork_tip ^upstream_tip``) with ``This reverts commit <sha>`` naming an
  upstream commit at or before the frontier opens a hole;
* the hole closes when a later fork commit reverts that revert, re-picks the commit
  (``cherry picked from commit <sha>``, or ``Reapply "<its subject>"``/``Reland "…"``), or when
  upstream's own revert of it is merged (then upstream took it out too).
"""
from __future__ import annotations

import re
from typing import Iterable, Mapping, Sequence

from bot.model import CommitInfo

_REVERTS = re.compile(r"^This reverts commit ([0-9a-f]{7,40})", re.MULTILINE)
_CHERRY = re.compile(r"^\(cherry picked from commit ([0-9a-f]{40})\)", re.MULTILINE)
_RELAND = re.compile(r'^(?:Reapply|Reland)\s+"(.*)"', re.IGNORECASE)


def _bare(subject: str) -> str:
    return re.sub(r"(\s*\(#\d+\))+\s*$", "", subject.strip()).strip().lower()


def syncs_by_merging(fork: Sequence[CommitInfo]) -> bool:
    """Whether the fork's own commits (``fork_tip ^upstream_tip``) include a merge that brought in
    a commit from outside them — upstream's history. The Triton fork (cherry-picks only, no
    merges) is not one; a fork that merges upstream is."""
    own = {c.sha for c in fork}
    return any(len(c.parents) > 1 and any(p not in own for p in c.parents[1:]) for c in fork)


def reverted_candidates(fork: Sequence[CommitInfo], known: Iterable[str]) -> set[str]:
    """Shas that fork commits revert (``This reverts commit <sha>``) and that are not among
    ``known`` (the fork's own commits and the ledger's range): upstream commits merged before
    the base, if upstream's history holds them."""
    known = set(known)
    return {s for c in fork for s in _REVERTS.findall(c.message) if len(s) == 40 and s not in known}


def revert_of(fork: Sequence[CommitInfo], sha: str) -> CommitInfo | None:
    """The newest of the fork's commits whose message reverts ``sha`` (``This reverts commit
    <sha>`` at a line's start, the rule :func:`merged_holes` reads), or None."""
    return next((c for c in reversed(fork) if sha in _REVERTS.findall(c.message)), None)


def merged_holes(fork: Sequence[CommitInfo], merged: Mapping[str, tuple[str, str]]) -> tuple[str, ...]:
    """Upstream commits the fork took back out after a merge brought them in, and has not got back.

    ``fork``: the fork's own commits, oldest first. ``merged``: upstream commits at or before the
    frontier (merged into the fork) that matter here: every commit a fork commit reverts, and every
    upstream commit whose message reverts one of them — sha → ``(subject, message)``. Returns the
    open holes' shas in the order their reverts landed (rules in the module docstring)."""
    reverted: dict[str, str] = {}          # upstream sha -> the fork commit that reverts it
    back: set[str] = set()
    for c in fork:
        for s in _REVERTS.findall(c.message):
            if s in merged:
                reverted[s] = c.sha
                back.discard(s)
            else:     # a revert of the fork's revert ("This reverts commit afe1e9da", abbreviated too)
                back.update(u for u, r in reverted.items() if r.startswith(s))
        for s in _CHERRY.findall(c.message):
            if s in reverted:
                back.add(s)
        m = _RELAND.match(_bare(c.subject))
        if m:
            want = _bare(m.group(1))
            back.update(u for u in reverted if _bare(merged[u][0]) == want)
    for sha, (_, message) in merged.items():       # upstream's own revert, merged: gone upstream too
        for s in _REVERTS.findall(message):
            if s in reverted and s != sha:
                back.add(s)
    return tuple(u for u in reverted if u not in back)
