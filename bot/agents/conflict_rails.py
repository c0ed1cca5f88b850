"""The conflict-resolution agent's data and its deterministic rails (pure, no I/O).

A :class:`ConflictCase` is one chain pick that conflicts: the upstream commit, the fork tip it
is picked onto, and per conflicted file the 3-way merge output with markers plus the three
versions. The agent answers through the ``resolve_conflicts`` tool (:data:`RESOLVE_TOOL`); its
answer only reaches git after every rail below passes, each raising :class:`RailViolation`:

1. :func:`parse_resolution` — exactly one call of ``resolve_conflicts`` and nothing else (a
   ``merge_pull_request`` or any other tool is rejected), fields of the right types, unique paths;
   a large file may be answered per conflict block (``blocks``), which :func:`splice_blocks`
   puts back into the merge output — as many blocks as the file has;
2. :func:`check_no_markers` — no conflict-marker line remains (the merge gate's rule), nor a
   ``=======`` line that neither side had;
3. :func:`check_only_conflicted` — the answer covers exactly the conflicted files, no other;
4. :func:`check_clean_regions` — every region the 3-way merge resolved by itself (the upstream
   commit's hunks that did not conflict, and the fork's text around them) is in the answer
   byte for byte, in order; only the conflict blocks may be rewritten.

Rails 5 and 6 need git and live in :mod:`bot.agents.conflict_git`: the result is committed for
real, and re-merging the upstream change shows every non-conflicted path equals the merge's own
result. Source of the marker grammar: git-merge-file(1), "conflict markers".
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from bot.core.markers import DEFAULT_MARKER_SIZE, marker_lines

MARKER_LINE = re.compile(r"^(?:<{7}(?: .*)?|\|{7}(?: .*)?|={7}|>{7}(?: .*)?)\r?$", re.MULTILINE)
_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")      # lines with their "\n" (str.splitlines also splits on \f, \x1c…)
TOOL_NAME = "resolve_conflicts"

RESOLVE_TOOL: dict[str, Any] = {
    "name": TOOL_NAME,
    "description": ("Return the resolved content of every conflicted file of the pick, each with a "
                    "File / Action / Reason note, and a one-line summary of the resolution."),
    "input_schema": {
        "type": "object",
        "properties": {
            "files": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "a conflicted file's path, as given"},
                    "content": {"type": "string", "description": "the whole resolved file, no conflict markers "
                                                                   "(give this or blocks)"},
                    "blocks": {"type": "array", "items": {"type": "string"},
                               "description": ("instead of content, for a large file: the resolved text of each "
                                               "conflict block, in the order of the blocks; forksync keeps every "
                                               "line outside the blocks as it is")},
                    "action": {"type": "string", "description": "what was done, e.g. 'kept both changes'"},
                    "reason": {"type": "string", "description": "why, in one or two sentences"},
                },
                "required": ["path", "action", "reason"],
            }},
            "summary": {"type": "string", "description": "one line, at most 100 characters"},
        },
        "required": ["files", "summary"],
    },
}

#: Paths no agent writes: CI workflows and forksync's own configuration. A branch in the fork's
#: own repository runs its workflows with the repository's secrets as soon as it is pushed,
#: before any person looked, and forksync.yml holds the rails themselves.
PERSON_ONLY_PATHS = (".github/", ".ci/")


class RailViolation(Exception):
    """A rail rejected the agent's answer: ``rail`` names it, ``detail`` says what and where."""

    def __init__(self, rail: str, detail: str):
        super().__init__(f"{rail}: {detail}")
        self.rail = rail
        self.detail = detail


@dataclass(frozen=True)
class ConflictFile:
    """One conflicted file: ``merged`` is the 3-way merge output with conflict markers labelled
    ``fork`` / ``upstream``; ``base`` (the upstream parent's), ``fork`` and ``upstream`` versions
    are the full texts (None when that side has no such file)."""

    path: str
    merged: str
    base: str | None
    fork: str | None
    upstream: str | None


@dataclass(frozen=True)
class ConflictCase:
    """A chain pick that conflicts. ``fork_tip`` is the commit the pick goes onto (the chain
    branch's tip); ``clean_paths`` the upstream commit's other files, which merged by themselves;
    ``unsupported`` says why agents cannot help (binary or delete/modify conflicts), if so.
    ``decided``: conflicted files forksync's deterministic rules already resolved (``rule`` set;
    ``content`` None for a deletion) — the agent is not asked about them, cannot change them
    (rail 3 compares its answer with :attr:`paths`, the files the rules declined), and they go
    into the same pick commit."""

    upstream_sha: str
    upstream_message: str
    fork_tip: str
    files: tuple[ConflictFile, ...]
    clean_paths: tuple[str, ...] = ()
    upstream_author: tuple[str, str, int] = ("", "", 0)   # name, email, epoch seconds
    unsupported: str = ""
    decided: tuple["ResolvedFile", ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        """The files the agent must answer (the rules' :attr:`decided` files are not among them)."""
        return tuple(f.path for f in self.files)

    @property
    def all_paths(self) -> tuple[str, ...]:
        """Every conflicted file of the pick: the agent's and the rules'."""
        return tuple(sorted({*self.paths, *(f.path for f in self.decided)}))


@dataclass(frozen=True)
class ResolvedFile:
    """One resolved file with its File / Action / Reason note; ``rule`` names the deterministic
    rule that decided it ("" for the agent's answer); ``content`` None: the file is deleted."""

    path: str
    content: str | None
    action: str
    reason: str
    rule: str = ""
    blocks: tuple[str, ...] | None = None     # the agent's per-block answer, before :func:`splice_blocks`


@dataclass(frozen=True)
class Resolution:
    """The agent's answer after parsing: per file the content and its File / Action / Reason note."""

    files: tuple[ResolvedFile, ...]
    summary: str
    model: str = ""


# -- merge output -------------------------------------------------------------------------
@dataclass(frozen=True)
class Segment:
    """A piece of a merge output: ``clean`` text, or a conflict block (``fork``/``upstream``/``base`` sides)."""

    clean: str | None = None
    fork: str = ""
    upstream: str = ""
    base: str | None = None

    @property
    def is_conflict(self) -> bool:
        return self.clean is None


def split_merged(merged: str, where: str = "") -> list[Segment]:
    """Split a merge output into clean and conflict segments. Raises ValueError on unbalanced
    markers (``where`` names the file in the message)."""
    out: list[Segment] = []
    clean: list[str] = []
    state = "clean"
    sides: dict[str, list[str]] = {}
    for line in _LINES.findall(merged):
        bare = line.rstrip("\r\n")
        if state == "clean" and bare.startswith("<<<<<<<") and MARKER_LINE.fullmatch(bare):
            if clean:
                out.append(Segment(clean="".join(clean)))
                clean = []
            state, sides = "fork", {"fork": [], "base": [], "upstream": []}
        elif state == "fork" and bare.startswith("|||||||") and MARKER_LINE.fullmatch(bare):
            state = "base"
        elif state in ("fork", "base") and bare == "=======":
            state = "upstream"
        elif state == "upstream" and bare.startswith(">>>>>>>") and MARKER_LINE.fullmatch(bare):
            out.append(Segment(None, "".join(sides["fork"]), "".join(sides["upstream"]),
                               "".join(sides["base"]) if sides["base"] else None))
            state = "clean"
        elif state == "clean":
            clean.append(line)
        else:
            sides[state].append(line)
    if state != "clean":
        raise ValueError(f"{where or 'merge output'}: conflict block not closed at end of file")
    if clean:
        out.append(Segment(clean="".join(clean)))
    return out


def relabel(merged: str, upstream_sha: str) -> str:
    """The merge output with markers labelled ``fork`` and ``upstream <sha12>`` (git labels them
    with the path; our prompt names the sides)."""
    segs = split_merged(merged)
    out = []
    for s in segs:
        if not s.is_conflict:
            out.append(s.clean)
            continue
        block = f"<<<<<<< fork\n{_nl(s.fork)}"
        if s.base is not None:
            block += f"||||||| base\n{_nl(s.base)}"
        block += f"=======\n{_nl(s.upstream)}>>>>>>> upstream {upstream_sha[:12]}\n"
        out.append(block)
    return "".join(out)


def _nl(s: str) -> str:
    return s if not s or s.endswith("\n") else s + "\n"


# -- rails --------------------------------------------------------------------------------
def parse_resolution(tool_uses, model: str = "") -> Resolution:
    """Rail 1. ``tool_uses`` is ``[(name, input), …]`` or objects with ``.name``/``.input``."""
    calls = [(getattr(t, "name", None) or t[0], getattr(t, "input", None) if hasattr(t, "input") else t[1])
             for t in tool_uses]
    if not calls:
        raise RailViolation("output parses", "the model called no tool; expected one `resolve_conflicts` call")
    others = sorted({n for n, _ in calls if n != TOOL_NAME})
    if others:
        raise RailViolation("output parses", f"the model called tool(s) it was not given: {', '.join(others)}")
    if len(calls) != 1:
        raise RailViolation("output parses", f"expected one `resolve_conflicts` call, got {len(calls)}")
    data = calls[0][1]
    if not isinstance(data, dict) or not isinstance(data.get("files"), list) or not isinstance(data.get("summary"), str):
        raise RailViolation("output parses", "input must be an object with `files` (list) and `summary` (string)")
    unknown = sorted(set(data) - {"files", "summary"})
    if unknown:
        raise RailViolation("output parses", f"unknown field(s) {unknown}")
    files = []
    seen = set()
    for i, f in enumerate(data["files"]):
        if not isinstance(f, dict) or any(not isinstance(f.get(k), str) for k in ("path", "action", "reason")):
            raise RailViolation("output parses", f"files[{i}] needs string fields path, action, reason")
        if not f["action"].strip() or not f["reason"].strip():
            # the File / Action / Reason block is what a reviewer reads of each file
            raise RailViolation("output parses", f"files[{i}] needs an action and a reason (empty)")
        unknown = sorted(set(f) - {"path", "content", "blocks", "action", "reason"})
        if unknown:
            raise RailViolation("output parses", f"files[{i}]: unknown field(s) {unknown}")
        has_content, has_blocks = "content" in f, "blocks" in f
        if has_content == has_blocks:
            raise RailViolation("output parses", f"files[{i}] needs exactly one of content (a string) or blocks (a list)")
        if has_content and not isinstance(f["content"], str):
            raise RailViolation("output parses", f"files[{i}].content must be a string")
        if has_blocks and (not isinstance(f["blocks"], list) or not all(isinstance(b, str) for b in f["blocks"])):
            raise RailViolation("output parses", f"files[{i}].blocks must be a list of strings")
        if f["path"] in seen:
            raise RailViolation("output parses", f"files[{i}]: {f['path']} appears twice")
        seen.add(f["path"])
        files.append(ResolvedFile(f["path"], f["content"] if has_content else None, f["action"].strip(), f["reason"].strip(),
                                  blocks=tuple(f["blocks"]) if has_blocks else None))
    summary = " ".join(data["summary"].split())
    if not summary:
        raise RailViolation("output parses", "`summary` is empty")
    return Resolution(tuple(files), summary, model)


def check_no_markers(res: Resolution, case: ConflictCase | None = None) -> None:
    """Rail 2: no conflict-marker line in any resolved file, by the merge gate's own rule
    (:func:`bot.core.markers.marker_lines`: runs of 7 or more, followed by whitespace or the
    line's end); and no more separator-like ``=======`` lines than :func:`separators_allowed`
    (none without a ``case``) — a separator left alone between two resolved halves is no marker
    by the gate's rule, while a reStructuredText or setext heading rule the file already had, or
    that either side of a conflict block brings, is no leftover."""
    sides = {f.path: f for f in case.files} if case is not None else {}
    for f in res.files:
        found = marker_lines(f.content)
        if found:
            line = found[0][0]
            text = f.content.split("\n")[line - 1]
            raise RailViolation("no conflict markers", f"{f.path}:{line} still has `{text[:20]}`")
        src = sides.get(f.path)
        rules = _separator_lines(f.content)
        allowed = 0 if src is None else separators_allowed(src)
        if len(rules) > allowed:
            raise RailViolation("no conflict markers", f"{f.path}:{rules[-1]} still has `=======`, a line neither "
                                                       "the fork's side nor upstream's has")


def separators_allowed(src: ConflictFile) -> int:
    """How many separator-like lines (:func:`_separator_lines`) a resolution of ``src`` may hold:
    the most of the fork's file, upstream's file, and the merge output's clean regions plus both
    sides of every conflict block. The last is what keeping both sides of a block gives where each
    side added a heading rule of its own (two new reStructuredText sections at one place): each
    file alone has one rule fewer than the resolution. A conflict block's own ``=======``
    separator is in neither side, unless a side's heading rule made the block ambiguous (git
    writes no longer markers for it) and ``split_merged`` took that rule as the separator."""
    whole = max(len(_separator_lines(src.fork or "")), len(_separator_lines(src.upstream or "")))
    try:
        segs = split_merged(src.merged, src.path)
    except ValueError:
        return whole
    blocks = sum(len(_separator_lines(s.clean)) if not s.is_conflict
                 else len(_separator_lines(s.fork)) + len(_separator_lines(s.upstream)) for s in segs)
    return max(whole, blocks)


def _separator_lines(text: str) -> list[int]:
    """1-based numbers of the lines that are a run of 7 or more ``=`` and whitespace alone."""
    return [i for i, line in enumerate(text.split("\n"), start=1)
            if line.startswith("=" * DEFAULT_MARKER_SIZE) and not line.strip().strip("=")]


def check_only_conflicted(res: Resolution, case: ConflictCase) -> None:
    """Rail 3: the answer's files are exactly the conflicted files."""
    got, want = {f.path for f in res.files}, set(case.paths)
    extra, missing = sorted(got - want), sorted(want - got)
    if extra:
        raise RailViolation("only conflicted files change", f"the answer touches files outside the conflict: {', '.join(extra)}")
    if missing:
        raise RailViolation("only conflicted files change", f"no resolution for conflicted file(s): {', '.join(missing)}")


def clean_regions_kept(merged: str, resolved: str) -> str | None:
    """None when every clean segment of ``merged`` appears in ``resolved`` in order, the first
    at the very start and the last at the very end, with only conflict blocks between them
    rewritten; else a description of the first clean region that is missing or changed."""
    segs = split_merged(merged)
    pos = 0
    for i, s in enumerate(segs):
        if s.is_conflict:
            continue
        first, last = i == 0, i == len(segs) - 1
        if first:
            ok = resolved.startswith(s.clean)
            at = 0 if ok else -1
        elif last:
            ok = resolved.endswith(s.clean) and len(resolved) - len(s.clean) >= pos
            at = len(resolved) - len(s.clean) if ok else -1
        else:
            at = resolved.find(s.clean, pos)
        if at < 0:
            line = merged.count("\n", 0, merged.find(s.clean)) + 1
            preview = s.clean.strip().splitlines()[0][:60] if s.clean.strip() else "(blank lines)"
            return f"the region that merged cleanly from line {line} (`{preview}`) is missing or changed"
        pos = at + len(s.clean)
    return None


def resolved_blocks(merged: str, resolved: str) -> list[str] | None:
    """Pure: the text ``resolved`` holds in place of each conflict block of ``merged``, in order,
    found between the clean regions as :func:`clean_regions_kept` finds them; None when a clean
    region is missing (rail 4 rejects such an answer)."""
    segs = split_merged(merged)
    pos, out, pending = 0, [], False
    for i, s in enumerate(segs):
        if s.is_conflict:
            pending = True
            continue
        if i == 0:
            at = 0 if resolved.startswith(s.clean) else -1
        elif i == len(segs) - 1:
            at = len(resolved) - len(s.clean)
            at = at if resolved.endswith(s.clean) and at >= pos else -1
        else:
            at = resolved.find(s.clean, pos)
        if at < 0:
            return None
        if pending:
            out.append(resolved[pos:at])
            pending = False
        pos = at + len(s.clean)
    if pending:
        out.append(resolved[pos:])
    return out


def block_reading(text: str, block: Segment) -> str:
    """Pure: what the resolved ``text`` of a conflict ``block`` holds, in words for the report:
    the fork's side, upstream's side, both (in which order), the base, neither (removed), or
    rewritten — forksync's reading, set beside the agent's own File / Action / Reason."""
    t, fork, up = _nl(text), _nl(block.fork), _nl(block.upstream)
    if t == fork:
        return "the fork's side"
    if t == up:
        return "upstream's side"
    if t == fork + up:
        return "both sides, the fork's first"
    if t == up + fork:
        return "both sides, upstream's first"
    if not t.strip():
        return "neither side (removed)"
    if block.base is not None and t == _nl(block.base):
        return "the base (neither change)"
    return "rewritten"


def readings(merged: str, resolved: str, limit: int = 12) -> str:
    """Pure: ``"block 1: …; block 2: …"`` (:func:`block_reading` per block, the first ``limit``,
    then how many more), or "" when the blocks cannot be found."""
    texts = resolved_blocks(merged, resolved)
    if texts is None:
        return ""
    blocks = [s for s in split_merged(merged) if s.is_conflict]
    parts = [f"block {i}: {block_reading(t, b)}" for i, (t, b) in enumerate(zip(texts, blocks), 1)]
    more = len(parts) - limit
    return "; ".join(parts[:limit]) + (f"; … and {more} more block(s)" if more > 0 else "")


def check_clean_regions(res: Resolution, case: ConflictCase) -> None:
    """Rail 4: see :func:`clean_regions_kept`, for every conflicted file."""
    by_path = {f.path: f for f in case.files}
    for f in res.files:
        problem = clean_regions_kept(by_path[f.path].merged, f.content)
        if problem:
            raise RailViolation("non-conflicting hunks unchanged", f"{f.path}: {problem}")


def excerpts(merged: str, context: int, redact: Callable[[str], str] | None = None) -> str:
    """Pure: the parts of a merge output a resolver needs when the whole file is too large to
    send: each conflict block whole, with up to ``context`` lines before and after it, headed
    ``@@ conflict block i of n (lines a-b of the merge output) @@``; ``…`` lines stand for the
    lines left out. Line numbers count the merge output's lines, markers included.

    ``redact`` (a prompt's redactor, e.g. ``lambda t: redactor.redact(t, path)``) is applied to
    the *whole* merge output before it is cut: an excerpt cut inside a private key has lost the
    BEGIN or END line the redaction rules recognise the key by, and its body lines would go out
    as they are. Redaction makes a many-line secret one line, so blocks and their context are
    taken from the redacted text while the headers keep the merge output's own line numbers
    (block i of the one is block i of the other). A secret that spans a conflict marker (a key
    whose body is in conflict) takes the marker with it; the blocks then do not correspond, and
    the headers number the redacted text's lines and say so."""
    blocks = _marked_blocks(_LINES.findall(merged))
    text = merged if redact is None else redact(merged)
    lines = _LINES.findall(text)
    shown_blocks = blocks if text is merged else _marked_blocks(lines)
    same = len(shown_blocks) == len(blocks)
    where = "of the merge output" if same else "of the merge output with a secret that spans a conflict marker redacted"
    out, shown = [], -1            # shown: the last line index already printed
    for n, (a, b) in enumerate(shown_blocks, 1):
        lo, hi = max(a - context, shown + 1), min(b + context, len(lines) - 1)
        if lo > shown + 1:
            out.append("…\n")
        first, last = blocks[n - 1] if same else (a, b)
        out.append(f"@@ conflict block {n} of {len(shown_blocks)} (lines {first + 1}-{last + 1} {where}) @@\n")
        out.extend(line if line.endswith("\n") else line + "\n" for line in lines[lo:hi + 1])
        shown = hi
    if shown < len(lines) - 1:
        out.append("…\n")
    return "".join(out)


def secret_spans_marker(merged: str, redact: Callable[[str], str]) -> bool:
    """Pure: whether redacting ``merged`` (a merge output) takes a conflict marker with a secret —
    a private key whose body is in conflict becomes one placeholder, markers and all. The model
    would then be asked to resolve a block it is never shown (whole file or excerpts)."""
    redacted = redact(merged)
    return redacted != merged and len(_marked_blocks(_LINES.findall(redacted))) < len(_marked_blocks(_LINES.findall(merged)))


def _marked_blocks(lines: list[str]) -> list[tuple[int, int]]:
    """The (first, last) line indexes of each conflict block of ``lines``, markers included."""
    blocks, start = [], None
    for i, line in enumerate(lines):
        bare = line.rstrip("\r\n")
        if start is None and bare.startswith("<<<<<<<") and MARKER_LINE.fullmatch(bare):
            start = i
        elif start is not None and bare.startswith(">>>>>>>") and MARKER_LINE.fullmatch(bare):
            blocks.append((start, i))
            start = None
    return blocks


def splice_blocks(merged: str, blocks: Sequence[str], where: str = "") -> str:
    """Pure: ``merged`` with its conflict blocks replaced, in order, by ``blocks`` (each block's
    text ends with a newline unless it is empty or ends the file). Raises :class:`RailViolation`
    ("output parses") when the number of blocks is not the number of conflict blocks."""
    segs = split_merged(merged, where)
    n = sum(1 for s in segs if s.is_conflict)
    if n != len(blocks):
        raise RailViolation("output parses", f"{where}: {len(blocks)} resolved block(s) for {n} conflict block(s)")
    out, it = [], iter(blocks)
    for i, seg in enumerate(segs):
        if not seg.is_conflict:
            out.append(seg.clean)
            continue
        text = next(it)
        if text and not text.endswith("\n") and i != len(segs) - 1:
            text += "\n"
        out.append(text)
    return "".join(out)


def with_blocks_spliced(res: Resolution, case: ConflictCase) -> Resolution:
    """Every file answered by ``blocks`` gets its whole content from the case's merge output."""
    merged = {f.path: f.merged for f in case.files}
    files = []
    for f in res.files:
        if f.blocks is not None:
            if f.path not in merged:
                raise RailViolation("only conflicted files change", f"the answer touches files outside the conflict: {f.path}")
            f = replace(f, content=splice_blocks(merged[f.path], f.blocks, f.path), blocks=None)
        files.append(f)
    return replace(res, files=tuple(files))


def check_resolution(res: Resolution, case: ConflictCase) -> None:
    """Rails 2–4 in order (rail 1 produced ``res``)."""
    check_no_markers(res, case)
    check_only_conflicted(res, case)
    check_clean_regions(res, case)


def trailer_summary(summary: str, limit: int = 100) -> str:
    """The summary as it goes into ``Agent-Resolved:``: one line, no mention/marker tricks."""
    s = " ".join(summary.split()).replace("@", "(at)").replace("<", "(").replace(">", ")")
    return s if len(s) <= limit else s[: limit - 1] + "…"
