"""A unit whose dependency is closed without merging, on the local GitHub. The chain's branch is
built on the fork tip, so forksync's own picks on it are the fork as it is; but a resolution a person
made there was made while the closed bundle's picks were to land first (the pick conflicted because
they were missing). Closed for good (the closer defers it), the chain does not simply land that
resolution: its gate keeps it (``lands-after``, saying the unit was closed unmerged), its PR and the
status issue say so, and the person's commits stay. Planned again (closed without a reason, or
reconsidered), the chain waits for the new PR of those commits as for any unit in flight."""
from __future__ import annotations

from bot.app import schedules
from bot.sync import store as sync_store
from tests.e2e.test_conflict_owed import picked, source, stacked_world  # noqa: F401
from tests.e2e.test_dependency_lands import resolved_by_hand
from tests.support.e2e import status_command, status_issue
from tests.support.github import commit_files, git
from tests.support.sync_world import fork_git, open_prs
from tests.support.validation_world import tick_ctx


async def close(w, number: int, reason: str | None = None) -> None:
    """carol closes PR ``number`` unmerged, her last comment first when ``reason``."""
    if reason:
        await w.people["carol"].post(f"/repos/meta/triton/issues/{number}/comments", data={"body": reason})
    await w.people["carol"].patch(f"/repos/meta/triton/pulls/{number}", data={"state": "closed"})
    await w.bot.settle()


async def test_a_resolution_made_on_a_bundle_closed_for_good_is_not_landed_without_it(stacked_world, tmp_path):  # noqa: F811
    w, up_src, upstream = stacked_world
    b0, c1, c2, bundle, chain = await resolved_by_hand(w, up_src, upstream, tmp_path)
    branch = chain["head"]["ref"]
    held = (await w.pr(chain["number"]))["head"]["sha"]
    await close(w, bundle["number"], "defer: h waits for the new allocator")
    assert [p["number"] for p in await open_prs(w.alice)] != [], "nothing left open"
    pr = await w.pr(chain["number"])
    assert pr["merged"] is False and pr["state"] == "open", "the resolution landed without the bundle it was made on"
    assert pr["head"]["sha"] == held and fork_git(w, "show", f"{branch}:python/h.py") == "h = 2"
    run = w.run_of(held, "forksync/gate")
    summary = run.output["summary"].replace("\u200d", "")   # "#\u200d5": no link on GitHub
    assert run.conclusion == "failure" and "`lands-after`" in summary, summary
    assert f"#{bundle['number']}" in summary and "closed unmerged" in summary, summary
    assert f"/forksync reconsider {b0[:12]}" in summary, summary
    assert "closed unmerged" in pr["body"], pr["body"]
    [issue] = await status_issue(w.alice)
    line = next(x for x in issue["body"].splitlines() if f"#{chain['number']}" in x)
    assert "closed unmerged" in line and f"bundle-{b0[:12]}" in line, line
    # what unblocks it, as the gate says: the closed bundle's commit reconsidered, or this PR closed
    assert line.endswith(f"; waits for #{bundle['number']} (`bundle-{b0[:12]}`), closed unmerged: `/forksync reconsider "
                         f"{b0[:12]}` plans it again, or close #{chain['number']} to plan its commits again on the fork "
                         "as it is)"), line
    assert sync_store.branch_row(w.bot.store, "meta/triton", branch)["state"] == "open"

    # reconsidered: the bundle's commit is planned again under its unit and the chain waits for its
    # new PR; that lands (the tick merges it), and the chain goes on as after any landing of what it
    # lands after: built again on the fork that has the bundle, keeping the person's h.py
    await status_command(w.alice, w.bot, issue["number"], f"/forksync reconsider {b0[:12]}")
    again = next(p for p in await open_prs(w.alice) if p["head"]["ref"] == bundle["head"]["ref"])
    assert again["number"] != bundle["number"]
    assert (await w.pr(chain["number"]))["merged"] is False
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    await w.bot.settle()
    assert (await w.pr(again["number"]))["merged"] is True
    pr = await w.pr(chain["number"])
    assert pr["merged"] is False and fork_git(w, "show", f"{branch}:python/h.py") == "h = 2"
    summary = w.run_of(pr["head"]["sha"], "forksync/gate").output["summary"]
    assert "`lands-after`" not in summary and "`approval-missing`" in summary, summary
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert (await w.pr(chain["number"]))["merged"] is True
    got = picked(w, "main")
    assert got.index(b0) < got.index(c2), got


async def test_a_bundle_closed_without_a_reason_is_planned_again_and_the_chain_waits_for_it(stacked_world, tmp_path):  # noqa: F811
    w, up_src, upstream = stacked_world
    b0, c1, c2, bundle, chain = await resolved_by_hand(w, up_src, upstream, tmp_path)
    held = (await w.pr(chain["number"]))["head"]["sha"]
    await close(w, bundle["number"])
    again = next(p for p in await open_prs(w.alice) if p["head"]["ref"] == bundle["head"]["ref"])
    assert again["number"] != bundle["number"]
    pr = await w.pr(chain["number"])
    assert pr["merged"] is False and pr["head"]["sha"] == held
    summary = w.run_of(held, "forksync/gate").output["summary"].replace("\u200d", "")
    assert "`lands-after`" in summary and f"#{again['number']}" in summary, summary


async def test_a_persons_commit_on_a_chain_whose_bundle_was_closed_for_good_is_said_on_the_status_issue(stacked_world, tmp_path):  # noqa: F811
    """alice's commit on the stopped chain is no resolution forksync folds (it touches another file
    too), so no ``verified_tip`` records her work: only GitHub's head (not the tip forksync pushed)
    says it is there. The bundle closed for good, the gate holds the chain (``lands-after-closed``)
    and the status issue's line says so, with what unblocks it, as for a folded resolution."""
    w, up_src, upstream = stacked_world
    b0 = commit_files(up_src, {"python/h.py": "h = 1\n"}, "Speed up h (#100)")
    c1 = commit_files(up_src, {"third_party/amd/x.cpp": source(z="1")}, "AMD: set z (#101)")
    commit_files(up_src, {"third_party/amd/x.cpp": source(z="2"), "python/h.py": "h = 2\n"}, "AMD: z and h (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    bundle, chain = await open_prs(w.alice)
    branch = chain["head"]["ref"]
    assert branch == f"forksync/chain-{c1[:12]}"
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    commit_files(wt, {"python/h.py": "h = 2\n", "python/notes.py": "# why h is 2\n"}, "h and a note")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    head = (await w.pr(chain["number"]))["head"]["sha"]
    assert not row["verified_tip"] and head != row["pushed_tip"], "her commit was folded: not the case under test"

    await close(w, bundle["number"], "defer: h waits for the new allocator")
    pr = await w.pr(chain["number"])
    assert pr["state"] == "open" and pr["head"]["sha"] == head
    run = w.run_of(head, "forksync/gate")
    assert run.conclusion == "failure" and "lands-after-closed" in run.external_id.split(";"), run.external_id
    [issue] = await status_issue(w.alice)
    line = next(x for x in issue["body"].splitlines() if f"#{chain['number']}" in x)
    assert line.endswith(f"; waits for #{bundle['number']} (`bundle-{b0[:12]}`), closed unmerged: `/forksync reconsider "
                         f"{b0[:12]}` plans it again, or close #{chain['number']} to plan its commits again on the fork "
                         "as it is)"), line
