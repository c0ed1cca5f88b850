"""Shared pieces of the fake's route handlers: the operation registry, the request context and
GitHub-shaped errors.

A handler is ``async def h(ctx: Ctx) -> Reply`` registered with ``@route("pulls/get")`` under
GitHub's operationId; the server builds its URL table from the OpenAPI description, so a handler
can only exist for an operation GitHub documents.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable

if TYPE_CHECKING:
    from aiohttp import web

    from bot.fakegithub.server import FakeGitHub
    from bot.fakegithub.state import App, Installation, Repo, Token, User

HANDLERS: dict[str, Callable[["Ctx"], Awaitable["Reply"]]] = {}
DOCS = "https://docs.github.com/rest"


def route(operation_id: str):
    def deco(fn):
        if operation_id in HANDLERS:
            raise RuntimeError(f"two handlers for {operation_id}")
        HANDLERS[operation_id] = fn
        return fn
    return deco


class GitHubError(Exception):
    """An error answer in GitHub's shape: ``{"message", "documentation_url", "status"[, "errors"]}``."""

    def __init__(self, status: int, message: str, *, errors: list | None = None, headers: dict | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors
        self.headers = headers or {}

    def body(self) -> dict:
        out: dict[str, Any] = {"message": self.message, "documentation_url": DOCS, "status": str(self.status)}
        if self.errors is not None:
            out["errors"] = self.errors
        return out


def not_found() -> GitHubError:
    return GitHubError(404, "Not Found")


@dataclass
class Reply:
    status: int = 200
    data: Any = None                 # JSON-serialisable, or None for an empty body
    raw: bytes | None = None         # a non-JSON body (artifact zip)
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    schema: str | None = None        # validate against this component instead of the operation's

    def body(self) -> bytes:
        if self.raw is not None:
            return self.raw
        if self.data is None:
            return b""
        return json.dumps(self.data).encode()


@dataclass
class Ctx:
    fake: "FakeGitHub"
    request: "web.Request"
    operation: str
    params: dict[str, str]
    query: dict[str, str]
    body_bytes: bytes
    actor: "User | None" = None                  # who acts: the App's bot user or the token's user
    token: "Token | None" = None
    installation: "Installation | None" = None
    app_jwt: bool = False                        # authenticated as the App (JWT)
    jwt_app: "App | None" = None                 # the App whose JWT authenticated the call
    repo: "Repo | None" = None

    @property
    def state(self):
        return self.fake.state

    @property
    def render(self):
        return self.fake.render

    def json(self) -> Any:
        if not self.body_bytes:
            return {}
        try:
            return json.loads(self.body_bytes)
        except ValueError:
            raise GitHubError(400, "Problems parsing JSON") from None

    def int_param(self, name: str) -> int:
        try:
            return int(self.params[name])
        except (KeyError, ValueError):
            raise not_found() from None

    def page(self, items: list, default_per_page: int = 30) -> Reply:
        """One page of ``items`` with a ``Link`` header (``rel="next"``/``"last"``) like GitHub's."""
        per_page = min(100, int(self.query.get("per_page", default_per_page) or default_per_page))
        page = max(1, int(self.query.get("page", 1) or 1))
        chunk = items[(page - 1) * per_page: page * per_page]
        headers = {}
        last = max(1, -(-len(items) // per_page))
        if page < last:
            base = str(self.request.url.with_query({**self.query, "per_page": per_page}))
            nxt = str(self.request.url.with_query({**self.query, "per_page": per_page, "page": page + 1}))
            lst = str(self.request.url.with_query({**self.query, "per_page": per_page, "page": last}))
            headers["Link"] = f'<{nxt}>; rel="next", <{lst}>; rel="last"'
            del base
        return Reply(200, chunk, headers=headers)

    def require_actor(self) -> "User":
        if self.actor is None:
            raise GitHubError(401, "Requires authentication")
        return self.actor

    def require_permission(self, area: str, level: str = "write") -> None:
        """Installation tokens need the App permission ``area`` (contents, issues, …) at ``level``;
        personal tokens need that repository permission. Raises 403 like GitHub."""
        from bot.fakegithub.state import PERMISSION_ORDER

        if self.installation is not None:
            granted = (self.token.permissions if self.token and self.token.permissions is not None
                       else self.installation.permissions)
            have = granted.get(area, "none")
            if have == "write" or (level == "read" and have == "read"):
                return
            raise GitHubError(403, "Resource not accessible by integration")
        actor = self.require_actor()
        if self.repo is not None:
            perm = self.state.permission(self.repo, actor.login)
            need = "write" if level == "write" else "read"
            if PERMISSION_ORDER.index(perm) < PERMISSION_ORDER.index(need):
                raise GitHubError(403 if perm != "none" else 404,
                                  "Must have push access to repository" if perm != "none" else "Not Found")
