"""Open sync PRs whose upstream commits are decided while they are open, against the local
GitHub with the real bot, real git and the real store: a chain whose only commit is deferred is
closed (its close recording no decision of its own), a bundle one of whose commits is skipped is
rebuilt without it, a branch carrying a person's commit is left alone with one comment, and a
reconsider brings the closed chain's commit back in a new unit."""
import subprocess

from bot.sync import landing
from bot.sync import store as sync_store
from tests.support.e2e import adopt_and_move_upstream, install_on_fork, job_context, open_sync_prs, status_command, status_issue
from tests.support.github import commit_files, git

BOT = "forksync[bot]"


def notes_of(fork_path, sha):
    p = subprocess.run(["git", f"--git-dir={fork_path}", "notes", "--ref", "refs/notes/forksync", "show", sha],
                       capture_output=True, text=True)
    return p.stdout


def dispositions(bot) -> dict[str, str]:
    _, rows = sync_store.query_ledger(bot.store, "meta/triton", limit=1000)
    return {r["sha"]: r["disposition"] for r in rows}


async def bot_comments(gh, number: int, mark: str = "") -> list[str]:
    return [c["body"] async for c in gh.getiter(f"/repos/meta/triton/issues/{number}/comments")
            if c["user"]["login"] == BOT and mark in c["body"]]


async def synced(world):
    """The App adopts the fork, upstream moves by a bundle commit and a chain commit: their PRs."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, chain = await open_sync_prs(alice)
    return c1, c2, bundle, chain


async def two_commit_bundle(world):
    """Upstream moves by two bundle commits (python/a.py, python/b.py) and a chain commit: the
    bundle's PR carries both."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    c3 = commit_files(up_src, {"python/b.py": "b = 2\n"}, "Tidy b (#103)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: new x (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    bundle, chain = await open_sync_prs(alice)
    assert bundle["head"]["ref"] == f"forksync/bundle-{c1[:12]}"
    return c1, c3, c2, bundle


async def picks_on(gh, number: int) -> list[str]:
    """The upstream shas the PR's commits carry, in order."""
    out = []
    async for c in gh.getiter(f"/repos/meta/triton/pulls/{number}/commits"):
        out += [ln.split(": ", 1)[1] for ln in c["commit"]["message"].splitlines() if ln.startswith("Upstream-Commit: ")]
    return out


async def test_a_chain_whose_only_commit_is_deferred_is_closed_and_its_close_decides_nothing(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2, bundle, chain = await synced(world)
    branch = f"forksync/chain-{c2[:12]}"
    [issue] = await status_issue(alice)
    await status_command(alice, bot, issue["number"], f"/forksync defer {c2[:12]} waits for the LLVM bump")
    assert bot.deliveries("dead") == []

    pr = await alice.getitem(f"/repos/meta/triton/pulls/{chain['number']}")
    assert (pr["state"], pr["merged"]) == ("closed", False)
    [reply] = await bot_comments(alice, chain["number"])
    assert f"`{c2[:12]}`" in reply and "**DEFERRED_BLOCKED**" in reply
    assert "waits for the LLVM bump" in reply and "@\u200dalice" in reply
    assert f"/forksync reconsider {c2[:12]}" in reply
    assert f"deleted `{branch}`" in reply
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}") == ""
    row = sync_store.branch_row(bot.store, "meta/triton", branch)
    assert (row["state"], row["pr"]) == ("decided", chain["number"])
    # the status issue lists the bundle only; the chain's commit is among the deferred, with its reason
    [issue] = await status_issue(alice)
    assert f"chain-{c2[:12]}" not in issue["body"].split("## Open bundles and chains", 1)[1].split("##", 1)[0]
    assert f"`{c2[:12]}` AMD: new x (#\u200d102) — waits for the LLVM bump" in issue["body"]
    [b] = await open_sync_prs(alice)
    assert b["number"] == bundle["number"]
    note = notes_of(fork.path, c2)
    assert note.count("forksync-decision:") == 1 and "forksync-decision: DEFERRED_BLOCKED waits for the LLVM bump" in note

    # the close's own pull_request.closed (forksync's, so the loop guard drops it), handled anyway
    # as if the bot's login were unknown, and a later sync that finds the PR closed: no decision
    ctx = await job_context(bot)(inst.id)
    await landing.on_closed(ctx, bot.svc, "meta/triton", pr, sender={"login": BOT}, fork_ref="main")
    assert ctx.outcome == [f"#{chain['number']}: closed by forksync, every upstream commit of chain-{c2[:12]} "
                           "decided; nothing to record"]
    await bot.svc.sync(ctx, "meta/triton", reason="test: again")
    await bot.settle()
    assert notes_of(fork.path, c2) == note
    assert dispositions(bot)[c2] == "DEFERRED_BLOCKED"
    assert [p["number"] for p in await open_sync_prs(alice)] == [bundle["number"]]
    assert len(await bot_comments(alice, chain["number"])) == 1
    assert bot.deliveries("dead") == []


async def test_reconsider_after_the_close_brings_the_commit_back_in_a_new_unit(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2, bundle, chain = await synced(world)
    [issue] = await status_issue(alice)
    await status_command(alice, bot, issue["number"], f"/forksync defer {c2[:12]} waits for the LLVM bump")
    assert (await alice.getitem(f"/repos/meta/triton/pulls/{chain['number']}"))["state"] == "closed"
    await status_command(alice, bot, issue["number"], f"/forksync reconsider {c2[:12]}")
    assert bot.deliveries("dead") == []
    [b, again] = await open_sync_prs(alice)
    assert b["number"] == bundle["number"]
    assert again["head"]["ref"] == f"forksync/chain-{c2[:12]}" and again["number"] != chain["number"]
    assert await picks_on(alice, again["number"]) == [c2]
    assert dispositions(bot)[c2] == "IN_FLIGHT"
    row = sync_store.branch_row(bot.store, "meta/triton", f"forksync/chain-{c2[:12]}")
    assert (row["state"], row["pr"], row["earlier_prs"]) == ("open", again["number"], f"[{chain['number']}]")


async def test_a_bundle_one_of_whose_commits_is_skipped_is_rebuilt_without_it(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c3, c2, bundle = await two_commit_bundle(world)
    assert await picks_on(alice, bundle["number"]) == [c1, c3]
    [issue] = await status_issue(alice)
    await status_command(alice, bot, issue["number"], f"/forksync skip {c3[:12]} b is the fork's own")
    assert bot.deliveries("dead") == []
    pr = await alice.getitem(f"/repos/meta/triton/pulls/{bundle['number']}")
    assert pr["state"] == "open"
    assert await picks_on(alice, bundle["number"]) == [c1]
    main = git(up_src, "ls-remote", str(fork.path), "refs/heads/main").split()[0]
    [commit] = [c async for c in alice.getiter(f"/repos/meta/triton/pulls/{bundle['number']}/commits")]
    assert [p["sha"] for p in commit["parents"]] == [main]
    [reply] = await bot_comments(alice, bundle["number"], "forksync:shrunk:")
    assert f"`{c3[:12]}`" in reply and "**SKIP_FOR_CURRENT_BASE**" in reply and "b is the fork's own" in reply
    assert f"rebuilt `forksync/bundle-{c1[:12]}`" in reply and pr["head"]["sha"][:12] in reply
    assert f"/forksync reconsider {c3[:12]}" in reply
    led = dispositions(bot)
    assert (led[c1], led[c3]) == ("IN_FLIGHT", "SKIP_FOR_CURRENT_BASE")
    # a later sync leaves the rebuilt branch and says nothing more
    ctx = await job_context(bot)(inst.id)
    await bot.svc.sync(ctx, "meta/triton", reason="test: again")
    assert (await alice.getitem(f"/repos/meta/triton/pulls/{bundle['number']}"))["head"]["sha"] == pr["head"]["sha"]
    assert len(await bot_comments(alice, bundle["number"], "forksync:shrunk:")) == 1


async def test_a_branch_carrying_a_persons_commit_is_left_alone_and_told_once(world, tmp_path):
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c3, c2, bundle = await two_commit_bundle(world)
    branch = bundle["head"]["ref"]
    person = tmp_path / "person"
    git(tmp_path, "clone", "-q", "-b", branch, str(fork.path), str(person))
    mine = commit_files(person, {"python/person.py": "mine = 1\n"}, "A person's fix")
    git(person, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
    await bot.settle()
    [issue] = await status_issue(alice)
    await status_command(alice, bot, issue["number"], f"/forksync skip {c3[:12]} b is the fork's own")
    assert bot.deliveries("dead") == []
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[0] == mine
    pr = await alice.getitem(f"/repos/meta/triton/pulls/{bundle['number']}")
    assert pr["state"] == "open"
    [told] = await bot_comments(alice, bundle["number"], "forksync:decided-kept:")
    assert f"`{c3[:12]}`" in told and "**SKIP_FOR_CURRENT_BASE**" in told and "b is the fork's own" in told
    assert "still carries" in told and f"/forksync reconsider {c3[:12]}" in told
    ctx = await job_context(bot)(inst.id)
    await bot.svc.sync(ctx, "meta/triton", reason="test: again")
    await bot.settle()
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[0] == mine
    assert len(await bot_comments(alice, bundle["number"], "forksync:decided-kept:")) == 1
    assert dispositions(bot)[c3] == "SKIP_FOR_CURRENT_BASE"


async def test_a_pr_closed_on_github_since_the_ledger_was_read_is_left_to_its_landing(world):
    """The sync read the ledger, then the unit's PR was merged or closed on GitHub (the gate merges
    on its own) before forksync's close of a unit whose commits were decided. What a person would
    see without the check: a comment claiming forksync closed a PR that was already merged, and the
    row marked as closed by forksync, so the landing of that close records nothing. What they
    see: the close is skipped, the row stays as it was, no comment, and the landing records it."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2, bundle, chain = await synced(world)
    branch = f"forksync/chain-{c2[:12]}"
    await alice.patch(f"/repos/meta/triton/pulls/{chain['number']}", data={"state": "closed"})
    row = sync_store.branch_row(bot.store, "meta/triton", branch)
    assert row["state"] == "open"
    ctx = await job_context(bot)(inst.id)
    decided = [{"sha": c2, "subject": "s", "disposition": "DEFERRED_BLOCKED", "reason": "r", "by": "alice",
                "fork_commit": ""}]
    line = await landing.close_decided(ctx, "meta/triton", row, decided)
    assert line == f"chain-{c2[:12]}: PR #{chain['number']} already closed; left to its landing"
    assert sync_store.branch_row(bot.store, "meta/triton", branch)["state"] == "open"
    assert await bot_comments(alice, chain["number"], "forksync:decided:") == []


async def test_a_close_github_refuses_leaves_the_status_current_and_says_so(world):
    """GitHub refuses forksync's close of a unit whose only commit was deferred. What a person
    would see if the refusal stopped the sync there: a status issue that does not show the
    deferral, and nothing saying the close failed. What they see: the status issue is current
    (the deferral listed, the PR still open), and the delivery fails naming the PR it could not
    close (retried, then a dead letter: the alarm); a later sync closes it."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2, bundle, chain = await synced(world)
    fake.faults.add("PATCH", f"/repos/meta/triton/pulls/{chain['number']}", 422, "Validation Failed", times=50)
    [issue] = await status_issue(alice)
    await status_command(alice, bot, issue["number"], f"/forksync defer {c2[:12]} waits for the LLVM bump")
    assert (await alice.getitem(f"/repos/meta/triton/pulls/{chain['number']}"))["state"] == "open"
    body = (await alice.getitem(f"/repos/meta/triton/issues/{issue['number']}"))["body"]
    assert "waits for the LLVM bump" in body
    errors = [d.last_error or d.dead_reason for d in bot.deliveries("failed") + bot.deliveries("dead")]
    assert any(f"closing the PR of a unit whose every commit was decided failed: #{chain['number']}" in (e or "")
               for e in errors), errors
    fake.faults.clear()
    ctx = await job_context(bot)(inst.id)
    await bot.svc.sync(ctx, "meta/triton", reason="test: again")
    assert (await alice.getitem(f"/repos/meta/triton/pulls/{chain['number']}"))["state"] == "closed"


async def test_a_merge_that_wins_the_race_with_forksyncs_close_lands(world):
    """forksync marked a unit as closed by itself (every commit decided) and, before its close
    reached GitHub, the PR was merged (the gate merges on its own). What a maintainer would see
    if the mark won: the merge's landing ignored as "closed by forksync", its branch left and the
    unit never recorded as merged. What they see: the merge lands as any merge does."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2, bundle, chain = await synced(world)
    branch = bundle["head"]["ref"]
    row = sync_store.branch_row(bot.store, "meta/triton", branch)
    sync_store.save_branch(bot.store, **{**row, "state": sync_store.DECIDED})
    await alice.put(f"/repos/meta/triton/pulls/{bundle['number']}/merge", data={"merge_method": "rebase"})
    pr = await alice.getitem(f"/repos/meta/triton/pulls/{bundle['number']}")
    assert pr["merged"] is True
    ctx = await job_context(bot)(inst.id)
    await landing.on_closed(ctx, bot.svc, "meta/triton", pr, sender={"login": "alice"}, fork_ref="main", refresh=False)
    assert sync_store.branch_row(bot.store, "meta/triton", branch)["state"] == "merged"
    assert ctx.outcome[-1] == f"bundle-{c1[:12]} merged"
