"""``/healthz`` while the store's volume is full and no webhook comes to find it out.

Measured with a real ``forksync serve --workers 1`` on a 4 MiB tmpfs filled up: the worker went
on running, its every write refused (``database or disk is full``: 409 tracebacks in 45 s, one
per turn of its loop), while ``/healthz`` answered ``no worker heartbeat for 46 s`` — a worker
that looks dead or hung, when the cause is the store; and a web-only serve (compose's, its worker
elsewhere) answered 200 until the first delivery it lost. ``/healthz`` tries a write of its own
(at most every ``PROBE_EVERY_S``) and names the store."""
from __future__ import annotations

from aiohttp.test_utils import TestClient, TestServer

from bot.app import queue as q
from bot.app.web import PROBE_EVERY_S, make_app
from bot.store import Store

SECRET = "unwritable-store-secret"


async def _healthz(client) -> tuple[int, dict]:
    r = await client.get("/healthz")
    return r.status, await r.json()


async def test_healthz_names_a_store_that_cannot_be_written_before_a_delivery_is_lost(tmp_path):
    now = [1_000.0]
    store = Store(tmp_path / "q.db")
    client = TestClient(TestServer(make_app(store, SECRET, clock=lambda: now[0])))
    await client.start_server()
    try:
        assert await _healthz(client) == (200, {"status": "ok", "queue": q.counts(store)})
        store.conn.execute("PRAGMA query_only=ON")      # the volume is full: the store refuses every write
        now[0] += PROBE_EVERY_S
        status, body = await _healthz(client)
        assert status == 503, body
        [problem] = body["problems"]
        assert problem.startswith("the store cannot be written: "), problem
        assert "readonly" in problem, problem
        store.conn.execute("PRAGMA query_only=OFF")     # the volume is freed
        now[0] += PROBE_EVERY_S
        assert (await _healthz(client))[0] == 200
    finally:
        await client.close()
        store.close()


async def test_healthz_says_the_store_and_not_a_dead_worker_when_the_heartbeat_cannot_be_written(tmp_path):
    now = [1_000.0]
    store = Store(tmp_path / "q.db")
    q.heartbeat(store, "w1", 900.0, now[0])
    client = TestClient(TestServer(make_app(store, SECRET, expect_worker=True, clock=lambda: now[0])))
    await client.start_server()
    try:
        assert (await _healthz(client))[0] == 200
        store.conn.execute("PRAGMA query_only=ON")      # the worker's heartbeat cannot be stored any more
        now[0] += 40
        status, body = await _healthz(client)
        assert status == 503, body
        store_line, beat_line = body["problems"]
        assert store_line.startswith("the store cannot be written: "), body
        # not "no worker heartbeat for 40 s": the worker may be alive, only its heartbeat is refused
        assert beat_line == ("the workers' heartbeat is unknown: the store cannot be written, so no worker can "
                             "record it (the last one recorded is 40 s old)"), body
    finally:
        await client.close()
        store.close()


async def test_a_store_busy_with_another_writer_is_no_store_that_cannot_be_written(tmp_path):
    """The probe waits for the write lock like any writer (``busy_timeout``); a worker holding it
    longer (a large batch of plan caches) makes the probe answer ``database is locked``, which says
    the store is written, not that it cannot be."""
    now = [1_000.0]
    store = Store(tmp_path / "q.db")
    other = Store(tmp_path / "q.db")
    store.conn.execute("PRAGMA busy_timeout=0")             # the wait's end, without waiting 5 s
    client = TestClient(TestServer(make_app(store, SECRET, clock=lambda: now[0])))
    await client.start_server()
    try:
        other.conn.execute("BEGIN IMMEDIATE")               # another process writes
        now[0] += PROBE_EVERY_S
        status, body = await _healthz(client)
        assert status == 200, body
    finally:
        other.conn.execute("ROLLBACK")
        await client.close()
        store.close()
        other.close()
