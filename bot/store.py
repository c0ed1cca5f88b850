"""The SQLite store (sqlite-utils): forksync's one database layer.

It is a cache and a history, never the source of truth for dispositions (git is: trailers and
``refs/notes/forksync``), except for what only exists here: the webhook delivery queue, runner
results and triage bookkeeping. Each concern declares its tables with :func:`table` at import
time; :meth:`Store.migrate` creates missing tables and columns idempotently.

Durability: WAL journal, ``synchronous=FULL`` (an acknowledged webhook survives power loss),
``busy_timeout`` 5 s so the web process and the worker can share the file.
"""
from __future__ import annotations

import sqlite3
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils


@dataclass(frozen=True)
class TableSpec:
    name: str
    columns: dict[str, Any]
    pk: str | tuple[str, ...]
    indexes: tuple[tuple[str, ...], ...] = ()
    unique_indexes: tuple[tuple[str, ...], ...] = ()


_TABLES: dict[str, TableSpec] = {}
_OPEN_STORES: "weakref.WeakSet[Store]" = weakref.WeakSet()


def table(name: str, columns: dict[str, Any], pk, indexes=(), unique_indexes=()) -> TableSpec:
    """Declare a table (call at module import). Re-declaring the same name must match."""
    spec = TableSpec(name, dict(columns), pk, tuple(map(tuple, indexes)), tuple(map(tuple, unique_indexes)))
    old = _TABLES.get(name)
    if old is not None and old != spec:
        raise RuntimeError(f"table {name!r} declared twice with different shapes")
    _TABLES[name] = spec
    if old is None:
        for store in list(_OPEN_STORES):   # a module imported after a Store opened: create it there too
            store.migrate()
    return spec


class Store:
    """A connection to the forksync database. Thread-safe for simple use via one lock per Store;
    use one Store per process/thread for concurrency (SQLite serialises writers)."""

    def __init__(self, path: str | Path = ":memory:"):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=5.0, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA busy_timeout=5000")
        if self.path != ":memory:":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        self.conn = conn
        self.db = sqlite_utils.Database(conn)
        self.lock = threading.RLock()
        self.migrate()
        _OPEN_STORES.add(self)

    def migrate(self) -> None:
        with self.lock:
            self._migrate()

    def ensure(self, *specs: TableSpec) -> None:
        """Migrate when any of ``specs`` is missing (the store was opened before they were declared)."""
        with self.lock:
            if any(not self.db[t.name].exists() for t in specs):
                self._migrate()

    def _migrate(self) -> None:
        for spec in list(_TABLES.values()):
            t = self.db[spec.name]
            if not t.exists():
                t.create(spec.columns, pk=spec.pk)
            else:
                have = set(t.columns_dict)
                for col, typ in spec.columns.items():
                    if col not in have:
                        t.add_column(col, typ)
            existing = {tuple(i.columns) for i in t.indexes}
            for cols in spec.indexes:
                if cols not in existing:
                    t.create_index(list(cols), if_not_exists=True)
            for cols in spec.unique_indexes:
                if cols not in existing:
                    t.create_index(list(cols), unique=True, if_not_exists=True)

    def close(self) -> None:
        _OPEN_STORES.discard(self)
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
