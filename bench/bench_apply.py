"""Benchmark: ``apply_unit`` (in-memory picks) on the plan's first bundle, beside a bare pygit2
``merge_trees`` loop over the same commits with the same merge flags, in the same run (docs/plan.md).

The plan is computed as the CLI computes it (``load_state`` + ``plan_state``, excluded from the
timings); its first bundle (≤ ``bundle_size_cap`` commits) is applied into a scratch copy of the
fork's repository (a copy, so the real one is never written, not even a pack's mtime), a fresh
copy per repetition (every object apply writes is new, as in a real apply). Timed per repetition,
in alternating order:

* apply: the whole ``apply_unit`` call — opening the repository, reading the branch, the merges,
  tree and commit writes, the compare-and-swap of the branch;
* bare loop: ``merge_trees(first parent, fork tip, commit)`` per commit, nothing else (as in
  bench_plan.py), with the same rename policy as apply (detection dropped after the first merge
  that cannot read a blob).

The median of the per-repetition ratios is compared with the target (≤ 1.5). ``--old`` also times
the former way (``git worktree add`` + ``git cherry-pick --no-commit`` + ``git commit`` per pick),
once, for information: it needs a full checkout, so it starts from a commit of the fork tip
without the blobs this snapshot lacks.

    .venv/bin/python bench/bench_apply.py --config examples/triton-fork.yml \\
        --fork /work/.mirror/facebookexperimental+triton/repo \\
        --upstream /work/.mirror/facebookexperimental+triton/repo --upstream-ref a4ce9c2a2 \\
        --as-of 2026-04-15 --renames off --reps 7 --old
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pygit2  # noqa: E402
from pygit2.enums import MergeFlag  # noqa: E402

from bot.config.forksync import load_config  # noqa: E402
from bot.git.apply import apply_unit  # noqa: E402
from bot.plan.planner import plan_state  # noqa: E402
from bot.store import Store  # noqa: E402
from bot.sync.ingest import load_state  # noqa: E402


def add_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--config")
    ap.add_argument("--fork")
    ap.add_argument("--upstream")
    ap.add_argument("--upstream-ref")
    ap.add_argument("--fork-ref")
    ap.add_argument("--as-of", default="2026-04-15")
    ap.add_argument("--renames", choices=["on", "off", "config"], default="config",
                    help="rename detection in the plan, in apply and in the bare loop")


def load_plan(args):
    """``(cfg, state, plan, scratch copy, seconds)``: the plan as the CLI computes it, and a scratch
    copy of the fork's repository to apply into."""
    cfg = load_config(args.config, {"fork.url": args.fork, "upstream.url": args.upstream,
                                    "upstream.ref": args.upstream_ref, "fork.ref": args.fork_ref})
    cache = tempfile.mkdtemp(prefix="forksync-bench-apply-")
    upd = {"cache_dir": cache}
    if args.renames != "config":
        upd["rename_detection"] = args.renames == "on"
    cfg = cfg.model_copy(update=upd)
    t0 = time.perf_counter()
    state = load_state(cfg, store=Store(os.path.join(cache, "ingest.sqlite")), as_of=args.as_of, record=False)
    run = plan_state(state, store=Store(os.path.join(cache, "plan.sqlite")))
    seconds = time.perf_counter() - t0
    scratch = os.path.join(cache, "fork.git")
    src = state.fork_repo.path
    # a copy (not --shared, not hard links): writing an object that exists already "freshens" the
    # pack holding it (its mtime), which would touch the real repository through alternates
    shutil.copytree(src, scratch, symlinks=True)
    if os.path.realpath(state.git_dir) != os.path.realpath(src):
        with open(os.path.join(scratch, "objects", "info", "alternates"), "a") as f:
            f.write(os.path.join(os.path.realpath(state.git_dir), "objects") + "\n")
    return cfg, state, run.plan, scratch, seconds


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def bare_loop(repo: pygit2.Repository, base: str, shas: list[str], flags: int) -> float:
    """Seconds for ``merge_trees(parent, fork tip, commit)`` over ``shas`` (rename detection
    dropped after the first merge that cannot read a blob, as apply does)."""
    t0 = time.perf_counter()
    ours = repo[base].peel(pygit2.Commit).tree
    for s in shas:
        c = repo[s]
        anc = repo[c.parent_ids[0]].tree if c.parent_ids else repo[repo.TreeBuilder().write()]
        try:
            repo.merge_trees(anc, ours, c.tree, flags=flags)
        except (KeyError, pygit2.GitError, ValueError):
            if not flags:
                raise
            flags = 0
            repo.merge_trees(anc, ours, c.tree, flags=flags)
    return time.perf_counter() - t0


def old_worktree_apply(scratch: str, base: str, shas: list[str]) -> float:
    """Seconds for the former apply: a temporary worktree, ``git cherry-pick --no-commit`` and
    ``git commit`` per pick (stops at the first failure). Starts from ``base`` without the blobs
    the snapshot lacks (a checkout needs every blob)."""
    repo = pygit2.Repository(scratch)
    idx = pygit2.Index()
    idx.read_tree(repo[base].peel(pygit2.Commit).tree)
    for e in list(idx):
        if e.mode in (0o100644, 0o100755, 0o120000) and e.id not in repo.odb:
            idx.remove(e.path)
    sig = pygit2.Signature("bench", "bench@example.invalid", 0, 0)
    pygit2.settings.enable_strict_object_creation(False)
    start = str(repo.create_commit(None, sig, sig, "bench: without missing blobs\n", idx.write_tree(repo), [base]))
    pygit2.settings.enable_strict_object_creation(True)
    env = {**os.environ, "GIT_COMMITTER_NAME": "forksync", "GIT_COMMITTER_EMAIL": "forksync@example.invalid",
           "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.invalid"}
    wt = tempfile.mkdtemp(prefix="forksync-bench-old-")
    shutil.rmtree(wt)
    t0 = time.perf_counter()
    try:
        subprocess.run(["git", "worktree", "add", "-q", "--detach", wt, start], cwd=scratch, check=True, env=env)
        for s in shas:
            argv = ["-m", "1"] if len(repo[s].parent_ids) > 1 else []
            p = subprocess.run(["git", "cherry-pick", "--no-commit", "--allow-empty", *argv, s], cwd=wt, env=env,
                               capture_output=True)
            if p.returncode != 0:
                print(f"  old way stopped at {s[:12]}: {p.stderr.decode(errors='replace').strip()[:200]}")
                break
            subprocess.run(["git", "commit", "-q", "--no-verify", "--allow-empty", "-m", f"pick {s}"], cwd=wt,
                           env=env, check=True)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", wt], cwd=scratch, env=env, capture_output=True)
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_args(ap)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--old", action="store_true", help="also time the former worktree cherry-pick way (once)")
    args = ap.parse_args(argv)
    cfg, state, plan, scratch, t_plan = load_plan(args)
    bundle = next((u for u in plan.units if u.kind == "bundle"), None)
    if bundle is None:
        print("the plan has no bundle")
        return 1
    shas = list(bundle.shas)
    flags = int(MergeFlag.FIND_RENAMES) if cfg.rename_detection else 0
    print(f"as of {args.as_of}: fork tip {state.fork_tip[:12]}; first bundle {bundle.id} ({len(shas)} commits); "
          f"rename detection {'on' if cfg.rename_detection else 'off'}; load + plan {t_plan:.1f} s (excluded)")
    applied, bare, ratios, cpu_ratios = [], [], [], []
    res = None
    for rep in range(args.reps):
        # a fresh copy each time: every tree and commit apply writes is new, as in a real apply
        fresh = f"{scratch}-{rep}"
        shutil.copytree(scratch, fresh, symlinks=True)
        cpu = {}
        for which in (("apply", "bare") if rep % 2 == 0 else ("bare", "apply")):
            c0, k0, t0 = time.process_time(), _children_cpu(), time.perf_counter()
            if which == "apply":
                res = apply_unit(fresh, bundle, base=state.fork_tip, commits=state.upstream,
                                 rename_detection=cfg.rename_detection)
                t_apply = time.perf_counter() - t0
            else:
                t_bare = bare_loop(pygit2.Repository(fresh), state.fork_tip, shas, flags)
            cpu[which] = time.process_time() - c0 + _children_cpu() - k0
        shutil.rmtree(fresh, ignore_errors=True)
        applied.append(t_apply)
        bare.append(t_bare)
        ratios.append(t_apply / t_bare)
        cpu_ratios.append(cpu["apply"] / cpu["bare"])
    print(f"apply: {len(res.picked)} picks, conflict {res.conflict and res.conflict[:12]}, "
          f"renames off: {res.renames_off or '-'}")
    print(f"apply_unit   median {statistics.median(applied) * 1000:.0f} ms  (runs: "
          f"{', '.join(f'{x * 1000:.0f}' for x in applied)})")
    print(f"bare loop    median {statistics.median(bare) * 1000:.0f} ms  (runs: "
          f"{', '.join(f'{x * 1000:.0f}' for x in bare)})")
    med = statistics.median(ratios)
    print(f"ratio apply / bare loop: median {med:.2f} (per run: {', '.join(f'{r:.2f}' for r in ratios)}) "
          f"target <= 1.5: {'met' if med <= 1.5 else 'NOT met'}")
    first, second = ratios[0::2], ratios[1::2]
    print(f"by order (the first to run pays a colder cache): apply first median {statistics.median(first):.2f}, "
          f"bare loop first median {statistics.median(second):.2f}" if second else "")
    print(f"cpu ratio (process + children CPU seconds, robust to other jobs' load): median "
          f"{statistics.median(cpu_ratios):.2f} (per run: {', '.join(f'{r:.2f}' for r in cpu_ratios)})")
    if args.old:
        t_old = old_worktree_apply(scratch, state.fork_tip, shas)
        print(f"former worktree cherry-pick way (once, informative): {t_old:.2f} s = "
              f"{t_old / statistics.median(applied):.1f}x apply_unit")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    shutil.rmtree(os.path.dirname(scratch), ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
