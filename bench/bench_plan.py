"""Benchmark 11b: ``plan`` over the pending set as of a past date, beside a bare pygit2
``merge_trees`` loop over the same commits with the same merge flags (docs/plan.md).

Each pair is measured in the same run and reported as a ratio:

* cold: ``plan_state`` with empty prediction and symbol caches  vs  the bare loop;
* warm: ``plan_state`` again with the caches filled by the cold run (a re-plan)  vs  the bare loop.

``plan_state`` runs as the CLI runs it: with ``--workers 2`` (the default) a helper process merges
the next pending commits while the planning process computes symbols (``bot/plan/helper.py``);
``--workers 1`` does everything in one process. The bare loop is one process. The ``cpu:`` line
counts the planning process *and* its helper (children's CPU time), so the work done is visible
beside the wall time.

The bare loop merges each pending commit onto the fork tip (ancestor = its first parent), nothing
else: no running tree, no tree writes, no symbols. Ledger loading (``load_state``) is printed
separately and excluded from both sides.

    .venv/bin/python bench/bench_plan.py --config examples/triton-fork.yml \\
        --fork /work/.mirror/facebookexperimental+triton/repo \\
        --upstream /work/.mirror/facebookexperimental+triton/repo --upstream-ref a4ce9c2a2 \\
        --as-of 2026-04-15 --renames off
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pygit2  # noqa: E402

from bot.config.forksync import load_config  # noqa: E402
from bot.plan.planner import pending_commits, plan_state  # noqa: E402
from bot.plan.predict import merge_flags  # noqa: E402
from bot.store import Store  # noqa: E402
from bot.sync.ingest import load_state  # noqa: E402

CPU: dict[str, float] = {}     # process CPU seconds of the last bare loop / plan (robust to other jobs' load)


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_plan(state, store, workers: int) -> tuple:
    """The plan run and its CPU seconds: this process + the helper process (reaped at the end)."""
    c0, k0 = time.process_time(), _children_cpu()
    run = plan_state(state, store=store, workers=workers)
    return run, time.process_time() - c0, _children_cpu() - k0


def bare_loop(repo: pygit2.Repository, base: str, shas: list[str], flags: int) -> tuple[float, Counter]:
    """Seconds for ``merge_trees(parent, fork tip, commit)`` over ``shas``; outcome counts."""
    ours = repo[base].peel(pygit2.Commit).tree
    outcomes: Counter = Counter()
    t0 = time.perf_counter()
    c0 = time.process_time()
    for s in shas:
        c = repo[s]
        try:
            anc = repo[c.parent_ids[0]].tree if c.parent_ids else repo[repo.TreeBuilder().write()]
            idx = repo.merge_trees(anc, ours, c.tree, flags=flags)
            outcomes["conflict" if idx.conflicts is not None else "clean"] += 1
        except (KeyError, pygit2.GitError, ValueError):
            outcomes["error"] += 1
    CPU["bare"] = time.process_time() - c0
    return time.perf_counter() - t0, outcomes


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config")
    ap.add_argument("--fork")
    ap.add_argument("--upstream")
    ap.add_argument("--upstream-ref")
    ap.add_argument("--fork-ref")
    ap.add_argument("--as-of", default="2026-04-15")
    ap.add_argument("--renames", choices=["on", "off", "config"], default="config",
                    help="rename detection in both the plan and the bare loop")
    ap.add_argument("--workers", type=int, default=2,
                    help="plan_state workers: 2 = with the merge helper process (the CLI's way), 1 = one process")
    args = ap.parse_args(argv)
    cfg = load_config(args.config, {"fork.url": args.fork, "upstream.url": args.upstream,
                                    "upstream.ref": args.upstream_ref, "fork.ref": args.fork_ref})
    cache = tempfile.mkdtemp(prefix="forksync-bench-plan-")
    upd = {"cache_dir": cache}
    if args.renames != "config":
        upd["rename_detection"] = args.renames == "on"
    cfg = cfg.model_copy(update=upd)
    flags = merge_flags(cfg.rename_detection)

    t0 = time.perf_counter()
    state = load_state(cfg, store=Store(os.path.join(cache, "ingest.sqlite")), as_of=args.as_of, record=False)
    t_load = time.perf_counter() - t0
    pending = pending_commits(state)
    shas = [c.sha for c in pending]
    repo = pygit2.Repository(state.git_dir)
    print(f"as of {args.as_of}: {len(state.upstream)} upstream commits in range, {len(pending)} pending; "
          f"fork tip {state.fork_tip[:12]}; rename detection {'on' if cfg.rename_detection else 'off'}")
    print(f"load_state (ledger, excluded from the pairs): {t_load:.2f} s {state.timings}")

    store_path = os.path.join(cache, "plan.sqlite")
    bare_cold, outcomes = bare_loop(repo, state.fork_tip, shas, flags)
    cpu_bare_cold = CPU["bare"]
    cold, cpu_cold, helper_cold = timed_plan(state, Store(store_path), args.workers)
    bare_warm, _ = bare_loop(repo, state.fork_tip, shas, flags)
    cpu_bare_warm = CPU["bare"]
    warm, cpu_warm, helper_warm = timed_plan(state, Store(store_path), args.workers)
    assert warm.plan == cold.plan, "a warm re-plan must give the same plan"

    kinds = Counter(u.kind for u in cold.plan.units)
    sizes = sorted((len(u.items) for u in cold.plan.units if u.kind == "chain"), reverse=True)
    print(f"bare merge_trees loop outcomes on the fork tip: {dict(outcomes)}")
    print(f"plan: {kinds['bundle']} bundles / {sum(len(u.items) for u in cold.plan.units if u.kind == 'bundle')} "
          f"commits, {kinds['chain']} chains / {sum(sizes)} commits (largest {sizes[:5]})")
    print(f"cold: plan {cold.seconds:.2f} s ({cold.merges} merges, {cold.parsed_files} files parsed) | "
          f"bare loop {bare_cold:.2f} s | ratio {cold.seconds / bare_cold:.2f} (target <= 2.0)")
    print(f"warm: plan {warm.seconds:.2f} s ({warm.merges} merges, {warm.cache_hits} cached) | "
          f"bare loop {bare_warm:.2f} s | ratio {warm.seconds / bare_warm:.2f} (target <= 1.3)")
    h = cold.extra.get("helper") or {}
    print(f"helper (workers {args.workers}): {cold.extra.get('helper_merges', 0)} of {cold.merges} cold predictions "
          f"from its merges, {h.get('waited', 0)} waited for, failed: {h.get('failed')}")
    tot_cold, tot_warm = cpu_cold + helper_cold, cpu_warm + helper_warm
    print(f"cpu:  cold {cpu_cold:.2f} s + helper {helper_cold:.2f} s = {tot_cold:.2f} s vs bare {cpu_bare_cold:.2f} s "
          f"= {tot_cold / cpu_bare_cold:.2f} | warm {tot_warm:.2f} s vs bare {cpu_bare_warm:.2f} s = "
          f"{tot_warm / cpu_bare_warm:.2f} (CPU time; load average {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
