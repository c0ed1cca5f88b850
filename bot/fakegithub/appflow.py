"""The web half of GitHub's App manifest flow, as far as a program sees it (not REST; never
validated against the description).

On GitHub a person's browser POSTs a form with one field, ``manifest`` (the App's JSON), to
``/settings/apps/new`` (or ``/organizations/{org}/settings/apps/new``) with an optional
``?state=``; GitHub shows the App, the person clicks "Create GitHub App", and GitHub redirects to
the manifest's ``redirect_url`` with ``?code=…&state=…``. The code is exchanged within an hour by
``POST /app-manifests/{code}/conversions`` (:mod:`bot.fakegithub.routes_apps`).

The fake stands in for the person's click: the POST answers the 302 at once. The App is owned by
the organization named in the path, else by :attr:`FakeGitHub.web_user` (the signed-in user,
``octocat`` unless a test sets it). A manifest GitHub would refuse (not JSON, no ``url``, no
``redirect_url``, a ``hook_attributes`` without ``url``) answers 422 with the reason.
"""
from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING
from urllib.parse import urlencode, urlsplit

from aiohttp import web

from bot.fakegithub.state import ManifestCode

if TYPE_CHECKING:
    from bot.fakegithub.server import FakeGitHub


def manifest_problem(m) -> str:
    """Why GitHub would refuse manifest ``m`` (``""`` when it would not)."""
    if not isinstance(m, dict):
        return "the manifest must be a JSON object"
    if not m.get("url"):
        return "url is required"
    if not m.get("redirect_url"):
        return "redirect_url is required for the manifest flow"
    hook = m.get("hook_attributes")
    if hook is not None and (not isinstance(hook, dict) or (hook.get("active", True) and not hook.get("url"))):
        return "hook_attributes.url is required while the webhook is active"
    perms = m.get("default_permissions") or {}
    if not isinstance(perms, dict) or any(v not in ("read", "write") for v in perms.values()):
        return "default_permissions must map permission names to read or write"
    return ""


def register(app: web.Application, fake: "FakeGitHub") -> None:
    async def new_app(req: web.Request) -> web.Response:
        form = await req.post()
        raw = form.get("manifest")
        try:
            m = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            m = None
        problem = "the form has no manifest field" if raw is None else manifest_problem(m)
        if problem:
            return web.Response(status=422, text=f"Invalid GitHub App manifest: {problem}")
        org = req.match_info.get("org")
        owner = fake.state.user(org, "Organization") if org else fake.state.user(fake.web_user)
        code = secrets.token_hex(10)
        fake.state.manifest_codes[code] = ManifestCode(code, m, owner, fake.state.now())
        query = {"code": code}
        if req.query.get("state"):
            query["state"] = req.query["state"]
        target = m["redirect_url"]
        sep = "&" if urlsplit(target).query else "?"
        raise web.HTTPFound(target + sep + urlencode(query))

    app.router.add_post("/settings/apps/new", new_app)
    app.router.add_post("/organizations/{org}/settings/apps/new", new_app)
