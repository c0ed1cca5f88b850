"""A dead letter an operator dismisses (``forksync queue --dismiss ID``, another process: it
cannot reach GitHub) leaves its fork's status issue at the worker's next turn, on the local
GitHub with the real bot, the real store and the real CLI: the status issue is rendered again by
nothing else until the next sync, which may be hours away on a quiet upstream."""
from __future__ import annotations

import copy

from bot.app import queue as q
from bot.cli.main import main
from tests.support.e2e import install_on_fork, status_issue

ALARM = "webhook delivery for this fork failed for good** (dead-lettered)"


async def test_a_dismissed_dead_letter_leaves_the_status_issue_at_the_workers_next_turn(world, monkeypatch, capsys):
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
    [issue] = await status_issue(alice)
    assert ALARM in issue["body"] and f"- `{dead.id}` issue_comment.created" in issue["body"], issue["body"]
    monkeypatch.setenv("LOGNAME", "ops-ana")
    assert main(["queue", "--db", bot.settings.db, "--dismiss", dead.id, "--reason", "sent without comment.id"]) == 0
    capsys.readouterr()
    await bot.settle()
    [issue] = await status_issue(alice)
    assert ALARM not in issue["body"] and dead.id not in issue["body"], issue["body"]
    assert q.get(bot.store, dead.id).state == "dismissed"
