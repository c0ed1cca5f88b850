"""The fake's webhook sender: payloads from GitHub's real examples, signed and delivered like
GitHub's hookshot.

- Payloads start from ``spec/webhooks/<event>.<action>.json`` (octokit/webhooks examples, see
  ``spec/LICENSES.md``) with ``repository``, ``installation``, ``sender`` and the event's own
  object (``pull_request``, ``issue``, ``comment``, ``check_run``, …) replaced by the fake's
  state, then validated against GitHub's official schema (``spec/webhooks.json``); a payload that
  fails is recorded as an ``invalid-webhook`` violation (the fake drifted).
- The body is serialised once; ``X-Hub-Signature-256`` (HMAC-SHA256) and the legacy
  ``X-Hub-Signature`` (HMAC-SHA1) sign exactly those bytes. Headers: ``X-GitHub-Event``,
  ``X-GitHub-Delivery`` (a GUID per event, kept on redelivery), ``X-GitHub-Hook-ID``,
  ``X-GitHub-Hook-Installation-Target-Type``/``-ID``, ``User-Agent: GitHub-Hookshot/…``,
  ``Content-Type: application/json`` (github-platform notes §3).
- GitHub waits 10 s for a 2xx and then records a failure; so does :meth:`Webhooks.deliver`.
- Events implied by state changes go through :meth:`Webhooks.emit` into an ordered outbox sent in
  the background to :attr:`Webhooks.url`; ``await fake.webhooks.drain()`` waits for it.
"""
from __future__ import annotations

import asyncio
import copy
import functools
import hashlib
import hmac
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp

from bot.fakegithub.contract import SPEC_DIR

if TYPE_CHECKING:
    from bot.fakegithub.server import FakeGitHub

EXAMPLES = SPEC_DIR / "webhooks"
HOOKSHOT_UA = "GitHub-Hookshot/fake0001"
DELIVERY_TIMEOUT_S = 10.0

# event.action → example file used as the template when no file of that exact name exists
TEMPLATE_FALLBACK = {
    "issues.closed": "issues.edited", "issues.reopened": "issues.edited", "issues.labeled": "issues.edited",
    "issues.unlabeled": "issues.edited",
    "pull_request.edited": "pull_request.reopened", "pull_request.unlabeled": "pull_request.labeled",
    "check_run.created": "check_run.completed", "check_run.requested_action": "check_run.rerequested",
    "check_suite.rerequested": "check_suite.requested",
    # the same payload shapes (GitHub's webhook docs): what was installed or added is now gone
    "installation.deleted": "installation.created",
    "installation_repositories.removed": "installation_repositories.added",
    "installation.suspend": "installation.created", "installation.unsuspend": "installation.created",
}


@functools.lru_cache(maxsize=None)
def _example_text(name: str) -> str:
    return (EXAMPLES / f"{name}.json").read_text()


def example(name: str) -> dict:
    """A fresh copy of an example payload, e.g. ``example("pull_request.opened")``."""
    return json.loads(_example_text(name))


def sign(secret: str, body: bytes) -> tuple[str, str]:
    """``(X-Hub-Signature-256, X-Hub-Signature)`` values for ``body``."""
    key = secret.encode()
    return ("sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest(),
            "sha1=" + hmac.new(key, body, hashlib.sha1).hexdigest())


@dataclass
class Delivery:
    guid: str
    event: str
    action: str | None
    body: bytes
    headers: dict[str, str]
    url: str | None = None
    statuses: list[int | None] = field(default_factory=list)     # one per attempt; None: no answer
    errors: list[str] = field(default_factory=list)

    @property
    def payload(self) -> Any:
        return json.loads(self.body)

    @property
    def ok(self) -> bool:
        return bool(self.statuses) and self.statuses[-1] is not None and 200 <= self.statuses[-1] < 300


class Webhooks:
    def __init__(self, fake: "FakeGitHub", *, url: str | None = None, secret: str = "", hook_id: int = 4242):
        self.fake = fake
        self.url = url
        self.secret = secret
        self.hook_id = hook_id
        self.deliveries: list[Delivery] = []     # every delivery made (emit or deliver), in order
        self.emitted: list[Delivery] = []        # built from state changes (sent or not)
        self.auto_deliver = True
        self.timeout_s = DELIVERY_TIMEOUT_S
        self.duplicate_next = 0                  # send the next N emitted events twice (same GUID)
        self.held: list[Delivery] = []           # emitted while auto_deliver is off, not yet sent
        self._outbox: asyncio.Queue | None = None
        self._task: asyncio.Task | None = None
        self._session: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        self._session = aiohttp.ClientSession()
        self._outbox = asyncio.Queue()
        self._task = asyncio.create_task(self._run(), name="fakegithub-webhooks")

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        if self._session:
            await self._session.close()

    # --- building ------------------------------------------------------------------------------
    def build(self, event: str, action: str | None, fields: dict, *, template: str | None = None) -> dict:
        """A payload for ``event``/``action`` from the matching example with ``fields`` laid over it
        (top-level keys replaced; objects merged one level deep so example-only fields stay)."""
        name = template or (f"{event}.{action}" if action else event)
        if not (EXAMPLES / f"{name}.json").exists():
            name = TEMPLATE_FALLBACK.get(name, name)
        payload = example(name)
        if action is not None:
            payload["action"] = action
        for key, value in fields.items():
            if isinstance(value, dict) and isinstance(payload.get(key), dict):
                merged = copy.deepcopy(payload[key])
                merged.update(value)
                payload[key] = merged
            else:
                payload[key] = value
        return payload

    def _headers(self, event: str, guid: str, body: bytes, payload: dict) -> dict[str, str]:
        sig256, sig1 = sign(self.secret, body)
        inst = payload.get("installation") if isinstance(payload, dict) else None
        app = next(iter(self.fake.state.apps.values()), None)
        return {
            "User-Agent": HOOKSHOT_UA, "Content-Type": "application/json", "X-GitHub-Event": event,
            "X-GitHub-Delivery": guid, "X-GitHub-Hook-ID": str(self.hook_id),
            "X-GitHub-Hook-Installation-Target-Type": "integration" if inst else "repository",
            "X-GitHub-Hook-Installation-Target-ID": str(app.id if (inst and app) else
                                                         (payload.get("repository") or {}).get("id", 0)),
            "X-Hub-Signature-256": sig256, "X-Hub-Signature": sig1,
        }

    def prepare(self, event: str, payload: dict, *, delivery_id: str | None = None, validate: bool = True) -> Delivery:
        """Serialise, validate and sign one delivery without sending it."""
        action = payload.get("action") if isinstance(payload, dict) else None
        if validate and isinstance(payload, dict):
            name = event.replace("_", "-") + (f"-{action.replace('_', '-')}" if action else "")
            if name in self.fake.contract_webhook_names():
                err = self.fake.contract.check_webhook(name, payload)
                if err:
                    self.fake.contract.record("invalid-webhook", "POST", self.url or "<webhook>", name, err)
        body = json.dumps(payload).encode()
        guid = delivery_id or str(uuid.uuid4())
        return Delivery(guid, event, action, body, self._headers(event, guid, body, payload), self.url)

    # --- sending -------------------------------------------------------------------------------
    async def send(self, d: Delivery, url: str | None = None) -> Delivery:
        """POST the delivery's exact bytes and headers; record the answer (or the failure)."""
        target = url or self.url or d.url
        if target is None:
            raise RuntimeError("no webhook URL: set fake.webhooks.url or pass url=")
        d.url = target
        if d not in self.deliveries:
            self.deliveries.append(d)
        session = self._session or aiohttp.ClientSession()
        try:
            async with session.post(target, data=d.body, headers=d.headers,
                                    timeout=aiohttp.ClientTimeout(total=self.timeout_s)) as resp:
                await resp.read()
                d.statuses.append(resp.status)
        except (aiohttp.ClientError, asyncio.TimeoutError) as e:
            d.statuses.append(None)
            d.errors.append(f"{type(e).__name__}: {e}")
        finally:
            if session is not self._session:
                await session.close()
        return d

    async def deliver(self, event: str, payload: dict, *, delivery_id: str | None = None,
                      url: str | None = None, validate: bool = True) -> Delivery:
        """Sign and send one event now (the test drives it); returns the delivery record."""
        return await self.send(self.prepare(event, payload, delivery_id=delivery_id, validate=validate), url)

    async def redeliver(self, guid: str, url: str | None = None) -> Delivery:
        """Send an earlier delivery again: the same bytes under the same GUID (GitHub's redelivery)."""
        for d in reversed(self.deliveries + self.emitted):
            if d.guid == guid:
                return await self.send(d, url)
        raise KeyError(f"no delivery {guid}")

    def emit(self, event: str, payload: dict) -> Delivery:
        """Queue an event implied by a state change (sent in order in the background when
        :attr:`url` is set and :attr:`auto_deliver` is on)."""
        action = payload.get("action")
        name = event.replace("_", "-") + (f"-{action.replace('_', '-')}" if action else "")
        if name not in self.fake.contract_webhook_names():
            self.fake.contract.record("invalid-webhook", "POST", self.url or "<webhook>", name,
                                      "the fake emits an event spec/webhooks.json has no schema for")
        d = self.prepare(event, payload)
        self.emitted.append(d)
        if not self.auto_deliver:
            self.held.append(d)
        elif self.url and self._outbox is not None:
            self._outbox.put_nowait(d)
            if self.duplicate_next > 0:
                self.duplicate_next -= 1
                self._outbox.put_nowait(d)
        return d

    async def flush(self, order: str = "fifo") -> list[Delivery]:
        """Send the held deliveries now, ``fifo``, ``reverse`` (out of order) or ``shuffle``d
        (GitHub does not guarantee order); returns them in the order sent."""
        batch, self.held = list(self.held), []
        if order == "reverse":
            batch.reverse()
        elif order == "shuffle":
            import random

            random.Random(len(batch)).shuffle(batch)
        for d in batch:
            await self.send(d)
        return batch

    async def ping(self) -> Delivery:
        """The ``ping`` GitHub sends when a hook is created (an App hook: ``hook.type: "App"``)."""
        app = next(iter(self.fake.state.apps.values()), None)
        hook = {"type": "App", "id": self.hook_id, "name": "web", "active": True,
                "events": ["push", "pull_request", "issue_comment", "issues", "check_run"],
                "config": {"content_type": "json", "insecure_ssl": "0", "url": self.url or ""},
                "app_id": app.id if app else 0}
        payload = self.build("ping", None, {"hook": hook, "hook_id": self.hook_id})
        payload.pop("repository", None)
        payload.pop("organization", None)
        if app:
            payload["sender"] = self.fake.render.user(app.owner)
        return await self.deliver("ping", payload)

    async def drain(self) -> None:
        """Wait until every queued event was sent (answered or failed)."""
        if self._outbox is not None:
            await self._outbox.join()

    async def _run(self) -> None:
        assert self._outbox is not None
        while True:
            d = await self._outbox.get()
            try:
                await self.send(d)
            except Exception as e:  # noqa: BLE001 - the sender must survive a bad target
                d.errors.append(f"{type(e).__name__}: {e}")
            finally:
                self._outbox.task_done()

    def of(self, event: str, action: str | None = None) -> list[Delivery]:
        """Emitted deliveries of one kind, oldest first."""
        return [d for d in self.emitted if d.event == event and (action is None or d.action == action)]


def example_names() -> list[str]:
    return sorted(p.stem for p in Path(EXAMPLES).glob("*.json"))
