"""A process killed (SIGKILL) in the middle of a write transaction leaves a hot write-ahead log:
committed frames not yet checkpointed into the database file, and the frames of the transaction
it never committed (a large one spills them before its COMMIT). The next process to open the
store recovers the last committed state: every acknowledged delivery, none of the unfinished
transaction's, a database that passes ``PRAGMA integrity_check``, and a queue that goes on. Real
processes on a real SQLite file; the kill is at a chosen statement, not after a sleep."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from bot.app import queue as q
from bot.store import Store

ROOT = Path(__file__).resolve().parents[2]

KILLED_MID_TRANSACTION = textwrap.dedent("""
    import os, signal
    from bot.app import queue as q
    from bot.store import Store

    store = Store({db!r})
    q.web_durability(store)
    store.conn.execute("PRAGMA wal_autocheckpoint=0")   # the committed rows stay in the log, as between checkpoints
    for i in range(20):
        q.enqueue(store, delivery_id=f"acked-{{i}}", hook_id="1", event="ping", body=b'{{"zen": "x"}}', now=1000.0 + i)
    with store.transaction():
        # a group commit of large deliveries: its pages spill to the log before the COMMIT
        for i in range(3):
            q.enqueue(store, delivery_id=f"unacked-{{i}}", hook_id="1", event="push", body=b"x" * 4_000_000, now=2000.0)
        os.kill(os.getpid(), signal.SIGKILL)
""")


def test_a_store_killed_mid_transaction_comes_back_at_its_last_commit(tmp_path):
    db = tmp_path / "forksync.db"
    run = subprocess.run([sys.executable, "-c", KILLED_MID_TRANSACTION.format(db=str(db))], cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=300)
    assert run.returncode == -signal.SIGKILL, run.stderr
    wal = Path(f"{db}-wal")
    assert wal.stat().st_size > 4_000_000, "no hot log left: the test would prove nothing"
    with Store(db) as store:
        assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        keys = sorted(d.id for d in q.listing(store, limit=100))
        assert keys == sorted(f"acked-{i}/1" for i in range(20))
        assert q.counts(store)["queued"] == 20
        # the queue goes on: a worker claims the oldest, and a redelivery of an unfinished one is new
        d = q.claim(store, "w1", now=3000.0)
        assert d is not None and d.id == "acked-0/1"
        assert q.enqueue(store, delivery_id="unacked-0", hook_id="1", event="push", body=b"{}", now=3000.0) == "queued"


RELEASE_DUMP = ROOT / "tests" / "data" / "store" / "f48f023.sql"

KILLED_MID_UPGRADE = textwrap.dedent("""
    import os, signal
    from bot import store as store_mod
    import bot.handlers, bot.app.queue   # every table declared, as serve has them before it opens the store

    bot.handlers.all_routers()
    real = store_mod.Store._reconcile

    def reconcile(self, apply):
        if apply:                       # the versioned steps ran, the tables are being created: killed
            real(self, apply)
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self, apply)

    store_mod.Store._reconcile = reconcile
    store_mod.Store({db!r})
""")


def test_a_store_killed_mid_upgrade_is_the_earlier_release_s_whole_and_upgrades_at_the_next_start(tmp_path):
    import sqlite3

    db = tmp_path / "forksync.db"
    conn = sqlite3.connect(db)
    conn.executescript(RELEASE_DUMP.read_text())
    conn.commit()
    before = {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0]
              for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
    conn.close()
    run = subprocess.run([sys.executable, "-c", KILLED_MID_UPGRADE.format(db=str(db))], cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=300)
    assert run.returncode == -signal.SIGKILL, run.stderr
    assert Path(f"{db}-wal").exists()     # left by the killed process (its uncommitted pages were still in memory)
    conn = sqlite3.connect(db)             # what any reader finds: the earlier release's database, whole
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    tables = {t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
    assert tables == set(before)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
    conn.close()
    import bot.handlers
    bot.handlers.all_routers()
    with Store(db) as store:                # the next start upgrades it
        assert store.schema_version() > 0
        assert "_sqlite_migrations" in store.db.table_names()
        for t, n in before.items():
            if store.db[t].exists():
                assert store.db[t].count == n, t
