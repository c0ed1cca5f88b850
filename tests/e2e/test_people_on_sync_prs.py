"""What people do to forksync's sync PRs, end to end on the local GitHub: a draft a person made
stays theirs, and a head whose picks a person's push replaced is never merged (``draft`` and
``picks-missing`` in bot.validation.gate)."""
from __future__ import annotations

import pytest

from bot.app import schedules
from tests.support.e2e import move_upstream, open_sync_prs
from tests.support.github import commit_files, git
from tests.support.sync_world import CONFIG, validated_world
from tests.support.validation_world import tick_ctx

TO_DRAFT = ("mutation($id: ID!) { convertPullRequestToDraft(input: {pullRequestId: $id}) "
            "{ pullRequest { number isDraft } } }")


@pytest.fixture
async def world(fake_github, tmp_path):
    async with validated_world(fake_github, tmp_path, CONFIG) as w:
        yield w


async def bundle_and_a_clone(w, up_src, upstream) -> tuple[str, dict, object]:
    """Upstream c1 (``python/a.py``), its bundle PR, and alice's clone of the fork on a branch
    ``mine`` at ``main``: ``(c1, bundle PR, clone path)``."""
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [bundle] = await open_sync_prs(w.alice)
    clone = w.work / "clone"
    git(w.work, "clone", "-q", str(w.fork.path), str(clone))
    git(clone, "checkout", "-q", "-B", "mine", "origin/main")
    return c1, bundle, clone


async def test_a_sync_pr_a_person_turned_into_a_draft_is_not_undrafted_and_merged(world):
    """alice converts the (ready) bundle PR to a draft — GitHub's "not ready, do not merge" —
    before the gate looked at it. forksync takes out of draft only the drafts it opened (a chain
    at a conflict): hers stays a draft, unmerged, the gate saying why, until she marks it ready."""
    w, up_src, upstream = world
    move_upstream(up_src, upstream)
    await w.bot.settle()
    bundle, _chain = await open_sync_prs(w.alice)
    assert bundle["draft"] is False
    await w.alice.graphql(TO_DRAFT, endpoint=f"{w.fake.url}/graphql", id=bundle["node_id"])
    assert (await w.pr(bundle["number"]))["draft"] is True

    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    after = await w.pr(bundle["number"])
    assert (after["merged"], after["draft"]) == (False, True)
    assert "`draft`" in w.run_of(after["head"]["sha"], "forksync/gate").output["summary"]
    await w.alice.graphql(TO_DRAFT.replace("convertPullRequestToDraft", "markPullRequestReadyForReview"),
                          endpoint=f"{w.fake.url}/graphql", id=bundle["node_id"])
    # (GitHub's ready_for_review event asks the gate again)
    await w.alice.post(f"/repos/meta/triton/issues/{bundle['number']}/comments", data={"body": "/forksync merge"})
    await w.bot.settle()
    assert (await w.pr(bundle["number"]))["merged"] is True


async def test_a_bundle_whose_picks_a_person_replaced_is_not_merged_without_its_upstream_commit(world):
    """alice force-pushes the bundle's branch, replacing forksync's pick of c1 (``Upstream-Commit:
    c1``) by her own commit (no trailer, a tweaked change). L1 is green on it and a bundle outside
    owned areas needs no approval, but merged, c1 would not count as picked: ``picks-missing``."""
    w, up_src, upstream = world
    c1, bundle, clone = await bundle_and_a_clone(w, up_src, upstream)
    branch = bundle["head"]["ref"]
    commit_files(clone, {"python/a.py": "a = 2  # tuned\n"}, "speed up a, tuned")
    git(clone, "push", "-q", "-f", "origin", f"mine:refs/heads/{branch}")
    await w.bot.settle()

    pr = await w.pr(bundle["number"])
    assert pr["merged"] is False
    summary = w.run_of(pr["head"]["sha"], "forksync/gate").output["summary"]
    assert "`picks-missing`" in summary and c1[:12] in summary, summary


async def test_a_chain_whose_resolution_forksync_rejected_is_not_merged(world):
    """alice force-pushes the chain's branch with her own version of the AMD change, dropping
    forksync's pick and its ``Upstream-Commit`` trailer. forksync answers on the PR that the
    push is rejected (trailer missing), and the gate holds it for the same reason even once the
    area's owner approves."""
    w, up_src, upstream = world
    _c1, c2 = move_upstream(up_src, upstream)
    await w.bot.settle()
    _bundle, chain = await open_sync_prs(w.alice)
    branch = chain["head"]["ref"]
    clone = w.work / "clone"
    git(w.work, "clone", "-q", str(w.fork.path), str(clone))
    git(clone, "checkout", "-q", "-B", "mine", "origin/main")
    head = commit_files(clone, {"third_party/amd/x.cpp": "int x = 2; // ours\n"}, "AMD: our own x")
    git(clone, "push", "-q", "-f", "origin", f"mine:refs/heads/{branch}")
    await w.bot.settle()
    replies = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{chain['number']}/comments")]
    assert any(r.startswith(f"<!-- forksync:resolution:{head} -->") and "trailers missing" in r for r in replies)

    await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert (await w.pr(chain["number"]))["merged"] is False
    assert "`picks-missing`" in w.run_of(head, "forksync/gate").output["summary"]


async def test_a_sync_pr_squash_merged_by_hand_is_said_to_have_lost_its_picks(world):
    """alice squash-merges a two-commit bundle in GitHub's UI (forksync merges with a merge
    commit: one fork commit per upstream commit). No fork commit names the two upstream commits
    now; the PR says so to her, naming them and where the picks stay, before the ledger is rebuilt."""
    w, up_src, upstream = world
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    c2 = commit_files(up_src, {"python/b.py": "b = 2\n"}, "Add b (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [bundle] = await open_sync_prs(w.alice)
    await w.alice.put(f"/repos/meta/triton/pulls/{bundle['number']}/merge", data={"merge_method": "squash"})
    await w.bot.settle()
    merged = await w.pr(bundle["number"])
    [note] = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{bundle['number']}/comments")
              if "does not hold its picks" in c["body"]]
    assert note.split("\n")[1].startswith(f"@alice merged this sync PR as `{merged['merge_commit_sha'][:12]}`, which "
                                          "does not hold its picks (a squash merge")
    assert f"- `{c1}`\n- `{c2}`\n" in note and f"`refs/pull/{bundle['number']}/head`" in note
    assert w.bot.deliveries("dead") == []


async def test_a_bundle_a_person_picked_again_with_cherry_pick_x_keeps_its_upstream_commit(world):
    """alice re-does the bundle's pick of c1 herself with ``git cherry-pick -x`` (``(cherry picked
    from commit c1)``, a pick the ledger counts) and force-pushes it. Every upstream commit of the
    unit is still named by a pick the ledger reads, so the gate does not hold it as
    ``picks-missing``; merged, the ledger records c1 picked."""
    w, up_src, upstream = world
    c1, bundle, clone = await bundle_and_a_clone(w, up_src, upstream)
    branch = bundle["head"]["ref"]
    git(clone, "fetch", "-q", str(upstream.path), "main")
    git(clone, "-c", "user.name=alice", "-c", "user.email=alice@example.com", "cherry-pick", "-x", c1)
    head = git(clone, "rev-parse", "HEAD").strip()
    git(clone, "push", "-q", "-f", "origin", f"mine:refs/heads/{branch}")
    await w.bot.settle()
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")

    summary = w.run_of(head, "forksync/gate").output["summary"]
    assert "`picks-missing`" not in summary, summary
    assert (await w.pr(bundle["number"]))["merged"] is True, summary
