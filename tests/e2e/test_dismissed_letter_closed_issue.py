"""A dismissal takes a dead letter off its fork's status issue where there is one: it has nothing
to say on a fork whose status issue a person closed, so the worker's turn that takes it opens no
new one (as the poller's hourly render opens none: ``create=False``). On the local GitHub with the
real bot, the real store and the real CLI."""
from __future__ import annotations

import copy

from bot.app import queue as q
from bot.cli.main import main
from tests.support.e2e import install_on_fork, status_issue


async def test_a_dismissal_opens_no_status_issue_on_a_fork_whose_issue_a_person_closed(world, monkeypatch, capsys):
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
    await alice.patch(f"/repos/meta/triton/issues/{issue['number']}", data={"state": "closed"})
    await bot.settle()
    assert await status_issue(alice) == [], "not the case under test: the closed issue was opened again"
    monkeypatch.setenv("LOGNAME", "ops-ana")
    assert main(["queue", "--db", bot.settings.db, "--dismiss", dead.id]) == 0
    capsys.readouterr()
    await bot.settle()
    assert q.get(bot.store, dead.id).state == "dismissed"
    assert await status_issue(alice) == []
