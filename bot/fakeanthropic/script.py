"""Scripted replies of the local Anthropic server (pure data; see :mod:`bot.fakeanthropic`).

A *script* is what the fake model answers, either

* a queue of :class:`Reply` values (or dicts with the same fields), consumed in order; a reply
  with ``match`` is taken only by a request whose JSON body contains that substring, and a reply
  with ``sticky: true`` is never consumed (it answers every matching request); or
* a function ``request_body(dict) -> Reply | dict`` (e.g. an adversarial model that reads the
  prompt and obeys what it finds there).

Script files (``--script FILE``, JSON or YAML) hold ``{"replies": [ {…}, … ]}`` or a bare list.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable

#: Anthropic error ``type`` per HTTP status (docs.anthropic.com "Errors").
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
               500: "api_error", 503: "api_error", 504: "timeout_error", 529: "overloaded_error"}


@dataclass
class Reply:
    """One scripted answer.

    ``text``: a text block (may be combined with ``tool_uses``: text first). ``tool_uses``:
    ``[{"name": …, "input": {…}, "id": optional}]``. ``status`` ≠ 200 answers an error of
    ``error_type`` (default from :data:`ERROR_TYPES`) with ``retry_after`` (seconds) if set.
    ``delay_s``: wait before answering (a slow model); ``chunk_delay_s``: wait between stream
    events. ``stream_error``: for streamed requests, send an SSE ``error`` event of this type
    after the first content delta (a mid-stream overload). ``stream_cut``: for streamed requests,
    end the stream after the first content delta with neither an error nor ``message_stop`` (a
    connection a proxy or load balancer dropped). ``stall_after``: for streamed requests, send
    ``message_start`` and this many content deltas, then nothing more until the server stops (a
    stream that stalls at a chosen point; :attr:`FakeAnthropic.stalled` counts them). ``hang_up``:
    read the whole request, then close the connection without answering (a server or proxy that
    drops it; the client sees the connection end with no response). ``usage``: ``{"input_tokens",
    "output_tokens"}`` to report (default: JSON length / 4 of request and output);
    ``omit_usage``: report no usage at all (a gateway that strips it).
    """

    text: str | None = None
    tool_uses: list[dict] = field(default_factory=list)
    status: int = 200
    error_type: str | None = None
    error_message: str = "scripted error"
    retry_after: float | None = None
    retry_after_ms: float | None = None
    delay_s: float = 0.0
    chunk_delay_s: float = 0.0
    stream_error: str | None = None
    stream_cut: bool = False
    stall_after: int | None = None
    hang_up: bool = False
    stop_reason: str | None = None
    usage: dict | None = None
    omit_usage: bool = False
    match: str | None = None
    sticky: bool = False

    @classmethod
    def tool(cls, name: str, tool_input: dict, **kw) -> "Reply":
        """A reply that calls one tool, e.g. ``Reply.tool("propose_fix", {"diagnosis": …})``."""
        return cls(tool_uses=[{"name": name, "input": tool_input}], **kw)

    @classmethod
    def from_dict(cls, d: dict, where: str = "reply") -> "Reply":
        if isinstance(d, Reply):
            return d
        if not isinstance(d, dict):
            raise ValueError(f"{where}: a reply must be a mapping, not {type(d).__name__}")
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {unknown}; known: {sorted(names)}")
        r = cls(**d)
        if r.status == 200 and r.text is None and not r.tool_uses and not r.hang_up:
            raise ValueError(f"{where}: a 200 reply needs `text` or `tool_uses` (or `hang_up`)")
        return r


Script = list | Callable[[dict], "Reply | dict"]


def load_script(path: str | Path) -> list[Reply]:
    """Read a script file (JSON or YAML). Raises ValueError naming the file and the bad reply."""
    p = Path(path)
    try:
        raw = p.read_text()
    except OSError as e:
        raise ValueError(f"{p}: cannot read the script file: {e.strerror}") from None
    try:
        data: Any = json.loads(raw)
    except json.JSONDecodeError:
        import yaml
        try:
            data = yaml.safe_load(raw)
        except yaml.YAMLError as e:
            raise ValueError(f"{p}: neither JSON nor YAML: {e}") from None
    if isinstance(data, dict):
        data = data.get("replies")
    if not isinstance(data, list):
        raise ValueError(f"{p}: expected a list of replies or {{'replies': [...]}}")
    return [Reply.from_dict(d, f"{p}: replies[{i}]") for i, d in enumerate(data)]
