"""The pick predictor (edge): would ``git cherry-pick <commit>`` apply cleanly here?

An in-memory 3-way merge: ancestor = the commit's first parent's tree, ours = the *running
tree*, theirs = the commit's tree — exactly the merge ``git cherry-pick`` performs (``-m 1`` for
merges). Without rename detection it is decided path by path over the paths the pick changes
(:func:`path_merge`: libgit2's own file merge where both sides changed a file; the same answers
as libgit2's ``merge_trees`` at less than half its cost on the real fork); with rename detection,
and for the few shapes :func:`path_merge` leaves alone, by pygit2 ``Repository.merge_trees``. The running tree starts at the fork tip
and advances by each clean pick the plan puts in a bundle (chain commits do not advance it), so a
prediction answers "onto the fork tip with the plan's earlier clean picks applied".

Agreement with real git: tests/plan/test_predict.py replays the same picks with ``git cherry-pick`` in
a worktree (clean, conflicting, renames); runtime-facts measured 904/905 agreement on real Triton
picks. Cost: ≈ 2–4 ms per commit without rename detection, ≈ 40 ms with it (config
``rename_detection``; git's cherry-pick detects renames, so on is the faithful default).

With a :class:`~bot.plan.helper.PlanHelper` (``use_helper``; ``plan_state`` starts one for a cold
plan without rename detection) the merges of the next commits run ahead in a second process
(:meth:`MergePredictor.hint`, :func:`merge_answer`); an answer is reused only where the running
tree agrees with the tree it was computed on at every path the pick changes.

Results are cached by what the merge reads (:meth:`MergePredictor.key`: the running tree's
entries at the paths the pick changes, or — where rename detection could pair other paths — the
whole running tree with the merge flags and rename limit; the version always) in memory and,
given a :class:`~bot.store.Store`, in the ``plan_answers`` table, so a re-plan after a push or a
landing merges only what the change reaches (docs/plan.md, "Incremental planning"). Trees
written by clean merges go to a scratch repository (``cache_dir``) that borrows the real objects
through ``objects/info/alternates``: the fork's repository is never written to.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Iterable

import pygit2
from pygit2.enums import DeltaStatus, MergeFlag
from pygit2.errors import check_error
from pygit2.ffi import C, ffi

from bot.config import renames
from bot.config.attributes import NO_AUTO_MERGE, TreeAttributes, git_stops
from bot.config.renames import DEFAULT_RENAME_LIMIT
from bot.config.trees import TREE_MODE, changed_paths, edit_entries, entries_at
from bot.model import CommitInfo
from bot.plan import store as plan_store
from bot.plan.partition import Prediction
from bot.plan.tasks import MISS
from bot.store import Store
from bot.templating import render_part

#: bump when a prediction's meaning changes: stored answers of other versions are never read (the
#: version is part of every key, :meth:`MergePredictor.key`)
PREDICT_VERSION = 4

#: the stored outcome of a merge that failed *with* rename detection (a blob it had to read is
#: missing): its detail is the reason rename detection was dropped (``MergePredictor.renames_off``)
RENAMES_FAILED = "renames-failed"


def scratch_dir(source_git_dir: str | os.PathLike, cache_dir: str | os.PathLike) -> Path:
    """Where :func:`scratch_repo` keeps the scratch repository of ``source_git_dir``
    (``cache_dir/predict-<12 hex of its resolved path's sha1>.git``), made or not."""
    src = Path(source_git_dir).resolve()
    return Path(cache_dir) / f"predict-{hashlib.sha1(str(src).encode()).hexdigest()[:12]}.git"


def scratch_repo(source_git_dir: str | os.PathLike, cache_dir: str | os.PathLike) -> pygit2.Repository:
    """A bare repository under ``cache_dir/predict-<name>.git`` that reads ``source_git_dir``'s
    objects (and their alternates) and receives the trees written by predictions."""
    src = Path(source_git_dir).resolve()
    objects = src / "objects"
    if not objects.is_dir():
        raise FileNotFoundError(f"{src} is not a git directory (no objects/ folder)")
    dest = scratch_dir(src, cache_dir)
    if not (dest / "HEAD").exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        pygit2.init_repository(str(dest), bare=True)
    alt = dest / "objects" / "info" / "alternates"
    want = str(objects) + "\n"
    if not alt.exists() or alt.read_text() != want:
        alt.parent.mkdir(parents=True, exist_ok=True)
        alt.write_text(want)
    return pygit2.Repository(str(dest))


#: libgit2's rename detection flag as a plain int (an enum conversion per test cost ≈ 2 µs, and
#: the planner tests it a few times per pick)
FIND_RENAMES = int(MergeFlag.FIND_RENAMES)


def merge_flags(rename_detection: bool) -> int:
    """The libgit2 merge flags for a prediction (and for the benchmark's bare loop)."""
    return FIND_RENAMES if rename_detection else 0


def conflicted_paths(index: pygit2.Index) -> tuple[str, ...]:
    """Sorted paths of an index's conflict entries (any stage)."""
    if index.conflicts is None:
        return ()
    paths: set[str] = set()
    for anc, ours, theirs in index.conflicts:
        for e in (anc, ours, theirs):
            if e is not None:
                paths.add(e.path)
    return tuple(sorted(paths))


def _short_error(e: Exception) -> str:
    text = str(e).strip().strip("'")
    return text[:200]


#: characters of missing-object entries a plan item's reason lists before counting the rest
MISSING_SHOWN = 300
#: the template of the reasons a prediction gives in words
TEXTS = "plan/predict.txt.j2"


def _missing_objects(missing: Iterable[str]) -> str:
    """``missing objects: blob <sha> (<path>); …`` for a commit's missing objects (or the merge's
    error, where the analysis found none missing): whole entries (at least one) up
    to :data:`MISSING_SHOWN` characters, then how many more — a cut entry would name a folder or
    half a sha."""
    missing = list(missing)
    shown: list[str] = []
    size = 0
    for entry in missing:
        if shown and size + len(entry) > MISSING_SHOWN:
            break
        shown.append(entry)
        size += len(entry) + 2
    return render_part(TEXTS, "missing_objects", shown=shown, rest=len(missing) - len(shown))


def _write_tree(index: pygit2.Index, repo: pygit2.Repository) -> str:
    """Write a merge result's tree. Strict object creation is off meanwhile: a snapshot that lacks
    a large blob the fork tip merely *carries* (untouched by the pick) must still give a tree, as
    the fork tip's own tree does; blobs the merge has to read still fail (→ ``unknown``)."""
    pygit2.settings.enable_strict_object_creation(False)
    try:
        return str(index.write_tree(repo))
    finally:
        pygit2.settings.enable_strict_object_creation(True)




def _pick_trees(repo: pygit2.Repository, commit_sha: str) -> tuple:
    """``(ancestor tree, commit tree)`` of a cherry-pick of ``commit_sha``: its first parent's
    tree (the empty tree for a root commit) and its own."""
    c = repo[commit_sha].peel(pygit2.Commit)
    if c.parent_ids:
        return repo[c.parent_ids[0]].peel(pygit2.Commit).tree, c.tree
    return repo[repo.TreeBuilder().write()], c.tree


def _merged_entries(index: pygit2.Index, paths) -> dict:
    """``{path: (oid hex, mode) | None}``: a merged index's stage-0 entries at ``paths``."""
    out = {}
    for p in paths:
        e = index[p] if p in index else None
        out[p] = None if e is None else (str(e.id), int(e.mode))
    return out


def _write_changed(index: pygit2.Index, repo: pygit2.Repository, ancestor, ours, theirs) -> str | None:
    """The tree of a clean merge *without rename detection*, written by editing ``ours`` only at
    the paths the pick changes (ancestor → theirs): every other path of a 3-way merge keeps ours'
    entry, so this is the tree :func:`_write_tree` writes (tree ids are canonical), at a fraction
    of its cost (``write_tree`` hashes every directory of the index). None when the change has a
    shape it does not handle (a file replaced by a directory or back): then write the index."""
    return _apply(repo, ours, _merged_entries(index, changed_paths(ancestor, theirs)))


def _apply(repo: pygit2.Repository, ours, entries: dict) -> str | None:
    """Tree ``ours`` (a tree or its id) with ``entries`` (path → ``(oid, mode)`` | None) written
    over it (:func:`bot.config.trees.edit_entries`); None for a file↔directory swap."""
    oid = edit_entries(repo, repo[ours] if isinstance(ours, str) else ours, entries)
    return None if oid is None else str(oid)


def _change_of_info(info: CommitInfo) -> tuple | None:
    """:meth:`MergePredictor._change` read from a commit's analysed files (``git log -p``, one
    ``diff --git`` block per changed path, also for mode-only changes, binary files and
    submodules; with ``-M`` a rename is one block naming both paths): no tree diff needed. None
    where those files may not be the diff against the first parent: merges (git shows them no
    diff), commits analysed from trees for missing objects, and commits with no files."""
    if len(info.parents) != 1 or info.missing or not info.files:
        return None
    added = frozenset(f.path for f in info.files if f.status in ("A", "R", "C"))
    deleted = any(f.status in ("D", "R") for f in info.files)
    return (tuple(sorted(info.paths)), added, deleted)


def rename_sources(change: tuple, entries: list) -> tuple[str, ...] | None:
    """Which rename pairings could reach a pick's merge, from its ``change`` (changed paths, the
    paths it adds, whether it deletes any) and ours' ``entries`` (:func:`_entry_at`) at its paths.

    Returns None where libgit2's rename detection may change the merge (merge with it); else the
    pick's paths that ours lacks — each a rename *source* on ours' side — so that detection cannot
    change the merge when that tuple is empty, or when none of those paths pairs with a file only
    ours holds (:func:`pairs_in_ours`, the edge check). The rule, from libgit2's
    ``git_merge_diff_list__find_renames`` (merge.c): a side's sources are ancestor paths that side
    lacks, its targets paths the ancestor lacks that it holds; pairs form only within a side.

    * Theirs pairs nothing when the pick deletes nothing or adds nothing (no source or no
      target); a pick that does both (a rename, or a delete and an unrelated add) → None.
    * An ours target at a path the pick adds (ours holds it: a rename/add, add/add), or a
      directory or blocking file at a pick's path (a directory/file conflict) → None.
    * An ours source the pick modifies (ours deleted or renamed it) is a modify/delete conflict
      without detection and a rename/modify (a content merge at the new path) with it; one the pick
      deletes is a delete/delete without detection and a rename/delete with it: both are returned,
      for the caller to show that none of them pairs at all.
    * Every other ours pair joins two paths the pick does not touch, where the merge keeps ours'
      entries with or without detection (the trivial 'ours changed, theirs did not' resolution).
    """
    paths, added, deleted = change
    if deleted and added:
        return None
    missing = []
    for p, e in zip(paths, entries):
        if p in added:
            if e is not None:
                return None
        elif e is None:
            missing.append(p)
        elif len(e) != 2 or e[1] == TREE_MODE:
            return None
    return tuple(missing)


def pairs_in_ours(repo: pygit2.Repository, ancestor, ours, sources, limit: int) -> bool:
    """Whether libgit2's rename detection may pair any of ``sources`` (paths ``ancestor`` holds as
    files and ``ours`` lacks) with a file ``ours`` adds (a path ``ancestor`` lacks): a small merge
    by libgit2 itself of ancestor = the sources, ours = those added files, theirs = empty, with
    the same threshold. There every source is deleted on both sides and every added file added on
    one: clean, unless a source pairs (a rename/delete conflict). A source with any partner at or
    above the threshold ends paired there or leaves its partner paired with a better one, so a clean
    answer means no source has a partner, and none can pair in the real merge either (its partners
    are the same files; more sources only compete for them). True — unsure, detect — where the
    small merge would skip inexact pairing (more than ``limit`` paths), or an entry is not a file
    or cannot be read (the real merge then fails or drops detection as before)."""
    try:
        src = entries_at(ancestor, sources)
        if any(e is None or len(e) != 2 or e[1] == TREE_MODE for e in src):
            return True
        targets = [(d.new_file.path, d.new_file.id, d.new_file.mode)
                   for d in ancestor.diff_to_tree(ours).deltas if d.status == DeltaStatus.ADDED]
        if not targets:
            return False
        if len(sources) + len(targets) > limit:
            return True
        small = []
        for entries in (zip(sources, (e[0] for e in src), (e[1] for e in src)), targets, ()):
            index = pygit2.Index()
            for path, oid, mode in entries:
                index.add(pygit2.IndexEntry(path, oid, mode))
            small.append(index.write_tree(repo))
        got = renames.merge_trees(repo, *small, flags=FIND_RENAMES, limit=limit)
        return got.conflicts is not None
    except (KeyError, ValueError, pygit2.GitError):
        return True


def _entry_text(entry) -> str:
    """:func:`_entry_at`'s answer as stable text (part of a prediction key)."""
    if entry is None:
        return "-"
    return " ".join(str(x) if not isinstance(x, int) else f"{x:o}" for x in entry)


def _entry_at(tree, path: str):
    """What ``tree`` holds at ``path``: ``(id, mode)``; else the first non-directory entry on the
    way to it (``("blocked", prefix, id, mode)``: a file where a directory would be); else None.
    For many paths of one tree, :func:`bot.config.trees.entries_at` (each directory read once)."""
    return entries_at(tree, (path,))[0]


#: benchmarks set this to compare every :func:`path_merge` answer of a plan with libgit2's
#: ``merge_trees`` (an AssertionError on a difference): ``bench/bench_incremental.py --check-merges``
CHECK_PATH_MERGE = False

#: the file modes :func:`path_merge` decides itself (regular and executable files); a symlink or a
#: submodule at a pick's path leaves the pick to libgit2
FILE_MODES = frozenset((0o100644, 0o100755))

#: the values of a file's ``merge`` attribute for which ``merge_trees`` runs the text merge
#: :func:`_file_merge` runs (libgit2's ``merge_driver_name_for_path``: unspecified, set, ``text``)
MERGE_TEXT = (None, True, "text")


def _file_merge(repo: pygit2.Repository, path: str, *entries) -> tuple[bool, bytes, int]:
    """libgit2's merge of one file (``git_merge_file_from_index``, default options: what
    ``merge_trees`` runs for a path both sides modified) of the ``(blob id, mode)`` entries
    ancestor, ours, theirs: ``(automergeable, the merged bytes, mode)``. Called through pygit2's
    own cffi binding rather than ``Repository.merge_file_from_index``, which returns the text as a
    ``str`` — decoded as UTF-8 (an error on other bytes) and cut at the first NUL byte. Raises
    KeyError / GitError for a missing blob.

    Not the shared diff3 merge (:mod:`bot.config.merge_file`, ``git merge-file``): the answer must
    be ``merge_trees``' own (libgit2's default merge level and its result mode), only the clean flag
    and a clean text are used, the planner runs no processes (import contract), and one ``git
    merge-file`` (≈ 3 ms) costs about what this merge of a whole pick does."""
    c_entries, keep = [], []
    for oid, mode in entries:
        e = ffi.new("git_index_entry *")
        ffi.buffer(ffi.addressof(e, "id"))[:] = oid.raw
        e.mode = mode
        keep.append(ffi.new("char[]", os.fsencode(path)))
        e.path = keep[-1]
        c_entries.append(e)
    res = ffi.new("git_merge_file_result *")
    check_error(C.git_merge_file_from_index(res, repo._repo, *c_entries, ffi.NULL))
    try:
        clean = bool(res.automergeable)
        return clean, (ffi.buffer(res.ptr, res.len)[:] if clean else b""), int(res.mode)
    finally:
        C.git_merge_file_result_free(res)


def path_merge(repo: pygit2.Repository, ancestor, ours, theirs, paths, attrs: TreeAttributes | None = None) -> tuple | None:
    """The 3-way merge of a pick *without rename detection*, decided path by path over ``paths``
    (the pick's changed paths: every other path keeps ours' entry) as libgit2's ``merge_trees``
    decides it, without building the whole merged index (which costs libgit2 about as much as the
    rest of the merge on a tree of Triton's size).

    Per path, with the entries ``(blob id, mode)`` of ``ancestor``, ``ours`` and ``theirs``:
    ours = ancestor → theirs' entry; ours = theirs (or theirs = ancestor) → ours'; modified on
    one side and deleted on the other → a conflict; added on both sides with one blob and two
    modes → a conflict (git's; libgit2 takes a mode); all three present with one mode → libgit2's
    own file merge (:func:`_file_merge`, what ``merge_trees`` runs for a path both sides
    modified): a conflict, or the merged blob (written to ``repo`` once the pick is known to be
    clean), or a conflict where its ``merge`` attribute in ours' tree is ``binary`` / unset
    (:data:`bot.config.attributes.NO_AUTO_MERGE`: git's binary driver, as ``git cherry-pick``
    in a work tree of the fork has it). Returns ``("conflict", sorted conflicted paths)`` or
    ``("merged", {path: (oid hex, mode) | None})``. Each directory of the three trees is read
    once (:func:`bot.config.trees.entries_at`).

    None — leave the pick to ``merge_trees`` — for every other shape, where libgit2's rules are
    more than these: a directory, symlink, submodule or blocking file at a path; an add/add of two
    blobs; a mode change on both sides; a file both sides modified whose ``merge`` attribute (ours'
    tree's ``.gitattributes``, ``info/attributes``, global; never a work tree) names another
    driver than the text merge (``union``, a configured one); a missing object (``merge_trees``
    then raises or answers as before). ``attrs``: the attribute reader, whose memo serves one
    plan (None: a new one).
    Agreement with ``merge_trees``: the property test in tests/plan/test_path_merge.py,
    and every merge of the real Triton fork's plans in ``bench/bench_incremental.py
    --check-merges`` (cold as of 2026-04-15, a push, a landing, as of 04-16 and 04-17, and the
    plans from scratch: 3,403 merges).
    Cost there: about half the bare ``merge_trees`` loop (docs/plan.md)."""
    merged: dict = {}
    conflicts: list[str] = []
    both: list[tuple[str, tuple, tuple, tuple]] = []
    paths = list(paths)
    attrs = attrs or TreeAttributes(repo)     # one reader (and memo) for the whole pick
    try:
        for p, a, o, t in zip(paths, entries_at(ancestor, paths), entries_at(ours, paths), entries_at(theirs, paths)):
            for e in (a, o, t):
                if e is not None and (len(e) != 2 or e[1] not in FILE_MODES):
                    return None
            if o == a:
                merged[p] = t
            elif o == t or t == a:
                merged[p] = o
            elif a is not None and (o is None or t is None):
                conflicts.append(p)              # modified on one side, deleted on the other
            elif a is None and o is not None and t is not None and o[0] == t[0]:
                conflicts.append(p)              # added on both sides, one blob, two modes: git stops
            elif a is None or not a[1] == o[1] == t[1]:
                return None
            elif (attr := attrs.merge(ours, p)) in NO_AUTO_MERGE:
                conflicts.append(p)              # git's binary driver: both sides changed it
            elif attr not in MERGE_TEXT:
                return None                      # merge=union, a configured driver: merge_trees' driver
            else:
                both.append((p, a, o, t))
        texts: dict[str, tuple[bytes, int]] = {}
        for p, a, o, t in both:
            clean, text, mode = _file_merge(repo, p, a, o, t)
            if not clean:
                conflicts.append(p)
            elif mode != o[1]:
                return None
            else:
                texts[p] = (text, mode)
        if conflicts:       # a conflicting pick keeps no merged file: none is written
            return ("conflict", tuple(sorted(conflicts)))
        for p, (text, mode) in texts.items():
            merged[p] = (repo.create_blob(text), mode)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return ("merged", {p: None if e is None else (str(e[0]), int(e[1])) for p, e in merged.items()})


def _libgit2_answer(repo: pygit2.Repository, ancestor, ours, theirs, paths, attrs: TreeAttributes | None = None) -> tuple:
    """:func:`path_merge`'s answer, from libgit2's ``merge_trees`` (no rename detection) and the
    paths git stops on where libgit2 merges (:func:`bot.config.attributes.git_stops`)."""
    idx = repo.merge_trees(ancestor, ours, theirs, flags=0)
    if idx.conflicts is not None:
        return ("conflict", conflicted_paths(idx))
    stops = git_stops(repo, ancestor, ours, theirs, paths, attrs or TreeAttributes(repo))
    return ("conflict", tuple(stops)) if stops else ("merged", _merged_entries(idx, paths))


def _merged_prediction(tree: str, ours: str, merged: dict | None, detail: str) -> tuple[Prediction, dict | None]:
    """A clean merge's prediction (``empty`` when the result is ``ours`` itself) and its entries."""
    return Prediction("empty" if tree == ours else "clean", result_tree=tree, detail=detail), merged


def merge_answer(repo: pygit2.Repository, commit_sha: str, ours: str) -> tuple:
    """A plan helper's merge task (``bot/plan/helper.py``): ``git cherry-pick``'s 3-way merge of
    ``commit_sha`` onto tree ``ours`` *without rename detection*. Returns ``("conflict", conflicted
    paths, changed paths)``, ``("merged", {path: (oid hex, mode) | None}, changed paths, tree)``
    (the merge result at each path the pick changes, and the result tree on ``ours``; merged blobs
    and the tree are written to ``repo``),
    ``("unhandled", ...)`` for a file↔directory swap (the planner merges it itself), or
    ``("error", message)``. *Changed paths*:
    old and new paths of the commit's diff against its first parent, where alone the result can
    differ from ``ours`` (the predictor checks a later tree agrees there before reusing it)."""
    try:
        ancestor, theirs = _pick_trees(repo, commit_sha)
        changed = changed_paths(ancestor, theirs)
        attrs = TreeAttributes(repo)
        got = (path_merge(repo, ancestor, repo[ours], theirs, changed, attrs)
               or _libgit2_answer(repo, ancestor, repo[ours], theirs, changed, attrs))
        if got[0] == "conflict":
            return ("conflict", got[1], changed)
        merged = got[1]
        tree = _apply(repo, ours, merged)
        if tree is None:
            return ("unhandled", "a file and a directory at the same path")
        return ("merged", merged, changed, tree)
    except (KeyError, ValueError, pygit2.GitError) as e:
        return ("error", _short_error(e))


class MergePredictor:
    """A :class:`bot.plan.partition.PickPredictor` over a pygit2 repository.

    ``repo`` must hold the fork tip and the upstream commits (e.g. :func:`scratch_repo`, or
    A's combined repository) and be writable (trees of clean merges are written to it).
    ``base`` is the fork tip (a commit sha). ``store`` (optional) persists predictions; with
    ``persist`` False (a partial clone, whose absent blobs libgit2 reads as nothing without an
    error) it is only read: the answers computed here stay in memory for this predictor.
    """

    def __init__(self, repo: pygit2.Repository, base: str, *, rename_detection: bool = True,
                 store: Store | None = None, rename_limit: int = DEFAULT_RENAME_LIMIT, persist: bool = True):
        self.repo = repo
        self.base = base
        self.flags = merge_flags(rename_detection)
        self.rename_limit = rename_limit          # as apply's (bot.config.renames): plan and apply agree
        self.running_tree = str(repo[base].peel(pygit2.Commit).tree_id)
        self.store = store
        self.persist = persist
        self.store_empty = False  # a cold cache: rows are only written (flush), never read
        if store is not None:
            store.migrate()          # the store may predate this module's import (creates plan_answers)
            self.store_empty = not plan_store.has_answers(store)
        self._memo: dict[tuple[str, str], Prediction] = {}    # (ours tree, commit) -> prediction
        self._rows: dict[str, dict] = {}        # key -> stored answer, for the commits of preload()
        self._row_commits: set[str] = set()     # commits with at least one row in _rows
        self._loaded: set[str] = set()          # commits whose stored answers are all in _rows
        self._paths: dict[str, tuple | None] = {}   # commit -> (changed paths, added ones, any deleted) | None
        self._commit_trees: dict[str, tuple] = {}             # commit -> (ancestor tree, commit tree)
        self._infos: dict[str, CommitInfo] = {}               # commit -> its CommitInfo (predict, hint)
        self._pending: list[dict] = []          # rows not yet written to the store (see flush)
        self._new_paths: list[dict] = []        # plan_pick_paths rows not yet written
        self.merges = 0          # real merges computed (cache misses)
        self.path_merges_checked = 0  # path_merge answers compared with merge_trees (CHECK_PATH_MERGE)
        self.libgit2_merges = 0  # of them, merges path_merge left to libgit2's merge_trees (a shape it does not decide)
        self.renames_off: str | None = None   # why rename detection was dropped (missing blobs)
        self.cache_hits = 0
        self.helper = None       # a bot.plan.helper.PlanHelper (see hint)
        self._hinted: dict[str, str] = {}      # commit sha -> the running tree it was last hinted on
        self._picks: list[tuple[str, frozenset[str]]] = []   # (running tree before, paths) per advance
        self._trees: dict[str, object] = {}
        self._blind_memo: dict[tuple[str, str], bool] = {}   # (ours tree, commit) -> rename_blind
        self._attrs = TreeAttributes(repo)      # the merge attribute of paths in running trees
        self.helper_merges = 0   # predictions taken from the helper's merges
        self.merge_seconds = 0.0  # wall time of the merges computed here (benchmarks)
        self.merge_cpu = 0.0      # and their CPU time (this process)

    def use_helper(self, helper) -> None:
        """Let ``helper`` (a :class:`~bot.plan.helper.PlanHelper` on this repository) merge
        hinted commits ahead of time in a second process."""
        self.helper = helper

    def _helper_applies(self) -> bool:
        """Helper answers are merges without rename detection: usable when this predictor does
        not detect renames (config, or dropped for missing blobs)."""
        return self.helper is not None and (not self.flags & FIND_RENAMES or self.renames_off is not None)

    def hint(self, commits) -> int:
        """The planner expects to predict ``commits`` soon: the helper merges each onto the current
        running tree — once, and again if a clean pick since then changed one of its paths.
        Nothing is sent while the first commit's prediction is cached and nothing was merged yet
        (a re-plan whose predictions are all cached never starts the helper), nor for cached
        predictions. Returns the number sent."""
        for c in commits:       # their analysed files give their changed paths (no tree diff)
            self._infos.setdefault(c.sha, c)
        if not commits or not self.hint_worthwhile(commits[0]):
            return 0
        tasks, since = [], {}
        for c in commits:
            base = self._hinted.get(c.sha)
            if base == self.running_tree:
                continue
            if base is not None:
                if base not in since:
                    since[base] = self._picked_paths_since(base)
                if since[base] is not None and since[base].isdisjoint(c.paths):
                    continue
            if self._is_cached(c.sha, self.running_tree):
                continue
            self._hinted[c.sha] = self.running_tree
            tasks.append((("merge", c.sha, self.running_tree), (c.sha, self.running_tree)))
        return self.helper.hint(tasks) if tasks else 0

    def _tree(self, tree_id: str):
        """Tree object ``tree_id`` (running trees recur: a lookup through the alternates costs ~0.1 ms)."""
        t = self._trees.get(tree_id)
        if t is None:
            t = self._trees[tree_id] = self.repo[tree_id]
        return t

    def hint_worthwhile(self, first: CommitInfo) -> bool:
        """Whether merges are worth hinting: the helper applies (no rename detection) and this
        predictor merged already or ``first`` (the next commit) is not cached (a cold plan)."""
        self._infos.setdefault(first.sha, first)
        return self._helper_applies() and (self.merges > 0 or not self._is_cached(first.sha, self.running_tree))

    def _picked_paths_since(self, tree: str) -> frozenset[str] | None:
        """The paths the clean picks since running tree ``tree`` changed; None (unknown: any)
        when ``tree`` is not a running tree of this predictor."""
        out: set[str] = set()
        for before, paths in reversed(self._picks):
            out |= paths
            if before == tree:
                return frozenset(out)
        return None

    def preload(self, shas) -> None:
        """Read the stored answers and changed paths of the commits ``shas`` in bulk (a few queries
        instead of one or two per prediction; a re-plan asks for every pending commit)."""
        if self.store is None:
            return
        todo = [s for s in dict.fromkeys(shas) if s not in self._loaded]
        if not todo:
            return
        for sha, r in plan_store.pick_paths_of(self.store, todo).items():
            self._paths.setdefault(sha, (tuple(json.loads(r["paths"])), frozenset(json.loads(r["added"] or "[]")),
                                         bool(r["deleted"])))
        if not self.store_empty:
            rows = plan_store.answers_of(self.store, todo)
            self._rows.update(rows)
            self._row_commits.update(r["commit"] for r in rows.values())
        self._loaded.update(todo)

    def _pick(self, sha: str) -> tuple:
        """``(ancestor tree, commit tree)`` of a pick of ``sha`` (memoized)."""
        t = self._commit_trees.get(sha)
        if t is None:
            t = self._commit_trees[sha] = _pick_trees(self.repo, sha)
        return t

    def changed_paths(self, sha: str) -> tuple[str, ...] | None:
        """The old and new paths of ``sha``'s diff against its first parent, sorted (immutable per
        commit: stored in ``plan_pick_paths``); None when its objects cannot be read."""
        ch = self._change(sha)
        return None if ch is None else ch[0]

    def _change(self, sha: str) -> tuple | None:
        """``(changed paths, the paths added, whether any path is deleted)`` of ``sha``'s diff
        against its first parent (no rename detection: a rename is a deletion and an addition)."""
        if sha in self._paths:
            return self._paths[sha]
        info = self._infos.get(sha)
        ch = _change_of_info(info) if info is not None else None
        if ch is not None:                      # the analysed files say it: no tree diff
            self._paths[sha] = ch
            return ch
        try:
            ancestor, theirs = self._pick(sha)
            paths, added, deleted = set(), set(), False
            for d in ancestor.diff_to_tree(theirs).deltas:
                paths.add(d.old_file.path)
                paths.add(d.new_file.path)
                if d.status == DeltaStatus.ADDED:
                    added.add(d.new_file.path)
                elif d.status == DeltaStatus.DELETED:
                    deleted = True
            ch = (tuple(sorted(paths)), frozenset(added), deleted)
        except (KeyError, ValueError, pygit2.GitError):
            ch = None
        self._paths[sha] = ch
        if ch is not None and self.store is not None:
            self._new_paths.append({"commit": sha, "paths": json.dumps(list(ch[0])),
                                    "added": json.dumps(sorted(ch[1])), "deleted": int(ch[2])})
        return ch

    def _renames_on(self) -> bool:
        """Whether the next merge detects renames (config, and not dropped for a missing blob)."""
        return bool(self.flags & FIND_RENAMES) and self.renames_off is None

    def key(self, sha: str, ours: str) -> str:
        """What a pick of ``sha`` onto tree ``ours`` depends on, as a cache key.

        ``p<version>:<commit>:<digest>`` — the digest of ours' entries (blob id and mode; a file
        blocking the way; a subtree's id; or nothing) at each path the pick changes — where the
        merge reads nothing else: a 3-way merge *without rename detection* is decided path by path
        over exactly those paths (every other path keeps ours' entry), so the answer holds on any
        running tree with the same entries there, across plans, pushes (new pending commits) and
        landings (a new fork tip) alike. *With rename detection* the same holds for a
        **rename-blind** pick (:meth:`rename_blind`); otherwise the key is the whole running tree,
        ``t<version>:<ours tree>:<commit>:<flags>:<rename limit>``: libgit2 pairs deletions with
        additions anywhere on either side (and skips inexact pairing above the limit). A path key
        also digests the ids of the ``.gitattributes`` files along the changed paths' directories
        (a ``merge=binary`` there makes a clean merge a conflict)."""
        ch = self._change(sha)
        if ch is not None:
            t = self._tree(ours)
            entries = entries_at(t, ch[0])
            if not self._renames_on() or self._blind(sha, ours, ch, entries):
                h = hashlib.blake2b(digest_size=16)
                for p, e in zip(ch[0], entries):
                    h.update(f"{p}\0{_entry_text(e)}\n".encode())
                # the .gitattributes files a path's merge attribute is read from (a no-auto-merge
                # attribute turns a merge into a conflict)
                for d in sorted({p.rpartition("/")[0] for p in ch[0]}):
                    h.update(f"{d}\0{' '.join(str(x) for x in self._attrs.attribute_files(t, d))}\n".encode())
                return f"p{PREDICT_VERSION}:{sha}:{h.hexdigest()}"
        flags = self.flags if self._renames_on() else 0
        return f"t{PREDICT_VERSION}:{ours}:{sha}:{flags}:{self.rename_limit}"

    def rename_blind(self, sha: str, ours: str) -> bool:
        """Whether rename detection cannot change the pick of ``sha`` onto ``ours`` (then the merge
        keeps the same answer without it): :func:`rename_sources` over the pick's paths and ours'
        entries there, and where ours lacks some of them, :func:`pairs_in_ours` shows that none
        of them pairs with a file only ours holds. Memoized per (tree, commit): the key and the
        merge both ask."""
        ch = self._change(sha)
        if ch is None:
            return False
        return self._blind(sha, ours, ch, entries_at(self._tree(ours), ch[0]))

    def _blind(self, sha: str, ours: str, change: tuple, entries: list) -> bool:
        """:meth:`rename_blind` given the pick's change and ours' entries at its paths."""
        got = self._blind_memo.get((ours, sha))
        if got is None:
            sources = rename_sources(change, entries)
            got = sources is not None and (not sources or not pairs_in_ours(
                self.repo, self._pick(sha)[0], self._tree(ours), sources, self.rename_limit))
            self._blind_memo[(ours, sha)] = got
        return got

    def _is_cached(self, sha: str, ours: str) -> bool:
        """Whether a prediction of ``sha`` on ``ours`` is known (memo or store) — without computing
        its key where the store certainly holds none (a cold cache, a new commit)."""
        if (ours, sha) in self._memo:
            return True
        if self.store is None or self.store_empty or (sha in self._loaded and sha not in self._row_commits):
            return False
        p = self._stored(sha, self.key(sha, ours), ours)
        if p is None:
            return False
        self._memo[(ours, sha)] = p       # hints ask again at every step: the key is computed once
        return True

    def _renames_detail(self) -> str:
        """The detail of a prediction merged without rename detection although the config asks for it."""
        return f"renames not detected: {self.renames_off}" if self.renames_off is not None else ""

    def _stored(self, sha: str, key: str, ours: str) -> Prediction | None:
        """The stored answer of ``key`` as a prediction on ``ours``; None when absent or when the
        scratch repository lost an object it names (then it is computed again)."""
        r = self._rows.get(key)
        if r is None and self.store is not None and not self.store_empty and sha not in self._loaded:
            r = plan_store.answer_row(self.store, key)
        if r is None:
            return None
        outcome, conflicts = r["outcome"], tuple(json.loads(r["conflicts"] or "[]"))
        if outcome == RENAMES_FAILED:
            if not self._renames_on():
                return None
            # this very merge (same tree, commit, flags and limit) failed with rename detection
            # before: drop it now, as merging again would, and read the answer without it
            self.renames_off = r["detail"]
            return self._stored(sha, self.key(sha, ours), ours)
        if outcome == "unknown":
            return None         # stored by an earlier version: the blobs it lacked may be here now
        if not key.startswith("p"):
            if r["result_tree"] and r["result_tree"] not in self.repo:
                return None
            return Prediction(outcome, conflicts, r["result_tree"] or None, r["detail"] or "")
        detail = self._renames_detail()
        if outcome == "conflict":
            return Prediction(outcome, conflicts, detail=detail)
        if r["ours_tree"] == ours and r["result_tree"] and r["result_tree"] in self.repo:
            tree = r["result_tree"]          # computed on this very tree before
        else:
            if any(oid not in self.repo for oid in json.loads(r["made"] or "[]")):
                return None                  # the scratch repository lost a blob the merge wrote
            merged = {p: (tuple(e) if e else None) for p, e in json.loads(r["merged"]).items()}
            tree = _apply(self.repo, ours, merged)
        if tree is None:
            return None
        return Prediction("empty" if tree == ours else "clean", result_tree=tree, detail=detail)

    def predict(self, commit: CommitInfo) -> Prediction:
        """The outcome of picking ``commit`` onto the running tree (never raises for git data
        problems: missing objects give ``outcome="unknown"`` with the reason)."""
        return self.predict_on(commit, self.running_tree)

    def predict_on(self, commit: CommitInfo, tree: str) -> Prediction:
        """The outcome of picking ``commit`` onto ``tree`` (a tree id, e.g. a chain's running tree:
        a clean prediction's ``result_tree``); cached like :meth:`predict`."""
        ours = tree
        self._infos.setdefault(commit.sha, commit)
        hit = self._memo.get((ours, commit.sha))
        if hit is None and self.store is not None and not self.store_empty and (
                commit.sha not in self._loaded or commit.sha in self._row_commits):
            hit = self._stored(commit.sha, self.key(commit.sha, ours), ours)
        if hit is not None:
            self.cache_hits += 1
            self._memo[(ours, commit.sha)] = hit
            return hit
        got = self._from_helper(commit, ours) if self._helper_applies() else None
        if got is None:
            t0, c0 = time.perf_counter(), time.process_time()
            got = self._merge(commit, ours)
            self.merge_seconds += time.perf_counter() - t0
            self.merge_cpu += time.process_time() - c0
        else:
            self.helper_merges += 1
        pred, merged = got
        self.merges += 1
        self._memo[(ours, commit.sha)] = pred
        # an unknown answer says what the repository lacks, not what the pick does: a fetch of the
        # missing blobs (which status advises) must get a real prediction, so it is never stored
        if self.store is not None and self.persist and pred.outcome != "unknown":
            self._remember(commit.sha, ours, pred, merged)
        return pred

    def _remember(self, sha: str, ours: str, pred: Prediction, merged: dict | None) -> None:
        """Queue the row of a computed prediction under its key (taken *after* the merge: a merge
        that dropped rename detection is keyed by the paths it read). A clean answer whose tree had
        to be written from the whole index (a file↔directory swap) is not kept under a path key."""
        key = self.key(sha, ours)
        by_paths = key.startswith("p")
        if by_paths and pred.outcome in ("clean", "empty") and merged is None:
            return
        if self._attributes_absent(sha, ours):
            return      # merged without a merge attribute the repository lacks: a fetch of it may change the answer
        made: list[str] = []
        if by_paths and merged:
            theirs, mine = self._pick(sha)[1], self._tree(ours)
            ps = list(merged)
            for p, th, mi in zip(ps, entries_at(theirs, ps), entries_at(mine, ps)):
                e = merged[p]
                if e is not None and all(t is None or len(t) != 2 or str(t[0]) != e[0] for t in (th, mi)):
                    made.append(e[0])         # neither side's blob: a content merge wrote it
        self._pending.append({
            "key": key, "commit": sha, "outcome": pred.outcome, "conflicts": json.dumps(list(pred.conflicts)),
            "merged": json.dumps(merged) if by_paths and merged is not None else "",
            "made": json.dumps(made), "ours_tree": ours,
            "result_tree": pred.result_tree or "",
            "detail": pred.detail if not by_paths else ""})

    def _attributes_absent(self, sha: str, ours: str) -> bool:
        """Whether a ``.gitattributes`` blob of ``ours`` along the paths the pick of ``sha``
        changes is absent (a snapshot or partial clone without it): libgit2 reads no attribute
        from it, without an error, so the merge may have missed a ``merge=binary``."""
        ch = self._change(sha)
        if ch is None:
            return False
        t = self._tree(ours)
        return any(oid is not None and oid not in self.repo
                   for d in {p.rpartition("/")[0] for p in ch[0]} for oid in self._attrs.attribute_files(t, d))

    def _from_helper(self, commit: CommitInfo, ours: str) -> tuple[Prediction, dict | None] | None:
        """The prediction from the helper's merge of ``commit`` (computed on the tree it was
        hinted on), when that tree and ``ours`` agree at every path the pick changes, with the
        merge result at those paths (None for a conflict); else None."""
        base = self._hinted.get(commit.sha)
        if base is None:
            return None
        answer = self.helper.take(("merge", commit.sha, base))
        if answer is MISS or answer[0] not in ("conflict", "merged"):
            return None
        kind, value, changed = answer[:3]
        repo = self.repo
        if base != ours:
            a, b = self._tree(base), self._tree(ours)
            if entries_at(a, changed) != entries_at(b, changed) or any(
                    self._attrs.attribute_files(a, d) != self._attrs.attribute_files(b, d)
                    for d in {p.rpartition("/")[0] for p in changed}):
                return None
        detail = self._renames_detail()
        if kind == "conflict":
            return Prediction("conflict", tuple(value), detail=detail), None
        tree = answer[3] if base == ours else _apply(repo, ours, value)
        if tree is None:
            return None
        return _merged_prediction(tree, ours, value, detail)

    def _merge(self, commit: CommitInfo, ours: str) -> tuple[Prediction, dict | None]:
        """Merge here: ``(prediction, merge result at the changed paths | None)``."""
        if self.renames_off is None:
            flags = self.flags
            if flags & FIND_RENAMES and self.rename_blind(commit.sha, ours):
                # detection cannot change this pick (rename_blind), and it would read every blob
                # added or deleted on either side: merge without it (same answer, and a snapshot
                # lacking such a blob fails only where detection matters)
                flags &= ~FIND_RENAMES
            try:
                return self._merge_flags(commit, ours, flags, "")
            except (KeyError, pygit2.GitError, ValueError) as e:
                first = e
        else:
            first = None
        if self.flags & FIND_RENAMES:
            # rename detection reads every added/deleted blob on both sides; a snapshot that lacks
            # one (e.g. a large fork-only PDF) fails here although the pick never touches it
            # (it stays off for this predictor: the blob stays missing from the running tree)
            try:
                got = self._merge_flags(commit, ours, self.flags & ~FIND_RENAMES,
                                        f"renames not detected: {self.renames_off or _short_error(first)}")
                if self.renames_off is None:
                    self.renames_off = _short_error(first)
                    if self.store is not None and self.persist:   # a re-plan on this tree drops it without merging
                        self._pending.append({
                            "key": f"t{PREDICT_VERSION}:{ours}:{commit.sha}:{self.flags}:{self.rename_limit}",
                            "commit": commit.sha, "outcome": RENAMES_FAILED, "conflicts": "[]", "merged": "",
                            "made": "[]", "ours_tree": ours, "result_tree": "", "detail": self.renames_off})
                return got
            except (KeyError, pygit2.GitError, ValueError) as e:
                first = e
        return Prediction("unknown", detail=_missing_objects(commit.missing or [_short_error(first)])), None

    def _merge_flags(self, commit: CommitInfo, ours: str, flags: int, detail: str) -> tuple[Prediction, dict | None]:
        repo = self.repo
        ancestor, theirs = self._pick(commit.sha)
        ours_tree = self._tree(ours)
        if not flags & FIND_RENAMES:
            got = self._path_merge(commit.sha, ancestor, ours_tree, theirs)
            if got is not None and got[0] == "conflict":
                return Prediction("conflict", got[1], detail=detail), None
            if got is not None and (tree := _apply(repo, ours_tree, got[1])) is not None:
                return _merged_prediction(tree, ours, got[1], detail)
            self.libgit2_merges += 1      # a shape path_merge leaves to libgit2, or a file↔directory swap
        if flags & FIND_RENAMES:
            idx = renames.merge_trees(repo, ancestor, ours_tree, theirs, flags=flags, limit=self.rename_limit)
        else:
            idx = repo.merge_trees(ancestor, ours_tree, theirs, flags=flags)
        if idx.conflicts is not None:
            if flags & FIND_RENAMES and not detail and not self.rename_blind(commit.sha, ours):
                detail = renames.skipped_by_limit(repo, ancestor, ours_tree, theirs, self.rename_limit)
            return Prediction("conflict", conflicted_paths(idx), detail=detail), None
        paths = self.changed_paths(commit.sha)
        stops = git_stops(repo, ancestor, ours_tree, theirs, paths if paths is not None else changed_paths(ancestor, theirs),
                          self._attrs)
        if stops:              # libgit2 merged what git stops on (a no-auto-merge attribute, an add/add of modes)
            return Prediction("conflict", tuple(stops), detail=detail), None
        tree = merged = None
        if not flags & FIND_RENAMES:
            if paths is not None:
                merged = _merged_entries(idx, paths)
                tree = _apply(repo, ours_tree, merged)
                if tree is None:
                    merged = None
        if tree is None:
            tree = _write_tree(idx, repo)
        return _merged_prediction(tree, ours, merged, detail)

    def _path_merge(self, sha: str, ancestor, ours_tree, theirs) -> tuple | None:
        """:func:`path_merge` of the pick of ``sha`` (None where it leaves the pick to libgit2),
        compared with ``merge_trees`` when :data:`CHECK_PATH_MERGE` is set."""
        paths = self.changed_paths(sha)
        got = None if paths is None else path_merge(self.repo, ancestor, ours_tree, theirs, paths, self._attrs)
        if CHECK_PATH_MERGE and got is not None:
            lib = _libgit2_answer(self.repo, ancestor, ours_tree, theirs, paths, self._attrs)
            if lib != got:
                raise AssertionError(f"path_merge differs from merge_trees for {sha} on {ours_tree.id}: {got} != {lib}")
            self.path_merges_checked += 1
        return got

    def flush(self) -> None:
        """Write new predictions (and the changed paths of new commits) to the store."""
        if self.store is None:
            return
        if self._new_paths:
            rows, self._new_paths = self._new_paths, []
            plan_store.save_pick_paths(self.store, rows)
        if self._pending:
            rows, self._pending = self._pending, []
            plan_store.save_answers(self.store, rows)

    def walk_context(self) -> tuple:
        """What this predictor's answers depend on besides the commits and trees (``build_plan``'s
        ``resume`` continues a walk only under the same): version, base, flags, rename limit."""
        return (PREDICT_VERSION, self.base, self.flags, self.rename_limit)

    def walk_state(self) -> tuple:
        """The state a walk leaves here: the running tree, and rename detection dropped (why)."""
        return (self.running_tree, self.renames_off)

    def restore_walk(self, state: tuple, trees: Iterable[str] = ()) -> bool:
        """Continue a walk from :meth:`walk_state` whose chains' running trees are ``trees``.
        Returns False, restoring nothing, when the repository lacks one of these trees: they are
        written by predictions and nothing refers to them: clearing cache_dir removes them, a ``git gc``
        of the scratch repository would prune them (the walk then starts again from the fork tip)."""
        running, renames_off = state
        if any(t not in self.repo for t in {running, *trees}):
            return False
        self.running_tree, self.renames_off = running, renames_off
        return True

    def advance(self, commit: CommitInfo, prediction: Prediction) -> None:
        """Apply a clean pick to the running tree (the next prediction sees it)."""
        if prediction.outcome != "clean" or not prediction.result_tree:
            raise ValueError(f"only a clean prediction advances the running tree (got {prediction.outcome})")
        if self.helper is not None:
            self._picks.append((self.running_tree, commit.paths))
        self.running_tree = prediction.result_tree

