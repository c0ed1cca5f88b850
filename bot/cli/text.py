"""What the CLI's commands say to a person: the blocks of ``templates/cli/<family>.txt.j2``
(one template per command's output family, one block per message), printed as ``print`` would.
Machine output (JSON, bare shas and ids for scripts) and argparse's help stay in code."""
from __future__ import annotations

import sys

from bot.templating import render_part


def text(family: str, part: str, /, **context) -> str:
    """The block ``part`` of ``templates/cli/<family>.txt.j2`` rendered with ``context`` (no
    trailing newline); ``KeyError`` for a block the template lacks, ``jinja2.UndefinedError`` for
    a field not passed."""
    return render_part(f"cli/{family}.txt.j2", part, **context)


def cut(line: str, width: int = 70) -> str:
    """``line`` (a subject, a reason) in at most ``width`` characters, a cut one ending in "…", so
    that a cut is never read as the whole text ("… in the compiler (" as a subject, "(#8637" as
    a PR number)."""
    return line if len(line) <= width else line[:width - 1] + "…"


def say(family: str, part: str, /, *, err: bool = False, end: str = "\n", **context) -> None:
    """Print :func:`text` of ``family``/``part`` to stdout (``err``: stderr), then ``end``."""
    print(text(family, part, **context), end=end, file=sys.stderr if err else sys.stdout)


def add_row(table, family: str, part: str, /, **context) -> None:
    """Add to the Rich ``table`` the row :func:`text` of ``family``/``part`` renders, its cells
    separated by tabs (the last cell takes any tab of its own)."""
    table.add_row(*text(family, part, **context).split("\t", len(table.columns) - 1))
