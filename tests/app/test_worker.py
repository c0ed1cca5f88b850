"""The worker and dispatcher on a real store: done / retry / dead-letter, loop guard, routing."""
import json

import pytest
from gidgethub import routing

from bot.app import queue as q
from bot.app.dispatch import Dispatcher, PayloadError
from bot.app.worker import Worker
from bot.store import Store


class Clock:
    def __init__(self, t=1000.0):
        self.t = t

    def __call__(self):
        return self.t


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "w.db")
    yield s
    s.close()


def put(store, guid, event, payload, now=1000.0):
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return q.enqueue(store, delivery_id=guid, hook_id="", event=event, body=body,
                     summary=q.summarize_payload(payload if isinstance(payload, dict) else None), now=now)


def make(store, clock, calls, flaky=None):
    router = routing.Router()

    @router.register("push")
    async def on_push(event, ctx):
        if "ref" not in event.data:
            raise PayloadError("push without ref")
        if flaky and flaky["left"] > 0:
            flaky["left"] -= 1
            raise ConnectionResetError("fake network blip")
        calls.append((ctx.delivery.delivery_id, event.data["ref"], ctx.installation_id, ctx.gh))
        ctx.note(f"pushed {event.data['ref']}")

    @router.register("pull_request", action="opened")
    async def on_opened(event, ctx):
        calls.append(("pr", event.data["number"]))

    async def client_for(inst):
        return f"client-{inst}"

    disp = Dispatcher(router, store, None, client_for=client_for, bot_login="forksync[bot]", now=clock)
    return Worker(store, disp.process, policy=q.QueuePolicy(max_attempts=3, backoff_base_s=1, backoff_cap_s=4),
                  worker_id="w1", clock=clock)


async def test_outcomes_of_every_kind(store):
    clock, calls = Clock(), []
    w = make(store, clock, calls)
    put(store, "ok", "push", {"ref": "refs/heads/main", "installation": {"id": 3}, "sender": {"login": "ana"}})
    put(store, "own", "push", {"ref": "x", "sender": {"login": "forksync[bot]"}})
    # GitHub logins are case-insensitive: the bot's own event, its login spelled in another case
    put(store, "own-cased", "push", {"ref": "x", "sender": {"login": "ForkSync[Bot]"}})
    put(store, "noref", "push", {"sender": {"login": "ana"}})
    put(store, "list", "push", [1, 2])
    put(store, "bytes", "push", b"\xff")
    put(store, "unknown", "frobnicate", {"a": 1})
    put(store, "known-unhandled", "check_suite", {"action": "requested"})
    put(store, "github-unsubscribed", "star", {"action": "created"})
    put(store, "no-action-match", "pull_request", {"action": "closed"})
    put(store, "bad-action", "pull_request", {"action": ["opened"]})
    assert await w.drain() == 11
    got = {d.delivery_id: (d.state, d.outcome or d.dead_reason) for d in q.listing(store)}
    assert got == {
        "ok": ("done", "pushed refs/heads/main"),
        "own": ("done", "ignored: sent by forksync[bot] (loop guard)"),
        "own-cased": ("done", "ignored: sent by ForkSync[Bot] (loop guard)"),
        "noref": ("dead", "cannot be handled: malformed push payload: push without ref"),
        "list": ("dead", "cannot be handled: the stored body is not a webhook payload: the JSON body is a list, not an object: "
                         "no webhook payload"),
        "bytes": ("dead", "cannot be handled: the stored body is not a webhook payload: the body is not valid JSON"),
        # signed, so GitHub's: an event newer than forksync's list of them, acknowledged
        "unknown": ("done", "ignored: 'frobnicate' is not an event forksync knows (newer than its list of GitHub's events?)"),
        "known-unhandled": ("done", "ignored: no handler for check_suite in this bot"),
        # GitHub's own event, from a webhook sending everything: acknowledged, not a dead letter
        "github-unsubscribed": ("done", "ignored: no handler for star in this bot"),
        "no-action-match": ("done", "ignored: nothing handles pull_request.closed"),
        "bad-action": ("dead", "cannot be handled: malformed pull_request payload: 'action' is a list, not a string"),
    }
    assert calls == [("ok", "refs/heads/main", 3, "client-3")]


async def test_transient_errors_are_retried_with_backoff_then_succeed_once(store):
    clock, calls = Clock(), []
    w = make(store, clock, calls, flaky={"left": 2})
    put(store, "g", "push", {"ref": "r"})
    assert await w.drain() == 1                  # attempt 1 fails, backing off
    assert q.get(store, "g").state == "failed"
    assert q.get(store, "g").last_error == "ConnectionResetError: fake network blip"
    clock.t += 10
    await w.drain()                              # attempt 2 fails
    clock.t += 10
    await w.drain()                              # attempt 3 succeeds
    d = q.get(store, "g")
    assert (d.state, d.attempts, d.outcome) == ("done", 3, "pushed r")
    assert calls == [("g", "r", None, "client-None")]


async def test_persistent_errors_end_dead_with_the_last_error(store):
    clock, calls = Clock(), []
    w = make(store, clock, calls, flaky={"left": 99})
    put(store, "g", "push", {"ref": "r"})
    for _ in range(5):
        await w.drain()
        clock.t += 10
    d = q.get(store, "g")
    assert (d.state, d.dead_reason) == ("dead", "gave up after 3 attempts; last error: ConnectionResetError: fake network blip")
    assert calls == []


async def test_redelivery_of_done_is_not_processed_again_and_of_dead_is(store):
    clock, calls = Clock(), []
    w = make(store, clock, calls)
    put(store, "a", "push", {"ref": "r"})
    await w.drain()
    assert put(store, "a", "push", {"ref": "r"}) == "duplicate"
    assert await w.drain() == 0
    put(store, "b", "push", {"x": 1})
    await w.drain()
    assert q.get(store, "b").state == "dead"
    assert put(store, "b", "push", {"x": 1}) == "requeued"
    await w.drain()
    assert q.get(store, "b").state == "dead"          # still unhandleable, visible again
    assert calls == [("a", "r", None, "client-None")]



@pytest.mark.parametrize("batch", [False, True])
async def test_a_redelivery_handled_after_dead_calls_on_resolved_once(store, batch):
    """The handler renders nothing on the status issue, so the worker must have it re-rendered:
    the dead letter it listed is resolved."""
    clock, calls, flaky, resolved = Clock(), [], {"left": 3}, []
    w = make(store, clock, calls, flaky)

    async def on_resolved(ds):
        resolved.append([d.id for d in ds])
    w.on_resolved = on_resolved
    put(store, "e", "push", {"ref": "r", "repository": {"full_name": "o/fork"}})
    for _ in range(4):
        await (w.run_batch() if batch else w.drain())
        clock.t += 10
    assert q.get(store, "e").state == "dead" and resolved == []
    assert put(store, "e", "push", {"ref": "r", "repository": {"full_name": "o/fork"}}, now=clock.t) == "requeued"
    await (w.run_batch() if batch else w.drain())
    assert q.get(store, "e").state == "done" and resolved == [["e"]]
    assert q.dead_letters(store) == []

async def test_one_failing_handler_does_not_stop_the_others(store):
    router = routing.Router()
    ran = []

    @router.register("issues", action="edited")
    async def a_fails(event, ctx):
        raise ConnectionResetError("blip")

    @router.register("issues", action="edited")
    async def b_works(event, ctx):
        ran.append(ctx.delivery.attempts)

    async def client_for(inst):
        return None

    clock = Clock()
    disp = Dispatcher(router, store, None, client_for=client_for, now=clock)
    w = Worker(store, disp.process, policy=q.QueuePolicy(max_attempts=2, backoff_base_s=1, backoff_cap_s=1),
               worker_id="w", clock=clock)
    put(store, "e", "issues", {"action": "edited"})
    await w.drain()
    clock.t += 5
    await w.drain()
    assert ran == [1, 2]
    assert q.get(store, "e").dead_reason == "gave up after 2 attempts; last error: ConnectionResetError: blip"


async def wait_until(pred, what, limit_s=60.0):
    """Poll ``pred`` (real time); the limit bounds a broken test, it is no budget."""
    import asyncio
    loop = asyncio.get_running_loop()
    end = loop.time() + limit_s
    while not pred():
        assert loop.time() < end, f"gave up waiting for {what}"
        await asyncio.sleep(0.02)


async def test_a_long_delivery_keeps_its_worker_beating_and_its_batch_leased(store):
    """A sync runs for minutes: while it does, /healthz must still see the worker's heartbeat, and
    neither the delivery in progress nor the rest of its batch may be claimed by another worker
    when the lease time passes (they would run twice, at the same time)."""
    import asyncio
    import threading
    clock, release, started, ran = Clock(), asyncio.Event(), asyncio.Event(), []

    async def process(d):
        ran.append(d.id)
        started.set()
        if d.id == "long":
            await release.wait()
        return "ok"

    w = Worker(store, process, policy=q.QueuePolicy(lease_s=120), worker_id="w1", clock=clock, heartbeat_every_s=0.05)
    put(store, "long", "push", {"ref": "r"}, now=999.0)
    put(store, "next", "push", {"ref": "r"}, now=999.5)
    stop = threading.Event()
    task = asyncio.create_task(w.run(stop))
    try:
        await asyncio.wait_for(started.wait(), 60)
        clock.t += 200                             # past the heartbeat limit (30 s) and the lease (120 s)
        await wait_until(lambda: q.last_heartbeat(store) == clock.t, "a heartbeat while the delivery runs")
        assert q.claim_many(store, "w2", 32, q.QueuePolicy(lease_s=120), now=clock.t) == []
        release.set()
        await wait_until(lambda: q.counts(store)["done"] == 2, "both deliveries done")
    finally:
        stop.set()
        release.set()
        await asyncio.wait_for(task, 60)
    assert ran == ["long", "next"]
    assert {d.id: (d.state, d.attempts) for d in q.listing(store)} == {"long": ("done", 1), "next": ("done", 1)}


async def test_stopping_mid_batch_starts_no_further_delivery_and_hands_the_rest_back(store):
    """A burst claimed as one batch: SIGTERM during its first delivery must not wait for the other
    31, nor leave them leased to a worker that is gone."""
    import threading
    clock, stop, ran = Clock(), threading.Event(), []

    async def process(d):
        ran.append(d.id)
        stop.set()                                  # SIGTERM arrives while the first one runs
        return "ok"

    w = Worker(store, process, worker_id="w1", clock=clock)
    for i in range(3):
        put(store, f"d{i}", "push", {"ref": "r"}, now=990.0 + i)
    assert await w.run_batch(stop=stop) == 3
    assert ran == ["d0"]
    got = {d.id: (d.state, d.attempts) for d in q.listing(store)}
    assert got == {"d0": ("done", 1), "d1": ("queued", 0), "d2": ("queued", 0)}
    assert [d.id for d in q.claim_many(store, "w2", 32, now=clock.t)] == ["d1", "d2"]


def test_a_lease_of_an_earlier_process_under_this_pid_is_released_at_once(store):
    """A restarted container runs its worker under the pid its last one had (often 1): the owner
    ``host:pid:thread`` names a thread this process does not have, so it is dead, not a sibling."""
    import os
    import socket
    import threading

    from bot.app.worker import same_host_owner_alive
    me = f"{socket.gethostname()}:{os.getpid()}"
    gone = max(t.ident for t in threading.enumerate()) + 1
    assert same_host_owner_alive(f"{me}:{threading.get_ident()}")
    assert not same_host_owner_alive(f"{me}:{gone}")
    put(store, "d", "push", {"ref": "r"})
    q.claim(store, f"{me}:{gone}", now=1000.0)
    assert q.release_orphans(store, same_host_owner_alive) == ["d"]


async def test_a_hung_delivery_is_stopped_at_the_time_limit_and_its_lease_released(store):
    """A handler that never returns (a git fetch that hangs, an HTTP call without a timeout) must
    not keep its lease for ever through the heartbeat that renews it: past the delivery time limit
    (``QueuePolicy``'s default; the worker's clock is moved a week on) it is cancelled, the attempt
    is failed with a reason a person can read, and the delivery is claimable again after its backoff."""
    import asyncio
    import threading
    clock, started, cancelled = Clock(), asyncio.Event(), []

    async def process(d):
        started.set()
        try:
            await asyncio.Event().wait()            # hangs for ever
        except asyncio.CancelledError:
            cancelled.append(d.id)
            raise
        return "never"

    w = Worker(store, process, worker_id="w1", clock=clock, heartbeat_every_s=0.05)
    put(store, "hung", "push", {"ref": "r"}, now=999.0)
    stop = threading.Event()
    task = asyncio.create_task(w.run(stop))
    try:
        await asyncio.wait_for(started.wait(), 60)
        clock.t += 7 * 24 * 3600
        await wait_until(lambda: q.get(store, "hung").state != "processing", "the hung delivery to be stopped")
    finally:
        stop.set()
        await asyncio.wait_for(task, 60)
    d = q.get(store, "hung")
    assert cancelled == ["hung"]
    assert (d.state, d.attempts) == ("failed", 1)
    assert d.last_error.startswith("timed out: still running after ")
    clock.t += 3600                                  # past the retry backoff: another worker takes it
    assert [x.id for x in q.claim_many(store, "w2", 32, now=clock.t)] == ["hung"]


async def test_the_time_limit_is_the_policys_and_healthz_shows_a_hung_delivery_until_it_succeeds(store):
    """A limit of a few seconds (of the worker's clock): an attempt past it is failed at once — not
    when the rest of its batch ends — while a slow one within it finishes; ``/healthz`` names the
    hung delivery until a retry succeeds."""
    import asyncio
    import threading

    from bot.app.web import app_facts
    clock, started, hang = Clock(), asyncio.Event(), {"hung": True}

    async def process(d):
        if d.id == "hung" and hang["hung"]:
            started.set()
            await asyncio.Event().wait()
        return f"ok {d.id}"

    w = Worker(store, process, policy=q.QueuePolicy(delivery_timeout_s=3, backoff_base_s=10, backoff_cap_s=10),
               worker_id="w1", clock=clock, heartbeat_every_s=0.05)
    put(store, "hung", "push", {"ref": "r"}, now=999.0)
    stop = threading.Event()
    task = asyncio.create_task(w.run(stop))
    try:
        await asyncio.wait_for(started.wait(), 60)
        clock.t += 2                                  # within the limit: still running, still leased
        await wait_until(lambda: q.last_heartbeat(store) == clock.t, "a heartbeat")
        assert q.get(store, "hung").state == "processing"
        clock.t += 2                                  # 4 s > 3 s
        await wait_until(lambda: q.get(store, "hung").state == "failed", "the attempt to be failed")
        facts = app_facts(store, clock.t)
        assert facts["status"] == "unhealthy"
        assert facts["problems"] == ["delivery hung (push) hung: timed out: still running after 3 s (the delivery time "
                                     "limit, FORKSYNC_DELIVERY_TIMEOUT_S); cancelled, to be retried (`forksync queue`)"]
        hang["hung"] = False                          # the retry goes through
        clock.t += 11
        w.wake.set()
        await wait_until(lambda: q.get(store, "hung").state == "done", "the retry to succeed")
    finally:
        stop.set()
        w.wake.set()
        await asyncio.wait_for(task, 60)
    assert (q.get(store, "hung").attempts, app_facts(store, clock.t)["problems"]) == (2, [])
