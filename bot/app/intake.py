"""What a webhook delivery must look like before it is stored (pure: no sockets, no store).

:mod:`bot.app.web` streams the body through :func:`new_mac` while reading it and then asks the
functions here, in order (GitHub's contract: docs.github.com "Validating webhook deliveries",
"Webhook events and payloads" → payload cap):

1. :func:`signature_digest` — ``X-Hub-Signature-256`` is ``sha256=`` + 64 hex digits, checked
   *before* the body is read, so a sender without the secret is turned away cheaply. A ``sha1=``
   value (the legacy ``X-Hub-Signature`` scheme) is refused: it is not what that header carries.
2. :func:`content_kind` — ``application/json`` or ``application/x-www-form-urlencoded``.
3. the body, at most :data:`MAX_BODY` bytes (GitHub caps payloads at 25 MB), is fed to the MAC;
   :func:`signature_matches` compares in constant time.
4. :func:`decode_payload` — a JSON object, in the charset the Content-Type names (UTF-8 by
   default), nested at most :data:`MAX_DEPTH` levels
   (GitHub's payloads nest about 8 deep; a deeper body is not a delivery, and handlers that
   walk it recursively must never meet one).
5. :func:`check_ids` — ``X-GitHub-Event`` and ``X-GitHub-Delivery`` present and short.

Every failure is a :class:`Rejected` with the HTTP status, the metric outcome and a reason that
names the header or the problem; none ever quotes the body.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import urllib.parse
from email.message import Message

#: GitHub caps webhook payloads at 25 MB (docs.github.com "Webhook events and payloads").
MAX_BODY = 25 * 1024 * 1024
#: Deepest JSON nesting accepted (objects and arrays).
MAX_DEPTH = 64

_SIG = re.compile(r"sha256=([0-9a-fA-F]{64})")
_TYPES = ("application/json", "application/x-www-form-urlencoded")


class Rejected(Exception):
    """A delivery turned away: ``status`` (HTTP), ``outcome`` (the metric label:
    ``unsigned``, ``bad_signature``, ``bad_request``, ``too_large``, ``timeout``) and ``reason``."""

    def __init__(self, status: int, outcome: str, reason: str):
        super().__init__(reason)
        self.status = status
        self.outcome = outcome
        self.reason = reason


def signature_digest(header: str | None) -> bytes:
    """The 32-byte digest claimed by an ``X-Hub-Signature-256`` value. Raises :class:`Rejected`
    (401) when the header is missing or is not exactly ``sha256=`` + 64 hex digits."""
    if header is None:
        raise Rejected(401, "unsigned", "missing X-Hub-Signature-256 header")
    m = _SIG.fullmatch(header.strip())
    if not m:
        raise Rejected(401, "bad_signature", "X-Hub-Signature-256 must be 'sha256=' followed by 64 hex digits")
    return bytes.fromhex(m.group(1))


def new_mac(secret: str):
    """An HMAC-SHA256 of the webhook secret, to be fed the body chunk by chunk."""
    return hmac.new(secret.encode(), digestmod=hashlib.sha256)


def signature_matches(claimed: bytes, mac) -> bool:
    """Constant-time comparison of the claimed digest with the MAC of the body read."""
    return hmac.compare_digest(claimed, mac.digest())


def content_kind(content_type: str | None) -> tuple[str, str]:
    """``(media type, charset)`` of a delivery. Raises :class:`Rejected` (415) for another type."""
    m = Message()
    m["content-type"] = content_type or ""
    kind = m.get_content_type() if content_type else ""
    if kind not in _TYPES:
        raise Rejected(415, "bad_request", "expected a content-type of 'application/json' or "
                                           "'application/x-www-form-urlencoded'")
    return kind, str(m.get_param("charset") or "utf-8")


def decode_payload(kind: str, charset: str, body: bytes):
    """The JSON value of a verified body. Raises :class:`Rejected` (400) for an empty body, bytes
    that are not text in ``charset``, text that is not JSON (with the line and column where the
    parser stopped), a form without ``payload=``, or JSON nested deeper than :data:`MAX_DEPTH`."""
    if not body.strip():
        raise Rejected(400, "bad_request", "the body is empty")
    try:
        text = body.decode(charset)
    except (UnicodeDecodeError, LookupError):
        raise Rejected(400, "bad_request", "the body is not valid JSON") from None
    if kind == "application/x-www-form-urlencoded":
        fields = urllib.parse.parse_qs(text)
        if not fields.get("payload"):
            raise Rejected(400, "bad_request", "a form-encoded delivery needs a payload= field")
        text = fields["payload"][0]
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        # where the parser stopped (never the body's text: it may hold anything), so a person
        # can find what a proxy cut or rewrote
        raise Rejected(400, "bad_request", f"the body is not valid JSON: {e.msg[:1].lower()}{e.msg[1:]} "
                                           f"at line {e.lineno}, column {e.colno}") from None
    except (ValueError, RecursionError):
        raise Rejected(400, "bad_request", "the body is not valid JSON") from None
    if not isinstance(value, dict):
        # every webhook payload GitHub sends is an object ("Webhook events and payloads")
        raise Rejected(400, "bad_request", f"the JSON body is a {type(value).__name__}, not an object: no webhook payload")
    if _depth(value) > MAX_DEPTH:
        raise Rejected(400, "bad_request", f"the JSON body is nested deeper than {MAX_DEPTH} levels")
    return value


def _depth(value) -> int:
    """Nesting depth of a decoded JSON value (a scalar is 0), walked without recursion."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, dict):
            node = node.values()
        elif not isinstance(node, list):
            continue
        d += 1
        deepest = max(deepest, d)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, d) for child in node)
    return deepest


def check_ids(event: str | None, delivery: str | None) -> tuple[str, str]:
    """``(event, delivery id)`` from the headers. Raises :class:`Rejected` (400) when one is
    missing, empty, or longer than GitHub ever sends (100 / 200 characters)."""
    if event is None:
        raise Rejected(400, "bad_request", "missing header x-github-event")
    if delivery is None:
        raise Rejected(400, "bad_request", "missing header x-github-delivery")
    if not delivery or len(delivery) > 200 or not event or len(event) > 100:
        raise Rejected(400, "bad_request", "X-GitHub-Event and X-GitHub-Delivery must be non-empty (≤ 200 chars)")
    if not (printable(event) and printable(delivery)):
        # the signature does not cover headers: a replayed body can come with any bytes in them
        raise Rejected(400, "bad_request", "X-GitHub-Event and X-GitHub-Delivery must be printable ASCII")
    return event, delivery


def printable(value: str) -> bool:
    """Printable ASCII only (what GitHub's event names, delivery GUIDs and hook ids are)."""
    return value.isascii() and value.isprintable()


def for_log(value: str | None, limit: int = 200) -> str:
    """A header value safe for a log line: ``-`` when absent, else ``repr`` cut to ``limit``
    characters (a forged header cannot start a fake log line)."""
    if value is None:
        return "-"
    return repr(value[:limit])


__all__ = ["MAX_BODY", "MAX_DEPTH", "Rejected", "signature_digest", "new_mac", "signature_matches", "content_kind",
           "decode_payload", "check_ids", "printable", "for_log"]
