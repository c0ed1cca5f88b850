"""Finding the fork's merges of upstream (an edge: pygit2 reads the commit graph).

A fork that syncs by merging upstream (``git merge <upstream commit>``) keeps the answer to every
conflict it met in the merge commit: merging its two parents again shows the conflicts, the merge
commit's tree is what the fork's engineers committed. :func:`find_resolved_merges` finds those
merges in the fork branch's whole history (every parent, not only the first: a fork often merges
upstream on a pull request's branch and lands the branch with another merge), with their merge
base, which the replay (:func:`bot.resolve.replay.replay`) uses as the ancestor.

Merge bases come from one pass over the commit graph (every commit's ancestry among upstream's
commits as a bit set, upstream commits numbered parents first), not one graph walk per merge:
``git merge-base`` costs about 60 ms a pair on the Intel fork (12k commits, no commit-graph file),
which over 900 merges would be most of the run. Memory: about commits × upstream commits / 8
bytes (≈ 10 MB for the Intel fork).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pygit2

from bot.resolve.picks import Skipped, commit_of

#: At most this many merge bases are listed in a criss-cross merge's skip reason.
MAX_BASES_LISTED = 3


@dataclass(frozen=True)
class ResolvedMerge:
    """A fork merge commit ``fork_commit`` (committed at ``time``, epoch seconds) of the upstream
    commit ``upstream`` (its second parent) into ``onto`` (its first parent: the fork's side),
    over their one merge base ``base``. The fields a :class:`~bot.resolve.picks.ResolvedPick` has
    mean the same here, so the replay and the scoring read both alike; ``source`` tells them apart."""

    fork_commit: str
    onto: str
    upstream: str
    time: int
    subject: str
    base: str
    marker: str = "a merge of upstream"
    source: ClassVar[str] = "merge"


@dataclass
class _Graph:
    parents: dict[str, tuple[str, ...]]
    order: list[str]            # parents before children
    missing: set[str]           # commits named as parents that the repository does not hold


def _graph(repo: pygit2.Repository, tip: str) -> _Graph:
    """Every commit reachable from ``tip`` with its parents, in an order that puts parents first;
    a commit the repository does not hold is recorded in ``missing`` and its history ends there."""
    parents: dict[str, tuple[str, ...]] = {}
    missing: set[str] = set()
    order: list[str] = []
    stack: list[tuple[str, bool]] = [(tip, False)]
    while stack:
        sha, expanded = stack.pop()
        if expanded:
            order.append(sha)
            continue
        if sha in parents or sha in missing:
            continue
        try:
            c = repo[sha]
        except (KeyError, ValueError):
            missing.add(sha)
            continue
        ps = tuple(str(p) for p in c.parent_ids)
        parents[sha] = ps
        stack.append((sha, True))
        stack += [(p, False) for p in ps if p not in parents and p not in missing]
    return _Graph(parents, order, missing)


def find_resolved_merges(repo: pygit2.Repository, fork_tip: str, upstream_tip: str,
                         since: int | None = None) -> tuple[list[ResolvedMerge], list[Skipped]]:
    """``(merges, skipped)``: the fork's merges of upstream in the whole history of ``fork_tip``
    (committed at or after ``since``, epoch seconds), oldest first by committer time (then sha).

    A merge of upstream is a commit with two parents whose second parent is reachable from
    ``upstream_tip`` and whose first parent is not (upstream's own merges, both of whose parents
    are upstream's, are not the fork's). Skipped, with the reason: a merge with a parent missing
    from the repository; an octopus merge with an upstream parent; a merge whose parents' history
    is incomplete in the repository (a missing commit: its merge base is unknown); a criss-cross merge (more than one merge base — ``git merge``
    would merge the bases into a virtual one first; this replay does not, so it says so rather
    than guess); parents with no common history (in a shallow clone: a merge base beyond its
    history). Raises KeyError when a tip is unknown."""
    fork, up = commit_of(repo, fork_tip), commit_of(repo, upstream_tip)
    if fork is None or up is None:
        raise KeyError(fork_tip if fork is None else upstream_tip)
    upstream = _graph(repo, str(up.id)).parents.keys()
    g = _graph(repo, str(fork.id))
    # every commit's ancestry among upstream's commits, as a bit set (bit i: upstream commit by_bit[i])
    by_bit: list[str] = []
    anc: dict[str, int] = {}
    incomplete: set[str] = set()
    for sha in g.order:
        m = 0
        for p in g.parents[sha]:
            m |= anc.get(p, 0)
            if p in g.missing or p in incomplete:
                incomplete.add(sha)
        if sha in upstream:
            m |= 1 << len(by_bit)
            by_bit.append(sha)
        anc[sha] = m
    merges: list[ResolvedMerge] = []
    skipped: list[Skipped] = []
    for sha in g.order:
        ps = g.parents[sha]
        if len(ps) < 2 or sha in upstream:       # upstream's own merges are not the fork's
            continue
        lost = any(p in g.missing for p in ps)
        if not lost and (not any(p in upstream for p in ps[1:]) or ps[0] in upstream):
            continue
        c = repo[sha]
        if since is not None and c.commit_time < since:
            continue
        if lost:
            skipped.append(Skipped(sha, "a merge whose parent commit is missing from the repository: "
                                        "whether it merges upstream is unknown"))
            continue
        if len(ps) > 2:
            skipped.append(Skipped(sha, f"an octopus merge ({len(ps)} parents)"))
            continue
        p1, p2 = ps
        if p1 in incomplete or p2 in incomplete:
            skipped.append(Skipped(sha, "a parent's history is incomplete in the repository (a missing commit): "
                                        "the merge base is unknown"))
            continue
        common = anc[p1] & anc[p2]
        bases: list[str] = []
        while common and len(bases) < MAX_BASES_LISTED:
            # the newest common upstream commit (highest bit: numbered parents first) is a merge
            # base; what it reaches is not another one
            b = by_bit[common.bit_length() - 1]
            bases.append(b)
            common &= ~anc[b]
        if not bases:
            # a shallow clone's history stops at its boundary commits, which read as roots: the
            # parents may well share history the clone does not hold
            skipped.append(Skipped(sha, "the merge base lies beyond this shallow clone's history: deepen it "
                                        "(git fetch --deepen=N, or --unshallow)" if repo.is_shallow
                                   else "the parents have no common history"))
            continue
        if len(bases) > 1:
            n = f"more than {len(bases)}" if common else str(len(bases))
            skipped.append(Skipped(sha, f"a criss-cross merge: {n} merge bases ({', '.join(b[:10] for b in bases)}); "
                                        "not replayed"))
            continue
        merges.append(ResolvedMerge(sha, p1, p2, c.commit_time, c.message.split("\n", 1)[0], bases[0]))
    merges.sort(key=lambda m: (m.time, m.fork_commit))
    return merges, skipped
