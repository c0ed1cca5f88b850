"""The picks an open unit still owes stay in it (pure).

A chain whose later pick failed without a conflict (step ``apply``, docs/github.md "Blocked
units") is pushed with the picks before it: its branch carries those, its PR says which pick
failed, and its ``sync_branches`` row keeps the upstream commit it stopped at (``conflict_sha``)
and the commits it was planned with (``shas_json``). The commit that failed is not on the branch,
so the next plan finds it PENDING and places it by the planner's rules alone — usually as a chain
of its own, stacked on the open one: the unit would lose the pick it stopped at (its PR no longer
saying it, its block cleared) and the commit come back as a second PR. :func:`keep_owed` puts it
back: a planned chain whose first commit the open unit owes (the commit it stopped at, or one
planned after it in that unit) is folded into the open unit, which picks it again on its own
branch, in upstream order.

A chain stopped at a conflict (its conflict commit the branch's tip, ``conflict_sha`` set, no
block) owes the commits planned after the conflicted one: they are PENDING, and the plan places
them by its rules alone. A commit linked to the open branch by a shared symbol or area joins it,
but one that only conflicts without the chain (a follow link, no shared symbol) and joined the
chain because the chain's running tree took it cleanly starts a chain stacked on the branch: an
open branch has no running tree. That chain would be published on the fork tip, lacking the
chain's picks, and stop at a conflict of its own — a second PR for one resolution. It is folded
back the same way, and picked after the resolution (``SyncService.finish_conflict`` picks the
commits the row was planned with), or when the chain is built again on a moved fork tip.

Left as planned: an owed commit in a bundle, or in a chain it is not the first of (the planner
joined it to other work), the commits after a bundle's conflict (bundles land in any order), a
unit with no PR (its first pick failed: nothing is on GitHub, and the plan makes the unit again),
a unit GitHub refused (blocked at push, pr or merge), and a fold that would make units land after
each other in a cycle.
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Mapping, Sequence

from bot.model import Plan, Unit


def keep_owed(plan: Plan, rows: Sequence[dict], rank: Mapping[str, int]) -> tuple[Plan, list[str]]:
    """Pure: ``plan`` with each planned chain whose first commit an open unit owes folded into that
    unit (see the module doc), and one note per fold (``"<chain> kept in <unit>: …"``).

    ``rows``: the fork's ``sync_branches`` rows (:func:`bot.sync.store.open_branches`; only those
    ``open`` with a ``conflict_sha`` count: blocked at step ``apply``, or a chain not blocked —
    stopped at that conflict). ``rank``: upstream order
    of the plan's commits (sha → index; an unknown sha sorts last). The folded unit keeps the open
    unit's id, reason (else says it continues the branch), and the units either landed after;
    units that landed after the folded chain land after the open unit."""
    units = list(plan.units)
    notes: list[str] = []
    for r in sorted(rows, key=lambda r: r.get("branch") or ""):
        stop = r.get("conflict_sha") or ""
        if r.get("state") != "open" or not stop:
            continue
        own = r["unit_id"]
        planned = json.loads(r.get("shas_json") or "[]")
        if r.get("blocked_step") == "apply":
            # the failed pick is PENDING: it is owed, and so is what was planned after it
            owed = set(planned[planned.index(stop):] if stop in planned else [stop])
            why = f"{own}'s pick of upstream {stop[:12]} failed"
            reason = f"continues forksync/{own}: its pick of upstream {stop[:12]} failed; picked again on its branch"
        elif not r.get("blocked_step") and r.get("kind") == "chain":
            # stopped at a conflict: the conflicted commit is in flight (its conflict commit is the
            # branch's tip); the commits planned after it are owed. A plan that kept them wrote
            # only those (the stop is not pending), so a list without the stop is owed whole
            owed = set(planned[planned.index(stop) + 1:] if stop in planned else planned)
            why = f"{own} stopped at a conflict in upstream {stop[:12]}"
            reason = (f"continues forksync/{own}: stopped at a conflict in upstream {stop[:12]}; "
                      "picked after its resolution, on its branch")
        else:
            continue
        while owed:
            chain = next((u for u in units if u.id != own and u.kind == "chain" and u.items
                          and u.items[0].sha in owed), None)
            if chain is None:
                break
            folded = _fold(units, own, chain, reason, rank)
            if folded is None:
                break
            units = folded
            notes.append(f"{chain.id} kept in {own}: {why}")
    return replace(plan, units=tuple(units)), notes


def _fold(units: list[Unit], own: str, chain: Unit, reason: str, rank: Mapping[str, int]) -> list[Unit] | None:
    """``units`` with ``chain`` folded into unit ``own`` (made with ``reason`` when the plan has
    none), or None when the result would land units after each other in a cycle."""
    last = len(rank)
    base = next((u for u in units if u.id == own), None)
    if base is None:
        base = Unit(id=own, kind="chain", items=(), reason=reason)
    items = tuple(sorted(base.items + chain.items, key=lambda i: rank.get(i.sha, last)))
    deps = tuple(d for d in dict.fromkeys(base.depends_on + chain.depends_on) if d not in (own, chain.id))
    merged = replace(base, items=items, areas=tuple(sorted(set(base.areas) | set(chain.areas))), depends_on=deps)
    at = next(n for n, u in enumerate(units) if u.id in (own, chain.id))
    out: list[Unit] = []
    for n, u in enumerate(units):
        if n == at:
            out.append(merged)
        elif u.id not in (own, chain.id):
            after = tuple(dict.fromkeys(own if d == chain.id else d for d in u.depends_on))
            out.append(replace(u, depends_on=after) if after != u.depends_on else u)
    return None if _cycles(out) else out


def _cycles(units: Sequence[Unit]) -> bool:
    """Whether the ``depends_on`` links among ``units`` make a cycle."""
    deps = {u.id: [d for d in u.depends_on if d != u.id] for u in units}
    state: dict[str, int] = {}          # 1: being visited, 2: done

    def visit(uid: str) -> bool:
        if state.get(uid) == 2 or uid not in deps:
            return False
        if state.get(uid) == 1:
            return True
        state[uid] = 1
        if any(visit(d) for d in deps[uid]):
            return True
        state[uid] = 2
        return False

    return any(visit(u.id) for u in units)
