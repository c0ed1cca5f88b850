"""A dead letter an operator dismisses (``forksync queue --dismiss ID``, another process: it
cannot reach GitHub) leaves its fork's status issue at the worker's next turn, on the local
GitHub with the real bot, the real store and the real CLI: the status issue is rendered again by
nothing else until the next sync, which may be hours away on a quiet upstream. A turn whose edit
GitHub failed does not spend the dismissal (a later turn takes it), and a fork whose status issue
a person closed gets no new one for it (as the poller's hourly render opens none)."""
from __future__ import annotations

import copy
import time

from bot.app import queue as q
from bot.app.worker import DISMISSAL_RETRY_S
from bot.cli.main import main
from tests.support.e2e import install_on_fork, status_issue

ALARM = "webhook delivery for this fork failed for good** (dead-lettered)"


async def a_dead_comment(world) -> tuple[dict, q.Delivery]:
    """alice's comment on the status issue, delivered again without ``comment.id``: dead-lettered.
    Returns ``(the status issue, the dead letter)``."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    [issue] = await status_issue(alice)
    await alice.post(f"/repos/meta/triton/issues/{issue['number']}/comments", data={"body": "thanks"})
    await bot.settle()
    [sent] = fake.webhooks.of("issue_comment", "created")
    payload = copy.deepcopy(sent.payload)
    del payload["comment"]["id"]
    await fake.webhooks.deliver("issue_comment", payload, validate=False)
    await bot.settle()
    [dead] = bot.deliveries("dead")
    return issue, dead


def dismiss(bot, monkeypatch, capsys, key: str, *reason: str) -> None:
    monkeypatch.setenv("LOGNAME", "ops-ana")
    assert main(["queue", "--db", bot.settings.db, "--dismiss", key, *reason]) == 0
    capsys.readouterr()


async def test_a_dismissed_dead_letter_leaves_the_status_issue_at_the_workers_next_turn(world, monkeypatch, capsys):
    fake, bot, alice, *_ = world
    _, dead = await a_dead_comment(world)
    [issue] = await status_issue(alice)
    assert ALARM in issue["body"] and f"- `{dead.id}` issue_comment.created" in issue["body"], issue["body"]
    dismiss(bot, monkeypatch, capsys, dead.id, "--reason", "sent without comment.id")
    await bot.settle()
    [issue] = await status_issue(alice)
    assert ALARM not in issue["body"] and dead.id not in issue["body"], issue["body"]
    assert q.get(bot.store, dead.id).state == "dismissed"


async def test_a_dismissal_whose_status_issue_edit_failed_is_taken_off_at_a_later_turn(world, monkeypatch, capsys):
    fake, bot, alice, *_ = world
    issue, dead = await a_dead_comment(world)
    dismiss(bot, monkeypatch, capsys, dead.id)
    fake.faults.server_error(f"/repos/meta/triton/issues/{issue['number']}", "PATCH", status=502, times=1000)
    await bot.settle()
    [issue] = await status_issue(alice)
    assert dead.id in issue["body"], "not the case under test: the edit went through"
    # GitHub answers again: a later turn of the worker takes the letter off
    fake.faults.clear()
    # the worker waits before trying again after a failed turn (DISMISSAL_RETRY_S): its clock moves past that
    later = time.time() + DISMISSAL_RETRY_S[0] + 1
    bot.worker.clock = lambda: later
    await bot.settle()
    [issue] = await status_issue(alice)
    assert ALARM not in issue["body"] and dead.id not in issue["body"], issue["body"]
    assert q.get(bot.store, dead.id).state == "dismissed"


async def test_a_dismissal_opens_no_status_issue_on_a_fork_whose_issue_a_person_closed(world, monkeypatch, capsys):
    fake, bot, alice, *_ = world
    issue, dead = await a_dead_comment(world)
    await alice.patch(f"/repos/meta/triton/issues/{issue['number']}", data={"state": "closed"})
    await bot.settle()
    assert await status_issue(alice) == [], "not the case under test: the closed issue was opened again"
    dismiss(bot, monkeypatch, capsys, dead.id)
    await bot.settle()
    assert q.get(bot.store, dead.id).state == "dismissed"
    assert await status_issue(alice) == []
