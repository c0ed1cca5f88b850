"""The ledger (pure core): the disposition of every upstream commit, rebuilt from git data alone.

Inputs are plain values (:class:`bot.model.CommitInfo` of the upstream range and of the fork's
own commits, the set of upstream commits reachable from the fork head, decisions read from
notes, open forksync branches); the output is a :class:`Ledger`. No I/O.

How an entry gets its disposition (docs/core.md has the full table):

1. **Events in time order.** Every fork commit's claims (:mod:`bot.core.provenance`: trailers,
   ``cherry picked from``, user trailer regexes, PR citations), patch-id matches, fork
   reverts/back-outs and note decisions become events on the upstream commits they name, ordered
   by (committer/decision time, fork order). Ancestry (the commit is reachable from the fork head)
   is a pick at the very start. Then, per upstream commit:

   * a pick → PICKED (the fork commit is remembered; an ``Upstream-Urgent``/isolated-pattern
     commit marks the entry ``isolated``); a pick by a fork commit that changes nothing (one
     parent, no files, every object read: a person kept the fork's side of every conflicted file)
     → NO_OP with that fork commit and its ``Resolved-by:`` as the reason, unless already PICKED;
   * a fork revert/back-out of that pick, or ``Upstream-Reverted:`` → REVERTED; a revert of the
     back-out → PICKED again (the back-out is found by sha, quoted subject, or Phabricator id:
     ``Revert D123`` against the fork commits' ``Differential Revision: D123``);
   * a defer/skip/won't-port/no-op decision → DEFERRED_BLOCKED / SKIP_FOR_CURRENT_BASE /
     WONT_PORT / NO_OP, except over PICKED (a landed change is a fact; the decision stays in the
     evidence). A bundle body's decision about a member of its subject list is the member's
     only claim from that commit (:mod:`bot.core.provenance`), so it is not "over PICKED";
   * ``RECONSIDER`` lifts a decision back to PENDING.
2. **No event decided it:** an empty commit → NO_OP; an upstream commit and its upstream revert,
   both absent from the fork and neither on an open ``forksync/*`` branch → NO_OP both; an
   upstream revert of a commit the fork kept, whose upstream reland the fork picked → NO_OP (they
   cancel out); on an open ``forksync/*`` branch (or its patch is, under the sha a rewritten
   upstream replaced: ``InFlightBranch.copies``) → IN_FLIGHT; otherwise PENDING.

A forksync conflict commit (``Forksync-Conflict:`` trailer, an unresolved pick with conflict
markers) is no evidence of anything: no claims, no patch-id match, no back-out.

Evidence sources for *picks*: a commit's sha-carrying claims (trailers, ``cherry picked from``)
and PR citations all count; patch-id equality counts only for fork commits that name no upstream
commit and revert nothing (a pick without provenance, or a plain re-pick after a back-out). A weak
subject citation (no pick marker, or a lone trailing ``(#N)`` that may be the fork's own
squash-merge number) counts only when confirmed: the upstream subject appears in the fork subject,
the patch-ids are equal, or both change exactly the same paths. A fork commit naming an upstream sha it picks is a pick even if its subject reads
``Revert "…"`` (a picked upstream revert); otherwise such a subject makes it a back-out, whose
own citations are not picks.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from bot.config.forksync import IsolatedPickRules, ProvenanceRules
from bot.core.provenance import (
    Claim,
    claims,
    differential_id,
    is_conflict_commit,
    is_urgent,
    mentioned_diffs,
    normalize_subject,
    reverted_diffs,
    reverted_prs,
    reverted_targets,
)
from bot.model import CommitInfo, Decision, Disposition, Evidence, InFlightBranch, LedgerEntry

_DECISION_KIND = {"defer": Disposition.DEFERRED_BLOCKED, "skip": Disposition.SKIP_FOR_CURRENT_BASE,
                  "wont-port": Disposition.WONT_PORT, "no-op": Disposition.NO_OP}
_DISP_KIND = {v: k for k, v in _DECISION_KIND.items()}
UNCHECKED = "not checked by patch-id"     # the reason of a PENDING entry patch-ids could not decide
_UP_REVERT = re.compile(r"^This reverts commit ([0-9a-f]{7,40})", re.MULTILINE)
_UP_REVERT_SUBJ = re.compile(r'^Revert "(.*)"(?:\s*\(#\d+\))?\s*$')
_RESOLVED_BY = re.compile(r"^Resolved-by:[ \t]*(.+)$", re.MULTILINE | re.IGNORECASE)
_UP_RELAND_SUBJ = re.compile(r'^(?:Reapply|Reland|\[Reland\])\s*"(.*)"\s*$', re.IGNORECASE)


@dataclass(frozen=True)
class Ledger:
    """Entries in upstream order (index 0 = oldest after the base), with lookups.

    ``by_sha``: full sha → entry; ``by_pr``: upstream PR number → entries (a PR number can name
    a commit and a reland). :meth:`find` accepts a sha, an abbreviation, or ``#N``.
    """

    entries: tuple[LedgerEntry, ...]
    by_sha: Mapping[str, LedgerEntry] = field(default_factory=dict)
    by_pr: Mapping[int, tuple[LedgerEntry, ...]] = field(default_factory=dict)
    #: ``(upstream sha, where, rule)`` for forksync's own provenance (``Upstream-*`` trailers and
    #: ``refs/notes/forksync`` decisions) and ``cherry picked from`` lines (rule
    #: ``cherry-picked-from``) that name no commit of the upstream range nor of the fork — after a
    #: rewrite of upstream's history such records no longer apply, a ``-x`` line may name a
    #: commit of another branch; either way they count for nothing, and callers must say so.
    unresolved: tuple[tuple[str, str, str], ...] = ()

    def counts(self) -> dict[Disposition, int]:
        out = {d: 0 for d in Disposition}
        for e in self.entries:
            out[e.disposition] += 1
        return out

    def find(self, ref: str) -> list[LedgerEntry]:
        """Entries named by ``ref``: ``#N``/``N`` (PR) or a sha prefix (≥ 4 hex). May be empty."""
        ref = ref.strip()
        if re.fullmatch(r"#?\d{1,6}", ref) and (ref.startswith("#") or len(ref) < 7):
            return list(self.by_pr.get(int(ref.lstrip("#")), ()))
        ref = ref.lower()
        if ref in self.by_sha:
            return [self.by_sha[ref]]
        return [e for s, e in self.by_sha.items() if s.startswith(ref)] if len(ref) >= 4 else []


class _Resolver:
    """Upstream refs (sha, abbreviation, #PR) → upstream shas in range."""

    def __init__(self, upstream: Sequence[CommitInfo]):
        self.full = {c.sha: c for c in upstream}
        self.sorted = sorted(self.full)
        self.pr: dict[int, list[str]] = {}
        for c in upstream:
            if c.pr is not None:
                self.pr.setdefault(c.pr, []).append(c.sha)

    def sha(self, ref: str) -> list[str]:
        if ref.startswith("#"):
            return list(self.pr.get(int(ref[1:]), ()))
        if ref in self.full:
            return [ref]
        if len(ref) < 7:
            return []
        i = bisect.bisect_left(self.sorted, ref)
        hits = []
        while i < len(self.sorted) and self.sorted[i].startswith(ref):
            hits.append(self.sorted[i])
            i += 1
        return hits if len(hits) == 1 else []


@dataclass
class _Event:
    time: int
    seq: int
    kind: str          # pick | empty-pick | revert | defer | skip | wont-port | no-op | reconsider
    evidence: Evidence
    reason: str = ""
    isolated: bool = False


def build_ledger(upstream: Sequence[CommitInfo], fork: Sequence[CommitInfo], *,
                 upstream_in_fork_ancestry: Iterable[str] = (),
                 decisions: Iterable[Decision] = (),
                 in_flight: Iterable[InFlightBranch] = (),
                 rules: ProvenanceRules = ProvenanceRules(),
                 isolated: IsolatedPickRules = IsolatedPickRules(),
                 merges: Mapping[str, Sequence[str]] | None = None) -> Ledger:
    """Rebuild the ledger.

    ``upstream``: the upstream first-parent range, oldest first. ``fork``: the fork's own commits
    (``fork_tip ^upstream_tip``), oldest first (topological). ``decisions``: from notes
    (:func:`bot.git.notes.read_decisions`); trailers are read here from ``fork``. Shas are full.
    ``merges``: fork merge sha → the commits it brought in (reachable from its other parents, not
    from its first), for the merges a fork commit reverts: ``git revert -m 1 <merge>`` backs out
    what the merge brought — upstream commits (picked by ancestry) and the effect of fork commits
    (a PR merge holding a revert) — and a revert of that revert lands them again.
    """
    res = _Resolver(upstream)
    unresolved: list[tuple[str, str, str]] = []
    events: dict[str, list[_Event]] = {c.sha: [] for c in upstream}
    up_subject = {c.sha: normalize_subject(c.subject) for c in upstream}
    upstream_of = {c.sha: c for c in upstream}

    def add(u: str, ev: _Event):
        events[u].append(ev)

    anc = set(upstream_in_fork_ancestry) if rules.ancestry else set()
    if rules.ancestry:
        for c in upstream:
            if c.sha in anc:
                add(c.sha, _Event(-1, -1, "pick", Evidence("ancestry", None, "reachable from the fork head")))

    # ---- fork commits: claims, patch-ids, reverts -----------------------------------------------
    fork_shas = sorted(c.sha for c in fork)
    effect: dict[str, tuple[str, tuple[str, ...]]] = {}      # fork sha -> ("pick"|"revert", upstream shas)
    by_subject: dict[str, list[tuple[int, str]]] = {}         # normalized fork subject -> (seq, fork sha)
    sha_picked: set[str] = set()       # fork commits that name an upstream sha they pick
    for seq, f in enumerate(fork):
        msg = f.message
        urgent = is_urgent(msg, tuple(isolated.message_patterns))
        cl = claims(msg, rules)
        sha_picks = any(c.kind == "pick" and c.rule != "pr-citation" for c in cl)
        if sha_picks:
            sha_picked.add(f.sha)
        elif rules.reverts and (reverted_targets(msg)[1] or reverted_diffs(msg)):
            # a back-out quotes the subject it backs out: its citations are not picks
            cl = [c for c in cl if not (c.kind == "pick" and c.rule == "pr-citation")]
        fsubj = f.subject.lower()
        # a pick that changes nothing: its upstream commit brought nothing to the fork (a person kept
        # the fork's side of every conflicted file, or the change was already there); a commit git
        # could not read in full is not known to be empty, and a root commit is no pick at all
        empty = len(f.parents) == 1 and not f.files and not f.missing
        picks: list[str] = []
        pending_decisions: list[tuple[Claim, str]] = []
        for c in cl:
            hits = res.sha(c.ref)
            if not hits and not c.ref.startswith("#") and (
                    c.rule.startswith("trailer:Upstream-")
                    or (c.rule == "cherry-picked-from" and not _is_fork_commit(fork_shas, c.ref))):
                unresolved.append((c.ref, f.sha, c.rule))
            for u in hits:
                if c.kind == "pick":
                    if c.weak and not _confirms(upstream_of[u], f, up_subject[u], fsubj):
                        continue
                    if u not in picks:
                        picks.append(u)
                        if empty:
                            add(u, _Event(f.committer_time, seq, "empty-pick", Evidence(c.rule, f.sha, _detail(c, f)),
                                          reason=_empty_pick_reason(f)))
                        else:
                            add(u, _Event(f.committer_time, seq, "pick",
                                          Evidence(c.rule, f.sha, _detail(c, f)), isolated=bool(urgent)))
                elif c.kind == "revert":
                    add(u, _Event(f.committer_time, seq, "revert", Evidence(c.rule, f.sha, c.reason or f.subject),
                                  reason=c.reason or f.subject))
                else:
                    pending_decisions.append((c, u))
        for c, u in pending_decisions:
            if u in picks:
                continue        # the same commit picked it: a list elsewhere in it is not a decision
            add(u, _Event(f.committer_time, seq, c.kind, Evidence(c.rule, f.sha, c.reason), reason=c.reason))
        if picks:
            effect[f.sha] = ("pick", tuple(picks))
        by_subject.setdefault(normalize_subject(f.subject), []).append((seq, f.sha))

    # patch-id equivalence: fork commits that name no upstream commit and revert nothing, whose
    # patch equals an upstream commit's (a pick without provenance, or a re-pick after a back-out)
    # a commit analysed without some objects (a partial clone) has no patch-id: a pick found only
    # so cannot be found, and each PENDING entry says it was not checked (never a plain PENDING)
    unread_fork: dict[frozenset[str], str] = {}       # changed paths -> a fork commit read without some blobs
    if rules.patch_id:
        fork_by_pid: dict[str, list[int]] = {}
        for i, f in enumerate(fork):
            if f.sha not in effect and not any(reverted_targets(f.message)) \
                    and not reverted_diffs(f.message) \
                    and not is_conflict_commit(f.message):
                if f.patch_id:
                    fork_by_pid.setdefault(f.patch_id, []).append(i)
                elif f.missing and len(f.parents) == 1:
                    unread_fork.setdefault(_paths(f), f.sha)
        for c in upstream:
            for i in fork_by_pid.get(c.patch_id, ()) if c.patch_id else ():
                f = fork[i]
                add(c.sha, _Event(f.committer_time, i, "pick",
                                  Evidence("patch-id", f.sha, f"same patch-id {c.patch_id[:12]}")))
                effect[f.sha] = ("pick", effect.get(f.sha, ("pick", ()))[1] + (c.sha,))

    # fork reverts / back-outs (and reverts of those): inverse of the reverted commit's effect
    if rules.reverts:
        seq_of = {f.sha: i for i, f in enumerate(fork)}
        by_diff: dict[str, str] = {}       # Phabricator id -> the fork commit that landed as it
        reverters_of: dict[str, list[str]] = {}   # Phabricator id -> fork commits that revert it
        for f in fork:
            d = differential_id(f.message)
            if d:
                by_diff.setdefault(d, f.sha)
        picks_of: dict[str, list[str]] = {}
        for fsha, (k, ups) in effect.items():
            if k == "pick":
                for u in ups:
                    picks_of.setdefault(u, []).append(fsha)
        for lst in picks_of.values():
            lst.sort(key=seq_of.__getitem__)
        for seq, f in enumerate(fork):
            if is_conflict_commit(f.message):
                continue        # an unresolved pick (markers): it backs nothing out
            diffs = reverted_diffs(f.message)
            if f.sha in sha_picked or (effect.get(f.sha, ("", ()))[0] == "pick"
                                       and not reverted_targets(f.message)[1] and not diffs):
                continue        # a pick: its "This reverts commit" lines are the upstream's own text
            shas, subjects = reverted_targets(f.message)
            targets: list[str] = [by_diff[d] for d in diffs if d in by_diff and seq_of[by_diff[d]] < seq]
            if diffs and not targets:
                # "Revert D92486154 (#869)": an id no fork commit landed as (a back-out's own diff);
                # the body names the original ("Originally D92336232 …"), whose back-out it reverts
                for d in mentioned_diffs(f.message):
                    targets += [r for r in reverters_of.get(d, ()) if seq_of[r] < seq]
            for d in diffs:
                reverters_of.setdefault(d, []).append(f.sha)
            if targets:
                subjects = []   # the id names the reverted commit exactly; its quoted subject adds nothing
            named = False
            for s in shas:
                i = bisect.bisect_left(fork_shas, s)
                if i < len(fork_shas) and fork_shas[i].startswith(s):
                    targets.append(fork_shas[i])
                    named = True
                else:
                    for u in res.sha(s):     # a fork revert of an upstream commit (merged or picked)
                        add(u, _Event(f.committer_time, seq, "revert", Evidence("revert", f.sha, f.subject),
                                      reason=f.subject))
                        effect[f.sha] = ("revert", effect.get(f.sha, ("revert", ()))[1] + (u,))
                        named = True
            for subj in subjects:
                cands = [t for i, t in by_subject.get(normalize_subject(subj), []) if i < seq]
                if cands:
                    targets.append(cands[-1])
                else:
                    # the quoted subject differs from the landed one (e.g. a tag added on landing):
                    # back out the latest earlier pick of the upstream commits it cites
                    ups = [u for c in claims(subj, rules) if c.kind == "pick" for u in res.sha(c.ref)]
                    found = False
                    for u in ups:
                        earlier = [t for t in picks_of.get(u, []) if seq_of[t] < seq]
                        if earlier:
                            targets.append(earlier[-1])
                            found = True
                    if not found and shas and not named:
                        # its sha names a pick no history holds: a rebase onto an upstream that
                        # has the change dropped the pick and replayed the revert, which now
                        # takes the upstream commit of that subject, in the fork by ancestry, out:
                        # the one its (#N) cites, else the one commit of those words (upstream
                        # repeats subjects; of several, none is named)
                        if ups:
                            taken = [u for u in ups if u in anc]
                        else:
                            same = [x for x, n in up_subject.items() if n == normalize_subject(subj) and x in anc]
                            taken = same if len(same) == 1 else []
                        for u in taken:
                            add(u, _Event(f.committer_time, seq, "revert",
                                          Evidence("revert", f.sha, f"{f.subject} (names a pick no longer in the fork: "
                                                                    "a rebase dropped it)"), reason=f.subject))
                            effect[f.sha] = ("revert", effect.get(f.sha, ("revert", ()))[1] + (u,))
            inv: list[str] = []
            kind = None
            for t in dict.fromkeys(targets):
                for tk, ups in _effects(t, effect, merges or {}, res):
                    kind = "revert" if tk == "pick" else "pick"
                    for u in ups:
                        add(u, _Event(f.committer_time, seq, kind,
                                      Evidence("revert", f.sha, f"{'backs out' if kind == 'revert' else 're-lands'} "
                                                                f"{t[:12]}: {f.subject}"),
                                      reason=f.subject))
                        inv.append(u)
            if inv and kind:
                effect[f.sha] = (kind, tuple(inv))

    # decisions from notes
    for d in decisions:
        hits = res.sha(d.upstream_sha.lower())
        if not hits:
            unresolved.append((d.upstream_sha.lower(), rules.notes_ref, "note"))
        for u in hits:
            kind = "reconsider" if d.disposition is None else _DISP_KIND.get(d.disposition)
            if kind is None:
                continue
            add(u, _Event(d.time, 1 << 40, kind,
                          Evidence("note", None, f"{kind} by {d.by or 'unknown'}: {d.reason}".strip(": ")),
                          reason=d.reason))

    in_flight_of: dict[str, str] = {}
    for br in in_flight:
        for s in br.upstream_shas:
            for u in res.sha(s.lower()):
                in_flight_of.setdefault(u, br.name)
        for u in br.copies:      # rewritten upstream: the same patch is on the branch under its old sha
            if u in res.full:
                in_flight_of.setdefault(u, f"{br.name} (the same patch, under the sha upstream rewrote)")

    # ---- per upstream commit: run the events ------------------------------------------------------
    entries: list[LedgerEntry] = []
    state: dict[str, tuple] = {}
    for c in upstream:
        disp, fc, reason, iso = None, None, "", False
        evs = sorted(events[c.sha], key=lambda e: (e.time, e.seq))
        for e in evs:
            if e.kind == "pick":
                disp, fc, iso, reason = Disposition.PICKED, e.evidence.fork_commit or fc, e.isolated, ""
            elif e.kind == "empty-pick":
                if disp is not Disposition.PICKED:
                    disp, fc, iso, reason = Disposition.NO_OP, e.evidence.fork_commit, False, e.reason
            elif e.kind == "revert":
                disp, reason = Disposition.REVERTED, e.reason
                fc = fc or e.evidence.fork_commit
            elif e.kind == "reconsider":
                if disp in _DISP_KIND:
                    disp, reason = None, ""
            elif disp is not Disposition.PICKED:
                disp, reason = _DECISION_KIND[e.kind], e.reason
        state[c.sha] = (disp, fc, reason, iso, tuple(e.evidence for e in evs))

    # upstream revert pairs, both absent from the fork — and neither on an open forksync branch:
    # a pick in flight lands with its PR, so the revert is still to come after it (planned with
    # that chain), not nothing to do
    up_by_subject: dict[str, str] = {}
    for c in upstream:
        if state[c.sha][0] is not None:
            up_by_subject[up_subject[c.sha]] = c.sha
            continue
        targets = [x for m in _UP_REVERT.finditer(c.message) for x in res.sha(m.group(1))]
        targets += [x for n in reverted_prs(c.message) for x in res.sha(f"#{n}")]
        m = _UP_REVERT_SUBJ.match(c.subject)
        if m and normalize_subject(m.group(1)) in up_by_subject:
            targets.append(up_by_subject[normalize_subject(m.group(1))])
        up_by_subject[up_subject[c.sha]] = c.sha
        for x in dict.fromkeys(targets):
            if x != c.sha and state[x][0] is None and state[c.sha][0] is None \
                    and x not in in_flight_of and c.sha not in in_flight_of:
                ev_r = Evidence("revert-pair", None, f"reverted upstream by {c.sha[:12]}; neither is in the fork")
                ev_x = Evidence("revert-pair", None, f"reverts {x[:12]}; neither is in the fork")
                state[x] = (Disposition.NO_OP, None, "reverted upstream", False, state[x][4] + (ev_r,))
                state[c.sha] = (Disposition.NO_OP, None, "reverts an upstream commit not in the fork", False,
                                state[c.sha][4] + (ev_x,))

    _cancelled_reverts(upstream, state, res, up_subject)

    for i, c in enumerate(upstream):
        disp, fc, reason, iso, evid = state[c.sha]
        if disp is None:
            if not c.files and len(c.parents) <= 1 and not c.missing:
                disp, evid = Disposition.NO_OP, evid + (Evidence("empty", None, "the commit changes nothing"),)
            elif c.sha in in_flight_of:
                disp, evid = Disposition.IN_FLIGHT, evid + (Evidence("in-flight", None, in_flight_of[c.sha]),)
            else:
                disp = Disposition.PENDING
                # equal patches change the same paths: only a fork commit with c's paths could match
                if rules.patch_id and c.missing and not c.patch_id:
                    reason = f"{UNCHECKED}: this commit could not be read whole (missing objects)"
                elif rules.patch_id and _paths(c) in unread_fork:
                    reason = (f"{UNCHECKED}: fork commit {unread_fork[_paths(c)][:12]}, which changes the same "
                              "files, could not be read whole (missing objects)")
        entries.append(LedgerEntry(sha=c.sha, index=i, disposition=disp, pr=c.pr, subject=c.subject,
                                   committer_time=c.committer_time, fork_commit=fc, reason=reason,
                                   isolated=iso and disp is Disposition.PICKED, evidence=evid))
    by_pr: dict[int, list[LedgerEntry]] = {}
    for e in entries:
        if e.pr is not None:
            by_pr.setdefault(e.pr, []).append(e)
    return Ledger(entries=tuple(entries), by_sha={e.sha: e for e in entries},
                  by_pr={k: tuple(v) for k, v in by_pr.items()}, unresolved=tuple(unresolved))


def _effects(t: str, effect: Mapping[str, tuple[str, tuple[str, ...]]], merges: Mapping[str, Sequence[str]],
             res: _Resolver) -> list[tuple[str, tuple[str, ...]]]:
    """What fork commit ``t`` did to upstream commits, as ``[(pick | revert, upstream shas)]``: its
    own effect, or for a merge of ``merges`` the effects of what it brought in — its upstream
    commits picked by ancestry, and the effects of the fork commits it brought (a PR merge)."""
    if t in effect:
        return [effect[t]]
    if t not in merges:
        return []
    out = [effect[s] for s in merges[t] if s in effect]
    ups = tuple(u for s in merges[t] if s not in effect for u in res.sha(s))
    return out + ([("pick", ups)] if ups else [])


def _is_fork_commit(fork_shas: list[str], ref: str) -> bool:
    """Whether ``ref`` (a sha or abbreviation) names one of the fork's own commits (sorted list)."""
    i = bisect.bisect_left(fork_shas, ref)
    return i < len(fork_shas) and fork_shas[i].startswith(ref)


def _paths(c: CommitInfo) -> frozenset[str]:
    """The paths a commit changes, both sides of a rename (a patch-id covers both)."""
    return frozenset(p for x in c.files for p in (x.path, x.old_path) if p)


def _cancelled_reverts(upstream: Sequence[CommitInfo], state: dict[str, tuple], res: _Resolver,
                       up_subject: Mapping[str, str]) -> None:
    """An upstream revert the fork never took, of a commit the fork kept, which upstream itself
    re-landed and the fork picked, is NO_OP: the revert and the reland cancel out in the fork's
    state. Real case: upstream #8029 reverts #7918 (picked by the fork), #8129 'Reapply "… (#7918)"
    (#8029)' is picked; #8029 is nothing to apply. Updates ``state`` in place."""
    earlier: dict[str, str] = {}
    reverts_of: dict[str, list[str]] = {}
    relands: dict[str, list[str]] = {}          # re-landed commit -> the upstream relands
    for c in upstream:
        t = [x for m in _UP_REVERT.finditer(c.message) for x in res.sha(m.group(1))]
        t += [x for n in reverted_prs(c.message) for x in res.sha(f"#{n}")]
        m = _UP_REVERT_SUBJ.match(c.subject)
        if m and normalize_subject(m.group(1)) in earlier:
            t.append(earlier[normalize_subject(m.group(1))])
        reverts_of[c.sha] = [x for x in t if x != c.sha]
        m = _UP_RELAND_SUBJ.match(re.sub(r"(\s*\(#\d+\))+\s*$", "", c.subject))
        if m and normalize_subject(m.group(1)) in earlier:
            relands.setdefault(earlier[normalize_subject(m.group(1))], []).append(c.sha)
        earlier[up_subject[c.sha]] = c.sha
    index = {c.sha: i for i, c in enumerate(upstream)}
    for c in upstream:
        if state[c.sha][0] is not None:
            continue
        for x in reverts_of[c.sha]:
            if state[x][0] is not Disposition.PICKED:
                continue
            later = [r for r in relands.get(x, []) + [r for r, t in reverts_of.items() if c.sha in t]
                     if index[r] > index[c.sha] and state[r][0] is Disposition.PICKED]
            if later:
                r = later[0]
                ev = Evidence("revert-pair", None, f"reverts {x[:12]}, which the fork kept; upstream re-landed it in "
                                                   f"{r[:12]}, picked by {(state[r][1] or '')[:12]}")
                state[c.sha] = (Disposition.NO_OP, None, "an upstream revert cancelled by its reland, both in the fork",
                                False, state[c.sha][4] + (ev,))
                break


def _confirms(u: CommitInfo, f: CommitInfo, u_subject: str, f_subject: str) -> bool:
    """Whether a weak citation of upstream ``u`` by fork commit ``f`` is confirmed: the upstream
    subject appears in the fork subject, or the fork commit carries the same patch (patch-id), or
    it changes exactly the upstream commit's paths. A squash-merged fork PR ("Sync upstream
    (#88)") whose number happens to be an upstream PR's confirms none of these."""
    if u_subject and u_subject in f_subject:
        return True
    if u.patch_id and u.patch_id == f.patch_id:
        return True
    return bool(u.files) and {x.path for x in u.files} == {x.path for x in f.files}


def _empty_pick_reason(f: CommitInfo) -> str:
    """Why an empty pick is NO_OP, naming who resolved it (``Resolved-by:``, the trailer forksync
    writes on a resolved pick, docs/resolve.md) so the person's decision stays in the ledger."""
    by = ", ".join(m.group(1).strip() for m in _RESOLVED_BY.finditer(f.message))
    return f"its pick {f.sha[:12]} changes nothing in the fork" + (f" (resolved by {by})" if by else "")


def _detail(c: Claim, f: CommitInfo) -> str:
    if c.rule == "pr-citation":
        return f"{c.ref} {c.reason} of {f.sha[:12]} {f.subject[:120]!r}"
    return f"{c.ref} in {f.sha[:12]} {f.subject[:120]!r}"
