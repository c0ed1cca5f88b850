"""The poller follows the fork's configuration as of its last sync: ``github.metrics_keep_days``
trims the snapshots a poll writes, and a ``poll_interval_s`` changed after adoption takes effect."""
import pytest

from bot.sync import store as sync_store
from bot.sync.upstream import due_for_poll, poll_once
from tests.support.e2e import CONFIG as E2E_CONFIG
from tests.support.e2e import adopt_and_move_upstream, job_context, sync_world

CONFIG = E2E_CONFIG + """\
github:
  poll_interval_s: 600
  metrics_keep_days: 3650
"""


@pytest.fixture
async def world(fake_github, tmp_path):
    async with sync_world(fake_github, tmp_path, CONFIG) as w:
        yield w


async def test_polls_keep_the_forks_history_and_follow_its_interval(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    [row] = sync_store.tracked_forks(bot.store)
    assert (row["poll_interval_s"], row["keep_days"]) == (600, 3650)
    synced = len(sync_store.snapshots(bot.store, "meta/triton"))
    assert synced >= 1

    make_ctx = job_context(bot)

    # a poll 1,000 days after the syncs: upstream unchanged; under the default 400 days the
    # syncs' snapshots would go, under this fork's 3,650 they stay
    later = sync_store.load_status(bot.store, "meta/triton").computed_at + 1000 * 86_400
    assert await poll_once(bot.store, bot.svc, make_ctx, now=later) == ["meta/triton: upstream unchanged"]
    rows = sync_store.snapshots(bot.store, "meta/triton")
    assert len(rows) == synced + 1 and rows[-1]["source"] == "refresh"

    # the interval changed after adoption (an older release tracked 300 s): the next sync takes
    # the configuration's value again, and the poll is due by it
    sync_store.update_tracking(bot.store, "meta/triton", poll_interval_s=300, keep_days=400)
    await bot.svc.sync(await make_ctx(inst.id), "meta/triton", reason="test")
    [row] = sync_store.tracked_forks(bot.store)
    assert (row["poll_interval_s"], row["keep_days"]) == (600, 3650)
    assert due_for_poll([row], later + 599) == [] and due_for_poll([row], later + 600) == [row]
