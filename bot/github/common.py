"""Helpers shared by the handlers: templates, payload models, idempotent comments, permissions.

Idempotency (why a redelivery or a crash never doubles a comment): every comment the bot writes
starts with a hidden marker ``<!-- forksync:<key> -->``; :func:`comment_once` lists the issue's
comments and only posts when no comment carries the marker yet (updating it instead when asked);
a post whose answer GitHub lost (5xx) is looked up by its marker before it is sent again
(:meth:`bot.github.client.GitHubClient.create`).
"""
from __future__ import annotations

import hashlib
from typing import Any

import gidgethub
from pydantic import BaseModel, ConfigDict

from bot import templating
from bot.github.claims import client_claim
from bot.github.limits import fit_body
from bot.github.sections import kept_current

#: collaborator permission levels that may run commands (``role_name`` ``maintain`` maps to write).
WRITE_LEVELS = frozenset({"admin", "write", "maintain"})


def render(name: str, **context: Any) -> str:
    """Render ``templates/github/<name>``; a missing field raises ``jinja2.UndefinedError``."""
    return templating.render(f"github/{name}", **context)


def marker(key: str) -> str:
    return f"<!-- forksync:{key} -->"


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class Account(_Loose):
    login: str
    type: str = "User"


class RepoRef(_Loose):
    full_name: str
    default_branch: str = "main"

    @property
    def owner(self) -> str:
        return self.full_name.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.full_name.split("/", 1)[1] if "/" in self.full_name else ""


class Numbered(_Loose):
    """What a handler reads of a payload's ``issue`` (or of a ``pull_request`` it only names): the
    rest goes on as GitHub sent it (:func:`payload_object`)."""
    number: int


class BranchRef(_Loose):
    ref: str
    sha: str


class PullRef(Numbered):
    """What the pull request handlers and the services they call read of a payload's
    ``pull_request`` (its number, its head's branch and sha), checked before any of them acts."""
    head: BranchRef


class ReviewRef(_Loose):
    """A ``pull_request_review`` payload's ``review``; ``body`` and ``user`` null as GitHub's
    schema allows (an empty review, a deleted account)."""
    id: int
    body: str | None = ""
    user: Account | None = None
    html_url: str | None = ""
    submitted_at: str | None = ""


class CheckRunRef(_Loose):
    name: str
    head_sha: str


class PayloadError(ValueError):
    """A payload lacks what a handler needs (raised by handlers; becomes a dead-letter reason)."""


#: What a payload field should be, by pydantic's error type (pydantic.dev/errors/validation_errors),
#: in JSON's words: pydantic's own messages name Python types and the model's class
#: ("a valid dictionary or instance of _Comment").
_SHOULD_BE = {
    "missing": "field required",
    "model_type": "should be an object", "dict_type": "should be an object",
    "model_attributes_type": "should be an object",
    "int_type": "should be an integer", "int_parsing": "should be an integer",
    "int_from_float": "should be an integer",
    "float_type": "should be a number", "float_parsing": "should be a number",
    "string_type": "should be a string", "bool_type": "should be true or false",
    "bool_parsing": "should be true or false", "list_type": "should be an array",
}


def payload_path(parts) -> str:
    """Pure: a payload path as docs and GitHub's webhook reference write it: keys joined by dots,
    list positions in brackets (``("repositories_added", 0, "full_name")`` →
    ``repositories_added[0].full_name``)."""
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def describe_invalid(e, at: tuple = ()) -> str:
    """Pure: pydantic's ``ValidationError`` ``e`` for a model read at payload path ``at`` as one
    line, each wrong field by its payload path and what it should be
    (``comment.id: field required; comment.body: should be a string``). Never the field's value
    (a payload carries people's text), the model's class name nor pydantic's URL."""
    lines = []
    for err in e.errors(include_url=False, include_input=False):
        what = _SHOULD_BE.get(err["type"]) or err["msg"].replace("Input should be", "should be")
        lines.append(f"{payload_path((*at, *err['loc'])) or 'the payload'}: {what}")
    return "; ".join(dict.fromkeys(lines))


def from_payload(model, data: Any, *path: str):
    """``model`` (a pydantic model class) read from ``data`` at payload path ``path`` (keys, e.g.
    ``"comment"``). Raises :class:`PayloadError` naming each wrong field by its payload path
    (``comment.id: field required``; :func:`describe_invalid`), so a dead letter says which field
    of the event GitHub sent was missing or wrong."""
    from pydantic import ValidationError

    cur = _at(data, path)
    try:
        return model.model_validate(cur)
    except ValidationError as e:
        raise PayloadError(describe_invalid(e, tuple(path))) from None


def payload_object(data: Any, *path: str, needs=None) -> dict:
    """The JSON object at payload path ``path`` of ``data``, as GitHub sent it (for the code that
    reads it on), checked to be one and, with ``needs`` (a pydantic model class), to hold that
    model's fields (:func:`from_payload`). Raises :class:`PayloadError` naming the wrong field by
    its payload path (``pull_request: field required``, ``pull_request.head: field required``),
    never a ``KeyError`` of the code that would have read it later."""
    cur = _at(data, path)
    if not isinstance(cur, dict):
        raise PayloadError(f"{payload_path(path) or 'the payload'}: should be an object")
    if needs is not None:
        from_payload(needs, data, *path)
    return cur


def _at(data: Any, path: tuple) -> Any:
    """The value at payload path ``path`` of ``data``; :class:`PayloadError` naming the first key
    missing, or the first value on the way that is no object."""
    cur = data
    for i, key in enumerate(path):
        if not isinstance(cur, dict):
            raise PayloadError(f"{payload_path(path[:i]) or 'the payload'}: should be an object")
        if key not in cur:
            raise PayloadError(f"{payload_path(path[:i + 1])}: field required")
        cur = cur[key]
    return cur


def is_permanent(e: BaseException) -> bool:
    """Would a retry of the same work fail the same way? GitHub's 4xx other than 401/403/409/429
    (401/403: a token or grant that can be fixed; 409: a conflict that moves; 429: a rate limit),
    a malformed payload (pydantic ``ValidationError``, :class:`PayloadError`, or a
    ``KeyError``/``TypeError``/``AttributeError`` raised while reading it). The dispatcher
    dead-letters these at once and retries the rest."""
    from pydantic import ValidationError

    if isinstance(e, gidgethub.HTTPException):
        status = int(getattr(e, "status_code", 0) or 0)
        return 400 <= status < 500 and status not in (401, 403, 409, 429)
    return isinstance(e, (ValidationError, PayloadError, KeyError, TypeError, AttributeError))


def error_to_raise(errors: list[BaseException]) -> BaseException | None:
    """Of the errors of several independent parts of one delivery (repositories, forks), the one
    to re-raise: the first a retry may fix, else the first. A permanent error raised first would
    dead-letter the delivery at once, and the parts that failed for a passing reason (a 5xx) would
    never be tried again."""
    return next((e for e in errors if not is_permanent(e)), errors[0] if errors else None)


def split_repo(full_name: str) -> dict[str, str]:
    owner, _, repo = full_name.partition("/")
    if not owner or not repo:
        raise PayloadError(f"repository.full_name {full_name!r} is not 'owner/name'")
    return {"owner": owner, "repo": repo}


async def base_branch(gh, full: str, ref: str) -> dict:
    """The base branch (``repos/get-branch``): ``commit.sha`` is its tip, ``protection`` its rules."""
    return await gh.getitem("/repos/{owner}/{repo}/branches/{branch}", {**split_repo(full), "branch": ref})


async def base_tip(gh, full: str, ref: str) -> str:
    """The sha branch ``ref`` is at now (:func:`base_branch`)."""
    return (await base_branch(gh, full, ref))["commit"]["sha"]


async def head_contains(gh, full: str, base: str, head: str) -> bool:
    """True when ``base`` is an ancestor of ``head`` (``repos/compare-commits``: nothing behind)."""
    if base == head:
        return True
    cmp = await gh.getitem("/repos/{owner}/{repo}/compare/{basehead}", {**split_repo(full), "basehead": f"{base}...{head}"})
    return int(cmp.get("behind_by", 1)) == 0


async def comment_once(gh, full_name: str, number: int, key: str, body: str, *, update: bool = False) -> str:
    """Post ``body`` (which must start with ``marker(key)``) on issue/PR ``number`` unless a
    comment with that marker exists (the oldest such is the one updated). Returns ``"created"``,
    ``"updated"`` or ``"exists"``. Looked up and posted under the claim on the comments of
    ``number`` (:func:`comments_claim`) of the claims ``gh`` carries
    (:attr:`bot.github.client.GitHubClient.claims`: the worker process's), so two writers at once —
    a landing's delivery and the poller's sync, two workers — never both find none and both post;
    a client without claims (None: the only writer of its markers) looks up and posts unclaimed.
    Raises :class:`bot.github.claims.ClaimOrderError` when called under another object's claim."""
    async with client_claim(gh, full_name, comments_claim(number)):
        return await _comment_once(gh, full_name, number, key, body, update=update)


def comments_claim(number: int) -> str:
    """Pure: the key of the claim on the comments of issue/PR ``number`` (:mod:`bot.github.claims`)."""
    return f"comments-{int(number)}"


async def _comment_once(gh, full_name: str, number: int, key: str, body: str, *, update: bool) -> str:
    mark = marker(key)
    if not body.startswith(mark):
        body = mark + "\n" + body
    body = fit_body(body)       # as GitHub will hold it (bot.github.limits): compared as such below
    rv = split_repo(full_name)

    async def marked() -> dict | None:
        async for c in gh.getiter("/repos/{owner}/{repo}/issues/{number}/comments", {**rv, "number": number}):
            if mark in (c.get("body") or ""):
                return c
        return None

    c = await marked()
    if c is not None:
        if update and c.get("body") != body:
            await gh.patch("/repos/{owner}/{repo}/issues/comments/{id}", {**rv, "id": c["id"]},
                           data={"body": body})
            return "updated"
        return "exists"
    await gh.create("/repos/{owner}/{repo}/issues/{number}/comments", {**rv, "number": number}, data={"body": body},
                    find=marked)
    return "created"


async def permission(gh, full_name: str, login: str) -> str:
    """The collaborator permission of ``login`` on the repo (``admin|write|read|none``; a
    ``maintain`` role reports ``maintain``). 404 (not a collaborator) → ``none``."""
    try:
        data = await gh.getitem("/repos/{owner}/{repo}/collaborators/{username}/permission",
                                {**split_repo(full_name), "username": login})
    except gidgethub.HTTPException as e:
        if int(e.status_code) == 404:
            return "none"
        raise
    role = data.get("role_name")
    return "maintain" if role == "maintain" else str(data.get("permission") or "none")


async def react(gh, full_name: str, comment_id: int, content: str) -> None:
    """Add a reaction to an issue comment (GitHub answers 200 when it already exists)."""
    await gh.post("/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
                  {**split_repo(full_name), "comment_id": comment_id}, data={"content": content})


async def _open_issue(gh, full: str, title: str) -> dict | None:
    """The open issue (not a pull request) titled ``title``, as GitHub lists it; None when none is."""
    async for it in gh.getiter("/repos/{owner}/{repo}/issues{?state}", {**split_repo(full), "state": "open"}):
        if it.get("title") == title and "pull_request" not in it:
            return it
    return None


async def _open_issue_titled(gh, full: str, title: str) -> int | None:
    it = await _open_issue(gh, full, title)
    return int(it["number"]) if it else None


async def issue_once(gh, full: str, title: str, body: str) -> int:
    """Open an issue titled ``title`` unless an open one exists; returns its number. Looked up and
    opened under the claim on issues of that title (:func:`issue_claim`) of the claims ``gh``
    carries, as :func:`comment_once` posts, so two writers at once — the schedule tick beside a
    delivery, two workers — never both find none and both open one; a client without claims
    looks up and opens unclaimed. Raises :class:`bot.github.claims.ClaimOrderError` when called
    under another object's claim."""
    async with client_claim(gh, full, issue_claim(title)):
        return await _issue_once(gh, full, title, body)


def issue_claim(title: str) -> str:
    """Pure: the key of the claim on the open issue titled ``title`` (:mod:`bot.github.claims`):
    ``issue-`` and 16 hex digits of the title's SHA-256 — a title runs to 256 characters of any
    kind, longer than a lock file's name may be."""
    return "issue-" + hashlib.sha256(title.encode()).hexdigest()[:16]


async def _issue_once(gh, full: str, title: str, body: str) -> int:
    found = await _open_issue_titled(gh, full, title)
    if found:
        return found

    async def opened() -> dict | None:
        number = await _open_issue_titled(gh, full, title)
        return {"number": number} if number else None

    it = await gh.create("/repos/{owner}/{repo}/issues", split_repo(full), data={"title": title, "body": body},
                         find=opened)
    return int(it["number"])


async def issue_current(gh, full: str, title: str, section: str, text: str) -> tuple[int, str]:
    """Keep the open issue titled ``title`` showing ``text`` (markdown) in forksync's section
    ``section`` (:func:`bot.github.sections.kept_current`): open one when none is open, else
    rewrite that section of the open one, what a person wrote outside it kept — never a second
    issue, two writers at once included (under the claim of :func:`issue_once`). Returns
    ``(number, "opened" | "updated" | "unchanged")``. Raises
    :class:`bot.github.claims.ClaimOrderError` when called under another object's claim."""
    async with client_claim(gh, full, issue_claim(title)):
        it = await _open_issue(gh, full, title)
        if it is None:
            return await _issue_once(gh, full, title, kept_current("", section, text)), "opened"
        body = kept_current(it.get("body") or "", section, text)
        if body == (it.get("body") or ""):
            return int(it["number"]), "unchanged"
        await gh.patch("/repos/{owner}/{repo}/issues/{number}", {**split_repo(full), "number": it["number"]},
                       data={"body": body})
        return int(it["number"]), "updated"
