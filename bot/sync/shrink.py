"""Open sync units that lost upstream commits to a decision while their PR was open (pure).

A commit on an open ``forksync/*`` branch is IN_FLIGHT in the ledger only until something else
decides it: a ``/forksync defer|skip|wontport`` note, a trailer of a later fork commit, a person's
pick of it by hand (PICKED), a no-op found at plan time. The branch still carries it, and its PR
would still ask a person to review or resolve a commit the maintainer decided not to take now.
:func:`shrinks` says, per unit, what forksync does about it:

======================================  ===========  =============================================
the unit's carried commits              the branch   action
======================================  ===========  =============================================
none decided                            any          nothing
every one decided                       any          ``close``: the PR is closed saying why; a
                                                     person's commits are kept under
                                                     ``refs/forksync/closed/…`` before the branch goes
some decided                            forksync's   ``rebuild``: the branch is built again on the
                                                     fork tip without them (with a lease)
some decided                            a person's   ``tell``: one comment; the branch is left as is
                                        (or a pick
                                        folding their
                                        resolution)
======================================  ===========  =============================================

"Decided" is any disposition other than IN_FLIGHT and PENDING. A commit the ledger does not know
because upstream's history no longer has it (a force push rewrote it into another change, or
dropped it) counts as decided too, as :data:`NOT_UPSTREAM` (``dropped``: the caller checks that
upstream's branch does not reach it and that the branch carries no rewritten copy of it, which the
ledger holds IN_FLIGHT instead; docs/core.md, "Rewritten upstream history"): merged, its pick would
land a change upstream took back (scala-steward-org/scala-steward#2152 is the same failure in
another sync bot). A commit upstream's branch only moved back past (its tip now an ancestor of the
tip last synced) is held instead, never dropped, until upstream builds on the rewound history
(:mod:`bot.sync.rewind`). Units without a PR are left to the plan (nothing to close).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from bot.model import UNDECIDED, LedgerEntry
from bot.sync.rebuild import holds_persons_work

CLOSE, REBUILD, TELL = "close", "rebuild", "tell"
#: what a carried commit upstream's history no longer has is "now" (no ledger disposition: the
#: ledger covers upstream's history only)
NOT_UPSTREAM = "NOT_UPSTREAM"
NOT_UPSTREAM_REASON = "upstream's history no longer has it: its branch was rewritten (a force push)"
#: a note's evidence detail, as the ledger writes it: "<kind> by <login>: <reason>"
_NOTE_BY = re.compile(r"^[\w-]+ by (\S+?)(?::|$)")


@dataclass(frozen=True)
class OpenUnit:
    """An open sync unit as the shrink rule reads it: ``carried`` are the upstream shas its branch
    holds (``Upstream-Commit:`` and ``Forksync-Conflict:`` trailers, oldest first); ``ours`` is
    True when the branch holds nothing but forksync's commits (its tip is the one forksync pushed);
    ``resolved_by_hand`` when one of them is a pick folding a person's conflict resolution (a
    rebuild would pick that commit afresh, back at its conflict, and the resolution would leave
    the branch). Either is a person's work (:func:`bot.sync.rebuild.holds_persons_work`, the rule
    the sync's own rebuilds keep): such a branch is told, never rebuilt."""

    unit_id: str
    branch: str
    kind: str
    pr: int
    carried: tuple[str, ...]
    ours: bool
    resolved_by_hand: bool = False


@dataclass(frozen=True)
class Decided:
    """One carried commit the ledger now gives another disposition: ``by`` is the login a note
    names ("" when a trailer or a pick decided it), ``fork_commit`` the fork commit whose trailer
    or pick did ("" for a note)."""

    sha: str
    subject: str
    disposition: str
    reason: str
    by: str
    fork_commit: str


@dataclass(frozen=True)
class Shrink:
    """What to do with ``unit``: ``action`` is :data:`CLOSE`, :data:`REBUILD` or :data:`TELL`;
    ``decided`` in the branch's order; ``keep`` the carried shas still to land, in order."""

    unit: OpenUnit
    action: str
    decided: tuple[Decided, ...]
    keep: tuple[str, ...]


def decided_of(entry: LedgerEntry) -> Decided:
    """``entry`` as :class:`Decided`, who or what decided it read from its newest evidence (the
    ledger keeps evidence newest last)."""
    ev = next((e for e in reversed(entry.evidence) if e.rule != "in-flight"), None)
    by, fork_commit = "", ""
    if ev is not None and ev.rule == "note":
        m = _NOTE_BY.match(ev.detail)
        by = m.group(1) if m and m.group(1) != "unknown" else ""
    elif ev is not None:
        fork_commit = ev.fork_commit or entry.fork_commit or ""
    return Decided(entry.sha, entry.subject, entry.disposition.value, entry.reason, by, fork_commit)


def shrinks(units: Sequence[OpenUnit], ledger: Mapping[str, LedgerEntry],
            dropped: Mapping[str, str] | None = None) -> list[Shrink]:
    """The units of ``units`` (with a PR) that carry a decided commit, each with its action (the
    table in the module doc), in the order given. ``ledger``: full upstream sha → entry;
    ``dropped``: full sha → subject of carried commits upstream's history no longer has (decided
    as :data:`NOT_UPSTREAM`; a sha the ledger holds is never taken from here)."""
    dropped = dropped or {}
    out: list[Shrink] = []
    for u in units:
        if u.pr <= 0 or not u.carried:
            continue
        decided = tuple(decided_of(ledger[s]) if s in ledger
                        else Decided(s, dropped[s], NOT_UPSTREAM, NOT_UPSTREAM_REASON, "", "")
                        for s in u.carried
                        if (s in ledger and ledger[s].disposition not in UNDECIDED)
                        or (s not in ledger and s in dropped))
        if not decided:
            continue
        gone = {d.sha for d in decided}
        keep = tuple(s for s in u.carried if s not in gone)
        persons = holds_persons_work(persons_commits=not u.ours, resolved_by_hand=u.resolved_by_hand)
        action = CLOSE if not keep else TELL if persons else REBUILD
        out.append(Shrink(u, action, decided, keep))
    return out


__all__ = ["CLOSE", "REBUILD", "TELL", "NOT_UPSTREAM", "NOT_UPSTREAM_REASON", "OpenUnit", "Decided", "Shrink", "decided_of", "shrinks"]
