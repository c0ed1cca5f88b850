"""The ``forksync`` command line (also ``python app.py …``).

Each concern registers its own sub-commands through a ``register(subparsers, common)`` function
(``common`` is the parent parser holding the global options), so this module only assembles
them and maps errors to exit codes:

* 0 — success; 1 — the command ran and reports a problem (e.g. a failed apply);
* 2 — bad input: configuration, refs, arguments (message on stderr, nothing changed);
* 130 — interrupted (Ctrl-C): one line on stderr, no traceback.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys

from bot.agents.redact import ScrubbingFormatter
from bot.cli.progress import new_run
from bot.cli.serve import register_deployment_secrets
from bot.cli.text import say, text
from bot.config.forksync import ConfigError, ForksyncConfig, UserError, load_config
from bot.config.libgit2 import allow_partial_clones

#: Modules that contribute sub-commands, in help order.
COMMAND_MODULES = (
    "bot.cli.ledger",         # status, ledger
    "bot.cli.plan",         # plan, apply
    "bot.cli.resolve",      # resolve
    "bot.demo.main",             # demo
    "bot.cli.serve",        # serve, queue
    "bot.cli.dashboard",    # dashboard
    "bot.cli.validation",   # validate, l2, bisect …
    "bot.cli.triage",       # triage …
    "bot.cli.agents",       # agents …
    "bot.cli.bench",        # bench resolve
    "bot.cli.app_setup",    # app manifest, app setup
)


def common_parser() -> argparse.ArgumentParser:
    # SUPPRESS: sub-parsers must not reset global flags given before the command
    common = argparse.ArgumentParser(add_help=False, argument_default=argparse.SUPPRESS)
    g = common.add_argument_group("global options")
    g.add_argument("--config", metavar="FILE", help="forksync.yml to read (default: ./forksync.yml if present)")
    g.add_argument("--upstream", metavar="URL|PATH", help="upstream repository (overrides upstream.url)")
    g.add_argument("--upstream-ref", metavar="REF", help="upstream tip: branch, tag or sha (overrides upstream.ref)")
    g.add_argument("--fork", metavar="URL|PATH", help="fork repository (overrides fork.url)")
    g.add_argument("--fork-ref", metavar="REF", help="fork branch or sha (overrides fork.ref)")
    g.add_argument("-v", "--verbose", action="store_true", help="log debug details to stderr")
    g.add_argument("-q", "--quiet", action="store_true",
                   help="no progress on stderr (bars on a terminal, plain lines elsewhere) and no timing notes; warnings stay")
    return common


def refuse_unpaired(needed: str, present: bool, flags) -> None:
    """Raise UserError naming each of ``flags`` (``[(flag, value)]``; given when its value is not
    None) given without the flag ``needed`` (``present``: whether it was): silently ignored, such a
    flag would leave a person believing, say, that a resolution was pushed or the agent used their URL."""
    given = [flag for flag, value in flags if value is not None]
    if given and not present:
        raise UserError(text("progress", "unpaired_flags", given=given, needed=needed))


def config_source(args: argparse.Namespace) -> tuple[str | None, dict[str, str | None]]:
    """``(file, overrides)`` the configuration is built from: the file (explicit, or
    ./forksync.yml when present; None for neither) and the flags that override its keys."""
    import os

    path = getattr(args, "config", None)
    if path is None and os.path.isfile("forksync.yml"):
        path = "forksync.yml"
    return path, {
        "upstream.url": getattr(args, "upstream", None),
        "upstream.ref": getattr(args, "upstream_ref", None),
        "fork.url": getattr(args, "fork", None),
        "fork.ref": getattr(args, "fork_ref", None),
    }


def config_from_args(args: argparse.Namespace) -> ForksyncConfig:
    """The effective configuration: file (explicit, or ./forksync.yml when present) + flags."""
    return load_config(*config_source(args))


def fork_config_from_args(args: argparse.Namespace) -> ForksyncConfig:
    """:func:`config_from_args` for a command that reads the fork. With no fork named (no
    ``fork.url``, no ``--fork``) the fork is the current directory's repository; where there is
    none, the error says which of the three ways to name a fork were missing, not that "." is no
    repository. Raises :class:`UserError`."""
    import os

    import pygit2

    cfg = config_from_args(args)
    if cfg.fork.url or pygit2.discover_repository(os.getcwd()) is not None:
        return cfg
    path = getattr(args, "config", None) or ("forksync.yml" if os.path.isfile("forksync.yml") else None)
    raise UserError(text("progress", "no_fork_named", config=path or "", cwd=os.getcwd()))


def build_parser() -> argparse.ArgumentParser:
    common = common_parser()
    parser = argparse.ArgumentParser(
        prog="forksync", parents=[common],
        description="Keep a downstream fork in sync with its upstream, one disposition per upstream commit.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    new_run()                # each run prints a repeated warning once
    allow_partial_clones()   # clones made by older git name extensions.partialclone, which libgit2 refuses
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if getattr(args, "verbose", False) else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    for handler in logging.getLogger().handlers:       # every log line loses URL userinfo and secret values
        handler.setFormatter(ScrubbingFormatter("%(levelname)s %(name)s: %(message)s"))
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        # the deployment's secrets are this process's too, whichever command runs: an agent's
        # prompt, an error text and a log line hide them as under `forksync serve` (which, with
        # `worker`, registers the same settings itself, validated)
        if not getattr(args, "registers_secrets", False):
            register_deployment_secrets(args)
        return int(args.func(args) or 0)
    except ConfigError as e:
        say("progress", "error", err=True, error=e)
        return 2
    except UserError as e:
        say("progress", "error", err=True, error=e)
        return 2
    except KeyboardInterrupt:
        return _interrupted()
    except SystemError as e:
        # Ctrl-C landing in a Python callback that libgit2 called (the object database of
        # bot.config.objects) comes back out of pygit2 as a SystemError carrying the interrupt
        if not _caused_by_interrupt(e):
            raise
        return _interrupted()


def _caused_by_interrupt(e: BaseException) -> bool:
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def _interrupted() -> int:
    say("progress", "interrupted", err=True)
    return 130
