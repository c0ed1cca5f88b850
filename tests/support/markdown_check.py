"""Is a rendered template well-formed Markdown as GitHub shows it? (markdown-it-py, CommonMark
plus GFM tables and strikethrough.)

:func:`problems` returns what a reader would see go wrong, empty when fine:

* unrendered template syntax (``{{``, ``{%`` outside code) or an empty code span (two backticks with nothing
  between them read as literal backticks);
* a list item that did not become one: an ordered item after text with no blank line (only an
  item numbered 1 may interrupt a paragraph), or items run together on one line (`` `a`2. `b` ``);
* an ordered list whose source numbers skip or repeat (``1.`` then ``3.``);
* a heading or a table row that stayed paragraph text, and text indented into a code block by
  accident.
"""
from __future__ import annotations

import re

from markdown_it import MarkdownIt

_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])

_ORDERED_LINE = re.compile(r"^\s{0,3}(\d{1,9})[.)]\s+\S")
_RUN_TOGETHER = re.compile(r"[`)*_|]\s?(\d{1,3})\.\s+[`*\[]")
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")


def problems(text: str) -> list[str]:
    """What is malformed in ``text`` (a rendered Markdown template), one string each."""
    out: list[str] = []
    tokens = _MD.parse(text)
    prose = [c.content for t in tokens if t.type == "inline" for c in t.children or [] if c.type == "text"]
    prose += [t.content for t in tokens if t.type == "html_block"]
    for marker in ("{{", "{%"):         # code (a C++ brace initializer in a hunk) may hold them
        if any(marker in p for p in prose):
            out.append(f"unrendered template syntax {marker!r}")
    ordered_numbers: list[list[int]] = []
    for i, tok in enumerate(tokens):
        if tok.type == "ordered_list_open":
            ordered_numbers.append([])
        elif tok.type == "ordered_list_close":
            nums = ordered_numbers.pop()
            want = list(range(nums[0], nums[0] + len(nums))) if nums else []
            if nums != want:
                out.append(f"ordered list numbered {nums}, not {want}")
        elif tok.type == "list_item_open" and ordered_numbers and tok.info.isdigit():
            # only the items of the innermost ordered list (its direct children)
            if tokens[i - 1].type in ("ordered_list_open", "list_item_close"):
                ordered_numbers[-1].append(int(tok.info))
        elif tok.type == "code_block":
            out.append(f"indented text became a code block: {tok.content.strip()[:60]!r}")
        elif tok.type == "inline":
            in_paragraph = i > 0 and tokens[i - 1].type == "paragraph_open"
            for child in tok.children or []:
                if child.type == "code_inline" and not child.content.strip():
                    out.append("empty code span")
                if child.type == "text" and "``" in child.content:
                    out.append(f"empty code span (literal backticks): {child.content[:60]!r}")
            for m in _RUN_TOGETHER.finditer(tok.content):
                out.append(f"list items run together on one line: {tok.content[max(0, m.start() - 30):m.end() + 30]!r}")
            if in_paragraph:
                for n, line in enumerate(tok.content.split("\n")):
                    m = _ORDERED_LINE.match(line)
                    if m and (n > 0 or int(m.group(1)) != 1):
                        out.append(f"ordered item inside a paragraph (needs a blank line before it): {line[:60]!r}")
                    if _HEADING_LINE.match(line):
                        out.append(f"heading inside a paragraph: {line[:60]!r}")
                    if _TABLE_ROW.match(line):
                        out.append(f"table row outside a table: {line[:60]!r}")
    return out


def structure(text: str) -> list[str]:
    """The block structure of ``text`` (``heading_open h2``, ``bullet_list_open``, ``table_open`` …),
    for tests that assert a list stayed a list."""
    return [f"{t.type} {t.tag}" if t.type == "heading_open" else t.type for t in _MD.parse(text)
            if t.type.endswith("_open")]
