"""Conflict markers on the real trees of base..head, conflict commits and merges with content of
their own in the range."""
from __future__ import annotations

import random

import pygit2
import pytest

from bot.demo.repobuilder import RepoBuilder
from bot.git.markers import MarkerHit, changed_paths, conflict_commits, files_with_markers, merges_with_content
from bot.git.repo import RefError

T0 = 1_700_000_000
L, R, S = "<" * 7, ">" * 7, "=" * 7
UP = "89abcdef0123456789abcdef0123456789abcdef"


@pytest.fixture
def repo(tmp_path):
    r = RepoBuilder.init(tmp_path / "w")
    r.commit("base", {"README.rst": "Title\n=======\n\ntext\n", "a.py": "x = 1\n",
                      "doc/conflicts.md": f"Git writes:\n\n{L} HEAD\nours\n{S}\ntheirs\n{R} branch\n",
                      "logo.png": "\x00\x01PNG\x00" + f"\n{L} x\n"},
             when=T0)
    return r


def scan(r, base="main", head="HEAD"):
    return files_with_markers(r.path, base, head)


TABLE = [
    # (name, files written on the head branch, expected hits)
    ("clean change", {"a.py": "x = 2\n"}, []),
    ("seven-char conflict", {"a.py": f"{L} HEAD\nx = 1\n{S}\nx = 2\n{R} up\n"},
     [MarkerHit("a.py", ((1, "<"), (3, "="), (5, ">")))]),
    ("nine-char, tab-terminated", {"a.py": f"{'<' * 9}\tHEAD\nx = 1\n{'>' * 9}\tup\n"},
     [MarkerHit("a.py", ((1, "<"), (3, ">")))]),
    ("rst heading is not a marker", {"README.rst": "Other\n=======\n\nmore\n"}, []),
    ("documented markers unchanged, file edited", {"doc/conflicts.md": f"Git writes:\n\n{L} HEAD\nours\n{S}\ntheirs\n{R} branch\n\nmore\n"},
     []),
    ("a new conflict in a file that documents markers",
     {"doc/conflicts.md": f"Git writes:\n\n{L} HEAD\nours\n{S}\ntheirs\n{R} branch\n{L} HEAD\nx\n{R} other\n"},
     [MarkerHit("doc/conflicts.md", ((3, "<"), (8, "<"), (10, ">")))]),
    ("new file with markers", {"new/b.txt": f"{L} ours\n{R} theirs\n"}, [MarkerHit("new/b.txt", ((1, "<"), (2, ">")))]),
    # a NUL makes git (and libgit2) call a file binary, and git then writes no markers into it; a
    # person can still commit marker lines there (a generated file, a test input with a \0)
    ("marker lines in a file with a NUL", {"gen/table.inc": "// generated\n\x00\n" + f"{L} HEAD\na\n{S}\nb\n{R} up\n"},
     [MarkerHit("gen/table.inc", ((3, "<"), (5, "="), (7, ">")))]),
    ("a new marker line in a binary-looking file", {"logo.png": "\x00\x02PNG\x00" + f"\n{L} y\n"},
     [MarkerHit("logo.png", ((2, "<"),))]),
    ("a binary-looking file keeping its marker line", {"logo.png": "\x00\x02PNG\x00" + f"\n{L} x\n"}, []),
    ("marker runs inside binary lines are no markers",
     {"logo.png": "\x00\x02PNG\x00" + f"x{L} y\n\x01{R}\n\x00{L}\n{S}\n{L}x\n"}, []),
    ("deleted file", {"a.py": None}, []),
]


@pytest.mark.parametrize("name,files,expected", TABLE, ids=[t[0] for t in TABLE])
def test_files_with_markers(repo, name, files, expected):
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("change", files, when=T0 + 10)
    assert scan(repo) == expected


def test_conflict_marker_size_attribute_from_head_tree(repo):
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("attrs", {".gitattributes": "*.md conflict-marker-size=12\n",
                          "sub/.gitattributes": "x.txt conflict-marker-size=9\n"}, when=T0 + 5)
    base = repo.head()
    seven = f"{L} HEAD\na\n{S}\nb\n{R} up\n"
    twelve = f"{'<' * 12} HEAD\na\n{'=' * 12}\nb\n{'>' * 12} up\n"
    repo.commit("change", {"notes.md": seven, "more.md": twelve, "sub/x.txt": seven, "sub/y.txt": seven},
                when=T0 + 10)
    assert files_with_markers(repo.path, base, "HEAD") == [
        MarkerHit("more.md", ((1, "<"), (3, "="), (5, ">")), 12),
        MarkerHit("sub/y.txt", ((1, "<"), (3, "="), (5, ">")), 7),
    ]


def test_a_head_that_raises_the_marker_size_does_not_hide_its_markers(repo, tmp_path):
    """``conflict-marker-size`` says how long a marker is; a head that raises it in its own
    ``.gitattributes`` (here for every file) would make the 7-character markers git wrote no
    markers at all. The base's attribute counts as well, and the smaller size wins. (A bare
    repository, as the gate's mirror is: libgit2 also reads a work tree's index.)"""
    repo.git("checkout", "-q", "-b", "pr")
    seven = f"{L} HEAD\na\n{S}\nb\n{R} up\n"
    repo.commit("resolve", {".gitattributes": "* conflict-marker-size=40\n", "a.py": seven}, when=T0 + 10)
    bare = repo.clone(tmp_path / "b.git", bare=True)
    assert files_with_markers(bare.path, "main", "pr") == [MarkerHit("a.py", ((1, "<"), (3, "="), (5, ">")), 7)]


def test_bare_clone_and_large_file(repo, tmp_path):
    repo.git("checkout", "-q", "-b", "pr")
    big = "".join(f"line {i}\n" for i in range(200_000)) + f"{L} HEAD\n"
    repo.commit("big", {"big.txt": big}, when=T0 + 10)
    bare = repo.clone(tmp_path / "b.git", bare=True)
    assert files_with_markers(bare.path, "main", "pr") == [MarkerHit("big.txt", ((200_001, "<"),))]


def test_stale_head_scans_only_its_own_changes(repo):
    repo.git("checkout", "-q", "-b", "pr")
    pr = repo.commit("pr", {"a.py": "x = 3\n"}, when=T0 + 10)
    repo.git("checkout", "-q", "main")
    repo.commit("base moves", {"c.py": f"{L} not the PR's\n"}, when=T0 + 20)
    assert files_with_markers(repo.path, "main", pr) == []


def test_changed_paths_are_the_heads_own_changes(repo):
    repo.git("checkout", "-q", "-b", "pr")
    repo.git("mv", "a.py", "b.py")
    pr = repo.commit("pr", {"c/new.txt": "n\n", "README.rst": None}, when=T0 + 10)
    repo.git("checkout", "-q", "main")
    repo.commit("base moves", {"d.py": "not the PR's\n"}, when=T0 + 20)
    assert changed_paths(repo.path, "main", pr) == ("README.rst", "a.py", "b.py", "c/new.txt")


def test_unknown_rev_raises(repo):
    with pytest.raises(RefError, match="nope"):
        files_with_markers(repo.path, "main", "nope")
    with pytest.raises(RefError, match="nope"):
        conflict_commits(repo.path, "nope", "main")


def test_conflict_commits_in_range(repo):
    base = repo.head()
    repo.git("checkout", "-q", "-b", "pr")
    c1 = repo.commit(f"pick one\n\nUpstream-Commit: {'1' * 40}\n", {"a.py": "x = 5\n"}, when=T0 + 10)
    c2 = repo.commit(f"forksync: conflict picking two\n\nForksync-Conflict: {UP}\n", {"b.py": "y\n"}, when=T0 + 20)
    assert conflict_commits(repo.path, base, "pr") == [(c2, UP)]
    assert conflict_commits(repo.path, c2, "pr") == []
    assert conflict_commits(repo.path, c1, "pr") == [(c2, UP)]


def test_merges_with_content_are_those_git_would_not_make_by_itself(repo):
    """A clean merge of main (what ``Update branch`` makes) adds nothing; an edit committed with
    the merge, a hand-resolved conflict and an octopus each bring content of their own."""
    base = repo.head()
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("pick", {"a.py": "x = 5\n"}, when=T0 + 10)
    repo.git("checkout", "-q", "main")
    repo.commit("main moves", {"m.txt": "1\n"}, when=T0 + 20)
    repo.git("checkout", "-q", "pr")
    clean = repo.merge("main", when=T0 + 30)
    repo.git("checkout", "-q", "main")
    repo.commit("main moves again", {"m.txt": "2\n"}, when=T0 + 40)
    repo.git("checkout", "-q", "pr")
    repo.git("merge", "-q", "--no-ff", "--no-commit", "main")
    edited = repo.commit("merge main, and an edit", {"a.py": "x = 6\n"}, when=T0 + 50)
    repo.git("checkout", "-q", "main")
    repo.commit("main touches a.py", {"a.py": "x = 7\n"}, when=T0 + 60)
    main = repo.head()
    repo.git("checkout", "-q", "pr")
    repo.git("merge", "-q", "--no-ff", "main", check=False)                 # conflicts on a.py
    resolved = repo.commit("merge main, resolved", {"a.py": "x = 6\n"}, when=T0 + 70)
    assert merges_with_content(repo.path, base, "pr") == (edited, resolved)
    assert merges_with_content(repo.path, main, clean) == ()
    for name, text in (("o1", "1\n"), ("o2", "2\n")):
        repo.git("checkout", "-q", "-b", name, "pr")
        repo.commit(name, {f"{name}.txt": text}, when=T0 + 80)
    repo.git("checkout", "-q", "pr")
    repo.git("merge", "-q", "--no-ff", "-m", "octopus", "o1", "o2", when=T0 + 90)
    assert merges_with_content(repo.path, main, "pr")[-1] == repo.head()


def test_a_conflict_git_writes_into_a_file_libgit2_calls_binary_counts(repo):
    """A SOH-delimited FIX log has no NUL, so git merges it as text and writes markers into it, but
    libgit2's binary heuristic (one non-printable byte per 128 printable ones) calls it binary:
    the conflict a person commits as git left it must count all the same."""
    def fix(order5: str) -> str:
        return "".join(f"8=FIX.4.2\x0135=D\x0149=CLIENT\x0156=BROKER\x0111={'ORD5' + order5 if i == 5 else f'ORD{i}'}"
                       f"\x0155=IBM\x0138=100\x0110=000\x01\n" for i in range(20))
    repo.commit("orders", {"tests/orders.fix": fix("")}, when=T0 + 1)
    base = repo.head()
    repo.git("checkout", "-q", "-b", "up")
    up = repo.commit("upstream order", {"tests/orders.fix": fix("-up")}, when=T0 + 2)
    repo.git("checkout", "-q", "-b", "pr", base)
    repo.commit("fork order", {"tests/orders.fix": fix("-fork")}, when=T0 + 3)
    with pytest.raises(Exception, match="cherry-pick"):
        repo.cherry_pick(up, when=T0 + 4)
    text = (repo.path / "tests/orders.fix").read_text()
    assert f"\n{L} HEAD\n" in text                             # git did write the markers
    blob = pygit2.Repository(str(repo.path)).revparse_single(f"{up}:tests/orders.fix")
    assert blob.is_binary                                     # what libgit2 thinks of the file
    repo.git("add", "tests/orders.fix")
    repo.commit("pick upstream order", when=T0 + 5)
    [hit] = files_with_markers(repo.path, base, "HEAD")
    assert hit.path == "tests/orders.fix" and [k for _, k in hit.lines] == ["<", "=", ">"]


def test_random_bytes_are_no_conflict(repo):
    """Compressed or random bytes hold a marker only by a 1-in-2**64 chance per byte; marker runs
    that do not start a line, as in a binary's string table, never count."""
    rnd = random.Random(7)
    data = bytearray(rnd.randbytes(256 * 1024))
    for n in range(200):
        at = rnd.randrange(1, len(data) - 16)
        data[at - 1:at + 9] = b"\x00" + (b"<", b">", b"|")[n % 3] * 7 + b" x"
    repo.git("checkout", "-q", "-b", "pr")
    (repo.path / "model.bin").write_bytes(bytes(data))
    repo.git("add", "model.bin")
    repo.commit("weights", when=T0 + 10)
    assert scan(repo) == []


SEPARATOR_ALONE = [
    ("C++: both ends resolved, the separator left", {"lib/Dialect.cpp": "int f() {\n  return 1;\n=======\n  return 2;\n}\n"},
     [MarkerHit("lib/Dialect.cpp", ((3, "="),))]),
    ("Python: the separator left", {"a.py": f"x = 1\n{S}\ny = 2\n"}, [MarkerHit("a.py", ((2, "="),))]),
    ("TableGen: the separator left", {"ops.td": f"def A;\n{S}\ndef B;\n"}, [MarkerHit("ops.td", ((2, "="),))]),
    ("markdown: a setext heading under a long title", {"doc/new.md": f"A title longer than its rule\n{S}\n"}, []),
    ("reStructuredText: a heading", {"docs/new.rst": f"Install\n{S}\n\ntext\n"}, []),
    ("code: a rule with text after it is no separator", {"b.py": f"# x\n{S} section\n"}, []),
    # sphinx-gallery tutorials (upstream's python/tutorials/*.py) open with an rst title in the
    # module docstring, its rule as long as the title: a new tutorial is no conflict
    ("Python: a tutorial's docstring title", {"python/tutorials/11-new.py": '"""\nVector Addition\n'
                                              '===============\n\nIn this tutorial\n"""\n'}, []),
    ("Python: a seven-character docstring title", {"c.py": f'"""\nExample\n{S}\n\ntext\n"""\n'}, []),
    # upstream's third_party/nvidia/backend/compiler.py frames ptxas's error in rules of 64
    ("Python: a banner in a string", {"d.py": 'print(f"""\n\n' + "=" * 64 + '\n{error}\n' + "=" * 64 + '\n""")\n'}, []),
    ("Python: a title with text right under its rule",
     {"python/tutorials/03-mm.py": '"""\nMatrix Multiplication\n=====================\nIn this tutorial\n"""\n'}, []),
]


@pytest.mark.parametrize("name,files,expected", SEPARATOR_ALONE, ids=[t[0] for t in SEPARATOR_ALONE])
def test_a_separator_left_alone_in_code_is_a_conflict_marker(repo, name, files, expected):
    """A person resolves a conflict by deleting its ``<<<<<<<`` and ``>>>>>>>`` lines and keeps
    one side, but leaves the ``=======`` between them (or keeps both sides around it). What a
    user sees: the gate passes — ``=`` counts only inside an open conflict, so that reStructured
    Text headings are not markers — and the stray line lands, in a file the L1 suite may never
    build (another backend's C++, a TableGen file). What they should see: ``conflict-markers``
    naming the file, as ``git diff --check`` does; a markup file (rst, markdown, text) keeps its
    heading rules."""
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("change", files, when=T0 + 10)
    assert scan(repo) == expected
