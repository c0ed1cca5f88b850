"""Replaying a pick or a merge in memory (an edge: pygit2 ``merge_trees``).

* :class:`Merger` — the conflicts of picking an upstream commit onto a fork commit, as
  ``git cherry-pick`` finds them, or of merging one into a fork commit over their merge base, as
  ``git merge`` does, surviving blobs missing from a partial snapshot or clone;
* :func:`read_text` — a blob as text (or binary).

One file's 3-way merge with diff3 markers, the rules' hunk input, is
:func:`bot.config.merge_file.diff3_text` (shared with the conflict agent's prompt and apply).
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

import pygit2
from pygit2.enums import DeltaStatus, DiffFind, MergeFlag

from bot.config import renames
from bot.config.renames import DEFAULT_RENAME_LIMIT

FIND_RENAMES = int(MergeFlag.FIND_RENAMES)


def read_text(repo: pygit2.Repository, oid) -> tuple[str | None, bool]:
    """(text, binary) of a blob; KeyError when the object is missing."""
    data = repo[oid].data
    if b"\0" in data[:8000]:
        return None, True
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return None, True


@dataclass
class ConflictEntry:
    """One conflict of a merged index: ``path`` and its ancestor, ours and theirs index entries
    (``pygit2.IndexEntry``; None where that side has no file)."""

    path: str
    anc: object
    ours: object
    theirs: object


class Merger:
    """``merge_trees`` that survives missing blobs. libgit2's rename detection reads every added
    and deleted file, so one missing blob anywhere in the fork's tree (a partial snapshot) fails
    the whole merge; so trees that hold missing blobs are merged without those files, rewritten in
    a scratch repository whose alternates point at the real one (nothing is written there). The
    files set aside are recorded per upstream commit; the merged result never names them."""

    def __init__(self, repo: pygit2.Repository, rename_limit: int = DEFAULT_RENAME_LIMIT):
        self.repo = repo
        self.rename_limit = rename_limit     # forksync's own, never the repository's merge.renameLimit
        self._scratch: pygit2.Repository | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._memo: dict[str, tuple[str, ...]] = {}
        self.set_aside: dict[str, tuple[str, ...]] = {}    # key (a pick: the upstream commit) → paths merged without

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = self._scratch = None

    def _missing(self, tree: pygit2.Tree, prefix: str = "") -> tuple[str, ...]:
        key = str(tree.id)
        hit = self._memo.get(key)
        if hit is None:
            odb, out = self.repo.odb, []
            for e in tree:
                if e.type_str == "tree":
                    out += [f"{e.name}/{p}" for p in self._missing(self.repo[e.id])]
                elif e.type_str == "blob" and e.id not in odb:
                    out.append(e.name)
            hit = self._memo[key] = tuple(out)
        return hit

    def _without(self, tree: pygit2.Tree, paths: tuple[str, ...]) -> pygit2.Tree:
        if self._scratch is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="forksync-replay-")
            self._scratch = pygit2.init_repository(self._tmp.name, bare=True)
            with open(os.path.join(self._tmp.name, "objects", "info", "alternates"), "w") as f:
                f.write(os.path.realpath(os.path.join(self.repo.path, "objects")) + "\n")
            self._scratch = pygit2.Repository(self._tmp.name)
        sc = self._scratch
        if not paths:
            return sc[tree.id]
        by_dir: dict[str, list[str]] = {}
        for p in paths:
            head, _, rest = p.partition("/")
            by_dir.setdefault(head, []).append(rest)
        tb = sc.TreeBuilder(sc[tree.id])
        for head, rests in by_dir.items():
            if "" in rests:
                tb.remove(head)
            else:
                sub = self._without(sc[tree[head].id], tuple(rests))
                tb.insert(head, sub.id, pygit2.enums.FileMode.TREE)
        return sc[tb.write()]

    def conflicts(self, onto: pygit2.Commit, up: pygit2.Commit) -> tuple[list[ConflictEntry], list[str]]:
        """``(conflicts, affected)`` of picking ``up`` onto ``onto`` (:meth:`merge` of the upstream
        parent's, ``onto``'s and ``up``'s trees; set-aside files recorded under ``up``'s sha)."""
        return self.merge(up.parents[0].tree, onto.tree, up.tree, str(up.id))

    def merge(self, ancestor: pygit2.Tree, ours: pygit2.Tree, theirs: pygit2.Tree, key: str) -> tuple[list[ConflictEntry], list[str]]:
        """``(conflicts, affected)`` of the three-way merge of ``ours`` (the fork's) and ``theirs``
        (upstream's) over ``ancestor``, with rename detection. Files with a missing blob are left
        out of all three trees alike and recorded in ``set_aside[key]``; ``affected`` names those
        the merge needs (upstream changes them), which the caller skips and counts. Raises
        KeyError/GitError when a tree itself is missing."""
        trees = (ancestor, ours, theirs)
        missing = [self._missing(t) for t in trees]      # memoized per subtree: cheap after the first merge
        if not any(missing):
            idx = renames.merge_trees(self.repo, *trees, flags=FIND_RENAMES, limit=self.rename_limit)
            return join_renames(self.repo, trees, conflict_entries(idx), self.rename_limit), []
        gone = tuple(sorted(set().union(*missing)))
        # the merge needs a file only where upstream changes it; elsewhere the fork's side stands
        affected = [p for p in gone if _entry_id(trees[0], p) != _entry_id(trees[2], p)]
        self.set_aside[key] = gone
        stripped = [self._without(t, tuple(p for p in gone if _entry_id(t, p) is not None)) for t in trees]
        idx = renames.merge_trees(self._scratch, *(t.id for t in stripped), flags=FIND_RENAMES, limit=self.rename_limit)
        return join_renames(self._scratch, stripped, conflict_entries(idx), self.rename_limit), affected


def _entry_id(tree: pygit2.Tree, path: str) -> str | None:
    try:
        return str(tree[path].id)
    except KeyError:
        return None


def conflict_entries(idx: pygit2.Index) -> list[ConflictEntry]:
    if idx.conflicts is None:
        return []
    out = []
    for anc, ours, theirs in idx.conflicts:
        path = next(e.path for e in (ours, theirs, anc) if e is not None)
        out.append(ConflictEntry(path, anc, ours, theirs))
    return out


def join_renames(repo: pygit2.Repository, trees, entries: list[ConflictEntry], limit: int) -> list[ConflictEntry]:
    """``entries`` with each conflict of a renamed file as one entry at its new path.

    libgit2 records a conflict of a file one side renamed (and the other changed) with each
    stage at its own side's path: the ancestor's and the unrenamed side's at the old path, the
    renaming side's at the new one. Its conflict iterator groups stages by path, so pygit2 yields
    two conflicts — the old path looking like a change against a deletion, the new path like a
    file only one side has (``git merge`` reports one conflict, at the new path). An entry with
    no ancestor and one side only is such a half: that side's rename of an old path to it
    (rename detection of the side against the ancestor, the merge's threshold and ``limit``)
    names the other half, an entry at the old path with an ancestor and no file of that side;
    the two become one entry at the new path. A half whose other half is not found is kept as it
    is. ``trees``: the ancestor's, ours and theirs trees the merge read (in ``repo``)."""
    halves = [(i, e) for i, e in enumerate(entries) if e.anc is None and (e.ours is None) != (e.theirs is None)]
    if not halves:
        return entries
    at = {e.path: i for i, e in enumerate(entries)}
    out: list[ConflictEntry | None] = list(entries)
    renamed: dict[int, dict[str, str]] = {}
    for i, half in halves:
        side = 2 if half.ours is None else 1            # the renaming side: theirs (2) or ours (1)
        if side not in renamed:
            diff = repo.diff(trees[0], trees[side])
            diff.find_similar(flags=DiffFind.FIND_RENAMES, rename_threshold=renames.RENAME_THRESHOLD, rename_limit=limit)
            renamed[side] = {d.new_file.path: d.old_file.path for d in diff.deltas if d.status == DeltaStatus.RENAMED}
        j = at.get(renamed[side].get(half.path, ""))
        old = out[j] if j is not None else None
        if old is None or old.anc is None or (old.theirs if side == 2 else old.ours) is not None:
            continue
        out[i] = (ConflictEntry(half.path, old.anc, old.ours, half.theirs) if side == 2
                  else ConflictEntry(half.path, old.anc, half.ours, old.theirs))
        out[j] = None
    return [e for e in out if e is not None]
