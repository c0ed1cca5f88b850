"""A dismissed dead letter leaves its fork's status issue at the worker's turn even when GitHub
fails that turn's edit of the issue: the dismissal is not spent on a render that never reached
GitHub, or the letter stays listed until the fork's next sync (hours on a quiet upstream), which
is what taking dismissals at the worker's turn is for. On the local GitHub with the real bot, the
real store and the real CLI."""
from __future__ import annotations

import copy
import time

from bot.app import queue as q
from bot.app.worker import DISMISSAL_RETRY_S
from bot.cli.main import main
from tests.support.e2e import install_on_fork, status_issue

ALARM = "webhook delivery for this fork failed for good** (dead-lettered)"


async def test_a_dismissal_whose_status_issue_edit_failed_is_taken_off_at_a_later_turn(world, monkeypatch, capsys):
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
    monkeypatch.setenv("LOGNAME", "ops-ana")
    assert main(["queue", "--db", bot.settings.db, "--dismiss", dead.id]) == 0
    capsys.readouterr()
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
