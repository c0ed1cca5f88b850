"""An installation token the bot minted at run time never reaches a place people or other
programs read, even when GitHub's (or a proxy's) answer to a failed call echoes it back: the
refused PR below comes back with the request's ``Authorization`` header in its message. Every
sink is checked: the store (every row of every table), the status issue, ``/metrics``,
``/healthz``, the dashboard's pages and JSON, and the log lines as forksync formats them."""
import logging

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.agents.redact import ScrubbingFormatter, configured_secrets, forget_secrets
from bot.app.web import make_app, mount_dashboard
from bot.store import Store
from bot.sync import store as sync_store
from tests.support.e2e import install_on_fork, status_issue, sync_world
from tests.support.github import commit_files, git


@pytest.fixture
async def world(fake_github, tmp_path):
    """tests/e2e/conftest.py's world, with the bot fetching and pushing over HTTP with its token."""
    async with sync_world(fake_github, tmp_path, git_http=True) as w:
        yield w
    forget_secrets()        # the minted tokens this test made scrubbable


async def pages(bot) -> dict[str, str]:
    """What the web app and the dashboard answer, page by page, read from the bot's database."""
    store = Store(bot.settings.db)
    app = make_app(Store(bot.settings.db), bot.settings.webhook_secret)
    mount_dashboard(app, store)
    client = TestClient(TestServer(app))
    await client.start_server()
    out = {}
    try:
        for path in ("/metrics", "/healthz", "/health", "/api/v1/health", "/api/v1/forks",
                     "/forks/meta/triton/", "/forks/meta/triton/units", "/api/v1/forks/meta/triton/units",
                     "/api/v1/forks/meta/triton/overview"):
            r = await client.get(path)
            out[path] = await r.text()
    finally:
        await client.close()
        store.close()
    return out


def rows(db_path) -> str:
    """Every row of every table, as SQL text."""
    import sqlite3
    conn = sqlite3.connect(db_path)
    try:
        return "\n".join(conn.iterdump())
    finally:
        conn.close()


async def test_a_minted_token_echoed_by_a_refusal_reaches_no_sink(world, caplog):
    fake, bot, alice, up_src, upstream, fork, inst = world
    caplog.set_level(logging.DEBUG)
    token = await bot.clients.token_for(inst.id)        # the one the bot will use: cached for the hour
    assert token.startswith("ghs_")
    assert token in configured_secrets()        # scrubbed by value from the moment it was minted
    # a proxy in front of GitHub that quotes the request it refused, header and all
    fake.faults.add("POST", "/repos/meta/triton/pulls", 403,
                    f"Resource not accessible by integration (request: POST /repos/meta/triton/pulls, "
                    f"Authorization: token {token})", times=50)
    await install_on_fork(fake, bot, fork, inst.id)
    commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()

    # the refusal was seen and kept: the unit is blocked with GitHub's words
    blocked = sync_store.load_status(bot.store, "meta/triton").blocked
    assert blocked and "Resource not accessible by integration" in blocked[0]["reason"], blocked
    [issue] = await status_issue(alice)
    assert "Resource not accessible by integration" in issue["body"]

    sinks = {"store": rows(bot.settings.db), "status issue": issue["body"],
             **{f"page {p}": text for p, text in (await pages(bot)).items()},
             "logs": "\n".join(ScrubbingFormatter().format(r) for r in caplog.records)}
    sinks["comments"] = "\n".join([c["body"] async for c in
                                   alice.getiter(f"/repos/meta/triton/issues/{issue['number']}/comments")])
    leaks = [where for where, text in sinks.items() if token in text or token[4:16] in text]
    assert leaks == [], f"the installation token reached: {leaks}"
