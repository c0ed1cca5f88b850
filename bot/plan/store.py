"""The planner's caches in the store: pick predictions and file symbols, both rebuildable from git.

* ``plan_predictions``: one row per ``<ours tree>:<upstream commit>:<merge flags>`` — the outcome
  of the cherry-pick's 3-way merge, its conflicting paths and result tree (the tree itself is in
  the scratch repository, :func:`bot.plan.predict.scratch_repo`);
* ``plan_symbols``: one row per ``<commit>:<path>`` and :data:`SYMBOLS_VERSION` — the names of the
  definitions a commit's hunks touch in that file (JSON list; NULL when the file has no symbols).

Rows are immutable for their key, so both caches are written in batches (one transaction each).
"""
from __future__ import annotations

from bot.store import Store, table

#: bump when the symbol extraction changes meaning (old rows are then ignored)
SYMBOLS_VERSION = 1

PREDICTIONS = table("plan_predictions", {
    "key": str, "ours_tree": str, "commit": str, "flags": int,
    "outcome": str, "conflicts": str, "result_tree": str, "detail": str,
}, pk="key")

SYMBOLS_TABLE = table("plan_symbols", {"key": str, "version": int, "symbols": str}, pk="key")


def has_predictions(store: Store) -> bool:
    """Whether any prediction is cached (a cold cache is only written, never read)."""
    return any(store.db.query("select 1 from plan_predictions limit 1"))


def prediction_row(store: Store, key: str) -> dict | None:
    rows = list(store.db.query("select * from plan_predictions where key = ?", [key]))
    return rows[0] if rows else None


def save_predictions(store: Store, rows: list[dict]) -> None:
    with store.lock:
        store.db[PREDICTIONS.name].insert_all(rows, pk="key", replace=True, batch_size=500)


def has_symbols(store: Store) -> bool:
    """Whether any symbols of the current :data:`SYMBOLS_VERSION` are cached."""
    return any(store.db.query("select 1 from plan_symbols where version = ? limit 1", [SYMBOLS_VERSION]))


def symbols_row(store: Store, key: str) -> dict | None:
    """The cached row of ``<commit>:<path>`` (``symbols``: JSON text or None), or None."""
    rows = list(store.db.query("select symbols from plan_symbols where key = ? and version = ?", [key, SYMBOLS_VERSION]))
    return rows[0] if rows else None


def symbols_rows(store: Store, keys: list[str]) -> dict[str, str | None]:
    """``{key: symbols JSON or None}`` for the cached ones of ``keys`` (queried 500 at a time)."""
    found: dict[str, str | None] = {}
    for i in range(0, len(keys), 500):
        chunk = keys[i:i + 500]
        q = ",".join("?" * len(chunk))
        for r in store.db.query(f"select key, symbols from plan_symbols where version = ? and key in ({q})",
                                [SYMBOLS_VERSION, *chunk]):
            found[r["key"]] = r["symbols"]
    return found


def save_symbols(store: Store, rows: list[dict]) -> None:
    with store.lock:
        store.db[SYMBOLS_TABLE.name].insert_all(rows, pk="key", replace=True, batch_size=500)
