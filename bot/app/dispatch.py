"""From a stored delivery to the handlers: decode, loop guard, route, run.

:class:`Dispatcher.process` is what :class:`bot.app.worker.Worker` calls for each leased delivery.
It returns a short *outcome* text (kept in the queue row) or raises
:class:`bot.app.worker.Unhandleable` for deliveries that can never succeed:

* the stored body is not a JSON object;
* a handler found the payload malformed (pydantic ``ValidationError``, ``PayloadError``, or a
  ``KeyError``/``TypeError``/``AttributeError`` raised while reading it); the reason names the
  wrong fields by their payload path (``comment.id: field required``:
  :func:`bot.github.common.from_payload`), never their values;
* GitHub answered 4xx other than 401/403/409/429 (a retry would get the same answer).

A delivery whose handling GitHub refuses because the App's installation is suspended (403 "This
installation has been suspended": :func:`bot.github.client.installation_suspended`; its
``installation.suspend`` webhook was missed, as GitHub does not redeliver it) is neither: the
suspension is recorded as that webhook would record it (its forks pause, ``/healthz`` warns) and
the delivery raises :class:`bot.app.worker.Paused`, to be handled once the suspension is lifted
(:meth:`Dispatcher.resume_paused`). The catch-up sync that follows the lift redoes upstream's
work only; a command, a pull request's change or a status issue's box would be lost otherwise.

Events whose sender is the bot itself are ignored (loop guard: ``sender.login`` is the
app's bot login, ``<slug>[bot]``, in any case: :func:`bot.core.logins.same_login`), as are GitHub's events that no handler takes (``star``,
``create``, … from a webhook that sends everything: acknowledged, never dead-lettered, so they
cannot turn ``/healthz`` red), events not in :data:`bot.github.events.GITHUB_EVENTS` (signed with
the webhook secret, so GitHub's own: events GitHub added since that list; logged as a warning) and
known events with an action nobody handles. Exempt:
``workflow_run`` (the bot dispatches GPU workflows itself; their completion carries its result,
and collecting it writes only check runs, whose events the guard still drops).

Handlers have the signature ``async def h(event: gidgethub.sansio.Event, ctx: Context)``; each
concern's module under :mod:`bot.handlers` exposes ``router``. All handlers matching an event run,
in a fixed order, even when one fails (:meth:`Dispatcher._run_all`).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

import gidgethub
from gidgethub import routing
from gidgethub.sansio import Event
from pydantic import ValidationError

from bot.agents.redact import scrub
from bot.app import queue as q
from bot.app.intake import Rejected, content_kind, decode_payload
from bot.app.worker import Paused, Unhandleable
from bot.core.logins import same_login
from bot.github.client import SUSPENDED_MESSAGE, installation_suspended
from bot.github.common import PayloadError, describe_invalid, error_to_raise, is_permanent
from bot.github.events import GITHUB_EVENTS
from bot.store import Store
from bot.sync import store as sync_store
from bot.sync.service import SyncError

log = logging.getLogger(__name__)

#: Events processed even when the bot itself caused them (see the module docstring).
LOOP_GUARD_EXEMPT = frozenset({"workflow_run"})


class MissingService:
    """Stands in a context for a service this process was not given: falsy (so a command can say it
    is not available), and any use raises :class:`bot.sync.service.SyncError`, so the delivery is
    retried rather than dead-lettered."""

    def __init__(self, what: str):
        self.what = what

    def __bool__(self) -> bool:
        return False

    def __getattr__(self, name: str):
        raise SyncError(f"no {self.what} service configured in this process")


@dataclass
class Context:
    """What a handler gets besides the event: the installation's GitHub client, the store, the
    runtime settings, the services (built once where the app is assembled, see
    :func:`bot.app.runtime.run_worker_loop`), and ``outcome`` lines it appends to (shown in
    ``forksync queue``)."""

    delivery: q.Delivery
    gh: Any                                   # bot.github.client client for the event's installation
    store: Store
    settings: Any                             # bot.cli.serve.ServeSettings
    sync: Any = None                          # bot.sync.service.SyncService
    validation: Any = None                    # bot.validation.service.ValidationService
    installation_id: int | None = None
    now: Callable[[], float] = time.time
    outcome: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.sync is None:
            self.sync = MissingService("sync")
        if self.validation is None:
            self.validation = MissingService("validation")

    def note(self, text: str) -> None:
        self.outcome.append(text)


def decode_body(body: bytes, content_type: str) -> Any:
    """The payload of a stored body, read as the intake read it before storing it
    (:func:`bot.app.intake.content_kind` and :func:`bot.app.intake.decode_payload`: media type
    case-insensitive, the charset its Content-Type names). Raises Unhandleable."""
    try:
        kind, charset = content_kind(content_type or "application/json")
        return decode_payload(kind, charset, body)
    except Rejected as e:
        raise Unhandleable(f"the stored body is not a webhook payload: {e.reason}") from None


def router_events(router: routing.Router) -> frozenset[str]:
    """Event names a router has any callback for (gidgethub keeps them in two dicts)."""
    return frozenset(router._shallow_routes) | frozenset(router._deep_routes)  # noqa: SLF001


class Dispatcher:
    """Routes stored deliveries to handlers. ``client_for(installation_id)`` returns the GitHub
    client to use (an installation client in App mode, the token client otherwise).
    ``learn_login()``: while ``bot_login`` is unknown, asked before each delivery for the bot's
    login (:meth:`bot.app.runtime.Clients.learn_login`: ``GET /user`` once its backoff has
    passed, ``""`` while still unknown; it never raises), so the loop guard holds from the
    delivery after GitHub answers."""

    def __init__(self, router: routing.Router, store: Store, settings: Any, *,
                 client_for: Callable[[int | None], Awaitable[Any]], sync: Any = None,
                 validation: Any = None,
                 bot_login: str | None = None, now: Callable[[], float] = time.time,
                 learn_login: Callable[[], Awaitable[str]] | None = None):
        self.router = router
        self.events = router_events(router)
        self.store = store
        self.settings = settings
        self.client_for = client_for
        self.sync = sync
        self.validation = validation
        self.bot_login = bot_login
        self.now = now
        self.learn_login = learn_login

    async def process(self, d: q.Delivery) -> str:
        data = decode_body(d.body, d.content_type)        # a JSON object (decode_payload checks it)
        if not self.bot_login and self.learn_login is not None:
            self.bot_login = await self.learn_login() or self.bot_login
        sender = data.get("sender")
        login = sender.get("login") if isinstance(sender, dict) else None
        if same_login(login, self.bot_login) and d.event not in LOOP_GUARD_EXEMPT:
            return f"ignored: sent by {login} (loop guard)"
        if d.event not in self.events:
            if d.event in GITHUB_EVENTS:
                return f"ignored: no handler for {d.event} in this bot"
            # signed with the webhook secret, so GitHub's: an event newer than forksync's list
            log.warning("delivery %s: event %r is not one forksync knows; ignored", d.delivery_id, d.event)
            return f"ignored: {d.event!r} is not an event forksync knows (newer than its list of GitHub's events?)"
        action = data.get("action")
        if action is not None and not isinstance(action, str):
            raise Unhandleable(f"malformed {d.event} payload: 'action' is a {type(action).__name__}, not a string")
        event = Event(data, event=d.event, delivery_id=d.delivery_id)
        if not self.router.fetch(event):
            return f"ignored: nothing handles {d.event}" + (f".{action}" if isinstance(action, str) else "")
        inst = data.get("installation")
        inst_id = inst.get("id") if isinstance(inst, dict) else None
        if not isinstance(inst_id, int) or isinstance(inst_id, bool):
            inst_id = None
        gh = await self.client_for(inst_id)
        ctx = Context(delivery=d, gh=gh, store=self.store, settings=self.settings, sync=self.sync,
                      validation=self.validation, installation_id=inst_id, now=self.now)
        try:
            try:
                await self._run_all(event, ctx)
            except PayloadError as e:
                raise Unhandleable(f"malformed {d.event} payload: {_short(e)}") from None
            except ValidationError as e:
                # a model read without its payload path (:func:`bot.github.common.from_payload`
                # gives one): its fields, never pydantic's text, which echoes the payload's values
                raise Unhandleable(f"malformed {d.event} payload: {_short(describe_invalid(e))}") from None
            except (KeyError, TypeError, AttributeError) as e:
                # deterministic for this payload: a retry would fail the same way
                raise Unhandleable(f"{d.event} handler failed on this payload: {type(e).__name__}: {_short(e)}") from None
            except gidgethub.HTTPException as e:
                if is_permanent(e):        # the same rule the handlers use to choose what they re-raise
                    raise Unhandleable(f"GitHub answered {int(getattr(e, 'status_code', 0) or 0)}: {_short(e)}") from None
                raise
        except Exception as e:
            if inst_id is None or not installation_suspended(e):
                raise
            # an owner suspended the installation and its webhook was missed: paused as that
            # webhook would have it, and this delivery waits for the lift instead of failing
            sync_store.set_suspended(self.store, inst_id, True, at=self.now())
            raise Paused(f"paused: the App's installation {inst_id} is suspended (GitHub answered 403 "
                         f"\"{SUSPENDED_MESSAGE}\"); handled once the suspension is lifted") from None
        return "; ".join(ctx.outcome) or "handled"

    def resume_paused(self) -> list[str]:
        """Queue again the paused deliveries whose installation is no longer suspended (lifted by
        ``installation.unsuspend``, or by a poll GitHub answered again: :mod:`bot.sync.upstream`);
        the worker asks before each claim (:class:`bot.app.worker.Worker` ``resume``). Returns
        their ids."""
        return q.resume_paused(self.store, set(sync_store.suspended(self.store)), now=self.now())

    async def on_dead(self, d: q.Delivery) -> None:
        """A delivery went dead: re-render the status issue of its fork (or of the forks that
        follow it, for an upstream's push), which lists those dead letters as an alarm."""
        await self._refresh_alarm(d)

    async def on_resolved(self, ds: list[q.Delivery]) -> None:
        """A handled delivery resolved the dead letters ``ds`` (see :mod:`bot.app.queue`), or an
        operator dismissed them (:func:`bot.app.queue.untaken_dismissals`): re-render the status
        issues that listed them, once per repository. A fork with no open status issue (a person
        closed it) gets none: nothing lists the letters there, and a resolution is no alarm."""
        for d in {d.repo: d for d in ds}.values():
            await self._refresh_alarm(d, create=False)

    async def _refresh_alarm(self, d: q.Delivery, *, create: bool = True) -> None:
        """Re-render the status issue of ``d``'s fork, or of the forks following it, except the
        paused ones (GitHub refuses their installation) and those no longer followed (the App
        cannot reach them any more): their issue is rendered again when they resume or are
        adopted again, from the queue's dead letters of that moment. ``create`` off: only an
        open status issue is updated (:meth:`bot.sync.service.SyncService.refresh_status_issue`)."""
        if not d.repo:
            return
        tracked = sync_store.tracked_forks(self.store)
        if sync_store.load_status(self.store, d.repo) is not None:
            inst_of = {r["fork"]: r["installation_id"] for r in tracked}
            forks = [(d.repo, inst_of.get(d.repo, d.installation_id))]
        else:           # an upstream's push: the forks that follow it
            forks = [(r["fork"], r["installation_id"]) for r in tracked if r["upstream"] == d.repo]
        off, gone = sync_store.suspended(self.store), sync_store.unfollowed(self.store)
        for fork, inst in forks:
            if inst in off or fork in gone:
                continue
            ctx = Context(delivery=d, gh=await self.client_for(inst), store=self.store, settings=self.settings,
                          sync=self.sync, validation=self.validation, installation_id=inst, now=self.now)
            await self.sync.refresh_status_issue(ctx, fork, create=create)

    async def _run_all(self, event: Event, ctx: Context) -> None:
        """Run every matching handler in a fixed order (module, name). One handler's failure does
        not stop the others (gidgethub's ``dispatch`` would); a failure is re-raised afterwards
        (a retryable one before a permanent one: :func:`bot.github.common.error_to_raise`) so the
        delivery is retried — handlers are idempotent, so re-running the ones that succeeded is
        harmless."""
        errors: list[BaseException] = []
        for cb in sorted(self.router.fetch(event), key=lambda f: (f.__module__, f.__qualname__)):
            try:
                await cb(event, ctx)
            except Exception as e:  # noqa: BLE001 - re-raised below
                errors.append(e)
                ctx.note(f"{cb.__module__.rsplit('.', 1)[-1]}.{cb.__name__} failed: {type(e).__name__}")
        if errors:
            raise error_to_raise(errors)


def _short(e: BaseException, limit: int = 500) -> str:
    # scrubbed whole, then cut: a cut through a secret leaves a part no later scrub recognises
    text = " ".join(scrub(str(e)).split())
    return text[:limit]


__all__ = ["Context", "Dispatcher", "MissingService", "PayloadError", "decode_body", "router_events"]
