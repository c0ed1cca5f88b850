"""The conflict-marker rule and the conflict-commit trailer: tables of text and exact lines."""
from __future__ import annotations

import pytest

from bot.core.markers import conflict_upstream, has_markers, marker_lines

L, R, B, S = "<" * 7, ">" * 7, "|" * 7, "=" * 7

CASES = [
    # (name, text, size, expected (line, kind) list)
    ("seven with space", f"a\n{L} HEAD\nx\n{S}\ny\n{R} theirs\n", 7, [(2, "<"), (4, "="), (6, ">")]),
    ("nine characters", f"{'<' * 9} HEAD\nx\n{'=' * 9}\ny\n{'>' * 9} t\n", 7, [(1, "<"), (3, "="), (5, ">")]),
    ("ten characters", f"{'<' * 10} a\n{'>' * 10} b\n", 7, [(1, "<"), (2, ">")]),
    ("tab-terminated", f"{L}\tHEAD\nx\n{R}\tabc\n", 7, [(1, "<"), (3, ">")]),
    ("end of line", f"{L}\nx\n{S}\ny\n{R}\n", 7, [(1, "<"), (3, "="), (5, ">")]),
    ("CRLF line ends", f"{L} HEAD\r\nx\r\n{S}\r\n{R} t\r\n", 7, [(1, "<"), (3, "="), (4, ">")]),
    ("diff3 base section", f"{L} ours\na\n{B} base\nb\n{S}\nc\n{R} theirs\n", 7,
     [(1, "<"), (3, "|"), (5, "="), (7, ">")]),
    ("rst heading alone", f"Title\n{S}\n\ntext\n", 7, []),
    ("rst heading after a closed conflict", f"{L} a\n{R} b\nTitle\n{S}\n", 7, [(1, "<"), (2, ">")]),
    ("long rst rule alone", "Section\n" + "=" * 30 + "\n", 7, []),
    ("six characters", f"{'<' * 6} HEAD\n{'>' * 6} t\n", 7, []),
    ("run followed by text", f"{L}HEAD\n{R}x\n", 7, []),
    ("not at line start", f" {L} HEAD\nx = '{R} t'\n", 7, []),
    ("lone closing marker", f"x\n{R} theirs\n", 7, [(2, ">")]),
    ("size 12: seven is text", f"{L} HEAD\n{S}\n{R} t\n", 12, []),
    ("size 12: twelve is a marker", f"{'<' * 12} HEAD\n{'=' * 12}\n{'>' * 12} t\n", 12, [(1, "<"), (2, "="), (3, ">")]),
    ("size 12: fourteen is a marker", f"{'<' * 14} HEAD\n", 12, [(1, "<")]),
    ("empty", "", 7, []),
]


@pytest.mark.parametrize("name,text,size,expected", CASES, ids=[c[0] for c in CASES])
def test_marker_lines(name, text, size, expected):
    assert marker_lines(text, size) == expected
    assert has_markers(text, size) is bool(expected)


def test_default_size_is_seven():
    assert marker_lines(f"{L} HEAD\n") == [(1, "<")]
    assert marker_lines(f"{'<' * 6} HEAD\n") == []


UP = "0123456789abcdef0123456789abcdef01234567"
TRAILERS = [
    (f"Conflict picking x\n\nForksync-Conflict: {UP}\n", UP),
    (f"Conflict\n\nUpstream-Commit: {'1' * 40}\nForksync-Conflict: {UP.upper()}\n", UP),
    (f"Conflict\n\nForksync-Conflict: {UP[:12]}\n", None),
    (f"Conflict\n\nsee Forksync-Conflict: {UP}\n", None),
    ("plain message\n", None),
    ("", None),
]


@pytest.mark.parametrize("message,expected", TRAILERS)
def test_conflict_upstream(message, expected):
    assert conflict_upstream(message) == expected
