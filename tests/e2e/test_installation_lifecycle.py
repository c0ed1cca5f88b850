"""The App's installation lifecycle under the real bot and the local GitHub: an owner suspending
the installation (GitHub then refuses its tokens: 403 "This installation has been suspended"),
lifting it, uninstalling the App, and accepting new permissions. A decision an owner made on
purpose pauses the forks' work and says so; it never pages on-call through ``/healthz``."""
import time

import aiohttp

from bot.app import queue as q
from bot.app.schedules import tick_tracked
from bot.app.web import app_facts
from bot.dashboard import views
from bot.sync import store as sync_store
from bot.sync.upstream import poll_once
from tests.support.e2e import install_on_fork, installation_event, job_context, move_upstream, open_sync_prs, status_issue

DAY = 86_400.0


async def healthz(bot) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as s, s.get(bot.server.make_url("/healthz")) as r:
        return r.status, await r.json()


def warns_paused(bot, body: dict) -> bool:
    """``/healthz`` (no login) counts the paused fork's warning; the health page's facts name it."""
    counted = [w for w in body.get("warnings", []) if " of a fork: the dashboard's health page (/health)" in w
               or " of forks: the dashboard's health page (/health)" in w]
    named = app_facts(bot.store, time.time())["warnings"]
    return bool(counted) and not any("meta/triton" in w for w in body.get("warnings", [])) \
        and any("meta/triton" in w and "suspended" in w for w in named)


async def suspend(fake, bot, inst) -> None:
    """The owner suspends meta's installation; GitHub says so to the App."""
    await fake.webhooks.deliver("installation", fake.suspend(inst), validate=False)
    await bot.settle()


async def unsuspend(fake, bot, inst) -> None:
    await fake.webhooks.deliver("installation", fake.unsuspend(inst), validate=False)
    await bot.settle()


async def ticks(bot, at: float) -> list[str]:
    """One turn of the worker's poll loop at ``at`` (epoch s): the poller, then every scheduled job."""
    make_ctx = job_context(bot)
    notes = await poll_once(bot.store, bot.svc, make_ctx, now=at)
    return notes + await tick_tracked(bot.store, make_ctx, now=at, min_interval_s=0)


async def test_a_suspended_installation_pauses_its_forks_ticks_and_healthz_warns_instead_of_failing(world):
    """Today: the owner suspends the App on meta; every poll and scheduled tick of meta/triton fails
    on GitHub's 403, and after two ticks ``/healthz`` answers 503 ("the scheduled reconcile job failed
    2 times in a row: This installation has been suspended"), paging on-call for an owner's decision.
    Expected: the fork's ticks pause without failing, ``/healthz`` stays 200 and warns that
    meta/triton is paused because its installation is suspended."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    await suspend(fake, bot, inst)
    t0 = time.time()
    for at in (t0 + DAY, t0 + 2 * DAY, t0 + 3 * DAY):
        await ticks(bot, at)
    assert sync_store.failing_jobs(bot.store) == []
    status, body = await healthz(bot)
    assert status == 200, body
    assert warns_paused(bot, body), body


async def test_an_upstream_push_while_the_forks_installation_is_suspended_is_no_dead_letter(world):
    """Today: upstream (its own installation, not suspended) pushes while meta's installation is
    suspended; the push delivery syncs meta/triton, GitHub refuses the token, the delivery is retried
    and dead-lettered, and ``/healthz`` answers 503 ("1 dead-lettered delivery"). Expected: the
    suspended fork is skipped (the delivery says so) and caught up when the suspension is lifted."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    await suspend(fake, bot, inst)
    move_upstream(up_src, upstream)
    await bot.settle()
    assert bot.deliveries("dead") == [] and bot.deliveries("failed") == []
    outcome = [d.outcome for d in bot.deliveries("done") if d.event == "push"]
    assert outcome and "meta/triton: paused (its installation is suspended)" in outcome[-1], outcome
    status, body = await healthz(bot)
    assert status == 200, body


async def test_unsuspend_resumes_the_fork_with_a_catch_up_sync(world):
    """Today: ``installation.unsuspend`` is ignored, so upstream commits pushed while the App was
    suspended wait for the next upstream push or poll (the poller's ETag may even say "unchanged"),
    and the suspended warning would stay. Expected: lifting the suspension syncs the fork at once
    (its sync PRs open) and the warning goes."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    await suspend(fake, bot, inst)
    move_upstream(up_src, upstream)
    await bot.settle()
    await unsuspend(fake, bot, inst)
    heads = [p["head"]["ref"] for p in await open_sync_prs(alice)]
    assert len(heads) == 2 and all(h.startswith("forksync/") for h in heads), heads
    outcome = [d.outcome for d in bot.deliveries("done") if d.event == "installation" and d.action == "unsuspend"]
    assert outcome and "meta/triton: resumed" in outcome[0], outcome
    status, body = await healthz(bot)
    assert status == 200 and not any("suspended" in w for w in body.get("warnings", [])), body
    assert sync_store.failing_jobs(bot.store) == []


async def test_accepting_a_missing_permission_clears_the_forks_permission_failure(world):
    """Today: the App lacks ``issues`` on meta, so adopting meta/triton fails when its status issue
    is written (403 "Resource not accessible by integration") and stays its failing ``adopt`` job.
    The owner accepts the new permissions, but ``new_permissions_accepted`` only retries blocked
    units ("permissions changed; nothing blocked"), so the failure stays on ``/healthz`` and the
    dashboard until some later upstream push happens to sync it. Expected: accepting the
    permissions adopts the installation's forks with a failure again, which clears it and writes
    the status issue."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    inst.permissions.pop("issues")
    await install_on_fork(fake, bot, fork, inst.id)
    assert [(j["repo"], j["job"]) for j in sync_store.failing_jobs(bot.store)] == [("meta/triton", "adopt")]
    inst.permissions["issues"] = "write"
    payload = fake.webhooks.build("installation", "created", {
        "action": "new_permissions_accepted",
        "installation": {"id": inst.id, "app_slug": "forksync", "created_at": "2026-11-30T00:00:00Z",
                         "updated_at": "2026-12-01T00:00:00Z"}})
    payload.pop("repositories", None)   # GitHub's new_permissions_accepted names no repositories
    await fake.webhooks.deliver("installation", payload, validate=False)
    await bot.settle()
    assert sync_store.failing_jobs(bot.store) == []
    assert len(await status_issue(alice)) == 1


async def test_the_dashboard_says_an_uninstalled_fork_is_no_longer_followed_rather_than_stale(world):
    """Today: after the App is uninstalled from meta, the dashboard keeps listing meta/triton with
    "upstream was last seen 96.0 h ago (limit 24 h)", as if the poller were broken, and nothing says
    it is no longer followed. Expected: its history stays, and the fork's entry says it is no longer
    followed because the App was uninstalled (and its numbers are not called stale)."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    await fake.webhooks.deliver("installation", installation_event(fake, inst.id, "deleted"))
    await bot.settle()
    later = time.time() + 4 * DAY
    [entry] = views.forks(bot.store, later, views.Policy())["forks"]
    assert entry["fork"] == "meta/triton" and entry["backlog"] == 0
    assert entry["stale"] == {"stale": False, "reason": ""}, entry
    assert entry["followed"] == "no longer followed: the App was uninstalled", entry
    assert sync_store.snapshots(bot.store, "meta/triton")


async def test_the_dashboard_shows_a_suspended_forks_pause(world):
    """Today: while meta's installation is suspended the dashboard lists meta/triton as stale
    ("the last fetch of upstream failed: ... This installation has been suspended") with nothing
    saying the pause is an owner's decision. Expected: the entry says it is paused because the
    installation is suspended, and its numbers are not called stale."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    await suspend(fake, bot, inst)
    later = time.time() + 4 * DAY
    await ticks(bot, later)
    [entry] = views.forks(bot.store, later, views.Policy())["forks"]
    assert entry["followed"] == "paused: the App's installation is suspended", entry
    assert entry["stale"] == {"stale": False, "reason": ""}, entry


async def test_a_suspension_whose_webhook_was_missed_pauses_the_fork_and_healthz_warns(world):
    """Today: forksync was down when the owner suspended the App on meta, so ``installation.suspend``
    never arrived (GitHub does not redeliver it); every poll and scheduled tick of meta/triton fails
    on GitHub's 403 "This installation has been suspended", the dashboard calls the fork stale, and
    after two ticks ``/healthz`` answers 503, paging on-call for an owner's decision. Expected: the
    first refusal records the installation as suspended (as the webhook would, suspender unknown),
    nothing counts as failing, the dashboard shows the pause and ``/healthz`` stays 200 with the
    paused-fork warning."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    fake.suspend(inst)          # its webhook is never delivered
    t0 = time.time()
    for at in (t0 + DAY, t0 + 2 * DAY, t0 + 3 * DAY):
        await ticks(bot, at)
    assert sync_store.paused_forks(bot.store) == [
        {"fork": "meta/triton", "installation_id": inst.id, "since": t0 + DAY, "by": ""}]
    assert sync_store.failing_jobs(bot.store) == []
    [entry] = views.forks(bot.store, t0 + 3 * DAY, views.Policy())["forks"]
    assert entry["followed"] == "paused: the App's installation is suspended", entry
    assert entry["stale"] == {"stale": False, "reason": ""}, entry
    status, body = await healthz(bot)
    assert status == 200, body
    assert warns_paused(bot, body), body


async def test_a_lifted_suspension_whose_webhooks_were_missed_resumes_the_fork_at_the_next_poll(world):
    """Today: neither ``installation.suspend`` nor ``installation.unsuspend`` reached forksync; once
    a refusal paused meta/triton, nothing ever asks GitHub again, so the fork stays paused for good
    and upstream's new commits are never synced. Expected: the next poll after GitHub lifted the
    suspension gets a token again, which clears the pause: the fork is synced (its sync PRs open),
    the warning goes and nothing is failing."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    fake.suspend(inst)          # its webhook is never delivered
    t0 = time.time()
    await ticks(bot, t0 + DAY)
    assert [p["fork"] for p in sync_store.paused_forks(bot.store)] == ["meta/triton"]
    move_upstream(up_src, upstream)
    await bot.settle()
    fake.unsuspend(inst)        # nor is this one
    await ticks(bot, t0 + 2 * DAY)
    assert sync_store.paused_forks(bot.store) == []
    heads = [p["head"]["ref"] for p in await open_sync_prs(alice)]
    assert len(heads) == 2 and all(h.startswith("forksync/") for h in heads), heads
    status, body = await healthz(bot)
    assert status == 200 and not any("suspended" in w for w in body.get("warnings", [])), body
    assert sync_store.failing_jobs(bot.store) == []


async def test_a_missed_suspension_pauses_the_fork_from_its_scheduled_ticks_alone(world):
    """Today: with no poll due (the poller is off, or not yet due), the scheduled ticks of
    meta/triton fail on GitHub's 403 "This installation has been suspended" after its missed
    webhook, each one a failing job, and ``/healthz`` turns 503 after two ticks. Expected: the
    first refused tick records the installation as suspended at the tick's time; later ticks skip
    the fork, nothing is failing, ``/healthz`` stays 200 and warns."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    fake.suspend(inst)          # its webhook is never delivered
    t0 = time.time()
    for at in (t0 + DAY, t0 + 2 * DAY):
        await tick_tracked(bot.store, job_context(bot), now=at, min_interval_s=0)
    assert sync_store.paused_forks(bot.store) == [
        {"fork": "meta/triton", "installation_id": inst.id, "since": t0 + DAY, "by": ""}]
    assert sync_store.failing_jobs(bot.store) == []
    status, body = await healthz(bot)
    assert status == 200 and warns_paused(bot, body), body


async def _hold_queued_then_suspended(fake, bot, alice, inst) -> int:
    """alice writes ``/forksync hold`` on meta/triton's status issue; before the worker handles it
    the owner suspends meta's installation and forksync misses the webhook. Returns the issue."""
    [issue] = await status_issue(alice)
    fake.webhooks.auto_deliver = False
    await alice.post(f"/repos/meta/triton/issues/{issue['number']}/comments", data={"body": "/forksync hold"})
    fake.suspend(inst)          # its webhook is never delivered
    fake.webhooks.auto_deliver = True
    await fake.webhooks.flush()
    await bot.settle()
    return issue["number"]


def held(bot) -> bool:
    st = sync_store.load_status(bot.store, "meta/triton")
    return bool(st and st.held)


async def test_a_command_refused_for_a_missed_suspension_waits_and_runs_when_it_is_lifted(world):
    """Today: the hold's delivery meets GitHub's 403 "This installation has been suspended" (its
    webhook was missed), is retried and dead-lettered: ``/healthz`` answers 503 for an owner's
    decision, and after ``installation.unsuspend`` the command is lost — the catch-up sync redoes
    upstream's work, not a person's command. Expected: the suspension is recorded (the fork paused,
    ``/healthz`` 200 with its warning), the delivery waits, and runs once the suspension is lifted."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    n = await _hold_queued_then_suspended(fake, bot, alice, inst)
    assert bot.deliveries("dead") == [] and bot.deliveries("failed") == []
    assert [p["fork"] for p in sync_store.paused_forks(bot.store)] == ["meta/triton"]
    [waiting] = bot.deliveries("paused")
    assert (waiting.event, waiting.action, waiting.attempts) == ("issue_comment", "created", 0)
    status, body = await healthz(bot)
    assert status == 200 and warns_paused(bot, body), body
    assert not held(bot)
    await unsuspend(fake, bot, inst)
    assert held(bot)
    assert bot.deliveries("paused") == [] and bot.deliveries("dead") == []
    replies = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{n}/comments")
               if c["user"]["login"] == "forksync[bot]"]
    assert len([r for r in replies if "on hold" in r]) == 1, replies


async def test_a_waiting_command_runs_when_the_poller_finds_the_suspension_lifted(world):
    """Both installation webhooks missed: the hold waits while GitHub refuses meta's installation,
    and runs once a poll GitHub answers again has lifted the pause."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    await _hold_queued_then_suspended(fake, bot, alice, inst)
    assert [d.event for d in bot.deliveries("paused")] == ["issue_comment"]
    fake.unsuspend(inst)        # nor is this one delivered
    await ticks(bot, time.time() + DAY)
    await bot.settle()
    assert sync_store.paused_forks(bot.store) == []
    assert held(bot)
    assert bot.deliveries("paused") == [] and bot.deliveries("dead") == []


async def test_an_upstream_push_refused_for_the_forks_missed_suspension_pauses_that_installation(world):
    """Today: upstream (its own installation) pushes after meta's installation was suspended and
    the webhook missed; syncing meta/triton meets GitHub's 403, the push delivery is retried and
    dead-lettered. Expected: meta's installation — not upstream's — is recorded suspended, the
    delivery says the fork is paused, nothing is dead, and the unsuspend's catch-up syncs it."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    fake.suspend(inst)          # its webhook is never delivered
    move_upstream(up_src, upstream)
    await bot.settle()
    assert bot.deliveries("dead") == [] and bot.deliveries("failed") == []
    assert list(sync_store.suspended(bot.store)) == [inst.id]
    outcome = [d.outcome for d in bot.deliveries("done") if d.event == "push"]
    assert outcome and "meta/triton: paused (its installation is suspended)" in outcome[-1], outcome
    await unsuspend(fake, bot, inst)
    assert len(await open_sync_prs(alice)) == 2


async def test_a_dead_letter_of_a_paused_or_unfollowed_fork_asks_nothing_of_github(world):
    """Today: a dead letter naming meta/triton (or its upstream) while meta's installation is
    suspended, or after the fork was removed from the installation, re-renders the fork's status
    issue: GitHub refuses the call and a traceback is logged for each. Expected: the alarm skips
    paused and unfollowed forks, as the schedules and the poller do; no GitHub call is made."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)

    def dead(repo: str) -> q.Delivery:
        return q.Delivery(id=f"d-{repo}", delivery_id=f"d-{repo}", hook_id="", event="push", action="",
                          installation_id=inst.id, repo=repo, sender="", body=b"{}", content_type="application/json",
                          state="dead", attempts=3, received_at=0)
    await suspend(fake, bot, inst)
    before = len(fake.requests)
    await bot.dispatcher.on_dead(dead("meta/triton"))
    await bot.dispatcher.on_dead(dead("triton-lang/triton"))
    await bot.dispatcher.on_resolved([dead("meta/triton")])
    assert fake.requests[before:] == []
    await unsuspend(fake, bot, inst)
    await fake.webhooks.deliver("installation_repositories", installation_event(fake, inst.id, "removed", [fork],
                                                                                event="installation_repositories"))
    await bot.settle()
    assert [f["fork"] for f in sync_store.tracked_forks(bot.store)] == []
    before = len(fake.requests)
    await bot.dispatcher.on_dead(dead("meta/triton"))
    assert fake.requests[before:] == []
