"""Sync-PR handlers against the local GitHub: closed unmerged (branch deleted, reason in git
notes), a person's resolution on a chain, config validation, the status issue's checkboxes, the
poller and stale metrics."""
import json
import subprocess

from bot.sync import landing
from bot.sync import store as sync_store
from bot.sync.upstream import poll_once
from tests.support.e2e import adopt_and_move_upstream, job_context, open_sync_prs, status_issue
from tests.support.github import commit_files, git


async def synced(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, chain = await open_sync_prs(alice)
    return c1, c2, bundle, chain


def notes_of(fork_path, sha):
    p = subprocess.run(["git", f"--git-dir={fork_path}", "notes", "--ref", "refs/notes/forksync", "show", sha],
                       capture_output=True, text=True)
    return p.stdout


async def test_closed_unmerged_with_defer_reason_deletes_branch_and_defers(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2, bundle, chain = await synced(world)
    await alice.post(f"/repos/meta/triton/issues/{chain['number']}/comments",
                     data={"body": "deferred: waits for the LLVM bump"})
    await alice.patch(f"/repos/meta/triton/pulls/{chain['number']}", data={"state": "closed"})
    await bot.settle()
    assert bot.deliveries("dead") == []
    assert [p["number"] for p in await open_sync_prs(alice)] == [bundle["number"]]      # no new chain PR
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/forksync/chain-{c2[:12]}") == ""
    note = notes_of(fork.path, c2)
    assert "forksync-decision: DEFERRED_BLOCKED closed unmerged by @alice: waits for the LLVM bump" in note
    assert "forksync-by: alice" in note
    st = sync_store.load_status(bot.store, "meta/triton")
    assert [(d["sha"], d["reason"]) for d in st.deferred] == [(c2, "closed unmerged by @alice: waits for the LLVM bump")]
    [issue] = await status_issue(alice)
    assert f"`{c2[:12]}` AMD: new x (#\u200d102) — closed unmerged by @\u200dalice: waits for the LLVM bump" in issue["body"]
    replies = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{chain['number']}/comments")
               if c["user"]["login"] == "forksync[bot]"]
    assert len(replies) == 1 and "**DEFERRED_BLOCKED**" in replies[0]


async def test_closed_unmerged_without_reason_returns_to_pending_and_is_planned_again_once(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2, bundle, chain = await synced(world)
    await alice.patch(f"/repos/meta/triton/pulls/{chain['number']}", data={"state": "closed"})
    await bot.settle()
    prs = await open_sync_prs(alice)
    assert [p["head"]["ref"] for p in prs] == [f"forksync/bundle-{c1[:12]}", f"forksync/chain-{c2[:12]}"]
    assert prs[1]["number"] != chain["number"]                 # a fresh PR for the re-planned chain
    assert "forksync-decision: RECONSIDER closed unmerged by @alice: closed without a reason" in notes_of(fork.path, c2)


async def test_a_unit_planned_again_after_its_pr_closed_starts_a_fresh_record(world):
    """alice closes the chain's PR without a reason: its commits are planned again at once, as the
    same unit on the same branch, and GitHub refuses the new PR (403). The branch's record starts
    afresh — no PR yet, the closed one listed as an earlier PR — so the refusal is not said on the
    closed PR nor linked to it on the status issue, and the closed PR's close handled again (a
    retried delivery) leaves the new unit's branch and record alone. The next sync opens the new
    PR and records it as the unit's."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2, bundle, chain = await synced(world)
    branch, old = f"forksync/chain-{c2[:12]}", chain["number"]
    fake.faults.add("POST", "/repos/meta/triton/pulls", 403, "Resource not accessible by integration", name="pr-403")
    await alice.patch(f"/repos/meta/triton/pulls/{old}", data={"state": "closed"})
    await bot.settle()
    assert [f.name for f in fake.faults.fired] == ["pr-403"]
    row = sync_store.branch_row(bot.store, "meta/triton", branch)
    assert (row["state"], row["pr"], row["blocked_step"], json.loads(row["earlier_prs"])) == ("open", 0, "pr", [old])
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[0] == row["pushed_tip"]
    replies = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{old}/comments")]
    assert [r.splitlines()[0] for r in replies] == [f"<!-- forksync:closed:{old} -->"]
    [issue] = await status_issue(alice)
    assert f"#{old}" not in issue["body"]

    ctx = await job_context(bot)(inst.id)
    await landing.on_closed(ctx, bot.svc, "meta/triton", await alice.getitem(f"/repos/meta/triton/pulls/{old}"),
                            sender={"login": "alice"}, fork_ref="main")
    assert ctx.outcome == [f"#{old}: {branch} is not forksync's sync branch (forksync's earlier sync PR from this "
                           "branch, whose unit ended; the branch carries another unit now); left alone"]
    assert sync_store.branch_row(bot.store, "meta/triton", branch) == row
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[0] == row["pushed_tip"]

    await bot.svc.sync(ctx, "meta/triton", reason="test: again")
    [new] = [p for p in await open_sync_prs(alice) if p["head"]["ref"] == branch]
    row = sync_store.branch_row(bot.store, "meta/triton", branch)
    assert (row["state"], row["pr"], row["blocked_step"], json.loads(row["earlier_prs"])) == (
        "open", new["number"], "", [old])


async def test_person_resolution_on_chain_is_verified(world, tmp_path):
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2, bundle, chain = await synced(world)
    wt = tmp_path / "person"
    git(tmp_path, "clone", "-q", "-b", f"forksync/chain-{c2[:12]}", str(fork.path), str(wt))
    commit_files(wt, {"third_party/amd/x.cpp": "<<<<<<< HEAD\nint x = 2;\n=======\nint x = 3;\n>>>>>>> theirs\n"},
                 "resolve x")
    git(wt, "push", "-q", "origin", "HEAD")
    await bot.settle()
    commit_files(wt, {"third_party/amd/x.cpp": "int x = 3;\n"}, "resolve x properly")
    git(wt, "push", "-q", "origin", "HEAD")
    await bot.settle()
    replies = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{chain['number']}/comments")
               if c["user"]["login"] == "forksync[bot]"]
    assert len(replies) == 2
    assert "is not complete:\n- conflict markers remain in `third_party/amd/x.cpp`" in replies[0]
    assert "verified: no conflict markers, all 1 `Upstream-Commit` trailers kept. The chain continues." in replies[1]
    # a later sync never overwrites the person's commits
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    log = git(wt, "ls-remote", "origin", f"refs/heads/forksync/chain-{c2[:12]}")
    assert log.split()[0] == git(wt, "rev-parse", "HEAD")


async def test_invalid_config_is_a_failing_check_run_naming_the_field(world, tmp_path):
    fake, bot, alice, up_src, upstream, fork, inst = world
    wt = tmp_path / "cfg"
    git(tmp_path, "clone", "-q", str(fork.path), str(wt))
    sha = commit_files(wt, {".github/forksync.yml": "bundle_size_cap: 0\nareas: []\n"}, "break config")
    git(wt, "push", "-q", "origin", "HEAD:main")
    await bot.settle()
    runs = [r async for r in alice.getiter(f"/repos/meta/triton/commits/{sha}/check-runs", iterable_key="check_runs")]
    [run] = [r for r in runs if r["name"] == "forksync/config"]
    assert (run["status"], run["conclusion"]) == ("completed", "failure")
    assert "| 1 | `bundle_size_cap` | Input should be greater than or equal to 1 |" in run["output"]["summary"]
    assert bot.deliveries("dead") == []


async def test_ticking_replan_runs_a_sync_and_unticks(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await synced(world)
    [issue] = await status_issue(alice)
    ticked = issue["body"].replace("- [ ] <!-- replan -->", "- [x] <!-- replan -->")
    await alice.patch(f"/repos/meta/triton/issues/{issue['number']}", data={"body": ticked})
    await bot.settle()
    [issue2] = await status_issue(alice)
    assert "- [ ] <!-- replan -->" in issue2["body"]
    outcome = [d.outcome for d in bot.deliveries("done") if d.event == "issues" and d.action == "edited"]
    assert any("status issue: re-plan" in o for o in outcome)


async def test_poller_failure_marks_numbers_stale(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await synced(world)

    make_ctx = job_context(bot)

    fake.faults.add("GET", "/repos/triton-lang/triton/branches/*", 403, "Resource not accessible by integration")
    notes = await poll_once(bot.store, bot.svc, make_ctx, now=10**10)
    assert notes[0].startswith("meta/triton: poll failed: ")
    st = sync_store.load_status(bot.store, "meta/triton")
    assert st.stale() and "403" in st.last_fetch_error
    [issue] = await status_issue(alice)
    assert "**These numbers are stale**: the last fetch of upstream failed: poll of triton-lang/triton failed" in issue["body"]
    # the next poll succeeds: fresh again
    notes = await poll_once(bot.store, bot.svc, make_ctx, now=10**10 + 10**6)
    assert not sync_store.load_status(bot.store, "meta/triton").last_fetch_error
    # the dashboard's history: a row per sync and per refresh, the failed one marked
    rows = sorted(sync_store.snapshots(bot.store, "meta/triton"), key=lambda r: r["id"])     # the poll's clock is not the sync's
    assert [r["source"] for r in rows][-2:] == ["fetch-failed", "sync"] and "403" in rows[-2]["fetch_error"]
    assert len(rows) == 2 and len(rows[-1]["frontier"]) == 40     # the poll's far-future clock aged out the first syncs
    assert sync_store.query_ledger(bot.store, "meta/triton")[0] > 0


async def test_a_poll_failure_that_echoes_a_token_is_stored_and_shown_scrubbed(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await synced(world)
    token = "ghs_" + "Zz09" * 9
    fake.faults.add("GET", "/repos/triton-lang/triton/branches/*", 403, f"refused by a proxy (Authorization: token {token})")
    notes = await poll_once(bot.store, bot.svc, job_context(bot), now=10**10)
    st = sync_store.load_status(bot.store, "meta/triton")
    [issue] = await status_issue(alice)
    assert "403" in st.last_fetch_error and "token ***" in st.last_fetch_error
    for text in (st.last_fetch_error, issue["body"], *notes, *(r["fetch_error"] or "" for r in sync_store.snapshots(bot.store, "meta/triton"))):
        assert "Zz09" not in text


async def test_ticking_retry_rebuilds_the_unit_on_the_current_fork_tip(world, tmp_path):
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2, bundle, chain = await synced(world)
    wt = tmp_path / "forkwt"
    git(tmp_path, "clone", "-q", str(fork.path), str(wt))
    new_main = commit_files(wt, {"FORK_NOTES.md": "fork only\n"}, "fork: notes")
    git(wt, "push", "-q", "origin", "HEAD:main")
    await bot.settle()
    [issue] = await status_issue(alice)
    box = f"- [ ] <!-- retry:bundle-{c1[:12]} -->"
    assert box in issue["body"]
    await alice.patch(f"/repos/meta/triton/issues/{issue['number']}",
                      data={"body": issue["body"].replace(box, box.replace("[ ]", "[x]"))})
    await bot.settle()
    assert bot.deliveries("dead") == []
    [b, _c] = await open_sync_prs(alice)
    assert b["number"] == bundle["number"]                     # same PR, branch rebuilt
    [commit] = [c async for c in alice.getiter(f"/repos/meta/triton/pulls/{b['number']}/commits")]
    assert [p["sha"] for p in commit["parents"]] == [new_main]
    assert f"Upstream-Commit: {c1}" in commit["commit"]["message"]


async def test_an_upstream_commit_already_in_the_fork_is_recorded_no_op_in_git(world, tmp_path):
    fake, bot, alice, up_src, upstream, fork, inst = world
    # the fork made upstream's change itself, together with another one (so no patch-id matches)
    wt = tmp_path / "forkwork"
    git(tmp_path, "clone", "-q", str(fork.path), str(wt))
    commit_files(wt, {"python/b.py": "b = 2\n", "python/c.py": "c = 1\n"}, "fork: b = 2 and a new c")
    git(wt, "push", "-q", "origin", "HEAD:main")
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    same = commit_files(up_src, {"python/b.py": "b = 2\n"}, "Set b (#105)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    note = notes_of(fork.path, same)
    assert "forksync-decision: NO_OP already in the fork: picking it onto" in note and "forksync-by: forksync" in note
    assert notes_of(fork.path, c1) == ""                      # a real pick is not decided
    prs = await open_sync_prs(alice)
    assert all(same[:12] not in p["title"] for p in prs)
    assert bot.deliveries("dead") == []


async def test_a_retry_rebuild_never_overwrites_a_commit_pushed_while_the_sync_ran(world, tmp_path):
    """A retry rebuilds a branch only while it holds nothing but forksync's commits — as fetched
    when the sync started. A person's commit pushed to the branch after that fetch (the sync plans
    and applies other units meanwhile) was never checked, so the rebuild's lease must be on the
    tip that was checked, not on whatever GitHub shows just before the push."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2, bundle, chain = await synced(world)
    branch = f"forksync/bundle-{c1[:12]}"
    wt = tmp_path / "forkwt"
    git(tmp_path, "clone", "-q", str(fork.path), str(wt))
    commit_files(wt, {"FORK_NOTES.md": "fork only\n"}, "fork: notes")
    git(wt, "push", "-q", "origin", "HEAD:main")
    await bot.settle()
    person = tmp_path / "person"
    git(tmp_path, "clone", "-q", "-b", branch, str(fork.path), str(person))
    pushed = []
    real_git = bot.svc._git

    async def racing_git(d, *args, **kw):
        if args[:1] == ("ls-remote",) and args[-1] == f"refs/heads/{branch}" and not pushed:
            # the person's push lands after the sync's fetch, before its push
            pushed.append(commit_files(person, {"python/person.py": "mine = 1\n"}, "A person's fix"))
            git(person, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
        return await real_git(d, *args, **kw)

    bot.svc._git = racing_git
    [issue] = await status_issue(alice)
    box = f"- [ ] <!-- retry:bundle-{c1[:12]} -->"
    await alice.patch(f"/repos/meta/triton/issues/{issue['number']}",
                      data={"body": issue["body"].replace(box, box.replace("[ ]", "[x]"))})
    await bot.settle()
    assert pushed
    tip = git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[0]
    assert subprocess.run(["git", f"--git-dir={fork.path}", "merge-base", "--is-ancestor", pushed[0], tip]).returncode == 0


async def test_a_closed_pr_whose_branch_alice_deleted_is_not_told_another_pr_keeps_it(world):
    """alice closes the chain's PR and presses GitHub's "Delete branch" before forksync handles the
    close: forksync's delete finds nothing (422) and no other PR uses the branch, so its reply must
    not say it left the branch in place for another open pull request."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2, bundle, chain = await synced(world)
    branch = chain["head"]["ref"]
    await alice.post(f"/repos/meta/triton/issues/{chain['number']}/comments",
                     data={"body": "deferred: waits for the LLVM bump"})
    await alice.patch(f"/repos/meta/triton/pulls/{chain['number']}", data={"state": "closed"})
    await alice.delete(f"/repos/meta/triton/git/refs/heads/{branch}")
    await bot.settle()
    assert bot.deliveries("dead") == []
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}") == ""
    [reply] = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{chain['number']}/comments")
               if c["user"]["login"] == "forksync[bot]"]
    assert "**DEFERRED_BLOCKED**" in reply
    assert "another open pull request" not in reply and "left `" not in reply, reply
