"""The fake's own control endpoints under ``/_fake/`` (not GitHub's API; never validated against
the description). They let a test or ``forksync demo`` drive a fake running in another process:

- ``GET  /_fake/info``        → ``{url, app_id, app_slug, private_key_pem, installations, repos}``
- ``POST /_fake/setup``       ← ``{app?: {...}, users?: [...], repos?: [{full_name, source?, …}],
                                  installations?: [{account, repos?: [...]}],
                                  collaborators?: [{repo, login, permission}], tokens?: [{token, login}],
                                  webhook?: {url, secret}, oauth_user?: login}``
                                  (``oauth_user``: who is signed in when the dashboard's sign-in
                                  goes through ``/login/oauth/authorize``)
- ``POST /_fake/faults``      ← ``{kind: "rate_limited"|…, path, method?, times?, …}``
- ``POST /_fake/refresh``     notice git pushes now (emit their events)
- ``GET  /_fake/violations``  → ``[str, …]``
- ``GET  /_fake/deliveries``  → ``[{guid, event, action, statuses}]``
- ``GET  /_fake/artifacts/<id>.zip`` the artifact bytes (where download-artifact redirects)
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from bot.fakegithub.server import FakeGitHub


def register(app: web.Application, fake: "FakeGitHub") -> None:
    async def info(_req):
        a = next(iter(fake.state.apps.values()), None)
        return web.json_response({
            "url": fake.url, "app_id": a.id if a else None, "app_slug": a.slug if a else None,
            "private_key_pem": a.private_key_pem if a else None,
            "installations": [{"id": i.id, "account": i.account.login} for i in fake.state.installations.values()],
            "repos": [{"full_name": r.full_name, "path": str(r.path)} for r in fake.state.repos.values()]})

    async def setup(req):
        spec = await req.json()
        try:
            apply_setup(fake, spec)
        except (ValueError, KeyError, RuntimeError) as e:
            return web.json_response({"error": f"{type(e).__name__}: {e}"}, status=400)
        return await info(req)

    async def faults(req):
        spec = await req.json()
        kind = spec.pop("kind")
        getattr(fake.faults, kind)(**spec)
        return web.json_response({"queued": len(fake.faults.queue)})

    async def refresh(_req):
        await fake.refresh()
        return web.json_response({"ok": True})

    async def violations(_req):
        return web.json_response([str(v) for v in fake.violations])

    async def deliveries(_req):
        return web.json_response([{"guid": d.guid, "event": d.event, "action": d.action, "statuses": d.statuses}
                                  for d in fake.webhooks.deliveries])

    async def artifact(req):
        aid = int(req.match_info["id"])
        for r in fake.state.repos.values():
            for w in r.workflow_runs.values():
                for a in w.artifacts:
                    if a.id == aid:
                        return web.Response(body=a.data, content_type="application/zip")
        return web.json_response({"message": "Not Found"}, status=404)

    app.router.add_get("/_fake/info", info)
    app.router.add_post("/_fake/setup", setup)
    app.router.add_post("/_fake/faults", faults)
    app.router.add_post("/_fake/refresh", refresh)
    app.router.add_get("/_fake/violations", violations)
    app.router.add_get("/_fake/deliveries", deliveries)
    app.router.add_get(r"/_fake/artifacts/{id:\d+}.zip", artifact)


def apply_setup(fake: "FakeGitHub", spec: dict) -> None:
    if "app" in spec or not fake.state.apps:
        fake.create_app(**(spec.get("app") or {}))
    for u in spec.get("users", []):
        fake.create_user(**u) if isinstance(u, dict) else fake.create_user(u)
    for r in spec.get("repos", []):
        r = dict(r)
        fork_of = r.pop("fork_of", None)
        fake.create_repo(r.pop("full_name"), fork_of=fake.state.repo(*fork_of.split("/")) if fork_of else None, **r)
    for i in spec.get("installations", []):
        repos = i.get("repos")
        fake.install(i["account"], repos=[fake.state.repo(*n.split("/")) for n in repos] if repos is not None else None,
                     installation_id=i.get("id"))
    for c in spec.get("collaborators", []):
        fake.add_collaborator(fake.state.repo(*c["repo"].split("/")), c["login"], c.get("permission", "write"))
    for t in spec.get("tokens", []):
        fake.add_token(t["token"], t["login"])
    if spec.get("oauth_user"):
        fake.oauth_user = spec["oauth_user"]
    if spec.get("webhook"):
        fake.webhooks.url = spec["webhook"].get("url")
        fake.webhooks.secret = spec["webhook"].get("secret", fake.webhooks.secret)
