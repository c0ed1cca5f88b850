"""Authentication and repository access in the fake, as GitHub does it: App JWTs for ``/app…``,
installation tokens (expiring, optionally narrowed to repositories and permissions), personal
tokens, anonymous reads of public repositories."""
from __future__ import annotations

import jwt as pyjwt

from bot.fakegithub.routing import Ctx, GitHubError
from bot.fakegithub.state import App, Repo, State

APP_ONLY = frozenset({"apps/get-authenticated", "apps/create-installation-access-token", "apps/list-installations",
                      "apps/get-installation", "apps/get-repo-installation"})
#: Operations that take no credentials: the manifest code is the secret (GitHub ignores a token sent along).
NO_AUTH = frozenset({"apps/create-from-manifest"})


#: GitHub's words for any use of a suspended installation: minting its token, or a token minted before
SUSPENDED = "This installation has been suspended"


def authenticate(state: State, ctx: Ctx) -> None:
    """Set ``ctx.actor``/``token``/``installation``/``app_jwt`` from the Authorization header, or
    raise GitHub's 401."""
    header = ctx.request.headers.get("Authorization", "")
    scheme, _, cred = header.partition(" ")
    scheme, cred = scheme.lower(), cred.strip()
    app_only = ctx.operation in APP_ONLY
    if not header or ctx.operation in NO_AUTH:
        if app_only:
            raise GitHubError(401, "A JSON web token could not be decoded")
        return
    if scheme not in ("token", "bearer"):
        raise GitHubError(401, "Bad credentials")
    if cred.count(".") == 2 and not cred.startswith(("ghs_", "ghp_", "gho_")):
        ctx.app_jwt = True
        ctx.actor = None
        ctx.jwt_app = verify_jwt(state, cred)
        if not app_only and ctx.operation != "rate-limit/get":
            raise GitHubError(401, "Bad credentials")
        return
    if app_only:
        raise GitHubError(401, "A JSON web token could not be decoded")
    tok = state.tokens.get(cred)
    if tok is None or tok.expires_at <= state.now():
        raise GitHubError(401, "Bad credentials")
    ctx.token = tok
    if tok.installation_id is not None:
        ctx.installation = state.installations.get(tok.installation_id)
        if ctx.installation is not None and ctx.installation.suspended_at is not None:
            raise GitHubError(403, SUSPENDED)
        app = state.token_app(tok)
        ctx.actor = app.bot if app else None
    else:
        ctx.actor = tok.user


def verify_jwt(state: State, token: str) -> App:
    """Verify an App JWT (RS256 with the App's public key; ``iss``, ``iat``, ``exp`` required,
    60 s leeway, lifetime ≤ 10 min + skew as GitHub enforces)."""
    try:
        unverified = pyjwt.decode(token, options={"verify_signature": False})
        app = state.apps.get(int(unverified.get("iss")))
    except (pyjwt.PyJWTError, TypeError, ValueError):
        raise GitHubError(401, "A JSON web token could not be decoded") from None
    if app is None:
        raise GitHubError(401, "'Issuer' claim ('iss') must be an Integer")
    try:
        claims = pyjwt.decode(token, app.public_key_pem, algorithms=["RS256"], leeway=60,
                              options={"require": ["iat", "exp", "iss"]})
    except pyjwt.ExpiredSignatureError:
        raise GitHubError(401, "'Expiration time' claim ('exp') must be a numeric value representing the "
                               "future time at which the assertion expires") from None
    except pyjwt.PyJWTError:
        raise GitHubError(401, "A JSON web token could not be decoded") from None
    if claims["exp"] - claims["iat"] > 660:
        raise GitHubError(401, "'Expiration time' claim ('exp') is too far in the future")
    return app


def repo_for(state: State, ctx: Ctx, owner: str, name: str) -> Repo:
    """The repository named in the path, if the caller may see it (GitHub answers 404, not 403,
    for a repository outside the caller's reach)."""
    repo = state.repo(owner, name)
    if repo is None:
        raise GitHubError(404, "Not Found")
    if ctx.installation is not None:
        inst = ctx.installation
        scope = ctx.token.repository_ids if ctx.token else None
        if inst.account.login.lower() != repo.owner.login.lower() or (
                inst.repository_ids is not None and repo.id not in inst.repository_ids) or (
                scope is not None and repo.id not in scope):
            if repo.private or ctx.request.method != "GET":
                raise GitHubError(404, "Not Found")
    elif ctx.actor is not None:
        if repo.private and state.permission(repo, ctx.actor.login) == "none":
            raise GitHubError(404, "Not Found")
    elif repo.private or ctx.request.method != "GET":
        raise GitHubError(401 if ctx.request.method != "GET" else 404,
                          "Requires authentication" if ctx.request.method != "GET" else "Not Found")
    return repo


