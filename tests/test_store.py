"""The SQLite store: tables declared by each concern, created idempotently; versioned steps for
renames and drops; an upgrade from a database of an earlier release keeps its rows."""
from __future__ import annotations

import importlib
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from sqlite_utils.migrations import Migrations

from bot import store as store_mod


def test_a_table_declared_after_a_store_opened_is_created_there(tmp_path):
    from bot.store import Store, table
    with Store(tmp_path / "f.db") as store:
        table("late_declared_for_test", {"id": int, "what": str}, pk="id")
        store.db["late_declared_for_test"].insert({"id": 1, "what": "x"})
        assert store.db["late_declared_for_test"].columns_dict == {"id": int, "what": str}


# ---------------------------------------------------------------------- versioned migrations



RELEASE_DUMP = Path(__file__).parent / "data" / "store" / "f48f023.sql"   # made by make_fixture.py on that release
MODULES = ("bot.app.queue", "bot.agents.store", "bot.plan.store", "bot.sync.store", "bot.github.store",
           "bot.triage.store", "bot.commands.store", "bot.validation.store", "bot.l2.store")


def release_db(tmp_path) -> Path:
    path = tmp_path / "forksync.db"
    conn = sqlite3.connect(path)
    conn.executescript(RELEASE_DUMP.read_text())
    conn.close()
    return path


def rows(path: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(path)
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE '\\_%' ESCAPE '\\'")]
    out = {n: sorted(conn.execute(f'SELECT * FROM "{n}"').fetchall()) for n in names}
    conn.close()
    return out


def test_a_database_of_the_earlier_release_upgrades_with_its_data(tmp_path):
    for m in MODULES:
        importlib.import_module(m)
    path = release_db(tmp_path)
    before = rows(path)
    assert len(before) == 24 and all(len(r) == 1 for r in before.values())
    with store_mod.Store(path) as s:
        assert s.schema_version() == len(store_mod.MIGRATIONS.applied(s.db)) == len(store_mod.MIGRATIONS.pending(s.db)) + \
            len(store_mod.MIGRATIONS.applied(s.db))
        for spec in store_mod._TABLES.values():
            assert set(spec.columns) <= set(s.db[spec.name].columns_dict), spec.name
        assert [m.name for m in store_mod.MIGRATIONS.applied(s.db)] == ["0001_drop_plan_predictions",
                                                                        "0002_triage_rows_name_their_fork",
                                                                        "0003_triage_runs_know_when_they_ran",
                                                                        "0004_l2_points_name_their_fork",
                                                                        "0005_l2_regressions_have_a_status_code"]
    after = rows(path)
    # the planner's cache of whole-tree predictions is dropped (rebuildable; nothing reads it): every other row stays
    assert "plan_predictions" not in after and "plan_predictions" in before
    for name, old_rows in before.items():
        if name != "plan_predictions":
            assert [r[:len(old_rows[0])] for r in after[name]] == old_rows, name
    # triage's rows name their fork now; the release's store knows several forks, so its rows stay
    # unassigned but for the root cause whose follow-up names its fork
    assert after["triage_runs"] == [("triage_runs-run", 7, "triage_runs-actions", "", None)]
    assert after["triage_green"] == [("triage_green-test", "triage_green-commit_sha", 7, "", None)]
    # the release's L2 point names no commit an L2 run measured: it stays in no fork's series
    assert after["l2_points"][0][-1] == ""
    # a regression whose status is no text the L2 service wrote gets no code: it is claimed neither way
    assert after["l2_regressions"][0][-1] == ""


def test_l2_points_of_an_earlier_release_go_to_the_fork_that_measured_them(tmp_path):
    """Before points named their fork, two forks' series of one benchmark were one series; after
    the upgrade each old point belongs to the fork whose L2 run measured its commit (a commit two
    forks measured, or none, stays unassigned), and two forks may store a point for one commit."""
    importlib.import_module("bot.l2.store")
    path = tmp_path / "forksync.db"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE l2_points (id INTEGER PRIMARY KEY, benchmark TEXT, impl TEXT, metric TEXT, shape TEXT,
            dtype TEXT, platform TEXT, unit TEXT, sha TEXT, seq INTEGER, time INTEGER, value FLOAT,
            repeats_json TEXT, ok INTEGER);
        CREATE UNIQUE INDEX idx_l2_points_benchmark_impl_metric_shape_dtype_platform_sha
            ON l2_points (benchmark, impl, metric, shape, dtype, platform, sha);
        CREATE TABLE l2_runs (key TEXT PRIMARY KEY, repo TEXT, sha TEXT, seq INTEGER, time FLOAT);
        INSERT INTO l2_runs VALUES ('a@1', 'meta/a', '1', 1, 1.0), ('b@2', 'meta/b', '2', 1, 1.0),
                                   ('a@3', 'meta/a', '3', 2, 1.0), ('b@3', 'meta/b', '3', 2, 1.0);
        INSERT INTO l2_points VALUES (1, 'mm', 't', 'ms', '8', 'f', 'h', 'ms', '1', 1, 1, 1.0, '[]', 1),
                                     (2, 'mm', 't', 'ms', '8', 'f', 'h', 'ms', '2', 1, 1, 2.0, '[]', 1),
                                     (3, 'mm', 't', 'ms', '8', 'f', 'h', 'ms', '3', 2, 1, 3.0, '[]', 1),
                                     (4, 'mm', 't', 'ms', '8', 'f', 'h', 'ms', '4', 3, 1, 4.0, '[]', 1);
    """)
    conn.close()
    from bot.l2.store import load_series
    with store_mod.Store(path) as s:
        assert [(r["id"], r["repo"]) for r in s.db["l2_points"].rows] == [(1, "meta/a"), (2, "meta/b"), (3, ""), (4, "")]
        assert [p.value for p in load_series(s, "meta/a", "mm", "t", "ms", "8", "f", "h")] == [1.0]
        s.db["l2_points"].insert({"repo": "meta/b", "benchmark": "mm", "impl": "t", "metric": "ms", "shape": "8",
                                  "dtype": "f", "platform": "h", "unit": "ms", "sha": "1", "seq": 0, "time": 1,
                                  "value": 5.0, "repeats_json": "[]", "ok": 1})
        assert [p.value for p in load_series(s, "meta/b", "mm", "t", "ms", "8", "f", "h")] == [5.0, 2.0]


def triage_release_db(tmp_path, forks: list[str], followup: str) -> Path:
    """The release's store whose sync status names ``forks`` and whose one follow-up is of root
    cause ``triage_tracked-key`` on fork ``followup``."""
    path = release_db(tmp_path)
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM sync_status")
    conn.execute("DELETE FROM tracked_forks")
    conn.executemany("INSERT INTO sync_status (repo) VALUES (?)", [(f,) for f in forks])
    conn.execute("UPDATE nightly_followups SET repo = ?, cause = 'triage_tracked-key'", [followup])
    conn.commit()
    conn.close()
    return path


def test_triage_rows_go_to_the_stores_only_fork(tmp_path):
    for m in MODULES:
        importlib.import_module(m)
    path = triage_release_db(tmp_path, ["meta/triton"], "meta/triton")
    with store_mod.Store(path) as s:
        assert [(r["repo"], r["key"]) for r in s.db["triage_tracked"].rows] == [("meta/triton", "triage_tracked-key")]
        assert [(r["repo"], r["run"]) for r in s.db["triage_runs"].rows] == [("meta/triton", "triage_runs-run")]
        assert [(r["repo"], r["test"]) for r in s.db["triage_green"].rows] == [("meta/triton", "triage_green-test")]
        # the key is (fork, key): another fork may track a root cause of the same name
        s.db["triage_tracked"].insert({"repo": "meta/other", "key": "triage_tracked-key", "data": "{}", "updated_at": 1})
        assert s.db["triage_tracked"].count == 2


def test_triage_rows_of_a_store_of_several_forks_go_where_traceable(tmp_path):
    for m in MODULES:
        importlib.import_module(m)
    path = triage_release_db(tmp_path, ["meta/a", "meta/b"], "meta/b")
    with store_mod.Store(path) as s:
        assert [(r["repo"], r["key"]) for r in s.db["triage_tracked"].rows] == [("meta/b", "triage_tracked-key")]
        assert [(r["repo"], r["run"]) for r in s.db["triage_runs"].rows] == [("", "triage_runs-run")]


@pytest.fixture
def steps(monkeypatch):
    """A migration set of its own (a rename, a drop and a table rename on the release's tables) with
    the declarations changed to match, as a real change of shape would be."""
    for mod in MODULES:
        importlib.import_module(mod)
    tables = dict(store_mod._TABLES)
    cr, ph = tables["command_runs"], tables["pin_history"]
    tables["command_runs"] = replace(cr, columns={("author" if c == "by" else c): t for c, t in cr.columns.items()})
    tables["pin_history"] = replace(ph, columns={c: t for c, t in ph.columns.items() if c != "as_of"},
                                    indexes=tuple(i for i in ph.indexes if "as_of" not in i))
    tables["fork_config_cache"] = replace(tables.pop("fork_configs"), name="fork_config_cache")
    monkeypatch.setattr(store_mod, "_TABLES", tables)
    m = Migrations("forksync-test")

    @m(name="0001 rename command_runs.by to author")
    def _rename(db):
        store_mod.rename_column(db, "command_runs", "by", "author")

    @m(name="0002 drop pin_history.as_of")
    def _drop(db):
        store_mod.drop_column(db, "pin_history", "as_of")

    @m(name="0003 fork_configs becomes fork_config_cache")
    def _table(db):
        store_mod.rename_table(db, "fork_configs", "fork_config_cache")

    monkeypatch.setattr(store_mod, "MIGRATIONS", m)
    return m


def test_versioned_steps_rename_and_drop_keeping_rows_once_each(tmp_path, steps):
    path = release_db(tmp_path)
    with store_mod.Store(path) as s:
        assert s.schema_version() == 3
        assert s.db["command_runs"].columns_dict == {"key": str, "repo": str, "comment_id": int, "line": str,
                                                     "author": str, "result": str, "time": float, "written": str,
                                                     "reply_pending": str}
        assert list(s.db["command_runs"].rows)[0]["author"] == "command_runs-by"
        assert "as_of" not in s.db["pin_history"].columns_dict and s.db["pin_history"].count == 1
        assert list(s.db["fork_config_cache"].rows) == [{"repo": "fork_configs-repo", "blob_sha": "fork_configs-blob_sha",
                                                         "text": "fork_configs-text"}]
        assert [a.name for a in steps.applied(s.db)] == [m.name for m in steps._migrations]
        s.db["command_runs"].insert({"key": "k2", "author": "octocat"})
    with store_mod.Store(path) as s:                      # opened again: nothing runs twice
        assert s.schema_version() == 3 and s.db["command_runs"].count == 2


def test_a_fresh_database_records_the_steps_without_needing_them(tmp_path, steps):
    with store_mod.Store(tmp_path / "new.db") as s:
        assert s.schema_version() == 3 and not steps.pending(s.db)


def test_a_failing_step_changes_nothing_and_stays_pending(tmp_path, steps):
    @steps(name="0004 broken")
    def _broken(db):
        db["command_runs"].transform(rename={"author": "who"})
        raise RuntimeError("half done")

    path = release_db(tmp_path)
    with pytest.raises(RuntimeError):
        store_mod.Store(path)
    conn = sqlite3.connect(path)
    assert [r[1] for r in conn.execute("PRAGMA table_info(command_runs)")][4] == "by"     # the whole upgrade rolled back
    conn.close()


def test_a_transaction_holds_the_write_lock_nests_and_rolls_back(tmp_path):
    """``Store.transaction``: another connection cannot write while it is open (a read-modify-write
    of a result row is never interleaved with another process's); inside one, another is a
    savepoint; an exception rolls back everything it wrote."""
    s = store_mod.Store(tmp_path / "s.sqlite")
    s.conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)")
    other = sqlite3.connect(tmp_path / "s.sqlite", timeout=0, isolation_level=None)
    with s.transaction() as conn:
        conn.execute("INSERT INTO t VALUES ('a', 1)")
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("INSERT INTO t VALUES ('b', 2)")
        with s.transaction() as inner:
            inner.execute("INSERT INTO t VALUES ('c', 3)")
    assert not s.conn.in_transaction
    with pytest.raises(ZeroDivisionError):
        with s.transaction() as conn:
            conn.execute("INSERT INTO t VALUES ('d', 4)")
            1 / 0
    other.execute("INSERT INTO t VALUES ('b', 2)")
    assert sorted(r[0] for r in other.execute("SELECT k FROM t")) == ["a", "b", "c"]
    other.close()
    s.close()
