"""The worker's GitHub clients at start-up (``bot.app.runtime.Clients``) against the local GitHub:
where the bot's own login comes from in token mode, and that a token which cannot say whose it
is leaves start-up going, with a warning that names the call and GitHub's answer."""
from __future__ import annotations

import logging

import aiohttp
import pytest

from bot.app.runtime import Clients
from bot.cli.serve import ServeSettings
from tests.support.github import FAST_RETRY

PERSONAL = "ghp_forksyncDeployBotToken0000000000000"


@pytest.fixture
async def session():
    async with aiohttp.ClientSession() as s:
        yield s


async def started(fake, session, token: str, **settings) -> Clients:
    clients = Clients(ServeSettings(token=token, github_url=fake.url, **settings), session, retry=FAST_RETRY)
    await clients.start()
    return clients


async def test_token_mode_learns_the_bot_login_from_the_tokens_own_account(fake_github, session, caplog):
    """A personal token belongs to an account (here ``deploy-bot``): GitHub shows that account as
    the author of the PRs and comments forksync makes with it, so it is the bot's login."""
    fake_github.add_token(PERSONAL, "deploy-bot")
    with caplog.at_level(logging.WARNING, logger="bot.app.runtime"):
        clients = await started(fake_github, session, PERSONAL)
    assert clients.bot_login == "deploy-bot"
    assert [r["status"] for r in fake_github.requests_for("users/get-authenticated")] == [200]
    assert "loop guard" not in caplog.text


async def test_a_configured_bot_login_is_kept_and_github_is_not_asked(fake_github, session):
    fake_github.add_token(PERSONAL, "deploy-bot")
    clients = await started(fake_github, session, PERSONAL, bot_login="someone[bot]")
    assert clients.bot_login == "someone[bot]"
    assert fake_github.requests_for("users/get-authenticated") == []


async def test_a_token_that_cannot_read_its_account_starts_with_a_warning(fake_github, session, caplog):
    """An installation token used as FORKSYNC_TOKEN: GitHub answers ``GET /user`` with 403
    ("Resource not accessible by integration"). Start-up goes on without a login and the warning
    says which call failed and how; the token itself is in no log line."""
    inst = fake_github.install("meta")
    token = fake_github.state.issue_token(installation_id=inst.id).token
    with caplog.at_level(logging.WARNING):
        clients = await started(fake_github, session, token)
    assert clients.bot_login == ""
    assert [r["status"] for r in fake_github.requests_for("users/get-authenticated")] == [403]
    warning = [r.getMessage() for r in caplog.records if "loop guard" in r.getMessage()]
    assert len(warning) == 1 and "GET /user" in warning[0] and "403" in warning[0], warning
    assert "FORKSYNC_BOT_LOGIN" in warning[0]
    assert token not in caplog.text


async def test_a_revoked_token_starts_with_a_warning_naming_the_401(fake_github, session, caplog):
    with caplog.at_level(logging.WARNING):
        clients = await started(fake_github, session, "ghp_revokedTokenNobodyHas000000000000000")
    assert clients.bot_login == ""
    warning = [r.getMessage() for r in caplog.records if "loop guard" in r.getMessage()]
    assert len(warning) == 1 and "GET /user" in warning[0] and "401" in warning[0], warning
    assert "ghp_revokedTokenNobodyHas" not in caplog.text


async def test_an_unreachable_github_starts_with_a_warning(tmp_path, session, caplog):
    """No GitHub answers at all (nothing listens on the port): start-up still goes on."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = ServeSettings(token=PERSONAL, github_url=f"http://127.0.0.1:{port}")
    clients = Clients(settings, session, retry=FAST_RETRY)
    with caplog.at_level(logging.WARNING):
        await clients.start()
    assert clients.bot_login == ""
    warning = [r.getMessage() for r in caplog.records if "loop guard" in r.getMessage()]
    assert len(warning) == 1 and "GET /user" in warning[0], warning
    assert PERSONAL not in caplog.text
