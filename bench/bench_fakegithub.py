"""Latency of the local GitHub (bot/fakegithub) through the real client (bot/github/client.py).

Usage: ``.venv/bin/python bench/bench_fakegithub.py [--calls 40]``. Prints median and p90 in ms
for three typical calls, with and without response-schema validation (requests are always
validated). Not a test: numbers depend on the machine's load.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import aiohttp

from bot.fakegithub import FakeGitHub
from bot.github.client import GitHubApp, RetryPolicy

SEED = ("git init -q -b main && echo 1 > a && git add a && git -c user.name=a -c user.email=a@x commit -qm i && "
        "git checkout -qb f && echo 2 > b && git add b && git -c user.name=a -c user.email=a@x commit -qm f")


async def run(validate: bool, calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        subprocess.run(SEED, shell=True, cwd=src, check=True)
        fake = FakeGitHub(Path(tmp) / "fake", validate_responses=validate)
        await fake.start()
        app = fake.create_app()
        fake.create_repo("meta/t", source=src)
        inst = fake.install("meta")
        async with aiohttp.ClientSession() as s:
            gh = GitHubApp(s, app_id=app.id, private_key=app.private_key_pem, base_url=fake.url,
                           retry=RetryPolicy(write_interval_s=0), cache_size=0).installation(inst.id)
            await gh.post("/repos/meta/t/pulls", data={"title": "x", "head": "f", "base": "main"})
            await gh.getitem("/repos/meta/t/pulls/1")
            for name, call in [("GET pull", lambda: gh.getitem("/repos/meta/t/pulls/1")),
                               ("GET repo", lambda: gh.getitem("/repos/meta/t")),
                               ("POST comment", lambda: gh.post("/repos/meta/t/issues/1/comments", data={"body": "x"}))]:
                ts = []
                for _ in range(calls):
                    t = time.perf_counter()
                    await call()
                    ts.append((time.perf_counter() - t) * 1000)
                ts.sort()
                print(f"response validation {'on ' if validate else 'off'} {name:13s} median "
                      f"{statistics.median(ts):5.1f} ms  p90 {ts[int(len(ts) * 0.9) - 1]:5.1f} ms")
        await fake.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--calls", type=int, default=40)
    a = ap.parse_args()
    asyncio.run(run(True, a.calls))
    asyncio.run(run(False, a.calls))


if __name__ == "__main__":
    main()
