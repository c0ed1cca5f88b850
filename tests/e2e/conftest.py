"""The end-to-end world: upstream and the fork on the local GitHub, the real bot (web app, durable
queue, worker, handlers) started against it, and a writer's client (alice)."""
from __future__ import annotations

import aiohttp
import pytest

from bot.github.client import token_client
from tests.support.botharness import Bot
from tests.support.e2e import CONFIG
from tests.support.github import commit_files, git, make_source_repo


@pytest.fixture
async def world(fake_github, tmp_path):
    fake = fake_github
    up_src = tmp_path / "up"
    make_source_repo(up_src, [{"python/a.py": "a = 1\n", "third_party/amd/x.cpp": "int x;\n", "python/b.py": "b = 1\n"}])
    upstream = fake.create_repo("triton-lang/triton", source=up_src)
    fork_src = tmp_path / "forksrc"
    git(tmp_path, "clone", "-q", str(up_src), str(fork_src))
    commit_files(fork_src, {".github/forksync.yml": CONFIG}, "fork: forksync config")
    fork = fake.create_repo("meta/triton", source=fork_src)
    fake.install("triton-lang")
    inst = fake.install("meta")
    fake.add_collaborator(fork, "alice", "write")
    fake.add_token("alice-token", "alice")
    bot = await Bot(fake, tmp_path).start()
    session = aiohttp.ClientSession()
    alice = token_client(session, "alice-token", base_url=fake.url)
    yield fake, bot, alice, up_src, upstream, fork, inst
    await session.close()
    await bot.stop()
