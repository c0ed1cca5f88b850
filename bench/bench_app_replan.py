"""Benchmark: the App's re-plans on the real fork — ``SyncService.compute`` (ingest + plan, as a
sync runs it) cold, again, and after upstream pushes (docs/plan.md, "The App's re-plans").

On a ``git clone --bare --shared`` copy of the fork laid out as the App's working repository
(``refs/heads/main`` = ``--fork-tip``, ``refs/remotes/upstream/main`` = ``--upstream-tip``), with
an empty cache directory: compute once (cold: commit analysis and a cold plan), once more
(nothing new), then ``--pushes`` times with upstream moved ``--push`` first-parent commits on
towards ``--upstream-ref``; finally a compute in a fresh cache directory, whose plan must equal
the last re-plan. Prints wall and CPU time (this process and its children: the plan helper) of
each compute, the plan's merges computed / read from the cache, and the load average.

    PYTHONPATH=. .venv/bin/python bench/bench_app_replan.py --repo /work/.mirror/facebookexperimental+triton/repo
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bot.config.forksync import load_config  # noqa: E402
from bot.sync.service import SyncService  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, help="the fork's bare repository (upstream's history inside)")
    ap.add_argument("--config", default="examples/triton-fork.yml")
    ap.add_argument("--fork-tip", default="7c2626ac6a16", help="the fork's tip (default: Triton's as of 2026-04-15)")
    ap.add_argument("--upstream-tip", default="58816a13df4b", help="upstream's tip before the pushes (as of 2026-04-15)")
    ap.add_argument("--upstream-ref", default="a4ce9c2a2", help="where the pushes come from")
    ap.add_argument("--push", type=int, default=10, help="first-parent commits per push")
    ap.add_argument("--pushes", type=int, default=2)
    args = ap.parse_args(argv)

    tmp = tempfile.mkdtemp(prefix="forksync-bench-app-")
    work = Path(tmp) / "meta+triton.git"
    subprocess.run(["git", "clone", "-q", "--bare", "--shared", args.repo, str(work)], check=True)

    def git(*a: str) -> str:
        return subprocess.run(["git", "--git-dir", str(work), *a], check=True, capture_output=True, text=True).stdout.strip()

    git("update-ref", "refs/heads/main", args.fork_tip)
    git("update-ref", "refs/remotes/upstream/main", args.upstream_tip)
    later = git("rev-list", "--first-parent", "--reverse", f"{args.upstream_tip}..{args.upstream_ref}").split()
    cfg = load_config(args.config, {})
    svc = SyncService(workdir=Path(tmp) / "app", git_url="")

    def step(name: str, service: SyncService = svc):
        t0, c0 = time.perf_counter(), time.process_time()
        k0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = service.compute(work, cfg, "main", "main")
        k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        child = (k1.ru_utime + k1.ru_stime) - (k0.ru_utime + k0.ru_stime)
        w = r.plan_work
        print(f"{name}: {time.perf_counter() - t0:.2f} s wall, {time.process_time() - c0:.2f} s CPU + {child:.2f} s "
              f"children; {len(r.plan.units)} units; {w.get('merges')} merges computed, {w.get('cached')} from the "
              f"cache, {w.get('symbols')} files' symbols; load {os.getloadavg()[0]:.2f}", flush=True)
        return r

    step("cold (empty cache directory)")
    last = step("again, nothing new")
    for n in range(1, args.pushes + 1):
        at = min(n * args.push, len(later))
        if at == 0:
            break
        git("update-ref", "refs/remotes/upstream/main", later[at - 1])
        last = step(f"upstream push {n} ({args.push} commits)")
    fresh = step("the same from scratch (fresh cache directory)", SyncService(workdir=Path(tmp) / "fresh", git_url=""))
    assert fresh.plan == last.plan, "the re-plan differs from a plan from scratch"
    print("the last re-plan equals the plan from scratch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
