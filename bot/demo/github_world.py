"""The world of the GitHub demo (``forksync demo``, :mod:`bot.demo.github`): a local GitHub with the
demo scenario's upstream and fork on it, and the real forksync app serving on loopback.

Nothing here is a mock: :class:`bot.fakegithub.FakeGitHub` hosts real bare repositories and
emits signed webhooks over HTTP; :class:`DemoApp` is ``forksync serve`` in-process (the aiohttp
webhook receiver of :mod:`bot.app.web`, the durable SQLite queue, the worker, the production
handlers, :class:`bot.sync.service.SyncService` and :class:`bot.validation.service.ValidationService`
with the ``local`` runner backend). The only difference from production is the GitHub client's
pacing: writes are not spaced 1 s apart (GitHub's guidance against secondary limits), so the
demo does not wait for nothing.

Repositories: ``triton-lang/triton`` (upstream) starts at the scenario's ``u9`` (everything the
fork has already dealt with); ``meta/triton`` (the fork) is the scenario's fork plus a
``.github/forksync.yml`` commit, with its ``refs/notes/forksync`` decisions. The upstream commits
the demo pushes later are the scenario's ``u10``…``u18`` and the kernel commits of
:func:`add_kernel_commits` (``u19``…``u21``).
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from aiohttp import web
from gidgethub import routing

from bot.app import queue as q
from bot.app.dispatch import Context, Dispatcher
from bot.app.queue import QueuePolicy
from bot.app.runtime import Clients
from bot.app.web import make_app
from bot.app.worker import Worker
from bot.cli.serve import ServeSettings
from bot.demo.repobuilder import run_git
from bot.demo.scenario import ALICE, BOB, DEMO_CONFIG, FORKDEV, Scenario, build_scenario
from bot.fakegithub import FakeGitHub
from bot.github import client as gh_mod
from bot.github.client import RetryPolicy, token_client
from bot.handlers import all_routers, checks, gate
from bot.store import Store
from bot.sync.service import SyncService
from bot.validation.service import ValidationService

FORK = "meta/triton"
UPSTREAM = "triton-lang/triton"
MAINTAINER = "fiona"

#: ``.github/forksync.yml`` on the demo fork: the scenario's areas, upstream on the (local) GitHub.
FORK_CONFIG = """\
# forksync.yml for the demo fork on GitHub (.github/forksync.yml)
upstream: {url: triton-lang/triton, ref: main}
fork: {ref: main}
""" + "areas:" + DEMO_CONFIG.split("areas:", 1)[1]


@dataclass
class World:
    root: Path
    scenario: Scenario
    fake: object                     # bot.fakegithub.FakeGitHub
    upstream: object                 # fake Repo (``.path`` is the bare repository)
    fork: object
    app: "DemoApp"
    maintainer: object               # GitHubClient acting as the fork's maintainer (fiona)
    session: aiohttp.ClientSession
    labels: dict[str, str] = field(default_factory=dict)      # upstream sha → label (u10, …)
    inst: int = 0                                             # the fork's installation id, once installed

    def label(self, sha: str) -> str:
        return self.labels.get(sha, sha[:12])


def _routers() -> routing.Router:
    """Every handler of the app, validation included (added here while ``all_routers`` lacks them)."""
    router = all_routers()
    extra = [r for r, fn in ((checks.router, checks.on_rerequested), (gate.router, gate.on_pull_request))
             if not _has(router, fn)]
    return routing.Router(router, *extra) if extra else router


def _has(router: routing.Router, fn) -> bool:
    shallow = any(fn in cbs for cbs in router._shallow_routes.values())  # noqa: SLF001
    deep = any(fn in cbs for by_key in router._deep_routes.values()  # noqa: SLF001
               for by_value in by_key.values() for cbs in by_value.values())
    return shallow or deep


class DemoApp:
    """``forksync serve`` in this process: webhook receiver on 127.0.0.1 (random port, a random
    webhook secret shared with the local GitHub), queue, one worker, handlers, services."""

    def __init__(self, fake, root: Path, secret: str):
        self.fake = fake
        root.mkdir(parents=True, exist_ok=True)
        key = root / "app.pem"
        key.write_text(fake.app.private_key_pem)
        key.chmod(0o600)
        self.settings = ServeSettings(webhook_secret=secret, app_id=str(fake.app.id), private_key_file=str(key),
                                      db=str(root / "forksync.db"), github_url=fake.url,
                                      git_url=str(fake.state.root / "repos" / "{owner}" / "{repo}.git"),
                                      workdir=str(root / "work"))

    async def start(self) -> "DemoApp":
        s = self.settings
        router = _routers()                  # declares the handlers' tables before the store migrates
        self.store = Store(s.db)
        self.session = aiohttp.ClientSession()
        self.clients = Clients(s, self.session)
        await self.clients.start()
        self.clients._impl = gh_mod.GitHubApp(  # noqa: SLF001 - production client, without write pacing
            self.session, app_id=s.app_id, private_key=s.private_key(), base_url=s.github_url,
            retry=gh_mod.RetryPolicy(base_delay_s=0.05, max_delay_s=0.5, secondary_min_wait_s=0.5,
                                     write_interval_s=0.0), claims=self.clients.claims)
        self.sync = SyncService(workdir=s.workdir, git_url=s.git_url, bot_login=self.clients.bot_login,
                                token_for=self.clients.token_for, client_for=self.clients.client_for,
                                claims=self.clients.claims)
        self.validation = ValidationService(self.sync, backend="local", merge_poll_s=0.05)
        self.dispatcher = Dispatcher(router, self.store, s, client_for=self.clients.client_for, sync=self.sync,
                                     validation=self.validation, bot_login=self.clients.bot_login)
        self.worker = Worker(self.store, self.dispatcher.process,
                             policy=QueuePolicy(max_attempts=3, backoff_base_s=0, backoff_cap_s=0),
                             worker_id="demo-worker", resume=self.dispatcher.resume_paused)
        self.web_store = Store(s.db)
        self.runner = web.AppRunner(make_app(self.web_store, s.webhook_secret))
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        host, port = self.runner.addresses[0][:2]
        self.url = f"http://{host}:{port}/webhook"
        self.fake.webhooks.url = self.url
        return self

    async def stop(self) -> None:
        await self.runner.cleanup()
        await self.session.close()
        self.store.close()
        self.web_store.close()

    async def settle(self, rounds: int = 20) -> int:
        """Deliver every pending webhook and let the worker process the queue until both are quiet.
        Returns the number of deliveries processed."""
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

    async def ctx(self, installation_id: int):
        """A handler context like the worker's periodic loop builds (for scheduled ticks)."""
        d = q.Delivery(id="tick", delivery_id="tick", hook_id="", event="tick", action="",
                       installation_id=installation_id, repo="", sender="", body=b"", content_type="",
                       state="processing", attempts=1, received_at=0.0)
        return Context(delivery=d, gh=await self.clients.client_for(installation_id), store=self.store,
                       settings=self.settings, sync=self.sync, validation=self.validation,
                       installation_id=installation_id)

    def dead(self) -> list[str]:
        return [f"{d.event}: {d.dead_reason}" for d in q.listing(self.store, ["dead"], limit=1000)]


async def build_world(root: Path) -> World:
    """Build the scenario under ``root/scenario``, start the local GitHub and the app, seed both
    repositories (upstream at ``u9``) and give the maintainer a token. Nothing is installed yet."""
    root.mkdir(parents=True, exist_ok=True)
    scenario = build_scenario(root / "scenario")
    add_kernel_commits(scenario)
    up, fk = scenario.upstream, scenario.fork
    # the fork's GitHub-mode configuration (a fork-only commit, like any config change)
    fk.commit("[forksync] Configure the sync bot", {".github/forksync.yml": FORK_CONFIG},
              when=scenario_time(scenario) + 600, author=FORKDEV)
    # upstream on GitHub starts where the fork's past sync work ends: u9
    seed = root / "seed-upstream"
    run_git(root, "clone", "-q", str(up.path), str(seed))
    run_git(seed, "reset", "-q", "--hard", scenario.sha["u9"])

    secret = secrets.token_hex(20)
    fake = FakeGitHub(root / "github", webhook_secret=secret)
    await fake.start()
    fake.app = fake.create_app(webhook_secret=secret)
    upstream = fake.create_repo(UPSTREAM, source=seed)
    fork = fake.create_repo(FORK, source=fk.path)
    run_git(fk.path, "push", "-q", str(fork.path), "refs/notes/forksync:refs/notes/forksync")
    fake.add_collaborator(fork, MAINTAINER, "maintain")
    token = secrets.token_hex(16)
    fake.add_token(token, MAINTAINER)
    app = await DemoApp(fake, root / "app", secret).start()
    session = aiohttp.ClientSession()
    maintainer = token_client(session, token, base_url=fake.url,
                              retry=RetryPolicy(base_delay_s=0.05, max_delay_s=0.5, write_interval_s=0.0))
    labels = {sha: label for label, sha in scenario.sha.items()}
    return World(root, scenario, fake, upstream, fork, app, maintainer, session, labels)


async def close_world(w: World) -> None:
    await w.session.close()
    await w.app.stop()
    await w.fake.stop()


def scenario_time(s: Scenario) -> int:
    """The fork's newest commit time (epoch s): later demo commits come after it."""
    return int(run_git(s.fork.path, "log", "-1", "--format=%ct").strip())


def push_upstream(w: World, sha: str) -> None:
    """Move the local GitHub's upstream ``main`` to ``sha`` (a plain ``git push``)."""
    run_git(w.scenario.upstream.path, "push", "-q", str(w.upstream.path), f"{sha}:refs/heads/main")


__all__ = ["World", "DemoApp", "build_world", "close_world", "push_upstream", "FORK", "UPSTREAM", "MAINTAINER"]


# ---------------------------------------------------------------------- the kernels
KERNELS_DIR = Path(__file__).resolve().parents[2] / "examples" / "kernels"
KERNEL_FILES = ("kernels.py", "test_kernels.py", "conftest.py")

#: The fork's L1 suite in the demo: the ``kernels-cpu`` suite (examples/kernels/suites.yml)
#: restricted to the fp32 cases (10 of 30 tests) so one run takes seconds on 2 cores.
KERNEL_SUITE = """\
suites:
  - name: kernels-cpu
    level: L1
    command: >-
      python3 -m pytest -q -p no:cacheprovider examples/kernels/test_kernels.py -k fp32
      --junitxml=out/kernels-junit.xml -o junit_family=xunit1
    report: {format: junit, path: out/kernels-junit.xml}
    expected_tests: 10
    timeout_s: 600
    platforms: [cpu]
    env: {TRITON_INTERPRET: "1", PYTHONDONTWRITEBYTECODE: "1"}
    infra_retries: 0
    required: true
"""

SOFTMAX_LOAD = 'other=-float("inf")'
MATMUL_SWEEP = '@pytest.mark.parametrize("config", K.MATMUL_CONFIGS, ids=lambda c: c.name)'


def kernel_sources() -> dict[str, str]:
    """``examples/kernels/<file>`` → text of the reference kernels shipped with forksync.
    Raises ``FileNotFoundError`` naming the folder when forksync runs without its examples."""
    missing = [f for f in KERNEL_FILES if not (KERNELS_DIR / f).is_file()]
    if missing:
        raise FileNotFoundError(f"the GitHub demo needs the reference kernels in {KERNELS_DIR} "
                                f"(missing: {', '.join(missing)}); run it from a forksync checkout")
    return {f"examples/kernels/{f}": (KERNELS_DIR / f).read_text() for f in KERNEL_FILES}


def add_kernel_commits(s: Scenario) -> None:
    """Append three upstream commits after ``u18`` to the scenario's upstream (labels ``u19``…``u21``):

    * ``u19`` adds the reference kernels and their L1 tests (``examples/kernels/``);
    * ``u20`` breaks the fused softmax: masked lanes load as 0.0 instead of −inf, so every row
      whose width is not a power of two is normalised wrongly (2 of the 10 fp32 tests fail);
    * ``u21`` quietly drops three matmul test cases (the suite then runs 7 of its 10 tests).
    """
    src = kernel_sources()
    up = s.upstream
    t = int(run_git(up.path, "log", "-1", "--format=%ct").strip())
    kernels, tests = src["examples/kernels/kernels.py"], src["examples/kernels/test_kernels.py"]
    if kernels.count(SOFTMAX_LOAD) != 1 or tests.count(MATMUL_SWEEP) != 1:
        raise ValueError(f"the reference kernels in {KERNELS_DIR} changed: the demo's kernel commits no longer apply "
                         f"(expected one {SOFTMAX_LOAD!r} in kernels.py and one matmul sweep in test_kernels.py)")
    s.sha["u19"] = up.commit("[TUTORIALS] Reference kernels and their L1 tests (#119)", src, when=t + 3600, author=ALICE)
    s.sha["u20"] = up.commit("[KERNELS] softmax: load masked lanes as 0.0 (#120)", {
        "examples/kernels/kernels.py": kernels.replace(SOFTMAX_LOAD, "other=0.0")}, when=t + 7200, author=BOB)
    s.sha["u21"] = up.commit("[TESTS] Sweep only the default matmul config (#121)", {
        "examples/kernels/test_kernels.py": tests.replace(MATMUL_SWEEP, MATMUL_SWEEP.replace(
            "K.MATMUL_CONFIGS,", "K.MATMUL_CONFIGS[:1],"))}, when=t + 10800, author=BOB)
