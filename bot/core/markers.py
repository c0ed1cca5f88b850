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
forgets the separator; ``git diff --check`` calls it a left-over marker too. Markup is told by
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
    for i, line in enumerate(text.split("\n"), start=1):
        kind = _run_kind(line, size)
        if kind is None:
            continue
        if kind == "=":
            if open_ or (separators_alone and not line.strip("= \t\r")):
                out.append((i, kind))
            continue
        out.append((i, kind))
        open_ = kind in _OPENERS
    return out


def has_markers(text: str, size: int = DEFAULT_MARKER_SIZE) -> bool:
    """Whether ``text`` has any conflict-marker line by :func:`marker_lines`' rule."""
    return bool(marker_lines(text, size))


def conflict_upstream(message: str) -> str | None:
    """The upstream sha (lower-case, 40 hex) of a ``Forksync-Conflict:`` trailer in a commit
    message, else None. The trailer must be a line of its own (``Key: value``, any paragraph)."""
    m = _CONFLICT_RX.search(message or "")
    return m.group(1).lower() if m else None
