"""Benchmark: incremental re-planning on the real fork — cold, warm, after a push, after a landing
(docs/plan.md, "Incremental planning"). Every ratio is measured in one run.

On a ``git clone --bare --shared`` copy of the fork (so the landing can write), with the tips of
``--as-of`` (upstream ``U0``, fork ``F0``) given as explicit refs:

1. the bare loop: ``merge_trees(parent, fork tip, commit)`` over the pending commits (one
   process; CPU time by ``time.process_time``, wall by ``perf_counter``);
2. cold: ``plan_state`` in **one process** (``workers=1``) with empty caches  vs  the bare loop
   (run after the bare loops, on libgit2's warm caches; ``--plan-first``: before them, as in a
   fresh process, the bare loop then running on the caches the plan warmed);
3. warm: ``plan_state`` again (caches filled);
4. push: upstream tip ``U0`` + ``--push`` first-parent commits; re-plan with the caches; the
   time it spent in merges (``merge_seconds``, the new commits' merges and any whose inputs
   changed) is reported apart from the rest (target: rest ≤ 300 ms);
5. landing: the re-plan's first bundle is applied (``apply_unit``) and the fork tip moves to
   its tip (as a fast-forward merge of the bundle's PR would); re-plan (target: rest ≤ 1 s);
6. ``--then DATE…``: plans as of later days with the same caches (both tips move), as
   ``forksync plan --as-of DATE`` after the plans of the days before;
7. ``--check`` (default): every re-plan of steps 4–6 is planned again from scratch (empty
   caches) and the plans must be equal;
8. ``--keep-walk``: the re-plans keep the plan's walk between them (``plan_state``'s ``resume``,
   as the App does): after the push only its commits are walked; the from-scratch plans of
   ``--check`` never use it;
9. ``--rounds N``: after step 2, the bare loop and a cold plan alternate N times, each in a fresh
   process (a new store and scratch repository); each plan is compared with the mean of the bare loops either side of
   it and the median ratio is printed — the CPU's speed drifts within minutes on a shared VM, so
   one pair can be off by 1.5x either way (``--whole-file-too``: each round also plans with
   symbols from whole-file parses, ``SymbolIndex(parts=False)``, to compare the two in one run);
10. ``--check-merges``: every merge the plans decide path by path (``path_merge``) is compared
   with libgit2's ``merge_trees`` on the same trees (an AssertionError on a difference; the
   comparison's own merges are then counted in the plans' CPU time, so read the figures of a run
   without it).

Ledger loading (``load_state``) is excluded and printed separately. Load average and process CPU
time (``time.process_time`` and ``resource.getrusage``) are printed beside each figure.

    PYTHONPATH=. .venv/bin/python bench/bench_incremental.py --config examples/triton-fork.yml \\
        --repo /work/.mirror/facebookexperimental+triton/repo --upstream-ref a4ce9c2a2 --as-of 2026-04-15
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pygit2  # noqa: E402

from bot.config.forksync import load_config  # noqa: E402
from bot.git import repo as gitio  # noqa: E402
from bot.git.apply import apply_unit  # noqa: E402
from bot.plan import predict, symbol_index  # noqa: E402
from bot.plan.planner import BLOB_CACHE_LIMIT, blob_cache, pending_commits, plan_state  # noqa: E402
from bot.plan.predict import merge_flags  # noqa: E402
from bot.store import Store  # noqa: E402
from bot.sync.ingest import load_state  # noqa: E402


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def bare_loop(repo: pygit2.Repository, base: str, shas: list[str], flags: int) -> tuple[float, float]:
    """``(wall s, CPU s)`` of ``merge_trees(parent, fork tip, commit)`` over ``shas``."""
    ours = repo[base].peel(pygit2.Commit).tree
    t0, c0 = time.perf_counter(), time.process_time()
    for s in shas:
        c = repo[s]
        try:
            anc = repo[c.parent_ids[0]].tree if c.parent_ids else repo[repo.TreeBuilder().write()]
            repo.merge_trees(anc, ours, c.tree, flags=flags)
        except (KeyError, pygit2.GitError, ValueError):
            pass
    return time.perf_counter() - t0, time.process_time() - c0


def timed(state, store, walk: dict | None):
    """``(run, wall s, CPU s)`` of a one-process plan; ``walk``: plan_state's ``resume`` (--keep-walk)."""
    t0, c0 = time.perf_counter(), cpu()
    run = plan_state(state, store=store, workers=1, resume=walk)
    return run, time.perf_counter() - t0, cpu() - c0


def describe(name: str, run, wall: float, c: float) -> str:
    """One line: wall and CPU, the merges computed (wall / CPU), the symbols computed (CPU), and the
    rest — the re-plan's own overhead (CPU: total − merges − symbols; wall: total − merges)."""
    mw, mc, sc = (run.extra.get(k, 0.0) for k in ("merge_seconds", "merge_cpu", "symbol_cpu"))
    lib = run.extra.get("libgit2_merges", 0)
    checked = run.extra.get("path_merges_checked", 0)
    return (f"{name}: {wall * 1000:.0f} ms wall, {c * 1000:.0f} ms CPU; {run.merges} merges ({lib} by merge_trees"
            f"{f', {checked} path merges checked against merge_trees' if checked else ''}; {mw * 1000:.0f} ms wall, "
            f"{mc * 1000:.0f} ms CPU), {run.cache_hits} cached, {run.parsed_files} files' symbols "
            f"({run.extra.get('parses', 0)} parses, {sc * 1000:.0f} ms CPU); rest {(c - mc - sc) * 1000:.0f} ms CPU, "
            f"{(wall - mw) * 1000:.0f} ms wall; {load()}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--repo", required=True, help="the fork's bare repository (upstream's history inside)")
    ap.add_argument("--upstream-ref", required=True, help="the newest upstream commit (pushes come from its history)")
    ap.add_argument("--as-of", default="2026-04-15")
    ap.add_argument("--push", type=int, default=10, help="upstream commits in the push")
    ap.add_argument("--renames", choices=["on", "off", "config"], default="off")
    ap.add_argument("--no-check", dest="check", action="store_false", help="skip the from-scratch plans")
    ap.add_argument("--then", nargs="*", default=[], metavar="DATE",
                    help="after the as-of plan, plan as of each DATE in turn with the same caches (fork and "
                         "upstream tips of that day, as `forksync plan --as-of` does)")
    ap.add_argument("--keep-walk", action="store_true",
                    help="keep the plan's walk between the re-plans, as the App does (a push then walks only its commits)")
    ap.add_argument("--plan-first", action="store_true",
                    help="run the cold plan before the bare loops (on libgit2's cold caches, as in a fresh process) "
                         "instead of after them")
    ap.add_argument("--rounds", type=int, default=1,
                    help="then alternate the bare loop and a cold plan this many times (median of the ratios)")
    ap.add_argument("--clone", help=argparse.SUPPRESS)       # --rounds' measurements: the parent's clone,
    ap.add_argument("--ingest", help=argparse.SUPPRESS)      # its ingest store,
    ap.add_argument("--measure", choices=["bare", "cold", "cold-whole-file"], help=argparse.SUPPRESS)  # what to measure
    ap.add_argument("--whole-file-too", action="store_true",
                    help="with --rounds: also a cold plan whose symbols parse whole files, in each round")
    ap.add_argument("--check-merges", action="store_true",
                    help="compare every path-by-path merge with libgit2's merge_trees (slower: read the figures of a run without it)")
    args = ap.parse_args(argv)
    predict.CHECK_PATH_MERGE = args.check_merges
    walk = {} if args.keep_walk else None      # the walk kept between the re-plans, as the App keeps it

    tmp = tempfile.mkdtemp(prefix="forksync-bench-incr-")
    clone = args.clone or os.path.join(tmp, "fork.git")
    if not args.clone:
        subprocess.run(["git", "clone", "-q", "--bare", "--shared", args.repo, clone], check=True)
    cfg = load_config(args.config, {"fork.url": clone, "upstream.url": clone, "upstream.ref": args.upstream_ref})
    upd = {"cache_dir": os.path.join(tmp, "cache")}
    if args.renames != "config":
        upd["rename_detection"] = args.renames == "on"
    cfg = cfg.model_copy(update=upd)
    ingest = Store(args.ingest or os.path.join(tmp, "ingest.sqlite"))

    def state_at(up: str, fork: str):
        c = cfg.model_copy(update={"upstream": cfg.upstream.model_copy(update={"ref": up}),
                                   "fork": cfg.fork.model_copy(update={"ref": fork})})
        t0 = time.perf_counter()
        s = load_state(c, store=ingest, record=False, fetch=False)
        return s, time.perf_counter() - t0

    first = load_state(cfg, store=ingest, as_of=args.as_of, record=False, fetch=False)
    u0, f0 = first.upstream_tip, first.fork_tip
    s0, t_load = state_at(u0, f0)
    repo = pygit2.Repository(s0.git_dir)
    flags = merge_flags(cfg.rename_detection)
    pend0 = pending_commits(s0)
    if args.measure:                 # one measurement in this fresh process (--rounds runs these)
        if args.measure == "cold-whole-file":
            symbol_index.PARTS = False
        if args.measure == "bare":
            _, c = bare_loop(repo, f0, [c.sha for c in pend0], flags)
            print(json.dumps({"cpu": c}))
        else:
            run, _, c = timed(s0, Store(os.path.join(tmp, "plan.sqlite")), None)
            print(json.dumps({"cpu": c, "merge_cpu": run.extra.get("merge_cpu", 0.0),
                              "symbol_cpu": run.extra.get("symbol_cpu", 0.0), "parses": run.extra.get("parses", 0),
                              "plan": hashlib.sha256(repr(run.plan).encode()).hexdigest()}))
        return 0
    print(f"as of {args.as_of}: upstream {u0[:12]}, fork {f0[:12]}; {len(pend0)} pending; rename detection "
          f"{'on' if cfg.rename_detection else 'off'}; load_state {t_load:.2f} s (excluded); {load()}")

    store = Store(os.path.join(tmp, "plan.sqlite"))
    if args.plan_first:
        cold, cold_wall, cold_cpu = timed(s0, store, walk)
    bare_wall, bare_cpu = bare_loop(repo, f0, [c.sha for c in pend0], flags)
    blob_cache(BLOB_CACHE_LIMIT)     # the same loop with libgit2's blob cache, as a plan sets it
    cached_wall, cached_cpu = bare_loop(repo, f0, [c.sha for c in pend0], flags)
    blob_cache(0)
    if not args.plan_first:
        cold, cold_wall, cold_cpu = timed(s0, store, walk)
    print(describe("cold", cold, cold_wall, cold_cpu))
    print(f"bare loop: {bare_wall * 1000:.0f} ms wall, {bare_cpu * 1000:.0f} ms CPU | cold/bare: CPU "
          f"{cold_cpu / bare_cpu:.2f}, wall {cold_wall / bare_wall:.2f} (target: CPU <= 1.5)")
    print(f"bare loop again, with the plan's blob cache (run second: libgit2's tree cache warm"
          f"{'' if args.plan_first else ', as for the plan'}): "
          f"{cached_wall * 1000:.0f} ms wall, {cached_cpu * 1000:.0f} ms CPU | cold/that: CPU {cold_cpu / cached_cpu:.2f}")
    if args.rounds > 1:
        # the CPU's speed drifts by up to 1.5x within minutes on a shared VM: alternate the bare
        # loop and a cold plan, each in a fresh process (as a user runs them: no cache of an
        # earlier measurement), and compare each plan with the bare loops either side of it
        def one(kind: str) -> dict:
            cmd = [sys.executable, os.path.abspath(__file__), "--config", args.config, "--repo", args.repo,
                   "--upstream-ref", args.upstream_ref, "--as-of", args.as_of, "--renames", args.renames,
                   "--clone", clone, "--ingest", ingest.path, "--measure", kind]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            return json.loads(out.strip().splitlines()[-1])

        bares, colds, wholes, plans = [one("bare")["cpu"]], [], [], set()
        for _ in range(args.rounds):
            got = one("cold")
            colds.append(got["cpu"])
            plans.add(got["plan"])
            if args.whole_file_too:
                got = one("cold-whole-file")
                wholes.append(got["cpu"])
                plans.add(got["plan"])
            bares.append(one("bare")["cpu"])
        assert len(plans) == 1 and plans == {hashlib.sha256(repr(cold.plan).encode()).hexdigest()}, \
            "every cold plan must be the same plan"
        def against_bare(cpus: list[float]) -> list[float]:
            return [c / ((bares[i] + bares[i + 1]) / 2) for i, c in enumerate(cpus)]

        ratios = against_bare(colds)
        print(f"interleaved, {args.rounds} rounds, each in a fresh process: bare loop CPU "
              f"{', '.join(f'{b:.2f}' for b in bares)} s; cold plan CPU {', '.join(f'{c:.2f}' for c in colds)} s; "
              f"cold / mean of the bare loops either side: {', '.join(f'{r:.2f}' for r in ratios)}; "
              f"median {statistics.median(ratios):.2f} (target: <= 1.5); {load()}")
        if wholes:
            rw = against_bare(wholes)
            print(f"  the same cold plans with whole-file symbol parses: CPU {', '.join(f'{c:.2f}' for c in wholes)} s; "
                  f"cold / bare {', '.join(f'{r:.2f}' for r in rw)}; median {statistics.median(rw):.2f}; "
                  f"by parts / whole-file, per round: {', '.join(f'{c / w:.2f}' for c, w in zip(colds, wholes))}")
    warm, w_wall, w_cpu = timed(s0, store, walk)
    assert warm.plan == cold.plan, "a warm re-plan must give the same plan"
    print(describe("warm", warm, w_wall, w_cpu))

    # a push: the next --push first-parent commits of upstream
    later = gitio.rev_list(repo, args.upstream_ref, [u0], first_parent=True)    # oldest first
    u1 = later[min(args.push, len(later)) - 1]
    s1, t_load1 = state_at(u1, f0)
    pend1 = pending_commits(s1)
    new = [c.sha for c in pend1 if c.sha not in {p.sha for p in pend0}]
    new_wall, _ = bare_loop(repo, f0, new, flags)
    push, p_wall, p_cpu = timed(s1, store, walk)
    print(f"push of {len(later[:args.push])} upstream commits ({len(new)} new pending; load_state {t_load1:.2f} s excluded; "
          f"their bare merges {new_wall * 1000:.0f} ms)")
    print("  " + describe("re-plan", push, p_wall, p_cpu) + " (target: rest <= 300 ms)")
    if args.check:
        scratch = plan_state(s1, store=Store(os.path.join(tmp, "scratch1.sqlite")), workers=1)
        assert scratch.plan == push.plan, "the re-plan after a push differs from a plan from scratch"
        print(f"  = the plan from scratch ({scratch.merges} merges, {scratch.seconds:.2f} s)")

    # a landing: the first bundle applied, the fork tip moved to its tip
    bundle = next(u for u in push.plan.units if u.kind == "bundle")
    res = apply_unit(clone, bundle, base=f0, commits=s1.upstream, rename_detection=cfg.rename_detection,
                     rename_limit=cfg.rename_limit)
    assert res.conflict is None and res.tip, f"the bundle did not apply whole: {res.conflict}"
    fork_repo = pygit2.Repository(clone)
    fork_repo.references.create("refs/heads/bench-landed", res.tip, force=True)
    for name in list(fork_repo.branches.local):
        if name.startswith("forksync/"):
            fork_repo.branches.delete(name)
    s2, t_load2 = state_at(u1, "refs/heads/bench-landed")
    landed, l_wall, l_cpu = timed(s2, store, walk)
    print(f"landing of {bundle.id} ({len(bundle.items)} picks; {len(pending_commits(s2))} pending; "
          f"load_state {t_load2:.2f} s excluded)")
    print("  " + describe("re-plan", landed, l_wall, l_cpu) + " (target: rest <= 1 s)")
    if args.check:
        scratch = plan_state(s2, store=Store(os.path.join(tmp, "scratch2.sqlite")), workers=1)
        assert scratch.plan == landed.plan, "the re-plan after a landing differs from a plan from scratch"
        print(f"  = the plan from scratch ({scratch.merges} merges, {scratch.seconds:.2f} s)")
    # later days, as `forksync plan --as-of DATE` after the plans of the days before
    for day in args.then:
        t0 = time.perf_counter()
        sd = load_state(cfg, store=ingest, as_of=day, record=False, fetch=False)
        t_ld = time.perf_counter() - t0
        pend = pending_commits(sd)
        run, d_wall, d_cpu = timed(sd, store, walk)
        print(f"as of {day}: upstream {sd.upstream_tip[:12]}, fork {sd.fork_tip[:12]}; {len(pend)} pending; "
              f"load_state {t_ld:.2f} s excluded")
        print("  " + describe("re-plan", run, d_wall, d_cpu))
        if args.check:
            scratch = plan_state(sd, store=Store(os.path.join(tmp, f"scratch-{day}.sqlite")), workers=1)
            assert scratch.plan == run.plan, f"the re-plan as of {day} differs from a plan from scratch"
            print(f"  = the plan from scratch ({scratch.merges} merges, {scratch.seconds:.2f} s)")

    return 0


if __name__ == "__main__":
    sys.exit(main())
