"""GitHub access for forksync: a gidgethub aiohttp client with the parts Probot would give.

- :class:`GitHubClient` (a ``gidgethub.aiohttp.GitHubAPI``): pins ``X-GitHub-Api-Version:
  2022-11-28`` on every request; retries in a tenacity loop around gidgethub's request with the
  waits of :func:`retry_delay` (GitHub's "Rate limits for the REST API" and "Best
  practices" pages: honour ``retry-after``; at ``x-ratelimit-remaining: 0`` wait for
  ``x-ratelimit-reset``; a secondary limit without headers waits ≥ 60 s; 5xx backs off
  exponentially; everything capped); a create whose 5xx answer may hide a made object is looked
  up before it is sent again (:meth:`GitHubClient.create`); re-sends with a fresh installation token after a 401;
  retries connection errors; gives up with a :class:`GitHubAPIError` that says what failed and
  what to do.
- :class:`InstallationTokens`: App JWT (RS256, gidgethub) → installation access token, cached per
  installation until ``refresh_margin_s`` before ``expires_at``; invalidated on 401.
- :class:`GitHubApp`: one client per installation, each with its own ETag cache (gidgethub keys
  its cache by URL only, so sharing one across installations could serve one installation's data
  to another; github-platform notes §1.6), plus the App-level (JWT) client.
- :func:`token_client`: plain token mode (a personal or fine-grained token) for small setups.

Point any of them at the local GitHub with ``base_url=fake.url`` (docs/github.md).
Secrets (tokens, keys, JWTs) are never logged or put into error messages.
"""
from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Awaitable, Callable
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import gidgethub
import gidgethub.aiohttp
import gidgethub.sansio
import tenacity
from cachetools import LRUCache  # gidgethub's ETag cache, one per installation (oldest entry dropped first)
from gidgethub import apps as gh_apps

from bot.github import limits
from bot.github.claims import Claims

log = logging.getLogger("forksync.github")

API_VERSION = "2022-11-28"
DEFAULT_BASE_URL = "https://api.github.com"


# --- retry policy (pure) -----------------------------------------------------------------------

@dataclass(frozen=True)
class RetryPolicy:
    """How failed requests are retried. Delays are seconds.

    ``max_attempts`` counts the first try. ``base_delay_s * 2**(attempt-1)`` (capped at
    ``max_delay_s``) is the 5xx / connection-error backoff. A secondary rate limit without
    ``retry-after`` waits at least ``secondary_min_wait_s`` (GitHub: "wait at least one minute").
    A server-requested wait longer than ``max_wait_s`` is not slept: the call fails at once so the
    caller can reschedule instead of blocking a worker for an hour."""

    max_attempts: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    secondary_min_wait_s: float = 60.0
    max_wait_s: float = 900.0
    # pacing, to stay clear of secondary limits (GitHub's REST best practices: "make requests
    # serially instead of concurrently"; "wait at least one second between each request" that
    # creates or changes content)
    max_concurrency: int = 1
    write_interval_s: float = 1.0


def _header(headers, name: str) -> str | None:
    if headers is None:
        return None
    try:
        return headers.get(name) or headers.get(name.lower()) or headers.get(name.title())
    except AttributeError:
        return None


def retry_delay(status: int, headers, message: str | None, attempt: int, policy: RetryPolicy,
                now: float) -> float | None:
    """Seconds to wait before retrying a failed request, or None when it must not be retried.

    ``status``: the HTTP status; ``headers``: the response headers (case-insensitive mapping);
    ``attempt``: 1-based attempts made so far; ``now``: epoch seconds (for ``x-ratelimit-reset``).

    Rules (docs.github.com, "Rate limits for the REST API" → "Exceeding the rate limit"):
    1. 403/429 with ``retry-after`` → that many seconds;
    2. 403/429 with ``x-ratelimit-remaining: 0`` → until ``x-ratelimit-reset`` (+1 s);
    3. 403 whose message names a secondary rate limit, or a bare 429 → exponential backoff, at
       least ``secondary_min_wait_s``;
    4. 5xx → ``retry-after`` if given, else exponential backoff;
    5. anything else (400, 401, other 403s, 404, 405, 409, 410, 422, …) → None.
    Waits above ``max_wait_s`` and attempts at ``max_attempts`` → None."""
    if attempt >= policy.max_attempts:
        return None
    backoff = min(policy.max_delay_s, policy.base_delay_s * 2 ** (attempt - 1))
    retry_after = _header(headers, "retry-after")
    delay: float | None = None
    if status in (403, 429) or status >= 500:
        if retry_after is not None:
            try:
                delay = max(0.0, float(retry_after))
            except ValueError:
                try:
                    delay = max(0.0, datetime.strptime(retry_after, "%a, %d %b %Y %H:%M:%S GMT").timestamp() - now)
                except ValueError:
                    delay = None
    if delay is None and status in (403, 429):
        remaining = _header(headers, "x-ratelimit-remaining")
        reset = _header(headers, "x-ratelimit-reset")
        if remaining == "0" and reset is not None:
            try:
                delay = max(0.0, float(reset) - now) + 1.0
            except ValueError:
                delay = None
        elif status == 429 or "secondary rate limit" in (message or "").lower():
            delay = max(policy.secondary_min_wait_s, backoff)
    if delay is None and status >= 500:
        delay = backoff
    if delay is None or delay > policy.max_wait_s:
        return None
    return delay


# --- errors ------------------------------------------------------------------------------------

_HINTS = {
    401: "the credentials were refused: check the App id and private key (or the token) and that the "
         "App is still installed",
    403: "the App or token lacks a permission for this call (see the App's permissions in README), or a "
         "rate limit outlasted the retries",
    404: "the repository or object does not exist, or the App is not installed on it",
    405: "GitHub refused the operation in this state (e.g. the pull request is not mergeable)",
    409: "the resource changed meanwhile (e.g. the head branch moved); re-read it and try again",
    410: "the resource is gone (e.g. an expired artifact)",
    422: "GitHub rejected the request's content",
}


class GitHubAPIError(gidgethub.HTTPException):
    """A GitHub call that failed for good. ``status_code``, ``method``, ``url`` (no credentials),
    ``message`` (GitHub's), ``errors`` (GitHub's ``errors`` list, if any), ``attempts`` and
    ``headers``; ``__cause__`` is gidgethub's exception. ``str(e)`` says what to do next."""

    def __init__(self, method: str, url: str, cause: gidgethub.HTTPException, attempts: int):
        self.method, self.url, self.attempts = method, _strip_credentials(url), attempts
        self.message = str(cause.args[0]) if cause.args and cause.args[0] is not None else cause.status_code.phrase
        self.errors = getattr(cause, "errors", None)
        hint = _HINTS.get(int(cause.status_code), "GitHub failed; it may work later" if cause.status_code >= 500
                          else "the request was not accepted")
        text = (f"GitHub answered {int(cause.status_code)} to {method} {self.url}: {self.message}"
                f"{f' {self.errors}' if self.errors else ''} (after {attempts} attempt{'s' * (attempts != 1)}); "
                f"{hint}")
        super().__init__(cause.status_code, text, headers=cause.headers)


def rate_limited(e: BaseException) -> bool:
    """Pure: is ``e`` GitHub's rate limit rather than a refusal of the request itself — a 429, a
    403 with ``x-ratelimit-remaining: 0`` or whose message names a rate limit (primary or
    secondary), or gidgethub's ``RateLimitExceeded`` (also as the cause of a
    :class:`GitHubAPIError`, which wraps whatever outlasted the client's waits)? A later attempt
    passes on its own, so callers retry it and never record it as a refusal."""
    for err in (e, e.__cause__):
        if isinstance(err, gidgethub.RateLimitExceeded):
            return True
        if isinstance(err, gidgethub.HTTPException):
            status = int(err.status_code)
            if status == 429:
                return True
            if status == 403 and (_header(err.headers, "x-ratelimit-remaining") == "0"
                                  or "rate limit" in str(getattr(err, "message", "") or _message(err)).lower()):
                return True
    return False


def refused_request(e: gidgethub.HTTPException) -> bool:
    """Pure: is ``e`` GitHub refusing the request itself (a 4xx: 403 a missing permission, 404,
    422 a validation), which a caller records as that unit's refusal (blocked, told on its PR)?
    Not a 5xx (GitHub failing for a while, past the client's retries), a 401 (the credentials,
    not the request) nor a rate limit (:func:`rate_limited`): those pass on their own, so the
    caller re-raises them and the delivery is retried (docs/github.md)."""
    status = int(e.status_code)
    return 400 <= status < 500 and status != 401 and not rate_limited(e)


#: GitHub's words when it refuses an installation an owner suspended: minting its token, or a call
#: with a token minted before (observed on the REST API and git over HTTP)
SUSPENDED_MESSAGE = "This installation has been suspended"


def installation_suspended(e: BaseException) -> bool:
    """Pure: did GitHub refuse ``e``'s call because the App's installation is suspended — a 403
    whose message is GitHub's "This installation has been suspended" (also as the cause of a
    :class:`GitHubAPIError`)? It is an owner's decision that lasts until they lift it, not a
    failure: callers pause the installation's forks instead of counting it, since the
    ``installation.suspend`` webhook that says so may have been missed (GitHub does not
    redeliver it)."""
    for err in (e, e.__cause__):
        if isinstance(err, gidgethub.HTTPException) and int(err.status_code) == 403:
            text = str(getattr(err, "message", "") or _message(err))
            if SUSPENDED_MESSAGE.lower() in text.lower():
                return True
    return False


def _strip_credentials(url: str) -> str:
    parts = urlsplit(url)
    if parts.username or parts.password:
        parts = parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else ""))
    return urlunsplit(parts)


# --- the client --------------------------------------------------------------------------------

TokenSource = Callable[[], Awaitable[str]]
#: looks up what a create would have made: the object (a dict as GitHub answers it), or None
Finder = Callable[[], Awaitable[dict | None]]


@dataclass
class ClientStats:
    """What a client did, for logs, metrics and tests: ``sleeps`` (seconds slept before retries),
    ``retries`` (``(status, attempt)``), ``token_refreshes``, ``cache_hits`` (304s served)."""

    sleeps: list[float] = field(default_factory=list)
    retries: list[tuple[int, int]] = field(default_factory=list)
    pacing_waits: list[float] = field(default_factory=list)
    token_refreshes: int = 0
    cache_hits: int = 0
    requests: int = 0


class GitHubClient(gidgethub.aiohttp.GitHubAPI):
    """gidgethub's aiohttp client with forksync's policy (module docstring).

    Authentication, one of: ``oauth_token=`` (a fixed token), ``token_source=`` (an async callable
    returning the current installation token, asked before every attempt; ``on_unauthorized`` is
    called after a 401 so the next attempt gets a fresh token), or ``app_id=``/``private_key=``
    (App JWT, gidgethub mints it). ``cache``: a mapping for ETag caching (one per installation).
    ``sleep``: an async sleep (tests may pass one that records without waiting). ``claims``: the
    worker process's claims (:mod:`bot.github.claims`), under which every lookup-then-write of a
    marked comment made with this client is done (:func:`bot.github.common.comment_once`); None
    for a client that is the only writer of its markers (a person's token in tests, a CLI run)."""

    def __init__(self, session: aiohttp.ClientSession, requester: str = "forksync", *,
                 oauth_token: str | None = None, token_source: TokenSource | None = None,
                 on_unauthorized: Callable[[], None] | None = None, app_id: str | int | None = None,
                 private_key: str | bytes | None = None, cache: MutableMapping | None = None,
                 base_url: str = DEFAULT_BASE_URL, retry: RetryPolicy = RetryPolicy(),
                 sleep: Callable[[float], Awaitable[None]] | None = None,
                 clock: Callable[[], float] = time.time, claims: Claims | None = None):
        super().__init__(session, requester, oauth_token=oauth_token,
                         app_id=str(app_id) if app_id is not None else None, private_key=private_key,
                         cache=cache, base_url=base_url.rstrip("/"))
        self._token_source = token_source
        self._on_unauthorized = on_unauthorized
        self.claims = claims
        self.retry = retry
        self._sleep = sleep or asyncio.sleep
        self._clock = clock
        self.stats = ClientStats()
        self._slots = asyncio.Semaphore(max(1, retry.max_concurrency))
        self._last_write = float("-inf")

    async def _paced(self, method: str):
        """Wait for a request slot and, for a mutating request, for ``write_interval_s`` since the
        last one (monotonic time)."""
        if method in ("POST", "PATCH", "PUT", "DELETE") and self.retry.write_interval_s > 0:
            wait = self._last_write + self.retry.write_interval_s - time.monotonic()
            if wait > 0:
                self.stats.pacing_waits.append(wait)
                await self._sleep(wait)
            self._last_write = time.monotonic()

    async def sleep(self, seconds: float) -> None:
        self.stats.sleeps.append(seconds)
        await self._sleep(seconds)

    def _retrying(self, decide: Callable[[BaseException, int], float | None],
                  note: Callable[[BaseException, int, float], None]) -> tenacity.AsyncRetrying:
        """tenacity's loop under :attr:`retry`: after a failed attempt ``decide(exception, attempt)``
        (``attempt`` 1-based) gives the seconds to wait, :data:`_SEND_AGAIN` (at once, no sleep), or
        None to let the exception through unchanged; ``note`` logs and counts each retry before its
        wait. Waits go through :meth:`sleep`, so an injected sleep sees them all."""
        decided: list[float | None] = [None]

        def retry(rs: tenacity.RetryCallState) -> bool:
            exc = rs.outcome.exception() if rs.outcome is not None else None
            decided[0] = None if exc is None else decide(exc, rs.attempt_number)
            return decided[0] is not None

        def before_sleep(rs: tenacity.RetryCallState) -> None:
            note(rs.outcome.exception(), rs.attempt_number, decided[0])

        async def sleep(seconds: float) -> None:
            if decided[0] != _SEND_AGAIN:
                await self.sleep(float(seconds))

        return tenacity.AsyncRetrying(retry=retry, wait=lambda rs: max(0.0, decided[0] or 0.0),
                                      stop=tenacity.stop_after_attempt(self.retry.max_attempts),
                                      before_sleep=before_sleep, sleep=sleep, reraise=True)

    async def _request(self, method: str, url: str, headers, body: bytes = b""):
        headers = dict(headers)
        headers["x-github-api-version"] = API_VERSION
        if self._token_source is not None:
            headers["authorization"] = f"token {await self._token_source()}"

        def decide(exc: BaseException, attempt: int) -> float | None:
            if not isinstance(exc, (aiohttp.ClientConnectionError, asyncio.TimeoutError)):
                return None
            if method == "POST" and _LOOKUP_BEFORE_RESEND.get() and not isinstance(exc, aiohttp.ClientConnectorError):
                return None     # sent, answer lost: the create's own loop looks it up before sending again
            return retry_delay(503, None, None, attempt, self.retry, self._clock())

        def note(exc: BaseException, attempt: int, delay: float) -> None:
            log.warning("github %s %s: %s; retrying in %.1fs", method, _strip_credentials(url), type(exc).__name__, delay)
            self.stats.retries.append((0, attempt))

        async def attempt_once():
            self.stats.requests += 1
            async with self._slots:
                await self._paced(method)
                return await super(GitHubClient, self)._request(method, url, headers, body)

        status, resp_headers, data = await self._retrying(decide, note)(attempt_once)
        if status == 304:
            self.stats.cache_hits += 1
        return status, resp_headers, data

    async def create(self, url: str, url_vars=None, *, data, find: Finder):
        """``POST`` ``data`` to ``url`` to create one thing (an issue, a comment, a pull request)
        that ``find()`` can look up: returns GitHub's answer, or what ``find()`` found. A POST GitHub
        answered 5xx may have been carried out all the same (its front end timed out after the
        backend made the change), and so may one whose connection dropped after it was sent (no
        answer at all); sending it again would make a second one. So before each such resend
        (never after a connection that could not be made: nothing was sent) the client asks
        ``find()`` (async: the object, or None when GitHub holds none) and returns what it found
        instead. Raises :class:`GitHubAPIError` as :meth:`post` does."""
        answer, _more, _status = await self._make_request("POST", url, url_vars or {}, data,
                                                          gidgethub.sansio.accept_format(), find=find)
        return answer

    async def _make_request(self, method: str, url: str, url_vars, data, accept: str, jwt: str | None = None,
                            oauth_token: str | None = None, find: Finder | None = None, **kw):
        """gidgethub's request (ETag cache, headers, answer → exception) under forksync's policy:
        :func:`retry_delay` for GitHub's answers, a fresh installation token after a 401; an answer
        that is not retried raises :class:`GitHubAPIError`. ``find``: see :meth:`create`."""
        filled_url = gidgethub.sansio.format_url(url, url_vars, base_url=self.base_url)
        if method in ("POST", "PATCH") and isinstance(data, dict):
            data = within_limits(data, filled_url)
        attempts = [0]
        # a POST answered 5xx, or whose connection dropped once it was sent: GitHub may have made
        # it before the answer was lost
        maybe_made = [False]

        def decide(exc: BaseException, attempt: int) -> float | None:
            attempts[0] = attempt
            if find is not None and isinstance(exc, (aiohttp.ClientConnectionError, asyncio.TimeoutError)):
                maybe_made[0] = True
                return retry_delay(503, None, None, attempt, self.retry, self._clock())
            if not isinstance(exc, gidgethub.HTTPException) or isinstance(exc, GitHubAPIError):
                return None
            status = int(exc.status_code)
            if status == 401 and self._token_source is not None and attempt < self.retry.max_attempts:
                return _SEND_AGAIN      # an installation token expired or was revoked: a new one, sent again
            delay = retry_delay(status, exc.headers, _message(exc), attempt, self.retry, self._clock())
            if delay is not None and method == "POST" and status >= 500:
                maybe_made[0] = True
            return delay

        def note(exc: BaseException, attempt: int, delay: float) -> None:
            if not isinstance(exc, gidgethub.HTTPException):
                log.warning("github %s %s: %s once sent; looking it up, retry %d in %.1fs", method,
                            _strip_credentials(filled_url), type(exc).__name__, attempt, delay)
                self.stats.retries.append((0, attempt))
                return
            status = int(exc.status_code)
            self.stats.retries.append((status, attempt))
            if delay == _SEND_AGAIN:
                if self._on_unauthorized is not None:
                    self._on_unauthorized()
                self.stats.token_refreshes += 1
                return
            log.warning("github %s %s answered %d (%s); retry %d in %.1fs", method, _strip_credentials(filled_url),
                        status, _message(exc)[:80], attempt, delay)

        async def send():
            if maybe_made[0] and find is not None:
                found = await find()
                if found is not None:
                    log.warning("github %s %s: the lost answer's object exists; found, not sent again",
                                method, _strip_credentials(filled_url))
                    return found, None, 200
            token = _LOOKUP_BEFORE_RESEND.set(find is not None)
            try:
                return await super(GitHubClient, self)._make_request(method, url, url_vars, data, accept, jwt=jwt,
                                                                     oauth_token=oauth_token, **kw)
            finally:
                _LOOKUP_BEFORE_RESEND.reset(token)

        try:
            return await self._retrying(decide, note)(send)
        except GitHubAPIError:
            raise
        except gidgethub.HTTPException as e:
            raise GitHubAPIError(method, filled_url, e, attempts[0]) from e


#: set while a create that can look its object up is being sent: the transport then leaves a
#: connection that dropped after the request went out to the create's loop, which looks before
#: sending again (a connection never made is still retried there: nothing was sent)
_LOOKUP_BEFORE_RESEND: contextvars.ContextVar[bool] = contextvars.ContextVar("forksync_lookup_before_resend",
                                                                            default=False)


def within_limits(data: dict, url: str) -> dict:
    """Pure: a write's JSON ``data`` with its texts cut to GitHub's limits (bot.github.limits): a
    ``body`` to 65,536 characters, a ``title`` to 256, a check run's ``output.summary`` / ``text``
    to 65,535 bytes. GitHub refuses a longer one (422), which would block what the write was for; a cut
    is logged (never the text). ``data`` itself is not changed."""
    out = data
    body, title = data.get("body"), data.get("title")
    if isinstance(body, str) and len(body) > limits.BODY_LIMIT:
        out = {**out, "body": limits.fit_body(body)}
    if isinstance(title, str) and len(title) > limits.TITLE_LIMIT and "/check-runs" not in url:
        out = {**out, "title": limits.fit_title(title)}
    output = data.get("output")
    if isinstance(output, dict):
        cut = {k: limits.fit_check_text(v) for k in ("summary", "text")
               if isinstance(v := output.get(k), str) and len(v.encode()) > limits.CHECK_TEXT_LIMIT}
        if cut:
            out = {**out, "output": {**output, **cut}}
    if out is not data:
        log.warning("github %s: text over GitHub's limit cut to fit (%s)", _strip_credentials(url),
                    ", ".join(k for k in ("body", "title", "output") if out.get(k) is not data.get(k)))
    return out


#: what :meth:`GitHubClient._retrying`'s ``decide`` returns for "send again now, without sleeping"
_SEND_AGAIN = -1.0


def _message(exc: gidgethub.HTTPException) -> str:
    return str(exc.args[0]) if exc.args and exc.args[0] is not None else ""


# --- App authentication ------------------------------------------------------------------------

@dataclass
class _CachedToken:
    token: str
    expires_at: float


class InstallationTokens:
    """Installation access tokens of one App, cached per installation.

    A token is reused until ``refresh_margin_s`` (default 5 min) before its ``expires_at``
    (GitHub: tokens live 1 hour); :meth:`invalidate` drops it (after a 401). Concurrent callers
    for the same installation share one fetch. Token shape is never assumed (GitHub is moving to
    longer stateless ``ghs_`` tokens). ``on_minted(token)`` is called with each new token before
    anyone uses it: the caller registers it with its scrubber, so a git or HTTP error that echoes
    it is cleaned like the App's own secrets (this package does not know the scrubber)."""

    def __init__(self, app_client: GitHubClient, app_id: str | int, private_key: str | bytes, *,
                 refresh_margin_s: float = 300.0, clock: Callable[[], float] = time.time,
                 on_minted: Callable[[str], None] | None = None):
        self._app = app_client
        self._app_id = str(app_id)
        self._key = private_key
        self.refresh_margin_s = refresh_margin_s
        self._clock = clock
        self._cache: dict[int, _CachedToken] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self._on_minted = on_minted
        self.fetches = 0

    async def token(self, installation_id: int) -> str:
        cached = self._cache.get(installation_id)
        if cached and cached.expires_at - self.refresh_margin_s > self._clock():
            return cached.token
        lock = self._locks.setdefault(installation_id, asyncio.Lock())
        async with lock:
            cached = self._cache.get(installation_id)
            if cached and cached.expires_at - self.refresh_margin_s > self._clock():
                return cached.token
            data = await gh_apps.get_installation_access_token(
                self._app, installation_id=str(installation_id), app_id=self._app_id, private_key=self._key)
            self.fetches += 1
            if self._on_minted is not None:
                self._on_minted(data["token"])
            expires = datetime.fromisoformat(data["expires_at"].replace("Z", "+00:00")).timestamp()
            self._cache[installation_id] = _CachedToken(data["token"], expires)
            return data["token"]

    def invalidate(self, installation_id: int) -> None:
        self._cache.pop(installation_id, None)


class GitHubApp:
    """The App's view of GitHub: an App-level (JWT) client and one cached client per installation.

    ``private_key``: the App's PEM; ``base_url``: GitHub's API root (the fake's URL in tests);
    ``on_minted``: see :class:`InstallationTokens`; ``claims``: carried by every client made
    (:class:`GitHubClient`)."""

    def __init__(self, session: aiohttp.ClientSession, *, app_id: str | int, private_key: str | bytes,
                 base_url: str = DEFAULT_BASE_URL, requester: str = "forksync", retry: RetryPolicy = RetryPolicy(),
                 cache_size: int = 512, refresh_margin_s: float = 300.0,
                 sleep: Callable[[float], Awaitable[None]] | None = None, clock: Callable[[], float] = time.time,
                 on_minted: Callable[[str], None] | None = None, claims: Claims | None = None):
        self.session = session
        self.app_id = str(app_id)
        self.base_url = base_url.rstrip("/")
        self.requester = requester
        self.retry = retry
        self.cache_size = cache_size
        self._sleep = sleep
        self._clock = clock
        self.claims = claims
        self.app_client = GitHubClient(session, requester, app_id=self.app_id, private_key=private_key,
                                       base_url=self.base_url, retry=retry, sleep=sleep, clock=clock, claims=claims)
        self.tokens = InstallationTokens(self.app_client, self.app_id, private_key,
                                         refresh_margin_s=refresh_margin_s, clock=clock, on_minted=on_minted)
        self._clients: dict[int, GitHubClient] = {}

    def installation(self, installation_id: int) -> GitHubClient:
        """The client acting as installation ``installation_id`` (created once, then reused)."""
        client = self._clients.get(installation_id)
        if client is None:
            client = GitHubClient(
                self.session, self.requester, token_source=lambda: self.tokens.token(installation_id),
                on_unauthorized=lambda: self.tokens.invalidate(installation_id),
                cache=_etag_cache(self.cache_size), base_url=self.base_url, retry=self.retry, sleep=self._sleep,
                clock=self._clock, claims=self.claims)
            self._clients[installation_id] = client
        return client

    async def installation_id_for(self, owner: str, repo: str) -> int:
        """The id of the App's installation on ``owner/repo`` (raises :class:`GitHubAPIError` 404
        when the App is not installed there)."""
        data = await self.app_client.getitem("/repos/{owner}/{repo}/installation", {"owner": owner, "repo": repo})
        return int(data["id"])

    async def for_repo(self, owner: str, repo: str) -> GitHubClient:
        return self.installation(await self.installation_id_for(owner, repo))


def token_client(session: aiohttp.ClientSession, token: str, *, base_url: str = DEFAULT_BASE_URL,
                 requester: str = "forksync", retry: RetryPolicy = RetryPolicy(), cache_size: int = 512,
                 sleep: Callable[[float], Awaitable[None]] | None = None, claims: Claims | None = None) -> GitHubClient:
    """Plain token mode: every call authenticated with ``token`` (FORKSYNC_TOKEN); ``claims``: see
    :class:`GitHubClient`."""
    return GitHubClient(session, requester, oauth_token=token, cache=_etag_cache(cache_size), base_url=base_url,
                        retry=retry, sleep=sleep, claims=claims)


def authenticated_remote(clone_url: str, token: str | None) -> str:
    """A git remote URL for pushing with an installation token (``https://x-access-token:<t>@…``,
    GitHub's documented form). Local paths and ``file://`` URLs (the local GitHub's repositories)
    are returned unchanged. Never log the result."""
    parts = urlsplit(clone_url)
    if parts.scheme not in ("http", "https") or not token:
        return clone_url
    host = parts.hostname + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=f"x-access-token:{token}@{host}"))


def _etag_cache(size: int) -> LRUCache | None:
    """gidgethub's ETag cache of ``size`` entries; None (no caching) for 0, which cachetools refuses."""
    return LRUCache(size) if size > 0 else None
