"""Programmable faults: per-test queue of error answers matched by method and path.

A fault answers instead of the real handler (after contract validation, so a bad request is
still caught) ``times`` times, then is used up. Helpers build GitHub's real error shapes:

====================  ======  ==============================================================
helper                status  shape (source: docs.github.com "Rate limits for the REST API",
                              "Merge a pull request"; gidgethub's sansio mapping)
====================  ======  ==============================================================
rate_limited          429     ``retry-after`` header
secondary_limit       403     "You have exceeded a secondary rate limit…", ``retry-after``
primary_limit         403     ``x-ratelimit-remaining: 0`` and ``x-ratelimit-reset``
server_error          5xx     e.g. 502 "Server Error"
expired_token         401     "Bad credentials" (the token is also really expired in state)
not_mergeable         405     "Pull Request is not mergeable"
head_changed          409     "Head branch was modified. Review and try the merge again."
unprocessable         422     "Validation Failed" with ``errors``
====================  ======  ==============================================================

A hold (:meth:`Faults.hold`) is no answer but a pause: the matching request waits, before its
handler runs, until the test releases it — so two writers can be made to both look before either
writes, with no sleep and no timing.

``mergeable: null`` for the first N reads of a PR is state, not a fault:
:meth:`bot.fakegithub.server.FakeGitHub.mergeable_unknown`.
"""
from __future__ import annotations

import asyncio
import fnmatch
import time
from dataclasses import dataclass, field

from bot.fakegithub.routing import DOCS


@dataclass
class Fault:
    method: str | None           # "GET", … or None for any
    path: str                    # fnmatch pattern over the decoded path, e.g. "/repos/o/r/pulls/*"
    status: int
    body: dict
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1
    name: str = ""
    expire_tokens: bool = False
    fired: int = 0
    query: dict[str, str] | None = None     # only requests whose query holds these, e.g. {"page": "2"}

    def matches(self, method: str, path: str, query: dict | None = None) -> bool:
        return ((self.method is None or self.method == method.upper()) and fnmatch.fnmatchcase(path, self.path)
                and all((query or {}).get(k) == v for k, v in (self.query or {}).items()))


@dataclass
class FiredFault:
    name: str
    method: str
    path: str
    status: int


@dataclass
class Hold:
    """A pause of the next ``times`` requests matching ``method`` and ``path`` (see the module doc):
    ``reached`` is set when the first of them arrives, ``full`` when all ``times`` have,
    ``arrived`` counts them; each waits for :meth:`release`."""

    method: str | None
    path: str
    times: int = 1
    arrived: int = 0
    reached: asyncio.Event = field(default_factory=asyncio.Event)
    full: asyncio.Event = field(default_factory=asyncio.Event)
    released: asyncio.Event = field(default_factory=asyncio.Event)

    def matches(self, method: str, path: str) -> bool:
        return (self.method is None or self.method == method.upper()) and fnmatch.fnmatchcase(path, self.path)

    def release(self) -> None:
        self.released.set()


class Faults:
    def __init__(self):
        self.queue: list[Fault] = []
        self.fired: list[FiredFault] = []
        self.holds: list[Hold] = []

    def hold(self, method: str | None, path: str, *, times: int = 1) -> Hold:
        """Pause the next ``times`` requests matching ``method`` (None: any) and ``path`` (an
        fnmatch pattern over the decoded path) until the returned hold is released."""
        h = Hold(method.upper() if method else None, path, times)
        self.holds.append(h)
        return h

    async def wait_if_held(self, method: str, path: str) -> None:
        """Called by the server before a request's fault or handler: wait while a hold matches."""
        for h in self.holds:
            if h.matches(method, path):
                h.arrived += 1
                if h.arrived >= h.times:
                    self.holds.remove(h)
                    h.full.set()
                h.reached.set()
                await h.released.wait()
                return

    def take(self, method: str, path: str, query: dict | None = None) -> Fault | None:
        """The fault answering this request (``query``: its query parameters), used once more; None: none."""
        for f in self.queue:
            if f.matches(method, path, query):
                f.fired += 1
                if f.fired >= f.times:
                    self.queue.remove(f)
                self.fired.append(FiredFault(f.name, method.upper(), path, f.status))
                return f
        return None

    def pending(self) -> list[Fault]:
        return list(self.queue)

    def clear(self) -> None:
        self.queue.clear()
        for h in self.holds:
            h.release()
        self.holds.clear()

    def add(self, method: str | None, path: str, status: int, message: str, *, headers: dict | None = None,
            times: int = 1, name: str = "", errors: list | None = None, expire_tokens: bool = False,
            query: dict[str, str] | None = None) -> Fault:
        """Answer ``status`` with GitHub's error shape to the next ``times`` requests matching
        ``method`` (None: any) and ``path`` (fnmatch), and, given ``query``, only those whose query
        parameters hold it (a later page: ``{"page": "2"}``)."""
        body = {"message": message, "documentation_url": DOCS, "status": str(status)}
        if errors is not None:
            body["errors"] = errors
        f = Fault(method.upper() if method else None, path, status, body, dict(headers or {}), times,
                  name or f"{status}", expire_tokens, query=dict(query) if query else None)
        self.queue.append(f)
        return f

    # --- GitHub's real error answers -----------------------------------------------------------
    def rate_limited(self, path: str = "*", method: str | None = None, *, retry_after: int = 1, times: int = 1) -> Fault:
        return self.add(method, path, 429, "API rate limit exceeded", times=times, name="429",
                        headers={"retry-after": str(retry_after)})

    def secondary_limit(self, path: str = "*", method: str | None = None, *, retry_after: int | None = 1,
                        times: int = 1) -> Fault:
        headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
        return self.add(method, path, 403,
                        "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
                        "If you reach out to GitHub Support for help, please include the request ID.",
                        times=times, name="secondary-403", headers=headers)

    def primary_limit(self, path: str = "*", method: str | None = None, *, reset_in_s: int = 1,
                      reset_at: int | None = None, times: int = 1) -> Fault:
        reset = reset_at if reset_at is not None else int(time.time()) + reset_in_s
        return self.add(method, path, 403, "API rate limit exceeded for installation.", times=times,
                        name="primary-403", headers={"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "0",
                                                     "x-ratelimit-used": "5000", "x-ratelimit-reset": str(reset),
                                                     "x-ratelimit-resource": "core"})

    def server_error(self, path: str = "*", method: str | None = None, *, status: int = 502, times: int = 1) -> Fault:
        return self.add(method, path, status, "Server Error", times=times, name=f"{status}")

    def expired_token(self, path: str = "*", method: str | None = None, *, times: int = 1) -> Fault:
        """401 Bad credentials; every installation token in the fake expires with it, so a client
        that retries with the same token keeps failing and must fetch a new one."""
        return self.add(method, path, 401, "Bad credentials", times=times, name="expired-token",
                        expire_tokens=True)

    def not_mergeable(self, path: str = "*/merge", *, times: int = 1) -> Fault:
        return self.add("PUT", path, 405, "Pull Request is not mergeable", times=times, name="merge-405")

    def head_changed(self, path: str = "*/merge", *, times: int = 1) -> Fault:
        return self.add("PUT", path, 409, "Head branch was modified. Review and try the merge again.",
                        times=times, name="merge-409")

    def unprocessable(self, path: str = "*", method: str | None = None, *, message: str = "Validation Failed",
                      errors: list | None = None, times: int = 1) -> Fault:
        return self.add(method, path, 422, message, times=times, name="422",
                        errors=errors if errors is not None else [{"resource": "Issue", "code": "custom",
                                                                   "message": "injected by the fake"}])
