"""``path_merge`` decides a pick path by path exactly as libgit2's ``merge_trees`` does (no rename
detection): a property test over random ancestor / ours / theirs trees built in a real repository,
with the shapes that matter — clean and conflicting edits of one file, modify/delete, add/add,
mode changes, binary files, non-UTF-8 text, a NUL byte after the first 8 KB (libgit2 still merges
such a file as text), symlinks, a file blocking a directory."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygit2.enums import ConfigLevel

from bot.config.trees import changed_paths as _changed_paths  # the name the derandomized property test was seeded with
from bot.git.repo import commit_infos
from bot.plan.predict import MergePredictor, _apply, _entry_at, _merged_entries, conflicted_paths, path_merge, scratch_repo

BASE = [f"line {i}" for i in range(12)]
PATHS = ("a.txt", "b.cpp", "d/c.py", "d/e/f.txt", "link", "blk")


def text(edits: tuple) -> bytes:
    """BASE with ``(line, value)`` edits (the last edit of a line wins): a value ``+x`` inserts
    ``x`` before the line, ``-`` drops it, anything else replaces it."""
    at = dict(edits)
    lines: list[str] = []
    for i, line in enumerate(BASE):
        v = at.get(i)
        if v is None:
            lines.append(line)
        elif v.startswith("+"):
            lines += [v[1:], line]
        elif v != "-":
            lines.append(v)
    return ("\n".join(lines) + "\n").encode()


CONTENT = st.one_of(
    st.lists(st.tuples(st.integers(0, 11), st.sampled_from(["x", "y", "-", "+z", "+w"])), max_size=3).map(
        lambda e: ("text", tuple(e))),
    st.sampled_from([("bin", b"\0\1\2"), ("bin", b"\0\1\3"), ("latin1", "caf\xe9\n".encode("latin-1")),
                     ("latenul", b"a\n" * 5000 + b"x\0y\n")]),
)
ENTRY = st.one_of(st.none(), st.tuples(CONTENT, st.sampled_from([0o100644] * 6 + [0o100755, 0o120000])))
TREE = st.fixed_dictionaries({p: ENTRY for p in PATHS})
#: a side: per path, the ancestor's entry ("same") more often than not
#: or the ancestor's text with one more line edited ("edit": the two sides' edits merge when apart)
EDIT = st.tuples(st.just("edit"), st.integers(0, 11), st.sampled_from(["p", "q"]))
SIDE = st.fixed_dictionaries({p: st.one_of(st.just("same"), st.just("same"), EDIT, EDIT, ENTRY) for p in PATHS})


def side(anc: dict, spec: dict) -> dict:
    out = {}
    for p, v in spec.items():
        if v == "same":
            out[p] = anc[p]
        elif isinstance(v, tuple) and v[0] == "edit":
            a = anc[p]
            if a is None or a[0][0] != "text":
                out[p] = a
            else:
                out[p] = (("text", tuple(e for e in a[0][1] if e[0] != v[1]) + ((v[1], v[2]),)), a[1])
        else:
            out[p] = v
    return out


def blob_of(repo: pygit2.Repository, content) -> pygit2.Oid:
    kind, value = content
    return repo.create_blob(text(value) if kind == "text" else value)


def tree_of(repo: pygit2.Repository, spec: dict, blocked: bool) -> pygit2.Tree:
    """A tree of ``spec`` ({path: ((kind, value), mode) | None}); ``blocked`` puts a file ``blk``
    where another tree holds a directory ``blk/``."""
    root: dict = {}
    for path, entry in spec.items():
        if entry is None:
            continue
        content, mode = entry
        if path == "blk" and blocked:
            path = "blk/inner.txt"
        *dirs, name = path.split("/")
        node = root
        for d in dirs:
            node = node.setdefault(d, {})
        node[name] = (blob_of(repo, content), mode)

    def write(node) -> pygit2.Oid:
        tb = repo.TreeBuilder()
        for name, v in sorted(node.items()):
            if isinstance(v, dict):
                tb.insert(name, write(v), pygit2.GIT_FILEMODE_TREE)
            else:
                tb.insert(name, v[0], v[1])
        return tb.write()

    return repo[write(root)]


def libgit2(repo, anc, ours, theirs, paths) -> tuple:
    idx = repo.merge_trees(anc, ours, theirs, flags=0)
    if idx.conflicts is not None:
        return ("conflict", conflicted_paths(idx)), None
    return ("merged", _merged_entries(idx, paths)), str(idx.write_tree(repo))


SEEN: Counter = Counter()


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(anc=TREE, ours=SIDE, theirs=SIDE, blocked=st.sampled_from(["", "", "", "ours", "theirs"]))
def test_path_merge_answers_as_merge_trees(tmp_path_factory, anc, ours, theirs, blocked):
    ours, theirs = side(anc, ours), side(anc, theirs)
    repo = pygit2.init_repository(str(tmp_path_factory.mktemp("pm") / "r.git"), bare=True)
    a = tree_of(repo, anc, False)
    o = tree_of(repo, ours, blocked == "ours")
    t = tree_of(repo, theirs, blocked == "theirs")
    paths = _changed_paths(a, t)
    got = path_merge(repo, a, o, t, paths)
    want, want_tree = libgit2(repo, a, o, t, paths)
    if got is None:
        SEEN["left to merge_trees"] += 1
        return
    assert got == want
    SEEN[got[0]] += 1
    if got[0] == "merged":
        tree = _apply(repo, o, got[1])
        assert tree is None or tree == want_tree     # the result tree is the one merge_trees writes
        sides = {str(x[0]) for tr in (o, t) for p in paths if (x := _entry_at(tr, p)) is not None and len(x) == 2}
        if any(e is not None and e[0] not in sides for e in got[1].values()):
            SEEN["merged with a content merge"] += 1


def test_the_property_test_met_the_shapes_it_is_about():
    assert SEEN["conflict"] >= 30 and SEEN["merged"] >= 30 and SEEN["left to merge_trees"] >= 30, SEEN
    assert SEEN["merged with a content merge"] >= 5, SEEN


def test_a_content_merge_and_a_conflict(tmp_path):
    """Two edits far apart merge into one blob (the one libgit2 writes); the same line edited
    both ways conflicts, and so does a file modified on one side and deleted on the other."""
    repo = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    m = 0o100644
    a = tree_of(repo, {"a.txt": (("text", ()), m), "b.cpp": (("text", ()), m)}, False)
    o = tree_of(repo, {"a.txt": (("text", ((0, "x"),)), m), "b.cpp": (("text", ((3, "x"),)), m)}, False)
    t = tree_of(repo, {"a.txt": (("text", ((10, "y"),)), m), "b.cpp": (("text", ((3, "y"),)), m)}, False)
    paths = _changed_paths(a, t)
    got = path_merge(repo, a, o, t, paths)
    assert got == ("conflict", ("b.cpp",)) == libgit2(repo, a, o, t, paths)[0]
    t2 = tree_of(repo, {"a.txt": (("text", ((10, "y"),)), m), "b.cpp": (("text", ()), m)}, False)
    got = path_merge(repo, a, o, t2, _changed_paths(a, t2))
    merged_blob = got[1]["a.txt"][0]
    assert repo[merged_blob].data == text(((0, "x"), (10, "y")))
    assert got == libgit2(repo, a, o, t2, _changed_paths(a, t2))[0]
    t3 = tree_of(repo, {"b.cpp": (("text", ()), m)}, False)        # theirs deletes a.txt, ours edited it
    assert path_merge(repo, a, o, t3, _changed_paths(a, t3)) == ("conflict", ("a.txt",))


def test_a_nul_byte_past_the_first_8_kb_and_latin_1_text_merge_byte_for_byte(tmp_path):
    """libgit2 takes a file as binary only for a NUL in its first 8,000 bytes: a later NUL (and
    text that is not UTF-8) is merged as text, and the merged bytes are kept exactly (pygit2's
    ``merge_file_from_index`` would cut them at the NUL or fail to decode them)."""
    repo = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    m = 0o100644
    body = b"a\n" * 5000 + b"x\0y\n" + "caf\xe9\n".encode("latin-1") + b"end\n"
    a = tree_of(repo, {"a.txt": (("raw", body), m)}, False)
    o = tree_of(repo, {"a.txt": (("raw", b"ours\n" + body), m)}, False)
    t = tree_of(repo, {"a.txt": (("raw", body + b"theirs\n"), m)}, False)
    paths = _changed_paths(a, t)
    got = path_merge(repo, a, o, t, paths)
    assert got == libgit2(repo, a, o, t, paths)[0]
    assert repo[got[1]["a.txt"][0]].data == b"ours\n" + body + b"theirs\n"


@pytest.mark.parametrize("where", ["info/attributes", "the tree's .gitattributes"])
@pytest.mark.parametrize("attr", ["merge=union", "-merge", "binary", "merge=text", "merge"])
def test_a_merge_attribute_of_the_repository_is_honoured_as_merge_trees_honours_it(tmp_path, where, attr):
    """``merge_trees`` picks a file's merge driver from the repository's gitattributes
    (``info/attributes``, the global file, a work tree): ``merge=union`` merges the same-line
    edits cleanly, ``-merge`` / ``binary`` make the far-apart edits conflict. The file merge reads
    no attributes: a ``merge=union`` file leaves the pick to ``merge_trees``; ``-merge`` /
    ``binary`` (git's binary driver) is a conflict, decided path by path, and so is ``merge`` /
    ``merge=text`` the text merge. The attributes of ours' tree count (as in a work tree checked
    out at the fork tip: here the work tree holds the same file, so ``merge_trees`` reads it too)."""
    bare = where == "info/attributes"
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=bare)
    attributes = Path(repo.path) / "info" / "attributes" if bare else Path(repo.workdir) / ".gitattributes"
    attributes.parent.mkdir(exist_ok=True)
    attributes.write_text(f"*.txt {attr}\n")
    committed = {} if bare else {".gitattributes": (("raw", f"*.txt {attr}\n".encode()), 0o100644)}
    m = 0o100644
    a = tree_of(repo, {"a.txt": (("text", ()), m), **committed}, False)
    o = tree_of(repo, {"a.txt": (("text", ((3, "x"),)), m), **committed}, False)
    for edit in (((3, "y"),), ((10, "y"),)):               # the same line, far apart
        t = tree_of(repo, {"a.txt": (("text", edit), m), **committed}, False)
        paths = _changed_paths(a, t)
        got = path_merge(repo, a, o, t, paths)
        assert got == libgit2(repo, a, o, t, paths)[0] if attr != "merge=union" else got is None
    want = {"merge=union": "merged", "-merge": "conflict", "binary": "conflict"}.get(attr)
    if want:            # the attribute is read: the far-apart edits are not the text merge's answer
        assert libgit2(repo, a, o, t, paths)[0][0] == want


def test_a_global_merge_attribute_reaches_the_planners_scratch_repository(tmp_path):
    """The planner merges in a scratch bare repository (no attributes of its own), but libgit2
    also reads the user's global attributes file (``~/.config/git/attributes``): with
    ``CHANGELOG merge=union`` there, ``merge_trees`` merges two additions at the end cleanly,
    which the text merge calls a conflict. Such a file is left to ``merge_trees``."""
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    (xdg / "attributes").write_text("CHANGELOG merge=union\n")
    before = pygit2.settings.search_path[ConfigLevel.XDG]
    pygit2.settings.search_path[ConfigLevel.XDG] = str(xdg)
    try:
        src = pygit2.init_repository(str(tmp_path / "fork.git"), bare=True)
        repo = scratch_repo(src.path, tmp_path / "cache")
        m = 0o100644
        a, o, t = (tree_of(repo, {"CHANGELOG": (("raw", body), m)}, False) for body in (b"v1\n", b"v1\nours\n", b"v1\ntheirs\n"))
        paths = _changed_paths(a, t)
        assert libgit2(repo, a, o, t, paths)[0] == ("merged", {"CHANGELOG": (str(repo.create_blob(b"v1\nours\ntheirs\n")), m)})
        assert path_merge(repo, a, o, t, paths) is None
    finally:
        pygit2.settings.search_path[ConfigLevel.XDG] = before


def test_a_submodule_bump_is_a_changed_path_whatever_the_users_diff_config(tmp_path):
    """The predictor takes a pick's changed paths from ``git log -p``, which leaves submodule
    changes out under ``diff.ignoreSubmodules=all`` (repository or global config): a pick that
    bumps a submodule ours bumped differently would then be decided without that path and come
    out clean. The log runs with ``--ignore-submodules=none``, so it conflicts, as in ``merge_trees``."""
    repo = pygit2.init_repository(str(tmp_path / "fork.git"), bare=True)
    repo.config["diff.ignoreSubmodules"] = "all"
    sig = pygit2.Signature("t", "t@example.com", 1_750_000_000, 0)

    def commit(files: dict, parents: list) -> str:
        tb = repo.TreeBuilder()
        tb.insert("f.txt", repo.create_blob(files["f.txt"]), 0o100644)
        tb.insert("sub", pygit2.Oid(hex=files["sub"] * 40), pygit2.GIT_FILEMODE_COMMIT)
        return str(repo.create_commit(None, sig, sig, "c", tb.write(), parents))

    base = commit({"f.txt": b"x\n", "sub": "1"}, [])
    fork = commit({"f.txt": b"x\n", "sub": "2"}, [base])
    pick = commit({"f.txt": b"y\n", "sub": "3"}, [base])
    info = commit_infos(repo, [pick], renames=False)[pick]
    assert info.paths == {"f.txt", "sub"}
    got = MergePredictor(repo, fork, rename_detection=False).predict(info)
    idx = repo.merge_trees(repo[base].tree, repo[fork].tree, repo[pick].tree, flags=0)
    assert (got.outcome, got.conflicts) == ("conflict", conflicted_paths(idx)) == ("conflict", ("sub",))
