"""The dashboard on a chain that waits for the conflict agent (the sync's agent time ran out
before its turn, or cut its call): the Units page and its JSON twin say so, as its PR and the
status issue do. Real store, the real pages."""
from __future__ import annotations

import html as html_mod
import json

from bot.store import Store
from bot.sync import store as sync_store
from tests.dashboard.test_dash_states_breaks import client_for
from tests.support.dashboard_world import FORK, NOW, fill, sha

WAITS = "not yet tried by the conflict agent: will be tried at the next sync"


async def test_a_chain_waiting_for_the_conflict_agent_says_so_on_the_units_page():
    """A chain stopped at a conflict in upstream u31 whose agent call the sync's deadline cut: its
    row keeps ``agent_waiting_since``. The status issue says "not yet tried by the conflict agent:
    will be tried at the next sync"; the Units page said only "stopped at a conflict … needs a
    resolution", so a person reading it could not tell that the agent will still try. It must
    say both, and the JSON twin give since when it waits."""
    store = Store()
    fill(store)
    u31 = sha("u", 31)
    store.conn.execute("UPDATE ledger_snapshot SET disposition = 'IN_FLIGHT' WHERE repo = ? AND sha = ?", [FORK, u31])
    uid = f"chain-{u31[:12]}"
    sync_store.save_branch(store, repo=FORK, branch=f"forksync/{uid}", unit_id=uid, kind="chain", pushed_tip=sha("h", 306),
                           verified_tip="", pr=306, state="open", shas_json=json.dumps([u31]), base_sha=sha("f", 0),
                           conflict_sha=u31, blocked_reason="", agent_waiting_since=NOW - 1800)
    c = await client_for(store)
    try:
        units = {u["id"]: u for u in (await (await c.get(f"/api/v1/forks/{FORK}/units")).json())["units"]}
        u = units[uid]
        assert f"stopped at a conflict in upstream {u31[:12]}: needs a resolution" in u["state"], u["state"]
        assert WAITS in u["state"], u["state"]
        assert u["agent_waiting_since"] == NOW - 1800
        html = await (await c.get(f"/forks/{FORK}/units")).text()
        row = html.split(f'id="unit-{uid}"', 1)[1].split("</tr>", 1)[0]
        assert WAITS in html_mod.unescape(row), row
    finally:
        await c.close()
