"""The picks an open unit still owes (its pick failed without a conflict) stay in it: a table of
plans and the open units' rows, and the plan that comes out (pure, :func:`bot.sync.owed.keep_owed`)."""
from __future__ import annotations

import json

import pytest

from bot.model import Plan, PlanItem, Unit
from bot.sync.owed import keep_owed

A, B, C, D, E = (c * 40 for c in "abcde")
RANK = {s: n for n, s in enumerate([A, B, C, D, E])}


def row(unit_id, shas, stop, *, state="open", step="apply", kind="chain"):
    return {"unit_id": unit_id, "branch": f"forksync/{unit_id}", "state": state, "blocked_step": step,
            "conflict_sha": stop, "shas_json": json.dumps(shas), "pr": 7 if state == "open" else 0, "kind": kind}


def chain(uid, *shas, deps=(), areas=(), reason="r"):
    return Unit(id=uid, kind="chain", items=tuple(PlanItem(s, f"why {s[0]}") for s in shas), areas=areas,
                reason=reason, depends_on=tuple(deps))


def bundle(uid, *shas, deps=()):
    return Unit(id=uid, kind="bundle", items=tuple(PlanItem(s, f"why {s[0]}") for s in shas), depends_on=tuple(deps))


CA = "chain-" + A[:12]
CB = "chain-" + B[:12]
CC = "chain-" + C[:12]
BD = "bundle-" + D[:12]


@pytest.mark.parametrize("units, rows, expected, said", [
    # chain-a picked a, its pick of b failed; the plan made b a chain of its own stacked on chain-a:
    # b (and what followed it there) goes back into chain-a, continuing on its branch
    ([chain(CB, B, C, deps=[CA], areas=("amd",)), bundle(BD, D)],
     [row(CA, [A, B], B)],
     [Unit(id=CA, kind="chain", items=(PlanItem(B, "why b"), PlanItem(C, "why c")), areas=("amd",),
           reason=f"continues forksync/{CA}: its pick of upstream {B[:12]} failed; picked again on its branch"),
      bundle(BD, D)],
     [f"{CB} kept in {CA}: {CA}'s pick of upstream {B[:12]} failed"]),
    # chain-a also continues with a newer commit of its own: the owed one comes first (upstream order),
    # units that landed after chain-b land after chain-a
    ([chain(CA, D, deps=[], areas=("x",), reason="continues"), chain(CB, B, deps=[CA], areas=("amd",)),
      chain("chain-" + E[:12], E, deps=[CB])],
     [row(CA, [A, B], B)],
     [Unit(id=CA, kind="chain", items=(PlanItem(B, "why b"), PlanItem(D, "why d")), areas=("amd", "x"),
           reason="continues"),
      chain("chain-" + E[:12], E, deps=[CA])],
     [f"{CB} kept in {CA}: {CA}'s pick of upstream {B[:12]} failed"]),
    # nothing owed: a refused push, a unit with no PR (its first pick failed: the plan makes it again),
    # an owed commit in a bundle or in a chain it is not the first of
    ([chain(CB, B, deps=[CA])], [row(CA, [A, B], B, step="push")], [chain(CB, B, deps=[CA])], []),
    ([chain(CB, B)], [row(CB, [B], B, state="blocked")], [chain(CB, B)], []),
    ([bundle("bundle-" + B[:12], B)], [row(CA, [A, B], B)], [bundle("bundle-" + B[:12], B)], []),
    ([chain(CC, C, B)], [row(CA, [A, B], B)], [chain(CC, C, B)], []),
    # folding would make a cycle (chain-a lands after a unit that lands after chain-b): left as planned
    ([chain(CA, E, deps=[BD]), chain(CB, B, deps=[]), bundle(BD, D, deps=[CB])],
     [row(CA, [A, B], B)],
     [chain(CA, E, deps=[BD]), chain(CB, B, deps=[]), bundle(BD, D, deps=[CB])], []),
    # chain-a stopped at a conflict in b (b is in flight: its conflict commit is the tip); c was planned
    # after it, and the plan made c a chain stacked on the branch: c goes back into chain-a
    ([chain(CC, C, D, deps=[CA])],
     [row(CA, [A, B, C], B, step="")],
     [Unit(id=CA, kind="chain", items=(PlanItem(C, "why c"), PlanItem(D, "why d")),
           reason=f"continues forksync/{CA}: stopped at a conflict in upstream {B[:12]}; "
                  "picked after its resolution, on its branch")],
     [f"{CC} kept in {CA}: {CA} stopped at a conflict in upstream {B[:12]}"]),
    # a plan that kept c wrote only c (the stop is not pending): c is still owed on the next plan
    ([chain(CC, C, deps=[CA])], [row(CA, [C], B, step="")],
     [Unit(id=CA, kind="chain", items=(PlanItem(C, "why c"),),
           reason=f"continues forksync/{CA}: stopped at a conflict in upstream {B[:12]}; "
                  "picked after its resolution, on its branch")],
     [f"{CC} kept in {CA}: {CA} stopped at a conflict in upstream {B[:12]}"]),
    # the plan extended the stopped chain itself: nothing to fold
    ([chain(CA, C)], [row(CA, [A, B, C], B, step="")], [chain(CA, C)], []),
    # nothing owed after the conflict (it was the chain's last commit), and a bundle stopped at a
    # conflict: its later commits are left as planned (bundles land in any order)
    ([chain(CC, C, deps=[CA])], [row(CA, [A, B], B, step="")], [chain(CC, C, deps=[CA])], []),
    ([chain(CC, C)], [row("bundle-" + A[:12], [A, B, C], B, step="", kind="bundle")], [chain(CC, C)], []),
])
def test_keep_owed(units, rows, expected, said):
    plan = Plan(units=tuple(units), notes=("n",), base="f")
    out, notes = keep_owed(plan, rows, RANK)
    assert list(out.units) == expected
    assert (out.notes, out.base) == (("n",), "f")
    assert notes == said
