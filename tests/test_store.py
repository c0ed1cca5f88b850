"""The SQLite store: tables declared by each concern, created idempotently."""
from __future__ import annotations


def test_a_table_declared_after_a_store_opened_is_created_there(tmp_path):
    from bot.store import Store, table
    with Store(tmp_path / "f.db") as store:
        table("late_declared_for_test", {"id": int, "what": str}, pk="id")
        store.db["late_declared_for_test"].insert({"id": 1, "what": "x"})
        assert store.db["late_declared_for_test"].columns_dict == {"id": int, "what": str}
