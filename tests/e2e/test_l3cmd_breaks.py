"""Breaking PR comment commands and L3 with owner sign-off the way reviewers use them on a sync PR:
sign-offs taken back, comments edited by someone else before the author's delivery arrived,
L3 asked for on a head the writer never saw, commands in places forksync never reads."""
import copy
import time

import pytest

from bot.app import schedules
from bot.validation import signoff
from tests.support.github import FAST_RETRY
from tests.support.validation_world import L3_CONFIG, close_world, fork_files, gate_failing, make_world, tick_ctx


@pytest.fixture
async def world(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path)
    yield w
    await close_world(w)


@pytest.fixture
async def l3_world(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path, files=fork_files(config=L3_CONFIG))
    yield w
    await close_world(w)


async def say(w, who: str, number: int, body: str) -> dict:
    c = await w.people[who].post(f"/repos/meta/triton/issues/{number}/comments", data={"body": body})
    await w.bot.settle()
    return c


async def replies_on(w, number: int) -> list[str]:
    return [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{number}/comments")
            if c["user"]["login"] == "forksync[bot]"]


async def llvm_pr_signed_off(w, branch: str = "forksync/bundle-llvm") -> tuple[dict, str, dict]:
    """A sync PR touching ``llvm`` (requires_l3, owner carol), L1 green, carol's sign-off recorded
    and counted by the gate; only carol's approval is missing. ``(pr, head, sign-off comment)``."""
    head = w.push_branch(branch, {"llvm/pin.txt": "llvm 21\n"}, "Bump the LLVM pin")
    pr = await w.open_pr(branch)
    await w.bot.settle()
    assert w.run_of(head, "forksync/L1/unit").conclusion == "success"
    c = await say(w, "carol", pr["number"], "/forksync signoff llvm")
    assert [s.by for s in signoff.signoffs_for(w.bot.store, "meta/triton", pr["number"])] == ["carol"]
    assert gate_failing(w, head) == ["approval-missing"]
    return pr, head, c


async def test_a_signoff_struck_out_by_its_owner_no_longer_counts(world):
    """carol signs off ``llvm``, then finds a problem and edits her comment to take it back
    (``~~/forksync signoff llvm~~ not yet: …``). What she sees: nothing answers the edit, the
    gate keeps saying "L3 sign-off by carol", and her approval of the code review merges the PR
    with the sign-off she withdrew. She should see the sign-off withdrawn (a reply, and the gate
    blocking on ``l3-signoff-missing``): an edit that removes a command line takes it back, or
    forksync says it cannot."""
    w = world
    pr, head, c = await llvm_pr_signed_off(w)
    await w.people["carol"].patch(f"/repos/meta/triton/issues/comments/{c['id']}",
                                  data={"body": "~~/forksync signoff llvm~~\n\nnot yet: the AMD perf numbers regressed"})
    await w.bot.settle()
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert (await w.pr(pr["number"]))["merged"] is False
    assert gate_failing(w, head) == ["l3-signoff-missing"]


async def test_a_signoff_whose_comment_was_deleted_no_longer_counts(world):
    """carol signs off ``llvm`` and then deletes the comment (GitHub's only other way to take a
    comment back; there is no ``/forksync`` verb to withdraw a sign-off). GitHub sends
    ``issue_comment.deleted``; forksync ignores it, and the deleted sign-off goes on counting:
    carol's approval merges the PR. She should see the gate blocking on ``l3-signoff-missing``
    (the sign-off gone with its comment)."""
    w = world
    pr, head, c = await llvm_pr_signed_off(w)
    await w.people["carol"].delete(f"/repos/meta/triton/issues/comments/{c['id']}")
    # the local GitHub does not emit ``deleted``: send what GitHub sends, from the created event
    [created] = [d for d in w.fake.webhooks.of("issue_comment", "created")
                 if d.payload["comment"]["id"] == c["id"]]
    payload = copy.deepcopy(created.payload)
    payload["action"] = "deleted"
    await w.fake.webhooks.deliver("issue_comment", payload, validate=False)
    await w.bot.settle()
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert (await w.pr(pr["number"]))["merged"] is False
    assert gate_failing(w, head) == ["l3-signoff-missing"]


async def test_an_owners_signoff_is_not_lost_when_a_writer_edits_her_comment_before_its_delivery(world):
    """carol writes ``/forksync signoff llvm``; alice (a writer) fixes a typo elsewhere in carol's
    comment right away. GitHub does not deliver in order: the ``edited`` event (sender alice)
    reaches forksync before the ``created`` one. forksync refuses the sign-off as "written into
    another person's comment" — it was carol's own line, in ``changes.body.from`` — records the
    line as run, and then skips carol's own ``created`` delivery as "already ran": her sign-off is
    lost and the reply blames alice for writing it. carol's sign-off should be recorded (her line
    was in the comment before alice's edit), with no refusal."""
    w = world
    w.push_branch("forksync/bundle-llvm", {"llvm/pin.txt": "llvm 21\n"}, "Bump the LLVM pin")
    pr = await w.open_pr("forksync/bundle-llvm")
    await w.bot.settle()
    w.fake.webhooks.auto_deliver = False
    c = await w.people["carol"].post(f"/repos/meta/triton/issues/{pr['number']}/comments",
                                     data={"body": "LGTM teh L3 numbers\n\n/forksync signoff llvm"})
    await w.alice.patch(f"/repos/meta/triton/issues/comments/{c['id']}",
                        data={"body": "LGTM the L3 numbers\n\n/forksync signoff llvm"})
    w.fake.webhooks.auto_deliver = True
    await w.fake.webhooks.flush(order="reverse")        # the edit's event first, then the creation's
    await w.bot.settle()
    assert [s.by for s in signoff.signoffs_for(w.bot.store, "meta/triton", pr["number"])] == ["carol"]
    replies = await replies_on(w, pr["number"])
    assert not any("was refused" in r for r in replies), replies
    assert any("@carol `/forksync signoff llvm`: sign-off of `llvm` recorded" in r for r in replies), replies


async def test_l3_asked_before_a_non_collaborators_push_does_not_run_the_new_head(l3_world):
    """A writer's ``/forksync l3 heavy`` on an outside contributor's PR authorises the heavy run of
    the head the writer looked at. The contributor pushes right after the comment; GitHub delivers
    the push first. forksync queues L3 on the head the PR has when it reads the comment, and the
    L3 tick runs that never-reviewed code on the GPU runner (``/forksync retest`` refuses exactly
    this race). The new head should not run: the reply should say the request does not cover a
    head pushed after it was written."""
    w = l3_world
    w.fake.add_collaborator(w.fork, "erin", "write")
    w.fake.add_token("erin-token", "erin")
    from bot.github.client import token_client
    erin = token_client(w.bot._people_session, "erin-token", base_url=w.fake.url, retry=FAST_RETRY)
    head = w.push_branch("forksync/bundle-erin", {"NOTES.md": "e\n"}, "Erin's note")
    w.fake.webhooks.auto_deliver = False
    pr = await erin.post("/repos/meta/triton/pulls", data={"title": "x", "head": "forksync/bundle-erin", "base": "main"})
    w.fake.state.repo("meta", "triton").collaborators.pop("erin")      # erin is no collaborator
    w.fake.webhooks.auto_deliver = True
    await w.fake.webhooks.flush()
    await w.bot.settle()
    assert gate_failing(w, head)[:1] == ["awaiting-retest"]
    w.fake.webhooks.auto_deliver = False
    await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync l3 heavy"})
    w.svc.now = lambda: time.time() + 2          # the push comes a little later (GitHub stamps to the second)
    pushed = w.push_branch("forksync/bundle-erin", {"NOTES.md": "e, and what alice never saw\n"}, "More",
                           base="forksync/bundle-erin")
    await w.fake.refresh()
    w.fake.webhooks.auto_deliver = True
    await w.fake.webhooks.flush(order="reverse")      # the push's events first, then the comment
    await w.bot.settle()
    await schedules.l3_tick(await tick_ctx(w), "meta/triton")
    assert w.run_of(pushed, "forksync/L3/heavy") is None              # nothing ran on the GPU runner
    assert [r.head_sha for r in signoff.l3_runs_for(w.bot.store, "meta/triton", pr["number"])
            if r.status != "cancelled"] != [pushed]


async def test_a_signoff_in_an_approving_reviews_body_is_not_silently_dropped(world):
    """carol approves the PR with the review body ``/forksync signoff llvm`` — where reviewers
    naturally write it. forksync reads commands only from conversation comments: the review's
    body is dropped without a word, and the gate keeps asking her for ``/forksync signoff llvm``
    as if she had never written it. She should get either the sign-off recorded or one reply
    saying the command was not read there and where to write it."""
    w = world
    head = w.push_branch("forksync/bundle-llvm", {"llvm/pin.txt": "llvm 21\n"}, "Bump the LLVM pin")
    pr = await w.open_pr("forksync/bundle-llvm")
    await w.bot.settle()
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews",
                                 data={"event": "APPROVE", "body": "/forksync signoff llvm"})
    await w.bot.settle()
    recorded = [s.by for s in signoff.signoffs_for(w.bot.store, "meta/triton", pr["number"])]
    answered = [r for r in await replies_on(w, pr["number"]) if "/forksync signoff llvm" in r]
    assert recorded == ["carol"] or answered, (recorded, answered, gate_failing(w, head))


async def test_an_l3_run_whose_tick_failed_midway_is_not_left_running_forever(l3_world):
    """``/forksync l3 heavy`` is queued; the L3 tick claims it (status ``running``) and GitHub
    answers 502 while the tick creates its check run. The tick fails once, the next tick has
    nothing to claim and clears the failing job: the request stays ``running`` for ever — no run,
    no reply, and the gate shows ``l3-pending`` ("running") on the PR indefinitely. The next tick
    should run it (or answer on the PR that it could not)."""
    w = l3_world
    head = w.push_branch("forksync/chain-amd-l3", {"amd/k.txt": "k\n"}, "Touch amd")
    pr = await w.open_pr("forksync/chain-amd-l3")
    await w.bot.settle()
    await say(w, "alice", pr["number"], "/forksync l3 heavy")
    w.fake.faults.server_error("/repos/meta/triton/check-runs", method="POST", times=20)
    with pytest.raises(Exception):
        await schedules.l3_tick(await tick_ctx(w), "meta/triton")
    w.fake.faults.clear()
    # the next ticks: nothing recovers it (collect sees no result row, l3 nothing queued)
    await schedules.collect_tick(await tick_ctx(w), "meta/triton", now=time.time() + 2 * 86400)
    await schedules.l3_tick(await tick_ctx(w), "meta/triton")
    [run] = signoff.l3_runs_for(w.bot.store, "meta/triton", pr["number"])
    answered = [r for r in await replies_on(w, pr["number"]) if "**L3 `heavy`**" in r]
    assert run.status != "running" or answered, (run, gate_failing(w, head))


IDS_TEST = '''\
import pytest


@pytest.mark.parametrize("op", ["<!--", "@meta/oncall"])
def test_op(op):
    assert op == "never"
'''


async def test_the_l3_reply_shows_test_ids_inert(l3_world):
    """The L3 reply lists the failing tests by id, and ids come from the PR's code (an upstream
    ``parametrize`` value such as ``<!--`` or ``@meta/oncall``). They go into the PR comment raw:
    ``test_op[<!--]`` opens an HTML comment that hides the rest of the reply on GitHub (the check
    run link and the sign-off instructions), and ``test_op[@meta/oncall]`` pings that team from
    forksync's comment. Text from git must pass through ``bot.templating.inert`` (docs/github.md,
    Commands) like every other such text in a reply."""
    w = l3_world
    w.push_branch("forksync/chain-amd-ids", {"amd/k.txt": "k\n", "tests_fork/test_ids.py": IDS_TEST}, "Touch amd")
    pr = await w.open_pr("forksync/chain-amd-ids")
    await w.bot.settle()
    await say(w, "alice", pr["number"], "/forksync l3 heavy")
    await schedules.l3_tick(await tick_ctx(w), "meta/triton")
    [reply] = [r for r in await replies_on(w, pr["number"]) if "**L3 `heavy`**" in r]
    assert "test_op[" in reply, reply
    body = reply.split("-->", 1)[1]                 # after forksync's own hidden marker
    assert "<!--" not in body and "@meta/oncall" not in body, body


async def test_an_l3_request_for_a_suite_renamed_on_main_does_not_block_the_pr_for_ever(l3_world):
    """alice asks ``/forksync l3 heavy``; before it runs, the fork renames the L3 suite to
    ``heavy-v2`` in a valid ``.github/forksync.yml`` on main. The tick answers that ``heavy`` is
    gone ("fix the configuration, then ask again with ``/forksync l3 heavy``") — but asking again
    is refused ("no L3 suite named ``heavy``"). alice runs ``heavy-v2`` instead: green on the head,
    the owner approves, and the PR still never merges: the gate keeps demanding a ``heavy`` run
    that no configuration can give (``l3-failed``/``l3-stale`` for ever). A request for a suite
    the trusted configuration no longer has should stop blocking once it has been answered."""
    w = l3_world
    w.push_branch("forksync/bundle-amd-l3", {"amd/k.txt": "k\n"}, "Touch amd")
    pr = await w.open_pr("forksync/bundle-amd-l3")
    await w.bot.settle()
    await say(w, "alice", pr["number"], "/forksync l3 heavy")
    w.push_main({".github/forksync.yml": L3_CONFIG.replace("name: heavy", "name: heavy-v2")}, "Rename the L3 suite")
    await w.bot.settle()                                  # the base moved: forksync merges it into the branch
    await schedules.l3_tick(await tick_ctx(w), "meta/triton")
    head = (await w.pr(pr["number"]))["head"]["sha"]
    await say(w, "alice", pr["number"], "/forksync l3 heavy")
    assert any("`/forksync l3 heavy`: not queued: no L3 suite named `heavy`" in r
               for r in await replies_on(w, pr["number"]))
    await say(w, "alice", pr["number"], "/forksync l3 heavy-v2")
    await schedules.l3_tick(await tick_ctx(w), "meta/triton")
    assert w.run_of(head, "forksync/L3/heavy-v2").conclusion == "success"
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert gate_failing(w, head) == []
    assert (await w.pr(pr["number"]))["merged"] is True


async def test_a_signoff_written_before_the_l3_result_existed_does_not_cover_it(fake_github, tmp_path):
    """The L3 reply asks owners to sign off "once they have read it". carol signs off ``llvm``
    while the ``/forksync l3 heavy`` she is waiting for is still queued — there is no result to
    read yet. The run then reports, and her earlier sign-off covers it: with her approval the PR
    merges on an L3 result no owner ever looked at. A sign-off written before the L3 result on
    the head it signs off should not count for it (the gate should ask for it again, saying why)."""
    w = await make_world(fake_github, tmp_path, files=fork_files(config=L3_CONFIG))
    try:
        head = w.push_branch("forksync/bundle-llvm", {"llvm/pin.txt": "llvm 21\n"}, "Bump the LLVM pin")
        pr = await w.open_pr("forksync/bundle-llvm")
        await w.bot.settle()
        await say(w, "alice", pr["number"], "/forksync l3 heavy")
        await say(w, "carol", pr["number"], "/forksync signoff llvm")
        await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
        await w.bot.settle()
        assert gate_failing(w, head) == ["l3-pending"]
        w.svc.now = lambda: time.time() + 5              # the heavy run takes a while
        await schedules.l3_tick(await tick_ctx(w), "meta/triton")
        await w.bot.settle()
        assert w.run_of(head, "forksync/L3/heavy").conclusion == "success"
        assert (await w.pr(pr["number"]))["merged"] is False
        assert gate_failing(w, head) == ["l3-signoff-missing"]
    finally:
        await close_world(w)
