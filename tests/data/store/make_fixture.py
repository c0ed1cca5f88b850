"""Writes the SQL dump of a forksync database as a given release makes it: every declared table,
one row each, for the store's upgrade test. Run it with that release's code on the path:

    PYTHONPATH=<checkout of the release> python tests/data/store/make_fixture.py OUT.sql
"""
import importlib
import sqlite3
import sys
import tempfile
from pathlib import Path

MODULES = ("bot.app.queue", "bot.agents.store", "bot.plan.store", "bot.sync.store", "bot.github.store",
           "bot.triage.store", "bot.commands.store", "bot.validation.store", "bot.l2.store")
SAMPLE = {str: "x", int: 7, float: 1.5, bytes: b"\x00\x01", bool: 1}


def main(out: str) -> None:
    for m in MODULES:
        importlib.import_module(m)
    from bot import store as store_mod

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "forksync.db"
        with store_mod.Store(path) as s:
            for spec in sorted(store_mod._TABLES.values(), key=lambda t: t.name):
                row = {c: (f"{spec.name}-{c}" if t is str else SAMPLE.get(t, "x")) for c, t in spec.columns.items()}
                s.db[spec.name].insert(row)
        conn = sqlite3.connect(path)
        Path(out).write_text("\n".join(conn.iterdump()) + "\n")
        conn.close()


if __name__ == "__main__":
    main(sys.argv[1])
