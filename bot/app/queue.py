"""The durable webhook delivery queue (SQLite, table ``webhook_deliveries``).

Every signed delivery is stored here *before* the web app answers 202, so an acknowledged
delivery survives a crash (the store runs WAL with ``synchronous=FULL``: a committed row is on
disk). The worker leases rows, runs the handlers and marks them done; an unfinished lease is
taken over after it expires, so every acknowledged delivery gets processed. Handlers are
idempotent (they look for their own earlier effect before acting), which makes this
at-least-once queue exactly-once *in effect*.

States::

    queued ──claim──> processing ──complete──> done
       ^                  │  └──fail (permanent, or attempts ≥ max)──> dead (reason kept)
       │                  ├──fail (retryable)──> failed ──(next_attempt_at reached)──> claimable
       │                  ├──its worker died (lease expired), attempts ≥ max──> dead (at the next claim)
       │                  └──pause (GitHub: its installation is suspended)──> paused (attempt not charged)
       ├── paused, once its installation is no longer suspended (:func:`resume_paused`)
       └── a redelivery of a failed/dead delivery re-queues it (attempts reset)

A *paused* delivery waits for an owner's decision to be undone, not for a failure to pass: its
installation was suspended before it was handled (GitHub refuses every call with 403 "This
installation has been suspended"), and it is handled once the suspension is lifted. It is never
claimed meanwhile, never dead-lettered, and no alarm.

``attempts`` counts attempts begun: :func:`claim` begins the one it leases, a batch leased by
:func:`claim_many` is begun one delivery at a time (:func:`begin`), so the deliveries of a batch
that were still waiting when their worker died are not charged with its death. A delivery whose
handling takes its worker process down (an OOM kill, a crash in native code) never reaches
:func:`fail`; its lease expires instead, and once it has used its ``max_attempts`` the next claim
dead-letters it (:func:`bury_crashed`) rather than run it again.

    dead ──a later delivery that supersedes it is handled──> resolved (reason kept)
    dead ──an operator dismisses it (``forksync queue --dismiss ID``)──> dismissed (reason kept)

Resolving dead letters (a recovered failure must stop showing as failing; the history stays):

* A redelivery (GitHub's "Redeliver", or ``POST /app/hook/deliveries/{id}/attempts``) carries the
  same ``X-GitHub-Delivery`` GUID, so it re-queues the dead row itself; when it is handled the row
  is ``done``, keeps its ``dead_reason`` and names itself in ``resolved_by``.
* A *new* delivery that redoes all a dead one was for resolves it when handled
  (:data:`SUPERSEDES`): same kind of work, same repository, received no earlier. Only adoption
  qualifies (``installation.created`` / ``installation_repositories.added`` naming one repository:
  adopting reads everything from GitHub again). Other events carry one-off work (a command, a
  push to one ref, one pull request's change) that a later event of the same name does not redo;
  their dead letters stay an alarm until redelivered or retried (``forksync queue --retry``).
* A dead letter that can never succeed (GitHub signed a payload that lacks a field forksync needs:
  a retry dead-letters it again) is *dismissed* by an operator (:func:`dismiss`): state
  ``dismissed``, recorded with who, when and why (``dismissed_by``, ``dismissed_at``,
  ``dismiss_reason``; its ``dead_reason`` kept). It is no longer an alarm (``/healthz``,
  ``/metrics``, the status issue), but it is never deleted (:func:`prune` keeps it) and stays
  listed: ``forksync queue``, the dashboard's health page (:func:`dismissed_letters`). A
  redelivery or ``--retry`` queues it again; the dismissal stays recorded.

De-duplication key: ``X-GitHub-Delivery`` plus ``X-GitHub-Hook-ID`` (GitHub reuses the GUID for a
redelivery and for the same event sent to two hooks; see docs/github.md). A redelivery of a
``done`` delivery is not processed again; of a ``queued``/``processing`` one is a no-op.

Durability split: the web app's connection keeps the store's ``synchronous=FULL`` (a 202 means
the delivery is on disk) and commits arriving deliveries in groups (:func:`enqueue_many`: one
fsync for all requests that arrived during the previous one). The worker's connection uses
``synchronous=NORMAL`` (:func:`worker_durability`): after a power loss it may forget that a
delivery was *done* and process it again, which idempotent handlers make harmless; it can never
lose an acknowledged delivery.

Times are epoch seconds (float); ``now`` is passed in so tests control the clock.
"""
from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from typing import Collection, Iterable, Sequence

from bot.store import Store, table

STATES = ("queued", "processing", "done", "failed", "dead", "resolved", "paused", "dismissed")

#: ``(event, action)`` → the work it does, for :func:`_resolve_superseded`: a handled delivery resolves
#: the dead letters of the same work on the same repository received no later (see the module doc).
SUPERSEDES = {("installation", "created"): "adopt", ("installation_repositories", "added"): "adopt"}

#: How the error of an attempt stopped at ``QueuePolicy.delivery_timeout_s`` begins (``/healthz``
#: finds such deliveries by it until they succeed).
TIMED_OUT = "timed out: "

DELIVERIES = table("webhook_deliveries", {
    "id": str,                 # "<delivery guid>" or "<delivery guid>/<hook id>"
    "delivery_id": str,
    "hook_id": str,
    "event": str,
    "action": str,
    "installation_id": int,
    "repo": str,               # "owner/name" of payload.repository, "" if none
    "sender": str,
    "body": bytes,             # the exact bytes GitHub signed
    "content_type": str,
    "state": str,
    "attempts": int,
    "next_attempt_at": float,
    "lease_owner": str,
    "lease_until": float,
    "received_at": float,
    "started_at": float,
    "finished_at": float,
    "redeliveries": int,
    "last_error": str,
    "dead_reason": str,
    "outcome": str,            # what the handlers did / why ignored
    "resolved_by": str,        # the delivery whose success ended this dead letter ("" if none)
    "resolved_at": float,
    "dismissed_by": str,       # who dismissed this dead letter (the operator's login), "" if nobody did
    "dismissed_at": float,
    "dismiss_reason": str,     # why, as they said it ("" when they gave no reason)
    # the dismissed_at a worker last took off the status issue (untaken_dismissals): the dismissal is
    # made by `forksync queue`, which cannot reach GitHub
    "dismissal_shown_at": float,
}, pk="id", indexes=[("state", "next_attempt_at"), ("received_at",), ("resolved_by",)])


WORKERS = table("queue_workers", {
    "worker_id": str,          # host:pid:thread
    "started_at": float,
    "beat_at": float,          # last heartbeat (epoch s), written by the worker's loop
    # why the worker does not know the bot's own login (token mode, GET /user unanswered: it is
    # asked again with backoff), "" when it knows it; written with the heartbeat
    "login_unknown": str,
}, pk="worker_id")

#: one row the webhook intake writes to learn whether the store can be written again after it
#: refused deliveries (:func:`probe_write`)
INTAKE_PROBE = table("webhook_intake_probe", {"id": int, "probed_at": float}, pk="id")


@dataclass(frozen=True)
class QueuePolicy:
    """Retry policy: ``max_attempts`` tries in all; the n-th retry waits
    ``min(backoff_cap_s, backoff_base_s * 2**(n-1))`` × a jitter in [0.5, 1]; a lease lasts
    ``lease_s`` seconds (a worker that dies holding it loses it after that); one attempt may run
    ``delivery_timeout_s`` seconds of the worker's clock before the worker cancels it and fails it
    (:data:`TIMED_OUT`). A running worker renews its leases, so without that limit a handler that
    never returns (a hung fetch, an HTTP call without a timeout) would hold its delivery for ever.
    The default is above the longest legitimate delivery: a sync of a large fork takes minutes, but
    the ``local`` runner backend runs a PR's suites inside the delivery (each bounded by its
    ``timeout_s`` × (``infra_retries`` + 1) + 120 s: about two hours by default)."""

    max_attempts: int = 5
    backoff_base_s: float = 2.0
    backoff_cap_s: float = 300.0
    lease_s: float = 120.0
    delivery_timeout_s: float = 6 * 3600.0

    def backoff(self, attempts: int, rng: random.Random | None = None) -> float:
        base = min(self.backoff_cap_s, self.backoff_base_s * (2 ** max(0, attempts - 1)))
        return base * (0.5 + 0.5 * (rng or random).random())


@dataclass(frozen=True)
class Delivery:
    """One stored delivery (a row of ``webhook_deliveries``)."""

    id: str
    delivery_id: str
    hook_id: str
    event: str
    action: str
    installation_id: int | None
    repo: str
    sender: str
    body: bytes
    content_type: str
    state: str
    attempts: int
    received_at: float
    last_error: str = ""
    dead_reason: str = ""
    outcome: str = ""
    redeliveries: int = 0
    resolved_by: str = ""
    dismissed_by: str = ""
    dismissed_at: float = 0.0
    dismiss_reason: str = ""

    @classmethod
    def from_row(cls, row: dict) -> "Delivery":
        return cls(id=row["id"], delivery_id=row["delivery_id"], hook_id=row["hook_id"] or "",
                   event=row["event"] or "", action=row["action"] or "",
                   installation_id=row["installation_id"], repo=row["repo"] or "",
                   sender=row["sender"] or "", body=row["body"] or b"",
                   content_type=row["content_type"] or "application/json", state=row["state"],
                   attempts=row["attempts"] or 0, received_at=row["received_at"] or 0.0,
                   last_error=row["last_error"] or "", dead_reason=row["dead_reason"] or "",
                   outcome=row["outcome"] or "", redeliveries=row["redeliveries"] or 0,
                   resolved_by=row.get("resolved_by") or "", dismissed_by=row.get("dismissed_by") or "",
                   dismissed_at=row.get("dismissed_at") or 0.0, dismiss_reason=row.get("dismiss_reason") or "")


def delivery_key(delivery_id: str, hook_id: str | None) -> str:
    return f"{delivery_id}/{hook_id}" if hook_id else delivery_id


def summarize_payload(data) -> dict:
    """The indexable fields of a parsed payload (tolerant of any JSON value)."""
    if not isinstance(data, dict):
        return {"action": "", "installation_id": None, "repo": "", "sender": ""}

    def get(*path):
        cur = data
        for p in path:
            if not isinstance(cur, dict):
                return None
            cur = cur.get(p)
        return cur

    inst = get("installation", "id")
    repo = get("repository", "full_name")
    if not repo:
        # installation events name their repositories in a list: one repository is the fork
        # the delivery is about (its dead letter then shows on that fork's status issue)
        for key in ("repositories_added", "repositories"):
            listed = data.get(key)
            if isinstance(listed, list) and len(listed) == 1 and isinstance(listed[0], dict):
                repo = listed[0].get("full_name")
                break
    return {
        "action": _storable(get("action"), 100),
        # only what SQLite's INTEGER holds (64 bits); the body keeps any other value
        "installation_id": inst if isinstance(inst, int) and not isinstance(inst, bool) and -2**63 <= inst < 2**63 else None,
        "repo": _storable(repo, 200),
        "sender": _storable(get("sender", "login"), 100),
    }


def _storable(value, limit: int) -> str:
    """``value`` as text SQLite can store, cut to ``limit`` characters: JSON may carry a lone
    surrogate (``"\\ud800"``), which no UTF-8 column holds (replaced by U+FFFD; the body keeps it)."""
    text = str(value or "")[:limit]
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace") if not text.isascii() else text


def enqueue(store: Store, *, delivery_id: str, hook_id: str | None, event: str, body: bytes,
            content_type: str = "application/json", summary: dict | None = None,
            now: float | None = None) -> str:
    """Store a verified delivery durably. Returns what happened:

    * ``"queued"`` — new delivery, now queued;
    * ``"requeued"`` — a redelivery of a failed, dead, resolved or dismissed delivery: queued again,
      attempts reset (a dead one's ``dead_reason`` is kept: it becomes history once the redelivery is
      handled; a dismissal stays recorded);
    * ``"duplicate"`` — already done, queued or in progress: nothing changes (the redelivery
      counter is bumped so it stays visible).
    """
    return enqueue_many(store, [dict(delivery_id=delivery_id, hook_id=hook_id, event=event, body=body,
                                     content_type=content_type, summary=summary)], now=now)[0]


def enqueue_many(store: Store, items: list[dict], now: float | None = None) -> list[str]:
    """:func:`enqueue` for several deliveries in **one** transaction (one fsync: group commit).
    ``items`` hold :func:`enqueue`'s keyword arguments; returns one result per item, in order."""
    now = time.time() if now is None else now
    out: list[str] = []
    with store.transaction() as c:
        for it in items:
            out.append(_enqueue_one(c, now=now, **it))
    return out


def _enqueue_one(c, *, delivery_id: str, hook_id: str | None, event: str, body: bytes,
                 content_type: str = "application/json", summary: dict | None = None, now: float) -> str:
    s = summary or {}
    key = delivery_key(delivery_id, hook_id)
    row = c.execute("SELECT state FROM webhook_deliveries WHERE id=?", (key,)).fetchone()
    if row is None:
        c.execute(
            "INSERT INTO webhook_deliveries (id, delivery_id, hook_id, event, action, installation_id,"
            " repo, sender, body, content_type, state, attempts, next_attempt_at, lease_owner,"
            " lease_until, received_at, redeliveries, last_error, dead_reason, outcome)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,'queued',0,?,'',0,?,0,'','','')",
            (key, delivery_id, hook_id or "", event, s.get("action", ""), s.get("installation_id"),
             s.get("repo", ""), s.get("sender", ""), body, content_type, now, now))
        return "queued"
    if row[0] in ("failed", "dead", "resolved", "dismissed"):
        c.execute("UPDATE webhook_deliveries SET state='queued', attempts=0, next_attempt_at=?,"
                  " lease_owner='', lease_until=0, redeliveries=redeliveries+1"
                  " WHERE id=?", (now, key))
        return "requeued"
    c.execute("UPDATE webhook_deliveries SET redeliveries=redeliveries+1 WHERE id=?", (key,))
    return "duplicate"


def worker_durability(store: Store) -> None:
    """Tune a worker's connection: ``synchronous=NORMAL`` (see the module doc) and WAL
    checkpoints done here rather than on the web app's acknowledgement path."""
    store.conn.execute("PRAGMA synchronous=NORMAL")


def web_durability(store: Store) -> None:
    """Tune the web app's connection: keep ``synchronous=FULL``; leave WAL checkpoints to the
    worker's connection (``wal_autocheckpoint=0``) so an acknowledgement never waits for one."""
    store.conn.execute("PRAGMA synchronous=FULL")
    store.conn.execute("PRAGMA wal_autocheckpoint=0")


def claim(store: Store, worker_id: str, policy: QueuePolicy = QueuePolicy(),
          now: float | None = None) -> Delivery | None:
    """Lease and begin the oldest due delivery: queued, failed and due for retry, or processing
    with an expired lease (its worker died). Bumps ``attempts``. None when nothing is due. A
    delivery whose worker died on its last allowed attempt is dead-lettered, not leased
    (:func:`bury_crashed`)."""
    now = time.time() if now is None else now
    with store.transaction() as c:
        _bury_crashed(c, policy, now)
        row = c.execute(
            "SELECT id FROM webhook_deliveries WHERE"
            " (state IN ('queued','failed') AND next_attempt_at <= ?)"
            " OR (state='processing' AND lease_until < ?)"
            " ORDER BY received_at, id LIMIT 1", (now, now)).fetchone()
        if row is None:
            return None
        c.execute("UPDATE webhook_deliveries SET state='processing', attempts=attempts+1,"
                  " lease_owner=?, lease_until=?, started_at=? WHERE id=?",
                  (worker_id, now + policy.lease_s, now, row[0]))
        full = c.execute("SELECT * FROM webhook_deliveries WHERE id=?", (row[0],))
        cols = [d[0] for d in full.description]
        return Delivery.from_row(dict(zip(cols, full.fetchone())))


def claim_many(store: Store, worker_id: str, limit: int, policy: QueuePolicy = QueuePolicy(),
               now: float | None = None) -> list[Delivery]:
    """Lease up to ``limit`` due deliveries (as :func:`claim`) in one transaction, oldest first,
    *without* beginning them: the worker calls :func:`begin` as it starts each, so ``attempts`` of
    the ones it never reached stays as it was. A cheap read first: no write lock is taken when
    nothing is due."""
    now = time.time() if now is None else now
    with store.lock:
        due = store.conn.execute(
            "SELECT 1 FROM webhook_deliveries WHERE (state IN ('queued','failed') AND next_attempt_at <= ?)"
            " OR (state='processing' AND lease_until < ?) LIMIT 1", (now, now)).fetchone()
    if due is None:
        return []
    with store.transaction() as c:
        _bury_crashed(c, policy, now)
        ids = [r[0] for r in c.execute(
            "SELECT id FROM webhook_deliveries WHERE"
            " (state IN ('queued','failed') AND next_attempt_at <= ?)"
            " OR (state='processing' AND lease_until < ?)"
            " ORDER BY received_at, id LIMIT ?", (now, now, limit)).fetchall()]
        out = []
        for i in ids:
            c.execute("UPDATE webhook_deliveries SET state='processing',"
                      " lease_owner=?, lease_until=?, started_at=? WHERE id=?",
                      (worker_id, now + policy.lease_s, now, i))
            full = c.execute("SELECT * FROM webhook_deliveries WHERE id=?", (i,))
            cols = [d[0] for d in full.description]
            out.append(Delivery.from_row(dict(zip(cols, full.fetchone()))))
        return out


def begin(store: Store, worker_id: str, key: str, now: float | None = None) -> int | None:
    """Count the attempt a worker starts on delivery ``key`` of a batch it leased
    (:func:`claim_many`). Returns the delivery's ``attempts`` now (this one included); None when
    the lease was lost (another worker took the delivery over: do not run it)."""
    now = time.time() if now is None else now
    with store.transaction() as c:
        if c.execute("UPDATE webhook_deliveries SET attempts=attempts+1, started_at=? WHERE id=?"
                     " AND state='processing' AND lease_owner=?", (now, key, worker_id)).rowcount != 1:
            return None
        return c.execute("SELECT attempts FROM webhook_deliveries WHERE id=?", (key,)).fetchone()[0]


#: How the dead-letter reason of a delivery whose worker died on its last attempt begins.
WORKER_DIED = "its worker died handling it"


def _bury_crashed(c, policy: QueuePolicy, now: float) -> list[str]:
    """Dead-letter, inside transaction ``c``, the deliveries whose lease expired (their worker
    died, or stopped renewing) on their last allowed attempt: what kills a worker every time would
    otherwise be claimed again by each worker restarted after it, for ever. Returns their ids."""
    rows = c.execute("SELECT id, attempts, last_error FROM webhook_deliveries WHERE state='processing'"
                     " AND lease_until < ? AND attempts >= ?", (now, policy.max_attempts)).fetchall()
    for key, attempts, last_error in rows:
        if last_error:
            reason = (f"{WORKER_DIED} on attempt {attempts} of {policy.max_attempts} (the process was killed:"
                      f" out of memory, or a crash); the attempt before failed: {last_error}")
        else:
            reason = (f"{WORKER_DIED} {attempts} times (the process was killed: out of memory, or a crash);"
                      " look for OOM kills or crashes in the worker's log")
        c.execute("UPDATE webhook_deliveries SET state='dead', finished_at=?, lease_owner='', lease_until=0,"
                  " last_error=?, dead_reason=? WHERE id=?",
                  (now, f"{WORKER_DIED} (attempt {attempts})", reason[:4000], key))
    return [r[0] for r in rows]


def bury_crashed(store: Store, policy: QueuePolicy = QueuePolicy(), now: float | None = None) -> list[Delivery]:
    """Dead-letter the deliveries whose worker died on their last allowed attempt (see
    :func:`_bury_crashed`; :func:`claim` and :func:`claim_many` do it too, so none is ever run
    again) and return them, for the worker to raise the dead-letter alarm. Reason:
    :data:`WORKER_DIED` ``N times …``."""
    now = time.time() if now is None else now
    with store.lock:
        due = store.conn.execute("SELECT 1 FROM webhook_deliveries WHERE state='processing' AND lease_until < ?"
                                 " AND attempts >= ? LIMIT 1", (now, policy.max_attempts)).fetchone()
    if due is None:
        return []
    with store.transaction() as c:
        keys = _bury_crashed(c, policy, now)
    return [d for d in (get(store, k) for k in keys) if d is not None]


def finish_many(store: Store, worker_id: str, results: list[tuple[str, str, str, bool]],
                policy: QueuePolicy = QueuePolicy(), now: float | None = None,
                rng: random.Random | None = None) -> list[str | None]:
    """Record several attempts in one transaction. ``results``: ``(id, "done" | "error" | "paused",
    text, permanent)`` — ``text`` is the outcome for done, the error otherwise, why it waits for
    paused (:func:`pause`). Returns the new state of each (``done``/``failed``/``dead``/``paused``,
    None when the lease was lost)."""
    now = time.time() if now is None else now
    out: list[str | None] = []
    with store.transaction() as c:
        for key, kind, text, permanent in results:
            row = c.execute("SELECT attempts FROM webhook_deliveries WHERE id=? AND state='processing'"
                            " AND lease_owner=?", (key, worker_id)).fetchone()
            if row is None:
                out.append(None)
                continue
            if kind == "done":
                c.execute("UPDATE webhook_deliveries SET state='done', finished_at=?, lease_owner='',"
                          " outcome=?, last_error='' WHERE id=?", (now, text[:2000], key))
                _resolve_superseded(c, key, now)
                out.append("done")
                continue
            if kind == "paused":
                out.append(_pause_row(c, key, text[:4000], now))
                continue
            out.append(_fail_row(c, key, row[0], text[:4000], permanent, policy, now, rng))
    return out


def _fail_row(c, key: str, attempts: int, error: str, permanent: bool, policy: QueuePolicy, now: float,
              rng: random.Random | None) -> str:
    if permanent or attempts >= policy.max_attempts:
        reason = (f"cannot be handled: {error}" if permanent
                  else f"gave up after {attempts} attempts; last error: {error}")
        c.execute("UPDATE webhook_deliveries SET state='dead', finished_at=?, lease_owner='',"
                  " last_error=?, dead_reason=? WHERE id=?", (now, error, reason[:4000], key))
        return "dead"
    c.execute("UPDATE webhook_deliveries SET state='failed', lease_owner='', lease_until=0,"
              " last_error=?, next_attempt_at=? WHERE id=?", (error, now + policy.backoff(attempts, rng), key))
    return "failed"


def _pause_row(c, key: str, reason: str, now: float) -> str:
    # the attempt is not charged: a suspension is an owner's decision, and it may outlast any
    # number of retries
    c.execute("UPDATE webhook_deliveries SET state='paused', attempts=MAX(attempts-1, 0), lease_owner='',"
              " lease_until=0, last_error=?, next_attempt_at=? WHERE id=?", (reason, now, key))
    return "paused"


def pause(store: Store, key: str, worker_id: str, reason: str, now: float | None = None) -> str | None:
    """Set a leased delivery aside until its installation's suspension is lifted
    (:func:`resume_paused`); ``reason`` is kept as its ``last_error``. Its attempt is not counted.
    Returns ``"paused"``, None when the lease was lost."""
    now = time.time() if now is None else now
    with store.transaction() as c:
        row = c.execute("SELECT 1 FROM webhook_deliveries WHERE id=? AND state='processing'"
                        " AND lease_owner=?", (key, worker_id)).fetchone()
        if row is None:
            return None
        return _pause_row(c, key, reason[:4000], now)


def resume_paused(store: Store, suspended: Collection[int], now: float | None = None) -> list[str]:
    """Queue again, due at ``now`` (epoch s), the paused deliveries whose installation is not in
    ``suspended`` (the installation ids still suspended). Returns their ids, oldest first."""
    now = time.time() if now is None else now
    with store.lock:
        rows = store.conn.execute("SELECT id, installation_id FROM webhook_deliveries WHERE state='paused'"
                                  " ORDER BY received_at, id").fetchall()
    keys = [k for k, inst in rows if inst not in suspended]
    if keys:
        with store.transaction() as c:
            for k in keys:
                c.execute("UPDATE webhook_deliveries SET state='queued', next_attempt_at=? WHERE id=? AND state='paused'",
                          (now, k))
    return keys


def paused_by_installation(store: Store) -> list[dict]:
    """The paused deliveries (:func:`pause`) by installation: ``[{"installation_id", "count",
    "since"}]`` (``since``: epoch s, when the oldest of them was set aside), by installation id."""
    with store.lock:
        rows = store.conn.execute("SELECT installation_id, count(*), min(next_attempt_at) FROM webhook_deliveries"
                                  " WHERE state='paused' GROUP BY installation_id ORDER BY installation_id").fetchall()
    return [{"installation_id": i, "count": int(n), "since": float(t or 0.0)} for i, n, t in rows]


def complete(store: Store, key: str, worker_id: str, outcome: str = "",
             now: float | None = None) -> bool:
    """Mark a leased delivery done. False when the lease was lost (another worker took over)."""
    now = time.time() if now is None else now
    with store.transaction() as c:
        cur = c.execute("UPDATE webhook_deliveries SET state='done', finished_at=?, lease_owner='',"
                        " outcome=?, last_error='' WHERE id=? AND state='processing' AND lease_owner=?",
                        (now, outcome[:2000], key, worker_id))
        if cur.rowcount != 1:
            return False
        _resolve_superseded(c, key, now)
        return True


def _resolve_superseded(c, key: str, now: float) -> None:
    """Delivery ``key`` was just handled: if it had been dead (a redelivery), it resolved its own
    dead letter; and it resolves the dead letters it supersedes (:data:`SUPERSEDES`). Both keep
    their ``dead_reason`` and name ``key`` in ``resolved_by``."""
    event, action, repo, received, dead_reason = c.execute(
        "SELECT event, action, repo, received_at, dead_reason FROM webhook_deliveries WHERE id=?", (key,)).fetchone()
    if dead_reason:
        c.execute("UPDATE webhook_deliveries SET resolved_by=?, resolved_at=? WHERE id=?", (key, now, key))
    work = SUPERSEDES.get((event or "", action or ""))
    if not work or not repo:
        return
    same = [k for k, w in SUPERSEDES.items() if w == work]
    c.execute("UPDATE webhook_deliveries SET state='resolved', resolved_by=?, resolved_at=?,"
              " outcome=? WHERE state='dead' AND repo=? AND received_at<=? AND id!=?"
              f" AND ({' OR '.join(['(event=? AND action=?)'] * len(same))})",
              (key, now, f"resolved: {event}.{action} {key} did this work later", repo, received, key,
               *[x for pair in same for x in pair]))


def resolved_by(store: Store, key: str) -> list[Delivery]:
    """The dead letters delivery ``key``'s success resolved (itself, when it was a redelivery of a
    dead one), oldest first; empty for almost every delivery."""
    with store.lock:
        cur = store.conn.execute("SELECT * FROM webhook_deliveries WHERE resolved_by=? ORDER BY received_at, id", (key,))
        cols = [d[0] for d in cur.description]
        return [Delivery.from_row(dict(zip(cols, r))) for r in cur.fetchall()]


def fail(store: Store, key: str, worker_id: str, error: str, *, permanent: bool = False,
         policy: QueuePolicy = QueuePolicy(), now: float | None = None,
         rng: random.Random | None = None) -> str | None:
    """Record a failed attempt. Returns the new state: ``"failed"`` (will be retried after the
    backoff) or ``"dead"`` (permanent error, or ``max_attempts`` reached; ``dead_reason`` says
    which); None when the lease was lost."""
    now = time.time() if now is None else now
    error = error[:4000]
    with store.transaction() as c:
        row = c.execute("SELECT attempts FROM webhook_deliveries WHERE id=? AND state='processing'"
                        " AND lease_owner=?", (key, worker_id)).fetchone()
        if row is None:
            return None
        return _fail_row(c, key, row[0], error, permanent, policy, now, rng)


def renew_leases(store: Store, worker_id: str, until: float) -> int:
    """Extend to ``until`` the leases ``worker_id`` holds (deliveries it claimed and has not
    finished), so a delivery that runs longer than ``lease_s`` is not claimed by a second worker
    while the first still runs it. Returns how many were extended."""
    with store.transaction() as c:
        return c.execute("UPDATE webhook_deliveries SET lease_until=? WHERE state='processing' AND lease_owner=?",
                         (until, worker_id)).rowcount


def hand_back(store: Store, worker_id: str, keys: list[str], now: float | None = None, *,
              begun: Iterable[str] = ()) -> int:
    """Give deliveries ``worker_id`` leased but did not finish (it is shutting down) back to the
    queue at once, not counted as an attempt: the next worker need not wait out the lease, which
    it cannot tell is orphaned when it runs under the same pid (a restarted container) or on
    another host (a recreated one). ``begun``: those of ``keys`` whose attempt was counted
    (:func:`begin`) and cut short; the others were never begun. Returns how many were handed back."""
    now = time.time() if now is None else now
    begun = set(begun)
    n = 0
    with store.transaction() as c:
        for key in keys:
            n += c.execute("UPDATE webhook_deliveries SET state='queued', attempts=MAX(attempts-?, 0), lease_owner='',"
                           " lease_until=0, next_attempt_at=? WHERE id=? AND state='processing' AND lease_owner=?",
                           (1 if key in begun else 0, now, key, worker_id)).rowcount
    return n


def release_orphans(store: Store, is_alive) -> list[str]:
    """Expire the leases of deliveries whose worker is known dead (``is_alive(lease_owner)`` is
    False), so a restarted worker takes them over at once instead of after ``lease_s``.
    Returns the released ids."""
    with store.transaction() as c:
        rows = c.execute("SELECT id, lease_owner FROM webhook_deliveries WHERE state='processing'").fetchall()
        gone = [i for i, owner in rows if not is_alive(owner)]
        for i in gone:
            c.execute("UPDATE webhook_deliveries SET lease_until=0 WHERE id=?", (i,))
    return gone


def retry_dead(store: Store, key: str, now: float | None = None) -> bool:
    """Put a dead, failed or dismissed delivery back in the queue (``forksync queue --retry ID``;
    a dismissal stays recorded)."""
    now = time.time() if now is None else now
    with store.transaction() as c:
        cur = c.execute("UPDATE webhook_deliveries SET state='queued', attempts=0, next_attempt_at=?"
                        " WHERE id=? AND state IN ('dead','failed','dismissed')", (now, key))
        return cur.rowcount == 1


def dismiss(store: Store, key: str, *, by: str, reason: str = "", now: float | None = None) -> bool:
    """Settle dead letter ``key`` that can never succeed (``forksync queue --dismiss ID``): state
    ``dismissed``, ``by`` (who: the operator's login), ``now`` (epoch s) and ``reason`` (why, cut
    to 1,000 characters) recorded, its ``dead_reason`` kept. No longer an alarm, still listed,
    never pruned (see the module doc). Returns False when ``key`` is not a dead delivery."""
    now = time.time() if now is None else now
    with store.transaction() as c:
        cur = c.execute("UPDATE webhook_deliveries SET state='dismissed', dismissed_by=?, dismissed_at=?,"
                        " dismiss_reason=? WHERE id=? AND state='dead'", (by[:100], now, reason[:1000], key))
        return cur.rowcount == 1


def untaken_dismissals(store: Store) -> list[Delivery]:
    """The dismissed dead letters (:func:`dismiss`) whose dismissal no worker has taken off the
    status issue yet (:func:`mark_dismissals_taken`), oldest dismissal first. The dismissal is
    made by ``forksync queue``, a process that cannot reach GitHub: the worker re-renders the
    status issues that listed them (:class:`bot.app.worker.Worker`), which nothing else would do
    before the fork's next sync, and marks them taken only once that render went through (a
    render GitHub failed leaves them for a later turn)."""
    untaken = "state='dismissed' AND coalesce(dismissal_shown_at, 0) < dismissed_at"
    with store.lock:
        cur = store.conn.execute(f"SELECT * FROM webhook_deliveries WHERE {untaken} ORDER BY dismissed_at, id")
        cols = [d[0] for d in cur.description]
        return [Delivery.from_row(dict(zip(cols, r))) for r in cur.fetchall()]


def mark_dismissals_taken(store: Store, ds: Sequence[Delivery]) -> None:
    """Mark the dismissals of ``ds`` (as :func:`untaken_dismissals` read them) taken off the
    status issue: a letter retried and dismissed again since (a later ``dismissed_at``) stays
    untaken, so the next turn takes that dismissal too."""
    with store.transaction() as c:
        for d in ds:
            c.execute("UPDATE webhook_deliveries SET dismissal_shown_at=dismissed_at WHERE id=? AND dismissed_at=?",
                      (d.id, d.dismissed_at))


def prune(store: Store, keep_s: float, now: float | None = None) -> int:
    """Delete the deliveries done (or resolved) more than ``keep_s`` seconds before ``now``, bodies
    and all; returns how many. Each row keeps the body GitHub signed (up to 25 MB), so without this
    the store grows with every delivery. GitHub redelivers only within 3 days ("Redelivering
    webhooks"), so a retention of days keeps every redelivery a ``duplicate``. Dead letters are
    kept until resolved, dismissed ones for good (an operator's decision stays on record), and
    nothing queued, failed or in progress is touched."""
    now = time.time() if now is None else now
    with store.transaction() as c:
        cur = c.execute("DELETE FROM webhook_deliveries WHERE (state='done' AND finished_at < ?)"
                        " OR (state='resolved' AND resolved_at < ?)", (now - keep_s, now - keep_s))
        return cur.rowcount


def counts(store: Store) -> dict[str, int]:
    """Deliveries per state (every state present, 0 when empty)."""
    with store.lock:
        rows = store.conn.execute("SELECT state, COUNT(*) FROM webhook_deliveries GROUP BY state").fetchall()
    out = {s: 0 for s in STATES}
    out.update({s: n for s, n in rows})
    return out


def heartbeat(store: Store, worker_id: str, started_at: float, now: float, *, login_unknown: str = "") -> None:
    """Record that worker ``worker_id`` is alive at ``now`` (epoch s), and why it does not know the
    bot's own login (``""``: it knows it)."""
    with store.lock:
        store.conn.execute("INSERT INTO queue_workers (worker_id, started_at, beat_at, login_unknown) VALUES (?, ?, ?, ?)"
                           " ON CONFLICT(worker_id) DO UPDATE SET beat_at=excluded.beat_at,"
                           " login_unknown=excluded.login_unknown", (worker_id, started_at, now, login_unknown))


def probe_write(store: Store, now: float) -> None:
    """Write and commit one small row (``webhook_intake_probe``): raises what storing a delivery
    would raise while the volume is full, read-only or failing (sqlite3 errors, OSError)."""
    store.ensure(INTAKE_PROBE)
    with store.transaction() as c:
        c.execute("INSERT INTO webhook_intake_probe (id, probed_at) VALUES (1, ?)"
                  " ON CONFLICT(id) DO UPDATE SET probed_at=excluded.probed_at", (now,))


def last_heartbeat(store: Store) -> float | None:
    """The newest worker heartbeat (epoch s), None when no worker ever beat."""
    store.ensure(WORKERS)
    with store.lock:
        row = store.conn.execute("SELECT MAX(beat_at) FROM queue_workers").fetchone()
    return row[0] if row else None


def login_unknown(store: Store, since: float) -> list[dict]:
    """``[{"worker_id", "login_unknown"}]`` of the workers alive since ``since`` (epoch s: their last
    heartbeat) that do not know the bot's own login, by worker id. A worker gone since is left
    out: its successor reports for itself."""
    store.ensure(WORKERS)
    with store.lock:
        rows = store.conn.execute("SELECT worker_id, login_unknown FROM queue_workers WHERE beat_at >= ?"
                                  " AND coalesce(login_unknown, '') != '' ORDER BY worker_id", (since,)).fetchall()
    return [{"worker_id": w, "login_unknown": why} for w, why in rows]


def oldest_due_at(store: Store, now: float) -> float | None:
    """Since when (epoch s) the longest-waiting *due* delivery has been claimable but not
    claimed (queued or failed with its retry time reached); None when nothing is due."""
    with store.lock:
        row = store.conn.execute("SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE state IN"
                                 " ('queued','failed') AND next_attempt_at <= ?", (now,)).fetchone()
    return row[0] if row else None


def oldest_pending_at(store: Store) -> float | None:
    """``received_at`` (epoch s) of the oldest delivery not yet done (queued, failed or processing)."""
    with store.lock:
        row = store.conn.execute("SELECT MIN(received_at) FROM webhook_deliveries WHERE state IN"
                                 " ('queued','failed','processing')").fetchone()
    return row[0] if row else None


def recent_latencies(store: Store, limit: int) -> list[float]:
    """Received → finished, in seconds, of the last ``limit`` done deliveries (newest first)."""
    with store.lock:
        return [r[0] for r in store.conn.execute(
            "SELECT finished_at - received_at FROM webhook_deliveries WHERE state='done' AND finished_at > 0"
            " ORDER BY finished_at DESC LIMIT ?", (limit,)).fetchall()]


def listing(store: Store, states: Iterable[str] | None = None, limit: int = 100) -> list[Delivery]:
    """The newest deliveries (optionally only some states), newest first."""
    sql = "SELECT * FROM webhook_deliveries"
    args: list = []
    states = list(states or [])
    if states:
        sql += f" WHERE state IN ({','.join('?' * len(states))})"
        args += states
    sql += " ORDER BY received_at DESC, id DESC LIMIT ?"
    args.append(limit)
    with store.lock:
        cur = store.conn.execute(sql, args)
        cols = [d[0] for d in cur.description]
        return [Delivery.from_row(dict(zip(cols, r))) for r in cur.fetchall()]


def get(store: Store, key: str) -> Delivery | None:
    with store.lock:
        cur = store.conn.execute("SELECT * FROM webhook_deliveries WHERE id=?", (key,))
        cols = [d[0] for d in cur.description]
        r = cur.fetchone()
    return Delivery.from_row(dict(zip(cols, r))) if r else None


def _in_state(store: Store, state: str, columns: str, newest_by: str, repo: str | None, limit: int) -> list[tuple]:
    """Rows ``(id, event, action, repo, *columns)`` of the deliveries in ``state`` (of ``repo`` when
    given), newest ``newest_by`` first, at most ``limit``. ``columns`` and ``newest_by`` are this
    module's own column names, never input."""
    sql = f"SELECT id, event, action, repo, {columns} FROM webhook_deliveries WHERE state=?"
    args: list = [state]
    if repo is not None:
        sql += " AND repo=?"
        args.append(repo)
    with store.lock:
        return store.conn.execute(sql + f" ORDER BY {newest_by} DESC, id DESC LIMIT ?", [*args, limit]).fetchall()


def dead_letters(store: Store, repo: str | None = None, limit: int = 20) -> list[dict]:
    """Dead-lettered deliveries (of ``repo`` when given), newest first:
    ``[{"id", "event", "action", "repo", "reason", "at"}]`` (``at``: epoch s it went dead)."""
    rows = _in_state(store, "dead", "dead_reason, last_error, finished_at", "finished_at", repo, limit)
    return [{"id": i, "event": e or "", "action": a or "", "repo": r or "",
             "reason": " ".join((dr or le or "no reason recorded").split())[:300], "at": f or 0.0}
            for i, e, a, r, dr, le, f in rows]


def dismissed_letters(store: Store, repo: str | None = None, limit: int = 20) -> list[dict]:
    """Dead letters an operator dismissed (:func:`dismiss`; of ``repo`` when given), newest
    dismissal first: ``[{"id", "event", "action", "repo", "reason", "by", "at", "why"}]``
    (``reason``: why it went dead; ``by``, ``at`` (epoch s) and ``why``: the dismissal)."""
    rows = _in_state(store, "dismissed", "dead_reason, dismissed_by, dismissed_at, dismiss_reason", "dismissed_at",
                     repo, limit)
    return [{"id": i, "event": e or "", "action": a or "", "repo": r or "",
             "reason": " ".join((dr or "no reason recorded").split())[:300], "by": b or "", "at": t or 0.0,
             "why": " ".join((w or "").split())[:300]}
            for i, e, a, r, dr, b, t, w in rows]


def recent_errors(store: Store, limit: int = 20) -> list[dict]:
    """Deliveries whose last attempt failed (waiting for a retry, or dead), newest first:
    ``[{"id", "event", "repo", "error", "at"}]`` (``at``: epoch s of that attempt's end)."""
    with store.lock:
        rows = store.conn.execute("SELECT id, event, repo, last_error, finished_at FROM webhook_deliveries WHERE state IN "
                                  "('failed', 'dead') AND coalesce(last_error, '') != '' ORDER BY finished_at DESC, id DESC "
                                  "LIMIT ?", [limit]).fetchall()
    return [{"id": i, "event": e or "", "repo": r or "", "error": " ".join((le or "").split())[:300], "at": f or 0.0}
            for i, e, r, le, f in rows]


def timed_out(store: Store, limit: int = 20) -> list[dict]:
    """Deliveries not done whose last attempt was stopped at the delivery time limit (queued or
    failed for a retry, or running again), oldest first: ``[{"id", "event", "repo", "error"}]``.
    A delivery that then succeeds drops out (``done`` clears its error); one that ends dead is a
    dead letter."""
    with store.lock:
        rows = store.conn.execute("SELECT id, event, repo, last_error FROM webhook_deliveries WHERE state IN "
                                  "('queued', 'failed', 'processing') AND substr(last_error, 1, ?) = ? "
                                  "ORDER BY received_at, id LIMIT ?", [len(TIMED_OUT), TIMED_OUT, limit]).fetchall()
    return [{"id": i, "event": e or "", "repo": r or "", "error": " ".join((le or "").split())[:300]}
            for i, e, r, le in rows]


def dead_letter_alarm(store: Store) -> str:
    """The dead-letter alarm as one line ("" when no delivery is dead), for ``/healthz`` and
    ``/metrics``: a delivery that failed for good means work GitHub asked for was not done."""
    n = counts(store).get("dead", 0)
    if not n:
        return ""
    newest = dead_letters(store, limit=1)[0]
    return (f"{n} dead-lettered deliver{'y' if n == 1 else 'ies'}; newest {newest['id']} "
            f"({newest['event']}{'.' + newest['action'] if newest['action'] else ''}"
            f"{' on ' + newest['repo'] if newest['repo'] else ''}): {newest['reason']}")


def as_json(d: Delivery) -> str:
    return json.dumps({k: v for k, v in d.__dict__.items() if k != "body"}, sort_keys=True)


__all__ = ["paused_by_installation", "STATES", "QueuePolicy", "Delivery", "delivery_key", "summarize_payload", "enqueue", "enqueue_many",
           "claim", "claim_many", "finish_many", "complete", "fail", "pause", "resume_paused", "resolved_by", "SUPERSEDES",
           "begin", "bury_crashed", "WORKER_DIED", "renew_leases", "hand_back", "release_orphans", "retry_dead", "dismiss",
           "dismissed_letters", "prune", "counts",
           "listing", "get", "as_json",
           "recent_errors", "timed_out", "TIMED_OUT",
           "dead_letters", "dead_letter_alarm"]
