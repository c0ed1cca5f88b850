"""A check run without a PR list (GitHub sends ``pull_requests: []`` for runs from other
repositories, and for runs it could not associate) still re-evaluates the gate of the open PR
with that head; and the reconcile tick re-evaluates a PR whose other checks changed after its
gate decided, when no event told forksync."""
from bot.app import schedules
from bot.github.matching import match_prs
from tests.support.validation_world import CONFIG, check_run_event, close_world, fork_files, make_world, tick_ctx


def gate_codes(w, sha):
    run = w.run_of(sha, "forksync/gate")
    return run.status, run.conclusion


def test_match_prs_by_head_sha_and_sync_branch_name():
    prs = [{"number": 3, "head": {"sha": "a" * 40, "ref": "feature", "repo": {"full_name": "alice/triton"}}},
           {"number": 5, "head": {"sha": "b" * 40, "ref": "forksync/bundle-x", "repo": {"full_name": "meta/triton"}}},
           {"number": 7, "head": {"sha": "c" * 40, "ref": "forksync/bundle-x", "repo": {"full_name": "eve/triton"}}}]
    assert match_prs(prs, "meta/triton", "a" * 40, "feature", "forksync/") == [3]          # a PR from a fork, by sha
    assert match_prs(prs, "meta/triton", "d" * 40, "forksync/bundle-x", "forksync/") == [5]  # our own branch, by name
    assert match_prs(prs, "meta/triton", "d" * 40, "feature", "forksync/") == []
    assert match_prs(prs, "meta/triton", "", None, "forksync/") == []


async def test_a_check_run_without_pull_requests_reevaluates_the_gate(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path, files=fork_files(config=CONFIG + "gate:\n  required_checks: [internal-ci]\n"))
    try:
        head = w.push_branch("forksync/bundle-ci", {"NOTES.md": "t\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-ci")
        await w.bot.settle()
        assert gate_codes(w, head) == ("in_progress", None)           # waiting for internal-ci
        w.fake.set_status(w.fork, head, "internal-ci", "success")
        await check_run_event(w, head, "forksync/bundle-ci")
        await w.bot.settle()
        [done] = [d.outcome for d in w.bot.deliveries("done") if d.event == "check_run" and "loop guard" not in d.outcome]
        # the landing of forksync's own unit is noted first (bundle-ci merged; the ledger refreshed)
        assert done.startswith("bundle-ci merged; ") and "#1 gate: Ready to merge; merged " in done, done
        assert (await w.pr(pr["number"]))["merged"] is True
    finally:
        await close_world(w)


async def test_a_check_run_without_pull_requests_for_no_open_pr_says_so(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path)
    try:
        await check_run_event(w, "e" * 40, "somebody-else")
        await w.bot.settle()
        [d] = [d for d in w.bot.deliveries("done") if d.event == "check_run" and "loop guard" not in d.outcome]
        assert d.outcome == f"check_run 'internal-ci' on {'e' * 12}: no open PR into main has that head"
    finally:
        await close_world(w)


async def test_reconcile_reevaluates_a_pr_whose_checks_changed_after_the_gate(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path, files=fork_files(config=CONFIG + "gate:\n  required_checks: [internal-ci]\n"))
    try:
        head = w.push_branch("forksync/bundle-late", {"NOTES.md": "t\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-late")
        w.fake.set_status(w.fork, head, "internal-ci", "failure", description="flaky")
        await w.bot.settle()
        assert gate_codes(w, head) == ("completed", "failure")
        # nothing changed: the tick leaves the decided gate alone
        t0 = w.fake.state.now()
        w.fake.state.clock = lambda: t0 + 5
        notes = await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
        assert notes == []
        # internal-ci is re-run and goes green; its status event never reaches forksync
        w.fake.state.clock = lambda: t0 + 10
        w.fake.set_status(w.fork, head, "internal-ci", "success")
        notes = await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
        assert notes[0] == f"#{pr['number']}: checks changed since the gate"
        assert (await w.pr(pr["number"]))["merged"] is True
    finally:
        await close_world(w)


async def test_a_refused_merge_blocks_the_unit_visibly_and_the_tick_retries_it(fake_github, tmp_path):
    from bot.sync import store as sync_store
    from tests.support.e2e import status_issue
    w = await make_world(fake_github, tmp_path)
    try:
        head = w.push_branch("forksync/bundle-m", {"NOTES.md": "m\n"}, "Note")
        sync_store.save_branch(w.bot.store, repo="meta/triton", branch="forksync/bundle-m", unit_id="bundle-m",
                               kind="bundle", pushed_tip=head, verified_tip="", pr=0, state="open", shas_json="[]",
                               base_sha="", conflict_sha="")
        pr = await w.open_pr("forksync/bundle-m")
        sync_store.save_branch(w.bot.store, **{**sync_store.branch_row(w.bot.store, "meta/triton", "forksync/bundle-m"),
                                               "pr": pr["number"]})
        w.fake.faults.add("PUT", "*/merge", 403, "Resource not accessible by integration", name="merge-403")
        await w.bot.settle()
        assert (await w.pr(pr["number"]))["merged"] is False
        row = sync_store.branch_row(w.bot.store, "meta/triton", "forksync/bundle-m")
        assert (row["state"], row["blocked_step"], row["blocked_requires"], row["blocked_reason"], row["blocked_tip"]) == (
            "open", "merge", "permission", "403 Resource not accessible by integration", head)
        [c] = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{pr['number']}/comments")
               if "forksync:blocked" in c["body"]]
        assert "GitHub refused the merge** of" in c and "> 403 Resource not accessible by integration" in c
        [issue] = await status_issue(w.alice)
        assert "**Syncing is degraded: 1 unit(s) blocked.**" in issue["body"]
        assert "GitHub refused the merge 0 s ago: 403 Resource not accessible by integration" in issue["body"]
        # the fault is gone: the reconcile tick merges, and the unit is no longer blocked
        await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
        assert (await w.pr(pr["number"]))["merged"] is True
        assert sync_store.blocked_branches(w.bot.store, "meta/triton") == []
        assert sync_store.load_status(w.bot.store, "meta/triton").degraded() == ""
    finally:
        await close_world(w)


async def test_reconcile_reevaluates_a_pr_whose_required_checks_changed(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path)
    w.fork.required_checks = ["ci/oss"]                    # branch protection on main
    try:
        head = w.push_branch("forksync/bundle-req", {"NOTES.md": "r\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-req")
        w.fake.set_status(w.fork, head, "ci/oss", "failure", description="broken runner")
        await w.bot.settle()
        assert gate_codes(w, head) == ("completed", "failure")
        assert await schedules.reconcile_tick(await tick_ctx(w), "meta/triton") == []
        # the owner drops the broken CI from branch protection; no event tells forksync
        w.fork.required_checks = []
        notes = await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
        assert notes[0] == f"#{pr['number']}: required checks changed since the gate"
        assert (await w.pr(pr["number"]))["merged"] is True
    finally:
        await close_world(w)
