"""Production-shaped attacks on the App (real bot, real git, real SQLite, the local GitHub over HTTP)."""
import subprocess
import time

import aiohttp

from bot.app.schedules import tick_all
from bot.app.web import app_facts
from bot.sync import store as sync_store
from bot.sync.landing import keep_head
from bot.sync.upstream import poll_once
from tests.support.e2e import adopt_and_move_upstream, install_on_fork, installation_event, job_context, open_sync_prs, status_issue
from tests.support.github import commit_files, git


async def test_fork_history_rewritten_under_an_open_sync_pr_never_resurrects_dropped_commits(world, tmp_path):
    fake, bot, alice, up_src, upstream, fork, inst = world
    wt = tmp_path / "forkwt"
    git(tmp_path, "clone", "-q", str(fork.path), str(wt))
    bad = commit_files(wt, {"LEAK.txt": "password=hunter2\n"}, "fork: oops, a secret")
    git(wt, "push", "-q", "origin", "HEAD:main")
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, chain = await open_sync_prs(alice)
    # the fork's owners rewrite main to drop the leaked commit (force push)
    git(wt, "reset", "-q", "--hard", "HEAD~1")
    commit_files(wt, {"NOTES.md": "clean\n"}, "fork: notes")
    git(wt, "push", "-q", "-f", "origin", "HEAD:main")
    await bot.settle()
    commit_files(up_src, {"python/b.py": "b = 2\n"}, "Set b (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    # no open sync PR may carry the dropped commit back: merging it (or the gate's update-branch
    # merge of the new main into it) would put the rewritten-away history back on main
    carried = {}
    for pr in await open_sync_prs(alice):
        shas = [c["sha"] async for c in alice.getiter(f"/repos/meta/triton/pulls/{pr['number']}/commits")]
        if bad in shas:
            carried[pr["head"]["ref"]] = pr["number"]
    assert carried == {}, f"sync PRs still carry the commit dropped from main by a force push: {carried}"
    # the same PRs, rebuilt (not new ones), each saying why
    prs = {p["head"]["ref"]: p["number"] for p in await open_sync_prs(alice)}
    assert prs[bundle["head"]["ref"]] == bundle["number"] and prs[chain["head"]["ref"]] == chain["number"]
    for n in (bundle["number"], chain["number"]):
        said = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{n}/comments")
                if c["user"]["login"] == "forksync[bot]"]
        assert any(f"1 commit this branch was built on is no longer on it (`{bad[:12]}`)" in b for b in said), said
    assert bot.deliveries("dead") == []


async def test_fork_history_rewritten_under_a_persons_commits_blocks_the_unit_visibly(world, tmp_path):
    fake, bot, alice, up_src, upstream, fork, inst = world
    wt = tmp_path / "forkwt"
    git(tmp_path, "clone", "-q", str(fork.path), str(wt))
    bad = commit_files(wt, {"LEAK.txt": "password=hunter2\n"}, "fork: oops, a secret")
    git(wt, "push", "-q", "origin", "HEAD:main")
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, chain = await open_sync_prs(alice)
    person = tmp_path / "person"
    git(tmp_path, "clone", "-q", "-b", bundle["head"]["ref"], str(fork.path), str(person))
    mine = commit_files(person, {"python/b.py": "b = 3  # ours\n"}, "fork: tweak b on the sync branch")
    git(person, "push", "-q", "origin", "HEAD")
    git(wt, "reset", "-q", "--hard", "HEAD~1")
    commit_files(wt, {"NOTES.md": "clean\n"}, "fork: notes")
    git(wt, "push", "-q", "-f", "origin", "HEAD:main")
    commit_files(up_src, {"python/b.py": "b = 2\n"}, "Set b (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    # the person's commit stays on the branch (forksync rewrites no one's commits), the gate will
    # not merge it (nor merge the rewritten base into it), and the unit is blocked where people look
    assert git(person, "ls-remote", "origin", bundle["head"]["ref"]).split()[0] == mine
    [gate] = [r async for r in alice.getiter(f"/repos/meta/triton/commits/{mine}/check-runs", iterable_key="check_runs")
              if r["name"] == "forksync/gate"]
    assert "rewritten-base" in gate["output"]["summary"] and bad[:12] in gate["output"]["summary"]
    [b] = [b for b in sync_store.blocked_branches(bot.store, "meta/triton") if b["branch"] == bundle["head"]["ref"]]
    assert b["blocked_reason"].startswith("the history of `main` was rewritten (force push) under this unit: 1 commit(s)")
    [issue] = await status_issue(alice)
    assert "**Syncing is degraded: 1 unit(s) blocked.**" in issue["body"] and "was rewritten (force push)" in issue["body"]
    assert "rebase them onto the fork's branch" in issue["body"] and "waiting for a person's rebase" in issue["body"]
    said = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{bundle['number']}/comments")
            if c["user"]["login"] == "forksync[bot]"]
    assert any("**forksync will not update or merge this PR: the fork's history was rewritten under it.**" in b
               for b in said), said


async def test_a_scheduled_job_that_keeps_failing_is_visible_on_the_status_issue_and_healthz(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()

    make_ctx = job_context(bot)

    # GitHub keeps failing the open-PR listing that reconcile walks (outlasting the client's retries)
    fake.faults.server_error("/repos/meta/triton/pulls", "GET", status=502, times=1000)
    for tick in range(3):
        notes = await tick_all(await make_ctx(inst.id), "meta/triton", now=10**10 + tick * 3600)
        assert any(n.startswith("meta/triton: reconcile tick failed: ") for n in notes), notes
    fake.faults.clear()
    [issue] = await status_issue(alice)
    assert "**1 scheduled job failing**" in issue["body"]
    assert "- `reconcile`: failing since " in issue["body"] and ": GitHubAPIError: GitHub answered 502 to GET " in issue["body"]
    async with aiohttp.ClientSession() as s, s.get(bot.server.make_url("/healthz")) as r:
        assert r.status == 503
        # /healthz asks for no login: it counts the fork's problem; the health page names it
        assert (await r.json())["problems"] == [
            "1 problem of a fork: the dashboard's health page (/health) names it to who may read the fork"]
    [problem] = app_facts(bot.store, time.time())["problems"]
    assert problem.startswith("meta/triton: the scheduled reconcile job failed 3 times in a row: GitHubAPIError: ")
    # the next successful tick clears it everywhere
    await tick_all(await make_ctx(inst.id), "meta/triton", now=10**10 + 4 * 3600)
    [issue] = await status_issue(alice)
    assert "scheduled job" not in issue["body"]
    async with aiohttp.ClientSession() as s, s.get(bot.server.make_url("/healthz")) as r:
        assert r.status == 200, await r.text()


async def test_closing_a_sync_pr_never_deletes_a_persons_commits_on_its_branch(world, tmp_path):
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, chain = await open_sync_prs(alice)
    branch = bundle["head"]["ref"]
    wt = tmp_path / "person"
    git(tmp_path, "clone", "-q", "-b", branch, str(fork.path), str(wt))
    mine = commit_files(wt, {"python/a.py": "a = 2  # tuned for our hardware\n"}, "fork: tune a on top of the sync")
    git(wt, "push", "-q", "origin", "HEAD")
    await bot.settle()
    await alice.patch(f"/repos/meta/triton/pulls/{bundle['number']}", data={"state": "closed"})
    await bot.settle()
    refs = git(wt, "ls-remote", "origin").splitlines()
    holding = [r.split()[1] for r in refs if not r.split()[1].startswith("refs/pull/")
               and subprocess.run(["git", f"--git-dir={fork.path}", "merge-base", "--is-ancestor", mine, r.split()[0]],
                                  capture_output=True).returncode == 0]
    assert holding == [f"refs/forksync/closed/{branch.removeprefix('forksync/')}/{mine[:12]}"], refs
    replies = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{bundle['number']}/comments")
               if c["user"]["login"] == "forksync[bot]"]
    assert any(f"its head `{mine[:12]}` is `refs/forksync/closed/" in r for r in replies), replies
    await keep_head(alice, "meta/triton", holding[0], mine)       # kept again (a retried close): no error
    # a redelivery of the close keeps nothing twice and fails nothing
    d = [e for e in fake.webhooks.of("pull_request", "closed")][-1]
    await fake.webhooks.redeliver(d.guid)
    await bot.settle()
    assert bot.deliveries("dead") == []


async def test_one_repository_failing_does_not_stop_the_adoption_of_the_others(world, tmp_path):
    fake, bot, alice, up_src, upstream, fork, inst = world
    other = fake.create_repo("meta/other", source=up_src)
    # GitHub refuses one repository's config read for good (e.g. a repository rule or a missing grant)
    fake.faults.add("GET", "/repos/meta/other/contents/*", 403, "Resource not accessible by integration", times=1000)
    payload = installation_event(fake, inst.id, "created", (other, fork))
    await fake.webhooks.deliver("installation", payload)
    await bot.settle()
    fake.faults.clear()
    # the fork after the failing repository is adopted all the same: tracked, synced, its status issue open
    assert [r["fork"] for r in sync_store.tracked_forks(bot.store)] == ["meta/triton"]
    assert len(await status_issue(alice)) == 1
    # and the failure is not silent: the delivery says which repository failed
    [dead] = bot.deliveries("dead")
    assert "meta/other" in dead.dead_reason, dead.dead_reason
    # a delivery of two repositories is no one fork's dead letter: the failing one keeps an
    # `adopt` job failing (dashboard, /healthz), the adopted one none
    jobs = sync_store.failing_jobs(bot.store)
    assert [(j["repo"], j["job"]) for j in jobs] == [("meta/other", "adopt")], jobs
    assert "403" in jobs[0]["error"] and jobs[0]["count"] >= 1
    async with aiohttp.ClientSession() as s, s.get(bot.server.make_url("/healthz")) as r:
        body = await r.text()
        assert r.status == 503 and "meta/other" not in body and "1 problem of a fork" in body, body
    assert any(p.startswith("meta/other: ") for p in app_facts(bot.store, time.time())["problems"])
    # adopted once GitHub lets it read the config: the job clears
    await fake.webhooks.deliver("installation", payload)
    await bot.settle()
    assert sync_store.failing_jobs(bot.store) == []


async def two_forks(world, tmp_path):
    """meta/a-fork (tracked first, by name) and meta/triton, both following triton-lang/triton."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    first = fake.create_repo("meta/a-fork", source=tmp_path / "forksrc")
    payload = installation_event(fake, inst.id, "created", (first, fork))
    await fake.webhooks.deliver("installation", payload)
    await bot.settle()
    assert [r["fork"] for r in sync_store.tracked_forks(bot.store)] == ["meta/a-fork", "meta/triton"]


async def test_one_fork_failing_its_sync_does_not_stop_the_other_forks_of_the_same_upstream(world, tmp_path):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await two_forks(world, tmp_path)
    # GitHub keeps failing one fork's pull-request creation (5xx outlasting the client's retries)
    fake.faults.server_error("/repos/meta/a-fork/pulls", "POST", status=502, times=1000)
    commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    fake.faults.clear()
    # the other fork of the same upstream got its sync PR all the same
    assert len(await open_sync_prs(alice)) == 1
    # and the failure is visible: a dead letter naming the failing fork
    [dead] = bot.deliveries("dead")
    assert dead.event == "push" and "meta/a-fork" in dead.dead_reason, dead.dead_reason


async def test_one_fork_failing_its_polled_sync_does_not_skip_the_others_polls(world, tmp_path):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await two_forks(world, tmp_path)
    fake.webhooks.auto_deliver = False           # upstream is seen by the poller only
    fake.faults.server_error("/repos/meta/a-fork/pulls", "POST", status=502, times=1000)
    commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await fake.refresh()

    make_ctx = job_context(bot)

    notes = await poll_once(bot.store, bot.svc, make_ctx, now=10**10)
    fake.faults.clear()
    assert notes[0].startswith("meta/a-fork: sync failed: GitHubAPIError: GitHub answered 502 to POST "), notes
    assert notes[1].startswith("meta/triton: poll: upstream at "), notes
    assert len(await open_sync_prs(alice)) == 1
    # a polled sync has no delivery to dead-letter: its failure is on the fork's status issue
    [issue] = [i async for i in alice.getiter("/repos/meta/a-fork/issues?state=open")
               if "<!-- forksync:status-issue -->" in (i.get("body") or "")]
    assert "- `poll`: failing since " in issue["body"] and "GitHub answered 502 to POST " in issue["body"]


async def test_hold_then_unhold_delivered_out_of_order_ends_as_the_person_left_it(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    [issue] = await status_issue(alice)
    fake.webhooks.auto_deliver = False
    await alice.post(f"/repos/meta/triton/issues/{issue['number']}/comments", data={"body": "/forksync hold"})
    await alice.post(f"/repos/meta/triton/issues/{issue['number']}/comments", data={"body": "/forksync unhold"})
    # GitHub does not guarantee order: the unhold arrives first
    await fake.webhooks.flush(order="reverse")
    fake.webhooks.auto_deliver = True
    await bot.settle()
    assert bot.deliveries("dead") == []
    # alice's last word was unhold: the fork must not be left on hold
    assert sync_store.load_status(bot.store, "meta/triton").held is False
    replies = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{issue['number']}/comments")
               if c["user"]["login"] == "forksync[bot]"]
    assert len(replies) == 2
    assert "`/forksync hold`: not applied: a later comment already set the fork off hold." in replies[1], replies


async def test_a_dead_installation_delivery_for_a_fork_is_on_its_status_issue(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    # the repository is added to the installation again (e.g. after a reinstall) and GitHub keeps
    # failing its config read past the client's retries, and still failing when the alarm is raised
    fake.faults.server_error("/repos/meta/triton/contents/*", "GET", status=502, times=1000)
    payload = installation_event(fake, inst.id, "added", (fork,), event="installation_repositories")
    await fake.webhooks.deliver("installation_repositories", payload)
    await bot.settle()
    fake.faults.clear()
    [dead] = bot.deliveries("dead")
    assert dead.event == "installation_repositories"
    async with aiohttp.ClientSession() as s, s.get(bot.server.make_url("/healthz")) as r:
        assert r.status == 503                                  # visible here already
    [issue] = await status_issue(alice)
    assert "webhook delivery for this fork failed for good** (dead-lettered)" in issue["body"]


async def test_commits_pushed_to_a_sync_branch_after_its_pr_was_closed_are_kept(world, tmp_path):
    """The close is handled from the queue, later: a person's push to the branch in between (their
    work goes on after the close) is what the branch holds when forksync deletes it."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, _chain = await open_sync_prs(alice)
    branch = bundle["head"]["ref"]
    fake.webhooks.auto_deliver = False
    await alice.patch(f"/repos/meta/triton/pulls/{bundle['number']}", data={"state": "closed"})
    wt = tmp_path / "person"
    git(tmp_path, "clone", "-q", "-b", branch, str(fork.path), str(wt))
    mine = commit_files(wt, {"python/a.py": "a = 2  # tuned for our hardware\n"}, "fork: tune a after the close")
    git(wt, "push", "-q", "origin", "HEAD")
    await fake.webhooks.flush()
    fake.webhooks.auto_deliver = True
    await bot.settle()
    assert bot.deliveries("dead") == []
    refs = git(wt, "ls-remote", "origin").splitlines()
    holding = [r.split()[1] for r in refs if not r.split()[1].startswith("refs/pull/")
               and subprocess.run(["git", f"--git-dir={fork.path}", "merge-base", "--is-ancestor", mine, r.split()[0]],
                                  capture_output=True).returncode == 0]
    assert holding == [f"refs/forksync/closed/{branch.removeprefix('forksync/')}/{mine[:12]}"], refs


async def test_a_permanent_refusal_of_one_repository_does_not_stop_the_retries_of_another(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    other = fake.create_repo("meta/other", source=up_src)
    # meta/other: refused for good (422, a retry gets the same answer); meta/triton: GitHub failing
    # for a while (5xx outlasting the client's own retries), which a later attempt can get past
    fake.faults.add("GET", "/repos/meta/other/contents/*", 422, "Unprocessable", times=1000)
    fake.faults.server_error("/repos/meta/triton/contents/*", "GET", status=502, times=1000)
    payload = installation_event(fake, inst.id, "created", (other, fork))
    await fake.webhooks.deliver("installation", payload)
    await bot.settle()
    fake.faults.clear()
    # the delivery was retried for meta/triton's sake (3 attempts), not dead-lettered at once for meta/other's
    [dead] = bot.deliveries("dead")
    assert dead.attempts == 3 and dead.dead_reason.startswith("gave up after 3 attempts"), (dead.attempts, dead.dead_reason)
    assert {j["repo"] for j in sync_store.failing_jobs(bot.store)} == {"meta/other", "meta/triton"}


async def test_an_uninstalled_fork_is_no_longer_followed_and_its_failing_jobs_do_not_keep_healthz_red(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    assert sync_store.record_job(bot.store, "meta/triton", "reconcile", "GitHub answered 404", now=1.0)
    assert sync_store.record_job(bot.store, "meta/triton", "reconcile", "GitHub answered 404", now=2.0) is False
    # a repository removed from another installation is not this fork's concern
    removed = installation_event(fake, inst.id + 1000, "removed", (fork,), event="installation_repositories")
    await fake.webhooks.deliver("installation_repositories", removed)
    await bot.settle()
    assert [r["fork"] for r in sync_store.tracked_forks(bot.store)] == ["meta/triton"]
    # the App is uninstalled: the fork is not followed any more, its failing jobs go, its history stays
    await fake.webhooks.deliver("installation", installation_event(fake, inst.id, "deleted"))
    await bot.settle()
    assert sync_store.tracked_forks(bot.store) == [] and sync_store.failing_jobs(bot.store) == []
    assert sync_store.load_status(bot.store, "meta/triton").backlog == 0 and sync_store.snapshots(bot.store, "meta/triton")
    assert bot.deliveries("dead") == []
    async with aiohttp.ClientSession() as s, s.get(bot.server.make_url("/healthz")) as r:
        assert r.status == 200, await r.text()
