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


async def test_an_older_hold_never_overwrites_a_newer_unhold_written_while_it_ran(tmp_path, monkeypatch):
    """The order check and the write are one step: a newer `/forksync unhold` that another worker
    stores while the older `hold` is being run is not undone by it."""
    import threading
    from types import SimpleNamespace

    from bot.commands.runner import run_command
    from bot.config.forksync import ForksyncConfig
    from bot.core import commands as cm

    path = tmp_path / "s.db"
    store, other = Store(path), Store(path)
    sync_store.save_status(store, SyncStatus(repo="meta/fork"))
    older, newer = "2026-12-03T04:00:00Z#00000000000000000042", "2026-12-03T04:05:00Z#00000000000000000043"
    load = sync_store.load_status
    raced: list[threading.Thread] = []

    def load_then_race(store_, repo):
        st = load(store_, repo)
        if not raced:       # the newer unhold is stored by another worker as the older hold reads the status
            raced.append(threading.Thread(target=sync_store.set_hold, args=(other, repo, False, newer)))
            raced[0].start()
            raced[0].join(2.0)          # it waits when the row is locked
        return st

    monkeypatch.setattr(sync_store, "load_status", load_then_race)
    ctx = SimpleNamespace(store=store, sync=None)
    out = await run_command(ctx, cm.Hold("/forksync hold", on=True), repo=SimpleNamespace(full_name="meta/fork"),
                            number=1, is_pr=False, user="alice", cfg=ForksyncConfig(), order=older)
    raced[0].join()
    monkeypatch.setattr(sync_store, "load_status", load)
    st = sync_store.load_status(store, "meta/fork")
    assert (st.held, st.held_by) == (False, newer), out


def test_a_hold_set_by_another_process_during_a_save_survives_it(tmp_path, monkeypatch):
    """Two processes (two connections to one file): a hold stored by one while the other's
    ``save_status`` is between reading the stored row and writing its own is kept."""
    import threading

    import sqlite_utils.db

    path = tmp_path / "s.db"
    sync_proc, command_proc = Store(path), Store(path)
    sync_store.save_status(sync_proc, SyncStatus(repo="meta/fork"))
    st = sync_store.load_status(sync_proc, "meta/fork")
    upsert = sqlite_utils.db.Table.upsert
    other: list[threading.Thread] = []

    def upsert_after_a_hold(self, *a, **kw):
        if not other and self.db.conn is sync_proc.conn:
            other.append(threading.Thread(target=sync_store.set_hold, args=(command_proc, "meta/fork", True, "x")))
            other[0].start()
            other[0].join(2.0)          # the other process gets its chance (it waits when the row is locked)
        return upsert(self, *a, **kw)

    monkeypatch.setattr(sqlite_utils.db.Table, "upsert", upsert_after_a_hold)
    sync_store.save_status(sync_proc, replace(st, backlog=5))
    other[0].join()
    monkeypatch.setattr(sqlite_utils.db.Table, "upsert", upsert)
    after = sync_store.load_status(sync_proc, "meta/fork")
    assert (after.backlog, after.held) == (5, True)


def test_a_failing_jobs_error_is_scrubbed_before_it_is_stored(tmp_path):
    """The error goes to the status issue (a public issue on a public fork) and /healthz: like a
    dead letter's reason, it never carries a URL's credentials or a configured secret."""
    from bot.agents.redact import forget_secrets, register_secrets

    store = Store(tmp_path / "s.db")
    register_secrets("s3cr3t-webhook-value")
    try:
        sync_store.record_job(store, "meta/fork", "l2", "ClientError: GET https://x-access-token:ghs_abc123@github.com/"
                              "meta/fork.git failed; key s3cr3t-webhook-value", now=1.0)
    finally:
        forget_secrets()
    [job] = sync_store.load_status(store, "meta/fork").failing_jobs
    assert "ghs_abc123" not in job["error"] and "s3cr3t" not in job["error"], job["error"]
    assert job["error"].startswith("ClientError: GET https://***@github.com/meta/fork.git failed")


def test_a_gates_check_wait_recorded_during_a_sync_survives_its_save_and_clears(tmp_path):
    store = Store(tmp_path / "s.db")
    sync_store.save_status(store, SyncStatus(repo="meta/fork", backlog=7))
    during = sync_store.load_status(store, "meta/fork")
    wait = {"branch": "forksync/bundle-a", "unit": "bundle-a", "head": "a" * 40, "checks": ["ci/x"],
            "since": 100.0, "overdue": False, "limit_s": 10800}
    assert sync_store.record_check_waits(store, "meta/fork", 7, wait)
    assert not sync_store.record_check_waits(store, "meta/fork", 7, wait)         # the same again: nothing new
    sync_store.save_status(store, replace(during, backlog=3))
    st = sync_store.load_status(store, "meta/fork")
    assert (st.backlog, st.check_waits) == (3, ({**wait, "pr": 7},)) and st.degraded() == ""
    assert sync_store.record_check_waits(store, "meta/fork", 7, {**wait, "overdue": True})
    reason = sync_store.load_status(store, "meta/fork").degraded()
    assert reason == ("1 unit(s) wait on a required check never reported on their head: bundle-a (#7): ci/x, "
                      "not reported on aaaaaaaaaaaa since 1970-01-01 00:01 UTC")
    # a wait whose unit ended is dropped by the next record, whichever PR it is for
    assert sync_store.record_check_waits(store, "meta/fork", 8, None, keep=lambda w: w["pr"] != 7)
    assert sync_store.load_status(store, "meta/fork").check_waits == ()
