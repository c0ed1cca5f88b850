"""GitHub failing for a while (a 5xx past the client's retries, a rate limit) while the sync that
closed a bundle writes again the body of the chain landing after it: that is no refusal of the
chain's pull request. ``publish`` leaves such failures to the delivery's retry and
:func:`bot.github.client.rate_limited` says callers "never record it as a refusal"; the chain's row
must not say GitHub refused its PR, nor its PR get a comment naming a setting to change."""
from __future__ import annotations

import pytest

from bot.sync import store as sync_store
from tests.e2e.test_conflict_owed import source, stacked_world  # noqa: F401
from tests.e2e.test_decided_dependency_waits import bundle_and_chain, defer_the_bundle_held_at_its_close


@pytest.mark.parametrize("status, message", [(502, "Bad Gateway"), (429, "API rate limit exceeded")])
async def test_github_failing_for_a_while_on_the_chains_new_body_is_no_refusal(stacked_world, status,  # noqa: F811
                                                                                message):
    w, up_src, upstream = stacked_world
    b0, bundle, chain = await bundle_and_chain(w, up_src, upstream)
    # the chain's body is written (its deferred commits) before the bundle is closed: fail only after
    hold, said = await defer_the_bundle_held_at_its_close(w, b0, bundle)
    w.fake.faults.add("PATCH", f"/repos/meta/triton/pulls/{chain['number']}", status, message, times=10_000)
    hold.release()
    await said
    fired = [f.status for f in w.fake.faults.fired if f.path.endswith(f"/pulls/{chain['number']}")]
    assert fired and set(fired) == {status}, "the chain's body was not written: not the case under test"
    w.fake.faults.clear()
    await w.bot.settle()

    assert (await w.pr(bundle["number"]))["state"] == "closed"
    row = sync_store.branch_row(w.bot.store, "meta/triton", chain["head"]["ref"])
    assert (row["blocked_step"], row["blocked_reason"]) in ((None, None), ("", "")), row
    said_on_chain = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{chain['number']}/comments")
                     if c["user"]["login"] == "forksync[bot]"]
    assert not any("refused" in b.lower() or "blocked" in b.lower() for b in said_on_chain), said_on_chain
