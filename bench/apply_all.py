"""Apply every bundle and every chain of the plan as of a past date into a scratch copy of the
fork, and count what happens (docs/plan.md, "Apply on the real fork").

Each unit is applied as the sync service applies it: ``apply_unit`` onto the fork tip, its own
``forksync/<unit>`` branch, a conflict ending the branch with a conflict commit. The plan predicts
bundle k on top of bundles 1..k-1 (docs/plan.md); ``--stack-bundles`` applies them so. Reported: bundles
and their commits applied; chains applied whole; chains that stop with a conflict commit (at their
first pick or later, with the conflicted files' kinds); picks that fail otherwise (``error``).
The real repository is never written (a copy, see bench_apply.py).

    .venv/bin/python bench/apply_all.py --config examples/triton-fork.yml \\
        --fork /work/.mirror/facebookexperimental+triton/repo \\
        --upstream /work/.mirror/facebookexperimental+triton/repo --upstream-ref a4ce9c2a2 \\
        --as-of 2026-04-15 [--stack-bundles] [-v]
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_apply import add_args, load_plan  # noqa: E402

from bot.git.apply import apply_unit  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_args(ap)
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per unit")
    ap.add_argument("--stack-bundles", action="store_true",
                    help="apply bundle k onto bundle k-1's branch, as the plan predicts it (default: every unit "
                         "onto the fork tip, as the sync service applies them)")
    args = ap.parse_args(argv)
    cfg, state, plan, scratch, t_plan = load_plan(args)
    print(f"as of {args.as_of}: fork tip {state.fork_tip[:12]}; {len(plan.units)} units "
          f"({sum(len(u.items) for u in plan.units)} commits); rename detection "
          f"{'on' if cfg.rename_detection else 'off'}; load + plan {t_plan:.1f} s")
    t0 = time.perf_counter()
    bundles = Counter()
    chains = Counter()
    kinds = Counter()
    predicted = Counter()
    renames_off = set()
    bundle_tip = state.fork_tip
    for u in plan.units:
        base = bundle_tip if u.kind == "bundle" and args.stack_bundles else state.fork_tip
        res = apply_unit(scratch, u, base=base, commits=state.upstream, rename_detection=cfg.rename_detection)
        if u.kind == "bundle" and res.conflict is None and res.tip:
            bundle_tip = res.tip
        if res.renames_off:
            renames_off.add(res.renames_off)
        c = bundles if u.kind == "bundle" else chains
        c["units"] += 1
        c["commits"] += len(u.items)
        c["picked"] += len(res.picked)
        if res.conflict is None:
            c["whole"] += 1
            what = "applied whole"
        elif res.conflict_commit:
            at = u.shas.index(res.conflict)
            c["conflict commit at first pick" if at == 0 else "conflict commit later"] += 1
            kinds.update(f.kind for f in res.conflicts)
            item = u.items[at]
            predicted["stop predicted by the plan" if item.conflicts else "stop not predicted by the plan"] += 1
            what = (f"stopped at pick {at + 1}/{len(u.items)} {res.conflict[:12]} with conflict commit "
                    f"{res.conflict_commit[:12]}: " + ", ".join(f"{f.path} ({f.kind})" for f in res.conflicts))
        else:
            c["error"] += 1
            what = f"error at {res.conflict[:12]}: {res.error}"
        if args.verbose:
            print(f"  {u.id} ({u.kind}, {len(u.items)}): {what}")
    seconds = time.perf_counter() - t0
    print(f"bundles: {bundles['units']} applied, {bundles['picked']}/{bundles['commits']} commits picked, "
          f"{bundles['whole']} whole, {bundles['conflict commit at first pick'] + bundles['conflict commit later']} "
          f"stopped, {bundles['error']} errors")
    print(f"chains: {chains['units']} ({chains['commits']} commits): {chains['whole']} applied whole; "
          f"{chains['conflict commit at first pick']} stop with a conflict commit at their first pick, "
          f"{chains['conflict commit later']} later; {chains['error']} errors; {chains['picked']} commits picked")
    print(f"conflicted files by kind: {dict(kinds)}; {dict(predicted)}")
    if renames_off:
        print(f"rename detection dropped ({len(renames_off)} reason(s)): {sorted(renames_off)[0][:150]}")
    print(f"apply of all units: {seconds:.1f} s; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    shutil.rmtree(os.path.dirname(scratch), ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
