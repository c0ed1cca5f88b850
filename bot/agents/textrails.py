"""Rails for agent *prose* before it is rendered into a PR/issue body (pure).

:func:`sanitize` applies, in order:

1. secrets redacted again (a model may echo a value it should never have seen), including every
   configured secret's value (:func:`bot.agents.redact.register_secrets`);
2. outside code (fenced blocks of any length, indented blocks, inline code — found with
   markdown-it-py, the CommonMark parser), character references are decoded to a fixed point
   (``&#64;everyone`` is ``@everyone`` to the checks below, as it is to a reader) and HTML is
   removed by nh3 (the ammonia sanitiser; script/style content goes with its tags; comments too:
   one could forge the hidden markers forksync uses to find its own issues). A ``<`` that does
   not open a complete tag of a real HTML element (``std::vector<int>``, ``a < b``) stays text;
3. links limited: images removed; every link destination (inline, ``<autolink>``, reference
   definition, bare ``scheme:`` or ``www.`` URL) is judged by the host a browser would resolve
   — WHATWG URL parsing (ada-url) against ``https://github.com/``: protocol-relative ``//host``,
   backslashes (``https://evil.com\\.github.com`` is ``evil.com``), userinfo
   (``https://github.com@evil.com``) and IDNA (a homograph becomes its ``xn--`` form) all resolve
   as in the browser. Links to hosts outside ``allowed_hosts`` and past ``max_links`` become
   ``[link removed: <host>]``; a relative link stays on GitHub and is kept. A last check parses the
   result as Markdown and, if any live link still points elsewhere, escapes every bracket;
4. @-mentions neutralised with a zero-width joiner after ``@`` (``@\u200duser`` renders as
   ``@user`` but notifies nobody), except up to ``max_mentions`` logins from ``allowed_mentions``;
   team mentions (``@org/team``) and ``@everyone``/``@here``/``@channel`` are always neutralised;
5. closing keywords neutralised, in both forms GitHub honours — ``fixes #12`` / ``org/repo#3``
   (a joiner after ``#``) and ``Fixes https://github.com/org/repo/issues/1`` (a joiner inside the
   keyword) — so merging a PR never closes an issue because an agent said so;
6. length capped at ``max_chars``.

The result says what was changed (:class:`SanitizedText`) so templates can show a reviewer that
the rails acted. Sources: GitHub resolves mentions on ``@login`` tokens only; closing keywords:
docs.github.com "Linking a pull request to an issue"; URL parsing: url.spec.whatwg.org.
"""
from __future__ import annotations

import html as htmllib
import re
from dataclasses import dataclass

import ada_url
import nh3
from markdown_it import MarkdownIt

from bot.agents.redact import Redactor

ZWJ = "\u200d"

_HTML_COMMENT = re.compile(r"<!--[\s\S]*?(?:-->|\Z)")
#: Element names of HTML (WHATWG HTML, including obsolete ones browsers still parse) and the SVG/MathML roots.
_HTML_ELEMENTS = (
    "a|abbr|acronym|address|applet|area|article|aside|audio|b|base|basefont|bdi|bdo|bgsound|big|blink|blockquote|"
    "body|br|button|canvas|caption|center|cite|code|col|colgroup|data|datalist|dd|del|details|dfn|dialog|dir|div|dl|"
    "dt|em|embed|fieldset|figcaption|figure|font|footer|form|frame|frameset|g-emoji|h[1-6]|head|header|hgroup|hr|"
    "html|i|iframe|image|img|input|ins|isindex|kbd|keygen|label|legend|li|link|listing|main|map|mark|marquee|math|"
    "menu|menuitem|meta|meter|multicol|nav|nextid|nobr|noembed|noframes|noscript|object|ol|optgroup|option|output|"
    "p|param|picture|plaintext|pre|progress|q|rb|rp|rt|rtc|ruby|s|samp|script|search|section|select|slot|small|"
    "source|spacer|span|strike|strong|style|sub|summary|sup|svg|table|tbody|td|template|textarea|tfoot|th|thead|"
    "time|title|tr|track|tt|u|ul|var|video|wbr|xmp")
#: A complete CommonMark open or closing tag of a real element (what GitHub would treat as HTML).
_HTML_TAG = re.compile(rf"</?(?:{_HTML_ELEMENTS})(?=[\s/>])(?:\s[^<>]*)?/?>", re.IGNORECASE)
#: A ``<`` that starts neither a comment nor such a tag: it stays text.
_NOT_A_TAG = re.compile(rf"<(?!!--|/?(?:{_HTML_ELEMENTS})(?=[\s/>])(?:\s[^<>]*)?/?>)", re.IGNORECASE)
_SENTINEL = "\ue000"      # a private-use character standing for a text ``<`` while nh3 runs
_INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)")
_IMAGE = re.compile(r"!\[[^\[\]]*+\](?:\([^)]{0,2048}+\)|\[[^\[\]]*+\])?")
# Linear in the text, whatever the model writes: a link text holds no "[" (each "[" starts a scan
# that ends at the next bracket), nothing is re-scanned on failure (possessive quantifiers) and a
# destination is at most 2 KB. A link these miss (nested link text, a longer destination) is left
# to the parser's last check in sanitize, which escapes every bracket.
_MD_LINK = re.compile(r"\[([^\[\]]*+)\]\(\s*+(<[^>\n]{0,2048}+>|[^\s)]{0,2048}+)[^)]{0,2048}+\)")
_REF_DEF = re.compile(r"^ {0,3}\[[^\[\]]+\]:[ \t]*\n?[ \t]*(<[^>\n]*>|\S+).*$", re.MULTILINE)
_BARE_URL = re.compile(r"(?<![\w(/\[])(?:https?|ftp|file|javascript|data|vbscript):[^\s<>()\[\]`\"']+", re.IGNORECASE)
_WWW = re.compile(r"(?<![\w@./:\-\\])www\.[^\s<>()\[\]`\"']+", re.IGNORECASE)
_MENTION = re.compile(r"(?<![\w`@\u200d])@([A-Za-z0-9](?:[A-Za-z0-9\-]{0,38})(?:/[A-Za-z0-9_.\-]+)?)")
_KEYWORD = r"(?i:\b(close[sd]?|fix(?:e[sd])?|resolve[sd]?))"
_CLOSING = re.compile(_KEYWORD + r"(\s*:?\s+)((?:[\w.\-]+/[\w.\-]+)?#\d+)")
_CLOSING_URL = re.compile(_KEYWORD + r"(\s*:?\s+<?)(https?://[^\s/<>]+/[\w.\-]+/[\w.\-]+/(?:issues|pull)/\d+)")
#: Where agent text is shown; a relative link resolves against it and stays on GitHub.
PAGE_BASE = "https://github.com/"
_MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])
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


@dataclass(frozen=True)
class LinkTarget:
    """Where a link destination leads once a browser resolves it: ``scheme`` (``https``…),
    ``host`` (lower-case, IDNA ``xn--`` form; empty for ``javascript:`` and the like),
    ``relative`` (written without scheme or host, so it stays on the page's host), ``valid``."""

    scheme: str
    host: str
    relative: bool
    valid: bool = True


def link_target(dest: str, base: str = PAGE_BASE) -> LinkTarget:
    """Resolve a link destination as a browser does (WHATWG URL Standard, via ada-url) against
    ``base``: ``//evil.com/x`` → evil.com, ``https://evil.com\\.github.com/`` → evil.com (a
    backslash is a slash in special schemes), ``https://github.com@evil.com/`` → evil.com
    (userinfo), ``https://gіthub.com`` (Cyrillic і) → ``xn--gthub-n4e.com``, ``docs/x.md`` →
    github.com, relative. Never raises: an unparsable destination is ``valid=False``."""
    d = (dest or "").strip()
    if d.startswith("<") and d.endswith(">"):
        d = d[1:-1].strip()
    absolute = ada_url.check_url(d)
    try:
        url = ada_url.URL(d) if absolute else ada_url.URL(d, base)
    except ValueError:
        return LinkTarget("", "", False, valid=False)
    scheme = url.protocol.rstrip(":").lower()
    host = (url.hostname or "").lower()
    base_host = ada_url.URL(base).hostname
    return LinkTarget(scheme, host, relative=not absolute and host == base_host)


def _unescape_fully(text: str) -> str:
    """Character references decoded until none is left (``&amp;#64;`` → ``&#64;`` → ``@``)."""
    for _ in range(8):
        decoded = htmllib.unescape(text)
        if decoded == text:
            break
        text = decoded
    return text


def _code_spans(text: str) -> list[tuple[bool, str]]:
    """``text`` cut into ``(is_code, piece)`` runs: fenced and indented code blocks as
    markdown-it-py finds them (fences of any length, unclosed ones to the end), and inline code
    spans in the rest. Joining the pieces gives ``text`` back."""
    lines = text.split("\n")
    code_lines = [False] * len(lines)
    for tok in _MARKDOWN.parse(text):
        if tok.type in ("fence", "code_block") and tok.map:
            for i in range(tok.map[0], min(tok.map[1], len(lines))):
                code_lines[i] = True
    out: list[tuple[bool, str]] = []
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and code_lines[j] == code_lines[i]:
            j += 1
        piece = "\n".join(lines[i:j]) + ("\n" if j < len(lines) else "")
        if code_lines[i]:
            out.append((True, piece))
        else:
            pos = 0
            for m in _INLINE_CODE.finditer(piece):
                out.append((False, piece[pos:m.start()]))
                out.append((True, m.group(0)))
                pos = m.end()
            out.append((False, piece[pos:]))
        i = j
    return [(c, p) for c, p in out if p]


def _clean_html(prose: str) -> tuple[str, int]:
    """Prose (no code) with references decoded and HTML removed by nh3; returns the text and how
    many tags/comments went."""
    text = _unescape_fully(prose).replace(_SENTINEL, "")
    removed = len(_HTML_COMMENT.findall(text)) + len(_HTML_TAG.findall(text))
    if not removed:
        return text, 0
    cleaned = nh3.clean(_NOT_A_TAG.sub(_SENTINEL, text), tags=set(), strip_comments=True)
    # nh3 escapes every text "&", "<", ">"; undoing that once gives the text back exactly (no
    # reference was left before), and no "<" it left as text can open a tag.
    return htmllib.unescape(cleaned).replace(_SENTINEL, "<"), removed


def live_links(text: str) -> list[str]:
    """Destinations of the links and images that Markdown rendering of ``text`` would create
    (markdown-it-py, CommonMark: inline, reference and ``<autolink>`` forms)."""
    out: list[str] = []
    stack = list(_MARKDOWN.parse(text))
    while stack:
        tok = stack.pop()
        if tok.type == "link_open":
            out.append(str(tok.attrs.get("href", "")))
        elif tok.type == "image":
            out.append(str(tok.attrs.get("src", "")))
        stack.extend(tok.children or [])
    return out[::-1]


def sanitize(text: str, *, allowed_hosts=("github.com",), max_links: int = 5, max_mentions: int = 0,
             allowed_mentions=(), max_chars: int = 6000, redactor: Redactor | None = None) -> SanitizedText:
    """Apply the output rails to agent prose; see the module docstring. Never raises."""
    text = text or ""
    r = redactor or Redactor()
    before = sum(r.counts.values())
    text = r.redact(text, source="agent-output")
    secrets = sum(r.counts.values()) - before

    html = 0
    pieces = []
    for is_code, piece in _code_spans(text):
        if not is_code:
            piece, n = _clean_html(piece)
            html += n
        pieces.append(piece)
    text = "".join(pieces)

    links_kept = 0
    links_removed = 0

    def _judge(url: str) -> str | None:
        """None when the link may stay, else the replacement text."""
        nonlocal links_kept, links_removed
        t = link_target(url)
        if t.valid and t.relative:
            return None
        if (t.valid and t.scheme in {"http", "https"} and host_allowed(t.host, allowed_hosts)
                and links_kept < max_links):
            links_kept += 1
            return None
        links_removed += 1
        return f"[link removed: {t.host or t.scheme or 'unknown'}]"

    def _image(m):
        nonlocal links_removed
        links_removed += 1
        return "[image removed]"

    text = _IMAGE.sub(_image, text)

    def _md(m):
        rep = _judge(m.group(2))
        return m.group(0) if rep is None else f"{m.group(1)} {rep}"

    text = _MD_LINK.sub(_md, text)

    def _ref(m):
        rep = _judge(m.group(1))
        return m.group(0) if rep is None else rep

    text = _REF_DEF.sub(_ref, text)

    def _bare(m):
        rep = _judge(m.group(0))
        return m.group(0) if rep is None else rep

    def _www(m):
        rep = _judge("http://" + m.group(0))
        return m.group(0) if rep is None else rep

    # Bare URLs outside the markdown links already judged.
    parts = re.split(r"(\[[^\[\]]*+\]\([^)]{0,2048}+\))", text)
    text = "".join(p if i % 2 else _WWW.sub(_www, _BARE_URL.sub(_bare, p)) for i, p in enumerate(parts))

    # Last check, by the parser: a link form the patterns above did not see (nested brackets in
    # a link text …) must not stay live. Escaping every bracket turns all links into text.
    stray = [u for u in live_links(text) if _judge_quietly(u, allowed_hosts)]
    if stray:
        links_removed += len(stray)
        text = "".join(p if code else p.replace("[", "\\[").replace("]", "\\]").replace("<", "\\<")
                       for code, p in _code_spans(text))

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

    def _close_url(m):
        nonlocal closing
        closing += 1
        return m.group(1)[0] + ZWJ + m.group(1)[1:] + m.group(2) + m.group(3)

    text = _CLOSING.sub(_close, text)
    text = _CLOSING_URL.sub(_close_url, text)

    truncated = len(text) > max_chars
    if truncated:
        text = text[: max_chars - 1].rstrip() + "…"
    return SanitizedText(text, secrets, html, links_removed, neutral, closing, truncated, decorators, live)


def _judge_quietly(url: str, allowed_hosts) -> bool:
    """Whether a link Markdown would render leads off the allowed hosts (or is not http(s))."""
    t = link_target(url)
    if not t.valid:
        return True
    if t.relative:
        return False
    return t.scheme not in {"http", "https"} or not host_allowed(t.host, allowed_hosts)


def fence(code: str, lang: str = "") -> str:
    """``code`` in a Markdown code fence longer than any backtick run inside it (so agent text
    cannot close the fence and escape into the page)."""
    longest = max((len(m) for m in re.findall(r"`+", code or "")), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{code.rstrip()}\n{ticks}"
