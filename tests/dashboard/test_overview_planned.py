"""The overview's "open units" figure counts the units listed under it (those in flight: a PR, or
a branch or refusal that stands for one); planned units waiting for a free slot
(``github.max_open_sync_prs``) are not open and not counted there, but the overview says them
after the list, as the status issue does ("N more planned unit(s) wait for a free slot"), so a
reader of either sees the same units."""
from __future__ import annotations

import re
from dataclasses import replace

from bot.dashboard import views
from bot.store import Store
from bot.sync import store as sync_store
from tests.dashboard.test_web import client_for, get_json, get_page
from tests.support.dashboard_world import FORK, NOW, fill, sha


def waiting(uid: str, kind: str, cap: int = 2) -> dict:
    """A planned unit as a sync records it when it waits for a slot (bot.sync.service.SyncService.sync)."""
    return {"id": uid, "kind": kind, "pr": 0, "url": "", "waiting": True, "cap": cap,
            "state": f"planned: waits for a free slot (at most {cap} sync PRs open at once)"}


async def test_the_open_units_figure_counts_its_list_and_the_units_waiting_for_a_slot_are_said_after_it():
    store = Store()
    fill(store)
    st = sync_store.load_status(store, FORK)
    later = [waiting(f"chain-{sha('u', 1700)[:12]}", "chain"), waiting(f"bundle-{sha('u', 1710)[:12]}", "bundle")]
    sync_store.save_status(store, replace(st, units=st.units + tuple(later)))
    c = await client_for(store)
    try:
        doc = await get_json(c, f"/api/v1/forks/{FORK}/overview")
        html = await get_page(c, f"/forks/{FORK}/")
    finally:
        await c.close()
    open_ids = [u["id"] for u in st.units]
    assert [u["id"] for u in doc["open_units"]] == open_ids
    assert doc["planned_waiting"] == [{"id": later[0]["id"], "kind": "chain"}, {"id": later[1]["id"], "kind": "bundle"}]
    assert doc["max_open_sync_prs"] == 2
    assert '<div class="v" id="open-units">2</div><div class="l">open units</div>' in html
    table = html.split('<table id="open-units-table">', 1)[1].split("</table>", 1)[0]
    assert re.findall(r"<tr><td>([^<]+)</td>", table) == open_ids
    assert (f'<p id="planned-waiting">2 more planned units wait for a free slot — at most 2 sync PRs are open at once '
            f'(<code>github.max_open_sync_prs</code>); the oldest opens first: {later[0]["id"]}, {later[1]["id"]}.</p>'
            ) in html


async def test_no_line_when_no_unit_waits_for_a_slot():
    store = Store()
    fill(store)
    doc = views.overview(store, FORK, NOW, views.Policy())
    assert (doc["planned_waiting"], doc["max_open_sync_prs"]) == ([], None)
    c = await client_for(store)
    try:
        assert 'id="planned-waiting"' not in await get_page(c, f"/forks/{FORK}/")
    finally:
        await c.close()
