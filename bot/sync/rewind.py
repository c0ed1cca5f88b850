"""Upstream's branch moved back: which carried commits are held rather than dropped (pure).

:func:`bot.sync.service.dropped_from_upstream` finds the upstream commits open ``forksync/*``
branches carry that upstream's branch no longer reaches, and :func:`bot.sync.shrink.shrinks`
closes or rebuilds their units (``NOT_UPSTREAM``). That is right for a deliberate rewrite
(scala-steward-org/scala-steward#2152), but not when upstream's tip only moved back to an older
commit of its own history — a mistaken ``git push --force`` of an old commit, an ``upstream.ref``
set to a stale branch, a mirror or replica that lags: closing every open unit beyond that point at
once would throw away their reviews, approvals and resolutions, while waiting costs nothing.
:func:`rewind` tells the cases apart from the tip forksync last synced (``last``: the tip a
rewind still held moved back from, else the status's ``upstream_head``) and upstream's tip now:

==========================================  ===============================================
upstream's tip now                          the carried commits upstream no longer reaches
==========================================  ===============================================
no tip synced before (first sync)           dropped (as today)
``last`` itself, or a descendant of it      dropped (none are: upstream returned or went on)
an ancestor of ``last`` (a rewind)          **held** when ``last`` reaches them; the others
                                            dropped (an earlier rewrite took them)
anything else: a rewrite, or new commits    dropped: the rewind was meant, upstream built on
built on the rewound tip                    the rewound history
==========================================  ===============================================

Where the repository no longer has ``last`` (cloned again: upstream no longer has those commits),
the hold stands on its record (``prior``) while the tip is the rewound one or an ancestor of it;
anything else drops the recorded commits.

A rewind that holds no open unit (:func:`moved_back`: the same table, without the carried
commits) is still recorded, as a notice: a maintainer reading the status issue or the dashboard
should know upstream's branch is behind what forksync synced, and which of the commits it took the
fork has already landed (:func:`landed_taken`): the fork then carries changes its upstream no
longer has, which makes it a warning (:func:`degrades`). It ends as a hold does, when upstream
returns or builds on the rewound history.

A held commit is decided nothing: its unit is neither closed nor rebuilt, and its PR is not merged
(the gate's ``upstream-rewound``: a change upstream took back, even for now, must not land).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Container, Iterable, Mapping, Protocol, Sequence

from bot.sync.shrink import OpenUnit


class Reaches(Protocol):
    """``reaches(older, newer)``: is commit ``older`` ``newer`` itself or one of its ancestors?
    False when either commit is unknown (its objects absent)."""

    def __call__(self, older: str, newer: str, /) -> bool: ...


@dataclass(frozen=True)
class Rewind:
    """What :func:`rewind` decided: ``since`` the tip upstream moved back from (``""``: no rewind
    holds anything), ``tip`` upstream's tip now; ``held`` and ``dropped`` split the carried
    commits upstream no longer reaches (full sha → subject)."""

    since: str
    tip: str
    held: Mapping[str, str] = field(default_factory=dict)
    dropped: Mapping[str, str] = field(default_factory=dict)


def rewind(last: str, tip: str, gone: Mapping[str, str], reaches: Reaches, prior: Mapping | None = None) -> Rewind:
    """Split ``gone`` (full sha → subject: carried commits upstream's ``tip`` no longer reaches,
    :func:`bot.sync.service.dropped_from_upstream`) by the table in the module doc. ``last``: the
    tip forksync last synced (``""`` none), or the one an earlier rewind that still holds moved
    back from. A rewind whose ``last`` reaches none of ``gone`` holds nothing (``since`` ``""``).

    ``prior``: the record of the rewind that still holds (:func:`record`; None: none). Where the
    repository no longer has the tip it moved back from (cloned again after a crash, on a new
    host: upstream no longer has those commits, so no fetch brings them), the hold stands on that
    record — while upstream's tip is the rewound one or an ancestor of it — and once upstream
    builds on the rewound history (or rewrites it) the recorded commits are dropped with ``gone``:
    losing the objects ends neither the gate's hold nor, later, the close of their units."""
    if prior and prior.get("from") == last and last and not reaches(last, last):
        to = prior.get("to") or ""
        recorded = {c["sha"]: c.get("subject", "") for c in prior.get("commits", ())}
        if tip and to and reaches(tip, to):
            held = {**recorded, **{s: subj for s, subj in gone.items() if reaches(s, to)}}
            return Rewind(last, tip, held, {s: subj for s, subj in gone.items() if s not in held})
        return Rewind("", tip, {}, {**recorded, **gone})
    if not last or not tip or tip == last or not reaches(tip, last):
        return Rewind("", tip, {}, dict(gone))
    held = {s: subj for s, subj in gone.items() if reaches(s, last)}
    if not held:
        return Rewind("", tip, {}, dict(gone))
    return Rewind(last, tip, held, {s: subj for s, subj in gone.items() if s not in held})


def moved_back(last: str, tip: str, reaches: Reaches, prior: Mapping | None = None) -> bool:
    """Is upstream's ``tip`` a rewind of ``last`` (the tip forksync last synced, or the one the
    standing record ``prior`` moved back from)? The table of the module doc without the carried
    commits: ``tip`` a strict ancestor of ``last``; where the repository lost ``last``, while
    ``tip`` is the recorded ``to`` or an ancestor of it."""
    if prior and prior.get("from") == last and last and not reaches(last, last):
        to = prior.get("to") or ""
        return bool(tip and to and reaches(tip, to))
    return bool(last and tip and tip != last and reaches(tip, last))


def landed_taken(taken: Mapping[str, str], picked: Iterable[str]) -> dict[str, str]:
    """The commits of ``taken`` (full sha → subject: reached from the tip moved back from, not from
    upstream's tip now) that the fork has landed: named, full or abbreviated (7 hex digits at
    least), by one of ``picked`` (the pick claims of the fork's commits, :func:`bot.core.provenance.claims`).
    In ``taken``'s order."""
    refs = sorted({p.lower() for p in picked if len(p) >= 7})
    out: dict[str, str] = {}
    for sha, subject in taken.items():
        i = bisect.bisect_right(refs, sha) - 1
        if any(r and sha.startswith(r) for r in refs[max(i, 0):i + 1]):
            out[sha] = subject
    return out


def held_units(units: Sequence[OpenUnit], held: Mapping[str, str]) -> list[OpenUnit]:
    """The units of ``units`` whose branch carries a commit of ``held``, in the order given."""
    return [u for u in units if any(s in held for s in u.carried)]


def record(r: Rewind, ref: str, units: Sequence[OpenUnit], since_at: float, *, moved_from: str = "",
           landed: Mapping[str, str] | None = None) -> dict | None:
    """The status's record of a rewind (:attr:`bot.sync.status.SyncStatus.rewound`): ``{"ref",
    "from", "to", "commits": [{"sha","subject"}], "units": [{"id","branch","pr","shas"}],
    "landed": [{"sha","subject"}], "at"}``. ``ref``: upstream's branch; ``units``: the held ones
    (:func:`held_units`); ``since_at``: when the rewind was first seen (epoch s); ``moved_from``:
    the tip upstream moved back from where :func:`moved_back` says it did (``""``: it did not);
    ``landed``: the commits it took that the fork has landed (:func:`landed_taken`).

    A rewind that holds units records them and the commits they carry. One that holds none (its
    commits only a kept branch carries, or none at all) is recorded with no units and no commits
    when ``moved_from`` is given — a notice, not a "0 units held" warning
    (:func:`degrades`) — and not at all otherwise (None)."""
    taken = [{"sha": s, "subject": subj} for s, subj in (landed or {}).items()]
    if r.since and units:
        return {"ref": ref, "from": r.since, "to": r.tip,
                "commits": [{"sha": s, "subject": subj} for s, subj in r.held.items()],
                "units": [{"id": u.unit_id, "branch": u.branch, "pr": u.pr,
                           "shas": [s for s in u.carried if s in r.held]} for u in units],
                "landed": taken, "at": since_at}
    if moved_from:
        return {"ref": ref, "from": moved_from, "to": r.tip, "commits": [], "units": [], "landed": taken,
                "at": since_at}
    return None


def degrades(rec: Mapping | None) -> bool:
    """Does the record make the fork's syncing degraded (:meth:`bot.sync.status.SyncStatus.degraded`)?
    When it holds units (their PRs wait on upstream) or the fork has landed commits the rewind took:
    the fork then ships changes its upstream no longer has, which forksync cannot take back by
    itself — only a person can tell a mistaken push (wait) from a deliberate one (revert them).
    A rewind that only moved upstream's tip back past nothing the fork carries or landed is a
    notice: nothing waits, and nothing is wrong in the fork."""
    return bool(rec and (rec.get("units") or rec.get("landed")))


def held_to_recheck(rows: Sequence[Mapping], rec: Mapping | None, reached: Container[str]) -> list[Mapping]:
    """The rows of ``rows`` (``sync_branches`` rows of the fork's open units) whose person's push
    was answered "kept, not folded yet" by a rewind (``held_head`` set, kind ``chain``:
    :meth:`bot.sync.service.SyncService.finish_conflict`) that a sync checks again now: those whose
    stop commit (``conflict_sha``) upstream's tip reaches again (``reached``: the stop commits it
    reaches), or that the standing rewind record ``rec`` (:func:`record`, None: none) no longer
    holds — neither the commit among its ``commits`` nor the row's branch among its ``units``.

    The answer is remembered on the row, not only in the record the sync began with, so upstream's
    return is noticed however it comes: by a sync that fails after the record ended and is retried,
    or when no sync ever recorded the rewind (its fetch failed while upstream stood moved back, and
    the push alone was answered "held"). A rewind made deliberate (upstream built on the rewound
    history) is checked too: the check then says the commit is no longer upstream's. In ``rows``'
    order."""
    rec = rec or {}
    commits = {c.get("sha") for c in rec.get("commits", ())}
    branches = {u.get("branch") for u in rec.get("units", ())}
    out = []
    for r in rows:
        if not r.get("held_head") or r.get("kind") != "chain":
            continue
        stop = r.get("conflict_sha") or ""
        if (stop and stop in reached) or (stop not in commits and r.get("branch") not in branches):
            out.append(r)
    return out


__all__ = ["Reaches", "Rewind", "rewind", "moved_back", "landed_taken", "held_units", "record", "degrades",
           "held_to_recheck"]
