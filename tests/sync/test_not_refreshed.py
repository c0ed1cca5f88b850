"""Which open units' rows the last sync did not refresh (:func:`bot.sync.status.not_refreshed`): a
table of rows and statuses with the exact mark, its words, and a store of an earlier release whose
rows and status have no publish or sync times."""
from __future__ import annotations

import sqlite3

import pytest

from bot.store import Store
from bot.sync import store as sync_store
from bot.sync.status import SyncStatus, not_refreshed, not_refreshed_text

SYNC = 1_800_007_200.0          # 2027-01-15 10:00 UTC
EARLIER = 1_800_000_000.0       # 2027-01-15 08:00 UTC
HELD = {"ref": "main", "from": "a" * 40, "to": "b" * 40, "commits": [], "at": EARLIER,
        "units": [{"id": "chain-9", "branch": "forksync/chain-9", "pr": 9, "shas": ["c" * 40]}]}


def _row(unit: str = "bundle-1", *, pr: int = 2, state: str = "open", published_at=EARLIER) -> dict:
    return {"unit_id": unit, "branch": f"forksync/{unit}", "pr": pr, "state": state, "published_at": published_at}


@pytest.mark.parametrize("row, st, mark", [
    # published by that sync (its start or later): current
    (_row(published_at=SYNC), SyncStatus(repo="f", synced_at=SYNC), None),
    (_row(published_at=SYNC + 5), SyncStatus(repo="f", synced_at=SYNC, synced_on_hold=True), None),
    # no sync recorded its start yet (a store of an earlier release): nothing is said
    (_row(), SyncStatus(repo="f"), None),
    (_row(), None, None),
    # no PR: nothing of it was shown as published; an ended unit is no open row
    (_row(pr=0, state="blocked"), SyncStatus(repo="f", synced_at=SYNC), None),
    (_row(state="merged"), SyncStatus(repo="f", synced_at=SYNC), None),
    # not refreshed: on hold, held by a rewind, or its publish skipped or refused
    (_row(), SyncStatus(repo="f", synced_at=SYNC, synced_on_hold=True),
     {"since": EARLIER, "synced_at": SYNC, "why": "hold"}),
    (_row("chain-9", pr=9), SyncStatus(repo="f", synced_at=SYNC, rewound=HELD),
     {"since": EARLIER, "synced_at": SYNC, "why": "rewind"}),
    (_row("chain-9", pr=9), SyncStatus(repo="f", synced_at=SYNC, synced_on_hold=True, rewound=HELD),
     {"since": EARLIER, "synced_at": SYNC, "why": "hold"}),
    (_row(), SyncStatus(repo="f", synced_at=SYNC, rewound=HELD), {"since": EARLIER, "synced_at": SYNC, "why": ""}),
    # published before forksync recorded the time: since unknown
    (_row(published_at=None), SyncStatus(repo="f", synced_at=SYNC), {"since": 0.0, "synced_at": SYNC, "why": ""}),
])
def test_not_refreshed(row, st, mark):
    assert not_refreshed(row, st) == mark


def test_its_words_say_why_since_when_and_upstream_as_of():
    assert not_refreshed_text({"since": EARLIER, "synced_at": SYNC, "why": "hold"}) == (
        "stale: not refreshed by the last sync, the sync of 2027-01-15 10:00 UTC (the fork was on hold); "
        "as last published 2027-01-15 08:00 UTC (upstream as of then)")
    assert not_refreshed_text({"since": EARLIER, "synced_at": SYNC, "why": "rewind"}) == (
        "stale: not refreshed by the last sync, the sync of 2027-01-15 10:00 UTC (held: upstream's branch moved "
        "back past its commits); as last published 2027-01-15 08:00 UTC (upstream as of then)")
    assert not_refreshed_text({"since": 0.0, "synced_at": SYNC, "why": ""}) == (
        "stale: not refreshed by the last sync, the sync of 2027-01-15 10:00 UTC; as last published at a time "
        "not recorded (an earlier release), upstream as of an unknown time")


def test_a_store_of_an_earlier_release_gets_the_columns_and_says_nothing_until_a_sync(tmp_path):
    path = tmp_path / "s.db"
    store = Store(path)
    sync_store.save_status(store, SyncStatus(repo="meta/fork", backlog=4))
    sync_store.save_branch(store, repo="meta/fork", branch="forksync/bundle-1", unit_id="bundle-1", kind="bundle",
                           pr=2, state="open")
    store.close()
    db = sqlite3.connect(path)          # as an earlier release left it: neither column
    db.execute("ALTER TABLE sync_status DROP COLUMN synced_at")
    db.execute("ALTER TABLE sync_status DROP COLUMN synced_on_hold")
    db.execute("ALTER TABLE sync_branches DROP COLUMN published_at")
    db.commit()
    db.close()
    store = Store(path)
    st = sync_store.load_status(store, "meta/fork")
    row = sync_store.branch_row(store, "meta/fork", "forksync/bundle-1")
    assert (st.backlog, st.synced_at, st.synced_on_hold, row["published_at"]) == (4, 0.0, False, None)
    assert not_refreshed(row, st) is None
    sync_store.save_status(store, SyncStatus(repo="meta/fork", synced_at=SYNC, synced_on_hold=True))
    st = sync_store.load_status(store, "meta/fork")
    assert (st.synced_at, st.synced_on_hold) == (SYNC, True)
    assert not_refreshed(row, st) == {"since": 0.0, "synced_at": SYNC, "why": "hold"}
    store.close()
