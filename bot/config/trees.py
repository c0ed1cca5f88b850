"""Tree edits of forksync's in-memory merges, shared by the planner's predictions and apply.

A 3-way merge without rename detection keeps ours' entry at every path the pick does not change
(ancestor → commit), so its result tree is ours edited at those paths only. Both the pick
predictor (``bot/plan/predict.py``) and apply (``bot/git/apply.py``) write result trees this
way; tree ids are canonical, so the result equals ``Index.write_tree`` of the merged index.
Kept beside :mod:`bot.config.renames` (the merges' rename options): the one layer both edges
import.
"""
from __future__ import annotations

import pygit2

TREE_MODE = 0o040000


def edit_entries(repo: pygit2.Repository, ours, entries: dict) -> pygit2.Oid | None:
    """Tree ``ours`` (a tree object) with ``entries`` (path → ``(oid, mode)`` | None for "absent")
    written over it, written to ``repo``; the empty tree's id when nothing is left. None when a
    path is both a file and a directory among ``entries``, or would turn a file of ``ours`` into a
    directory or back (the caller then writes the merged index instead). Strict object creation
    is off meanwhile (a partial snapshot may lack a blob ``ours`` merely carries)."""
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
        oid = edit_tree(repo, ours, updates)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    finally:
        pygit2.settings.enable_strict_object_creation(True)
    return oid if oid is not None else repo.TreeBuilder().write()


def edit_tree(repo: pygit2.Repository, tree, updates: dict):
    """``tree`` (or an empty tree) with ``updates`` (name → (oid, mode) | None | nested dict)
    applied and written; None when the result is empty (git writes no empty trees). Raises
    ValueError when a file would become a directory or back."""
    tb = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    for name, u in updates.items():
        cur = tree[name] if tree is not None and name in tree else None
        if isinstance(u, dict):
            if cur is not None and cur.filemode != TREE_MODE:
                raise ValueError("a file becomes a directory")
            oid = edit_tree(repo, cur, u)
            if oid is not None:
                tb.insert(name, oid, TREE_MODE)
            elif cur is not None:
                tb.remove(name)
        elif u is None:
            if cur is not None:
                tb.remove(name)
        else:
            if cur is not None and cur.filemode == TREE_MODE:
                raise ValueError("a directory becomes a file")
            tb.insert(name, u[0], u[1])
    if len(tb) == 0:
        return None
    return tb.write()


class TreeReader:
    """Path lookups in trees through a cache of subtree objects by id. ``tree[path]`` makes
    libgit2 read every subtree on the way from the object database again (through alternates and
    packs: ≈ 0.5 ms a path on the Triton fork); consecutive commits and running trees share most
    subtrees, so walking cached subtree objects by name is much cheaper. Same answers."""

    def __init__(self, repo: pygit2.Repository, size: int = 8192):
        self.repo = repo
        self.size = size
        self._trees: dict = {}

    def tree(self, oid):
        """The tree object ``oid`` (cached; the cache is emptied when it holds ``size`` trees)."""
        t = self._trees.get(oid)
        if t is None:
            if len(self._trees) >= self.size:
                self._trees.clear()
            t = self._trees[oid] = self.repo[oid]
        return t

    def entry_at(self, tree, path: str):
        """What ``tree`` holds at ``path``: ``(id, mode)``; else the first non-directory entry on the
        way to it (``("blocked", prefix, id, mode)``: a file where a directory would be); else None."""
        parts = path.split("/")
        cur = tree
        last = len(parts) - 1
        for i, name in enumerate(parts):
            try:
                e = cur[name]
            except KeyError:
                return None
            if i == last:
                return (e.id, e.filemode)
            if e.filemode != TREE_MODE:
                return ("blocked", "/".join(parts[:i + 1]), e.id, e.filemode)
            cur = self.tree(e.id)
        return None


__all__ = ["TREE_MODE", "TreeReader", "edit_entries", "edit_tree"]
