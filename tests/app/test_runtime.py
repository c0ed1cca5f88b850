"""The worker's GitHub clients at start-up (``bot.app.runtime.Clients``) against the local GitHub:
where the bot's own login comes from in token mode, that a token which cannot say whose it
is leaves start-up going, with a warning that names the call and GitHub's answer, and that a
login GitHub did not give at start-up is asked for again — with backoff, on the next delivery and
poll tick — said on ``/healthz`` until it is learnt, then used by the loop guard and the services."""
from __future__ import annotations

import json
import logging

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app import queue as q
from bot.app.runtime import Clients, assemble, login_retry_delay
from bot.app.web import make_app
from bot.cli.serve import ServeSettings
from bot.store import Store
from tests.support.github import FAST_RETRY
from tests.support.processes import free_port

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
    port = free_port()
    settings = ServeSettings(token=PERSONAL, github_url=f"http://127.0.0.1:{port}")
    clients = Clients(settings, session, retry=FAST_RETRY)
    with caplog.at_level(logging.WARNING):
        await clients.start()
    assert clients.bot_login == ""
    warning = [r.getMessage() for r in caplog.records if "loop guard" in r.getMessage()]
    assert len(warning) == 1 and "GET /user" in warning[0], warning
    assert PERSONAL not in caplog.text


@pytest.mark.parametrize("failures, delay", [(1, 30.0), (2, 60.0), (3, 120.0), (5, 480.0), (6, 900.0), (40, 900.0)])
def test_the_login_is_asked_for_again_after_a_doubling_capped_delay(failures, delay):
    assert login_retry_delay(failures) == delay


class Clock:
    def __init__(self, t: float = 1000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def star_from(store: Store, guid: str, login: str) -> None:
    """A delivery no handler takes (``star``), sent by ``login``: only the loop guard looks at it."""
    body = json.dumps({"action": "created", "sender": {"login": login}}).encode()
    q.enqueue(store, delivery_id=guid, hook_id="", event="star", body=body, summary=q.summarize_payload(None), now=0.0)


async def healthz(store_path) -> tuple[int, dict]:
    client = TestClient(TestServer(make_app(Store(store_path), "secret")))
    await client.start_server()
    try:
        r = await client.get("/healthz")
        return r.status, await r.json()
    finally:
        await client.close()


async def test_a_login_github_did_not_give_at_start_up_is_learnt_later(fake_github, session, tmp_path):
    """GitHub answers ``GET /user`` with 502 at start-up (every retry of it): the worker starts
    without the login, ``/healthz`` says so (still 200: deliveries are processed) and the bot's own
    events pass the loop guard. Before the backoff has passed nothing is asked; after it, the next
    delivery asks, GitHub answers, and from that delivery on the loop guard, the services and
    ``/healthz`` know the login."""
    fake_github.add_token(PERSONAL, "deploy-bot")
    fake_github.faults.server_error("/user", "GET", status=502, times=FAST_RETRY.max_attempts)
    db, clock = tmp_path / "bot.db", Clock()
    store = Store(db)
    settings = ServeSettings(token=PERSONAL, github_url=fake_github.url, db=str(db), workdir=str(tmp_path / "work"))
    rt = await assemble(settings, store, session, retry=FAST_RETRY, clock=clock)
    asked = fake_github.requests_for("users/get-authenticated")
    assert [r["status"] for r in asked] == [502] * FAST_RETRY.max_attempts
    unknown = "token mode without FORKSYNC_BOT_LOGIN, and GET /user failed with 502 (Server Error)"
    assert (rt.clients.bot_login, rt.clients.login_unknown, rt.svc.login_unknown) == ("", unknown, unknown)
    rt.worker.beat()
    assert await healthz(db) == (200, {"status": "ok", "queue": q.counts(store), "warnings": [
        f"the bot's own GitHub login is unknown to 1 worker ({rt.worker.worker_id}): {unknown}; until it is learnt "
        "(asked again with backoff) the loop guard cannot recognise forksync's own events and a PR forksync opens "
        "counts as its own only on a branch it recorded — set FORKSYNC_BOT_LOGIN to the login GitHub shows as the "
        "author of forksync's PRs"]})

    clock.t += 29                           # the backoff has not passed: not asked again
    star_from(store, "own-1", "deploy-bot")
    assert await rt.worker.drain() == 1
    assert q.get(store, "own-1").outcome == "ignored: no handler for star in this bot"
    assert len(fake_github.requests_for("users/get-authenticated")) == len(asked)

    clock.t += 1                            # now it has: the next delivery asks, and GitHub answers
    star_from(store, "own-2", "Deploy-Bot")
    assert await rt.worker.drain() == 1
    assert q.get(store, "own-2").outcome == "ignored: sent by Deploy-Bot (loop guard)"
    assert [r["status"] for r in fake_github.requests_for("users/get-authenticated")][len(asked):] == [200]
    assert (rt.clients.bot_login, rt.svc.bot_login, rt.validation.bot_login, rt.dispatcher.bot_login) == (
        "deploy-bot",) * 4
    assert (rt.clients.login_unknown, rt.svc.login_unknown) == ("", "")
    rt.worker.beat()
    assert await healthz(db) == (200, {"status": "ok", "queue": q.counts(store)})
    assert await rt.learn_login() == []     # no tracked fork whose status issue would say it
    assert len(fake_github.requests_for("users/get-authenticated")) == len(asked) + 1
    store.close()


async def test_a_login_still_unknown_is_asked_for_at_each_poll_tick_once_its_backoff_passed(fake_github, session,
                                                                                           tmp_path):
    """A token GitHub never says the account of (an installation token: 403) is asked again at the
    poll ticks only as the backoff allows: 30 s, then 60 s after the second failure."""
    inst = fake_github.install("meta")
    token = fake_github.state.issue_token(installation_id=inst.id).token
    db, clock = tmp_path / "bot.db", Clock()
    store = Store(db)
    rt = await assemble(ServeSettings(token=token, github_url=fake_github.url, db=str(db), workdir=str(tmp_path / "w")),
                        store, session, retry=FAST_RETRY, clock=clock)
    asks = []
    for step in (0, 29, 1, 59, 1):
        clock.t += step
        await rt.learn_login()
        asks.append(len(fake_github.requests_for("users/get-authenticated")))
    assert asks == [1, 1, 2, 2, 3]
    assert rt.clients.login_unknown.endswith("GET /user failed with 403 (Resource not accessible by integration)")
    store.close()


async def test_the_status_issue_says_the_login_is_unknown_until_it_is_learnt(fake_github, session, tmp_path):
    """While the login is unknown the status issue of a tracked fork says so; the poll tick that
    learns it renders the issue again without it."""
    from bot.sync import store as sync_store
    from tests.support.github import make_source_repo

    make_source_repo(tmp_path / "src", [{"README.md": "fork\n"}])
    fork = fake_github.create_repo("meta/triton", source=tmp_path / "src")
    fake_github.add_collaborator(fork, "deploy-bot", "write")
    fake_github.add_token(PERSONAL, "deploy-bot")
    fake_github.faults.server_error("/user", "GET", status=502, times=FAST_RETRY.max_attempts)
    db, clock = tmp_path / "bot.db", Clock()
    store = Store(db)
    rt = await assemble(ServeSettings(token=PERSONAL, github_url=fake_github.url, db=str(db), workdir=str(tmp_path / "w")),
                        store, session, retry=FAST_RETRY, clock=clock)
    sync_store.track(store, "meta/triton", "triton-lang/triton", "main", None, 300)
    await rt.svc.refresh_status_issue(await rt.make_ctx(None), "meta/triton")
    [issue] = fake_github.state.repo("meta", "triton").issues.values()
    assert ("> **forksync does not know its own GitHub login**: token mode without FORKSYNC_BOT_LOGIN, and GET /user "
            "failed with 502 (Server Error). Until it learns it") in issue.body

    clock.t += 30
    assert await rt.learn_login() == []
    assert rt.svc.bot_login == "deploy-bot"
    assert "does not know its own GitHub login" not in issue.body
    assert "<!-- forksync:status-issue -->" in issue.body
    store.close()


async def test_the_installations_are_listed_at_the_first_tick_then_hourly_and_never_in_token_mode(
        fake_github, session, tmp_path):
    """The poll loop's pass over the App's installations (:meth:`Runtime.adopt_missed`): at the
    first tick (start-up), not again within the hour, again once it passed. Token mode has no App
    and so no installations: GitHub is not asked."""
    fake_github.install("meta")
    key = tmp_path / "app.pem"
    key.write_text(fake_github.app.private_key_pem)
    store = Store(tmp_path / "bot.db")
    rt = await assemble(ServeSettings(app_id=str(fake_github.app.id), private_key_file=str(key),
                                      github_url=fake_github.url, db=str(tmp_path / "bot.db"),
                                      workdir=str(tmp_path / "w")), store, session, retry=FAST_RETRY)
    lists = []
    for at in (1000.0, 1000.0 + 3599, 1000.0 + 3600):
        notes = await rt.adopt_missed(at)
        lists.append(len(fake_github.requests_for("apps/list-installations")))
    assert lists == [1, 1, 2]
    assert notes == ["1 installation(s), 0 repositories: 0 followed already, 0 adopted now, 0 not a fork to sync, "
                     "0 listing(s) failed"]
    store.close()

    fake_github.add_token(PERSONAL, "deploy-bot")
    store = Store(tmp_path / "token.db")
    rt = await assemble(ServeSettings(token=PERSONAL, github_url=fake_github.url, db=str(tmp_path / "token.db"),
                                      workdir=str(tmp_path / "w2")), store, session, retry=FAST_RETRY)
    assert await rt.adopt_missed(1000.0) == []
    assert len(fake_github.requests_for("apps/list-installations")) == 2
    store.close()


async def test_the_workers_start_removes_the_lock_files_an_earlier_release_kept(fake_github, session, tmp_path):
    """An earlier release kept one lock file per issue or PR ever commented on in
    ``<workdir>/locks``: the worker's start removes those no claim holds (bot.github.claims)."""
    locks = tmp_path / "w" / "locks"
    locks.mkdir(parents=True)
    for n in range(30):
        (locks / f"meta+triton@comments-{n}.lock").write_text("")
    (locks / "meta+triton.lock").write_text("")
    fake_github.add_token(PERSONAL, "deploy-bot")
    db = tmp_path / "bot.db"
    store = Store(db)
    await assemble(ServeSettings(token=PERSONAL, github_url=fake_github.url, db=str(db), workdir=str(tmp_path / "w")),
                   store, session, retry=FAST_RETRY)
    assert list(locks.iterdir()) == []
    store.close()
