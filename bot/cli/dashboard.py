"""``forksync dashboard``: the dashboard's pages on this machine, from the store the CLI uses.

``forksync dashboard [--db DB] [--config FILE] [--host 127.0.0.1] [--port N]``. The store is
``--db``, else ``FORKSYNC_DB``, else (with a configuration) the CLI's own store in the config's
``cache_dir``, else ``./forksync.db``. With a configuration (``--config``, or ``./forksync.yml``)
the fork's numbers, ledger and plan are computed once before serving (as ``forksync status``
and ``plan`` do) and its metrics history is backfilled from ``status --series`` when it has
none; pages then read the store only. No login: it binds 127.0.0.1 unless ``--host`` says
otherwise (docs/dashboard.md).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bot.cli.serve import listen_socket, open_store
from bot.cli.text import text
from bot.config.forksync import ForksyncConfig, UserError, load_config


def github_name(url: str) -> str | None:
    """``owner/name`` of a GitHub repository URL (https or ssh), else None."""
    m = re.match(r"^(?:https://github\.com/|git@github\.com:)([\w.\-]+)/([\w.\-]+?)(?:\.git)?/?$", url or "")
    return f"{m.group(1)}/{m.group(2)}" if m else None


def fork_name(cfg: ForksyncConfig) -> str:
    """The fork's ``owner/name``: from a GitHub URL, else ``local/<directory name>`` of its path."""
    url = cfg.fork.url or ""
    if github_name(url):
        return github_name(url)
    name = Path(url.rstrip("/")).name.removesuffix(".git") or "fork"
    return f"local/{re.sub(r'[^A-Za-z0-9_.-]', '-', name)}"


def refresh(store, cfg: ForksyncConfig, fork: str, *, backfill_days: int, backfill_step: int, out=None,
            upstream: str | None = None, now: float | None = None) -> None:
    """Compute the fork's state now into ``store`` (status row, snapshot, ledger, plan), and backfill its
    history when it has none. ``upstream``: the upstream's ``owner/name`` for links (default: the
    configured URL). ``now``: epoch seconds (default: the clock). Raises what ``load_state`` raises
    (bad refs, unreadable repositories)."""
    from bot.plan.planner import plan_state  # lazy: git and the core load only when a configuration is given
    from bot.sync import snapshots  # lazy: as above
    from bot.sync import store as sync_store  # lazy: as above
    from bot.sync.ingest import default_store, load_state  # lazy: as above
    from bot.sync.status import SyncStatus  # lazy: as above

    out = out or sys.stderr     # looked up per call: the stream in place at import time may be closed by now
    now = time.time() if now is None else now
    cache = default_store(cfg)  # the analysis and prediction cache `status` and `plan` share
    state = load_state(cfg, store=cache)
    # the Units page lists the plan's units (planned, not yet opened) as a sync leaves them
    plan = plan_state(state, store=cache).plan
    if not sync_store.has_snapshots(store, fork):
        # the history ends at the newer of the two tips (a mirror may be older than today): past
        # upstream's last commit the fork can still catch up, and those days belong in the plot
        tips = [state.pins.upstream_tip.committer_time or 0, int(state.repo[state.fork_tip].committer.time)]
        last = datetime.fromtimestamp(max(tips) or time.time(), timezone.utc).date()
        # points older than metrics_keep_days before today would be dropped by the first write:
        # they are not computed (an old mirror then gets a shorter history, or none)
        kept_from = datetime.fromtimestamp(now, timezone.utc).date() - timedelta(days=cfg.github.metrics_keep_days)
        days = min(backfill_days, (last - kept_from).days)
        if days < 0:
            print(text("dashboard", "no_history", fork=fork, last=last, keep_days=cfg.github.metrics_keep_days), file=out, flush=True)
        else:
            print(text("dashboard", "computing", fork=fork, step=backfill_step, days=days, last=last, cut=days != backfill_days),
                  file=out, flush=True)
            n = snapshots.backfill(store, fork, cfg, days=days, step_days=backfill_step, today=last)
            print(text("dashboard", "recorded", count=n), file=out, flush=True)
    p = state.pins
    old = sync_store.load_status(store, fork)
    # the App records the units it opened; branches `forksync apply` left in the fork (in flight,
    # no PR) are units too, as the Ledger's IN_FLIGHT says: listed as such, refreshed each time
    kept = tuple(u for u in (old.units if old else ()) if not u.get("in_flight"))
    known = {u.get("id") for u in kept}
    flying = tuple({"id": b.unit_id, "kind": b.kind, "pr": None, "url": None, "branch": b.name, "in_flight": True,
                    "upstream": list(b.upstream_shas), "state": f"in flight: branch {b.name}, no PR yet"}
                   for b in state.in_flight if b.unit_id not in known)
    st = SyncStatus(repo=fork, upstream=upstream or cfg.upstream.url or cfg.fork.url, upstream_head=state.upstream_tip,
                    fork_head=state.fork_tip, frontier=p.frontier.sha or "", contiguous_pin=p.contiguous.sha or "",
                    days_behind=float(p.days_behind), backlog=int(p.backlog), not_reached=int(p.not_reached),
                    # the two commit times Days Behind is measured between, shown beside the tips as
                    # the App's sync records them (0: unknown)
                    upstream_head_at=float(p.upstream_tip.committer_time or 0),
                    frontier_at=float(p.frontier.committer_time or 0) if p.frontier.sha else 0.0,
                    contiguous_pin_at=float(p.contiguous.committer_time or 0) if p.contiguous.sha else 0.0,
                    contiguous_lag_days=float(p.contiguous_lag_days),
                    # a local copy is as current as its refs: an old mirror's numbers show as stale; a
                    # pinned sha, or a copy nothing dates, has no time at all and is never shown as current
                    upstream_seen_at=min(now, float(state.upstream_as_of)) if state.upstream_as_of else 0.0,
                    upstream_unknown=state.upstream_as_of_unknown or "", computed_at=now, last_fetch_at=now,
                    units=kept + flying, blocked=old.blocked if old else (),
                    # publishes nothing: which units the App's last sync left unrefreshed stands
                    synced_at=old.synced_at if old else 0.0, synced_on_hold=old.synced_on_hold if old else False)
    sync_store.save_status(store, st)
    snapshots.record_sync(store, st, at=now, contiguous_lag_days=float(p.contiguous_lag_days),
                          keep_days=cfg.github.metrics_keep_days, stale_after_s=cfg.github.stale_after_s,
                          ledger=snapshots.ledger_rows(fork, state.ledger.entries, state.upstream, cfg),
                          plan=snapshots.plan_units(plan))


def cmd_dashboard(args: argparse.Namespace) -> int:
    from aiohttp import web

    from bot.app.web import mount_dashboard  # lazy: the App and the pages load for this command only
    from bot.cli.ledger import state_errors  # lazy: git and the ledger load for this command only
    from bot.cli.main import config_from_args  # lazy: main imports this module

    config_file = getattr(args, "config", None) or ("forksync.yml" if os.path.isfile("forksync.yml") else None)
    # a fork named by --fork/--upstream alone is computed like one named in a configuration file
    has_config = config_file is not None or bool(getattr(args, "fork", None) or getattr(args, "upstream", None))
    cfg = config_from_args(args) if has_config else None
    given = args.db or os.environ.get("FORKSYNC_DB")
    db = given or (str(Path(cfg.cache_dir) / "forksync.sqlite") if cfg else "forksync.db")
    if not has_config and not Path(db).exists():
        raise UserError(text("dashboard", "no_database", db=db))
    if cfg is not None and not given:
        from bot.sync.ingest import usable_cache_dir  # lazy: as above
        usable_cache_dir(cfg)       # the fork's cache folder holds the store: made as `status` makes it
    store = open_store(db)
    if cfg is not None and (cfg.fork.url or cfg.upstream.url):
        # names (for the pages' GitHub links) from the configuration file; --fork/--upstream may
        # point the repositories at local copies
        named = load_config(config_file) if config_file else cfg
        up = github_name(named.upstream.url) or github_name(cfg.upstream.url)
        # a bad ref or repository path is said as `status` says it: the near ref, the flag or key that set it
        with state_errors(args):
            refresh(store, cfg, fork_name(named if github_name(named.fork.url) else cfg), backfill_days=args.backfill_days,
                    backfill_step=args.backfill_step, upstream=up)
    sock = listen_socket(args.host, args.port)
    app = web.Application()
    mount_dashboard(app, store)
    print(text("dashboard", "listening", host=args.host, port=sock.getsockname()[1], db=db), file=sys.stderr, flush=True)
    try:
        web.run_app(app, sock=sock, print=None, access_log=None, handle_signals=True, shutdown_timeout=2.0)
    finally:
        store.close()
    return 0


def register(sub, common) -> None:
    p = sub.add_parser("dashboard", parents=[common], help="serve the dashboard's pages locally (no login, 127.0.0.1)",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--db", help="SQLite database [FORKSYNC_DB; with a config: its cache_dir's store; else forksync.db]")
    p.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8090, help="listen port (default 8090; 0 = any free port)")
    p.add_argument("--backfill-days", dest="backfill_days", type=int, default=365,
                   help="history to compute for a fork that has none, in days (default 365)")
    p.add_argument("--backfill-step", dest="backfill_step", type=int, default=7,
                   help="days between backfilled points (default 7)")
    p.set_defaults(func=cmd_dashboard)


__all__ = ["register", "cmd_dashboard", "fork_name", "refresh"]
