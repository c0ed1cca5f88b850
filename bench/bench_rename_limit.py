"""Rename candidates of the pending picks on the real fork, and the predictor with libgit2's old
default rename limit (1000) against forksync's ``rename_limit`` default (7000) (docs/plan.md,
"Renames: forksync's own limit"). The candidates are counted as libgit2 compares them with its
limit (:func:`bot.config.renames.rename_candidates`): paths deleted, or added, on the fork side and
the pick's side together. The real repository is never written: the predictor runs in a
``git clone --bare --shared`` copy.

    git clone -q --bare --shared /work/.mirror/facebookexperimental+triton/repo /tmp/tr.git
    PYTHONPATH=. .venv/bin/python bench/bench_rename_limit.py /tmp/tr.git main a4ce9c2a2 40
"""
from __future__ import annotations

import sys
import time

import pygit2
from pygit2.enums import SortMode

from bot.config.renames import rename_candidates
from bot.git import repo as gitio
from bot.plan.predict import MergePredictor


def main(git_dir: str, fork_ref: str, upstream_rev: str, n: int) -> None:
    r = pygit2.Repository(git_dir)
    fork = r.revparse_single(fork_ref).peel(pygit2.Commit)
    up = r.revparse_single(upstream_rev).peel(pygit2.Commit)
    w = r.walk(up.id, SortMode.TOPOLOGICAL | SortMode.REVERSE)
    w.hide(fork.id)
    pending = [c for c in w if c.parents]
    counts = sorted(rename_candidates(r, c.parents[0].tree, fork.tree, c.tree) for c in pending)
    print(f"pending picks {len(counts)}: rename candidates median {counts[len(counts) // 2]}, max {counts[-1]}, "
          f"over 1000: {sum(x > 1000 for x in counts)}, over 7000: {sum(x > 7000 for x in counts)}")
    shas = [str(c.id) for c in pending if len(c.parents) == 1][:n]
    infos = gitio.commit_infos(r, shas)
    for limit in (1000, 7000):
        p = MergePredictor(r, str(fork.id), rename_limit=limit)
        t = time.perf_counter()
        out: dict[str, int] = {}
        for s in shas:
            o = p.predict(infos[s]).outcome
            out[o] = out.get(o, 0) + 1
        dt = time.perf_counter() - t
        print(f"rename_limit={limit}: {len(shas)} picks, each on the fork tip: {dt / len(shas) * 1000:.0f} ms/pick, "
              f"outcomes {out}, renames dropped: {p.renames_off or 'no'}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
