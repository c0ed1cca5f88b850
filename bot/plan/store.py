"""The planner's caches in the store: pick predictions and file symbols, both rebuildable from git.

* ``plan_answers``: one row per prediction key (:meth:`bot.plan.predict.MergePredictor.key`) —
  the outcome of the cherry-pick's 3-way merge, its conflicting paths, and either the merge
  result at the paths the pick changes (``merged``, for keys made of those paths' entries; ``made``:
  the blobs the merge wrote, which only the scratch repository holds; ``ours_tree``/``result_tree``:
  the last tree it was computed on and its result, reused as is on that same tree) or the result
  tree (``result_tree``, for keys made of the whole running tree; trees are in the scratch
  repository, :func:`bot.plan.predict.scratch_repo`). The older ``plan_predictions`` (keyed by
  the whole running tree only) is dropped by the store's first migration;
* ``plan_pick_paths``: one row per upstream commit — the old and new paths of its diff against
  its first parent, those it adds and whether it deletes any (immutable: what a path-keyed
  prediction is keyed by);
* ``plan_prechecks``: the files where no divergent-area symbol pattern can match (no parse needed);
* ``plan_symbols``: one row per ``<commit>:<path>`` and :data:`SYMBOLS_VERSION` — the names of the
  definitions a commit's hunks touch in that file (JSON list; NULL when the file has no symbols).

Rows are immutable for their key, so both caches are written in batches (one transaction each).
"""
from __future__ import annotations

from bot.store import Store, table

#: bump when the symbol extraction changes meaning (old rows are then ignored)
SYMBOLS_VERSION = 8      # 2: Python and MLIR by top-level parts (symbols.top_level_parts); 3: C++ too;
#  4: changed lines from git's default diff (the indent heuristic on: symbols.diff_hunks)
#  5: C++ changes in a definition the parse recovered from errors are unknown (symbols._recovered_around)
#  6: ... found from the changed rows' text, so an error elsewhere in the file no longer counts
#  7: C++ functions a macro defines are named with its arguments (``TEST_F(Suite, Name)``)
#  8: symbols read without a blob the repository lacked are never stored (SymbolIndex.missing_reads):
#     rows of 7 may hold such unknowns, made in a partial clone

ANSWERS = table("plan_answers", {
    "key": str, "commit": str, "outcome": str, "conflicts": str, "merged": str, "made": str, "ours_tree": str,
    "result_tree": str, "detail": str,
}, pk="key", indexes=[("commit",)])

PICK_PATHS = table("plan_pick_paths", {"commit": str, "paths": str, "added": str, "deleted": int}, pk="commit")

SYMBOLS_TABLE = table("plan_symbols", {"key": str, "version": int, "symbols": str}, pk="key")

#: ``<patterns digest>:<commit>:<path>`` where the textual pre-check proved that no divergent-area
#: symbol pattern can match a symbol the commit touches in that file (``SymbolIndex.may_match``)
PRECHECKS = table("plan_prechecks", {"key": str}, pk="key")


def has_answers(store: Store) -> bool:
    """Whether any prediction is cached (a cold cache is only written, never read)."""
    return any(store.db.query("select 1 from plan_answers limit 1"))


def _chunks(keys: list[str], n: int = 500):
    for i in range(0, len(keys), n):
        yield keys[i:i + n]


def _rows_of_commits(store: Store, table_name: str, commits: list[str], key: str) -> dict[str, dict]:
    """``{row[key]: row}`` of the rows of ``table_name`` whose ``commit`` is one of ``commits``
    (queried 500 commits at a time: SQLite's bound-parameter limit)."""
    out: dict[str, dict] = {}
    for chunk in _chunks(commits):
        q = ",".join("?" * len(chunk))
        for r in store.db.query(f"select * from {table_name} where \"commit\" in ({q})", chunk):
            out[r[key]] = r
    return out


def answers_of(store: Store, commits: list[str]) -> dict[str, dict]:
    """``{key: row}`` of every cached prediction of ``commits``."""
    return _rows_of_commits(store, ANSWERS.name, commits, "key")


def _present(store: Store, table_name: str, column: str, values: list[str]) -> set[str]:
    """The ones of ``values`` found in ``column`` of ``table_name`` (500 at a time)."""
    out: set[str] = set()
    for chunk in _chunks(values):
        q = ",".join("?" * len(chunk))
        out.update(r[column] for r in store.db.query(f"select distinct \"{column}\" from {table_name} where \"{column}\" in ({q})", chunk))
    return out


def answered_commits(store: Store, commits: list[str]) -> set[str]:
    """The commits of ``commits`` with at least one cached prediction (on any running tree)."""
    return _present(store, ANSWERS.name, "commit", commits)


def answer_row(store: Store, key: str) -> dict | None:
    rows = list(store.db.query("select * from plan_answers where key = ?", [key]))
    return rows[0] if rows else None


def save_answers(store: Store, rows: list[dict]) -> None:
    with store.lock:
        store.db[ANSWERS.name].insert_all(rows, pk="key", replace=True, batch_size=500)


def pick_paths_of(store: Store, commits: list[str]) -> dict[str, dict]:
    """``{commit: {paths, added (JSON lists), deleted (0/1)}}`` for the cached ones of ``commits``."""
    return _rows_of_commits(store, PICK_PATHS.name, commits, "commit")


def save_pick_paths(store: Store, rows: list[dict]) -> None:
    with store.lock:
        store.db[PICK_PATHS.name].insert_all(rows, pk="commit", replace=True, batch_size=500)


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


def prechecks_of(store: Store, keys: list[str]) -> set[str]:
    """The ones of ``keys`` recorded in ``plan_prechecks``."""
    return _present(store, PRECHECKS.name, "key", keys)


def save_prechecks(store: Store, keys: list[str]) -> None:
    with store.lock:
        store.db[PRECHECKS.name].insert_all([{"key": k} for k in keys], pk="key", replace=True, batch_size=500)
