"""Commands that drive the core, end to end: hold → plan preview → defer → unhold → only the
bundle opens; the deferred commit is in the ledger (git notes) and on the status issue."""
from bot.sync import store as sync_store
from tests.support.e2e import install_on_fork, open_sync_prs, status_command, status_issue
from tests.support.github import commit_files, git


async def test_hold_plan_defer_unhold(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    [issue] = await status_issue(alice)
    n = issue["number"]

    async def command(text):
        return await status_command(alice, bot, n, text)

    assert "on hold" in await command("/forksync hold")
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: new x (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    assert await open_sync_prs(alice) == []                      # held: nothing opened
    st = sync_store.load_status(bot.store, "meta/triton")
    assert (st.upstream_head, st.backlog, st.not_reached) == (c2, 0, 2)     # nothing reached yet

    preview = await command("/forksync plan")
    assert "plan preview (dry run, nothing was pushed)" in preview
    assert f"| `bundle-{c1[:12]}` | bundle | 1 | - |" in preview
    assert f"| `chain-{c2[:12]}` | chain | 1 | amd |" in preview

    reply = await command(f"/forksync defer {c2[:10]} waits for the ROCm 7 bump")
    assert f"recorded for `{c2[:12]}`: DEFERRED_BLOCKED — `waits for the ROCm 7 bump`." in reply
    reply = await command("/forksync defer #999 nothing")
    assert "`#999` is not an upstream commit or PR I know of; nothing recorded." in reply

    assert "hold lifted" in await command("/forksync unhold")
    await bot.settle()
    # unhold does not sync by itself; the next upstream event or a re-plan does
    [issue] = await status_issue(alice)
    await alice.patch(f"/repos/meta/triton/issues/{n}",
                      data={"body": issue["body"].replace("- [ ] <!-- replan -->", "- [x] <!-- replan -->")})
    await bot.settle()
    prs = await open_sync_prs(alice)
    assert [p["head"]["ref"] for p in prs] == [f"forksync/bundle-{c1[:12]}"]
    st = sync_store.load_status(bot.store, "meta/triton")
    assert [(d["sha"], d["reason"]) for d in st.deferred] == [(c2, "waits for the ROCm 7 bump")]
    assert (st.backlog, st.not_reached) == (1, 0)      # frontier = the deferred c2; c1 (in flight) behind it
    [issue] = await status_issue(alice)
    assert f"`{c2[:12]}` AMD: new x (#\u200d102) — waits for the ROCm 7 bump" in issue["body"]
    assert bot.deliveries("dead") == []


async def test_pick_opens_an_isolated_urgent_pick_pr(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    [issue] = await status_issue(alice)
    await alice.post(f"/repos/meta/triton/issues/{issue['number']}/comments", data={"body": "/forksync hold"})
    await bot.settle()
    commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    c2 = commit_files(up_src, {"python/b.py": "b = 9\n"}, "Fix crash in b (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    await alice.post(f"/repos/meta/triton/issues/{issue['number']}/comments", data={"body": "/forksync pick #102"})
    await bot.settle()
    [pr] = await open_sync_prs(alice)
    assert pr["head"]["ref"] == f"forksync/chain-{c2[:12]}"
    [commit] = [c async for c in alice.getiter(f"/repos/meta/triton/pulls/{pr['number']}/commits")]
    msg = commit["commit"]["message"]
    assert f"Upstream-Commit: {c2}" in msg and "Upstream-Urgent: requested by @alice" in msg
    replies = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{issue['number']}/comments")
               if c["user"]["login"] == "forksync[bot]"]
    assert f"`/forksync pick #102`: chain-{c2[:12]}: PR #{pr['number']} opened" in replies[-1]


async def _status_issue_number(fake, bot, alice, fork, inst):
    await install_on_fork(fake, bot, fork, inst.id)
    [issue] = await status_issue(alice)
    return issue["number"]


async def _bot_comments(alice, n):
    return [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{n}/comments")
            if c["user"]["login"] == "forksync[bot]"]


async def test_a_failed_permission_lookup_is_answered_and_retried(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    n = await _status_issue_number(fake, bot, alice, fork, inst)
    # every try of the client's first attempt gets 502; the worker's retry finds GitHub healthy
    fake.faults.server_error("/repos/meta/triton/collaborators/alice/permission", "GET", times=4)
    posted = await alice.post(f"/repos/meta/triton/issues/{n}/comments", data={"body": "/forksync hold"})
    await bot.settle()
    replies = await _bot_comments(alice, n)
    assert len(replies) == 2
    assert replies[0].splitlines()[1:3] == [
        "@alice `/forksync hold` has not run yet: I could not check your permission on this repository "
        "(GitHub answered 502).",
        "I will try again by myself shortly (with backoff); you do not need to repeat the command."]
    assert "on hold" in replies[1]
    reactions = [r["content"] async for r in alice.getiter(f"/repos/meta/triton/issues/comments/{posted['id']}/reactions")]
    assert sorted(reactions) == ["confused", "eyes"]
    assert sync_store.load_status(bot.store, "meta/triton").held is True
    [d] = [d for d in bot.deliveries() if d.event == "issue_comment" and d.sender == "alice"]
    assert (d.state, d.attempts) == ("done", 2)


async def test_a_permission_lookup_that_keeps_failing_never_runs_the_command(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    n = await _status_issue_number(fake, bot, alice, fork, inst)
    fake.faults.server_error("/repos/meta/triton/collaborators/alice/permission", "GET", times=1000)
    await alice.post(f"/repos/meta/triton/issues/{n}/comments", data={"body": "/forksync hold"})
    await bot.settle()
    replies = await _bot_comments(alice, n)
    assert len(replies) == 1 and "has not run yet" in replies[0]          # one notice across all attempts
    assert not (sync_store.load_status(bot.store, "meta/triton").held)
    [d] = [d for d in bot.deliveries() if d.event == "issue_comment" and d.sender == "alice"]
    assert d.state == "dead" and "502" in d.dead_reason


async def test_pick_finds_a_rebase_merged_upstream_pr_through_githubs_record(world, tmp_path):
    """The PR's commit does not carry ``(#N)`` (a rebase merge keeps the PR's own titles): pick
    finds it through GitHub's record of the merged PR (merge_commit_sha and its commit count)."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    number = await _status_issue_number(fake, bot, alice, fork, inst)
    await alice.post(f"/repos/meta/triton/issues/{number}/comments", data={"body": "/forksync hold"})
    await bot.settle()
    fake.add_collaborator(upstream, "alice", "write")
    git(up_src, "checkout", "-q", "-b", "fix-b")
    commit_files(up_src, {"python/b.py": "b = 7\n"}, "Fix crash in b")
    git(up_src, "push", "-q", str(upstream.path), "fix-b:refs/heads/fix-b")
    pr = await alice.post("/repos/triton-lang/triton/pulls", data={"title": "Fix crash in b", "head": "fix-b", "base": "main"})
    merged = await alice.put(f"/repos/triton-lang/triton/pulls/{pr['number']}/merge", data={"merge_method": "rebase"})
    landed = merged["sha"]
    await bot.settle()
    await alice.post(f"/repos/meta/triton/issues/{number}/comments", data={"body": f"/forksync pick #{pr['number']}"})
    await bot.settle()
    [sync_pr] = await open_sync_prs(alice)
    assert sync_pr["head"]["ref"] == f"forksync/chain-{landed[:12]}"
    [commit] = [c async for c in alice.getiter(f"/repos/meta/triton/pulls/{sync_pr['number']}/commits")]
    assert f"Upstream-Commit: {landed}" in commit["commit"]["message"]
    assert bot.deliveries("dead") == []
