"""The App's writes to GitHub when GitHub or people get in the way, end to end on the local
GitHub: a write GitHub applied but whose answer was lost (a 502 from the front end after the
change was made, which GitHub's own docs warn a retried POST can duplicate), and a person's push
racing a landing. Each test drives the real bot (webhooks, queue, worker, handlers) over HTTP."""
from __future__ import annotations

import json

import pytest

from bot.app import schedules
from bot.fakegithub.routing import HANDLERS, GitHubError
from bot.sync import store as sync_store
from tests.support.e2e import adopt_and_move_upstream, install_on_fork, move_upstream, open_sync_prs, status_issue
from tests.support.github import commit_files, git
from tests.support.sync_world import CONFIG as VALIDATED_CONFIG
from tests.support.sync_world import validated_world
from tests.support.validation_world import tick_ctx


def lost_answer(monkeypatch, operation: str, *, times: int = 1, status: int = 502) -> list[int]:
    """Make the local GitHub *apply* ``operation`` (its real handler runs: the PR is created, the
    issue opened, the merge made) and then answer ``status`` instead of the result, ``times``
    times — GitHub's front end timing out after the backend did the work. Returns a one-item list
    counting how many answers were lost."""
    real = HANDLERS[operation]
    lost = [0]

    async def applied_then_lost(ctx):
        reply = await real(ctx)
        if lost[0] < times:
            lost[0] += 1
            raise GitHubError(status, "Server Error")
        return reply

    monkeypatch.setitem(HANDLERS, operation, applied_then_lost)
    return lost


@pytest.fixture
async def validated(fake_github, tmp_path):
    async with validated_world(fake_github, tmp_path, VALIDATED_CONFIG) as w:
        yield w


async def test_a_status_issue_github_created_before_answering_502_is_not_opened_twice(world, monkeypatch):
    """GitHub creates the status issue but its front end answers 502; forksync's client retries
    the POST. What the maintainer sees: two open "forksync status" issues, one of which forksync
    never updates again (it edits only the first it finds) and which goes stale and misleading.
    What they should see: exactly one status issue (a create whose answer was lost is looked up,
    not repeated)."""
    fake, bot, alice, _up_src, _upstream, fork, inst = world
    lost = lost_answer(monkeypatch, "issues/create")
    await install_on_fork(fake, bot, fork, inst.id)
    await bot.settle()
    assert lost == [1]
    issues = await status_issue(alice)
    assert [i["title"] for i in issues] == ["forksync status"], [(i["number"], i["title"]) for i in issues]


async def test_a_sync_pr_github_created_before_answering_502_is_not_reported_refused(world, monkeypatch):
    """GitHub opens the bundle's PR but answers 502; the client's retry of the POST gets 422 "A
    pull request already exists for meta:forksync/bundle-…". What the maintainer sees: the unit
    marked blocked — "GitHub refused the pull request" on the status issue, *Syncing is degraded* —
    and the push delivery failed and retried, though GitHub refused nothing and the PR is open.
    What they should see: the PR found and recorded at once, no refusal, the delivery done."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    lost = lost_answer(monkeypatch, "pulls/create")
    c1, _c2 = move_upstream(up_src, upstream)
    await bot.settle()
    assert lost == [1]
    prs = await open_sync_prs(alice)
    assert len(prs) == 2                                        # never a duplicate PR (GitHub refuses one)
    refusals = [d for d in fake.webhooks.emitted if d.event == "issues"
                and "Syncing is degraded" in (json.loads(d.body)["issue"].get("body") or "")]
    assert refusals == [], "the status issue said a unit was refused: " + json.loads(refusals[0].body)["issue"]["body"][:400]
    [push] = [d for d in bot.deliveries() if d.event == "push" and d.repo == "triton-lang/triton"]
    assert (push.state, push.attempts) == ("done", 1), push.last_error
    bundle = sync_store.branch_row(bot.store, "meta/triton", f"forksync/bundle-{c1[:12]}")
    assert bundle["pr"] == prs[0]["number"]


async def test_a_merge_github_made_before_answering_502_is_landed_not_blocked(validated, monkeypatch):
    """The gate merges the green bundle; GitHub merges it but answers 502, and the client's retry
    of ``PUT merge`` gets 405 "Pull Request is not mergeable" (it is merged). What the maintainer
    sees: the merged PR gets a "GitHub refused the merge" comment, the unit stays *blocked* on the
    status issue, its branch is never deleted and the ledger never refreshed (GitHub's
    ``pull_request.closed`` for it has the bot as sender and is dropped by the loop guard). What
    they should see: the merge recognised (the PR *is* merged), the landing run — branch deleted,
    row merged, nothing blocked."""
    w, up_src, upstream = validated
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [bundle] = await open_sync_prs(w.alice)
    lost = lost_answer(monkeypatch, "pulls/merge")
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    await w.bot.settle()
    assert lost == [1]
    assert (await w.pr(bundle["number"]))["merged"] is True
    branch = f"forksync/bundle-{c1[:12]}"
    comments = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{bundle['number']}/comments")]
    assert not [c for c in comments if "refused the merge" in c], [c for c in comments if "refused the merge" in c][0]
    assert sync_store.blocked_branches(w.bot.store, "meta/triton") == []
    assert sync_store.branch_row(w.bot.store, "meta/triton", branch)["state"] == "merged"
    assert git(w.fork.path, "for-each-ref", f"refs/heads/{branch}") == ""          # the landing deleted it


async def test_a_persons_commit_pushed_to_a_sync_branch_after_its_merge_is_not_deleted_with_it(world):
    """alice merges the bundle PR (rebase) and, before forksync handled the ``closed`` event,
    pushes a follow-up commit to ``forksync/bundle-…`` (GitHub no longer moves a merged PR's
    head). What she sees: the landing deletes the branch and her commit is gone from the fork —
    no branch or ref holds it (an unmerged close keeps such a head under
    ``refs/forksync/closed/…``; an L2 back-out's branch that moved past its merge is left). What she
    should see: her commit kept on the fork (the branch left, or the head kept under a ref)."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, _c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, _chain = await open_sync_prs(alice)
    branch = bundle["head"]["ref"]
    await alice.put(f"/repos/meta/triton/pulls/{bundle['number']}/merge", data={"merge_method": "rebase"})
    clone = bot.tmp / "clone"
    git(bot.tmp, "clone", "-q", "-b", branch, str(fork.path), str(clone))
    mine = commit_files(clone, {"python/a.py": "a = 3  # follow-up\n"}, "follow-up to the bundle")
    git(clone, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
    await bot.settle()
    assert (await alice.getitem(f"/repos/meta/triton/pulls/{bundle['number']}"))["merged"] is True
    holders = git(fork.path, "for-each-ref", "--contains", mine, "--format=%(refname)")
    assert holders, f"alice's commit {mine[:12]} is on no ref of the fork any more"


async def test_a_sync_pr_a_person_closed_as_deferred_is_not_reopened_when_githubs_close_event_was_lost(world):
    """alice writes "defer: breaks our AMD build" on the chain PR and closes it; GitHub's
    ``pull_request.closed`` delivery never reaches forksync (GitHub does not redeliver a failed
    delivery by itself). On the next upstream push forksync opens a *new* PR for the very unit she
    closed, and her deferral is never recorded: the row still says the old PR is open, and nothing
    compares it with GitHub (which the docs call the truth for sync PRs). What she should see: the
    close noticed on the next sync (GitHub says the unit's PR is closed), her reason recorded
    (DEFERRED_BLOCKED), and no new PR for that commit."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    _c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    _bundle, chain = await open_sync_prs(alice)
    await alice.post(f"/repos/meta/triton/issues/{chain['number']}/comments", data={"body": "defer: breaks our AMD build"})
    await bot.settle()
    fake.webhooks.auto_deliver = False
    await alice.patch(f"/repos/meta/triton/pulls/{chain['number']}", data={"state": "closed"})
    await fake.refresh()
    assert [d.event for d in fake.webhooks.held] == ["pull_request"]
    fake.webhooks.held.clear()                              # the delivery was lost
    fake.webhooks.auto_deliver = True
    commit_files(up_src, {"python/b.py": "b = 2\n"}, "Add b (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    reopened = [p for p in await open_sync_prs(alice) if p["head"]["ref"] == chain["head"]["ref"]]
    assert reopened == [], f"forksync opened #{reopened[0]['number']} for the unit alice closed as deferred"
    st = sync_store.load_status(bot.store, "meta/triton")
    assert c2 in [d["sha"] for d in st.deferred]


async def test_a_rate_limited_merge_is_not_reported_as_githubs_refusal_of_the_unit(validated):
    """The gate merges the green bundle while the installation's rate limit is spent for the next
    hour (403, ``x-ratelimit-remaining: 0``: longer than the client waits). What the maintainer
    sees: a PR comment "forksync could not update this PR: GitHub refused the merge … 403 API rate
    limit exceeded", and the unit listed as *blocked* on the status issue (*Syncing is degraded*),
    as if a permission or branch protection refused it — a sync's refused PR or push, by contrast,
    leaves a rate limit to the retry. What they should see: no refusal recorded for the unit (the
    merge is simply tried again later), the rate limit named where the gate reports."""
    w, up_src, upstream = validated
    commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [bundle] = await open_sync_prs(w.alice)
    w.fake.faults.primary_limit("/repos/meta/triton/pulls/*/merge", "PUT", reset_in_s=3600)
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    await w.bot.settle()
    assert [f.status for f in w.fake.faults.fired] == [403]
    assert (await w.pr(bundle["number"]))["merged"] is False
    comments = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{bundle['number']}/comments")]
    refused = [c for c in comments if "GitHub refused the merge" in c]
    assert refused == [], refused[0]
    assert sync_store.blocked_branches(w.bot.store, "meta/triton") == []


async def test_a_sync_pr_a_person_closed_and_reopened_before_forksync_looked_stays_open(world):
    """alice closes the bundle PR by mistake and reopens it a moment later, while the worker is
    still busy (the ``closed`` delivery waits in the queue). When forksync handles ``closed`` it
    acts on the event's payload alone: it records "closed unmerged by @alice" for the unit's
    commits and deletes the branch — which makes GitHub close her reopened PR again — and the next
    sync opens a new PR for the same commits. What she should see: her reopened PR left open, its
    branch kept, no close recorded (the PR's state is read when the event is handled)."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, _chain = await open_sync_prs(alice)
    branch = bundle["head"]["ref"]
    fake.webhooks.auto_deliver = False
    await alice.patch(f"/repos/meta/triton/pulls/{bundle['number']}", data={"state": "closed"})
    await alice.patch(f"/repos/meta/triton/pulls/{bundle['number']}", data={"state": "open"})
    fake.webhooks.auto_deliver = True
    await fake.webhooks.flush("fifo")                     # closed, then reopened: in order, only late
    await bot.settle()
    pr = await alice.getitem(f"/repos/meta/triton/pulls/{bundle['number']}")
    assert pr["state"] == "open", "alice's reopened sync PR was closed again by forksync"
    assert git(fork.path, "for-each-ref", f"refs/heads/{branch}") != ""
    assert [p["number"] for p in await open_sync_prs(alice) if p["head"]["ref"] == branch] == [bundle["number"]]


async def test_a_stacked_chain_is_not_left_at_a_conflict_its_dependency_landing_removed(world):
    """Upstream changes the AMD file again (c3) while the chain carrying its earlier change (c2)
    is open: c3 goes into a chain stacked on it, "Lands after #3 … tested and merged once it has
    landed". forksync applies it on the fork's tip, which lacks c2, so its first pick stops at a
    conflict commit (``int x;`` vs ``int x = 2;`` vs ``int x = 3;``) and the PR is a draft asking
    a person to resolve it. Then alice merges #3. What she sees: the stacked chain still holds the
    ``[CONFLICT]`` commit and still asks for a resolution, though c3 now picks cleanly onto the
    fork (the conflict only existed because c2 had not landed), and its branch holds nothing but
    forksync's commits. What she should see: once the dependency landed, the stacked chain rebuilt
    on the new fork tip — c3 picked (``Upstream-Commit``), no conflict commit."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    _c1, _c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    _bundle, chain = await open_sync_prs(alice)
    c3 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 3;\n"}, "AMD: x3 (#104)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    [stacked] = [p for p in await open_sync_prs(alice) if p["head"]["ref"] == f"forksync/chain-{c3[:12]}"]
    assert f"**Lands after** #{chain['number']}" in stacked["body"]
    await alice.put(f"/repos/meta/triton/pulls/{chain['number']}/merge", data={"merge_method": "rebase"})
    await bot.settle()
    assert bot.deliveries("dead") == []
    branch = f"refs/heads/forksync/chain-{c3[:12]}"
    log = git(fork.path, "log", "--format=%B%x00", f"refs/heads/main..{branch}")
    assert "Forksync-Conflict:" not in log, log
    assert f"Upstream-Commit: {c3}" in log, log
