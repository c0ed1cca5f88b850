"""May a sync branch be rebuilt before it is published, and how (pure).

Before a unit's branch is pushed, :func:`decide` reads what git and the store say of it
(:class:`BranchFacts`) and names one path (:class:`Path`); ``SyncService._publish`` reads the facts
and carries the path out. The first rule that holds wins:

===  =============================================  ===========================================
#    the branch                                     path
===  =============================================  ===========================================
1    the fork's history was rewritten under it      :attr:`Path.BLOCKED`: never rebuilt over
     (a force push dropped fork commits it was      their work, never merged with the dropped
     built on) and it holds a person's work         commits (``requires: rebase``)
     (:func:`holds_persons_work`)
2    the fork was rewritten under forksync's own    :attr:`Path.REBUILD_REWRITTEN` on the new
     commits                                        fork tip, with a lease: the PR never carries
                                                    the dropped commits back
3    "retry" (the status issue's box, a shrink)     :attr:`Path.REBUILD_RETRY`, with a lease —
     and nothing but forksync's commits             never over a pick folding a person's
                                                    resolution: that retry is kept as it is and
                                                    said once (``retry_kept``), and rules 4-6
                                                    still apply
4    stopped at a conflict commit, forksync's       :attr:`Path.REBUILD_STOPPED`, taken only
     commits only, GitHub's tip the one forksync    when it gets past that pick (the conflict
     pushed, while the fork moved                   may have been a missing dependency)
5    finished by a person's folded resolution       :attr:`Path.REBUILD_RESOLVED`, taken only
     (``verified_tip``), forksync's commits         when every pick goes through and it keeps
     only, GitHub's tip the one forksync pushed,    their resolution
     not holding the fork tip, and merging the      (``bot.git.resolution.rebuild_keeps``) —
     fork into it conflicts                         :attr:`Path.LEAVE_REFUSED` while the refused
                                                    build's fork tip and branch tip stay
                                                    (``rebuild_refused``); one the fork merges
                                                    into is :attr:`Path.LEAVE_MERGES`
6    anything else                                  :attr:`Path.LEAVE`
===  =============================================  ===========================================

Three facts cost a walk or a merge of git objects: whether a pick folds a person's resolution
(``resolved_by_hand``), whether the branch already holds the fork tip (``holds_fork_tip``) and
whether merging the fork into it conflicts (``merge_conflicts``). They are ``None`` until read, and
:func:`decide` answers :class:`Ask` for the first one its path needs, so the caller reads each
only where the rules above reach it, in their order, and calls :func:`decide` again with it: the
decision stays a plain function of plain values (a table test gives every fact at once), and no
callable reaches into git from here. The same "a person's work is told, never rebuilt" rule
decides :mod:`bot.sync.shrink`'s ``tell`` (:func:`holds_persons_work`). docs/github.md,
"Finishing a conflicted chain" and "A resolved chain whose dependency landed".
"""
from __future__ import annotations

import enum
from dataclasses import dataclass


class Path(enum.Enum):
    """What happens to an existing sync branch before it is published (the module doc's table)."""

    BLOCKED = "blocked"                         # rewritten under a person's work: blocked at step push
    REBUILD_REWRITTEN = "rebuild-rewritten"     # rewritten under forksync's own commits: rebuilt
    REBUILD_RETRY = "rebuild-retry"             # a retry on forksync's own commits: rebuilt
    REBUILD_STOPPED = "rebuild-stopped"         # a chain stopped at a conflict, the fork moved
    REBUILD_RESOLVED = "rebuild-resolved"       # a resolved chain the fork no longer merges into
    LEAVE_REFUSED = "leave-refused"             # that rebuild was refused at this fork and branch tip
    LEAVE_MERGES = "leave-merges"               # a resolved chain the fork merges into (the gate does)
    LEAVE = "leave"                             # nothing moved that asks for a rebuild


#: the facts :func:`decide` may :class:`Ask` for (names of :class:`BranchFacts` fields)
RESOLVED_BY_HAND, HOLDS_FORK_TIP, MERGE_CONFLICTS = "resolved_by_hand", "holds_fork_tip", "merge_conflicts"


@dataclass(frozen=True)
class Prior:
    """The branch's stored row (``sync_branches``) of the unit still open on it, as its fields are
    stored (None for a field the row lacks): ``pushed_tip`` the tip forksync pushed last,
    ``verified_tip`` a person's resolution that passed verification, ``base_sha`` the fork tip it
    was published on, ``rebuild_refused`` ``"<fork tip>:<branch tip>"`` of a refused rebuild
    (:func:`refusal_key`)."""

    pushed_tip: str | None = ""
    verified_tip: str | None = ""
    base_sha: str | None = ""
    rebuild_refused: str | None = ""


@dataclass(frozen=True)
class BranchFacts:
    """What :func:`decide` reads of one unit's branch, once its commits were applied to it.

    ``retry``: a rebuild was asked for (the status issue's retry box, a shrink's rebuild).
    ``dropped`` / ``foreign``: how many commits ``bot.git.apply.rewritten_base`` found — fork
    commits a force push removed from under the branch, and commits above them forksync did not
    write (a person's). ``tip``: the branch tip after apply (``""`` none); ``kept``: how many
    branch commits apply left untouched as not forksync's; ``conflict_commit``: the branch stops at
    a conflict commit; ``error``: a pick failed for another reason. ``fork_head``: the fork's tip;
    ``remote_tip``: GitHub's tip of the branch (None: no such branch). ``prior``: the open unit's
    row (None: none, or its unit ended). The costly facts, None until read: ``resolved_by_hand``
    (a pick above the fork base folds a person's conflict resolution), ``holds_fork_tip`` (the fork
    tip is ``tip`` or an ancestor of it), ``merge_conflicts`` (merging the fork into ``tip``
    conflicts)."""

    retry: bool
    dropped: int
    foreign: int
    tip: str
    kept: int
    conflict_commit: bool
    error: bool
    fork_head: str
    remote_tip: str | None
    prior: Prior | None
    resolved_by_hand: bool | None = None
    holds_fork_tip: bool | None = None
    merge_conflicts: bool | None = None


@dataclass(frozen=True)
class Ask:
    """:func:`decide` needs ``fact`` (one of :data:`RESOLVED_BY_HAND`, :data:`HOLDS_FORK_TIP`,
    :data:`MERGE_CONFLICTS`) read before it can say more."""

    fact: str


@dataclass(frozen=True)
class Decision:
    """The path to take. ``retry_kept``: a retry was asked on a branch holding a pick that folds a
    person's resolution — left as it is, said once on its PR, and ``path`` is what rules 4-6 give
    it. ``forget_kept``: the fork was rewritten under forksync's own commits: the commits apply
    kept as not forksync's are the fork's dropped ones, none of them a person's. ``resolved_by_hand``:
    the fact as read (False when not needed), which :attr:`Path.BLOCKED`'s refusal names."""

    path: Path
    retry_kept: bool = False
    forget_kept: bool = False
    resolved_by_hand: bool = False


def holds_persons_work(*, persons_commits: bool, resolved_by_hand: bool) -> bool:
    """Does a sync branch hold a person's work — commits forksync did not write, or a pick folding a
    person's conflict resolution (``Resolved-by:`` someone other than forksync's rules)? Such a
    branch is never rebuilt: picked again, the folded pick stops back at its conflict and their
    resolution leaves the branch. Read by :func:`decide` (blocked, retry kept) and
    :func:`bot.sync.shrink.shrinks` (told, not rebuilt)."""
    return persons_commits or resolved_by_hand


def refusal_key(fork_head: str, tip: str) -> str:
    """``sync_branches.rebuild_refused`` of a resolved chain's rebuild refused on fork tip
    ``fork_head`` at branch tip ``tip``: the same picks on the same tip give the same answer."""
    return f"{fork_head}:{tip}"


def decide(f: BranchFacts) -> Decision | Ask:
    """The path for the branch ``f`` describes (the module doc's table, first rule that holds), or
    :class:`Ask` for the first costly fact that path needs and ``f`` lacks (never one ``f`` gives:
    a caller that fills each asked fact gets a :class:`Decision` within three calls)."""
    needs_hand = bool(f.tip and (f.dropped or (f.retry and not f.kept)))
    if needs_hand and f.resolved_by_hand is None:
        return Ask(RESOLVED_BY_HAND)
    by_hand = needs_hand and bool(f.resolved_by_hand)
    if f.dropped and holds_persons_work(persons_commits=bool(f.foreign), resolved_by_hand=by_hand):
        return Decision(Path.BLOCKED, resolved_by_hand=by_hand)
    retry_kept = f.retry and by_hand
    forget_kept = bool(f.dropped)
    kept = 0 if forget_kept else f.kept
    if (f.dropped or (f.retry and not retry_kept)) and f.tip and not kept:
        return Decision(Path.REBUILD_REWRITTEN if f.dropped else Path.REBUILD_RETRY, forget_kept=forget_kept)

    def then(path: Path) -> Decision:
        return Decision(path, retry_kept=retry_kept, forget_kept=forget_kept, resolved_by_hand=by_hand)

    p = f.prior
    if not f.tip or kept or p is None or f.remote_tip != p.pushed_tip:
        # nothing of forksync's alone, or GitHub's tip is not the one it pushed (a person pushed)
        return then(Path.LEAVE)
    if f.conflict_commit:
        return then(Path.REBUILD_STOPPED if p.base_sha != f.fork_head else Path.LEAVE)
    if f.error or not p.verified_tip:
        return then(Path.LEAVE)
    if p.rebuild_refused == refusal_key(f.fork_head, f.tip):
        return then(Path.LEAVE_REFUSED)
    if f.holds_fork_tip is None:
        return Ask(HOLDS_FORK_TIP)
    if f.holds_fork_tip:
        return then(Path.LEAVE_MERGES)
    if f.merge_conflicts is None:
        return Ask(MERGE_CONFLICTS)
    return then(Path.REBUILD_RESOLVED if f.merge_conflicts else Path.LEAVE_MERGES)


__all__ = ["Path", "Prior", "BranchFacts", "Ask", "Decision", "RESOLVED_BY_HAND", "HOLDS_FORK_TIP", "MERGE_CONFLICTS",
           "holds_persons_work", "refusal_key", "decide"]
