"""A worker killed with SIGKILL mid-queue (a real `forksync serve` subprocess) loses nothing after
restart and doubles nothing: every acknowledged command gets exactly one reply."""
import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp

from bot.app import queue as q
from bot.github.client import token_client
from bot.store import Store
from tests.support.github import make_source_repo
from tests.support.processes import alive, children, free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
N = 12


def start_serve(fake, tmp_path, port, log_name):
    key = tmp_path / "app.pem"
    key.write_text(fake.app.private_key_pem)
    env = dict(os.environ, FORKSYNC_WEBHOOK_SECRET=fake.webhooks.secret, FORKSYNC_APP_ID=str(fake.app.id),
               FORKSYNC_PRIVATE_KEY_FILE=str(key), FORKSYNC_DB=str(tmp_path / "bot.db"),
               FORKSYNC_GITHUB_URL=fake.url, FORKSYNC_WORKDIR=str(tmp_path / "work"),
               FORKSYNC_GIT_URL=str(fake.state.root / "repos" / "{owner}" / "{repo}.git"),
               FORKSYNC_LEASE_S="600")     # recovery must come from orphan release, not lease expiry
    log = open(tmp_path / log_name, "w")
    return subprocess.Popen([sys.executable, str(ROOT / "app.py"), "serve", "--host", "127.0.0.1",
                             "--port", str(port), "--no-poll"], cwd=tmp_path, env=env, stdout=log, stderr=log)


async def test_sigkill_mid_queue_loses_nothing_and_doubles_nothing(fake_github, tmp_path):
    fake = fake_github
    # a fork forksync syncs (its config on the default branch): commands elsewhere are not run
    make_source_repo(tmp_path / "src", [{"README.md": "fork\n", ".github/forksync.yml":
                                         "upstream:\n  url: https://github.com/triton-lang/triton.git\n  ref: main\n"}])
    fork = fake.create_repo("meta/triton", source=tmp_path / "src")
    fake.install("meta")
    fake.add_collaborator(fork, "alice", "write")
    fake.add_token("alice-token", "alice")
    port = free_port()
    fake.webhooks.url = f"http://127.0.0.1:{port}/webhook"
    proc = start_serve(fake, tmp_path, port, "serve1.log")
    async with aiohttp.ClientSession() as http:
        async def healthy():
            try:
                async with http.get(f"http://127.0.0.1:{port}/healthz") as r:
                    return r.status == 200
            except aiohttp.ClientError:
                return False

        try:
            await wait_for(healthy, "forksync serve to start")
            t_start = asyncio.get_running_loop().time()
            alice = token_client(http, "alice-token", base_url=fake.url)
            issue = await alice.post("/repos/meta/triton/issues", data={"title": "t", "body": "b"})
            n = issue["number"]
            for i in range(N):
                await alice.post(f"/repos/meta/triton/issues/{n}/comments", data={"body": f"/forksync retest s{i}"})
            await fake.webhooks.drain()
            acked = [d for d in fake.webhooks.of("issue_comment", "created")
                     if d.payload["sender"]["login"] == "alice" and d.statuses == [202]]
            assert len(acked) == N                 # every command delivery was acknowledged
            db = Store(tmp_path / "bot.db")

            async def some_done_some_not():
                c = q.counts(db)
                return c["done"] >= 2
            await wait_for(some_done_some_not, "the worker to get going")
            workers = children(proc.pid)
            assert len(workers) == 1                # `forksync serve` runs its worker as a child process
            proc.send_signal(signal.SIGKILL)
            proc.wait()

            async def workers_gone():
                return not any(alive(p) for p in workers)
            await wait_for(workers_gone, "the worker to die with serve (SIGKILL via PR_SET_PDEATHSIG)")
            before = q.counts(db)
            answered = [c async for c in alice.getiter(f"/repos/meta/triton/issues/{n}/comments")
                        if c["user"]["login"] == "forksync[bot]"]
            assert len(answered) < N               # killed mid-queue: some commands not answered yet

            t_kill = asyncio.get_running_loop().time()
            proc = start_serve(fake, tmp_path, port, "serve2.log")

            async def all_done():
                c = q.counts(db)
                return c["queued"] == c["processing"] == c["failed"] == 0
            await wait_for(all_done, "the restarted worker to finish the queue")
            counts = q.counts(db)
            t_done = asyncio.get_running_loop().time()
            db.close()
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        replies = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{n}/comments")
                   if c["user"]["login"] == "forksync[bot]"]
    assert counts["dead"] == 0
    expected = [f"@alice `/forksync retest s{i}`: `retest` works on a sync PR, not on an issue." for i in range(N)]
    got = sorted(r.split("\n", 1)[1].strip() for r in replies)
    assert got == sorted(expected)                 # every command answered exactly once
    print(f"killed with {before} ({len(answered)} answered) after {t_kill - t_start:.1f} s; after restart {counts} in {t_done - t_kill:.1f} s")
