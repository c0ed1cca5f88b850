"""The resolve benchmark on a real fork: deterministic conflict rules scored on the fork's own resolved picks (and merges).

    .venv/bin/python bench/bench_resolve.py --fork /work/.mirror/facebookexperimental+triton/repo \\
        --upstream-ref a4ce9c2a2 --fork-ref main --config examples/triton-fork.yml [--json OUT.json]
    .venv/bin/python bench/bench_resolve.py --fork /tmp/intel.git --upstream-ref 1d2da15d2b --fork-ref main --merges

Runs ``forksync bench resolve`` in this process (finding the picks, replaying each upstream commit
onto the first parent of the fork commit that landed it, scoring every rule, the chain and the
baselines) and prints its tables, then the wall time of the whole process (interpreter start
included, from ``/proc/self/stat``) and the load average, since the machine may be shared.
Targets (docs/resolve.md): the whole run ≤ 2 minutes on a 2-core machine; the chain's coverage
on the held-out newest third ≥ 30 % at precision ≥ 0.98.

``--agent-scripted``: also run the agent step (``forksync bench resolve --agent``: the files the
rules declined, the live prompt, redaction and rails) against the local Anthropic server with its
scripted model, which takes upstream's side of every conflict block. It is no model: its score
must equal the ``theirs-hunks`` baseline on the files it was asked about, which checks the agent
pipeline end to end on real files. A real model is scored with the CLI and a key.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402

from bot.cli.bench import render, run_resolve_bench  # noqa: E402
from bot.config.forksync import load_config  # noqa: E402


def process_age_s() -> float:
    """Seconds since this process started (field 22 of /proc/self/stat, in clock ticks)."""
    with open("/proc/self/stat") as f:
        start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fork", required=True, help="fork repository (path)")
    ap.add_argument("--upstream", help="upstream repository (path; default: the fork repository)")
    ap.add_argument("--upstream-ref", default="main")
    ap.add_argument("--fork-ref", default="main")
    ap.add_argument("--config", help="forksync.yml (e.g. examples/triton-fork.yml)")
    ap.add_argument("--rules", help="the chain's rules, comma-separated (default: resolve.rules)")
    ap.add_argument("--merges", action="store_true",
                    help="also replay the fork's merges of upstream (a fork that syncs by merging; resolve.merges)")
    ap.add_argument("--json", metavar="OUT", help="also write the forksync.resolve-bench/1 document here")
    ap.add_argument("--agent-scripted", action="store_true",
                    help="also score the agent step with the local server's scripted take-upstream model")
    a = ap.parse_args(argv)
    cfg = load_config(a.config, {"upstream.url": a.upstream or a.fork, "fork.url": a.fork,
                                 "upstream.ref": a.upstream_ref, "fork.ref": a.fork_ref})
    chain = [x for x in a.rules.split(",") if x] if a.rules else None
    t = time.perf_counter()
    if a.agent_scripted:
        from bot.agents.client import AgentClient
        from bot.cli.bench import render_agent
        from bot.config.agents import SCRIPTED_MODEL
        from bot.fakeanthropic import FakeAnthropic
        from bot.fakeanthropic.adversary import adversarial_model
        from bot.store import Store
        with FakeAnthropic(adversarial_model, api_key="scripted").in_thread() as ant:
            # no model: no token budget to keep (a real model's run on the held-out third needs over 2M tokens)
            settings = cfg.agents.model_copy(update={"model": SCRIPTED_MODEL, "max_retries": 0, "daily_token_budget": 10**12})
            client = AgentClient(settings, Store(), api_key="scripted", base_url=ant.base_url)
            doc = run_resolve_bench(cfg, chain=chain, agent=(client, "held-out", None), merges=a.merges or None)
    else:
        doc = run_resolve_bench(cfg, chain=chain, merges=a.merges or None)
    run_s = time.perf_counter() - t
    render(doc, Console(width=120))
    if a.agent_scripted:
        render_agent(doc, [], Console(width=120))
        asked = {(o["fork_commit"], o["path"]) for o in doc["agent"]["outcomes"]}
        base = [o for o in doc["files"] if (o["fork_commit"], o["path"]) in asked]
        print(f"theirs-hunks on the same {len(base)} files: {sum(o['outcomes']['theirs-hunks'] == 'exact' for o in base)} exact; "
              f"the scripted agent: {sum(o['outcome'] == 'exact' for o in doc['agent']['outcomes'])} exact")
    if a.json:
        Path(a.json).write_text(json.dumps(doc, indent=2))
    held = doc["scores"].get("held-out", {}).get("chain", {}).get("*", {})
    load = os.getloadavg()
    print(f"benchmark {run_s:.1f} s; whole process {process_age_s():.1f} s (target ≤ 120 s on 2 cores); "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    prec = "-" if held.get("precision") is None else f"{100 * held['precision']:.1f} %"
    print(f"held-out chain: coverage {100 * (held.get('coverage') or 0):.1f} % (target ≥ 30 %), "
          f"precision {prec} (target ≥ 98 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
