"""Attempts to break the webhook ingress (real aiohttp app over real HTTP, the real store, the real
dispatcher and worker with the production routers): each test states what a person running
forksync expects of a delivery GitHub (or someone without the secret) could send."""
import asyncio
import json
import urllib.parse

import pytest

from bot.app import queue as q
from bot.app.dispatch import Dispatcher
from bot.app.web import delivery_headers, dumps
from bot.app.worker import Worker
from bot.handlers import all_routers

# the web app and a signed post over real HTTP, as test_web.py has them
from tests.app.test_web import SECRET, env, post  # noqa: F401


class Clock:
    def __init__(self, t=2_000_000_000.0):
        self.t = t

    def __call__(self):
        return self.t


async def drain(store):
    """Process every stored delivery once with the production routers (no GitHub: handlers that
    would need one never get that far for the deliveries used here)."""
    async def no_client(inst):
        return None

    clock = Clock()
    disp = Dispatcher(all_routers(), store, None, client_for=no_client, bot_login="forksync[bot]", now=clock)
    w = Worker(store, disp.process, policy=q.QueuePolicy(max_attempts=1), worker_id="t", clock=clock)
    await w.drain()


async def healthz(client):
    r = await client.get("/healthz")
    return r.status, await r.json()


# --- a delivery the intake accepted (202) must not then be lost by the worker ----------------------

async def test_form_encoded_delivery_with_a_content_type_in_capitals_is_processed_not_dead_lettered(env):  # noqa: F811
    # media types are case-insensitive (RFC 9110 §8.3.1); the intake accepts this one, so the
    # worker must be able to read what it stored
    client, store = env
    body = urllib.parse.urlencode({"payload": json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1})}).encode()
    status, out = await post(client, "ping", "guid-form-caps", None, body=body,
                             headers={"Content-Type": "Application/X-WWW-Form-Urlencoded"})
    assert (status, out["queue"]) == (202, "queued")
    await drain(store)
    d = q.get(store, "guid-form-caps/1")
    assert (d.state, d.outcome) == ("done", "pong"), d.dead_reason
    assert (await healthz(client))[0] == 200


async def test_a_json_body_in_the_charset_its_content_type_names_is_processed_not_dead_lettered(env):  # noqa: F811
    # the intake decodes the body with the charset of its Content-Type and answers 202; the worker
    # then decodes the stored bytes as UTF-8 whatever the charset, and dead-letters the delivery
    client, store = env
    body = json.dumps({"zen": "Ça marche", "hook_id": 1}, ensure_ascii=False).encode("latin-1")
    status, out = await post(client, "ping", "guid-latin1", None, body=body,
                             headers={"Content-Type": "application/json; charset=iso-8859-1"})
    assert status in (202, 400, 415), (status, out)
    if status == 202:        # accepted: it must then be processed, not lost
        await drain(store)
        d = q.get(store, "guid-latin1/1")
        assert (d.state, d.outcome) == ("done", "pong"), d.dead_reason
        assert (await healthz(client))[0] == 200


# --- malformed bodies: 4xx with a clear message, nothing stored --------------------------------------

@pytest.mark.parametrize("body", [b"[]", b'"push"', b"42", b"null", b"true"])
async def test_a_signed_body_that_is_json_but_not_an_object_is_refused_with_400_not_stored(env, body):  # noqa: F811
    client, store = env
    status, out = await post(client, "push", "guid-notobj", None, body=body)
    assert status == 400, (status, out)
    assert "object" in out["error"], out
    assert q.counts(store) == {s: 0 for s in q.STATES}


# --- text a SQLite row cannot hold: never a 5xx -------------------------------------------------------

@pytest.mark.parametrize("payload", [
    {"action": "created", "repository": {"full_name": "o/\ud800r"}, "sender": {"login": "u"}},
    {"action": "created", "repository": {"full_name": "o/r"}, "sender": {"login": "\udfffu"}},
    {"action": "\ud83d", "repository": {"full_name": "o/r"}, "sender": {"login": "u"}},
])
async def test_a_signed_payload_with_a_lone_surrogate_escape_is_stored_or_refused_4xx_never_503(env, payload):  # noqa: F811
    # json.dumps writes "\\ud800" (valid JSON text); json.loads gives a str with a lone surrogate,
    # which sqlite3 cannot encode: the delivery index must not turn that into a 503 (GitHub would
    # record a failure and every redelivery would fail the same way)
    client, store = env
    body = json.dumps(payload).encode()
    assert b"\\ud" in body.lower()
    status, out = await post(client, "issue_comment", "guid-surrogate", None, body=body)
    assert status < 500, (status, out)


# --- headers are not covered by the signature: odd bytes in them must never be a 5xx ----------------

async def raw_post(client, headers: list[tuple[bytes, bytes]], body: bytes) -> tuple[int, bytes]:
    """POST /webhook over a plain socket, header bytes exactly as given (aiohttp's client would
    refuse to send some of them)."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    lines = [b"POST /webhook HTTP/1.1", b"Host: localhost", b"Connection: close",
             b"Content-Length: " + str(len(body)).encode()]
    lines += [k + b": " + v for k, v in headers]
    writer.write(b"\r\n".join(lines) + b"\r\n\r\n" + body)
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), rest


@pytest.mark.parametrize("name", [b"X-GitHub-Event", b"X-GitHub-Delivery", b"X-GitHub-Hook-ID"])
async def test_a_signed_delivery_with_non_utf8_bytes_in_an_id_header_is_never_a_5xx(env, name):  # noqa: F811
    client, store = env
    body = dumps({"zen": "x", "hook_id": 1})
    good = {k.encode(): v.encode() for k, v in delivery_headers("ping", "guid-raw", body, SECRET).items()}
    good[name] = good[name] + b"\xff"
    status, out = await raw_post(client, list(good.items()), body)
    assert status < 500, (status, out)


# --- an event forksync does not know is acknowledged and ignored -------------------------------------

async def test_a_signed_event_forksync_has_never_heard_of_is_ignored_not_dead_lettered(env):  # noqa: F811
    # GitHub adds webhook events over time (and a repository hook can "send me everything"): an
    # event name missing from bot.github.events.GITHUB_EVENTS is still GitHub's (it is signed with
    # the secret). It must be acknowledged and ignored; a dead letter turns /healthz 503, which
    # takes the whole intake out of a load balancer, over an event no handler wanted.
    client, store = env
    status, out = await post(client, "code_quality_finding", "guid-new-event",
                             {"action": "created", "repository": {"full_name": "meta/triton"},
                              "sender": {"login": "octocat"}, "installation": {"id": 1}})
    assert (status, out["queue"]) == (202, "queued")
    await drain(store)
    d = q.get(store, "guid-new-event/1")
    assert d.state == "done" and d.outcome.startswith("ignored"), (d.state, d.dead_reason)
    assert (await healthz(client))[0] == 200


# --- concurrency: GitHub retries fast; the same delivery twice at once is stored once ----------------

async def test_the_same_delivery_posted_concurrently_is_stored_once(env):  # noqa: F811
    # (passes today; kept as cheap cover: the group commit batches simultaneous requests into one
    # transaction, and nothing else tests two copies of one GUID in the same batch)
    client, store = env
    payload = {"ref": "refs/heads/main", "repository": {"full_name": "triton-lang/triton"}, "sender": {"login": "u"}}
    got = await asyncio.gather(*[post(client, "push", "guid-same", payload) for _ in range(8)])
    assert sorted(out["queue"] for _, out in got) == ["duplicate"] * 7 + ["queued"]
    assert q.get(store, "guid-same/1").redeliveries == 7
