"""``GET /healthz`` is honest: the pure rules as a table, then the web app on a store with a dead
letter, a stuck queue and a stale heartbeat (injected clock), then a real ``forksync serve`` whose
worker runs (200) and one whose worker crash-loops (503)."""
import asyncio
import json
import os
import time
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app import queue as q
from bot.app.health import HealthPolicy, problems
from bot.app.metrics import AppMetrics
from bot.app.web import make_app
from bot.store import Store
from tests.support.serve import ForksyncProcess

ROOT = Path(__file__).resolve().parents[2]
EMPTY = {s: 0 for s in q.STATES}


@pytest.mark.parametrize("kw,want", [
    (dict(counts=EMPTY, oldest_due_at=None, last_beat_at=None, expect_worker=False), []),
    (dict(counts=EMPTY, oldest_due_at=None, last_beat_at=990.0, expect_worker=True), []),
    (dict(counts=EMPTY, oldest_due_at=None, last_beat_at=None, expect_worker=True),
     ["no worker has started processing the queue"]),
    (dict(counts=EMPTY, oldest_due_at=None, last_beat_at=960.0, expect_worker=True),
     ["no worker heartbeat for 40 s (limit 30 s)"]),
    (dict(counts=EMPTY, oldest_due_at=None, last_beat_at=999.0, expect_worker=True, recent_restarts=3),
     ["workers restarted 3 times in the last 300 s"]),
    (dict(counts=EMPTY, oldest_due_at=800.0, last_beat_at=None, expect_worker=False), []),          # due 200 s
    (dict(counts=EMPTY, oldest_due_at=600.0, last_beat_at=None, expect_worker=False),
     ["the queue is stuck: a delivery has been due for 400 s (limit 300 s)"]),
    (dict(counts={**EMPTY, "dead": 1}, oldest_due_at=None, last_beat_at=None, expect_worker=False),
     ["1 dead-lettered delivery: see `forksync queue --state dead`"]),
    (dict(counts=EMPTY, oldest_due_at=None, last_beat_at=None, expect_worker=False,
          store_refused={"since": 940.0, "at": 990.0, "count": 3, "error": "OperationalError: database or disk is full"}),
     ["deliveries cannot be stored: 3 refused (answered 503, lost unless redelivered) in the last 60 s and none "
      "stored since; the store cannot be written: OperationalError: database or disk is full"]),
    # a store that cannot be written refuses the workers' heartbeats too: their age says nothing
    (dict(counts=EMPTY, oldest_due_at=None, last_beat_at=960.0, expect_worker=True,
          store_refused={"since": 950.0, "at": 990.0, "count": 0, "error": "OperationalError: database or disk is full"}),
     ["the store cannot be written: OperationalError: database or disk is full; the next delivery will be refused "
      "(answered 503) and workers cannot record their work",
      "the workers' heartbeat is unknown: the store cannot be written, so no worker can record it (the last one "
      "recorded is 40 s old)"]),
    (dict(counts=EMPTY, oldest_due_at=None, last_beat_at=None, expect_worker=True,
          store_refused={"since": 950.0, "at": 990.0, "count": 2, "error": "OperationalError: disk I/O error"}),
     ["deliveries cannot be stored: 2 refused (answered 503, lost unless redelivered) in the last 50 s and none "
      "stored since; the store cannot be written: OperationalError: disk I/O error",
      "the workers' heartbeat is unknown: the store cannot be written, so no worker can record it (none recorded "
      "yet)"]),
    # a heartbeat recent enough needs no word, whatever the store
    (dict(counts=EMPTY, oldest_due_at=None, last_beat_at=990.0, expect_worker=True,
          store_refused={"since": 950.0, "at": 990.0, "count": 0, "error": "OperationalError: disk I/O error"}),
     ["the store cannot be written: OperationalError: disk I/O error; the next delivery will be refused "
      "(answered 503) and workers cannot record their work"]),
    (dict(counts={**EMPTY, "dead": 2}, oldest_due_at=600.0, last_beat_at=None, expect_worker=True),
     ["no worker has started processing the queue", "the queue is stuck: a delivery has been due for 400 s "
      "(limit 300 s)", "2 dead-lettered deliveries: see `forksync queue --state dead`"]),
    # a scheduled job failing once is on the status issue only; twice in a row makes the App unhealthy
    (dict(counts=EMPTY, oldest_due_at=None, last_beat_at=None, expect_worker=False,
          failing_jobs=[{"repo": "meta/a", "job": "reconcile", "error": "502", "count": 1},
                        {"repo": "meta/b", "job": "nightly", "error": "GitHubAPIError: 403", "count": 2}]),
     ["meta/b: the scheduled nightly job failed 2 times in a row: GitHubAPIError: 403"]),
    # the App's own job (it names no fork): listing the installations
    (dict(counts=EMPTY, oldest_due_at=None, last_beat_at=None, expect_worker=False,
          failing_jobs=[{"repo": "", "job": "installations", "error": "GET /app/installations failed: 502", "count": 2}]),
     ["the App: the scheduled installations job failed 2 times in a row: GET /app/installations failed: 502"]),
    # a delivery whose last attempt was stopped at the time limit, until it succeeds
    (dict(counts=EMPTY, oldest_due_at=None, last_beat_at=None, expect_worker=False,
          timed_out=[{"id": "g1", "event": "push", "repo": "meta/a", "error": "timed out: still running after 60 s"}]),
     ["delivery g1 (push on meta/a) hung: timed out: still running after 60 s (`forksync queue`)"]),
])
def test_health_rules(kw, want):
    assert problems(1000.0, policy=HealthPolicy(), **kw) == want


async def test_healthz_is_503_for_a_dead_letter_a_stuck_queue_and_a_silent_worker(tmp_path):
    store = Store(tmp_path / "h.db")
    clock = [10_000.0]
    client = TestClient(TestServer(make_app(store, "s", metrics=AppMetrics(lambda: store), expect_worker=True,
                                            clock=lambda: clock[0])))
    await client.start_server()
    try:
        async def health():
            r = await client.get("/healthz")
            return r.status, (await r.json()).get("problems", [])

        assert await health() == (503, ["no worker has started processing the queue"])
        q.heartbeat(store, "w1", 9_990.0, 9_995.0)
        assert await health() == (200, [])
        q.enqueue(store, delivery_id="g1", hook_id="1", event="ping", body=b"{}", now=9_999.0)
        assert await health() == (200, [])                         # due for 1 s: fine
        clock[0] = 10_400.0                                        # nobody claimed it; the heartbeat went quiet
        assert await health() == (503, ["no worker heartbeat for 405 s (limit 30 s)",
                                         "the queue is stuck: a delivery has been due for 401 s (limit 300 s)"])
        q.heartbeat(store, "w1", 9_990.0, 10_400.0)
        d = q.claim(store, "w1", now=10_400.0)
        q.fail(store, d.id, "w1", "cannot be handled", permanent=True, now=10_400.0)
        assert await health() == (503, ["1 dead-lettered delivery: see `forksync queue --state dead`"])
        assert q.retry_dead(store, d.id)
        again = q.claim(store, "w1", now=time.time() + 1)            # retry_dead queues it at the real time
        q.complete(store, again.id, "w1", "ok", now=10_400.0)
        assert await health() == (200, [])
    finally:
        await client.close()
        store.close()


def start_serve(tmp_path, **env) -> ForksyncProcess:
    e = dict(os.environ, FORKSYNC_WEBHOOK_SECRET="health-secret", FORKSYNC_DB=str(tmp_path / "bot.db"),
             FORKSYNC_WORKERS="1", FORKSYNC_GITHUB_URL="http://127.0.0.1:9", FORKSYNC_WORKDIR=str(tmp_path / "w"),
             PYTHONPATH=str(ROOT))
    e.update(env)
    serve = ForksyncProcess(tmp_path, ["serve", "--host", "127.0.0.1", "--port", "0", "--no-poll"], e)
    assert serve.started_or_exited() == "listening", serve.log
    return serve


async def poll_health(port, pred, what, limit_s=120.0):
    """Poll /healthz until ``pred(status, body)``; the limit bounds a broken test, it is no budget."""
    loop = asyncio.get_running_loop()
    end = loop.time() + limit_s
    async with aiohttp.ClientSession() as http:
        while True:
            async with http.get(f"http://127.0.0.1:{port}/healthz") as r:
                status, body = r.status, await r.json()
            if pred(status, body):
                return status, body
            assert loop.time() < end, f"gave up waiting for {what}; last answer {status} {body}"
            await asyncio.sleep(0.5)


async def test_real_serve_is_healthy_with_a_running_worker_and_503_while_it_crash_loops(tmp_path):
    (tmp_path / "ok").mkdir()
    serve = start_serve(tmp_path / "ok", FORKSYNC_TOKEN="not-used-token", FORKSYNC_BOT_LOGIN="forksync[bot]")
    try:
        status, body = await poll_health(serve.port, lambda s, b: s == 200, "the worker's first heartbeat")
        assert body == {"status": "ok", "queue": EMPTY}
    finally:
        serve.stop()
    (tmp_path / "bad").mkdir()
    # App mode with a key file that is not there: every worker exits at start, serve restarts it
    serve = start_serve(tmp_path / "bad", FORKSYNC_APP_ID="1", FORKSYNC_PRIVATE_KEY_FILE=str(tmp_path / "no.pem"))
    try:
        status, body = await poll_health(serve.port, lambda s, b: any("restarted" in p for p in b.get("problems", [])),
                                         "three worker restarts")
        assert status == 503 and body["status"] == "unhealthy"
        assert body["problems"][0] == "no worker has started processing the queue"
        assert body["problems"][1].startswith("workers restarted ")
    finally:
        serve.stop()


def test_deliveries_waiting_for_a_suspended_installation_are_a_warning_naming_it(tmp_path):
    """A delivery refused because the App's installation is suspended waits, paused, until the
    suspension is lifted. When that installation follows no fork (nothing polls it, so a missed
    ``installation.unsuspend`` leaves it suspended here), the operator saw only a count of
    ``paused`` deliveries in ``/healthz``, with nothing saying what they wait for. What they see:
    one warning line per installation, with how many deliveries wait, since when, and how to look
    at them — a warning, never a 503."""
    from bot.app.health import warnings
    from bot.sync import store as sync_store

    store = Store(tmp_path / "s.db")
    store.migrate()
    sync_store.set_suspended(store, 77, True, at=1_000.0, by="octo-admin")
    for n in range(2):
        data = {"installation": {"id": 77}, "repository": {"full_name": "acme/triton"}}
        q.enqueue(store, delivery_id=f"d{n}", hook_id="1", event="issue_comment", body=json.dumps(data).encode(),
                  summary=q.summarize_payload(data), now=1_000.0 + n)
        d = q.claim(store, "w", now=1_010.0)
        assert q.pause(store, d.id, "w", "paused: suspended", now=1_020.0 + n) == "paused"
    got = q.paused_by_installation(store)
    assert got == [{"installation_id": 77, "count": 2, "since": 1_020.0}]
    lines = [w.text for w in warnings(paused_deliveries=got, suspended=sync_store.suspended(store), now=1_020.0 + 7_200)]
    assert lines == ["2 deliveries wait for the App's installation 77, suspended by octo-admin (paused for 2.0 h): "
                     "they run when the suspension is lifted (`forksync queue --state paused`)"]
    assert all(w.fork == "" for w in warnings(paused_deliveries=got, suspended={}, now=2_000.0))
