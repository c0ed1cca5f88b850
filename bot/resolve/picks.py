"""Finding the fork's resolved picks (an edge: pygit2 walks, the ledger's provenance rules).

:func:`find_resolved_picks` — the fork commits that landed one upstream commit whose conflicts a
person resolved, found by the fork's own markers (``resolve.picks`` of the config) and mapped to
their upstream commit with :mod:`bot.core.provenance`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

import pygit2
from pygit2.enums import SortMode

from bot.config.forksync import ForksyncConfig
from bot.core.provenance import claims, reverted_targets

_PR = re.compile(r"\(#(\d+)\)\s*$")


@dataclass(frozen=True)
class ResolvedPick:
    """A fork commit (``fork_commit``, committed at ``time``, epoch seconds) that landed the one
    upstream commit ``upstream`` with resolved conflicts; ``onto`` is its first parent, the
    commit the pick was made on; ``marker`` the marker that found it."""

    fork_commit: str
    onto: str
    upstream: str
    time: int
    subject: str
    marker: str
    source: ClassVar[str] = "pick"       # a ResolvedMerge says "merge"


@dataclass(frozen=True)
class Skipped:
    """Something the replay could not use, and why (``what``: a fork commit, or ``commit:path``)."""

    what: str
    why: str


def _marker(message: str, cfg: ForksyncConfig) -> str | None:
    m = cfg.resolve.picks
    subject = message.split("\n", 1)[0]
    for p in m.subject_patterns:
        if re.search(p, subject):
            return f"subject {p}"
    for p in m.body_patterns:
        if re.search(p, message):
            return f"body {p}"
    if m.trailer and re.search(rf"(?mi)^{re.escape(m.trailer)}:", message):
        return f"trailer {m.trailer}"
    return None


def _pr_index(repo: pygit2.Repository, upstream_tip: str, fork_tip: str) -> dict[int, list[str]]:
    """Upstream PR number (trailing ``(#N)`` of the subject) → upstream commits not in the fork's
    ancestry (an empty index when the two tips are one: no upstream to tell apart)."""
    out: dict[int, list[str]] = {}
    if upstream_tip == fork_tip:
        return out
    w = repo.walk(upstream_tip, SortMode.NONE)
    w.hide(fork_tip)
    for c in w:
        m = _PR.search(c.message.split("\n", 1)[0])
        if m:
            out.setdefault(int(m.group(1)), []).append(str(c.id))
    return out


def commit_of(repo: pygit2.Repository, ref: str) -> pygit2.Commit | None:
    try:
        return repo.revparse_single(ref).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def find_resolved_picks(repo: pygit2.Repository, fork_tip: str, upstream_tip: str, cfg: ForksyncConfig,
                        since: int | None = None, hide: str | None = None) -> tuple[list[ResolvedPick], list[Skipped]]:
    """``(picks, skipped)``: the fork's resolved picks on its first-parent history from
    ``fork_tip`` (committed at or after ``since``, epoch seconds; with ``hide``, only the commits
    ``hide`` does not reach: a chain's own picks above its base), oldest first.

    A marked commit is skipped, with the reason, when it is a merge, a revert or back-out, names
    no upstream commit that can be found, or names more than one (a bundle). Upstream commits are
    named by the provenance rules of the config: shas (trailers, ``cherry picked from``) when the
    message has any, else PR citations resolved against upstream's subjects."""
    picks: list[ResolvedPick] = []
    skipped: list[Skipped] = []
    prs: dict[int, list[str]] | None = None
    w = repo.walk(fork_tip, SortMode.TOPOLOGICAL)
    w.simplify_first_parent()
    if hide is not None:
        w.hide(hide)
    for c in w:
        if since is not None and c.commit_time < since:
            continue            # not break: committer dates need not fall along first-parent order
        msg = c.message
        marker = _marker(msg, cfg)
        if marker is None:
            continue
        sha = str(c.id)
        if len(c.parent_ids) != 1:
            skipped.append(Skipped(sha, "a merge commit"))
            continue
        shas, subjects = reverted_targets(msg)
        if shas or subjects:
            skipped.append(Skipped(sha, "a revert or back-out"))
            continue
        found: set[str] = set()
        cited: set[str] = set()
        for cl in claims(msg, cfg.provenance):
            if cl.kind != "pick" or cl.weak:
                continue
            if cl.ref.startswith("#"):
                if prs is None:
                    prs = _pr_index(repo, upstream_tip, fork_tip)
                hits = prs.get(int(cl.ref[1:]), [])
                if len(hits) == 1:
                    cited.add(hits[0])
            else:
                up = commit_of(repo, cl.ref)
                if up is not None:
                    found.add(str(up.id))
        # a sha (trailer, cherry-pick -x) names the commit exactly; PR numbers only when there is
        # none — a reland's or revert's subject cites the original PR too
        found = found or cited
        if not found:
            skipped.append(Skipped(sha, "names no upstream commit found in the repository"))
            continue
        if len(found) > 1:
            skipped.append(Skipped(sha, f"names {len(found)} upstream commits (a bundle)"))
            continue
        up = repo[found.pop()]
        if len(up.parent_ids) != 1:
            skipped.append(Skipped(sha, f"upstream {up.id} is a merge commit"))
            continue
        picks.append(ResolvedPick(sha, str(c.parent_ids[0]), str(up.id), c.commit_time,
                                  msg.split("\n", 1)[0], marker))
    picks.reverse()
    return picks, skipped
