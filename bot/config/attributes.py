"""The fork tree's ``merge`` attribute and the picks git stops on that libgit2 merges, shared by
the planner's predictions and apply.

``git cherry-pick`` in a work tree of the fork reads the fork's committed ``.gitattributes``: a
file marked ``merge=binary``, ``-merge`` or ``binary`` is never merged as text — a pick that
changes it where the fork changed it too stops with a conflict. forksync merges in a bare mirror
or in a clone's git dir, where neither libgit2's ``merge_trees`` nor ``git merge-tree`` (before
git 2.42's ``--attr-source``) reads the tree's attributes. So the attribute is read from the
tree itself (libgit2's ``GIT_ATTR_CHECK_INCLUDE_COMMIT``: ``$GIT_DIR/info/attributes``, the
``.gitattributes`` of the tree along the path, the global and system files; never a work tree
or an index, which are the person's) and handed to git as an attributes file
(:func:`git_attributes_file`).

libgit2 also merges an add/add of one blob with two modes (``100644`` and ``100755``) cleanly,
taking one mode, where git's ort stops (CONFLICT (add/add)): :func:`git_stops` names both kinds.
"""
from __future__ import annotations

import re

import pygit2

from bot.config.trees import entries_at

#: the ``merge`` attribute values for which git runs its binary driver (``merge=binary``,
#: ``-merge`` and the ``binary`` macro, which unsets it): a file both sides changed conflicts
NO_AUTO_MERGE = (False, "binary")

#: git's default ``conflict-marker-size`` (gitattributes(5); ``bot.core.markers`` reads markers with it)
DEFAULT_MARKER_SIZE = 7

#: libgit2's lookup flags: no work tree and no index (the ``0x3`` check mode names neither
#: source), the commit given — the tree's own attributes, as a work tree checked out at it has them
_TREE_ONLY = 0x3 | int(pygit2.enums.AttrCheck.INCLUDE_COMMIT)
_GLOB = re.compile(r"([*?\[\\])")
_SIG = pygit2.Signature("forksync", "forksync@users.noreply.github.com", 0, 0)


class TreeAttributes:
    """The ``merge`` attribute of paths in trees of one repository, memoized by the
    ``.gitattributes`` blobs a path's lookup reads (the same files give the same answer on every
    running tree of a plan). Attributes are read from a commit: one of ``tree`` is written (no
    parent, no ref) the first time a tree needs one."""

    def __init__(self, repo: pygit2.Repository):
        self.repo = repo
        self._memo: dict[tuple, object] = {}
        self._commits: dict[str, str] = {}
        self._dirs: dict[tuple[str, str], tuple] = {}     # (tree, directory) -> its .gitattributes ids
        self._nodes: dict[tuple[str, str], object] = {}   # (tree, directory) -> its tree object | None

    def merge(self, tree, path: str, commit: str | None = None):
        """``path``'s ``merge`` attribute in ``tree`` (a tree object): True, False (unset), a
        string (a driver's name) or None (unspecified). ``commit``: a commit whose tree is
        ``tree``, if there is one (else one is written)."""
        return self._get(tree, path, "merge", commit)

    def marker_size(self, tree, path: str, commit: str | None = None) -> int:
        """``path``'s ``conflict-marker-size`` in ``tree``: the length of the conflict markers git
        writes into it in a work tree of that tree (gitattributes(5)); unset or not a positive
        integer → :data:`DEFAULT_MARKER_SIZE`."""
        v = self._get(tree, path, "conflict-marker-size", commit)
        n = int(v) if isinstance(v, str) and v.isdigit() else 0
        return n if n > 0 else DEFAULT_MARKER_SIZE

    def _get(self, tree, path: str, name: str, commit: str | None):
        key = (name, path, self.attribute_files(tree, path.rpartition("/")[0]))
        try:
            return self._memo[key]
        except KeyError:
            pass
        if commit is None:
            commit = self._commits.get(str(tree.id))
            if commit is None:
                commit = self._commits[str(tree.id)] = str(self.repo.create_commit(
                    None, _SIG, _SIG, "forksync: a tree's attributes\n", tree.id, []))
        got = self._memo[key] = self.repo.get_attr(path, name, flags=_TREE_ONLY, commit=commit)
        return got

    def attribute_files(self, tree, d: str) -> tuple:
        """The ids of the ``.gitattributes`` files of ``tree`` in directory ``d`` and those above
        it (None where one has none), each directory read once per tree."""
        key = (str(tree.id), d)
        got = self._dirs.get(key)
        if got is None:
            if not d:
                node, above = tree, ()
            else:
                parent, _, name = d.rpartition("/")
                above = self.attribute_files(tree, parent)
                node = self._nodes.get((str(tree.id), parent))
                try:
                    node = node[name] if node is not None else None
                except KeyError:
                    node = None
                if node is not None and node.type_str != "tree":
                    node = None
            self._nodes[key] = node
            try:
                here = node[".gitattributes"].id if node is not None else None
            except KeyError:
                here = None
            got = self._dirs[key] = (*above, here)
        return got


def _blob(e) -> tuple | None:
    return e if e is not None and len(e) == 2 and e[1] in (0o100644, 0o100755) else None


def git_stops(repo: pygit2.Repository, ancestor, ours, theirs, paths, attrs: TreeAttributes,
              ours_commit: str | None = None) -> list[str]:
    """The paths among ``paths`` (the pick's changed paths) where ``git cherry-pick`` of the
    ancestor → theirs change onto ``ours`` (trees) stops although libgit2 merges them: a file
    all three trees hold with three different blobs whose ``merge`` attribute in ``ours`` is one of
    :data:`NO_AUTO_MERGE`; a file both sides added with the same blob and different modes.
    Sorted; raises KeyError / GitError for an unreadable tree."""
    paths = list(paths)
    out = []
    for p, a_, o, t in zip(paths, *(entries_at(tree, paths) for tree in (ancestor, ours, theirs))):
        a, o, t = _blob(a_), _blob(o), _blob(t)
        if o is None or t is None:
            continue
        if a is None:
            if o[0] == t[0] and o[1] != t[1] and a_ is None:
                out.append(p)
        elif len({a[0], o[0], t[0]}) == 3 and attrs.merge(ours, p, ours_commit) in NO_AUTO_MERGE:
            out.append(p)
    return sorted(out)


def git_attributes_file(paths_attrs: dict[str, object], marker_sizes: dict[str, int] | None = None) -> str:
    """An attributes file (``core.attributesFile``) that gives git each path's ``merge``
    attribute: ``{path: True | False | driver name}`` (None: no line), and its
    ``conflict-marker-size`` (``marker_sizes``: ``{path: size}``; the default, 7, needs no line).
    Paths are anchored (``/a/b.txt``), their glob characters escaped, quoted C-style where they
    hold blanks."""
    sizes = {p: n for p, n in (marker_sizes or {}).items() if n != DEFAULT_MARKER_SIZE}
    lines = []
    for path in sorted(set(paths_attrs) | set(sizes)):
        value = paths_attrs.get(path)
        attrs = [] if value is None else \
            ["merge" if value is True else "-merge" if value is False else f"merge={value}"]
        if path in sizes:
            attrs.append(f"conflict-marker-size={sizes[path]}")
        if not attrs:
            continue
        pat = "/" + _GLOB.sub(r"\\\1", path)
        if any(c in pat for c in ' \t"'):
            pat = '"' + pat.replace("\\", "\\\\").replace('"', '\\"') + '"'
        lines.append(f"{pat} {' '.join(attrs)}\n")
    return "".join(lines)
