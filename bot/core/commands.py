"""``/forksync <verb> …`` comment commands: one parser from comment text to typed values.

Parsing is pure (no I/O); the effects live in :mod:`bot.commands.runner`. A comment may hold
several commands, one per line; a line counts only when it *starts* with ``/forksync`` in the
paragraph text a reader sees once GitHub renders the Markdown (:func:`command_lines`, a real
CommonMark parser): never in code (fenced, indented, inline), a ``>`` quote (quoting someone's
command in a reply never re-runs it), a list, or HTML such as a comment (invisible on GitHub, so a
command hidden there would run unseen).

Verbs (the sync verbs, plus the validation verbs):

=================  ===========================================  =================================
verb               arguments                                    value
=================  ===========================================  =================================
``plan``           —                                            :class:`Plan`
``pick``           ``<sha|#PR>``                                :class:`Pick`
``defer``          ``<sha|#PR> <reason>``                       :class:`Decide` (DEFERRED_BLOCKED)
``wontport``       ``<sha|#PR> <reason>``                       :class:`Decide` (WONT_PORT)
``skip``           ``<sha|#PR> <reason>``                       :class:`Decide` (SKIP_FOR_CURRENT_BASE)
``reconsider``     ``<sha|#PR>``                                :class:`Reconsider`
``hold``/``unhold`` —                                           :class:`Hold`
``retest``         ``[suite]``                                  :class:`Retest`
``merge``          —                                            :class:`Merge`
``l3``             ``<workload>``                               :class:`L3`
``signoff``        ``<area|metric>``                            :class:`Signoff`
``resolve``        —                                            :class:`Resolve`
=================  ===========================================  =================================

Anything else that starts with ``/forksync`` parses to :class:`CommandError` whose ``message``
says what was wrong — an unknown verb with the verb it is closest to (``difflib``: "retset" →
``retest``) — and lists the verbs (rendered by ``templates/github/command_help.md.j2``).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from markdown_it import MarkdownIt

from bot.model import Disposition

PREFIX = "/forksync"

#: verb → (argument synopsis, one-line help). The order is the help order.
VERBS: dict[str, tuple[str, str]] = {
    "plan": ("", "preview the next bundles and chains (dry run, as a comment)"),
    "pick": ("<sha|#PR>", "open an urgent isolated pick PR for one upstream commit"),
    "defer": ("<sha|#PR> <reason>", "defer an upstream commit (DEFERRED_BLOCKED) with a reason"),
    "wontport": ("<sha|#PR> <reason>", "never port an upstream commit (WONT_PORT) with a reason"),
    "skip": ("<sha|#PR> <reason>", "skip an upstream commit for the current base, with a reason"),
    "reconsider": ("<sha|#PR>", "lift an earlier defer, skip or won't-port"),
    "hold": ("", "stop opening and merging sync PRs until `unhold`"),
    "unhold": ("", "resume after `hold`"),
    "retest": ("[suite]", "re-run validation (all suites, or the named one)"),
    "merge": ("", "merge this sync PR now if the merge gate allows it"),
    "l3": ("<workload>", "run the L3 workload suite on this PR"),
    "signoff": ("<area|metric>", "sign off an area or a metric regression (area owners)"),
    "resolve": ("", "ask the conflict agent to resolve the conflict this chain stopped at (when configured)"),
    "help": ("", "list these commands"),
}

_SHA = re.compile(r"^[0-9a-fA-F]{7,40}$")
_SPACES = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
_PR = re.compile(r"^#(\d{1,9})$")
_NAME = re.compile(r"^[A-Za-z0-9_.:/\-]{1,100}$")


@dataclass(frozen=True)
class Target:
    """What a commit verb points at: an upstream sha (7–40 hex, lower-cased) or an upstream PR."""

    sha: str | None = None
    pr: int | None = None

    def __str__(self) -> str:
        return self.sha if self.sha else f"#{self.pr}"


@dataclass(frozen=True)
class Command:
    """Base of every parsed command; ``line`` is the canonical text (used to run an edited
    comment's commands once each)."""

    line: str

    @property
    def verb(self) -> str:
        return self.line.split()[1]


@dataclass(frozen=True)
class Plan(Command):
    pass


@dataclass(frozen=True)
class Pick(Command):
    target: Target = Target()


@dataclass(frozen=True)
class Decide(Command):
    """defer / wontport / skip: record a decision that lands no commit."""

    target: Target = Target()
    disposition: Disposition = Disposition.DEFERRED_BLOCKED
    reason: str = ""


@dataclass(frozen=True)
class Reconsider(Command):
    target: Target = Target()


@dataclass(frozen=True)
class Hold(Command):
    on: bool = True


@dataclass(frozen=True)
class Retest(Command):
    suite: str | None = None


@dataclass(frozen=True)
class Merge(Command):
    pass


@dataclass(frozen=True)
class Resolve(Command):
    """Ask the conflict agent for the conflict a chain PR stopped at."""


@dataclass(frozen=True)
class Help(Command):
    """List the commands (anyone may ask; nothing changes)."""


@dataclass(frozen=True)
class L3(Command):
    workload: str = ""


@dataclass(frozen=True)
class Signoff(Command):
    subject: str = ""


@dataclass(frozen=True)
class CommandError:
    """A line that starts with ``/forksync`` but is not a valid command."""

    line: str
    message: str
    verb: str | None = None


_DECIDE = {"defer": Disposition.DEFERRED_BLOCKED, "wontport": Disposition.WONT_PORT,
           "skip": Disposition.SKIP_FOR_CURRENT_BASE}


def _target(word: str) -> Target | None:
    if _SHA.match(word):
        return Target(sha=word.lower())
    m = _PR.match(word)
    if m:
        return Target(pr=int(m.group(1)))
    return None


def usage(verb: str) -> str:
    args = VERBS[verb][0]
    return f"{PREFIX} {verb}" + (f" {args}" if args else "")


def parse_line(line: str) -> Command | CommandError | None:
    """Parse one line. None when the line is not a command at all (does not start with
    ``/forksync``, in any case, followed by a space or the end)."""
    # a no-break space (macOS Option+Space, pasted text) or another Unicode space reads as a space
    text = _SPACES.sub(" ", line).strip()
    # the prefix in any case: phone keyboards capitalise the first letter ("/Forksync hold"),
    # and a command silently ignored for it would look like a bot that is down
    head = text[:len(PREFIX) + 1].lower()
    if not (head == PREFIX or head.startswith(PREFIX + " ") or head.startswith(PREFIX + "\t")):
        return None
    words = text.split()
    if len(words) < 2:
        return CommandError(text, "no verb given")
    verb = words[1].lower()
    args = words[2:]
    if verb not in VERBS:
        # a typo ("retset", "sign-off") is answered with the verb meant, not only the list
        near = difflib.get_close_matches(verb, VERBS, n=1)
        return CommandError(text, f"unknown verb {words[1]!r}" + (f" (did you mean `{PREFIX} {near[0]}`)" if near else ""))
    canon_head = f"{PREFIX} {verb}"

    def bad(msg: str) -> CommandError:
        return CommandError(text, f"{msg}; usage: `{usage(verb)}`", verb)

    if verb in ("plan", "merge", "hold", "unhold", "resolve", "help"):
        if args:
            return bad(f"`{verb}` takes no arguments")
        if verb == "help":
            return Help(canon_head)
        if verb == "plan":
            return Plan(canon_head)
        if verb == "resolve":
            return Resolve(canon_head)
        if verb == "merge":
            return Merge(canon_head)
        return Hold(canon_head, on=(verb == "hold"))
    if verb in ("pick", "reconsider"):
        if len(args) != 1:
            return bad("expected exactly one upstream sha or #PR")
        tgt = _target(args[0])
        if tgt is None:
            return bad(f"{args[0]!r} is neither a commit sha (7-40 hex) nor #PR")
        canon = f"{canon_head} {tgt}"
        return Pick(canon, tgt) if verb == "pick" else Reconsider(canon, tgt)
    if verb in _DECIDE:
        if not args:
            return bad("expected an upstream sha or #PR and a reason")
        tgt = _target(args[0])
        if tgt is None:
            return bad(f"{args[0]!r} is neither a commit sha (7-40 hex) nor #PR")
        reason = " ".join(args[1:]).strip()
        if not reason:
            return bad("a reason is required")
        return Decide(f"{canon_head} {tgt} {reason}", tgt, _DECIDE[verb], reason)
    if verb == "retest":
        if len(args) > 1:
            return bad("expected at most one suite name")
        if args and not _NAME.match(args[0]):
            return bad(f"{args[0]!r} is not a valid suite name")
        return Retest(canon_head + (f" {args[0]}" if args else ""), args[0] if args else None)
    if verb in ("l3", "signoff"):
        if len(args) != 1:
            return bad("expected exactly one name")
        if not _NAME.match(args[0]):
            return bad(f"{args[0]!r} is not a valid name")
        canon = f"{canon_head} {args[0]}"
        return L3(canon, args[0]) if verb == "l3" else Signoff(canon, args[0])
    raise AssertionError(verb)  # pragma: no cover - VERBS and the branches above agree


#: GitHub-flavoured enough: CommonMark (raw HTML on, as GitHub) plus tables and strikethrough.
_MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def command_lines(body: str | None) -> list[str]:
    """The lines of ``body`` that a reader sees as plain paragraph text, as Markdown renders them
    (markdown-it-py, CommonMark). Code of every kind (fenced with any number of backticks or
    tildes, indented, inline), block quotes, lists, tables and HTML (comments included — GitHub
    does not show them) contribute nothing that starts a line: inline code keeps its backticks and
    emphasis or links their markup, so inline code or bold text holding ``/forksync hold`` is not
    a command; inline HTML is dropped (a comment spanning lines hides what it holds). Links and
    images keep their targets (``[llvm#1234](https://…)``): a reason recorded for good keeps them."""
    out: list[str] = []
    tokens = _MARKDOWN.parse(body or "")
    for i, tok in enumerate(tokens):
        if tok.type != "inline" or i == 0 or tokens[i - 1].type != "paragraph_open" or tokens[i - 1].level != 0:
            continue
        line: list[str] = []
        links: list[tuple[str, str]] = []       # the open links' (markup, href): a reason keeps its URLs
        for child in tok.children or []:
            if child.type in ("softbreak", "hardbreak"):
                out.append("".join(line))
                line = []
            elif child.type == "text":
                line.append(child.content)
            elif child.type == "code_inline":
                line.append(child.markup + child.content + child.markup)
            elif child.type == "html_inline":
                continue
            elif child.type == "link_open":
                links.append((child.markup, str(child.attrGet("href") or "")))
                line.append("<" if child.markup == "autolink" else "[")
            elif child.type == "link_close":
                markup, href = links.pop() if links else ("", "")
                line.append(">" if markup == "autolink" else f"]({href})")
            elif child.type == "image":
                line.append("![" + child.content + f"]({child.attrGet('src') or ''})")
            else:
                line.append(child.markup or "\x00")
        out.append("".join(line))
    return out


def parse_comment(body: str | None) -> list[Command | CommandError]:
    """Every command in a comment body, in order: lines of paragraph text (:func:`command_lines`)
    that start with ``/forksync``. Duplicate commands in one comment are kept once."""
    out: list[Command | CommandError] = []
    seen: set[str] = set()
    for line in command_lines(body):
        cmd = parse_line(line)
        if cmd is None or cmd.line in seen:
            continue
        seen.add(cmd.line)
        out.append(cmd)
    return out


__all__ = ["PREFIX", "VERBS", "Target", "Command", "Plan", "Pick", "Decide", "Reconsider", "Hold", "Resolve",
           "Retest", "Merge", "L3", "Signoff", "CommandError", "parse_line", "parse_comment", "command_lines", "usage"]
