"""A unit carrying an upstream commit that upstream's force push dropped is rebuilt without it by
the sync (bot/sync/service.py, the units not among those to publish); one a person merged while
that sync published the others is left to its landing, as a planned unit is."""
from __future__ import annotations

import json

from bot.sync import landing
from bot.sync import store as sync_store
from tests.support.e2e import install_on_fork, open_sync_prs
from tests.support.github import commit_files, git

FORK = "meta/triton"


async def test_a_unit_with_a_dropped_commit_merged_while_the_sync_ran_is_not_pushed_again(world):
    """alice merges the bundle PR (its second commit is one upstream's force push dropped) after
    the sync read the open units, while it publishes the new commit's unit; the worker lands it
    (row ``merged``, branch deleted). What alice sees: ``forksync/bundle-…`` pushed back to the
    fork and a PR asked for commits main holds (GitHub's deleted branch refuses the push's
    lease: the unit is blocked and the delivery retried), and the unit's row no longer saying it
    merged, nor in which PR. What she should see: the landed unit left alone, its row ``merged``
    with its PR, no branch or PR of it again, nothing dead-lettered."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    commit_files(up_src, {"python/b.py": "b = 2\n"}, "Set b (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    [bundle] = await open_sync_prs(alice)
    branch = bundle["head"]["ref"]
    git(up_src, "reset", "-q", "--hard", "HEAD~1")
    commit_files(up_src, {"python/n.py": "n = 1\n"}, "Add n (#104)")
    svc = bot.svc
    real = svc.publish
    merged: list[int] = []

    async def publish(ctx, full_name, git_dir, cfg, core, unit, up, **kw):
        if f"forksync/{unit.id}" != branch and not merged:
            # the merge and its landing (another worker's) come while this sync publishes the
            # new commit's unit, after it read the open units
            await alice.put(f"/repos/meta/triton/pulls/{bundle['number']}/merge", data={"merge_method": "merge"})
            pr = await alice.getitem(f"/repos/meta/triton/pulls/{bundle['number']}")
            await landing.on_closed(ctx, svc, full_name, pr, sender=pr.get("merged_by") or {}, refresh=False)
            merged.append(bundle["number"])
        return await real(ctx, full_name, git_dir, cfg, core, unit, up, **kw)

    svc.publish = publish
    git(up_src, "push", "-q", "-f", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    assert merged == [bundle["number"]]
    row = sync_store.branch_row(bot.store, FORK, branch)
    assert (row["state"], int(row["pr"]), row.get("blocked_reason") or "") == ("merged", bundle["number"], ""), row
    for pr in [p async for p in alice.getiter("/repos/meta/triton/pulls?state=all")]:
        if pr["number"] == bundle["number"]:
            continue
        messages = [c["commit"]["message"] async for c in alice.getiter(f"/repos/meta/triton/pulls/{pr['number']}/commits")]
        assert not any(f"Upstream-Commit: {c1}" in m for m in messages), (pr["number"], pr["head"]["ref"])
    heads = [p["head"]["ref"] async for p in alice.getiter("/repos/meta/triton/pulls?state=open")]
    assert branch not in heads, heads
    assert bot.deliveries("dead") == []


async def test_a_unit_rebuilt_without_a_dropped_commit_still_lands_after_what_it_landed_after(world):
    """The bundle (two commits) lands after the open chain (its row's ``depends_json``: its picks
    were predicted on the chain's); upstream's force push drops the bundle's second commit, and
    the sync rebuilds the bundle without it. What alice sees: the rebuilt bundle's row records that
    it lands after nothing, so its gate no longer holds it for the chain. What she should see: it
    still lands after the chain, which is still in flight, as a re-planned unit does."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: set x (#100)")
    commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    commit_files(up_src, {"python/b.py": "b = 2\n"}, "Set b (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    rows = {r["kind"]: r for r in sync_store.open_branches(bot.store, FORK)}
    assert set(rows) == {"bundle", "chain"}, rows
    bundle, chain = rows["bundle"], rows["chain"]
    assert len(json.loads(bundle["shas_json"])) == 2, bundle
    sync_store.save_branch(bot.store, **{**bundle, "depends_json": json.dumps([chain["unit_id"]])})
    git(up_src, "reset", "-q", "--hard", "HEAD~1")
    # a commit on top: upstream's history was rewritten, not only moved back (a rewind holds the
    # units beyond it, bot/sync/rewind.py, tests/e2e/test_upstream_rewind.py)
    commit_files(up_src, {"docs/n.md": "n\n"}, "Document n (#104)")
    git(up_src, "push", "-q", "-f", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    row = sync_store.branch_row(bot.store, FORK, bundle["branch"])
    assert row["state"] == "open" and row["pushed_tip"] != bundle["pushed_tip"], row
    assert len(json.loads(row["shas_json"])) == 1, row
    assert sync_store.branch_row(bot.store, FORK, chain["branch"])["state"] == "open"
    assert json.loads(row["depends_json"]) == [chain["unit_id"]], row["depends_json"]
    assert bot.deliveries("dead") == []
