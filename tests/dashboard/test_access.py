"""GitHub login for a deployed serve's dashboard, against the local GitHub's OAuth web flow: login
is required, a user sees only the forks they may read, a forged or expired cookie is no login,
and no answer holds a token or secret."""
from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app.web import make_app, mount_dashboard
from bot.cli.serve import ServeSettings, dashboard_access
from bot.config.forksync import UserError
from bot.dashboard.access import GitHubLogin, web_url_of
from bot.store import Store
from tests.support.dashboard_world import FORK, fill

SESSION_SECRET = "session-secret-canary-7d1f"


@pytest.fixture
async def served(fake_github, tmp_path):
    fake = fake_github
    fake.create_repo(FORK, private=True)
    fake.create_repo("meta/public-fork")
    fake.create_user("alice")
    fake.create_user("bob")
    fake.state.repos[FORK].collaborators["alice"] = "read"
    store = Store(tmp_path / "f.db")
    fill(store)
    fill(store, fork="meta/public-fork", shared=False)
    now = [1000.0]
    login = GitHubLogin(client_id=fake.app.client_id, client_secret=fake.app.client_secret, session_secret=SESSION_SECRET,
                        api_url=fake.url, session_max_age_s=3600, clock=lambda: now[0])
    app = make_app(store, "hook-secret")
    mount_dashboard(app, Store(tmp_path / "f.db"), access=login)
    c = TestClient(TestServer(app))
    await c.start_server()
    yield fake, c, login, now
    await c.close()


async def log_in(fake, c: TestClient, user: str, path: str):
    """Follow the web flow as a browser would: dashboard → /auth/login → GitHub → /auth/callback → page."""
    fake.oauth_user = user
    r = await c.get(path, allow_redirects=False)
    assert r.status == 302 and r.headers["Location"].startswith("/auth/login?next=")
    r = await c.get(r.headers["Location"], allow_redirects=False)
    assert r.status == 302 and r.headers["Location"].startswith(f"{fake.url}/login/oauth/authorize?response_type=code&client_id=")
    r = await c.session.get(r.headers["Location"], allow_redirects=False)        # the local GitHub authorizes at once
    assert r.status == 302 and "/auth/callback?code=" in r.headers["Location"]
    r = await c.session.get(r.headers["Location"], allow_redirects=False)
    assert r.status == 302 and r.headers["Location"] == path
    return await c.get(path)


async def test_login_required_and_a_fork_only_for_readers(served):
    fake, c, login, now = served
    r = await c.get("/api/v1/forks")
    assert r.status == 401 and (await r.json())["error"] == "log in with GitHub first: /auth/login"
    page = await log_in(fake, c, "alice", f"/forks/{FORK}/")
    text = await page.text()
    assert page.status == 200 and 'id="days-behind">3.25<' in text and "alice · <a href=\"/auth/logout\">" in text
    forks = await (await c.get("/api/v1/forks")).json()
    assert [f["fork"] for f in forks["forks"]] == ["meta/public-fork", FORK]
    body = text + str(forks)
    for secret in (fake.app.client_secret, SESSION_SECRET, *[t for t in fake.state.tokens if t.startswith("ghu_")]):
        assert secret not in body
    # the permission answer is cached: a revoked reader still sees it until the cache expires
    fake.state.repos[FORK].collaborators.pop("alice")
    assert (await c.get(f"/api/v1/forks/{FORK}/overview")).status == 200
    now[0] += 301
    r = await c.get(f"/api/v1/forks/{FORK}/overview")
    assert r.status == 404 and "may not read it" in (await r.json())["error"]


async def test_a_user_without_read_permission_sees_nothing_of_the_fork(served):
    fake, c, login, now = served
    page = await log_in(fake, c, "bob", "/forks/meta/public-fork/")
    assert page.status == 200
    assert [f["fork"] for f in (await (await c.get("/api/v1/forks")).json())["forks"]] == ["meta/public-fork"]
    for path in (f"/api/v1/forks/{FORK}/overview", f"/api/v1/forks/{FORK}/ledger", f"/forks/{FORK}/", f"/forks/{FORK}/units"):
        r = await c.get(path)
        assert r.status == 404, path
        assert "3.25" not in await r.text()
    health = await (await c.get("/api/v1/health")).json()
    assert [f["fork"] for f in health["forks"]] == ["meta/public-fork"]
    assert FORK not in await (await c.get("/?all=1")).text()


async def test_forged_expired_and_logged_out_cookies_are_no_login(served):
    fake, c, login, now = served
    await log_in(fake, c, "alice", "/health")
    jar = c.session.cookie_jar
    good = next(m.value for m in jar if m.key == "forksync_session")
    here = c.make_url("/")

    def put(value: str) -> None:
        jar.clear()
        jar.update_cookies({"forksync_session": value}, response_url=here)
    put(good)
    assert (await c.get("/api/v1/forks")).status == 200
    put(good[:-4] + ("AAAA" if not good.endswith("AAAA") else "BBBB"))
    r = await c.get("/api/v1/forks")
    assert r.status == 401                                    # altered: it does not decrypt
    put("not-a-fernet-token")
    assert (await c.get("/api/v1/forks")).status == 401
    await log_in(fake, c, "alice", "/health")
    now[0] += 3601                                            # the server-side login expires with the cookie
    assert (await c.get("/api/v1/forks")).status == 401
    await log_in(fake, c, "alice", "/health")
    r = await c.get("/auth/logout")
    assert r.status == 200 and "logged out" in await r.text()
    assert (await c.get("/api/v1/forks")).status == 401


async def test_a_callback_without_this_browsers_state_is_refused(served):
    fake, c, login, now = served
    r = await c.get("/auth/callback?code=abc&state=forged")
    assert r.status == 400 and "state does not match" in await r.text()


async def test_static_scripts_and_the_webhook_need_no_login(served):
    fake, c, login, now = served
    assert (await c.get("/static/dashboard.js")).status == 200
    assert (await c.post("/webhook", data=b"{}")).status == 401        # the webhook's own signature rule


def test_serve_settings_for_login():
    assert dashboard_access(ServeSettings()) is None
    with pytest.raises(UserError, match="needs FORKSYNC_OAUTH_CLIENT_SECRET, FORKSYNC_SESSION_SECRET too"):
        dashboard_access(ServeSettings(oauth_client_id="Iv1.x"))
    s = ServeSettings(oauth_client_id="Iv1.x", oauth_client_secret="client-canary", session_secret="session-canary", host="0.0.0.0")
    a = dashboard_access(s)
    assert "canary" not in repr(a)
    assert a.web_url == "https://github.com" and a.secure_cookie is True
    assert s.redacted()["oauth_client_secret"] == "***" and s.redacted()["session_secret"] == "***"
    assert web_url_of("https://ghe.example.com/api/v3") == "https://ghe.example.com"


async def test_login_returns_only_to_a_path_on_this_site(served):
    fake, c, login, now = served
    fake.oauth_user = "alice"
    for nxt in ("//evil.example/x", "/\\evil.example/x", "https://evil.example/"):
        r = await c.get("/auth/login", params={"next": nxt}, allow_redirects=False)
        r = await c.session.get(r.headers["Location"], allow_redirects=False)
        r = await c.session.get(r.headers["Location"], allow_redirects=False)
        assert r.status == 302 and r.headers["Location"] == "/", nxt


async def test_login_returns_to_the_very_query_it_was_asked(served):
    # the query went into "next" decoded: a PR search "q=%235007" came back as "q=#5007", whose
    # "#5007" the browser keeps to itself, so the page after the login listed the whole ledger
    fake, c, login, now = served
    path = f"/forks/{FORK}/ledger?q=%235007&limit=5"
    page = await log_in(fake, c, "alice", path)
    assert page.status == 200 and '<p id="total">1 matching upstream commit(s).</p>' in await page.text()
