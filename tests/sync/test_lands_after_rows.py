"""What a sync unit lands after, read from its ``sync_branches`` row (real SQLite store): the
``depends_json`` the sync last published, and for a row written before that column a safe
default — every older in-flight unit — so the gate (``lands-after``) never lets a chain land
before a bundle its picks were predicted on only because nothing was recorded."""
from __future__ import annotations

import json

import pytest

from bot.store import Store
from bot.sync import store as sync_store
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
