"""forksync's own sections of an issue body that people write in too (pure).

A section is the text between ``<!-- forksync:<name>:start -->`` and ``<!-- forksync:<name>:end
-->``; forksync rewrites only that span, so what a person adds above or below it stays. Bodies are
cut to GitHub's limit (:data:`bot.github.limits.BODY_LIMIT`) inside the section, never in a
person's text nor through the markers (a lost end marker would make the next refresh append a
second section).
"""
from __future__ import annotations

import re

from bot import templating
from bot.github.limits import BODY_LIMIT, fit_body


def _bounds(name: str) -> tuple[str, str]:
    return f"<!-- forksync:{name}:start -->", f"<!-- forksync:{name}:end -->"


def replace_section(body: str, name: str, new: str) -> str:
    """``body`` with the ``<!-- forksync:<name>:start -->…end -->`` section replaced by ``new``
    (which carries its own markers); appended when the body has no such section."""
    rx = re.compile(rf"<!-- forksync:{name}:start -->.*?<!-- forksync:{name}:end -->\n?", re.S)
    new = new if new.endswith("\n") else new + "\n"
    if rx.search(body):
        return rx.sub(lambda _: new, body, count=1)
    return body.rstrip("\n") + "\n\n" + new


def placed_section(body: str, name: str, new: str, limit: int = BODY_LIMIT) -> str:
    """:func:`replace_section`, with the new section's own text cut
    (:func:`bot.github.limits.fit_body`) where the whole body would pass GitHub's body limit: what
    a person wrote around it and the section's markers are never what is cut, so the next
    refresh finds the section again (a cut at the body's end would take its end marker, and the
    refresh would then append a second section). ``new`` starts and ends with its markers."""
    whole = replace_section(body, name, new)
    over = len(whole) - limit
    if over <= 0:
        return whole
    start, end = _bounds(name)
    inner = new[len(start):new.rindex(end)]
    return replace_section(body, name, start + fit_body(inner, max(len(inner) - over, 0)) + end)


def has_section(body: str, name: str) -> bool:
    """Does ``body`` hold the whole section ``name`` (both markers, start first)?"""
    start, end = _bounds(name)
    i = body.find(start)
    return i >= 0 and body.find(end, i) >= 0


def kept_current(current: str, name: str, text: str) -> str:
    """Pure: the issue body that gives forksync's section ``name`` the markdown ``text``
    (``templates/github/issue_section.md.j2``: the markers and a line saying text outside stays),
    given the body ``current`` GitHub holds. A body with that section keeps everything outside it;
    one without (written before forksync marked its text, so forksync's whole) becomes the section
    alone."""
    new = templating.render("github/issue_section.md.j2", section=name, body=text.rstrip("\n"))
    return placed_section(current if has_section(current, name) else "", name, new).lstrip("\n")
