"""``forksync serve`` (web app + worker), ``forksync worker`` (worker only) and ``forksync queue``.

Settings come from flags, else environment variables, else defaults (docs/github.md,
"Webhook app, queue and handlers"):

=============================  ==============================  ===================================
flag                           environment                     meaning
=============================  ==============================  ===================================
``--host`` / ``--port``        ``FORKSYNC_HOST/_PORT``         listen address (127.0.0.1:8080)
``--webhook-secret``           ``FORKSYNC_WEBHOOK_SECRET``     webhook secret (required for serve);
                               ``FORKSYNC_WEBHOOK_SECRET_FILE`` or read from a file
``--app-id``                   ``FORKSYNC_APP_ID``             GitHub App id (App mode)
``--private-key-file``         ``FORKSYNC_PRIVATE_KEY_FILE``   the App's PEM private key
``--token``                    ``FORKSYNC_TOKEN``              plain token mode instead of an App
``--db``                       ``FORKSYNC_DB``                 SQLite file (./forksync.db)
``--github-url``               ``FORKSYNC_GITHUB_URL``         REST API base (https://api.github.com)
``--git-url``                  ``FORKSYNC_GIT_URL``            clone URL template ({owner}/{repo});
                                                               default https://github.com/...
``--workdir``                  ``FORKSYNC_WORKDIR``            git working copies (./.forksync-work)
``--bot-login``                ``FORKSYNC_BOT_LOGIN``          the bot's login (loop guard);
                                                               App mode: ``<slug>[bot]`` from GET /app
``--workers``                  ``FORKSYNC_WORKERS``            worker processes (1; 0 = none)
—                              ``FORKSYNC_LEASE_S``            worker lease, s (120)
—                              ``FORKSYNC_MAX_ATTEMPTS``       tries before dead-letter (5)
``--header-timeout``           ``FORKSYNC_HEADER_TIMEOUT_S``   close a connection without complete
                                                               headers (or idle) after this, s (10)
=============================  ==============================  ===================================

Secrets are never logged: :meth:`ServeSettings.redacted` is what gets printed.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from bot.agents.redact import register_secrets, scrub
from bot.app import queue as q
from bot.config.forksync import UserError
from bot.store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServeSettings:
    host: str = "127.0.0.1"
    port: int = 8080
    webhook_secret: str = ""
    app_id: str = ""
    private_key_file: str = ""
    token: str = ""
    db: str = "forksync.db"
    github_url: str = "https://api.github.com"
    git_url: str = "https://github.com/{owner}/{repo}.git"
    workdir: str = ".forksync-work"
    bot_login: str = ""
    workers: int = 1
    poll: bool = True
    lease_s: float = 120.0
    max_attempts: int = 5
    header_timeout_s: float = 10.0

    def redacted(self) -> dict:
        """The settings for a log line: secrets as ``***``, URLs without their userinfo."""
        d = dict(self.__dict__)
        for k in ("webhook_secret", "token"):
            d[k] = "***" if d[k] else ""
        for k in ("git_url", "github_url"):
            d[k] = scrub(d[k])
        return d

    def register_secrets(self) -> None:
        """Make every secret of these settings one that logs and agent prompts never show
        (:func:`bot.agents.redact.register_secrets`): webhook secret, token, the App's key, and a
        password or token inside ``git_url`` / ``github_url``."""
        values = [self.webhook_secret, self.token]
        for url in (self.git_url, self.github_url):
            try:
                parts = urlsplit(url)
                values += [parts.password, parts.username if parts.password is None else None]
            except ValueError:
                pass
        try:
            values.append(self.private_key())
        except UserError:
            pass
        register_secrets(*values)

    def private_key(self) -> str:
        if not self.private_key_file:
            return ""
        try:
            return Path(self.private_key_file).read_text()
        except OSError as e:
            raise UserError(f"cannot read the App private key {self.private_key_file}: {e.strerror}; "
                            "mount it and set FORKSYNC_PRIVATE_KEY_FILE") from None


_ENV = {
    "host": "FORKSYNC_HOST", "port": "FORKSYNC_PORT", "webhook_secret": "FORKSYNC_WEBHOOK_SECRET",
    "app_id": "FORKSYNC_APP_ID", "private_key_file": "FORKSYNC_PRIVATE_KEY_FILE", "token": "FORKSYNC_TOKEN",
    "db": "FORKSYNC_DB", "github_url": "FORKSYNC_GITHUB_URL", "git_url": "FORKSYNC_GIT_URL",
    "workdir": "FORKSYNC_WORKDIR", "bot_login": "FORKSYNC_BOT_LOGIN", "workers": "FORKSYNC_WORKERS",
    "lease_s": "FORKSYNC_LEASE_S", "max_attempts": "FORKSYNC_MAX_ATTEMPTS",
    "header_timeout_s": "FORKSYNC_HEADER_TIMEOUT_S",
}


def settings_from(args: argparse.Namespace, environ=os.environ) -> ServeSettings:
    """Flags, else environment, else defaults. Raises UserError for bad values."""
    vals: dict = {}
    for name, env in _ENV.items():
        flag = getattr(args, name, None)
        if flag is not None:
            vals[name] = flag
        elif env in environ:
            vals[name] = environ[env]
    if "webhook_secret" not in vals and environ.get("FORKSYNC_WEBHOOK_SECRET_FILE"):
        try:
            vals["webhook_secret"] = Path(environ["FORKSYNC_WEBHOOK_SECRET_FILE"]).read_text().strip()
        except OSError as e:
            raise UserError(f"cannot read FORKSYNC_WEBHOOK_SECRET_FILE: {e.strerror}") from None
    for name in ("port", "workers", "max_attempts", "lease_s", "header_timeout_s"):
        if name in vals:
            try:
                vals[name] = float(vals[name]) if name.endswith("_s") else int(vals[name])
            except ValueError:
                raise UserError(f"{_ENV[name]} / --{name}: {vals[name]!r} is not a number") from None
    if getattr(args, "no_poll", False):
        vals["poll"] = False
    s = ServeSettings(**vals)
    if s.token and s.app_id:
        raise UserError("give either FORKSYNC_TOKEN (token mode) or FORKSYNC_APP_ID + FORKSYNC_PRIVATE_KEY_FILE "
                        "(App mode), not both")
    if s.app_id and not s.private_key_file:
        raise UserError("App mode needs FORKSYNC_PRIVATE_KEY_FILE (the App's PEM key)")
    return s


def register(sub, common) -> None:
    def add_settings(p: argparse.ArgumentParser, web: bool) -> None:
        if web:
            p.add_argument("--host", help="listen address [FORKSYNC_HOST, 127.0.0.1]")
            p.add_argument("--port", help="listen port [FORKSYNC_PORT, 8080]")
            p.add_argument("--webhook-secret", dest="webhook_secret", help="[FORKSYNC_WEBHOOK_SECRET]")
            p.add_argument("--workers", help="worker processes, 0 = none [FORKSYNC_WORKERS, 1]")
            p.add_argument("--header-timeout", dest="header_timeout_s",
                           help="close a connection whose request headers are not complete after this many "
                                "seconds, or idle that long [FORKSYNC_HEADER_TIMEOUT_S, 10]")
        p.add_argument("--app-id", dest="app_id", help="GitHub App id [FORKSYNC_APP_ID]")
        p.add_argument("--private-key-file", dest="private_key_file", help="App private key (PEM) [FORKSYNC_PRIVATE_KEY_FILE]")
        p.add_argument("--token", help="token mode instead of an App [FORKSYNC_TOKEN]")
        p.add_argument("--db", help="SQLite database [FORKSYNC_DB, forksync.db]")
        p.add_argument("--github-url", dest="github_url", help="REST API base URL [FORKSYNC_GITHUB_URL]")
        p.add_argument("--git-url", dest="git_url", help="clone URL template with {owner} {repo} [FORKSYNC_GIT_URL]")
        p.add_argument("--workdir", help="git working copies [FORKSYNC_WORKDIR]")
        p.add_argument("--bot-login", dest="bot_login", help="the bot's own login, for the loop guard [FORKSYNC_BOT_LOGIN]")
        p.add_argument("--no-poll", dest="no_poll", action="store_true", help="don't poll upstream on a schedule")

    p = sub.add_parser("serve", parents=[common], help="run the GitHub App: webhook server + queue worker")
    add_settings(p, web=True)
    p.set_defaults(func=cmd_serve)
    p = sub.add_parser("worker", parents=[common], help="run only the queue worker (no web server)")
    add_settings(p, web=False)
    p.set_defaults(func=cmd_worker)
    p = sub.add_parser("queue", parents=[common], help="list webhook deliveries (incl. dead letters); retry one")
    p.add_argument("--db", help="SQLite database [FORKSYNC_DB, forksync.db]")
    p.add_argument("--state", action="append", choices=["queued", "processing", "done", "failed", "dead"],
                   help="only these states (repeatable)")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--retry", metavar="ID", help="put a dead/failed delivery back in the queue")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(func=cmd_queue)


def cmd_queue(args: argparse.Namespace) -> int:
    db = args.db or os.environ.get("FORKSYNC_DB", "forksync.db")
    if not Path(db).exists():
        raise UserError(f"no database at {db}; pass --db or set FORKSYNC_DB")
    with open_store(db) as store:
        if args.retry:
            if not q.retry_dead(store, args.retry):
                raise UserError(f"no dead or failed delivery {args.retry!r} (see `forksync queue --state dead`)")
            print(f"{args.retry}: queued again")
            return 0
        rows = q.listing(store, args.state, args.limit)
        counts = q.counts(store)
    if args.json:
        for d in rows:
            print(q.as_json(d))
        return 0
    print("  ".join(f"{k}={v}" for k, v in counts.items()))
    for d in rows:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(d.received_at))
        what = d.event + (f".{d.action}" if d.action else "")
        line = f"{when}  {d.state:<10} {d.id:<40} {what:<28} {d.repo or '-'}  attempts={d.attempts}"
        if d.state == "dead":
            line += f"\n    dead: {d.dead_reason}"
        elif d.state == "failed":
            line += f"\n    last error: {d.last_error}"
        elif d.outcome:
            line += f"\n    {d.outcome}"
        print(line)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    s = settings_from(args)
    if not s.webhook_secret:
        raise UserError("a webhook secret is required: set FORKSYNC_WEBHOOK_SECRET (or --webhook-secret)")
    s.register_secrets()
    logging.getLogger().setLevel(logging.INFO)
    log.info("forksync serve: %s", json.dumps(s.redacted()))
    return run_serve(s)


def cmd_worker(args: argparse.Namespace) -> int:
    from bot.app.runtime import run_worker_loop  # lazy: the App loads for serve and worker only, not for every CLI command

    s = settings_from(args)
    s.register_secrets()
    open_store(s.db).close()        # a missing directory, read-only or corrupt database: one line, exit 2
    logging.getLogger().setLevel(logging.INFO)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: (stop.set()))
    asyncio.run(run_worker_loop(s, stop, poller=s.poll))
    return 0


def _die_with_parent() -> None:
    """In a worker child: get SIGKILL when ``forksync serve`` dies (Linux ``PR_SET_PDEATHSIG``)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def worker_env(s: ServeSettings, index: int) -> dict[str, str]:
    env = dict(os.environ)
    for name, var in _ENV.items():
        env[var] = str(getattr(s, name))
    env["FORKSYNC_WORKERS"] = "0"
    return env


class WorkerProcesses:
    """``forksync serve``'s workers: one ``forksync worker`` child process each (so handler work
    — git, GitHub calls — never competes with acknowledgements for the interpreter), restarted
    when one exits. Worker 0 also runs the upstream poller. Children die with the parent."""

    def __init__(self, s: ServeSettings):
        self.s = s
        self.procs: list = []
        self.restarts: list[float] = []         # monotonic times of restarts, for /healthz
        self.stop = threading.Event()
        self._thread = threading.Thread(target=self._supervise, name="forksync-workers", daemon=True)

    def _spawn(self, i: int):
        import subprocess
        argv = [sys.executable, "-c", "from bot.cli.main import main; raise SystemExit(main())", "worker"]
        if i > 0 or not self.s.poll:
            argv.append("--no-poll")
        return subprocess.Popen(argv, env=worker_env(self.s, i), preexec_fn=_die_with_parent)

    def start(self) -> "WorkerProcesses":
        self.procs = [self._spawn(i) for i in range(self.s.workers)]
        self._thread.start()
        return self

    def _supervise(self) -> None:
        while not self.stop.wait(1.0):
            for i, p in enumerate(self.procs):
                if p.poll() is not None and not self.stop.is_set():
                    log.warning("worker %d exited with %s; restarting", i, p.returncode)
                    self.restarts.append(time.monotonic())
                    self.procs[i] = self._spawn(i)

    def recent_restarts(self, window_s: float = 300.0) -> int:
        """How many times a worker was restarted in the last ``window_s`` seconds."""
        since = time.monotonic() - window_s
        return sum(1 for t in list(self.restarts) if t >= since)

    def terminate(self, timeout: float = 30.0) -> None:
        self.stop.set()
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=timeout)
            except Exception:  # noqa: BLE001
                p.kill()


def open_store(db: str) -> Store:
    """The database for ``serve``/``worker``/``queue``. Raises :class:`UserError` (one line, exit 2)
    when its directory is missing (a mis-mounted volume must not silently get a fresh database),
    or the file cannot be written or is not a SQLite database."""
    import sqlite3

    parent = Path(db).parent
    if db != ":memory:" and not parent.is_dir():
        raise UserError(f"the directory of the database {db} does not exist; create it or fix FORKSYNC_DB / --db")
    try:
        return Store(db)
    except sqlite3.DatabaseError as e:
        what = ("is read-only (file, directory or filesystem); make it writable or point FORKSYNC_DB elsewhere"
                if "readonly" in str(e) or "unable to open" in str(e)
                else "is not a forksync SQLite database (corrupt or another file); restore it or point FORKSYNC_DB elsewhere")
        raise UserError(f"the database {db} {what} (sqlite: {e})") from None
    except OSError as e:
        raise UserError(f"cannot open the database {db}: {e.strerror}") from None


def listen_socket(host: str, port: int):
    """A listening TCP socket on ``(host, port)`` (0 = any free port). Raises :class:`UserError`
    for a port in use or an address this machine does not have."""
    import errno
    import socket

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(512)
    except socket.gaierror as e:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port}: {e}; set FORKSYNC_HOST / --host") from None
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise UserError(f"port {port} on {host} is already in use; stop the other server or set FORKSYNC_PORT / "
                            "--port") from None
        raise UserError(f"cannot listen on {host}:{port}: {e.strerror}; set FORKSYNC_HOST / --host") from None
    return sock


def run_serve(s: ServeSettings) -> int:
    """Run the web app on (host, port) and ``s.workers`` worker processes until SIGTERM/SIGINT."""
    from aiohttp import web

    from bot.app.metrics import AppMetrics  # lazy: the App loads for serve and worker only, not for every CLI command
    from bot.app.web import make_app  # lazy: as above
    from bot.handlers import all_routers  # lazy: as above

    all_routers()               # import every handler module so all tables exist before a worker starts
    store = open_store(s.db)
    metrics_store = Store(s.db)
    sock = listen_socket(s.host, s.port)    # before the workers start: a port in use stops nothing half-started
    port = sock.getsockname()[1]
    metrics = AppMetrics(lambda: metrics_store)
    workers = WorkerProcesses(s).start() if s.workers > 0 else None
    # FORKSYNC_EXPECT_WORKER=1: the worker runs elsewhere on the same database (compose.yaml's worker)
    expect_worker = workers is not None or os.environ.get("FORKSYNC_EXPECT_WORKER") == "1"
    app = make_app(store, s.webhook_secret, metrics=metrics, expect_worker=expect_worker,
                   worker_restarts=workers.recent_restarts if workers is not None else None)
    import gc
    gc.collect()
    gc.freeze()                         # startup objects never need collecting: shorter GC pauses
    gc.set_threshold(20_000, 20, 20)    # fewer collections on the acknowledgement path
    print(f"forksync serve: listening on http://{s.host}:{port} (db {s.db}, {s.workers} worker process(es))",
          file=sys.stderr, flush=True)
    try:
        # keepalive_timeout also closes a connection whose request headers never complete (aiohttp
        # starts that timer when the connection opens and closes it if no request has arrived).
        web.run_app(app, sock=sock, print=None, access_log=None, handle_signals=True, shutdown_timeout=5.0,
                    keepalive_timeout=s.header_timeout_s)
    finally:
        if workers is not None:
            workers.terminate()
        store.close()
        metrics_store.close()
    return 0


__all__ = ["ServeSettings", "settings_from", "register", "run_serve"]
