"""The predictor's rename pre-check (``MergePredictor.rename_blind``) against libgit2's full rename
detection on real forks: for pending upstream picks onto the fork tip, the merge the predictor
makes (without detection where the pre-check says detection cannot change it) equals the merge
with detection — the result tree, or the conflict entries (path, blob, mode of every stage).
Also the time of the pre-check and of the merges. The mirrors are never written: objects go to a
temporary repository that borrows theirs (``objects/info/alternates``).

    PYTHONPATH=. .venv/bin/python bench/bench_rename_blind.py \\
        /work/.mirror/openxla+triton/repo llvm-head /work/.mirror/facebookexperimental+triton/repo a4ce9c2a2 1
    PYTHONPATH=. .venv/bin/python bench/bench_rename_blind.py \\
        /work/.mirror/facebookexperimental+triton/repo main - a4ce9c2a2 1

Arguments: fork git dir, fork ref, upstream git dir (``-``: the fork's), upstream rev, every k-th
pending pick (1: all). Prints the counts and times; exits 1 on a difference.
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import pygit2
from pygit2.enums import MergeFlag, SortMode

from bot.config import renames
from bot.plan.predict import MergePredictor


def borrowing_repo(dest: Path, *git_dirs: str) -> pygit2.Repository:
    """A bare repository at ``dest`` that reads the objects of ``git_dirs`` and receives writes."""
    pygit2.init_repository(str(dest), bare=True)
    alt = dest / "objects" / "info" / "alternates"
    alt.write_text("".join(str(Path(g).resolve() / "objects") + "\n" for g in git_dirs))
    return pygit2.Repository(str(dest))


def pending(repo: pygit2.Repository, fork_rev: str, upstream_rev: str, every: int) -> list[pygit2.Commit]:
    """Every ``every``-th single-parent upstream commit not in the fork, oldest first."""
    fork = repo.revparse_single(fork_rev).peel(pygit2.Commit)
    w = repo.walk(repo.revparse_single(upstream_rev).peel(pygit2.Commit).id, SortMode.TOPOLOGICAL | SortMode.REVERSE)
    w.hide(fork.id)
    return [c for c in w if len(c.parents) == 1][::every]


def outcome(repo: pygit2.Repository, index: pygit2.Index) -> tuple:
    """A merge's result: ``("clean", tree id)`` or ``("conflict", entries of every stage)``."""
    if index.conflicts is None:
        return ("clean", str(index.write_tree(repo)))
    return ("conflict", tuple(sorted(tuple((e.path, str(e.id), e.mode) if e else ("", "", 0) for e in c)
                                     for c in index.conflicts)))


def readable_tree(repo: pygit2.Repository, tree: pygit2.Tree) -> pygit2.Tree:
    """``tree`` without the blobs this snapshot lacks (Meta's fork tip carries a PDF the mirror
    does not hold: libgit2's rename detection reads every fork-only file, so with it every merge
    onto the tip fails); ``tree`` itself when it lacks none."""
    index = pygit2.Index()
    index.read_tree(tree)
    gone = [e.path for e in index if e.mode != pygit2.GIT_FILEMODE_COMMIT and e.id not in repo]
    if not gone:
        return tree
    for path in gone:
        index.remove(path)
    return repo[index.write_tree(repo)]


def compare(repo: pygit2.Repository, fork_rev: str, picks, limit: int = renames.DEFAULT_RENAME_LIMIT) -> dict:
    """Merge each pick onto the fork tip (its readable part, :func:`readable_tree`) both ways:
    counts, seconds and the differing commits."""
    fork = repo.revparse_single(fork_rev).peel(pygit2.Commit)
    ours = readable_tree(repo, fork.tree)
    pred = MergePredictor(repo, str(fork.id), rename_detection=True, rename_limit=limit)
    out = {"picks": 0, "blind": 0, "check_s": 0.0, "full_s": 0.0, "blind_merge_s": 0.0, "differ": [], "errors": 0}
    for c in picks:
        anc = c.parents[0].tree
        t0 = time.perf_counter()
        blind = pred.rename_blind(str(c.id), str(ours.id))
        t1 = time.perf_counter()
        try:
            full = outcome(repo, renames.merge_trees(repo, anc, ours, c.tree, flags=int(MergeFlag.FIND_RENAMES), limit=limit))
        except (KeyError, pygit2.GitError):
            out["errors"] += 1      # a blob detection reads is missing: the predictor drops detection
            continue
        t2 = time.perf_counter()
        out["picks"] += 1
        out["check_s"] += t1 - t0
        out["full_s"] += t2 - t1
        if blind:
            out["blind"] += 1
            plain = outcome(repo, repo.merge_trees(anc, ours, c.tree, flags=0))
            out["blind_merge_s"] += time.perf_counter() - t2
            if plain != full:
                out["differ"].append(str(c.id))
    return out


def main(fork_dir: str, fork_rev: str, upstream_dir: str, upstream_rev: str, every: int) -> int:
    dirs = [fork_dir] + ([upstream_dir] if upstream_dir != "-" else [])
    # refs are read where they live; the scratch repository only borrows objects
    fork_rev = str(pygit2.Repository(fork_dir).revparse_single(fork_rev).peel(pygit2.Commit).id)
    upstream_rev = str(pygit2.Repository(dirs[-1]).revparse_single(upstream_rev).peel(pygit2.Commit).id)
    with tempfile.TemporaryDirectory() as tmp:
        repo = borrowing_repo(Path(tmp) / "scratch.git", *dirs)
        picks = pending(repo, fork_rev, upstream_rev, every)
        t = time.perf_counter()
        got = compare(repo, fork_rev, picks)
        wall = time.perf_counter() - t
    print(f"picks {got['picks']} (missing blobs: {got['errors']}), rename-blind {got['blind']}, differ {len(got['differ'])}; "
          f"pre-check {got['check_s']:.1f} s, full detection {got['full_s']:.1f} s, blind merges without it "
          f"{got['blind_merge_s']:.1f} s; wall {wall:.1f} s")
    for sha in got["differ"]:
        print("DIFFERS", sha)
    return 1 if got["differ"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])))
