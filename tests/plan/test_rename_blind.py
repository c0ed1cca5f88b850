"""The rename pre-check (``MergePredictor.rename_blind``): where it merges a pick without libgit2's
rename detection, detection gives the very same merge — on small built repositories with each
rename case, and on samples of the real forks' pending picks (skipped where the mirrors are absent;
the whole sweep is ``bench/bench_rename_blind.py``)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import MergeFlag

from bot.config import renames
from bot.git import repo as gitio
from bot.plan.predict import MergePredictor, conflicted_paths, rename_sources

SIG = pygit2.Signature("t", "t@example.com", 1_767_225_600, 0)


def text(name: str, n: int = 40, edit: str = "") -> str:
    """A file of ``n`` distinct lines (large enough for libgit2's similarity signature)."""
    return "".join(f"{name} line {i} {'x' * (i % 7)}{edit if i == n // 2 else ''}\n" for i in range(n))


def commit(repo: pygit2.Repository, parent, files: dict) -> pygit2.Commit:
    """A commit on ``parent`` (None: a root) with ``files``: path → text, or None to delete."""
    index = pygit2.Index()
    if parent is not None:
        index.read_tree(parent.tree)
    for path, body in files.items():
        if body is None:
            index.remove(path)
        else:
            index.add(pygit2.IndexEntry(path, repo.create_blob(body.encode()), pygit2.GIT_FILEMODE_BLOB))
    tree = index.write_tree(repo)
    return repo[repo.create_commit(None, SIG, SIG, "c", tree, [parent.id] if parent is not None else [])]


def merge(repo, anc, ours, theirs, flags: int) -> tuple:
    idx = renames.merge_trees(repo, anc, ours, theirs, flags=flags, limit=renames.DEFAULT_RENAME_LIMIT)
    if idx.conflicts is not None:
        return ("conflict", conflicted_paths(idx))
    return ("clean", str(idx.write_tree(repo)))


# (case, the pick's files on the base, rename-blind on the fork)
CASES = [
    ("modifies a file the fork renamed (exactly)", {"src/a.py": text("a", edit="U")}, False),
    ("modifies a file the fork renamed with edits", {"src/c.py": text("c", edit="U")}, False),
    ("modifies a file the fork deleted, nothing like it in the fork", {"src/b.py": text("b", edit="U")}, True),
    ("deletes a file the fork deleted (delete/delete)", {"src/b.py": None}, True),
    ("deletes a file the fork renamed (rename/delete)", {"src/a.py": None}, False),
    ("deletes a file the fork kept, adds nothing", {"src/d.py": None}, True),
    ("renames a file (delete + add)", {"src/d.py": None, "src/d2.py": text("d")}, False),
    ("renames a file the fork renamed elsewhere (rename/rename)", {"src/a.py": None, "src/a_up.py": text("a")}, False),
    ("adds a file the fork added (add/add)", {"src/new.py": text("new")}, False),
    ("adds a file the fork lacks", {"src/x.py": text("x")}, True),
    ("modifies a file both have", {"src/d.py": text("d", edit="U")}, True),
]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    repo = pygit2.init_repository(str(tmp_path_factory.mktemp("rb") / "r.git"), bare=True)
    base = commit(repo, None, {f"src/{n}.py": text(n) for n in "abcd"})
    fork = commit(repo, base, {
        "src/a.py": None, "src/a_moved.py": text("a"),                       # an exact rename
        "src/c.py": None, "src/c_moved.py": text("c", 40, edit="F") + "more\n",  # a rename with edits
        "src/b.py": None,                                                      # a deletion
        "src/new.py": text("other", 30), "fork/own.py": text("own")})          # fork-only files
    return repo, base, fork


@pytest.mark.parametrize("case,files,blind", CASES, ids=[c[0] for c in CASES])
def test_each_rename_case(world, case, files, blind):
    repo, base, fork = world
    pick = commit(repo, base, files)
    pred = MergePredictor(repo, str(fork.id), rename_detection=True)
    assert pred.rename_blind(str(pick.id), str(fork.tree_id)) is blind
    full = merge(repo, base.tree, fork.tree, pick.tree, int(MergeFlag.FIND_RENAMES))
    if blind:
        assert merge(repo, base.tree, fork.tree, pick.tree, 0) == full
    p = pred.predict_on(_info(repo, pick), str(fork.tree_id))
    got = ("conflict", p.conflicts) if p.outcome == "conflict" else ("clean", p.result_tree)
    assert got == full


def _info(repo, c):
    return gitio.commit_info(repo, str(c.id))


def test_a_rename_the_detection_would_find_is_seen_however_many_fork_only_files():
    """The pure rule: which picks need the edge check, which are decided by their paths alone."""
    f = ("a", 1)
    assert rename_sources((("x",), frozenset({"x"}), False), [None]) == ()
    assert rename_sources((("x", "y"), frozenset({"x"}), True), [None, f]) is None       # delete + add
    assert rename_sources((("x",), frozenset({"x"}), False), [f]) is None                 # add/add
    assert rename_sources((("x",), frozenset(), True), [None]) == ("x",)                  # fork lacks it
    assert rename_sources((("x",), frozenset(), False), [("t", 0o040000)]) is None        # a directory


MIRRORS = Path("/work/.mirror")
BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_rename_blind.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_rename_blind", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("fork_dir,fork_ref,upstream_dir,every", [
    ("openxla+triton/repo", "llvm-head", "facebookexperimental+triton/repo", 150),
    ("facebookexperimental+triton/repo", "main", None, 80),
])
def test_real_forks_merge_the_same_with_the_pre_check(tmp_path, fork_dir, fork_ref, upstream_dir, every):
    dirs = [MIRRORS / fork_dir] + ([MIRRORS / upstream_dir] if upstream_dir else [])
    if not all((d / "objects").is_dir() for d in dirs):
        pytest.skip("the fork mirrors are absent")
    bench = _bench()
    fork_rev = str(pygit2.Repository(str(dirs[0])).revparse_single(fork_ref).peel(pygit2.Commit).id)
    up = pygit2.Repository(str(dirs[-1]))
    try:
        up_rev = str(up.revparse_single("a4ce9c2a2").peel(pygit2.Commit).id)
    except KeyError:
        pytest.skip("the upstream tip a4ce9c2a2 is not in the mirror")
    repo = bench.borrowing_repo(tmp_path / "scratch.git", *map(str, dirs))
    got = bench.compare(repo, fork_rev, bench.pending(repo, fork_rev, up_rev, every))
    assert got["differ"] == []
    assert got["picks"] >= 10 and got["blind"] > 0


def test_a_path_key_is_read_only_where_the_pick_stays_rename_blind(world):
    """A pick of a file the fork deleted is keyed by its paths while nothing in the fork pairs with
    that file; once the fork holds a copy of it elsewhere (a rename detection would find), the same
    entries at the pick's paths give the whole-tree key, and the prediction follows the rename."""
    repo, base, fork = world
    pick = commit(repo, base, {"src/b.py": text("b", edit="U")})
    moved = commit(repo, fork, {"lib/b_kept.py": text("b")})
    pred = MergePredictor(repo, str(fork.id), rename_detection=True)
    sha = str(pick.id)
    assert pred.key(sha, str(fork.tree_id)).startswith("p")
    assert pred.key(sha, str(moved.tree_id)).startswith("t")
    before = pred.predict_on(_info(repo, pick), str(fork.tree_id))
    after = pred.predict_on(_info(repo, pick), str(moved.tree_id))
    assert (before.outcome, before.conflicts) == ("conflict", ("src/b.py",))     # modify/delete
    assert after.outcome == "clean"                                              # merged into lib/b_kept.py
    assert repo[after.result_tree]["lib/b_kept.py"].id == repo.create_blob(text("b", edit="U").encode())
