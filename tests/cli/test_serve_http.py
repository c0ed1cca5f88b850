"""A real ``forksync serve`` process (no workers) against hostile HTTP: unauthenticated uploads do
not hold memory, a connection that never finishes its headers is closed, and startup problems
(port in use, database read-only, corrupt or in a missing directory) are one line and exit 2."""
import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from bot.app.web import delivery_headers
from tests.support.serve import ForksyncProcess

ROOT = Path(__file__).resolve().parents[2]
SECRET = "serve-http-secret"


def serve_cmd(tmp_path, *extra, **env):
    e = dict(os.environ, FORKSYNC_WEBHOOK_SECRET=SECRET, FORKSYNC_DB=str(tmp_path / "bot.db"), FORKSYNC_WORKERS="0",
             PYTHONPATH=str(ROOT))
    e.update(env)
    return [sys.executable, str(ROOT / "app.py"), "serve", "--host", "127.0.0.1", "--no-poll", *extra], e


class Serve(ForksyncProcess):
    """``forksync serve --port 0``, started and listening; ``port`` is read from its "listening on" line."""

    def __init__(self, tmp_path, **env):
        argv, e = serve_cmd(tmp_path, "--port", "0", **env)
        super().__init__(tmp_path, argv[2:], e)         # argv less ``python app.py``, which ForksyncProcess puts first
        assert self.started_or_exited() == "listening", self.log

    @property
    def startup(self) -> list[str]:
        """The lines serve wrote to stderr before its "listening on" line."""
        return self.lines[:next(i for i, line in enumerate(self.lines) if "listening on" in line)]

    def peak_rss_kib(self) -> int:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(status.split("VmHWM:")[1].split()[0])


@pytest.fixture
def serve(tmp_path):
    started = []

    def start(**env):
        s = Serve(tmp_path, **env)
        started.append(s)
        return s
    yield start
    for s in started:
        s.stop()


async def test_eight_unauthenticated_25mb_uploads_hold_no_memory(serve):
    s = serve()
    body = b"x" * (25 * 1024 * 1024)
    async with aiohttp.ClientSession() as http:
        await http.get(f"http://127.0.0.1:{s.port}/healthz")           # imports done, caches warm
        before = s.peak_rss_kib()
        h = delivery_headers("push", "evil", b"{}", SECRET)
        h["X-Hub-Signature-256"] = "sha256=" + "0" * 64                  # well-formed, wrong

        async def upload(i):
            async with http.post(f"http://127.0.0.1:{s.port}/webhook", data=body, headers=h) as r:
                return r.status, (await r.json())["error"]
        answers = await asyncio.gather(*(upload(i) for i in range(8)))
    grown_mib = (s.peak_rss_kib() - before) / 1024
    assert answers == [(401, "signature check failed: the body's HMAC-SHA256 does not match the webhook secret")] * 8
    assert grown_mib < 40, f"peak RSS grew by {grown_mib:.0f} MiB for 8 × 25 MB unauthenticated bodies"


async def test_a_connection_that_never_finishes_its_headers_is_closed(serve):
    s = serve(FORKSYNC_HEADER_TIMEOUT_S="1")
    reader, writer = await asyncio.open_connection("127.0.0.1", s.port)
    writer.write(b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: push\r\n")    # no blank line, ever
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), timeout=60)      # generous bound; the server's timer is 1 s
    assert data == b""                                            # closed by the server, nothing answered
    writer.close()


async def test_deeply_nested_signed_body_is_400_not_500(serve):
    s = serve()
    body = b"[" * 200_000 + b"]" * 200_000
    async with aiohttp.ClientSession() as http:
        async with http.post(f"http://127.0.0.1:{s.port}/webhook", data=body,
                             headers=delivery_headers("push", "deep", body, SECRET)) as r:
            assert (r.status, (await r.json())["error"]) == (400, "the body is not valid JSON")


def run_serve_expecting_failure(tmp_path, *extra, **env):
    argv, e = serve_cmd(tmp_path, *extra, **env)
    p = subprocess.run(argv, cwd=tmp_path, env=e, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stderr


def test_port_in_use_is_one_line_and_exit_2(tmp_path):
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen(1)
        port = other.getsockname()[1]
        rc, err = run_serve_expecting_failure(tmp_path, "--port", str(port))
    assert (rc, err.splitlines()[-1]) == (
        2, f"forksync: port {port} on 127.0.0.1 is already in use; stop the other server or set FORKSYNC_PORT / --port")
    assert "listening" not in err and "Traceback" not in err


def test_workers_without_github_credentials_is_one_line_and_exit_2(tmp_path):
    """Each worker would stop at start for want of them and be restarted for ever behind a server
    that listens: serve says so before it listens."""
    rc, err = run_serve_expecting_failure(tmp_path, "--port", "0", FORKSYNC_WORKERS="1", FORKSYNC_TOKEN="", FORKSYNC_APP_ID="")
    assert (rc, err.splitlines()[-1]) == (
        2, "forksync: no GitHub credentials: set FORKSYNC_TOKEN, or FORKSYNC_APP_ID and FORKSYNC_PRIVATE_KEY_FILE "
           "(or FORKSYNC_WORKERS=0 to serve webhooks and pages only, with workers running elsewhere)")
    assert "listening" not in err and not (tmp_path / "bot.db").exists()


def test_database_in_a_missing_directory_is_one_line_and_exit_2(tmp_path):
    db = tmp_path / "not-mounted" / "bot.db"
    rc, err = run_serve_expecting_failure(tmp_path, "--port", "0", FORKSYNC_DB=str(db))
    assert (rc, err.splitlines()[-1]) == (
        2, f"forksync: the directory of the database {db} does not exist; create it or fix FORKSYNC_DB / --db")
    assert not db.parent.exists()


def test_corrupt_database_is_one_line_and_exit_2(tmp_path):
    db = tmp_path / "bot.db"
    db.write_bytes(b"this is not a database " * 100)
    rc, err = run_serve_expecting_failure(tmp_path, "--port", "0")
    assert (rc, err.splitlines()[-1]) == (
        2, f"forksync: the database {db} is not a forksync SQLite database (corrupt or another file); restore it or "
           "point FORKSYNC_DB elsewhere (sqlite: file is not a database)")
    assert "Traceback" not in err


def test_read_only_database_is_one_line_and_exit_2(tmp_path):
    import sqlite3
    db = tmp_path / "ro" / "bot.db"
    db.parent.mkdir()
    sqlite3.connect(db).close()
    db.write_bytes(b"")                       # an empty file: SQLite must create the schema, i.e. write
    # root ignores file modes; the immutable attribute stops root too (skip where it is unavailable)
    if subprocess.run(["chattr", "+i", str(db.parent)], capture_output=True).returncode != 0:
        if os.geteuid() == 0:
            pytest.skip("chattr +i is unavailable and root ignores file modes")
        db.parent.chmod(0o555)
    try:
        rc, err = run_serve_expecting_failure(tmp_path, "--port", "0", FORKSYNC_DB=str(db))
    finally:
        subprocess.run(["chattr", "-i", str(db.parent)], capture_output=True)
        db.parent.chmod(0o755)
    assert rc == 2
    assert err.splitlines()[-1].startswith(
        f"forksync: the database {db} is read-only (file, directory or filesystem); make it writable or point "
        "FORKSYNC_DB elsewhere (sqlite: ")
    assert "Traceback" not in err


def test_the_startup_line_shows_no_credential_of_the_git_url(serve):
    s = serve(FORKSYNC_GIT_URL="https://x-access-token:CANARY-git-pw-77@github.com/{owner}/{repo}.git",
              FORKSYNC_TOKEN="CANARY-token-88")
    text = "".join(s.startup)
    assert '"git_url": "https://***@github.com/{owner}/{repo}.git"' in text and '"token": "***"' in text
    assert "CANARY" not in text and SECRET not in text


def test_worker_with_a_corrupt_database_is_one_line_and_exit_2(tmp_path):
    db = tmp_path / "bot.db"
    db.write_bytes(b"this is not a database " * 100)
    e = dict(os.environ, FORKSYNC_DB=str(db), FORKSYNC_TOKEN="t0k3n-value", PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, str(ROOT / "app.py"), "worker", "--no-poll"], cwd=tmp_path, env=e,
                       capture_output=True, text=True, timeout=120)
    assert (p.returncode, p.stderr.splitlines()[-1]) == (
        2, f"forksync: the database {db} is not a forksync SQLite database (corrupt or another file); restore it or "
           "point FORKSYNC_DB elsewhere (sqlite: file is not a database)")


async def test_serve_shows_the_dashboard_on_loopback_and_asks_for_login_when_set_up(serve):
    s = serve()
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{s.port}/api/v1/forks") as r:
            assert r.status == 200 and (await r.json()) == {"schema": "forksync.dashboard.forks/1", "forks": []}
        async with http.get(f"http://127.0.0.1:{s.port}/") as r:
            assert r.status == 200 and "This store holds no fork yet" in await r.text()
    s.stop()
    s = serve(FORKSYNC_OAUTH_CLIENT_ID="Iv1.test", FORKSYNC_OAUTH_CLIENT_SECRET="oauth-canary-1",
              FORKSYNC_SESSION_SECRET="session-canary-2")
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{s.port}/api/v1/forks") as r:
            assert r.status == 401
        async with http.get(f"http://127.0.0.1:{s.port}/forks/o/f/", allow_redirects=False) as r:
            assert r.status == 302 and r.headers["Location"] == "/auth/login?next=/forks/o/f/"
    assert not any("canary" in line for line in s.startup)


def test_a_port_out_of_range_is_one_line_and_exit_2(tmp_path):
    argv, e = serve_cmd(tmp_path, FORKSYNC_PORT="99999")
    p = subprocess.run(argv, cwd=tmp_path, env=e, capture_output=True, text=True, timeout=120)
    assert (p.returncode, p.stderr.splitlines()[-1]) == (
        2, "forksync: FORKSYNC_PORT / --port: '99999' is out of range: must be less than or equal to 65535 (from the environment)")
    assert "Traceback" not in p.stderr and not (tmp_path / "bot.db").exists()


async def test_serve_asks_a_metrics_token_for_the_per_fork_series(serve):
    """``/metrics`` is on the webhook's port: without ``FORKSYNC_METRICS_TOKEN`` serve says once
    that it names no fork; with it, a scrape needs ``Authorization: Bearer <token>``, and the
    token is never printed."""
    s = serve()
    assert sum("FORKSYNC_METRICS_TOKEN" in line for line in s.startup) == 1, s.startup
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{s.port}/metrics") as r:
            assert r.status == 200 and "forksync_forks 0.0" in await r.text()
    s.stop()
    s = serve(FORKSYNC_METRICS_TOKEN="metrics-canary-3")
    assert not any("FORKSYNC_METRICS_TOKEN" in line or "metrics-canary" in line for line in s.startup), s.startup
    assert '"metrics_token": "***"' in "".join(s.startup)
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{s.port}/metrics") as r:
            assert r.status == 401
        async with http.get(f"http://127.0.0.1:{s.port}/metrics",
                            headers={"Authorization": "Bearer metrics-canary-3"}) as r:
            assert r.status == 200 and "forksync_store_up 1.0" in await r.text()
