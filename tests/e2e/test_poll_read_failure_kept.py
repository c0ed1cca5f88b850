"""The poller's read of upstream (GitHub's branch API) failing is its own failing ``poll`` job: a
sync another event brought (upstream's ``push``) fetches upstream with git and says nothing of
that read, so the job stays failing, counted, until a poll reaches upstream again — else a poller
that cannot read upstream for days never reaches ``/healthz``'s failures in a row. On the local
GitHub with the real bot, real git and the real store."""
from __future__ import annotations

from bot.sync import store as sync_store
from bot.sync.upstream import poll_once
from tests.support.e2e import install_on_fork, job_context
from tests.support.github import commit_files, git


def poll_jobs(bot) -> list[dict]:
    return [j for j in sync_store.failing_jobs(bot.store) if j["job"] == sync_store.POLL_JOB]


async def test_a_sync_from_a_push_keeps_the_polls_failing_read_of_upstream_counted(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    fake.faults.server_error("/repos/triton-lang/triton/branches/main", "GET", status=502, times=1000)
    notes = await poll_once(bot.store, bot.svc, job_context(bot), now=10**10)
    assert notes[0].startswith("meta/triton: poll failed: "), notes
    [job] = poll_jobs(bot)
    # upstream's push is delivered and synced (git fetch): the poll's read still fails
    commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await fake.refresh()
    await bot.settle()
    assert bot.deliveries("dead") == []
    notes = await poll_once(bot.store, bot.svc, job_context(bot), now=10**10 + 86400)
    assert notes[0].startswith("meta/triton: poll failed: "), notes
    [again] = poll_jobs(bot)
    assert (again["count"], again["since"]) == (2, job["since"]), again
