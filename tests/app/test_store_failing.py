"""A store that fails under the running app (its file is no longer a database) is a clear answer
on every page that reads it: ``/metrics`` still answers a scrape and says the store fails,
``/healthz`` is red with a one-line reason, the dashboard answers 503 with one line — never an
unhandled 500 or a stack trace in the answer."""
import logging

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app.metrics import AppMetrics
from bot.app.web import make_app, mount_dashboard
from bot.store import Store

SECRET = "s3cret-for-tests"


@pytest.fixture
async def served(tmp_path):
    """The app as ``forksync serve`` assembles it: one connection each for the webhook intake,
    the metrics collector and the dashboard, all on one database file."""
    path = tmp_path / "forksync.db"
    stores = [Store(path) for _ in range(3)]
    intake, metrics_store, dashboard_store = stores
    app = make_app(intake, SECRET, metrics=AppMetrics(lambda: metrics_store))
    mount_dashboard(app, dashboard_store)
    client = TestClient(TestServer(app))
    await client.start_server()
    yield client, path
    await client.close()
    for s in stores:
        s.close()


def spoil(path) -> None:
    """Make the database file no database at all, as a disk fault or a bad restore leaves it. The
    write-ahead log is folded in first by another connection (a worker's), which also tells every
    serving connection that its cached pages are stale: their next read goes to the spoiled file."""
    other = Store(path)
    other.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    other.close()
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.write((b"this is not a database " * (size // 23 + 1))[:size])


async def test_a_failing_store_gives_clear_answers_and_no_500(served, caplog):
    client, path = served
    assert (await client.get("/metrics")).status == 200
    assert (await client.get("/healthz")).status == 200
    spoil(path)
    caplog.set_level(logging.WARNING)

    r = await client.get("/metrics")
    text = await r.text()
    assert r.status == 200, text
    assert "forksync_store_up 0.0" in text
    assert 'forksync_store_error{error="DatabaseError: file is not a database"} 1.0' in text
    assert "forksync_webhook_ack_seconds_count" in text        # the process's own metrics are still there
    assert "Traceback" not in text

    r = await client.get("/healthz")
    body = await r.json()
    assert r.status == 503
    assert body["status"] == "error"
    assert body["error"] == "the store cannot be read: DatabaseError: file is not a database"

    for page in ("/health", "/api/v1/health", "/"):
        r = await client.get(page)
        text = await r.text()
        assert r.status == 503, (page, r.status, text)
        assert "DatabaseError" in text and "Traceback" not in text, page

    # the server log says what broke, at least once per failing answer
    assert any("file is not a database" in rec.getMessage() or "DatabaseError" in rec.getMessage()
               or (rec.exc_info and "file is not a database" in str(rec.exc_info[1])) for rec in caplog.records)


async def test_a_working_store_says_so(served):
    client, _ = served
    text = await (await client.get("/metrics")).text()
    assert "forksync_store_up 1.0" in text
    assert "forksync_store_error" not in text.replace("# HELP forksync_store_error", "").replace(
        "# TYPE forksync_store_error", "")
