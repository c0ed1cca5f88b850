"""Helpers for the end-to-end tests on the local GitHub (their ``world`` fixture is in
``tests/e2e/conftest.py``): the fork's config, listing sync PRs and the status issue, and adopting
the fork then moving upstream."""
from __future__ import annotations

from contextlib import asynccontextmanager

import aiohttp

from bot.github.client import token_client
from tests.support.botharness import Bot
from tests.support.github import commit_files, git, make_source_repo

CONFIG = """\
upstream:
  url: triton-lang/triton
  ref: main
fork:
  ref: main
areas:
  - name: amd
    paths: ["third_party/amd/**"]
    divergent: true
    owners: [carol]
"""


async def open_sync_prs(gh):
    return sorted([p async for p in gh.getiter("/repos/meta/triton/pulls?state=open")], key=lambda p: p["head"]["ref"])


async def status_issue(gh):
    return [i async for i in gh.getiter("/repos/meta/triton/issues?state=open")
            if "<!-- forksync:status-issue -->" in (i.get("body") or "")]


async def status_command(gh, bot, number: int, text: str) -> str:
    """``gh``'s comment ``text`` on the status issue ``number``, the bot settled: its last reply."""
    await gh.post(f"/repos/meta/triton/issues/{number}/comments", data={"body": text})
    await bot.settle()
    replies = [c["body"] async for c in gh.getiter(f"/repos/meta/triton/issues/{number}/comments")
               if c["user"]["login"] == "forksync[bot]"]
    return replies[-1] if replies else ""


async def install_on_fork(fake, bot, fork, inst_id: int):
    """Deliver ``installation.created`` for the fork (meta/triton) and let the bot settle; returns
    the delivery (its ``statuses``)."""
    payload = fake.webhooks.build("installation", "created", {
        "installation": {"id": inst_id, "app_slug": "forksync", "created_at": "2026-11-30T00:00:00Z",
                         "updated_at": "2026-11-30T00:00:00Z"},
        "repositories": [{"id": fork.id, "name": "triton", "full_name": "meta/triton", "private": False,
                          "node_id": "R_1"}]})
    d = await fake.webhooks.deliver("installation", payload)
    await bot.settle()
    return d


def move_upstream(up_src, upstream) -> list[str]:
    """Push two upstream commits: ``python/a.py`` (a bundle's) and ``third_party/amd/x.cpp`` (the
    divergent AMD area: a chain's). Returns their shas."""
    shas = [commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)"),
            commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: new x (#102)")]
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    return shas


async def adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst):
    await install_on_fork(fake, bot, fork, inst.id)
    return move_upstream(up_src, upstream)


@asynccontextmanager
async def sync_world(fake, tmp_path, config: str = CONFIG, **bot_kw):
    """Upstream (python/a.py, python/b.py, third_party/amd/x.cpp) and the fork following it with
    ``config``, the real bot (``bot_kw`` to :class:`tests.support.botharness.Bot`) and writer alice.
    Yields ``(fake, bot, alice, up_src, upstream, fork, inst)``; the App is not yet installed."""
    up_src = tmp_path / "up"
    make_source_repo(up_src, [{"python/a.py": "a = 1\n", "third_party/amd/x.cpp": "int x;\n", "python/b.py": "b = 1\n"}])
    upstream = fake.create_repo("triton-lang/triton", source=up_src)
    fork_src = tmp_path / "forksrc"
    git(tmp_path, "clone", "-q", str(up_src), str(fork_src))
    commit_files(fork_src, {".github/forksync.yml": config}, "fork: forksync config")
    fork = fake.create_repo("meta/triton", source=fork_src)
    fake.install("triton-lang")
    inst = fake.install("meta")
    fake.add_collaborator(fork, "alice", "write")
    fake.add_token("alice-token", "alice")
    bot = await Bot(fake, tmp_path, **bot_kw).start()
    session = aiohttp.ClientSession()
    try:
        yield fake, bot, token_client(session, "alice-token", base_url=fake.url), up_src, upstream, fork, inst
    finally:
        await session.close()
        await bot.stop()


def job_context(bot):
    """``make_ctx(installation_id)`` for scheduled work (the poller, the ticks): a handler context
    with no webhook behind it, as the worker builds one."""
    from bot.app import queue as q
    from bot.app.dispatch import Context

    async def make_ctx(inst_id):
        d = q.Delivery(id="poll", delivery_id="poll", hook_id="", event="poll", action="", installation_id=inst_id,
                       repo="", sender="", body=b"", content_type="", state="processing", attempts=1, received_at=0)
        return Context(delivery=d, gh=await bot.clients.client_for(inst_id), store=bot.store, settings=bot.settings,
                       sync=bot.svc, validation=bot.validation, installation_id=inst_id)
    return make_ctx


def installation_event(fake, inst_id: int, action: str, repos=(), *, event: str = "installation") -> dict:
    """A payload of GitHub's ``installation`` (``created``, ``deleted``) or
    ``installation_repositories`` (``added``, ``removed``) event for installation ``inst_id``,
    naming the local GitHub's repositories ``repos``."""
    listed = [{"id": r.id, "name": r.name, "full_name": r.full_name, "private": False, "node_id": f"R_{r.id}"}
              for r in repos]
    fields: dict = {"installation": {"id": inst_id, "app_slug": "forksync", "created_at": "2026-11-30T00:00:00Z",
                                     "updated_at": "2026-11-30T00:00:00Z"}}
    if event == "installation":
        fields["repositories"] = listed
    else:           # its schema also requires the installation's suspension fields
        fields["installation"].update(suspended_by=None, suspended_at=None)
        fields.update(requester=None, repository_selection="selected",
                      repositories_added=listed if action == "added" else [],
                      repositories_removed=listed if action == "removed" else [])
    return fake.webhooks.build(event, action, fields)
