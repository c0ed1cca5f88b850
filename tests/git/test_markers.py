"""Conflict markers on the real trees of base..head, conflict commits and merges with content of
their own in the range."""
from __future__ import annotations

import pytest

from bot.demo.repobuilder import RepoBuilder
from bot.git.markers import MarkerHit, conflict_commits, files_with_markers, merges_with_content
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
    ("binary file skipped", {"logo.png": "\x00\x02PNG\x00" + f"\n{L} y\n"}, []),
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
