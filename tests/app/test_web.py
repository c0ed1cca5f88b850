"""The webhook web app through real HTTP (aiohttp test server): signature check, durable store
before 202, de-duplication, health and metrics."""
import asyncio
import hashlib
import hmac
import json
import logging

import pytest
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client import generate_latest

from bot.app import queue as q
from bot.app.metrics import AppMetrics
from bot.app.web import METRICS_KEY, GroupCommitter, delivery_headers, dumps, make_app
from bot.store import Store
from bot.sync.status import SyncStatus
from bot.sync.store import save_status as save

SECRET = "s3cret-for-tests"


@pytest.fixture
async def env(tmp_path):
    store = Store(tmp_path / "q.db")
    app = make_app(store, SECRET, metrics=AppMetrics(lambda: store))
    client = TestClient(TestServer(app))
    await client.start_server()
    yield client, store
    await client.close()
    store.close()


async def post(client, event, guid, payload, *, secret=SECRET, headers=None, body=None):
    body = dumps(payload) if body is None else body
    h = delivery_headers(event, guid, body, secret)
    h.update(headers or {})
    h = {k: v for k, v in h.items() if v is not None}
    r = await client.post("/webhook", data=body, headers=h)
    return r.status, await r.json()


async def test_signed_delivery_is_stored_before_202(env):
    client, store = env
    status, body = await post(client, "push", "guid-1", {"ref": "refs/heads/main", "installation": {"id": 9},
                                                         "repository": {"full_name": "o/r"}, "sender": {"login": "u"}})
    assert (status, body) == (202, {"delivery": "guid-1/1", "queue": "queued"})
    d = q.get(store, "guid-1/1")
    assert (d.state, d.event, d.installation_id, d.repo, d.sender) == ("queued", "push", 9, "o/r", "u")
    assert json.loads(d.body) == {"ref": "refs/heads/main", "installation": {"id": 9},
                                  "repository": {"full_name": "o/r"}, "sender": {"login": "u"}}


@pytest.mark.parametrize("headers,expected", [
    ({"X-Hub-Signature-256": None, "X-Hub-Signature": None}, (401, "missing X-Hub-Signature-256 header")),
    ({"X-Hub-Signature-256": None}, (401, "missing X-Hub-Signature-256 header")),   # sha1 alone is refused
    ({"X-Hub-Signature-256": "sha256=" + "0" * 64},
     (401, "signature check failed: the body's HMAC-SHA256 does not match the webhook secret")),
    ({"X-Hub-Signature-256": "md5=abc"}, (401, "X-Hub-Signature-256 must be 'sha256=' followed by 64 hex digits")),
    # a valid SHA-1 signature in the SHA-256 header: GitHub never sends that; refused, not downgraded
    ({"X-Hub-Signature-256": "sha1=" + hmac.new(SECRET.encode(), b'{"a":1}', hashlib.sha1).hexdigest()},
     (401, "X-Hub-Signature-256 must be 'sha256=' followed by 64 hex digits")),
    ({"X-Hub-Signature-256": "sha256=" + "0" * 63}, (401, "X-Hub-Signature-256 must be 'sha256=' followed by 64 hex digits")),
])
async def test_unsigned_or_badly_signed_is_401_and_nothing_stored(env, headers, expected):
    client, store = env
    status, body = await post(client, "push", "guid-2", {"a": 1}, headers=headers)
    assert (status, body["error"]) == expected
    assert q.counts(store) == {s: 0 for s in q.STATES}


async def test_wrong_secret_is_401(env):
    client, store = env
    status, _ = await post(client, "push", "guid-3", {"a": 1}, secret="other")
    assert status == 401
    assert q.get(store, "guid-3/1") is None


@pytest.mark.parametrize("body,headers,expected", [
    (b"{not json", {}, (400, "the body is not valid JSON: expecting property name enclosed in double quotes at line 1, column 2")),
    # where it breaks, as the JSON parser says it (a proxy that cut or rewrote the body shows here)
    (b'{\n  "zen": "hi",\n  "hook_id": \n}', {}, (400, "the body is not valid JSON: expecting value at line 4, column 1")),
    (b"\xff\xfe", {}, (400, "the body is not valid JSON")),
    (b"{}", {"X-GitHub-Event": None}, (400, "missing header x-github-event")),
    (b"{}", {"X-GitHub-Delivery": None}, (400, "missing header x-github-delivery")),
    (b"{}", {"X-GitHub-Delivery": ""}, (400, "X-GitHub-Event and X-GitHub-Delivery must be non-empty (≤ 200 chars)")),
    (b"{}", {"Content-Type": "text/plain"}, (415, "expected a content-type of 'application/json' or 'application/x-www-form-urlencoded'")),
    (b"[" * 100_000 + b"]" * 100_000, {}, (400, "the body is not valid JSON")),              # parser recursion
    (b'{"a":' * 65 + b"1" + b"}" * 65, {}, (400, "the JSON body is nested deeper than 64 levels")),
    (b" \n", {}, (400, "the body is empty")),
    (b"zen=1", {"Content-Type": "application/x-www-form-urlencoded"}, (400, "a form-encoded delivery needs a payload= field")),
])
async def test_unparsable_or_incomplete_is_4xx_and_nothing_stored(env, body, headers, expected):
    client, store = env
    status, out = await post(client, "push", "guid-4", None, body=body, headers=headers)
    assert (status, out["error"]) == expected
    assert q.counts(store) == {s: 0 for s in q.STATES}


async def test_form_encoded_payload_is_accepted(env):
    import urllib.parse
    client, store = env
    body = urllib.parse.urlencode({"payload": json.dumps({"zen": "hi"})}).encode()
    status, out = await post(client, "ping", "guid-f", None, body=body,
                             headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert (status, out["queue"]) == (202, "queued")


async def test_redelivery_is_stored_once(env):
    client, store = env
    for _ in range(3):
        status, _ = await post(client, "ping", "guid-5", {"zen": "x"})
        assert status == 202
    assert q.counts(store)["queued"] == 1
    assert q.get(store, "guid-5/1").redeliveries == 2



PRIVATE = "acme/private-fork"
METRICS_TOKEN = "metrics-token-for-tests"


def private_fork_in_trouble(store: Store) -> None:
    """A fork with a blocked unit, a failed fetch and a dead-lettered delivery, each quoting it."""
    save(store, SyncStatus(repo=PRIVATE, days_behind=3.5, backlog=42, upstream_seen_at=1.0, computed_at=1.0,
                           last_fetch_error="403 Forbidden",
                           blocked=({"id": "bundle-1", "reason": "refusing to allow a GitHub App to create or update "
                                                                 "workflow .github/workflows/secret-rollout.yml"},)))
    q.enqueue(store, delivery_id="gone-1", hook_id="1", event="push", body=b"{}",
              summary={"action": "", "installation_id": None, "repo": PRIVATE, "sender": ""})
    store.conn.execute("UPDATE webhook_deliveries SET state='dead', dead_reason=?, finished_at=1 WHERE delivery_id='gone-1'",
                       [f"git fetch https://github.com/{PRIVATE}.git: branch secret-rollout not found"])


def samples(text: str) -> dict[tuple[str, tuple], float]:
    """``{(sample name, sorted labels): value}``, parsed as Prometheus would (a format error raises)."""
    from prometheus_client.parser import text_string_to_metric_families  # lazy: a test helper's parser

    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


async def test_metrics_without_a_token_name_no_fork_and_quote_no_fork_error(env):
    """``/metrics`` is answered on the webhook's port to anyone on the internet, and cannot tell a
    private fork from a public one: without a metrics token it serves the App-wide series, the
    forks' state folded into totals, and no fork's name or error text."""
    client, store = env
    private_fork_in_trouble(store)
    r = await client.get("/metrics")
    text = await r.text()
    assert r.status == 200
    assert "private-fork" not in text and "secret-rollout" not in text, \
        [ln for ln in text.splitlines() if "private-fork" in ln or "secret-rollout" in ln]
    got = samples(text)
    assert got[("forksync_forks", ())] == 1.0
    assert got[("forksync_forks_degraded", ())] == 1.0
    assert got[("forksync_forks_stale", ())] == 1.0
    assert got[("forksync_forks_upstream_age_alarm", ())] == 1.0
    assert got[("forksync_blocked_units", ())] == 1.0
    assert got[("forksync_dead_letter_alarm", (("reason", ""),))] == 1.0
    assert got[("forksync_queue_depth", (("state", "dead"),))] == 1.0


async def test_metrics_with_a_token_answer_only_its_bearer_and_name_every_fork(tmp_path):
    """With ``FORKSYNC_METRICS_TOKEN`` set, a scrape without ``Authorization: Bearer <token>`` is
    refused 401 and one with it gets every fork's series, named."""
    store = Store(tmp_path / "q.db")
    private_fork_in_trouble(store)
    client = TestClient(TestServer(make_app(store, SECRET, metrics=AppMetrics(lambda: store),
                                            metrics_token=METRICS_TOKEN)))
    await client.start_server()
    try:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": METRICS_TOKEN}):
            r = await client.get("/metrics", headers=headers)
            body = await r.text()
            assert (r.status, r.headers.get("WWW-Authenticate")) == (401, "Bearer"), headers
            assert "private-fork" not in body and METRICS_TOKEN not in body
        r = await client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
        got = samples(await r.text())
        assert r.status == 200
        assert got[("forksync_backlog", (("repo", PRIVATE),))] == 42.0
        assert got[("forksync_blocked_units", (("repo", PRIVATE),))] == 1.0
        assert got[("forksync_degraded", (("reason", "1 unit(s) blocked: bundle-1: refusing to allow a GitHub App to "
                                                     "create or update workflow .github/workflows/secret-rollout.yml"),
                                          ("repo", PRIVATE)))] == 1.0
    finally:
        await client.close()
        store.close()

async def test_healthz_and_metrics(env):
    client, store = env
    await post(client, "ping", "guid-6", {"zen": "x"})
    await post(client, "push", "guid-7", {"a": 1}, headers={"X-Hub-Signature-256": None})
    save(store, SyncStatus(repo="meta/triton", days_behind=3.5, backlog=42, upstream_seen_at=1.0, computed_at=1.0,
                           last_fetch_error="403 Forbidden"))
    r = await client.get("/healthz")
    assert (r.status, await r.json()) == (200, {"status": "ok", "queue": {
        "queued": 1, "processing": 0, "done": 0, "failed": 0, "dead": 0, "resolved": 0, "paused": 0, "dismissed": 0}})
    # the view a metrics token's bearer gets, every fork named
    text = generate_latest(client.server.app[METRICS_KEY].registry).decode()
    assert 'forksync_webhook_deliveries_total{event="ping",outcome="queued"} 1.0' in text
    assert 'forksync_webhook_deliveries_total{event="push",outcome="unsigned"} 1.0' in text
    assert 'forksync_queue_depth{state="queued"} 1.0' in text
    assert 'forksync_days_behind{repo="meta/triton"} 3.5' in text
    assert 'forksync_backlog{repo="meta/triton"} 42.0' in text
    assert 'forksync_metrics_stale{repo="meta/triton"} 1.0' in text
    assert 'forksync_upstream_age_alarm{repo="meta/triton"} 1.0' in text
    assert "forksync_upstream_age_seconds{repo=\"meta/triton\"}" in text
    assert "forksync_webhook_ack_seconds_count 1.0" in text
    assert 'forksync_delivery_latency_seconds{quantile="0.99"} 0.0' in text       # nothing processed yet


def test_empty_secret_is_refused(tmp_path):
    with pytest.raises(ValueError, match="a webhook secret is required"):
        make_app(Store(tmp_path / "x.db"), "")


async def test_a_64_deep_body_is_accepted(env):
    client, store = env
    status, out = await post(client, "ping", "guid-deep", None, body=b'{"a":' * 64 + b"1" + b"}" * 64)
    assert (status, out["queue"]) == (202, "queued")


async def test_every_refusal_is_logged_with_delivery_event_and_reason_never_the_body(env, caplog):
    client, store = env
    caplog.set_level(logging.WARNING, logger="bot.app.web")
    await post(client, "push", "guid-log-1", {"canary": "BODY-CANARY"}, headers={"X-Hub-Signature-256": "sha256=" + "0" * 64})
    await post(client, "issues", "guid-log-2\tforged", None, body=b"{BODY-CANARY")
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "webhook delivery refused: 401 signature check failed: the body's HMAC-SHA256 does not match the webhook "
        "secret (delivery='guid-log-1' event='push' hook='1' from 127.0.0.1)",
        "webhook delivery refused: 400 the body is not valid JSON: expecting property name enclosed in double quotes "
        "at line 1, column 2 (delivery='guid-log-2\\tforged' event='issues' hook='1' from 127.0.0.1)",
    ]
    assert "BODY-CANARY" not in caplog.text


async def test_oversized_content_length_is_413_before_the_body_is_read(env):
    client, store = env
    body = b"x" * (25 * 1024 * 1024 + 1)
    h = delivery_headers("push", "guid-big", b"{}", SECRET)
    r = await client.post("/webhook", data=body, headers=h)
    assert (r.status, (await r.json())["error"]) == (413, "payload larger than GitHub's 25 MB limit")
    assert q.counts(store)["queued"] == 0


async def test_chunked_body_over_the_cap_is_413(env):
    client, store = env

    async def chunks():
        for _ in range(26):
            yield b" " * (1024 * 1024)
    h = delivery_headers("push", "guid-chunked", b"{}", SECRET)
    r = await client.post("/webhook", data=chunks(), headers=h)
    assert (r.status, (await r.json())["error"]) == (413, "payload larger than GitHub's 25 MB limit")
    assert q.counts(store)["queued"] == 0


async def test_a_body_that_stalls_is_408(tmp_path):
    import asyncio
    store = Store(tmp_path / "q.db")
    client = TestClient(TestServer(make_app(store, SECRET, body_timeout_s=1.0)))
    await client.start_server()
    release = asyncio.Event()

    async def stalled():
        yield b'{"a":'
        await release.wait()            # never sent while the server waits
        yield b"1}"
    try:
        h = delivery_headers("push", "guid-slow", b'{"a":1}', SECRET)
        r = await client.post("/webhook", data=stalled(), headers=h)
        assert (r.status, (await r.json())["error"]) == (408, "the body was not received within 1 s")
        assert q.counts(store)["queued"] == 0
    finally:
        release.set()
        await client.close()
        store.close()


async def test_an_installation_id_sqlite_cannot_hold_is_stored_without_it_not_refused_with_503(env):
    # json.loads gives Python ints of any size; SQLite holds 64 bits. Such a signed body must be
    # stored like any other (its id dropped from the index: the body keeps it), never a 503
    client, store = env
    status, body = await post(client, "push", "guid-big", {"installation": {"id": 2 ** 64}, "repository": {"full_name": "o/r"},
                                                           "sender": {"login": "u"}})
    assert (status, body) == (202, {"delivery": "guid-big/1", "queue": "queued"})
    d = q.get(store, "guid-big/1")
    assert (d.installation_id, d.repo, json.loads(d.body)["installation"]["id"]) == (None, "o/r", 2 ** 64)


async def test_one_delivery_the_store_refuses_does_not_fail_the_others_of_its_batch(tmp_path):
    store = Store(tmp_path / "q.db")
    committer = GroupCommitter(store)
    try:
        def item(guid, inst):
            return dict(delivery_id=guid, hook_id="1", event="push", body=b"{}", content_type="application/json",
                        summary={"action": "", "installation_id": inst, "repo": "o/r", "sender": "u"})
        # one batch: the writer thread is held on the store's lock while all three are handed over
        with store.lock:
            subs = [asyncio.ensure_future(committer.submit(item(g, i))) for g, i in
                    (("ok-1", 1), ("bad", 2 ** 64), ("ok-2", 2))]
            await asyncio.sleep(0.05)
        done = await asyncio.gather(*subs, return_exceptions=True)
        assert done[0] == done[2] == "queued" and isinstance(done[1], OverflowError), done
        assert [q.get(store, f"{g}/1") is not None for g in ("ok-1", "bad", "ok-2")] == [True, False, True]
    finally:
        committer.close()
        store.close()


@pytest.mark.parametrize("view", ["registry", "public_registry"])
def test_metrics_help_of_blocked_units_names_a_failed_pick_too(tmp_path, view):
    """A unit is blocked when GitHub refused it and also when its pick failed without a conflict
    (step ``apply``, docs/github.md): the help texts of the series that count blocked units say
    both, never only "a unit GitHub refused"."""
    from prometheus_client.parser import text_string_to_metric_families  # lazy: a test helper's parser

    store = Store(tmp_path / "q.db")
    try:
        private_fork_in_trouble(store)
        text = generate_latest(getattr(AppMetrics(lambda: store), view)).decode()
    finally:
        store.close()
    docs = {f.name: f.documentation for f in text_string_to_metric_families(text)
            if f.name in ("forksync_degraded", "forksync_forks_degraded", "forksync_blocked_units")}
    assert len(docs) == 2, docs
    for name, doc in docs.items():
        assert "GitHub refused" in doc and "pick failed" in doc, (name, doc)
