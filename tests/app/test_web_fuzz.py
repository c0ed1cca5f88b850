"""2,000 fuzzed deliveries through the real web app (in-process aiohttp server) and the real
worker with the production handlers: the server never crashes, unsigned/unparsable deliveries
get 4xx and are not stored, every signed one is stored and ends done or dead-lettered with a
reason."""
import asyncio
import json
import logging
import tempfile
import time
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from bot.app import queue as q
from bot.app.dispatch import Dispatcher
from bot.app.web import delivery_headers, make_app
from bot.app.worker import Worker
from bot.handlers import all_routers
from bot.store import Store

SECRET = "fuzz-secret"
logging.getLogger("bot.app.worker").setLevel(logging.ERROR)   # thousands of expected dead letters
SEEDS_DIR = Path(__file__).resolve().parents[2] / "bot" / "fakegithub" / "spec" / "webhooks"
SEEDS = {p.stem: json.loads(p.read_text()) for p in sorted(SEEDS_DIR.glob("*.json"))}
EVENTS = sorted({k.split(".")[0] for k in SEEDS}) + ["frobnicate", "", "x" * 150]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12)


@st.composite
def payloads(draw):
    """A real example payload with a few keys dropped or replaced, or random JSON."""
    if draw(st.booleans()):
        return draw(json_values)
    seed = json.loads(json.dumps(SEEDS[draw(st.sampled_from(sorted(SEEDS)))]))
    for _ in range(draw(st.integers(0, 4))):
        node = seed
        path = []
        while isinstance(node, dict) and node and draw(st.booleans()):
            k = draw(st.sampled_from(sorted(node)))
            path.append(k)
            if not isinstance(node[k], dict):
                break
            node = node[k]
        if isinstance(node, dict) and node:
            k = draw(st.sampled_from(sorted(node)))
            if draw(st.booleans()):
                del node[k]
            else:
                node[k] = draw(json_values)
    return seed


@st.composite
def deliveries(draw):
    kind = draw(st.sampled_from(["signed", "signed", "signed", "unsigned", "bad_signature", "garbage", "no_event"]))
    event = draw(st.sampled_from(EVENTS))
    body = json.dumps(draw(payloads())).encode()
    if kind == "garbage":
        body = draw(st.binary(max_size=64).filter(lambda b: not _is_json(b)))
    return kind, event, body


def _is_json(b: bytes) -> bool:
    try:
        json.loads(b.decode("utf-8"))
        return True
    except ValueError:
        return False


class Clock:
    def __init__(self):
        self.t = time.time() + 1

    def __call__(self):
        return self.t


async def run_batch(batch):
    # tmpfs when available: this test is about input handling, not fsync durability (test_queue*)
    with tempfile.TemporaryDirectory(dir="/dev/shm" if Path("/dev/shm").is_dir() else None) as tmp:
        store = Store(Path(tmp) / "f.db")
        client = TestClient(TestServer(make_app(store, SECRET)))
        await client.start_server()
        expected_stored = set()
        try:
            for n, (kind, event, body) in enumerate(batch):
                guid = f"fuzz-{n}"
                h = delivery_headers(event or "x", guid, body, SECRET, hook_id="")
                h.pop("X-GitHub-Hook-ID")
                if kind == "unsigned":
                    h.pop("X-Hub-Signature-256")
                elif kind == "bad_signature":
                    h["X-Hub-Signature-256"] = "sha256=" + "ab" * 32
                elif kind == "no_event":
                    h.pop("X-GitHub-Event")
                r = await client.post("/webhook", data=body, headers=h)
                assert r.status < 500, (kind, event, body[:80], r.status)
                if kind in ("unsigned", "bad_signature"):
                    assert r.status == 401
                elif kind in ("garbage", "no_event"):
                    assert r.status == 400, (kind, body[:100], h.get("X-GitHub-Event"))
                elif len(event or "x") > 100:
                    assert r.status == 400, (kind, body[:100], h.get("X-GitHub-Event"))
                elif not isinstance(json.loads(body), dict):      # JSON, but no webhook payload is a list or a scalar
                    assert r.status == 400, (kind, body[:100], await r.text())
                else:
                    assert r.status == 202, await r.text()
                    expected_stored.add(guid)
        finally:
            await client.close()
        stored = {d.id for d in q.listing(store, limit=10_000)}
        assert stored == expected_stored

        async def no_client(inst):
            return None

        clock = Clock()
        disp = Dispatcher(all_routers(), store, None, client_for=no_client, bot_login="forksync[bot]", now=clock)
        w = Worker(store, disp.process, policy=q.QueuePolicy(max_attempts=2, backoff_base_s=1, backoff_cap_s=2),
                   worker_id="fuzz", clock=clock)
        for _ in range(4):
            await w.drain()
            clock.t += 10
        rows = q.listing(store, limit=10_000)
        assert {d.state for d in rows} <= {"done", "dead"}, [(d.id, d.state, d.last_error) for d in rows]
        assert all(d.dead_reason for d in rows if d.state == "dead")
        store.close()


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), database=None,
          phases=[Phase.generate], print_blob=False)
@given(st.lists(deliveries(), min_size=20, max_size=20))
def test_two_thousand_fuzzed_deliveries_never_crash_the_server(batch):
    asyncio.run(run_batch(batch))
