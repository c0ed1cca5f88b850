"""GitHub's size limits on what forksync writes, and texts cut to fit them (pure).

GitHub refuses (422, ``Validation Failed``) an issue, pull request or comment **body** over
65,536 characters ("body is too long (maximum is 65536 characters)") and an issue or pull request
**title** over 256 ("title is too long (maximum is 256 characters)"); a check run's
``output.summary`` and ``output.text`` hold at most 65,535 each, counted in bytes (UTF-8; public
report github/docs#35252). The limits are stated in those
answers, not in the REST reference; bots meet them on long generated texts (Renovate,
release-please, Owl Bot: public reports). A refused body would block a unit for good, so every
text is cut to fit before it is sent: at a line break, closing a code fence the cut leaves open,
with a line saying how much was cut (``templates/github/body_cut.md.j2``).
"""
from __future__ import annotations

from bot import templating

BODY_LIMIT = 65536
TITLE_LIMIT = 256
CHECK_TEXT_LIMIT = 65535
#: characters of conflict hunks one sync PR body shows: the rest of the body (the chain's commit
#: table, how to finish it, the commands, an agent's section) must stay within BODY_LIMIT, or the
#: cut at its end takes the instructions away from the person who resolves the conflict
HUNKS_BUDGET = 30_000
#: characters kept free below a limit: GitHub may count a character outside the Basic
#: Multilingual Plane (an emoji) as two where Python counts one
MARGIN = 256


def _open_fence(text: str) -> str:
    """The fence (```` ``` ````, ``~~~`` …) a code block that ``text`` opens and never closes
    begins with, else ``""`` (:func:`bot.templating.fence_after`)."""
    fence = ""
    for line in text.splitlines():
        fence = templating.fence_after(fence, line)
    return fence


def fit_body(text: str, limit: int = BODY_LIMIT) -> str:
    """``text`` when it has at most ``limit`` characters, else its head cut at a line break
    (``MARGIN`` below the limit), a code fence it leaves open closed, and the note of how many
    characters were cut — at most ``limit`` characters in all."""
    if len(text) <= limit:
        return text
    widest = templating.render("github/body_cut.md.j2", cut=len(text), limit=limit)
    room = max(limit - MARGIN - len(widest) - 8, 0)
    cut = text.rfind("\n", 0, room)
    if cut < room // 2:
        cut = room
    head = text[:cut]
    fence = _open_fence(head)
    if fence:
        head += "\n" + fence
    return head + templating.render("github/body_cut.md.j2", cut=len(text) - cut, limit=limit)


def fit_title(title: str, limit: int = TITLE_LIMIT) -> str:
    """``title`` when it has at most ``limit`` characters, else cut at a word with ``…``."""
    if len(title) <= limit:
        return title
    head = title[:limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip() + "…"


def fit_check_text(text: str, limit: int = CHECK_TEXT_LIMIT) -> str:
    """A check run's ``output.summary`` or ``output.text`` cut to ``limit`` UTF-8 bytes, as
    :func:`fit_body` cuts (a character of more than one byte counts as its bytes)."""
    size = len(text.encode())
    if size <= limit:
        return text
    # a cut to n characters keeps at most n + (size - len(text)) bytes: the extra bytes go first
    return fit_body(text, max(limit - (size - len(text)), 0))


def shown_hunks(files: list[dict], budget: int = HUNKS_BUDGET) -> list[dict]:
    """The conflicted files of a stopped pick (``[{"path", "kind", "hunks": [str], "old_path"}]``)
    as a PR body shows them: each with ``hunks`` kept in order while all the kept ones fit in
    ``budget`` characters (the first hunk that does not fit ends the showing, for that file and
    the later ones) and ``hunks_total``, how many hunks it has."""
    out, used, full = [], 0, False
    for f in files:
        kept = []
        for h in f["hunks"]:
            if full or used + len(h) > budget:
                full = True
                break
            kept.append(h)
            used += len(h)
        out.append({**f, "hunks": kept, "hunks_total": len(f["hunks"])})
    return out
