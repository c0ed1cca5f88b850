"""Breaking webhook ingress and PR comment commands the way GitHub really delivers them: a command
taken back before its own delivery came, accounts GitHub shows as ghosts, reviews edited after
they were submitted, line comments on a diff, and commands on repositories forksync does not sync."""
import copy
import time

import pytest

from bot.app import queue as q
from bot.config.app_manifest import default_events
from bot.sync import store as sync_store
from bot.validation import signoff
from tests.support.github import make_source_repo
from tests.support.validation_world import approved_and_held, close_world, gate_failing, make_world


@pytest.fixture
async def world(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path)
    yield w
    await close_world(w)


async def replies_on(w, number: int) -> list[str]:
    return [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{number}/comments")
            if c["user"]["login"] == "forksync[bot]"]


async def tracking_issue(w) -> int:
    issue = await w.alice.post("/repos/meta/triton/issues", data={"title": "tracking", "body": "x"})
    await w.bot.settle()
    return issue["number"]


def held(w) -> bool:
    st = sync_store.load_status(w.bot.store, "meta/triton")
    return bool(st and st.held)


def created_payload(w, comment_id: int) -> dict:
    [created] = [d for d in w.fake.webhooks.of("issue_comment", "created")
                 if d.payload["comment"]["id"] == comment_id]
    return copy.deepcopy(created.payload)


async def test_a_hold_edited_out_before_its_delivery_came_does_not_run(world):
    """alice writes ``/forksync hold`` by mistake and at once edits the comment to "never mind".
    GitHub does not deliver in order: the ``edited`` event comes first, then the ``created`` one.
    What she sees: the fork goes on hold and forksync answers "on hold", a command she had
    already taken back when forksync first heard of the comment. She should see nothing run: the
    edit took the line out before it ran (as a sign-off taken back before its delivery is)."""
    w = world
    n = await tracking_issue(w)
    w.fake.webhooks.auto_deliver = False
    c = await w.alice.post(f"/repos/meta/triton/issues/{n}/comments", data={"body": "/forksync hold"})
    await w.alice.patch(f"/repos/meta/triton/issues/comments/{c['id']}", data={"body": "never mind"})
    w.fake.webhooks.auto_deliver = True
    await w.fake.webhooks.flush(order="reverse")        # the edit's event first, then the creation's
    await w.bot.settle()
    assert not held(w)
    assert not any("on hold" in r for r in await replies_on(w, n)), await replies_on(w, n)


@pytest.mark.parametrize("order", [[1, 0, 2], [2, 1, 0], [1, 2, 0], [0, 1, 2]])
async def test_a_hold_edited_out_and_then_typed_again_runs_once(world, order):
    """alice writes ``/forksync hold``, edits it out ("never mind"), then changes her mind and
    types it again in the same comment. GitHub delivers the three events in any order. What she
    sees when the removal is handled before the creation: the line recorded withdrawn, and the
    retyped command answered with nothing, the fork never held — what she wrote last is ignored.
    She should see it run once, whatever the order: the fork held, one "on hold" reply."""
    w = world
    n = await tracking_issue(w)
    t0 = time.time()
    w.fake.webhooks.auto_deliver = False
    w.fake.state.clock = lambda: t0
    c = await w.alice.post(f"/repos/meta/triton/issues/{n}/comments", data={"body": "/forksync hold"})
    w.fake.state.clock = lambda: t0 + 5
    await w.alice.patch(f"/repos/meta/triton/issues/comments/{c['id']}", data={"body": "never mind"})
    w.fake.state.clock = lambda: t0 + 10
    await w.alice.patch(f"/repos/meta/triton/issues/comments/{c['id']}", data={"body": "/forksync hold"})
    w.fake.state.clock = time.time
    held_back, w.fake.webhooks.held = w.fake.webhooks.held, []
    assert [(d.event, d.action) for d in held_back] == [("issue_comment", a) for a in ("created", "edited", "edited")]
    w.fake.webhooks.auto_deliver = True
    for i in order:
        await w.fake.webhooks.send(held_back[i])
        await w.bot.settle()
    assert held(w)
    assert [r for r in await replies_on(w, n) if "on hold" in r] != []
    assert len([r for r in await replies_on(w, n) if "/forksync hold" in r]) == 1, await replies_on(w, n)
    # the retyping's event again, under a new delivery id: it runs nothing
    await w.fake.webhooks.deliver("issue_comment", copy.deepcopy(held_back[2].payload), validate=False)
    await w.bot.settle()
    assert len([r for r in await replies_on(w, n) if "/forksync hold" in r]) == 1, await replies_on(w, n)


async def test_an_unhold_whose_comment_was_deleted_before_its_redelivery_does_not_run(world):
    """The fork is held; carol's approved amd PR waits on the hold. carol writes ``/forksync
    unhold`` while GitHub answers the permission lookup 502: forksync says it will retry, and after
    its attempts the delivery is a dead letter. carol changes her mind (the AMD release is not
    out) and deletes the comment (``issue_comment.deleted`` arrives). Then the operator, clearing
    the alarm, presses "Redeliver" on the dead delivery in the App's settings. What carol sees:
    the hold lifted by her deleted command, and the PR merged. She should see the fork still held:
    a command whose comment was deleted before it ran never runs, however late its delivery comes."""
    w = world
    pr, head, issue = await approved_and_held(w)
    w.fake.faults.server_error("/repos/meta/triton/collaborators/carol/permission", status=502, times=100)
    c = await w.people["carol"].post(f"/repos/meta/triton/issues/{issue}/comments", data={"body": "/forksync unhold"})
    await w.bot.settle()
    [dead] = w.bot.deliveries("dead")
    w.fake.faults.clear()
    await w.people["carol"].delete(f"/repos/meta/triton/issues/comments/{c['id']}")
    payload = created_payload(w, c["id"])
    payload["action"] = "deleted"
    await w.fake.webhooks.deliver("issue_comment", payload, validate=False)
    await w.bot.settle()
    await w.fake.webhooks.redeliver(dead.delivery_id)
    await w.bot.settle()
    assert held(w)
    assert (await w.pr(pr["number"]))["merged"] is False
    assert [d.state for d in w.bot.deliveries() if d.delivery_id == dead.delivery_id] == ["done"]
    assert q.dead_letter_alarm(w.bot.store) == ""


async def test_a_command_deleted_while_the_worker_was_down_is_not_a_dead_letter(world):
    """The worker is down (a deploy); carol writes ``/forksync unhold`` and deletes it a minute
    later. GitHub's ``created`` and ``deleted`` deliveries wait in the queue and are handled in
    order when the worker is back. What the operator sees: the ``created`` one dead-lettered (the
    👀 on a comment that no longer exists is a 404), ``/healthz`` 503 and the status issue alarmed
    until someone deals with a delivery that can never succeed. They should see it handled:
    the command not run, its comment being gone, and nothing dead."""
    w = world
    pr, head, issue = await approved_and_held(w)
    w.fake.webhooks.auto_deliver = False
    c = await w.people["carol"].post(f"/repos/meta/triton/issues/{issue}/comments", data={"body": "/forksync unhold"})
    await w.people["carol"].delete(f"/repos/meta/triton/issues/comments/{c['id']}")
    w.fake.webhooks.auto_deliver = True
    await w.fake.webhooks.flush(order="fifo")
    payload = created_payload(w, c["id"])
    payload["action"] = "deleted"
    await w.fake.webhooks.deliver("issue_comment", payload, validate=False)
    await w.bot.settle()
    assert [(d.event, d.dead_reason) for d in w.bot.deliveries("dead")] == []
    assert held(w)
    assert (await w.pr(pr["number"]))["merged"] is False


@pytest.mark.parametrize("event", ["issue_comment.created", "issue_comment.deleted", "pull_request_review.submitted"])
async def test_a_ghost_accounts_comment_or_review_is_not_a_dead_letter(world, event):
    """A comment or review whose author's account was deleted: GitHub's schema gives its
    ``user`` as null (the ghost), a review's ``body`` may be null too. What the operator sees:
    the delivery dead-lettered as a "malformed payload", ``/healthz`` 503 and the status issue
    alarmed until someone retries it by hand — for a comment that holds no command. They should
    see it handled (nothing to run: no author to check), ``/healthz`` healthy."""
    w = world
    head = w.push_branch("forksync/bundle-amd", {"amd/x.txt": "2\n"}, "AMD: x")
    pr = await w.open_pr("forksync/bundle-amd")
    await w.bot.settle()
    c = await w.people["carol"].post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "thanks!"})
    await w.bot.settle()
    name, action = event.split(".")
    if name == "issue_comment":
        payload = created_payload(w, c["id"])
        payload["comment"]["user"] = None
    else:
        await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
        await w.bot.settle()
        [sub] = [d for d in w.fake.webhooks.of("pull_request_review", "submitted")]
        payload = copy.deepcopy(sub.payload)
        payload["review"]["user"] = None
        payload["review"]["body"] = None
    payload["action"] = action
    payload["sender"] = {**payload["sender"], "login": "ghost", "id": 10137}
    await w.fake.webhooks.deliver(name, payload, validate=False)
    await w.bot.settle()
    assert [(d.event, d.dead_reason) for d in w.bot.deliveries("dead")] == []
    assert q.dead_letter_alarm(w.bot.store) == ""       # what /healthz and the status issue read
    assert w.run_of(head, "forksync/L1/unit").conclusion == "success"


async def test_a_signoff_edited_out_of_a_review_no_longer_counts(world):
    """carol approves the llvm sync PR with the review body ``/forksync signoff llvm``; forksync
    records the sign-off. She then finds a regression and edits the review's text (GitHub:
    "Edit" on the review; ``pull_request_review.edited`` with ``changes.body.from``) to "not yet:
    the AMD numbers regressed". What she sees: nothing answers, the sign-off goes on counting and
    the gate keeps it. She should see it withdrawn, as when she edits it out of a comment."""
    w = world
    head = w.push_branch("forksync/bundle-llvm", {"llvm/pin.txt": "llvm 21\n"}, "Bump the LLVM pin")
    pr = await w.open_pr("forksync/bundle-llvm")
    await w.bot.settle()
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews",
                                 data={"event": "COMMENT", "body": "/forksync signoff llvm"})
    await w.bot.settle()
    assert [s.by for s in signoff.signoffs_for(w.bot.store, "meta/triton", pr["number"])] == ["carol"]
    [sub] = [d for d in w.fake.webhooks.of("pull_request_review", "submitted")]
    payload = copy.deepcopy(sub.payload)
    payload["action"] = "edited"
    payload["changes"] = {"body": {"from": payload["review"]["body"]}}
    payload["review"]["body"] = "not yet: the AMD numbers regressed"
    await w.fake.webhooks.deliver("pull_request_review", payload, validate=False)
    await w.bot.settle()
    assert list(signoff.signoffs_for(w.bot.store, "meta/triton", pr["number"])) == []
    assert "l3-signoff-missing" in gate_failing(w, head)
    assert any("withdrawn" in r for r in await replies_on(w, pr["number"]))


async def test_a_signoff_written_on_a_diff_line_is_not_silently_dropped(world):
    """carol reviews the llvm sync PR on the "Files changed" tab and writes ``/forksync signoff
    llvm`` as a comment on the pin's line — a review comment, GitHub's
    ``pull_request_review_comment`` event. What she sees: silence; the App does not even
    subscribe to that event, and forksync drops it when it comes. She should see the sign-off
    recorded (or one reply saying where to write it)."""
    w = world
    head = w.push_branch("forksync/bundle-llvm", {"llvm/pin.txt": "llvm 21\n"}, "Bump the LLVM pin")
    pr = await w.open_pr("forksync/bundle-llvm")
    await w.bot.settle()
    assert "pull_request_review_comment" in default_events(), "the App is not subscribed to review comments"
    [opened] = [d for d in w.fake.webhooks.of("pull_request", "opened")]
    carol = {**opened.payload["sender"], "login": "carol", "id": 4242}
    payload = {
        "action": "created",
        "comment": {"id": 900001, "pull_request_review_id": 800001, "user": carol, "body": "/forksync signoff llvm",
                    "path": "llvm/pin.txt", "line": 1, "commit_id": head, "original_commit_id": head,
                    "html_url": f"{w.fake.url}/meta/triton/pull/{pr['number']}#discussion_r900001",
                    "created_at": "2026-12-01T10:00:00Z", "updated_at": "2026-12-01T10:00:00Z",
                    "author_association": "COLLABORATOR"},
        "pull_request": copy.deepcopy(opened.payload["pull_request"]),
        "repository": opened.payload["repository"],
        "installation": opened.payload["installation"],
        "sender": carol,
    }
    await w.fake.webhooks.deliver("pull_request_review_comment", payload, validate=False)
    await w.bot.settle()
    recorded = [s.by for s in signoff.signoffs_for(w.bot.store, "meta/triton", pr["number"])]
    answered = [r for r in await replies_on(w, pr["number"]) if "/forksync signoff llvm" in r]
    assert recorded == ["carol"] or answered, (recorded, answered)


async def test_a_hold_on_a_repository_forksync_does_not_sync_changes_nothing_there(world, tmp_path):
    """The organisation installed the App on all its repositories. alice, a writer on
    ``meta/website`` (no ``.github/forksync.yml``: no fork to sync), pastes ``/forksync hold`` into
    an issue there. What she sees: forksync answers "on hold" for a repository it does not sync
    and opens a forksync status issue in the website's tracker. She should see one reply saying
    the repository is not one forksync syncs, and no status issue there."""
    w = world
    src = tmp_path / "site"
    make_source_repo(src, [{"README.md": "hi\n"}])
    site = w.fake.create_repo("meta/website", source=src)
    w.fake.add_collaborator(site, "alice", "write")
    issue = await w.alice.post("/repos/meta/website/issues", data={"title": "release", "body": "x"})
    await w.bot.settle()
    await w.alice.post(f"/repos/meta/website/issues/{issue['number']}/comments", data={"body": "/forksync hold"})
    await w.bot.settle()
    issues = [i["title"] async for i in w.alice.getiter("/repos/meta/website/issues?state=all")]
    assert issues == ["release"], issues
    st = sync_store.load_status(w.bot.store, "meta/website")
    assert not (st and st.held)
    replies = [c["body"] async for c in w.alice.getiter(f"/repos/meta/website/issues/{issue['number']}/comments")
               if c["user"]["login"] == "forksync[bot]"]
    assert len(replies) == 1 and "not" in replies[0] and "on hold" not in replies[0], replies
