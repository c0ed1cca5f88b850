"""The dashboard's pages and JSON twins over a real store (aiohttp test server): exact numbers,
links to GitHub, the stale banner, and bad input answered with a clear page or JSON error."""
from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from urllib.parse import quote

import markupsafe
import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app import queue as q
from bot.app.web import make_app, mount_dashboard
from bot.dashboard import views
from bot.dashboard.web import Dashboard, make_dashboard_app
from bot.store import Store
from bot.sync import store as sync_store
from bot.validation import store as vstore
from gpu_runner.result import Counts, Environment, RunResult
from tests.support.dashboard_world import FORK, NOW, fill, sha


async def client_for(store: Store, **kw) -> TestClient:
    c = TestClient(TestServer(make_dashboard_app(Dashboard(store=store, clock=lambda: NOW, **kw))))
    await c.start_server()
    return c


@pytest.fixture
async def world():
    store = Store()
    fill(store)
    c = await client_for(store, queue_counts=lambda: {"queued": 1, "done": 5}, app_facts=lambda: {
        "status": "ok", "problems": [], "deliveries": {"queued": 1, "done": 5}, "dead": [], "recent_errors": [],
        "worker_heartbeat": NOW - 5})
    yield store, c
    await c.close()


async def get_json(c: TestClient, path: str, status: int = 200) -> dict:
    r = await c.get(path)
    assert r.status == status, (path, r.status, await r.text())
    assert r.content_type == "application/json"
    return await r.json()


async def get_page(c: TestClient, path: str, status: int = 200) -> str:
    r = await c.get(path)
    assert r.status == status, (path, r.status)
    assert r.content_type == "text/html"
    assert "default-src 'none'" in r.headers["Content-Security-Policy"]
    return await r.text()


async def test_overview_page_and_json_carry_the_same_numbers(world):
    store, c = world
    doc = await get_json(c, f"/api/v1/forks/{FORK}/overview")
    assert doc["schema"] == "forksync.dashboard.overview/1"
    assert (doc["days_behind"], doc["backlog"], doc["not_reached"]) == (3.25, 42, 4)
    assert doc["frontier"] == {"sha": sha("u", 35), "url": f"https://github.com/triton-lang/triton/commit/{sha('u', 35)}"}
    assert doc["upstream_as_of"] == views.iso(NOW - 600) == "2026-05-28T20:16:40Z"
    # the two commit times Days Behind is measured between (3.25 days apart)
    assert (doc["upstream_head_at"], doc["frontier_at"]) == ("2026-05-28T17:26:40Z", "2026-05-25T11:26:40Z")
    assert doc["stale"] == {"stale": False, "reason": ""}
    assert len(doc["series"]) == 6 and doc["series"][-1]["at"] == "2026-05-28T20:16:40Z"
    assert [ld["frontier"] for ld in doc["landings"]] == [sha("u", 1)]         # k // 3 moved once in 6 days
    assert doc["queue"] == {"queued": 1, "done": 5} and doc["open_root_causes"] == 2
    html = await get_page(c, f"/forks/{FORK}/")
    assert '<div class="v" id="days-behind">3.25</div>' in html and '<div class="v" id="backlog">42</div>' in html
    assert 'data-points="6"' in html and "2026-05-28 20:16 UTC" in html and "STALE" not in html
    assert f'<span class="sha">{sha("u", 39)[:12]}</span>, committed 2026-05-28 17:26 UTC' in html
    assert ", committed 2026-05-25 11:26 UTC</td>" in html
    assert '<script defer src="/static/plotly.min.js"></script>' in html
    assert not re.search(r'(src|href)="https?://(?!github\.com/)', html)       # nothing from another host but links to GitHub


def shown(text: str) -> str:
    """``text`` as the page's HTML escapes it."""
    return text.replace("'", "&#39;")


async def test_upstream_moved_back_is_one_line_of_the_overview_a_notice_or_degraded(world):
    """A rewind the status records (bot.sync.rewind.record) is one line of the overview, page and
    JSON: a notice when nothing is held and nothing it took was landed, degraded when the fork
    landed picks of what it took (named on the line), with upstream as of when; absent otherwise."""
    store, c = world
    assert (await get_json(c, f"/api/v1/forks/{FORK}/overview"))["upstream_moved_back"] is None
    assert 'id="upstream-moved-back"' not in await get_page(c, f"/forks/{FORK}/")
    st = sync_store.load_status(store, FORK)
    notice = {"ref": "main", "from": sha("u", 39), "to": sha("u", 37), "commits": [], "units": [], "landed": [], "at": NOW}
    sync_store.save_status(store, replace(st, rewound=notice))
    doc = (await get_json(c, f"/api/v1/forks/{FORK}/overview"))["upstream_moved_back"]
    assert doc == {"line": f"upstream's main moved back from {sha('u', 39)[:12]} to {sha('u', 37)[:12]}: nothing held, "
                           "nothing landed of what it took", "degraded": False, "from": sha("u", 39), "to": sha("u", 37),
                   "held": 0, "landed": []}
    html = await get_page(c, f"/forks/{FORK}/")
    assert f'<p id="upstream-moved-back"><b>notice</b>: {shown(doc["line"])} (upstream as of 2026-05-28 20:16 UTC)</p>' in html
    landed = [{"sha": sha("u", 38), "subject": "Set b (#1)"}]
    sync_store.save_status(store, replace(st, rewound={**notice, "landed": landed}))
    doc = (await get_json(c, f"/api/v1/forks/{FORK}/overview"))["upstream_moved_back"]
    assert doc["degraded"] is True and doc["landed"] == landed and "1 landed pick(s)" in doc["line"]
    html = await get_page(c, f"/forks/{FORK}/")
    assert (f'degraded</b>: {shown(doc["line"])} (upstream as of 2026-05-28 20:16 UTC); '
            f'landed: <span class="sha">{sha("u", 38)[:12]}</span> Set b (#1)</p>') in html


async def test_stale_banner_when_the_last_refresh_failed():
    store = Store()
    fill(store, stale=True)
    c = await client_for(store)
    try:
        doc = await get_json(c, f"/api/v1/forks/{FORK}/overview")
        assert doc["stale"] == {"stale": True, "reason": "the last fetch of upstream failed: fetch of triton-lang/triton failed: 502"}
        for page in ("", "units", "ledger", "validation", "triage"):
            html = await get_page(c, f"/forks/{FORK}/{page}")
            assert 'id="stale-banner">STALE — the last fetch of upstream failed' in html
    finally:
        await c.close()


async def test_units_graph_blocked_and_deleted_pr(world):
    store, c = world
    doc = await get_json(c, f"/api/v1/forks/{FORK}/units")
    by = {u["id"]: u for u in doc["units"]}
    bundle, chain = f"bundle-{sha('u', 1600)[:12]}", f"chain-{sha('u', 1650)[:12]}"
    gone, planned = f"chain-{sha('u', 1660)[:12]}", f"bundle-{sha('u', 1690)[:12]}"
    assert set(by) == {bundle, chain, gone, planned}
    assert (by[bundle]["gate"], by[bundle]["pr_state"], by[bundle]["url"]) == ("red", "open", f"https://github.com/{FORK}/pull/301")
    assert [(s["suite"], s["verdict"]) for s in by[bundle]["suites"]] == [("kernels", "pass"), ("lit", "fail")]
    assert by[chain]["gate"] == "blocked at a conflict" and by[chain]["conflict_sha"] == sha("u", 1651)
    assert (by[gone]["pr_state"], by[gone]["url"], by[gone]["gate"]) == ("missing", None, "not opened")
    assert by[planned]["pr_state"] == "planned" and by[bundle]["age_s"] == 5 * 86_400
    assert sorted((e["from"], e["to"]) for e in doc["edges"]) == sorted([(chain, bundle), (gone, chain)])
    html = await get_page(c, f"/forks/{FORK}/units")
    assert "#303 <span class=\"muted\">(gone)</span>" in html and 'data-points="4"' in html


async def test_ledger_filters_search_and_evidence(world):
    store, c = world
    doc = await get_json(c, f"/api/v1/forks/{FORK}/ledger?limit=5")
    assert doc["total"] == 40 and len(doc["entries"]) == 5 and sum(doc["counts"].values()) == 40
    e = doc["entries"][0]
    assert e["url"] == f"https://github.com/triton-lang/triton/commit/{sha('u', 0)}" and e["pr_url"].endswith("/pull/5000")
    pending = await get_json(c, f"/api/v1/forks/{FORK}/ledger?disposition=PENDING&limit=500")
    assert pending["total"] == doc["counts"]["PENDING"] and {x["disposition"] for x in pending["entries"]} == {"PENDING"}
    assert [x["index"] for x in (await get_json(c, f"/api/v1/forks/{FORK}/ledger?q=%235007"))["entries"]] == [7]
    assert [x["index"] for x in (await get_json(c, f"/api/v1/forks/{FORK}/ledger?q={sha('u', 9)[:10]}"))["entries"]] == [9]
    assert (await get_json(c, f"/api/v1/forks/{FORK}/ledger?q=change+number+12"))["total"] == 1
    html = await get_page(c, f"/forks/{FORK}/ledger?disposition=PENDING")
    assert f'<p id="total">{pending["total"]} matching upstream commit(s).</p>' in html
    one = await get_json(c, f"/api/v1/forks/{FORK}/ledger/{sha('u', 7)[:9]}")
    assert one["entry"]["sha"] == sha("u", 7)
    page = await get_page(c, f"/forks/{FORK}/ledger/{sha('u', 7)}")
    assert sha("u", 7) in page and one["entry"]["disposition"] in page


async def test_validation_grid_trunk_red_and_l2(world):
    store, c = world
    doc = await get_json(c, f"/api/v1/forks/{FORK}/validation")
    assert doc["suites"] == ["kernels", "lit"]
    head = next(x for x in doc["commits"] if x["pr"] == 301)
    assert head["cells"]["lit"][0]["state"] == "short" and head["cells"]["kernels"][0]["state"] == "green"
    assert doc["trunk_red"] == {"red": True, "since_sha": sha("t", 4), "since": views.iso(NOW - 2 * 3600), "for_s": 7200.0,
                                "results": 2}
    matmul, softmax = doc["l2"]
    assert len(matmul["points"]) == 12 and len(softmax["points"]) == 1 and softmax["change_points"] == []
    assert matmul["regressions"][0]["issue_url"] == f"https://github.com/{FORK}/issues/77"
    picked = next(e for e in (await get_json(c, f"/api/v1/forks/{FORK}/ledger?limit=500"))["entries"] if e["fork_commit"] == sha("f", 1))
    assert matmul["regressions"][0]["culprit_upstream"] == picked["sha"] == sha("u", 1)
    html = await get_page(c, f"/forks/{FORK}/validation")
    assert "Trunk is red</b> for 2.0 h" in html and 'data-points="12"' in html and 'data-points="1"' in html
    assert "Too few points for change-point detection" in html


async def test_triage_classes_apart_with_sparklines(world):
    store, c = world
    doc = await get_json(c, f"/api/v1/forks/{FORK}/triage")
    assert len(doc["nightlies"]) == 30
    assert doc["nightlies"][-1] == {"run": "nightly-29", "time": views.iso(NOW - 86_400), "processed_at": views.iso(NOW - 82_800)}
    assert [len(doc["causes"][k]) for k in ("real", "infrastructure", "flaky")] == [2, 1, 1]
    c0 = next(x for x in doc["causes"]["real"] if x["key"] == "cause-000")
    assert c0["failing"] == [1 if j % 3 == 0 else 0 for j in range(30)] and c0["suspects"]["culprit"] == sha("t", 4)
    assert c0["issue_url"] == f"https://github.com/{FORK}/issues/400"
    html = await get_page(c, f"/forks/{FORK}/triage")
    assert html.count('<span class="f"></span>') == sum(sum(x["failing"]) for g in doc["causes"].values() for x in g)


async def test_health_same_facts_as_healthz(tmp_path):
    store = Store(tmp_path / "f.db")
    fill(store)
    q.enqueue(store, delivery_id="d1", hook_id="1", event="push", body=b"{}", now=NOW - 100)
    app = make_app(store, "s3cret", clock=lambda: NOW)
    mount_dashboard(app, Store(tmp_path / "f.db"), clock=lambda: NOW)
    c = TestClient(TestServer(app))
    await c.start_server()
    try:
        healthz = await (await c.get("/healthz")).json()
        doc = await get_json(c, "/api/v1/health")
        assert doc["deliveries"] == healthz["queue"] and doc["status"] == healthz["status"] == "ok"
        assert doc["forks"][0]["fork"] == FORK and doc["forks"][0]["stale"]["stale"] is False
        html = await get_page(c, "/health")
        assert '<span id="status" style="color:#22863a">ok</span>' in html
        # the webhook beside it still answers as before
        assert (await c.post("/webhook", data=b"{}")).status == 401
        body = json.dumps(doc) + html
        assert "s3cret" not in body
    finally:
        await c.close()


async def test_health_names_each_forks_failing_jobs(tmp_path):
    """A fork's failing jobs (a scheduled run, a status issue GitHub cannot hold) are on the health
    page from the first failure, not only once /healthz counts enough of them to turn red."""
    from bot.sync import store as sync_store

    store = Store(tmp_path / "f.db")
    fill(store)
    sync_store.record_job(store, FORK, "status-issue", "Issues are disabled on meta/triton (GitHub answered 410)", NOW - 60)
    app = make_app(store, "s3cret", clock=lambda: NOW)
    mount_dashboard(app, Store(tmp_path / "f.db"), clock=lambda: NOW)
    c = TestClient(TestServer(app))
    await c.start_server()
    try:
        doc = await get_json(c, "/api/v1/health")
        [job] = doc["forks"][0]["failing_jobs"]
        assert (job["job"], job["count"]) == ("status-issue", 1) and "Issues are disabled" in job["error"]
        html = await get_page(c, "/health")
        assert "status-issue" in html and "Issues are disabled on meta/triton" in html
    finally:
        await c.close()


@pytest.mark.parametrize("path, status, words", [
    ("/api/v1/forks/no/such/overview", 404, "no fork 'no/such'"),
    ("/api/v1/forks/meta/triton/nope", 404, "no API page 'nope'"),
    ("/api/v1/forks/meta/triton/ledger?since=2026-13-01", 400, "since='2026-13-01': give a date as YYYY-MM-DD"),
    ("/api/v1/forks/meta/triton/ledger?limit=0", 400, "limit between 1 and 500"),
    ("/api/v1/forks/meta/triton/ledger?disposition=MAYBE", 400, "disposition='MAYBE'"),
    ("/api/v1/forks/meta/triton/ledger/zzzzzzz", 400, "is not a commit"),
    ("/api/v1/forks/meta/triton/ledger/1234567", 404, "not in meta/triton's ledger"),
    ("/api/v1/nothing", 404, "no page at /api/v1/nothing"),
])
async def test_bad_input_is_a_json_error(world, path, status, words):
    store, c = world
    doc = await get_json(c, path, status)
    assert doc["schema"] == "forksync.dashboard.error/1" and words in doc["error"] and doc["status"] == status


@pytest.mark.parametrize("path, status, words", [
    ("/forks/no/such/", 404, "no fork &#39;no/such&#39;"),
    ("/forks/meta/triton/nope", 404, "no page &#39;nope&#39;"),
    ("/nowhere", 404, "no page at /nowhere"),
    ("/static/secrets.txt", 404, "no static file"),
])
async def test_bad_input_is_a_clear_page(world, path, status, words):
    store, c = world
    html = await get_page(c, path, status)
    assert words in html


@pytest.mark.parametrize("name", ["it's", 'say "hi"', """it's "so\"""", "tab\there"])
async def test_a_refusal_names_what_it_refused_as_python_writes_it(name):
    """A fork, page or file name in a refusal reads exactly as ``repr`` writes it, whichever quotes
    (or escapes) it needs: a reader copies it back as it was asked."""
    from aiohttp import web as aioweb

    from bot.dashboard.access import ALLOWED_KEY, UNASKED_KEY
    unasked = [False]

    @aioweb.middleware
    async def no_reader(request, handler):
        request[ALLOWED_KEY] = lambda fork: fork == FORK
        request[UNASKED_KEY] = unasked[0]
        return await handler(request)

    store = Store()
    fill(store)
    app = make_dashboard_app(Dashboard(store=store, clock=lambda: NOW))
    app.middlewares.append(no_reader)
    c = TestClient(TestServer(app))
    await c.start_server()
    q = quote(name, safe="")
    pages = "overview, units, ledger, validation, triage"
    try:
        assert (await get_json(c, f"/api/v1/forks/{FORK}/{q}", 404))["error"] == f"no API page {name!r}: the pages are {pages}"
        assert (await get_json(c, f"/api/v1/forks/o/{q}/overview", 404))["error"] == f"no fork {'o/' + name!r} here, or you may not read it"
        unasked[0] = True
        assert (await get_json(c, f"/api/v1/forks/o/{q}/overview", 503))["error"] == (
            f"GitHub could not be asked whether you may read {'o/' + name!r} (it did not answer the permission check): try again in a moment")
        for path, words in [(f"/forks/{FORK}/{q}", f"no page {name!r}: the pages are {pages}"), (f"/static/{q}", f"no static file {name!r}")]:
            assert f'<div class="error" id="error">{markupsafe.escape(words)}</div>' in await get_page(c, path, 404)
    finally:
        await c.close()


async def test_empty_store_and_a_fork_never_synced():
    store = Store()
    c = await client_for(store)
    try:
        assert (await get_json(c, "/api/v1/forks"))["forks"] == []
        assert 'id="empty"' in await get_page(c, "/")
        assert (await get_json(c, "/api/v1/health"))["forks"] == []
        from bot.sync import store as sync_store
        sync_store.track(store, "o/new", "triton-lang/triton", "main", 1, 300)
        r = await c.get("/", allow_redirects=False)
        assert r.status == 302 and r.headers["Location"] == "/forks/o/new/"
        doc = await get_json(c, "/api/v1/forks/o/new/overview")
        assert doc["synced"] is False and doc["days_behind"] is None and doc["series"] == []
        assert doc["stale"] == {"stale": True, "reason": "never synced: upstream was never seen"}
        html = await get_page(c, "/forks/o/new/")
        assert 'id="never-synced"' in html and 'id="no-series"' in html
        for page in ("units", "ledger", "validation", "triage"):
            await get_json(c, f"/api/v1/forks/o/new/{page}")
            await get_page(c, f"/forks/o/new/{page}")
    finally:
        await c.close()


async def test_static_plotly_is_served_from_the_installed_package(world):
    store, c = world
    r = await c.get("/static/plotly.min.js")
    assert r.status == 200 and len(await r.read()) > 1_000_000
    assert (await c.get("/static/dashboard.js")).status == 200


async def test_the_forks_own_stale_limit_from_its_last_sync():
    from bot.sync import snapshots
    from bot.sync import store as sync_store

    store = Store()
    fill(store)
    st = sync_store.load_status(store, FORK)        # upstream seen 600 s before NOW
    snapshots.record_sync(store, st, at=NOW - 600, contiguous_lag_days=1.0, ledger=None, stale_after_s=300)
    c = await client_for(store)
    try:
        doc = await get_json(c, f"/api/v1/forks/{FORK}/overview")
        assert doc["stale"] == {"stale": True, "reason": "upstream was last seen 0.2 h ago (limit 0.0833333 h)"}
    finally:
        await c.close()


def test_trunk_is_green_only_with_a_result_and_says_how_many():
    green = [{"suite": "kernels", "platform": "h200", "verdict": "pass", "sha": sha("t", 1), "updated_at": NOW - 60},
             {"suite": "lit", "platform": "cpu", "verdict": "pass", "sha": sha("t", 1), "updated_at": NOW - 30}]
    assert views.trunk_red(green, NOW) == {"red": False, "since_sha": None, "since": None, "for_s": None, "results": 2}
    assert views.trunk_red([], NOW)["results"] == 0


def _cause(key: str, run: str, t: int) -> tuple:
    d = {"key": key, "cls": "real", "title": f"RuntimeError: {key}", "signature": key, "state": "open", "issue": 9,
         "fail_runs": [[run, t, sha("t", 0)]], "platforms": ["h100"], "tests": ["test_x"], "first_seen": t, "last_seen": t,
         "green_streak": 0, "crash": False, "labels": [], "sample": "", "last_green": "", "first_red": sha("t", 1)}
    return (key, json.dumps(d), t)


async def test_each_fork_shows_only_its_own_root_causes():
    from bot.triage import store as triage_store

    store = Store()
    fill(store)
    other = "meta/other-fork"
    fill(store, fork=other, shared=False)
    triage_store.save_state_rows(store, other, [_cause("other-cause", "other-1", int(NOW) - 3600)], [], ("other-1", int(NOW), "[]"))
    # a nightly triaged before nightlies named their fork, in a store of two forks: listed apart
    triage_store.save_state_rows(store, "", [_cause("old-cause", "old-1", int(NOW) - 7200)], [], ("old-1", int(NOW) - 60, "[]"))
    c = await client_for(store)
    try:
        mine = await get_json(c, f"/api/v1/forks/{FORK}/triage")
        theirs = await get_json(c, f"/api/v1/forks/{other}/triage")
        assert sorted(x["key"] for g in mine["causes"].values() for x in g) == ["cause-000", "cause-001", "cause-002", "cause-003"]
        assert [x["key"] for g in theirs["causes"].values() for x in g] == ["other-cause"]
        assert [n["run"] for n in theirs["nightlies"]] == ["other-1"] and len(mine["nightlies"]) == 30
        assert theirs["causes"]["real"][0]["issue_url"] == f"https://github.com/{other}/issues/9"
        for doc in (mine, theirs):
            assert [x["key"] for x in doc["unassigned"]["causes"]["real"]] == ["old-cause"]
            assert doc["unassigned"]["causes"]["real"][0]["issue_url"] is None
            assert [n["run"] for n in doc["unassigned"]["nightlies"]] == ["old-1"]
        assert (await get_json(c, f"/api/v1/forks/{other}/overview"))["open_root_causes"] == 1
        html = await get_page(c, f"/forks/{other}/triage")
        assert "RuntimeError: other-cause" in html and "RuntimeError: failure number 0" not in html
        assert 'id="unassigned"' in html and "RuntimeError: old-cause" in html
        forks = [f["fork"] for f in (await get_json(c, "/api/v1/forks"))["forks"]]
        assert forks == sorted([FORK, other])
    finally:
        await c.close()


async def test_a_refused_nightly_stays_on_the_triage_page():
    # the tick says a refusal once, in its log: the triage page keeps it, with the newer nightly
    # it ran before, so it is neither said on every tick nor gone with the log line
    from bot.triage import store as triage_store

    store = Store()
    fill(store)
    newest = triage_store.recent_runs(store, FORK, 1)[0]
    late = newest["nightly_at"] - 7200
    assert triage_store.record_refusal(store, FORK, "nightly-late", late, newest["run"], newest["nightly_at"], now=int(NOW) - 60)
    assert not triage_store.record_refusal(store, FORK, "nightly-late", late, newest["run"], newest["nightly_at"], now=int(NOW))
    c = await client_for(store)
    try:
        doc = await get_json(c, f"/api/v1/forks/{FORK}/triage")
        assert doc["refused"] == [{"run": "nightly-late", "time": "2026-05-27T18:26:40Z", "newest_run": "nightly-29",
                                   "newest_time": "2026-05-27T20:26:40Z", "refused_at": "2026-05-28T20:25:40Z"}]
        assert newest["run"] in [n["run"] for n in doc["nightlies"]] and "nightly-late" not in [n["run"] for n in doc["nightlies"]]
        html = await get_page(c, f"/forks/{FORK}/triage")
        section = re.search(r'<section id="refused">.*?</section>', html, re.S).group(0)
        assert "<h2>Not triaged <span class=\"muted\">(1)</span></h2>" in section
        assert ("<tr><td>nightly-late</td><td>2026-05-27 18:26 UTC</td><td>nightly-29</td><td>2026-05-27 20:26 UTC</td>"
                "<td>2026-05-28 20:25 UTC</td></tr>") in section
    finally:
        await c.close()
    # a fork with none shows no such section
    store = Store()
    fill(store)
    c = await client_for(store)
    try:
        assert (await get_json(c, f"/api/v1/forks/{FORK}/triage"))["refused"] == []
        assert 'id="refused"' not in await get_page(c, f"/forks/{FORK}/triage")
    finally:
        await c.close()


async def test_nightlies_sit_on_the_night_they_ran_not_when_processed(tmp_path, monkeypatch, capsys):
    # three nightlies triaged today with their own --date (a replay of past nights; triage takes
    # them in the order they ran and refuses an older one after a newer)
    from bot.cli.main import main
    from tests.triage.test_cli_nightly import CASES, LLVM, night

    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "t.db")
    for run, date in (("n1", "2026-11-01"), ("n2", "2026-11-02"), ("n3", "2026-11-03T06:30")):
        args = ["triage", "nightly", "--db", db, "--repo", "meta/x", "--run", run, "--date", date, "--commit", "c" * 40,
                "--platform", "h200", str(night(tmp_path, run, {c: LLVM for c in CASES[:2]}))]
        assert await asyncio.to_thread(main, args) == 0       # the CLI runs its own event loop
    capsys.readouterr()
    store = Store(db)
    c = await client_for(store)
    try:
        doc = await get_json(c, "/api/v1/forks/meta/x/triage")
        assert [(n["run"], n["time"]) for n in doc["nightlies"]] == [
            ("n1", "2026-11-01T00:00:00Z"), ("n2", "2026-11-02T00:00:00Z"), ("n3", "2026-11-03T06:30:00Z")]
        assert all(n["processed_at"] > "2026-12" for n in doc["nightlies"])    # processed now, kept apart
        html = await get_page(c, "/forks/meta/x/triage")
        assert "n1 ran 2026-11-01 00:00 UTC … n3 ran 2026-11-03 06:30 UTC" in html
        assert "<th>processed by triage</th>" in html
    finally:
        await c.close()


def _run(commit: str, suite: str, platform: str, outcome: str) -> RunResult:
    return RunResult(suite=suite, level="L1", commit=commit, platform=platform, verdict="green" if outcome == "pass" else "red",
                     outcome=outcome, counts=Counts(total=1, passed=int(outcome == "pass")), environment=Environment(runner_id="r"))


async def test_a_result_a_rerun_replaced_is_shown_apart_and_never_counted(tmp_path):
    # a red a person replaced with /forksync retest vanished from the pages: the row shows the
    # re-run only, and nothing said a red had been there
    store = Store(tmp_path / "f.db")
    fill(store)
    head, tip = sha("h", 301), sha("t", 5)
    pend = dict(repo=FORK, pr=301, sha=head, level="L1", backend="local")
    # lit on the bundle's head: red (already in the store, from before attempts were kept), run
    # again red, then a retest turns it green
    red = vstore.mark_pending(store, suite="lit", platform="cpu", now=NOW - 1000, **pend)
    assert vstore.record(store, repo=FORK, pr=301, result=_run(head, "lit", "cpu", "fail"), now=NOW - 900, answers=red) is None
    green = vstore.mark_pending(store, suite="lit", platform="cpu", now=NOW - 800, **pend)
    assert vstore.record(store, repo=FORK, pr=301, result=_run(head, "lit", "cpu", "pass"), now=NOW - 700, answers=green) is None
    # kernels (green in the store): a retest, and another while that one worked; the first
    # retest's red arrives after the second was asked
    first = vstore.mark_pending(store, suite="kernels", platform="h100", now=NOW - 650, **pend)
    second = vstore.mark_pending(store, suite="kernels", platform="h100", now=NOW - 640, **pend)
    assert vstore.record(store, repo=FORK, pr=301, result=_run(head, "kernels", "h100", "fail"), now=NOW - 630,
                         answers=first) == second
    assert vstore.record(store, repo=FORK, pr=301, result=_run(head, "kernels", "h100", "pass"), now=NOW - 620,
                         answers=second) is None
    # trunk's red tip, run again green
    again = vstore.mark_pending(store, repo=FORK, pr=0, sha=tip, suite="kernels", platform="h100", level="L1",
                                backend="local", now=NOW - 300)
    assert vstore.record(store, repo=FORK, pr=0, result=_run(tip, "kernels", "h100", "pass"), now=NOW - 200, answers=again) is None

    app = make_app(store, "s3cret", clock=lambda: NOW)
    mount_dashboard(app, Store(tmp_path / "f.db"), clock=lambda: NOW)
    c = TestClient(TestServer(app))
    await c.start_server()
    try:
        doc = await get_json(c, f"/api/v1/forks/{FORK}/validation")
        cells = {x["sha"]: x["cells"] for x in doc["commits"]}
        lit, kernels = cells[head]["lit"][0], cells[head]["kernels"][0]
        assert (lit["state"], kernels["state"]) == ("green", "green")
        assert [(x["attempt"], x["outcome"], x["by"], x["how"]) for x in lit["superseded"]] == [
            ("?", "fail", red, "replaced"), (red, "fail", green, "replaced")]
        assert lit["superseded"][1]["at"] == views.iso(NOW - 800)
        assert [(x["attempt"], x["outcome"], x["by"], x["how"]) for x in kernels["superseded"]] == [
            ("?", "pass", first, "replaced"), (first, "fail", second, "late")]
        assert cells[tip]["kernels"][0]["state"] == "green"
        assert [x["outcome"] for x in cells[tip]["kernels"][0]["superseded"]] == ["fail"]
        # never the current result: trunk is green again, the unit's gate green, health ok
        assert doc["trunk_red"]["red"] is False
        units = {u["id"]: u for u in (await get_json(c, f"/api/v1/forks/{FORK}/units"))["units"]}
        bundle = units[f"bundle-{sha('u', 1600)[:12]}"]
        assert bundle["gate"] == "green" and [s["verdict"] for s in bundle["suites"]] == ["pass", "pass"]
        assert [x["by"] for s in bundle["suites"] for x in s["superseded"]] == [first, second, red, green]
        health = await get_json(c, "/api/v1/health")
        assert (health["status"], health["problems"]) == ("ok", [])
        assert (await (await c.get("/healthz")).json())["status"] == "ok"

        html = await get_page(c, f"/forks/{FORK}/validation")
        row = re.search(rf'<tr><td><a class="sha" href="[^"]*{head}">.*?</tr>', html, re.S).group(0)
        assert "state-red" not in row
        assert re.search(rf'<div class="superseded muted"[^>]*>fail of run {red}: superseded by run {green}, not counted</div>', row)
        assert re.search(rf'<div class="superseded muted"[^>]*>fail of run {first}: superseded by run {second} '
                         r'\(arrived after it was asked\), not counted</div>', row)
        page = await get_page(c, f"/forks/{FORK}/units")
        unit = re.search(rf'<tr id="unit-{bundle["id"]}">.*?</tr>', page, re.S).group(0)
        assert '<td class="gate">green</td>' in unit
        assert re.search(rf'class="superseded muted"[^>]*>lit@cpu fail of run {red}: superseded by run {green}', unit)
    finally:
        await c.close()


async def test_a_replaced_result_links_to_its_check_run(tmp_path):
    # a failing run sent again on the same head: the cell is the re-run's (pending, its check run),
    # and the red it replaced, shown apart as superseded, links to the check run that showed it —
    # which the row no longer named once the re-run took its check_url
    store = Store(tmp_path / "f.db")
    fill(store)
    head = sha("h", 301)
    pend = dict(repo=FORK, pr=301, sha=head, level="L1", backend="local")
    runs = f"https://github.com/{FORK}/runs"
    red = vstore.mark_pending(store, suite="lit", platform="cpu", now=NOW - 1000, check_url=f"{runs}/101", **pend)
    assert vstore.record(store, repo=FORK, pr=301, result=_run(head, "lit", "cpu", "fail"), now=NOW - 900, answers=red) is None
    again = vstore.mark_pending(store, suite="lit", platform="cpu", now=NOW - 800, check_url=f"{runs}/102", **pend)
    # kernels (green in the store, on check run 1): a red whose stored address no page may link
    bad = vstore.mark_pending(store, suite="kernels", platform="h100", now=NOW - 700, check_url="JavaScript:alert(1)", **pend)
    assert vstore.record(store, repo=FORK, pr=301, result=_run(head, "kernels", "h100", "fail"), now=NOW - 650,
                         answers=bad) is None
    kernels_again = vstore.mark_pending(store, suite="kernels", platform="h100", now=NOW - 600, check_url=f"{runs}/104", **pend)
    c = await client_for(store)
    try:
        doc = await get_json(c, f"/api/v1/forks/{FORK}/validation")
        cell = {x["sha"]: x["cells"] for x in doc["commits"]}[head]["lit"][0]
        assert (cell["state"], cell["check_url"]) == ("pending", f"{runs}/102")
        assert [(x["outcome"], x["attempt"], x["by"], x["how"], x["check_url"]) for x in cell["superseded"]] == [
            ("fail", "?", red, "replaced", None), ("fail", red, again, "replaced", f"{runs}/101")]
        units = {u["id"]: u for u in (await get_json(c, f"/api/v1/forks/{FORK}/units"))["units"]}
        bundle = units[f"bundle-{sha('u', 1600)[:12]}"]
        assert [(s["suite"], s["verdict"], [x["check_url"] for x in s["superseded"]]) for s in bundle["suites"]] == [
            ("kernels", "pending", [f"{runs}/1", "JavaScript:alert(1)"]), ("lit", "pending", [None, f"{runs}/101"])]

        html = await get_page(c, f"/forks/{FORK}/validation")
        row = re.search(rf'<tr><td><a class="sha" href="[^"]*{head}">.*?</tr>', html, re.S).group(0)
        assert f'<div class="state-pending" title=""><a href="{runs}/102">pending</a>' in row
        assert re.search(rf'<div class="superseded muted"[^>]*><a href="{runs}/101">fail</a> of run {red}: superseded by run '
                         rf'{again}, not counted</div>', row)
        assert re.search(rf'<div class="superseded muted"[^>]*>fail of run {bad}: superseded by run {kernels_again}, '
                         r'not counted</div>', row)
        assert not [h for h in re.findall(r'href="([^"]*)"', row) if not h.startswith("https://")]
        page = await get_page(c, f"/forks/{FORK}/units")
        unit = re.search(rf'<tr id="unit-{bundle["id"]}">.*?</tr>', page, re.S).group(0)
        assert '<td class="gate">waiting for L1</td>' in unit
        assert re.search(rf'class="superseded muted"[^>]*>lit@cpu <a href="{runs}/101">fail</a> of run {red}: '
                         rf'superseded by run {again}, not counted</div>', unit)
        assert not [h for h in re.findall(r'href="([^"]*)"', unit) if not h.startswith("https://")]
    finally:
        await c.close()


def test_a_merged_change_point_is_drawn_apart_from_the_kept_ones():
    """A change point otava's merge step folded into a kept one never alerts; on the L2 plot it
    must not look like one that stands (a red cross): it is a grey open circle whose hover names
    the change point it went into, and the red trace holds only the kept ones."""
    import json

    from bot.dashboard.plots import l2_figure
    pts = [{"sha": f"{i:040x}", "value": v, "time": None} for i, v in enumerate([1, 1, 1, 1.01, 1.01, 2, 2, 2])]
    kept = {"index": 5, "sha": pts[5]["sha"], "rel_shift": 0.98, "alert": True, "confirmed": True,
            "p_value": 0.0, "merged": False, "merged_into": None, "merged_from": [pts[3]["sha"], pts[5]["sha"]]}
    gone = {"index": 3, "sha": pts[3]["sha"], "rel_shift": 0.01, "alert": False, "confirmed": False,
            "p_value": 0.2, "merged": True, "merged_into": pts[5]["sha"], "merged_from": []}
    fig = json.loads(l2_figure({"series": "s", "unit": "ms", "points": pts, "change_points": [gone, kept]}))
    by_name = {t["name"]: t for t in fig["data"][1:]}
    assert by_name["change point"]["x"] == [5]
    assert by_name["change point"]["marker"]["symbol"] == ["x"]
    merged = by_name["merged change point"]
    assert merged["x"] == [3] and merged["y"] == [1.01]
    assert merged["marker"]["color"] != by_name["change point"]["marker"]["color"]
    assert merged["customdata"] == [[pts[3]["sha"][:12], "+1.0%", f"merged into {pts[5]['sha'][:12]}"]]


async def test_units_in_flight_keep_age_areas_and_edges_once_the_plan_no_longer_lists_them(world):
    """The next plan lists only the unit not yet opened (the others' commits are in flight): the
    open units keep their age, areas and what they land after, read from their rows."""
    store, c = world
    bundle, chain = f"bundle-{sha('u', 1600)[:12]}", f"chain-{sha('u', 1650)[:12]}"
    planned = f"bundle-{sha('u', 1690)[:12]}"
    for uid, deps in ((chain, [bundle]), (bundle, [])):      # as the publish writes them (Unit.depends_on)
        sync_store.save_branch(store, repo=FORK, branch=f"forksync/{uid}", depends_json=json.dumps(deps))
    sync_store.save_plan(store, FORK, NOW, [{"id": planned, "kind": "bundle", "shas": [sha("u", 1690)], "depends_on": [],
                                             "areas": [], "reason": ""}])
    doc = await get_json(c, f"/api/v1/forks/{FORK}/units")
    by = {u["id"]: u for u in doc["units"]}
    assert [(by[u]["age_s"], by[u]["areas"], by[u]["depends_on"]) for u in (bundle, chain, planned)] == [
        (5 * 86_400, ["python/triton"], []), (5 * 86_400, ["lib/Dialect"], [bundle]), (5 * 86_400, [], [])]
    assert (chain, bundle) in {(e["from"], e["to"]) for e in doc["edges"]}
