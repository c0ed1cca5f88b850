"""End to end through HTTP: upstream gains commits → push webhook → a bundle PR
and a chain PR appear on the local GitHub → the chain merges before the bundle → ledger, pins
and the status issue are right. The real bot (web app, durable queue, worker, handlers, core)
talks to the local GitHub; git moves through real bare repositories."""
import time

from bot.sync import store as sync_store
from tests.support.e2e import install_on_fork, open_sync_prs, status_issue
from tests.support.github import commit_files, git


async def test_upstream_moves_prs_open_chain_lands_first_then_bundle(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    # the App is installed on the fork: the bot adopts it (tracks upstream, first sync, status issue)
    d = await install_on_fork(fake, bot, fork, inst.id)
    assert d.statuses == [202]
    assert [x.dead_reason for x in bot.deliveries("dead")] == []
    assert await open_sync_prs(alice) == []
    [issue] = await status_issue(alice)
    assert "| Backlog | 0 commits behind the frontier not handled |" in issue["body"]

    # upstream gains three commits; the push reaches the bot as a webhook (App installed upstream)
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: new x (#102)")
    c3 = commit_files(up_src, {"python/b.py": "b = 2\n"}, "Fix b (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    assert [x.dead_reason for x in bot.deliveries("dead")] == []

    prs = await open_sync_prs(alice)
    assert [p["head"]["ref"] for p in prs] == [f"forksync/bundle-{c1[:12]}", f"forksync/chain-{c2[:12]}"]
    bundle, chain = prs
    assert {lab["name"] for lab in bundle["labels"]} == {"forksync:bundle"}
    assert {lab["name"] for lab in chain["labels"]} == {"forksync:chain", "area:amd"}
    assert f"[`{c1[:12]}`](https://github.com/triton-lang/triton/commit/{c1})" in bundle["body"]
    assert f"[`{c3[:12]}`]" in bundle["body"] and f"`{c2[:12]}`" not in bundle["body"]
    commits = [c async for c in alice.getiter(f"/repos/meta/triton/pulls/{bundle['number']}/commits")]
    assert [c["commit"]["message"].count(f"Upstream-Commit: {s}") for c, s in zip(commits, [c1, c3])] == [1, 1]

    # re-running (a redelivery of the push) opens no duplicate
    push = fake.webhooks.of("push")[-1]
    await fake.webhooks.redeliver(push.guid)
    await bot.settle()
    assert [p["number"] for p in await open_sync_prs(alice)] == [bundle["number"], chain["number"]]

    # the chain lands first, then the bundle (rebase, never squash)
    for pr in (chain, bundle):
        await alice.put(f"/repos/meta/triton/pulls/{pr['number']}/merge", data={"merge_method": "rebase"})
        await bot.settle()
    assert [x.dead_reason for x in bot.deliveries("dead")] == []
    assert await open_sync_prs(alice) == []
    st = sync_store.load_status(bot.store, "meta/triton")
    assert (st.backlog, st.upstream_head, st.frontier, st.contiguous_pin) == (0, c3, c3, c3)
    assert st.days_behind == 0.0
    # Days Behind is measured between two commits' times, which the status shows
    when = int(git(up_src, "log", "-1", "--format=%ct", c3))
    assert (st.upstream_head_at, st.frontier_at) == (when, when)
    [issue] = await status_issue(alice)
    assert "| Backlog | 0 commits behind the frontier not handled |" in issue["body"]
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(when))
    assert f"| upstream head | `{c3[:12]}`, committed {stamp} |" in issue["body"]
    assert f"| frontier pin | `{c3[:12]}`, committed {stamp} |" in issue["body"]
    assert "None." in issue["body"].split("## Open bundles and chains")[1].split("##")[0]
    # the sync branches are gone
    heads = git(up_src, "ls-remote", str(fork.path), "refs/heads/forksync/*")
    assert heads == ""
