"""A person's own PR from forksync's sync branch into the branch forksync syncs is the unit's PR
from then on, and stays theirs: forksync keeps their title and words and draft state, writes only
its own marked section (after their text), tracks the unit on the status issue, and the gate
holds the PR as it holds forksync's own (docs/github.md "sync PR title and body")."""
from __future__ import annotations

import pytest

from bot.sync import store as sync_store
from tests.e2e.test_other_base import unit_without_its_pr
from tests.support.e2e import job_context, open_sync_prs, status_issue

TITLE = "Port the AMD rework (carol's, reviewed by the AMD team)"
BODY = "I opened this one myself: the AMD team reviews it on Thursday.\r\n\r\ncc @bob"


@pytest.mark.parametrize("draft", [False, True])
async def test_a_persons_pr_on_a_units_branch_keeps_their_title_body_and_draft_state(world, draft):
    fake, bot, alice, up_src, upstream, fork, inst = world
    _, row = await unit_without_its_pr(fake, bot, alice, up_src, upstream, fork, inst, kind="chain")
    branch = row["branch"]
    pr = await alice.post("/repos/meta/triton/pulls",
                          data={"title": TITLE, "body": BODY, "head": branch, "base": "main", "draft": draft})
    await bot.settle()
    await bot.svc.sync(await job_context(bot)(inst.id), "meta/triton", reason="test: again")
    await bot.settle()
    assert bot.deliveries("dead") == []

    mine = [p for p in await open_sync_prs(alice) if p["head"]["ref"] == branch]
    assert [p["number"] for p in mine] == [pr["number"]]             # no second PR for the unit
    [now] = mine
    assert now["user"]["login"] == "alice"
    assert now["title"] == TITLE
    assert now["body"].startswith(BODY + "\n\n<!-- forksync:body:start -->"), now["body"][:300]
    assert now["body"].rstrip().endswith("<!-- forksync:body:end -->")
    assert now["draft"] is draft
    # the unit is tracked: its row names alice's PR, the status issue lists it
    got = sync_store.branch_row(bot.store, "meta/triton", branch)
    assert (got["pr"], got["state"], got["blocked_step"]) == (pr["number"], "open", "")
    assert got["draft_by_forksync"] == 0        # forksync did not open it: its draft state is alice's
    [issue] = await status_issue(alice)
    assert f"#{pr['number']}" in issue["body"]

    # the gate holds it as it holds forksync's own: no suite configured here, the area owner's
    # approval missing — and, while alice keeps it a draft, her draft (forksync never marks it ready)
    [gate] = [r for r in fake.state.repo("meta", "triton").check_runs.values()
              if r.head_sha == now["head"]["sha"] and r.name == "forksync/gate"]
    assert gate.conclusion == "failure"
    summary = gate.output["summary"]
    assert "`no-required-checks`" in summary and "`approval-missing`" in summary, summary
    assert ("a person keeps this PR a draft" in summary) is draft, summary

    # a later refresh keeps it all the same (and writes nothing when forksync's section is current)
    await bot.svc.sync(await job_context(bot)(inst.id), "meta/triton", reason="test: once more")
    await bot.settle()
    again = await alice.getitem(f"/repos/meta/triton/pulls/{pr['number']}")
    assert (again["title"], again["body"], again["draft"]) == (TITLE, now["body"], draft)

