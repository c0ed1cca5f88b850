"""Summarise an H200 run (examples/kernels/run_h200.sh) as the Markdown of docs/validation.md.

Usage: ``python summarize_h200.py OUT_DIR`` (reads l1-*.json, l2-sweep.json, startup.txt there).
Overhead is ``(runner wall − Σ test-case times) / Σ test-case times``; the runner's *own* share
is ``runner wall − the suite process's wall`` (worktree, report parsing, fingerprint).
"""
import json
import sys
from pathlib import Path


def main(out: str) -> None:
    d = Path(out)
    print("| L1 run | verdict | tests (passed/failed/skipped) | Σ test bodies s | suite process s | runner wall s | "
          "overhead vs bodies | runner's own s |")
    print("|---|---|---|---|---|---|---|---|")
    env = None
    for name in ("cold", "warm1", "warm2", "nogpu"):
        p = d / f"l1-{name}.json"
        if not p.exists():
            print(f"| {name} | (no result) | | | | | | |")
            continue
        r = json.loads(p.read_text())
        env = r["environment"]
        c, t = r["counts"], r["durations"]
        ov = (t["total"] - t["tests"]) / t["tests"] if t["tests"] else float("nan")
        print(f"| {name} | {r['verdict']} {','.join(x['code'] for x in r['reasons'])} | {c['total']} "
              f"({c['passed']}/{c['failed']}/{c['skipped']}) | {t['tests']:.2f} | {t['command']:.2f} | {t['total']:.2f} | "
              f"{ov * 100:.0f} % | {t['total'] - t['command']:.2f} |")
    if env:
        print(f"\nEnvironment: {env['gpu_model']} ×{env['gpu_count']}, driver {env['driver']}, CUDA {env['cuda']}, "
              f"torch {env['torch']}, triton {env['triton']}, Python {env['python']}, runner {env['runner_id']}")
    st = Path("/tmp/startup.txt") if not (d / "startup.txt").exists() else d / "startup.txt"
    if st.exists():
        print("\n" + st.read_text().replace("\n", "  \n"))
    for p in sorted(d.glob("l2-sweep*.json")):
        r = json.loads(p.read_text())
        print(f"\nL2 sweep {p.name}: {r['verdict']} {[x['code'] for x in r['reasons']]}, {len(r['benchmarks'])} points, "
              f"{r['durations']['total']:.0f} s\n")
        print("| shape MxNxK | dtype | Triton TFLOP/s | best config | torch.matmul (cuBLAS) TFLOP/s | Triton/cuBLAS "
              "| spread of repeat medians (Triton, cuBLAS) |")
        print("|---|---|---|---|---|---|---|")
        pts = {(b["shape"], b["dtype"], b["impl"]): b for b in r["benchmarks"]}
        for (shape, dtype, impl), b in pts.items():
            if impl != "triton":
                continue
            ref = pts.get((shape, dtype, "torch.matmul"))

            def spread(x):
                m = x["repeat_medians_ms"]
                return f"{(max(m) - min(m)) / x['median_ms'] * 100:.1f} %" if m else "-"
            print(f"| {shape} | {dtype} | {b['value']:.0f} | {b.get('config')} | {ref['value']:.0f} | "
                  f"{b['value'] / ref['value']:.2f} | {spread(b)}, {spread(ref)} |")


if __name__ == "__main__":
    main(sys.argv[1])
