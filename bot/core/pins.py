"""Pins and metrics (pure core): frontier, contiguous pin, Days Behind Upstream, Backlog Commits.

Definitions (Meta's fbtriton practice):

* *Handled* = PICKED, NO_OP, WONT_PORT, SKIP_FOR_CURRENT_BASE (:data:`bot.model.HANDLED`).
* *Reached* = an entry that sequential ingestion has walked over: PICKED, REVERTED (it was
  picked), DEFERRED_BLOCKED, SKIP_FOR_CURRENT_BASE, WONT_PORT, and NO_OP by a landed fork commit
  (a pick that changes nothing). Other NO_OP and PENDING/IN_FLIGHT are not reached by themselves
  (an empty commit at upstream's tip must not move the frontier).
* *Isolated* picks do not move the frontier: entries marked ``isolated`` by the ledger
  (``Upstream-Urgent:`` or ``isolated_picks.message_patterns``), and — the fallback for histories
  with neither — small islands: reached entries are grouped into clusters whose neighbours lie at
  most ``max_gap`` upstream commits apart; a cluster that starts more than ``max_gap`` commits
  after the previous one (or after the base) and holds fewer than ``min_run`` entries is isolated.
* **Frontier** = the newest reached, non-isolated entry (None → the merge base).
* **Contiguous pin** = the newest entry such that it and every older entry are handled
  (None → the merge base); the entry after it, the oldest one not handled, *holds* it
  (``holder``: its upstream date is when the pin stopped moving).
* **Days Behind** = (committer time of the upstream tip − committer time of the frontier) / 86400,
  fractional days, UTC, never below 0 (committer clocks can go backwards); ``contiguous_lag_days``
  the same for the contiguous pin. Where the fork
  and upstream share no history and no entry holds a pin, the fork lacks the whole range: its lag
  runs from the range's oldest commit.
* **Backlog** = entries older than the frontier that are not handled (deferred, reverted, pending,
  in flight), with counts per disposition; **not reached** = entries newer than the frontier.

For a fork that syncs by **merging** upstream (:mod:`bot.core.merged`) the frontier is the newest
upstream commit the fork contains by ancestry (None → the merge base); a cherry-pick of a newer
upstream commit is an isolated pick (it neither moves the frontier nor becomes a hole once a merge
reaches it); and the Backlog also counts the merged upstream commits the fork reverted and has not
got back (``holes``, as REVERTED; the oldest of them holds the contiguous pin). No trailer is
needed for any of this. The sync mode is the *recent* one: a fork that merged upstream and has
since picked, in upstream order, at least ``min_run`` upstream commits right after the newest
one it merged (every entry up to them handled) syncs by picks now, and is measured by the rules
above for picks — one old merge does not make it merge-based for ever. Picks taken ahead of
the next merge skip commits, so they never form such a run.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from bot.config.forksync import IsolatedPickRules
from bot.model import HANDLED, Disposition, LedgerEntry

REACHED = frozenset({Disposition.PICKED, Disposition.REVERTED, Disposition.DEFERRED_BLOCKED,
                     Disposition.SKIP_FOR_CURRENT_BASE, Disposition.WONT_PORT})


def is_reached(e: LedgerEntry) -> bool:
    """Whether sequential ingestion walked over ``e``: a :data:`REACHED` disposition, or NO_OP by
    a landed fork commit (an empty pick, :mod:`bot.core.ledger`) — the fork took it in turn, unlike
    an empty upstream commit nobody picked."""
    return e.disposition in REACHED or (e.disposition is Disposition.NO_OP and e.fork_commit is not None)


@dataclass(frozen=True)
class Pin:
    """A point in the upstream range. ``sha`` None: no entry holds it and there is no merge base to
    fall back to (the fork and upstream share no history; ``committer_time`` 0 then means none):
    before every commit of the range (``index`` -1) and no commit itself, so never the base."""

    sha: str | None
    index: int            # -1: before the range (the merge base, or an older commit a hole holds the pin at)
    pr: int | None
    committer_time: int
    subject: str = ""

    @property
    def before_range(self) -> bool:
        """Before the upstream range (``index`` -1): the merge base, or — on a fork that merges
        upstream, where a merged commit the fork reverted holds the contiguous pin at the commit
        before it — an older upstream commit, or, with no merge base, no commit (``sha`` None).
        Compare ``sha`` with the base (when there is one) to tell them apart."""
        return self.index < 0


@dataclass(frozen=True)
class Pins:
    frontier: Pin
    contiguous: Pin
    upstream_tip: Pin
    days_behind: float
    contiguous_lag_days: float
    backlog: int
    backlog_by_disposition: dict[str, int] = field(default_factory=dict)
    not_reached: int = 0
    not_reached_handled: int = 0     # handled entries past the frontier (isolated picks, NO_OP …)
    isolated: tuple[str, ...] = ()   # shas of reached entries treated as isolated
    total: int = 0
    #: the oldest entry that is not handled: it holds the contiguous pin (None when every entry
    #: is handled); ``holder_disposition`` its disposition, ``holder_reason`` the fork's reason
    holder: Pin | None = None
    holder_disposition: str = ""
    holder_reason: str = ""
    #: the fork syncs by merging: the frontier is what it contains by ancestry
    merge_based: bool = False
    #: merged upstream commits before the range that the fork reverted (counted in the Backlog)
    holes: tuple[str, ...] = ()


def isolated_entries(entries: tuple[LedgerEntry, ...] | list[LedgerEntry], rules: IsolatedPickRules) -> set[str]:
    """Shas of reached entries that do not move the frontier (see the module docstring)."""
    iso = {e.sha for e in entries if e.isolated and is_reached(e)}
    reached = [e.index for e in entries if is_reached(e) and e.sha not in iso]
    clusters: list[list[int]] = []
    for i in reached:
        if clusters and i - clusters[-1][-1] <= rules.max_gap:
            clusters[-1].append(i)
        else:
            clusters.append([i])
    prev_end = -1
    for cl in clusters:
        if cl[0] - prev_end > rules.max_gap and len(cl) < rules.min_run:
            iso |= {entries[i].sha for i in cl}
            continue
        prev_end = cl[-1]
    return iso


def _picks_in_sequence(entries: list[LedgerEntry], merged: frozenset[str] | set[str]) -> int:
    """How many upstream commits the fork reached in one unbroken run of handled entries right
    after the newest entry it contains by ancestry (or after the base)."""
    f_at = next((e.index for e in reversed(entries) if e.sha in merged), -1)
    run = 0
    for e in entries[f_at + 1:]:
        if e.disposition not in HANDLED:
            break
        run += is_reached(e)
    return run


def _pin(e: LedgerEntry | None, base: Pin) -> Pin:
    return base if e is None else Pin(e.sha, e.index, e.pr, e.committer_time, e.subject)


#: why a hole holds the contiguous pin
HOLE_REASON = "in the fork's history (merged, or there when it branched), then reverted by the fork"


def compute_pins(entries, *, base_sha: str | None, base_time: int, upstream_tip_time: int | None = None,
                 rules: IsolatedPickRules = IsolatedPickRules(), merged: frozenset[str] | set[str] | None = None,
                 holes: tuple[str, ...] = (), oldest_hole: tuple[Pin, Pin] | None = None,
                 base_pr: int | None = None, base_subject: str = "") -> Pins:
    """Pins of a ledger's entries (upstream order). ``base_*``: the merge base (or ``since``):
    its sha, committer time (epoch seconds), PR number and subject line — a pin no entry holds
    is the base, which on a fork that syncs by merging is where its frontier usually is.
    ``upstream_tip_time`` defaults to the newest entry's committer time (or the base's).

    ``merged``: for a fork that has merged upstream (:func:`bot.core.merged.syncs_by_merging`), the
    shas of the range it contains by ancestry; then the frontier is the newest of them (None →
    the merge base) and every other reached entry past it is an isolated pick — unless the fork
    has since picked ``rules.min_run`` or more upstream commits in sequence right after it (see
    the module docstring: it syncs by picks now, ``merge_based`` False). ``holes``: merged
    upstream commits before the range that the fork reverted and has not got back
    (:func:`bot.core.merged.merged_holes`); each counts in the Backlog as REVERTED.
    ``oldest_hole``: ``(the oldest hole, the upstream commit before it)``; the hole lies before
    every entry, so it holds the contiguous pin, which stays at the commit before it."""
    entries = list(entries)
    frontier = None
    if merged is not None and _picks_in_sequence(entries, merged) >= rules.min_run:
        merged = None
    if merged is None:
        iso = isolated_entries(entries, rules)
        for e in reversed(entries):
            if is_reached(e) and e.sha not in iso:
                frontier = e
                break
    else:
        frontier = next((e for e in reversed(entries) if e.sha in merged), None)
        f_at = frontier.index if frontier else -1
        iso = {e.sha for e in entries[f_at + 1:] if is_reached(e)}
    contiguous = holder = None
    for e in entries:
        if e.disposition not in HANDLED:
            holder = e
            break
        contiguous = e
    c_hole = None
    if holes and oldest_hole is not None:
        c_hole, holder = oldest_hole, None
    tip = entries[-1] if entries else None
    tip_time = upstream_tip_time if upstream_tip_time is not None else (tip.committer_time if tip else base_time)
    base = Pin(base_sha, -1, base_pr, base_time, base_subject)
    f_pin, c_pin = _pin(frontier, base), _pin(contiguous, base)
    if c_hole is not None:
        c_pin = c_hole[1]
    # with no merge base a pin no entry holds is no commit (time 0): the fork lacks the whole range,
    # so its lag runs from the oldest upstream commit of the range, not from the epoch
    floor = entries[0].committer_time if entries else tip_time

    def lag(pin: Pin) -> float:
        # never below 0: a committer clock set back (upstream's tip dated before the pin) does
        # not put the fork ahead of upstream
        return max(0.0, round((tip_time - (pin.committer_time if pin.sha is not None else floor)) / 86400.0, 4))

    f_idx = frontier.index if frontier else -1
    by_disp: dict[str, int] = {}
    for e in entries[:max(f_idx, 0)]:
        if e.disposition not in HANDLED:
            by_disp[e.disposition.value] = by_disp.get(e.disposition.value, 0) + 1
    if holes:
        by_disp[Disposition.REVERTED.value] = by_disp.get(Disposition.REVERTED.value, 0) + len(holes)
    past = entries[f_idx + 1:]
    return Pins(
        frontier=f_pin, contiguous=c_pin, upstream_tip=_pin(tip, base),
        days_behind=lag(f_pin), contiguous_lag_days=lag(c_pin),
        backlog=sum(by_disp.values()), backlog_by_disposition=dict(sorted(by_disp.items())),
        not_reached=len(past), not_reached_handled=sum(1 for e in past if e.disposition in HANDLED),
        isolated=tuple(e.sha for e in entries if e.sha in iso), total=len(entries),
        holder=c_hole[0] if c_hole else _pin(holder, base) if holder else None,
        holder_disposition=Disposition.REVERTED.value if c_hole else holder.disposition.value if holder else "",
        holder_reason=HOLE_REASON if c_hole else holder.reason if holder else "",
        merge_based=merged is not None, holes=tuple(holes))
