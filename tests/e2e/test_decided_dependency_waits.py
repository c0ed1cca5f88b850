"""A unit the sync closes itself (every upstream commit of it decided while its PR was open) that
an open chain lands after, on the local GitHub with the real bot, real git and the real store. The
sync publishes the chain while the bundle is still live, so the chain's row names it; then it closes
the bundle, and no later sync follows from that close (forksync's own close records nothing). What
the status issue says the chain waits for must be what the gate holds it for
(``lands-after-closed``): nothing, on a branch of forksync's own picks (built on the fork tip, it is
the fork as it is); the closed bundle, with what unblocks it, on a branch holding a person's commit
(made while the bundle's picks were to land first)."""
from __future__ import annotations

import asyncio

import pytest

from bot.sync import store as sync_store
from bot.validation import gate_inputs
from tests.e2e.test_conflict_owed import source, stacked_world  # noqa: F401
from tests.support.e2e import job_context, status_command, status_issue
from tests.support.github import commit_files, git
from tests.support.sync_world import open_prs


async def bundle_and_chain(w, up_src, upstream):
    """A bundle (python/h.py) and a chain that lands after it (its second pick needs the bundle's
    and stops at a conflict on the fork tip). ``(b0, bundle PR, chain PR)``."""
    b0 = commit_files(up_src, {"python/h.py": "h = 1\n"}, "Speed up h (#100)")
    c1 = commit_files(up_src, {"third_party/amd/x.cpp": source(z="1")}, "AMD: set z (#101)")
    commit_files(up_src, {"third_party/amd/x.cpp": source(z="2"), "python/h.py": "h = 2\n"}, "AMD: z and h (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    bundle, chain = await open_prs(w.alice)
    assert chain["head"]["ref"] == f"forksync/chain-{c1[:12]}"
    row = sync_store.branch_row(w.bot.store, "meta/triton", chain["head"]["ref"])
    assert f"bundle-{b0[:12]}" in row["depends_json"], row["depends_json"]
    return b0, bundle, chain


async def push_alices_commit(w, branch: str, tmp_path) -> None:
    """alice pushes a commit of her own (python/h.py and a note) to the sync ``branch``."""
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    commit_files(wt, {"python/h.py": "h = 2\n", "python/notes.py": "# why h is 2\n"}, "h and a note")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()


async def defer_the_bundle_held_at_its_close(w, b0: str, bundle: dict):
    """alice defers the bundle's only commit, and the sync that follows is held at the close of
    the bundle's PR (its PATCH): ``(hold, the command's task)`` — release the hold, then await the
    task. Faults added meanwhile hit only what the sync writes after the close."""
    [issue] = await status_issue(w.alice)
    hold = w.fake.faults.hold("PATCH", f"/repos/meta/triton/pulls/{bundle['number']}")
    said = asyncio.create_task(status_command(w.alice, w.bot, issue["number"],
                                              f"/forksync defer {b0[:12]} waits for the new allocator"))
    reached = asyncio.create_task(hold.reached.wait())
    await asyncio.wait({said, reached}, return_when=asyncio.FIRST_COMPLETED)
    assert hold.reached.is_set(), "the bundle was not closed: not the case under test"
    return hold, said


async def defer_the_bundle(w, b0: str, bundle: dict) -> str:
    """alice defers the bundle's only commit: the sync that follows closes its PR. The status
    issue's line for ``chain`` after it."""
    [issue] = await status_issue(w.alice)
    await status_command(w.alice, w.bot, issue["number"], f"/forksync defer {b0[:12]} waits for the new allocator")
    pr = await w.pr(bundle["number"])
    assert (pr["state"], pr["merged"]) == ("closed", False)
    assert sync_store.branch_row(w.bot.store, "meta/triton", bundle["head"]["ref"])["state"] == sync_store.DECIDED
    [issue] = await status_issue(w.alice)
    return issue["body"]



async def test_a_chain_of_forksyncs_own_picks_is_not_said_to_wait_for_a_bundle_the_sync_closed(stacked_world):  # noqa: F811
    w, up_src, upstream = stacked_world
    b0, bundle, chain = await bundle_and_chain(w, up_src, upstream)
    body = await defer_the_bundle(w, b0, bundle)
    pr = await w.pr(chain["number"])
    assert pr["state"] == "open"
    row = sync_store.branch_row(w.bot.store, "meta/triton", chain["head"]["ref"])
    assert not sync_store.person_work(row, pr["head"]["sha"]), "forksync's own picks: not the case under test"
    assert gate_inputs.lands_after_closed(w.bot.store, "meta/triton", pr) == ()
    lines = [x for x in body.splitlines() if f"#{chain['number']}" in x]
    assert lines and not any(f"#{bundle['number']}" in x or "closed unmerged" in x for x in lines), lines
    assert f"bundle-{b0[:12]}" not in row["depends_json"], row["depends_json"]


async def test_a_chain_holding_a_persons_commit_still_waits_for_a_bundle_the_sync_closed(stacked_world, tmp_path):  # noqa: F811
    w, up_src, upstream = stacked_world
    b0, bundle, chain = await bundle_and_chain(w, up_src, upstream)
    branch = chain["head"]["ref"]
    await push_alices_commit(w, branch, tmp_path)
    head = (await w.pr(chain["number"]))["head"]["sha"]
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert sync_store.person_work(row, head), "her commit is not on the branch: not the case under test"

    body = await defer_the_bundle(w, b0, bundle)
    pr = await w.pr(chain["number"])
    assert pr["state"] == "open" and pr["head"]["sha"] == head
    [(unit, number, state, _)] = gate_inputs.lands_after_closed(w.bot.store, "meta/triton", pr)
    assert (unit, number, state) == (f"bundle-{b0[:12]}", bundle["number"], sync_store.DECIDED)
    lines = [x for x in body.splitlines() if f"#{chain['number']}" in x]
    assert lines and all(f"waits for #{bundle['number']} (`bundle-{b0[:12]}`), closed unmerged" in x
                         and f"/forksync reconsider {b0[:12]}" in x for x in lines), lines


def pr_patches(w, number: int) -> list[dict]:
    """The local GitHub's answered ``PATCH /repos/meta/triton/pulls/<number>`` requests so far."""
    return [r for r in w.fake.requests_for("pulls/update") if r["path"].endswith(f"/pulls/{number}")]


async def test_the_chains_pr_stops_saying_it_lands_after_the_bundle_in_the_sync_that_closed_it(stacked_world):  # noqa: F811
    """The sync published the chain while the bundle was live ("Lands after #bundle"), then closed
    the bundle: the chain's body is written again in that same sync, as a unit with no open
    dependency says it — the body a later sync writes too, with no PATCH of its own."""
    w, up_src, upstream = stacked_world
    b0, bundle, chain = await bundle_and_chain(w, up_src, upstream)
    assert f"**Lands after** #{bundle['number']} (`bundle-{b0[:12]}`)" in chain["body"], chain["body"]
    await defer_the_bundle(w, b0, bundle)
    pr = await w.pr(chain["number"])
    assert pr["state"] == "open"
    assert "Lands after" not in pr["body"] and f"#{bundle['number']}" not in pr["body"], pr["body"]
    assert f"bundle-{b0[:12]}" not in pr["body"], pr["body"]
    assert "Not in this chain: 1 upstream commit deferred" in pr["body"], pr["body"]

    patched = len(pr_patches(w, chain["number"]))
    await w.bot.svc.sync(await job_context(w.bot)(w.inst), "meta/triton", reason="test: again")
    await w.bot.settle()
    assert (await w.pr(chain["number"]))["body"] == pr["body"]
    assert len(pr_patches(w, chain["number"])) == patched, "a later sync had the body to write again"
    assert w.bot.deliveries("dead") == []


async def test_a_chain_kept_waiting_on_the_bundle_the_sync_closed_says_so_in_that_sync(stacked_world, tmp_path):  # noqa: F811
    """A person's commit on the chain keeps the closed bundle in its row: the chain's body, written
    again in the sync that closed the bundle, says it was closed unmerged and what unblocks it; the
    words she added under forksync's part of the body stay."""
    w, up_src, upstream = stacked_world
    b0, bundle, chain = await bundle_and_chain(w, up_src, upstream)
    branch = chain["head"]["ref"]
    await push_alices_commit(w, branch, tmp_path)
    now = await w.pr(chain["number"])
    await w.alice.patch(f"/repos/meta/triton/pulls/{chain['number']}",
                        data={"body": now["body"] + "\n\nalice: h is 2 because of the allocator.\n"})

    await defer_the_bundle(w, b0, bundle)
    body = (await w.pr(chain["number"]))["body"]
    assert f"- #{bundle['number']} (`bundle-{b0[:12]}`) was closed unmerged" in body, body
    assert f"`/forksync reconsider {b0[:12]}`" in body, body
    assert "alice: h is 2 because of the allocator." in body, body


@pytest.mark.parametrize("comment_refused", [False, True])
async def test_github_refusing_the_chains_new_body_blocks_it_and_the_sync_goes_on(stacked_world,  # noqa: F811
                                                                                   comment_refused):
    """GitHub refuses the write of the chain's body after the bundle's close (403: a missing
    permission) — and, ``comment_refused``, the comment saying so on the chain's PR too: the bundle
    is closed all the same, the chain is blocked at its pull request with GitHub's reason on the
    status issue, and a later sync writes the body and clears the block."""
    w, up_src, upstream = stacked_world
    b0, bundle, chain = await bundle_and_chain(w, up_src, upstream)
    # the chain's body is written (its deferred commits) before the bundle is closed: refused only after
    hold, said = await defer_the_bundle_held_at_its_close(w, b0, bundle)
    w.fake.faults.add("PATCH", f"/repos/meta/triton/pulls/{chain['number']}", 403,
                      "Resource not accessible by integration")
    if comment_refused:
        w.fake.faults.add("POST", f"/repos/meta/triton/issues/{chain['number']}/comments", 403,
                          "Resource not accessible by integration")
    hold.release()
    await said

    assert (await w.pr(bundle["number"]))["state"] == "closed"
    assert [f.status for f in w.fake.faults.fired if f.path.endswith(f"/pulls/{chain['number']}")] == [403]
    assert [f.method for f in w.fake.faults.fired if f.path.endswith(f"/issues/{chain['number']}/comments")] \
        == (["POST"] if comment_refused else [])
    row = sync_store.branch_row(w.bot.store, "meta/triton", chain["head"]["ref"])
    assert (row["state"], row["blocked_step"], row["blocked_requires"]) == ("open", "pr", "permission"), row
    assert f"bundle-{b0[:12]}" not in row["depends_json"], row["depends_json"]
    [issue] = await status_issue(w.alice)
    assert "Resource not accessible by integration" in issue["body"], issue["body"]
    assert "Lands after" in (await w.pr(chain["number"]))["body"], "refused: GitHub still has the old body"

    await w.bot.svc.sync(await job_context(w.bot)(w.inst), "meta/triton", reason="test: again")
    await w.bot.settle()
    body = (await w.pr(chain["number"]))["body"]
    assert "Lands after" not in body and f"#{bundle['number']}" not in body, body
    assert not sync_store.branch_row(w.bot.store, "meta/triton", chain["head"]["ref"])["blocked_step"]
