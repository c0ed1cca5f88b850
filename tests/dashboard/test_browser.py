"""Every dashboard page in a real browser: Debian's Chromium driven by Playwright (launched with
the system executable; ``.ci/run`` installs the package). On a store built from the demo
scenario's repositories (as ``forksync dashboard --config`` builds it) and on a store of the
real fork's size: the numbers on each page equal its JSON twin, the plots render with one point
per data point, the browser logs no error, and no request leaves 127.0.0.1.

``FORKSYNC_SCREENSHOTS=DIR`` also saves a screenshot of each page there (docs/dashboard.md).
"""
from __future__ import annotations

import asyncio
import json
import os
import threading
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bot.dashboard.web import Dashboard, make_dashboard_app
from bot.store import Store
from tests.support.dashboard_world import FORK, HOSTILE_UNIT, NOW, REGRESSION, WOBBLE, fill, hostile_l2_point, wobbly_l2_series

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (.ci/run installs it)")


class Served:
    """The dashboard app on 127.0.0.1 (a free port) in a thread with its own event loop."""

    def __init__(self, dashboard: Dashboard | None, before=None):
        """``before``: a coroutine function run on the server's loop first; it returns the
        Dashboard to serve (for one that needs other servers on that loop)."""
        from aiohttp import web

        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run():
            asyncio.set_event_loop(self.loop)
            d = dashboard if before is None else self.loop.run_until_complete(before())
            self.runner = web.AppRunner(make_dashboard_app(d), access_log=None)
            self.loop.run_until_complete(self.runner.setup())
            site = web.TCPSite(self.runner, "127.0.0.1", 0)
            self.loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]   # noqa: SLF001 - the port the OS chose
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert ready.wait(30)
        self.url = f"http://127.0.0.1:{self.port}"

    def api(self, path: str) -> dict:
        with urllib.request.urlopen(self.url + path) as r:
            return json.load(r)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory):
    """The demo scenario's fork, computed as ``forksync dashboard --config`` does (history backfilled)."""
    from datetime import date

    from bot.cli.dashboard import fork_name, refresh
    from bot.config.forksync import load_config
    from bot.demo.scenario import build_scenario
    from bot.sync import snapshots

    root = tmp_path_factory.mktemp("dash-demo")
    s = build_scenario(root / "demo")
    cfg = load_config(str(s.config_path))
    # the scenario's history is dated January 2026: keep its points whatever today is (the
    # default 400 days would drop them from 2027-02 on, and the plot's points with them)
    cfg = cfg.model_copy(update={"github": cfg.github.model_copy(update={"metrics_keep_days": 3650})})
    store = Store(root / "forksync.db")
    name = fork_name(cfg)
    snapshots.backfill(store, name, cfg, days=6, step_days=1, today=date(2026, 1, 9))
    refresh(store, cfg, name, backfill_days=0, backfill_step=1)
    site = Served(Dashboard(store=store))
    yield site, name
    site.close()
    store.close()


REAL_FORK = Path("/work/.mirror/facebookexperimental+triton/repo")


@pytest.fixture(scope="module")
def real_fork_site(tmp_path_factory):
    """The real Triton fork (a snapshot mirror; skipped where it is absent), as ``forksync dashboard
    --config examples/triton-fork.yml --upstream $R --fork $R --upstream-ref a4ce9c2a2`` computes it:
    three points of history four weeks apart up to upstream's tip, then the state now."""
    if not (REAL_FORK / "HEAD").exists():
        pytest.skip(f"the real fork's mirror is not at {REAL_FORK}")
    from bot.cli.dashboard import refresh
    from bot.config.forksync import load_config

    root = tmp_path_factory.mktemp("dash-real-fork")
    cfg = load_config(str(Path(__file__).resolve().parents[2] / "examples" / "triton-fork.yml"),
                      {"upstream.url": str(REAL_FORK), "fork.url": str(REAL_FORK), "upstream.ref": "a4ce9c2a2"})
    # the mirror's history ends in 2026: keep its points whatever today is (metrics_keep_days)
    cfg = cfg.model_copy(update={"cache_dir": str(root / "cache"),
                                 "github": cfg.github.model_copy(update={"metrics_keep_days": 3650})})
    store = Store(root / "forksync.db")
    refresh(store, cfg, "facebookexperimental/triton", backfill_days=56, backfill_step=28, upstream="triton-lang/triton")
    site = Served(Dashboard(store=store))
    yield site, "facebookexperimental/triton"
    site.close()
    store.close()


@pytest.fixture(scope="module")
def real_size_site(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("dash-real") / "forksync.db")
    fill(store, "real")
    site = Served(Dashboard(store=store, clock=lambda: NOW))
    yield site, FORK
    site.close()
    store.close()


def open_page(browser, site: Served, path: str, shot: str | None = None):
    """Open ``path``; returns the page after its plots rendered. Fails on a console error, a page
    error, or a request to any host but 127.0.0.1."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    errors, outside = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def route(r):
        if urlsplit(r.request.url).hostname != "127.0.0.1":
            outside.append(r.request.url)
            return r.abort()
        return r.continue_()
    page.route("**/*", route)
    resp = page.goto(site.url + path, wait_until="load")
    assert resp.status == 200, (path, resp.status)
    n = page.locator("div.plot").count()
    if n:
        page.wait_for_function(f"document.querySelectorAll('div.plot[data-rendered=\"1\"]').length === {n}", timeout=30_000)
    assert errors == [] and outside == [], (path, errors, outside)
    if shot and os.environ.get("FORKSYNC_SCREENSHOTS"):
        out = Path(os.environ["FORKSYNC_SCREENSHOTS"])
        out.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out / f"{shot}.png"), full_page=False)
    return ctx, page


def points(page, plot_id: str) -> int:
    """Markers drawn by a plot's first trace (one per data point)."""
    return page.evaluate(f"document.querySelector('#{plot_id} .scatterlayer .trace').querySelectorAll('path.point').length")


@pytest.mark.parametrize("which", ["demo", "real", "real-fork"])
def test_every_page_in_chromium(browser, request, which):
    site, fork = request.getfixturevalue({"demo": "demo_site", "real": "real_size_site", "real-fork": "real_fork_site"}[which])
    shot = (lambda name: f"{which}-{name}") if which == "real" else (lambda name: None)

    ctx, page = open_page(browser, site, f"/forks/{fork}/", shot("overview"))
    doc = site.api(f"/api/v1/forks/{fork}/overview")
    assert page.inner_text("#days-behind") == f"{doc['days_behind']:.2f}"
    assert page.inner_text("#backlog") == str(doc["backlog"])
    assert page.inner_text("#not-reached") == str(doc["not_reached"])
    assert page.inner_text("#open-units") == str(len(doc["open_units"]))
    assert points(page, "plot-overview") == len(doc["series"]) >= 2
    ctx.close()

    ctx, page = open_page(browser, site, f"/forks/{fork}/ledger?disposition=PENDING", shot("ledger"))
    doc = site.api(f"/api/v1/forks/{fork}/ledger?disposition=PENDING")
    assert doc["total"] == doc["counts"]["PENDING"] > 0
    assert page.inner_text("#total").startswith(f"{doc['total']} matching upstream commit(s)")
    assert page.locator("#ledger tr").count() == len(doc["entries"]) + 1
    first = doc["entries"][0]["sha"]
    ctx.close()
    ctx, page = open_page(browser, site, f"/forks/{fork}/ledger/{first}", shot("ledger-entry"))
    assert page.inner_text("#disposition").startswith("PENDING")
    ctx.close()

    ctx, page = open_page(browser, site, f"/forks/{fork}/units", shot("units"))
    doc = site.api(f"/api/v1/forks/{fork}/units")
    if doc["units"]:
        assert points(page, "plot-units") == len(doc["units"])
        assert page.locator("#units tr").count() == len(doc["units"]) + 1
    ctx.close()

    ctx, page = open_page(browser, site, f"/forks/{fork}/validation", shot("validation"))
    doc = site.api(f"/api/v1/forks/{fork}/validation")
    for i, s in enumerate(doc["l2"]):
        assert points(page, f"plot-l2-{i}") == len(s["points"])
    if doc["commits"]:
        assert page.locator("#grid tr").count() == len(doc["commits"]) + 1
    ctx.close()

    ctx, page = open_page(browser, site, f"/forks/{fork}/triage", shot("triage"))
    doc = site.api(f"/api/v1/forks/{fork}/triage")
    for cls, causes in doc["causes"].items():
        if causes:
            assert page.locator(f"#causes-{cls} tr").count() == len(causes) + 1
    ctx.close()

    ctx, page = open_page(browser, site, "/health", shot("health"))
    doc = site.api("/api/v1/health")
    assert page.locator("#health-forks tr").count() == len(doc["forks"]) + 1
    ctx.close()


def test_real_size_numbers_and_series(browser, real_size_site):
    site, fork = real_size_site
    doc = site.api(f"/api/v1/forks/{fork}/overview")
    assert len(doc["series"]) == 365
    v = site.api(f"/api/v1/forks/{fork}/validation")
    assert len(v["l2"][0]["points"]) == 500 and any(c["confirmed"] for c in v["l2"][0]["change_points"])


def test_login_in_chromium_and_a_fork_only_for_readers(browser, tmp_path):
    """Deployed-serve access in the browser, against the local GitHub's OAuth web flow."""
    from bot.dashboard.access import GitHubLogin
    from bot.fakegithub.server import FakeGitHub

    store = Store(tmp_path / "forksync.db")
    fill(store)
    holder = {}

    async def before():
        fake = FakeGitHub(tmp_path / "fakegithub")
        await fake.start()
        fake.app = fake.create_app()
        fake.create_repo(FORK, private=True)
        for user in ("alice", "bob"):
            fake.create_user(user)
        fake.state.repos[FORK].collaborators["alice"] = "read"
        holder["fake"] = fake
        return Dashboard(store=store, clock=lambda: NOW, access=GitHubLogin(
            client_id=fake.app.client_id, client_secret=fake.app.client_secret, session_secret="s", api_url=fake.url))

    site = Served(None, before)
    fake = holder["fake"]
    try:
        fake.oauth_user = "alice"
        ctx, page = open_page(browser, site, f"/forks/{FORK}/")
        assert page.url == f"{site.url}/forks/{FORK}/"            # through /auth/login, GitHub and /auth/callback
        assert page.inner_text("#days-behind") == "3.25" and "alice" in page.inner_text("header")
        ctx.close()
        fake.oauth_user = "bob"
        ctx = browser.new_context()
        page = ctx.new_page()
        resp = page.goto(f"{site.url}/forks/{FORK}/", wait_until="load")
        assert resp.status == 404 and "3.25" not in page.content()
        page.goto(f"{site.url}/?all=1", wait_until="load")
        assert FORK not in page.inner_text("main")
        ctx.close()
    finally:
        asyncio.run_coroutine_threadsafe(fake.stop(), site.loop).result(30)
        site.close()
        store.close()


def test_a_stored_unit_is_shown_in_the_plot_as_written(browser, tmp_path):
    """An L2 unit holding "%{y}", markup and an entity: Chromium's hover label and y-axis title
    show the stored text itself — not the y value, not bold text — and draw no bold run."""
    store = Store(tmp_path / "forksync.db")
    fill(store)
    hostile_l2_point(store)
    site = Served(Dashboard(store=store, clock=lambda: NOW))
    try:
        doc = site.api(f"/api/v1/forks/{FORK}/validation")
        [i] = [i for i, s in enumerate(doc["l2"]) if s["unit"] == HOSTILE_UNIT]
        ctx, page = open_page(browser, site, f"/forks/{FORK}/validation")
        shown = page.evaluate("""id => {
            const gd = document.getElementById(id);
            Plotly.Fx.hover(gd, [{curveNumber: 0, pointNumber: 0}]);
            const text = sel => Array.from(gd.querySelectorAll(sel)).map(t => t.textContent);
            return {hover: text('.hoverlayer .hovertext text.nums tspan.line'), title: text('.g-ytitle text'),
                    bold: gd.querySelectorAll('.hoverlayer tspan[style*="bold"]').length};
        }""", f"plot-l2-{i}")
        ctx.close()
        point = doc["l2"][i]["points"][0]
        assert shown == {"hover": [f"1.500 {HOSTILE_UNIT}", f"{point['sha'][:12]} {point['time']}"],
                         "title": [HOSTILE_UNIT], "bold": 0}
    finally:
        site.close()
        store.close()


def test_a_change_point_merged_from_several_says_so_with_their_commits(browser, tmp_path):
    """The wobble detection merged into the regression: the regression's row says it stands for
    two change points and links both commits, the wobble's row (muted) says which one it went into
    and why it never alerts — in Chromium, as the JSON twin gives them."""
    store = Store(tmp_path / "forksync.db")
    fill(store)
    shas = wobbly_l2_series(store)
    site = Served(Dashboard(store=store, clock=lambda: NOW))
    try:
        doc = site.api(f"/api/v1/forks/{FORK}/validation")
        [i] = [i for i, s in enumerate(doc["l2"]) if s["series"] == "attn[triton]:1024:bf16@h100"]
        cps = [(c["sha"], c["alert"], c["merged"], c["merged_into"], c["merged_from"]) for c in doc["l2"][i]["change_points"]]
        assert cps == [(shas[WOBBLE], False, True, shas[REGRESSION], []),
                       (shas[REGRESSION], True, False, None, [shas[WOBBLE], shas[REGRESSION]])]
        ctx, page = open_page(browser, site, f"/forks/{FORK}/validation")
        table = page.locator("table.cps").nth(i)
        rows = table.locator("tr")
        assert rows.count() == 3
        wobble, regression = rows.nth(1), rows.nth(2)
        assert regression.locator("td.merging").inner_text() == (
            f"merged from 2 change points: {shas[WOBBLE][:12]}, {shas[REGRESSION][:12]}; its shift is measured "
            "across them all")
        assert regression.locator("td.merging a").evaluate_all("as => as.map(a => a.href)") == [
            f"https://github.com/{FORK}/commit/{shas[WOBBLE]}", f"https://github.com/{FORK}/commit/{shas[REGRESSION]}"]
        assert wobble.locator("td.merging").inner_text() == (
            f"merged into {shas[REGRESSION][:12]}: below the threshold, next to a segment too short for the alert "
            "rule (never alerts)")
        assert wobble.get_attribute("class") == "muted" and regression.get_attribute("class") is None
        assert [rows.nth(k).locator("td").nth(2).inner_text() for k in (1, 2)] == ["no", "yes"]
        ctx.close()
    finally:
        site.close()
        store.close()


def test_failed_and_unknown_refreshes_read_stale_in_chromium(browser, tmp_path):
    """What a reader sees of three forks whose refresh failed or whose age is unknown: the fork's own
    fetch refused, a sync of the head upstream moved to failed, upstream last seen after now (a
    clock set back). Each page says STALE with its reason and never "(current)"; the fork list too."""
    from bot.sync import store as sync_store
    from bot.sync.status import SyncStatus
    store = Store(tmp_path / "s.db")
    seen = dict(upstream="up/triton", upstream_head="a" * 40, fork_head="b" * 40, frontier="c" * 40, days_behind=1.5,
                backlog=3, computed_at=NOW - 600, last_fetch_at=NOW - 60)
    cases = {"meta/forkfetch": (dict(upstream_seen_at=NOW - 600, last_fetch_error="fetch of the fork meta/forkfetch failed: "
                                     "git fetch -q --prune failed (128): remote: Repository not found."),
                                "the last refresh failed: fetch of the fork meta/forkfetch failed"),
             "meta/moved": (dict(upstream_seen_at=NOW - 600, last_fetch_error="upstream moved to ffffffffffff; its sync "
                                 "failed: GitHubAPIError: 502"), "the last refresh failed: upstream moved to ffffffffffff"),
             "meta/ahead": (dict(upstream_seen_at=NOW + 2 * 86_400), "later than this clock's now")}
    for fork, (kw, _) in cases.items():
        sync_store.save_status(store, SyncStatus(repo=fork, **seen, **kw))
    site = Served(Dashboard(store=store, clock=lambda: NOW))
    try:
        for fork, (_, reason) in cases.items():
            ctx, page = open_page(browser, site, f"/forks/{fork}/")
            banner = page.inner_text("#stale-banner")
            assert banner.startswith("STALE — ") and reason in banner and "not current" in banner, banner
            assert "(current)" not in page.inner_text("#upstream-as-of"), page.inner_text("#upstream-as-of")
            ctx.close()
        ctx, page = open_page(browser, site, "/")
        text = page.inner_text("body")
        assert text.count("STALE") >= 3 and " current" not in text.replace("not current", ""), text
        ctx.close()
    finally:
        site.close()
