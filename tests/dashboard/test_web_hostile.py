"""The dashboard against bad and hostile input, over HTTP, through ``forksync serve``'s own
application (the webhook app with the dashboard mounted) on a SQLite file: query values of the
wrong type or out of range, methods it does not serve, text in the store that would end a
``<script>`` element, a page's link to its JSON twin, and credentials in stored texts."""
from __future__ import annotations

import json
import re
from dataclasses import replace
from html import unescape

import pytest
from aiohttp.test_utils import TestClient, TestServer
from yarl import URL

from bot.agents.redact import forget_secrets, register_secrets
from bot.app.web import make_app, mount_dashboard
from bot.store import Store
from bot.sync import store as sync_store
from bot.validation import store as vstore
from tests.support.dashboard_world import FORK, HOSTILE_UNIT, NOW, fill, hostile_l2_point, sha

LEDGER = f"/api/v1/forks/{FORK}/ledger"


async def serve(tmp_path, prepare=lambda store: None) -> TestClient:
    store = Store(tmp_path / "f.db")
    fill(store)
    prepare(store)
    app = make_app(store, "hook-secret-canary", clock=lambda: NOW)
    mount_dashboard(app, Store(tmp_path / "f.db"), clock=lambda: NOW)
    c = TestClient(TestServer(app))
    await c.start_server()
    return c


@pytest.fixture
async def client(tmp_path):
    c = await serve(tmp_path)
    yield c
    await c.close()


async def error_of(c: TestClient, method: str, path: str, status: int) -> str:
    """The error text of an API answer, after checking it is the documented JSON error."""
    r = await c.request(method, URL(path, encoded=True))
    assert r.status == status, (method, path, r.status, await r.text())
    assert r.content_type == "application/json", (method, path, r.content_type)
    doc = await r.json()
    assert doc["schema"] == "forksync.dashboard.error/1" and doc["status"] == status
    return doc["error"]


@pytest.mark.parametrize("query, words", [
    # an offset past what SQLite can hold was a 503 (OverflowError in the query)
    ("offset=99999999999999999999999", "offset="),
    ("limit=99999999999999999999999", "limit="),
    # what int() reads but a person does not write as a number
    ("limit=1_0", "limit='1_0'"),
    ("limit=%EF%BC%95", "limit="),          # a full-width digit five
    ("offset=%205", "offset=' 5'"),
    ("limit=%2B5", "limit='+5'"),
])
async def test_offset_and_limit_take_plain_whole_numbers(client, query, words):
    assert words in await error_of(client, "GET", f"{LEDGER}?{query}", 400)
    r = await client.get(URL(f"/forks/{FORK}/ledger?{query}", encoded=True))
    assert r.status == 400 and r.content_type == "text/html"


@pytest.mark.parametrize("query", ["since=2026-02-30", "until=2026-01-00", "since=2026-04-31", "until=2026-00-10"])
async def test_a_day_that_does_not_exist_is_a_400_not_another_day(client, query):
    # calendar.timegm rolls 2026-02-30 over to 2026-03-02: the filter silently used another day
    name, value = query.split("=")
    assert f"{name}={value!r}: give a date as YYYY-MM-DD" in await error_of(client, "GET", f"{LEDGER}?{query}", 400)


@pytest.mark.parametrize("query, name", [("limit=abc&limit=5", "limit"), ("q=one&q=two", "q"), ("since=2026-01-01&since=2026-02-01", "since")])
async def test_a_single_valued_parameter_given_twice_is_a_400(client, query, name):
    # the last value won: "limit=abc&limit=5" answered 200, the bad value never reported
    assert f"{name} was given 2 times" in await error_of(client, "GET", f"{LEDGER}?{query}", 400)
    ok = await client.get(f"{LEDGER}?disposition=PICKED&disposition=PENDING")     # the one repeatable parameter
    assert ok.status == 200


@pytest.mark.parametrize("method, path", [
    ("POST", "/api/v1/forks"), ("PUT", f"/api/v1/forks/{FORK}/overview"), ("DELETE", f"{LEDGER}/{sha('u', 7)}"),
    ("PATCH", "/api/v1/health"), ("OPTIONS", "/api/v1/forks"),
])
async def test_an_unserved_method_on_the_api_is_a_json_405(client, method, path):
    r = await client.request(method, path)
    assert r.headers.get("Allow") and "GET" in r.headers["Allow"]
    assert "only GET" in await error_of(client, method, path, 405)


@pytest.mark.parametrize("method, path", [("POST", f"/forks/{FORK}/"), ("DELETE", "/"), ("PUT", "/health")])
async def test_an_unserved_method_on_a_page_is_a_clear_405_page(client, method, path):
    r = await client.request(method, path)
    assert r.status == 405 and r.content_type == "text/html" and "GET" in r.headers["Allow"]
    assert "only GET" in await r.text() and "Method not allowed" in await r.text()


async def test_an_unknown_api_path_is_a_json_404_whatever_the_method(client):
    assert "no page at /api/v1/nothing" in await error_of(client, "POST", "/api/v1/nothing", 404)
    r = await client.head("/api/v1/nothing")
    assert r.status == 404 and r.content_type == "application/json"


async def test_the_webhook_and_healthz_keep_their_own_answers(client):
    assert (await client.get("/webhook")).status == 405
    assert (await client.post("/healthz")).status == 405
    assert (await client.post("/webhook", data=b"{}")).status == 401


async def test_the_json_link_of_a_page_asks_the_same_question(client):
    # "#5007" searches PR 5007; the link carried "?q=#5007", which a browser cuts at the "#": the JSON
    # twin answered the whole ledger
    page = await (await client.get(URL(f"/forks/{FORK}/ledger?q=%235007&limit=5", encoded=True))).text()
    link = re.search(r'id="api-link">([^<]*)<', page).group(1).replace("&amp;", "&")
    assert link == f"{LEDGER}?q=%235007&limit=5"
    doc = await (await client.get(URL(link, encoded=True))).json()
    assert doc["total"] == 1 and f'<p id="total">{doc["total"]} matching' in page


async def test_stored_text_cannot_end_the_script_element_of_a_plot(tmp_path):
    # an L2 series name holding "<!--<script>" put the HTML parser in the script's "double
    # escaped" state: the element's own </script> no longer closed it, and the rest of the page
    # (later plots included) became script text
    name = 'mm<!--<script>"&'

    def hostile(store: Store) -> None:
        store.db["l2_points"].insert({"repo": FORK, "benchmark": name, "impl": "triton", "metric": "ms", "shape": "8", "dtype": "fp16",
                                      "platform": "h100", "unit": "ms<!--", "sha": sha("l", 0), "seq": 0,
                                      "time": int(NOW - 3600), "value": 1.5, "repeats_json": "[]", "ok": 1})

    c = await serve(tmp_path, hostile)
    try:
        html = await (await c.get(f"/forks/{FORK}/validation")).text()
        bodies = re.findall(r'<script type="application/json" class="plot" data-target="[^"]*">(.*?)</script>', html, re.S)
        assert len(bodies) == 3 and all("<" not in b for b in bodies)
        names = [unescape(json.loads(b)["data"][0]["name"]) for b in bodies]      # entities: shown as written
        assert any(n.startswith(name) for n in names)
    finally:
        await c.close()


async def test_stored_text_in_a_plot_is_data_not_plotly_syntax(tmp_path):
    # plotly fills %{…} fields in a hovertemplate (and in titles) and reads a subset of HTML and
    # its entities in hover labels, axis titles and legend names: a unit concatenated into the
    # template showed the y value for "%{y}" and bold text for "<b>"; the unit now reaches the
    # label as the trace's meta, and stored text goes as entities plotly shows as the characters
    c = await serve(tmp_path, hostile_l2_point)
    try:
        doc = await (await c.get(f"/api/v1/forks/{FORK}/validation")).json()
        [i] = [i for i, s in enumerate(doc["l2"]) if s["unit"] == HOSTILE_UNIT]
        html = await (await c.get(f"/forks/{FORK}/validation")).text()
        body = re.search(rf'<script type="application/json" class="plot" data-target="plot-l2-{i}">(.*?)</script>',
                         html, re.S).group(1)
        fig = json.loads(body)
        trace = fig["data"][0]
        assert trace["hovertemplate"] == "%{y:.4g} %{meta}<br>%{customdata[0]} %{customdata[1]}<extra></extra>"
        assert trace["meta"] == fig["layout"]["yaxis"]["title"]["text"] == "&#37;{y}&lt;b&gt;x&lt;/b&gt; &amp;amp;"
        assert trace["name"] == "&lt;i&gt;mm&lt;/i&gt;[triton]:8:fp16@h100" and unescape(trace["name"]) == doc["l2"][i]["series"]
    finally:
        await c.close()


async def test_no_credentials_on_any_page_or_answer(tmp_path):
    # an upstream outside GitHub is recorded by its clone URL, which may carry a password, and
    # a fetch error recorded by an earlier release quotes a configured secret: both were shown
    upstream = "https://bot:upstream-pat-canary@git.example.com/llvm/triton.git"
    token = "ghs_installation-token-canary"

    def with_secrets(store: Store) -> None:
        st = sync_store.load_status(store, FORK)
        sync_store.save_status(store, replace(st, upstream=upstream, last_fetch_error=f"git fetch {upstream} failed: token {token}"))

    register_secrets(token)
    c = await serve(tmp_path, with_secrets)
    try:
        paths = ["/?all=1", "/health", "/api/v1/forks", "/api/v1/health", f"{LEDGER}/{sha('u', 7)}", f"/forks/{FORK}/ledger/{sha('u', 7)}"]
        paths += [f"{p}/forks/{FORK}/{page}" for p in ("", "/api/v1") for page in ("overview", "units", "ledger", "validation", "triage")]
        for path in paths:
            r = await c.get(path)
            body = await r.text()
            assert r.status == 200, (path, r.status)
            assert "upstream-pat-canary" not in body and token not in body, path
        overview = await (await c.get(f"/api/v1/forks/{FORK}/overview")).json()
        assert overview["upstream"] == "https://***@git.example.com/llvm/triton.git"
        assert overview["stale"]["reason"].endswith("failed: token ***")
    finally:
        forget_secrets()
        await c.close()


async def test_a_github_token_no_one_registered_is_not_shown(tmp_path):
    # the scrub removes a GitHub token by its shape (a token of the fork's own CI quoted in a stored
    # error); a document holding only such a token, no URL password and no registered secret, is
    # scrubbed all the same
    token = "ghp_" + "A1b2C3d4" * 5

    def with_token(store: Store) -> None:
        st = sync_store.load_status(store, FORK)
        sync_store.save_status(store, replace(st, last_fetch_error=f"fetch refused for {token}"))

    forget_secrets()
    c = await serve(tmp_path, with_token)
    try:
        for path in (f"/api/v1/forks/{FORK}/overview", f"/forks/{FORK}/overview", "/api/v1/forks", "/?all=1"):
            r = await c.get(path)
            body = await r.text()
            assert r.status == 200, (path, r.status)
            assert token not in body, path
        overview = await (await c.get(f"/api/v1/forks/{FORK}/overview")).json()
        assert overview["stale"]["reason"].endswith("fetch refused for ***")
    finally:
        await c.close()


#: Links a stored field may hold that a browser would follow into script or into a document of
#: the link's own making: jinja's autoescape keeps them whole inside href="…", where a click runs them.
NOT_HTTP = ["javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "java\tscript:alert(1)",
            "data:text/html,<script>alert(1)</script>", "vbscript:msgbox(1)", "//evil.example/x", "/\\evil.example/x"]
_A_HREF = re.compile(r"<a\b[^>]*\bhref=\"([^\"]*)\"", re.S)


def _hrefs(html: str) -> list[str]:
    return [unescape(h) for h in _A_HREF.findall(html)]


def _is_http_or_site_relative(href: str) -> bool:
    return bool(re.fullmatch(r"https?://[^\s\x00-\x1f]+|/(?![/\\])[^\s\x00-\x1f]*|\?[^\s\x00-\x1f]*", href))


@pytest.mark.parametrize("url", NOT_HTTP)
async def test_a_stored_link_that_is_not_http_is_shown_as_text(tmp_path, url):
    # an open unit's and a blocked unit's PR link (the sync status keeps GitHub's html_url) and a
    # suite result's check run link (the check run's html_url) come from the store as they were
    # written; each page showed them as href="javascript:…"
    head = sha("h", 301)

    def hostile(store: Store) -> None:
        st = sync_store.load_status(store, FORK)
        units = ({**st.units[0], "url": url},) + tuple(st.units[1:])
        blocked = ({"id": "bundle-blocked", "pr": 309, "url": url, "reason": "protected branch", "step": "push"},)
        sync_store.save_status(store, replace(st, units=units, blocked=blocked))
        vstore.mark_pending(store, repo=FORK, pr=301, sha=head, suite="kernels", platform="h100", level="L1",
                            backend="local", now=NOW - 60, check_url=url)

    c = await serve(tmp_path, hostile)
    try:
        pages = ["/?all=1", "/health", f"/forks/{FORK}/ledger/{sha('u', 7)}"]
        pages += [f"/forks/{FORK}/{p}" for p in ("overview", "units", "ledger", "validation", "triage")]
        for path in pages:
            r = await c.get(path)
            assert r.status == 200, (path, r.status)
            bad = [h for h in _hrefs(await r.text()) if not _is_http_or_site_relative(h)]
            assert not bad, (path, bad)
        # the link's text is still there, as text
        overview = await (await c.get(f"/forks/{FORK}/overview")).text()
        assert re.search(r"<td>#301</td>", overview), "the open unit's PR number is shown without its link"
        health = await (await c.get("/health")).text()
        assert "bundle-blocked: GitHub refused the push" in health
        validation = await (await c.get(f"/forks/{FORK}/validation")).text()
        assert '<div class="state-pending" title="">pending' in validation
        # the JSON twins answer the stored value as it is: a client that links it checks it itself
        health_doc = await (await c.get("/api/v1/health")).json()
        assert health_doc["forks"][0]["blocked"][0]["url"] == url
        cells = (await (await c.get(f"/api/v1/forks/{FORK}/validation")).json())["commits"]
        assert any(cell["check_url"] == url for x in cells for cell in x["cells"]["kernels"])
    finally:
        await c.close()


def test_every_href_from_data_goes_through_the_link_filter():
    # an href whose value starts with data (not a fixed "/…" or "https://github.com/…" the template
    # writes) is safe only through the filter that keeps http(s) and the dashboard's own paths
    from bot.templating import TEMPLATES
    bare = []
    for path in sorted((TEMPLATES / "dashboard").glob("*.j2")):
        for m in re.finditer(r'href="\{\{(.*?)\}\}', path.read_text()):
            if not re.search(r"\|\s*href\s*$", m.group(1).strip()):
                bare.append(f"{path.name}: {m.group(0)}")
    assert not bare, bare


@pytest.mark.parametrize("value, shown", [
    ("https://github.com/o/f/pull/1", "https://github.com/o/f/pull/1"), ("HTTP://example.com/x", "HTTP://example.com/x"),
    ("/forks/o/f/", "/forks/o/f/"), ("/api/v1/forks/o/f/ledger?q=%235007", "/api/v1/forks/o/f/ledger?q=%235007"),
    (None, ""), ("", ""), ("https://", ""), ("https:// x", ""), ("https://a\nb", ""), ("ftp://example.com", ""),
    *((u, "") for u in NOT_HTTP),
])
def test_the_link_filter_keeps_http_and_the_dashboards_own_paths(value, shown):
    from bot.templating import href
    assert href(value) == shown
