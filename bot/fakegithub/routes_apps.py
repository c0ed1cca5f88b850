"""App authentication routes: the App itself, installations, installation tokens, rate limit."""
from __future__ import annotations

from bot.fakegithub.objects import iso
from bot.fakegithub.routing import Ctx, GitHubError, Reply, not_found, route

INSTALLATION_TOKEN_TTL_S = 3600.0


def _the_app(ctx: Ctx):
    app = next(iter(ctx.state.apps.values()), None)
    if app is None:
        raise GitHubError(401, "A JSON web token could not be decoded")
    return app


@route("apps/get-authenticated")
async def get_app(ctx: Ctx) -> Reply:
    return Reply(200, ctx.render.app(_the_app(ctx)))


@route("apps/list-installations")
async def list_installations(ctx: Ctx) -> Reply:
    """The description of this operation (@octokit/openapi 23.0.2) types ``account`` as
    ``allOf: [simple-user, enterprise]`` (inline), so each account also carries the enterprise
    fields (``name``, ``slug``, ``created_at``, ``updated_at``)."""
    from bot.fakegithub.contract import fill
    from bot.fakegithub.objects import iso

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
    tok = ctx.state.issue_token(installation_id=inst.id, ttl_s=ttl)
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
