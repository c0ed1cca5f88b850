"""What a sync unit lands after, read from its ``sync_branches`` row (real SQLite store): the
``depends_json`` the sync last published, and for a row written before that column a safe
default — every older in-flight unit — so the gate (``lands-after``) never lets a chain land
before a bundle its picks were predicted on only because nothing was recorded."""
from __future__ import annotations

import json

import pytest

from bot.model import PlanItem, Unit
from bot.store import Store
from bot.sync import store as sync_store
from bot.sync.service import _kept_after
from bot.validation import gate_inputs

FORK = "meta/triton"


def save(store, unit: str, pr: int, *, state: str = "open", depends: list[str] | None = None, kind: str = "") -> None:
    """A row as the sync writes it; ``depends=None``: written before ``depends_json`` existed."""
    extra = {} if depends is None else {"depends_json": json.dumps(depends)}
    sync_store.save_branch(store, repo=FORK, branch=f"forksync/{unit}", unit_id=unit,
                           kind=kind or unit.partition("-")[0], pushed_tip="", verified_tip="", pr=pr, state=state,
                           shas_json="[]", base_sha="", base="main", conflict_sha="", **extra)


def pr_of(unit: str, number: int) -> dict:
    return {"number": number, "head": {"ref": f"forksync/{unit}"}, "base": {"ref": "main"}}


@pytest.fixture
def store(tmp_path):
    return Store(tmp_path / "s.db")


def test_a_row_without_recorded_dependencies_lands_after_every_older_unit_in_flight(store):
    save(store, "bundle-a", 2, depends=[])
    save(store, "bundle-gone", 3, state="merged", depends=[])
    save(store, "chain-b", 5, depends=["bundle-a"])
    save(store, "backout-x", 6, state="backout", kind="backout")
    save(store, "chain-old", 7)                      # written before depends_json
    save(store, "bundle-new", 9, depends=[])
    assert gate_inputs.lands_after(store, FORK, pr_of("chain-old", 7)) == (("bundle-a", 2), ("chain-b", 5))
    assert gate_inputs.lands_after(store, FORK, pr_of("bundle-new", 9)) == ()
    # the oldest unit in flight never waits: the PR order admits no cycle
    save(store, "bundle-a", 2)
    assert gate_inputs.lands_after(store, FORK, pr_of("bundle-a", 2)) == ()
    # the older units landed: nothing left to wait for
    save(store, "bundle-a", 2, state="merged")
    save(store, "chain-b", 5, state="merged", depends=["bundle-a"])
    assert gate_inputs.lands_after(store, FORK, pr_of("chain-old", 7)) == ()


def test_recorded_dependencies_are_taken_as_recorded(store):
    save(store, "bundle-a", 2, depends=[])
    save(store, "bundle-c", 4, depends=[])
    save(store, "chain-b", 5, depends=["bundle-c"])
    assert gate_inputs.lands_after(store, FORK, pr_of("chain-b", 5)) == (("bundle-c", 4),)
    save(store, "chain-d", 8, depends=[])
    assert gate_inputs.lands_after(store, FORK, pr_of("chain-d", 8)) == ()


def test_a_landing_names_the_prs_that_waited_for_it_recorded_or_not(store):
    save(store, "bundle-a", 2, depends=[])
    save(store, "chain-b", 5, depends=["bundle-a"])
    save(store, "chain-old", 7)
    save(store, "chain-other", 8, depends=[])
    assert [r["unit_id"] for r in sync_store.lands_after_it(store, FORK, "forksync/bundle-a")] == ["chain-b", "chain-old"]
    assert sync_store.lands_after_it(store, FORK, "forksync/nothing-here") == []


# ----------------------------------------------------------- a unit it lands after closed unmerged
def _unit(uid: str, *shas: str) -> Unit:
    return Unit(id=uid, kind=uid.partition("-")[0], items=tuple(PlanItem(s, "in flight") for s in shas))


def _row(uid: str, depends: list[str], **kw) -> dict:
    return {"unit_id": uid, "state": "open", "pr": 5, "depends_json": json.dumps(depends), "pushed_tip": "t1",
            "verified_tip": "", **kw}


CLOSED = {"unit_id": "bundle-a", "state": "closed", "pr": 2, "shas_json": json.dumps(["a1", "a2"])}


def test_a_branch_of_forksyncs_own_picks_waits_no_more_for_a_unit_closed_for_good():
    """Built on the fork tip, its picks are the fork as it is (docs/plan.md "Landing after earlier bundles")."""
    [chain] = _kept_after([_unit("chain-c", "c1")], [_row("chain-c", ["bundle-a"])], {"chain-c"}, ended=[CLOSED],
                          tips={"chain-c": "t1"})
    assert chain.depends_on == ()


@pytest.mark.parametrize("row, tip", [
    (_row("chain-c", ["bundle-a"], verified_tip="r1"), "t1"),     # a person's resolution, folded
    (_row("chain-c", ["bundle-a"]), "p1"),                         # a tip forksync did not push
])
def test_a_branch_holding_a_persons_work_keeps_waiting_on_the_closed_unit(row, tip):
    [chain] = _kept_after([_unit("chain-c", "c1")], [row], {"chain-c"}, ended=[CLOSED], tips={"chain-c": tip})
    assert chain.depends_on == ("bundle-a",)
    # every commit of the closed unit picked by hand since: it landed, nothing to wait for
    [chain] = _kept_after([_unit("chain-c", "c1")], [row], {"chain-c"}, ended=[CLOSED], tips={"chain-c": tip},
                          picked={"a1", "a2"})
    assert chain.depends_on == ()


def test_the_closed_units_commits_planned_again_under_another_unit_are_waited_for_there():
    units = [_unit("bundle-z", "z0", "a2"), _unit("chain-c", "c1")]
    out = _kept_after(units, [_row("chain-c", ["bundle-a"])], {"chain-c"}, ended=[CLOSED], tips={"chain-c": "t1"})
    assert [u.depends_on for u in out] == [(), ("bundle-z",)]


def test_the_gate_holds_a_resolution_made_on_a_unit_closed_unmerged_and_names_its_commits(store):
    sync_store.save_branch(store, repo=FORK, branch="forksync/bundle-a", unit_id="bundle-a", kind="bundle",
                           pushed_tip="", verified_tip="", pr=2, state="closed", shas_json=json.dumps(["a1", "a2"]),
                           base_sha="", base="main", conflict_sha="", depends_json="[]")
    sync_store.save_branch(store, repo=FORK, branch="forksync/chain-c", unit_id="chain-c", kind="chain",
                           pushed_tip="t1", verified_tip="r1", pr=5, state="open", shas_json="[]", base_sha="",
                           base="main", conflict_sha="", depends_json=json.dumps(["bundle-a"]))
    pr = {**pr_of("chain-c", 5), "head": {"ref": "forksync/chain-c", "sha": "t1"}}
    assert gate_inputs.lands_after(store, FORK, pr) == ()
    assert gate_inputs.lands_after_closed(store, FORK, pr) == (("bundle-a", 2, "closed", ("a1", "a2")),)
    # planned again under its id (reconsidered): in flight, waited for as any
    sync_store.save_branch(store, **{**sync_store.branch_row(store, FORK, "forksync/bundle-a"), "state": "open", "pr": 8})
    assert gate_inputs.lands_after_closed(store, FORK, pr) == ()
    assert gate_inputs.lands_after(store, FORK, pr) == (("bundle-a", 8),)


def test_the_reconcile_tick_decides_again_a_gate_held_for_a_closed_unit_once_its_commits_are_planned_again(store):
    from bot.app.schedules import _landed_since
    sync_store.save_branch(store, repo=FORK, branch="forksync/bundle-a", unit_id="bundle-a", kind="bundle",
                           pushed_tip="", verified_tip="", pr=2, state="closed", shas_json=json.dumps(["a1"]),
                           base_sha="", base="main", conflict_sha="", depends_json="[]")
    sync_store.save_branch(store, repo=FORK, branch="forksync/chain-c", unit_id="chain-c", kind="chain",
                           pushed_tip="t1", verified_tip="r1", pr=5, state="open", shas_json="[]", base_sha="",
                           base="main", conflict_sha="", depends_json=json.dumps(["bundle-a"]))
    pr = {**pr_of("chain-c", 5), "head": {"ref": "forksync/chain-c", "sha": "t1"}}
    # what the gate run carries (its external_id's holds; the tick never reads the summary's words)
    held = {"conclusion": "failure", "external_id": "gate:0123456789ab;lands-after-closed",
            "output": {"summary": "| ❌ | `lands-after` | — | lands after #2 (`bundle-a`), "
                                  "closed unmerged, whose commits are not planned again |"}}
    assert _landed_since(store, FORK, pr, held) is False            # still closed: held until a person acts
    sync_store.save_branch(store, **{**sync_store.branch_row(store, FORK, "forksync/bundle-a"), "state": "open", "pr": 8})
    assert _landed_since(store, FORK, pr, held) is True             # reconsidered: its gate names the new PR
    waiting = {"conclusion": "failure", "external_id": "gate:0123456789ab;lands-after",
               "output": {"summary": "| ❌ | `lands-after` | — | lands after #8 (`bundle-a`), still open |"}}
    assert _landed_since(store, FORK, pr, waiting) is False


# ----------------------------------------------------------- the status issue's waits, per unit
def test_each_unit_waits_for_what_the_gate_holds_it_for_and_counts_those_waiting_for_it(store):
    """The status issue's unit lines (bot.sync.store.waits) say what the gate says per PR, read
    from the same rows: recorded and unrecorded dependencies, a blocked unit without a PR, a unit
    that landed (no longer waited for), and one closed unmerged that a folded resolution was made on."""
    save(store, "bundle-a", 2, depends=[])
    save(store, "bundle-gone", 3, state="merged", depends=[])
    save(store, "chain-b", 5, depends=["bundle-a", "bundle-gone"])
    save(store, "bundle-z", 0, state="blocked", depends=[])          # refused before it had a PR
    save(store, "chain-y", 0, state="blocked", depends=["bundle-z"])
    save(store, "chain-old", 7)                                      # written before depends_json
    sync_store.save_branch(store, repo=FORK, branch="forksync/bundle-c", unit_id="bundle-c", kind="bundle",
                           pushed_tip="", verified_tip="", pr=4, state="closed", shas_json=json.dumps(["c1", "c2"]),
                           base_sha="", base="main", conflict_sha="", depends_json="[]")
    sync_store.save_branch(store, repo=FORK, branch="forksync/chain-r", unit_id="chain-r", kind="chain",
                           pushed_tip="t1", verified_tip="r1", pr=9, state="open", shas_json="[]", base_sha="",
                           base="main", conflict_sha="", depends_json=json.dumps(["bundle-c", "bundle-a"]))
    got = sync_store.waits(store, FORK)
    assert {u: [(d["id"], d["pr"], d["state"]) for d in w["waits_for"]] for u, w in got.items()} == {
        "bundle-a": [], "bundle-z": [],
        "chain-b": [("bundle-a", 2, "open")],
        "chain-y": [("bundle-z", 0, "open")],
        "chain-old": [("bundle-a", 2, "open"), ("chain-b", 5, "open")],
        "chain-r": [("bundle-c", 4, "closed"), ("bundle-a", 2, "open")]}
    assert got["chain-r"]["waits_for"][0]["shas"] == ["c1", "c2"]
    assert {u: w["waited_by"] for u, w in got.items()} == {
        "bundle-a": 3, "chain-b": 1, "bundle-z": 1, "chain-y": 0, "chain-old": 0, "chain-r": 0}
    # the gate's word on each PR is the status issue's, in flight and closed unmerged alike
    for uid, number in (("chain-b", 5), ("chain-old", 7), ("chain-r", 9)):
        pr = {**pr_of(uid, number), "head": {"ref": f"forksync/{uid}", "sha": "t1"}}
        assert [(d["id"], d["pr"]) for d in got[uid]["waits_for"] if d["state"] == "open"] \
            == list(gate_inputs.lands_after(store, FORK, pr))
        assert [(d["id"], d["pr"], d["state"], tuple(d["shas"])) for d in got[uid]["waits_for"] if d["state"] != "open"] \
            == list(gate_inputs.lands_after_closed(store, FORK, pr))
    # bundle-a lands: nothing waits for it, and chain-old waits for chain-b alone
    save(store, "bundle-a", 2, state="merged", depends=[])
    got = sync_store.waits(store, FORK)
    assert [d["id"] for d in got["chain-old"]["waits_for"]] == ["chain-b"] and "bundle-a" not in got
    assert got["chain-b"] == {"waits_for": [], "waited_by": 1}


def test_the_status_issue_names_a_closed_unit_the_sync_kept_for_a_persons_commits_as_the_gate_does(store):
    """No ``verified_tip``: only GitHub's head (not the tip forksync pushed) shows the person's
    commits, and the status issue never reads it; the row the sync wrote with that tip
    (``depends_json`` keeps the closed units only for a person's work) says it for both."""
    for uid, pr in (("bundle-c", 4), ("bundle-a", 2)):
        sync_store.save_branch(store, repo=FORK, branch=f"forksync/{uid}", unit_id=uid, kind="bundle",
                               pushed_tip="", verified_tip="", pr=pr, state="closed", shas_json=json.dumps([uid[-1] + "1"]),
                               base_sha="", base="main", conflict_sha="", depends_json="[]")
    sync_store.save_branch(store, repo=FORK, branch="forksync/chain-p", unit_id="chain-p", kind="chain",
                           pushed_tip="t1", verified_tip="", pr=9, state="open", shas_json="[]", base_sha="",
                           base="main", conflict_sha="", depends_json=json.dumps(["bundle-c", "bundle-a"]))
    got = sync_store.waits(store, FORK)["chain-p"]["waits_for"]
    pr = {**pr_of("chain-p", 9), "head": {"ref": "forksync/chain-p", "sha": "p1"}}     # her commit on top
    assert [(d["id"], d["pr"], d["state"], tuple(d["shas"])) for d in got] \
        == list(gate_inputs.lands_after_closed(store, FORK, pr)) \
        == [("bundle-a", 2, "closed", ("a1",)), ("bundle-c", 4, "closed", ("c1",))]


def row(unit: str, depends: list[str], state: str = "open") -> dict:
    return {"unit_id": unit, "branch": f"forksync/{unit}", "state": state, "depends_json": json.dumps(depends)}


@pytest.mark.parametrize(("depends", "worked", "picked", "now"), [
    # forksync's own picks: the closed unit goes, the live one stays, in order
    (["bundle-a", "bundle-x", "bundle-b"], set(), set(), ["bundle-a", "bundle-b"]),
    # a person's work on the branch: kept, while not every commit of it is picked
    (["bundle-a", "bundle-x"], {"chain-c"}, set(), None),
    (["bundle-a", "bundle-x"], {"chain-c"}, {"x1"}, None),
    # every commit of it picked (by hand: landed): it goes even under a person's work
    (["bundle-x"], {"chain-c"}, {"x1", "x2"}, []),
    # naming no unit just closed: nothing to write
    (["bundle-a"], set(), set(), None),
    ([], set(), set(), None),
])
def test_without_closed_drops_a_unit_the_sync_closed_unless_a_persons_work_waits_for_it(depends, worked, picked, now):
    got = sync_store.without_closed([row("chain-c", depends)], {"bundle-x": ["x1", "x2"]}, worked, picked)
    assert got == ([] if now is None else [{**row("chain-c", depends), "depends_json": json.dumps(now)}])


def test_without_closed_reads_each_row_on_its_own():
    rows = [row("chain-c", ["bundle-x"]), row("chain-d", ["bundle-x", "bundle-y"], state="blocked"), row("chain-e", ["bundle-x"])]
    got = sync_store.without_closed(rows, {"bundle-x": ["x1"], "bundle-y": ["y1"]}, {"chain-e"})
    assert [(r["unit_id"], json.loads(r["depends_json"])) for r in got] == [("chain-c", []), ("chain-d", [])]


def test_save_depends_writes_only_the_row_as_it_was_read(store):
    save(store, "chain-c", 5, depends=["bundle-x"])
    save(store, "chain-d", 6, state="merged", depends=["bundle-x"])
    assert not sync_store.save_depends(store, FORK, "forksync/chain-c", "[]", was='["bundle-y"]')
    assert not sync_store.save_depends(store, FORK, "forksync/chain-d", "[]", was='["bundle-x"]')
    assert sync_store.save_depends(store, FORK, "forksync/chain-c", "[]", was='["bundle-x"]')
    assert sync_store.branch_row(store, FORK, "forksync/chain-c")["depends_json"] == "[]"
    assert sync_store.branch_row(store, FORK, "forksync/chain-d")["depends_json"] == '["bundle-x"]'
