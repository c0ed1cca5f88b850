"""The poller's failing ``poll`` job (a polled sync, or the poll's read of upstream, that failed:
it has no delivery to dead-letter) is on the status issue, the dashboard and ``/healthz`` as
"failing since". A sync that succeeds by other means — upstream's ``push`` delivered the same
update — shows the fork synced to upstream: the line goes with it, not at the next poll, on the
local GitHub with the real bot, real git and the real store."""
from __future__ import annotations

from bot.sync import store as sync_store
from bot.sync.upstream import poll_once
from tests.support.e2e import install_on_fork, job_context, open_sync_prs, status_issue
from tests.support.github import commit_files, git

FAILING = "- `poll`: failing since "


def poll_jobs(bot) -> list[dict]:
    return [j for j in sync_store.failing_jobs(bot.store) if j["job"] == "poll"]


async def test_a_sync_from_a_push_delivery_clears_the_failing_poll(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    fake.webhooks.auto_deliver = False           # upstream's push is held back: the poller sees it first
    fake.faults.server_error("/repos/meta/triton/pulls", "POST", status=502, times=1000)
    commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await fake.refresh()
    notes = await poll_once(bot.store, bot.svc, job_context(bot), now=10**10)
    assert notes[0].startswith("meta/triton: sync failed: "), notes
    [issue] = await status_issue(alice)
    assert FAILING in issue["body"], issue["body"]
    assert [j["repo"] for j in poll_jobs(bot)] == ["meta/triton"]
    # GitHub answers again, and the push GitHub held back is delivered: its sync opens the PR
    fake.faults.clear()
    await fake.webhooks.flush()
    fake.webhooks.auto_deliver = True
    await bot.settle()
    assert bot.deliveries("dead") == []
    assert len(await open_sync_prs(alice)) == 1
    [issue] = await status_issue(alice)
    assert FAILING not in issue["body"], issue["body"]
    assert poll_jobs(bot) == []
