"""Who is calling: the App itself, the account a user's token belongs to (``GET /user``),
installations, installation tokens, rate limit."""
from __future__ import annotations

from bot.fakegithub.auth import SUSPENDED
from bot.fakegithub.contract import fill
from bot.fakegithub.objects import iso
from bot.fakegithub.routing import Ctx, GitHubError, Reply, not_found, route

INSTALLATION_TOKEN_TTL_S = 3600.0


def _the_app(ctx: Ctx):
    app = ctx.jwt_app or next(iter(ctx.state.apps.values()), None)
    if app is None:
        raise GitHubError(401, "A JSON web token could not be decoded")
    return app


@route("apps/get-authenticated")
async def get_app(ctx: Ctx) -> Reply:
    return Reply(200, ctx.render.app(_the_app(ctx)))


@route("users/get-authenticated")
async def get_authenticated_user(ctx: Ctx) -> Reply:
    """The account of a personal (or OAuth user) token, in the ``private-user`` shape GitHub gives
    the account itself (``user_view_type: private``). An installation token acts for the App, not
    for a user: GitHub answers 403 "Resource not accessible by integration"; no token, 401."""
    if ctx.installation is not None:
        raise GitHubError(403, "Resource not accessible by integration")
    if ctx.token is None or ctx.token.user is None:
        raise GitHubError(401, "Requires authentication")
    u = ctx.token.user
    return Reply(200, fill("private-user", {**ctx.render.user(u), "name": u.name, "email": u.email,
                                            "user_view_type": "private"}))


@route("apps/list-installations")
async def list_installations(ctx: Ctx) -> Reply:
    """The description of this operation (@octokit/openapi 23.0.2) types ``account`` as
    ``allOf: [simple-user, enterprise]`` (inline), so each account also carries the enterprise
    fields (``name``, ``slug``, ``created_at``, ``updated_at``)."""
    app = _the_app(ctx)
    items = []
    for inst in ctx.state.installations.values():
        obj = ctx.render.installation(inst, app)
        acct = obj["account"]
        acct.update({"name": acct.get("name") or inst.account.login, "slug": inst.account.login.lower(),
                     "created_at": iso(inst.created_at), "updated_at": iso(inst.created_at)})
        obj["account"] = fill("enterprise", acct)
        items.append(obj)
    return ctx.page(items)


@route("apps/get-installation")
async def get_installation(ctx: Ctx) -> Reply:
    inst = ctx.state.installations.get(ctx.int_param("installation_id"))
    if inst is None:
        raise not_found()
    return Reply(200, ctx.render.installation(inst, _the_app(ctx)))


@route("apps/get-repo-installation")
async def get_repo_installation(ctx: Ctx) -> Reply:
    inst = ctx.state.installation_for(ctx.repo)
    if inst is None:
        raise not_found()
    return Reply(200, ctx.render.installation(inst, _the_app(ctx)))


@route("apps/create-installation-access-token")
async def create_token(ctx: Ctx) -> Reply:
    app = _the_app(ctx)
    inst = ctx.state.installations.get(ctx.int_param("installation_id"))
    if inst is None:
        raise not_found()
    if inst.suspended_at is not None:
        raise GitHubError(403, SUSPENDED)
    body = ctx.json() or {}
    perms = dict(inst.permissions)
    if body.get("permissions"):
        for k, v in body["permissions"].items():
            if k not in perms or (perms[k] == "read" and v == "write"):
                raise GitHubError(422, "The permissions requested are not granted to this installation.")
        perms = dict(body["permissions"])
    covered = [r for r in ctx.state.repos.values() if r.owner.login.lower() == inst.account.login.lower()
               and (inst.repository_ids is None or r.id in inst.repository_ids)]
    scope = None
    if body.get("repositories") or body.get("repository_ids"):
        names = {n.lower() for n in body.get("repositories") or []}
        ids = set(body.get("repository_ids") or [])
        chosen = [r for r in covered if r.name.lower() in names or r.id in ids]
        if len(chosen) != len(names) + len(ids - {r.id for r in chosen if r.name.lower() in names}):
            raise GitHubError(422, "There is at least one repository that does not exist or is not accessible "
                                   "to the parent installation.")
        scope = {r.id for r in chosen}
    ttl = getattr(ctx.fake, "token_ttl_s", INSTALLATION_TOKEN_TTL_S)
    tok = ctx.state.issue_token(installation_id=inst.id, ttl_s=ttl, app_id=ctx.jwt_app.id if ctx.jwt_app else None)
    tok.repository_ids, tok.permissions = scope, (perms if body.get("permissions") else None)
    out = {"token": tok.token, "expires_at": iso(tok.expires_at), "permissions": perms,
           "repository_selection": "all" if inst.repository_ids is None and scope is None else "selected"}
    if scope is not None:
        out["repositories"] = [ctx.render.repo(r) for r in covered if r.id in scope]
    del app
    return Reply(201, out)


@route("apps/list-repos-accessible-to-installation")
async def list_installation_repos(ctx: Ctx) -> Reply:
    if ctx.installation is None:
        raise GitHubError(403, "This endpoint requires an installation token")
    inst = ctx.installation
    repos = [r for r in ctx.state.repos.values() if r.owner.login.lower() == inst.account.login.lower()
             and (inst.repository_ids is None or r.id in inst.repository_ids)]
    page = ctx.page([ctx.render.repo(r) for r in repos])
    page.data = {"total_count": len(repos), "repositories": page.data,
                 "repository_selection": "all" if inst.repository_ids is None else "selected"}
    return page


@route("rate-limit/get")
async def rate_limit(ctx: Ctx) -> Reply:
    key = ctx.token.token if ctx.token else ("app" if ctx.app_jwt else "anonymous")
    h = ctx.fake.limits.headers(key, ctx.state.now())          # GET /rate_limit itself is free
    core = {"limit": int(h["x-ratelimit-limit"]), "remaining": int(h["x-ratelimit-remaining"]),
            "reset": int(h["x-ratelimit-reset"]), "used": int(h["x-ratelimit-used"])}
    return Reply(200, {"resources": {"core": core, "search": dict(core, limit=30, remaining=30, used=0),
                                     "graphql": dict(core)}, "rate": core})


MANIFEST_CODE_TTL_S = 3600.0


@route("apps/create-from-manifest")
async def create_from_manifest(ctx: Ctx) -> Reply:
    """Exchange a manifest flow's code (:mod:`bot.fakegithub.appflow`) for the new App: its id,
    slug, private key (``pem``), ``webhook_secret`` and OAuth ``client_id``/``client_secret``.
    A code is good once and for an hour (GitHub's docs); otherwise 404. The fake's webhooks are
    then signed with the App's secret and, when its hook URL is on this machine, sent there (the
    fake models one App's deliveries and never sends beyond loopback)."""
    import re
    import secrets

    from bot.fakegithub.server import generate_app_key
    from bot.fakegithub.state import App

    entry = ctx.state.manifest_codes.get(ctx.params.get("code", ""))
    if entry is None or entry.used or ctx.state.now() - entry.created_at > MANIFEST_CODE_TTL_S:
        raise not_found()
    entry.used = True
    m = entry.manifest
    slug = re.sub(r"[^a-z0-9]+", "-", str(m.get("name") or "app").lower()).strip("-") or "app"
    if any(a.slug == slug for a in ctx.state.apps.values()):
        raise GitHubError(422, "Validation Failed", errors=[{"resource": "Integration", "field": "name",
                                                             "code": "already_exists"}])
    priv, pub = generate_app_key()
    hook = m.get("hook_attributes") or {}
    a = App(ctx.state.new_id(), slug, str(m.get("name") or slug), entry.owner, priv, pub,
            ctx.state.user(f"{slug}[bot]", "Bot"), secrets.token_hex(20),
            permissions={"metadata": "read", **dict(m.get("default_permissions") or {})},
            events=list(m.get("default_events") or []),
            client_id="Iv23li" + secrets.token_hex(7), client_secret=secrets.token_hex(20))
    ctx.state.apps[a.id] = a
    if hook.get("url") and hook.get("active", True):
        # the fake only ever delivers on this machine: a public hook URL keeps its current target
        from urllib.parse import urlsplit

        if urlsplit(hook["url"]).hostname in ("127.0.0.1", "localhost", "::1"):
            ctx.fake.webhooks.url = hook["url"]
        ctx.fake.webhooks.secret = a.webhook_secret
    out = ctx.render.app(a)
    out.update({"description": m.get("description"), "external_url": m.get("url"), "client_id": a.client_id,
                "client_secret": a.client_secret, "webhook_secret": a.webhook_secret, "pem": a.private_key_pem})
    return Reply(201, out)
