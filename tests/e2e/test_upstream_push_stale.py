"""A push to upstream announces a new head; the fork's sync of it fails (GitHub answering 5xx):
the numbers are of the old head and must be shown stale, as the poller already does when its
sync of a head it saw fails (:func:`bot.sync.upstream.poll_once`)."""
import pytest

from bot.dashboard import views
from bot.sync import store as sync_store
from bot.sync.upstream import on_upstream_push
from tests.e2e.test_sync_handlers import synced
from tests.support.e2e import job_context, status_issue
from tests.support.github import commit_files, git


async def test_a_failed_sync_of_an_upstream_push_leaves_the_numbers_stale_not_current(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await synced(world)
    before = sync_store.load_status(bot.store, "meta/triton")
    assert not before.stale(86_400, bot.svc.now())
    head = commit_files(up_src, {"python/b.py": "b = 2\n"}, "Speed up b (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    fake.faults.add("GET", "/repos/meta/triton/contents/*", 502, "Server Error", times=1000)
    ctx = await job_context(bot)(inst.id)
    with pytest.raises(Exception):
        await on_upstream_push(ctx, bot.svc, "triton-lang/triton", "refs/heads/main", head)
    st = sync_store.load_status(bot.store, "meta/triton")
    assert st.upstream_head == before.upstream_head                      # the numbers are the old head's
    stale = views.stale_of(st, bot.svc.now(), views.Policy())
    assert stale["stale"] and head[:12] in stale["reason"], stale        # dashboard, /api/v1, /metrics
    fake.faults.queue.clear()
    [issue] = await status_issue(alice)
    assert "These numbers are stale" in issue["body"] and head[:12] in issue["body"], issue["body"][:600]


async def test_a_failed_fetch_of_the_fork_is_not_said_to_be_upstreams(world, tmp_path):
    """The fork's fetch is refused (its git URL gone, a token without access) while upstream's
    works: the numbers are stale, and every surface said "the last fetch of upstream failed: git
    fetch -q --prune failed …" — sending the reader to upstream's access, which is fine. The
    reason must name the fork's fetch."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await synced(world)
    real = bot.svc.remote_url

    async def fork_gone(full_name, installation_id):
        if full_name == "meta/triton":
            return str(tmp_path / "no-such-fork.git"), []
        return await real(full_name, installation_id)

    bot.svc.remote_url = fork_gone
    ctx = await job_context(bot)(inst.id)
    with pytest.raises(Exception):
        await bot.svc.sync(ctx, "meta/triton", reason="fork push")
    st = sync_store.load_status(bot.store, "meta/triton")
    stale = views.stale_of(st, bot.svc.now(), views.Policy())
    assert stale["stale"], stale
    assert "upstream failed" not in stale["reason"] and "the fork meta/triton" in stale["reason"], stale["reason"]
    [issue] = await status_issue(alice)
    banner = issue["body"].split("## Where")[0]
    assert "upstream failed" not in banner and "the fork meta/triton" in banner, banner
