"""The pick predictor on a wide upstream commit (a reformat touching every file)."""
from __future__ import annotations

import time

import pygit2

from bot.git import repo as gitio
from bot.plan.predict import MergePredictor

T0 = 1_767_225_600


def test_a_commit_touching_thousands_of_files_is_predicted_about_as_fast_as_libgit2_merges_it(tmp_path):
    """A reformat-style upstream commit that edits all 6,400 files of eight 800-file directories
    (Triton's test and lib directories hold hundreds of files each). What a user sees: `forksync
    plan` spends ~7 s predicting this one pick where libgit2's `merge_trees` of the same three
    trees takes ~0.02 s (path_merge looks each changed path up from the root of each of the three
    trees, re-reading an 800-entry directory every time: paths × directory size). docs/plan.md
    says the path-by-path merge costs about half the bare merge loop. What they should see: the
    prediction within a small multiple of the merge (bot/plan/predict.py path_merge / _entry_at)."""
    repo = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    sig = pygit2.Signature("t", "t@t", T0, 0)

    def tree(version: int, fork_edit: bool = False):
        top = repo.TreeBuilder()
        for d in range(8):
            sub = repo.TreeBuilder()
            for f in range(800):
                i = d * 800 + f
                first = f"file {i} fork\n" if fork_edit and i == 0 else f"file {i}\n"
                sub.insert(f"f{i}.cpp", repo.create_blob(f"{first}a\nb\nc\nline 5 v{version}\n"), pygit2.GIT_FILEMODE_BLOB)
            top.insert(f"d{d}", sub.write(), pygit2.GIT_FILEMODE_TREE)
        return top.write()

    base = repo.create_commit("refs/heads/up", sig, sig, "base\n", tree(0), [])
    fork = repo.create_commit("refs/heads/main", sig, sig, "[fork] edit\n", tree(0, fork_edit=True), [base])
    wide = repo.create_commit("refs/heads/up", sig, sig, "[NFC] reformat everything (#1)\n", tree(1), [base])
    info = gitio.commit_infos(repo, [str(wide)])[str(wide)]
    t = time.perf_counter()
    idx = repo.merge_trees(repo[base].tree, repo[fork].tree, repo[wide].tree, flags=0)
    lib = time.perf_counter() - t
    assert idx.conflicts is None
    pred = MergePredictor(repo, str(fork), rename_detection=False)
    t = time.perf_counter()
    p = pred.predict(info)
    took = time.perf_counter() - t
    assert p.outcome == "clean" and p.result_tree == str(idx.write_tree(repo))
    assert took < max(2.0, 20 * lib), f"predicting one wide pick took {took:.2f} s; libgit2 merged it in {lib:.3f} s"
