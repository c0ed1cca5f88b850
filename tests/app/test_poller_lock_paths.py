"""The database's poller lock (bot/app/poller_lock.py) is the database file's, however its path is
spelled: a serve given a symbolic link to the database (a deploy's ``/srv/forksync/current.db``
pointing at the volume's file) polls the same database as one given the file itself. Real
``flock`` on real files (two opens in one process lock each other out, as two processes do)."""
from __future__ import annotations

import os
import sqlite3

import pytest

from bot.app.poller_lock import PollerRunning, hold_poller


def test_a_database_named_through_a_symbolic_link_is_the_same_database(tmp_path):
    volume = tmp_path / "volume"
    volume.mkdir()
    db = volume / "forksync.db"
    sqlite3.connect(db).close()
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    os.symlink(db, deploy / "current.db")
    with hold_poller(tmp_path / "work-old", db):
        with pytest.raises(PollerRunning) as e:
            hold_poller(tmp_path / "work-new", deploy / "current.db").release()
    assert (e.value.kind, e.value.path, e.value.pid) == ("database", str(db.resolve()), str(os.getpid()))
