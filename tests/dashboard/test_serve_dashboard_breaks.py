"""The dashboard, ``/healthz`` and ``/metrics`` as ``forksync serve`` serves them, against what a
real deployment meets: a worker running in another container, a user who may read only some
forks, errors stored by an earlier release, a refresh landing while a page is read, odd query
values, an address typed without its trailing slash, and refreshes that failed."""
from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer
from yarl import URL

from bot.app import queue as q
from bot.app.web import make_app, mount_dashboard
from bot.dashboard.access import GitHubLogin
from bot.store import Store
from bot.sync import store as sync_store
from gpu_runner.result import Environment, RunResult, outcome_for
from gpu_runner.saturation import judge
from tests.support.dashboard_world import DAY, FORK, NOW, fill, sha
from tests.support.serve import ForksyncProcess

ROOT = Path(__file__).resolve().parents[2]
LEDGER = f"/api/v1/forks/{FORK}/ledger"


async def serve(tmp_path, prepare=lambda store: None, **mount) -> tuple[TestClient, Store]:
    """``forksync serve``'s application (webhook app + dashboard) on a SQLite file, as run_serve
    builds it: the web app, the metrics and the dashboard each on a connection of their own."""
    store = Store(tmp_path / "f.db")
    fill(store)
    prepare(store)
    app = make_app(store, "hook-secret-canary", clock=lambda: NOW, store_factory=lambda: Store(tmp_path / "f.db"))
    dash = Store(tmp_path / "f.db")
    mount_dashboard(app, dash, clock=lambda: NOW, **mount)
    c = TestClient(TestServer(app))
    await c.start_server()
    return c, dash


# --------------------------------------------------------------------------- health: one verdict
async def test_the_health_page_of_serve_with_a_worker_elsewhere_agrees_with_healthz(tmp_path):
    """compose runs ``forksync serve --workers 0`` with FORKSYNC_EXPECT_WORKER=1 and the worker in
    its own container. With that worker down, /healthz answers 503 "no worker has started
    processing the queue", but the dashboard's Health page shows a green "ok" with no problem,
    and /api/v1/health says "status": "ok": a person looking at the dashboard is told all is
    well. Both must give the same verdict and the same problem (docs/dashboard.md: "the facts of
    /healthz and /metrics")."""
    env = dict(os.environ, FORKSYNC_WEBHOOK_SECRET="s", FORKSYNC_DB=str(tmp_path / "bot.db"), FORKSYNC_WORKERS="0",
               FORKSYNC_EXPECT_WORKER="1", PYTHONPATH=str(ROOT))
    serve = ForksyncProcess(tmp_path, ["serve", "--host", "127.0.0.1", "--port", "0", "--no-poll"], env)
    try:
        assert serve.started_or_exited() == "listening", serve.log
        port = serve.port
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/healthz") as r:
                healthz_status, healthz = r.status, await r.json()
            async with http.get(f"http://127.0.0.1:{port}/api/v1/health") as r:
                doc = await r.json()
            async with http.get(f"http://127.0.0.1:{port}/health") as r:
                page = await r.text()
        assert healthz_status == 503 and healthz["problems"] == ["no worker has started processing the queue"]
        assert doc["status"] == "unhealthy", doc
        assert doc["problems"] == healthz["problems"]
        assert '<span id="status" style="color:#cb2431">unhealthy</span>' in page
        assert "no worker has started processing the queue" in page
    finally:
        serve.stop()


@pytest.fixture
async def two_forks_logged_in(fake_github, tmp_path):
    """A deployed serve: FORK is private (alice may read it, bob may not), meta/public-fork public."""
    fake = fake_github
    fake.create_repo(FORK, private=True)
    fake.create_repo("meta/public-fork")
    fake.create_user("bob")

    def prepare(store: Store) -> None:
        fill(store, fork="meta/public-fork", shared=False)
        # the private fork's nightly job failed on its last two ticks: /healthz names it
        for t in (NOW - 7200, NOW - 3600):
            sync_store.record_job(store, FORK, "nightly", "RuntimeError: runner gpu-secret-lab-7 unreachable", t)

    login = GitHubLogin(client_id=fake.app.client_id, client_secret=fake.app.client_secret, session_secret="s" * 40,
                        api_url=fake.url, session_max_age_s=3600, clock=lambda: 1000.0)
    c, _ = await serve(tmp_path, prepare, access=login)
    yield fake, c
    await c.close()


async def _log_in(fake, c: TestClient, user: str, path: str):
    fake.oauth_user = user
    r = await c.get(path, allow_redirects=False)
    r = await c.get(r.headers["Location"], allow_redirects=False)
    r = await c.session.get(r.headers["Location"], allow_redirects=False)
    r = await c.session.get(r.headers["Location"], allow_redirects=False)
    return await c.get(path)


async def test_the_health_page_tells_nothing_of_a_fork_the_user_may_not_read(two_forks_logged_in):
    """bob may read only meta/public-fork. The Health page and /api/v1/health leave the private
    fork out of "forks", "dead" and "recent_errors", but its failing job comes through in
    "problems": bob reads "meta/triton: the scheduled nightly job failed 2 times in a row:
    RuntimeError: runner gpu-secret-lab-7 unreachable" — the existence of a fork he may not read
    and its error (docs/dashboard.md: forks the user may not read are left out of every list).
    The problem may be said (the status stays "unhealthy"), without the fork's name or error."""
    fake, c = two_forks_logged_in
    page = await _log_in(fake, c, "bob", "/health")
    assert page.status == 200
    doc = await (await c.get("/api/v1/health")).json()
    assert [f["fork"] for f in doc["forks"]] == ["meta/public-fork"]
    assert doc["status"] == "unhealthy"             # the App is unhealthy all the same
    shown = json.dumps(doc) + await page.text()
    assert FORK not in shown, [p for p in doc["problems"] if FORK in p]
    assert "gpu-secret-lab-7" not in shown


async def test_the_health_page_names_a_paused_fork_only_to_who_may_read_it(fake_github, tmp_path):
    """An owner suspended the App's installation of the private fork: the health page warns that
    the fork is paused, naming it and the login who suspended it. bob, who may not read that
    fork, must see the warning counted, not the fork's name or the owner's login; alice sees it
    whole."""
    fake = fake_github
    fake.create_repo(FORK, private=True)
    fake.create_repo("meta/public-fork")
    fake.create_user("bob")

    def prepare(store: Store) -> None:
        fill(store, fork="meta/public-fork", shared=False)
        sync_store.track(store, FORK, "triton-lang/triton", "main", 7, 300)
        sync_store.set_suspended(store, 7, True, at=NOW - 3600, by="owner-carol")

    login = GitHubLogin(client_id=fake.app.client_id, client_secret=fake.app.client_secret, session_secret="s" * 40,
                        api_url=fake.url, session_max_age_s=3600, clock=lambda: 1000.0)
    c, _ = await serve(tmp_path, prepare, access=login)
    try:
        page = await _log_in(fake, c, "bob", "/health")
        assert page.status == 200
        doc = await (await c.get("/api/v1/health")).json()
        shown = json.dumps(doc) + await page.text()
        assert FORK not in shown and "owner-carol" not in shown, doc["warnings"]
        assert doc["warnings"] == ["1 warning of a fork you may not read"]
        r = await c.get("/healthz")                      # the App's own health check: a warning, not a 503
        assert r.status == 200 and (await r.json())["warnings"] == [HEALTHZ_FORK_WARNING]
    finally:
        await c.close()


#: what /healthz says in place of a line naming a fork (it asks for no login, and cannot tell a
#: private fork from a public one)
HEALTHZ_FORK_PROBLEM = "1 problem of a fork: the dashboard's health page (/health) names it to who may read the fork"
HEALTHZ_FORK_WARNING = "1 warning of a fork: the dashboard's health page (/health) names it to who may read the fork"


async def test_healthz_names_no_fork_and_points_to_the_health_page(two_forks_logged_in):
    """/healthz is answered to anyone who reaches the port, without a login. The private fork's
    nightly job failed twice: anyone read "meta/triton: the scheduled nightly job failed 2 times
    in a row: RuntimeError: runner gpu-secret-lab-7 unreachable" — the name of a private fork
    and its runner, which the dashboard hides from a logged-in user who may not read the fork.
    /healthz should stay 503 and count the problem, pointing to the health page that names it
    to who may read the fork."""
    _, c = two_forks_logged_in
    r = await c.get("/healthz")
    body = await r.text()
    assert r.status == 503
    assert FORK not in body and "gpu-secret-lab-7" not in body, body
    assert (await r.json())["problems"] == [HEALTHZ_FORK_PROBLEM]


async def test_healthz_names_no_paused_fork_nor_who_paused_it(fake_github, tmp_path):
    """An owner suspended the App's installation of a private fork. /healthz, answered without a
    login, warned "meta/triton: paused: the App's installation 7 is suspended by owner-carol …":
    the private fork's name and its owner's login. It should count the warning (still a 200)
    and point to the health page."""
    def prepare(store: Store) -> None:
        sync_store.track(store, FORK, "triton-lang/triton", "main", 7, 300)
        sync_store.set_suspended(store, 7, True, at=NOW - 3600, by="owner-carol")

    c, _ = await serve(tmp_path, prepare)
    try:
        r = await c.get("/healthz")
        body = await r.text()
        assert r.status == 200
        assert FORK not in body and "owner-carol" not in body, body
        assert (await r.json())["warnings"] == [HEALTHZ_FORK_WARNING]
        page = await (await c.get("/api/v1/health")).json()     # a local dashboard (no login) names it
        assert any(w.startswith(f"{FORK}: paused") for w in page["warnings"]), page["warnings"]
    finally:
        await c.close()


# --------------------------------------------------------------------------- secrets
async def test_healthz_and_metrics_scrub_stored_errors_as_the_pages_do(tmp_path):
    """An error stored by an earlier release (before errors were scrubbed when written) holds a
    GitHub token and a clone URL's password. The dashboard's pages and /api/v1/health show them
    as *** (docs/dashboard.md: "a token an older release left in a stored error never reaches a
    visitor"), but /healthz prints the token in its "problems" and /metrics in the
    forksync_dead_letter_alarm reason label — both answered without any login on a deployed
    serve."""
    token = "ghs_" + "Q7x9" * 9
    url = "https://bot:clone-pass-canary@git.example.com/llvm/triton.git"

    def older_release(store: Store) -> None:
        # the failing-jobs column as a release that did not scrub it wrote it
        jobs = [{"job": "l2", "error": f"GitHubError: 401 for token {token}", "since": NOW - 7200, "at": NOW - 3600, "count": 2}]
        store.conn.execute("UPDATE sync_status SET failing_jobs_json = ? WHERE repo = ?", [json.dumps(jobs), FORK])
        q.enqueue(store, delivery_id="old-1", hook_id="1", event="push", body=b"{}", now=NOW - 600)
        store.conn.execute("UPDATE webhook_deliveries SET state='dead', dead_reason=?, last_error=?, finished_at=? "
                           "WHERE delivery_id='old-1'", [f"git fetch {url} failed", f"git fetch {url} failed", NOW - 300])

    c, _ = await serve(tmp_path, older_release)
    try:
        page = await (await c.get("/api/v1/health")).text()
        assert token not in page and "clone-pass-canary" not in page       # the dashboard scrubs them
        r = await c.get("/healthz")
        healthz = await r.text()
        assert r.status == 503
        assert HEALTHZ_FORK_PROBLEM in json.loads(healthz)["problems"]      # the job's line is on /health
        assert token not in healthz, healthz
        metrics = await (await c.get("/metrics")).text()
        assert "forksync_dead_letter_alarm{" in metrics
        assert "clone-pass-canary" not in metrics and token not in metrics, \
            [ln for ln in metrics.splitlines() if "clone-pass" in ln or token in ln]
    finally:
        await c.close()


# --------------------------------------------------------------------------- a refresh while a page is read
async def test_a_ledger_page_read_while_a_sync_replaces_the_ledger_is_one_ledger(tmp_path):
    """A sync replaces the fork's ledger (one transaction) while the Ledger page is being built.
    The page reads the matching total, its rows and the per-disposition counts in separate
    statements, so the answer mixes the old ledger (40 commits, 8 PENDING) and the new one
    (45 commits, all PICKED): "40 matching upstream commit(s)" above counts that add up to 45.
    A page must show one ledger: the counts of the whole ledger add up to the unfiltered total."""
    writer = Store(tmp_path / "f.db")
    new = [{"key": f"{FORK}:{sha('n', i)}", "repo": FORK, "idx": i, "sha": sha("n", i), "pr": 9000 + i,
            "subject": f"new commit {i}", "time": int(NOW - DAY + i), "disposition": "PICKED", "fork_commit": sha("g", i),
            "reason": "", "isolated": 0, "areas": ",lib/Dialect,", "evidence_json": "[]"} for i in range(45)]
    c, dash = await serve(tmp_path)
    fired = []

    def on_statement(sql: str) -> None:
        # the sync's write lands after the page counted the matching entries, before it reads them
        if not fired and sql.startswith("SELECT * FROM ledger_snapshot WHERE"):
            fired.append(sql)
            sync_store.replace_ledger(writer, FORK, new)

    dash.conn.set_trace_callback(on_statement)
    try:
        doc = await (await c.get(f"{LEDGER}?limit=500")).json()
        assert fired
        assert sum(doc["counts"].values()) == doc["total"] == len(doc["entries"]), \
            (doc["total"], len(doc["entries"]), doc["counts"])
    finally:
        dash.conn.set_trace_callback(None)
        await c.close()


# --------------------------------------------------------------------------- query values
async def test_an_area_filter_is_exact_not_a_like_pattern(tmp_path):
    """The ledger's ``area`` filter is exact (docs/dashboard.md), but it goes into SQL LIKE
    unescaped: ``?area=%`` answers all 40 commits and ``?area=lib_Dialect`` (no such area)
    answers the commits of lib/Dialect. An area no commit has matches nothing."""
    c, _ = await serve(tmp_path)
    try:
        for area in ("%25", "lib_Dialect", "python%25"):
            doc = await (await c.get(URL(f"{LEDGER}?area={area}", encoded=True))).json()
            assert (doc["total"], doc["entries"]) == (0, []), (area, doc["total"])
        real = await (await c.get(f"{LEDGER}?area=lib/Dialect")).json()
        assert real["total"] > 0 and all("lib/Dialect" in e["areas"] for e in real["entries"])
    finally:
        await c.close()


async def test_a_search_for_a_nul_character_does_not_answer_the_whole_ledger(tmp_path):
    """``?q=%00`` (a NUL, as a broken client or a fuzzer sends) is searched as a word of the
    subject; SQLite cuts the LIKE pattern at the NUL, so the search for it answers every one
    of the 40 commits as matching. No subject holds a NUL: it is a 400 naming ``q``, or no match."""
    c, _ = await serve(tmp_path)
    try:
        r = await c.get(URL(f"{LEDGER}?q=%00", encoded=True))
        doc = await r.json()
        assert r.status == 400 and "q=" in doc["error"] or (r.status == 200 and doc["total"] == 0), (r.status, doc.get("total"))
    finally:
        await c.close()


# --------------------------------------------------------------------------- addresses
async def test_a_forks_address_without_its_trailing_slash_is_its_overview(tmp_path):
    """A person types (or pastes from GitHub) ``/forks/meta/triton`` — the fork's name as GitHub
    writes it, no trailing slash — and gets a 404 "no page at /forks/meta/triton: start at /"
    for a fork the dashboard has. The address must reach the overview (a redirect to
    ``/forks/meta/triton/`` or the page itself), and so must its JSON twin's form."""
    c, _ = await serve(tmp_path)
    try:
        r = await c.get(f"/forks/{FORK}")
        assert r.status == 200 and 'id="days-behind">3.25<' in await r.text(), (r.status, str(r.url))
    finally:
        await c.close()


# --------------------------------------------------------------------------- failed refreshes in the plot
async def test_the_overview_plot_marks_numbers_of_a_failed_refresh_as_stale(tmp_path):
    """Upstream's fetch failed for the last two days; each failed poll recorded a snapshot with
    ``source: fetch-failed`` and the last good numbers. The banner says STALE, but the
    overview's plot draws those points on the Days Behind line exactly like the points of real
    syncs (same trace, same marker, hover "3.00 days"): the plot reads as if the fork stayed 3
    days behind while upstream was not seen at all. Points of a failed refresh must be told
    apart in the figure: left out of the Days Behind line, or in a trace of their own that says
    so."""
    def outage(store: Store) -> None:
        st = sync_store.load_status(store, FORK)
        st = replace(st, upstream_seen_at=NOW - 2 * DAY, last_fetch_error="poll of triton-lang/triton failed: 502")
        sync_store.save_status(store, st)
        from bot.sync import snapshots
        for k in (2, 1, 0):
            snapshots.record_sync(store, st, at=NOW - k * 0.5 * DAY)

    c, _ = await serve(tmp_path, outage)
    try:
        doc = await (await c.get(f"/api/v1/forks/{FORK}/overview")).json()
        failed = [p["at"] for p in doc["series"] if p["source"] == "fetch-failed"]
        assert len(failed) == 3 and doc["stale"]["stale"]
        html = await (await c.get(f"/forks/{FORK}/")).text()
        body = html.split('data-target="plot-overview">', 1)[1].split("</script>", 1)[0]
        fig = json.loads(body)
        days = next(t for t in fig["data"] if t["name"] == "Days Behind")
        marked = [t for t in fig["data"] if t is not days and set(failed) <= set(t.get("x", []))
                  and any(w in (t.get("name", "") + t.get("hovertemplate", "")).lower() for w in ("stale", "fail", "not seen"))]
        assert not set(failed) & set(days["x"]) or marked, "failed refreshes drawn as ordinary Days Behind points"
    finally:
        await c.close()


# --------------------------------------------------------------------------- GitHub failing while asked
async def test_a_reader_is_not_told_no_fork_for_five_minutes_after_one_github_5xx(two_forks_logged_in):
    """alice may read the private fork. GitHub answers the permission check once with a 502 (it
    happens: GitHub's API has bad minutes). The dashboard takes the 502 for "may not read",
    answers 404 "no fork 'meta/triton' here, or you may not read it", and caches that answer for
    5 minutes: every page of the fork stays 404 for her though GitHub answers again at once.
    A failed permission check is not a "no": it is not cached, and the answer says GitHub could
    not be asked (not that the fork does not exist)."""
    fake, c = two_forks_logged_in
    fake.create_user("alice")
    fake.state.repos[FORK].collaborators["alice"] = "read"
    fake.faults.server_error(f"/repos/{FORK}/collaborators/*/permission", "GET", times=1)
    first = await _log_in(fake, c, "alice", f"/forks/{FORK}/")
    body = await first.text()
    assert not (first.status == 404 and "may not read" in body), (first.status, body[body.find('id="error"'):][:200])
    again = await c.get(f"/api/v1/forks/{FORK}/overview")          # GitHub answers normally now
    assert again.status == 200, await again.text()
    assert (await again.json())["days_behind"] == 3.25


# --------------------------------------------------------------------------- red and short
def _judged(commit: str, suite: str, facts) -> RunResult:
    verdict, reasons = judge(facts)
    return RunResult(suite=suite, level="L1", commit=commit, platform="h100", verdict=verdict, outcome=outcome_for(reasons),
                     reasons=reasons, counts=facts.counts, tests=list(facts.tests), environment=Environment(runner_id="r"))


async def test_the_validation_grid_tells_short_from_red_by_the_runs_reasons_not_its_words(tmp_path):
    """The grid calls a cell ``short`` when its reason text holds "fewer" or "below-floor". So:
    a suite with all its tests run and one real failure, ``test_reduce_fewer_warps``, is shown
    ``short`` ("ran fewer tests than expected") — a person looks for missing tests instead of
    the broken kernel; and a suite that ran 60 of its 100 expected tests (40 skipped:
    ``count-mismatch``, whose detail does not say "fewer") is shown plain ``red``, not ``short``
    (docs/dashboard.md: short is a suite that ran fewer tests than expected)."""
    from bot.validation import store as vstore
    from gpu_runner.result import Counts, TestResult
    from gpu_runner.saturation import RunFacts

    head = sha("h", 301)
    failing = RunFacts(expected_tests=3, exit_code=1, report_state="ok", counts=Counts(total=3, passed=2, failed=1),
                       tests=(TestResult(id="test_core.py::test_reduce_fewer_warps", name="test_reduce_fewer_warps", outcome="failed"),
                              TestResult(id="test_core.py::test_dot", name="test_dot", outcome="passed"),
                              TestResult(id="test_core.py::test_add", name="test_add", outcome="passed")))
    skipped = RunFacts(expected_tests=100, exit_code=0, report_state="ok", counts=Counts(total=100, passed=60, skipped=40))

    def results(store: Store) -> None:
        for suite, facts in (("kernels", failing), ("lit", skipped)):
            r = _judged(head, suite, facts)
            assert r.verdict == "red"
            vstore.record(store, repo=FORK, pr=301, result=r, now=NOW - 60)

    c, _ = await serve(tmp_path, results)
    try:
        doc = await (await c.get(f"/api/v1/forks/{FORK}/validation")).json()
        cells = next(x["cells"] for x in doc["commits"] if x["sha"] == head)
        kernels = next(x for x in cells["kernels"] if x["platform"] == "h100")
        lit = next(x for x in cells["lit"] if x["platform"] == "h100")
        assert "test-failures" in kernels["reason"] and "count-mismatch: 60 tests ran" in lit["reason"]
        assert (kernels["state"], lit["state"]) == ("red", "short")
    finally:
        await c.close()


async def test_a_unit_whose_suite_hit_an_infrastructure_error_is_not_shown_green(tmp_path):
    """The bundle's lit suite ends with an infrastructure error that persisted through the
    retries (outcome ``infrastructure``: the gate blocks on it, docs/validation.md). The Units
    page shows that unit's gate as ``green`` and its state "L1 green: the gate decides on
    GitHub" — the one result that blocks it is read as a pass, because the page counts only
    "fail" and "error" as red. A unit with a suite that did not pass is not green."""
    from bot.validation import store as vstore
    from gpu_runner.result import Counts
    from gpu_runner.saturation import RunFacts

    head = sha("h", 301)

    def infra(store: Store) -> None:
        # the bundle's head had lit on cpu (red); this fork now runs lit on h100 only
        store.conn.execute("DELETE FROM suite_results WHERE repo = ? AND sha = ? AND suite = 'lit'", [FORK, head])
        r = _judged(head, "lit", RunFacts(exit_code=0, report_state="ok", infra_error="CUDA driver initialization failed",
                                          counts=Counts(total=5, passed=5)))
        assert (r.verdict, r.outcome) == ("red", "infrastructure")
        vstore.record(store, repo=FORK, pr=301, result=r, now=NOW - 60)
        kernels = _judged(head, "kernels", RunFacts(exit_code=0, report_state="ok", counts=Counts(total=5, passed=5)))
        vstore.record(store, repo=FORK, pr=301, result=kernels, now=NOW - 60)

    c, _ = await serve(tmp_path, infra)
    try:
        doc = await (await c.get(f"/api/v1/forks/{FORK}/units")).json()
        bundle = next(u for u in doc["units"] if u["pr"] == 301)
        assert [(s["suite"], s["verdict"]) for s in bundle["suites"]] == [("kernels", "pass"), ("lit", "infrastructure")]
        assert bundle["gate"] != "green" and "L1 green" not in bundle["state"], (bundle["gate"], bundle["state"])
    finally:
        await c.close()
