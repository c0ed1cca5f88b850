"""A person's words on a sync PR survive forksync's refreshes, end to end on the local GitHub:
forksync rewrites only its own section of the body (bot.sync.prs.refreshed); text written above
or below it and a title the person gave the PR stay."""
from __future__ import annotations

from tests.support.e2e import install_on_fork, job_context, open_sync_prs, status_command, status_issue
from tests.support.github import commit_files, git


async def test_a_refreshed_sync_pr_keeps_a_persons_title_and_text(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    [issue] = await status_issue(alice)
    n = issue["number"]

    async def command(text):
        await status_command(alice, bot, n, text)

    commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    [bundle] = await open_sync_prs(alice)
    title = "Speed-up sync (merge after the Friday perf run)"
    body = "Holding for the perf run, @bob.\n\n" + bundle["body"] + "\n- [ ] perf run green\n"
    await alice.patch(f"/repos/meta/triton/pulls/{bundle['number']}", data={"title": title, "body": body})

    # a deferral changes what forksync writes on every open sync PR (its count of deferred commits)
    await command("/forksync hold")
    c2 = commit_files(up_src, {"python/b.py": "b = 2\n"}, "Rework b (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    await command(f"/forksync defer {c2[:10]} waits for the 3.7 branch cut")
    await command("/forksync unhold")
    [issue] = await status_issue(alice)
    await alice.patch(f"/repos/meta/triton/issues/{n}",
                      data={"body": issue["body"].replace("- [ ] <!-- replan -->", "- [x] <!-- replan -->")})
    await bot.settle()

    [after] = await open_sync_prs(alice)
    assert after["number"] == bundle["number"]
    assert after["title"] == title
    assert after["body"].startswith("Holding for the perf run, @bob.\n\n<!-- forksync:body:start -->")
    assert after["body"].endswith("<!-- forksync:body:end -->\n\n- [ ] perf run green\n")
    # forksync's section is current: it counts the new deferral (the status issue lists it)
    assert "Not in this bundle: 1 upstream commit deferred (listed on the status issue)" in after["body"]
    assert "Not in this bundle:" not in bundle["body"]
    assert bot.deliveries("dead") == []


async def test_a_sync_pr_whose_body_would_pass_githubs_limit_opens_cut_to_fit(world):
    """GitHub refuses a body over 65,536 characters (422 "body is too long"). An upstream commit
    whose message runs past that (a generated subject, a revert of reverts) still gets its sync PR:
    forksync's section is cut at a line, says so, and keeps its closing marks; the status issue
    (which names the commit too) is cut the same way."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    subject = "Regenerate tables: " + " ".join(f"entry{i:05d}" for i in range(8000))     # ≈ 80,000 characters
    commit_files(up_src, {"python/a.py": "a = 2\n"}, subject)
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()

    [bundle] = await open_sync_prs(alice)
    body = bundle["body"]
    assert len(body) <= 65536 and "characters were cut" in body, body[-600:]
    assert body.rstrip().endswith("<!-- forksync:body:end -->")
    [issue] = await status_issue(alice)
    assert len(issue["body"]) <= 65536
    assert bot.deliveries("dead") == []


async def test_a_fork_with_issues_turned_off_still_gets_its_sync_prs_and_says_where_the_status_issue_went(world):
    """GitHub turns Issues off on a new fork, and creating the status issue then answers 410
    ("Issues are disabled for this repo"). The sync itself goes on — its PRs open, no delivery
    fails over it — and the missing status issue is a failing job that names the setting, shown on
    /healthz; once Issues are on again, the next refresh opens the issue and clears it."""
    from bot.sync import store as sync_store

    fake, bot, alice, up_src, upstream, fork, inst = world
    fake.state.repo("meta", "triton").has_issues = False
    await install_on_fork(fake, bot, fork, inst.id)
    commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()

    assert len(await open_sync_prs(alice)) == 1
    assert bot.deliveries("dead") == []
    [job] = [j for j in sync_store.failing_jobs(bot.store) if j["repo"] == "meta/triton"]
    assert job["job"] == "status-issue" and "Issues are disabled" in job["error"] and "Settings" in job["error"], job

    fake.state.repo("meta", "triton").has_issues = True
    ctx = await job_context(bot)(inst.id)
    await bot.svc.refresh_status_issue(ctx, "meta/triton")
    assert len(await status_issue(alice)) == 1
    assert [j for j in sync_store.failing_jobs(bot.store) if j["repo"] == "meta/triton"] == []
