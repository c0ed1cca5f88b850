"""Forks that sync by *merging* upstream (pure core): is the fork one, and which merged upstream
commits did it take back out.

A fork that merges upstream (intel/intel-xpu-backend-for-triton merges triton-lang/triton every
few days) holds upstream by ancestry: its frontier is the newest upstream commit its state
contains by ancestry, and a cherry-pick of a newer upstream commit, taken ahead of the merge that
will reach it, is an *isolated* pick (:mod:`bot.core.pins`). Upstream commits before the merge
base are outside the ledger's range, so the fork's reverts of them — a merge brought them in,
the fork took them out — are found here and counted in the Backlog as *holes*:

* a fork commit (of ``fork_tip ^upstream_tip``) that reverts an upstream commit at or before the
  frontier — ``This reverts commit <sha>``, the sha full or abbreviated (resolved against the
  repository, unambiguous only), or a commit URL on the next line — opens a hole; so does a
  fork commit that reverts a merge (``git revert -m 1 <merge>``), for each upstream commit the
  merge brought in (a later re-merge does not bring them back: git's "revert a faulty merge");
* the holes are the REVERTED entries of a ledger (:func:`bot.core.ledger.build_ledger`) over the
  merged upstream commits named, so the ledger's own rules close them: a revert of the fork's
  revert (by sha, or ``Revert "Revert "…""`` by subject), of the PR merge that held it, or of the
  merge revert; a re-pick by any pick evidence (``Upstream-Commit:``, ``cherry picked from``,
  a cited PR with the upstream subject, the same patch-id);
* it closes too on the fork's own reland after the revert (:func:`relands`: ``Reapply "<its
  subject>"``/``Reland …`` by subject, PR or sha), or when upstream's own revert of it is merged
  (then upstream took it out too; :func:`upstream_reverts`: by sha, ``Reverts o/r#N`` or subject);
* an upstream revert a merge brought in is a hole when it did not take effect
  (:func:`lost_reverts`): the fork picked the reverted commit ahead of the merge that brought
  both, so git's three-way merge kept the fork's pick.
"""
from __future__ import annotations

import bisect
import re
from typing import Iterable, Mapping, Sequence

from bot.config.forksync import ProvenanceRules
from bot.core.ledger import build_ledger
from bot.core.provenance import claims, reverted_prs, reverted_targets
from bot.model import CommitInfo, Disposition

_RELAND = re.compile(r'^(?:\[Reland\]|(?:Reapply|Reland)\b)\s*(.*)$', re.IGNORECASE)
_UP_REVERT_SUBJ = re.compile(r'^Revert "(.*)"')
_HEX = re.compile(r"\b[0-9a-f]{7,40}\b")


def _bare(subject: str) -> str:
    return re.sub(r"(\s*\(#\d+\))+\s*$", "", subject.strip()).strip().lower()


def syncs_by_merging(fork: Sequence[CommitInfo]) -> bool:
    """Whether the fork's own commits (``fork_tip ^upstream_tip``) include a merge that brought in
    a commit from outside them — upstream's history. The Triton fork (cherry-picks only, no
    merges) is not one; a fork that merges upstream is. Whether the fork *still* syncs by merging
    is decided from what followed its newest merge (:func:`bot.core.pins.compute_pins`: picks in
    upstream order since then make it a fork that syncs by picks)."""
    own = {c.sha for c in fork}
    return any(len(c.parents) > 1 and any(p not in own for p in c.parents[1:]) for c in fork)


def reverted_candidates(fork: Sequence[CommitInfo], known: Iterable[str]) -> set[str]:
    """Shas, full or abbreviated (7–40 hex, as written), that fork commits revert (``This reverts
    commit <sha>``, :func:`bot.core.provenance.reverted_targets`) and that name none of ``known``
    (the fork's own commits and the ledger's range): upstream commits merged before the base, once
    the caller resolves them against the repository (an abbreviation only when unambiguous)."""
    known = sorted(known)
    return {s for c in fork for s in reverted_targets(c.message)[0] if not _names(known, s)}


def _names(known: Sequence[str], ref: str) -> bool:
    """Whether ``ref`` (a sha or an abbreviation) names one of ``known`` (sorted full shas)."""
    i = bisect.bisect_left(known, ref)
    return i < len(known) and known[i].startswith(ref)


def picked_candidates(fork: Sequence[CommitInfo], known: Iterable[str], rules: ProvenanceRules) -> set[str]:
    """Shas, full or abbreviated, that fork commits pick by sha (the ledger's pick claims:
    trailers, ``cherry picked from`` …) and that name none of ``known``: upstream commits before
    the range — picked ahead of the merge that later brought them in, once resolved by the caller."""
    known = sorted(known)
    return {c.ref for f in fork for c in claims(f.message, rules)
            if c.kind == "pick" and not c.ref.startswith("#") and not _names(known, c.ref)}


def lost_reverts(fork: Sequence[CommitInfo], line: Sequence[str], merged: Mapping[str, CommitInfo],
                 rules: ProvenanceRules = ProvenanceRules()) -> dict[str, str]:
    """Upstream reverts that a merge brought in and that did not take effect: ``{revert sha: that
    merge}``. The fork picked upstream commit U ahead of the merge that brought it, and the same
    merge brought upstream's revert of U: git's three-way merge keeps the fork's pick (upstream's
    side, U then its revert, changes nothing), so the fork holds U though upstream backed it out.
    A merge that brought U alone, before the revert, lets the revert apply: no hole then.

    ``line``: upstream's first-parent commits at or before the base, oldest first; ``merged``: the
    commits of it that matter (U and its revert among them). The hole closes when a later fork
    commit picks the revert or reverts the fork's pick of U."""
    pos = {s: i for i, s in enumerate(line)}
    # each fork merge of upstream, in fork order, with how far up upstream's line it brought the fork
    merges = [(i, max(pos[p] for p in c.parents[1:] if p in pos)) for i, c in enumerate(fork)
              if len(c.parents) > 1 and any(p in pos for p in c.parents[1:])]

    def full(ref: str) -> str | None:
        return next((s for s in merged if s.startswith(ref)), None)
    picks: dict[str, list[int]] = {}       # upstream sha -> the fork commits that pick it by sha
    for i, f in enumerate(fork):
        for u in {full(c.ref) for c in claims(f.message, rules) if c.kind == "pick" and not c.ref.startswith("#")}:
            if u:
                picks.setdefault(u, []).append(i)
    out: dict[str, str] = {}
    for r, info in merged.items():
        for u in {full(t) for t in reverted_targets(info.message)[0]} - {None, r}:
            if u not in picks or r not in pos or u not in pos:
                continue
            m = min((i for i, p in merges if p >= pos[r]), default=None)       # the merge that brought the revert
            if m is None or any(i < m and p >= pos[u] for i, p in merges) or not any(i < m for i in picks[u]):
                continue
            mine = [fork[i].sha for i in picks[u] if i < m]
            if any(i > m for i in picks.get(r, ())) or any(
                    x.startswith(t) for f in fork[m + 1:] for t in reverted_targets(f.message)[0] for x in mine):
                continue
            out[r] = fork[m].sha
    return out


def reverted_merges(fork: Sequence[CommitInfo]) -> list[str]:
    """The fork's merge commits that a later fork commit reverts (``git revert -m 1 <merge>``
    writes ``This reverts commit <merge>, reversing changes made to <parent>``), oldest first.
    What each brought in comes from git (its other parents' commits not reachable from its first)."""
    named = {s for c in fork for s in reverted_targets(c.message)[0]}
    return [c.sha for c in fork if len(c.parents) > 1 and any(c.sha.startswith(s) for s in named)]


def revert_of(fork: Sequence[CommitInfo], sha: str) -> CommitInfo | None:
    """The newest of the fork's commits whose message reverts ``sha`` (``This reverts commit
    <sha>``, the sha in full), or None."""
    return next((c for c in reversed(fork) if sha in reverted_targets(c.message)[0]), None)


def merged_holes(fork: Sequence[CommitInfo], merged: Mapping[str, CommitInfo], *,
                 merges: Mapping[str, Sequence[str]] | None = None,
                 rules: ProvenanceRules = ProvenanceRules()) -> dict[str, str]:
    """Upstream commits the fork took back out after a merge brought them in, and has not got back.

    ``fork``: the fork's own commits, oldest first. ``merged``: upstream commits at or before the
    frontier (merged into the fork) that matter here, oldest first: every commit a fork commit
    reverts (by itself or by reverting the merge that brought it, see ``merges``), and every
    upstream commit whose message reverts one of them. ``merges``: fork merge → the commits it
    brought in, for the merges a fork commit reverts (:func:`reverted_merges`). Returns
    ``{hole sha: the fork commit that took it out}`` in the order those landed (rules in the
    module docstring)."""
    ups = list(merged.values())
    ledger = build_ledger(ups, fork, upstream_in_fork_ancestry=merged, rules=rules, merges=merges)
    seq = {c.sha: i for i, c in enumerate(fork)}
    holes: dict[str, tuple[int, str]] = {}
    for e in ledger.entries:
        if e.disposition is not Disposition.REVERTED:
            continue
        # the last event that changed it is the revert that took it out (or the merge revert)
        out = [x.fork_commit for x in e.evidence if x.fork_commit in seq]
        if out:
            holes[e.sha] = (seq[out[-1]], out[-1])
    for c in fork:       # the fork's own reland after the revert
        for u in [u for u, (i, _) in holes.items() if i < seq[c.sha] and relands(c, merged[u])]:
            del holes[u]
    order = {u.sha: i for i, u in enumerate(ups)}
    for u in ups:         # upstream's own revert, merged: gone upstream too
        for h in [h for h in holes if h != u.sha and order[h] < order[u.sha] and upstream_reverts(u, merged[h])]:
            del holes[h]
    return {u: r for u, (_, r) in sorted(holes.items(), key=lambda kv: kv[1][0])}


def relands(fork_commit: CommitInfo, upstream: CommitInfo) -> bool:
    """Whether ``fork_commit`` says it lands ``upstream`` again: a subject opening with ``Reapply``
    / ``Reland`` / ``[Reland]`` (not ``Reland partial …``) that quotes or repeats the upstream
    subject (``Reland "X (#9002)" (#5817)``, ``Reland X (#1495)``; a ``(#N)`` inside the quotes
    must be its PR: upstream repeats subjects), cites its PR (``Reland upstream
    commit #6007 and #6004 (#3575)``: the trailing ``(#N)``, the fork's own PR, is no citation), or
    a message that names its sha, 7 hex digits or more (``Reland upstream commit 6915ba7 (#6316)``;
    ``Reland 01c3e984…,`` in the body). The words are the Intel fork's (intel/intel-xpu-backend-for-
    triton `70e57ab43e`, `7358f79c43`, `6744eea9d4`); a reland adapted to the fork matches no
    patch-id, so its words are the evidence."""
    m = _RELAND.match(_bare(fork_commit.subject))
    if not m or m.group(1).lower().startswith("partial"):
        return False
    rest = m.group(1).strip()
    if _quotes(rest.strip('"'), upstream):
        return True
    if upstream.pr is not None and str(upstream.pr) in re.findall(r"#(\d+)\b", rest):
        return True
    return any(upstream.sha.startswith(h) for h in _HEX.findall(fork_commit.message))


def upstream_reverts(revert: CommitInfo, reverted: CommitInfo) -> bool:
    """Whether upstream commit ``revert`` reverts the older upstream commit ``reverted``:
    ``This reverts commit <sha>`` (full or abbreviated), or what GitHub's revert button writes —
    ``Reverts owner/repo#<PR>`` under ``Revert "<subject>" (#N)`` (real case: triton-lang/triton
    `23719b7c8a` "Reverts triton-lang/triton#5707"), or that subject alone when the revert names
    neither a sha nor a PR (the ``(#N)`` the quoted subject carries, if any, is ``reverted``'s:
    upstream repeats subjects)."""
    shas, prs = reverted_targets(revert.message)[0], reverted_prs(revert.message)
    if any(reverted.sha.startswith(s) for s in shas):
        return True
    if reverted.pr is not None and str(reverted.pr) in prs:
        return True
    m = _UP_REVERT_SUBJ.match(revert.subject)
    if shas or prs or not m:
        return False        # it names what it reverts, and that is another commit
    return _quotes(m.group(1), reverted)


def _quotes(quoted: str, c: CommitInfo) -> bool:
    """Whether ``quoted``, a subject a reland or revert repeats, is ``c``'s: the same words
    (:func:`_bare`), and a ``(#N)`` it ends with, if any, ``c``'s PR — upstream repeats subjects,
    and the PR is what tells which of the commits of those words it is."""
    cited = re.search(r"\(#(\d+)\)\s*$", quoted)
    return _bare(quoted) == _bare(c.subject) and (cited is None or c.pr is None or cited.group(1) == str(c.pr))
