"""Units and decisions under adverse timing, end to end on the local GitHub with the real bot:
the upstream poller's sync (worker 0 runs it beside the delivery being handled, in the same event
loop, and a plan takes minutes on a real fork) while a person decides, merges or pushes, and a
polled sync whose unit GitHub refused for a moment."""
from __future__ import annotations

import asyncio
import subprocess

import pytest

from tests.support.e2e import adopt_and_move_upstream, job_context, open_sync_prs, status_command, status_issue
from tests.support.sync_world import MIDDLE

FORK = "meta/triton"


def notes_of(fork_path, sha):
    p = subprocess.run(["git", f"--git-dir={fork_path}", "notes", "--ref", "refs/notes/forksync", "show", sha],
                       capture_output=True, text=True)
    return p.stdout


async def test_a_decision_recorded_while_the_poller_syncs_the_fork_is_not_lost(world):
    """alice writes ``/forksync defer <chain's commit> …``; forksync writes the note in the fork's
    working repository and, before it pushes it, the poller's sync of the fork fetches the fork
    into that same repository (``+refs/notes/*:refs/notes/*``, forced), which puts the notes ref
    back to GitHub's. What alice sees: the reply "recorded … DEFERRED_BLOCKED", but the push had
    nothing new to send — no note on the fork, the chain's PR stays open, and the next plan
    treats the commit as pending as if she had said nothing. What she should see: the decision
    in ``refs/notes/forksync`` on the fork and the chain's PR closed for it (a command's writes to
    the working repository wait for the fork's sync, as another sync does)."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    _bundle, chain = await open_sync_prs(alice)
    [issue] = await status_issue(alice)
    # an earlier decision: the fork holds forksync's notes already
    await status_command(alice, bot, issue["number"], f"/forksync reconsider {c1[:12]}")
    assert "RECONSIDER" in notes_of(fork.path, c1)

    svc = bot.svc
    real_git = svc._git
    fetched = asyncio.Event()
    poll: list[asyncio.Task] = []

    async def racing_git(git_dir, *argv, **kw):
        if argv and argv[0] == "push" and argv[-1] == "refs/notes/forksync:refs/notes/forksync" and not poll:
            # the note is written, not pushed yet: the poller's sync of the fork starts now
            poll.append(asyncio.create_task(svc.sync(await job_context(bot)(inst.id), FORK, reason="upstream poll")))
            if not svc.claims.locked(FORK):
                await fetched.wait()        # nothing keeps it from fetching the fork first: it does
        out = await real_git(git_dir, *argv, **kw)
        if poll and argv[:3] == ("fetch", "-q", "--prune"):
            fetched.set()
        return out

    svc._git = racing_git
    reply = await status_command(alice, bot, issue["number"], f"/forksync defer {c2[:12]} waits for the LLVM bump")
    await asyncio.gather(*poll)
    await bot.settle()
    assert poll, "no decision was pushed"
    assert "DEFERRED_BLOCKED" in reply, reply
    assert "forksync-decision: DEFERRED_BLOCKED waits for the LLVM bump" in notes_of(fork.path, c2), \
        "the reply said recorded, but the fork holds no such note"
    assert (await alice.getitem(f"/repos/meta/triton/pulls/{chain['number']}"))["state"] == "closed"
    assert bot.deliveries("dead") == []


async def test_a_unit_a_polled_sync_left_blocked_by_a_passing_failure_is_retried_by_the_next_poll(world):
    """The fork follows upstream by polling (GitHub sends the App no push event of a repository it
    is not installed on). Upstream moves; the polled sync pushes both units, but GitHub answers
    422 "Validation Failed" to the bundle's PR create once: the bundle is blocked with a failure
    that may pass on its own (as a raced push is), and the poll is a failing job. What the maintainer sees: the next
    poll finds upstream "unchanged" (the failed sync had stored the head), runs no sync, clears
    the failing poll job — /healthz is green again — and the bundle stays blocked without a PR
    until upstream moves again, though nothing refuses it any more. What they should see: the
    next poll retry the blocked unit (as the queue retries a push delivery) and open its PR."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    from bot.sync import store as sync_store
    from bot.sync.upstream import poll_once
    from tests.support.e2e import install_on_fork, move_upstream

    await install_on_fork(fake, bot, fork, inst.id)
    fake.webhooks.auto_deliver = False          # upstream's push reaches forksync by the poll only
    c1, c2 = move_upstream(up_src, upstream)
    await fake.refresh()
    fake.webhooks.held.clear()
    fake.webhooks.auto_deliver = True
    fake.faults.unprocessable("/repos/meta/triton/pulls", "POST", times=1)
    make_ctx = job_context(bot)
    notes = await poll_once(bot.store, bot.svc, make_ctx, now=10**10)
    assert "sync failed" in " ".join(notes) and "blocked, retrying" in " ".join(notes), notes
    [blocked] = sync_store.blocked_branches(bot.store, FORK)
    assert blocked["blocked_requires"] == ""
    assert fake.faults.pending() == []

    notes = await poll_once(bot.store, bot.svc, make_ctx, now=10**10 + 10**6)
    await bot.settle()
    assert sync_store.blocked_branches(bot.store, FORK) == [], notes
    assert [p["head"]["ref"] for p in await open_sync_prs(alice)] == [f"forksync/bundle-{c1[:12]}",
                                                                       f"forksync/chain-{c2[:12]}"]
    assert sync_store.load_status(bot.store, FORK).failing_jobs == ()


async def test_a_unit_merged_while_the_poller_plans_is_not_pushed_or_opened_again(world):
    """The poller's sync fetched the fork and is planning (minutes on a real fork) when alice
    merges the bundle's PR; the worker lands it at once — row ``merged``, branch deleted — and its
    refresh waits for the fork's lock. The poller's sync, planned before the merge, then
    publishes the bundle from its old plan: the unit's row has ended, so it is taken for a new
    unit, its branch is pushed again (GitHub had deleted it) and a PR is asked for. What alice
    sees: ``forksync/bundle-…`` back on the fork, GitHub refusing the PR (422 "No commits between
    main and forksync/bundle-…"), and the status issue saying *Syncing is degraded* for a unit
    that landed — for good: no later sync plans that unit again to clear it. What she should
    see: the landed unit left alone (the refresh after the landing plans what is left)."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, chain = await open_sync_prs(alice)
    branch = bundle["head"]["ref"]
    svc = bot.svc
    landed = asyncio.Event()
    loop = asyncio.get_running_loop()
    real_refresh, real_compute = svc.refresh, svc.compute
    worker: list[asyncio.Task] = []

    async def refresh(ctx, full_name, *, reason):
        landed.set()            # the landing is done; its refresh waits for the poller's sync
        return await real_refresh(ctx, full_name, reason=reason)

    async def merge_and_land():
        await alice.put(f"/repos/meta/triton/pulls/{bundle['number']}/merge", data={"merge_method": "merge"})
        worker.append(asyncio.create_task(bot.settle()))
        await landed.wait()

    def compute(*args, **kw):   # the plan (in its thread): alice merges meanwhile, the worker lands it
        core = real_compute(*args, **kw)
        if not worker:
            asyncio.run_coroutine_threadsafe(merge_and_land(), loop).result()
        return core

    svc.refresh, svc.compute = refresh, compute
    try:
        line = await svc.sync(await job_context(bot)(inst.id), FORK, reason="upstream poll")
    finally:
        await asyncio.gather(*worker)
    await bot.settle()
    assert f"bundle-{c1[:12]}: merged while this sync planned" in line, line
    from bot.sync import store as sync_store
    from tests.support.github import git
    assert (await alice.getitem(f"/repos/meta/triton/pulls/{bundle['number']}"))["merged"] is True
    assert [p["number"] for p in await open_sync_prs(alice)] == [chain["number"]]
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}") == "", "the landed branch was pushed again"
    assert sync_store.blocked_branches(bot.store, FORK) == []
    [issue] = await status_issue(alice)
    assert "Syncing is degraded" not in issue["body"]
    assert sync_store.branch_row(bot.store, FORK, branch)["state"] == "merged"




@pytest.fixture
async def conflict_world(fake_github, tmp_path):
    """The fork tuned ``third_party/amd/x.cpp``: upstream's change of its first line stops a chain."""
    from tests.support.sync_world import chain_world

    async with chain_world(fake_github, tmp_path) as w:
        yield w


async def test_a_resolution_pushed_while_the_poller_plans_is_not_called_githubs_refusal(conflict_world, tmp_path):
    """The chain stopped at a conflict; alice pushes her resolution on top of the conflict commit
    while the poller's sync, which fetched the fork before her push, plans. That sync then
    publishes the chain from what it fetched: it pushes the old tip (its conflict commit) over
    her newer one, git refuses it (non-fast-forward), and the unit is blocked. What alice sees,
    right after her push: "forksync could not update this PR: GitHub refused the push", the
    status issue's *Syncing is degraded*, and a failed sync retried — though nothing refused
    forksync anything: the branch simply moved on GitHub after the fetch. What she should see:
    her push taken as hers (checked and folded when its event is handled), no refusal."""
    from tests.support.github import commit_files, git
    w, up_src, upstream = conflict_world
    from bot.sync import store as sync_store
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n"}, "AMD: new x (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [chain] = [p async for p in w.alice.getiter("/repos/meta/triton/pulls?state=open")]
    branch = f"forksync/chain-{c2[:12]}"
    assert chain["head"]["ref"] == branch and chain["draft"] is True
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    svc = w.bot.svc
    real_compute = svc.compute
    pushed: list[str] = []

    def compute(*args, **kw):   # the plan (in its thread): alice pushes her resolution meanwhile
        core = real_compute(*args, **kw)
        if not pushed:
            pushed.append(commit_files(wt, {"third_party/amd/x.cpp": "int x = 12;\n" + MIDDLE + "int z;\n"},
                                       "resolve x\n\nFile: third_party/amd/x.cpp\nReason: keeps the fork's tuning\n"))
            git(wt, "push", "-q", "origin", "HEAD")
        return core

    w.fake.webhooks.auto_deliver = False        # her push's event is handled after the poller's sync
    svc.compute = compute
    try:
        line = await svc.sync(await job_context(w.bot)(w.inst), FORK, reason="upstream poll")
    finally:
        svc.compute = real_compute
        w.fake.webhooks.auto_deliver = True
    assert pushed
    assert "blocked" not in line, line
    assert sync_store.blocked_branches(w.bot.store, FORK) == []
    assert git(up_src, "ls-remote", str(w.fork.path), f"refs/heads/{branch}").split()[0] == pushed[0]
    await w.fake.refresh()
    await w.fake.webhooks.flush()               # her push's events, held meanwhile
    await w.bot.settle()
    comments = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{chain['number']}/comments")
                if c["user"]["login"] == "forksync[bot]"]
    assert not [c for c in comments if "could not update this PR" in c], comments
    assert any("checked and folded" in c for c in comments), comments
    assert w.bot.deliveries("dead") == []
