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
``--workers``                  ``FORKSYNC_WORKERS``            in-process workers (1; 0 = none)
—                              ``FORKSYNC_LEASE_S``            worker lease, s (120)
—                              ``FORKSYNC_MAX_ATTEMPTS``       tries before dead-letter (5)
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

    def redacted(self) -> dict:
        d = dict(self.__dict__)
        for k in ("webhook_secret", "token"):
            d[k] = "***" if d[k] else ""
        return d

    def private_key(self) -> str:
        if not self.private_key_file:
            return ""
        try:
            return Path(self.private_key_file).read_text()
        except OSError as e:
            from bot.cli import UserError
            raise UserError(f"cannot read the App private key {self.private_key_file}: {e.strerror}; "
                            "mount it and set FORKSYNC_PRIVATE_KEY_FILE") from None


_ENV = {
    "host": "FORKSYNC_HOST", "port": "FORKSYNC_PORT", "webhook_secret": "FORKSYNC_WEBHOOK_SECRET",
    "app_id": "FORKSYNC_APP_ID", "private_key_file": "FORKSYNC_PRIVATE_KEY_FILE", "token": "FORKSYNC_TOKEN",
    "db": "FORKSYNC_DB", "github_url": "FORKSYNC_GITHUB_URL", "git_url": "FORKSYNC_GIT_URL",
    "workdir": "FORKSYNC_WORKDIR", "bot_login": "FORKSYNC_BOT_LOGIN", "workers": "FORKSYNC_WORKERS",
    "lease_s": "FORKSYNC_LEASE_S", "max_attempts": "FORKSYNC_MAX_ATTEMPTS",
}


def settings_from(args: argparse.Namespace, environ=os.environ) -> ServeSettings:
    """Flags, else environment, else defaults. Raises UserError for bad values."""
    from bot.cli import UserError

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
    for name in ("port", "workers", "max_attempts", "lease_s"):
        if name in vals:
            try:
                vals[name] = float(vals[name]) if name == "lease_s" else int(vals[name])
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
            p.add_argument("--workers", help="in-process workers, 0 = none [FORKSYNC_WORKERS, 1]")
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
    from bot import queue as q
    from bot.cli import UserError
    from bot.store import Store

    db = args.db or os.environ.get("FORKSYNC_DB", "forksync.db")
    if not Path(db).exists():
        raise UserError(f"no database at {db}; pass --db or set FORKSYNC_DB")
    with Store(db) as store:
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
    from bot.cli import UserError

    s = settings_from(args)
    if not s.webhook_secret:
        raise UserError("a webhook secret is required: set FORKSYNC_WEBHOOK_SECRET (or --webhook-secret)")
    logging.getLogger().setLevel(logging.INFO)
    log.info("forksync serve: %s", json.dumps(s.redacted()))
    return run_serve(s)


def cmd_worker(args: argparse.Namespace) -> int:
    s = settings_from(args)
    logging.getLogger().setLevel(logging.INFO)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: (stop.set()))
    from bot.runtime import run_worker_loop
    asyncio.run(run_worker_loop(s, stop))
    return 0


def run_serve(s: ServeSettings) -> int:
    """Run the web app on (host, port) with ``s.workers`` worker threads until SIGTERM/SIGINT."""
    from aiohttp import web

    from bot.app_metrics import AppMetrics
    from bot.runtime import run_worker_loop
    from bot.store import Store
    from bot.web import make_app

    store = Store(s.db)
    metrics_store = Store(s.db)
    metrics = AppMetrics(lambda: metrics_store)
    wake = threading.Event()
    stop = threading.Event()
    threads = []
    for i in range(max(0, s.workers)):
        t = threading.Thread(target=lambda i=i: asyncio.run(run_worker_loop(s, stop, wake=wake, metrics=metrics,
                                                                           poller=(i == 0 and s.poll))),
                             name=f"forksync-worker-{i}", daemon=True)
        t.start()
        threads.append(t)
    app = make_app(store, s.webhook_secret, metrics=metrics, wake=wake)

    async def on_shutdown(_app):
        stop.set()
        wake.set()

    app.on_shutdown.append(on_shutdown)
    print(f"forksync serve: listening on http://{s.host}:{s.port} (db {s.db}, {len(threads)} worker(s))",
          file=sys.stderr, flush=True)
    web.run_app(app, host=s.host, port=s.port, print=None, access_log=None, handle_signals=True)
    stop.set()
    wake.set()
    for t in threads:
        t.join(timeout=10)
    store.close()
    metrics_store.close()
    return 0


__all__ = ["ServeSettings", "settings_from", "register", "run_serve"]
