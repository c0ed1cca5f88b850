"""One upstream commit with a patch of hundreds of MB (a committed kernel cache, a generated file):
``forksync status`` beside git's own ``log -p | patch-id`` pass over that commit.

    .venv/bin/python bench/bench_huge_patch.py --mb 150

Real case: ROCm/triton's ``dot_slicing_phantom`` branch, two "cache push" commits whose
``git log -p`` prints 775 MB each (about 9 s); ``forksync status`` took 1,042 s there while the
analysis copied and searched the unparsed output once per 1 MiB read (quadratic in one commit's
patch). Builds an upstream with a ``--mb`` MB text file added in one commit and a fork of it in a
temporary folder, then times, each in a fresh process (what a user waits for): the git pass, and
``forksync status --json`` with no cache. Prints both wall times and the ratio (target: a small
multiple, ≤ 4× + 3 s, like the ledger's cold rebuild beside git).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.demo.repobuilder import RepoBuilder  # noqa: E402

T0 = 1_767_225_600
DAY = 86_400


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=150, help="size of the one big file, MB [150]")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="forksync-huge-") as tmp:
        tmp = Path(tmp)
        up = RepoBuilder.init(tmp / "up")
        up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
        fork = up.clone(tmp / "fork")
        fork.commit("[fork] own work", {"f.txt": "f\n"}, when=T0 + DAY)
        line = "kernel_cache_entry = 0x" + "0123456789abcdef" * 4 + "\n"
        big = up.commit("cache push (#3)", {"cache/_attn_fwd.llir": line * (args.mb * 2**20 // len(line))},
                        when=T0 + 2 * DAY)
        t = time.monotonic()
        subprocess.run(f"set -o pipefail; git -C {up.path} log -p --no-walk --format='commit %H' {big} "
                       f"| git -C {up.path} patch-id --stable > /dev/null", shell=True, executable="/bin/bash", check=True)
        git_s = time.monotonic() - t
        t = time.monotonic()
        subprocess.run([sys.executable, str(ROOT / "app.py"), "--quiet", "--upstream", str(up.path), "--fork", str(fork.path),
                        "status", "--json"], cwd=tmp, check=True, stdout=subprocess.DEVNULL,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
        fs_s = time.monotonic() - t
    load = os.getloadavg()[0]
    print(f"{args.mb} MB commit: git log -p | patch-id {git_s:.1f} s, forksync status {fs_s:.1f} s, "
          f"ratio {fs_s / git_s:.2f} (load {load:.1f})")
    return 0 if fs_s < 4 * git_s + 3 else 1


if __name__ == "__main__":
    raise SystemExit(main())
