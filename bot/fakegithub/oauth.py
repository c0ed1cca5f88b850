"""GitHub's OAuth web flow in the fake, for the dashboard's login (docs.github.com, "Authorizing
OAuth apps" / "Generating a user access token for a GitHub App"):

- ``GET /login/oauth/authorize?client_id&redirect_uri&state`` — GitHub asks the signed-in user to
  authorize; the fake's user is ``fake.oauth_user`` (set by a test) and it authorizes at once:
  302 to ``redirect_uri?code=…&state=…``. No user signed in: 401; an unknown client: 404.
- ``POST /login/oauth/access_token`` (form or JSON: ``client_id``, ``client_secret``, ``code``,
  ``redirect_uri``) — a code is single-use and lives 10 minutes; GitHub answers errors with 200
  and ``{"error": "bad_verification_code" | "incorrect_client_credentials" | "redirect_uri_mismatch"}``.
  JSON when ``Accept: application/json``, else form-encoded, as GitHub does.

These two paths are GitHub's web flow, outside the REST description the fake holds
(``spec/rest.json``), so they are not validated against it. ``GET /user``, which the dashboard
asks next with the user's token, is a REST operation (``users/get-authenticated``) served and
validated like every other one (:mod:`bot.fakegithub.routes_apps`).
"""
from __future__ import annotations

import secrets
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from aiohttp import web

if TYPE_CHECKING:
    from bot.fakegithub.server import FakeGitHub

CODE_TTL_S = 600.0
USER_TOKEN_TTL_S = 8 * 3600.0


def register(app: web.Application, fake: "FakeGitHub") -> None:
    codes: dict[str, tuple[str, str, str, float]] = {}      # code → (client_id, login, redirect_uri, expires)

    def client(client_id: str):
        return next((a for a in fake.state.apps.values() if a.client_id and a.client_id == client_id), None)

    async def authorize(req: web.Request) -> web.StreamResponse:
        q = req.query
        if client(q.get("client_id", "")) is None:
            return web.json_response({"message": "Not Found"}, status=404)
        if not fake.oauth_user:
            return web.json_response({"message": "no user is signed in to the local GitHub: set fake.oauth_user, "
                                                 'or POST /_fake/setup {"oauth_user": LOGIN}'}, status=401)
        code = secrets.token_hex(10)
        codes[code] = (q["client_id"], fake.oauth_user, q.get("redirect_uri", ""), fake.state.now() + CODE_TTL_S)
        sep = "&" if "?" in q.get("redirect_uri", "") else "?"
        raise web.HTTPFound(q.get("redirect_uri", "") + sep + urlencode({"code": code, "state": q.get("state", "")}))

    async def access_token(req: web.Request) -> web.Response:
        data = dict(await req.post()) if req.content_type != "application/json" else await req.json()
        app_ = client(str(data.get("client_id", "")))

        def answer(body: dict) -> web.Response:
            if "application/json" in req.headers.get("Accept", ""):
                return web.json_response(body)
            return web.Response(text=urlencode(body), content_type="application/x-www-form-urlencoded")
        if app_ is None or data.get("client_secret") != app_.client_secret:
            return answer({"error": "incorrect_client_credentials",
                           "error_description": "The client_id and/or client_secret passed are incorrect."})
        got = codes.pop(str(data.get("code", "")), None)
        if got is None or got[0] != app_.client_id or got[3] < fake.state.now():
            return answer({"error": "bad_verification_code", "error_description": "The code passed is incorrect or expired."})
        if data.get("redirect_uri") and data["redirect_uri"] != got[2]:
            return answer({"error": "redirect_uri_mismatch", "error_description": "The redirect_uri MUST match."})
        tok = fake.state.issue_token(user=fake.state.user(got[1]), ttl_s=USER_TOKEN_TTL_S, token="ghu_" + secrets.token_urlsafe(27))
        return answer({"access_token": tok.token, "token_type": "bearer", "scope": ""})

    app.router.add_get("/login/oauth/authorize", authorize)
    app.router.add_post("/login/oauth/access_token", access_token)
