"""Installations made or removed while forksync was down: GitHub sent ``installation.created``
(or ``installation_repositories.added``, ``installation.deleted``,
``installation_repositories.removed``) once, to nobody, and does not send it again. The worker
lists the App's installations and their repositories at start (and hourly), adopts what is not
followed yet and, when every page of every listing was read, stops following what the App is no
longer installed on, as the events would (:mod:`bot.app.installations`)."""
from __future__ import annotations

import asyncio
import threading
import time

import aiohttp
import pytest

from bot.app import installations
from bot.app.runtime import run_worker_loop
from bot.github.client import token_client
from bot.store import Store
from bot.sync import store as sync_store
from bot.sync.upstream import poll_once
from tests.support.botharness import Bot
from tests.support.e2e import CONFIG, installation_event, job_context, status_issue
from tests.support.github import commit_files, git, make_source_repo


async def pass_now(bot, at: float | None = None, **kw) -> list[str]:
    """One pass of :func:`bot.app.installations.adopt_missed`, as the worker's poll loop runs it."""
    return await installations.adopt_missed(bot.store, await bot.clients.client_for(None), job_context(bot),
                                            now=time.time() if at is None else at, **kw)


def lost(fake, action: str = "created") -> list:
    """The installation deliveries the local GitHub emitted while no webhook URL was set (forksync down)."""
    return [d for d in fake.webhooks.emitted if d.event == "installation" and d.action == action]


@pytest.mark.parametrize("rows, inst, expected", [
    ([], 1, ["meta/a", "meta/b"]),
    ([{"fork": "meta/a", "installation_id": 1}], 1, ["meta/b"]),
    # tracked under an earlier installation (reinstalled while forksync was down): adopted again
    ([{"fork": "meta/a", "installation_id": 7}], 1, ["meta/a", "meta/b"]),
    ([{"fork": "meta/a", "installation_id": 1}, {"fork": "meta/b", "installation_id": 1}], 1, []),
])
def test_not_tracked_is_what_the_installation_follows_not_yet(rows, inst, expected):
    repos = [{"full_name": "meta/a"}, {"full_name": "meta/b"}]
    assert [r["full_name"] for r in installations.not_tracked(repos, rows, inst)] == expected


def test_a_fork_renamed_in_case_is_neither_unfollowed_nor_followed_again():
    """GitHub's names are not case-sensitive: a fork tracked as ``meta/a`` that GitHub now lists as
    ``Meta/A`` (renamed in case, or spelled so by the listing) is the same fork — the pass neither
    unfollows it nor adopts it a second time (a second tracked row, synced twice)."""
    rows, repos = [{"fork": "meta/a", "installation_id": 1}], [{"full_name": "Meta/A"}]
    assert installations.not_tracked(repos, rows, 1) == []
    assert installations.no_longer_installed(rows, {1}, set(), {"Meta/A"}) == []


async def test_an_installation_made_while_forksync_was_down_is_adopted_by_the_next_pass(world):
    """Today: the App was installed on meta while forksync was down; ``installation.created`` went
    nowhere (the world installs before the bot starts), so meta/triton is never tracked, has no
    status issue, and nothing says so. Expected: the pass at start lists the installations, adopts
    meta/triton as the event would (tracked, synced, its status issue open), and a second pass
    adopts nothing again."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    assert [d.url for d in lost(fake)] == [None, None]          # triton-lang's and meta's, never sent
    assert sync_store.tracked_forks(bot.store) == [] and await status_issue(alice) == []
    notes = await pass_now(bot)
    assert [(r["fork"], r["installation_id"], r["upstream"]) for r in sync_store.tracked_forks(bot.store)] == [
        ("meta/triton", inst.id, "triton-lang/triton")]
    assert len(await status_issue(alice)) == 1
    assert any(n.startswith("meta/triton: ") and "not a fork" not in n for n in notes), notes
    assert not any("triton-lang/triton" in n for n in notes), notes
    assert notes[-1] == "2 installation(s), 2 repositories: 0 followed already, 1 adopted now, 1 not a fork to sync, " \
                        "0 listing(s) failed", notes
    assert sync_store.failing_jobs(bot.store) == [] and sync_store.failing_app_jobs(bot.store) == []
    syncs = len(fake.requests_for("repos/get-content"))
    assert await pass_now(bot) == ["2 installation(s), 2 repositories: 1 followed already, 0 adopted now, "
                                   "1 not a fork to sync, 0 listing(s) failed"]
    # the second pass reads the configuration of the one repository not followed (triton-lang's) only
    assert len(fake.requests_for("repos/get-content")) - syncs == 1


async def test_every_page_of_installations_and_repositories_is_read(world, tmp_path):
    """GitHub pages both listings; a fork on a later page is adopted too."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    src = tmp_path / "second"
    git(tmp_path, "clone", "-q", str(up_src), str(src))
    commit_files(src, {".github/forksync.yml": CONFIG}, "fork: forksync config")
    fake.create_repo("meta/second", source=src)        # listed after meta/triton: its own page
    await pass_now(bot, per_page=1)
    assert [r["fork"] for r in sync_store.tracked_forks(bot.store)] == ["meta/second", "meta/triton"]
    # two installations (triton-lang, meta) one a page; meta's two repositories one a page, triton-lang's one
    assert len(fake.requests_for("apps/list-installations")) == 2
    assert len(fake.requests_for("apps/list-repos-accessible-to-installation")) == 3


async def test_a_repository_the_event_adopted_meanwhile_is_not_adopted_again(world):
    """The event arrives (a redelivery, or GitHub's delivery once forksync is up): the pass then
    finds the fork tracked and leaves it alone — one adoption, one status issue."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await fake.webhooks.deliver("installation", installation_event(fake, inst.id, "created", (fork,)))
    await bot.settle()
    reads = len(fake.requests_for("repos/get-content"))
    notes = await pass_now(bot)
    assert notes == ["2 installation(s), 2 repositories: 1 followed already, 0 adopted now, 1 not a fork to sync, "
                     "0 listing(s) failed"], notes
    assert len(fake.requests_for("repos/get-content")) - reads == 1       # triton-lang/triton's config only
    assert len(await status_issue(alice)) == 1


async def test_a_suspended_installation_is_skipped_and_its_pause_recorded(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    fake.suspend(inst, by="owner")          # its webhook is never delivered either
    notes = await pass_now(bot, at=1000.0)
    assert f"installation {inst.id} (meta): suspended, skipped" in notes, notes
    assert sync_store.tracked_forks(bot.store) == []
    assert sync_store.suspended(bot.store)[inst.id]["by"] == "owner"
    assert sync_store.failing_app_jobs(bot.store) == []


async def test_a_repository_whose_adoption_fails_is_its_failing_job_and_the_rest_goes_on(world, tmp_path):
    """One fork's configuration cannot be read (GitHub answers 500 on every attempt): it is its
    failing ``adopt`` job (its status issue says so), and the other fork is still adopted."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    src = tmp_path / "second"
    git(tmp_path, "clone", "-q", str(up_src), str(src))
    commit_files(src, {".github/forksync.yml": CONFIG}, "fork: forksync config")
    fake.create_repo("meta/broken", source=src)
    fake.faults.add("GET", "/repos/meta/broken/contents/*", 500, "Server Error", times=100)
    notes = await pass_now(bot, at=1000.0)
    assert [r["fork"] for r in sync_store.tracked_forks(bot.store)] == ["meta/triton"]
    assert [(j["repo"], j["job"]) for j in sync_store.failing_jobs(bot.store)] == [("meta/broken", "adopt")]
    assert any(n.startswith("meta/broken: adoption failed") for n in notes), notes


async def test_a_listing_github_refuses_is_the_apps_failing_job_on_healthz(world):
    """``GET /app/installations`` fails: nothing is adopted, and after two passes ``/healthz``
    says the App's ``installations`` job is failing; the next pass that lists clears it."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    fake.faults.add("GET", "/app/installations", 500, "Server Error", times=100)
    for at in (1000.0, 5000.0):
        notes = await pass_now(bot, at=at)
        assert notes and notes[0].startswith("GET /app/installations failed:"), notes
    [job] = sync_store.failing_app_jobs(bot.store)
    assert (job["repo"], job["job"], job["count"]) == ("", "installations", 2)
    async with aiohttp.ClientSession() as s, s.get(bot.server.make_url("/healthz")) as r:
        status, body = r.status, await r.json()
    assert status == 503 and any(p.startswith("the App: the scheduled installations job failed 2 times in a row: "
                                              "GET /app/installations failed") for p in body["problems"]), body
    fake.faults.clear()
    await pass_now(bot, at=9000.0)
    assert sync_store.failing_app_jobs(bot.store) == []
    assert [r["fork"] for r in sync_store.tracked_forks(bot.store)] == ["meta/triton"]


async def test_serve_started_after_the_install_follows_the_fork_and_opens_its_status_issue(fake_github, tmp_path):
    """End to end: the App is installed on meta while no forksync runs (its event goes nowhere);
    then the worker starts (``run_worker_loop``, as ``forksync serve`` runs it, no webhook at
    all): the fork is followed and its status issue appears."""
    fake = fake_github
    up_src = tmp_path / "up"
    make_source_repo(up_src, [{"python/a.py": "a = 1\n"}])
    fake.create_repo("triton-lang/triton", source=up_src)
    fork_src = tmp_path / "forksrc"
    git(tmp_path, "clone", "-q", str(up_src), str(fork_src))
    commit_files(fork_src, {".github/forksync.yml": CONFIG}, "fork: forksync config")
    fake.create_repo("meta/triton", source=fork_src)
    inst = fake.install("meta")
    assert [d.url for d in lost(fake)] == [None]        # forksync is down: sent to nobody
    fake.add_token("alice-token", "alice")
    settings = Bot(fake, tmp_path).settings
    stop = threading.Event()
    task = asyncio.create_task(run_worker_loop(settings, stop, poll_tick_s=3600.0))
    async with aiohttp.ClientSession() as session:
        alice = token_client(session, "alice-token", base_url=fake.url)
        try:
            for _ in range(1200):           # done when the issue is open (two minutes at most on a busy machine)
                if await status_issue(alice) or task.done():
                    break
                await asyncio.sleep(0.1)
            [issue] = await status_issue(alice)
        finally:
            stop.set()
            await task
    head = git(up_src, "rev-parse", "HEAD").strip()
    assert f"| upstream head | `{head[:12]}` |" in issue["body"], issue["body"]
    store = Store(settings.db)
    try:
        assert [(r["fork"], r["installation_id"]) for r in sync_store.tracked_forks(store)] == [("meta/triton", inst.id)]
        assert sync_store.failing_jobs(store) == [] and sync_store.failing_app_jobs(store) == []
    finally:
        store.close()


@pytest.mark.parametrize("rows, installed, suspended, reachable, expected", [
    # uninstalled: its installation is no longer listed
    ([{"fork": "meta/a", "installation_id": 1}], {2}, set(), set(), [("meta/a", 1, "uninstalled")]),
    # removed from its installation, which is still listed
    ([{"fork": "meta/a", "installation_id": 1}], {1}, set(), {"meta/b"}, [("meta/a", 1, "removed")]),
    # still installed; GitHub's names are matched whatever their case
    ([{"fork": "meta/a", "installation_id": 1}], {1}, set(), {"Meta/A"}, []),
    # a suspended installation's forks are kept (suspension is not removal)
    ([{"fork": "meta/a", "installation_id": 1}], {1}, {1}, set(), []),
    # listed under another installation (reinstalled while down): adoption moves it, nothing unfollowed
    ([{"fork": "meta/a", "installation_id": 7}], {1}, set(), {"meta/a"}, []),
    # tracked with no installation (token mode): no App installation to be removed from
    ([{"fork": "meta/a", "installation_id": None}], set(), set(), set(), []),
])
def test_no_longer_installed_is_what_the_events_would_unfollow(rows, installed, suspended, reachable, expected):
    assert [(r["fork"], r["installation_id"], why) for r, why in
            installations.no_longer_installed(rows, installed, suspended, reachable)] == expected


async def test_an_uninstall_while_forksync_was_down_unfollows_the_fork_at_the_next_pass(world):
    """Today: the App is uninstalled from meta while forksync is down; ``installation.deleted``
    goes nowhere, so meta/triton stays tracked and its polls fail for good (``/healthz`` red, the
    dashboard showing a fork forksync can no longer act on). Expected: the next pass sees meta's
    installation is no longer listed and stops following meta/triton as the event would (not
    tracked, its failing jobs cleared, the dashboard's reason "the App was uninstalled")."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await pass_now(bot, at=1000.0)
    assert [r["fork"] for r in sync_store.tracked_forks(bot.store)] == ["meta/triton"]
    missed = fake.uninstall(inst)          # forksync is down: installation.deleted is never delivered
    assert (missed["action"], missed["installation"]["id"]) == ("deleted", inst.id)
    await poll_once(bot.store, bot.svc, job_context(bot), now=2000.0)
    assert [(j["repo"], j["job"]) for j in sync_store.failing_jobs(bot.store)] == [("meta/triton", "poll")]
    notes = await pass_now(bot, at=3000.0)
    assert "meta/triton: no longer followed (the App was uninstalled)" in notes, notes
    assert sync_store.tracked_forks(bot.store) == [] and sync_store.failing_jobs(bot.store) == []
    assert sync_store.unfollowed(bot.store) == {"meta/triton": "the App was uninstalled"}
    assert sync_store.failing_app_jobs(bot.store) == []
    # a second pass has nothing more to do
    assert not any("no longer followed" in n for n in await pass_now(bot, at=4000.0))


async def test_a_repository_removed_from_the_installation_while_down_is_unfollowed(world, tmp_path):
    """meta/triton is taken off meta's installation (meta/second stays) while forksync is down:
    the next pass stops following meta/triton, as ``installation_repositories.removed`` would,
    and keeps meta/second."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    src = tmp_path / "second"
    git(tmp_path, "clone", "-q", str(up_src), str(src))
    commit_files(src, {".github/forksync.yml": CONFIG}, "fork: forksync config")
    second = fake.create_repo("meta/second", source=src)
    await pass_now(bot, at=1000.0)
    assert [r["fork"] for r in sync_store.tracked_forks(bot.store)] == ["meta/second", "meta/triton"]
    missed = fake.remove_repos(inst, [fork])       # never delivered
    assert [r["full_name"] for r in missed["repositories_removed"]] == ["meta/triton"]
    notes = await pass_now(bot, at=2000.0)
    assert "meta/triton: no longer followed (removed from the installation)" in notes, notes
    assert [(r["fork"], r["installation_id"]) for r in sync_store.tracked_forks(bot.store)] == [
        ("meta/second", inst.id)]
    assert sync_store.unfollowed(bot.store) == {"meta/triton": "removed from the App's installation"}
    del second


@pytest.mark.parametrize("failing", ["/app/installations", "/installation/repositories"])
async def test_a_listing_failing_on_page_2_unfollows_nothing_and_is_a_failing_job(world, tmp_path, failing):
    """meta/triton was taken off meta's installation while forksync was down, but a later page of
    a listing fails (GitHub answers 500 on every attempt): what was not read cannot say a fork is
    gone, so nothing is unfollowed — neither meta/triton nor meta/second — and the failure is the
    App's failing ``installations`` job; the next pass that reads every page unfollows meta/triton."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    src = tmp_path / "second"
    git(tmp_path, "clone", "-q", str(up_src), str(src))
    commit_files(src, {".github/forksync.yml": CONFIG}, "fork: forksync config")
    fake.create_repo("meta/second", source=src)
    fake.create_repo("meta/third", source=up_src)       # no forksync.yml: listed, never followed
    await pass_now(bot, at=1000.0, per_page=1)
    assert [r["fork"] for r in sync_store.tracked_forks(bot.store)] == ["meta/second", "meta/triton"]
    fake.remove_repos(inst, [fork])         # never delivered; meta's repositories: meta/second (page 1), meta/third (page 2)
    fake.faults.add("GET", failing, 500, "Server Error", times=100, query={"page": "2"})
    notes = await pass_now(bot, at=2000.0, per_page=1)
    assert not any("no longer followed" in n for n in notes), notes
    assert [r["fork"] for r in sync_store.tracked_forks(bot.store)] == ["meta/second", "meta/triton"]
    assert sync_store.unfollowed(bot.store) == {}
    [job] = sync_store.failing_app_jobs(bot.store)
    assert (job["job"], job["count"]) == ("installations", 1) and f"GET {failing} failed" in job["error"], job
    fake.faults.clear()
    notes = await pass_now(bot, at=3000.0, per_page=1)
    assert "meta/triton: no longer followed (removed from the installation)" in notes, notes
    assert [r["fork"] for r in sync_store.tracked_forks(bot.store)] == ["meta/second"]
    assert sync_store.failing_app_jobs(bot.store) == []


async def test_a_suspended_installations_forks_stay_followed(world):
    """meta's installation is suspended while forksync is down (its repositories cannot be listed
    with its refused tokens): suspension is not removal, so meta/triton stays tracked, paused."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await pass_now(bot, at=1000.0)
    fake.suspend(inst, by="owner")
    notes = await pass_now(bot, at=2000.0)
    assert f"installation {inst.id} (meta): suspended, skipped" in notes, notes
    assert not any("no longer followed" in n for n in notes), notes
    assert [r["fork"] for r in sync_store.tracked_forks(bot.store)] == ["meta/triton"]
    assert inst.id in sync_store.suspended(bot.store) and sync_store.unfollowed(bot.store) == {}


@pytest.mark.parametrize("change", ["uninstall", "remove"])
@pytest.mark.parametrize("how", ["event", "pass"])
async def test_the_pass_unfollows_as_the_missed_event_would_have(world, change, how):
    """The same removal reaches forksync either as GitHub's event (the fake's payload delivered)
    or, that event missed, through the next pass: the fork ends the same way — not tracked, its
    failing jobs cleared, the same reason on the dashboard, and on an uninstall the
    installation's recorded suspension forgotten."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await pass_now(bot, at=1000.0)
    if change == "uninstall":
        payload = fake.uninstall(inst)
        await poll_once(bot.store, bot.svc, job_context(bot), now=2000.0)      # its token is refused
        assert [(j["repo"], j["job"]) for j in sync_store.failing_jobs(bot.store)] == [("meta/triton", "poll")]
        # a suspension recorded before the uninstall (its unsuspend missed too)
        sync_store.set_suspended(bot.store, inst.id, True, at=2500.0, by="owner")
    else:
        payload = fake.remove_repos(inst, [fork])
    if how == "event":
        event = "installation" if change == "uninstall" else "installation_repositories"
        await fake.webhooks.deliver(event, payload, validate=False)
        await bot.settle()
    else:
        await pass_now(bot, at=3000.0)
    assert sync_store.tracked_forks(bot.store) == [] and sync_store.failing_jobs(bot.store) == []
    assert sync_store.unfollowed(bot.store) == {
        "meta/triton": "the App was uninstalled" if change == "uninstall" else "removed from the App's installation"}
    assert inst.id not in sync_store.suspended(bot.store)
