"""The real bot (web app + durable queue + worker + production handlers) wired to the local
GitHub, in-process, for handler and end-to-end tests. Not a mock: HTTP both ways, real SQLite,
real git repositories."""
from __future__ import annotations

from pathlib import Path

import aiohttp
from aiohttp.test_utils import TestServer

from bot.app import queue as q
from bot.app.dispatch import Dispatcher
from bot.app.queue import QueuePolicy
from bot.app.runtime import Clients
from bot.app.web import make_app
from bot.app.worker import Worker
from bot.cli.serve import ServeSettings
from bot.handlers import all_routers
from bot.store import Store
from bot.sync.service import SyncService
from bot.validation.service import ValidationService

BOT_LOGIN = "forksync[bot]"


class Bot:
    def __init__(self, fake, tmp_path: Path, *, policy: QueuePolicy | None = None, git_http: bool = False):
        """``git_http``: fetch and push over the fake's smart HTTP with installation tokens, as
        against GitHub (GitHub's push refusals apply); else through the bare repositories' paths."""
        self.fake = fake
        self.tmp = tmp_path
        key = tmp_path / "app.pem"
        key.write_text(fake.app.private_key_pem)
        self.settings = ServeSettings(webhook_secret=fake.webhooks.secret, app_id=str(fake.app.id),
                                      private_key_file=str(key), db=str(tmp_path / "bot.db"), github_url=fake.url,
                                      git_url=(fake.url + "/{owner}/{repo}.git" if git_http
                                               else str(fake.state.root / "repos" / "{owner}" / "{repo}.git")),
                                      workdir=str(tmp_path / "work"), metrics_token="metrics-token-canary")
        self.policy = policy or QueuePolicy(max_attempts=3, backoff_base_s=0, backoff_cap_s=0)

    async def start(self) -> "Bot":
        from tests.support.github import FAST_RETRY
        s = self.settings
        router = all_routers()      # declares the handlers' tables before the store migrates
        self.store = Store(s.db)
        self.session = aiohttp.ClientSession()
        # the worker's own clients, with instant retries (the retry policy itself is tested in test_github_client)
        self.clients = Clients(s, self.session, retry=FAST_RETRY)
        await self.clients.start()
        self.svc = SyncService(workdir=s.workdir, git_url=s.git_url, bot_login=self.clients.bot_login,
                               token_for=self.clients.token_for, client_for=self.clients.client_for,
                               dead_letters=q.dead_letters, claims=self.clients.claims)
        self.validation = ValidationService(self.svc, settings=s)
        self.dispatcher = Dispatcher(router, self.store, s, client_for=self.clients.client_for,
                                     sync=self.svc, validation=self.validation, bot_login=self.clients.bot_login)
        self.worker = Worker(self.store, self.dispatcher.process, policy=self.policy, worker_id="test-worker",
                             on_dead=self.dispatcher.on_dead, on_resolved=self.dispatcher.on_resolved,
                             resume=self.dispatcher.resume_paused)
        self.server = TestServer(make_app(Store(s.db), s.webhook_secret, metrics_token=s.metrics_token))
        await self.server.start_server()
        self.fake.webhooks.url = str(self.server.make_url("/webhook"))
        return self

    async def stop(self) -> None:
        await self.server.close()
        await self.session.close()
        self.store.close()

    async def settle(self, rounds: int = 20) -> int:
        """Deliver every pending webhook and process the queue until both are quiet."""
        total = 0
        for _ in range(rounds):
            await self.fake.refresh()
            await self.fake.webhooks.drain()
            n = await self.worker.drain()
            total += n
            if n == 0:
                await self.fake.webhooks.drain()
                if await self.worker.drain() == 0:
                    break
        return total

    def deliveries(self, state: str | None = None) -> list[q.Delivery]:
        return q.listing(self.store, [state] if state else None, limit=10_000)
