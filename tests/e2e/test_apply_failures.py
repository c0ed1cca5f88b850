"""A unit whose pick fails for another reason than a conflict (libgit2 cannot merge it: an object
it needs is missing or unreadable, a commit cannot be written) is visible and retried, end to end
on the local GitHub with the real bot: stored as blocked with the error, on the status issue with
what to do, the other units still published, and applied again by the next sync."""
from __future__ import annotations

import time

import aiohttp
import pygit2
import pytest

from bot.app.web import app_facts
from bot.git import apply as apply_mod
from bot.sync import store as sync_store
from tests.support.e2e import install_on_fork, job_context, open_sync_prs, status_issue
from tests.support.github import commit_files, git

FORK = "meta/triton"
TOKEN = "ghs_" + "ApplyFailCanary" * 3


@pytest.fixture
def failing_pick(monkeypatch):
    """``fail(sha, error)``: libgit2's merge of the pick of ``sha`` raises ``error`` (as it does
    for a tree naming an object the repository lacks) until ``fail(None, None)``."""
    real = apply_mod._Merger.merge
    failing: dict[str, Exception] = {}

    def merge(self, commit, ours):
        e = failing.get(str(commit.id))
        if e is not None:
            raise e
        return real(self, commit, ours)

    monkeypatch.setattr(apply_mod._Merger, "merge", merge)

    def fail(sha, error):
        failing.clear()
        if sha:
            failing[sha] = error
    return fail


async def test_a_unit_whose_first_pick_fails_is_blocked_shown_and_retried(world, failing_pick):
    """The chain's first (only) pick cannot be merged: libgit2 cannot read an object. What the
    maintainer saw: the bundle's PR, and nothing of the chain — no PR, no row, no line on the
    status issue (the unit vanished until upstream moved again). What they should see: the chain
    blocked with the error (its secrets scrubbed), on the status issue and in the fork's
    degraded state, and the next sync applying it once it can."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    await bot.settle()
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: new x (#102)")
    failing_pick(c2, pygit2.GitError(f"object not found - no match for id (0badc0de); https://x:{TOKEN}@h/y"))
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    chain = f"chain-{c2[:12]}"
    # the bundle went on
    assert [p["head"]["ref"] for p in await open_sync_prs(alice)] == [f"forksync/bundle-{c1[:12]}"]
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/forksync/{chain}") == ""
    row = sync_store.branch_row(bot.store, FORK, f"forksync/{chain}")
    assert row is not None, "the chain whose pick failed left no trace"
    assert (row["state"], row["pr"], row["blocked_step"], row["conflict_sha"]) == ("blocked", 0, "apply", c2)
    assert f"cannot merge {c2[:12]}: object not found - no match for id (0badc0de)" in row["blocked_reason"]
    assert TOKEN not in row["blocked_reason"]
    st = sync_store.load_status(bot.store, FORK)
    assert st.degraded().startswith(f"1 unit(s) blocked: {chain}: cannot merge {c2[:12]}"), st.degraded()
    [issue] = await status_issue(alice)
    body = issue["body"]
    assert TOKEN not in body
    assert f"- `{chain}`: its pick of upstream `{c2[:12]}` failed " in body, body
    assert f"- [ ] <!-- retry:{chain} -->" in body
    # /healthz (no login) says a fork is degraded; the health page names it to who may read the fork
    async with aiohttp.ClientSession() as s, s.get(bot.server.make_url("/healthz")) as r:
        assert r.status == 200
        assert (await r.json())["warnings"] == [
            "1 warning of a fork: the dashboard's health page (/health) names it to who may read the fork"]
    [warned] = app_facts(bot.store, time.time())["warnings"]
    assert warned.startswith(f"meta/triton: syncing is degraded: 1 unit(s) blocked: {chain}: cannot merge {c2[:12]}")
    # the next sync, the failure gone, publishes it
    failing_pick(None, None)
    await bot.svc.sync(await job_context(bot)(inst.id), FORK, reason="test: again")
    await bot.settle()
    assert [p["head"]["ref"] for p in await open_sync_prs(alice)] == [f"forksync/bundle-{c1[:12]}", f"forksync/{chain}"]
    row = sync_store.branch_row(bot.store, FORK, f"forksync/{chain}")
    assert (row["state"], row["blocked_reason"], row["blocked_step"]) == ("open", "", "")
    assert sync_store.load_status(bot.store, FORK).degraded() == ""
    [issue] = await status_issue(alice)
    assert "Syncing is degraded" not in issue["body"]


async def test_a_pick_that_cannot_be_written_blocks_only_its_unit(world, monkeypatch):
    """Writing the chain's pick fails (an error apply does not expect: the object database refuses
    the commit). What the maintainer saw: the whole sync failed — the bundle unpublished too, the
    status not refreshed. What they should see: the chain blocked naming the upstream commit and
    the cause, the bundle published."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    await bot.settle()
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: new x (#102)")
    real = apply_mod._commit

    def commit(repo, author, signer, msg, tree_id, head):
        if f"Upstream-Commit: {c2}" in msg:
            raise OSError(28, "No space left on device")
        return real(repo, author, signer, msg, tree_id, head)

    monkeypatch.setattr(apply_mod, "_commit", commit)
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    chain = f"chain-{c2[:12]}"
    assert [p["head"]["ref"] for p in await open_sync_prs(alice)] == [f"forksync/bundle-{c1[:12]}"]
    row = sync_store.branch_row(bot.store, FORK, f"forksync/{chain}")
    assert row is not None and (row["state"], row["blocked_step"]) == ("blocked", "apply")
    assert f"cannot pick {c2[:12]}: " in row["blocked_reason"] and "No space left on device" in row["blocked_reason"]
    [issue] = await status_issue(alice)
    assert f"- `{chain}`: its pick of upstream `{c2[:12]}` failed " in issue["body"]


async def test_a_later_pick_of_a_chain_that_fails_is_shown_on_its_draft_pr_and_retried(world, failing_pick):
    """The chain's first pick applies, its second cannot be merged. What the maintainer should see:
    the draft PR with the first pick and the error, the unit listed as blocked at step ``apply``
    (status issue, degraded) for as long as the pick fails, and the next sync, the failure gone,
    applying the rest on the same branch. What they saw: the next plan made the failed commit a
    unit of its own (stacked on the chain), the chain's PR no longer said which pick failed, and
    the failed commit came back as a second PR."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    await bot.settle()
    c1 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: new x (#102)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 3;\n"}, "AMD: newer x (#103)")
    failing_pick(c2, pygit2.GitError("object not found - no match for id (0badc0de)"))
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    chain = f"chain-{c1[:12]}"
    [pr] = await open_sync_prs(alice)
    assert (pr["head"]["ref"], pr["draft"]) == (f"forksync/{chain}", True)
    assert f"cannot merge {c2[:12]}: object not found" in pr["body"]
    row = sync_store.branch_row(bot.store, FORK, f"forksync/{chain}")
    assert (row["state"], row["pr"], row["blocked_step"], row["conflict_sha"]) == ("open", pr["number"], "apply", c2)
    [issue] = await status_issue(alice)
    assert f"- `{chain}` ([#{pr['number']}](" in issue["body"] and f"its pick of upstream `{c2[:12]}` failed" in issue["body"]
    # a sync while the pick still fails: the unit keeps its failed pick (it was planned as its
    # own unit, stacked on the chain, and the chain shown as no longer blocked)
    await bot.svc.sync(await job_context(bot)(inst.id), FORK, reason="test: still failing")
    await bot.settle()
    [pr] = await open_sync_prs(alice)
    assert (pr["head"]["ref"], pr["draft"]) == (f"forksync/{chain}", True)
    assert f"cannot merge {c2[:12]}: object not found" in pr["body"]
    assert sync_store.branch_row(bot.store, FORK, f"forksync/chain-{c2[:12]}") is None
    row = sync_store.branch_row(bot.store, FORK, f"forksync/{chain}")
    assert (row["state"], row["blocked_step"], row["conflict_sha"]) == ("open", "apply", c2)
    [issue] = await status_issue(alice)
    assert f"its pick of upstream `{c2[:12]}` failed" in issue["body"]
    failing_pick(None, None)
    await bot.svc.sync(await job_context(bot)(inst.id), FORK, reason="test: again")
    await bot.settle()
    # the next plan keeps the unit's identity and order: the failed pick is applied again on the
    # chain's branch, after its first pick, and the same PR carries both
    [pr] = await open_sync_prs(alice)
    assert pr["head"]["ref"] == f"forksync/{chain}"
    subjects = git(up_src, "--git-dir", str(fork.path), "log", "--format=%s", f"{pr['head']['sha']}", "-2").split("\n")
    assert subjects == ["AMD: newer x (#103)", "AMD: new x (#102)"]
    assert f"cannot merge {c2[:12]}" not in pr["body"]
    row = sync_store.branch_row(bot.store, FORK, f"forksync/{chain}")
    assert (row["state"], row["blocked_reason"], row["conflict_sha"]) == ("open", "", "")
    assert sync_store.branch_row(bot.store, FORK, f"forksync/chain-{c2[:12]}") is None
    assert sync_store.load_status(bot.store, FORK).degraded() == ""


async def test_a_unit_apply_refuses_is_blocked_and_the_others_go_on(world, monkeypatch):
    """apply refuses the chain outright (:class:`bot.git.apply.ApplyError`: here, upstream objects
    it cannot fetch). What the maintainer saw: the sync failed as a whole at that unit, the units
    after it unpublished and the status not refreshed. What they should see: the chain blocked
    with apply's words, the bundle published, the status issue naming the chain."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    await bot.settle()
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: new x (#102)")
    real = apply_mod.apply_unit
    chain = f"chain-{c2[:12]}"

    def apply_unit(git_dir, unit, **kw):
        if unit.id == chain:
            raise apply_mod.ApplyError(f"could not fetch upstream commit {c2} from https://x:{TOKEN}@h/up.git")
        return real(git_dir, unit, **kw)

    monkeypatch.setattr(apply_mod, "apply_unit", apply_unit)
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    assert [p["head"]["ref"] for p in await open_sync_prs(alice)] == [f"forksync/bundle-{c1[:12]}"]
    row = sync_store.branch_row(bot.store, FORK, f"forksync/{chain}")
    assert row is not None and (row["state"], row["blocked_step"], row["conflict_sha"]) == ("blocked", "apply", c2)
    assert f"applying {chain} failed: could not fetch upstream commit {c2}" in row["blocked_reason"]
    assert TOKEN not in row["blocked_reason"]
    [issue] = await status_issue(alice)
    assert f"- `{chain}`: its pick of upstream `{c2[:12]}` failed " in issue["body"] and TOKEN not in issue["body"]
    assert bot.deliveries("dead") == []


async def test_a_first_pick_that_keeps_failing_while_the_fork_moves_is_never_pushed_empty(world, failing_pick):
    """The chain's first pick fails; meanwhile the bundle lands and the fork moves; the pick fails
    again, then passes. What the maintainer saw: the first failure left the chain's branch at the
    fork tip of that sync (no commit of the unit), so the next sync, after the landing, pushed that
    empty branch to GitHub and asked for a PR of it — refused (422 *No commits between*), the unit
    shown as *GitHub refused the pull request* instead of its failed pick, the delivery retried —
    and the pass after built the chain on the old fork tip, without the landed bundle. What they
    should see: the unit blocked at step ``apply`` naming the upstream commit each time, no empty
    branch on GitHub, and once the pick passes, the chain built on the fork tip of that sync."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    await bot.settle()
    commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: new x (#102)")
    failing_pick(c2, pygit2.GitError("object not found - no match for id (0badc0de)"))
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    chain = f"chain-{c2[:12]}"
    [bundle] = await open_sync_prs(alice)
    await alice.put(f"/repos/meta/triton/pulls/{bundle['number']}/merge", data={"merge_method": "rebase"})
    await bot.settle()          # the landing's sync: the pick fails again, on the moved fork
    fork_tip = git(up_src, "ls-remote", str(fork.path), "refs/heads/main").split()[0]
    assert await open_sync_prs(alice) == []
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/forksync/{chain}") == ""
    row = sync_store.branch_row(bot.store, FORK, f"forksync/{chain}")
    assert (row["state"], row["pr"], row["blocked_step"], row["conflict_sha"]) == ("blocked", 0, "apply", c2), row
    assert f"cannot merge {c2[:12]}" in row["blocked_reason"]
    [issue] = await status_issue(alice)
    assert f"- `{chain}`: its pick of upstream `{c2[:12]}` failed " in issue["body"]
    assert bot.deliveries("dead") == []
    # the pick passes: the chain is built on the fork tip as it is now (the bundle landed)
    failing_pick(None, None)
    await bot.svc.sync(await job_context(bot)(inst.id), FORK, reason="test: again")
    await bot.settle()
    [pr] = await open_sync_prs(alice)
    assert pr["head"]["ref"] == f"forksync/{chain}"
    head = pr["head"]["sha"]
    assert git(up_src, "--git-dir", str(fork.path), "rev-parse", f"{head}^") == fork_tip
    row = sync_store.branch_row(bot.store, FORK, f"forksync/{chain}")
    assert (row["state"], row["blocked_step"], row["base_sha"]) == ("open", "", fork_tip)
