"""The dashboard on the states the App writes when an owner suspends its installation and when a
sync unit's commits are decided while its PR is open: a paused fork, deliveries waiting for the
suspension to be lifted, a unit forksync closed itself, a unit that still carries a decided
commit. Real stores, the real pages and JSON twins, the local GitHub for logins, and Debian's
Chromium where what a person reads on the page matters."""
from __future__ import annotations

import html as html_mod
import json
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app import queue as q
from bot.dashboard.access import GitHubLogin
from bot.dashboard.web import Dashboard, make_dashboard_app
from bot.store import Store
from bot.sync import store as sync_store
from tests.dashboard.test_browser import ARGS, CHROMIUM, Served
from tests.dashboard.test_serve_dashboard_breaks import _log_in, serve
from tests.support.dashboard_world import FORK, NOW, fill, sha

PAUSED = "paused: the App's installation is suspended"


def decide(store: Store, upstream_sha: str, disposition: str, reason: str, detail: str) -> None:
    """The ledger of the fork's last sync giving ``upstream_sha`` a decision (as a note does)."""
    store.conn.execute("UPDATE ledger_snapshot SET disposition = ?, reason = ?, fork_commit = '', evidence_json = ? "
                       "WHERE repo = ? AND sha = ?", [disposition, reason, json.dumps([{"rule": "note", "fork_commit": None,
                                                                                     "detail": detail}]), FORK, upstream_sha])


async def client_for(store: Store) -> TestClient:
    c = TestClient(TestServer(make_dashboard_app(Dashboard(store=store, clock=lambda: NOW))))
    await c.start_server()
    return c


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (.ci/run installs it)")
def test_a_paused_fork_is_shown_paused_not_current_in_the_browser(tmp_path):
    """An owner suspended the App's installation of the fork: its work stopped. The JSON twins
    say so (``"followed": "paused: the App's installation is suspended"``), but a person opening
    the overview read "upstream as of 2026-05-28 20:16 UTC (current)" and nothing of the pause,
    and the Health page's fork row said "current". Both pages must say the fork is paused and
    why, as the JSON does, and call neither "current"."""
    from playwright.sync_api import sync_playwright

    store = Store(tmp_path / "f.db")
    fill(store)
    sync_store.track(store, FORK, "triton-lang/triton", "main", 7, 300)
    sync_store.set_suspended(store, 7, True, at=NOW - 3600, by="owner-carol")
    site = Served(Dashboard(store=Store(tmp_path / "f.db"), clock=lambda: NOW))
    try:
        assert site.api(f"/api/v1/forks/{FORK}/overview")["followed"] == PAUSED
        assert [f["followed"] for f in site.api("/api/v1/health")["forks"]] == [PAUSED]
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            try:
                page = b.new_page()
                page.goto(f"{site.url}/forks/{FORK}/")
                overview = page.inner_text("main")
                page.goto(f"{site.url}/health")
                health = page.inner_text("#health-forks")
            finally:
                b.close()
    finally:
        site.close()
    assert PAUSED in overview and "(current)" not in overview, overview
    assert PAUSED in health and "current" not in health, health


async def test_paused_deliveries_of_a_private_forks_installation_are_counted_not_said(fake_github, tmp_path):
    """The App's installation of the private fork is suspended by owner-carol, and two deliveries
    of that fork wait for the suspension to be lifted. bob, who may not read the fork, read on
    the Health page and in /api/v1/health "2 deliveries wait for the App's installation 7,
    suspended by owner-carol …" — who suspended an installation he has no part in, which the
    fork's own paused line keeps from him. He must see that line counted ("2 warnings of a fork
    you may not read") while the deliveries stay counted in the table."""
    fake = fake_github
    fake.create_repo(FORK, private=True)
    fake.create_repo("meta/public-fork")
    fake.create_user("bob")

    def prepare(store: Store) -> None:
        fill(store, fork="meta/public-fork", shared=False)
        sync_store.track(store, FORK, "triton-lang/triton", "main", 7, 300)
        sync_store.set_suspended(store, 7, True, at=NOW - 3600, by="owner-carol")
        for n in range(2):
            data = {"installation": {"id": 7}, "repository": {"full_name": FORK}}
            q.enqueue(store, delivery_id=f"p{n}", hook_id="1", event="issue_comment", body=json.dumps(data).encode(),
                      summary=q.summarize_payload(data), now=NOW - 600 + n)
            d = q.claim(store, "w", now=NOW - 590)
            assert q.pause(store, d.id, "w", "paused: installation 7 is suspended", now=NOW - 580) == "paused"

    login = GitHubLogin(client_id=fake.app.client_id, client_secret=fake.app.client_secret, session_secret="s" * 40,
                        api_url=fake.url, session_max_age_s=3600, clock=lambda: 1000.0)
    c, _ = await serve(tmp_path, prepare, access=login)
    try:
        page = await _log_in(fake, c, "bob", "/health")
        assert page.status == 200
        doc = await (await c.get("/api/v1/health")).json()
        shown = json.dumps(doc) + await page.text()
        assert doc["deliveries"]["paused"] == 2
        assert "owner-carol" not in shown and FORK not in shown, doc["warnings"]
        assert doc["warnings"] == ["2 warnings of a fork you may not read"]
    finally:
        await c.close()


async def test_a_unit_forksync_closed_is_found_from_its_commits():
    """forksync closed the chain's PR #304 because its only upstream commit was deferred while the
    PR was open (branch state ``decided``; its close records nothing in the ledger). The Units page
    rightly lists it no more, but nothing on the dashboard said that PR #304 ever carried the
    commit or why it was closed: the commit's evidence page showed the defer alone. A person
    following the commit must find the sync PR that carried it and that forksync closed it because
    every commit was decided, on the page and in its JSON twin."""
    store = Store()
    fill(store)
    up = sha("u", 30)
    decide(store, up, "DEFERRED_BLOCKED", "waits for the LLVM bump", "defer by fiona: waits for the LLVM bump")
    sync_store.save_branch(store, repo=FORK, branch=f"forksync/chain-{up[:12]}", unit_id=f"chain-{up[:12]}", kind="chain",
                           pushed_tip=sha("h", 304), verified_tip="", pr=304, state=sync_store.DECIDED,
                           shas_json=json.dumps([up]), base_sha=sha("f", 0), conflict_sha="", blocked_reason="")
    c = await client_for(store)
    try:
        units = (await (await c.get(f"/api/v1/forks/{FORK}/units")).json())["units"]
        assert f"chain-{up[:12]}" not in [u["id"] for u in units]
        doc = await (await c.get(f"/api/v1/forks/{FORK}/ledger/{up[:12]}")).json()
        assert doc["entry"]["units"] == [{"id": f"chain-{up[:12]}", "kind": "chain", "pr": 304,
                                          "url": f"https://github.com/{FORK}/pull/304", "state": "decided"}]
        html = await (await c.get(f"/forks/{FORK}/ledger/{up[:12]}")).text()
        assert f'href="https://github.com/{FORK}/pull/304"' in html
        assert "closed by forksync: every upstream commit it carried was decided while it was open" in html
    finally:
        await c.close()


async def test_a_unit_still_carrying_a_decided_commit_says_so_not_needs_a_resolution():
    """A chain stopped at a conflict in upstream u32 holds a person's commits (their partial
    resolution), and u32 is then deferred: forksync leaves the branch as it is and says so once on
    the PR. The Units page still read "stopped at a conflict in upstream … : needs a resolution"
    — asking for the resolution of a commit the maintainer decided not to take now — and nothing
    said that the unit carries a decided commit. Its state must name the decided commit and its
    decision, with no "needs a resolution"; the JSON twin lists it under ``decided``."""
    store = Store()
    fill(store)
    u31, u32 = sha("u", 31), sha("u", 32)
    decide(store, u32, "DEFERRED_BLOCKED", "waits for the LLVM bump", "defer by fiona: waits for the LLVM bump")
    store.conn.execute("UPDATE ledger_snapshot SET disposition = 'IN_FLIGHT' WHERE repo = ? AND sha = ?", [FORK, u31])
    uid = f"chain-{u31[:12]}"
    sync_store.save_branch(store, repo=FORK, branch=f"forksync/{uid}", unit_id=uid, kind="chain", pushed_tip=sha("h", 305),
                           verified_tip="", pr=305, state="open", shas_json=json.dumps([u31, u32]), base_sha=sha("f", 0),
                           conflict_sha=u32, blocked_reason="")
    c = await client_for(store)
    try:
        units = {u["id"]: u for u in (await (await c.get(f"/api/v1/forks/{FORK}/units")).json())["units"]}
        u = units[uid]
        assert u["decided"] == [{"sha": u32, "disposition": "DEFERRED_BLOCKED", "reason": "waits for the LLVM bump"}]
        assert "needs a resolution" not in u["state"] and "DEFERRED_BLOCKED" in u["state"], u["state"]
        html = await (await c.get(f"/forks/{FORK}/units")).text()
        row = html.split(f'id="unit-{uid}"', 1)[1].split("</tr>", 1)[0]
        assert "needs a resolution" not in row and u["state"] in html_mod.unescape(row), row
    finally:
        await c.close()
