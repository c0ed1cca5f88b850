"""The rename options of forksync's own merges, never the user's git config.

``git merge-tree`` (ort) and libgit2's ``git_merge_trees`` both read ``merge.renameLimit`` (then
``diff.renameLimit``) from the repository's and the user's config when not told otherwise: a user
with a low limit made apply skip inexact rename detection — conflicts reported at the *old*
path of a file the fork had renamed — while the plan, on another repository, predicted a clean
pick. forksync's merges set the limit themselves (``rename_limit`` in ``.github/forksync.yml``,
default :data:`DEFAULT_RENAME_LIMIT`) and the similarity threshold (50 %, git's default).

:data:`DEFAULT_RENAME_LIMIT`: 7000 is git's own default ``merge.renameLimit``. On the real
Triton fork the largest candidate count of a pick is measured in docs/plan.md ("Renames").

libgit2 never says it skipped inexact detection (its merge code drops it silently when the
deleted or added paths on a side exceed the limit); :func:`skipped_by_limit` counts those
candidates the same way so the skip can be reported.
"""
from __future__ import annotations

import pygit2
from pygit2.enums import DeltaStatus, MergeFavor, MergeFileFlag

DEFAULT_RENAME_LIMIT = 7000
RENAME_THRESHOLD = 50           # percent similarity, git's and libgit2's default


def git_config_args(limit: int) -> list[str]:
    """``-c`` options that make a ``git`` command detect renames with ``limit``, whatever the
    user's config says (put them before the subcommand)."""
    return ["-c", "merge.renames=true", "-c", "diff.renames=true", "-c", f"merge.renameLimit={limit}",
            "-c", f"diff.renameLimit={limit}"]


def merge_trees(repo: pygit2.Repository, ancestor, ours, theirs, *, flags: int, limit: int) -> pygit2.Index:
    """``repo.merge_trees(ancestor, ours, theirs, flags=flags)`` with libgit2's rename
    ``target_limit`` set to ``limit`` and the threshold to :data:`RENAME_THRESHOLD` (pygit2 does
    not expose them; unset, libgit2 reads ``merge.renameLimit`` from the repository's config)."""
    from pygit2.ffi import C, ffi  # lazy: pygit2's cffi layer, only for the options pygit2 leaves out
    from pygit2.index import Index  # lazy: as above

    trees = [t if isinstance(t, pygit2.Tree) else repo[t].peel(pygit2.Tree) for t in (ancestor, ours, theirs)]
    opts = repo._merge_options(MergeFavor.NORMAL, flags, MergeFileFlag.DEFAULT)
    opts.target_limit = int(limit)
    opts.rename_threshold = RENAME_THRESHOLD
    ptrs = [ffi.new("git_tree **") for _ in trees]
    for p, t in zip(ptrs, trees):
        ffi.buffer(p)[:] = t._pointer[:]
    cindex = ffi.new("git_index **")
    err = C.git_merge_trees(cindex, repo._repo, ptrs[0][0], ptrs[1][0], ptrs[2][0], opts)
    if err < 0:
        from pygit2.errors import check_error  # lazy: raises pygit2's own error for the code
        check_error(err)
    return Index.from_c(repo, cindex)


def rename_candidates(repo: pygit2.Repository, ancestor, ours, theirs) -> int:
    """The count libgit2 compares with its rename limit for a merge: paths deleted, or added, on the
    two sides together (the larger of the two)."""
    deleted: set[str] = set()
    added: set[str] = set()
    for side in (ours, theirs):
        for d in repo.diff(ancestor, side).deltas:
            if d.status == DeltaStatus.DELETED:
                deleted.add(d.old_file.path)
            elif d.status == DeltaStatus.ADDED:
                added.add(d.new_file.path)
    return max(len(deleted), len(added))


def skipped_by_limit(repo: pygit2.Repository, ancestor, ours, theirs, limit: int) -> str:
    """Why inexact rename detection is skipped for this merge ("" when it is not): more
    :func:`rename_candidates` than ``limit``."""
    n = rename_candidates(repo, ancestor, ours, theirs)
    if n <= limit:
        return ""
    return (f"inexact rename detection was skipped: {n} rename candidates exceed rename_limit {limit} "
            f"(set rename_limit to at least {n})")


__all__ = ["DEFAULT_RENAME_LIMIT", "RENAME_THRESHOLD", "git_config_args", "merge_trees", "rename_candidates", "skipped_by_limit"]
