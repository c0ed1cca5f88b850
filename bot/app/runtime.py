"""Wiring for ``forksync serve`` / ``forksync worker``: GitHub clients, the sync service, the
dispatcher over all handlers, the queue worker and the upstream poller, on one event loop.

GitHub access goes through :mod:`bot.github.client` (App auth with a per-installation token cache,
backoff, pinned API version). Token mode (``FORKSYNC_TOKEN``) uses one client for everything;
the bot's own login is then ``FORKSYNC_BOT_LOGIN``, else the token's account (``GET /user``).
"""
from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass
from typing import Any

import aiohttp
import gidgethub

from bot.agents.redact import remember_minted, scrub
from bot.app import queue as q
from bot.app.dispatch import Context, Dispatcher
from bot.app.queue import QueuePolicy, worker_durability
from bot.app.schedules import tick_tracked
from bot.app.worker import Worker
from bot.config.forksync import UserError
from bot.github import client as gh_mod
from bot.handlers import all_routers
from bot.store import Store
from bot.sync.service import SyncService
from bot.sync.upstream import poll_once
from bot.validation.service import ValidationService

log = logging.getLogger(__name__)

#: Seconds a stopping worker lets the delivery in progress run before it cancels it.
SHUTDOWN_GRACE_S = 5.0
#: Seconds start-up waits for ``GET /user`` (its retries included) in token mode: a GitHub that
#: does not answer delays the worker by this much at most, then it starts without the login.
USER_LOOKUP_TIMEOUT_S = 30.0


@dataclass
class Clients:
    """``client_for(installation_id)`` / ``token_for(installation_id)`` and the bot's login.
    ``retry``: the GitHub clients' retry policy (None: the default; tests pass instant retries)."""

    settings: Any
    session: aiohttp.ClientSession
    bot_login: str = ""
    retry: Any = None
    _impl: Any = None

    async def start(self) -> None:
        s = self.settings
        if s.token:
            self._impl = gh_mod.token_client(self.session, s.token, base_url=s.github_url, **self._retry())
            self.bot_login = self.bot_login or s.bot_login or await self._token_login()
        elif s.app_id:
            # every installation token is scrubbed like the App's own secrets from the moment it
            # is minted: a git or HTTP error that echoes it reaches no issue, page, log or row
            self._impl = gh_mod.GitHubApp(self.session, app_id=s.app_id, private_key=s.private_key(),
                                          base_url=s.github_url, on_minted=remember_minted, **self._retry())
            if not self.bot_login:
                self.bot_login = s.bot_login or (await self._impl.app_client.getitem("/app"))["slug"] + "[bot]"
        else:
            raise UserError("no GitHub credentials: set FORKSYNC_TOKEN, or FORKSYNC_APP_ID and FORKSYNC_PRIVATE_KEY_FILE")

    async def _token_login(self) -> str:
        """The login of the token's own account (``GET /user``): GitHub shows it as the author of
        the PRs, comments and issues forksync makes with the token, which is what the loop guard
        and the sync PRs' ownership compare with. ``""`` when GitHub does not say — a token that
        cannot read ``/user`` (an installation token: 403), a revoked one (401), no answer — with
        a warning naming the call and the answer; start-up goes on, as before there was a way to
        ask. The message never holds the token (GitHub's answer and the URL carry none)."""
        try:
            me = await asyncio.wait_for(self._impl.getitem("/user"), USER_LOOKUP_TIMEOUT_S)
            login = str((me or {}).get("login") or "")
            failed = "" if login else "answered without a login"
        except gidgethub.HTTPException as e:
            login, failed = "", f"failed with {int(e.status_code)} ({_reason(e)})"
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as e:
            login, failed = "", f"got no answer ({type(e).__name__})"
        if failed:
            log.warning("token mode without FORKSYNC_BOT_LOGIN, and GET /user %s: the loop guard cannot recognise "
                        "the bot's own events, and PRs forksync opens count as its own only on branches it "
                        "recorded; set FORKSYNC_BOT_LOGIN to the login GitHub shows as the author of "
                        "forksync's PRs (`<slug>[bot]` for an App's installation token)", failed)
        return login

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


async def run_worker_loop(s, stop: threading.Event, *, wake: threading.Event | None = None, metrics=None,
                          poller: bool = True, poll_tick_s: float = 30.0) -> None:
    """Run one queue worker (and, when ``poller``, the upstream poller) until ``stop`` is set."""
    router = all_routers()
    store = Store(s.db)
    worker_durability(store)
    async with aiohttp.ClientSession() as session:
        clients = Clients(s, session)
        await clients.start()
        svc = SyncService(workdir=s.workdir, git_url=s.git_url, bot_login=clients.bot_login,
                          token_for=clients.token_for, client_for=clients.client_for, dead_letters=q.dead_letters)
        validation = ValidationService(svc, settings=s)
        disp = Dispatcher(router, store, s, client_for=clients.client_for, sync=svc, validation=validation,
                          bot_login=clients.bot_login)
        worker = Worker(store, disp.process, wake=wake, poll_interval_s=0.1 if wake is None else 0.5,
                        policy=QueuePolicy(max_attempts=s.max_attempts, lease_s=s.lease_s,
                                           delivery_timeout_s=s.delivery_timeout_s),
                        observe=metrics.observe_processing if metrics is not None else None, on_dead=disp.on_dead,
                        on_resolved=disp.on_resolved)
        tasks = [asyncio.create_task(worker.run(stop))]
        if poller:
            async def make_ctx(inst):
                d = q.Delivery(id="poll", delivery_id="poll", hook_id="", event="poll", action="",
                               installation_id=inst, repo="", sender="", body=b"", content_type="",
                               state="processing", attempts=1, received_at=0.0)
                return Context(delivery=d, gh=await clients.client_for(inst), store=store, settings=s,
                               sync=svc, validation=validation, installation_id=inst)

            async def poll_loop():
                while not stop.is_set():
                    try:
                        for line in await poll_once(store, svc, make_ctx):
                            log.info("poll: %s", line)
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


__all__ = ["Clients", "run_worker_loop"]
