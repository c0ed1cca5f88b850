"""A failed adoption shows on the fork's status issue, and a later adoption that succeeds takes it
off again (a recovered failure must stop showing as failing); a repository that is no fork gets
no status issue for a success."""
import aiohttp

from bot.app import queue as q
from bot.sync import store as sync_store
from tests.support.e2e import installation_event, status_issue


async def test_an_adoption_that_succeeds_after_a_failure_clears_it_from_the_status_issue(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    payload = installation_event(fake, inst.id, "created", (fork,))
    # GitHub refuses the fork's config read (a missing grant, a repository rule): adoption fails
    fake.faults.add("GET", "/repos/meta/triton/contents/*", 403, "Resource not accessible by integration", times=1000)
    await fake.webhooks.deliver("installation", payload)
    await bot.settle()
    fake.faults.clear()
    assert [(j["repo"], j["job"]) for j in sync_store.failing_jobs(bot.store)] == [("meta/triton", "adopt")]
    [issue] = await status_issue(alice)
    assert "- `adopt`: failing since" in issue["body"], issue["body"]
    # GitHub lets it read the config again: adopted, synced, and the failure is off the issue
    await fake.webhooks.deliver("installation", payload)
    await bot.settle()
    assert sync_store.failing_jobs(bot.store) == []
    assert [r["fork"] for r in sync_store.tracked_forks(bot.store)] == ["meta/triton"]
    [issue] = await status_issue(alice)
    assert "`adopt`" not in issue["body"] and "job failing" not in issue["body"], issue["body"]


async def test_a_repository_that_is_no_fork_gets_no_status_issue_when_adopted(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    other = fake.create_repo("meta/other", source=up_src)          # no .github/forksync.yml: no fork
    await fake.webhooks.deliver("installation", installation_event(fake, inst.id, "created", (other,)))
    await bot.settle()
    assert sync_store.failing_jobs(bot.store) == []
    issues = [i async for i in alice.getiter("/repos/meta/other/issues?state=all")]
    assert issues == []


async def test_a_failure_shown_on_a_repository_that_turns_out_no_fork_is_taken_off_its_issue(world):
    """The failure opened a status issue (whether the repository was a fork was not known); the
    adoption that then finds no fork there updates that issue, and opens none."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    other = fake.create_repo("meta/other", source=up_src)
    payload = installation_event(fake, inst.id, "created", (other,))
    fake.faults.add("GET", "/repos/meta/other/contents/*", 403, "Resource not accessible by integration", times=1000)
    await fake.webhooks.deliver("installation", payload)
    await bot.settle()
    fake.faults.clear()
    [issue] = [i async for i in alice.getiter("/repos/meta/other/issues?state=open")]
    assert "- `adopt`: failing since" in issue["body"]
    await fake.webhooks.deliver("installation", payload)
    await bot.settle()
    assert sync_store.failing_jobs(bot.store) == [] and sync_store.tracked_forks(bot.store) == []
    [again] = [i async for i in alice.getiter("/repos/meta/other/issues?state=open")]
    assert again["number"] == issue["number"] and "`adopt`" not in again["body"], again["body"]


async def _dead_adoption(fake, bot, alice, fork, inst):
    """installation.created for the fork while GitHub refuses its config read: retried, then dead."""
    payload = installation_event(fake, inst.id, "created", (fork,))
    fake.faults.add("GET", "/repos/meta/triton/contents/*", 403, "Resource not accessible by integration", times=1000)
    first = await fake.webhooks.deliver("installation", payload)
    await bot.settle()
    fake.faults.clear()
    [dead] = bot.deliveries("dead")
    assert dead.delivery_id == first.guid
    return payload, first


async def test_a_redelivery_that_succeeds_takes_the_dead_letter_off_every_alarm(world):
    """GitHub's Redeliver sends the same bytes under the same ``X-GitHub-Delivery`` GUID; once it
    is handled, the delivery is no dead letter: not on the status issue, ``/healthz``, the metric."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    _payload, first = await _dead_adoption(fake, bot, alice, fork, inst)
    [issue] = await status_issue(alice)
    assert "dead-lettered" in issue["body"]
    await fake.webhooks.redeliver(first.guid)
    await bot.settle()
    assert bot.deliveries("dead") == [] and q.dead_letter_alarm(bot.store) == ""
    assert [r["fork"] for r in sync_store.tracked_forks(bot.store)] == ["meta/triton"]
    [issue] = await status_issue(alice)
    assert "dead-lettered" not in issue["body"] and "`adopt`" not in issue["body"], issue["body"]


async def test_a_later_adoption_of_the_same_fork_resolves_its_dead_letter_and_keeps_it_in_history(world):
    """A new delivery (new GUID) that adopts the same repository, e.g. the owner adding it to the
    installation again, does all the dead adoption was for: the dead letter stops being an alarm
    (status issue, ``/healthz``, ``/metrics``) but stays listed in the queue, saying what resolved it."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    _payload, first = await _dead_adoption(fake, bot, alice, fork, inst)
    again = await fake.webhooks.deliver("installation_repositories",
                                        installation_event(fake, inst.id, "added", (fork,), event="installation_repositories"))
    await bot.settle()
    assert again.guid != first.guid
    assert bot.deliveries("dead") == [] and q.dead_letter_alarm(bot.store) == ""
    [old] = [d for d in bot.deliveries() if d.delivery_id == first.guid]
    assert old.state == "resolved" and old.dead_reason.startswith("gave up after 3 attempts; last error: GitHubAPIError")
    assert old.resolved_by.startswith(again.guid + "/")
    [issue] = await status_issue(alice)
    assert "dead-lettered" not in issue["body"] and "`adopt`" not in issue["body"], issue["body"]
    async with aiohttp.ClientSession() as s, s.get(bot.server.make_url("/healthz")) as r:
        assert r.status == 200, await r.text()
