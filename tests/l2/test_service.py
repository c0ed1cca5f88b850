"""The L2 back-out PR (``bot.l2.service.open_backout``) on the local GitHub with real git: its
branch is recorded as forksync's, so the PR is forksync's own whether or not the bot's login is
known (token mode without FORKSYNC_BOT_LOGIN, where the PR's author says nothing)."""
from __future__ import annotations

import dataclasses
import json

import pytest

from bot.git.bisect import BisectResult
from bot.l2 import service as l2_service
from bot.l2.report import Evidence
from bot.sync import landing
from bot.sync import prs as sync_prs
from bot.sync import store as sync_store
from tests.support.github import commit_files, git
from tests.support.validation_world import close_world, make_world, tick_ctx

UPSTREAM_SHA = "9" * 40


@pytest.fixture
async def world(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path)
    yield w
    await close_world(w)


def regressed(w) -> tuple[str, Evidence]:
    """A sync pick landed on main that L2 bisected to: ``(its sha, the evidence)``."""
    git(w.work, "fetch", "-q", "origin")
    git(w.work, "checkout", "-q", "-B", "main-work", "origin/main")
    culprit = commit_files(w.work, {"lib.py": "def add(a, b):\n    return a + b + 0\n"},
                           f"[BACKEND] Slow the toy kernel\n\nUpstream-Commit: {UPSTREAM_SHA}")
    git(w.work, "push", "-q", "origin", "main-work:refs/heads/main")
    ev = Evidence(title="L2 regression on toy", key=None, values=(), shas=(), change=None, confirmation=None,
                  bisect=BisectResult(good=culprit, bad=culprit, candidates=(culprit,), culprit=culprit, verified=True,
                                      steps=()),
                  culprit_subject="[BACKEND] Slow the toy kernel", upstream_sha=UPSTREAM_SHA, command="bench")
    return culprit, ev


async def first_backout(w):
    """A regressed culprit and its back-out opened: ``(culprit, evidence, branch, ctx, mirror, PR number)``."""
    culprit, ev = regressed(w)
    ctx = await tick_ctx(w)
    mirror = await w.svc.local.fetch("meta/triton")
    number = await l2_service.open_backout(ctx, w.svc, "meta/triton", "main", mirror, ev, issue=1)
    return culprit, ev, f"forksync/backout-{culprit[:12]}", ctx, mirror, number


def remote_tip(w, branch: str) -> str:
    out = git(w.work, "ls-remote", "origin", f"refs/heads/{branch}")
    return out.split()[0] if out else ""


async def test_the_backout_branch_is_recorded_so_its_pr_is_forksyncs_without_a_login(world):
    w = world
    culprit, ev = regressed(w)
    ctx = await tick_ctx(w)
    mirror = await w.svc.local.fetch("meta/triton")
    number = await l2_service.open_backout(ctx, w.svc, "meta/triton", "main", mirror, ev, issue=1)

    pr = await w.pr(number)
    branch = f"forksync/backout-{culprit[:12]}"
    assert pr["head"]["ref"] == branch
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert row is not None
    assert (row["kind"], row["unit_id"], row["pr"], row["pushed_tip"], row["shas_json"]) == (
        "backout", f"backout-{culprit[:12]}", number, pr["head"]["sha"], "[]")
    # forksync's own even when the bot's login is unknown (token mode without FORKSYNC_BOT_LOGIN)
    assert sync_prs.foreign_reason(w.bot.store, "meta/triton", pr, bot_login=None, fork_ref="main") == ""
    assert sync_prs.is_own_sync_pr(w.bot.store, "meta/triton", pr, prefix="forksync/", bot_login=None,
                                   fork_ref="main")
    # a back-out is no sync unit: it takes no sync PR slot and is listed as no unit
    assert sync_store.open_branches(w.bot.store, "meta/triton") == []
    # closing it ends its row, kept as history (nothing of a unit is landed, closed or recorded:
    # no comment, no decision), and deletes forksync's branch
    await w.alice.patch(f"/repos/meta/triton/pulls/{number}", data={"state": "closed"})
    await w.bot.settle()
    assert w.bot.deliveries("dead") == []
    assert sync_store.branch_row(w.bot.store, "meta/triton", branch) == {**row, "state": "closed"}
    assert remote_tip(w, branch) == ""
    assert [c async for c in w.alice.getiter(f"/repos/meta/triton/issues/{number}/comments")] == []


async def test_a_later_backout_on_the_same_branch_is_not_taken_for_the_closed_one(world):
    """A back-out PR closed unmerged ends its row; a later back-out of the same culprit (another
    series regressed by it) pushes the same branch name again and opens a new PR. The branch's row
    is the new back-out's, with the closed PR listed as an earlier one: a redelivered close of the
    old PR leaves the new back-out and its branch alone, and the new PR merged ends the row in turn."""
    w = world
    culprit, ev, branch, ctx, mirror, old = await first_backout(w)
    await w.alice.patch(f"/repos/meta/triton/pulls/{old}", data={"state": "closed"})
    await w.bot.settle()
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert (row["state"], row["pr"]) == ("closed", old)

    new = await l2_service.open_backout(ctx, w.svc, "meta/triton", "main", mirror, ev, issue=2)
    assert new != old
    new_pr, old_pr = await w.pr(new), await w.pr(old)
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert (row["kind"], row["state"], row["pr"], json.loads(row["earlier_prs"]), row["pushed_tip"]) == (
        "backout", "backout", new, [old], new_pr["head"]["sha"])
    assert remote_tip(w, branch) == new_pr["head"]["sha"]
    assert sync_prs.foreign_reason(w.bot.store, "meta/triton", new_pr, bot_login=None, fork_ref="main") == ""
    assert sync_prs.foreign_reason(w.bot.store, "meta/triton", old_pr, bot_login=None, fork_ref="main") == (
        "forksync's earlier sync PR from this branch, whose unit ended; the branch carries another unit now")

    # the old PR's close handled again (a redelivery): the new back-out is not the old one
    ctx = await tick_ctx(w)
    await landing.on_closed(ctx, w.bot.svc, "meta/triton", old_pr, sender={"login": "alice"})
    assert ctx.outcome == [f"#{old}: {branch} is not forksync's sync branch (forksync's earlier sync PR from this "
                           "branch, whose unit ended; the branch carries another unit now); left alone"]
    assert sync_store.branch_row(w.bot.store, "meta/triton", branch) == row
    assert remote_tip(w, branch) == new_pr["head"]["sha"]

    await w.alice.put(f"/repos/meta/triton/pulls/{new}/merge", data={"merge_method": "merge"})
    await w.bot.settle()
    assert w.bot.deliveries("dead") == []
    assert sync_store.branch_row(w.bot.store, "meta/triton", branch) == {**row, "state": "merged"}
    assert remote_tip(w, branch) == ""
    # the revert landed on trunk: the ledger is rebuilt on it at once, not at the next upstream push;
    # this world's fork follows no upstream: the sync that rebuilds the ledger says so
    assert (f"backout-{culprit[:12]} merged; meta/triton: no upstream configured (.github/forksync.yml upstream.url)"
            in [d.outcome for d in w.bot.deliveries("done") if d.event == "pull_request"])


async def test_a_second_series_regressed_by_the_same_culprit_keeps_its_open_backout(world):
    """One upstream commit usually slows several kernels: each regressed series bisects to it, and
    the back-out already open for it answers them all — no second revert pushed over forksync's
    branch (a push that git would refuse), no second PR."""
    w = world
    culprit, ev, branch, ctx, mirror, first = await first_backout(w)
    tip = remote_tip(w, branch)
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)

    other = dataclasses.replace(ev, title="L2 regression on toy, another shape", command="bench --shape 2")
    again = await l2_service.open_backout(ctx, w.svc, "meta/triton", "main", mirror, other, issue=2)
    assert (again, remote_tip(w, branch)) == (first, tip)
    assert sync_store.branch_row(w.bot.store, "meta/triton", branch) == row
    prs = [p async for p in w.alice.getiter("/repos/meta/triton/pulls?state=all")]
    assert [p["number"] for p in prs if p["head"]["ref"] == branch] == [first]


async def test_a_persons_commits_on_a_closed_backout_are_kept_and_a_later_backout_opens(world):
    """A person pushed to the back-out's branch, then the PR was closed unmerged: their commits are
    kept under ``refs/forksync/closed/backout-<sha12>/<head12>`` (the PR says where) before the
    branch goes, as for a closed chain, so a later back-out of the same culprit can push the
    name again instead of being refused on a branch that is no longer forksync's."""
    w = world
    culprit, ev, branch, ctx, mirror, old = await first_backout(w)
    git(w.work, "fetch", "-q", "origin", f"{branch}:refs/remotes/origin/{branch}")
    git(w.work, "checkout", "-q", "-B", "mine", f"origin/{branch}")
    mine = commit_files(w.work, {"NOTES.md": "why the back-out is wrong\n"}, "A person's note on the back-out")
    git(w.work, "push", "-q", "origin", f"mine:refs/heads/{branch}")
    await w.alice.patch(f"/repos/meta/triton/pulls/{old}", data={"state": "closed"})
    await w.bot.settle()
    kept = f"refs/forksync/closed/backout-{culprit[:12]}/{mine[:12]}"
    assert (remote_tip(w, branch), git(w.work, "ls-remote", "origin", kept).split()[0]) == ("", mine)
    [note] = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{old}/comments")]
    assert f"`{kept}`" in note and f"git fetch origin {kept}" in note

    new = await l2_service.open_backout(ctx, w.svc, "meta/triton", "main", mirror, ev, issue=2)
    assert new != old and remote_tip(w, branch) == (await w.pr(new))["head"]["sha"]
    assert w.bot.deliveries("dead") == []


async def test_a_backout_whose_close_was_never_handled_is_ended_before_the_next_one(world):
    """The close of a back-out PR was never handled (its delivery lost): its row still says open
    and forksync's branch is still there, but GitHub says the PR is closed. The next back-out of
    the culprit ends that row first (as the close would have) and opens its own PR, instead of a
    push over the old branch that git refuses — which would fail every L2 pass after it."""
    w = world
    culprit, ev, branch, ctx, mirror, old = await first_backout(w)
    row, tip = sync_store.branch_row(w.bot.store, "meta/triton", branch), remote_tip(w, branch)
    await w.alice.patch(f"/repos/meta/triton/pulls/{old}", data={"state": "closed"})
    await w.bot.settle()
    sync_store.save_branch(w.bot.store, **row)              # as if that close had never been handled
    git(w.work, "fetch", "-q", "origin", tip)
    git(w.work, "push", "-q", "origin", f"{tip}:refs/heads/{branch}")

    other = dataclasses.replace(ev, title="L2 regression on toy, another shape", command="bench --shape 2")
    new = await l2_service.open_backout(ctx, w.svc, "meta/triton", "main", mirror, other, issue=2)
    new_pr = await w.pr(new)
    assert (new != old, new_pr["state"], remote_tip(w, branch)) == (True, "open", new_pr["head"]["sha"])
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert (row["state"], row["pr"], json.loads(row["earlier_prs"])) == ("backout", new, [old])


async def test_new_evidence_updates_the_open_regression_issue_and_keeps_a_persons_text(world):
    """A later investigation of the same regression (same title) brings new evidence: the open
    issue's evidence is rewritten in place — no second issue — and what a person wrote above and
    below forksync's section stays."""
    w = world
    culprit, ev = regressed(w)
    ctx = await tick_ctx(w)
    title = f"forksync: L2 regression -20.0% on toy — culprit {culprit[:12]}"
    number = await l2_service.file_regression(ctx.gh, "meta/triton", title, ev)
    filed = await w.alice.getitem(f"/repos/meta/triton/issues/{number}")
    assert "Test command: `bench`" in filed["body"]
    above, below = "Seen on the H200 nodes too. @carol\n\n", "\nWorkaround until the back-out lands: pin lib.py.\n"
    await w.alice.patch(f"/repos/meta/triton/issues/{number}", data={"body": above + filed["body"] + below})

    newer = dataclasses.replace(ev, command="bench --repeats 20", backout_error="the revert conflicts in lib.py")
    assert await l2_service.file_regression(ctx.gh, "meta/triton", title, newer) == number
    body = (await w.alice.getitem(f"/repos/meta/triton/issues/{number}"))["body"]
    assert body.startswith(above) and body.endswith(below)
    assert "Test command: `bench --repeats 20`" in body and "Test command: `bench`\n" not in body
    assert "the back-out PR could not be opened (the revert conflicts in lib.py); revert it by hand." in body
    issues = [i async for i in w.alice.getiter("/repos/meta/triton/issues?state=all") if "pull_request" not in i]
    assert [i["number"] for i in issues if i["title"] == title] == [number]
    # the same evidence again changes nothing on GitHub
    edits = len(w.fake.requests_for("issues/update"))
    assert await l2_service.file_regression(ctx.gh, "meta/triton", title, newer) == number
    assert len(w.fake.requests_for("issues/update")) == edits


async def test_a_regression_issue_filed_before_sections_is_rewritten_whole(world):
    """An open regression issue whose body has no forksync section (filed by an earlier version,
    forksync's text alone) gets the new evidence as its whole body, never the stale one beside it."""
    w = world
    culprit, ev = regressed(w)
    ctx = await tick_ctx(w)
    title = f"forksync: L2 regression -20.0% on toy — culprit {culprit[:12]}"
    old = await w.alice.post("/repos/meta/triton/issues", data={"title": title, "body": "## stale evidence\n"})
    assert await l2_service.file_regression(ctx.gh, "meta/triton", title, ev) == old["number"]
    body = (await w.alice.getitem(f"/repos/meta/triton/issues/{old['number']}"))["body"]
    assert "stale evidence" not in body and f"**Culprit:** `{culprit}`" in body


async def test_two_fork_refs_backing_out_one_culprit_each_get_their_own_branch(world):
    """A back-out branch is named per fork ref as a unit's sync branch is
    (:func:`bot.model.sync_branch`): the default branch keeps ``forksync/backout-<sha12>``, another
    fork ref (a release branch that took the same culprit) gets
    ``forksync/<fork ref>/backout-<sha12>``, so the two back-outs are two PRs, each into its own
    fork ref, and neither answers for the other."""
    w = world
    culprit, ev, branch, ctx, mirror, first = await first_backout(w)
    git(w.work, "push", "-q", "origin", "main-work:refs/heads/release/3.2.x")
    mirror = await w.svc.local.fetch("meta/triton")

    other = await l2_service.open_backout(ctx, w.svc, "meta/triton", "release/3.2.x", mirror, ev, issue=2)

    assert other != first
    pr, first_pr = await w.pr(other), await w.pr(first)
    release_branch = f"forksync/release/3.2.x/backout-{culprit[:12]}"
    assert (pr["head"]["ref"], pr["base"]["ref"]) == (release_branch, "release/3.2.x")
    assert (first_pr["head"]["ref"], first_pr["base"]["ref"], first_pr["state"]) == (branch, "main", "open")
    row = sync_store.branch_row(w.bot.store, "meta/triton", release_branch)
    assert (row["kind"], row["state"], row["unit_id"], row["pr"], row["base"], row["pushed_tip"]) == (
        "backout", "backout", f"backout-{culprit[:12]}", other, "release/3.2.x", pr["head"]["sha"])
    assert sync_store.branch_row(w.bot.store, "meta/triton", branch)["pr"] == first
    assert remote_tip(w, release_branch) == pr["head"]["sha"]
    assert sync_prs.foreign_reason(w.bot.store, "meta/triton", pr, bot_login=None, fork_ref="release/3.2.x") == ""


async def test_a_backout_open_under_the_default_branchs_name_answers_for_its_fork_ref_once_the_default_moves(world):
    """A back-out's name depends on which branch GitHub calls the default when it is opened: one
    opened for ``release/3.2.x`` while that was the default (or before names carried the fork ref)
    is ``forksync/backout-<sha12>``. Once the default is another branch, the same culprit slowing
    another series of ``release/3.2.x`` is answered by that open back-out (its row: kind
    ``backout``, base ``release/3.2.x``), never by a second PR reverting it into the same branch."""
    w = world
    culprit, ev = regressed(w)
    ctx = await tick_ctx(w)
    git(w.work, "push", "-q", "origin", "main-work:refs/heads/release/3.2.x")
    mirror = await w.svc.local.fetch("meta/triton")
    w.fork.default_branch = "release/3.2.x"
    first = await l2_service.open_backout(ctx, w.svc, "meta/triton", "release/3.2.x", mirror, ev, issue=1)
    assert (await w.pr(first))["head"]["ref"] == f"forksync/backout-{culprit[:12]}"
    w.fork.default_branch = "main"

    again = await l2_service.open_backout(ctx, w.svc, "meta/triton", "release/3.2.x", mirror, ev, issue=2)

    assert again == first
    opened = [r for r in sync_store.all_branches(w.bot.store, "meta/triton") if r["kind"] == "backout"]
    assert [(r["branch"], r["base"], r["pr"]) for r in opened] == [
        (f"forksync/backout-{culprit[:12]}", "release/3.2.x", first)]


async def test_a_backout_into_another_fork_ref_never_answers_for_this_one_when_the_names_meet(world):
    """The name ``forksync/backout-<sha12>`` is the default branch's at the time it is read: once
    GitHub's default moves from ``main`` to ``release/3.2.x`` (or GitHub's answer names no default),
    ``release/3.2.x``'s back-out of a culprit gets the name under which ``main``'s back-out of it is
    still open. That PR reverts it into ``main``, not ``release/3.2.x``: the regression on
    ``release/3.2.x`` gets a back-out of its own, never the other fork ref's PR."""
    w = world
    culprit, ev, branch, ctx, mirror, first = await first_backout(w)
    git(w.work, "push", "-q", "origin", "main-work:refs/heads/release/3.2.x")
    mirror = await w.svc.local.fetch("meta/triton")
    w.fork.default_branch = "release/3.2.x"

    other = await l2_service.open_backout(ctx, w.svc, "meta/triton", "release/3.2.x", mirror, ev, issue=2)

    assert other != first
    assert (await w.pr(other))["base"]["ref"] == "release/3.2.x"
    assert ((await w.pr(first))["base"]["ref"], (await w.pr(first))["state"]) == ("main", "open")


async def test_a_backout_recorded_before_bases_were_kept_still_answers_for_its_trunk(world):
    """A back-out row written before ``sync_branches`` kept the unit's base (``base`` "" or NULL)
    is the fork's own back-out into the branch it syncs (``bot.sync.prs.unit_base``): the same
    culprit slowing another series is answered by its open PR, never by a second PR pushed under
    ``forksync/main/backout-<sha12>`` reverting it into ``main`` again."""
    w = world
    culprit, ev, branch, ctx, mirror, first = await first_backout(w)
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    with w.bot.store.lock:
        w.bot.store.db["sync_branches"].update(row["key"], {"base": ""})

    other = dataclasses.replace(ev, title="L2 regression on toy, another shape", command="bench --shape 2")
    again = await l2_service.open_backout(ctx, w.svc, "meta/triton", "main", mirror, other, issue=2)

    assert again == first
    prs = [p async for p in w.alice.getiter("/repos/meta/triton/pulls?state=open")]
    assert [p["head"]["ref"] for p in prs if p["base"]["ref"] == "main"] == [branch]
