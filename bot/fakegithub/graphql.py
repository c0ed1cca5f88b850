"""The one GraphQL mutation pair forksync needs from GitHub: ``markPullRequestReadyForReview``
and ``convertPullRequestToDraft`` (GitHub's REST API cannot change a PR's draft state; its
GraphQL API can — docs.github.com/graphql/reference/mutations). ``POST /graphql`` with
``{"query", "variables": {"id": <PR node id>}}``; the answer is GraphQL's shape: 200 with
``data`` or ``errors`` (a GraphQL error is not an HTTP error). Anything else is answered with a
GraphQL error naming what the fake does not serve.
"""
from __future__ import annotations

import base64
import json
import re

from bot.fakegithub.auth import authenticate, repo_for
from bot.fakegithub.events import pull_event
from bot.fakegithub.routing import Ctx, GitHubError

MUTATIONS = {"markPullRequestReadyForReview": False, "convertPullRequestToDraft": True}
_NAME = re.compile(r"\bmutation\b[^{]*\{\s*(\w+)\s*\(", re.S)


def _pull_of(state, node_id: str):
    try:
        raw = base64.b64decode(node_id + "=" * (-len(node_id) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return None, None
    m = re.fullmatch(r"0:PR(\d+)", raw)
    if not m:
        return None, None
    pid = int(m.group(1))
    for repo in state.repos_by_id.values():
        for p in repo.pulls.values():
            if p.id == pid:
                return repo, p
    return None, None


def _error(message: str, kind: str = "UNPROCESSABLE") -> dict:
    return {"data": None, "errors": [{"type": kind, "message": message}]}


async def serve(fake, request, body: bytes) -> tuple[int, dict]:
    """``(status, JSON body)`` for one GraphQL request to the fake."""
    ctx = Ctx(fake, request, "graphql", {}, dict(request.query), body)
    try:
        authenticate(fake.state, ctx)
    except GitHubError as e:
        return e.status, e.body()
    try:
        doc = json.loads(body or b"{}")
    except ValueError:
        return 400, {"message": "Problems parsing JSON"}
    m = _NAME.search(doc.get("query") or "")
    if not m or m.group(1) not in MUTATIONS:
        return 200, _error("the local GitHub serves only the mutations " + ", ".join(MUTATIONS), "NOT_SUPPORTED")
    draft = MUTATIONS[m.group(1)]
    node = (doc.get("variables") or {}).get("id") or ""
    repo, pull = _pull_of(fake.state, node)
    if pull is None:
        return 200, _error(f"Could not resolve to a node with the global id of '{node}'", "NOT_FOUND")
    try:
        ctx.repo = repo_for(fake.state, ctx, repo.owner.login, repo.name)
        ctx.require_permission("pull_requests")
        actor = ctx.require_actor()
    except GitHubError as e:
        return 200, _error(e.message, "FORBIDDEN")
    async with fake._lock:       # noqa: SLF001 - one state change at a time, as the REST handlers
        if repo.issues[pull.number].state != "open":
            return 200, _error("Pull request is closed")
        # a change is told as GitHub tells it (pull_request.converted_to_draft / ready_for_review,
        # held to spec/webhooks.json); asked for the state it has, GitHub changes nothing
        changed = pull.draft != draft
        pull.draft = draft
        if changed:
            pull_event(fake, repo, pull, "converted_to_draft" if draft else "ready_for_review", actor)
    return 200, {"data": {m.group(1): {"pullRequest": {"number": pull.number, "isDraft": pull.draft}}}}
