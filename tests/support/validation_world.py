"""A fork on the local GitHub with a tiny real pytest suite (JUnit) run by the ``local`` backend,
the real bot (web app + queue + worker + handlers, validation routers included), and people with
tokens. Shared by ``tests/test_validation_github*.py``."""
from __future__ import annotations

import subprocess
from pathlib import Path

import aiohttp
from gidgethub import routing

from bot.app.dispatch import Dispatcher
from bot.app.worker import Worker
from bot.github.client import token_client
from tests.support.botharness import Bot
from tests.support.github import FAST_RETRY, commit_files, git, make_source_repo

LIB = "def add(a, b):\n    return a + b\n"
TESTS = """\
from lib import add


def test_one():
    assert add(1, 1) == 2


def test_two():
    assert add(2, 2) == 4


def test_three():
    assert add(-1, 1) == 0
"""
CONFIG = """\
areas:
  - name: amd
    paths: ["amd/**"]
    owners: [carol]
  - name: llvm
    paths: ["llvm/**"]
    owners: [carol]
    requires_l3: true
suites:
  - name: unit
    command: python3 -m pytest -q -p no:cacheprovider -o addopts= tests_fork --junitxml=out/unit.xml
    report: {format: junit, path: out/unit.xml}
    expected_tests: 3
    timeout_s: 300
    infra_retries: 0
"""
#: an L3 suite (``/forksync l3 heavy``) over the fork's three tests, and the config with it
L3_SUITE = """\
  - name: heavy
    level: L3
    command: python3 -m pytest -q -p no:cacheprovider -o addopts= tests_fork --junitxml=out/heavy.xml
    report: {format: junit, path: out/heavy.xml}
    expected_tests: 3
    timeout_s: 300
"""
L3_CONFIG = CONFIG + L3_SUITE
CONFTEST = "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n"


def fork_files(config: str = CONFIG, tests: str = TESTS) -> dict[str, str]:
    return {"README.md": "fork\n", ".github/forksync.yml": config, "lib.py": LIB,
            "tests_fork/test_basic.py": tests, "tests_fork/conftest.py": CONFTEST}


def _has(router: routing.Router, fn) -> bool:
    for cbs in router._shallow_routes.values():  # noqa: SLF001
        if fn in cbs:
            return True
    for by_key in router._deep_routes.values():  # noqa: SLF001
        for by_value in by_key.values():
            for cbs in by_value.values():
                if fn in cbs:
                    return True
    return False


def with_validation(bot: Bot, **service_kw):
    """Make sure the bot's router holds the validation routers (where ``all_routers`` does not
    include them) and give it a validation service without waits."""
    from bot.handlers import all_routers, checks, gate
    from bot.validation.service import ValidationService

    router = all_routers()
    extra = [r for r, fn in ((checks.router, checks.on_rerequested), (gate.router, gate.on_pull_request))
             if not _has(router, fn)]
    if extra:
        router = routing.Router(router, *extra)
    svc = ValidationService(bot.svc, backend=service_kw.pop("backend", "local"), merge_poll_s=0, **service_kw)
    bot.validation = svc
    bot.dispatcher = Dispatcher(router, bot.store, bot.settings, client_for=bot.clients.client_for,
                                sync=bot.svc, validation=svc, bot_login=bot.clients.bot_login)
    bot.worker = Worker(bot.store, bot.dispatcher.process, policy=bot.policy, worker_id="test-worker",
                        resume=bot.dispatcher.resume_paused)
    return svc


class World:
    def __init__(self, fake, bot, svc, people, work: Path, fork):
        self.fake, self.bot, self.svc, self.people, self.work, self.fork = fake, bot, svc, people, work, fork

    @property
    def alice(self):
        return self.people["alice"]

    def push_branch(self, branch: str, files: dict[str, str], message: str = "change", *, base: str = "main",
                    forksync: bool = True) -> str:
        """Commit ``files`` on ``base`` and push them as ``branch``. A ``forksync/…`` branch stands
        in for forksync's own push (:meth:`record_sync_branch`) unless ``forksync`` is False: then
        it is a person's branch that only carries the name."""
        git(self.work, "fetch", "-q", "origin")
        git(self.work, "checkout", "-q", "-B", branch, f"origin/{base}")
        sha = commit_files(self.work, files, message)
        git(self.work, "push", "-q", "-f", "origin", f"{branch}:refs/heads/{branch}")
        if forksync and branch.startswith("forksync/"):
            self.record_sync_branch(branch, sha)
        return sha

    def record_sync_branch(self, branch: str, tip: str) -> None:
        """Record ``branch`` as forksync's, last pushed at ``tip`` — the ``sync_branches`` row
        :meth:`bot.sync.service.SyncService.publish` writes when it pushes a unit (no upstream
        commits: this world's fork follows no upstream)."""
        from bot.sync import store as sync_store

        unit = branch.removeprefix("forksync/")
        row = sync_store.branch_row(self.bot.store, "meta/triton", branch) or {}
        sync_store.save_branch(self.bot.store, repo="meta/triton", branch=branch, unit_id=unit,
                               kind="chain" if unit.startswith("chain-") else "bundle", pushed_tip=tip,
                               verified_tip=row.get("verified_tip", ""), pr=row.get("pr", 0), state="open",
                               shas_json="[]", base_sha=git(self.work, "rev-parse", "origin/main"), conflict_sha="",
                               depends_json=row.get("depends_json") or "[]")

    def delete_file_on_branch(self, branch: str, path: str, message: str) -> str:
        git(self.work, "fetch", "-q", "origin")
        git(self.work, "checkout", "-q", "-B", branch, "origin/main")
        git(self.work, "rm", "-q", path)
        git(self.work, "commit", "-q", "-m", message)
        git(self.work, "push", "-q", "-f", "origin", f"{branch}:refs/heads/{branch}")
        return git(self.work, "rev-parse", "HEAD")

    def push_main(self, files: dict[str, str], message: str) -> str:
        git(self.work, "fetch", "-q", "origin")
        git(self.work, "checkout", "-q", "-B", "main-work", "origin/main")
        sha = commit_files(self.work, files, message)
        git(self.work, "push", "-q", "origin", "main-work:refs/heads/main")
        return sha

    async def open_pr(self, branch: str, title: str = "sync", who: str = "alice") -> dict:
        return await self.people[who].post("/repos/meta/triton/pulls",
                                           data={"title": title, "head": branch, "base": "main"})

    async def pr(self, number: int) -> dict:
        return await self.alice.getitem(f"/repos/meta/triton/pulls/{number}")

    async def comment(self, number: int, body: str, who: str = "alice") -> None:
        """``who`` comments ``body`` on PR or issue ``number``; the App's reactions settle."""
        await self.people[who].post(f"/repos/meta/triton/issues/{number}/comments", data={"body": body})
        await self.bot.settle()

    async def check_runs(self, sha: str, name: str | None = None) -> list[dict]:
        url = f"/repos/meta/triton/commits/{sha}/check-runs" + (f"?check_name={name}" if name else "")
        return [r async for r in self.alice.getiter(url, iterable_key="check_runs")]

    def run_of(self, sha: str, name: str):
        repo = self.fake.state.repo("meta", "triton")
        runs = [r for r in repo.check_runs.values() if r.head_sha == sha and r.name == name]
        return runs[-1] if runs else None


async def make_world(fake, tmp_path: Path, files: dict[str, str] | None = None,
                     people=(("alice", "write"), ("carol", "write"), ("dave", "read")), **service_kw) -> World:
    make_source_repo(tmp_path / "src", [files or fork_files()])
    fork = fake.create_repo("meta/triton", source=tmp_path / "src")
    inst = fake.install("meta")
    for login, perm in people:
        fake.add_collaborator(fork, login, perm)
        fake.add_token(f"{login}-token", login)
    bot = await Bot(fake, tmp_path).start()
    svc = with_validation(bot, **service_kw)
    session = aiohttp.ClientSession()
    bot._people_session = session
    clients = {login: token_client(session, f"{login}-token", base_url=fake.url, retry=FAST_RETRY)
               for login, _ in people}
    work = tmp_path / "work-clone"
    subprocess.run(["git", "clone", "-q", str(fork.path), str(work)], check=True, capture_output=True)
    w = World(fake, bot, svc, clients, work, fork)
    w.inst = inst.id
    return w


async def actions_world(fake, tmp_path: Path, config: str = CONFIG, **kw) -> World:
    """A world whose suites run through GitHub Actions (the fork has forksync's GPU workflow):
    results come back as workflow runs' artifacts, not from a local runner."""
    files = fork_files(config=config)
    files[".github/workflows/forksync-gpu.yml"] = "name: forksync-gpu\n"
    return await make_world(fake, tmp_path, files=files, backend="github-actions", **kw)


async def tick_ctx(w: World):
    """A handler context for scheduled ticks (what the worker's periodic loop builds)."""
    from bot.app import queue as q
    from bot.app.dispatch import Context

    d = q.Delivery(id="tick", delivery_id="tick", hook_id="", event="tick", action="", installation_id=w.inst,
                   repo="", sender="", body=b"", content_type="", state="processing", attempts=1, received_at=0.0)
    return Context(delivery=d, gh=await w.bot.clients.client_for(w.inst), store=w.bot.store,
                   settings=w.bot.settings, sync=w.bot.svc, validation=w.bot.validation,
                   installation_id=w.inst)


async def check_run_event(w: World, head: str, branch: str | None, *, name="internal-ci", pull_requests=()):
    """Deliver another CI's ``check_run.completed`` on ``head`` with the PR list GitHub gives it:
    ``pull_requests`` (empty for runs from other repositories and runs GitHub did not associate)
    and ``check_suite.head_branch`` ``branch``."""
    payload = w.fake.webhooks.build("check_run", "completed", {
        "check_run": {"name": name, "head_sha": head, "status": "completed", "conclusion": "success",
                      "pull_requests": list(pull_requests),
                      "check_suite": {"head_branch": branch, "head_sha": head, "pull_requests": list(pull_requests)}},
        "repository": (await w.alice.getitem("/repos/meta/triton")),
        "sender": {"login": "internal-ci[bot]", "id": 99, "type": "Bot"}, "installation": {"id": w.inst}})
    await w.fake.webhooks.deliver("check_run", payload, validate=False)


def gate_failing(w: World, sha: str) -> list[str]:
    """The finding codes of the ``forksync/gate`` check run on ``sha`` (its summary's ❌ rows)."""
    run = w.run_of(sha, "forksync/gate")
    return [line.split("`")[1] for line in run.output["summary"].splitlines() if line.startswith("| ❌")]


async def opened_while_held(w: World, branch: str, files: dict, message: str) -> tuple[dict, str, int]:
    """Hold the fork (``/forksync hold`` on an issue), then push ``branch`` with ``files`` and open
    its PR: ``(the PR, its head, the hold issue)``."""
    issue = await w.alice.post("/repos/meta/triton/issues", data={"title": "ops", "body": "x"})
    await w.alice.post(f"/repos/meta/triton/issues/{issue['number']}/comments", data={"body": "/forksync hold"})
    await w.bot.settle()
    head = w.push_branch(branch, files, message)
    pr = await w.open_pr(branch)
    await w.bot.settle()
    return pr, head, issue["number"]


async def approved_and_held(w: World) -> tuple[dict, str, int]:
    """A sync PR touching the owned ``amd`` area, approved by its owner while the fork is held
    (so the gate waits instead of merging): ``(the PR, its head, the hold issue)``."""
    pr, head, issue = await opened_while_held(w, "forksync/bundle-amd", {"amd/kernel.txt": "v2\n"}, "Touch amd")
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert gate_failing(w, head) == ["hold"]
    return pr, head, issue


async def close_world(w: World) -> None:
    await w.bot._people_session.close()
    await w.bot.stop()
