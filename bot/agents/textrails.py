"""Rails for agent *prose* before it is rendered into a PR/issue body (pure).

:func:`sanitize` applies, in order:

1. secrets redacted again (a model may echo a value it should never have seen);
2. HTML stripped: comments and the tags GitHub renders (a comment could forge the hidden markers forksync uses to
   find its own issues; GitHub renders raw HTML in Markdown);
3. links limited: images removed, links to hosts outside ``allowed_hosts`` and links past
   ``max_links`` replaced by ``[link removed: <host>]``;
4. @-mentions neutralised with a zero-width joiner after ``@`` (``@\u200duser`` renders as
   ``@user`` but notifies nobody), except up to ``max_mentions`` logins from ``allowed_mentions``;
   team mentions (``@org/team``) and ``@everyone``/``@here``/``@channel`` are always neutralised;
5. closing keywords (``fixes #12``) neutralised, so merging a PR never closes an issue because an
   agent said so;
6. length capped at ``max_chars``.

The result says what was changed (:class:`SanitizedText`) so templates can show a reviewer that
the rails acted. Source of the ZWJ trick: GitHub resolves mentions on ``@login`` tokens only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from bot.agents.redact import Redactor

ZWJ = "\u200d"

_HTML_COMMENT = re.compile(r"<!--[\s\S]*?(?:-->|\Z)")
#: Tags GitHub renders (or that could hurt if it did); other ``<word>`` (C++ templates such as
#: ``std::vector<int>``) stays as text: GitHub's sanitiser drops unknown tags, so they are inert.
_HTML_TAGS = ("a|abbr|b|base|blockquote|body|br|button|center|code|del|details|dd|div|dl|dt|em|embed|font|form|"
              "frame|h[1-6]|head|hr|html|i|iframe|img|input|ins|kbd|li|link|marquee|meta|object|ol|p|picture|pre|"
              "q|s|samp|script|section|select|source|span|strike|strong|style|sub|summary|sup|svg|table|tbody|td|"
              "textarea|tfoot|th|thead|title|tr|tt|u|ul|var|video")
_HTML_TAG = re.compile(rf"</?(?:{_HTML_TAGS})(?:\s[^<>]*)?/?>", re.IGNORECASE)
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]*)\]\(\s*(<?[a-zA-Z][a-zA-Z0-9+.\-]*:[^)\s]*>?)[^)]*\)")
_BARE_URL = re.compile(r"(?<![\w(/\[])(?:https?|ftp|file|javascript|data):[^\s<>()\[\]`\"']+", re.IGNORECASE)
_MENTION = re.compile(r"(?<![\w`@\u200d])@([A-Za-z0-9](?:[A-Za-z0-9\-]{0,38})(?:/[A-Za-z0-9_.\-]+)?)")
_CLOSING = re.compile(r"(?i)\b(close[sd]?|fix(?:e[sd])?|resolve[sd]?)(\s*:?\s+)((?:[\w.\-]+/[\w.\-]+)?#\d+)")
_ALWAYS_NEUTRAL = frozenset({"everyone", "here", "channel", "all", "team"})


@dataclass(frozen=True)
class SanitizedText:
    text: str
    secrets_redacted: int = 0
    html_removed: int = 0
    links_removed: int = 0
    mentions_neutralised: int = 0
    closing_keywords_neutralised: int = 0
    truncated: bool = False
    decorators_neutralised: int = 0       # of mentions_neutralised: ``@triton.jit``-like, not an attempt to ping
    mentions_kept: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.secrets_redacted or self.html_removed or self.links_removed
                    or self.mentions_neutralised or self.closing_keywords_neutralised or self.truncated)

    def notes(self) -> list[str]:
        """Human-readable list of what the rails changed (for templates)."""
        out = []
        if self.secrets_redacted:
            out.append(f"{self.secrets_redacted} secret value(s) redacted")
        if self.html_removed:
            out.append(f"{self.html_removed} HTML tag(s)/comment(s) removed")
        if self.links_removed:
            out.append(f"{self.links_removed} link(s) removed")
        if self.mentions_neutralised:
            out.append(f"{self.mentions_neutralised} @-mention(s) neutralised")
        if self.closing_keywords_neutralised:
            out.append(f"{self.closing_keywords_neutralised} issue-closing keyword(s) neutralised")
        if self.truncated:
            out.append("text truncated")
        return out


def host_allowed(host: str, allowed_hosts) -> bool:
    """``host`` equals an allowed host or is a subdomain of one (``docs.github.com`` ⊂ ``github.com``)."""
    host = (host or "").lower().rstrip(".")
    return any(host == h or host.endswith("." + h) for h in allowed_hosts)


def sanitize(text: str, *, allowed_hosts=("github.com",), max_links: int = 5, max_mentions: int = 0,
             allowed_mentions=(), max_chars: int = 6000, redactor: Redactor | None = None) -> SanitizedText:
    """Apply the output rails to agent prose; see the module docstring. Never raises."""
    text = text or ""
    r = redactor or Redactor()
    before = sum(r.counts.values())
    text = r.redact(text, source="agent-output")
    secrets = sum(r.counts.values()) - before

    html = 0

    def _drop(_m):
        nonlocal html
        html += 1
        return ""

    text = _HTML_COMMENT.sub(_drop, text)
    text = _HTML_TAG.sub(_drop, text)

    links_kept = 0
    links_removed = 0

    def _judge(url: str) -> str | None:
        """None when the link may stay, else the replacement text."""
        nonlocal links_kept, links_removed
        parts = urlsplit(url.strip("<>"))
        host = parts.hostname or ""
        if parts.scheme.lower() in {"http", "https"} and host_allowed(host, allowed_hosts) and links_kept < max_links:
            links_kept += 1
            return None
        links_removed += 1
        return f"[link removed: {host or parts.scheme or 'unknown'}]"

    def _image(m):
        nonlocal links_removed
        links_removed += 1
        return "[image removed]"

    text = _IMAGE.sub(_image, text)

    def _md(m):
        rep = _judge(m.group(2))
        return m.group(0) if rep is None else f"{m.group(1)} {rep}"

    text = _MD_LINK.sub(_md, text)

    def _bare(m):
        rep = _judge(m.group(0))
        return m.group(0) if rep is None else rep

    # Bare URLs outside the markdown links already judged.
    pieces = re.split(r"(\[[^\]]*\]\([^)]*\))", text)
    text = "".join(p if i % 2 else _BARE_URL.sub(_bare, p) for i, p in enumerate(pieces))

    allowed_logins = {a.lower() for a in allowed_mentions}
    live = 0
    neutral = 0
    decorators = 0

    def _mention(m):
        nonlocal live, neutral, decorators
        login = m.group(1)
        after = m.string[m.end():m.end() + 2]
        if "/" not in login and len(after) == 2 and after[0] == "." and (after[1].isalpha() or after[1] == "_"):
            decorators += 1
        if ("/" not in login and login.lower() in allowed_logins and login.lower() not in _ALWAYS_NEUTRAL
                and live < max_mentions):
            live += 1
            return m.group(0)
        neutral += 1
        return "@" + ZWJ + login

    text = _MENTION.sub(_mention, text)

    closing = 0

    def _close(m):
        nonlocal closing
        closing += 1
        return m.group(1) + m.group(2) + m.group(3).replace("#", "#" + ZWJ)

    text = _CLOSING.sub(_close, text)

    truncated = len(text) > max_chars
    if truncated:
        text = text[: max_chars - 1].rstrip() + "…"
    return SanitizedText(text, secrets, html, links_removed, neutral, closing, truncated, decorators, live)


def fence(code: str, lang: str = "") -> str:
    """``code`` in a Markdown code fence longer than any backtick run inside it (so agent text
    cannot close the fence and escape into the page)."""
    longest = max((len(m) for m in re.findall(r"`+", code or "")), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{code.rstrip()}\n{ticks}"
