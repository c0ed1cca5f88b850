"""The webhook web app (aiohttp): ``POST /webhook``, ``GET /healthz``, ``GET /metrics``.

``POST /webhook`` (GitHub's delivery contract: docs.github.com "Validating webhook deliveries",
"Handling webhook deliveries"):

1. ``X-Hub-Signature-256`` must be present and match HMAC-SHA256(secret, raw body), checked by
   ``gidgethub.sansio.Event.from_http`` → else **401**, nothing stored. (The legacy SHA-1
   header alone is refused.)
2. The body must be JSON (or form-encoded ``payload=``) and ``X-GitHub-Event`` /
   ``X-GitHub-Delivery`` present → else **400** (415 for another content type).
3. The delivery is stored in the durable queue (:mod:`bot.app.queue`, committed with
   ``synchronous=FULL``) and only then answered **202** ``{"delivery": id, "queue": "queued" |
   "requeued" | "duplicate"}``. If storing fails the answer is **503** so GitHub records a failed
   delivery that can be redelivered.

Processing happens later in :mod:`bot.app.worker`; this module never calls GitHub.
"""
from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from aiohttp import web
from gidgethub import BadRequest, ValidationFailure
from gidgethub.sansio import Event
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from bot.app import queue as q
from bot.app.metrics import AppMetrics
from bot.store import Store

log = logging.getLogger(__name__)

#: GitHub caps payloads at 25 MB; anything larger is not a GitHub delivery.
MAX_BODY = 26 * 1024 * 1024

class GroupCommitter:
    """Stores deliveries from one writer thread, many per transaction (group commit).

    Requests hand their delivery to :meth:`submit` and wait; the thread takes everything that
    arrived while the previous commit was being fsynced (up to ``max_batch``) and commits it in
    one transaction (:func:`bot.app.queue.enqueue_many`). Each request is answered only after *its*
    transaction committed, so durability per delivery is unchanged while the fsync cost is shared.
    """

    def __init__(self, store: Store, max_batch: int = 256):
        import queue as stdqueue
        self.store = store
        self.max_batch = max_batch
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
            except Exception as e:  # noqa: BLE001 - every waiter learns it was not stored
                for _item, loop, fut in batch:
                    loop.call_soon_threadsafe(_set_exc, fut, e)
                continue
            for (_item, loop, fut), res in zip(batch, results):
                loop.call_soon_threadsafe(_set_result, fut, res)


def _set_result(fut, value) -> None:
    if not fut.done():
        fut.set_result(value)


def _set_exc(fut, exc) -> None:
    if not fut.done():
        fut.set_exception(exc)


STORE_KEY = web.AppKey("forksync_store", Store)
METRICS_KEY = web.AppKey("forksync_metrics", AppMetrics)


def _json(code: int, **body) -> web.Response:
    return web.json_response(body, status=code)


def make_app(store: Store, secret: str, *, metrics: AppMetrics | None = None,
             wake: threading.Event | None = None, store_factory: Callable[[], Store] | None = None
             ) -> web.Application:
    """Build the aiohttp application.

    ``store`` is used for enqueueing only, from one dedicated thread with group commit
    (:class:`GroupCommitter`; SQLite writes never block the event loop). ``secret`` is the webhook secret; an empty secret is refused here because
    gidgethub would then skip verification. ``wake`` is set after each stored delivery (to wake
    an in-process worker). ``store_factory`` gives the metrics collector a connection of its own.
    """
    if not secret:
        raise ValueError("a webhook secret is required (FORKSYNC_WEBHOOK_SECRET or --webhook-secret)")
    metrics = metrics or AppMetrics(store_factory or (lambda: store))
    q.web_durability(store)
    committer = GroupCommitter(store)
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="forksync-web")
    app = web.Application(client_max_size=MAX_BODY)
    app[STORE_KEY] = store
    app[METRICS_KEY] = metrics

    async def webhook(request: web.Request) -> web.Response:
        t0 = time.perf_counter()
        event_name = request.headers.get("X-GitHub-Event")
        label = metrics.event_label(event_name)
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            metrics.deliveries.labels(label, "bad_request").inc()
            return _json(413, error="payload larger than GitHub's 25 MB limit")
        if "X-Hub-Signature-256" not in request.headers:
            metrics.deliveries.labels(label, "unsigned").inc()
            return _json(401, error="missing X-Hub-Signature-256 header")
        try:
            event = Event.from_http(request.headers, body, secret=secret)
        except ValidationFailure as e:
            metrics.deliveries.labels(label, "bad_signature").inc()
            return _json(401, error=f"signature check failed: {e}")
        except BadRequest as e:
            metrics.deliveries.labels(label, "bad_request").inc()
            ctype = request.headers.get("Content-Type", "")
            if "json" in ctype or "x-www-form-urlencoded" in ctype:
                return _json(400, error="the body is not valid JSON")
            return _json(int(e.status_code), error=str(e))
        except KeyError as e:
            metrics.deliveries.labels(label, "bad_request").inc()
            return _json(400, error=f"missing header {e.args[0]}")
        except (ValueError, UnicodeDecodeError) as e:  # e.g. a form payload that is not JSON
            metrics.deliveries.labels(label, "bad_request").inc()
            return _json(400, error=f"the body could not be parsed: {e}")
        if not body.strip():            # gidgethub returns data None for an empty body
            metrics.deliveries.labels(label, "bad_request").inc()
            return _json(400, error="the body is empty")
        delivery_id = event.delivery_id
        if not delivery_id or len(delivery_id) > 200 or not event.event or len(event.event) > 100:
            metrics.deliveries.labels(label, "bad_request").inc()
            return _json(400, error="X-GitHub-Event and X-GitHub-Delivery must be non-empty (≤ 200 chars)")
        hook_id = request.headers.get("X-GitHub-Hook-ID", "")[:100]
        summary = q.summarize_payload(event.data)
        try:
            result = await committer.submit(dict(delivery_id=delivery_id, hook_id=hook_id, event=event.event,
                                                 body=body, content_type=request.headers.get("Content-Type", ""),
                                                 summary=summary))
        except Exception as e:  # noqa: BLE001 - not stored: make GitHub record a failure
            log.exception("could not store delivery %s", delivery_id)
            return _json(503, error=f"could not store the delivery: {type(e).__name__}")
        metrics.deliveries.labels(label, result).inc()
        if wake is not None and result != "duplicate":
            wake.set()
        metrics.ack_seconds.observe(time.perf_counter() - t0)
        return _json(202, delivery=q.delivery_key(delivery_id, hook_id), queue=result)

    async def healthz(request: web.Request) -> web.Response:
        try:
            depth = await asyncio.get_running_loop().run_in_executor(executor, q.counts, store)
        except Exception as e:  # noqa: BLE001
            return _json(503, status="error", error=f"{type(e).__name__}: {e}")
        return _json(200, status="ok", queue=depth)

    async def metrics_view(request: web.Request) -> web.Response:
        data = await asyncio.get_running_loop().run_in_executor(executor, generate_latest, metrics.registry)
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


__all__ = ["make_app", "delivery_headers", "dumps", "STORE_KEY", "METRICS_KEY", "MAX_BODY"]
