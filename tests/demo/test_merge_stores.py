"""The demo leaves one store the dashboard opens: the GitHub part's and the nightly's merged."""
from __future__ import annotations

from bot.demo.main import merge_stores
from bot.store import Store
from bot.sync import store as sync_store
from bot.triage import store as triage_store
from tests.support.dashboard_world import FORK, fill


def test_merge_stores_copies_every_row_of_each_part(tmp_path):
    with Store(tmp_path / "github.db") as a:
        fill(a, shared=False)
    with Store(tmp_path / "nightly.db") as b:
        triage_store.save_followup(b, {"key": "demo/triton:c1", "repo": "demo/triton", "cause": "c1", "issue": 3,
                                       "bisected": 0, "culprit": "", "fix": ""})
    out = merge_stores(tmp_path / "forksync.db", [tmp_path / "github.db", tmp_path / "nightly.db", tmp_path / "missing.db"])
    with Store(out) as s:
        assert sync_store.query_ledger(s, FORK)[0] == 40 and len(sync_store.snapshots(s, FORK)) == 6
        assert sync_store.load_status(s, FORK).backlog == 42
        assert [f["repo"] for f in triage_store.followups(s)] == ["demo/triton"]
