"""Conflict markers and conflict commits: the pure rules (no git, no I/O).

The marker rule (used by the merge gate on the real trees of a PR, :mod:`bot.git.markers`):

=====================  ====================================================================
line                   is a marker when
=====================  ====================================================================
``<<<<<<<`` ``|||||||``  it starts with a run of at least ``size`` ``<``, ``|`` or ``>`` (7, or
``>>>>>>>``              the path's ``conflict-marker-size`` attribute) followed by whitespace
                       (space, tab, CR) or the end of the line
``=======``            the same with ``=``, **and** it lies inside an open conflict: after a
                       ``<``/``|`` marker and before the ``>`` marker that closes it — or,
                       outside a markup file (:func:`separators_alone_count`), it is the whole
                       line (a run of ``=`` and trailing whitespace)
=====================  ====================================================================

Why "at least" and not git's "exactly ``size``": git writes longer markers (``size + 2`` per
level) for conflicts inside the virtual base of a recursive merge, and a person may paste any of
them; a 9- or 10-character or tab-terminated marker is as much a left-over conflict as a
7-character one. Why ``=`` inside a conflict: a run of ``=`` alone is a reStructuredText
heading rule or table border (this docstring has some), never evidence on its own — in a
markup file. In code (C++, Python, TableGen, MLIR …) a line that is only a run of ``=`` is what a
half-resolved conflict leaves when a person deletes its ``<<<<<<<`` and ``>>>>>>>`` lines and
forgets the separator; ``git diff --check`` calls it a left-over marker too. Such a line counts
only when it is exactly the separator git writes — ``size`` ``=``, nothing else — and no title's
rule (under text at the line's start no longer than it, above a blank line, or over and under
such a title). Longer rules are common in code: sphinx-gallery tutorials (upstream's
``python/tutorials/*.py``) open with an rst title in their docstring, and banners in strings
frame messages; in upstream Triton (``a4ce9c2a2`` and the fork's ``main``) 20 files hold such
rules and no code file a 7-character one. Markup is told by
the path's suffix (:data:`MARKUP_SUFFIXES`): reStructuredText, Markdown, AsciiDoc, plain text,
and a name without one (``README``);
and a file with a NUL in its first 8000 bytes, into which git writes no markers at all, has
none left by a half resolution either (:func:`bot.git.markers.files_with_markers`).

Every file is scanned, binary-looking or not. git calls a blob binary when its first 8000 bytes
hold a NUL (``buffer_is_binary``) and then merges it without writing markers, but a person can
still commit marker lines into it (a generated file, a test input with an embedded ``\0``);
and libgit2's ``is_binary`` also calls binary a file with one non-printable byte per 128
printable ones — a SOH-delimited FIX log, say — into which git, seeing no NUL, does write
markers. What keeps real binaries (images, weights, archives, object files) out is the line
rule itself: a run counts only at the start of a line (the first byte, or right after a
``\n``) and only when whitespace or the line's end follows it, so the ``<<<<<<<`` of a string
table (after a NUL) or of random bytes mid-line never counts, and random bytes start a marker
line about once in 2**64 positions.

A *conflict commit* is a commit a stopped chain carries on its branch while a conflict waits for
a person; its message has the trailer ``Forksync-Conflict: <40-hex upstream sha>``. After the
resolution it is folded away, so while one is in a PR's range the PR must not merge.
"""
from __future__ import annotations

import re

#: git's default ``conflict-marker-size`` (gitattributes(5)).
DEFAULT_MARKER_SIZE = 7

#: Trailer a conflict commit carries: ``Forksync-Conflict: <40-hex upstream sha>``.
CONFLICT_TRAILER = "Forksync-Conflict"

_CONFLICT_RX = re.compile(r"^Forksync-Conflict:[ \t]*([0-9a-fA-F]{40})[ \t]*$", re.MULTILINE)

#: Path suffixes of markup files, where a line of ``=`` alone is a heading rule or a table border.
MARKUP_SUFFIXES = (".rst", ".rest", ".txt", ".md", ".markdown", ".mdx", ".adoc", ".asciidoc")


def separators_alone_count(path: str) -> bool:
    """Whether a line that is only a run of ``=`` counts as a conflict marker in ``path`` outside
    an open conflict: everywhere but in markup files (:data:`MARKUP_SUFFIXES`, any case) and
    files named without a suffix (``README``, ``NEWS``, ``CHANGES``: text, as a rule)."""
    name = path.rsplit("/", 1)[-1].lower()
    return "." in name.lstrip(".") and not name.endswith(MARKUP_SUFFIXES)


# Marker kinds, by their character: ``<`` ours starts, ``|`` diff3 base, ``=`` separator, ``>`` theirs ends.
_OPENERS = "<|"


def _run_kind(line: str, size: int) -> str | None:
    """The marker character of ``line`` when it starts with ≥ ``size`` of one of ``<|=>`` followed
    by whitespace or the end of the line; else None."""
    if not line or line[0] not in "<|=>":
        return None
    c = line[0]
    n = len(line) - len(line.lstrip(c))
    if n < size:
        return None
    rest = line[n:]
    if rest and not rest[0].isspace():
        return None
    return c


def marker_lines(text: str, size: int = DEFAULT_MARKER_SIZE, *,
                 separators_alone: bool = False) -> list[tuple[int, str]]:
    """The conflict-marker lines of ``text`` as ``(line number, kind)``: 1-based line numbers
    (lines split on ``\\n`` only, as git counts them; a trailing ``\\r`` is whitespace), ``kind``
    one of ``<`` (ours), ``|`` (diff3 base), ``=`` (separator), ``>`` (theirs). ``size`` is the
    minimum run length (git's ``conflict-marker-size``, default 7; values below 1 count as 1).
    ``separators_alone``: a line that is only a run of ``=`` counts outside a conflict too (the
    file is no markup file: :func:`separators_alone_count`). Rule and its source: this module's
    docstring."""
    size = max(1, int(size))
    out: list[tuple[int, str]] = []
    open_ = False
    lines = text.split("\n")
    for i, line in enumerate(lines, start=1):
        kind = _run_kind(line, size)
        if kind is None:
            continue
        if kind == "=":
            if open_ or (separators_alone and _lone_rule(line, size) and not _title_rule(lines, i - 1)):
                out.append((i, kind))
            continue
        out.append((i, kind))
        open_ = kind in _OPENERS
    return out


def _lone_rule(line: str, size: int | None = None) -> bool:
    """Whether ``line`` is only a run of ``=`` (trailing whitespace allowed) — of exactly ``size``
    when given, the separator git writes for a conflict —: not a table border (``===== =====``)
    nor a rule with words after it."""
    body = line.rstrip(" \t\r")
    return bool(body) and not body.strip("=") and (size is None or len(body) == size)


def _title_rule(lines: list[str], i: int) -> bool:
    """Whether the rule ``lines[i]`` underlines or overlines a title, as reStructuredText and
    sphinx-gallery docstrings write one in code files (``Vector Addition`` over a rule as long):
    the line above it is text at the start of the line, no longer than the rule, and a blank line
    (or an overline over the title) follows — or it is the overline, a rule under the title. A
    separator a half resolution left sits between lines of code."""
    width = len(lines[i].rstrip(" \t\r"))

    def title(j: int) -> bool:
        if not 0 <= j < len(lines):
            return False
        t = lines[j].rstrip(" \t\r")
        return bool(t) and not t[0].isspace() and len(t) <= width and not _lone_rule(t)

    def rule(j: int) -> bool:
        return 0 <= j < len(lines) and _lone_rule(lines[j])

    def blank(j: int) -> bool:
        return not 0 <= j < len(lines) or not lines[j].strip()

    # an underline: a blank line (or a rule over the title) follows; an overline: a rule under the title
    return (title(i - 1) and (blank(i + 1) or rule(i - 2))) or (title(i + 1) and rule(i + 2))


def has_markers(text: str, size: int = DEFAULT_MARKER_SIZE) -> bool:
    """Whether ``text`` has any conflict-marker line by :func:`marker_lines`' rule."""
    return bool(marker_lines(text, size))


def conflict_upstream(message: str) -> str | None:
    """The upstream sha (lower-case, 40 hex) of a ``Forksync-Conflict:`` trailer in a commit
    message, else None. The trailer must be a line of its own (``Key: value``, any paragraph)."""
    m = _CONFLICT_RX.search(message or "")
    return m.group(1).lower() if m else None
