"""Two ``forksync serve`` on one workdir, as a deploy that starts the new one before it stops the
old one leaves them: real processes on a real SQLite store and workdir.

Workers sharing a workdir are safe by design (deliveries under leases, syncs under the fork's
``flock``, lookups-then-writes under claims: docs/design.md, "What runs concurrently"), but the
upstream poller and the validation schedules it ticks are not: two pollers whose nightly ticks
overlap both find the nightly due and both dispatch its suites (measured with two
``nightly_tick`` at once on the local GitHub: two ``forksync-gpu.yml`` runs of the same suite on
the same trunk tip). So one process per workdir polls: the second refuses to start and names the
workdir and the process that polls it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.serve import ForksyncProcess, worker_until_idle

ROOT = Path(__file__).resolve().parents[2]


def forksync(tmp_path: Path, *argv: str, workdir: str = "work") -> ForksyncProcess:
    """``forksync *argv`` (``serve``, ``worker``) on ``tmp_path``'s database and ``workdir``, with a
    GitHub that answers nothing (the tests here end before any delivery)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORKSYNC_")}
    env.update(PYTHONPATH=str(ROOT), FORKSYNC_WEBHOOK_SECRET="two-serves-secret", FORKSYNC_TOKEN="not-a-real-token-0123",
               FORKSYNC_BOT_LOGIN="forksync[bot]", FORKSYNC_DB=str(tmp_path / "bot.db"),
               FORKSYNC_WORKDIR=str(tmp_path / workdir), FORKSYNC_GITHUB_URL="http://127.0.0.1:9")
    return ForksyncProcess(tmp_path, argv, env)


def test_a_second_serve_on_the_workdir_of_a_polling_one_refuses_to_start_and_names_it(tmp_path):
    first = forksync(tmp_path, "serve", "--host", "127.0.0.1", "--port", "0", "--workers", "1")
    second = None
    try:
        assert first.started_or_exited() == "listening", first.log
        second = forksync(tmp_path, "serve", "--host", "127.0.0.1", "--port", "0", "--workers", "1")
        assert second.started_or_exited() == "exited", f"a second polling serve started beside the first: {second.log}"
        assert second.proc.returncode == 2, second.log
        workdir = str(tmp_path / "work")
        assert workdir in second.log and f"pid {first.proc.pid}" in second.log, second.log
        assert "Traceback" not in second.log, second.log
        # a polling worker (compose's `worker`) is refused the same way; the first goes on
        worker = forksync(tmp_path, "worker")
        assert worker.started_or_exited() == "exited" and worker.proc.returncode == 2, worker.log
        assert workdir in worker.log and f"pid {first.proc.pid}" in worker.log, worker.log
        assert first.proc.poll() is None, first.log
    finally:
        first.stop()
        if second is not None:
            second.stop()


def test_a_second_polling_serve_on_the_same_database_with_another_workdir_refuses_to_start(tmp_path):
    """The schedules' state (which nightly ran) is the database's: a serve started from another
    folder (the default workdir is relative) polls the same database and would dispatch each
    nightly again."""
    first = forksync(tmp_path, "serve", "--host", "127.0.0.1", "--port", "0", "--workers", "1")
    second = None
    try:
        assert first.started_or_exited() == "listening", first.log
        second = forksync(tmp_path, "serve", "--host", "127.0.0.1", "--port", "0", "--workers", "1", workdir="other-work")
        assert second.started_or_exited() == "exited", f"a second polling serve started on the database: {second.log}"
        assert second.proc.returncode == 2, second.log
        assert str(tmp_path / "bot.db") in second.log and f"pid {first.proc.pid}" in second.log, second.log
    finally:
        first.stop()
        if second is not None:
            second.stop()


def test_once_the_polling_serve_stopped_the_next_one_starts(tmp_path):
    first = forksync(tmp_path, "serve", "--host", "127.0.0.1", "--port", "0", "--workers", "1")
    try:
        assert first.started_or_exited() == "listening", first.log
    finally:
        first.stop()
    second = forksync(tmp_path, "serve", "--host", "127.0.0.1", "--port", "0", "--workers", "1")
    try:
        assert second.started_or_exited() == "listening", second.log
    finally:
        second.stop()


#: each delivery handled is one line "<delivery id> <pid of the worker process>"
WRITES_WHO_RAN = """
async def process(d):
    with open(RAN, "a") as f:
        f.write(f"{d.id} {os.getpid()}\\n")
    return "handled"
"""


def test_two_processes_working_one_queue_handle_each_delivery_once(tmp_path):
    """What two serves (``--no-poll``, or the old one's workers while the new one's poller is
    refused) share: the delivery queue. Each delivery is handled by one of them, once."""
    from bot.app import queue as q
    from bot.store import Store

    db, ran = tmp_path / "bot.db", tmp_path / "ran.txt"
    with Store(db) as store:
        for i in range(300):
            q.enqueue(store, delivery_id=f"d{i}", hook_id="1", event="ping", body=b"{}", now=1000.0 + i)
    script = worker_until_idle(db, ran, WRITES_WHO_RAN, "poll_interval_s=0.01")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = [subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=env) for _ in range(2)]
    for p in procs:
        assert p.wait(timeout=300) == 0
    lines = [x.split() for x in ran.read_text().splitlines()]
    ids = sorted(i for i, _ in lines)
    assert ids == sorted(f"d{i}/1" for i in range(300)), "a delivery handled twice or never"
    with Store(db) as store:
        assert q.counts(store)["done"] == 300
