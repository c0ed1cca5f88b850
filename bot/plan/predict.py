"""The pick predictor (edge): would ``git cherry-pick <commit>`` apply cleanly here?

An in-memory 3-way merge with libgit2 (pygit2 ``Repository.merge_trees``): ancestor = the
commit's first parent's tree, ours = the *running tree*, theirs = the commit's tree — exactly the
merge ``git cherry-pick`` performs (``-m 1`` for merges). The running tree starts at the fork tip
and advances by each clean pick the plan puts in a bundle (chain commits do not advance it), so a
prediction answers "onto the fork tip with the plan's earlier clean picks applied".

Agreement with real git: tests/test_predict.py replays the same picks with ``git cherry-pick`` in
a worktree (clean, conflicting, renames); runtime-facts measured 904/905 agreement on real Triton
picks. Cost: ≈ 2–4 ms per commit without rename detection, ≈ 40 ms with it (config
``rename_detection``; git's cherry-pick detects renames, so on is the faithful default).

With a :class:`~bot.plan.helper.PlanHelper` (``use_helper``; ``plan_state`` starts one for a cold
plan without rename detection) the merges of the next commits run ahead in a second process
(:meth:`MergePredictor.hint`, :func:`merge_answer`); an answer is reused only where the running
tree agrees with the tree it was computed on at every path the pick changes.

Results are cached by ``(running tree, commit, flags)`` in memory and, given a
:class:`~bot.store.Store`, in the ``plan_predictions`` table, so a re-plan over the same fork tip
is lookups only. Trees written by clean merges go to a scratch repository (``cache_dir``) that
borrows the real objects through ``objects/info/alternates``: the fork's repository is never
written to.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pygit2
from pygit2.enums import MergeFlag

from bot.config import renames
from bot.config.renames import DEFAULT_RENAME_LIMIT
from bot.model import CommitInfo
from bot.plan import store as plan_store
from bot.plan.partition import Prediction
from bot.plan.tasks import MISS
from bot.store import Store


def scratch_repo(source_git_dir: str | os.PathLike, cache_dir: str | os.PathLike) -> pygit2.Repository:
    """A bare repository under ``cache_dir/predict-<name>.git`` that reads ``source_git_dir``'s
    objects (and their alternates) and receives the trees written by predictions."""
    src = Path(source_git_dir).resolve()
    objects = src / "objects"
    if not objects.is_dir():
        raise FileNotFoundError(f"{src} is not a git directory (no objects/ folder)")
    import hashlib

    dest = Path(cache_dir) / f"predict-{hashlib.sha1(str(src).encode()).hexdigest()[:12]}.git"
    if not (dest / "HEAD").exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        pygit2.init_repository(str(dest), bare=True)
    alt = dest / "objects" / "info" / "alternates"
    want = str(objects) + "\n"
    if not alt.exists() or alt.read_text() != want:
        alt.parent.mkdir(parents=True, exist_ok=True)
        alt.write_text(want)
    return pygit2.Repository(str(dest))


def merge_flags(rename_detection: bool) -> int:
    """The libgit2 merge flags for a prediction (and for the benchmark's bare loop)."""
    return int(MergeFlag.FIND_RENAMES) if rename_detection else 0


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


def _write_tree(index: pygit2.Index, repo: pygit2.Repository) -> str:
    """Write a merge result's tree. Strict object creation is off meanwhile: a snapshot that lacks
    a large blob the fork tip merely *carries* (untouched by the pick) must still give a tree, as
    the fork tip's own tree does; blobs the merge has to read still fail (→ ``unknown``)."""
    pygit2.settings.enable_strict_object_creation(False)
    try:
        return str(index.write_tree(repo))
    finally:
        pygit2.settings.enable_strict_object_creation(True)


_TREE_MODE = 0o040000


def _pick_trees(repo: pygit2.Repository, commit_sha: str) -> tuple:
    """``(ancestor tree, commit tree)`` of a cherry-pick of ``commit_sha``: its first parent's
    tree (the empty tree for a root commit) and its own."""
    c = repo[commit_sha].peel(pygit2.Commit)
    if c.parent_ids:
        return repo[c.parent_ids[0]].peel(pygit2.Commit).tree, c.tree
    return repo[repo.TreeBuilder().write()], c.tree


def _changed_paths(ancestor, theirs) -> list[str]:
    """Old and new paths of the diff ``ancestor`` → ``theirs`` (no rename detection), sorted:
    the only paths where a 3-way merge without rename detection can differ from ours."""
    return sorted({p for d in ancestor.diff_to_tree(theirs).deltas for p in (d.old_file.path, d.new_file.path)})


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
    return _apply(repo, ours, _merged_entries(index, _changed_paths(ancestor, theirs)))


def _apply(repo: pygit2.Repository, ours, entries: dict) -> str | None:
    """Tree ``ours`` (a tree or its id) with ``entries`` (path → ``(oid, mode)`` | None) written
    over it; None when a path is both a file and a directory among ``entries``, or would turn a
    file of ``ours`` into a directory or back (then the caller writes the index instead)."""
    updates: dict = {}
    for path, entry in entries.items():
        *dirs, name = path.split("/")
        node = updates
        for part in dirs:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                return None
        if isinstance(node.get(name), dict):
            return None
        node[name] = entry
    pygit2.settings.enable_strict_object_creation(False)
    try:
        oid = _edit_tree(repo, repo[ours] if isinstance(ours, str) else ours, updates)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    finally:
        pygit2.settings.enable_strict_object_creation(True)
    return str(oid if oid is not None else repo.TreeBuilder().write())


def _edit_tree(repo: pygit2.Repository, tree, updates: dict):
    """``tree`` (or an empty tree) with ``updates`` (name → (oid, mode) | None | nested dict)
    applied, written; None when the result is empty (git writes no empty trees)."""
    tb = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    for name, u in updates.items():
        cur = tree[name] if tree is not None and name in tree else None
        if isinstance(u, dict):
            if cur is not None and cur.filemode != _TREE_MODE:
                raise ValueError("a file becomes a directory")
            oid = _edit_tree(repo, cur, u)
            if oid is not None:
                tb.insert(name, oid, _TREE_MODE)
            elif cur is not None:
                tb.remove(name)
        elif u is None:
            if cur is not None:
                tb.remove(name)
        else:
            if cur is not None and cur.filemode == _TREE_MODE:
                raise ValueError("a directory becomes a file")
            tb.insert(name, u[0], u[1])
    if len(tb) == 0:
        return None
    return tb.write()


def _entry_at(tree, path: str):
    """What ``tree`` holds at ``path``: ``(id, mode)``; else the first non-directory entry on the
    way to it (``("blocked", prefix, id, mode)``: a file where a directory would be); else None."""
    try:
        e = tree[path]
        return (e.id, e.filemode)
    except KeyError:
        pass
    parts = path.split("/")
    for k in range(1, len(parts)):
        q = "/".join(parts[:k])
        try:
            e = tree[q]
        except KeyError:
            return None
        if e.filemode != _TREE_MODE:
            return ("blocked", q, e.id, e.filemode)
    return None


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
        changed = _changed_paths(ancestor, theirs)
        idx = repo.merge_trees(ancestor, repo[ours], theirs, flags=0)
        if idx.conflicts is not None:
            return ("conflict", conflicted_paths(idx), changed)
        merged = _merged_entries(idx, changed)
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
    ``base`` is the fork tip (a commit sha). ``store`` (optional) persists predictions.
    """

    def __init__(self, repo: pygit2.Repository, base: str, *, rename_detection: bool = True,
                 store: Store | None = None, rename_limit: int = DEFAULT_RENAME_LIMIT):
        self.repo = repo
        self.base = base
        self.flags = merge_flags(rename_detection)
        self.rename_limit = rename_limit          # as apply's (bot.config.renames): plan and apply agree
        self.running_tree = str(repo[base].peel(pygit2.Commit).tree_id)
        self.store = store
        self.store_empty = False  # a cold cache: rows are only written (flush), never read
        if store is not None:
            store.migrate()          # the store may predate this module's import (creates plan_predictions)
            self.store_empty = not plan_store.has_predictions(store)
        self._memo: dict[str, Prediction] = {}
        self._pending: list[dict] = []          # rows not yet written to the store (see flush)
        self.merges = 0          # real merges computed (cache misses)
        self.renames_off: str | None = None   # why rename detection was dropped (missing blobs)
        self.cache_hits = 0
        self.helper = None       # a bot.plan.helper.PlanHelper (see hint)
        self._hinted: dict[str, str] = {}      # commit sha -> the running tree it was last hinted on
        self._picks: list[tuple[str, frozenset[str]]] = []   # (running tree before, paths) per advance
        self._trees: dict[str, object] = {}
        self.helper_merges = 0   # predictions taken from the helper's merges

    def use_helper(self, helper) -> None:
        """Let ``helper`` (a :class:`~bot.plan.helper.PlanHelper` on this repository) merge
        hinted commits ahead of time in a second process."""
        self.helper = helper

    def _helper_applies(self) -> bool:
        """Helper answers are merges without rename detection: usable when this predictor does
        not detect renames (config, or dropped for missing blobs)."""
        return self.helper is not None and (not self.flags & int(MergeFlag.FIND_RENAMES) or self.renames_off is not None)

    def hint(self, commits) -> int:
        """The planner expects to predict ``commits`` soon: the helper merges each onto the current
        running tree — once, and again if a clean pick since then changed one of its paths.
        Nothing is sent while the first commit's prediction is cached and nothing was merged yet
        (a re-plan whose predictions are all cached never starts the helper), nor for cached
        predictions. Returns the number sent."""
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
            if self._cached(self._key(c, self.running_tree)) is not None:
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
        return self._helper_applies() and (self.merges > 0 or self._cached(self._key(first, self.running_tree)) is None)

    def _picked_paths_since(self, tree: str) -> frozenset[str] | None:
        """The paths the clean picks since running tree ``tree`` changed; None (unknown: any)
        when ``tree`` is not a running tree of this predictor."""
        out: set[str] = set()
        for before, paths in reversed(self._picks):
            out |= paths
            if before == tree:
                return frozenset(out)
        return None

    def _key(self, commit: CommitInfo, ours: str) -> str:
        return f"{ours}:{commit.sha}:{self.flags}"

    def _cached(self, key: str) -> Prediction | None:
        p = self._memo.get(key)
        if p is None and self.store is not None and not self.store_empty:
            r = plan_store.prediction_row(self.store, key)
            if r is not None:
                p = Prediction(r["outcome"], tuple(json.loads(r["conflicts"] or "[]")),
                               r["result_tree"] or None, r["detail"] or "")
        if p is not None and p.result_tree and p.result_tree not in self.repo:
            return None          # the scratch repository lost the tree: compute again
        return p

    def predict(self, commit: CommitInfo) -> Prediction:
        """The outcome of picking ``commit`` onto the running tree (never raises for git data
        problems: missing objects give ``outcome="unknown"`` with the reason)."""
        return self.predict_on(commit, self.running_tree)

    def predict_on(self, commit: CommitInfo, tree: str) -> Prediction:
        """The outcome of picking ``commit`` onto ``tree`` (a tree id, e.g. a chain's running tree:
        a clean prediction's ``result_tree``); cached like :meth:`predict`."""
        ours = tree
        key = self._key(commit, ours)
        hit = self._cached(key)
        if hit is not None:
            self.cache_hits += 1
            self._memo[key] = hit
            return hit
        pred = self._from_helper(commit, ours) if self._helper_applies() else None
        if pred is None:
            pred = self._merge(commit, ours)
        else:
            self.helper_merges += 1
        self.merges += 1
        self._memo[key] = pred
        if self.store is not None:
            self._pending.append({
                "key": key, "ours_tree": ours, "commit": commit.sha, "flags": self.flags,
                "outcome": pred.outcome, "conflicts": json.dumps(list(pred.conflicts)),
                "result_tree": pred.result_tree or "", "detail": pred.detail})
        return pred

    def _from_helper(self, commit: CommitInfo, ours: str) -> Prediction | None:
        """The prediction from the helper's merge of ``commit`` (computed on the tree it was
        hinted on), when that tree and ``ours`` agree at every path the pick changes; else None."""
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
            if any(_entry_at(a, p) != _entry_at(b, p) for p in changed):
                return None
        detail = f"renames not detected: {self.renames_off}" if self.flags & int(MergeFlag.FIND_RENAMES) else ""
        if kind == "conflict":
            return Prediction("conflict", tuple(value), detail=detail)
        tree = answer[3] if base == ours else _apply(repo, ours, value)
        if tree is None:
            return None
        if tree == ours:
            return Prediction("empty", result_tree=tree, detail=detail)
        return Prediction("clean", result_tree=tree, detail=detail)

    def _merge(self, commit: CommitInfo, ours: str) -> Prediction:
        if self.renames_off is None:
            try:
                return self._merge_flags(commit, ours, self.flags, "")
            except (KeyError, pygit2.GitError, ValueError) as e:
                first = e
        else:
            first = None
        if self.flags & int(MergeFlag.FIND_RENAMES):
            # rename detection reads every added/deleted blob on both sides; a snapshot that lacks
            # one (e.g. a large fork-only PDF) fails here although the pick never touches it
            # (it stays off for this predictor: the blob stays missing from the running tree)
            try:
                pred = self._merge_flags(commit, ours, self.flags & ~int(MergeFlag.FIND_RENAMES),
                                         f"renames not detected: {self.renames_off or _short_error(first)}")
                if self.renames_off is None:
                    self.renames_off = _short_error(first)
                return pred
            except (KeyError, pygit2.GitError, ValueError) as e:
                first = e
        what = "; ".join(commit.missing) if commit.missing else _short_error(first)
        return Prediction("unknown", detail=f"missing objects: {what}"[:300])

    def _merge_flags(self, commit: CommitInfo, ours: str, flags: int, detail: str) -> Prediction:
        repo = self.repo
        ancestor, theirs = _pick_trees(repo, commit.sha)
        ours_tree = repo[ours]
        if flags & int(MergeFlag.FIND_RENAMES):
            idx = renames.merge_trees(repo, ancestor, ours_tree, theirs, flags=flags, limit=self.rename_limit)
        else:
            idx = repo.merge_trees(ancestor, ours_tree, theirs, flags=flags)
        if idx.conflicts is not None:
            if flags & int(MergeFlag.FIND_RENAMES) and not detail:
                detail = renames.skipped_by_limit(repo, ancestor, ours_tree, theirs, self.rename_limit)
            return Prediction("conflict", conflicted_paths(idx), detail=detail)
        tree = None
        if not flags & int(MergeFlag.FIND_RENAMES):
            tree = _write_changed(idx, repo, ancestor, ours_tree, theirs)
        if tree is None:
            tree = _write_tree(idx, repo)
        if tree == ours:
            return Prediction("empty", result_tree=tree, detail=detail)
        return Prediction("clean", result_tree=tree, detail=detail)

    def flush(self) -> None:
        """Write new predictions to the store in one transaction."""
        if self.store is None or not self._pending:
            return
        rows, self._pending = self._pending, []
        plan_store.save_predictions(self.store, rows)

    def advance(self, commit: CommitInfo, prediction: Prediction) -> None:
        """Apply a clean pick to the running tree (the next prediction sees it)."""
        if prediction.outcome != "clean" or not prediction.result_tree:
            raise ValueError(f"only a clean prediction advances the running tree (got {prediction.outcome})")
        if self.helper is not None:
            self._picks.append((self.running_tree, commit.paths))
        self.running_tree = prediction.result_tree

