"""Benchmark: what fsyncing libgit2's writes (``pygit2.settings.enable_fsync_gitdir``) costs forksync.

Times, in one process, alternating off/on per repetition, in a fresh bare repository each time:
the planner's small flush (``MemoryObjects.flush(loose_below=256)`` writes fewer than 256 objects
loose; a cold plan of the real Triton fork wrote 176, seen as 352 more fsyncs in the process) and
one ref write (apply's ``_move``). The figures and the decision are in docs/design.md ("The
working repository after a crash or a power loss"). Run on the volume the workdir lives on:

    .venv/bin/python bench/bench_fsync.py --objects 176 --reps 9 --dir /tmp/fsync-bench
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time

import pygit2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", type=int, default=176)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--refs", type=int, default=20)
    ap.add_argument("--dir", default="/tmp/fsync-bench", help="scratch folder (removed and made again)")
    a = ap.parse_args()
    flush: dict[str, list[float]] = {"off": [], "on": []}
    ref: dict[str, list[float]] = {"off": [], "on": []}
    try:
        for i in range(a.reps):
            for mode in (("off", "on") if i % 2 == 0 else ("on", "off")):
                shutil.rmtree(a.dir, ignore_errors=True)
                repo = pygit2.init_repository(a.dir, bare=True)
                pygit2.settings.enable_fsync_gitdir(mode == "on")
                odb = pygit2.Odb(os.path.join(a.dir, "objects"))
                blobs = [os.urandom(16).hex().encode() * (64 + j % 64) for j in range(a.objects)]
                t = time.perf_counter()
                for b in blobs:
                    odb.write(3, b)
                flush[mode].append(time.perf_counter() - t)
                sig = pygit2.Signature("a", "a@example.com", 0, 0)
                commit = repo.create_commit(None, sig, sig, "m", repo.TreeBuilder().write(), [])
                t = time.perf_counter()
                for k in range(a.refs):
                    repo.create_reference_direct(f"refs/heads/b{k}", commit, True)
                ref[mode].append((time.perf_counter() - t) / a.refs)
    finally:
        pygit2.settings.enable_fsync_gitdir(False)
        shutil.rmtree(a.dir, ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.2f}")
    for m in ("off", "on"):
        print(f"fsync {m}: {a.objects} loose objects median {statistics.median(flush[m]) * 1000:.1f} ms "
              f"(min {min(flush[m]) * 1000:.1f}, max {max(flush[m]) * 1000:.1f}); "
              f"one ref write median {statistics.median(ref[m]) * 1000:.2f} ms")


if __name__ == "__main__":
    main()
