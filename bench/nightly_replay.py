"""Three nightlies of the reference Triton kernel suite (``examples/kernels``) with injected faults,
run by the real runner on a GPU and triaged by ``forksync triage nightly`` night by night.

Three steps, the middle one on the GPU machine::

    python bench/nightly_replay.py prepare DIR           # here: the fork's commits as folders + replay config
    python bench/nightly_replay.py device DIR OUT        # on the GPU: gpu_runner per night → OUT/replay.tar.gz
    python bench/nightly_replay.py triage OUT/replay.tar.gz WORK   # here: triage nightly per night → actions JSON

Commits (each a copy of ``examples/kernels`` with ``kernels.py`` changed):

* ``c0`` base — night 0 (green, the last green nightly), run twice: a cold Triton cache, then warm;
* ``c1`` two faults in different parametrizations of ``test_softmax``: fp16 rows normalised by the
  row maximum instead of the sum (wrong numbers in the 2 fp16 cases), and a bf16 block size that is
  not a power of two (``CompilationError``: arange's range must be a power of 2, the 2 bf16 cases);
  night 1 also runs on a second runner whose GPU is gone (``CUDA_VISIBLE_DEVICES=``: the suite's
  GPU preflight fails with ``No CUDA GPUs are available``) — infrastructure;
* ``c2`` the fp16 fault fixed, the bf16 fault still there, and a new one: the matmul config no longer
  fitted to shared memory (fp32 tiles of 128×256/256×128 with 3 stages: ``OutOfResources``);
* ``c3`` everything fixed.

The replay's triage settings open an issue at the first failing nightly and close it after one
clean nightly (``open_after_nights: 1``, ``close_after_green_nights: 1``) so that three nightlies
show every transition; the defaults (2 and 3) would need six.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTEST = ("python3 -m pytest -q -p no:cacheprovider examples/kernels/test_kernels.py "
          "--junitxml=out/kernels-junit.xml -o junit_family=xunit1")
#: a GPU preflight: a runner whose GPU is gone fails here with torch's own start-up error
PREFLIGHT = "python3 -c 'import torch; torch.cuda.init()'"
SUITES = f"""suites:
  - name: kernels
    level: L1
    command: {PREFLIGHT} && {PYTEST}
    report: {{format: junit, path: out/kernels-junit.xml}}
    expected_tests: 30
    timeout_s: 900
    platforms: [h200]
    env: {{PYTHONDONTWRITEBYTECODE: "1"}}
    infra_retries: 1
"""
CONFIG = """upstream: {url: https://github.com/triton-lang/triton}
fork: {url: https://github.com/facebookexperimental/triton}
triage:
  open_after_nights: 1
  close_after_green_nights: 1
  rules:
    - id: softmax-fp16-accuracy
      title: "Fused softmax exceeds its error bound in fp16"
      pattern: "softmax .* fp16: relative error"
"""

SOFTMAX_SUM = "    y = num / tl.sum(num, axis=0)\n"
SOFTMAX_MAX = ("    if FP16:\n        y = num / tl.max(num, axis=0)\n    else:\n        y = num / tl.sum(num, axis=0)\n")
SOFTMAX_SIG = "def _softmax_kernel(x_ptr, out_ptr, x_stride, out_stride, n_cols, BLOCK: tl.constexpr):\n"
SOFTMAX_SIG_FP16 = "def _softmax_kernel(x_ptr, out_ptr, x_stride, out_stride, n_cols, BLOCK: tl.constexpr, FP16: tl.constexpr = False):\n"
SOFTMAX_CALL = "    _softmax_kernel[(rows,)](x, out, x.stride(0), out.stride(0), cols, BLOCK=triton.next_power_of_2(cols))\n"
SOFTMAX_CALL_FP16 = ("    _softmax_kernel[(rows,)](x, out, x.stride(0), out.stride(0), cols, BLOCK=triton.next_power_of_2(cols),\n"
                     "                             FP16=x.dtype == torch.float16)\n")
SOFTMAX_CALL_BOTH = ("    block = triton.next_power_of_2(cols) + (1 if x.dtype == torch.bfloat16 else 0)   # keep a slot for the row max\n"
                     "    _softmax_kernel[(rows,)](x, out, x.stride(0), out.stride(0), cols, BLOCK=block,\n"
                     "                             FP16=x.dtype == torch.float16)\n")
SOFTMAX_CALL_BF16 = ("    block = triton.next_power_of_2(cols) + (1 if x.dtype == torch.bfloat16 else 0)   # keep a slot for the row max\n"
                     "    _softmax_kernel[(rows,)](x, out, x.stride(0), out.stride(0), cols, BLOCK=block)\n")
FITTED = "    config = config.fitted(a.element_size())\n"
UNFITTED = "    config = config   # the tiles are fitted by the autotuner now\n"


def _variant(src: str, name: str) -> str:
    def sub(s, old, new):
        assert old in s, f"{name}: {old!r} not in kernels.py"
        return s.replace(old, new, 1)
    if name == "c1":
        src = sub(src, SOFTMAX_SIG, SOFTMAX_SIG_FP16)
        src = sub(src, SOFTMAX_SUM, SOFTMAX_MAX)
        src = sub(src, SOFTMAX_CALL, SOFTMAX_CALL_BOTH)
    elif name == "c2":
        src = sub(src, SOFTMAX_CALL, SOFTMAX_CALL_BF16)
        src = sub(src, FITTED, UNFITTED)
    elif name == "c3":
        src = src + "\n"          # every fault reverted (a new commit with the base's kernels)
    return src


def prepare(out: Path) -> None:
    """The four commits as plain folders ``out/c0…c3`` (the GPU machine may lack git: the runner
    runs in place and records the sha given), their shas from a real git history ``out/fork``,
    the suites file and the replay's forksync.yml."""
    if out.exists():
        shutil.rmtree(out)
    fork = out / "fork"
    fork.mkdir(parents=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "Replay", "GIT_AUTHOR_EMAIL": "replay@example.com",
           "GIT_COMMITTER_NAME": "Replay", "GIT_COMMITTER_EMAIL": "replay@example.com"}
    git = lambda *a: subprocess.run(["git", *a], cwd=fork, env=env, check=True, capture_output=True, text=True).stdout.strip()  # noqa: E731
    git("init", "-q", "-b", "main")
    base = (ROOT / "examples/kernels/kernels.py").read_text()
    shas = {}
    subjects = {"c0": "[Kernels] reference kernels", "c1": "[Kernels] softmax: fp16 by the row max; bf16 block slot",
                "c2": "[Kernels] revert fp16 softmax; matmul tiles fitted by the autotuner", "c3": "[Kernels] revert the rest"}
    for name in ("c0", "c1", "c2", "c3"):
        dst = fork / "examples/kernels"
        if not dst.exists():
            shutil.copytree(ROOT / "examples/kernels", dst, ignore=shutil.ignore_patterns("__pycache__"))
        (dst / "kernels.py").write_text(_variant(base, name))
        git("add", "-A")
        git("commit", "-q", "-m", subjects[name])
        shas[name] = git("rev-parse", "HEAD")
        shutil.copytree(fork, out / name, ignore=shutil.ignore_patterns(".git"))
    (out / "suites.yml").write_text(SUITES)
    (out / "forksync.yml").write_text(CONFIG)
    (out / "shas.json").write_text(json.dumps(shas, indent=1))
    print(json.dumps(shas))


#: (result name, commit, runner id, extra env) in the order they run on the GPU
RUNS = (("n0-cold", "c0", "h200-a", {}), ("n0-warm", "c0", "h200-a", {}),
        ("n1", "c1", "h200-a", {}), ("n1-infra", "c1", "h200-b", {"CUDA_VISIBLE_DEVICES": ""}),
        ("n2", "c2", "h200-a", {}), ("n3", "c3", "h200-a", {}))


def device(src: Path, out: Path) -> None:
    """Run every :data:`RUNS` entry with :func:`gpu_runner.runner.run_local` (in place, a fresh
    copy per run; the Triton cache per runner in ``out/runner-<id>``, empty at the start) and pack
    the result files and a timing table into ``out/replay.tar.gz``."""
    from gpu_runner.suites_file import find_suite, load_suites

    suite = find_suite(load_suites(src / "suites.yml"), "kernels", src / "suites.yml")
    shas = json.loads((src / "shas.json").read_text())
    work = Path("/tmp/replay-work")
    shutil.rmtree(work, ignore_errors=True)
    files, timing = [], []
    try:
        _runs(suite, shas, src, work, files, timing)
    finally:           # whatever ran comes back, even when a later run breaks
        (work / "timing.json").write_text(json.dumps(timing, indent=1))
        out.mkdir(parents=True, exist_ok=True)
        with tarfile.open(out / "replay.tar.gz", "w:gz") as tar:
            for f in files + [work / "timing.json"]:
                tar.add(f, arcname=f.name)


def _runs(suite, shas: dict, src: Path, work: Path, files: list, timing: list) -> None:
    from gpu_runner.runner import LocalOptions, run_local

    for name, commit, runner, extra in RUNS:
        checkout = work / name
        shutil.copytree(src / commit, checkout)
        saved = {k: os.environ.get(k) for k in extra}
        os.environ.update(extra)
        try:
            t0 = time.monotonic()
            r = run_local(suite, checkout, shas[commit], LocalOptions(
                platform="h200", runner_id=runner, in_place=True, logs_dir=work / f"{name}-logs",
                work_dir=work / f"runner-{runner}"))
            wall = time.monotonic() - t0
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        f = work / f"{name}.json"
        f.write_text(r.to_json())
        files.append(f)
        d = r.durations
        row = {"run": name, "commit": shas[commit][:12], "runner": runner, "verdict": r.verdict, "outcome": r.outcome,
               "reasons": [x.code for x in r.reasons], "passed": r.counts.passed, "failed": r.counts.failed + r.counts.error,
               "attempts": len(r.attempts), "process_wall_s": round(d.command, 2), "test_bodies_s": round(d.tests, 2),
               "outside_tests_s": round(d.outside_tests, 2), "runner_total_s": round(wall, 2), "triton_cache": r.triton_cache}
        timing.append(row)
        print(json.dumps(row), flush=True)


#: the nightlies triaged, in order: (run id, date, result files)
NIGHTS = (("nightly-0", "2026-12-01", ("n0-cold.json",)), ("nightly-1", "2026-12-02", ("n1.json", "n1-infra.json")),
          ("nightly-2", "2026-12-03", ("n2.json",)), ("nightly-3", "2026-12-04", ("n3.json",)))


def triage(bundle: Path, work: Path, src: Path) -> None:
    """Unpack the GPU's results and run ``forksync triage nightly`` (this checkout's CLI) night by
    night against a fresh store; print one summary line per night and write ``work/actions.json``."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    with tarfile.open(bundle) as tar:
        tar.extractall(work, filter="data")
    summary = []
    for run, date, files in NIGHTS:
        cmd = [sys.executable, str(ROOT / "app.py"), "--config", str(src / "forksync.yml"), "triage", "nightly",
               "--db", str(work / "replay.db"), "--run", run, "--date", date, "--repo", "meta/triton",
               *[str(work / f) for f in files]]
        p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)}\n{p.stderr}")
        out = json.loads(p.stdout)
        summary.append(out)
        brief = {k: [f"#{x['issue']} {x['title']}" if x.get("issue") else f"{x['key']} ({len(x['tests'])} tests)"
                     for x in v] for k, v in out.items() if isinstance(v, list) and v}
        print(run, json.dumps(brief, ensure_ascii=False))
    (work / "actions.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False))
    digest = hashlib.sha256((work / "actions.json").read_bytes()).hexdigest()[:12]
    print(f"actions → {work / 'actions.json'} ({digest})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    sub.add_parser("prepare").add_argument("dir", type=Path)
    d = sub.add_parser("device")
    d.add_argument("dir", type=Path)
    d.add_argument("out", type=Path)
    t = sub.add_parser("triage")
    t.add_argument("bundle", type=Path)
    t.add_argument("work", type=Path)
    t.add_argument("--src", type=Path, help="the prepared folder (its forksync.yml); default: beside the bundle")
    a = ap.parse_args(argv)
    if a.step == "prepare":
        prepare(a.dir)
    elif a.step == "device":
        device(a.dir, a.out)
    else:
        triage(a.bundle, a.work, a.src or a.bundle.parent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
