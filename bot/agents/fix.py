"""The proposed-fix agent for a triage issue: diagnosis + a patch *suggestion* + confidence.

Input is plain data (:class:`FixRequest`): the signature group of the issue (from
``bot/triage``), redacted log excerpts and the suspect commits' diffs. Output is a rendered
comment (``templates/agents/proposed_fix.md.j2``). Nothing here touches git: the patch is shown
in a fenced block for a person to apply, never applied or pushed.

Rails (each rejects the answer, :class:`~bot.agents.conflict_rails.RailViolation`):
exactly one ``propose_fix`` call and no other tool; ``confidence`` is low/medium/high; the
patch is empty or a unified diff (every line a diff line), at most :data:`MAX_PATCH_CHARS`,
and touches no CI configuration (``.github/``, ``.ci/``). Only ``real`` failures get a fix:
infrastructure and flaky groups are never blamed.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from bot.agents.client import AgentClient, AgentSkipped, unfinished
from bot.agents.conflict_rails import PERSON_ONLY_PATHS, RailViolation
from bot.agents.output import Cleaner, check_prose
from bot.agents.redact import PLACEHOLDER, Redactor
from bot.agents.render import data_block, new_nonce, render

TOOL_NAME = "propose_fix"
CONFIDENCE = ("low", "medium", "high")
MAX_PATCH_CHARS = 20_000
MAX_LOG_CHARS = 12_000        # per log excerpt: its *tail* is kept (the error is usually last)
MAX_DIFF_CHARS = 12_000       # per suspect diff: its *head* is kept, cut at a line's end
FORBIDDEN_PATCH_PATHS = PERSON_ONLY_PATHS

PROPOSE_TOOL: dict[str, Any] = {
    "name": TOOL_NAME,
    "description": "Give a short diagnosis, an optional proposed patch (unified diff) and your confidence.",
    "input_schema": {
        "type": "object",
        "properties": {
            "diagnosis": {"type": "string", "description": "a few sentences"},
            "patch": {"type": "string", "description": "unified diff (git diff format), or empty"},
            "confidence": {"type": "string", "enum": list(CONFIDENCE)},
        },
        "required": ["diagnosis", "patch", "confidence"],
    },
}


@dataclass(frozen=True)
class SuspectDiff:
    """A suspect commit: its sha, subject and diff text (``upstream_sha`` when it was a sync pick)."""

    sha: str
    subject: str
    diff: str
    upstream_sha: str | None = None


@dataclass(frozen=True)
class FixRequest:
    """What the agent sees of one triage issue. ``group`` is the root cause (the rule's name),
    ``klass`` one of ``real``/``infrastructure``/``flaky``."""

    group: str
    signature: str
    klass: str = "real"
    tests: tuple[str, ...] = ()
    logs: tuple[str, ...] = ()
    suspects: tuple[SuspectDiff, ...] = field(default_factory=tuple)

    @classmethod
    def from_group(cls, group: Any, logs=(), suspects=()) -> "FixRequest":
        """Build from triage data, duck-typed so triage's own types pass straight in:

        * ``group``: a dict (e.g. ``bot.triage.group.Group.to_agent_input()``: ``group``,
          ``signature``, ``class``, ``tests``, ``logs``, ``suspects``), an object with such
          attributes (``Group``: ``id``, ``cls``, ``rule``), or a bare
          :class:`bot.triage.signature.Signature`;
        * ``signature``: text or a ``Signature``; the group name falls back to the rule's ``id``,
          then the signature's digest;
        * ``logs``/``suspects`` given here win over the group's; a suspect is a
          :class:`SuspectDiff` or an object/dict with ``sha``, ``subject`` and ``diff`` (or a
          ``commit`` whose changed files are listed when no diff text is at hand).
        """
        get = (lambda k, d=None: group.get(k, d)) if isinstance(group, dict) else (lambda k, d=None: getattr(group, k, d))
        sig = get("signature")
        if sig is None and hasattr(group, "line") and hasattr(group, "type"):
            sig = group
        if sig is not None and hasattr(sig, "line") and hasattr(sig, "type"):
            sig_text = f"{sig.stage} | {sig.type}: {sig.line}" + (f" | {sig.test}" if getattr(sig, "test", "") else "")
            sig_test = (sig.test,) if getattr(sig, "test", "") else ()
        else:
            sig_text, sig_test = str(sig or ""), ()
        tests = tuple(get("tests") or sig_test)
        rule = get("rule")
        rule_id = rule if isinstance(rule, str) else getattr(rule, "id", None)
        name = get("group") or get("id") or rule_id or get("name") or getattr(sig, "digest", None) or "unnamed group"
        klass = get("klass") or get("class") or get("cls") or "real"
        if not logs:
            raw = get("logs")
            logs = raw() if callable(raw) else (raw or ())
        return cls(str(name), sig_text, str(klass), tests, tuple(str(x) for x in logs),
                   tuple(_suspect(s) for s in (suspects or get("suspects") or ())))


def _suspect(s: Any) -> SuspectDiff:
    if isinstance(s, SuspectDiff):
        return s
    get = (lambda k, d=None: s.get(k, d)) if isinstance(s, dict) else (lambda k, d=None: getattr(s, k, d))
    diff = get("diff") or ""
    commit = get("commit")
    if not diff and commit is not None:
        files = [f.path for f in getattr(commit, "files", ())]
        diff = "(diff not at hand) changed files:\n" + "\n".join(files)
    return SuspectDiff(str(get("sha") or ""), str(get("subject") or ""), str(diff), get("upstream") or get("upstream_sha"))


@dataclass(frozen=True)
class FixProposal:
    status: str                  # proposed | rejected | skipped
    body: str
    diagnosis: str = ""
    patch: str = ""
    confidence: str = ""
    model: str = ""
    rail: str = ""
    detail: str = ""
    reason: str = ""


_DIFF_LINE = re.compile(r"^(?:[ +\-\\@]|diff --git |index |--- |\+\+\+ |new file mode |deleted file mode |"
                        r"old mode |new mode |similarity index |rename from |rename to |Binary files )|^$")
#: the lines of a git diff that name a path: ``--- a/x``, ``+++ b/x``, ``rename from x``,
#: ``copy to x`` … and ``diff --git a/x b/y`` (git-diff(1), "generating patches with -p")
_PATH_LINE = re.compile(r"^(---|\+\+\+|rename from|rename to|copy from|copy to|diff --git) (.*)$", re.MULTILINE)
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _unquote(text: str) -> str:
    """A path git wrote in C quotes (a space, a quote, a non-ASCII byte in it), unquoted."""
    try:
        raw = text.encode("latin-1", "backslashreplace").decode("unicode_escape")
        return raw.encode("latin-1").decode("utf-8")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return text


def patch_paths(patch: str) -> list[str]:
    """Pure: every path a unified diff names, as written after git's ``a/``/``b/`` prefix and
    C quoting are taken off, in order, ``/dev/null`` left out. A ``---``/``+++`` path runs to a
    tab (GNU diff's timestamp) and is also read up to its first space; a ``diff --git`` line of
    two unquoted paths is split at its one space. Either reading counts, so a path never escapes
    the rails by how it is spelled."""
    out: list[str] = []
    for m in _PATH_LINE.finditer(patch):
        kind, rest = m.group(1), m.group(2).rstrip("\r")
        quoted = [_unquote(q) for q in _QUOTED.findall(rest)] if rest.startswith('"') else []
        if kind == "diff --git":
            names = quoted or (rest.split(" ") if rest.count(" ") == 1 else [])
        elif quoted:
            names = quoted[:1]
        else:
            whole = rest.split("\t", 1)[0].rstrip()
            names = [whole, whole.split(" ", 1)[0]] if kind in ("---", "+++") else [whole]
        for name in names:
            if kind in ("---", "+++", "diff --git") and name[:2] in ("a/", "b/"):
                name = name[2:]
            if name and name != "/dev/null" and name not in out:
                out.append(name)
    return out


def _outside(path: str) -> bool:
    """Whether ``path`` leaves the repository: absolute, or ``..`` above its root."""
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", path):
        return True
    norm = posixpath.normpath(path.replace("\\", "/"))
    return norm == ".." or norm.startswith("../")


def _person_only(path: str) -> bool:
    """Whether ``path``, normalised (``./``, ``x/..``), lies under CI or forksync's configuration."""
    norm = posixpath.normpath(path.replace("\\", "/")) + "/"
    return norm.startswith(FORBIDDEN_PATCH_PATHS)


def check_patch(patch: str) -> None:
    """Rail: ``patch`` is empty or a plausible unified diff that leaves CI configuration alone."""
    if not patch.strip():
        return
    if len(patch) > MAX_PATCH_CHARS:
        raise RailViolation("patch is a unified diff", f"the patch has {len(patch)} characters, more than {MAX_PATCH_CHARS}")
    lines = patch.splitlines()
    if not any(line.startswith("--- ") for line in lines) or not any(line.startswith("@@") for line in lines):
        raise RailViolation("patch is a unified diff", "no `--- `/`@@` lines: not a unified diff")
    for n, line in enumerate(lines, 1):
        if not _DIFF_LINE.match(line):
            raise RailViolation("patch is a unified diff", f"line {n} is not a diff line: {line[:60]!r}")
    paths = patch_paths(patch)
    for path in paths:
        if _outside(path):
            raise RailViolation("patch is a unified diff", f"{path} is outside the repository")
    for path in paths:
        if _person_only(path):
            raise RailViolation("patch leaves CI alone", f"the patch touches {path}")


def parse_proposal(tool_uses) -> tuple[str, str, str]:
    """(diagnosis, patch, confidence) from the model's tool calls. Raises RailViolation."""
    calls = [(t.name, t.input) for t in tool_uses]
    others = sorted({n for n, _ in calls if n != TOOL_NAME})
    if others:
        raise RailViolation("output parses", f"the model called tool(s) it was not given: {', '.join(others)}")
    if len(calls) != 1:
        raise RailViolation("output parses", f"expected one `{TOOL_NAME}` call, got {len(calls)}")
    data = calls[0][1]
    if not isinstance(data, dict) or any(not isinstance(data.get(k), str) for k in ("diagnosis", "patch", "confidence")):
        raise RailViolation("output parses", "needs string fields diagnosis, patch, confidence")
    if data["confidence"] not in CONFIDENCE:
        raise RailViolation("output parses", f"confidence {data['confidence'][:20]!r} is not one of {', '.join(CONFIDENCE)}")
    if not data["diagnosis"].strip():
        raise RailViolation("output parses", "the diagnosis is empty")
    return data["diagnosis"].strip(), data["patch"], data["confidence"]


def log_tail(log: str, redactor: Redactor, limit: int = MAX_LOG_CHARS) -> str:
    """The last ``limit`` characters of ``log`` (the error is usually last), redacted, starting
    at a line's start. Redacted *before* the cut, over the lines a few ``limit`` back: a cut
    through a secret leaves a part that no rule recognises (a token without its ``ghp_``, a
    private key without its BEGIN line), and a placeholder is one line, so the cut at a line's
    start never splits one."""
    if len(log) <= limit:
        return redactor.redact(log, "logs")
    window = log[-4 * limit:]
    if len(window) < len(log):
        window = window[window.find("\n") + 1:] if "\n" in window else window
    text = redactor.redact(window, "logs")
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    nl = tail.find("\n")
    return tail[nl + 1:] if nl >= 0 else tail


def diff_head(diff: str, redactor: Redactor, limit: int = MAX_DIFF_CHARS) -> str:
    """The first ``limit`` characters of ``diff``, redacted, ending at a line's end (the file
    headers and first hunks say most about a change). Redacted *before* the cut, like
    :func:`log_tail`: a cut through a token leaves a head that no rule recognises (``ghp_`` and
    fewer than the 20 characters the rule asks for), and a placeholder is one line, so the cut
    at a line's end never splits one. Only a line longer than ``limit`` is cut inside; the cut
    then moves back to before a placeholder it would split.

    Redacts the first ``4 * limit`` characters up to a line's end, or the whole diff when the
    redacted window is under ``2 * limit`` characters (placeholders shrank it): a secret cut by
    the window's end (a token wrapped onto two lines, a key without its END line) then lies at
    least ``limit`` characters past the cut, never in what is kept."""
    if len(diff) <= limit:
        return redactor.redact(diff, "suspects")
    window = diff[:4 * limit]
    if len(window) < len(diff) and "\n" in window:
        window = window[:window.rfind("\n") + 1]
    text = redactor.redact(window, "suspects")
    if len(text) < 2 * limit and len(window) < len(diff):
        text = redactor.redact(diff, "suspects")
    if len(text) <= limit:
        return text
    head = text[:limit]
    nl = head.rfind("\n")
    if nl >= 0:
        return head[:nl + 1]
    opened = head.rfind("[")
    split = opened >= 0 and (m := PLACEHOLDER.match(text, opened)) is not None and m.end() > limit
    return head[:opened] if split else head


def build_prompt(req: FixRequest, redactor: Redactor, nonce: str) -> tuple[str, str]:
    user = render(
        "prompts/fix.md.j2", group=redactor.redact(req.group, "group"), klass=req.klass,
        tests=[redactor.redact(t, "tests") for t in req.tests],
        signature_block=data_block("signature", redactor.redact(req.signature, "signature"), nonce),
        log_blocks=[data_block(f"log-{i + 1}", log_tail(log, redactor), nonce)
                    for i, log in enumerate(req.logs)],
        suspect_blocks=[data_block(f"suspect {s.sha[:12]}",
                                   redactor.redact(f"{s.sha} {s.subject}\n\n", "suspects")
                                   + diff_head(s.diff, redactor), nonce)
                        for s in req.suspects])
    return render("prompts/system.md.j2", nonce=nonce, task=""), user


async def propose_fix(client: AgentClient, req: FixRequest, allowed_mentions: tuple[str, ...] = ()) -> FixProposal:
    """Ask for a proposed fix; never raises for agent trouble (``skipped``/``rejected``)."""
    cleaner = Cleaner(client.settings, allowed_mentions=allowed_mentions)

    def done(status: str, **kw) -> FixProposal:
        data = {"diagnosis": cleaner.text(kw.get("diagnosis", ""), 2000),
                "patch": cleaner.secret_free(kw.get("patch", "")),
                "confidence": kw.get("confidence", ""), "model": cleaner.text(kw.get("model", ""), 80),
                "rail": kw.get("rail", ""), "detail": cleaner.text(kw.get("detail", ""), 500),
                "reason": cleaner.text(kw.get("reason", ""), 500)}
        body = render("proposed_fix.md.j2", status=status, sanitized_notes=cleaner.notes, **data)
        return FixProposal(status, body, **data)

    if not client.settings.proposed_fix:
        return done("skipped", reason="the proposed-fix agent is off (`agents.proposed_fix: false`)")
    if req.klass != "real":
        return done("skipped", reason=f"{req.klass} failures are tracked, never diagnosed or blamed")
    redactor = Redactor()
    system, user = build_prompt(req, redactor, new_nonce())
    try:
        reply = await client.call("proposed-fix", system=system, messages=[{"role": "user", "content": user}],
                                  tools=[PROPOSE_TOOL], tool_choice={"type": "tool", "name": TOOL_NAME},
                                  redactor=redactor)
    except AgentSkipped as e:
        return done("skipped", reason=e.reason)
    try:
        if (cut := unfinished(reply)) is not None:
            raise RailViolation("output parses", cut)
        diagnosis, patch, confidence = parse_proposal(reply.tool_uses)
        check_patch(patch)
        check_prose(client.settings, [diagnosis, reply.text], allowed_mentions)
    except RailViolation as v:
        return done("rejected", rail=v.rail, detail=v.detail, model=reply.model)
    return done("proposed", diagnosis=diagnosis, patch=patch, confidence=confidence, model=reply.model)
