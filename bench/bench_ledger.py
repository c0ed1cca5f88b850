"""Benchmark 11a: the full ledger rebuild beside git's own patch-id pass over the same commits.

    .venv/bin/python bench/bench_ledger.py --fork /work/.mirror/facebookexperimental+triton/repo \\
        --upstream-ref a4ce9c2a2 --fork-ref main --config examples/triton-fork.yml --repeat 3

Measured in the same run, alternating, median of ``--repeat``:

* ``git``: ``set -o pipefail; git log -p --no-walk=unsorted --stdin <shas | git patch-id --stable``
  over the upstream range and the fork's own commits (what the ledger needs), leaving out commits
  with missing objects (they would make ``git log -p`` die);
* ``cold``: :func:`bot.sync.ingest.load_state` with no SQLite cache (walk, analysis, notes, ledger,
  pins — everything ``forksync status`` does);
* ``warm``: the same with the commit-analysis cache filled (messages are parsed again, as in a
  fresh process).

Prints the times and the ratios cold/git and warm/git (target: cold ≤ 1.5×).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.config.forksync import load_config  # noqa: E402
from bot.core.provenance import clear_memo  # noqa: E402
from bot.store import Store  # noqa: E402
from bot.sync.ingest import load_state  # noqa: E402


def git_pass(git_dir: str, shas: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(f"set -o pipefail; git --git-dir='{git_dir}' log -p --no-walk=unsorted --stdin "
                   f"| git --git-dir='{git_dir}' patch-id --stable > /dev/null",
                   shell=True, executable="/bin/bash", input="\n".join(shas) + "\n", text=True, check=True)
    return time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fork", required=True, help="fork repository (path)")
    ap.add_argument("--upstream", help="upstream repository (path; default: the fork repository)")
    ap.add_argument("--upstream-ref", default="main")
    ap.add_argument("--fork-ref", default="main")
    ap.add_argument("--config", help="forksync.yml for provenance rules (e.g. examples/triton-fork.yml)")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(a.config, {"upstream.url": a.upstream or a.fork, "fork.url": a.fork,
                                     "upstream.ref": a.upstream_ref, "fork.ref": a.fork_ref})
        cfg = cfg.model_copy(update={"cache_dir": tmp})
        st = load_state(cfg, use_cache=False, record=False)
        shas = list(st.upstream) + [c.sha for c in st.fork_commits]
        bad = set(st.missing)
        ok = [s for s in shas if s not in bad and len((st.upstream.get(s) or next(
            c for c in st.fork_commits if c.sha == s)).parents) <= 1]
        print(f"commits: {len(st.upstream)} upstream in range + {len(st.fork_commits)} fork = {len(shas)}; "
              f"{len(bad)} with missing objects left out of git's pass; {len(ok)} in git's pass")
        gt, ct, wt = [], [], []
        store = Store(Path(tmp) / "warm.sqlite")
        load_state(cfg, store=store, record=False)          # fill the cache
        for _ in range(a.repeat):
            gt.append(git_pass(st.git_dir, ok))
            clear_memo()        # as in a fresh process: no parsed messages carried over
            t = time.perf_counter()
            load_state(cfg, use_cache=False, record=False)
            ct.append(time.perf_counter() - t)
            clear_memo()
            t = time.perf_counter()
            load_state(cfg, store=store, record=False)
            wt.append(time.perf_counter() - t)
        g, c, w = statistics.median(gt), statistics.median(ct), statistics.median(wt)
        print(f"git log -p | git patch-id --stable : {g:7.2f} s   (runs: {', '.join(f'{x:.2f}' for x in gt)})")
        print(f"ledger rebuild, cold (no cache)    : {c:7.2f} s   (runs: {', '.join(f'{x:.2f}' for x in ct)})"
              f"   ratio {c / g:.2f}x")
        print(f"ledger rebuild, warm (cached)      : {w:7.2f} s   (runs: {', '.join(f'{x:.2f}' for x in wt)})"
              f"   ratio {w / g:.2f}x")
        counts = {d.value: n for d, n in st.ledger.counts().items() if n}
        print(f"ledger: {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
