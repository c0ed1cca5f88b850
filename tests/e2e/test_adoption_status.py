"""A failed adoption shows on the fork's status issue, and a later adoption that succeeds takes it
off again (a recovered failure must stop showing as failing); a repository that is no fork gets
no status issue for a success."""
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
