"""Wiring for ``forksync serve`` / ``forksync worker``: GitHub clients, the sync service, the
dispatcher over all handlers, the queue worker and the upstream poller, on one event loop.

GitHub access goes through :mod:`bot.github.client` (App auth with a per-installation token cache,
backoff, pinned API version). Token mode (``FORKSYNC_TOKEN``) uses one client for everything;
the bot's own login is then ``FORKSYNC_BOT_LOGIN``, else the token's account (``GET /user``).
When ``GET /user`` does not answer at start-up the worker starts without the login and asks
again (:meth:`Clients.learn_login`: before a delivery and at each poll tick, once its backoff
has passed — :func:`login_retry_delay`); until it knows, the heartbeat carries why
(``/healthz`` warnings, the dashboard) and so does the status issue, and once learnt the login
reaches the dispatcher's loop guard and every service (:func:`assemble`).

The poll loop also makes up for the installation events missed (GitHub does not retry a delivery
forksync was down for): at start and every :data:`bot.app.installations.ADOPT_MISSED_EVERY_S`,
the App's installations and their repositories are listed, each repository not yet tracked is
adopted as ``installation.created`` would and, when every page was read, each fork the App is no
longer installed on is unfollowed as ``installation.deleted`` / ``installation_repositories.removed``
would (:meth:`Runtime.adopt_missed`).
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import aiohttp
import gidgethub

from bot.agents.redact import remember_minted, scrub
from bot.app import queue as q
from bot.app.dispatch import Context, Dispatcher
from bot.app.installations import ADOPT_MISSED_EVERY_S, adopt_missed
from bot.app.queue import QueuePolicy, worker_durability
from bot.app.schedules import tick_tracked
from bot.app.worker import Worker
from bot.config.forksync import UserError
from bot.config.schedules import as_schedule
from bot.github import client as gh_mod
from bot.github.claims import Claims, log_wait
from bot.handlers import all_routers
from bot.store import Store
from bot.sync.service import SyncService, agent_deadline
from bot.sync.store import suspended, tracked_forks
from bot.sync.upstream import poll_once, refresh_quietly
from bot.templating import render_part
from bot.validation.service import ValidationService

log = logging.getLogger(__name__)

#: Seconds a stopping worker lets the delivery in progress run before it cancels it.
SHUTDOWN_GRACE_S = 5.0
PRUNE_EVERY_S = 3600.0      # how often the worker deletes old done deliveries (queue.prune)
#: Seconds start-up waits for ``GET /user`` (its retries included) in token mode: a GitHub that
#: does not answer delays the worker by this much at most, then it starts without the login.
USER_LOOKUP_TIMEOUT_S = 30.0
#: Seconds before ``GET /user`` is asked again after its first failure in a row; each further
#: failure doubles it, up to :data:`LOGIN_RETRY_CAP_S`.
LOGIN_RETRY_BASE_S = 30.0
LOGIN_RETRY_CAP_S = 900.0


def login_retry_delay(failures: int, *, base_s: float = LOGIN_RETRY_BASE_S, cap_s: float = LOGIN_RETRY_CAP_S) -> float:
    """Pure: seconds until ``GET /user`` is asked again after ``failures`` (≥ 1) failed asks in a
    row: ``base_s`` doubling, at most ``cap_s`` — a GitHub that was down at start-up is asked
    again soon, a token that can never read ``/user`` (an installation token) costs a request
    every ``cap_s``."""
    return min(cap_s, base_s * 2 ** max(0, failures - 1))


@dataclass
class Clients:
    """``client_for(installation_id)`` / ``token_for(installation_id)`` and the bot's login.
    ``retry``: the GitHub clients' retry policy (None: the default; tests pass instant retries).
    ``login_unknown``: why ``bot_login`` is unknown (token mode, ``GET /user`` unanswered; ``""``
    when known); ``on_login``: called with ``(bot_login, login_unknown)`` after each ask
    (:meth:`learn_login`); ``clock``: seconds, for the asks' backoff. ``claims``: the worker
    process's claims (:mod:`bot.github.claims`), carried by every client it makes so each marked
    comment is claimed; None: made at :meth:`start` on ``<workdir>/locks``."""

    settings: Any
    session: aiohttp.ClientSession
    bot_login: str = ""
    retry: Any = None
    clock: Callable[[], float] = time.monotonic
    login_unknown: str = ""
    on_login: list[Callable[[str, str], None]] = field(default_factory=list)
    claims: Claims | None = None
    _impl: Any = None
    _login_failures: int = 0
    _login_retry_at: float = float("-inf")

    async def start(self) -> None:
        s = self.settings
        if self.claims is None:
            self.claims = Claims(Path(s.workdir) / "locks", on_wait=log_wait)
        if s.token:
            self._impl = gh_mod.token_client(self.session, s.token, base_url=s.github_url, claims=self.claims,
                                             **self._retry())
            self.bot_login = self.bot_login or s.bot_login
            await self.learn_login()
        elif s.app_id:
            # every installation token is scrubbed like the App's own secrets from the moment it
            # is minted: a git or HTTP error that echoes it reaches no issue, page, log or row
            self._impl = gh_mod.GitHubApp(self.session, app_id=s.app_id, private_key=s.private_key(),
                                          base_url=s.github_url, on_minted=remember_minted, claims=self.claims,
                                          **self._retry())
            if not self.bot_login:
                self.bot_login = s.bot_login or (await self._impl.app_client.getitem("/app"))["slug"] + "[bot]"
        else:
            raise UserError(render_part("errors/app.txt.j2", "no_credentials"))

    async def learn_login(self) -> str:
        """The bot's login; in token mode while it is unknown, the token's own account is asked
        for (``GET /user``: GitHub shows it as the author of the PRs, comments and issues forksync
        makes with the token, which is what the loop guard and the sync PRs' ownership compare
        with) — at start-up, then again once :func:`login_retry_delay` has passed since the last
        failed ask. ``""`` while GitHub does not say — a token that cannot read ``/user`` (an
        installation token: 403), a revoked one (401), no answer — with ``login_unknown`` naming
        the call and the answer, and a warning logged when that changes; nothing is raised
        (start-up and the delivery that asked go on). Every ``on_login`` listener gets the
        outcome of an ask. The message never holds the token (GitHub's answer and the URL carry none)."""
        if self.bot_login or not self.settings.token or self.clock() < self._login_retry_at:
            return self.bot_login
        try:
            me = await asyncio.wait_for(self._impl.getitem("/user"), USER_LOOKUP_TIMEOUT_S)
            login = str((me or {}).get("login") or "")
            failed = "" if login else "answered without a login"
        except gidgethub.HTTPException as e:
            login, failed = "", f"failed with {int(e.status_code)} ({_reason(e)})"
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as e:
            login, failed = "", f"got no answer ({type(e).__name__})"
        if login:
            if self._login_failures:
                log.info("GET /user answered %s after %d failed ask(s): the bot's login is known", login,
                         self._login_failures)
            self.bot_login, self.login_unknown, self._login_failures = login, "", 0
        else:
            self._login_failures += 1
            delay = login_retry_delay(self._login_failures)
            self._login_retry_at = self.clock() + delay
            unknown = f"token mode without FORKSYNC_BOT_LOGIN, and GET /user {failed}"
            if unknown != self.login_unknown:
                log.warning("%s: the loop guard cannot recognise the bot's own events, and PRs forksync opens count "
                            "as its own only on branches it recorded; asked again in %.0f s (then backing off to "
                            "%.0f s); set FORKSYNC_BOT_LOGIN to the login GitHub shows as the author of forksync's "
                            "PRs (`<slug>[bot]` for an App's installation token)", unknown, delay, LOGIN_RETRY_CAP_S)
            self.login_unknown = unknown
        for listener in self.on_login:
            listener(self.bot_login, self.login_unknown)
        return self.bot_login

    @property
    def app_mode(self) -> bool:
        """Whether forksync runs as a GitHub App (it has installations), not with a token."""
        return isinstance(self._impl, gh_mod.GitHubApp)

    def _retry(self) -> dict:
        return {} if self.retry is None else {"retry": self.retry}

    async def client_for(self, installation_id: int | None):
        """The installation's client (App mode), or the token client."""
        if isinstance(self._impl, gh_mod.GitHubApp):
            return self._impl.installation(installation_id) if installation_id else self._impl.app_client
        return self._impl

    async def token_for(self, installation_id: int | None) -> str:
        if isinstance(self._impl, gh_mod.GitHubApp):
            return await self._impl.tokens.token(installation_id) if installation_id else ""
        return self.settings.token


def _reason(e: Exception) -> str:
    """GitHub's message of a failed call, without the retry advice :class:`bot.github.client.GitHubAPIError` adds."""
    return scrub(str(getattr(e, "message", "") or e))[:200]


@dataclass
class Runtime:
    """One worker process's parts, built once by :func:`assemble`: the GitHub clients, the
    services, the dispatcher over every handler and the queue worker."""

    store: Store
    settings: Any
    clients: Clients
    svc: SyncService
    validation: ValidationService
    dispatcher: Dispatcher
    worker: Worker
    _said_unknown: bool = False         # the login was unknown after the last ask
    _refresh_issues: bool = False       # learnt since: the status issues are rendered again
    _adopted_at: float | None = None    # epoch s of the last pass of adopt_missed (None: none yet)

    def share_login(self, login: str, unknown: str) -> None:
        """:attr:`Clients.on_login`: the login (or why it is unknown) reaches the loop guard and the
        services (the validation service reads the sync service's); learnt after it was unknown,
        the status issues, which may say so, are rendered again at the next poll tick."""
        self.svc.bot_login, self.svc.login_unknown, self.dispatcher.bot_login = login, unknown, login
        self._refresh_issues = self._refresh_issues or bool(login and self._said_unknown)
        self._said_unknown = bool(unknown)

    async def make_ctx(self, inst: int | None) -> Context:
        """A handler context for scheduled work of installation ``inst`` (no webhook behind it)."""
        d = q.Delivery(id="poll", delivery_id="poll", hook_id="", event="poll", action="",
                       installation_id=inst, repo="", sender="", body=b"", content_type="",
                       state="processing", attempts=1, received_at=0.0)
        return Context(delivery=d, gh=await self.clients.client_for(inst), store=self.store, settings=self.settings,
                       sync=self.svc, validation=self.validation, installation_id=inst)

    async def adopt_missed(self, now: float | None = None) -> list[str]:
        """The poll loop's pass over the App's installations when one is due (at the first call,
        then every :data:`ADOPT_MISSED_EVERY_S`; ``now``: epoch s, default the clock): every
        repository not yet tracked is adopted as ``installation.created`` would, and after a
        complete listing every fork the App is no longer installed on unfollowed as the removal
        events would (:func:`bot.app.installations.adopt_missed`). Token mode has no
        installations: nothing.
        Returns notes."""
        now = time.time() if now is None else now
        if not self.clients.app_mode or not as_schedule(ADOPT_MISSED_EVERY_S).due(self._adopted_at, now):
            return []
        self._adopted_at = now
        return await adopt_missed(self.store, await self.clients.client_for(None), self.make_ctx, now=now)

    async def learn_login(self) -> list[str]:
        """The poll loop's ask for the bot's login while it is unknown (:meth:`Clients.learn_login`);
        once learnt, every tracked fork's open status issue is rendered again (none opened), so
        the warning it carried goes. Returns notes (a status issue not rendered, and why)."""
        await self.clients.learn_login()
        if not self._refresh_issues:
            return []
        self._refresh_issues = False
        out: list[str] = []
        off = suspended(self.store)
        for r in tracked_forks(self.store):
            if r["installation_id"] in off:
                continue
            out += await refresh_quietly(self.svc, await self.make_ctx(r["installation_id"]), r["fork"], create=False)
        return out


async def assemble(s, store: Store, session: aiohttp.ClientSession, *, wake: threading.Event | None = None,
                   metrics=None, retry: Any = None, clock: Callable[[], float] = time.monotonic) -> Runtime:
    """Start the GitHub clients (``retry``: their retry policy, None the default; ``clock``: the
    login asks' backoff) and build the services, the dispatcher (its handlers' tables are declared
    in ``store``) and the queue worker around them. In token mode a login unknown at start-up is
    asked for again before deliveries and at poll ticks; the worker's heartbeat says why it is
    unknown meanwhile (``/healthz``)."""
    router = all_routers()
    clients = Clients(s, session, retry=retry, clock=clock)
    await clients.start()
    svc = SyncService(workdir=s.workdir, git_url=s.git_url, bot_login=clients.bot_login,
                      token_for=clients.token_for, client_for=clients.client_for, dead_letters=q.dead_letters,
                      claims=clients.claims, agent_deadline_s=agent_deadline(s.delivery_timeout_s, s.agent_deadline_s))
    # the lock files an earlier release kept (one per issue or PR ever commented on) go now;
    # a claim removes its own file as it lets go (bot.github.claims)
    swept = await asyncio.to_thread(svc.claims.sweep)
    if swept:
        log.info("removed %d lock file(s) no claim held from %s", swept, svc.claims.folder)
    validation = ValidationService(svc, settings=s)
    disp = Dispatcher(router, store, s, client_for=clients.client_for, sync=svc, validation=validation,
                      bot_login=clients.bot_login, learn_login=clients.learn_login)
    worker = Worker(store, disp.process, wake=wake, poll_interval_s=0.1 if wake is None else 0.5,
                    policy=QueuePolicy(max_attempts=s.max_attempts, lease_s=s.lease_s,
                                       delivery_timeout_s=s.delivery_timeout_s),
                    observe=metrics.observe_processing if metrics is not None else None, on_dead=disp.on_dead,
                    on_resolved=disp.on_resolved, login_unknown=lambda: clients.login_unknown,
                    resume=disp.resume_paused)
    rt = Runtime(store, s, clients, svc, validation, disp, worker)
    clients.on_login.append(rt.share_login)
    rt.share_login(clients.bot_login, clients.login_unknown)
    return rt


async def run_worker_loop(s, stop: threading.Event, *, wake: threading.Event | None = None, metrics=None,
                          poller: bool = True, poll_tick_s: float = 30.0) -> None:
    """Run one queue worker (and, when ``poller``, the upstream poller) until ``stop`` is set. Every
    worker, polling or not (``--no-poll``: webhooks only), deletes the deliveries past their
    retention (``keep_deliveries_days``) at once and every ``PRUNE_EVERY_S``."""
    store = Store(s.db)
    worker_durability(store)
    async with aiohttp.ClientSession() as session:
        rt = await assemble(s, store, session, wake=wake, metrics=metrics)
        svc, make_ctx = rt.svc, rt.make_ctx
        tasks = [asyncio.create_task(rt.worker.run(stop))]

        async def prune_loop():
            # the queue's done rows, bodies and all (up to 25 MB each): without this the volume fills
            while not stop.is_set():
                try:
                    n = q.prune(store, s.keep_deliveries_days * 86_400.0)
                    if n:
                        log.info("queue: %d deliveries done more than %g days ago deleted", n, s.keep_deliveries_days)
                except Exception:  # noqa: BLE001 - the next turn retries
                    log.exception("pruning the delivery queue failed")
                await asyncio.get_running_loop().run_in_executor(None, stop.wait, PRUNE_EVERY_S)

        tasks.append(asyncio.create_task(prune_loop()))
        if poller:
            async def poll_loop():
                # the first pass catches up (every fork holding open units synced): GitHub sent its
                # events while this worker was down only once
                first_pass = True
                while not stop.is_set():
                    try:
                        for line in await rt.learn_login():
                            log.info("login: %s", line)
                    except Exception:  # noqa: BLE001 - the next tick retries
                        log.exception("rendering the status issues again failed")
                    try:                # at start, then hourly: installations whose events were missed
                        for line in await rt.adopt_missed():
                            log.info("installations: %s", line)
                    except Exception:  # noqa: BLE001 - the next pass retries
                        log.exception("adopting the installations' repositories failed")
                    try:
                        for line in await poll_once(store, svc, make_ctx, catch_up=first_pass):
                            log.info("poll: %s", line)
                        first_pass = False
                    except Exception:  # noqa: BLE001 - the next tick retries
                        log.exception("poll failed")
                    try:                # validation schedules: collect, reconcile, L3, nightly, L2
                        for line in await tick_tracked(store, make_ctx):
                            log.info("schedule: %s", line)
                    except Exception:  # noqa: BLE001 - the next tick retries
                        log.exception("validation schedule failed")
                    await asyncio.get_running_loop().run_in_executor(None, stop.wait, poll_tick_s)

            tasks.append(asyncio.create_task(poll_loop()))
        try:
            while not stop.is_set():
                await asyncio.get_running_loop().run_in_executor(None, stop.wait, 0.5)
        finally:
            if wake is not None:
                wake.set()
            # the delivery in progress may finish; past the grace it is cancelled and handed back to the
            # queue (handlers are idempotent), so the worker is gone well within Docker's 10 s stop timeout
            await asyncio.wait(tasks, timeout=SHUTDOWN_GRACE_S)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            store.close()


__all__ = ["Clients", "Runtime", "assemble", "login_retry_delay", "run_worker_loop"]
