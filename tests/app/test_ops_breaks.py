"""Running ``forksync serve`` over time, as an operator meets it: a delivery whose handler takes
the worker process down every time, a volume that fills up, a clock stepped back by NTP, a
settings file edited while serve runs. Real processes (``forksync serve`` and worker
subprocesses) on a real SQLite store."""
from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bot.app import queue as q
from bot.app.schedules import tick_tracked
from bot.app.web import PROBE_EVERY_S, GroupCommitter, delivery_headers
from bot.store import Store
from bot.sync import store as sync_store
from bot.sync.upstream import poll_once
from tests.support.serve import ForksyncProcess, worker_until_idle

ROOT = Path(__file__).resolve().parents[2]
SECRET = "ops-breaks-webhook-secret"
RELEASE_DUMP = ROOT / "tests" / "data" / "store" / "f48f023.sql"


# ---------------------------------------------------------------------- helpers
class Serve(ForksyncProcess):
    """A ``forksync serve --port 0 --no-poll`` subprocess with no workers, started and listening."""

    def __init__(self, cwd: Path, *extra: str, **env: str):
        e = dict(os.environ, FORKSYNC_WEBHOOK_SECRET=SECRET, FORKSYNC_WORKERS="0", PYTHONPATH=str(ROOT))
        e.update(env)
        super().__init__(cwd, ["serve", "--host", "127.0.0.1", "--port", "0", "--no-poll", *extra], e)
        assert self.started_or_exited() == "listening", self.log

    def post(self, guid: str, payload: dict) -> tuple[int, dict]:
        body = json.dumps(payload).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/webhook", data=body,
                                     headers=delivery_headers("ping", guid, body, SECRET))
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())


# ---------------------------------------------------------------------- a poison delivery
POISONED = """
async def process(d):
    if d.id == "poison":
        os._exit(137)           # what the kernel's OOM killer or a crash in libgit2 does to the worker
    with open(RAN, "a") as f:
        f.write(d.id + "\\n")
    return "handled"
"""


def test_a_delivery_that_kills_its_worker_every_time_is_dead_lettered_and_the_rest_go_on(tmp_path):
    """A delivery whose handling takes the worker process down (OOM kill, a segfault in libgit2)
    is claimed again by every restarted worker, for ever: what a user sees is ``attempts`` climbing
    past ``FORKSYNC_MAX_ATTEMPTS`` with the delivery ``processing``, never dead-lettered (no alarm
    on the status issue, nothing in ``forksync queue --state dead``), the deliveries claimed with
    it in the same batch after it never handled, and the ones before it handled again on every
    restart. They should see it dead after ``max_attempts`` tries, with a reason saying its worker
    died handling it, and the other deliveries done."""
    db, ran = tmp_path / "q.db", tmp_path / "ran.txt"
    with Store(db) as s:
        for i, guid in enumerate(["first", "poison", "after"]):
            q.enqueue(s, delivery_id=guid, hook_id="", event="ping", body=b"{}", now=time.time() - 60 + i)
    script = worker_until_idle(db, ran, POISONED, "policy=q.QueuePolicy(max_attempts=3)")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    codes = []
    for _ in range(6):          # serve restarts a worker that exits; max_attempts is 3
        r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        codes.append(r.returncode)
        if r.returncode == 0:
            break
    with Store(db) as s:
        states = {d.id: (d.state, d.attempts) for d in q.listing(s)}
        poison = q.get(s, "poison")
    assert codes[-1] == 0, f"the worker never got past the poison delivery: exits {codes}, queue {states}"
    assert poison.state == "dead" and poison.dead_reason, states
    assert states["first"][0] == "done" and states["after"][0] == "done", states
    assert "after" in ran.read_text().split()


# ---------------------------------------------------------------------- a full volume
def test_healthz_says_unhealthy_while_every_delivery_is_refused_for_want_of_disk(tmp_path):
    """The database's volume fills up while serve runs (no file may grow any more): every webhook
    delivery is answered 503 (GitHub records it failed, and GitHub does not redeliver by itself),
    yet ``GET /healthz`` answers ``200 {"status": "ok"}``: the Docker HEALTHCHECK and any monitor
    say all is well while every event is being lost. /healthz should answer 503 saying that
    deliveries cannot be stored (the store cannot be written)."""
    serve = Serve(tmp_path, FORKSYNC_DB=str(tmp_path / "bot.db"))
    try:
        assert serve.post("before-full", {"zen": "fine", "hook_id": 1})[0] == 202
        # the volume is full: no file of the process may grow past its size now (what ENOSPC does
        # to SQLite's appends to the WAL)
        biggest = max(p.stat().st_size for p in tmp_path.glob("bot.db*"))
        resource.prlimit(serve.proc.pid, resource.RLIMIT_FSIZE, (biggest, biggest))
        answers = [serve.post(f"while-full-{i}", {"zen": "x" * 5000, "hook_id": 1})[0] for i in range(3)]
        assert answers == [503, 503, 503], (answers, serve.log[-2000:])
        status, body = serve.healthz()
    finally:
        serve.stop()
    assert status == 503, f"/healthz answered {status} {body} while every delivery was refused"
    assert body["status"] != "ok"


def test_healthz_recovers_by_itself_once_the_store_can_be_written_again(tmp_path):
    """After a full volume is freed, ``/healthz`` stayed 503 until GitHub's next delivery was
    stored — but a load balancer takes an instance whose health check fails out of rotation, so
    no delivery ever came and the webhook intake stayed dark. It should try a write of its own
    (at most every ``PROBE_EVERY_S``) and answer healthy once the store takes it."""
    now = [1_000.0]
    store = Store(tmp_path / "q.db")
    committer = GroupCommitter(store, clock=lambda: now[0])
    try:
        store.conn.execute("PRAGMA query_only=ON")      # the store refuses every write, as on a full volume

        async def deliver():
            try:
                await committer.submit({"delivery_id": "d1", "hook_id": "1", "event": "ping", "body": b"{}"})
            except Exception as e:  # noqa: BLE001 - the delivery is refused: that is the point
                return e

        assert asyncio.run(deliver()) is not None
        assert committer.refused()["count"] == 1
        refusal = committer.recheck()                 # the first check tries a write: still refused
        assert refusal is not None and "readonly" in refusal["error"]
        store.conn.execute("PRAGMA query_only=OFF")     # the volume is freed
        now[0] += PROBE_EVERY_S / 2
        assert committer.recheck() is not None          # not tried again so soon
        now[0] += PROBE_EVERY_S / 2
        assert committer.recheck() is None
        assert store.conn.execute("SELECT probed_at FROM webhook_intake_probe").fetchall() == [(now[0],)]
        assert q.counts(store)["queued"] == 0           # the probe stores no delivery
    finally:
        committer.close()
        store.close()


def _full_volume_available() -> bool:
    if not shutil.which("unshare"):
        return False
    r = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"], capture_output=True)
    return r.returncode == 0


@pytest.mark.skipif(not _full_volume_available(), reason="needs unshare -rm and a tmpfs mount (user namespaces)")
def test_an_upgrade_that_runs_out_of_disk_says_so_and_keeps_the_old_database(tmp_path):
    """An operator starts the new release on a database of an earlier one whose upgrade needs
    room (triage's tables are rebuilt with their fork in the key), on a volume with little left.
    What they see: ``the database … is not a forksync SQLite database (corrupt or another file);
    restore it or point FORKSYNC_DB elsewhere`` — advice to restore a backup of a database that is
    intact, throwing away everything since that backup. They should see that the disk is full (the
    upgrade needs more room), and the old database must still be the old release's, whole."""
    vol, keep = tmp_path / "vol", tmp_path / "after"
    vol.mkdir()
    keep.mkdir()
    old = tmp_path / "old.db"
    conn = sqlite3.connect(old)
    conn.executescript(RELEASE_DUMP.read_text())
    blob = json.dumps({"fail_runs": [], "note": "x" * 1500})
    conn.executemany("INSERT INTO triage_tracked (key, data, updated_at) VALUES (?, ?, ?)",
                     [(f"cause-{i}", blob, i) for i in range(1500)])
    conn.commit()
    conn.close()
    size = old.stat().st_size
    # a volume with the database and a little more: the upgrade's copy of triage_tracked needs ~2 MB
    script = textwrap.dedent(f"""
        mount -t tmpfs -o size={size + 512 * 1024} tmpfs {vol} || exit 99
        cp {old} {vol}/forksync.db
        FORKSYNC_DB={vol}/forksync.db "$@"
        echo "rc=$?" >&2
        cp {vol}/forksync.db* {keep}/
    """)
    env = dict(os.environ, FORKSYNC_WEBHOOK_SECRET=SECRET, FORKSYNC_WORKERS="0", PYTHONPATH=str(ROOT))
    r = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", sys.executable, str(ROOT / "app.py"), "serve",
                        "--host", "127.0.0.1", "--port", "0", "--no-poll"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    err = r.stderr
    assert "rc=2" in err, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    line = next(x for x in err.splitlines() if x.startswith("forksync: "))
    assert "corrupt" not in line and "restore it" not in line, line
    assert "full" in line or "space" in line, line
    # the old database is untouched: the old release's triage rows, no step recorded as applied
    conn = sqlite3.connect(keep / "forksync.db")
    assert conn.execute("SELECT COUNT(*) FROM triage_tracked").fetchone()[0] == 1501
    assert "repo" not in [c[1] for c in conn.execute("PRAGMA table_info(triage_tracked)")]
    conn.close()


# ---------------------------------------------------------------------- the clock steps back
class Ticked(Exception):
    """make_ctx was asked for: the fork's scheduled work was started."""


async def _ticked(coro) -> bool:
    try:
        await coro
    except Ticked:
        return True
    return False


async def test_polling_goes_on_after_the_clock_stepped_back(tmp_path):
    """The host's clock ran a day fast (no NTP at boot) while the worker polled upstream, then NTP
    stepped it back. ``tracked_forks.last_poll_at`` is a day in the future, so no poll is due
    until the clock catches up: a day with no upstream sync, no failure, nothing on /healthz — and
    a restart does not help (it is stored). A poll time in the future should not hold polling."""
    now = 1_800_000_000.0
    with Store(tmp_path / "s.db") as s:
        sync_store.track(s, "meta/triton", "triton-lang/triton", "main", 7, poll_interval_s=300)
        sync_store.mark_polled(s, "meta/triton", now + 86_400)      # polled while the clock was a day fast

        async def make_ctx(inst):
            raise Ticked

        assert await _ticked(poll_once(s, None, make_ctx, now=now + 600)), "no poll for a day after the clock stepped back"


async def test_scheduled_ticks_go_on_after_the_clock_stepped_back(tmp_path):
    """The worker throttles each fork's scheduled jobs (collect, reconcile, L3, nightly, L2) by the
    wall-clock time of its last tick. After NTP steps the clock back an hour, the last tick is an
    hour in the future and none is run for an hour and the throttle's interval: collect, reconcile
    and L3 requests silently stall. The throttle should not hold ticks when its last tick is in
    the future (or should measure with a monotonic clock)."""
    fork = f"meta/clock-{os.getpid()}-{time.monotonic_ns()}"
    with Store(tmp_path / "s.db") as s:
        sync_store.track(s, fork, "triton-lang/triton", "main", 7, poll_interval_s=300)

        async def make_ctx(inst):
            raise Ticked

        t = 1_800_000_000.0
        assert await _ticked(tick_tracked(s, make_ctx, now=t, min_interval_s=1.0))
        await asyncio.sleep(1.2)                    # more than the throttle's interval, in real time
        assert await _ticked(tick_tracked(s, make_ctx, now=t - 3600, min_interval_s=1.0)), \
            "no scheduled tick after the clock stepped back an hour"


# ---------------------------------------------------------------------- settings edited while running
def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        out += [int(x) for x in text]
    return out


async def test_a_settings_file_moved_while_serve_runs_does_not_stop_its_restarted_worker(tmp_path):
    """serve runs with ``FORKSYNC_SETTINGS_FILE=/etc/…/forksync.env``; the operator moves that file
    away to write a new one (to apply at the next restart). Then the worker dies (OOM kill) and
    serve restarts it: the new worker reads the settings file again, finds none, prints ``the
    settings file … does not exist`` and exits — serve restarts it every second for ever and no
    delivery is handled until a person notices. serve already validated its settings and hands
    them all to its workers; a worker it restarts should start with them and beat again."""
    settings = tmp_path / "forksync.env"
    settings.write_text(f"FORKSYNC_WEBHOOK_SECRET={SECRET}\nFORKSYNC_TOKEN=not-a-real-token-0123\n"
                        "FORKSYNC_BOT_LOGIN=forksync[bot]\nFORKSYNC_WORKERS=1\n"
                        f"FORKSYNC_DB={tmp_path / 'bot.db'}\nFORKSYNC_WORKDIR={tmp_path / 'work'}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORKSYNC_")}
    e = dict(env, PYTHONPATH=str(ROOT), FORKSYNC_SETTINGS_FILE=str(settings))
    serve = ForksyncProcess(tmp_path, ["serve", "--host", "127.0.0.1", "--port", "0", "--no-poll"], e)
    try:
        assert serve.started_or_exited() == "listening", serve.log
        end = time.monotonic() + 120
        while serve.healthz()[0] != 200:
            assert time.monotonic() < end, serve.healthz()
            await asyncio.sleep(0.5)
        settings.rename(tmp_path / "forksync.env.old")          # being replaced
        [worker] = _children(serve.proc.pid)
        os.kill(worker, signal.SIGKILL)                         # the worker dies; serve restarts it
        await asyncio.sleep(8)                                  # several of serve's 1 s supervision turns
        status, body = serve.healthz()
        text = serve.log
    finally:
        serve.stop()
    assert "does not exist" not in text, text[-2000:]
    assert status == 200, (status, body, text[-2000:])


# ---------------------------------------------------------------------- retention without the poller
def test_a_worker_without_polling_still_deletes_deliveries_past_their_retention(tmp_path):
    """``FORKSYNC_KEEP_DELIVERIES_DAYS`` (14) promises that a done delivery, with its body of up to
    25 MB, is deleted after that many days. The deletion runs only inside the upstream poller, so
    a worker started with ``--no-poll`` (``FORKSYNC_POLL=false``: webhooks only, as the demo runs)
    keeps every delivery for ever and the database grows until the volume is full. A worker that
    does not poll should still prune the queue."""
    db = tmp_path / "bot.db"
    month_ago = time.time() - 30 * 86_400
    with Store(db) as s:
        q.enqueue(s, delivery_id="a-month-old", hook_id="", event="ping", body=b"{}" * 1000, now=month_ago)
        [d] = q.claim_many(s, "old-worker", 1, now=month_ago)
        assert q.complete(s, d.id, "old-worker", "handled", now=month_ago)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORKSYNC_")}
    env.update(PYTHONPATH=str(ROOT), FORKSYNC_TOKEN="not-a-real-token-0123", FORKSYNC_BOT_LOGIN="forksync[bot]",
               FORKSYNC_DB=str(db), FORKSYNC_WORKDIR=str(tmp_path / "work"))
    worker = ForksyncProcess(tmp_path, ["worker", "--no-poll"], env)
    try:
        with Store(db) as s:
            end = time.monotonic() + 120
            while q.last_heartbeat(s) is None:
                assert worker.proc.poll() is None and time.monotonic() < end, worker.log
                time.sleep(0.2)
            time.sleep(3)           # the poller's first turn prunes at once; a pruning worker has done it by now
            left = q.get(s, "a-month-old")
    finally:
        worker.stop()
    assert left is None, f"a delivery done 30 days ago is still stored ({left.state}), retention 14 days"
