"""More of validation on GitHub: conflict markers, the no-suites fallback, non-collaborators,
annotation batches, the github-actions backend's results, and the reconcile pass for PRs whose
webhooks never reached the bot."""
import io
import zipfile

import pytest

from bot.app import schedules
from bot.validation.checks import finish_suite_run, start_suite_run
from gpu_runner.result import Counts, Environment, Reason, RunResult, TestResult
from tests.support.validation_world import CONFIG, L3_CONFIG, actions_world, close_world, fork_files, make_world, tick_ctx


@pytest.fixture
async def world(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path)
    yield w
    await close_world(w)


def commit_on(w, branch: str, files: dict[str, str], message: str) -> str:
    """One more commit on ``branch`` (pushed)."""
    from tests.support.github import commit_files, git

    git(w.work, "checkout", "-q", branch)
    sha = commit_files(w.work, files, message)
    git(w.work, "push", "-q", "origin", f"{branch}:refs/heads/{branch}")
    return sha


def codes(w, sha):
    run = w.run_of(sha, "forksync/gate")
    return run.conclusion, [line.split("`")[1] for line in run.output["summary"].splitlines() if line.startswith("| ❌")]


async def test_conflict_markers_never_merge(world):
    w = world
    text = "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> upstream\n"
    # a 9-character, tab-terminated marker deep in a file too large for the API's patch text
    big = "".join(f"row {i}\n" for i in range(60_000)) + "<<<<<<<<<\tHEAD\nx\n=========\ny\n>>>>>>>>>\tup\n"
    head = w.push_branch("forksync/bundle-markers", {"src/x.py": text, "data/big.txt": big,
                                                     "docs/x.rst": "Title\n=======\n"}, "Resolve badly")
    pr = await w.open_pr("forksync/bundle-markers")
    await w.bot.settle()
    assert w.run_of(head, "forksync/L1/unit").conclusion == "success"
    assert codes(w, head) == ("failure", ["conflict-markers"])
    assert "the head adds conflict markers in: data/big.txt, src/x.py |" in w.run_of(head, "forksync/gate").output["summary"]
    assert (await w.pr(pr["number"]))["merged"] is False


async def test_a_conflict_commit_in_the_range_never_merges(world):
    w = world
    up = "0123456789abcdef0123456789abcdef01234567"
    w.push_branch("forksync/chain-stopped", {"NOTES.md": "picked\n"}, "Pick one")
    head = commit_on(w, "forksync/chain-stopped", {"CONFLICT.md": "waiting for a person\n"},
                     f"forksync: conflict picking {up[:12]}\n\nForksync-Conflict: {up}\n")
    await w.open_pr("forksync/chain-stopped")
    await w.bot.settle()
    assert codes(w, head)[1][0] == "conflict-commit"
    assert f"(Forksync-Conflict: {up})" in w.run_of(head, "forksync/gate").output["summary"]


async def test_a_head_the_bot_cannot_fetch_is_never_green(world, monkeypatch):
    w = world

    async def unreachable(full, sha=None):
        raise RuntimeError("git fetch failed for meta+triton.git: connection refused")

    head = w.push_branch("feature/unreadable", {"NOTES.md": "u\n"}, "Note")
    pr = await w.open_pr("feature/unreadable")
    await w.bot.settle()
    assert codes(w, head) == ("success", [])                 # a person's PR: green, waits for /forksync merge
    monkeypatch.setattr(w.bot.validation.local, "fetch", unreachable)
    await w.bot.validation.evaluate(await tick_ctx(w), "meta/triton", pr["number"])
    assert codes(w, head) == ("failure", ["markers-unchecked"])
    assert "connection refused" in w.run_of(head, "forksync/gate").output["summary"]


async def test_without_suites_the_gate_never_merges_with_no_checks(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path, files=fork_files(config=CONFIG.split("suites:")[0]))
    try:
        head = w.push_branch("forksync/bundle-nosuites", {"NOTES.md": "n\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-nosuites")
        await w.bot.settle()
        assert w.run_of(head, "forksync/L1/unit") is None
        assert codes(w, head) == ("failure", ["no-required-checks"])
        assert (await w.pr(pr["number"]))["merged"] is False
    finally:
        await close_world(w)


async def test_a_non_collaborators_code_waits_for_a_writers_retest(world):
    w = world
    w.fake.add_collaborator(w.fork, "erin", "write")      # to push and open the PR in the local GitHub …
    w.fake.add_token("erin-token", "erin")
    from bot.github.client import token_client
    from tests.support.github import FAST_RETRY
    erin = token_client(w.bot._people_session, "erin-token", base_url=w.fake.url, retry=FAST_RETRY)
    head = w.push_branch("forksync/bundle-erin", {"NOTES.md": "e\n"}, "Erin's note")
    w.fake.webhooks.auto_deliver = False
    pr = await erin.post("/repos/meta/triton/pulls", data={"title": "x", "head": "forksync/bundle-erin", "base": "main"})
    w.fake.state.repo("meta", "triton").collaborators.pop("erin")   # … then erin is no collaborator
    w.fake.webhooks.auto_deliver = True
    await w.fake.webhooks.flush()
    await w.bot.settle()
    assert w.run_of(head, "forksync/L1/unit") is None                   # nothing ran on GPU runners
    conclusion, blocking = codes(w, head)
    assert blocking[:2] == ["awaiting-retest", "missing-result"]
    await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync retest"})
    await w.bot.settle()
    assert w.run_of(head, "forksync/L1/unit").conclusion == "success"
    replies = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{pr['number']}/comments")
               if c["user"]["login"] == "forksync[bot]"]
    assert any("@alice `/forksync retest`: retest of all required suites: forksync/L1/unit @ " in r
               and ": green; " in r for r in replies), replies
    assert (await w.pr(pr["number"]))["merged"] is True


def _red_result(sha: str, n: int) -> RunResult:
    tests = [TestResult(id=f"tests.test_many::test_{i}", name=f"test_{i}", classname="tests.test_many",
                        outcome="failed", message=f"assert {i} == -1",
                        traceback=f"tests/test_many.py:{10 + i}: AssertionError") for i in range(n)]
    return RunResult(suite="unit", level="L1", commit=sha, verdict="red", outcome="fail",
                     reasons=[Reason(code="test-failures", detail=f"{n} failed")],
                     counts=Counts(total=n, failed=n), tests=tests, environment=Environment(runner_id="t"))


async def test_annotations_go_out_fifty_per_update_and_are_appended(world):
    w = world
    ctx = await tick_ctx(w)
    sha = w.push_branch("side", {"z.txt": "z\n"}, "z")
    run = await start_suite_run(ctx.gh, "meta/triton", sha, "forksync/L1/unit", "L1:unit:cpu", suite="unit",
                                level="L1", platform="cpu", backend="local", now=1e9)
    sent = await finish_suite_run(ctx.gh, "meta/triton", run["id"], _red_result(sha, 120), now=1e9)
    assert sent == 120
    stored = w.fake.state.repo("meta", "triton").check_runs[run["id"]]
    assert len(stored.annotations) == 120
    assert [a["start_line"] for a in stored.annotations[:3]] == [10, 11, 12]
    assert stored.annotations[119]["title"] == "tests.test_many::test_119"
    assert [r["status"] for r in w.fake.requests_for("checks/update")] == [200, 200, 200]
    assert "(first 20 of 120)" in stored.output["summary"]


def _zip(result: RunResult) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("result.json", result.to_json())
    return buf.getvalue()


async def test_github_actions_results_arrive_with_workflow_run_and_merge(fake_github, tmp_path):
    w = await actions_world(fake_github, tmp_path)
    try:
        head = w.push_branch("forksync/bundle-gha", {"NOTES.md": "g\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-gha")
        await w.bot.settle()
        repo = w.fake.state.repo("meta", "triton")
        (run,) = repo.workflow_runs.values()
        assert (run.inputs["suite"], run.inputs["commit"]) == ("unit", head)
        assert codes(w, head) == (None, ["pending-result"])
        green = RunResult(suite="unit", level="L1", commit=head, verdict="green", outcome="pass",
                          counts=Counts(total=3, passed=3), environment=Environment(runner_id="gpu-7"))
        w.fake.complete_workflow_run(repo, run.id, "success", {f"forksync-result-{run.inputs['request_id']}": _zip(green)})
        await w.bot.settle()          # the workflow_run event's sender is the bot: the loop guard drops it
        assert (await w.pr(pr["number"]))["merged"] is False
        # what GitHub sends when a person re-runs the job (sender: the person); the run's
        # display_title is the workflow's run-name (the local GitHub renders the file name there)
        from bot.fakegithub.events import _common
        payload = w.fake.webhooks.build("workflow_run", "completed", {
            **_common(w.fake, repo, w.fake.state.users["alice"]),
            "workflow_run": {**w.fake.render.workflow_run(repo, run),
                             "display_title": f"forksync-gpu unit {head} cpu {run.inputs['request_id']}"}})
        await w.fake.webhooks.deliver("workflow_run", payload, validate=False)
        await w.bot.settle()
        l1 = w.run_of(head, "forksync/L1/unit")
        assert (l1.conclusion, l1.output["title"]) == ("success", "3 passed")
        assert "runner `gpu-7`" in l1.output["summary"]
        assert (await w.pr(pr["number"]))["merged"] is True
    finally:
        await close_world(w)


async def test_reconcile_validates_a_pr_whose_webhooks_never_arrived(world):
    w = world
    head = w.push_branch("forksync/bundle-quiet", {"NOTES.md": "q\n"}, "Note")
    w.fake.webhooks.auto_deliver = False
    pr = await w.open_pr("forksync/bundle-quiet")
    w.fake.webhooks.held.clear()
    w.fake.webhooks.auto_deliver = True
    await w.bot.settle()
    assert w.run_of(head, "forksync/gate") is None
    notes = await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert any("gate: Ready to merge" in n for n in notes), notes
    assert (await w.pr(pr["number"]))["merged"] is True
    assert await schedules.reconcile_tick(await tick_ctx(w), "meta/triton") == []


async def test_l3_on_demand_runs_on_a_tick_and_answers_on_the_pr(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path, files=fork_files(config=L3_CONFIG))
    try:
        head = w.push_branch("forksync/chain-amd", {"amd/k.txt": "k\n"}, "Touch amd")
        pr = await w.open_pr("forksync/chain-amd")
        await w.bot.settle()
        assert codes(w, head) == ("failure", ["approval-missing"])
        await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync l3 heavy"})
        await w.bot.settle()
        notes = await schedules.l3_tick(await tick_ctx(w), "meta/triton")
        assert notes[0] == f"L3 heavy@cpu on #{pr['number']}: green"
        assert notes[1] == f"#{pr['number']} gate: Blocked: 1 condition not met — approval-missing(amd)"
        l3 = w.run_of(head, "forksync/L3/heavy")
        assert (l3.conclusion, l3.output["title"]) == ("success", "3 passed")
        bodies = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{pr['number']}/comments")
                  if c["user"]["login"] == "forksync[bot]"]
        assert any(f"**L3 `heavy`** on `cpu` for `{head[:12]}` (requested by @alice): **green** — 3 passed." in b
                   for b in bodies)
        assert await schedules.l3_tick(await tick_ctx(w), "meta/triton") == []          # nothing queued any more
        from bot.validation import signoff
        assert [(r.status, r.verdict) for r in signoff.l3_runs_for(w.bot.store, "meta/triton", pr["number"])] == [
            ("done", "pass")]
    finally:
        await close_world(w)


async def test_an_actions_result_that_never_arrives_turns_red(fake_github, tmp_path):
    w = await actions_world(fake_github, tmp_path)
    try:
        head = w.push_branch("forksync/bundle-silent", {"NOTES.md": "s\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-silent")
        await w.bot.settle()
        ctx = await tick_ctx(w)
        import time
        assert await schedules.collect_tick(ctx, "meta/triton", now=time.time() + 60) == []      # not late yet
        notes = await schedules.collect_tick(ctx, "meta/triton", now=time.time() + 300 + 3600 + 60)
        assert notes[0] == f"unit@cpu on {head[:12]}: no result, counted red"
        l1 = w.run_of(head, "forksync/L1/unit")
        assert (l1.conclusion, l1.output["title"]) == ("failure", "Red: workflow-failed")
        assert codes(w, head) == ("failure", ["suite-error"])
        assert (await w.pr(pr["number"]))["merged"] is False
    finally:
        await close_world(w)


async def test_l3_through_github_actions_is_answered_when_its_run_completes(fake_github, tmp_path):
    from bot.fakegithub.events import _common
    from bot.validation import signoff

    w = await actions_world(fake_github, tmp_path, config=L3_CONFIG)
    try:
        head = w.push_branch("forksync/chain-amd2", {"amd/k.txt": "k2\n"}, "Touch amd")
        pr = await w.open_pr("forksync/chain-amd2")
        await w.bot.settle()
        await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync l3 heavy"})
        await w.bot.settle()
        notes = await schedules.l3_tick(await tick_ctx(w), "meta/triton")
        assert len(notes) == 1 and notes[0].startswith(f"L3 forksync/L3/heavy @ {head[:12]}: dispatched")
        repo = w.fake.state.repo("meta", "triton")
        run = next(r for r in repo.workflow_runs.values() if r.inputs["suite"] == "heavy")
        green = RunResult(suite="heavy", level="L3", commit=head, verdict="green", outcome="pass",
                          counts=Counts(total=3, passed=3), environment=Environment(runner_id="h200-3"))
        w.fake.complete_workflow_run(repo, run.id, "success",
                                     {f"forksync-result-{run.inputs['request_id']}": _zip(green)})
        payload = w.fake.webhooks.build("workflow_run", "completed", {
            **_common(w.fake, repo, w.fake.state.users["alice"]),
            "workflow_run": {**w.fake.render.workflow_run(repo, run),
                             "display_title": f"forksync-gpu heavy {head} cpu {run.inputs['request_id']}"}})
        await w.fake.webhooks.deliver("workflow_run", payload, validate=False)
        await w.bot.settle()
        assert w.run_of(head, "forksync/L3/heavy").conclusion == "success"
        bodies = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{pr['number']}/comments")
                  if c["user"]["login"] == "forksync[bot]"]
        assert any("**L3 `heavy`** on `cpu`" in b and "**green** — 3 passed." in b for b in bodies)
        assert [(r.status, r.verdict) for r in signoff.l3_runs_for(w.bot.store, "meta/triton", pr["number"])] == [
            ("done", "pass")]
    finally:
        await close_world(w)


async def test_a_persons_pr_merges_only_on_forksync_merge(world):
    w = world
    head = w.push_branch("feature/docs", {"NOTES.md": "p\n"}, "Docs")
    pr = await w.open_pr("feature/docs")
    await w.bot.settle()
    gate = w.run_of(head, "forksync/gate")
    assert gate.conclusion == "success" and "Not a sync PR" in gate.output["text"]
    assert (await w.pr(pr["number"]))["merged"] is False
    await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync merge"})
    await w.bot.settle()
    assert (await w.pr(pr["number"]))["merged"] is True
    replies = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{pr['number']}/comments")
               if c["user"]["login"] == "forksync[bot]"]
    assert any(f"merged `{head[:12]}` by rebase" in r for r in replies), replies


async def test_a_signoff_after_the_approval_lets_the_gate_merge(world):
    w = world
    head = w.push_branch("forksync/chain-llvm2", {"llvm/pin.txt": "llvm 21\n"}, "Bump the LLVM pin")
    pr = await w.open_pr("forksync/chain-llvm2")
    await w.bot.settle()
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert codes(w, head) == ("failure", ["l3-signoff-missing"])
    await w.people["carol"].post(f"/repos/meta/triton/issues/{pr['number']}/comments",
                                 data={"body": "/forksync signoff llvm"})
    await w.bot.settle()
    assert (await w.pr(pr["number"]))["merged"] is True
    replies = [c["body"] async for c in w.people["carol"].getiter(f"/repos/meta/triton/issues/{pr['number']}/comments")
               if c["user"]["login"] == "forksync[bot]"]
    assert any(f"sign-off of `llvm` recorded on `{head[:12]}`." in r and "gate: Ready to merge" in r for r in replies)


async def replies_on(w, number: int) -> list[str]:
    return [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{number}/comments")
            if c["user"]["login"] == "forksync[bot]"]


async def test_forksync_merge_without_suites_goes_through_the_gate(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path, files=fork_files(config=CONFIG.split("suites:")[0]))
    try:
        head = w.push_branch("forksync/bundle-fallback", {"NOTES.md": "f\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-fallback")
        await w.bot.settle()
        await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync merge"})
        await w.bot.settle()
        [reply] = await replies_on(w, pr["number"])
        assert "@alice `/forksync merge`: #1 gate: Blocked: 1 condition not met — no-required-checks" in reply
        assert "| ❌ | `no-required-checks` |" in reply                 # the gate's findings in the reply
        assert (await w.pr(pr["number"]))["merged"] is False
        # another CI's green commit status is a check the fallback counts
        w.fake.set_status(w.fork, head, "ci/oss", "success")
        await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync  merge"})
        await w.bot.settle()
        assert (await w.pr(pr["number"]))["merged"] is True
    finally:
        await close_world(w)


async def test_a_required_status_past_the_first_page_of_statuses_is_read(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path, files=fork_files(config=CONFIG))
    w.fork.required_checks = ["ci/zz-required"]
    try:
        head = w.push_branch("forksync/bundle-manyci", {"NOTES.md": "t\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-manyci")
        # a fork with many CIs: GitHub lists a commit's statuses 30 a page, the required one sorts last
        for k in range(40):
            w.fake.set_status(w.fork, head, f"ci/aa-{k:02d}", "success")
        w.fake.set_status(w.fork, head, "ci/zz-required", "success")
        await w.bot.settle()
        assert codes(w, head) == ("success", [])
        await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync merge"})
        await w.bot.settle()
        assert (await w.pr(pr["number"]))["merged"] is True
    finally:
        await close_world(w)


async def test_the_forks_own_ci_is_required_too(fake_github, tmp_path):
    config = CONFIG + "gate:\n  required_checks: [internal-ci]\n"
    w = await make_world(fake_github, tmp_path, files=fork_files(config=config))
    w.fork.required_checks = ["ci/oss"]                    # branch protection on main
    try:
        head = w.push_branch("forksync/bundle-twoci", {"NOTES.md": "t\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-twoci")
        await w.bot.settle()
        assert w.run_of(head, "forksync/L1/unit").conclusion == "success"
        gate = w.run_of(head, "forksync/gate")
        assert gate.status == "in_progress"                # waiting for the other CIs, not red
        assert codes(w, head)[1] == ["check-pending", "check-pending"]
        assert "| ❌ | `check-pending` | ci/oss | required, not reported on this head yet |" in gate.output["summary"]
        assert "| ❌ | `check-pending` | internal-ci | required, not reported on this head yet |" in gate.output["summary"]
        w.fake.set_status(w.fork, head, "ci/oss", "success")
        w.fake.set_status(w.fork, head, "internal-ci", "failure", description="2 tests failed")
        await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync merge"})
        await w.bot.settle()
        assert codes(w, head) == ("failure", ["check-failed"])
        assert "| ❌ | `check-failed` | internal-ci | status failure |" in (await replies_on(w, pr["number"]))[-1]
        assert (await w.pr(pr["number"]))["merged"] is False
        w.fake.set_status(w.fork, head, "internal-ci", "pending")
        await w.bot.validation.evaluate(await tick_ctx(w), "meta/triton", pr["number"])
        assert codes(w, head)[1] == ["check-pending"]
        w.fake.set_status(w.fork, head, "internal-ci", "success")
        await w.bot.validation.evaluate(await tick_ctx(w), "meta/triton", pr["number"])
        assert (await w.pr(pr["number"]))["merged"] is True
    finally:
        await close_world(w)



async def test_tests_skipped_by_a_pr_are_red_and_newly_skipped(world):
    w = world
    from tests.support.validation_world import TESTS
    hidden = "import pytest\n" + TESTS.replace("def test_two", "@pytest.mark.skip(reason='later')\ndef test_two") \
        .replace("def test_three", "@pytest.mark.xfail(reason='wip')\ndef test_three")
    hidden = hidden.replace("assert add(-1, 1) == 0", "assert add(-1, 1) == 5")
    head = w.push_branch("forksync/bundle-skips", {"tests_fork/test_basic.py": hidden}, "Skip what breaks")
    await w.open_pr("forksync/bundle-skips")
    await w.bot.settle()
    unit = w.run_of(head, "forksync/L1/unit")
    assert (unit.conclusion, unit.output["title"]) == ("failure", "Red: count-mismatch")
    assert ("1 tests ran, the suite expects exactly 3: 2 skipped or xfail tests do not count; make them run, or, "
            "if they are meant to skip here, set expected_tests: 1") in unit.output["summary"]
    assert codes(w, head) == ("failure", ["suite-error", "newly-skipped"])
    assert ("2 test(s) ran on the base" in w.run_of(head, "forksync/gate").output["summary"])


async def test_an_invalid_trusted_config_never_lets_a_sync_pr_merge(fake_github, tmp_path):
    """The default branch's forksync.yml holds a mistake (here an unknown key in `triage:`): its
    suites, areas (owners, L3 sign-off) and required checks are unknown, so nothing may merge —
    not on the no-suites fallback with another CI's one green status."""
    config = CONFIG + "gate:\n  required_checks: [internal-ci]\ntriage:\n  open_after_nigths: 2\n"
    w = await make_world(fake_github, tmp_path, files=fork_files(config=config))
    try:
        head = w.push_branch("forksync/bundle-badcfg", {"llvm/x.cpp": "x\n"}, "Touch the llvm area")
        w.fake.set_status(w.fork, head, "ci/oss", "success")
        pr = await w.open_pr("forksync/bundle-badcfg")
        await w.bot.settle()
        await w.bot.validation.evaluate(await tick_ctx(w), "meta/triton", pr["number"])
        assert (await w.pr(pr["number"]))["merged"] is False
        conclusion, blocking = codes(w, head)
        assert conclusion == "failure" and blocking == ["config-invalid"]
        assert "open_after_nigths" in w.run_of(head, "forksync/gate").output["summary"]
    finally:
        await close_world(w)


async def test_a_commit_pushed_after_the_signoff_needs_a_new_one_whatever_its_date(world):
    """A commit made before the owner's approval and sign-off, pushed after them: its committer
    date is older than both, yet the owner never saw it — the approval and L3 sign-off are stale."""
    import os
    import subprocess
    import time

    from tests.support.github import GIT_ENV, git

    w = world
    head = w.push_branch("feature/llvm", {"llvm/pin.txt": "llvm 21\n"}, "Bump the LLVM pin")
    pr = await w.open_pr("feature/llvm")
    # a second commit, made now, pushed only after the sign-off (its dates say an hour ago)
    (w.work / "llvm" / "pin.txt").write_text("llvm 22-unreviewed\n")
    git(w.work, "add", "-A")
    hour_ago = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600))
    subprocess.run(["git", "commit", "-q", "-m", "Bump again"], cwd=w.work, check=True, capture_output=True,
                   env={**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": hour_ago, "GIT_AUTHOR_DATE": hour_ago})
    later = git(w.work, "rev-parse", "HEAD")
    await w.bot.settle()
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
    await w.people["carol"].post(f"/repos/meta/triton/issues/{pr['number']}/comments",
                                 data={"body": "/forksync signoff llvm"})
    await w.bot.settle()
    assert w.run_of(head, "forksync/gate").conclusion == "success"
    git(w.work, "push", "-q", "origin", "feature/llvm:refs/heads/feature/llvm")
    await w.bot.settle()
    assert w.run_of(later, "forksync/L1/unit").conclusion == "success"
    await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync merge"})
    await w.bot.settle()
    assert (await w.pr(pr["number"]))["merged"] is False
    assert set(codes(w, later)[1]) == {"approval-missing", "l3-signoff-missing"}


async def test_an_earlier_runs_result_never_answers_a_forced_rerun(fake_github, tmp_path):
    """The collect tick (the worker's poll loop, beside the delivery in progress) picks up the
    first run's green result and downloads it; meanwhile a writer's ``/forksync retest`` dispatches
    a new run on the same head. The first run's result arrives after that: it answers a run nobody
    waits for any more, so it is recorded as superseded and never turns the PR green — the gate
    waits for the re-run, whose red result then counts."""
    import asyncio

    from bot.validation import store as vstore
    from bot.validation.service import downloader_for
    w = await actions_world(fake_github, tmp_path)
    try:
        head = w.push_branch("forksync/bundle-rerun", {"NOTES.md": "r\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-rerun")
        await w.bot.settle()
        repo = w.fake.state.repo("meta", "triton")
        (first,) = repo.workflow_runs.values()
        green = RunResult(suite="unit", level="L1", commit=head, verdict="green", outcome="pass",
                          counts=Counts(total=3, passed=3), environment=Environment(runner_id="gpu-old"))
        w.fake.complete_workflow_run(repo, first.id, "success", {f"forksync-result-{first.inputs['request_id']}": _zip(green)})
        await w.bot.settle()

        downloading, go_on = asyncio.Event(), asyncio.Event()
        ctx = await tick_ctx(w)
        download = downloader_for(ctx)

        async def held(url):
            downloading.set()
            await go_on.wait()
            return await download(url)

        # what collect_tick hands on for the finished run (the local GitHub renders the workflow's
        # file name as the run's title; GitHub renders its run-name)
        run = {**w.fake.render.workflow_run(repo, first),
               "display_title": f"forksync-gpu unit {head} cpu {first.inputs['request_id']}"}
        tick = asyncio.create_task(w.bot.validation.on_workflow_run(
            ctx, {"action": "completed", "workflow_run": run, "repository": {"full_name": "meta/triton"}}, held))
        await asyncio.wait_for(downloading.wait(), 60)
        await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync retest"})
        await w.bot.settle()
        (second,) = [r for r in repo.workflow_runs.values() if r.id != first.id]
        assert second.inputs["commit"] == head
        go_on.set()
        notes = await asyncio.wait_for(tick, 60)

        row = vstore.get(w.bot.store, "meta/triton", head, "unit", "cpu")
        assert (row["status"], row["request_id"]) == ("pending", second.inputs["request_id"])
        assert (await w.pr(pr["number"]))["merged"] is False
        assert codes(w, head) == (None, ["pending-result"])
        assert f"request {first.inputs['request_id']}: pass" in row["superseded"]
        assert f"unit @ {head[:12]}: result of request {first.inputs['request_id']} superseded by a re-run " \
               f"(request {second.inputs['request_id']}); not counted" in notes

        red = _red_result(head, 1)
        w.fake.complete_workflow_run(repo, second.id, "failure", {f"forksync-result-{second.inputs['request_id']}": _zip(red)})
        run = {**w.fake.render.workflow_run(repo, second),
               "display_title": f"forksync-gpu unit {head} cpu {second.inputs['request_id']}"}
        await w.bot.validation.on_workflow_run(
            ctx, {"action": "completed", "workflow_run": run, "repository": {"full_name": "meta/triton"}}, download)
        row = vstore.get(w.bot.store, "meta/triton", head, "unit", "cpu")
        assert (row["status"], row["verdict"]) == ("done", "fail")
        assert codes(w, head)[0] == "failure"
        assert (await w.pr(pr["number"]))["merged"] is False
    finally:
        await close_world(w)


async def test_a_failing_run_sent_again_is_pending_and_its_red_is_kept_as_replaced(fake_github, tmp_path):
    """A red suite run on the head, then a writer's ``/forksync retest`` on the same head: the gate
    waits for the re-run (``pending-result``, "running") and lists no failure; the red is the
    earlier check run's (still completed as failure) and the row keeps it as replaced, with that
    check run's address — the row's own ``check_url`` is the re-run's."""
    from bot.fakegithub.events import _common
    from bot.validation import store as vstore

    w = await actions_world(fake_github, tmp_path)
    try:
        head = w.push_branch("forksync/bundle-again", {"NOTES.md": "a\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-again")
        await w.bot.settle()
        repo = w.fake.state.repo("meta", "triton")
        (first,) = repo.workflow_runs.values()
        w.fake.complete_workflow_run(repo, first.id, "failure",
                                     {f"forksync-result-{first.inputs['request_id']}": _zip(_red_result(head, 1))})
        payload = w.fake.webhooks.build("workflow_run", "completed", {
            **_common(w.fake, repo, w.fake.state.users["alice"]),
            "workflow_run": {**w.fake.render.workflow_run(repo, first),
                             "display_title": f"forksync-gpu unit {head} cpu {first.inputs['request_id']}"}})
        await w.fake.webhooks.deliver("workflow_run", payload, validate=False)
        await w.bot.settle()
        assert codes(w, head) == ("failure", ["new-failure"])
        red_run = w.run_of(head, "forksync/L1/unit")
        red_url = vstore.get(w.bot.store, "meta/triton", head, "unit", "cpu")["check_url"]
        assert red_url.endswith(f"/runs/{red_run.id}")

        await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync retest"})
        await w.bot.settle()
        (second,) = [r for r in repo.workflow_runs.values() if r.id != first.id]
        gate = w.run_of(head, "forksync/gate")
        assert (gate.status, gate.conclusion) == ("in_progress", None)
        assert [line for line in gate.output["summary"].splitlines() if line.startswith("| ❌")] == [
            "| ❌ | `pending-result` | unit/cpu | running |"]
        assert "new-failure" not in gate.output["summary"] and "test_0" not in gate.output["summary"]
        rerun = w.run_of(head, "forksync/L1/unit")
        assert rerun.id != red_run.id and (rerun.status, rerun.output["title"]) == ("in_progress", "Running on cpu")
        assert (repo.check_runs[red_run.id].status, repo.check_runs[red_run.id].conclusion) == ("completed", "failure")
        row = vstore.get(w.bot.store, "meta/triton", head, "unit", "cpu")
        assert (row["status"], row["verdict"]) == ("pending", "pending") and row["check_url"].endswith(f"/runs/{rerun.id}")
        assert [(x["how"], x["attempt"], x["outcome"], x["by"], x["check_url"]) for x in vstore.superseded_runs(row)] == [
            ("replaced", first.inputs["request_id"], "fail", second.inputs["request_id"], red_url)]
    finally:
        await close_world(w)


async def test_a_retest_delivered_after_a_push_it_never_saw_does_not_authorise_that_push(world):
    """A writer's ``/forksync retest`` authorises the head they looked at. GitHub does not deliver
    in order: the non-collaborator pushes right after the comment, and the comment's delivery
    reaches forksync after the push's. The new head appeared after the comment was written, so
    the comment says nothing about it: its code does not run on the GPU runners."""
    w = world
    w.fake.add_collaborator(w.fork, "erin", "write")
    w.fake.add_token("erin-token", "erin")
    from bot.github.client import token_client
    from tests.support.github import FAST_RETRY
    erin = token_client(w.bot._people_session, "erin-token", base_url=w.fake.url, retry=FAST_RETRY)
    head = w.push_branch("forksync/bundle-erin", {"NOTES.md": "e\n"}, "Erin's note")
    w.fake.webhooks.auto_deliver = False
    pr = await erin.post("/repos/meta/triton/pulls", data={"title": "x", "head": "forksync/bundle-erin", "base": "main"})
    w.fake.state.repo("meta", "triton").collaborators.pop("erin")
    w.fake.webhooks.auto_deliver = True
    await w.fake.webhooks.flush()
    await w.bot.settle()
    assert codes(w, head)[1][:1] == ["awaiting-retest"]
    w.fake.webhooks.auto_deliver = False
    await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync retest"})
    import time
    w.svc.now = lambda: time.time() + 2          # the push comes a little later (GitHub stamps to the second)
    pushed = w.push_branch("forksync/bundle-erin", {"NOTES.md": "e, and what alice never saw\n"}, "More",
                           base="forksync/bundle-erin")
    await w.fake.refresh()
    w.fake.webhooks.auto_deliver = True
    await w.fake.webhooks.flush(order="reverse")      # the push's events first, then the comment
    await w.bot.settle()
    assert w.run_of(pushed, "forksync/L1/unit") is None                 # nothing ran on GPU runners
    assert codes(w, pushed)[1][:1] == ["awaiting-retest"]
    assert (await w.pr(pr["number"]))["merged"] is False
