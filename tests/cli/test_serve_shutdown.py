"""A real ``forksync serve`` with its worker, stopped (SIGTERM) while a delivery is being
processed: it exits promptly with status 0 and hands the delivery back to the queue, so the next
worker takes it at once instead of after the lease (a restarted container may reuse the pid, and
a recreated one has another hostname: neither lets the next worker see the lease owner is dead)."""
import asyncio
import json
import os
import signal
import time
from pathlib import Path

import aiohttp
from aiohttp import web

from bot.app import queue as q
from bot.app.web import delivery_headers
from bot.store import Store
from tests.support.serve import ForksyncProcess

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "bot" / "fakegithub" / "spec" / "webhooks"
SECRET = "shutdown-secret"


async def hanging_github():
    """A GitHub that receives requests and never answers them (a slow sync in progress)."""
    seen, done = asyncio.Event(), asyncio.Event()

    async def hang(request):
        seen.set()
        await done.wait()           # set at the end of the test: the server's cleanup waits for its handlers
        return web.Response(status=500)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", hang)
    runner = web.AppRunner(app, shutdown_timeout=0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, seen, done, runner.addresses[0][1]


def start_serve(tmp_path, github_port) -> ForksyncProcess:
    env = dict(os.environ, FORKSYNC_WEBHOOK_SECRET=SECRET, FORKSYNC_DB=str(tmp_path / "bot.db"), FORKSYNC_WORKERS="1",
               FORKSYNC_TOKEN="not-a-real-token", FORKSYNC_BOT_LOGIN="forksync[bot]",
               FORKSYNC_GITHUB_URL=f"http://127.0.0.1:{github_port}", FORKSYNC_WORKDIR=str(tmp_path / "work"),
               FORKSYNC_LEASE_S="600", PYTHONPATH=str(ROOT))
    serve = ForksyncProcess(tmp_path, ["serve", "--host", "127.0.0.1", "--port", "0", "--no-poll"], env)
    assert serve.started_or_exited() == "listening", serve.log
    return serve


async def test_sigterm_mid_delivery_exits_0_promptly_and_hands_the_delivery_back(tmp_path):
    runner, seen, done, gh_port = await hanging_github()
    serve = start_serve(tmp_path, gh_port)
    port = serve.port
    try:
        payload = json.loads((EXAMPLES / "issue_comment.created.json").read_text())
        payload["comment"]["body"] = "/forksync retest"
        payload["sender"]["login"] = "alice"
        body = json.dumps(payload).encode()
        async with aiohttp.ClientSession() as http:
            async with http.post(f"http://127.0.0.1:{port}/webhook", data=body,
                                 headers=delivery_headers("issue_comment", "guid-1", body, SECRET)) as r:
                assert r.status == 202
        await asyncio.wait_for(seen.wait(), 120)     # the worker is inside the handler, waiting on GitHub
        t0 = time.monotonic()
        serve.proc.send_signal(signal.SIGTERM)
        rc = await asyncio.get_running_loop().run_in_executor(None, lambda: serve.proc.wait(timeout=120))
        took = time.monotonic() - t0
        serve.wait(timeout=120)          # its stderr read to the end
        err = serve.log
    finally:
        if serve.proc.poll() is None:
            serve.proc.kill()
        done.set()
        await runner.cleanup()
    assert rc == 0, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    # Docker stops a container with SIGKILL 10 s after SIGTERM: serve and its worker finish before
    assert took < 10, f"serve took {took:.1f} s to stop"
    with Store(tmp_path / "bot.db") as store:
        d = q.get(store, "guid-1/1")
        assert (d.state, d.attempts) == ("queued", 0)     # an interrupted attempt is not one of its tries
        assert q.claim(store, "next-worker", now=time.time()).id == "guid-1/1"    # at once, not after the lease
    assert "handed 1 unfinished deliveries back to the queue" in err
