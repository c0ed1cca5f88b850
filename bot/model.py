"""Plain data shared by the functional core (ledger, pins, plan, gate) and its edges.

Everything here is an immutable value: no I/O, no git objects, no clocks. Times are integer
seconds since the Unix epoch (UTC); shas are full 40-hex strings; paths are POSIX, relative to
the repository root.
"""
from __future__ import annotations

import functools
import re as _re
from dataclasses import dataclass
from enum import Enum


class Disposition(str, Enum):
    """Where one upstream commit stands in the fork (the ledger's answer)."""

    PICKED = "PICKED"                        # its change is in the fork
    NO_OP = "NO_OP"                          # reached, nothing to apply (already satisfied or empty)
    DEFERRED_BLOCKED = "DEFERRED_BLOCKED"    # postponed, with a reason
    SKIP_FOR_CURRENT_BASE = "SKIP_FOR_CURRENT_BASE"  # not applicable to the current base
    WONT_PORT = "WONT_PORT"                  # never, with a reason
    REVERTED = "REVERTED"                    # was picked, then backed out in the fork
    IN_FLIGHT = "IN_FLIGHT"                  # in an open forksync branch
    PENDING = "PENDING"                      # not decided yet


#: Dispositions that count as *handled* for the contiguous pin and the backlog.
HANDLED = frozenset({Disposition.PICKED, Disposition.NO_OP, Disposition.WONT_PORT,
                     Disposition.SKIP_FOR_CURRENT_BASE})

#: Dispositions of a commit no one has decided on: a commit an open sync unit carries whose
#: disposition is any other was decided while the unit was open (``bot.sync.shrink``).
UNDECIDED = frozenset({Disposition.IN_FLIGHT, Disposition.PENDING})


@dataclass(frozen=True)
class FileChange:
    """One changed file of a commit against its first parent.

    ``status`` is git's letter (A, M, D, R, C, T). ``old_path`` is set for renames/copies.
    ``old_ranges``/``new_ranges`` are the changed line ranges ``(start, count)`` of each hunk, in
    the old and new file (git's ``@@ -a,b +c,d @@``); empty when the diff is binary or missing.
    ``edits`` are the zero-context hunks inside them, ``(old_start, old_lines, new_start,
    new_lines)`` each, numbered as ``git diff -U0`` numbers them (a side with no lines starts at
    the line before): the lines the commit really changed, without git's 3 lines of context on
    either side. None when not read from a patch: git showed the change as binary (a NUL byte,
    a ``-diff`` attribute…), or the commit was analysed from its trees.
    """

    path: str
    status: str = "M"
    old_path: str | None = None
    old_ranges: tuple[tuple[int, int], ...] = ()
    new_ranges: tuple[tuple[int, int], ...] = ()
    hunk_headers: tuple[str, ...] = ()   # git's function-context text after @@ … @@, per hunk
    edits: tuple[tuple[int, int, int, int], ...] | None = None

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.path,) if not self.old_path or self.old_path == self.path else (self.old_path, self.path)


@dataclass(frozen=True)
class CommitInfo:
    """What the core needs to know of one commit (upstream or fork).

    ``message`` is the full commit message; ``pr`` the upstream PR number from a trailing
    ``(#N)`` in the subject, if any. ``patch_id`` is ``git patch-id --stable`` of the diff
    against the first parent (None when objects are missing or the commit is a merge).
    ``missing`` lists what could not be read (e.g. ``"blob 1a2b… (src/big.bin)"``); a commit
    with missing objects is still analysed as far as possible, never dropped silently.
    """

    sha: str
    parents: tuple[str, ...]
    message: str
    author_name: str = ""
    author_email: str = ""
    author_time: int = 0
    committer_time: int = 0
    files: tuple[FileChange, ...] = ()
    patch_id: str | None = None
    pr: int | None = None
    missing: tuple[str, ...] = ()

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]

    @functools.cached_property
    def paths(self) -> frozenset[str]:          # cached: the planner asks for it many times per commit
        return frozenset(p for f in self.files for p in f.paths)


@dataclass(frozen=True)
class Evidence:
    """Why a ledger entry has its disposition: the rule that fired and where.

    ``rule`` is one of: ``trailer:<name>``, ``cherry-picked-from``, ``pr-citation``,
    ``patch-id``, ``ancestry``, ``revert``, ``note``, ``empty``, ``in-flight``.
    """

    rule: str
    fork_commit: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class LedgerEntry:
    """The disposition of one upstream commit, with its evidence (newest last)."""

    sha: str
    index: int                      # position in the upstream first-parent range, 0 = oldest
    disposition: Disposition
    pr: int | None = None
    subject: str = ""
    committer_time: int = 0
    fork_commit: str | None = None  # the fork commit that carries it (PICKED/REVERTED)
    reason: str = ""                # for DEFERRED/SKIP/WONT_PORT/REVERTED
    isolated: bool = False          # picked as an urgent isolated pick (does not move the frontier)
    evidence: tuple[Evidence, ...] = ()


@dataclass(frozen=True)
class Decision:
    """A decision that lands no commit (defer, skip, won't-port, reconsider), as recorded in git
    notes under ``refs/notes/forksync`` or in a trailer of a later sync commit.
    ``disposition`` None means *reconsider* (lift the earlier decision)."""

    upstream_sha: str
    disposition: Disposition | None
    reason: str = ""
    by: str = ""
    time: int = 0
    source: str = "note"            # "note" or "trailer:<fork sha>"


@dataclass(frozen=True)
class PlanItem:
    """One upstream commit placed in a unit, with why it went there."""

    sha: str
    reason: str
    conflicts: tuple[str, ...] = ()   # files a predicted cherry-pick conflicts on


@dataclass(frozen=True)
class Unit:
    """A bundle or chain: the commits of one sync PR, in upstream order.

    ``id`` is stable: ``bundle-<first sha[:12]>`` or ``chain-<first sha[:12]>``.
    """

    id: str
    kind: str                         # "bundle" | "chain"
    items: tuple[PlanItem, ...]
    areas: tuple[str, ...] = ()
    reason: str = ""
    depends_on: tuple[str, ...] = ()  # unit ids (plan chains, open forksync branches) it lands after

    @property
    def shas(self) -> tuple[str, ...]:
        return tuple(i.sha for i in self.items)


@dataclass(frozen=True)
class Plan:
    units: tuple[Unit, ...]
    notes: tuple[str, ...] = ()       # e.g. commits left out and why
    as_of: int | None = None
    base: str | None = None           # the fork tip the plan predicts against
    no_ops: tuple[PlanItem, ...] = ()  # NO_OP candidates: picks predicted empty (already satisfied)


@dataclass(frozen=True)
class ConflictFile:
    """One path a pick conflicts on (``bot.git.apply``), as git would leave it.

    ``kind``: ``content`` (both sides changed the same lines; at the new path when a side renamed
    the file, as git reports it), ``rename`` (rename/delete, rename/rename), ``modify/delete`` (the fork modified it,
    upstream deleted it), ``delete/modify`` (the fork deleted it, upstream modified it),
    ``add/add`` (both added it with different content), ``binary`` (binary content, a symlink or
    a submodule: no markers can be written), ``mode`` (only the file mode conflicts).
    ``hunks``: the marker blocks of the conflict commit's file, each from its ``<<<<<<<`` line
    through its ``>>>>>>>`` line with the base section after ``|||||||`` (diff3 style), capped at
    60 lines plus one ``… N more lines`` line; empty for kinds without markers.
    ``old_path``: where the file was before one side renamed it (``path`` is where git left it).
    """

    path: str
    kind: str
    hunks: tuple[str, ...] = ()
    old_path: str = ""          # the path before a side renamed the file ("" when not renamed)


@dataclass(frozen=True)
class InFlightBranch:
    """An open forksync branch (``forksync/bundle-<id>`` / ``forksync/chain-<id>``) and the upstream
    commits it carries (read from ``Upstream-Commit`` trailers on the branch's own commits).

    ``copies``: upstream commits of the range whose patch (patch-id) is that of a commit of
    ``upstream_shas`` upstream's history no longer has (a rewritten upstream: the same change
    under a new sha) — their change is on the branch already (:func:`bot.sync.ingest.rewritten_copies`)."""

    name: str
    unit_id: str
    kind: str
    upstream_shas: tuple[str, ...]
    paths: frozenset[str] = frozenset()
    symbols: frozenset[str] = frozenset()
    tip: str | None = None
    copies: tuple[str, ...] = ()



#: a sync branch's name: ``forksync/<unit>``, or ``forksync/<fork ref>/<unit>`` for a fork ref other
#: than the repository's default branch (:func:`sync_branch`)
_SYNC_BRANCH = _re.compile(r"^forksync/(?:(?P<ref>.+)/)?(?P<unit>(?:bundle|chain)-[0-9A-Za-z_.-]+)$")


def short_branch(ref: str | None) -> str:
    """``main_perf`` for ``main_perf``, ``refs/heads/main_perf`` and ``refs/remotes/origin/main_perf``
    ("" for None). A remote's short form (``origin/main_perf``) is the caller's to resolve: only
    the repository knows its remotes (:func:`bot.git.repo.ref_name`)."""
    ref = ref or ""
    if ref.startswith("refs/heads/"):
        return ref[len("refs/heads/"):]
    if ref.startswith("refs/remotes/"):
        return ref[len("refs/remotes/"):].partition("/")[2]
    return ref


def sync_branch(unit_id: str, fork_ref: str | None = None, *, default: str | None = None) -> str:
    """The sync branch of unit ``unit_id`` (``chain-<sha12>``, ``bundle-<sha12>``) for ``fork_ref``.

    Unit ids come from upstream commits alone (:func:`bot.plan.partition.unit_id`), so two fork
    branches of one repository that plan the same unit (ROCm/triton's ``main_perf`` and
    ``release/internal/3.2.x`` both plan ``chain-7873637d7cf5``) need a name each: the
    repository's default branch ``default`` (and a ``fork_ref`` or ``default`` not given: the only
    fork ref) keeps ``forksync/<unit>``, the name every installation has its open PRs on; any other
    fork ref gets ``forksync/<fork ref>/<unit>`` (``forksync/release/internal/3.2.x/chain-…``).
    ``fork_ref`` and ``default``: a branch name, ``refs/heads/…`` or ``refs/remotes/<remote>/…``."""
    ref, dflt = short_branch(fork_ref), short_branch(default)
    if not ref or not dflt or ref == dflt:
        return f"forksync/{unit_id}"
    return f"forksync/{ref}/{unit_id}"


def sync_branch_ref(name: str) -> tuple[str, str] | None:
    """``(fork ref, unit id)`` a sync branch name carries: ``("", unit)`` for ``forksync/<unit>``
    (the default branch's, or one made before names carried the fork ref), ``(ref, unit)`` for
    ``forksync/<ref>/<unit>``; None for a name that is no unit's (``forksync/backout-…``,
    ``forksync/<ref>/backout-…``)."""
    m = _SYNC_BRANCH.match(name)
    return (m.group("ref") or "", m.group("unit")) if m else None


__all__ = [n for n in dir() if not n.startswith("_") and n not in {"annotations", "dataclass", "Enum"}]
