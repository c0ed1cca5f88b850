"""Deterministic conflict rules (pure: plain data in, a decision out; no git, no I/O).

A :class:`FileConflict` is one file of a pick that conflicts: the three versions (the upstream
parent's ``base``, the fork's ``ours``, upstream's ``theirs``; None where that side has no such
file), ``git merge-file --diff3`` output, and the facts of the fork's history the rules need.
Each rule is ``(FileConflict) -> Decision | None``: a :class:`Decision` (the whole resolved file
or a deletion, with the File / Action / Reason note and the rule's name), or None when it is not
sure — a rule that is not sure declines. :func:`resolve_file` tries rules in order.

The rules, in the order they are tried (reasons as they go into the File / Action / Reason block;
names as in ``resolve.rules`` of the config; precision and coverage on the Triton fork, and
which are on by default, in docs/resolve.md; binary files are always declined):

=================== ======================================================================
``rerere``          every conflict hunk was resolved before in the fork's own history
                    (git rerere semantics: the same pair of sides, fork's and upstream's) →
                    that resolution again.
``fork-keeps``      the path is one the fork maintains itself (``resolve.keep_fork_areas`` /
                    ``keep_fork_paths``: version bumps, pins, CI files) → the fork's file (or
                    its deletion).
``fork-deleted``    the fork deleted the file, upstream changed it, and the fork kept it deleted
                    the last time that happened (``Memory``) → stays deleted.
``upstream-deleted`` upstream deletes the file and the fork's copy is one of upstream's own
                    versions (the fork never changed it) → deleted.
``fork-ahead``      the fork's file is one upstream reached after the picked commit (the fork
                    took a later upstream change first) → the fork's file.
``upstream-file``   the fork's file is one of upstream's versions of it since the merge base
                    (the fork never diverged there, it only lags), outside ``divergent``
                    areas → upstream's file.
``fork-has-change`` in every conflict hunk the fork's side already holds upstream's change
                    (the lines upstream adds are there, the lines it removes are gone) →
                    the fork's side of each hunk.
``divergent-hunks`` the path lies in a ``divergent`` area and every conflict hunk's upstream
                    side only removes lines of the base (adds none) → the fork's side of
                    each hunk.
``additive-union``  every conflict hunk only adds lines on both sides (empty base), and the
                    two additions share no line → both, the fork's lines first
                    (``git merge-file --union``).
``fork-ahead-hunks`` in every conflict hunk the fork's side is upstream's own later version of
                    those lines (in ``latest_upstream``) and upstream's side one upstream itself
                    replaced later → the fork's side of each hunk.
``line-merge``      in every conflict hunk the two sides edit different (if adjacent) lines
                    of the base → both edits applied.
=================== ======================================================================
"""
from __future__ import annotations

import difflib
import functools
import hashlib
import re
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping, Sequence

_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")


@dataclass(frozen=True)
class Hunk:
    """One conflict block of a diff3 merge: the fork's, the base's and upstream's lines (each
    the exact text with its newlines; empty when that side has no lines there)."""

    ours: str
    base: str
    theirs: str

    @property
    def fingerprint(self) -> str:
        """git rerere's conflict identity: the two sides, in a fixed order (so the same conflict
        met with the sides swapped is found again), hashed (sha1 hex)."""
        a, b = sorted((self.ours, self.theirs))
        return hashlib.sha1(f"{a}\0{b}".encode()).hexdigest()


Piece = str | Hunk


def split_merge(merged: str) -> list[Piece] | None:
    """``git merge-file --diff3`` output → clean text pieces (str) and :class:`Hunk` values, in
    order; None when the markers do not nest (a file that holds marker-like lines itself).
    Marker grammar: git-merge-file(1) — ``<<<<<<<``, ``|||||||``, ``=======``, ``>>>>>>>``."""
    out: list[Piece] = []
    clean: list[str] = []
    state = "clean"
    sides: dict[str, list[str]] = {}
    for line in _LINES.findall(merged):
        bare = line.rstrip("\r\n")
        if state == "clean":
            if bare.startswith("<<<<<<<") and (len(bare) == 7 or bare[7] == " "):
                if clean:
                    out.append("".join(clean))
                    clean = []
                state, sides = "ours", {"ours": [], "base": [], "theirs": []}
            else:
                clean.append(line)
        elif state == "ours" and bare.startswith("|||||||") and (len(bare) == 7 or bare[7] == " "):
            state = "base"
        elif state == "base" and bare == "=======":
            state = "theirs"
        elif state == "theirs" and bare.startswith(">>>>>>>") and (len(bare) == 7 or bare[7] == " "):
            out.append(Hunk("".join(sides["ours"]), "".join(sides["base"]), "".join(sides["theirs"])))
            state = "clean"
        elif bare.startswith(("<<<<<<<", "|||||||", ">>>>>>>")) or bare == "=======":
            return None
        else:
            sides[state].append(line)
    if state != "clean":
        return None
    if clean:
        out.append("".join(clean))
    return out


def has_conflict_markers(text: str | None) -> bool:
    """Whether ``text`` holds both a ``<<<<<<<`` and a ``>>>>>>>`` marker line (each the seven
    characters alone or followed by a space, as git writes them): a file committed with a conflict
    left unresolved. None (a deleted file) holds none."""
    if not text:
        return False
    opened = closed = False
    for line in text.splitlines():
        if len(line) >= 7 and (len(line) == 7 or line[7] == " "):
            opened = opened or line.startswith("<<<<<<<")
            closed = closed or line.startswith(">>>>>>>")
            if opened and closed:
                return True
    return False


@functools.lru_cache(maxsize=32)
def _split_cached(merged: str) -> tuple[Piece, ...] | None:
    """:func:`split_merge` remembered for the last files: every rule and baseline reads the same
    file's hunks (a str caches its hash, so the look-up costs one comparison)."""
    pieces = split_merge(merged)
    return None if pieces is None else tuple(pieces)


def join_pieces(pieces: Sequence[Piece], choose: Callable[[Hunk], str | None]) -> str | None:
    """The file with each hunk replaced by ``choose(hunk)``; None as soon as one choice is None."""
    parts: list[str] = []
    for p in pieces:
        if isinstance(p, Hunk):
            got = choose(p)
            if got is None:
                return None
            parts.append(got)
        else:
            parts.append(p)
    return "".join(parts)


@dataclass(frozen=True)
class FileConflict:
    """One conflicted file of a pick, with the facts the rules read.

    ``base``/``ours``/``theirs``: full texts (UTF-8) of the upstream parent's, the fork's and
    upstream's file; None where that side has no file. ``merged``: ``git merge-file --diff3``
    output (labels fork / base / upstream), None when a side is absent or the file is binary.
    ``areas``: config areas of the path; ``divergent``: one of them is ``divergent``;
    ``fork_keeps``: the path is in ``resolve.keep_fork_areas``/``keep_fork_paths``.
    ``fork_is_upstream_version``: the fork's file (blob) is one upstream had at the merge base
    or in a commit after it up to the picked commit's parent — None when unknown.
    ``fork_is_later_upstream_version``: the fork's file is one upstream reached in a commit after
    the picked one (the fork already took it, out of order) — None when unknown.
    ``earlier``: rerere's memory, hunk fingerprint → the text that resolved it before.
    ``kept_deleted_before``: an earlier resolved pick met the fork's deletion of this path against
    an upstream change and kept it deleted.
    ``upstream_lines``: every line (stripped) of every version upstream had of this path from the
    merge base up to the picked commit's parent — a fork line not in it is the fork's own.
    ``later_upstream_lines``: every line (stripped) of the versions upstream gave this path after
    the picked commit, known when the pick was made (those behind ``fork_is_later_upstream_version``)
    — None when unknown. ``latest_upstream``: the text of the newest of those versions (None when
    there is none, it deletes the path, it is binary, or unknown).
    """

    path: str
    base: str | None
    ours: str | None
    theirs: str | None
    merged: str | None = None
    binary: bool = False
    areas: tuple[str, ...] = ()
    divergent: bool = False
    fork_keeps: bool = False
    fork_is_upstream_version: bool | None = None
    fork_is_later_upstream_version: bool | None = None
    earlier: Mapping[str, str] = field(default_factory=dict)
    kept_deleted_before: bool = False
    upstream_lines: frozenset[str] | None = None
    later_upstream_lines: frozenset[str] | None = None
    latest_upstream: str | None = None

    def hunks(self) -> list[Piece] | None:
        if self.merged is None:
            return None
        pieces = _split_cached(self.merged)
        return None if pieces is None else list(pieces)


@dataclass(frozen=True)
class Decision:
    """A rule's answer for one file: ``text`` the resolved file (None: the file is deleted),
    ``action``/``reason`` the File / Action / Reason note, ``rule`` the rule's name."""

    text: str | None
    action: str
    reason: str
    rule: str

    @property
    def deletes(self) -> bool:
        return self.text is None


@dataclass(frozen=True)
class Declined:
    """No rule was sure; ``tried`` names the rules that declined, in order."""

    tried: tuple[str, ...]
    reason: str = "no deterministic rule was sure; a person or the agent resolves this file"


Rule = Callable[[FileConflict], "Decision | None"]


def _areas(c: FileConflict) -> str:
    return ", ".join(c.areas) if c.areas else "no area"


# -- whole-file rules -----------------------------------------------------------------------
def rule_rerere(c: FileConflict) -> Decision | None:
    if not c.earlier:
        return None
    pieces = c.hunks()
    if not pieces or not any(isinstance(p, Hunk) for p in pieces):
        return None
    text = join_pieces(pieces, lambda h: c.earlier.get(h.fingerprint))
    if text is None:
        return None
    n = sum(isinstance(p, Hunk) for p in pieces)
    return Decision(text, f"reused the fork's earlier resolution of the same {n} conflict hunk(s)",
                    "the fork resolved exactly these conflicts before (same fork and upstream sides); "
                    "its resolution is applied again, as git rerere does", "rerere")


def rule_fork_keeps(c: FileConflict) -> Decision | None:
    if not c.fork_keeps or (c.ours is None and c.base is None):
        return None
    return Decision(c.ours, "kept the fork's file" if c.ours is not None else "kept the file deleted, as the fork has it",
                    f"the fork maintains this file itself ({_areas(c)}); upstream's change here is one the fork "
                    "already has or does not take", "fork-keeps")


def rule_fork_deleted(c: FileConflict) -> Decision | None:
    if c.ours is not None or c.base is None or c.theirs is None or not c.kept_deleted_before:
        return None
    return Decision(None, "kept the file deleted",
                    "the fork deleted this file and kept it deleted the last time upstream changed it; "
                    "upstream's change has nothing to apply to", "fork-deleted")


def rule_upstream_deleted(c: FileConflict) -> Decision | None:
    if c.theirs is not None or c.base is None or c.ours is None or c.fork_is_upstream_version is not True:
        return None
    return Decision(None, "deleted the file, as upstream does",
                    "upstream deletes this file and the fork's copy is one of upstream's own versions "
                    "(the fork never changed it)", "upstream-deleted")


def rule_fork_ahead(c: FileConflict) -> Decision | None:
    if c.ours is None or c.fork_is_later_upstream_version is not True:
        return None
    return Decision(c.ours, "kept the fork's file",
                    "the fork's file is upstream's own file from after this commit: the fork already has this change "
                    "(and later ones)", "fork-ahead")


def rule_upstream_file(c: FileConflict) -> Decision | None:
    if c.theirs is None or c.ours is None or c.fork_is_upstream_version is not True or c.divergent:
        return None
    return Decision(c.theirs, "took upstream's file",
                    "the fork's file is one of upstream's versions since the merge base: the fork never diverged "
                    "here, it only lags upstream", "upstream-file")


# -- hunk rules -----------------------------------------------------------------------------
def _lines(s: str) -> list[str]:
    return [ln.strip() for ln in s.splitlines() if ln.strip()]


def _significant(s: str) -> set[str]:
    """Lines that say something (stripped; at least one letter or digit, not a lone keyword)."""
    return {ln for ln in _lines(s) if re.search(r"[A-Za-z0-9]", ln) and ln not in _TRIVIAL}


_TRIVIAL = {"else", "else {", "} else {", "return", "break;", "continue;", "pass", "return;", "#endif", "end", "@end"}


def _fork_has(h: Hunk) -> bool:
    """The fork's side already holds upstream's change: every non-blank line upstream adds in
    this hunk is in the fork's side, and none it removes is (compared line by line, stripped)."""
    base, theirs, ours = _lines(h.base), _lines(h.theirs), set(_lines(h.ours))
    added = [ln for ln in theirs if ln not in set(base)]
    removed = [ln for ln in base if ln not in set(theirs)]
    if not added and not removed:
        return False
    return all(ln in ours for ln in added) and not any(ln in ours for ln in removed)


def rule_fork_has_change(c: FileConflict) -> Decision | None:
    pieces = c.hunks()
    if not pieces or not any(isinstance(p, Hunk) for p in pieces):
        return None
    text = join_pieces(pieces, lambda h: h.ours if _fork_has(h) else None)
    if text is None:
        return None
    return Decision(text, "kept the fork's side of every conflict hunk",
                    "in each conflict hunk the fork already holds upstream's change (the lines upstream adds "
                    "are there, those it removes are gone)", "fork-has-change")


def rule_divergent_hunks(c: FileConflict) -> Decision | None:
    if not c.divergent:
        return None
    pieces = c.hunks()
    if not pieces or not any(isinstance(p, Hunk) for p in pieces):
        return None

    def side(h: Hunk) -> str | None:
        # upstream only rewrites lines the fork rewrote too: nothing of upstream's is left outside
        # the fork's own rewrite, so the fork's side stands
        base = set(_lines(h.base))
        added = [ln for ln in _lines(h.theirs) if ln not in base]
        return h.ours if base and not added else None
    text = join_pieces(pieces, side)
    if text is None:
        return None
    return Decision(text, "kept the fork's side of every conflict hunk",
                    f"the file is the fork's own divergent code ({_areas(c)}) and upstream's side of each hunk "
                    "only removes or reorders lines the fork rewrote", "divergent-hunks")


def rule_additive_union(c: FileConflict) -> Decision | None:
    pieces = c.hunks()
    if not pieces or not any(isinstance(p, Hunk) for p in pieces):
        return None
    def both(h: Hunk) -> str | None:
        # sides that share a line are two versions of one addition (the fork picked an earlier
        # version of upstream's block): not a union
        if h.base.strip() or not h.ours.strip() or not h.theirs.strip():
            return None
        return h.ours + h.theirs if not (_significant(h.ours) & _significant(h.theirs)) else None
    text = join_pieces(pieces, both)
    if text is None:
        return None
    return Decision(text, "kept both sides of every conflict hunk, the fork's lines first",
                    "both sides only add lines at the same place; neither addition replaces the other",
                    "additive-union")


def _block_in(block: str, text: str) -> bool:
    """``block``'s non-blank lines (stripped) occur in ``text`` as consecutive non-blank lines."""
    want = _lines(block)
    if not want:
        return False
    have = _lines(text)
    n = len(want)
    return any(have[i:i + n] == want for i in range(len(have) - n + 1))


def _fork_ahead_hunk(h: Hunk, latest: str) -> bool:
    """The fork's side of ``h`` is upstream's newer version of these lines, and upstream's side is
    one upstream itself replaced later: either the fork's block is in ``latest`` (upstream's newest
    known version) and upstream's block is not, or every line the fork adds is in ``latest`` and
    upstream adds lines none of which ``latest`` still has."""
    if _block_in(h.ours, latest) and not _block_in(h.theirs, latest):
        return True
    now, base = set(_lines(latest)), set(_lines(h.base))
    fork_adds = [ln for ln in _significant(h.ours) if ln not in base]
    up_adds = [ln for ln in _significant(h.theirs) if ln not in base]
    return bool(up_adds) and all(ln in now for ln in fork_adds) and not any(ln in now for ln in up_adds)


def rule_fork_ahead_hunks(c: FileConflict) -> Decision | None:
    if c.latest_upstream is None:
        return None
    pieces = c.hunks()
    if not pieces or not any(isinstance(p, Hunk) for p in pieces):
        return None
    text = join_pieces(pieces, lambda h: h.ours if _fork_ahead_hunk(h, c.latest_upstream) else None)
    if text is None:
        return None
    return Decision(text, "kept the fork's side of every conflict hunk",
                    "in each conflict hunk the fork's side is upstream's own later version of those lines and "
                    "upstream's side is one upstream itself replaced after this commit", "fork-ahead-hunks")


def _edits(a: list[str], b: list[str]) -> list[tuple[int, int, list[str]]]:
    """``b`` as edits of ``a``: (start, end, replacement lines) over ``a``'s line indices."""
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [(i1, i2, b[j1:j2]) for tag, i1, i2, j1, j2 in sm.get_opcodes() if tag != "equal"]


def line_merge(base: str, ours: str, theirs: str) -> str | None:
    """Both sides' edits of ``base`` applied when no base line is edited by both (a line-level
    three-way merge that, unlike git's, lets edits touch): an insertion at the start of the other
    side's replacement goes before it, at its end after it; None when two edits overlap, both
    sides insert different lines at one place, or one side has no edit."""
    b = base.splitlines(keepends=True)
    mine, other = _edits(b, ours.splitlines(keepends=True)), _edits(b, theirs.splitlines(keepends=True))
    if not mine or not other:
        return None
    for i1, i2, ri in mine:
        for j1, j2, rj in other:
            if (i1, i2, ri) == (j1, j2, rj):
                continue
            if max(i1, j1) < min(i2, j2) or (i1 == i2 == j1 == j2):
                return None
            if (i1 == i2 and j1 < i1 < j2) or (j1 == j2 and i1 < j1 < i2):
                return None
    edits: list[tuple[int, int, list[str]]] = []
    for e in mine + other:
        if e not in edits:
            edits.append(e)
    edits.sort(key=lambda e: (e[0], e[1] != e[0], e[1]))
    out: list[str] = []
    pos = 0
    for i1, i2, rep in edits:
        out += b[pos:i1] + rep
        pos = i2
    return "".join(out + b[pos:])


def rule_line_merge(c: FileConflict) -> Decision | None:
    pieces = c.hunks()
    if not pieces or not any(isinstance(p, Hunk) for p in pieces):
        return None
    text = join_pieces(pieces, lambda h: line_merge(h.base, h.ours, h.theirs))
    if text is None:
        return None
    return Decision(text, "applied both sides' edits in every conflict hunk",
                    "in each conflict hunk the fork and upstream edit different lines of the base (adjacent, "
                    "which is why git stopped); both edits are applied", "line-merge")


#: Every rule by name, in the order :func:`resolve_file` tries them.
RULES: dict[str, Rule] = {
    "rerere": rule_rerere,
    "fork-keeps": rule_fork_keeps,
    "fork-deleted": rule_fork_deleted,
    "upstream-deleted": rule_upstream_deleted,
    "fork-ahead": rule_fork_ahead,
    "upstream-file": rule_upstream_file,
    "fork-has-change": rule_fork_has_change,
    "divergent-hunks": rule_divergent_hunks,
    "additive-union": rule_additive_union,
    "fork-ahead-hunks": rule_fork_ahead_hunks,
    "line-merge": rule_line_merge,
}


def resolve_file(conflict: FileConflict, rules: Sequence[str]) -> Decision | Declined:
    """The first sure decision of ``rules`` (names of :data:`RULES`, tried in the given order),
    or :class:`Declined` naming them all; a binary file is always declined. Raises KeyError for
    an unknown rule name."""
    if conflict.binary:
        return Declined(tuple(rules), "a binary file: no rule reads it")
    for name in rules:
        d = RULES[name](conflict)
        if d is not None:
            return d
    return Declined(tuple(rules))


# -- baselines (whole-file strategies the benchmark compares with) ---------------------------
def baseline(name: str, c: FileConflict) -> str | None | Declined:
    """``ours`` / ``theirs`` (the whole file of one side, None = absent) or ``union`` / ``ours-hunks``
    / ``theirs-hunks`` (every conflict hunk takes that side, as ``git merge-file --union|--ours|--theirs``);
    Declined when the merge output is unavailable (a side absent, binary)."""
    if name == "ours":
        return c.ours
    if name == "theirs":
        return c.theirs
    pieces = c.hunks()
    if pieces is None:
        return Declined((name,), "no merge output")
    pick = {"union": lambda h: h.ours + h.theirs, "ours-hunks": lambda h: h.ours, "theirs-hunks": lambda h: h.theirs}[name]
    return join_pieces(pieces, pick)


def _find_line(text: str, piece: str, pos: int) -> int:
    """The first index ≥ ``pos`` where ``piece`` starts a line of ``text``, or -1."""
    at = text.find(piece, pos)
    while at > 0 and text[at - 1] != "\n":
        at = text.find(piece, at + 1)
    return at


@dataclass(frozen=True)
class Memory:
    """What the fork's earlier resolved picks teach the memory rules: ``resolutions`` (hunk
    fingerprint → the text that resolved it, for ``rerere``) and ``kept_deleted`` (paths whose
    deletion the fork kept against an upstream change, for ``fork-deleted``)."""

    resolutions: Mapping[str, str] = field(default_factory=dict)
    kept_deleted: frozenset[str] = frozenset()

    def learn(self, conflict: FileConflict, landed: str | None) -> "Memory":
        """This memory plus what landing ``landed`` (None: deleted) for ``conflict`` teaches; a
        file landed with conflict markers in it (committed unresolved) teaches no resolution."""
        res, kept = self.resolutions, self.kept_deleted
        if conflict.merged is not None and landed is not None and not has_conflict_markers(landed):
            got = resolutions_of(conflict.merged, landed)
            if got:
                res = {**res, **got}
        if conflict.ours is None and conflict.theirs is not None and landed is None and not conflict.binary:
            kept = kept | {conflict.path}
        return Memory(res, kept)

    def apply(self, conflict: FileConflict) -> FileConflict:
        """``conflict`` with this memory's facts filled in."""
        return replace(conflict, earlier=self.resolutions, kept_deleted_before=conflict.path in self.kept_deleted)


def resolutions_of(merged: str, landed: str) -> dict[str, str]:
    """rerere's recording step: how ``landed`` resolved each conflict hunk of ``merged``.

    The clean pieces anchor the hunks: the landed file must start with the first clean piece,
    hold the middle ones in order, each at the start of a line, and end with the last; the text between two anchors resolved
    the hunk between them. Returns fingerprint → resolution text ({} when an anchor is not found,
    or an anchor is empty between two hunks and so places nothing)."""
    pieces = split_merge(merged)
    if not pieces:
        return {}
    out: dict[str, str] = {}
    pos = 0
    pending: Hunk | None = None
    for i, p in enumerate(pieces):
        if isinstance(p, Hunk):
            if pending is not None:
                return {}
            pending = p
            continue
        last = i == len(pieces) - 1
        if pending is None:
            if not landed.startswith(p):
                return {}
            pos = len(p)
            continue
        if last:
            at = len(landed) - len(p)
            if not landed.endswith(p) or at < pos or (at > 0 and landed[at - 1] != "\n"):
                return {}
        else:
            at = _find_line(landed, p, pos)
            if at < 0:
                return {}
        out[pending.fingerprint] = landed[pos:at]
        pending = None
        pos = at + len(p)
    if pending is not None:
        out[pending.fingerprint] = landed[pos:]
    return out
