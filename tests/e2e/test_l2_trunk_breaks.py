"""L2 on a trunk that misbehaves as real trunks do, against the local GitHub: a back-out whose
revert no longer applies, and history rewritten (force-pushed) under the bisection."""
from __future__ import annotations

from bot.l2 import service as l2_service
from tests.e2e.test_validation_schedules import BENCH, L2_CONFIG, UPSTREAM_SHA
from tests.support.github import commit_files, git
from tests.support.validation_world import close_world, make_world, tick_ctx

FULL = "meta/triton"


class Clock:
    """The tick's clock: an hour per tick."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def next(self) -> float:
        self.now += 3600
        return self.now


async def measured_baseline(w, ctx, clock, n: int = 6) -> None:
    """``n`` L2 points at full speed on trunk, one per landed unit."""
    await l2_service.l2_tick(ctx, FULL, now=clock.next(), interval_s=0)
    for i in range(2, n + 1):
        w.push_main({f"f{i}.txt": f"{i}\n"}, f"Unit {i}")
        await l2_service.l2_tick(ctx, FULL, now=clock.next(), interval_s=0)


async def issues(w) -> list[dict]:
    return [i async for i in w.alice.getiter("/repos/meta/triton/issues?state=all") if "pull_request" not in i]


async def test_a_backout_whose_revert_no_longer_applies_is_said_on_the_issue_and_not_bisected_again(
        fake_github, tmp_path):
    """The culprit sync pick slowed the kernel and also touched ``kernel.txt``, which a later pick
    changed again, so ``git revert`` of the culprit conflicts on trunk. What a person sees today:
    the regression issue says "a sync pick: a back-out PR follows", no PR ever follows, the L2
    tick fails with the revert error, and as the regression is never recorded every later tick
    re-measures and bisects it again (GPU time) and fails the same way. What they should see: the
    tick completes, the issue says the back-out could not be opened and why (revert it by hand),
    and the next tick investigates nothing again."""
    files = {"README.md": "fork\n", ".github/forksync.yml": L2_CONFIG, "bench.py": BENCH, "speed.txt": "1.0\n",
             "kernel.txt": "block = 64\n"}
    w = await make_world(fake_github, tmp_path, files=files)
    try:
        ctx = await tick_ctx(w)
        clock = Clock()
        await measured_baseline(w, ctx, clock)
        git(w.work, "fetch", "-q", "origin")
        git(w.work, "checkout", "-q", "-B", "main-work", "origin/main")
        culprit = commit_files(w.work, {"speed.txt": "0.8\n", "kernel.txt": "block = 128\n"},
                               f"[BACKEND] Retune the toy kernel\n\nUpstream-Commit: {UPSTREAM_SHA}")
        commit_files(w.work, {"kernel.txt": "block = 256\n"}, "[BACKEND] Larger blocks")
        git(w.work, "push", "-q", "origin", "main-work:refs/heads/main")
        await l2_service.l2_tick(ctx, FULL, now=clock.next(), interval_s=0)
        notes: list[str] = []
        for i in range(11, 14):
            w.push_main({f"g{i}.txt": f"{i}\n"}, f"Unit {i}")
            notes += await l2_service.l2_tick(ctx, FULL, now=clock.next(), interval_s=0)
        assert any(n.startswith("L2 regression on toy[triton]:64x64x64:fp32@cpu: issue #") for n in notes), notes
        (issue,) = await issues(w)
        assert f"`{culprit}`" in issue["body"]
        assert "a back-out PR follows" not in issue["body"]
        assert "could not be opened" in issue["body"] and "does not apply on trunk" in issue["body"]
        rows = list(w.bot.store.db["l2_regressions"].rows)
        assert [(r["culprit"], r["backout_pr"]) for r in rows] == [(culprit, 0)]
        w.push_main({"h.txt": "h\n"}, "Unit 14")
        again = await l2_service.l2_tick(ctx, FULL, now=clock.next(), interval_s=0)
        assert not any("regression" in n or "back-out" in n for n in again), again
    finally:
        await close_world(w)


async def test_history_rewritten_under_the_bisection_is_said_not_a_failing_tick_forever(fake_github, tmp_path):
    """Trunk was force-pushed after the baseline was measured: the last-good point's commit is no
    longer an ancestor of the first-bad one. What a person sees today: every L2 tick fails with
    "good … is not an ancestor of bad …", the regression is never recorded nor reported, and the
    series after it in the table are never investigated. What they should see: the tick
    completes, the regression is recorded as not bisected because trunk's history was rewritten
    between the two points (naming both), and it is not retried on every tick."""
    files = {"README.md": "fork\n", ".github/forksync.yml": L2_CONFIG, "bench.py": BENCH, "speed.txt": "1.0\n"}
    w = await make_world(fake_github, tmp_path, files=files)
    try:
        ctx = await tick_ctx(w)
        clock = Clock()
        await measured_baseline(w, ctx, clock)
        git(w.work, "fetch", "-q", "origin")
        old_tip = git(w.work, "rev-parse", "origin/main")
        # the last three units rewritten (amended messages), and the slow pick on top
        git(w.work, "checkout", "-q", "-B", "main-work", "origin/main~3")
        for i in (4, 5, 6):
            commit_files(w.work, {f"f{i}.txt": f"{i}\n"}, f"Unit {i} (reworded)")
        commit_files(w.work, {"speed.txt": "0.8\n"}, f"[BACKEND] Retune the toy kernel\n\nUpstream-Commit: {UPSTREAM_SHA}")
        git(w.work, "push", "-q", "--force", "origin", "main-work:refs/heads/main")
        notes: list[str] = []
        for i in range(11, 16):
            w.push_main({f"g{i}.txt": f"{i}\n"}, f"Unit {i}")
            notes += await l2_service.l2_tick(ctx, FULL, now=clock.next(), interval_s=0)
        rows = list(w.bot.store.db["l2_regressions"].rows)
        assert len(rows) == 1, notes
        assert rows[0]["good"] == old_tip
        assert "rewritten" in rows[0]["status"] and old_tip[:12] in rows[0]["status"], rows[0]["status"]
        assert any("rewritten" in n for n in notes), notes
        # a confirmed regression is filed even when it cannot be bisected: the issue says why
        (issue,) = await issues(w)
        assert rows[0]["issue"] == issue["number"]
        assert "**Not bisected:**" in issue["body"] and "rewritten" in issue["body"], issue["body"]
        assert "Not reproduced" not in issue["body"] and "Range bisected" not in issue["body"]
        more = await l2_service.l2_tick(ctx, FULL, now=clock.next(), interval_s=0)
        assert not any("L2 change" in n or "regression" in n for n in more), more
    finally:
        await close_world(w)
