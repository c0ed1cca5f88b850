"""The SQLite store (sqlite-utils): forksync's one database layer.

It is a cache and a history, never the source of truth for dispositions (git is: trailers and
``refs/notes/forksync``), except for what only exists here: the webhook delivery queue, runner
results and triage bookkeeping. Each concern declares its tables with :func:`table` at import
time; :meth:`Store.migrate` creates missing tables, columns and indexes idempotently.

What a declaration cannot say (a rename, a drop, moved data) is a versioned step in
:data:`MIGRATIONS`, sqlite-utils' migration set: each step runs once per database, in order,
in a transaction with its record in the ``_sqlite_migrations`` table, before the declarations
are reconciled; ``PRAGMA user_version`` holds how many steps a database has had. A step must
leave a database that never had the old shape alone (a fresh database gets every table from the
declarations, and then its steps are recorded as applied); :func:`rename_column`,
:func:`drop_column` and :func:`rename_table` are such steps' tools. Add steps at the end, never
reorder or rename one (``tests/test_store.py`` upgrades a database of an earlier release).

Durability: WAL journal, ``synchronous=FULL`` (an acknowledged webhook survives power loss),
``busy_timeout`` 5 s so the web process and the worker can share the file.
"""
from __future__ import annotations

import json
import sqlite3
import threading
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import sqlite_utils
from sqlite_utils.migrations import Migrations


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


#: The versioned steps, oldest first (module docstring). A step is ``@MIGRATIONS(name="…")`` on a
#: function of the ``sqlite_utils.Database``.
MIGRATIONS = Migrations("forksync")


def rename_column(db: sqlite_utils.Database, table_name: str, old: str, new: str) -> None:
    """Rename ``table_name.old`` to ``new``, keeping its rows (sqlite-utils ``transform``); nothing
    when the table or the old column is not there."""
    t = db[table_name]
    if t.exists() and old in t.columns_dict and new not in t.columns_dict:
        t.transform(rename={old: new})


def drop_column(db: sqlite_utils.Database, table_name: str, column: str) -> None:
    """Drop ``table_name.column`` and the indexes that use it, keeping the other columns' rows;
    nothing when it is not there."""
    t = db[table_name]
    if t.exists() and column in t.columns_dict:
        for index in t.indexes:
            if column in index.columns:
                db.execute(f'DROP INDEX "{index.name}"')
        t.transform(drop={column})


def rename_table(db: sqlite_utils.Database, old: str, new: str) -> None:
    """Rename table ``old`` to ``new`` with its rows; nothing when ``old`` is not there or ``new`` is."""
    if db[old].exists() and not db[new].exists():
        db.rename_table(old, new)


@MIGRATIONS(name="0001_drop_plan_predictions")
def _drop_plan_predictions(db: sqlite_utils.Database) -> None:
    # predictions keyed by the whole running tree gave way to plan_answers (keyed by what the merge
    # reads); the old rows are a cache nobody reads any more
    if db["plan_predictions"].exists():
        db["plan_predictions"].drop()


#: Triage's tables and the key each had before its rows named their fork.
_TRIAGE_KEYS = {"triage_tracked": "key", "triage_runs": "run", "triage_green": "test", "triage_meta": "key"}


@MIGRATIONS(name="0002_triage_rows_name_their_fork")
def _triage_rows_name_their_fork(db: sqlite_utils.Database) -> None:
    # triage kept one lifecycle for the whole store, so a store serving two forks mixed their root
    # causes; each row now names its fork (``repo``, part of the key). Old rows go to the fork they
    # can be traced to: a root cause to the fork of its follow-up (bisection, proposed fix), and
    # everything to the store's only fork when it knows exactly one; the rest keep ``repo = ""``
    # (unassigned: shown as such, never dropped)
    old = [name for name, key in _TRIAGE_KEYS.items() if db[name].exists() and "repo" not in db[name].columns_dict]
    for name in old:
        db[name].add_column("repo", str, not_null_default="")
        db[name].transform(pk=("repo", _TRIAGE_KEYS[name]))
    if not old:
        return
    if "triage_tracked" in old and db["nightly_followups"].exists():
        db.execute("UPDATE triage_tracked SET repo = (SELECT MIN(f.repo) FROM nightly_followups f WHERE f.cause = triage_tracked.key) "
                   "WHERE repo = '' AND (SELECT COUNT(DISTINCT f.repo) FROM nightly_followups f "
                   "WHERE f.cause = triage_tracked.key AND f.repo != '') = 1")
    forks: set[str] = set()
    for name, column in (("nightly_followups", "repo"), ("sync_status", "repo"), ("tracked_forks", "fork")):
        if db[name].exists() and column in db[name].columns_dict:
            forks |= {r[0] for r in db.execute(f'SELECT DISTINCT "{column}" FROM "{name}" WHERE "{column}" != \'\'').fetchall()}
    if len(forks) == 1:
        (fork,) = forks
        for name in old:
            db.execute(f'UPDATE OR IGNORE "{name}" SET repo = ? WHERE repo = \'\'', [fork])


@MIGRATIONS(name="0003_triage_runs_know_when_they_ran")
def _triage_runs_know_when_they_ran(db: sqlite_utils.Database) -> None:
    # triage refuses a nightly that ran before the newest one it processed, which it knows by each
    # processed run's ``nightly_at``; runs processed before that was kept get it back from where a
    # nightly's time is still written: each root cause's failing nightlies (``fail_runs`` in its
    # JSON: run, time, commit) and each test's last green nightly. Untraceable runs keep NULL (they
    # set no bar)
    runs = db["triage_runs"]
    if not runs.exists():
        return
    if "nightly_at" not in runs.columns_dict:
        runs.add_column("nightly_at", int)
    missing = {(r[0], r[1]) for r in db.execute("SELECT repo, run FROM triage_runs WHERE nightly_at IS NULL").fetchall()}
    if not missing:
        return
    times: dict[tuple[str, str], int] = {}
    green = db["triage_green"]
    if green.exists() and {"repo", "run"} <= set(green.columns_dict):
        for repo, run, t in db.execute("SELECT repo, run, time FROM triage_green WHERE run != ''").fetchall():
            times[(repo, run)] = t
    tracked = db["triage_tracked"]
    if tracked.exists() and "repo" in tracked.columns_dict:
        for repo, data in db.execute("SELECT repo, data FROM triage_tracked").fetchall():
            try:
                fail_runs = json.loads(data).get("fail_runs") or ()
            except (ValueError, TypeError, AttributeError):
                continue
            for item in fail_runs:
                if isinstance(item, list) and len(item) >= 2 and isinstance(item[1], int):
                    times.setdefault((repo, str(item[0])), item[1])
    db.conn.executemany("UPDATE triage_runs SET nightly_at = ? WHERE repo = ? AND run = ? AND nightly_at IS NULL",
                        [(t, repo, run) for (repo, run), t in times.items() if (repo, run) in missing and t])


@MIGRATIONS(name="0004_l2_points_name_their_fork")
def _l2_points_name_their_fork(db: sqlite_utils.Database) -> None:
    # L2 points kept one series per benchmark for the whole store, so a store serving two forks
    # that name their benchmarks alike mixed their measurements into one series (and found
    # "regressions" between one fork's commit and the other's); each point now names its fork. An
    # old point goes to the fork whose L2 run measured its commit, when exactly one did; the rest
    # keep ``repo = ""`` (in no fork's series, never dropped)
    t = db["l2_points"]
    if not t.exists() or "repo" in t.columns_dict:
        return
    for index in t.indexes:     # the old key without the fork: two forks sharing a commit would collide
        if not index.name.startswith("sqlite_autoindex"):
            db.execute(f'DROP INDEX "{index.name}"')
    t.add_column("repo", str, not_null_default="")
    if db["l2_runs"].exists():
        db.execute("UPDATE l2_points SET repo = (SELECT MIN(r.repo) FROM l2_runs r WHERE r.sha = l2_points.sha) "
                   "WHERE (SELECT COUNT(DISTINCT r.repo) FROM l2_runs r WHERE r.sha = l2_points.sha) = 1")


@MIGRATIONS(name="0005_l2_regressions_have_a_status_code")
def _l2_regressions_have_a_status_code(db: sqlite_utils.Database) -> None:
    # the dashboard told a confirmed regression by the words of its status ("not confirmed: …"),
    # which are written for people; a row now carries a code beside them. An old row gets the code
    # of the text the L2 service wrote ("not confirmed: <why>", "bisected", "suspects"); any
    # other text gets "" (claimed neither confirmed nor not)
    t = db["l2_regressions"]
    if not t.exists() or "status_code" in t.columns_dict:
        return
    t.add_column("status_code", str, not_null_default="")
    db.execute("UPDATE l2_regressions SET status_code = CASE WHEN substr(status, 1, 13) = 'not confirmed' "
               "THEN 'not-confirmed' WHEN status IN ('bisected', 'suspects') THEN status ELSE '' END")


class UpgradeFailed(sqlite3.DatabaseError):
    """Bringing a database of an earlier release up to this one's tables failed; its ``__cause__``
    is SQLite's error (a full volume: the upgrade rebuilds tables, so it needs room for a copy of
    the largest). The upgrade is one transaction, rolled back: the database is still the earlier
    release's, whole."""


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
        if not self._outdated():
            return          # the usual case: read-only checks, no write lock taken
        earlier = bool(self.db.table_names())       # a database of an earlier release, not a new one
        # BEGIN IMMEDIATE: the web process and a worker opening the same file at once migrate one
        # after the other (inside a transaction already: a savepoint)
        try:
            with self.transaction():
                MIGRATIONS.apply(self.db)
                steps = len(MIGRATIONS.applied(self.db))
                if steps != self.schema_version():
                    self.conn.execute(f"PRAGMA user_version = {steps}")
                self._reconcile(apply=True)
        except sqlite3.Error as e:
            if not earlier:
                raise
            raise UpgradeFailed(str(e)) from e

    def _outdated(self) -> bool:
        return (MIGRATIONS.migrations_table not in self.db.table_names() or bool(MIGRATIONS.pending(self.db))
                or self._reconcile(apply=False))

    def _reconcile(self, apply: bool) -> bool:
        """Create the declared tables, columns and indexes that are missing (``apply=False``: only
        say whether any is)."""
        missing = False
        tables = set(self.db.table_names())
        for spec in list(_TABLES.values()):
            t = self.db[spec.name]
            if spec.name not in tables:
                missing = True
                if not apply:
                    return True
                t.create(spec.columns, pk=spec.pk)
            else:
                have = set(t.columns_dict)
                for col, typ in spec.columns.items():
                    if col not in have:
                        missing = True
                        if apply:
                            t.add_column(col, typ)
            existing = {tuple(i.columns) for i in t.indexes}
            for cols, unique in [(c, False) for c in spec.indexes] + [(c, True) for c in spec.unique_indexes]:
                if cols not in existing:
                    missing = True
                    if apply:
                        t.create_index(list(cols), unique=unique, if_not_exists=True)
            if missing and not apply:
                return True
        return missing

    def schema_version(self) -> int:
        """How many versioned steps this database has had (``PRAGMA user_version``)."""
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """The store's lock and one ``BEGIN IMMEDIATE`` … ``COMMIT`` transaction (``ROLLBACK`` on
        an exception; a savepoint inside a transaction already): a row read and written back is not
        interleaved with another thread's or process's write. Yields the connection."""
        with self.lock:
            if self.conn.in_transaction:
                with self.db.atomic():
                    yield self.conn
                return
            with _immediate(self.conn):
                yield self.conn

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """The store's lock and one read transaction (``BEGIN`` … ``COMMIT``): every read inside sees
        the database as of the first one, whatever another connection commits meanwhile (WAL keeps
        that version for the reader without blocking the writer), so a page built from several
        queries shows one state. Inside a transaction already: that one. Yields the connection."""
        with self.lock:
            if self.conn.in_transaction:
                yield self.conn
                return
            self.conn.execute("BEGIN")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def close(self) -> None:
        _OPEN_STORES.discard(self)
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _immediate:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on an exception, or when the ``COMMIT``
    fails) on an autocommit connection."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self):
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, *_):
        if exc_type is None:
            try:
                self.conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
        else:
            self._rollback()

    def _rollback(self) -> None:
        # SQLite rolls the transaction back itself on some errors (SQLITE_FULL, SQLITE_IOERR,
        # SQLITE_NOMEM: "Response To Errors Within A Transaction"); a ROLLBACK then fails with "no
        # transaction is active" and would replace the error that says what went wrong
        if not self.conn.in_transaction:
            return
        try:
            self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass        # the statement's own error is the one to report; SQLite ends the transaction anyway
