"""L3 on demand end to end, as people use it: ``/forksync l3 <workload>`` on a PR, the queued run
on a tick, its result, owners' sign-offs, and what the gate and the PR show when any of it goes
wrong (a short or red run, a head that moves, a result that never arrives, a broken config)."""

import time

import pytest

from bot.app import schedules
from bot.validation import signoff
from tests.support.validation_world import CONFIG, L3_CONFIG, L3_SUITE, actions_world, close_world, fork_files, make_world, tick_ctx

#: ``heavy`` declares four tests; the fork has three, so every run of it is short (red).
SHORT_L3 = CONFIG + L3_SUITE.replace("expected_tests: 3", "expected_tests: 4")
GREEN_L3 = L3_CONFIG


def codes(w, sha):
    run = w.run_of(sha, "forksync/gate")
    return run.conclusion, [line.split("`")[1] for line in run.output["summary"].splitlines() if line.startswith("| ❌")]


async def say(w, who: str, number: int, body: str) -> None:
    await w.people[who].post(f"/repos/meta/triton/issues/{number}/comments", data={"body": body})
    await w.bot.settle()


async def replies_on(w, number: int) -> list[str]:
    return [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{number}/comments")
            if c["user"]["login"] == "forksync[bot]"]


@pytest.fixture
async def short_world(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path, files=fork_files(config=SHORT_L3))
    yield w
    await close_world(w)


async def test_a_short_l3_run_blocks_the_merge_even_when_signed_off(short_world):
    w = short_world
    head = w.push_branch("forksync/chain-llvm-l3", {"llvm/pin.txt": "llvm 22\n"}, "Bump the LLVM pin")
    pr = await w.open_pr("forksync/chain-llvm-l3")
    await w.bot.settle()
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    await say(w, "alice", pr["number"], "/forksync l3 heavy")
    assert codes(w, head) == ("failure", ["l3-pending", "l3-signoff-missing"])
    notes = await schedules.l3_tick(await tick_ctx(w), "meta/triton")
    assert notes[0] == f"L3 heavy@cpu on #{pr['number']}: red"
    assert w.run_of(head, "forksync/L3/heavy").conclusion == "failure"
    await say(w, "carol", pr["number"], "/forksync signoff llvm")
    assert (await w.pr(pr["number"]))["merged"] is False
    assert codes(w, head) == ("failure", ["l3-failed"])
    summary = w.run_of(head, "forksync/gate").output["summary"]
    assert "heavy/cpu" in summary and "the suite expects exactly 4" in summary, summary


@pytest.fixture
async def world(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path, files=fork_files(config=GREEN_L3))
    yield w
    await close_world(w)


async def test_a_queued_run_whose_head_moved_is_not_run_and_never_counts_for_the_new_head(world):
    w = world
    old = w.push_branch("forksync/chain-amd-moved", {"amd/k.txt": "k\n"}, "Touch amd")
    pr = await w.open_pr("forksync/chain-amd-moved")
    await w.bot.settle()
    await say(w, "alice", pr["number"], "/forksync l3 heavy")
    from tests.e2e.test_validation_more import commit_on
    new = commit_on(w, "forksync/chain-amd-moved", {"amd/k2.txt": "k2\n"}, "Touch amd again")
    await w.bot.settle()
    notes = await schedules.l3_tick(await tick_ctx(w), "meta/triton")
    assert notes[0] == (f"L3 heavy@cpu on #{pr['number']}: not run, the head moved from {old[:12]} to {new[:12]}")
    assert w.run_of(old, "forksync/L3/heavy") is None                 # no heavy run on a tree nobody merges
    [run] = signoff.l3_runs_for(w.bot.store, "meta/triton", pr["number"])
    assert (run.status, run.head_sha) == ("cancelled", old)
    assert any(f"**not run** — the head moved from `{old[:12]}` to `{new[:12]}`" in b and "`/forksync l3 heavy`" in b
               for b in await replies_on(w, pr["number"]))
    assert codes(w, new) == ("failure", ["approval-missing", "l3-stale"])


async def test_a_run_whose_suite_is_gone_from_a_broken_config_says_so_on_the_pr(world):
    w = world
    head = w.push_branch("forksync/chain-amd-cfg", {"amd/k.txt": "k\n"}, "Touch amd")
    pr = await w.open_pr("forksync/chain-amd-cfg")
    await w.bot.settle()
    await say(w, "alice", pr["number"], "/forksync l3 heavy")
    w.push_main({".github/forksync.yml": GREEN_L3.replace("level: L3", "level: L4")}, "Break the config")
    await w.bot.settle()
    notes = await schedules.l3_tick(await tick_ctx(w), "meta/triton")
    assert notes[0].startswith("L3 heavy: not run")
    [reply] = [b for b in await replies_on(w, pr["number"]) if "**L3 `heavy`**" in b]
    assert "not run" in reply and ".github/forksync.yml@main:" in reply and "suites[heavy].level" in reply, reply
    [run] = signoff.l3_runs_for(w.bot.store, "meta/triton", pr["number"])
    assert (run.status, run.verdict) == ("done", "error")
    # asked again while the file is broken: refused at once, naming the file, line and key
    await say(w, "alice", pr["number"], "/forksync l3 heavy please")
    await say(w, "alice", pr["number"], "/forksync l3 heavy")
    replies = await replies_on(w, pr["number"])
    assert "config-invalid" in codes(w, head)[1]
    assert any("not queued" in b and ".github/forksync.yml@main:" in b and "suites[heavy].level" in b
               for b in replies), replies


async def test_an_l3_result_that_never_arrives_turns_red_on_the_pr_and_the_gate(fake_github, tmp_path):
    w = await actions_world(fake_github, tmp_path, config=GREEN_L3)
    try:
        head = w.push_branch("forksync/chain-amd-silent", {"amd/k.txt": "k\n"}, "Touch amd")
        pr = await w.open_pr("forksync/chain-amd-silent")
        await w.bot.settle()
        await say(w, "alice", pr["number"], "/forksync l3 heavy")
        await schedules.l3_tick(await tick_ctx(w), "meta/triton")
        ctx = await tick_ctx(w)
        # heavy may take two attempts of 300 s (infra_retries: 1, the default), then the hour's grace
        collect = [n for n in await schedules.collect_tick(ctx, "meta/triton", now=time.time() + 2 * 300 + 3600 + 60)
                   if n.startswith("heavy@")]
        assert collect[0] == f"heavy@cpu on {head[:12]}: no result, counted red"
        [run] = signoff.l3_runs_for(w.bot.store, "meta/triton", pr["number"])
        assert (run.status, run.verdict) == ("done", "error")
        assert any("**L3 `heavy`**" in b and "**red**" in b and "workflow-failed" in b
                   for b in await replies_on(w, pr["number"]))
        assert codes(w, head)[1] == ["suite-error", "approval-missing", "l3-failed"]
    finally:
        await close_world(w)


async def test_a_signoff_of_a_subject_nobody_asked_for_is_refused_not_recorded(world):
    """A mistyped area (``llvm-pin`` for ``llvm``) by its owner used to be recorded as a "metric"
    sign-off that no gate rule ever reads, and the reply said "recorded"."""
    w = world
    w.push_branch("forksync/chain-llvm-typo", {"llvm/pin.txt": "llvm 23\n"}, "Bump the LLVM pin")
    pr = await w.open_pr("forksync/chain-llvm-typo")
    await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/labels", data={"labels": ["area:llvm"]})
    await w.bot.settle()
    await say(w, "carol", pr["number"], "/forksync signoff llvm-pin")
    assert signoff.signoffs_for(w.bot.store, "meta/triton", pr["number"]) == ()
    assert any("`/forksync signoff llvm-pin`: not recorded: `llvm-pin` is not a configured area" in b
               and "areas: amd, llvm" in b for b in await replies_on(w, pr["number"]))


async def test_l3_or_retest_on_a_closed_pr_says_it_does_not_run(world):
    """Nothing is queued, run or merged for a closed PR: the reply says so instead of "queued"."""
    w = world
    w.push_branch("forksync/chain-llvm-closed", {"llvm/pin.txt": "llvm 23\n"}, "Bump the LLVM pin again")
    pr = await w.open_pr("forksync/chain-llvm-closed")
    await w.bot.settle()
    await w.alice.patch(f"/repos/meta/triton/pulls/{pr['number']}", data={"state": "closed"})
    await w.bot.settle()
    for line in ("/forksync l3 heavy", "/forksync retest", "/forksync merge"):
        await say(w, "alice", pr["number"], line)
    replies = [r.split("\n", 1)[1] for r in await replies_on(w, pr["number"]) if r.startswith("<!-- forksync:reply:")]
    assert replies == [f"@alice `{line}`: not run: this PR is closed.\n"
                       for line in ("/forksync l3 heavy", "/forksync retest", "/forksync merge")]


async def answers(w, number: int) -> list[str]:
    """The first line of each answer to ``/forksync l3 heavy`` on PR ``number`` (after its marker)."""
    return [next(line for line in b.splitlines() if line.startswith("@"))
            for b in await replies_on(w, number) if "`/forksync l3 heavy`" in b]


async def test_a_second_l3_on_the_same_head_says_it_is_already_queued(world):
    """``/forksync l3 heavy`` asked twice on one head queues one run, and the second answer says
    it is already queued instead of claiming another; a new head is a new run."""
    w = world
    head = w.push_branch("forksync/chain-amd-twice", {"amd/t.txt": "t\n"}, "Touch amd")
    pr = await w.open_pr("forksync/chain-amd-twice")
    await w.bot.settle()
    await say(w, "alice", pr["number"], "/forksync l3 heavy")
    await say(w, "carol", pr["number"], "/forksync l3 heavy")
    first, second = await answers(w, pr["number"])
    assert first == f"@alice `/forksync l3 heavy`: L3 `heavy` queued (1 run(s)) on `{head[:12]}`."
    assert second == (f"@carol `/forksync l3 heavy`: L3 `heavy` is already queued on `{head[:12]}` "
                      "(1 run(s) waiting or running); nothing more queued.")
    assert [(r.status, r.head_sha, r.requested_by) for r in signoff.l3_runs_for(w.bot.store, "meta/triton", pr["number"])] == [
        ("queued", head, "alice")]

    from tests.e2e.test_validation_more import commit_on
    new = commit_on(w, "forksync/chain-amd-twice", {"amd/t2.txt": "t2\n"}, "Touch amd again")
    await w.bot.settle()
    await say(w, "carol", pr["number"], "/forksync l3 heavy")
    third = (await answers(w, pr["number"]))[-1]
    assert third == f"@carol `/forksync l3 heavy`: L3 `heavy` queued (1 run(s)) on `{new[:12]}`."
    assert sorted(r.head_sha for r in signoff.l3_runs_for(w.bot.store, "meta/triton", pr["number"])) == sorted([head, new])


async def test_an_l3_check_run_says_how_to_run_it_again_and_its_rerun_runs_it_again(world):
    """An L3 check run's summary told the reader `/forksync retest heavy` or "Re-run" runs it again:
    the retest answered "no required L1 suite named 'heavy' applies" and the Re-run did nothing a
    person could see."""
    from bot.fakegithub.events import check_run_event

    w = world
    head = w.push_branch("forksync/chain-amd-again", {"amd/k.txt": "k\n"}, "Touch amd")
    pr = await w.open_pr("forksync/chain-amd-again")
    await w.bot.settle()
    await say(w, "alice", pr["number"], "/forksync l3 heavy")
    await schedules.l3_tick(await tick_ctx(w), "meta/triton")
    first = w.run_of(head, "forksync/L3/heavy")
    assert "`/forksync l3 heavy` or \"Re-run\" runs this suite again" in first.output["summary"], first.output["summary"]
    assert "/forksync retest heavy" not in first.output["summary"]
    await say(w, "alice", pr["number"], "/forksync retest heavy")
    [reply] = [b for b in await replies_on(w, pr["number"]) if "`/forksync retest heavy`" in b]
    assert "`heavy` is an L3 suite: `/forksync l3 heavy` runs it on this PR" in reply, reply
    check_run_event(w.fake, w.fake.state.repo("meta", "triton"), first, "rerequested", w.fake.state.users["alice"])
    await w.bot.settle()
    runs = signoff.l3_runs_for(w.bot.store, "meta/triton", pr["number"])
    assert [(r.status, r.head_sha, r.requested_by) for r in runs] == [("done", head, "alice"), ("queued", head, "alice")]
    assert codes(w, head)[1] == ["approval-missing", "l3-pending"]


async def test_a_retest_of_an_unknown_suite_names_the_suites_it_can_run(world):
    w = world
    w.push_branch("forksync/chain-amd-typo", {"amd/k.txt": "k\n"}, "Touch amd")
    pr = await w.open_pr("forksync/chain-amd-typo")
    await w.bot.settle()
    await say(w, "alice", pr["number"], "/forksync retest unti")
    [reply] = [b for b in await replies_on(w, pr["number"]) if "`/forksync retest unti`" in b]
    assert "no required L1 suite named `unti` applies; L1 suites that apply here: unit" in reply, reply


async def test_a_signoff_the_gate_asks_for_says_how_to_run_l3_when_none_was_asked(world):
    """An area that requires L3 asked only for `/forksync signoff llvm`: an owner could sign off a
    change no L3 run ever measured, with no word that `/forksync l3 <workload>` exists."""
    w = world
    head = w.push_branch("forksync/chain-llvm-ask", {"llvm/pin.txt": "llvm 24\n"}, "Bump the LLVM pin")
    pr = await w.open_pr("forksync/chain-llvm-ask")
    await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/labels", data={"labels": ["area:llvm"]})
    await w.bot.settle()
    [line] = [x for x in w.run_of(head, "forksync/gate").output["summary"].splitlines() if "`l3-signoff-missing`" in x]
    assert ("needs `/forksync signoff llvm` from one of: carol; no L3 run was asked on this head: "
            "`/forksync l3 <workload>` runs one for the owners to read first (L3 suites: heavy)") in line, line
    await say(w, "alice", pr["number"], "/forksync l3 heavy")
    [line] = [x for x in w.run_of(head, "forksync/gate").output["summary"].splitlines() if "`l3-signoff-missing`" in x]
    assert "no L3 run was asked" not in line, line


async def test_a_rerun_of_an_l3_check_run_on_an_older_head_queues_no_run_on_that_head(world):
    """The Re-run of an L3 check run left on an older head (GitHub keeps showing it, and lists the
    PR by its branch) queued the workload on that dead head: the gate said `l3-stale` and the
    tick cancelled it, where the summary promised a run "again on the PR's head"."""
    from bot.fakegithub.events import check_run_event
    from tests.e2e.test_validation_more import commit_on

    w = world
    head = w.push_branch("forksync/chain-amd-moved", {"amd/k.txt": "k\n"}, "Touch amd")
    pr = await w.open_pr("forksync/chain-amd-moved")
    await w.bot.settle()
    await say(w, "alice", pr["number"], "/forksync l3 heavy")
    await schedules.l3_tick(await tick_ctx(w), "meta/triton")
    old = w.run_of(head, "forksync/L3/heavy")
    new = commit_on(w, "forksync/chain-amd-moved", {"amd/k2.txt": "k2\n"}, "Touch amd again")
    await w.bot.settle()
    check_run_event(w.fake, w.fake.state.repo("meta", "triton"), old, "rerequested", w.fake.state.users["alice"])
    await w.bot.settle()
    runs = signoff.l3_runs_for(w.bot.store, "meta/triton", pr["number"])
    stale = [(r.head_sha[:12], r.status) for r in runs if r.status == "queued" and r.head_sha != new]
    assert stale == [], (head[:12], new[:12])


async def test_a_command_that_fails_leaves_the_later_commands_of_its_comment_answered(world):
    """A comment of several commands ran them in order with nothing between one's error and the
    next: GitHub refusing the retest's check run ended the delivery, and `/forksync merge now`
    on the next line was never answered (nor was the retest)."""
    w = world
    w.push_branch("forksync/chain-amd-batch", {"amd/k.txt": "k\n"}, "Touch amd")
    pr = await w.open_pr("forksync/chain-amd-batch")
    await w.bot.settle()
    w.fake.faults.unprocessable("/repos/meta/triton/check-runs", "POST")
    await say(w, "alice", pr["number"], "/forksync retest\n/forksync merge now")
    bodies = await replies_on(w, pr["number"])
    assert [b for b in bodies if "`/forksync merge now`" in b] != [], bodies


async def test_a_rerun_of_an_l3_check_run_asked_by_another_app_queues_nothing(world):
    """Any App with checks: write can ask GitHub to re-run a check run (its rerequest API): the
    Re-run of an L3 check run queued the heavy workload for an App's bot account, which
    `/forksync l3` refuses (no collaborator permission), with no permission looked up at all."""
    from bot.fakegithub.events import check_run_event

    w = world
    head = w.push_branch("forksync/chain-amd-app", {"amd/k.txt": "k\n"}, "Touch amd")
    pr = await w.open_pr("forksync/chain-amd-app")
    await w.bot.settle()
    await say(w, "alice", pr["number"], "/forksync l3 heavy")
    await schedules.l3_tick(await tick_ctx(w), "meta/triton")
    app_bot = w.fake.state.user("other-ci[bot]", type="Bot")
    check_run_event(w.fake, w.fake.state.repo("meta", "triton"), w.run_of(head, "forksync/L3/heavy"), "rerequested", app_bot)
    await w.bot.settle()
    runs = signoff.l3_runs_for(w.bot.store, "meta/triton", pr["number"])
    assert [(r.status, r.requested_by) for r in runs] == [("done", "alice")]


async def test_a_rerun_of_one_platforms_l3_check_run_queues_that_platform_only(fake_github, tmp_path):
    """GitHub's Re-run is one check run's, `forksync/L3/heavy@h100`: it queued the workload on
    every platform of the suite, so the cpu run that was green ran again for hours and the gate
    waited on it, and every owner's sign-off after it had to be given again."""
    from bot.fakegithub.events import check_run_event

    two = CONFIG + L3_SUITE + "    platforms: [cpu, h100]\n"
    w = await make_world(fake_github, tmp_path, files=fork_files(config=two))
    try:
        head = w.push_branch("forksync/chain-amd-plat", {"amd/k.txt": "k\n"}, "Touch amd")
        pr = await w.open_pr("forksync/chain-amd-plat")
        await w.bot.settle()
        await say(w, "alice", pr["number"], "/forksync l3 heavy")
        for plat in ("cpu", "h100"):
            await schedules.l3_tick(await tick_ctx(w), "meta/triton", platforms=(plat,))
        runs = signoff.l3_runs_for(w.bot.store, "meta/triton", pr["number"])
        assert sorted((r.platform, r.status) for r in runs) == [("cpu", "done"), ("h100", "done")]
        check_run_event(w.fake, w.fake.state.repo("meta", "triton"), w.run_of(head, "forksync/L3/heavy@h100"),
                        "rerequested", w.fake.state.users["alice"])
        await w.bot.settle()
        runs = signoff.l3_runs_for(w.bot.store, "meta/triton", pr["number"])
        assert sorted(r.platform for r in runs if r.status == "queued") == ["h100"]
    finally:
        await close_world(w)


async def test_a_command_that_fails_to_be_retried_is_answered_once_and_runs_again_alone(world):
    """A retryable failure (GitHub 502 on the retest's check run) must not cost the next line its
    run, and the delivery's retry must run only the failed command: the merge line is answered
    once, and the retest is answered by its own reply after the retry."""
    w = world
    w.push_branch("forksync/chain-amd-retry", {"amd/k.txt": "k\n"}, "Touch amd")
    pr = await w.open_pr("forksync/chain-amd-retry")
    await w.bot.settle()
    w.fake.faults.server_error("/repos/meta/triton/check-runs", "POST", times=8)
    await say(w, "alice", pr["number"], "/forksync retest\n/forksync merge now")
    await w.bot.settle()
    bodies = await replies_on(w, pr["number"])
    assert len([b for b in bodies if "`/forksync merge now`" in b]) == 1, bodies
    retest = [b for b in bodies if "`/forksync retest`" in b]
    assert [b for b in retest if "failed: GitHub answered 502" in b] != [], bodies
    assert [b for b in retest if "failed:" not in b] != [], bodies


async def test_a_retest_whose_reply_github_fails_runs_its_suites_once_and_answers_the_next_line(world):
    """A retest runs every suite again (force): its side effects are done once it returns. When
    GitHub then fails its reply (502), the retest must not be run a second time by the delivery's
    retry (a second GPU run of every suite, a second check run each), and the next line of the
    comment is answered in the same delivery, as for a command that fails while it runs."""
    w = world
    head = w.push_branch("forksync/chain-amd-reply", {"amd/k.txt": "k\n"}, "Touch amd")
    pr = await w.open_pr("forksync/chain-amd-reply")
    await w.bot.settle()

    async def runs() -> int:
        got = await w.alice.getitem(f"/repos/meta/triton/commits/{head}/check-runs?filter=all&per_page=100")
        return len([r for r in got["check_runs"] if r["name"].startswith("forksync/L1")])

    before = await runs()
    assert before > 0
    await w.people["alice"].post(f"/repos/meta/triton/issues/{pr['number']}/comments",
                                 data={"body": "/forksync retest\n/forksync hold"})
    w.fake.faults.server_error(f"/repos/meta/triton/issues/{pr['number']}/comments", "POST", times=4)
    await w.bot.settle()

    assert await runs() == 2 * before
    bodies = await replies_on(w, pr["number"])
    assert len([b for b in bodies if "`/forksync retest`" in b]) == 1, bodies
    assert len([b for b in bodies if "`/forksync hold`" in b]) == 1, bodies
