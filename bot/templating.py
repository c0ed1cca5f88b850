"""The one jinja2 environment for every text a person reads (``templates/``).

StrictUndefined: a template that names a field the caller did not pass raises
``jinja2.UndefinedError`` naming it, instead of rendering a blank. No autoescape: the output is
Markdown for GitHub; agent text is sanitised by ``bot.agents.textrails`` before it gets here.
"""
from __future__ import annotations

import re
import time
from functools import lru_cache
from pathlib import Path

import jinja2

#: ``bot/templates``: in the source tree a link to the repository's ``templates/``; in an installed
#: wheel the templates themselves (package data, pyproject.toml), so an install needs no source tree.
TEMPLATES = Path(__file__).resolve().parent / "templates"


def utc_minute(ts: float) -> str:
    """``YYYY-MM-DD HH:MM UTC`` of epoch seconds ``ts``, as texts for people show a time (""
    for 0: not known)."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ts)) if ts else ""


def duration(seconds: float) -> str:
    """A span of ``seconds`` as texts for people say how long something has waited: ``45 s`` under
    2 min, ``10 min`` under an hour, ``1.5 h`` under 2 days, then ``2.5 days`` (one decimal, none
    when it is 0)."""
    seconds = max(0.0, float(seconds))
    if seconds < 120:
        return f"{int(seconds)} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f}".removesuffix(".0") + " h"
    return f"{seconds / 86400:.1f}".removesuffix(".0") + " days"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)
    env.filters["code"] = code_span
    env.filters["inert"] = inert
    env.filters["fence"] = fence
    env.filters["duration"] = duration
    return env


def code_span(text: object) -> str:
    """``text`` as one Markdown code span that shows it verbatim (CommonMark 6.1): fenced by a
    backtick run longer than any inside it, padded with a space where it starts or ends with a
    backtick, and on one line. A person's text echoed back this way (a command line with its
    reason) cannot break the reply's markup, and its @mentions ping no one again (the
    ``code`` filter)."""
    t = " ".join(str(text).split("\n"))
    runs = [len(r) for r in re.findall(r"`+", t)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if t.startswith("`") or t.endswith("`") else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def fence(text: object, info: str = "") -> str:
    """``text`` as one fenced code block (CommonMark 4.5) with info string ``info``, fenced by a
    backtick run longer than any inside it (at least three): a line of the text that is itself a
    fence (a conflict hunk of a Markdown file, a docstring's example) cannot close the block and
    turn the rest of the page into code (the ``fence`` filter)."""
    t = str(text).rstrip("\n")
    ticks = "`" * max(3, max((len(r) for r in re.findall(r"`+", t)), default=0) + 1)
    return f"{ticks}{info}\n{t}\n{ticks}"


#: a code span (CommonMark 6.1: a backtick run, then the first run of the same length)
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
#: what GitHub acts on in Markdown outside code: an HTML tag or comment (``<``; an unclosed
#: ``<!--`` hides the rest of the body), an entity (``&``), an @mention of a login or team (it
#: notifies them), and an issue reference ``#123`` / ``GH-123`` (it links, and cross-references,
#: *this* repository's item of that number)
_ACTIVE = re.compile(r"[<&]|(?<![\w`])@(?=[A-Za-z0-9])|(?<![\w&/])#(?=\d)|(?<!\w)(?i:GH)-(?=\d)")
_ENTITY = {"<": "&lt;", "&": "&amp;"}


def inert(text: object, cell: bool = False) -> str:
    """``text`` that comes from git or from someone else's GitHub (an upstream commit subject, a
    reason, an error message) as inline Markdown that shows it as written and acts on nothing (the
    ``inert`` filter): one line; outside its code spans ``<`` and ``&`` as entities (no tag or
    comment can start), and a zero-width joiner after the ``@`` of a mention and the ``#`` (or
    ``-`` of ``GH-``) of an issue reference, so that no one is notified and nothing links to the
    item of that number in the repository the text is shown in — upstream's ``(#4567)`` is
    upstream's pull request, not the fork's #4567. Code spans are kept as they are: GitHub acts on
    nothing inside them. ``cell``: the text is a table cell's (``inert(cell=True)``), so every
    ``|`` is escaped, in code spans too, as GitHub's tables need (GFM 4.10)."""
    t = " ".join(str(text).splitlines())
    out, at = [], 0
    for m in _CODE_SPAN.finditer(t):
        out.append(_ACTIVE.sub(_neutral, t[at:m.start()]))
        out.append(m.group(0))
        at = m.end()
    out.append(_ACTIVE.sub(_neutral, t[at:]))
    joined = "".join(out)
    return joined.replace("|", "\\|") if cell else joined


def _neutral(m: re.Match) -> str:
    c = m.group(0)
    return _ENTITY.get(c) or c + "\u200d"


#: a fenced code block's fence line (CommonMark 4.5: up to 3 spaces, then 3+ backticks or tildes)
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def fence_after(fence: str, line: str) -> str:
    """The fence of the code block open after ``line`` (``""``: none), given ``fence``, the one
    open before it (CommonMark 4.5: a fence line opens a block; a line of the same character, at
    least as long, with nothing after it but blanks, closes it). Read line by line, it tells which
    lines of a Markdown text are code."""
    m = _FENCE.match(line)
    if not fence:
        return m.group(1) if m else ""
    closes = m is not None and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line[m.end():].strip()
    return "" if closes else fence


#: What a page may link to: an http(s) address with a host, or a path of the dashboard's own
#: ("/forks/…", never "//host" or "/\\host", which browsers read as another host). No space or
#: control character anywhere: browsers drop tabs and newlines inside a URL and leading spaces
#: before its scheme, so "java\tscript:" and " javascript:" are script links to them.
_HREF = re.compile(r"(?:[hH][tT][tT][pP][sS]?://[^/\\?#\s\x00-\x1f\x7f]|/(?![/\\]))[^\s\x00-\x1f\x7f]*")


def href(value: object) -> str:
    """``value`` when a page may link to it (an http(s) URL or a site-relative path, see
    ``_HREF``), else ``""``. Autoescape keeps a ``javascript:`` or ``data:`` URL whole inside
    ``href="…"``, where a click runs it; every href of the dashboard whose value comes from data
    (a stored ``html_url``, a check run's URL) goes through this (the ``href`` filter), and a
    template shows the link's text alone when it answers ``""``."""
    return value if isinstance(value, str) and _HREF.fullmatch(value) else ""


@lru_cache(maxsize=1)
def html_environment() -> jinja2.Environment:
    """The environment for the dashboard's HTML pages (``templates/dashboard/``): the same loader
    and strictness, with autoescape, since every value on a page is data (subjects, reasons), and
    the ``href`` filter (:func:`href`) for links whose address is data."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, autoescape=True)
    env.filters["href"] = href
    return env


def render_html(name: str, **context) -> str:
    """Render the HTML template ``templates/<name>`` with autoescape; errors as :func:`render`."""
    return html_environment().get_template(name).render(**context)


def render_part(name: str, part: str, /, **context) -> str:
    """The block ``part`` of ``templates/<name>`` rendered with ``context``: a template holds a
    family of texts (a CLI command's messages, one block each) and a caller prints one at a time.
    No newline is added; errors as :func:`render`, and ``KeyError`` for a block the template
    lacks."""
    t = environment().get_template(name)
    return "".join(t.blocks[part](t.new_context(dict(context))))


def render(name: str, **context) -> str:
    """Render ``templates/<name>`` with ``context``; raises ``jinja2.TemplateNotFound`` /
    ``jinja2.UndefinedError`` naming the template and the missing field."""
    return environment().get_template(name).render(**context)
