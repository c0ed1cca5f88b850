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


__all__ = ["TREE_MODE", "changed_paths", "edit_entries", "edit_tree", "entries_at"]


_UNSEEN = object()


def entries_at(tree, paths) -> list:
    """What ``tree`` (a tree object) holds at each of ``paths``, in order: ``(id, mode)``; else the
    first non-directory entry on the way to it (``("blocked", prefix, id, mode)``: a file where a
    directory would be); else None. Each directory is read once, however many paths it holds
    (``tree["a/b/c"]`` reads ``a`` and ``a/b`` again on every call: libgit2 keeps no tree of more
    than 4 KiB in its object cache, and a directory of 800 files is 30 KiB)."""
    dirs: dict[str, object] = {"": tree}

    def node(d: str):
        got = dirs.get(d, _UNSEEN)
        if got is not _UNSEEN:
            return got
        parent, _, name = d.rpartition("/")
        up = node(parent)
        if up is None or isinstance(up, tuple):
            got = up
        else:
            try:
                e = up[name]
            except KeyError:
                got = None
            else:
                got = e if e.filemode == TREE_MODE else ("blocked", d, e.id, e.filemode)
        dirs[d] = got
        return got

    out: list = []
    for p in paths:
        d, _, name = p.rpartition("/")
        n = node(d)
        if n is None or isinstance(n, tuple):
            out.append(n)
            continue
        try:
            e = n[name]
        except KeyError:
            out.append(None)
        else:
            out.append((e.id, e.filemode))
    return out


def changed_paths(ancestor, theirs) -> list[str]:
    """Old and new paths of the diff ``ancestor`` → ``theirs`` (two tree objects, no rename
    detection), sorted: the only paths where a 3-way merge without rename detection can differ
    from ours."""
    return sorted({p for d in ancestor.diff_to_tree(theirs).deltas for p in (d.old_file.path, d.new_file.path)})
