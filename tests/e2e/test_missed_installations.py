"""Installations made while forksync was down: GitHub sent ``installation.created`` (or
``installation_repositories.added``) once, to nobody, and does not send it again. The worker
lists the App's installations and their repositories at start (and hourly) and adopts what is
not followed yet, as the event would (:mod:`bot.app.installations`)."""
from __future__ import annotations

import asyncio
import threading

import aiohttp

from bot.app.runtime import run_worker_loop
from bot.github.client import token_client
from bot.store import Store
from bot.sync import store as sync_store
from tests.support.botharness import Bot
from tests.support.e2e import CONFIG, status_issue
from tests.support.github import commit_files, git, make_source_repo


def lost(fake, action: str = "created") -> list:
    """The installation deliveries the local GitHub emitted while no webhook URL was set (forksync down)."""
    return [d for d in fake.webhooks.emitted if d.event == "installation" and d.action == action]


async def test_serve_started_after_the_install_follows_the_fork_and_opens_its_status_issue(fake_github, tmp_path):
    """End to end: the App is installed on meta while no forksync runs (its event goes nowhere);
    then the worker starts (``run_worker_loop``, as ``forksync serve`` runs it, no webhook at
    all): the fork is followed and its status issue appears."""
    fake = fake_github
    up_src = tmp_path / "up"
    make_source_repo(up_src, [{"python/a.py": "a = 1\n"}])
    fake.create_repo("triton-lang/triton", source=up_src)
    fork_src = tmp_path / "forksrc"
    git(tmp_path, "clone", "-q", str(up_src), str(fork_src))
    commit_files(fork_src, {".github/forksync.yml": CONFIG}, "fork: forksync config")
    fake.create_repo("meta/triton", source=fork_src)
    inst = fake.install("meta")
    assert [d.url for d in lost(fake)] == [None]        # forksync is down: sent to nobody
    fake.add_token("alice-token", "alice")
    settings = Bot(fake, tmp_path).settings
    stop = threading.Event()
    task = asyncio.create_task(run_worker_loop(settings, stop, poll_tick_s=3600.0))
    async with aiohttp.ClientSession() as session:
        alice = token_client(session, "alice-token", base_url=fake.url)
        try:
            for _ in range(1200):           # done when the issue is open (two minutes at most on a busy machine)
                if await status_issue(alice) or task.done():
                    break
                await asyncio.sleep(0.1)
            [issue] = await status_issue(alice)
        finally:
            stop.set()
            await task
    head = git(up_src, "rev-parse", "HEAD").strip()
    assert f"| upstream head | `{head[:12]}` |" in issue["body"], issue["body"]
    store = Store(settings.db)
    try:
        assert [(r["fork"], r["installation_id"]) for r in sync_store.tracked_forks(store)] == [("meta/triton", inst.id)]
        assert sync_store.failing_jobs(store) == [] and sync_store.failing_app_jobs(store) == []
    finally:
        store.close()
