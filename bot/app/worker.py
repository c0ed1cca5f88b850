"""The queue worker: lease a delivery, process it, record the result (done / retry / dead).

It runs as an asyncio task, normally on its own thread and event loop inside ``forksync serve``
(so slow handlers never delay webhook acknowledgements), or alone with ``forksync worker``.
Several workers may share one database: leases (``bot.app.queue.claim``) keep them apart.

``process(delivery) -> outcome`` is supplied by the caller (:func:`bot.app.dispatch.Dispatcher.process`
in production). It raises :class:`Unhandleable` for a delivery that can never succeed (→ ``dead``
at once, with the reason); any other exception is retried with capped backoff and ends ``dead``
after ``QueuePolicy.max_attempts``; :class:`Paused` sets it aside until its installation's
suspension is lifted (``resume()``, asked before each claim, queues those again). An attempt still running after ``QueuePolicy.delivery_timeout_s``
of the worker's clock is cancelled and failed the same way (retried, then dead), its error beginning
with :data:`bot.app.queue.TIMED_OUT` (``/healthz`` shows it until the delivery succeeds). A
delivery whose handling kills the worker process itself (an OOM kill, a crash in native code) is
dead-lettered once it has taken ``max_attempts`` workers down (:data:`bot.app.queue.WORKER_DIED`).
Shutdown (``stop``, or cancellation) hands the deliveries claimed and not finished back to the
queue, so the next worker takes them at once.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import socket
import threading
import time
import traceback
from typing import Awaitable, Callable

from bot.agents.redact import error_text, scrub
from bot.app import queue as q
from bot.store import Store

log = logging.getLogger(__name__)

#: seconds a worker waits before taking dismissed dead letters off the status issue again after
#: 1, 2, 3… failed tries in a row (the last one repeats)
DISMISSAL_RETRY_S = (30.0, 60.0, 120.0, 300.0)


class Unhandleable(Exception):
    """A delivery the bot can never process (malformed payload, unknown event …); the message is
    the dead-letter reason a person reads in ``forksync queue``."""


class Paused(Exception):
    """A delivery that must wait: GitHub refused its work because the App's installation is
    suspended, an owner's decision that lasts until they lift it. It is set aside (``paused``,
    the attempt not counted) and queued again once the suspension is lifted
    (:func:`bot.app.queue.resume_paused`); the message says why it waits."""


class DeliveryTimedOut(Exception):
    """An attempt ran past ``QueuePolicy.delivery_timeout_s`` and was cancelled; the message is the
    stored error (it begins with :data:`bot.app.queue.TIMED_OUT`)."""


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def same_host_owner_alive(owner: str) -> bool:
    """For :func:`bot.app.queue.release_orphans`: a lease owner ``host:pid:thread`` of this host is
    alive when its pid exists; owners of other hosts are assumed alive (their lease expires)."""
    host, _, rest = owner.partition(":")
    if host != socket.gethostname():
        return True
    pid_text, _, thread_text = rest.partition(":")
    try:
        pid = int(pid_text)
    except ValueError:
        return True
    if pid == os.getpid():
        # a sibling worker thread, or an earlier process under this same pid (a restarted container
        # runs its worker as pid 1 again): only a thread this process has is alive
        try:
            return int(thread_text) in {t.ident for t in threading.enumerate()}
        except ValueError:
            return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Worker:
    """Drains the queue. ``observe(seconds, delivery, state)`` is called after every attempt
    (metrics). ``wake`` is set by the web app when it stores a delivery, so the worker doesn't
    wait a full ``poll_interval_s``."""

    def __init__(self, store: Store, process: Callable[[q.Delivery], Awaitable[str]], *,
                 policy: q.QueuePolicy = q.QueuePolicy(), worker_id: str | None = None,
                 poll_interval_s: float = 0.5, wake: threading.Event | None = None,
                 observe: Callable[[float, q.Delivery, str], None] | None = None,
                 clock: Callable[[], float] = time.time,
                 on_dead: Callable[[q.Delivery], Awaitable[None]] | None = None, heartbeat_every_s: float = 5.0,
                 cancel_grace_s: float = 5.0,
                 on_resolved: Callable[[list[q.Delivery]], Awaitable[None]] | None = None,
                 login_unknown: Callable[[], str] | None = None,
                 resume: Callable[[], list[str]] | None = None):
        self.store = store
        self.resume = resume
        self.process = process
        self.policy = policy
        self.worker_id = worker_id or default_worker_id()
        self.poll_interval_s = poll_interval_s
        self.wake = wake or threading.Event()
        self.observe = observe
        self.clock = clock
        self.on_dead = on_dead
        self.on_resolved = on_resolved
        self.heartbeat_every_s = heartbeat_every_s
        self.cancel_grace_s = cancel_grace_s
        self.login_unknown = login_unknown or (lambda: "")
        self._reported = ""         # the login_unknown the last heartbeat wrote
        self._last_beat = float("-inf")
        self._started_at = clock()
        self._holding = False       # a claimed batch is not finished yet: its leases are renewed
        self._dismissal_failures = 0     # failed turns in a row of _dismissed
        self._dismissals_after = float("-inf")

    def _resume(self) -> None:
        """Queue again the paused deliveries whose installation is no longer suspended (``resume``,
        :meth:`bot.app.dispatch.Dispatcher.resume_paused`), before a claim."""
        if self.resume is None:
            return
        try:
            keys = self.resume()
        except Exception:  # noqa: BLE001 - e.g. database locked: the next claim asks again
            log.exception("queueing paused deliveries again failed")
            return
        if keys:
            log.info("installation no longer suspended: %d paused deliveries queued again", len(keys))

    async def _dead(self, d: q.Delivery) -> None:
        """Raise the dead-letter alarm where people look (the status issue); its own failure is logged only."""
        if self.on_dead is None:
            return
        try:
            await self.on_dead(d)
        except Exception:  # noqa: BLE001 - the alarm is also on /metrics and /healthz
            log.exception("dead-letter alarm for %s failed", d.id)

    async def _dismissed(self) -> None:
        """Take the dead letters an operator dismissed since the last turn (``forksync queue
        --dismiss``, :func:`bot.app.queue.untaken_dismissals`) off where people look, as resolved
        ones are (``on_resolved``: the status issues that listed them are rendered again), and
        mark them taken once that went through. A failure (GitHub failing the edit, the store
        locked) is logged and tried again at a later turn, waiting longer after each failure in a
        row (:data:`DISMISSAL_RETRY_S`): the worker turns every ``poll_interval_s``, and an
        outage must not cost an edit of the issue, and a traceback, on every turn."""
        if self.on_resolved is None or self.clock() < self._dismissals_after:
            return
        failed = False
        try:
            by_repo: dict[str, list[q.Delivery]] = {}
            for d in q.untaken_dismissals(self.store):
                by_repo.setdefault(d.repo, []).append(d)
        except Exception:  # noqa: BLE001 - /metrics and /healthz already read the queue's state
            by_repo, failed = {}, True
            log.exception("reading dismissed dead letters failed")
        # each fork's on its own: one whose status issue GitHub keeps refusing (Issues off, a
        # repository gone) must not keep the others' dismissed letters listed
        for repo, ds in by_repo.items():
            try:
                await self.on_resolved(ds)
                q.mark_dismissals_taken(self.store, ds)
            except Exception:  # noqa: BLE001 - tried again at a later turn
                failed = True
                log.exception("taking dismissed dead letters of %s off its status issue failed", repo or "(no repository)")
        if not failed:
            self._dismissal_failures = 0
            return
        wait = DISMISSAL_RETRY_S[min(self._dismissal_failures, len(DISMISSAL_RETRY_S) - 1)]
        self._dismissal_failures += 1
        self._dismissals_after = self.clock() + wait
        log.warning("dismissed dead letters not all taken off the status issue (%d turn(s) in a row); tried again in %.0f s",
                    self._dismissal_failures, wait)

    async def _done(self, d: q.Delivery) -> None:
        """``d`` was handled: when that resolved dead letters (its own, as a redelivery, or ones it
        supersedes: :func:`bot.app.queue.resolved_by`), take them off where people look, which a
        handler that renders nothing there would leave showing; its own failure is logged only."""
        if self.on_resolved is None:
            return
        try:
            resolved = q.resolved_by(self.store, d.id)
            if resolved:
                await self.on_resolved(resolved)
        except Exception:  # noqa: BLE001 - /metrics and /healthz already read the queue's state
            log.exception("clearing the dead letters %s resolved failed", d.id)

    def beat(self) -> None:
        """Record that this worker is alive (``GET /healthz`` reads it), at most every
        ``heartbeat_every_s`` of the worker's clock — and at once when why it does not know the
        bot's login (``login_unknown()``) changed: learnt, the warning goes — and extend the
        leases of the batch it holds."""
        now = self.clock()
        unknown = self.login_unknown()
        if now - self._last_beat >= self.heartbeat_every_s or unknown != self._reported:
            q.heartbeat(self.store, self.worker_id, self._started_at, now, login_unknown=unknown)
            self._reported = unknown
            if self._holding:
                q.renew_leases(self.store, self.worker_id, now + self.policy.lease_s)
            self._last_beat = now

    async def _keep_alive(self) -> None:
        """Beat while a batch runs: one delivery (a sync) can take minutes, longer than both the
        heartbeat limit of ``/healthz`` and the lease."""
        while True:
            await asyncio.sleep(self.heartbeat_every_s)
            try:
                self.beat()
            except Exception:  # noqa: BLE001 - e.g. database locked: the next beat tries again
                log.exception("worker heartbeat failed")

    async def _attempt(self, d: q.Delivery) -> str:
        """``process(d)`` under the delivery time limit: every ``heartbeat_every_s`` (real time) the
        worker's clock is read, and once ``policy.delivery_timeout_s`` has passed the handler is
        cancelled and :class:`DeliveryTimedOut` raised. The limit is on the worker's clock (tests
        move it) and is checked here rather than by the lease: the heartbeat renews the lease of a
        hung handler as faithfully as that of a slow one. A handler that ignores its cancellation
        for ``cancel_grace_s`` is left behind (logged); its delivery is failed all the same."""
        limit = self.policy.delivery_timeout_s
        deadline = self.clock() + limit
        task = asyncio.ensure_future(self.process(d))
        try:
            while not task.done() and self.clock() < deadline:
                await asyncio.wait({task}, timeout=self.heartbeat_every_s)
        except asyncio.CancelledError:
            task.cancel()           # shutdown: the handler goes with the worker (the delivery is handed back)
            raise
        if task.done():
            return task.result()
        task.cancel()
        await asyncio.wait({task}, timeout=self.cancel_grace_s)
        if task.done():
            if not task.cancelled():
                task.exception()    # retrieved: it ended some other way while being cancelled
        else:
            log.error("delivery %s (%s) ignored its cancellation after the time limit; left running", d.id, d.event)
        raise DeliveryTimedOut(f"{q.TIMED_OUT}still running after {limit:g} s (the delivery time limit, "
                               f"FORKSYNC_DELIVERY_TIMEOUT_S); cancelled, to be retried")

    async def run_once(self) -> q.Delivery | None:
        """Claim and process one due delivery; returns it (None when nothing was due)."""
        self._resume()
        await self._dismissed()
        d = q.claim(self.store, self.worker_id, self.policy, now=self.clock())
        if d is None:
            return None
        t0 = time.perf_counter()
        state = "done"
        try:
            outcome = await self._attempt(d)
        except asyncio.CancelledError:
            raise
        except DeliveryTimedOut as e:
            state = q.fail(self.store, d.id, self.worker_id, str(e), policy=self.policy, now=self.clock()) or "lost"
            log.warning("delivery %s (%s) attempt %d: %s", d.id, d.event, d.attempts, e)
        except Paused as e:
            state = q.pause(self.store, d.id, self.worker_id, scrub(str(e)), now=self.clock()) or "lost"
            log.warning("delivery %s (%s) paused: %s", d.id, d.event, e)
        except Unhandleable as e:
            state = q.fail(self.store, d.id, self.worker_id, scrub(str(e)), permanent=True,
                           policy=self.policy, now=self.clock()) or "lost"
            log.warning("delivery %s (%s) dead: %s", d.id, d.event, e)
        except Exception as e:  # noqa: BLE001 - every other failure is retried, then dead-lettered
            err = error_text(e)
            state = q.fail(self.store, d.id, self.worker_id, err, policy=self.policy,
                           now=self.clock()) or "lost"
            log.warning("delivery %s (%s) attempt %d failed: %s\n%s", d.id, d.event, d.attempts, err,
                        traceback.format_exc(limit=5))
        else:
            if not q.complete(self.store, d.id, self.worker_id, outcome or "", now=self.clock()):
                state = "lost"
        if self.observe:
            self.observe(time.perf_counter() - t0, d, state)
        if state == "dead":
            await self._dead(d)
        elif state == "done":
            await self._done(d)
        return d

    async def run_batch(self, limit: int = 32, stop: asyncio.Event | threading.Event | None = None) -> int:
        """Lease up to ``limit`` due deliveries in one transaction (few write locks:
        acknowledgements stay fast), then begin, process and record them one at a time, in order
        (:func:`bot.app.queue.begin`, :func:`bot.app.queue.finish_many`): when a delivery takes the
        worker process down (an OOM kill), the ones before it stay done and the ones after it are
        not charged with an attempt, and the killer is dead-lettered once it has used its attempts
        (:func:`bot.app.queue.bury_crashed`, whose alarm is raised here). Once ``stop`` is set no
        further delivery of the batch starts; those not finished (and one cancelled mid-way) are
        handed back to the queue (:func:`bot.app.queue.hand_back`). Returns how many were leased."""
        for d in q.bury_crashed(self.store, self.policy, now=self.clock()):
            log.error("delivery %s (%s) dead: %s", d.id, d.event, d.dead_reason)
            await self._dead(d)
        self._resume()
        await self._dismissed()
        batch = q.claim_many(self.store, self.worker_id, limit, self.policy, now=self.clock())
        finished = 0                # deliveries of the batch recorded (or whose lease was lost)
        begun: list[str] = []       # the one begun and not yet recorded
        self._holding = bool(batch)
        try:
            for d in batch:
                if stop is not None and stop.is_set():
                    break
                attempts = q.begin(self.store, self.worker_id, d.id, now=self.clock())
                if attempts is None:            # another worker took it over
                    finished += 1
                    continue
                d = dataclasses.replace(d, attempts=attempts)
                begun = [d.id]
                t0 = time.perf_counter()
                try:
                    result = (d.id, "done", await self._attempt(d) or "", False)
                except asyncio.CancelledError:
                    raise
                except DeliveryTimedOut as e:
                    log.warning("delivery %s (%s) attempt %d: %s", d.id, d.event, d.attempts, e)
                    result = (d.id, "error", str(e), False)
                except Paused as e:
                    log.warning("delivery %s (%s) paused: %s", d.id, d.event, e)
                    result = (d.id, "paused", scrub(str(e)), False)
                except Unhandleable as e:
                    log.warning("delivery %s (%s) dead: %s", d.id, d.event, e)
                    result = (d.id, "error", scrub(str(e)), True)
                except Exception as e:  # noqa: BLE001 - retried, then dead-lettered
                    err = error_text(e)
                    log.warning("delivery %s (%s) attempt %d failed: %s\n%s", d.id, d.event, d.attempts, err,
                                traceback.format_exc(limit=5))
                    result = (d.id, "error", err, False)
                # recorded now, not with the batch: the rest of the batch may run for long (its
                # heartbeat would renew this lease and hide a failure), or take the process down
                [state] = q.finish_many(self.store, self.worker_id, [result], self.policy, now=self.clock())
                begun, finished = [], finished + 1
                if self.observe:
                    self.observe(time.perf_counter() - t0, d, state or "lost")
                if state == "dead":
                    await self._dead(d)
                elif state == "done":
                    await self._done(d)
        finally:
            self._holding = False
            unfinished = [d.id for d in batch[finished:]]
            if unfinished:
                n = q.hand_back(self.store, self.worker_id, unfinished, now=self.clock(), begun=begun)
                log.warning("stopping: handed %d unfinished deliveries back to the queue", n)
        return len(batch)

    async def drain(self, limit: int = 1_000_000) -> int:
        """Process due deliveries until none is due (or ``limit``); returns how many ran."""
        n = 0
        while n < limit and await self.run_once() is not None:
            n += 1
        return n

    async def run(self, stop: asyncio.Event | threading.Event) -> None:
        """Process until ``stop`` is set; sleeps ``poll_interval_s`` (or until woken) when idle.
        First releases the leases of dead workers of this host (crash recovery). Beats the
        heartbeat (:meth:`beat`) on every turn of the loop and, while a batch runs, every
        ``heartbeat_every_s`` (:meth:`_keep_alive`)."""
        released = q.release_orphans(self.store, same_host_owner_alive)
        if released:
            log.warning("took over %d deliveries of a dead worker: %s", len(released), ", ".join(released[:10]))
        keep_alive = asyncio.create_task(self._keep_alive())
        trouble = _LoopTrouble()
        try:
            while not stop.is_set():
                wait = self.poll_interval_s
                try:
                    self.beat()
                    did = await self.run_batch(stop=stop)
                except asyncio.CancelledError:
                    raise
                except Exception as e:  # noqa: BLE001 - e.g. database locked, a full volume: keep the worker alive
                    wait = trouble.failed(e, self.clock(), self.poll_interval_s)
                    did = 0
                else:
                    trouble.went_through()
                if not did:
                    await asyncio.get_running_loop().run_in_executor(None, self.wake.wait, wait)
                    self.wake.clear()
        finally:
            keep_alive.cancel()


#: A failing turn of the worker's loop is logged again, when it is the same error, at most this often (s).
LOOP_ERROR_LOG_EVERY_S = 60.0
#: The longest wait after a failing turn (s): well inside ``/healthz``'s 30 s heartbeat limit, so a
#: store that can be written again is seen within seconds.
LOOP_ERROR_BACKOFF_CAP_S = 5.0


class _LoopTrouble:
    """The worker loop's failing turns. A full volume (or a failing disk) refuses every write of
    every turn: the first error is logged with its traceback, the same error again at most every
    :data:`LOOP_ERROR_LOG_EVERY_S` (of the worker's clock) with how often it came, and each failed
    turn waits twice as long as the last, up to :data:`LOOP_ERROR_BACKOFF_CAP_S` — not a traceback
    every poll interval (0.1 s) into the log of a host whose disk is full. ``/healthz`` names the
    cause meanwhile (:meth:`bot.app.web.GroupCommitter.recheck`)."""

    def __init__(self) -> None:
        self.count = 0              # failed turns in a row
        self.same = 0               # of them, with the error last logged
        self.error = ""             # that error, one line
        self.logged_at = float("-inf")

    def failed(self, e: Exception, now: float, base_s: float) -> float:
        """Count and log the failure ``e`` at ``now`` (the worker's clock, s); returns the wait
        before the next turn (s): ``base_s`` doubled once per failed turn in a row, capped."""
        self.count += 1
        line = error_text(e, 300)
        if line != self.error:
            self.error, self.same, self.logged_at = line, 1, now
            log.error("worker loop error", exc_info=e)
        else:
            self.same += 1
            if now - self.logged_at >= LOOP_ERROR_LOG_EVERY_S:
                self.logged_at = now
                log.error("worker loop error, still: %s (%d times in a row)", line, self.same)
        return min(base_s * 2 ** min(self.count, 30), max(base_s, LOOP_ERROR_BACKOFF_CAP_S))

    def went_through(self) -> None:
        if self.count:
            log.warning("worker loop going again after %d failed turns (last: %s)", self.count, self.error)
        self.count, self.same, self.error, self.logged_at = 0, 0, "", float("-inf")


def start_in_thread(make_worker: Callable[[], Worker], stop: threading.Event) -> threading.Thread:
    """Run a worker on its own thread and event loop (the worker, and its Store, are built on that
    thread). Returns the started thread; set ``stop`` and join it to shut down."""

    def main() -> None:
        w = make_worker()
        asyncio.run(w.run(stop))

    t = threading.Thread(target=main, name="forksync-worker", daemon=True)
    t.start()
    return t


__all__ = ["Unhandleable", "Paused", "DeliveryTimedOut", "Worker", "start_in_thread", "default_worker_id"]
