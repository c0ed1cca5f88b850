"""``github.max_open_sync_prs``: a sync opens new units only while fewer sync PRs than that are
open; the rest wait (status issue, dashboard, the sync's summary) and the oldest opens at the next
sync after a slot frees."""
import pytest

from bot.dashboard import views
from bot.sync import store as sync_store
from tests.support.e2e import CONFIG as E2E_CONFIG
from tests.support.e2e import adopt_and_move_upstream, open_sync_prs, status_issue, sync_world

CONFIG = E2E_CONFIG + """\
github:
  max_open_sync_prs: 1
"""


@pytest.fixture
async def world(fake_github, tmp_path):
    async with sync_world(fake_github, tmp_path, CONFIG) as w:
        yield w


async def test_units_past_the_cap_wait_and_the_oldest_opens_when_a_slot_frees(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    assert bot.deliveries("dead") == [] and bot.deliveries("failed") == []
    # two units planned (a bundle for c1, a chain for c2 in the divergent amd area); one slot
    [bundle] = await open_sync_prs(alice)
    assert bundle["head"]["ref"] == f"forksync/bundle-{c1[:12]}"
    assert sync_store.branch_row(bot.store, "meta/triton", f"forksync/chain-{c2[:12]}") is None
    st = sync_store.load_status(bot.store, "meta/triton")
    assert [(u["id"], u.get("waiting", False)) for u in st.units] == [(f"bundle-{c1[:12]}", False),
                                                                     (f"chain-{c2[:12]}", True)]
    [issue] = await status_issue(alice)
    body = issue["body"]
    assert (f"1 more planned unit(s) wait for a free slot — at most 1 sync PRs are open at once "
            f"(`github.max_open_sync_prs`); the oldest opens first: `chain-{c2[:12]}`.") in body
    assert f"retry:chain-{c2[:12]}" not in body            # nothing to retry: it was never opened
    doc = views.units(bot.store, "meta/triton", now=0.0, policy=views.Policy())
    chain = next(u for u in doc["units"] if u["id"] == f"chain-{c2[:12]}")
    assert (chain["pr_state"], chain["state"]) == ("planned", "planned: waits for a free slot (at most 1 sync PRs open at once)")
    assert [u["id"] for u in views.overview(bot.store, "meta/triton", now=0.0, policy=views.Policy())["open_units"]] \
        == [f"bundle-{c1[:12]}"]

    # alice closes the bundle with a reason: its slot frees, and the chain opens at that sync
    await alice.post(f"/repos/meta/triton/issues/{bundle['number']}/comments",
                     data={"body": "deferred: waits for the LLVM bump"})
    await alice.patch(f"/repos/meta/triton/pulls/{bundle['number']}", data={"state": "closed"})
    await bot.settle()
    assert bot.deliveries("dead") == []
    assert [p["head"]["ref"] for p in await open_sync_prs(alice)] == [f"forksync/chain-{c2[:12]}"]
    [issue] = await status_issue(alice)
    assert "wait for a free slot" not in issue["body"]
