"""Breaks of the github-actions runner results as the bot collects them (helper ``gpurun``): GPU
runs that take their allowed retries, results that arrive after the collect tick gave up on them,
and an artifact whose result is for another platform than the one dispatched."""
from __future__ import annotations

import io
import time
import zipfile

from bot.app import schedules
from bot.fakegithub.events import _common
from bot.validation import store as vstore
from gpu_runner.github_actions import Dispatch, result_from_zip
from gpu_runner.result import Counts, Environment, RunResult
from tests.support.validation_world import CONFIG, actions_world, close_world, tick_ctx


def _zip(result: RunResult) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("result.json", result.to_json())
    return buf.getvalue()


def _green(sha: str, platform: str = "cpu") -> RunResult:
    return RunResult(suite="unit", level="L1", commit=sha, platform=platform, verdict="green", outcome="pass",
                     counts=Counts(total=3, passed=3), environment=Environment(runner_id="gpu-7"))


async def _deliver_completed(w, repo, run, head: str) -> None:
    """What GitHub sends when the run completes (sender: a person; the run's display_title is its
    run-name, which the local GitHub renders as the file name)."""
    payload = w.fake.webhooks.build("workflow_run", "completed", {
        **_common(w.fake, repo, w.fake.state.users["alice"]),
        "workflow_run": {**w.fake.render.workflow_run(repo, run),
                         "display_title": f"forksync-gpu unit {head} cpu {run.inputs['request_id']}"}})
    await w.fake.webhooks.deliver("workflow_run", payload, validate=False)
    await w.bot.settle()


RETRYING = CONFIG.replace("infra_retries: 0", "infra_retries: 2")


async def test_a_dispatched_run_within_its_retries_is_not_counted_red(fake_github, tmp_path):
    """A suite with ``timeout_s: 300`` and ``infra_retries: 2``: the runner may take three attempts
    of up to 300 s each (docs/validation.md: only infrastructure errors are retried, each attempt
    under the one deadline), and the local backend itself waits ``timeout_s · (infra_retries + 1) +
    120 s`` for it. What a user sees: the collect tick counts the github-actions run red
    (``workflow-failed``, "no result … limit 3900 s") 3,960 s after the dispatch, while the run may
    still be in its second or third attempt. What they should see: still pending until the runner's
    own budget (3 × 300 s) plus the grace has passed."""
    w = await actions_world(fake_github, tmp_path, config=RETRYING)
    try:
        head = w.push_branch("forksync/bundle-retrying", {"NOTES.md": "r\n"}, "Note")
        await w.open_pr("forksync/bundle-retrying")
        await w.bot.settle()
        row = vstore.get(w.bot.store, "meta/triton", head, "unit", "cpu")
        assert row["status"] == "pending" and row["request_id"]
        notes = await schedules.collect_tick(await tick_ctx(w), "meta/triton", now=row["updated_at"] + 300 + 3600 + 60)
        assert notes == [], notes
        assert vstore.get(w.bot.store, "meta/triton", head, "unit", "cpu")["status"] == "pending"
    finally:
        await close_world(w)


async def test_a_result_that_arrives_after_the_collect_tick_gave_up_is_not_lost(fake_github, tmp_path):
    """Self-hosted GPU runners queue: a dispatched run waits for a busy H200 longer than the
    collect tick's grace and is counted red (``workflow-failed``: silence is not green — right).
    Then the run does complete, and its artifact holds the real result of that very request.
    What a user sees: the ``workflow_run.completed`` delivery notes "already recorded" and drops
    the result — the check run stays "Red: workflow-failed", the row keeps the stand-in, nothing
    shows the real result anywhere, and the PR needs a retest and another hour in the queue. What
    they should see: the real result recorded for its request (the check run and the gate follow it)."""
    w = await actions_world(fake_github, tmp_path)
    try:
        head = w.push_branch("forksync/bundle-queued", {"NOTES.md": "q\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-queued")
        await w.bot.settle()
        ctx = await tick_ctx(w)
        notes = await schedules.collect_tick(ctx, "meta/triton", now=time.time() + 300 + 3600 + 60)
        assert notes[0] == f"unit@cpu on {head[:12]}: no result, counted red"
        repo = w.fake.state.repo("meta", "triton")
        (run,) = repo.workflow_runs.values()
        w.fake.complete_workflow_run(repo, run.id, "success", {f"forksync-result-{run.inputs['request_id']}": _zip(_green(head))})
        await _deliver_completed(w, repo, run, head)
        row = vstore.get(w.bot.store, "meta/triton", head, "unit", "cpu")
        assert (row["verdict"], row["backend"]) == ("pass", "github-actions"), row["reason"]
        l1 = w.run_of(head, "forksync/L1/unit")
        assert (l1.conclusion, l1.output["title"]) == ("success", "3 passed")
        assert (await w.pr(pr["number"]))["merged"] is True
    finally:
        await close_world(w)


def test_an_artifact_for_another_platform_is_not_taken_for_the_dispatched_one():
    """``result_from_zip`` checks the artifact's result against the request — suite and commit, but
    not the platform (a sharded run's merge does check it: ``shard-mismatch``). A fork's workflow
    copy that lost ``--platform "$PLATFORM"`` (or a runner script of its own) makes the H200 job
    write a result for ``cpu``, gpu_runner's default. What a user sees: the result is accepted and
    stored under ``cpu`` — a cpu result the bot never asked for turns green on the head, while the
    h200 row waits until the collect tick counts it red with "no result". What they should see:
    red ``workflow-failed`` for the h200 request, naming the platform the result is for."""
    sha = "a" * 40
    d = Dispatch("unit", sha, "h200", "req0001")
    r = result_from_zip(_zip(_green(sha, platform="cpu")), d)
    assert r.platform == "h200"
    assert (r.verdict, [x.code for x in r.reasons]) == ("red", ["workflow-failed"])
