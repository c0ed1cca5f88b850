"""Canary secrets through a real ``forksync serve`` (App mode, worker child process) and its error
paths — a badly signed delivery, a permission lookup that fails, a delivery that dead-letters, a
git clone URL carrying a password — then every place a secret could land is searched: the
process's log, the database file (all tables, WAL included), and every issue, comment and PR body
on the local GitHub. None may hold a canary: the webhook secret, the git URL's password, a line of
the App's private key, or an installation token the bot was given."""
import asyncio
import os
import subprocess
import sys
from pathlib import Path

import aiohttp

from bot.app import queue as q
from bot.app.web import delivery_headers, dumps
from bot.fakegithub import FakeGitHub
from bot.github.client import token_client
from bot.store import Store
from tests.support.e2e import CONFIG
from tests.support.github import commit_files, git, make_source_repo
from tests.support.processes import free_port

ROOT = Path(__file__).resolve().parents[2]
CANARY_WEBHOOK = "whsec-CANARY-7f3a9e21c4"
CANARY_GITPW = "CANARY-gitpw-51c2d8e0"


async def until(pred, what, limit_s=120.0):
    """Poll ``pred``; the limit bounds a broken test, it is no budget."""
    loop = asyncio.get_running_loop()
    end = loop.time() + limit_s
    while not await pred():
        assert loop.time() < end, f"gave up waiting for {what}"
        await asyncio.sleep(0.2)


async def test_canary_secrets_reach_no_log_row_or_github_body(tmp_path):
    fake = FakeGitHub(tmp_path / "fakegithub", webhook_secret=CANARY_WEBHOOK, git_http_urls=True)
    await fake.start()
    proc = None
    try:
        fake.app = fake.create_app(webhook_secret=CANARY_WEBHOOK)
        up_src = tmp_path / "up"
        make_source_repo(up_src, [{"python/a.py": "a = 1\n"}])
        fake.create_repo("triton-lang/triton", source=up_src)
        fork_src = tmp_path / "forksrc"
        git(tmp_path, "clone", "-q", str(up_src), str(fork_src))
        commit_files(fork_src, {".github/forksync.yml": CONFIG}, "fork: forksync config")
        fork = fake.create_repo("meta/triton", source=fork_src)
        fake.install("triton-lang")
        fake.install("meta")
        fake.add_collaborator(fork, "alice", "write")
        fake.add_token("alice-token", "alice")
        port = free_port()
        fake.webhooks.url = f"http://127.0.0.1:{port}/webhook"
        key = tmp_path / "app.pem"
        key.write_text(fake.app.private_key_pem)
        git_url = fake.url.replace("http://", f"http://canary-user:{CANARY_GITPW}@") + "/{owner}/{repo}.git"
        env = dict(os.environ, FORKSYNC_WEBHOOK_SECRET=CANARY_WEBHOOK, FORKSYNC_APP_ID=str(fake.app.id),
                   FORKSYNC_PRIVATE_KEY_FILE=str(key), FORKSYNC_DB=str(tmp_path / "bot.db"),
                   FORKSYNC_GITHUB_URL=fake.url, FORKSYNC_WORKDIR=str(tmp_path / "work"), FORKSYNC_GIT_URL=git_url,
                   PYTHONPATH=str(ROOT))
        log_path = tmp_path / "serve.log"
        with open(log_path, "w") as log:
            proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "-v", "serve", "--host", "127.0.0.1",
                                     "--port", str(port), "--no-poll"], cwd=tmp_path, env=env, stdout=log, stderr=log)
        async with aiohttp.ClientSession() as http:
            async def healthy():
                try:
                    async with http.get(f"http://127.0.0.1:{port}/healthz") as r:
                        return r.status == 200
                except aiohttp.ClientError:
                    return False
            await until(healthy, "forksync serve and its worker")

            # error path: a delivery signed with another secret
            body = dumps({"zen": "x"})
            h = delivery_headers("ping", "canary-bad-sig", body, "not-the-secret")
            async with http.post(f"http://127.0.0.1:{port}/webhook", data=body, headers=h) as r:
                assert r.status == 401
            # error path: a signed delivery the handlers cannot read (dead letter)
            body = dumps({"action": 5, "installation": {"id": 1}})
            async with http.post(f"http://127.0.0.1:{port}/webhook", data=body,
                                 headers=delivery_headers("issue_comment", "canary-dead", body, CANARY_WEBHOOK)) as r:
                assert r.status == 202
            # error path: the permission lookup fails, then the retry runs the command (a plan: git fetch with a token)
            alice = token_client(http, "alice-token", base_url=fake.url)
            issue = await alice.post("/repos/meta/triton/issues", data={"title": "t", "body": "b"})
            fake.faults.server_error("/repos/meta/triton/collaborators/alice/permission", "GET", times=4)
            await alice.post(f"/repos/meta/triton/issues/{issue['number']}/comments", data={"body": "/forksync plan"})
            await fake.webhooks.drain()
            db = Store(tmp_path / "bot.db")

            async def settled():
                c = q.counts(db)
                return c["queued"] == c["processing"] == c["failed"] == 0 and c["done"] >= 2
            await until(settled, "the worker to settle the queue")
            dead = q.listing(db, ["dead"])
            assert [d.delivery_id for d in dead] == ["canary-dead"], [(d.event, d.dead_reason) for d in dead]
            async with http.get(f"http://127.0.0.1:{port}/healthz") as r:       # the dead letter shows
                assert r.status == 503
            db.close()
            bodies = [issue["body"] or ""]
            async for it in alice.getiter("/repos/meta/triton/issues{?state}", {"state": "all"}):
                bodies.append(it.get("body") or "")
                async for c in alice.getiter(f"/repos/meta/triton/issues/{it['number']}/comments"):
                    bodies.append(c["body"] or "")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=60)
        tokens = [t for t in fake.state.tokens if t != "alice-token"]
        await fake.stop()

    key_lines = [ln for ln in fake.app.private_key_pem.splitlines() if ln and not ln.startswith("-----")]
    canaries = {"webhook secret": CANARY_WEBHOOK, "git password": CANARY_GITPW,
                **{f"private key line {i}": ln for i, ln in enumerate(key_lines)},
                **{f"installation token {i}": t for i, t in enumerate(tokens)}}
    assert tokens, "the bot was given installation tokens (else this test proves little)"
    log_text = log_path.read_text()
    rows = b"".join(p.read_bytes() for p in tmp_path.glob("bot.db*")).decode("latin-1")
    places = {"serve log": log_text, "database": rows, "GitHub bodies": "\n".join(bodies)}
    leaks = [f"{what} in {where}" for where, text in places.items() for what, v in canaries.items() if v in text]
    assert leaks == []
    assert any("has not run yet" in b for b in bodies)                       # the error paths really ran
    assert any("plan preview (dry run, nothing was pushed)" in b for b in bodies)   # ran after the retry
    assert "webhook delivery refused: 401" in log_text and "http://***@127.0.0.1" in log_text
