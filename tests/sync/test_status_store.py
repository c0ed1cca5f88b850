"""A fork's status row has three writers: a sync (loads it, works for minutes, saves it), the hold
command and the scheduler. A sync's save must not undo what the other two wrote meanwhile."""
from __future__ import annotations

from dataclasses import replace

from bot.store import Store
from bot.sync import store as sync_store
from bot.sync.status import SyncStatus


def test_a_hold_and_a_failing_job_set_during_a_sync_survive_its_save(tmp_path):
    store = Store(tmp_path / "s.db")
    sync_store.save_status(store, SyncStatus(repo="meta/fork", backlog=7))
    during = sync_store.load_status(store, "meta/fork")            # the sync loads its status …
    sync_store.set_hold(store, "meta/fork", True, "2026-12-03T04:00:00Z#00000000000000000042")
    assert sync_store.record_job(store, "meta/fork", "reconcile", "GitHub answered 502", now=100.0)
    sync_store.save_status(store, replace(during, backlog=3))      # … and saves it after both
    st = sync_store.load_status(store, "meta/fork")
    assert (st.backlog, st.held, st.held_by) == (3, True, "2026-12-03T04:00:00Z#00000000000000000042")
    assert [(j["job"], j["error"], j["count"]) for j in st.failing_jobs] == [("reconcile", "GitHub answered 502", 1)]

    sync_store.set_hold(store, "meta/fork", False, "2026-12-03T04:05:00Z#00000000000000000043")
    assert sync_store.record_job(store, "meta/fork", "reconcile", None, now=200.0)
    st = sync_store.load_status(store, "meta/fork")
    assert (st.backlog, st.held, st.failing_jobs) == (3, False, ())


def test_a_new_row_takes_everything_from_the_status_saved(tmp_path):
    store = Store(tmp_path / "s.db")
    sync_store.set_hold(store, "meta/new", True, "")
    st = sync_store.load_status(store, "meta/new")
    assert (st.repo, st.held, st.backlog) == ("meta/new", True, 0)
    sync_store.save_status(store, SyncStatus(repo="meta/other", held=True, backlog=2))
    assert sync_store.load_status(store, "meta/other").held is True
