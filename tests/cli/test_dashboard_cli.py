"""``forksync dashboard``: names for the pages' links, and bad input answered before serving."""
from __future__ import annotations

from datetime import datetime, timezone

from bot.cli.dashboard import fork_name, github_name
from bot.cli.main import main
from bot.config.forksync import load_config
from tests.support.ref_times import set_ref_times


def test_names_from_urls(tmp_path):
    assert github_name("https://github.com/triton-lang/triton.git") == "triton-lang/triton"
    assert github_name("git@github.com:facebookexperimental/triton.git") == "facebookexperimental/triton"
    assert github_name("/work/mirror/repo") is None
    cfg = load_config(None, {"fork.url": str(tmp_path / "my fork.git"), "upstream.url": "https://github.com/o/u"})
    assert fork_name(cfg) == "local/my-fork"


def test_missing_database_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FORKSYNC_DB", raising=False)
    assert main(["dashboard", "--db", str(tmp_path / "none.db")]) == 2
    err = capsys.readouterr().err
    assert f"no database at {tmp_path / 'none.db'}: pass --db" in err


def test_refresh_records_the_plan_for_the_units_page(tmp_path):
    """``forksync dashboard --config``: the Units page lists the units ``forksync plan`` prints
    (it said "nothing waits to land" while the plan had units: refresh stored no plan)."""
    from bot.cli.dashboard import refresh
    from bot.demo.scenario import build_scenario
    from bot.plan.planner import plan_state
    from bot.store import Store
    from bot.sync import store as sync_store
    from bot.sync.ingest import load_state

    s = build_scenario(tmp_path / "demo")
    cfg = load_config(str(s.config_path))
    want = [(u.id, u.kind, list(u.shas)) for u in plan_state(load_state(cfg)).plan.units]
    assert [(i, k, len(shas)) for i, k, shas in want] == [("bundle-3562a995b7e2", "bundle", 5),
                                                          ("chain-db5d978d58f0", "chain", 2), ("chain-fe029095831e", "chain", 1)]
    store = Store(tmp_path / "forksync.db")
    try:
        refresh(store, cfg, fork_name(cfg), backfill_days=0, backfill_step=1)
        assert [(u["id"], u["kind"], u["shas"]) for u in sync_store.load_plan(store, fork_name(cfg))] == want
    finally:
        store.close()


def test_backfill_ends_at_the_newer_tip(tmp_path):
    """The history runs to the fork's tip when it is newer than upstream's (the demo: upstream's
    last commit 2026-01-05, the fork's 2026-01-07; the real Triton mirror: 2026-06-25 and
    2026-08-22, whose catch-up from 43 Days Behind to 0 the plot left out)."""
    from bot.cli.dashboard import refresh
    from bot.demo.scenario import build_scenario
    from bot.store import Store
    from bot.sync import store as sync_store

    s = build_scenario(tmp_path / "demo")
    cfg = load_config(str(s.config_path))
    # the snapshot written now drops rows older than metrics_keep_days before today: keep the
    # demo's 2026 dates whatever today is
    cfg = cfg.model_copy(update={"github": cfg.github.model_copy(update={"metrics_keep_days": 36_500})})
    store = Store(tmp_path / "forksync.db")
    try:
        refresh(store, cfg, fork_name(cfg), backfill_days=2, backfill_step=1)
        got = [(datetime.fromtimestamp(r["at"], timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"), r["source"])
               for r in sync_store.snapshots(store, fork_name(cfg))]
        assert got[:-1] == [("2026-01-05T23:59:59", "backfill"), ("2026-01-06T23:59:59", "backfill"),
                            ("2026-01-07T23:59:59", "backfill")]
        assert got[-1][1] == "sync"
    finally:
        store.close()


def test_backfill_computes_only_the_points_metrics_keep_days_keeps(tmp_path):
    """Points older than ``metrics_keep_days`` before today would be dropped by the first write:
    they are not computed, and the message says how far the history goes."""
    import io

    from bot.cli.dashboard import refresh
    from bot.demo.scenario import build_scenario
    from bot.store import Store
    from bot.sync import store as sync_store

    s = build_scenario(tmp_path / "demo")
    cfg = load_config(str(s.config_path))
    cfg = cfg.model_copy(update={"github": cfg.github.model_copy(update={"metrics_keep_days": 30})})
    today = datetime(2026, 2, 5, 12, tzinfo=timezone.utc).timestamp()      # kept from 2026-01-06
    store, out = Store(tmp_path / "forksync.db"), io.StringIO()
    try:
        refresh(store, cfg, fork_name(cfg), backfill_days=5, backfill_step=1, out=out, now=today)
        got = [datetime.fromtimestamp(r["at"], timezone.utc).strftime("%Y-%m-%d") for r in sync_store.snapshots(store, fork_name(cfg))]
        assert got == ["2026-01-06", "2026-01-07", "2026-02-05"]
        assert "over 1 days to 2026-01-07, github.metrics_keep_days) …" in out.getvalue()
        assert "2 point(s) of history recorded" in out.getvalue()
    finally:
        store.close()
    store, out = Store(tmp_path / "later.db"), io.StringIO()
    try:
        later = datetime(2027, 6, 1, tzinfo=timezone.utc).timestamp()
        refresh(store, cfg, fork_name(cfg), backfill_days=5, backfill_step=1, out=out, now=later)
        assert [r["source"] for r in sync_store.snapshots(store, fork_name(cfg))] == ["sync"]
        assert ("no history for " + fork_name(cfg) + ": its newest commit (2026-01-07) is older than "
                "github.metrics_keep_days (30) before today") in out.getvalue()
    finally:
        store.close()


def test_refresh_of_an_old_local_copy_records_when_upstream_was_seen(tmp_path):
    """A local copy of upstream is as current as its refs: the dashboard said "upstream as of
    <now> (current)" for a mirror last updated months before; it records the copy's time, so
    the numbers read as stale."""

    from bot.cli.dashboard import refresh
    from bot.demo.scenario import build_scenario
    from bot.git.repo import git_dir_of
    from bot.store import Store
    from bot.sync import store as sync_store

    s = build_scenario(tmp_path / "demo")
    cfg = load_config(str(s.config_path))
    gd = git_dir_of(cfg.upstream.url or cfg.fork.url)
    seen = datetime(2026, 1, 20, tzinfo=timezone.utc).timestamp()
    set_ref_times(gd, seen)
    store = Store(tmp_path / "forksync.db")
    try:
        now = seen + 90 * 86400
        refresh(store, cfg, fork_name(cfg), backfill_days=0, backfill_step=1, now=now)
        st = sync_store.load_status(store, fork_name(cfg))
        assert st.upstream_seen_at == seen and st.computed_at == now
    finally:
        store.close()


def test_refresh_of_an_upstream_pinned_to_a_sha_is_never_current(tmp_path):
    """With ``upstream.ref`` a sha, no time says when upstream was seen: the dashboard recorded
    "now" (shown "(current)"); it records no time and why, and every page shows the numbers as
    stale with the pinned commit."""
    import asyncio

    import pygit2
    from aiohttp.test_utils import TestClient, TestServer

    from bot.cli.dashboard import refresh
    from bot.dashboard import views
    from bot.dashboard.web import Dashboard, make_dashboard_app
    from bot.demo.scenario import build_scenario
    from bot.git.repo import git_dir_of, resolve
    from bot.store import Store
    from bot.sync import store as sync_store

    s = build_scenario(tmp_path / "demo")
    cfg = load_config(str(s.config_path))
    gd = git_dir_of(cfg.upstream.url or cfg.fork.url)
    sha = resolve(pygit2.Repository(gd), cfg.upstream.ref)
    cfg = load_config(str(s.config_path), {"upstream.ref": sha[:10]})
    when = datetime.fromtimestamp(pygit2.Repository(gd)[sha].committer.time, timezone.utc)
    why = f"upstream pinned to {sha[:12]}, committed {when:%Y-%m-%dT%H:%M:%SZ}"
    store = Store(tmp_path / "forksync.db")
    try:
        now = datetime(2026, 6, 1, tzinfo=timezone.utc).timestamp()
        fork = fork_name(cfg)
        refresh(store, cfg, fork, backfill_days=0, backfill_step=1, now=now)
        st = sync_store.load_status(store, fork)
        assert st.upstream_seen_at == 0 and st.upstream_unknown.startswith(why) and st.stale()
        doc = views.overview(store, fork, now, views.Policy())
        assert doc["upstream_as_of"] is None and doc["upstream_as_of_unknown"].startswith(why)
        assert doc["stale"]["stale"] and doc["stale"]["reason"].startswith(why)

        async def page() -> str:
            c = TestClient(TestServer(make_dashboard_app(Dashboard(store=store, clock=lambda: now))))
            await c.start_server()
            try:
                r = await c.get(f"/forks/{fork}/")
                return await r.text()
            finally:
                await c.close()
        html = asyncio.run(page())
        cell = html[html.index('id="upstream-as-of"'):].split("</td>")[0]
        assert "(current)" not in cell and f"unknown: upstream pinned to {sha[:12]}" in cell
        assert "Upstream as of unknown: these numbers are not current" in html
    finally:
        store.close()


def test_units_that_apply_left_in_flight_are_listed_with_no_pr(tmp_path, monkeypatch, capsys):
    """After `forksync apply` of two units (branches in the fork, no PR), the dashboard said "open
    units 0" while its Ledger page counted their commits IN_FLIGHT: the overview and the Units
    page list them as in flight with no PR yet, with their branch and upstream commits, the same
    commits the Ledger counts; a branch gone at the next refresh is gone from the pages."""
    import asyncio

    from aiohttp.test_utils import TestClient, TestServer

    from bot.cli.dashboard import refresh
    from bot.dashboard import views
    from bot.dashboard.web import Dashboard, make_dashboard_app
    from bot.demo.repobuilder import run_git
    from bot.store import Store
    from tests.support.plan_repos import build_pair

    pair = build_pair(tmp_path)
    monkeypatch.chdir(tmp_path)
    u = pair.u
    g = ["--fork", str(pair.fork.path), "--upstream", str(pair.up.path)]
    bundle, chain = f"bundle-{u['u1'][:12]}", f"chain-{u['u5'][:12]}"
    assert main(["apply", bundle, *g]) == 0
    assert main(["apply", chain, *g]) == 1            # stopped at its conflict: the branch is in flight all the same
    capsys.readouterr()
    cfg = load_config(None, {"fork.url": str(pair.fork.path), "upstream.url": str(pair.up.path)})
    fork, now = fork_name(cfg), datetime(2026, 6, 1, tzinfo=timezone.utc).timestamp()
    store = Store(tmp_path / "forksync.db")
    try:
        refresh(store, cfg, fork, backfill_days=0, backfill_step=1, now=now)
        ov = views.overview(store, fork, now, views.Policy())
        assert sorted((x["id"], x["pr"], x["state"]) for x in ov["open_units"]) == [
            (bundle, None, f"in flight: branch forksync/{bundle}, no PR yet"),
            (chain, None, f"in flight: branch forksync/{chain}, no PR yet")]
        us = {x["id"]: x for x in views.units(store, fork, now, views.Policy())["units"]}
        assert {k: us[bundle][k] for k in ("pr", "url", "pr_state", "branch", "gate", "upstream")} == {
            "pr": None, "url": None, "pr_state": "in-flight", "branch": f"forksync/{bundle}", "gate": "not opened",
            "upstream": [u["u1"], u["u3"], u["u6"], u["u7"], u["u9"]]}
        assert us[chain]["upstream"] == [u["u5"]] and us[chain]["pr_state"] == "in-flight"
        assert us[f"chain-{u['u2'][:12]}"]["pr_state"] == "planned"
        led = views.ledger(store, fork, now, views.Policy(), {"disposition": ["IN_FLIGHT"]})
        assert led["counts"]["IN_FLIGHT"] == 6 == sum(len(x["upstream"]) for x in ov["open_units"] if x.get("in_flight"))
        assert sorted(e["sha"] for e in led["entries"]) == sorted(us[bundle]["upstream"] + us[chain]["upstream"])

        async def page(path: str) -> str:
            c = TestClient(TestServer(make_dashboard_app(Dashboard(store=store, clock=lambda: now))))
            await c.start_server()
            try:
                return await (await c.get(path)).text()
            finally:
                await c.close()
        html = asyncio.run(page(f"/forks/{fork}/units"))
        row = html[html.index(f'id="unit-{bundle}"'):].split("</tr>")[0]
        assert f"no PR yet <span class=\"muted\">(forksync/{bundle})</span>" in row and ">5<" in row
        assert '<div class="v" id="open-units">2</div>' in asyncio.run(page(f"/forks/{fork}/"))

        run_git(pair.fork.path, "branch", "-D", f"forksync/{chain}")
        refresh(store, cfg, fork, backfill_days=0, backfill_step=1, now=now + 60)
        assert [x["id"] for x in views.overview(store, fork, now + 60, views.Policy())["open_units"]] == [bundle]
        assert chain not in {x["id"] for x in views.units(store, fork, now + 60, views.Policy())["units"]
                             if x["pr_state"] == "in-flight"}
    finally:
        store.close()
