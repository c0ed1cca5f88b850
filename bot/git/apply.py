"""Apply (edge, local mode): materialize a plan unit as a local branch of the fork.

``forksync/<unit id>`` (``forksync/bundle-<sha12>``, ``forksync/chain-<sha12>``) gets **one fork
commit per upstream commit**, built **in memory** with libgit2 (pygit2): no checkout, no work tree.
Each pick is the 3-way merge ``git cherry-pick`` performs — ancestor = the upstream commit's first
parent's tree (``-m 1`` for merges; the empty tree for a root commit), ours = the branch's running
tree, theirs = the commit's tree (``Repository.merge_trees``) — written as a tree and committed with
``create_commit``. Each commit keeps the upstream author (name, e-mail, date and zone), is committed
by forksync's identity, and its message comes from ``templates/commit/pick.txt.j2`` (the upstream
message + ``Upstream-Commit: <sha>``, plus ``Upstream-Urgent: <reason>`` for an isolated urgent
pick, plus ``Forksync-Unit: <id>``), cleaned as ``git commit`` cleans a message given with ``-F``
(trailing blanks, repeated blank lines). Empty picks are committed (``--allow-empty``).

Only the objects the picks read are needed: a clone that lacks blobs no pick touches (the real
Triton fork's snapshot lacks two PDFs in ``third_party/tlx/doc/``) applies as a full clone does.

New trees and commits are held in memory and written at the end as one pack
(:mod:`bot.config.objects`): a loose object per tree and commit cost more than the merges.

**Same trees as ``git cherry-pick``.** tests/git/test_apply_trees.py compares the picks of the demo
scenario, of a scenario with every conflict kind, and on the real fork (when present) the
50-commit first bundle of 2026-04-15 in sequence and 30 sampled picks, with a real
``git cherry-pick --no-commit`` in a worktree (conflict commits included, marker labels aside).
Known differences, chosen deliberately:

* rename detection is libgit2's (``MergeFlag.FIND_RENAMES``, similarity 50 %, the same flag as the
  plan's predictor): git's ort also detects directory renames and, thanks to its "irrelevant
  renames" pruning, inexact renames beyond libgit2's candidate limit on a widely diverged fork;
  libgit2 then sees an add and a delete where git sees a rename (the plan predicts with libgit2
  too, so apply and plan agree with each other);
* rename detection reads every added/deleted blob on both sides: on a clone that lacks one (where
  git itself fails with ``unable to read sha1 file``) it is dropped for the rest of the unit and
  the picks merge without it (``ApplyResult.renames_off`` says why), as the predictor does;
* libgit2 merges file contents with Myers diff, git's ort with histogram diff: they can disagree
  on rare hunks of heavily edited files. A libgit2 conflict is settled by git (above); a pick
  libgit2 merges cleanly but git would not is committed as libgit2 merged it (not seen in the
  tests; asking git for every pick would double apply's cost).

**A conflict** found by libgit2 is handed to git itself: ``git merge-tree --write-tree`` (ort,
as ``git cherry-pick``; no checkout) merges the pick onto the same tree (:func:`git_merge_tree`).
Where git's histogram merge places the change cleanly after all, that tree is the pick; otherwise
the unit stops at that commit. With ``on_conflict="commit"`` (the default) the branch gets the
clean picks before it and then **one conflict commit**: the conflicted pick as git leaves it —
git's tree, conflicted files with diff3 markers relabelled ``<<<<<<< fork``, ``||||||| upstream
parent <sha12>``, ``>>>>>>> upstream <sha12> (<subject>)``, a modify/delete keeping the modified
side, a binary file keeping the fork's version; the markers are as long as the path's
``conflict-marker-size`` in the fork's tree says (handed to git, which reads no attributes in a
git dir), as git writes them in a work tree of the fork, so the marker rule that reads the file
at that size sees them. When git cannot merge (a root commit, or objects
git needs are missing) the conflict tree is built from libgit2's conflicts with ``git merge-file
--diff3`` on the three blobs read from the object database (:func:`conflict_tree`, through
:func:`bot.config.merge_file.merge_file_diff3`; same rules, Myers hunks). Kinds are in
:class:`bot.model.ConflictFile`. The conflict commit is authored by the upstream author,
committed by forksync, and its message (``templates/commit/conflict.txt.j2``:
``[CONFLICT] <subject without its (#N)>``, the conflicted files, ``Forksync-Conflict: <sha>`` and
``Forksync-Unit: <id>``) carries no ``Upstream-Commit:`` and no ``cherry picked from`` line: the
ledger never counts it as a pick (``bot.core.provenance`` drops every claim of a message with
``Forksync-Conflict:``, and the ledger never compares its patch-id). With ``on_conflict="stop"``
no conflict commit is written (a new branch is then created at the base when its first pick
conflicts). A pick that fails for another reason (objects it needs are missing) stops the unit
with ``ApplyResult.error`` and no conflict commit.

Safety rules:

* no ref moves until the end; then ``refs/heads/forksync/<unit>`` moves once, by compare-and-swap
  against the value read at the start (libgit2's ``set_target`` under the ref lock, or a create
  that fails if the branch appeared; :func:`_move`) — a concurrent move makes apply fail with
  :class:`ApplyError`, the commits written meanwhile staying unreferenced objects;
* applying again never rewrites the branch: it continues after its tip, skips upstream commits the
  branch already carries (``Upstream-Commit`` trailer) and reports the commits forksync did not
  write (no trailer or another committer), which stay as they are;
* a branch whose ``base..tip`` holds an **unresolved conflict commit** (``Forksync-Conflict: <sha>``
  and no commit of the branch carrying ``Upstream-Commit: <sha>``) gets nothing appended: apply
  reports that conflict again. Once the conflict commit is replaced by (or followed by) a commit
  with ``Upstream-Commit: <sha>``, that sha counts as already applied and the chain goes on;
* a branch checked out in any worktree of the repository is refused (moving it would change that
  checkout).
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

import pygit2
from pygit2.enums import DeltaStatus, MergeFlag, SortMode

from bot.config import renames
from bot.config.attributes import TreeAttributes, git_attributes_file, git_stops
from bot.config.merge_file import MergeFileError, merge_file_diff3
from bot.config.objects import open_buffered, open_repository
from bot.config.renames import DEFAULT_RENAME_LIMIT
from bot.config.trees import changed_paths, edit_entries, entries_at
from bot.core.markers import DEFAULT_MARKER_SIZE
from bot.git.repo import NO_LAZY_FETCH, fetch_advice
from bot.model import CommitInfo, ConflictFile, PlanItem, Unit
from bot.templating import render

COMMITTER = ("forksync", "forksync@users.noreply.github.com")

_UPSTREAM_TRAILER = re.compile(r"^Upstream-Commit:\s*([0-9a-f]{7,40})\b", re.MULTILINE | re.IGNORECASE)
_CONFLICT_TRAILER = re.compile(r"^Forksync-Conflict:\s*([0-9a-f]{7,40})\b", re.MULTILINE | re.IGNORECASE)
# forksync's deterministic rules' commit on a conflict commit (templates/commit/rule_resolution.txt.j2)
_RULES_TRAILER = re.compile(r"^Forksync-Rules:\s*([0-9a-f]{7,40})\b", re.MULTILINE | re.IGNORECASE)
_TRAILING_PR = re.compile(r"\s*\(#\d+\)\s*$")

#: lines kept of one marker block in :attr:`ConflictFile.hunks` (then one "… N more lines" line)
HUNK_LINES = 60
_BLOB_MODES = (0o100644, 0o100755)


class ApplyError(RuntimeError):
    """Apply cannot start or finish (bad repository, branch checked out elsewhere, missing
    commits, the branch moved meanwhile …)."""


@dataclass(frozen=True)
class ApplyResult:
    """What one apply did.

    ``picked``: ``(upstream sha, new fork sha)`` in order. ``already``: upstream commits the
    branch carried before. ``kept``: branch commits forksync did not write (left untouched).
    ``conflict``: the upstream sha the unit stopped at, with ``conflict_files`` (sorted paths) and
    ``conflicts`` (:class:`bot.model.ConflictFile` per conflicted path, in the same order);
    ``conflict_commit``: the conflict commit at the branch tip (None when the unit is clean, when
    ``on_conflict="stop"``, or on an error); ``error``: a non-conflict failure of that pick (e.g.
    objects the pick needs are missing). ``tip``: the branch tip after (None when the branch does
    not exist). ``remaining``: the unit's commits not applied (from the conflicted one on).
    ``renames_off``: why rename detection was dropped for this apply ("" when it was not).
    ``renames_skipped``: at the conflicted pick, why git or libgit2 skipped inexact rename
    detection (too many candidates for ``rename_limit``; "" when they did not)."""

    unit_id: str
    branch: str
    base: str
    start: str
    created: bool
    picked: tuple[tuple[str, str], ...] = ()
    already: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    conflict: str | None = None
    conflict_files: tuple[str, ...] = ()
    error: str = ""
    tip: str | None = None
    remaining: tuple[str, ...] = field(default=())
    conflict_commit: str | None = None
    conflicts: tuple[ConflictFile, ...] = ()
    renames_off: str = ""
    renames_skipped: str = ""

    @property
    def stopped(self) -> bool:
        return self.conflict is not None


def _env() -> dict[str, str]:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(k, None)
    return env


def _git(cwd, *argv, env, check=True, input=None) -> subprocess.CompletedProcess:
    p = subprocess.run(["git", *argv], cwd=str(cwd), env=env, capture_output=True, text=True, input=input)
    if check and p.returncode != 0:
        raise ApplyError(f"git {' '.join(argv)} failed in {cwd} ({p.returncode}): {p.stderr.strip()[:500]}")
    return p


def render_pick_message(commit: CommitInfo, *, unit_id: str | None = None, urgent_reason: str | None = None) -> str:
    """The fork commit message for a pick of ``commit`` (``templates/commit/pick.txt.j2``)."""
    msg = commit.message.rstrip("\n")
    return render("commit/pick.txt.j2", message=msg, sha=commit.sha, has_trailer_block=_has_trailer_block(msg),
                  urgent_reason=urgent_reason or "", unit_id=unit_id or "").rstrip("\n") + "\n"


def conflict_subject(subject: str) -> str:
    """``[CONFLICT] <subject>`` with a trailing ``(#N)`` removed: the conflict commit's subject
    must not read as a citation of the upstream PR (it is not a pick)."""
    return "[CONFLICT] " + _TRAILING_PR.sub("", subject.strip())


def render_conflict_message(commit: CommitInfo, conflicts: tuple[ConflictFile, ...], *,
                            unit_id: str | None = None) -> str:
    """The message of the conflict commit of ``commit`` (``templates/commit/conflict.txt.j2``):
    ``[CONFLICT] <subject>``, what it is, the conflicted files with their kind, and the trailers
    ``Forksync-Conflict: <sha>`` and ``Forksync-Unit: <id>`` (no ``Upstream-Commit:``)."""
    return _cleanup(render("commit/conflict.txt.j2", subject=conflict_subject(commit.subject), sha=commit.sha,
                           files=conflicts, unit_id=unit_id or ""))


#: the trailers git itself writes (trailer.c ``git_generated_prefixes``): one of them in a final
#: paragraph makes it a trailer block even when most of its lines are not ``Key: value``
_GIT_GENERATED = ("Signed-off-by: ", "(cherry picked from commit ")
#: ``Key:`` at the start of a line: a token of letters, digits and ``-``, optional blanks, the
#: ``:`` separator (trailer.c ``find_separator``)
_TRAILER_KEY = re.compile(r"[A-Za-z0-9-]+[ \t]*:")


def _has_trailer_block(msg: str) -> bool:
    """Whether ``msg``'s last paragraph is a trailer block by git's own rule (trailer.c
    ``find_trailer_block_start``, which ``git cherry-pick -x`` and ``git interpret-trailers``
    apply; git-interpret-trailers(1)): a paragraph after the title whose lines are all trailers
    (continuation lines, starting with a blank, belong to the trailer above them), or that holds
    a git-generated trailer (``Signed-off-by:``, ``(cherry picked from commit``) and at least 25 %
    trailers — a sign-off chain with a maintainer's ``[note]`` line stays one block. ``#`` lines
    are comments, ignored. No ``trailer.*`` configuration is read."""
    lines = msg.rstrip("\n").split("\n")
    title = next((i for i, ln in enumerate(lines) if not ln.startswith("#") and not ln.strip()), len(lines))
    trailers = others = continuations = 0
    recognized = False
    for ln in reversed(lines[title:]):
        if ln.startswith("#"):
            others, continuations = others + continuations, 0
        elif not ln.strip():
            if trailers == others == continuations == 0 and not recognized:
                continue              # blank lines at the end
            others += continuations
            return bool(trailers) and ((recognized and trailers * 3 >= others) or not others)
        elif ln.startswith(_GIT_GENERATED):
            trailers, continuations, recognized = trailers + 1, 0, True
        elif ln[0] in " \t":
            continuations += 1
        elif _TRAILER_KEY.match(ln):
            trailers, continuations = trailers + 1, 0
        else:
            others, continuations = others + 1 + continuations, 0
    return False


def _cleanup(msg: str) -> str:
    """``git commit --cleanup=whitespace`` (the default for ``-F``): trailing whitespace of each
    line removed, runs of blank lines collapsed to one, no blank lines at either end, one final
    newline."""
    out: list[str] = []
    for line in msg.split("\n"):
        line = line.rstrip()
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n" if out else ""


def urgent_unit(commit: CommitInfo, reason: str) -> Unit:
    """A one-commit unit for an isolated urgent pick (``chain-<sha12>``); apply it with
    ``apply_unit(..., urgent_reason=reason)`` so the commit carries ``Upstream-Urgent:`` and does
    not move the frontier."""
    if not reason.strip():
        raise ValueError("an urgent pick needs a reason (it is written into Upstream-Urgent:)")
    return Unit(id=f"chain-{commit.sha[:12]}", kind="chain",
                items=(PlanItem(commit.sha, f"urgent isolated pick: {reason}"),),
                reason=f"urgent isolated pick: {reason}")


# ---------------------------------------------------------------------------------------------
# repository reading

def _checked_out_elsewhere(repo: pygit2.Repository, ref: str) -> str | None:
    """The work tree that has ``ref`` checked out (the main one or a linked ``git worktree``), read
    from the same files git reads (``HEAD``, ``worktrees/<name>/HEAD`` and ``gitdir``); None if none."""
    git_dir = Path(repo.path)
    if not repo.is_bare and _head_ref(git_dir / "HEAD") == ref:
        return repo.workdir.rstrip("/") if repo.workdir else str(git_dir)
    wts = git_dir / "worktrees"
    if wts.is_dir():
        for d in sorted(wts.iterdir()):
            if _head_ref(d / "HEAD") == ref:
                try:
                    return str(Path((d / "gitdir").read_text().strip()).parent)
                except OSError:
                    return str(d)
    return None


def checked_out_in(git_dir: str | os.PathLike, ref: str) -> str | None:
    """The work tree of the repository at ``git_dir`` that has ``ref`` (``refs/heads/…``) checked
    out (the main one or a linked ``git worktree``); None if none. Apply, and every step that moves
    a sync branch, refuses such a branch: moving it would change that checkout under the person."""
    return _checked_out_elsewhere(open_repository(str(git_dir)), ref)


def _head_ref(head: Path) -> str | None:
    try:
        text = head.read_text().strip()
    except OSError:
        return None
    return text[len("ref: "):].strip() if text.startswith("ref: ") else None


def rewritten_base(fork_git_dir: str | os.PathLike, tip: str, base: str,
                   committer_email: str = COMMITTER[1]) -> tuple[list[str], list[str]]:
    """Whether the fork's history was rewritten under a sync branch's ``tip`` (a rev: its ref or a
    sha): ``(dropped, foreign)``, oldest first. ``dropped``: the commits of ``base..tip`` below the
    branch's first forksync commit — fork commits the branch was built on that ``base`` (the
    fork's tip) no longer has, i.e. a force push removed them; empty when the branch still grows
    from the fork's history. ``foreign``: the commits above it that forksync did not write (a
    person's). Both empty for a missing tip or one with no forksync commit (not a sync branch)."""
    repo = open_repository(str(fork_git_dir))
    tip_sha = _resolve(repo, tip)
    base_sha = _resolve(repo, base)
    if tip_sha is None or base_sha is None:
        return [], []
    walker = repo.walk(tip_sha, SortMode.TOPOLOGICAL | SortMode.REVERSE)
    walker.hide(base_sha)
    dropped: list[str] = []
    foreign: list[str] = []
    seen_own = False
    for c in walker:
        msg = c.message
        ours = c.committer.email.lower() == committer_email.lower()
        own = ours and bool(_UPSTREAM_TRAILER.search(msg) or _CONFLICT_TRAILER.search(msg) or _RULES_TRAILER.search(msg))
        if not seen_own and not own:
            dropped.append(str(c.id))
            continue
        seen_own = True
        if not own:
            foreign.append(str(c.id))
    return (dropped, foreign) if seen_own else ([], [])


def _resolve(repo: pygit2.Repository, rev: str) -> str | None:
    try:
        return str(repo.revparse_single(rev).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        return None


def _lookup(repo: pygit2.Repository, ref: str) -> pygit2.Reference | None:
    try:
        r = repo.references[ref]
        r.peel(pygit2.Commit)
        return r
    except (KeyError, ValueError, pygit2.GitError):
        return None


def _move(repo: pygit2.Repository, ref: str, old_ref: pygit2.Reference | None, new: str, message: str) -> None:
    """Move ``ref`` to ``new`` by compare-and-swap under git's ref lock: libgit2's
    ``git_reference_set_target`` writes only while the ref still holds the value ``old_ref`` was
    read with, and ``create_reference_direct(force=False)`` only while the ref does not exist (as
    ``git update-ref <ref> <new> <old>`` does). Raises :class:`ApplyError` when it moved."""
    try:
        if old_ref is None:
            repo.create_reference_direct(ref, pygit2.Oid(hex=new), False, message=message)
        else:
            old_ref.set_target(new, message)
    except (pygit2.AlreadyExistsError, pygit2.GitError, ValueError) as e:
        was = f"at {str(old_ref.target)[:12]}" if old_ref is not None else "absent"
        raise ApplyError(f"{ref[len('refs/heads/'):]} moved while apply ran (it was {was}); the branch was not "
                         f"changed — apply again ({str(e).strip()[:200]})") from None


@dataclass
class _Branch:
    already: list[str]
    kept: list[str]
    open_conflict: tuple[str, str] | None      # (upstream sha, conflict commit sha)


def _read_branch(repo: pygit2.Repository, tip: str, base: str, unit: Unit, committer_email: str) -> _Branch:
    """What ``base..tip`` already holds (oldest first): the unit's upstream commits it carries
    (``Upstream-Commit``), the commits forksync did not write, and the oldest conflict commit
    whose upstream commit no commit of the branch carries."""
    walker = repo.walk(tip, SortMode.TOPOLOGICAL | SortMode.REVERSE)
    walker.hide(base)
    already: list[str] = []
    kept: list[str] = []
    carried: set[str] = set()
    conflicts: list[tuple[str, str]] = []
    for c in walker:
        msg = c.message
        ups = _UPSTREAM_TRAILER.findall(msg)
        confl = _CONFLICT_TRAILER.findall(msg)
        ours = c.committer.email.lower() == committer_email.lower()
        own = confl or _RULES_TRAILER.search(msg)      # a conflict commit, or the rules' commit on one
        if (not ups and not (own and ours)) or not ours:
            kept.append(str(c.id))
        for u in ups:
            carried.add(u.lower())
            full = next((s for s in unit.shas if s.startswith(u.lower())), None)
            if full and full not in already:
                already.append(full)
        for u in confl:
            full = next((s for s in unit.shas if s.startswith(u.lower())), u.lower())
            conflicts.append((full, str(c.id)))
    open_ = [(u, c) for u, c in conflicts if not any(u.startswith(k) or k.startswith(u) for k in carried)]
    return _Branch(already, kept, open_[0] if open_ else None)


# ---------------------------------------------------------------------------------------------
# in-memory picks

def _pick_trees(repo: pygit2.Repository, commit: pygit2.Commit):
    """``(ancestor tree, commit tree)`` of a cherry-pick: the first parent's tree (``-m 1``), or
    the empty tree for a root commit."""
    if commit.parent_ids:
        return repo[commit.parent_ids[0]].peel(pygit2.Commit).tree, commit.tree
    return repo[repo.TreeBuilder().write()], commit.tree


class _Merger:
    """``git cherry-pick``'s merge, with rename detection dropped (for the rest of the unit) when
    it cannot read a blob some side added or deleted."""

    def __init__(self, repo: pygit2.Repository, rename_detection: bool, rename_limit: int = DEFAULT_RENAME_LIMIT):
        self.repo = repo
        self.flags = int(MergeFlag.FIND_RENAMES) if rename_detection else 0
        self.limit = rename_limit
        self.renames_off = ""

    def skipped(self, commit: pygit2.Commit, ours) -> str:
        """Why libgit2 skipped inexact rename detection for this pick ("" when it did not, or
        renames are off): libgit2 does not say, so the candidates are counted."""
        if not self.flags & int(MergeFlag.FIND_RENAMES):
            return ""
        anc, theirs = _pick_trees(self.repo, commit)
        return renames.skipped_by_limit(self.repo, anc, ours, theirs, self.limit)

    def merge(self, commit: pygit2.Commit, ours) -> tuple[pygit2.Index, object]:
        """``(merged index, ancestor tree)``; raises pygit2/Key/Value errors for objects the pick
        itself needs. Renames are detected with forksync's ``rename_limit``, never the
        repository's ``merge.renameLimit`` (:mod:`bot.config.renames`)."""
        anc, theirs = _pick_trees(self.repo, commit)
        try:
            return renames.merge_trees(self.repo, anc, ours, theirs, flags=self.flags, limit=self.limit), anc
        except (KeyError, ValueError, pygit2.GitError) as e:
            if not self.flags & int(MergeFlag.FIND_RENAMES):
                raise
            idx = self.repo.merge_trees(anc, ours, theirs, flags=self.flags & ~int(MergeFlag.FIND_RENAMES))
            self.flags &= ~int(MergeFlag.FIND_RENAMES)
            self.renames_off = str(e).strip().strip("'")[:200]
            return idx, anc


def absent_blob(repo: pygit2.Repository, commit: pygit2.Commit, ours) -> tuple[str, str] | None:
    """``(path, blob sha)`` of a blob a pick of ``commit`` onto tree ``ours`` reads that the
    repository lacks (a partial clone or snapshot), files changed on both sides first; None when
    none is absent (or a tree itself is). Only trees are compared: no blob is read."""
    try:
        anc, theirs = _pick_trees(repo, commit)
        sides = [list(anc.diff_to_tree(theirs).deltas), list(anc.diff_to_tree(ours).deltas)]
    except (KeyError, ValueError, pygit2.GitError):
        return None
    both = {d.new_file.path for d in sides[0]} & {d.new_file.path for d in sides[1]}
    found = []
    for deltas in sides:
        for d in deltas:
            for f in (d.old_file, d.new_file):
                if int(f.mode) in _BLOB_MODES and not f.id.raw == bytes(20) and f.id not in repo:
                    found.append((f.path not in both, f.path, str(f.id)))
    return min(found)[1:] if found else None


def _cannot_merge(repo: pygit2.Repository, commit: pygit2.Commit, ours, e: Exception) -> str:
    """Why a pick could not be merged, in one line: the blob the repository lacks and its path
    when that is why, else libgit2's message."""
    sha = str(commit.id)[:12]
    absent = absent_blob(repo, commit, ours)
    if absent is None:
        return f"cannot merge {sha}: {str(e).strip()[:400]}"
    return (f"cannot pick {sha}: the repository lacks blob {absent[1][:12]} of {absent[0]} "
            f"{fetch_advice(repo.path.rstrip('/'), [absent[1]])}; then apply again")


def _write_index(repo: pygit2.Repository, idx: pygit2.Index) -> pygit2.Oid:
    """Write a merged index as a tree. Strict object creation is off meanwhile: a tree may name a
    blob this clone lacks (carried, untouched, from the fork tip)."""
    pygit2.settings.enable_strict_object_creation(False)
    try:
        return idx.write_tree(repo)
    finally:
        pygit2.settings.enable_strict_object_creation(True)


def _clean_tree(repo: pygit2.Repository, idx: pygit2.Index, ours) -> pygit2.Oid:
    """The tree of a clean merge, written by editing ``ours`` at the paths where the merged index
    differs from it (``Index.diff_to_tree``: with rename detection a change may land on a path the
    pick itself did not touch): the same tree ``Index.write_tree`` gives (tree ids are canonical)
    without hashing every directory of the index. Falls back to ``write_tree`` for a file that
    becomes a directory or back."""
    entries: dict[str, tuple | None] = {}
    for d in idx.diff_to_tree(ours).deltas:
        if d.status == DeltaStatus.DELETED:
            entries[d.old_file.path] = None
        else:
            if d.old_file.path != d.new_file.path:
                entries.setdefault(d.old_file.path, None)
            entries[d.new_file.path] = (d.new_file.id, int(d.new_file.mode))
    if not entries:
        return ours.id
    oid = edit_entries(repo, ours, entries)
    return oid if oid is not None else _write_index(repo, idx)


def _commit(repo: pygit2.Repository, author, committer, message: str, tree, parent: str) -> str:
    """Write a commit (no ref moved). Its tree and parent were just written or read here: strict
    object creation (a look-up of each) is off meanwhile."""
    pygit2.settings.enable_strict_object_creation(False)
    try:
        return str(repo.create_commit(None, author, committer, message, tree, [parent]))
    finally:
        pygit2.settings.enable_strict_object_creation(True)


# ---------------------------------------------------------------------------------------------
# conflicts

def _labels(repo: pygit2.Repository, commit: pygit2.Commit) -> tuple[str, str, str]:
    subject = commit.message.split("\n", 1)[0].strip()
    if len(subject) > 60:
        subject = subject[:59] + "…"
    parent = str(commit.parent_ids[0])[:12] if commit.parent_ids else "(none)"
    return "fork", f"upstream parent {parent}", f"upstream {str(commit.id)[:12]} ({subject})"


def _is_binary(repo: pygit2.Repository, entry) -> bool:
    if entry is None:
        return False
    if int(entry.mode) not in _BLOB_MODES:
        return True          # a symlink or a submodule: nothing to write markers into
    return b"\0" in repo[entry.id].data[:8000]


def hunks_of(text: bytes | str, *, cap: int = HUNK_LINES) -> tuple[str, ...]:
    """The conflict marker blocks of a file: each from a ``<<<<<<<`` line through the next
    ``>>>>>>>`` line, inclusive, as one string (lines joined by newlines); a block longer than
    ``cap`` lines keeps its first ``cap`` lines and a ``… N more lines`` line."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    out: list[str] = []
    block: list[str] | None = None
    for line in text.split("\n"):
        if block is None:
            if line.startswith("<<<<<<<"):
                block = [line]
            continue
        block.append(line)
        if line.startswith(">>>>>>>"):
            if len(block) > cap:
                block = block[:cap] + [f"… {len(block) - cap} more lines"]
            out.append("\n".join(block))
            block = None
    return tuple(out)


def _pair_renames(repo: pygit2.Repository, triples: list[list], anc_tree, theirs_tree, renames: bool) -> list[list]:
    """libgit2 records a rename conflict at two paths (ancestor and ours at the old path, theirs
    alone at the new one, or the other way round); git records it at the new path. Pair them back
    into ``[ancestor, ours, theirs, path written, old path]``: upstream's renames are read from the
    commit's own diff; a fork rename is paired when exactly one lone fork entry and one
    fork-deleted entry remain."""
    out = [t + [None] for t in triples]
    if not renames:
        return out
    try:
        diff = anc_tree.diff_to_tree(theirs_tree)
        diff.find_similar()
        up_renames = {d.old_file.path: d.new_file.path for d in diff.deltas if d.status == DeltaStatus.RENAMED}
    except (KeyError, ValueError, pygit2.GitError):
        up_renames = {}
    by_path = {t[3]: t for t in out}
    merged: set[str] = set()
    for t in out:
        a, o, th, path, _ = t
        mate = by_path.get(up_renames.get(path, ""))
        if a is not None and o is not None and th is None and mate is not None \
                and mate[0] is None and mate[1] is None and mate[2] is not None:
            t[2], t[3], t[4] = mate[2], mate[3], path
            merged.add(mate[3])
    out = [t for t in out if not (t[0] is None and t[1] is None and t[3] in merged)]
    lone_ours = [t for t in out if t[0] is None and t[1] is not None and t[2] is None]
    fork_deleted = [t for t in out if t[0] is not None and t[1] is None and t[2] is not None]
    if len(lone_ours) == 1 and len(fork_deleted) == 1:
        mate, t = lone_ours[0], fork_deleted[0]
        out.remove(mate)
        t[1], t[3], t[4] = mate[1], mate[3], t[3]
    return out


def conflict_tree(repo: pygit2.Repository, idx: pygit2.Index, commit: pygit2.Commit, anc_tree,
                  renames: bool = True, marker_size: Callable[[str], int] | None = None
                  ) -> tuple[pygit2.Oid, tuple[ConflictFile, ...]]:
    """The tree of the conflict commit for a merged index with conflicts: the merge result with
    every conflicted file written as git leaves it (diff3 markers, of the length ``marker_size(path)``
    gives — the path's ``conflict-marker-size`` in the fork's tree; 7 when None; kinds in
    :class:`bot.model.ConflictFile`), and the conflicted files, sorted by path. Modifies ``idx``."""
    labels = _labels(repo, commit)
    triples = [[a, o, t, (o or t or a).path] for a, o, t in list(idx.conflicts)]
    resolved = _pair_renames(repo, triples, anc_tree, commit.tree, renames)
    for a, o, t in list(idx.conflicts):
        del idx.conflicts[(o or t or a).path]
    files: list[ConflictFile] = []
    for a, o, t, path, old_path in resolved:
        renamed = old_path is not None
        keep = None            # (path, oid, mode) written, or None (deleted)
        hunks: tuple[str, ...] = ()
        if o is not None and t is not None:
            if _is_binary(repo, a) or _is_binary(repo, o) or _is_binary(repo, t):
                kind, keep = "binary", (o.path, o.id, int(o.mode))
            else:
                base = repo[a.id].data if a is not None else b""
                try:
                    text, n = merge_file_diff3(base, repo[o.id].data, repo[t.id].data, labels,
                                               marker_size(path) if marker_size else DEFAULT_MARKER_SIZE)
                except MergeFileError as e:       # e.g. content git finds binary after all
                    raise ApplyError(str(e)) from None
                mode = int(t.mode) if a is not None and int(o.mode) == int(a.mode) else int(o.mode)
                keep = (path, repo.create_blob(text), mode)
                hunks = hunks_of(text) if n else ()
                kind = "add/add" if a is None else "content" if n else "mode"
        elif o is not None:
            kind = "rename" if renamed or a is None else "modify/delete"
            keep = (o.path, o.id, int(o.mode))
        elif t is not None:
            kind = "rename" if renamed or a is None else "delete/modify"
            keep = (t.path, t.id, int(t.mode))
        else:
            kind = "rename"      # both sides moved it away (rename/rename): nothing stays at the old path
        if keep is not None:
            idx.add(pygit2.IndexEntry(keep[0], keep[1], keep[2]))
        written = keep[0] if keep else path
        files.append(ConflictFile(written, kind, hunks, old_path if renamed and old_path != written else ""))
    files.sort(key=lambda f: f.path)
    return _write_index(repo, idx), tuple(files)


def _both_changed(anc, ours, theirs) -> list[str]:
    """The paths the pick (``anc`` → ``theirs``) changes that ``ours`` changed too (where git may
    run a merge driver)."""
    paths = changed_paths(anc, theirs)
    return [p for p, a, o in zip(paths, entries_at(anc, paths), entries_at(ours, paths))
            if a is not None and o is not None and a != o]


def _stops_tree(repo: pygit2.Repository, idx: pygit2.Index, ours, anc, stops: list[str]):
    """The conflict tree where git cannot say (a root commit, objects it lacks) of a pick libgit2
    merged but git stops on at ``stops`` (:func:`bot.config.attributes.git_stops`): libgit2's
    merge with the fork's file kept at each of them, as git's binary driver keeps it."""
    files = []
    for p in stops:
        e = ours[p]
        idx.add(pygit2.IndexEntry(p, e.id, e.filemode))
        files.append(ConflictFile(p, "add/add" if not _in_tree(anc, p) else "binary"))
    return _clean_tree(repo, idx, ours), tuple(files)


def _git_kind(stages: set[int], types: set[str]) -> str:
    """A conflicted path's kind from the stages git left and its message types."""
    if any("binary" in t for t in types):
        return "binary"
    if stages == {1, 2, 3}:
        return "content" if "CONFLICT (contents)" in types or not any("mode" in t for t in types) else "mode"
    if any("rename" in t for t in types):
        return "rename"
    return {frozenset({2, 3}): "add/add", frozenset({1, 2}): "modify/delete",
            frozenset({1, 3}): "delete/modify"}.get(frozenset(stages), "rename")


def git_merge_tree(repo: pygit2.Repository, commit: pygit2.Commit, ours, *, flush=None,
                   detect_renames: bool = True, rename_limit: int = DEFAULT_RENAME_LIMIT,
                   attrs: TreeAttributes | None = None) -> tuple | None:
    """``git cherry-pick``'s merge of ``commit`` onto tree ``ours`` done by git itself (ort: its
    rename handling and histogram content merges), without a checkout: ``git -c
    merge.conflictStyle=diff3 merge-tree --write-tree -z A <commit>`` where ``A`` is an unreferenced
    commit of tree ``ours`` whose parent is ``commit``'s first parent (so that parent is the merge
    base). Returns ``("clean", tree id, (), skipped)``, ``("conflict", tree id, files, skipped)`` — the tree as git
    leaves it, the markers relabelled ``fork`` / ``upstream parent <sha12>`` / ``upstream <sha12>
    (<subject>)``, files as :class:`bot.model.ConflictFile` sorted by path — or None when git
    cannot merge it (a root commit, objects git needs are missing). ``flush``: called before git
    runs (writes the objects a buffered repository holds in memory). Renames are detected with
    ``rename_limit`` whatever the user's git config says, unless ``detect_renames`` is off (apply's
    own merges detect none: ``merge.renames=false``, so git then reads no blob for rename detection
    either, as when it was dropped for a blob the clone lacks); a fourth element says, in git's
    words, why rename detection was skipped ("" when it was not). A file renamed on one side names
    its old path (``ConflictFile.old_path``: the ancestor's path of the blob git used as the base).
    git reads no ``.gitattributes`` in a git dir (git 2.42's ``--attr-source`` aside): the
    ``merge`` attribute ours' tree gives each file both sides changed (``attrs``: the reader, whose
    memo serves a unit) is handed to it as ``core.attributesFile`` (in place of the user's global
    file, whose ``merge`` lines the reader took in), so a file the fork marks ``merge=binary`` /
    ``-merge`` / ``binary`` conflicts as in a work tree of the fork."""
    if not commit.parent_ids:
        return None
    parent = str(commit.parent_ids[0])
    sig = pygit2.Signature(COMMITTER[0], COMMITTER[1], 0, 0)
    a = str(repo.create_commit(None, sig, sig, "forksync: the branch tree, as a merge input\n", ours.id, [parent]))
    if flush is not None:
        flush()             # objects held in memory (bot.config.objects) must be on disk for git
    rename_args = renames.git_config_args(rename_limit) if detect_renames else ["-c", "merge.renames=false"]
    sizes: dict[str, int] = {}
    try:
        anc = repo[parent].peel(pygit2.Commit).tree
        attrs = attrs or TreeAttributes(repo)
        both = _both_changed(anc, ours, commit.tree)
        # the marker length too: read against a size the fork sets, git's default 7 would be no
        # marker at all, and an unresolved file would pass the check that guards the fold
        sizes = {p: attrs.marker_size(ours, p, a) for p in changed_paths(anc, commit.tree)}
        lines = git_attributes_file({p: attrs.merge(ours, p, a) for p in both}, sizes)
    except (KeyError, ValueError, pygit2.GitError):
        lines = ""
    with tempfile.NamedTemporaryFile("w", prefix="forksync-attributes-", encoding="utf-8") as af:
        af.write(lines)
        af.flush()
        p = subprocess.run(["git", *NO_LAZY_FETCH, *rename_args, "-c", "merge.conflictStyle=diff3",
                            "-c", f"core.attributesFile={af.name}", "merge-tree", "--write-tree", "-z", a,
                            str(commit.id)], cwd=repo.path, env=_env(), capture_output=True)
    if p.returncode not in (0, 1):
        return None
    skipped = "; ".join(ln.removeprefix("warning: ").strip() for ln in p.stderr.decode(errors="replace").splitlines()
                        if "rename detection was skipped" in ln or "renamelimit" in ln.lower())
    fields = p.stdout.split(b"\0")
    tree = fields[0].decode()
    if p.returncode == 0:
        return ("clean", tree, (), skipped)
    stages: dict[str, set[int]] = {}
    base_blob: dict[str, str] = {}
    i = 1
    while i < len(fields) and fields[i]:
        meta, path = fields[i].split(b"\t", 1)
        mode_oid_stage = meta.split(b" ")
        stages.setdefault(path.decode("utf-8", "surrogateescape"), set()).add(int(mode_oid_stage[2]))
        if mode_oid_stage[2] == b"1":
            base_blob[path.decode("utf-8", "surrogateescape")] = mode_oid_stage[1].decode()
        i += 1
    old_paths = _old_paths(repo, repo[parent].peel(pygit2.Commit).tree, base_blob)
    i += 1
    types: dict[str, set[str]] = {}
    # each message is `<count of paths> <paths…> <type> <text>`; after them git may print advice
    # with no count (a submodule conflict's "Recursive merging with submodules …"), not a message
    while i < len(fields) and fields[i].isdigit():
        n = int(fields[i])
        kind = fields[i + 1 + n].decode()
        for raw in fields[i + 1:i + 1 + n]:
            types.setdefault(raw.decode("utf-8", "surrogateescape"), set()).add(kind)
        i += n + 3
    labels = _labels(repo, commit)

    def marks(n: int) -> list:
        """git's labels on markers of length ``n`` → forksync's."""
        return [(re.compile(rb"^<{%d} " % n + a.encode() + rb"(?::[^\n]*)?$", re.MULTILINE),
                 b"<" * n + b" " + labels[0].encode()),
                (re.compile(rb"^\|{%d} " % n + parent[:4].encode() + rb"[0-9a-f]*(?::[^\n]*)?$", re.MULTILINE),
                 b"|" * n + b" " + labels[1].encode()),
                (re.compile(rb"^>{%d} " % n + str(commit.id).encode() + rb"(?::[^\n]*)?$", re.MULTILINE),
                 b">" * n + b" " + labels[2].encode())]
    idx = pygit2.Index()
    idx.read_tree(repo[tree])
    files: list[ConflictFile] = []
    for path in sorted(stages):
        kind = _git_kind(stages[path], types.get(path, set()))
        hunks: tuple[str, ...] = ()
        if path in idx and kind in ("content", "add/add", "rename") and int(idx[path].mode) in _BLOB_MODES:
            e = idx[path]
            data = repo[e.id].data
            for rx, label in marks(sizes.get(path, DEFAULT_MARKER_SIZE)):
                data = rx.sub(lambda _m, label=label: label, data)
            if data != repo[e.id].data:
                idx.add(pygit2.IndexEntry(path, repo.create_blob(data), e.mode))
            hunks = hunks_of(data)
        files.append(ConflictFile(path, kind, hunks, old_paths.get(path, "")))
    return ("conflict", str(_write_index(repo, idx)), tuple(files), skipped)


def _old_paths(repo: pygit2.Repository, anc_tree, base_blob: dict[str, str]) -> dict[str, str]:
    """``{conflicted path: its ancestor path}`` for conflicted paths the ancestor does not have
    whose base (stage 1) blob the ancestor holds at another path: a file one side renamed."""
    want = {b: p for p, b in base_blob.items() if not _in_tree(anc_tree, p)}
    if not want:
        return {}
    out: dict[str, str] = {}

    def walk(tree, prefix: str) -> None:
        for e in tree:
            if e.type_str == "tree":
                walk(repo[e.id], prefix + e.name + "/")
            elif str(e.id) in want and want[str(e.id)] not in out:
                out[want[str(e.id)]] = prefix + e.name
    walk(anc_tree, "")
    return out


def _in_tree(tree, path: str) -> bool:
    try:
        tree[path]
        return True
    except KeyError:
        return False


# ---------------------------------------------------------------------------------------------
# apply

def apply_unit(fork_git_dir: str | os.PathLike, unit: Unit, *, base: str,
               commits: Mapping[str, CommitInfo], upstream_git_dir: str | os.PathLike | None = None,
               urgent_reason: str | None = None, committer: tuple[str, str] = COMMITTER,
               when: int | None = None, on_conflict: str = "commit",
               rename_detection: bool = True, rename_limit: int = DEFAULT_RENAME_LIMIT,
               branch: str | None = None) -> ApplyResult:
    """Materialize ``unit`` as ``refs/heads/forksync/<unit.id>`` in the fork repository.

    ``base``: the fork tip sha a new branch starts from — and an existing one holding nothing of
    its own whose tip ``base`` descends from (left at an older fork tip by a first pick that
    stopped without writing): it moves forward to ``base``. ``commits``: ``CommitInfo`` for every
    upstream sha of the unit (its message; the author is read from the commit itself).
    ``upstream_git_dir``: where the upstream objects live when not in the fork repository (they
    are fetched into it, no refs written). ``committer``: ``(name, e-mail)``. ``when``: committer
    time (epoch s, UTC; None = now), for reproducible tests. ``on_conflict``: ``"commit"`` (end
    the branch with a conflict commit) or ``"stop"`` (write nothing for the conflicted pick).
    ``rename_detection``: libgit2 rename detection in the merges (git's cherry-pick detects
    renames; see the module docstring). ``rename_limit``: the rename candidates libgit2 and git
    examine (config ``rename_limit``; the repository's ``merge.renameLimit`` is never read); a
    pick where detection was skipped says so in ``ApplyResult.renames_skipped``. ``branch``: the
    branch to write instead (``forksync/<fork ref>/<unit>`` for a fork ref other than the
    repository's default branch, :func:`bot.model.sync_branch`); it must be a ``forksync/`` name.

    Returns an :class:`ApplyResult`; raises :class:`ApplyError` when apply cannot start (unknown
    base, branch checked out, no commit data, upstream objects missing) or the branch moved
    meanwhile, and ``ValueError`` for an unknown ``on_conflict``.
    """
    if on_conflict not in ("commit", "stop"):
        raise ValueError(f"on_conflict must be 'commit' or 'stop', not {on_conflict!r}")
    git_dir = str(Path(fork_git_dir).resolve())
    branch = branch or f"forksync/{unit.id}"
    if not branch.startswith("forksync/"):
        raise ValueError(f"refusing to write {branch!r}: apply writes forksync/… sync branches only")
    ref = f"refs/heads/{branch}"
    missing_info = [s for s in unit.shas if s not in commits]
    if missing_info:
        raise ApplyError(f"no commit data for {missing_info[0]} of {unit.id}; re-plan and try again")
    try:
        repo, mem = open_buffered(git_dir)
    except pygit2.GitError as e:
        raise ApplyError(f"{git_dir} is not a git repository: {e}") from None
    where = _checked_out_elsewhere(repo, ref)
    if where:
        raise ApplyError(f"{branch} is checked out in {where}; switch that worktree to another branch first "
                         "(apply never moves a checked-out branch)")
    base_sha = _resolve(repo, base)
    if base_sha is None:
        raise ApplyError(f"the fork tip {base} is not in {git_dir}")
    old_ref = _lookup(repo, ref)
    old = str(old_ref.peel(pygit2.Commit).id) if old_ref is not None else None
    start = old or base_sha
    br = _read_branch(repo, old, base_sha, unit, committer[1]) if old else _Branch([], [], None)
    if old is not None and old != base_sha and not (br.already or br.kept or br.open_conflict) \
            and repo.descendant_of(base_sha, old):
        # a branch holding nothing of its own (a first pick that stopped without writing left it
        # at the fork tip of that run, which the fork has moved past): the unit starts on the fork
        # tip as a new branch would, not on the older tip; the branch moves forward to it
        start = base_sha
    already, kept = tuple(br.already), tuple(br.kept)
    if br.open_conflict is not None:
        return _open_conflict(repo, unit, br, branch=branch, base=base, start=start, tip=old,
                              rename_detection=rename_detection,
                              flush=mem.flush, rename_limit=rename_limit)
    todo = [s for s in unit.shas if s not in already]
    if not todo:
        return ApplyResult(unit.id, branch, base, start, created=False, already=already, kept=kept, tip=old)
    if _ensure_objects(repo, git_dir, upstream_git_dir, todo):
        repo, mem = open_buffered(git_dir)      # new packs: reopen the object database
        old_ref = _lookup(repo, ref)
        if (str(old_ref.peel(pygit2.Commit).id) if old_ref is not None else None) != old:
            raise ApplyError(f"{branch} moved while apply fetched upstream commits; apply again")

    merger = _Merger(repo, rename_detection, rename_limit)
    attrs = TreeAttributes(repo)
    skipped = ""
    now = int(time.time()) if when is None else int(when)
    signer = pygit2.Signature(committer[0], committer[1], now, 0)
    picked: list[tuple[str, str]] = []
    conflict = None
    conflict_commit = None
    conflicts: tuple[ConflictFile, ...] = ()
    error = ""
    head = start
    ours = repo[start].peel(pygit2.Commit).tree
    for sha in todo:
        up = repo[sha].peel(pygit2.Commit)
        try:
            idx, anc = merger.merge(up, ours)
        except (KeyError, ValueError, pygit2.GitError) as e:
            conflict, error = sha, _cannot_merge(repo, up, ours, e)
            break
        try:
            # libgit2 merges what git stops on: a file the fork's .gitattributes marks binary / -merge
            # (no attributes are read in a git dir or a bare mirror), an add/add of one blob in two modes
            stops = git_stops(repo, anc, ours, up.tree, changed_paths(anc, up.tree), attrs, head) \
                if idx.conflicts is None else []
            if idx.conflicts is not None or stops:
                by_git = git_merge_tree(repo, up, ours, flush=mem.flush, detect_renames=bool(merger.flags),
                                        rename_limit=rename_limit, attrs=attrs)
                skipped = (by_git[3] if by_git is not None else "") or merger.skipped(up, ours)
                if by_git is not None and by_git[0] == "clean":
                    # libgit2's Myers merge conflicts where git's histogram merge does not: the pick
                    # is what git cherry-pick makes of it
                    idx = None
                    tree_id = pygit2.Oid(hex=by_git[1])
                else:
                    conflict = sha
                    if by_git is not None:
                        tree, conflicts = pygit2.Oid(hex=by_git[1]), by_git[2]
                    elif idx.conflicts is not None:
                        tree, conflicts = conflict_tree(repo, idx, up, anc, renames=bool(merger.flags),
                                                        marker_size=lambda p, ours=ours: attrs.marker_size(ours, p))
                    else:
                        tree, conflicts = _stops_tree(repo, idx, ours, anc, stops)
            if conflict is not None:
                if on_conflict == "commit":
                    msg = render_conflict_message(commits[sha], conflicts, unit_id=unit.id)
                    head = str(repo.create_commit(None, up.author, signer, msg, tree, [head]))
                    conflict_commit = head
                break
            if idx is not None:
                tree_id = _clean_tree(repo, idx, ours)
            msg = _cleanup(render_pick_message(commits[sha], unit_id=unit.id, urgent_reason=urgent_reason))
            head = _commit(repo, up.author, signer, msg, tree_id, head)
            picked.append((sha, head))
            ours = repo[tree_id]
        except (ApplyError, KeyError, ValueError, OSError, pygit2.GitError) as e:
            # the pick failed past its merge (git merge-tree, a tree or the commit could not be
            # written): the unit stops at this upstream commit with the cause, as for a merge
            # that fails; nothing of this pick is referenced, the picks before it are kept
            conflict, conflicts, conflict_commit = sha, (), None
            error = f"cannot pick {sha[:12]}: {(str(e).strip() or type(e).__name__)[:400]}"
            break
    # a branch that does not exist yet is created even when the first pick stops it (at the base
    # when nothing was written): the person resolving needs a branch; an existing one moves only forward
    moved = head != (old or start) or (old is None and conflict is not None)
    if moved:
        mem.flush()        # the new trees and commits, as one pack (bot/config/objects.py)
        _move(repo, ref, old_ref, head, f"forksync apply {unit.id}")
    tip = head if moved else old
    remaining = tuple(todo[len(picked):])
    return ApplyResult(unit.id, branch, base, start, created=old is None and tip is not None, picked=tuple(picked),
                       already=already, kept=kept, conflict=conflict,
                       conflict_files=tuple(f.path for f in conflicts), error=error, tip=tip, remaining=remaining,
                       conflict_commit=conflict_commit, conflicts=conflicts, renames_off=merger.renames_off,
                       renames_skipped=skipped if conflict is not None else "")


_LISTED = re.compile(r"^- (.+?) \((content|rename|modify/delete|delete/modify|add/add|binary|mode)"
                     r"(?:, renamed from (.+))?\)$", re.MULTILINE)


def conflicts_of(repo: pygit2.Repository, commit: pygit2.Commit) -> tuple[ConflictFile, ...] | None:
    """The conflicted files a conflict commit holds, read back from it (nothing is written): the
    paths and kinds its message lists (``templates/commit/conflict.txt.j2``) and the marker blocks
    of those files in its tree. None when its message lists none (edited by hand)."""
    listed = _LISTED.findall(commit.message)
    if not listed:
        return None
    out = []
    for path, kind, old_path in listed:
        hunks: tuple[str, ...] = ()
        try:
            e = commit.tree[path]
            if e.filemode in _BLOB_MODES:
                hunks = hunks_of(repo[e.id].data)
        except (KeyError, ValueError, pygit2.GitError):
            pass
        out.append(ConflictFile(path, kind, hunks, old_path))
    return tuple(out)


def _open_conflict(repo: pygit2.Repository, unit: Unit, br: _Branch, *, branch: str, base: str, start: str, tip: str,
                   rename_detection: bool, flush, rename_limit: int = DEFAULT_RENAME_LIMIT) -> ApplyResult:
    """The result for a branch that holds an unresolved conflict commit: nothing appended; the
    conflicted files read back from the conflict commit (recomputed, by merging the upstream
    commit onto the conflict commit's parent, only when its message no longer lists them)."""
    up_sha, commit_sha = br.open_conflict
    merger = _Merger(repo, rename_detection, rename_limit)
    conflicts: tuple[ConflictFile, ...] | None = None
    try:
        cc = repo[commit_sha].peel(pygit2.Commit)
        conflicts = conflicts_of(repo, cc)
        if conflicts is None:
            up = repo[up_sha].peel(pygit2.Commit)
            by_git = git_merge_tree(repo, up, cc.parents[0].tree, flush=flush, rename_limit=rename_limit)
            if by_git is not None:
                conflicts = by_git[2]
            else:
                idx, anc = merger.merge(up, cc.parents[0].tree)
                if idx.conflicts is not None:
                    _, conflicts = conflict_tree(repo, idx, up, anc, renames=bool(merger.flags))
    except (KeyError, ValueError, IndexError, pygit2.GitError):
        pass           # the upstream commit is not here: the conflict stays reported without its files
    conflicts = conflicts or ()
    shas = [s for s in unit.shas if s not in br.already]
    # the conflicted commit is not applied either, also when a re-plan's unit left it out (it
    # is in flight on the branch): the count a person reads is the same on every apply
    remaining = tuple(shas[shas.index(up_sha):]) if up_sha in shas else (up_sha, *shas)
    return ApplyResult(unit.id, branch, base, start, created=False, already=tuple(br.already),
                       kept=tuple(br.kept), conflict=up_sha, conflict_files=tuple(f.path for f in conflicts),
                       tip=tip, remaining=remaining, conflict_commit=commit_sha, conflicts=conflicts,
                       renames_off=merger.renames_off)


def apply_urgent(fork_git_dir: str | os.PathLike, commit: CommitInfo, reason: str, *, base: str,
                 upstream_git_dir: str | os.PathLike | None = None, committer: tuple[str, str] = COMMITTER,
                 when: int | None = None, on_conflict: str = "commit") -> ApplyResult:
    """Pick one upstream commit out of sequence (``chain-<sha12>``, ``Upstream-Urgent: <reason>``)."""
    return apply_unit(fork_git_dir, urgent_unit(commit, reason), base=base, commits={commit.sha: commit},
                      upstream_git_dir=upstream_git_dir, urgent_reason=reason, committer=committer, when=when,
                      on_conflict=on_conflict)


def _ensure_objects(repo: pygit2.Repository, git_dir: str, upstream_git_dir, shas: list[str]) -> bool:
    """Fetch upstream commits into the fork repository when it lacks them (objects only).
    Returns whether anything was fetched."""
    lacking = [s for s in shas if _resolve(repo, s) is None]
    if not lacking:
        return False
    if upstream_git_dir is None:
        raise ApplyError(f"upstream commit {lacking[0]} is not in the fork repository {git_dir}; "
                         "give the upstream repository (--upstream) so apply can fetch it")
    # --no-write-fetch-head: FETCH_HEAD is the person's (what their last `git fetch` got, which
    # `git merge FETCH_HEAD` reads next), never forksync's
    p = _git(git_dir, "-c", "uploadpack.allowAnySHA1InWant=true", "fetch", "-q", "--no-tags", "--no-write-fetch-head",
             str(Path(upstream_git_dir).resolve()), *lacking, env=_env(), check=False)
    fresh = open_repository(git_dir)
    still = [s for s in lacking if _resolve(fresh, s) is None]
    if still:
        raise ApplyError(f"could not fetch upstream commit {still[0]} from {upstream_git_dir} into {git_dir}: "
                         f"{p.stderr.strip()[:300]}")
    return True


def already_in(git_dir: str | os.PathLike, onto: str, sha: str) -> bool:
    """True when picking ``sha`` onto ``onto`` changes nothing: its change is already there.

    The same 3-way merge as a pick (ancestor: the commit's first parent — a merge commit is judged
    by its first-parent diff, as ``git cherry-pick -m 1``), with no conflict and a result tree equal
    to ``onto``'s. Verifiable from git alone, so a ``NO_OP`` decided on it can be recorded as a note.
    Raises ValueError for an unknown revision."""
    repo = open_repository(str(git_dir))
    try:
        base = repo.revparse_single(onto).peel(pygit2.Commit)
        c = repo.revparse_single(sha).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError) as e:
        raise ValueError(f"unknown revision in {git_dir}: {e}") from e
    ancestor = repo[c.parent_ids[0]].peel(pygit2.Commit).tree if c.parent_ids else repo[repo.TreeBuilder().write()]
    idx = repo.merge_trees(ancestor, base.tree, c.tree, flags=0)
    if idx.conflicts is not None:
        return False
    return idx.write_tree(repo) == base.tree.id
