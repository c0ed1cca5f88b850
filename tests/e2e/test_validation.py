"""Validation on GitHub end to end: a person pushes a sync branch and opens a PR on the local
GitHub, the signed webhook reaches the real bot, the ``local`` backend runs a real pytest suite
(JUnit) through ``python -m gpu_runner`` on a clone of the fork at the head sha, check runs are
published, the gate decides and the bot merges (or not) by itself."""
import pytest

from tests.support.validation_world import TESTS, close_world, make_world

BROKEN = "def add(a, b):\n    return a - b if a == 2 else a + b\n"


@pytest.fixture
async def world(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path)
    yield w
    await close_world(w)


async def test_green_suite_merges_by_itself_with_rebase(world):
    w = world
    head = w.push_branch("forksync/bundle-1", {"NOTES.md": "a new note\n"}, "Add a note")
    pr = await w.open_pr("forksync/bundle-1")
    await w.bot.settle()
    l1 = w.run_of(head, "forksync/L1/unit")
    assert (l1.status, l1.conclusion) == ("completed", "success")
    assert l1.output["title"] == "3 passed"
    assert "| 3 | 3 | 0 | 0 | 0 | 3 | 3 |" in l1.output["summary"]
    gate = w.run_of(head, "forksync/gate")
    assert (gate.conclusion, gate.output["title"]) == ("success", "Ready to merge")
    merged = await w.pr(pr["number"])
    assert merged["merged"] is True
    assert [m["status"] for m in w.fake.requests_for("pulls/merge")] == [200]
    tip = await w.alice.getitem("/repos/meta/triton/commits/main")
    assert (tip["commit"]["message"], len(tip["parents"])) == ("Add a note", 1)     # rebased, not squashed/merged
    assert "merged `%s` by rebase" % head[:12] in gate.output["text"]
    assert w.bot.deliveries("dead") == []


async def gate_codes(w, sha):
    run = w.run_of(sha, "forksync/gate")
    return run.conclusion, [line.split("`")[1] for line in run.output["summary"].splitlines() if line.startswith("| ❌")]


async def test_red_suite_blocks_with_annotations_and_a_base_comparison(world):
    w = world
    head = w.push_branch("forksync/bundle-red", {"lib.py": BROKEN}, "Break add")
    pr = await w.open_pr("forksync/bundle-red")
    await w.bot.settle()
    l1 = w.run_of(head, "forksync/L1/unit")
    assert (l1.conclusion, l1.output["title"]) == ("failure", "1 failing of 3")
    assert [(a["path"], a["start_line"], a["annotation_level"], a["title"]) for a in l1.annotations] == [
        ("tests_fork/test_basic.py", 9, "failure", "tests_fork.test_basic::test_two")]
    assert "`test-failures`" in l1.output["summary"]
    conclusion, codes = await gate_codes(w, head)
    assert (conclusion, codes) == ("failure", ["new-failure"])
    assert "1 new failing test(s): tests_fork.test_basic::test_two" in w.run_of(head, "forksync/gate").output["summary"]
    assert (await w.pr(pr["number"]))["merged"] is False
    assert w.fake.requests_for("pulls/merge") == []


async def test_short_suite_turns_the_gate_red(world):
    w = world
    short = TESTS.rsplit("\n\ndef test_three", 1)[0] + "\n"
    head = w.push_branch("forksync/bundle-short", {"tests_fork/test_basic.py": short}, "Drop a test quietly")
    pr = await w.open_pr("forksync/bundle-short")
    await w.bot.settle()
    l1 = w.run_of(head, "forksync/L1/unit")
    assert l1.conclusion == "failure" and l1.output["title"] == "Red: count-mismatch"
    assert l1.annotations == []
    conclusion, codes = await gate_codes(w, head)
    assert (conclusion, codes) == ("failure", ["suite-error"])
    assert (await w.pr(pr["number"]))["merged"] is False


async def test_base_moved_updates_the_branch_retests_and_merges_after_owner_approval(world):
    w = world
    first = w.push_branch("forksync/bundle-amd", {"amd/kernel.txt": "v2\n"}, "Touch amd")
    pr = await w.open_pr("forksync/bundle-amd")
    await w.bot.settle()
    assert await gate_codes(w, first) == ("failure", ["approval-missing"])
    w.push_main({"elsewhere.txt": "landed meanwhile\n"}, "Another unit landed")
    await w.bot.settle()
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    updates = w.fake.requests_for("pulls/update-branch")
    assert [u["status"] for u in updates] == [202]
    final = await w.pr(pr["number"])
    assert final["merged"] is True
    merged_head = w.fake.state.repo("meta", "triton").pulls[pr["number"]].last_head_sha
    assert merged_head != first
    mc = await w.alice.getitem(f"/repos/meta/triton/commits/{merged_head}")
    assert len(mc["parents"]) == 2 and mc["parents"][0]["sha"] == first     # the base merged in, nothing rewritten
    assert w.run_of(first, "forksync/L1/unit").conclusion == "success"
    assert w.run_of(merged_head, "forksync/L1/unit").conclusion == "success"      # re-tested on the new head
    assert w.run_of(merged_head, "forksync/gate").conclusion == "success"


async def test_area_owner_approval_and_l3_signoff_are_required(world):
    w = world
    head = w.push_branch("forksync/chain-llvm", {"llvm/pin.txt": "llvm 20\n"}, "Bump the LLVM pin")
    pr = await w.open_pr("forksync/chain-llvm")
    await w.bot.settle()
    assert await gate_codes(w, head) == ("failure", ["approval-missing", "l3-signoff-missing"])
    await w.people["carol"].post(f"/repos/meta/triton/issues/{pr['number']}/comments",
                                 data={"body": "/forksync signoff llvm"})
    await w.bot.settle()
    assert (await w.pr(pr["number"]))["merged"] is False
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert (await w.pr(pr["number"]))["merged"] is True
    summary = w.run_of(head, "forksync/gate").output["summary"]
    assert "| ✅ | `approved` | llvm | approved by carol |" in summary
    assert "| ✅ | `signed-off` | llvm | L3 sign-off by carol |" in summary


async def test_405_then_a_rerun_of_the_gate_merges_once_without_duplicates(world):
    from bot.fakegithub.events import check_run_event

    w = world
    w.fake.faults.not_mergeable(times=1)
    head = w.push_branch("forksync/bundle-405", {"NOTES.md": "x\n"}, "Note")
    pr = await w.open_pr("forksync/bundle-405")
    await w.bot.settle()
    assert (await w.pr(pr["number"]))["merged"] is False
    gate = w.run_of(head, "forksync/gate")
    assert "GitHub answered 405" in gate.output["text"]
    repo = w.fake.state.repo("meta", "triton")
    check_run_event(w.fake, repo, gate, "rerequested", w.fake.state.users["alice"])
    await w.bot.settle()
    assert [m["status"] for m in w.fake.requests_for("pulls/merge")] == [405, 200]
    assert "merged `%s` by rebase" % head[:12] in w.run_of(head, "forksync/gate").output["text"]
    assert (await w.pr(pr["number"]))["merged"] is True
    assert len([r for r in repo.check_runs.values() if r.head_sha == head and r.name == "forksync/gate"]) == 1
    assert len([r for r in repo.check_runs.values() if r.head_sha == head and r.name == "forksync/L1/unit"]) == 1
    comments = [c async for c in w.alice.getiter(f"/repos/meta/triton/issues/{pr['number']}/comments")]
    assert comments == []


async def test_409_head_moved_is_revalidated_and_merged_once(world):
    w = world
    w.fake.faults.head_changed(times=1)
    head = w.push_branch("forksync/bundle-409", {"NOTES.md": "y\n"}, "Note")
    pr = await w.open_pr("forksync/bundle-409")
    await w.bot.settle()
    assert [m["status"] for m in w.fake.requests_for("pulls/merge")] == [409, 200]
    assert (await w.pr(pr["number"]))["merged"] is True
    repo = w.fake.state.repo("meta", "triton")
    assert len([r for r in repo.check_runs.values() if r.head_sha == head and r.name == "forksync/L1/unit"]) == 1


async def test_a_405_is_retried_by_the_reconcile_tick(world):
    from bot.app import schedules
    from tests.support.validation_world import tick_ctx

    w = world
    w.fake.faults.not_mergeable(times=1)
    w.push_branch("forksync/bundle-405b", {"NOTES.md": "x\n"}, "Note")
    pr = await w.open_pr("forksync/bundle-405b")
    await w.bot.settle()
    assert (await w.pr(pr["number"]))["merged"] is False
    notes = await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert any(n.startswith("merged `") for n in notes), notes
    assert [m["status"] for m in w.fake.requests_for("pulls/merge")] == [405, 200]


async def test_mergeable_null_is_polled_before_merging(world):
    w = world
    head = w.push_branch("forksync/bundle-null", {"NOTES.md": "z\n"}, "Note")
    w.fake.webhooks.auto_deliver = False
    pr = await w.open_pr("forksync/bundle-null")
    w.fake.mergeable_unknown(w.fork, pr["number"], reads=2)
    w.fake.webhooks.auto_deliver = True
    await w.fake.webhooks.flush(order="fifo")
    await w.bot.settle()
    assert [m["status"] for m in w.fake.requests_for("pulls/merge")] == [200]
    assert (await w.pr(pr["number"]))["merged"] is True
    assert w.run_of(head, "forksync/gate").conclusion == "success"


async def test_rerun_of_a_suite_check_runs_it_again(world):
    from bot.fakegithub.events import check_run_event

    w = world
    head = w.push_branch("forksync/bundle-rerun", {"lib.py": BROKEN}, "Break add")
    await w.open_pr("forksync/bundle-rerun")
    await w.bot.settle()
    repo = w.fake.state.repo("meta", "triton")
    first = w.run_of(head, "forksync/L1/unit")
    check_run_event(w.fake, repo, first, "rerequested", w.fake.state.users["alice"])
    await w.bot.settle()
    runs = [r for r in repo.check_runs.values() if r.head_sha == head and r.name == "forksync/L1/unit"]
    assert [(r.status, r.conclusion) for r in runs] == [("completed", "failure"), ("completed", "failure")]


async def test_a_hold_keeps_the_gate_waiting_and_lifting_it_lets_the_tick_merge(world):
    from bot.app import schedules
    from tests.support.validation_world import opened_while_held, tick_ctx

    w = world
    pr, head, number = await opened_while_held(w, "forksync/bundle-held", {"NOTES.md": "h\n"}, "Note")
    gate = w.run_of(head, "forksync/gate")
    assert (gate.status, gate.output["title"]) == ("in_progress", "Blocked: 1 condition not met")
    assert "| ❌ | `hold` |" in gate.output["summary"]
    await w.alice.post(f"/repos/meta/triton/issues/{number}/comments", data={"body": "/forksync unhold"})
    await w.bot.settle()
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert (await w.pr(pr["number"]))["merged"] is True


async def test_a_short_suite_names_the_tests_that_ran_on_the_base_and_not_on_the_head(world):
    """A short suite said only "fewer: tests went missing": the maintainer had to diff two JUnit
    files by hand to learn which. The base's run names them."""
    w = world
    two = TESTS[:TESTS.index("\n\ndef test_three")] + "\n"
    head = w.push_branch("forksync/bundle-short", {"tests_fork/test_basic.py": two}, "Drop test_three")
    pr = await w.open_pr("forksync/bundle-short")
    await w.bot.settle()
    assert (await w.pr(pr["number"]))["merged"] is False
    [line] = [row for row in w.run_of(head, "forksync/gate").output["summary"].splitlines() if "`suite-error`" in row]
    assert "2 tests ran, the suite expects exactly 3" in line, line
    base = (await w.pr(pr["number"]))["base"]["sha"]
    assert f"1 test(s) ran on the base ({base[:12]}) and not on the head: tests_fork.test_basic::test_three" in line, line


async def test_a_green_retest_of_a_commit_that_was_red_says_the_red_run_was_flaky(world, tmp_path):
    """A test that failed once and passed on `/forksync retest` of the same commit left no word
    of it on the green check run: the flake merged unnoticed and nobody was told to fix it."""
    w = world
    marker = tmp_path / "flaked-once"
    flaky = TESTS.replace("def test_two():\n", f"def test_two():\n    import os\n    if not os.path.exists({str(marker)!r}):\n"
                          f"        open({str(marker)!r}, 'w').close()\n        assert False, 'flaked'\n")
    head = w.push_branch("forksync/bundle-flaky", {"tests_fork/test_basic.py": flaky}, "A flaky test")
    pr = await w.open_pr("forksync/bundle-flaky")
    await w.bot.settle()
    red = w.run_of(head, "forksync/L1/unit")
    assert red.conclusion == "failure"
    await w.comment(pr["number"], "/forksync retest")
    green = w.run_of(head, "forksync/L1/unit")
    assert green.conclusion == "success" and (await w.pr(pr["number"]))["merged"] is True
    summary = green.output["summary"]
    assert "### Red on an earlier run of this commit" in summary, summary
    [line] = [x for x in summary.splitlines() if x.startswith("- ") and "check run" in x]
    assert ": fail ([check run](" in line and line.endswith(f"/meta/triton/runs/{red.id}))"), line


async def test_a_green_retest_after_the_suite_count_was_set_calls_no_earlier_run_flaky(fake_github, tmp_path):
    """A short suite's red says "if they were removed on purpose, set expected_tests"; the
    maintainer does, retests the same commit, and its green check run called the earlier red
    intermittent ("a flaky test, the runner, or a race the change brings"): the suite's definition
    changed, no test flaked."""
    from tests.support.validation_world import CONFIG, fork_files

    w = await make_world(fake_github, tmp_path, files=fork_files(config=CONFIG.replace("expected_tests: 3", "expected_tests: 4")))
    try:
        head = w.push_branch("forksync/bundle-count", {"NOTES.md": "a note\n"}, "Add a note")
        pr = await w.open_pr("forksync/bundle-count")
        await w.bot.settle()
        assert w.run_of(head, "forksync/L1/unit").output["title"] == "Red: count-mismatch"
        w.push_main({".github/forksync.yml": CONFIG}, "The suite runs 3 tests: set expected_tests: 3")
        await w.bot.settle()
        await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync retest"})
        await w.bot.settle()
        green = w.run_of(head, "forksync/L1/unit")
        assert green.conclusion == "success"
        assert "Red on an earlier run of this commit" not in green.output["summary"], green.output["summary"]
    finally:
        await close_world(w)


async def test_a_green_retest_of_a_commit_whose_test_crashed_the_suite_once_says_the_red_run_was_flaky(world, tmp_path):
    """A test that crashes its process once (a segfault, the classic GPU flake) leaves a red of
    kind error (runner-crashed) under the same suite definition; the green `/forksync retest` of
    the same commit must still say the earlier run was red, as it did for any red before."""
    w = world
    marker = tmp_path / "crashed-once"
    flaky = TESTS.replace("def test_two():\n", f"def test_two():\n    import os, signal\n    if not os.path.exists({str(marker)!r}):\n"
                          f"        open({str(marker)!r}, 'w').close()\n        os.kill(os.getpid(), signal.SIGSEGV)\n")
    head = w.push_branch("forksync/bundle-crashy", {"tests_fork/test_basic.py": flaky}, "A test that crashes once")
    pr = await w.open_pr("forksync/bundle-crashy")
    await w.bot.settle()
    red = w.run_of(head, "forksync/L1/unit")
    assert red.conclusion == "failure", red.output
    await w.comment(pr["number"], "/forksync retest")
    green = w.run_of(head, "forksync/L1/unit")
    assert green.conclusion == "success", green.output
    summary = green.output["summary"]
    assert "### Red on an earlier run of this commit" in summary, (red.output["title"], summary)
