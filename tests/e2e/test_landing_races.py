"""Two landings of one closed sync PR at once: the ``pull_request.closed`` delivery's handler and the
poller's sync, whose ``land_closed`` lands a unit GitHub shows closed while its row says open
(:func:`bot.sync.landing.on_closed` for both). Neither waits for the fork lock; both read the row
open, and each says the close on the PR once (:func:`bot.github.common.comment_once`: look for its
marker, post when none). Two that both look before either posts say it twice.

The second landing has a client of its own: the local GitHub holds the first comment's post until
the test releases it, which a shared client (one request in flight per installation) would wait
behind. No sleeps: the post is released once both landings have reached it, or the second waits
for the first's claim."""
from __future__ import annotations

import asyncio

from bot.app.dispatch import Context
from bot.app.runtime import Clients
from bot.sync import landing
from bot.sync import store as sync_store
from tests.support.e2e import adopt_and_move_upstream, job_context, open_sync_prs
from tests.support.github import FAST_RETRY

FORK = "meta/triton"


async def test_a_close_landed_by_its_delivery_and_by_the_poller_at_once_is_said_once(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    _bundle, chain = await open_sync_prs(alice)
    n = chain["number"]
    await alice.post(f"/repos/meta/triton/issues/{n}/comments", data={"body": "deferred: waits for the LLVM bump"})
    await alice.patch(f"/repos/meta/triton/pulls/{n}", data={"state": "closed"})     # its delivery waits in the queue
    pr = await alice.getitem(f"/repos/meta/triton/pulls/{n}")

    handler = await job_context(bot)(inst.id)
    other = Clients(bot.settings, bot.session, retry=FAST_RETRY)
    await other.start()
    poller = Context(delivery=handler.delivery, gh=await other.client_for(inst.id), store=bot.store,
                     settings=bot.settings, sync=bot.svc, validation=bot.validation, installation_id=inst.id)
    waited = asyncio.Event()
    # waiting for the fork lock (the decisions' notes) is no answer: the comment's claim is, which
    # the poller's client carries (a claims of its own on the workdir's locks, as another worker's)
    other.claims.on_wait = lambda full, key: key and waited.set()
    hold = fake.faults.hold("POST", f"/repos/meta/triton/issues/{n}/comments", times=2)

    a = asyncio.create_task(landing.on_closed(handler, bot.svc, FORK, pr, sender={"login": "alice"}, fork_ref="main",
                                              refresh=False))
    b = asyncio.create_task(landing.on_closed(poller, bot.svc, FORK, pr, sender={"login": "alice"}, fork_ref="main",
                                              refresh=False))
    both, waiting = asyncio.create_task(hold.full.wait()), asyncio.create_task(waited.wait())
    await asyncio.wait({a, b, both, waiting}, return_when=asyncio.FIRST_COMPLETED)
    hold.release()
    await asyncio.gather(a, b)
    both.cancel()
    waiting.cancel()

    said = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{n}/comments")
            if c["user"]["login"] == "forksync[bot]"]
    assert [s.splitlines()[0] for s in said] == [f"<!-- forksync:closed:{n} -->"], said
    assert "**DEFERRED_BLOCKED**" in said[0]
    assert sync_store.branch_row(bot.store, FORK, chain["head"]["ref"])["state"] == "closed"
    await bot.settle()          # the delivery, handled after both, says nothing more
    assert bot.deliveries("dead") == []
    assert len([c async for c in alice.getiter(f"/repos/meta/triton/issues/{n}/comments")
                if c["user"]["login"] == "forksync[bot]"]) == 1
