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
anything else drops the recorded commits. A rewind no open unit is held by is not recorded.

A held commit is decided nothing: its unit is neither closed nor rebuilt, and its PR is not merged
(the gate's ``upstream-rewound``: a change upstream took back, even for now, must not land).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Protocol, Sequence

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


def held_units(units: Sequence[OpenUnit], held: Mapping[str, str]) -> list[OpenUnit]:
    """The units of ``units`` whose branch carries a commit of ``held``, in the order given."""
    return [u for u in units if any(s in held for s in u.carried)]


def record(r: Rewind, ref: str, units: Sequence[OpenUnit], since_at: float) -> dict | None:
    """The status's record of a rewind that holds units (:attr:`bot.sync.status.SyncStatus.rewound`),
    None when ``r`` holds nothing: ``{"ref", "from", "to", "commits": [{"sha","subject"}], "units":
    [{"id","branch","pr","shas"}], "at"}``. ``ref``: upstream's branch; ``units``: the held ones
    (:func:`held_units`); ``since_at``: when the rewind was first seen (epoch s). A rewind whose
    commits no open unit carries (only a kept branch, a unit whose PR was refused) holds nothing
    a person waits on: not recorded, so no "0 units held" warning stands on the status issue."""
    if not r.since or not units:
        return None
    return {"ref": ref, "from": r.since, "to": r.tip,
            "commits": [{"sha": s, "subject": subj} for s, subj in r.held.items()],
            "units": [{"id": u.unit_id, "branch": u.branch, "pr": u.pr, "shas": [s for s in u.carried if s in r.held]}
                      for u in units],
            "at": since_at}


def released(prior: Mapping | None, now: Mapping | None, dropped: Mapping[str, str]) -> list[dict]:
    """The units the rewind of ``prior`` held that upstream returned to: held by ``prior`` (the
    record the sync began with, :func:`record`), no longer by ``now`` (the one it ends with), and
    none of their held commits among ``dropped`` (upstream built on the rewound history: those
    units are closed or rebuilt instead). The unit dicts of ``prior`` (``{"id","branch","pr",
    "shas"}``), in its order. A person's push that came while such a unit was held (a conflict
    resolution, :meth:`bot.sync.service.SyncService.finish_conflict`) was answered and kept, not
    folded: the sync that releases the unit checks it again, as the push's own event would have."""
    still = {u["id"] for u in (now or {}).get("units", ())}
    return [u for u in (prior or {}).get("units", ())
            if u["id"] not in still and not any(s in dropped for s in u.get("shas", ()))]


__all__ = ["Reaches", "Rewind", "rewind", "held_units", "record", "released"]
