"""The webhook web app (aiohttp): ``POST /webhook``, ``GET /healthz``, ``GET /metrics``.

``POST /webhook`` (GitHub's delivery contract: docs.github.com "Validating webhook deliveries",
"Handling webhook deliveries"):

1. ``X-Hub-Signature-256`` must be ``sha256=`` + 64 hex digits (no ``sha1=``; the legacy
   ``X-Hub-Signature`` alone is refused) → else **401** before the body is read; the content type
   must be JSON or form-encoded → else **415**; a ``Content-Length`` over 25 MB → **413**.
2. The body is read in chunks through HMAC-SHA256(secret) and spooled to a temporary file past
   :data:`SPOOL_IN_MEMORY`, up to 25 MB (**413**) within ``body_timeout_s`` (**408**); a digest
   that does not match → **401**, nothing stored. Rules: :mod:`bot.app.intake`.
3. The body must be JSON (or form-encoded ``payload=``) nested at most 64 deep, and
   ``X-GitHub-Event`` / ``X-GitHub-Delivery`` present → else **400**.
4. The delivery is stored in the durable queue (:mod:`bot.app.queue`, committed with
   ``synchronous=FULL``) and only then answered **202** ``{"delivery": id, "queue": "queued" |
   "requeued" | "duplicate"}``. If storing fails the answer is **503** so GitHub records a failed
   delivery that can be redelivered, and ``GET /healthz`` is unhealthy until a delivery, or a
   write ``/healthz`` tries itself, is stored again (a full volume refuses them all).

Every refusal is logged at WARNING with the status, the reason, the delivery id, event and hook
id (quoted, cut to 200 characters) and never the body. A connection that does not finish its
headers is closed by the server's keep-alive timer (``forksync serve --header-timeout``).

Processing happens later in :mod:`bot.app.worker`; this module never calls GitHub.
"""
from __future__ import annotations

import asyncio
import hmac
import json
import logging
import sqlite3
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from bot.agents.redact import error_text, scrub
from bot.app import queue as q
from bot.app.health import HealthPolicy, Problem, judge, unnamed, warnings
from bot.app.intake import (
    MAX_BODY,
    Rejected,
    check_ids,
    content_kind,
    decode_payload,
    for_log,
    new_mac,
    printable,
    signature_digest,
    signature_matches,
)
from bot.app.metrics import AppMetrics
from bot.store import Store
from bot.sync import store as sync_store

log = logging.getLogger(__name__)

#: Body bytes kept in memory while the signature is not yet checked; the rest is spooled to a
#: temporary file, so senders without the secret cannot make the server hold their uploads.
SPOOL_IN_MEMORY = 256 * 1024
#: Seconds to receive a whole body once the headers are in (GitHub itself gives up after 10 s).
BODY_TIMEOUT_S = 30.0
#: While the store refuses deliveries, ``/healthz`` and the health page try a write of their own at
#: most this often (seconds) to learn that it can be written again.
PROBE_EVERY_S = 10.0

class GroupCommitter:
    """Stores deliveries from one writer thread, many per transaction (group commit).

    Requests hand their delivery to :meth:`submit` and wait; the thread takes everything that
    arrived while the previous commit was being fsynced (up to ``max_batch``) and commits it in
    one transaction (:func:`bot.app.queue.enqueue_many`). Each request is answered only after *its*
    transaction committed, so durability per delivery is unchanged while the fsync cost is shared.
    A batch the store refuses is stored again one delivery per transaction, so only the delivery
    at fault is answered 503, never its batchmates.

    :meth:`refused` remembers the store's refusals since the last delivery it stored (a full
    volume, a read-only or failing disk refuses every one): ``/healthz`` is unhealthy meanwhile,
    since every event GitHub sends is then lost (GitHub does not redeliver by itself).
    ``clock``: epoch s.
    """

    def __init__(self, store: Store, max_batch: int = 256, clock: Callable[[], float] = time.time):
        import queue as stdqueue
        self.store = store
        self.max_batch = max_batch
        self.clock = clock
        self._refused: dict | None = None      # replaced whole, never mutated: read from other threads
        self._probed_at = float("-inf")         # when recheck last tried a write (clock's epoch s)
        self._q: "stdqueue.Queue" = stdqueue.Queue()
        self._thread = threading.Thread(target=self._run, name="forksync-enqueue", daemon=True)
        self._thread.start()

    async def submit(self, item: dict) -> str:
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._q.put((item, loop, fut))
        return await fut

    def close(self) -> None:
        self._q.put(None)
        self._thread.join(timeout=10)

    def refused(self) -> dict | None:
        """The store's refusals since it last stored a delivery: ``{"since", "at"}`` (epoch s of the
        first and the newest), ``"count"`` (deliveries answered 503), ``"error"`` (the newest, one
        line); None when the newest delivery was stored (or none came)."""
        return self._refused

    def recheck(self) -> dict | None:
        """:meth:`refused`, after trying a write of the intake's own (:func:`bot.app.queue.probe_write`)
        at most once every :data:`PROBE_EVERY_S`. While refusing, a volume freed again clears the
        refusal without waiting for a delivery — which may never come, since a load balancer takes
        an instance whose ``/healthz`` is 503 out of rotation; a failed write keeps the refusal
        (its error updated). While storing, a failed write is a refusal of ``count`` 0: the volume
        filled while no delivery came (the workers' writes, their heartbeat included, fail too, and
        the next delivery would be lost) — but not ``database is locked``, which only says another
        writer held the lock past the wait. Blocking (a write): call it off the event loop."""
        was = self._refused
        now = self.clock()
        if now - self._probed_at < PROBE_EVERY_S:
            return was
        self._probed_at = now
        try:
            q.probe_write(self.store, now)
        except Exception as e:  # noqa: BLE001 - refusing: said by /healthz with the newest error
            if was is None and _busy(e):
                return None         # another writer held the lock past the wait: the store is written
            if self._refused is was:
                self._refused = ({**was, "error": error_text(e, 300)} if was is not None else
                                 {"since": now, "at": now, "count": 0, "error": error_text(e, 300)})
        else:
            if self._refused is was:        # no delivery refused meanwhile
                self._refused = None
        return self._refused

    def _outcome(self, error: Exception | None, n: int = 1) -> None:
        if error is None:
            self._refused = None
            return
        now, was = self.clock(), self._refused
        self._refused = {"since": was["since"] if was else now, "at": now, "count": (was["count"] if was else 0) + n,
                         "error": error_text(error, 300)}

    def _run(self) -> None:
        import queue as stdqueue
        while True:
            first = self._q.get()
            if first is None:
                return
            batch = [first]
            while len(batch) < self.max_batch:
                try:
                    nxt = self._q.get_nowait()
                except stdqueue.Empty:
                    break
                if nxt is None:
                    self._q.put(None)
                    break
                batch.append(nxt)
            try:
                results = q.enqueue_many(self.store, [b[0] for b in batch])
            except Exception:  # noqa: BLE001 - one delivery must not fail its batchmates: each on its own
                for item, loop, fut in batch:
                    try:
                        [res] = q.enqueue_many(self.store, [item])
                    except Exception as e:  # noqa: BLE001 - this waiter learns it was not stored
                        self._outcome(e)
                        loop.call_soon_threadsafe(_set_exc, fut, e)
                    else:
                        self._outcome(None)
                        loop.call_soon_threadsafe(_set_result, fut, res)
                continue
            self._outcome(None)
            for (_item, loop, fut), res in zip(batch, results):
                loop.call_soon_threadsafe(_set_result, fut, res)


def _busy(e: Exception) -> bool:
    """SQLite's ``SQLITE_BUSY`` (``database is locked``): another connection held the write lock
    past ``busy_timeout``."""
    return isinstance(e, sqlite3.OperationalError) and (
        (getattr(e, "sqlite_errorcode", 0) or 0) & 0xFF == sqlite3.SQLITE_BUSY or "database is locked" in str(e))


def _set_result(fut, value) -> None:
    if not fut.done():
        fut.set_result(value)


def _set_exc(fut, exc) -> None:
    if not fut.done():
        fut.set_exception(exc)


STORE_KEY = web.AppKey("forksync_store", Store)
METRICS_KEY = web.AppKey("forksync_metrics", AppMetrics)
COMMITTER_KEY = web.AppKey("forksync_committer", GroupCommitter)


def app_facts(store: Store, now: float, *, expect_worker: bool = False, recent_restarts: int = 0,
              policy: HealthPolicy = HealthPolicy(), store_refused: dict | None = None) -> dict:
    """The App's health facts for the dashboard (``forksync.dashboard.health/1``): the status,
    problems and warnings ``/healthz`` answers, each fork's named (``/healthz`` counts those,
    :func:`bot.app.health.unnamed`), ``problem_forks`` and ``warning_forks`` (the fork each
    line names, in the same order; ``""`` for the App as a whole), deliveries per state, dead letters, the
    dead letters an operator dismissed (no alarm, still shown: :func:`bot.app.queue.dismissed_letters`),
    recent errors, and the newest worker heartbeat (epoch s or None). ``store_refused``:
    :meth:`GroupCommitter.refused` of the intake in this process."""
    depth, beat, found, warned = _health(store, now, expect_worker, recent_restarts, policy, store_refused)
    return {"status": "unhealthy" if found else "ok", "problems": [p.text for p in found],
            "problem_forks": [p.fork for p in found], "warnings": [w.text for w in warned],
            "warning_forks": [w.fork for w in warned], "deliveries": depth,
            "dead": q.dead_letters(store), "dismissed": q.dismissed_letters(store),
            "recent_errors": q.recent_errors(store), "worker_heartbeat": beat}


def _health(store: Store, now: float, expect_worker: bool, recent_restarts: int, policy: HealthPolicy,
            store_refused: dict | None = None) -> tuple[dict[str, int], float | None, list[Problem], list[Problem]]:
    """``(deliveries per state, newest worker heartbeat, problems, warnings)``: what ``/healthz``
    and the dashboard's health page both judge by (:func:`bot.app.health.judge` and
    :func:`bot.app.health.warnings`; a worker counts as live within ``heartbeat_stale_s``). The
    lines go through :func:`bot.agents.redact.scrub`: ``/healthz`` is answered without a login, and
    an error stored by a release that did not scrub it may hold a token or a URL's password."""
    depth = q.counts(store)
    beat = q.last_heartbeat(store)
    paused = sync_store.paused_forks(store)
    # a paused fork's jobs do not run: a failure from before the pause is not failing again
    paused_names = {p["fork"] for p in paused}
    jobs = [j for j in sync_store.failing_jobs(store) if j["repo"] not in paused_names] + sync_store.failing_app_jobs(store)
    found = judge(now, counts=depth, oldest_due_at=q.oldest_due_at(store, now),
                  last_beat_at=beat if expect_worker else None, expect_worker=expect_worker,
                  recent_restarts=recent_restarts, policy=policy, failing_jobs=jobs,
                  timed_out=q.timed_out(store), store_refused=store_refused)
    warned = warnings(login_unknown=q.login_unknown(store, now - policy.heartbeat_stale_s), paused=paused,
                      paused_deliveries=q.paused_by_installation(store) if depth.get("paused") else [],
                      suspended=sync_store.suspended(store), now=now,
                      degraded=[{"fork": st.repo, "reason": st.degraded()} for st in sync_store.load_all_statuses(store)
                                if st.degraded() and st.repo not in paused_names | set(sync_store.unfollowed(store))])
    return depth, beat, [p._replace(text=scrub(p.text)) for p in found], [w._replace(text=scrub(w.text)) for w in warned]


def mount_dashboard(app: web.Application, store: Store, *, access=None, expect_worker: bool = False,
                    worker_restarts: Callable[[], int] | None = None, health_policy: HealthPolicy = HealthPolicy(),
                    clock: Callable[[], float] = time.time) -> None:
    """Serve the dashboard (:mod:`bot.dashboard`) on ``app`` from ``store`` (a connection of its own)."""
    from bot.dashboard.web import Dashboard, add_dashboard  # lazy: the pages' libraries load only where they are served

    committer = app.get(COMMITTER_KEY)         # the webhook intake of this app, when it has one
    add_dashboard(app, Dashboard(
        store=store, clock=clock, access=access, queue_counts=lambda: q.counts(store),
        app_facts=lambda: app_facts(store, clock(), expect_worker=expect_worker,
                                    recent_restarts=worker_restarts() if worker_restarts else 0, policy=health_policy,
                                    store_refused=committer.recheck() if committer is not None else None)))


def _json(code: int, **body) -> web.Response:
    return web.json_response(body, status=code)


def make_app(store: Store, secret: str, *, metrics: AppMetrics | None = None,
             wake: threading.Event | None = None, store_factory: Callable[[], Store] | None = None,
             body_timeout_s: float = BODY_TIMEOUT_S, expect_worker: bool = False,
             worker_restarts: Callable[[], int] | None = None, health_policy: HealthPolicy = HealthPolicy(),
             clock: Callable[[], float] = time.time, metrics_token: str = "") -> web.Application:
    """Build the aiohttp application.

    ``store`` is used for enqueueing only, from one dedicated thread with group commit
    (:class:`GroupCommitter`; SQLite writes never block the event loop). ``secret`` is the webhook secret; an empty secret is refused here because
    gidgethub would then skip verification. ``wake`` is set after each stored delivery (to wake
    an in-process worker). ``store_factory`` gives the metrics collector a connection of its own.
    ``body_timeout_s``: a body not received within this many seconds is answered 408. (The
    header timeout is the server's: ``keepalive_timeout`` in :func:`bot.cli.serve.run_serve`.)
    ``GET /healthz`` judges with :func:`bot.app.health.judge` (deliveries the store refused since it
    last stored one: :meth:`GroupCommitter.refused`; and adds
    :func:`bot.app.health.warnings` to its answer, which they never turn 503): ``expect_worker`` (a worker
    must beat its heartbeat), ``worker_restarts()`` (restarts in the policy's window),
    ``health_policy`` and ``clock`` (epoch s).
    ``GET /metrics``: with ``metrics_token`` set, only a request with ``Authorization: Bearer
    <metrics_token>`` is answered (401 otherwise), with every fork's series
    (:attr:`AppMetrics.registry`); without one, everyone gets the series that name no fork
    (:attr:`AppMetrics.public_registry`): the port is the webhook's, reachable from the internet.
    """
    if not secret:
        raise ValueError("a webhook secret is required (FORKSYNC_WEBHOOK_SECRET or --webhook-secret)")
    metrics = metrics or AppMetrics(store_factory or (lambda: store))
    q.web_durability(store)
    committer = GroupCommitter(store, clock=clock)
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="forksync-web")
    app = web.Application(client_max_size=MAX_BODY)
    app[STORE_KEY] = store
    app[METRICS_KEY] = metrics
    app[COMMITTER_KEY] = committer

    def reject(request: web.Request, label: str, r: Rejected, *, close: bool = False) -> web.Response:
        metrics.deliveries.labels(label, r.outcome).inc()
        log.warning("webhook delivery refused: %d %s (delivery=%s event=%s hook=%s from %s)", r.status, r.reason,
                    for_log(request.headers.get("X-GitHub-Delivery")), for_log(request.headers.get("X-GitHub-Event")),
                    for_log(request.headers.get("X-GitHub-Hook-ID")), request.remote)
        resp = _json(r.status, error=r.reason)
        if close:           # the body was not read: do not wait for it on a kept-alive connection
            resp.force_close()
        return resp

    async def read_signed(request: web.Request, claimed: bytes) -> bytes:
        """The body, read in chunks through the MAC and spooled to disk past ``SPOOL_IN_MEMORY``
        (an unauthenticated sender holds at most that much memory); cap and timeout enforced."""
        mac = new_mac(secret)
        size = 0
        with tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY) as spool:
            try:
                async with asyncio.timeout(body_timeout_s):
                    async for chunk in request.content.iter_chunked(64 * 1024):
                        size += len(chunk)
                        if size > MAX_BODY:
                            raise Rejected(413, "too_large", "payload larger than GitHub's 25 MB limit")
                        mac.update(chunk)
                        spool.write(chunk)
            except TimeoutError:
                raise Rejected(408, "timeout", f"the body was not received within {body_timeout_s:g} s") from None
            if not signature_matches(claimed, mac):
                raise Rejected(401, "bad_signature", "signature check failed: the body's HMAC-SHA256 does not match "
                                                     "the webhook secret")
            spool.seek(0)
            return spool.read()

    async def webhook(request: web.Request) -> web.Response:
        t0 = time.perf_counter()
        label = metrics.event_label(request.headers.get("X-GitHub-Event"))
        try:
            claimed = signature_digest(request.headers.get("X-Hub-Signature-256"))
            kind, charset = content_kind(request.headers.get("Content-Type"))
            if (request.content_length or 0) > MAX_BODY:
                raise Rejected(413, "too_large", "payload larger than GitHub's 25 MB limit")
        except Rejected as r:
            return reject(request, label, r, close=True)
        try:
            body = await read_signed(request, claimed)
            data = decode_payload(kind, charset, body)
            event_name, delivery_id = check_ids(request.headers.get("X-GitHub-Event"),
                                                request.headers.get("X-GitHub-Delivery"))
        except Rejected as r:
            return reject(request, label, r, close=r.status in (408, 413))
        hook_id = request.headers.get("X-GitHub-Hook-ID", "")[:100]
        if not printable(hook_id):
            return reject(request, label, Rejected(400, "bad_request", "X-GitHub-Hook-ID must be printable ASCII"),
                          close=False)
        summary = q.summarize_payload(data)
        try:
            result = await committer.submit(dict(delivery_id=delivery_id, hook_id=hook_id, event=event_name,
                                                 body=body, content_type=request.headers.get("Content-Type", ""),
                                                 summary=summary))
        except Exception as e:  # noqa: BLE001 - not stored: make GitHub record a failure
            log.exception("could not store delivery %s", for_log(delivery_id))
            return _json(503, error=f"could not store the delivery: {type(e).__name__}")
        metrics.deliveries.labels(label, result).inc()
        if wake is not None and result != "duplicate":
            wake.set()
        metrics.ack_seconds.observe(time.perf_counter() - t0)
        return _json(202, delivery=q.delivery_key(delivery_id, hook_id), queue=result)

    def health_facts() -> tuple[dict, list[str], list[str]]:
        depth, _, found, warned = _health(store, clock(), expect_worker, worker_restarts() if worker_restarts else 0,
                                          health_policy, committer.recheck())
        # answered without a login: the lines naming a fork are counted, named on /health
        return depth, unnamed(found, "problem"), unnamed(warned, "warning")

    async def healthz(request: web.Request) -> web.Response:
        try:
            depth, found, warned = await asyncio.get_running_loop().run_in_executor(executor, health_facts)
        except Exception as e:  # noqa: BLE001 - a store that cannot be read is unhealthy, said in one line
            reason = error_text(e, 300)
            log.warning("healthz: the store cannot be read: %s", reason)
            return _json(503, status="error", error=f"the store cannot be read: {reason}")
        # warnings (degraded, deliveries still processed) never turn the answer 503
        extra = {"warnings": warned} if warned else {}
        if found:
            return _json(503, status="unhealthy", problems=found, queue=depth, **extra)
        return _json(200, status="ok", queue=depth, **extra)

    expected = f"Bearer {metrics_token}".encode() if metrics_token else b""

    async def metrics_view(request: web.Request) -> web.Response:
        registry = metrics.public_registry
        if metrics_token:
            given = request.headers.get("Authorization", "").encode("utf-8", "replace")
            if not hmac.compare_digest(given, expected):      # constant time: the token is a secret
                refused = _json(401, error="a metrics token is required: Authorization: Bearer <token>")
                refused.headers["WWW-Authenticate"] = "Bearer"
                return refused
            registry = metrics.registry
        data = await asyncio.get_running_loop().run_in_executor(executor, generate_latest, registry)
        return web.Response(body=data, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def on_cleanup(app: web.Application) -> None:
        await asyncio.get_running_loop().run_in_executor(None, committer.close)
        executor.shutdown(wait=True)

    app.router.add_post("/webhook", webhook)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_view)
    app.on_cleanup.append(on_cleanup)
    return app


def delivery_headers(event: str, delivery_id: str, body: bytes, secret: str, *,
                     hook_id: str = "1", content_type: str = "application/json") -> dict[str, str]:
    """The headers GitHub sends with a delivery (for tests, the bench and the demo)."""
    import hashlib
    import hmac

    return {
        "User-Agent": "GitHub-Hookshot/forksync-test",
        "Content-Type": content_type,
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery_id,
        "X-GitHub-Hook-ID": hook_id,
        "X-GitHub-Hook-Installation-Target-Type": "integration",
        "X-GitHub-Hook-Installation-Target-ID": "1",
        "X-Hub-Signature-256": "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest(),
        "X-Hub-Signature": "sha1=" + hmac.new(secret.encode(), body, hashlib.sha1).hexdigest(),
    }


def dumps(payload) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


__all__ = ["make_app", "mount_dashboard", "app_facts", "delivery_headers", "dumps", "STORE_KEY", "METRICS_KEY", "MAX_BODY"]
