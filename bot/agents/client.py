"""The one door to the Anthropic API (edge): availability, budget, redaction, retries, timeouts.

* ``anthropic.AsyncAnthropic(max_retries=0)``: the SDK's own retries are off because it obeys
  ``retry-after`` without a cap (see shared/notes/runtime-facts.md); the loop is tenacity's, its
  waits are :func:`backoff_delay` (slept through the injected ``sleep``).
* Retried: HTTP 408, 409, 429, 5xx (529 "overloaded" included), connection errors and timeouts,
  at most ``agents.max_retries`` times after the first attempt. Wait before retry *n* (0-based):
  ``min(retry_after, cap)`` when the server sent ``retry-after-ms``/``retry-after``, else
  ``min(base * 2**n, cap)``.
* ``agents.timeout_s`` bounds a stall: the wait for the answer to start and then for each next
  streamed event (the SDK's read timeout, and ``wait_for`` per event). An answer that keeps
  streaming goes on up to :func:`attempt_cap` — ``timeout_s`` plus the SDK's own estimate of the
  longest time an answer of ``max_tokens`` takes (an hour per 128,000 tokens): a whole answer of
  ``max_output_tokens`` can finish, one that trickles for ever cannot.
* ``within_s`` (a client's time limit, e.g. what is left of a sync's agent time) bounds every call
  of the client as a whole: no attempt starts, no wait for the answer goes on, and no backoff is
  slept past it. No retry starts either when what would be left after its backoff is less than
  the longest an earlier attempt of the call waited for the API's answer (to its stream's start,
  or a whole non-streamed answer; all of its wait when none came): a retry needs at least that
  for its own answer to begin, and one cut before would pay for its prompt for nothing. A call it
  stops raises :class:`AgentSkipped` and sets :attr:`AgentClient.out_of_time`; an attempt it cuts
  after its answer began is counted against the budget like any other broken attempt.
* Daily token budget: the ``agent_token_usage`` table counts input + output (+ cache) tokens of
  every response, per UTC day and agent. A call whose estimated prompt (chars / 4) would pass
  the budget is not made. A non-streamed attempt cut before its answer came (its cap, the time
  limit, the SDK's read timeout, a connection the server or a proxy closed: the SDK's
  ``APIConnectionError``) after its request went out whole had its prompt billed and
  gives no usage figures: it is counted at that same estimate of its prompt (no output), as a cut
  call (``cut_calls``) whose input is an estimate (``estimated_input_tokens``). "Went out whole"
  is httpx's ``trace`` event ``http11.send_request_body.complete`` (or ``http2.…``) for the
  attempt's request, watched by the HTTP client the SDK is given (:func:`_sent_marking_http_client`);
  one cut before that (a connection never opened) counts nothing.
* Everything sent is redacted again here (:class:`bot.agents.redact.Redactor`), whatever the
  caller did.

Nothing here raises for "agents unavailable": :class:`AgentSkipped` carries a reason meant for
people ("agents are off: no API key set"), which callers render instead of the agent's output.
"""
from __future__ import annotations

import asyncio
import contextvars
import email.utils
import json
import logging
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping

import tenacity

from bot.agents import store as agents_store
from bot.agents.redact import Redactor, redact, register_secrets
from bot.config.agents import AgentSettings
from bot.store import Store

if TYPE_CHECKING:                      # imported lazily: the SDK takes a while to import
    import anthropic

log = logging.getLogger(__name__)

#: Environment variables that hold the API key, first found wins.
KEY_ENV_VARS = ("FORKSYNC_ANTHROPIC_KEY", "ANTHROPIC_API_KEY")
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
#: Error types retried when they arrive inside a 200 stream (an SSE ``error`` event).
RETRY_ERROR_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})


class AgentSkipped(Exception):
    """The agent did not run or gave no usable answer; ``reason`` is shown to people.
    ``api_failure``: the request was sent and the API refused it or could not be reached (an
    HTTP error not retried, or every attempt failed) — not a skip decided before sending, and not
    a refusal of this one request for its size (HTTP 413, or 400 "prompt is too long": a smaller
    request may pass). A refusal's reason ends with the API's own message."""

    def __init__(self, reason: str, api_failure: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.api_failure = api_failure


@dataclass(frozen=True)
class ToolUse:
    name: str
    input: Any
    id: str = ""


@dataclass(frozen=True)
class AgentReply:
    """One model answer: its text blocks joined, its tool calls, and what it cost (tokens)."""

    model: str
    text: str
    tool_uses: tuple[ToolUse, ...]
    stop_reason: str | None
    input_tokens: int
    output_tokens: int
    attempts: int


#: stop reasons of an answer the model finished (anything else — ``max_tokens``, ``refusal``,
#: ``model_context_window_exceeded``, none at all — leaves the tool input as far as it got)
FINISHED = frozenset({"end_turn", "tool_use", "stop_sequence"})


def unfinished(reply: "AgentReply") -> str | None:
    """Why ``reply`` is not a finished answer, in words for the rails' report; None when it is."""
    why = reply.stop_reason
    if why in FINISHED:
        return None
    if why == "max_tokens":
        return "the answer was cut off at `agents.max_output_tokens`"
    if why == "refusal":
        return "the model refused and stopped mid-answer (stop_reason refusal)"
    if why == "model_context_window_exceeded":
        return "the answer was cut off at the model's context window"
    return f"the answer did not finish (stop_reason {why!r})"


def api_key_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if environ is None else environ
    for name in KEY_ENV_VARS:
        if env.get(name, "").strip():
            return env[name].strip()
    return None


def backoff_delay(retry: int, retry_after: float | None, base: float, cap: float) -> float:
    """Seconds to wait before retry number ``retry`` (0-based): the server's ``retry_after`` if
    given, else ``base * 2**retry``; never more than ``cap`` nor less than 0."""
    wanted = retry_after if retry_after is not None else base * (2 ** retry)
    return max(0.0, min(float(wanted), float(cap)))


def retry_after_seconds(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """The wait a response asks for: ``retry-after-ms`` (ms), ``retry-after`` (seconds, or an
    HTTP date); None when absent or unparsable."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000.0
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if not ra:
        return None
    try:
        return float(ra)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(ra).timestamp()
        except (TypeError, ValueError):
            return None
        return max(0.0, when - (time.time() if now is None else now))


#: The SDK's estimate of the longest an answer takes: an hour per 128,000 output tokens
#: (``anthropic._base_client.BaseClient._calculate_nonstreaming_timeout``).
SECONDS_PER_OUTPUT_TOKEN = 3600 / 128_000


def attempt_cap(timeout_s: float, max_tokens: int) -> float:
    """Seconds one attempt may take in all: ``timeout_s`` to start answering, then
    ``max_tokens`` × :data:`SECONDS_PER_OUTPUT_TOKEN` (16,000 tokens: 450 s)."""
    return float(timeout_s) + max_tokens * SECONDS_PER_OUTPUT_TOKEN


def utc_day(epoch: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(epoch))


class AgentClient:
    """Calls the model for one agent at a time. ``store`` holds the token budget (an in-memory
    store when None). ``now``/``sleep`` and ``wait_for(awaitable, seconds)`` (the per-attempt
    timeout, :func:`asyncio.wait_for` by default; raises :class:`asyncio.TimeoutError`) are
    injectable, so tests drive time with a clock of their own instead of waiting. ``wait_for`` is
    given each wait for the next piece of the answer (at most ``timeout_s``), never the whole
    attempt. ``within_s``: every call of this client ends within this many seconds of its
    creation, on ``now`` (None: no such limit); :attr:`out_of_time` then says why a call was
    stopped or not made (``""``: none was)."""

    def __init__(self, settings: AgentSettings, store: Store | None = None, *, api_key: str | None = None,
                 base_url: str | None = None, now: Callable[[], float] = time.time,
                 sleep: Callable[[float], Any] = asyncio.sleep, stream: bool = True,
                 wait_for: Callable[[Awaitable[Any], float], Awaitable[Any]] = asyncio.wait_for,
                 within_s: float | None = None):
        self.settings = settings
        self.store = store or Store(":memory:")
        self.store.migrate()            # the usage table exists even if the Store was opened before this import
        self.api_key = api_key
        register_secrets(api_key)       # the key's value never reaches a prompt, a log line or a comment
        self.base_url = base_url or settings.base_url
        self.now = now
        self.sleep = sleep
        self.stream = stream
        self.wait_for = wait_for
        self.within_s = within_s
        self.ends_at = None if within_s is None else now() + float(within_s)
        self.out_of_time = ""
        self._client: anthropic.AsyncAnthropic | None = None

    @classmethod
    def from_env(cls, settings: AgentSettings, store: Store | None = None,
                 environ: Mapping[str, str] | None = None, **kw) -> "AgentClient":
        return cls(settings, store, api_key=api_key_from_env(environ), **kw)

    # -- availability and budget ----------------------------------------------------------
    @property
    def off_reason(self) -> str | None:
        """None when agents may run, else why not (shown to people)."""
        if not self.settings.enabled:
            return "agents are off: `agents.enabled` is false in forksync.yml"
        if not self.api_key:
            return "agents are off: no API key set (FORKSYNC_ANTHROPIC_KEY or ANTHROPIC_API_KEY)"
        return None

    def time_left(self) -> float | None:
        """Seconds left of ``within_s`` (0 or less: spent); None when the client has no limit."""
        return None if self.ends_at is None else self.ends_at - self.now()

    def _stopped(self, agent: str, when: str, retry: bool = False) -> AgentSkipped:
        # ``retry``: stopped before a retry (time was left, too little for one), not at the limit
        limit = (f"not enough of its time limit ({self.within_s:g} s) was left for another attempt" if retry
                 else f"its time limit ({self.within_s:g} s) ran out")
        self.out_of_time = f"agent {agent} stopped {when}: {limit}; nothing of it was used"
        log.info("%s", self.out_of_time)
        return AgentSkipped(self.out_of_time)

    def tokens_used(self, day: str | None = None) -> int:
        day = day or utc_day(self.now())
        return agents_store.tokens_used(self.store, day)

    def estimated_today(self, day: str | None = None) -> tuple[int, int]:
        """``(cut calls, estimated input tokens)`` of ``day`` (today, UTC): see
        :func:`bot.agents.store.estimated_today`."""
        return agents_store.estimated_today(self.store, day or utc_day(self.now()))

    def _record(self, agent: str, model: str, tin: int, tout: int, *, cut: bool = False,
                estimated_input: int = 0) -> None:
        day = utc_day(self.now())
        agents_store.record_call(self.store, day, agent, model, tin, tout, cut=cut,
                                 estimated_input_tokens=estimated_input)

    def _check_budget(self, estimate: int) -> None:
        used = self.tokens_used()
        budget = self.settings.daily_token_budget
        if used + estimate > budget:
            raise AgentSkipped(
                f"agents skipped: daily token budget reached ({used:,} of {budget:,} tokens used on "
                f"{utc_day(self.now())} UTC, this request needs about {estimate:,}); agents resume "
                "tomorrow, or raise `agents.daily_token_budget`")

    # -- the call ------------------------------------------------------------------------
    def _sdk(self) -> "anthropic.AsyncAnthropic":
        import anthropic

        if self._client is None:
            kw: dict[str, Any] = {"api_key": self.api_key, "max_retries": 0, "timeout": self.settings.timeout_s,
                                  "http_client": _sent_marking_http_client(anthropic.DefaultAsyncHttpxClient)}
            if self.base_url:
                kw["base_url"] = self.base_url
            self._client = anthropic.AsyncAnthropic(**kw)
        return self._client

    async def __aenter__(self) -> "AgentClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def call(self, agent: str, *, system: str, messages: list[dict], tools: list[dict] | None = None,
                   tool_choice: dict | None = None, max_tokens: int | None = None,
                   redactor: Redactor | None = None) -> AgentReply:
        """Send one request; returns :class:`AgentReply` or raises :class:`AgentSkipped`."""
        reason = self.off_reason
        if reason:
            raise AgentSkipped(reason)
        import anthropic

        r = redactor or Redactor()
        system = r.redact(system, "prompt")
        messages = [_redact_message(m, r) for m in messages]
        estimate = estimate_tokens(system, messages)
        if estimate > self.settings.max_prompt_tokens:
            raise AgentSkipped(f"agent {agent} skipped: the prompt is about {estimate:,} tokens, more than "
                               f"`agents.max_prompt_tokens` ({self.settings.max_prompt_tokens:,})")
        self._check_budget(estimate)
        left = self.time_left()
        if left is not None and left <= 0:
            raise self._stopped(agent, "before its request was sent")
        kw: dict[str, Any] = {"model": self.settings.model, "system": system, "messages": messages,
                              "max_tokens": max_tokens or self.settings.max_output_tokens}
        if tools:
            kw["tools"] = tools
        if tool_choice:
            kw["tool_choice"] = tool_choice
        tries = [0]

        def spent(usage: Any, answer_chars: int) -> None:
            # an attempt that failed after its answer began: the API billed its prompt (and what
            # streamed), so the budget counts it as well as the retry
            tin, tout, missing = counted_tokens(usage, estimate, answer_chars)
            log.info("agent %s: attempt %d broke off after its answer began; counting %d input and %d output tokens",
                     agent, tries[0], tin, tout)
            self._record(agent, self.settings.model, tin, tout,
                         estimated_input=estimate if "input_tokens" in missing else 0)

        def cut_off(what: str) -> None:
            # a non-streamed attempt whose answer the client stopped waiting for after its request
            # went out whole: the API billed its prompt at least; no usage figure will ever come,
            # so the prompt is counted as forksync sized it before sending (the one estimate the
            # budget checks use) and the output as none seen, marked as a cut estimate
            log.info("agent %s: attempt %d was cut before its answer came (%s); counting its prompt as "
                     "forksync's estimate, %d input tokens", agent, tries[0], what, estimate)
            self._record(agent, self.settings.model, estimate, 0, cut=True, estimated_input=estimate)

        async def attempt():
            tries[0] += 1
            try:
                return await self._once(kw, spent, cut_off, waited_for_answer)
            except (_Failed, _OutOfTime):
                raise
            except (asyncio.TimeoutError, anthropic.APITimeoutError):
                # a streamed attempt's stall: its wait for the next piece is ``timeout_s``
                raise _Failed(f"timed out after {_secs(self.settings.timeout_s)} s") from None
            except anthropic.APIStatusError as e:
                last = f"HTTP {e.status_code} {_error_type(e)}"
                if e.status_code not in RETRY_STATUSES and _error_type(e) not in RETRY_ERROR_TYPES:
                    said = _error_message(e)
                    # a prompt over the model's context is this request's trouble, not the API's: the
                    # estimate (characters / 4) is low for code, and the next, smaller request may pass
                    raise AgentSkipped(f"agent {agent} failed: {last} (not retried)" + (f": {said}" if said else ""),
                                       api_failure=not _too_large(e, said)) from None
                raise _Failed(last, retry_after_seconds(e.response.headers, self.now())) from None
            except anthropic.APIConnectionError as e:
                raise _Failed(f"connection error: {type(e).__name__}") from None
            except Exception as e:      # noqa: BLE001 - a 200 that is no Messages answer (a gateway's JSON or HTML,
                # an empty body) fails inside the SDK in ways of its own; it is an API failure all the same
                raise _Failed(f"the API's answer could not be read ({type(e).__name__})") from None

        def wait(rs: tenacity.RetryCallState) -> float:
            return backoff_delay(rs.attempt_number - 1, rs.outcome.exception().retry_after,
                                 self.settings.backoff_base_s, self.settings.backoff_cap_s)

        # the longest an attempt of this call waited for the API's answer (seconds; what it was, in
        # words): a retry needs at least as long for its own answer to begin
        need: list[tuple[float, Callable[[str], str]]] = []

        def waited_for_answer(seconds: float, answered: bool) -> None:
            if not need or seconds > need[0][0]:
                n = tries[0]
                need[:] = [(seconds, (lambda figure: f"the {figure} s the API took to answer attempt {n}") if answered
                            else (lambda figure: f"the {figure} s attempt {n} waited without the answer beginning"))]

        late: list[str] = []

        def no_time_for_a_retry(rs: tenacity.RetryCallState) -> bool:
            # the backoff would end at or past the time limit, or leave less of it than an earlier
            # attempt of this call waited for its answer: the retry would send its whole prompt, be
            # billed for it, and be cut before its answer could be used
            left = self.time_left()
            backoff = rs.upcoming_sleep or 0.0
            if left is None:
                pass
            elif left <= backoff:
                late.append("")
            elif need and left - backoff < need[0][0]:
                shown_left, shown_need = _secs_apart(left - backoff, need[0][0])
                late.append(f" ({shown_left} s would be left after the {_secs(backoff)} s backoff, "
                            f"{'less than' if shown_left != shown_need else 'no more than'} {need[0][1](shown_need)})")
            return bool(late)

        def before_sleep(rs: tenacity.RetryCallState) -> None:
            log.info("agent %s: attempt %d %s; retrying in %.2f s", agent, rs.attempt_number,
                     rs.outcome.exception().what, rs.upcoming_sleep)

        retrying = tenacity.AsyncRetrying(
            retry=tenacity.retry_if_exception_type(_Failed), wait=wait, before_sleep=before_sleep,
            stop=tenacity.stop_any(tenacity.stop_after_attempt(self.settings.max_retries + 1), no_time_for_a_retry),
            sleep=lambda s: self.sleep(float(s)),
            reraise=True)
        try:
            msg = await retrying(attempt)
        except _OutOfTime as o:
            raise self._stopped(agent, f"in attempt {tries[0]} ({o.what})") from None
        except _Failed as f:
            if late:
                raise self._stopped(agent, f"after attempt {tries[0]} {f.what}, with no time for a retry{late[-1]}",
                                    retry=True) from None
            raise AgentSkipped(f"agent {agent} gave up after {self.settings.max_retries + 1} attempt(s): {f.what}",
                               api_failure=True) from None
        text = "".join(b.text for b in msg.content if getattr(b, "type", "") == "text")
        tools_used = tuple(ToolUse(b.name, b.input, b.id) for b in msg.content if getattr(b, "type", "") == "tool_use")
        answer_chars = len(text) + sum(len(json.dumps(t.input, ensure_ascii=False)) for t in tools_used)
        tin, tout, missing = counted_tokens(getattr(msg, "usage", None), estimate, answer_chars)
        if missing:
            # a gateway that strips or nulls the figures must not make answers free against the budget
            log.warning("agent %s: the API's answer gave no usage figures (%s); counting forksync's estimate: "
                        "%d input and %d output tokens", agent, ", ".join(missing), tin, tout)
        self._record(agent, msg.model or self.settings.model, tin, tout,
                     estimated_input=estimate if "input_tokens" in missing else 0)
        return AgentReply(msg.model or self.settings.model, text, tools_used, msg.stop_reason, tin, tout, tries[0])

    async def _once(self, kw: dict[str, Any], spent: Callable[[Any, int], None] = lambda usage, chars: None,
                    cut_off: Callable[[str], None] = lambda what: None,
                    waited_for_answer: Callable[[float, bool], None] = lambda seconds, answered: None):
        """One attempt. ``timeout_s`` bounds each wait for the next piece (a stall); the answer as a
        whole may take up to :func:`attempt_cap`, so a long answer that keeps streaming finishes.
        Raises :class:`asyncio.TimeoutError` on a stall, :class:`_Failed` past the cap (a
        non-streamed attempt: "timed out after" the wait it was cut at) or when the stream ends
        without ``message_stop``, :class:`_OutOfTime` when a wait reaches the client's
        time limit (``within_s``; every wait is bounded by what is left of it). A streamed attempt
        that fails after its ``message_start`` calls ``spent(usage at the start or None,
        characters streamed)`` first; a non-streamed attempt whose request was sent whole (the
        trace event :func:`_sent_marking_http_client` watches) and whose answer was not waited for
        to the end (the attempt's cap, the time limit, the SDK's read timeout, a connection closed
        before the whole answer came: :class:`anthropic.APIConnectionError`) calls
        ``cut_off(what)`` first, once per attempt. A streamed attempt cut before its answer began
        counts nothing: ``message_start`` comes as soon as the model starts on the prompt, and
        none came to show it was worked on. ``waited_for_answer(seconds,
        answered)`` is told, on the client's ``now``, how long the attempt waited for the API's
        first answer (the stream's start, or a whole non-streamed answer; ``answered`` false: it
        waited that long and none came)."""
        sdk = self._sdk()
        idle = self.settings.timeout_s
        cap = attempt_cap(idle, kw["max_tokens"])

        def bounded(wait: float, what: str) -> tuple[float, bool]:
            # ``wait`` cut to what is left of the client's time limit, and whether it was cut
            left = self.time_left()
            if left is None or left >= wait:
                return wait, False
            if left <= 0:
                raise _OutOfTime(f"no time was left to wait for {what}")
            return left, True

        async def waited(aw: Awaitable[Any], wait: float, what: str) -> Any:
            try:
                wait, limited = bounded(wait, what)
            except _OutOfTime:
                getattr(aw, "close", lambda: None)()        # never awaited: closed, not left to warn
                raise
            try:
                return await self.wait_for(aw, wait)
            except asyncio.TimeoutError:
                if limited:
                    raise _OutOfTime(f"the time limit came while waiting for {what}", waited=True) from None
                raise

        import anthropic

        sent = self.now()

        def first_answer(answered: bool) -> None:
            waited_for_answer(self.now() - sent, answered)

        if not self.stream:             # nothing arrives before the whole answer: the cap is the only bound
            request_sent = _RequestSent()
            marking = _REQUEST_SENT.set(request_sent)       # copied into the task ``wait_for`` makes
            wait = cap
            try:
                wait = bounded(cap, "the answer")[0]
                msg = await waited(sdk.messages.create(**kw, timeout=wait), cap, "the answer")
            except anthropic.APIStatusError:
                first_answer(True)
                raise
            except BaseException as e:
                first_answer(False)
                # billed only once the API had the whole request: a connection never opened (or a
                # connect, write or pool timeout) sent nothing the API could work on
                timed_out = isinstance(e, (asyncio.TimeoutError, anthropic.APITimeoutError))
                if request_sent.whole:
                    if timed_out:
                        cut_off(f"no answer after {_secs(wait)} s")
                    elif isinstance(e, _OutOfTime) and e.waited:
                        cut_off(e.what)
                    elif isinstance(e, anthropic.APIConnectionError):
                        # the connection closed after the request went out whole (the server or a
                        # proxy hung up, or the answer's body broke off): the API had the prompt
                        cut_off(f"the connection closed: {type(e.__cause__ or e).__name__}")
                if timed_out:
                    # the wait it was cut at (its cap, not ``timeout_s``): the figure the retry
                    # floor's reason gives for the same wait
                    raise _Failed(f"timed out after {_secs(wait)} s") from None
                raise
            finally:
                _REQUEST_SENT.reset(marking)
            first_answer(True)
            return msg
        loop = asyncio.get_running_loop()
        deadline = loop.time() + cap
        manager = sdk.messages.stream(**kw)
        try:
            s = await waited(manager.__aenter__(), idle, "the answer to begin")
        except anthropic.APIStatusError:
            first_answer(True)
            raise
        except BaseException:
            first_answer(False)
            raise
        first_answer(True)
        began: list[Any] = []           # the usage message_start gave, once the answer began
        chars = 0
        try:
            events = s.__aiter__()
            too_long = f"still answering after {cap:g} s (the limit for {kw['max_tokens']:,} output tokens)"
            stopped = False
            while True:
                left = deadline - loop.time()
                if left <= 0:
                    raise _Failed(too_long)
                try:
                    event = await waited(events.__anext__(), min(idle, left), "the next piece of the answer")
                except StopAsyncIteration:
                    break
                except asyncio.TimeoutError:
                    if left < idle:
                        raise _Failed(too_long) from None
                    raise
                kind = getattr(event, "type", "")
                if kind == "message_start":
                    began.append(getattr(getattr(event, "message", None), "usage", None))
                elif kind == "content_block_delta":
                    delta = getattr(event, "delta", None)
                    chars += len(getattr(delta, "text", None) or getattr(delta, "partial_json", None) or "")
                stopped = stopped or kind == "message_stop"
            if not stopped:
                # the connection closed mid-answer (a proxy, a load balancer): what arrived is a
                # fragment with no stop reason — the API's trouble, retried, never the model's answer
                raise _Failed("the stream ended before the answer did (no message_stop event)")
            return await s.get_final_message()
        except BaseException:
            if began:
                spent(began[0], chars)
            raise
        finally:
            await manager.__aexit__(None, None, None)


def counted_tokens(usage: Any, prompt_estimate: int, answer_chars: int) -> tuple[int, int, list[str]]:
    """``(input, output, missing)``: the tokens an answer is counted for against the daily budget.
    ``usage`` is the answer's ``usage`` object (or None); input is ``input_tokens`` plus the cache
    figures, output ``output_tokens``. A figure the API did not give (absent or null; an input of
    0 with no cache figure, which no request has) is replaced by forksync's estimate — ``prompt_estimate`` for input
    (:func:`estimate_tokens`), ``answer_chars`` / 4 + 1 for output — and named in ``missing``."""
    missing: list[str] = []

    def figure(name: str) -> int | None:
        v = getattr(usage, name, None) if usage is not None else None
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    tin = figure("input_tokens")
    cached = (figure("cache_creation_input_tokens") or 0) + (figure("cache_read_input_tokens") or 0)
    if tin is None or (tin == 0 and not cached):
        missing.append("input_tokens")
        tin = prompt_estimate
    tin += cached
    tout = figure("output_tokens")
    if tout is None:
        missing.append("output_tokens")
        tout = answer_chars // 4 + 1
    return tin, tout, missing


class _RequestSent:
    """Whether an attempt's request went out whole (its body's last byte written)."""

    def __init__(self) -> None:
        self.whole = False


#: The :class:`_RequestSent` of the attempt running in this context (None: no attempt watches).
_REQUEST_SENT: contextvars.ContextVar[_RequestSent | None] = contextvars.ContextVar("forksync_request_sent",
                                                                                     default=None)


def _sent_marking_http_client(base: type) -> Any:
    """An instance of a subclass of ``base`` (the SDK's ``DefaultAsyncHttpxClient``: its transport,
    socket options and proxy mounts kept) whose every request carries httpx's ``trace`` extension
    (https://www.python-httpx.org/advanced/extensions/#trace): the connection's
    ``http11.send_request_body.complete`` / ``http2.send_request_body.complete`` event marks the
    :class:`_RequestSent` of the attempt in whose context the request was made. Set on the request
    in ``send``, not on one transport, so a proxy's transport is watched as well — but not by the
    body of the proxy's own ``CONNECT`` (httpcore hands the trace on to it: a refused tunnel sent
    the API nothing). A ``trace`` the request already had is still called."""

    class SentMarking(base):  # type: ignore[misc, valid-type]
        async def send(self, request: Any, **kw: Any) -> Any:
            mark = _REQUEST_SENT.get()
            if mark is not None:
                earlier = request.extensions.get("trace")

                tunnel = [False]    # the body being sent is an HTTPS proxy's CONNECT, not the API request

                async def trace(event: str, info: dict[str, Any]) -> None:
                    # httpcore passes the trace on to a proxy's CONNECT request too; only its
                    # ``.started`` event carries the request, so the method is read there
                    if event.endswith(".send_request_body.started"):
                        method = getattr(info.get("request"), "method", b"")
                        tunnel[0] = method in (b"CONNECT", "CONNECT")
                    elif event.endswith(".send_request_body.complete") and not tunnel[0]:
                        mark.whole = True
                    if earlier is not None:
                        await earlier(event, info)

                request.extensions = {**request.extensions, "trace": trace}
            return await super().send(request, **kw)

    return SentMarking()


class _OutOfTime(Exception):
    """An attempt reached the client's time limit (``within_s``): never retried. ``waited``: it
    came while waiting for the API (a request was out), not before one was sent."""

    def __init__(self, what: str, waited: bool = False):
        super().__init__(what)
        self.what, self.waited = what, waited


class _Failed(Exception):
    """A retryable failure of one attempt: ``what`` for people, the server's ``retry_after`` (s)."""

    def __init__(self, what: str, retry_after: float | None = None):
        super().__init__(what)
        self.what, self.retry_after = what, retry_after


def _error_type(e: "anthropic.APIStatusError") -> str:
    body = e.body if isinstance(e.body, dict) else {}
    err = body.get("error") if isinstance(body.get("error"), dict) else body
    return str(err.get("type", "")) if isinstance(err, dict) else ""


#: The API's words for a request over the model's context window (HTTP 400; 413 is the byte limit).
TOO_LARGE = ("prompt is too long", "exceed context limit")


def _error_message(e: "anthropic.APIStatusError", limit: int = 300) -> str:
    """The error's ``message`` from the API's answer, one line, redacted, at most ``limit`` characters."""
    body = e.body if isinstance(e.body, dict) else {}
    err = body.get("error") if isinstance(body.get("error"), dict) else body
    said = " ".join(str(err.get("message", "") if isinstance(err, dict) else "").split())
    said = redact(said)
    return said if len(said) <= limit else said[: limit - 1] + "…"


def _too_large(e: "anthropic.APIStatusError", said: str) -> bool:
    """Whether the API refused this request for its size (413, or 400 saying the prompt is over the context)."""
    return e.status_code == 413 or (e.status_code == 400 and any(t in said.lower() for t in TOO_LARGE))


def _secs(seconds: float) -> str:
    """Seconds for a reason people read: at most one decimal, none when whole (``38``, ``37.8``)."""
    return f"{seconds:.1f}".removesuffix(".0")


def _secs_apart(low: float, high: float, most: int = 3) -> tuple[str, str]:
    """``low`` and ``high`` (seconds, ``low`` < ``high``) for one sentence that says one is less
    than the other: as :func:`_secs` (one decimal) when they read apart so, else with the fewest
    more decimals, up to ``most``, at which they do (``59.96`` beside ``60``); trailing zeros
    dropped, so whole seconds stay short. Equal strings: they read the same even at ``most``
    decimals (the caller then says "no more than")."""
    shown = (_secs(low), _secs(high))
    for places in range(2, most + 1):
        if shown[0] != shown[1]:
            break
        shown = tuple(f"{x:.{places}f}".rstrip("0").rstrip(".") for x in (low, high))
    return shown[0], shown[1]


def estimate_tokens(system: str, messages: list[dict]) -> int:
    """A prompt's size in tokens as forksync estimates it before sending (characters / 4, + 1),
    the figure ``agents.max_prompt_tokens`` and the daily budget are checked against."""
    return (len(system) + sum(len(str(m.get("content", ""))) for m in messages)) // 4 + 1


def _redact_message(m: dict, r: Redactor) -> dict:
    content = m.get("content")
    if isinstance(content, str):
        return {**m, "content": r.redact(content, "prompt")}
    if isinstance(content, list):
        out = []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                block = {**block, "text": r.redact(block["text"], "prompt")}
            out.append(block)
        return {**m, "content": out}
    return m
