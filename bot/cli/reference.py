"""The CLI reference (docs/cli-reference.md), generated from the argparse parsers so it cannot
drift: ``python -m bot.cli.reference > docs/cli-reference.md`` (a test checks it is current)."""
from __future__ import annotations

import argparse
import os

from bot.cli.main import build_parser


def _walk(parser: argparse.ArgumentParser, name: str, out: list[str]) -> None:
    out += [f"## `{name}`", "", "```text", parser.format_help().rstrip(), "```", ""]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                _walk(sub, f"{name} {sub_name}", out)


def markdown() -> str:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"       # stable wrapping whatever the terminal
    try:
        parser = build_parser()
        parser.prog = "forksync"
        out = ["# forksync CLI reference", "",
               "Generated from the parsers by `python -m bot.cli.reference`; do not edit by hand.",
               "Exit codes: 0 success; 1 the command ran and reports a problem; 2 bad input (configuration,",
               "refs, arguments) — the message names what and where, and nothing was changed; 130 interrupted",
               "(Ctrl-C): `forksync: interrupted` on stderr, no traceback.", "",
               "Progress of long commands (status, ledger, plan, apply, resolve, bench resolve) goes to stderr: rich",
               "bars on a terminal; elsewhere (CI logs, containers, a pipe) plain lines once a command has run 2 s — the stage,",
               "its count and the seconds since the start, then every 5 s while a stage runs (even a stage that",
               "reports nothing), and when it ends:", "",
               "```text",
               "forksync: analysing commits 1711/4073, 42% (7 s)",
               "forksync: analysing commits 4073/4073, done (16 s)",
               "forksync: building the ledger (18 s)",
               "```", "",
               "`--quiet` turns progress (and the planning statistics line) off; warnings stay, each printed once",
               "per run, on stderr with `--json` too: its documents go to stdout alone.", ""]
        _walk(parser, "forksync", out)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(out)


if __name__ == "__main__":
    print(markdown())
