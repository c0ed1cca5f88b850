"""Who may see the dashboard of a deployed ``forksync serve``: GitHub login through the OAuth web
flow of the App's OAuth client, and a fork only for users with read permission on it.

- Login: ``/auth/login`` sends the browser to GitHub's ``/login/oauth/authorize`` with a random
  ``state`` kept in the session; ``/auth/callback`` checks the state, exchanges the code at
  ``/login/oauth/access_token`` (authlib builds the request and reads the answer), asks
  ``GET /user`` who it is, and keeps the login in the session. ``/auth/logout`` forgets it.
- The session is a cookie signed and encrypted with Fernet (aiohttp-session's
  ``EncryptedCookieStorage``; key derived from ``FORKSYNC_SESSION_SECRET``), HttpOnly,
  SameSite=Lax, that expires after ``session_max_age_s``. A forged, altered or expired cookie
  decrypts to nothing: the visitor is simply not logged in. The user's token never leaves the
  server (it is kept in memory, keyed by a random session id) and no page or answer holds it.
- Permission: ``GET /repos/{fork}/collaborators/{login}/permission`` with the user's own token;
  read, triage, write, maintain or admin may see the fork; 404/403 (a private fork the user cannot
  see) or ``none`` may not. Answers are cached ``cache_ttl_s`` per (user, fork). A fork the user
  may not read is answered like a fork that does not exist. Any other answer (a 5xx, a rate
  limit) or none at all is no answer: not cached, and the pages say GitHub could not be asked.
"""
from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import quote

import aiohttp
from aiohttp import web
from aiohttp_session import get_session
from aiohttp_session import setup as session_setup
from aiohttp_session.cookie_storage import EncryptedCookieStorage
from authlib.oauth2.rfc6749 import parameters

log = logging.getLogger(__name__)

#: What the login middleware leaves on a request for the pages: who, and which forks they may read.
USER_KEY = web.RequestKey("forksync_user", str)
ALLOWED_KEY = web.RequestKey("forksync_allowed", object)
#: The forks whose permission GitHub did not answer for this request (a frozenset; empty: all answered).
UNASKED_KEY = web.RequestKey("forksync_unasked", frozenset)
HTTP_KEY = web.AppKey("forksync_oauth_http", aiohttp.ClientSession)
READ_ROLES = frozenset({"read", "triage", "write", "maintain", "admin"})
#: Paths served without login: the login itself and the pages' static scripts.
OPEN_PREFIXES = ("/auth/", "/static/")


def web_url_of(api_url: str) -> str:
    """GitHub's web address for an API base: ``https://api.github.com`` → ``https://github.com``;
    GitHub Enterprise ``https://HOST/api/v3`` → ``https://HOST``; anything else (the local GitHub)
    serves both on one address."""
    u = api_url.rstrip("/")
    if u == "https://api.github.com":
        return "https://github.com"
    return u[: -len("/api/v3")] if u.endswith("/api/v3") else u


@dataclass
class GitHubLogin:
    """The settings of the login: the App's OAuth client, the session key, GitHub's addresses."""

    client_id: str
    client_secret: str = field(repr=False)
    session_secret: str = field(repr=False)
    api_url: str = "https://api.github.com"
    web_url: str = ""
    session_max_age_s: int = 8 * 3600
    cache_ttl_s: float = 300.0
    secure_cookie: bool = False
    clock: Callable[[], float] = time.time
    _tokens: dict[str, tuple[str, float]] = field(default_factory=dict, repr=False)       # session id → (token, expires)
    _cache: dict[tuple[str, str], tuple[bool, float]] = field(default_factory=dict)

    def __post_init__(self):
        if not (self.client_id and self.client_secret and self.session_secret):
            raise ValueError("GitHub login needs FORKSYNC_OAUTH_CLIENT_ID, FORKSYNC_OAUTH_CLIENT_SECRET and "
                             "FORKSYNC_SESSION_SECRET")
        self.web_url = (self.web_url or web_url_of(self.api_url)).rstrip("/")

    def fernet_key(self) -> bytes:
        """32 bytes for Fernet, derived from the session secret (any length) with SHA-256."""
        return hashlib.sha256(b"forksync-dashboard-session\0" + self.session_secret.encode()).digest()

    async def can_read(self, http: aiohttp.ClientSession, token: str, login: str, fork: str) -> bool | None:
        """Whether ``login`` may read ``fork``, asked from GitHub with the user's token: True or
        False (cached ``cache_ttl_s``), None when GitHub gave no answer (a 5xx, a rate limit, a
        dropped connection; not cached: asked again on the next request)."""
        key = (login, fork)
        hit = self._cache.get(key)
        now = self.clock()
        if hit and hit[1] > now:
            return hit[0]
        try:
            async with http.get(f"{self.api_url}/repos/{fork}/collaborators/{quote(login)}/permission",
                                headers=_auth(token)) as r:
                # 404/403: a private fork the user cannot see; a 403 of a spent rate limit says nothing of that
                limited = r.status == 429 or (r.status == 403 and r.headers.get("X-RateLimit-Remaining") == "0")
                if r.status not in (200, 403, 404) or limited:
                    log.warning("dashboard: permission of %s on %s unknown (GitHub answered %d): not shown", login, fork,
                                r.status)
                    return None
                ok = r.status == 200 and (await r.json()).get("permission") in READ_ROLES
        except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as e:
            log.warning("dashboard: permission of %s on %s unknown (%s): not shown", login, fork, type(e).__name__)
            return None
        self._cache[key] = (ok, now + self.cache_ttl_s)
        return ok


def _auth(token: str) -> dict:
    return {"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}


def install(app: web.Application, login: GitHubLogin, forks: Callable[[], list[str]]) -> None:
    """Require login on ``app``'s dashboard paths; ``forks()`` lists the forks the store holds
    (called on the dashboard's worker thread by the caller's choice: it must be quick)."""
    session_setup(app, EncryptedCookieStorage(login.fernet_key(), cookie_name="forksync_session",
                                              max_age=login.session_max_age_s, httponly=True, samesite="Lax",
                                              secure=login.secure_cookie))
    http_key = HTTP_KEY

    async def start(app_: web.Application) -> None:
        app_[http_key] = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=15))

    async def stop(app_: web.Application) -> None:
        await app_[http_key].close()
    app.on_startup.append(start)
    app.on_cleanup.append(stop)

    def callback_url(request: web.Request) -> str:
        return f"{request.scheme}://{request.host}/auth/callback"

    async def do_login(request: web.Request) -> web.Response:
        session = await get_session(request)
        state = secrets.token_urlsafe(24)
        session["oauth_state"] = state
        nxt = request.query.get("next", "/")
        # only a path on this site: "//host" and "/\host" would leave it
        session["next"] = nxt if nxt.startswith("/") and not nxt.startswith(("//", "/\\")) else "/"
        url = parameters.prepare_grant_uri(f"{login.web_url}/login/oauth/authorize", login.client_id, "code",
                                           redirect_uri=callback_url(request), state=state)
        raise web.HTTPFound(url)

    async def callback(request: web.Request) -> web.Response:
        session = await get_session(request)
        expected = session.pop("oauth_state", None)
        if not expected or request.query.get("state") != expected:
            return _denied(request, 400, "the login did not complete (its state does not match this browser's): "
                                         "start again at /auth/login")
        try:
            parameters.parse_authorization_code_response(str(request.url), state=expected)
        except Exception as e:  # noqa: BLE001 - authlib raises its own error types for a bad or missing state/code
            return _denied(request, 400, f"the login did not complete ({type(e).__name__}): start again at /auth/login")
        code = request.query["code"]
        http = request.app[http_key]
        try:
            form = parameters.prepare_token_request("authorization_code", code=code, redirect_uri=callback_url(request),
                                                    client_id=login.client_id, client_secret=login.client_secret)
            async with http.post(f"{login.web_url}/login/oauth/access_token", data=form,
                                 headers={"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"}) as r:
                body = await r.json(content_type=None)
            if not isinstance(body, dict) or not body.get("access_token"):
                err = body.get("error", "no token") if isinstance(body, dict) else "no token"
                return _denied(request, 401, f"GitHub refused the login: {err}: start again at /auth/login")
            tok = {"access_token": str(body["access_token"])}
            async with http.get(f"{login.api_url}/user", headers=_auth(tok["access_token"])) as r:
                user = await r.json(content_type=None) if r.status == 200 else {}
        except (aiohttp.ClientError, asyncio.TimeoutError, ValueError, KeyError) as e:
            return _denied(request, 503, f"GitHub could not be asked who you are ({type(e).__name__}); try again")
        if not user.get("login"):
            return _denied(request, 401, "GitHub did not say who you are: start again at /auth/login")
        sid = secrets.token_urlsafe(24)
        login._tokens[sid] = (tok["access_token"], login.clock() + login.session_max_age_s)
        session["login"], session["sid"] = user["login"], sid
        raise web.HTTPFound(session.pop("next", "/") or "/")

    async def logout(request: web.Request) -> web.Response:
        session = await get_session(request)
        login._tokens.pop(session.get("sid", ""), None)
        session.invalidate()
        return _denied(request, 200, "You are logged out.")

    @web.middleware
    async def require_login(request: web.Request, handler):
        path = request.path
        if not _dashboard_path(path) or path.startswith(OPEN_PREFIXES):
            return await handler(request)
        session = await get_session(request)
        who, sid = session.get("login"), session.get("sid", "")
        token = login._tokens.get(sid)
        if not who or token is None or token[1] < login.clock():
            if path.startswith("/api/"):
                return web.json_response({"schema": "forksync.dashboard.error/1", "status": 401,
                                          "error": "log in with GitHub first: /auth/login"}, status=401)
            # the path and query as sent, still percent-encoded: decoded, "q=%235007" came back as "q=#5007"
            raise web.HTTPFound(f"/auth/login?next={quote(request.raw_path)}")
        names = await asyncio.get_running_loop().run_in_executor(None, forks)
        answers = await asyncio.gather(*(login.can_read(request.app[http_key], token[0], who, f) for f in names))
        allowed = {f for f, ok in zip(names, answers) if ok}
        request[USER_KEY] = who
        request[ALLOWED_KEY] = allowed.__contains__
        request[UNASKED_KEY] = frozenset(f for f, ok in zip(names, answers) if ok is None)
        return await handler(request)

    app.router.add_get("/auth/login", do_login)
    app.router.add_get("/auth/callback", callback)
    app.router.add_get("/auth/logout", logout)
    app.middlewares.append(require_login)


def _dashboard_path(path: str) -> bool:
    return path in ("/", "/health") or path.startswith(("/forks/", "/api/", "/static/", "/auth/"))


def _denied(request: web.Request, status: int, message: str) -> web.Response:
    from bot.templating import render_html  # lazy: the page template is rendered only on this path

    return web.Response(text=render_html("dashboard/error.html.j2", title="Login", message=message, forks=[], fork=None,
                                         page="", user=None, utc=str, age=str),
                        status=status, content_type="text/html")


__all__ = ["GitHubLogin", "install", "web_url_of", "READ_ROLES", "USER_KEY", "ALLOWED_KEY", "UNASKED_KEY"]
