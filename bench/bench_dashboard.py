"""The dashboard at the size of the real Triton fork: every page's server time and the overview's
first contentful paint in headless Chromium (docs/dashboard.md, "Speed").

The store holds about 1,700 upstream commits in the ledger, a year of daily metrics snapshots,
500 L2 points and 100 root causes (tests/support/dashboard_world.py, ``size="real"``). The
server is ``forksync dashboard --db`` in its own process; server time is its ``Server-Timing``
header (the time from request to answer inside the server), measured over ``--n`` requests per
page after one warm-up request (whose time is reported too: the first L2 page detects the
change points of every series). Targets: p95 ≤ 100 ms per page, first contentful paint ≤ 1 s.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_dashboard.py [--n 30] [--paints 5]
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.store import Store  # noqa: E402
from tests.support.dashboard_world import FORK, fill, sha  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


def pages() -> list[str]:
    f = f"/forks/{FORK}"
    a = f"/api/v1/forks/{FORK}"
    return [f"{f}/", f"{f}/units", f"{f}/ledger", f"{f}/ledger?disposition=PENDING&limit=500", f"{f}/ledger?q=change+number+1",
            f"{f}/ledger/{sha('u', 1234)}", f"{f}/validation", f"{f}/triage", "/health", "/",
            f"{a}/overview", f"{a}/units", f"{a}/ledger?limit=500", f"{a}/validation", f"{a}/triage", "/api/v1/health"]


def server_ms(url: str) -> float:
    with urllib.request.urlopen(url) as r:
        r.read()
        m = re.search(r"app;dur=([\d.]+)", r.headers.get("Server-Timing", ""))
        if r.status != 200 or not m:
            raise SystemExit(f"{url}: status {r.status}, Server-Timing {r.headers.get('Server-Timing')!r}")
        return float(m.group(1))


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(q * len(xs) + 0.5)) - 1))]


def first_paints(url: str, n: int) -> list[float]:
    from playwright.sync_api import sync_playwright

    out = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        for _ in range(n):
            ctx = b.new_context()
            page = ctx.new_page()
            page.goto(url, wait_until="load")
            fcp = page.evaluate("performance.getEntriesByName('first-contentful-paint').map(e => e.startTime)[0]")
            out.append(float(fcp))
            ctx.close()
        b.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=30, help="requests per page (default 30)")
    ap.add_argument("--paints", type=int, default=5, help="page loads for first contentful paint (default 5)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="forksync-bench-dashboard-"))
    db = tmp / "forksync.db"
    t0 = time.perf_counter()
    with Store(db) as store:
        counts = fill(store, "real", now=time.time())
    print(f"store: {counts} in {time.perf_counter() - t0:.1f} s ({db.stat().st_size / 1e6:.1f} MB)")
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "dashboard", "--db", str(db), "--port", "0"],
                            cwd=tmp, env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not m:
            raise SystemExit(f"the dashboard did not start: {line}{proc.stderr.read()[:2000]}")
        base = f"http://127.0.0.1:{m.group(1)}"
        print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1/5/15 min), {os.cpu_count()} cores")
        print(f"{'page':<62} {'first':>8} {'p50':>8} {'p95':>8} {'max':>8}  (server ms)")
        worst = 0.0
        for path in pages():
            first = server_ms(base + path)
            xs = [server_ms(base + path) for _ in range(args.n)]
            p95 = pct(xs, 0.95)
            worst = max(worst, p95)
            print(f"{path[:62]:<62} {first:8.1f} {statistics.median(xs):8.1f} {p95:8.1f} {max(xs):8.1f}")
        fcp = first_paints(base + f"/forks/{FORK}/", args.paints) if Path(CHROMIUM).exists() else []
        if fcp:
            print(f"overview first contentful paint (ms): median {statistics.median(fcp):.0f}, max {max(fcp):.0f} over {len(fcp)} loads")
        print(f"load after: {os.getloadavg()[0]:.2f}")
        ok = worst <= 100.0 and (not fcp or max(fcp) <= 1000.0)
        print(f"worst page p95 {worst:.1f} ms (target ≤ 100), first contentful paint max {max(fcp) if fcp else float('nan'):.0f} ms "
              f"(target ≤ 1000): {'OK' if ok else 'MISSED'}")
        return 0 if ok else 1
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    raise SystemExit(main())
