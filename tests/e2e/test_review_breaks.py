"""What a maintainer meets after today's changes, against the local GitHub with the real bot,
real git and the real store."""
from bot.sync import store as sync_store
from tests.e2e.test_decided_while_open import dispositions, notes_of, two_commit_bundle
from tests.support.e2e import status_command, status_issue
from tests.support.github import commit_files, git


async def test_a_person_closing_a_pr_that_carries_a_decided_commit_keeps_that_decision(world, tmp_path):
    """A bundle carries a person's commit, so when one of its upstream commits is skipped forksync
    leaves the branch alone (it only says so). The maintainer then closes the PR saying "not now".
    What they would see: the skip they recorded minutes ago silently lifted — the closer's reason
    written over it, the commit PENDING and planned again. What they should see: only the commit
    still in flight takes the closer's reason; the skipped one keeps its skip."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c3, c2, bundle = await two_commit_bundle(world)
    branch = bundle["head"]["ref"]
    person = tmp_path / "person"
    git(tmp_path, "clone", "-q", "-b", branch, str(fork.path), str(person))
    commit_files(person, {"python/person.py": "mine = 1\n"}, "A person's fix")
    git(person, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
    await bot.settle()
    [issue] = await status_issue(alice)
    await status_command(alice, bot, issue["number"], f"/forksync skip {c3[:12]} b is the fork's own")
    assert dispositions(bot)[c3] == "SKIP_FOR_CURRENT_BASE"

    await alice.post(f"/repos/meta/triton/issues/{bundle['number']}/comments", data={"body": "not now"})
    await alice.patch(f"/repos/meta/triton/pulls/{bundle['number']}", data={"state": "closed"})
    await bot.settle()
    assert bot.deliveries("dead") == []
    # the closed unit's row ended (a unit planned again under its id starts a fresh row)
    assert bundle["number"] in sync_store.earlier_prs(sync_store.branch_row(bot.store, "meta/triton", branch))
    led = dispositions(bot)
    assert led[c3] == "SKIP_FOR_CURRENT_BASE"
    assert "RECONSIDER" not in notes_of(fork.path, c3)
    assert "forksync-decision: RECONSIDER closed unmerged by @alice: not now" in notes_of(fork.path, c1)
    replies = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{bundle['number']}/comments")
               if c["user"]["login"] == "forksync[bot]" and "Closed without merging" in c["body"]]
    assert len(replies) == 1 and "for 1 upstream commit:" in replies[0]
    assert f"`{c3[:12]}` was decided while this pull request was open and keeps that decision: " \
           "**SKIP_FOR_CURRENT_BASE** — b is the fork's own" in replies[0]
