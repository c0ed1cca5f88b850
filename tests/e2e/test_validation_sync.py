"""The whole loop with the sync service: upstream moves → the bot opens sync PRs (its own
``pull_request.opened`` events are dropped by the loop guard, so the reconcile pass finds them) →
L1 runs on each head through the local backend → the bundle merges by itself, the landing
handler refreshes the ledger → the chain waits for its area owner, then the base it lands on has
moved: the bot merges the base in, re-tests, merges. An upstream commit that breaks a test keeps
its bundle red and open."""
import pytest

from bot.app import schedules
from bot.sync import store as sync_store
from tests.support.e2e import move_upstream, open_sync_prs
from tests.support.github import commit_files, git
from tests.support.sync_world import CONFIG, validated_world
from tests.support.validation_world import tick_ctx


@pytest.fixture
async def world(fake_github, tmp_path):
    async with validated_world(fake_github, tmp_path, CONFIG) as w:
        yield w



async def test_sync_prs_are_validated_gated_and_merged_by_the_bot(world):
    w, up_src, upstream = world
    c1, c2 = move_upstream(up_src, upstream)
    await w.bot.settle()
    bundle, chain = await open_sync_prs(w.alice)
    assert (bundle["head"]["ref"], chain["head"]["ref"]) == (f"forksync/bundle-{c1[:12]}", f"forksync/chain-{c2[:12]}")
    assert w.run_of(bundle["head"]["sha"], "forksync/gate") is None        # the bot's own PR events are dropped

    notes = await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert any("gate: Ready to merge" in n for n in notes), notes
    assert w.run_of(bundle["head"]["sha"], "forksync/L1/unit").conclusion == "success"
    assert (await w.pr(bundle["number"]))["merged"] is True
    assert w.run_of(chain["head"]["sha"], "forksync/gate").output["title"] == "Blocked: 1 condition not met"
    st = sync_store.load_status(w.bot.store, "meta/triton")
    main = await w.alice.getitem("/repos/meta/triton/branches/main")
    assert st.fork_head == main["commit"]["sha"]                             # the landing refreshed the ledger
    assert st.frontier == c1

    await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    final = await w.pr(chain["number"])
    assert final["merged"] is True
    assert [u["status"] for u in w.fake.requests_for("pulls/update-branch")] == [202]
    assert await open_sync_prs(w.alice) == []
    st = sync_store.load_status(w.bot.store, "meta/triton")
    assert (st.backlog, st.frontier) == (0, c2)


async def test_an_upstream_commit_that_breaks_a_test_keeps_its_bundle_open(world):
    w, up_src, upstream = world
    commit_files(up_src, {"lib.py": "def add(a, b):\n    return a * b\n"}, "Refactor add (#105)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    (bundle,) = await open_sync_prs(w.alice)
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    l1 = w.run_of(bundle["head"]["sha"], "forksync/L1/unit")
    assert (l1.conclusion, l1.output["title"]) == ("failure", "2 failing of 3")
    gate = w.run_of(bundle["head"]["sha"], "forksync/gate")
    assert gate.conclusion == "failure" and "2 new failing test(s)" in gate.output["summary"]
    assert (await w.pr(bundle["number"]))["merged"] is False
