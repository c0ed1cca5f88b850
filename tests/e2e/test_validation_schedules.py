"""Scheduled validation against the local GitHub: the nightly's silence alarm (github-actions
backend: dispatched, never reported) and an L2 regression on trunk bisected to one sync pick,
with the regression issue and a back-out PR carrying ``Upstream-Reverted``."""
import math
import re

from bot.app import schedules
from bot.l2 import service as l2_service
from tests.support.github import commit_files, git
from tests.support.validation_world import actions_world, close_world, make_world, tick_ctx

BENCH = """\
import json, os, random, statistics
factor = float(open("speed.txt").read())
rng = random.Random(" ".join(sorted(os.listdir("."))))     # the same noise for a commit on every run
reps = [1.0 / factor * (1 + rng.gauss(0, 0.004)) for _ in range(10)]
med = statistics.median(reps)
os.makedirs("out", exist_ok=True)
json.dump({"schema": "forksync-bench/1", "platform": "cpu", "points": [{
    "benchmark": "toy", "shape": "64x64x64", "dtype": "fp32", "impl": "triton", "metric": "throughput",
    "unit": "TFLOP/s", "value": 100.0 / med, "median_ms": med, "repeat_medians_ms": reps, "repeats": 10,
    "ok": True}]}, open("out/bench.json", "w"))
"""
L2_CONFIG = """\
suites:
  - name: bench
    level: L2
    command: python3 bench.py
    report: {format: benchmark-json, path: out/bench.json}
    timeout_s: 300
    infra_retries: 0
"""
UPSTREAM_SHA = "ab" * 20


async def test_a_nightly_that_never_reports_raises_one_alarm_issue(fake_github, tmp_path):
    w = await actions_world(fake_github, tmp_path)
    try:
        ctx = await tick_ctx(w)
        t0 = 1_000_000.0
        notes = await schedules.nightly_tick(ctx, "meta/triton", now=t0, interval_s=86_400, deadline_s=3600)
        repo = w.fake.state.repo("meta", "triton")
        runs = list(repo.workflow_runs.values())
        assert [(r.workflow_id, r.inputs["suite"], r.inputs["platform"]) for r in runs] == [
            ("forksync-gpu.yml", "unit", "cpu")]
        trunk = runs[0].inputs["commit"]
        assert notes[0].startswith(f"nightly forksync/L1/unit @ {trunk[:12]}: dispatched")
        assert await schedules.nightly_tick(ctx, "meta/triton", now=t0 + 1800, deadline_s=3600) == []
        late = await schedules.nightly_tick(ctx, "meta/triton", now=t0 + 3601, deadline_s=3600)
        assert len(late) == 1 and "1 result(s) missing → issue #" in late[0]
        assert await schedules.nightly_tick(ctx, "meta/triton", now=t0 + 7200, deadline_s=3600) == []
        issues = [i async for i in w.alice.getiter("/repos/meta/triton/issues?state=all")]
        alarms = [i for i in issues if i["title"] == schedules.alarm_title(trunk)]
        assert len(alarms) == 1
        assert "| `unit` | cpu | 1.0 h |" in alarms[0]["body"]
        assert w.run_of(trunk, "forksync/L1/unit").status == "in_progress"      # pending, never green
    finally:
        await close_world(w)


async def test_the_alarm_closes_when_the_late_results_arrive_and_a_later_silence_files_again(fake_github, tmp_path):
    """The nightly's result comes after the alarm was filed (a runner's queue was stuck): the next
    tick closes the alarm with a comment saying when the results came, once; a later nightly that
    falls silent again gets an alarm of its own."""
    import io
    import zipfile

    from bot.fakegithub.events import _common
    from gpu_runner.result import Counts, Environment, RunResult

    w = await actions_world(fake_github, tmp_path)
    try:
        ctx = await tick_ctx(w)
        t0 = 1_000_000.0                                   # 1970-01-12 13:46:40 UTC
        await schedules.nightly_tick(ctx, "meta/triton", now=t0, interval_s=86_400, deadline_s=3600)
        repo = w.fake.state.repo("meta", "triton")
        (run,) = repo.workflow_runs.values()
        trunk = run.inputs["commit"]
        [late] = await schedules.nightly_tick(ctx, "meta/triton", now=t0 + 3601, deadline_s=3600)
        number = int(late.rsplit("#", 1)[1])

        w.svc.now = lambda: t0 + 5400                      # the result arrives 1.5 h after dispatch
        green = RunResult(suite="unit", level="L1", commit=trunk, verdict="green", outcome="pass",
                          counts=Counts(total=3, passed=3), environment=Environment(runner_id="gpu-7"))
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("result.json", green.to_json())
        w.fake.complete_workflow_run(repo, run.id, "success", {f"forksync-result-{run.inputs['request_id']}": buf.getvalue()})
        payload = w.fake.webhooks.build("workflow_run", "completed", {
            **_common(w.fake, repo, w.fake.state.users["alice"]),
            "workflow_run": {**w.fake.render.workflow_run(repo, run),
                             "display_title": f"forksync-gpu unit {trunk} cpu {run.inputs['request_id']}"}})
        await w.fake.webhooks.deliver("workflow_run", payload, validate=False)
        await w.bot.settle()

        notes = await schedules.nightly_tick(ctx, "meta/triton", now=t0 + 6000, deadline_s=3600)
        assert f"nightly {trunk[:12]}: all results in, alarm #{number} closed" in notes, notes
        issue = await w.alice.getitem(f"/repos/meta/triton/issues/{number}")
        assert (issue["state"], issue["state_reason"]) == ("closed", "completed")
        [said] = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{number}/comments")]
        assert "The results came at 1970-01-12 15:16 UTC, 1.5 h after the dispatch" in said
        again = await schedules.nightly_tick(ctx, "meta/triton", now=t0 + 6600, deadline_s=3600)
        assert not any("alarm" in n for n in again), again
        assert len([c async for c in w.alice.getiter(f"/repos/meta/triton/issues/{number}/comments")]) == 1

        # the next nightly falls silent too: a new alarm, not the closed one
        await schedules.nightly_tick(ctx, "meta/triton", now=t0 + 86_400, interval_s=86_400, deadline_s=3600)
        [silent] = await schedules.nightly_tick(ctx, "meta/triton", now=t0 + 86_400 + 3601, deadline_s=3600)
        assert "1 result(s) missing → issue #" in silent
        assert int(silent.rsplit("#", 1)[1]) != number
        issues = [i async for i in w.alice.getiter("/repos/meta/triton/issues?state=open")]
        assert [i["title"] for i in issues if "pull_request" not in i] == [schedules.alarm_title(trunk)]
    finally:
        await close_world(w)


async def test_a_catch_up_nightly_just_before_the_cron_time_stands_for_that_run(fake_github, tmp_path):
    """The worker was down over a 03:00 nightly and comes back at 02:58: the catch-up nightly runs
    then, and the 03:00 run on the same trunk tip and suites is not started again (the tick says
    so, once). The next night runs as usual, and a trunk that moved in between is measured."""
    from datetime import datetime, timezone

    from bot.config.schedules import Schedule
    from bot.validation import store as vstore

    def t(text: str) -> float:
        return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()

    cron = Schedule(cron="0 3 * * *")
    w = await make_world(fake_github, tmp_path)
    try:
        ctx = await tick_ctx(w)
        await schedules.nightly_tick(ctx, "meta/triton", now=t("2026-11-30T03:00:10"), interval_s=cron)
        caught = await schedules.nightly_tick(ctx, "meta/triton", now=t("2026-12-02T02:58:00"), interval_s=cron)
        (row, _) = vstore.nightly_runs(w.bot.store, "meta/triton")
        trunk = row["sha"]
        assert f"nightly forksync/L1/unit @ {trunk[:12]}: green" in caught
        notes = await schedules.nightly_tick(ctx, "meta/triton", now=t("2026-12-02T03:00:30"), interval_s=cron)
        assert notes == [f"nightly {trunk[:12]}: the 2026-12-02 03:00 UTC run not started: the catch-up run of "
                         "2026-12-02 02:58 UTC ran the same suites on this trunk tip"], notes
        assert await schedules.nightly_tick(ctx, "meta/triton", now=t("2026-12-02T03:05:30"), interval_s=cron) == []
        assert len(vstore.nightly_runs(w.bot.store, "meta/triton")) == 2
        nightly = await schedules.nightly_tick(ctx, "meta/triton", now=t("2026-12-03T03:00:30"), interval_s=cron)
        assert f"nightly forksync/L1/unit @ {trunk[:12]}: green" in nightly
        assert len(vstore.nightly_runs(w.bot.store, "meta/triton")) == 3

        # down again over the 04th, back at 02:58 on the 5th; trunk moves before 03:00
        await schedules.nightly_tick(ctx, "meta/triton", now=t("2026-12-05T02:58:00"), interval_s=cron)
        moved = w.push_main({"NEWS.md": "n\n"}, "Land a sync PR")
        notes = await schedules.nightly_tick(ctx, "meta/triton", now=t("2026-12-05T03:00:30"), interval_s=cron)
        assert f"nightly forksync/L1/unit @ {moved[:12]}: green" in notes
        assert [r["sha"] for r in vstore.nightly_runs(w.bot.store, "meta/triton")][:2] == [moved, trunk]
    finally:
        await close_world(w)


async def test_a_nightly_older_than_the_newest_triaged_is_refused_once_not_on_every_tick(fake_github, tmp_path):
    """The nightly's results are all in, but a later nightly was triaged meanwhile (a store shared
    with `forksync triage nightly`): triage refuses it. The tick meets that nightly again on every
    tick until the next one is dispatched; the refusal is said on the first and kept, not said
    again every five minutes."""
    from bot.config.forksync import ForksyncConfig
    from bot.triage import store as triage_store
    from bot.triage.nightly import on_nightly_results
    from bot.validation import store as vstore
    from gpu_runner.result import Counts, Environment, RunResult

    w = await make_world(fake_github, tmp_path)
    try:
        ctx = await tick_ctx(w)
        t0 = 1_000_000.0
        notes = await schedules.nightly_tick(ctx, "meta/triton", now=t0, interval_s=86_400)
        (row,) = vstore.nightly_runs(w.bot.store, "meta/triton")
        trunk = row["sha"]
        assert notes == [f"nightly forksync/L1/unit @ {trunk[:12]}: green"]
        green = RunResult(suite="unit", level="L1", commit=trunk, platform="cpu", verdict="green", outcome="pass",
                          counts=Counts(total=3, passed=3), environment=Environment(runner_id="cli"))
        newer = await on_nightly_results(ctx, "meta/triton", ForksyncConfig(), [green], run_id="nightly-cli",
                                         when=int(t0) + 3600, store=w.bot.store)
        assert (newer.refused, newer.report is not None) == ("", True)
        said = (f"nightly triage {trunk[:12]}: not triaged: nightly {row['key']} (1970-01-12T13:46:40) is older than "
                "nightly-cli (1970-01-12T14:46:40), the newest nightly already triaged for meta/triton")
        assert await schedules.nightly_tick(ctx, "meta/triton", now=t0 + 300) == [said]
        for tick in range(2, 5):
            assert await schedules.nightly_tick(ctx, "meta/triton", now=t0 + 300 * tick) == []
        # kept where a person looks (the triage page), once
        assert [(r["run"], r["nightly_at"], r["newest_run"], r["newest_at"]) for r in
                triage_store.refused_runs(w.bot.store, "meta/triton")] == [(row["key"], int(t0), "nightly-cli", int(t0) + 3600)]
    finally:
        await close_world(w)


def test_due_functions():
    assert schedules.nightly_due(None, 5.0) and schedules.nightly_due(0.0, 86_400.0)
    assert not schedules.nightly_due(10.0, 86_000.0)
    assert l2_service.l2_due(None, False, 1.0) and not l2_service.l2_due(None, True, 1.0)
    assert not l2_service.l2_due(100.0, False, 200.0, interval_s=3600)


async def test_l2_regression_is_bisected_to_a_sync_pick_and_backed_out(fake_github, tmp_path):
    files = {"README.md": "fork\n", ".github/forksync.yml": L2_CONFIG, "bench.py": BENCH, "speed.txt": "1.0\n"}
    w = await make_world(fake_github, tmp_path, files=files)
    try:
        ctx = await tick_ctx(w)
        now = 1_000_000.0

        async def tick():
            nonlocal now
            now += 3600
            return await l2_service.l2_tick(ctx, "meta/triton", now=now, interval_s=0)

        await tick()
        for i in range(2, 7):
            w.push_main({f"f{i}.txt": f"{i}\n"}, f"Unit {i}")
            await tick()
        git(w.work, "fetch", "-q", "origin")
        git(w.work, "checkout", "-q", "-B", "main-work", "origin/main")
        c7 = commit_files(w.work, {"a.txt": "a\n"}, "Pick a")
        c8 = commit_files(w.work, {"speed.txt": "0.8\n"},
                          f"[BACKEND] Simplify the toy kernel\n\nUpstream-Commit: {UPSTREAM_SHA}")
        commit_files(w.work, {"b.txt": "b\n"}, "Pick b")
        c10 = commit_files(w.work, {"c.txt": "c\n"}, "Pick c")
        git(w.work, "push", "-q", "origin", "main-work:refs/heads/main")
        await tick()
        w.push_main({"d.txt": "d\n"}, "Unit 11")
        assert not any("regression" in n for n in await tick())
        w.push_main({"e.txt": "e\n"}, "Unit 12")
        notes = await tick()
        assert any(n.startswith("L2 regression on toy[triton]:64x64x64:fp32@cpu: issue #") for n in notes), notes
        rows = list(w.bot.store.db["l2_regressions"].rows)
        assert [(r["status"], r["status_code"], r["culprit"], r["bad"]) for r in rows] == [("bisected", "bisected", c8, c10)]
        issues = [i async for i in w.alice.getiter("/repos/meta/triton/issues?state=all")]
        issue = next(i for i in issues if "pull_request" not in i)
        assert re.fullmatch(r"forksync: L2 regression -(19|20)\.\d% on toy\[triton\]:64x64x64:fp32@cpu — culprit "
                            + c8[:12], issue["title"]), issue["title"]
        body = issue["body"]
        assert f"**Culprit:** `{c8}` — [BACKEND] Simplify the toy kernel" in body
        assert "/blob/" in body and ".svg?raw=true" in body
        steps = [line for line in body.splitlines() if "| search |" in line or "| verify |" in line]
        assert 3 <= len(steps) <= math.ceil(math.log2(4)) + 2
        prs = [p async for p in w.alice.getiter("/repos/meta/triton/pulls?state=open")]
        assert [p["head"]["ref"] for p in prs] == [f"forksync/backout-{c8[:12]}"]
        head = await w.alice.getitem(f"/repos/meta/triton/commits/{prs[0]['head']['sha']}")
        msg = head["commit"]["message"]
        assert msg.startswith('Revert "[BACKEND] Simplify the toy kernel"')
        assert f"Upstream-Reverted: {UPSTREAM_SHA} L2 regression -" in msg
        assert f"Evidence: #{issue['number']}." in prs[0]["body"]
        # the issue names its back-out PR once it is open, not "a back-out PR follows" for ever
        body = (await w.alice.getitem(f"/repos/meta/triton/issues/{issue['number']}"))["body"]
        assert f"a sync pick: back-out PR #{prs[0]['number']} reverts it" in body, body
        assert "a back-out PR follows" not in body
        speed = await w.alice.getitem(f"/repos/meta/triton/contents/speed.txt?ref={prs[0]['head']['ref']}")
        import base64
        assert base64.b64decode(speed["content"]).decode() == "1.0\n"
        assert c7 != c8
        # a second tick investigates nothing again
        assert not any("regression" in n or "back-out" in n for n in await tick())
    finally:
        await close_world(w)


async def test_an_l2_back_out_pr_stays_recorded_when_the_issue_edit_naming_it_fails(fake_github, tmp_path):
    """Once the back-out PR is open the regression issue is edited to name it: GitHub refusing that
    edit lost the regression's record (its back-out PR with it), so the next tick bisected the
    same regression again, and the issue said "a back-out PR follows" meanwhile."""
    files = {"README.md": "fork\n", ".github/forksync.yml": L2_CONFIG, "bench.py": BENCH, "speed.txt": "1.0\n"}
    w = await make_world(fake_github, tmp_path, files=files)
    try:
        ctx = await tick_ctx(w)
        now = 1_000_000.0

        async def tick():
            nonlocal now
            now += 3600
            return await l2_service.l2_tick(ctx, "meta/triton", now=now, interval_s=0)

        await tick()
        for i in range(2, 7):
            w.push_main({f"f{i}.txt": f"{i}\n"}, f"Unit {i}")
            await tick()
        git(w.work, "fetch", "-q", "origin")
        git(w.work, "checkout", "-q", "-B", "main-work", "origin/main")
        commit_files(w.work, {"a.txt": "a\n"}, "Pick a")
        c8 = commit_files(w.work, {"speed.txt": "0.8\n"},
                          f"[BACKEND] Simplify the toy kernel\n\nUpstream-Commit: {UPSTREAM_SHA}")
        commit_files(w.work, {"b.txt": "b\n"}, "Pick b")
        commit_files(w.work, {"c.txt": "c\n"}, "Pick c")
        git(w.work, "push", "-q", "origin", "main-work:refs/heads/main")
        await tick()
        w.push_main({"d.txt": "d\n"}, "Unit 11")
        await tick()
        w.push_main({"e.txt": "e\n"}, "Unit 12")
        # the issue is opened (POST); its edit naming the back-out PR is refused once
        fault = w.fake.faults.unprocessable("/repos/meta/triton/issues/*", "PATCH")
        try:
            await tick()
        except Exception:  # noqa: BLE001 - what matters is what stays recorded
            pass
        assert fault.fired == 1
        prs = [p async for p in w.alice.getiter("/repos/meta/triton/pulls?state=open")]
        assert [p["head"]["ref"] for p in prs] == [f"forksync/backout-{c8[:12]}"]
        rows = list(w.bot.store.db["l2_regressions"].rows)
        assert [(r["culprit"], r["backout_pr"]) for r in rows] == [(c8, prs[0]["number"])]
    finally:
        await close_world(w)
