"""A local Anthropic Messages API for tests and the demo (aiohttp): ``POST /v1/messages``.

It speaks the real wire format, so ``anthropic.AsyncAnthropic(base_url=fake.base_url, …)`` works
unchanged: JSON messages with ``text`` and ``tool_use`` blocks, streaming as SSE with the real
events (``message_start``, ``content_block_start``/``content_block_delta``/``content_block_stop``,
``message_delta``, ``message_stop``, plus ``ping`` and mid-stream ``error``), error bodies
``{"type": "error", "error": {"type": …, "message": …}}`` with ``retry-after``/``retry-after-ms``,
and slow answers. Replies come from a script (:mod:`bot.fakeanthropic.script`); every request is
recorded (:attr:`FakeAnthropic.requests`) so tests can assert exactly what was sent.

In-process::

    async with FakeAnthropic([Reply(text="hi")], api_key="k") as fake:
        client = anthropic.AsyncAnthropic(base_url=fake.base_url, api_key="k", max_retries=0)

From synchronous code: ``with FakeAnthropic(script).in_thread() as fake: …``.
As a process: ``python -m bot.fakeanthropic --port 8123 --script replies.json``.
An empty queue answers 500 ``api_error`` "script exhausted" (a test asked more than it scripted).
"""
from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
from dataclasses import dataclass
from typing import Any, Callable

from aiohttp import web

from bot.fakeanthropic.script import ERROR_TYPES, Reply, load_script

__all__ = ["FakeAnthropic", "RecordedRequest", "Reply", "load_script"]


@dataclass(frozen=True)
class RecordedRequest:
    """One request as received: ``body`` parsed JSON, ``raw`` the exact bytes as text."""

    path: str
    headers: dict[str, str]
    body: Any
    raw: str
    status: int = 0          # what the fake answered


class FakeAnthropic:
    """The fake server. ``script`` is a list of replies/dicts or a function of the request body;
    ``api_key`` (optional) is required as ``x-api-key`` or ``Authorization: Bearer``."""

    def __init__(self, script: list | Callable[[dict], Any] | None = None, *, api_key: str | None = None,
                 host: str = "127.0.0.1", port: int = 0, chunk_chars: int = 16):
        self._queue: list[Reply] = []
        self._fn: Callable[[dict], Any] | None = None
        if callable(script):
            self._fn = script
        else:
            self.push(*(script or []))
        self.api_key = api_key
        self.host, self.port = host, port
        self.chunk_chars = chunk_chars
        self.requests: list[RecordedRequest] = []
        self.stalled = 0            # streams held at a reply's ``stall_after``, so far
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None

    # -- script --------------------------------------------------------------------------
    def push(self, *replies) -> None:
        self._queue.extend(Reply.from_dict(r, f"reply {i}") for i, r in enumerate(replies))

    def _next(self, body: dict, raw: str) -> Reply:
        if self._fn is not None:
            return Reply.from_dict(self._fn(body), "script function result")
        for i, r in enumerate(self._queue):
            if r.match is None or r.match in raw:
                if not r.sticky:
                    del self._queue[i]
                return r
        return Reply(status=500, error_type="api_error", error_message="fake anthropic: script exhausted")

    @property
    def bodies(self) -> list[str]:
        """Every recorded request body, raw (to assert e.g. that a secret was never sent)."""
        return [r.raw for r in self.requests]

    # -- server --------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/messages", self._messages)
        return app

    async def start(self) -> "FakeAnthropic":
        self._stopping = asyncio.Event()
        self._runner = web.AppRunner(self.app())
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            self._stopping.set()            # a slow reply still waiting ends now, so shutdown does not wait for it
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> "FakeAnthropic":
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    @contextlib.contextmanager
    def in_thread(self):
        """Serve from a background thread with its own event loop (for synchronous callers such
        as the demo or a CLI test); yields ``self`` once listening, stops on exit."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.start())
            except BaseException as e:          # noqa: BLE001 - reported to the caller below
                failure.append(e)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.stop())
            loop.close()

        t = threading.Thread(target=run, name="fakeanthropic", daemon=True)
        t.start()
        ready.wait()
        if failure:
            raise failure[0]
        try:
            yield self
        finally:
            loop.call_soon_threadsafe(loop.stop)
            t.join(timeout=30)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # -- the endpoint --------------------------------------------------------------------
    async def _messages(self, request: web.Request) -> web.StreamResponse:
        raw = await request.text()
        headers = {k.lower(): v for k, v in request.headers.items()}

        def record(status: int, body: Any) -> None:
            self.requests.append(RecordedRequest(request.path, headers, body, raw, status))

        if self.api_key is not None:
            given = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ").strip()
            if given != self.api_key:
                record(401, None)
                return _error(401, "authentication_error", "invalid x-api-key")
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            record(400, None)
            return _error(400, "invalid_request_error", "body is not JSON")
        problem = _validate(body)
        if problem:
            record(400, body)
            return _error(400, "invalid_request_error", problem)
        reply = self._next(body, raw)
        record(0 if reply.hang_up else reply.status, body)
        if reply.delay_s:
            try:
                await asyncio.wait_for(self._stopping.wait(), reply.delay_s)
            except asyncio.TimeoutError:
                pass
        if reply.hang_up:
            # the whole request was read; the socket closes with no status line sent
            assert request.transport is not None
            request.transport.close()
            raise web.HTTPException()       # nothing is written: the transport is gone
        if reply.status != 200:
            return _error(reply.status, reply.error_type or ERROR_TYPES.get(reply.status, "api_error"),
                          reply.error_message, reply.retry_after, reply.retry_after_ms)
        message = self._message(body, raw, reply)
        if body.get("stream"):
            return await self._stream(request, message, reply)
        return web.json_response(message, headers={"request-id": f"req_fake_{message['id']}"})

    def _message(self, body: dict, raw: str, reply: Reply) -> dict:
        content: list[dict] = []
        if reply.text is not None:
            content.append({"type": "text", "text": reply.text})
        for tu in reply.tool_uses:
            content.append({"type": "tool_use", "id": tu.get("id") or f"toolu_fake_{next(self._ids):04d}",
                            "name": tu["name"], "input": tu.get("input", {})})
        out_len = sum(len(json.dumps(c)) for c in content)
        usage = {"input_tokens": max(1, len(raw) // 4), "output_tokens": max(1, out_len // 4),
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        usage.update(reply.usage or {})
        stop = reply.stop_reason or ("tool_use" if reply.tool_uses else "end_turn")
        message = {"id": f"msg_fake_{next(self._ids):04d}", "type": "message", "role": "assistant",
                   "model": body.get("model", "fake"), "content": content, "stop_reason": stop,
                   "stop_sequence": None, "usage": usage}
        if reply.omit_usage:
            del message["usage"]
        return message

    async def _stream(self, request: web.Request, message: dict, reply: Reply) -> web.StreamResponse:
        resp = web.StreamResponse(status=200, headers={
            "content-type": "text/event-stream", "cache-control": "no-cache",
            "request-id": f"req_fake_{message['id']}"})
        await resp.prepare(request)

        async def send(event: str, data: dict) -> None:
            await resp.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            if reply.chunk_delay_s:
                await asyncio.sleep(reply.chunk_delay_s)

        usage = message.get("usage")
        start = {**message, "content": [], "stop_reason": None}
        if usage is not None:
            start["usage"] = {**usage, "output_tokens": 1}
        await send("message_start", {"type": "message_start", "message": start})
        await send("ping", {"type": "ping"})
        deltas = 0

        async def stall() -> bool:
            # a stream that stops sending at the chosen point: held open until the server stops
            if reply.stall_after is None or deltas != reply.stall_after:
                return False
            self.stalled += 1
            await self._stopping.wait()
            return True

        if await stall():
            return resp
        n = self.chunk_chars
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                await send("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}})
                pieces = [block["text"][i:i + n] for i in range(0, len(block["text"]), n)] or [""]
                delta = lambda p: {"type": "text_delta", "text": p}  # noqa: E731
            else:
                await send("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {**block, "input": {}}})
                js = json.dumps(block["input"])
                pieces = [""] + [js[i:i + n] for i in range(0, len(js), n)]
                delta = lambda p: {"type": "input_json_delta", "partial_json": p}  # noqa: E731
            for k, piece in enumerate(pieces):
                await send("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": delta(piece)})
                deltas += 1
                if await stall():
                    return resp
                if reply.stream_error and index == 0 and k == 0:
                    await send("error", {"type": "error", "error": {"type": reply.stream_error,
                                                                    "message": reply.error_message}})
                    await resp.write_eof()
                    return resp
                if reply.stream_cut and index == 0 and k == len(pieces) // 2:
                    await resp.write_eof()
                    return resp
            await send("content_block_stop", {"type": "content_block_stop", "index": index})
        delta: dict[str, Any] = {"type": "message_delta",
                                 "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}}
        if usage is not None:
            delta["usage"] = {"output_tokens": usage["output_tokens"]}
        await send("message_delta", delta)
        await send("message_stop", {"type": "message_stop"})
        await resp.write_eof()
        return resp


def _validate(body: Any) -> str | None:
    """What the real API would reject with 400 (the subset forksync can get wrong)."""
    if not isinstance(body, dict):
        return "body must be a JSON object"
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            return f"{key}: Field required"
    if not isinstance(body["messages"], list) or not body["messages"]:
        return "messages: at least one message is required"
    if not isinstance(body["max_tokens"], int) or body["max_tokens"] < 1:
        return "max_tokens: must be a positive integer"
    for i, m in enumerate(body["messages"]):
        if not isinstance(m, dict) or m.get("role") not in {"user", "assistant"}:
            return f"messages.{i}.role: must be 'user' or 'assistant'"
    for i, t in enumerate(body.get("tools") or []):
        if not isinstance(t, dict) or "name" not in t or "input_schema" not in t:
            return f"tools.{i}: needs name and input_schema"
    return None


def _error(status: int, etype: str, message: str, retry_after: float | None = None,
           retry_after_ms: float | None = None) -> web.Response:
    headers = {"request-id": "req_fake_error"}
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    if retry_after_ms is not None:
        headers["retry-after-ms"] = f"{retry_after_ms:g}"
    return web.json_response({"type": "error", "error": {"type": etype, "message": message}},
                             status=status, headers=headers)
