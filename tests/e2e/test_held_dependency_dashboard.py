"""The dashboard's overview lists each open unit with what it waits for, as the status issue
does: a chain that lands after a unit an upstream rewind holds must say that unit is held there
too, or "waits for bundle-…" reads as a bundle about to land. On the local GitHub with the real
bot, real git and the real store, and the real dashboard over HTTP."""
from __future__ import annotations

from tests.dashboard.test_web import client_for, get_page
from tests.e2e.test_conflict_owed import source, stacked_world  # noqa: F401
from tests.e2e.test_held_dependency_waits import bundle_held_under_a_chain


async def test_the_overview_says_the_unit_a_chain_waits_for_is_held(stacked_world):  # noqa: F811
    w, up_src, upstream = stacked_world
    b0, b3, bundle, chain = await bundle_held_under_a_chain(w, up_src, upstream)
    c = await client_for(w.bot.store)
    try:
        html = await get_page(c, "/forks/meta/triton/")
    finally:
        await c.close()
    table = html.split('<table id="open-units-table">', 1)[1].split("</table>", 1)[0]
    [row] = [r for r in table.split("<tr>") if r.startswith("<td>chain-")]
    assert f"waits for bundle-{b0[:12]}" in row, row
    assert "held" in row.split(f"waits for bundle-{b0[:12]}", 1)[1], row
