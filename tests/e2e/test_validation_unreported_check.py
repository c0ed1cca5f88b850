"""A required check that never reports on a sync PR's head (a workflow whose ``paths:`` filter the
PR's files do not match, a disabled workflow, a check renamed in branch protection) must not leave
the gate waiting in silence: the wait shows with its age since the head was pushed, on the gate
check run and on the status issue, and past ``gate.unreported_after_s`` the unit is marked as
waiting on a check that never reported — on the status issue, the dashboard and ``/healthz`` —
without ever merging. Time comes from an injected clock."""
from bot.app.health import HealthPolicy
from bot.app.web import _health
from bot.dashboard.views import Policy, units
from bot.sync import store as sync_store
from tests.support.e2e import status_issue
from tests.support.validation_world import CONFIG, check_run_event, close_world, fork_files, gate_failing, make_world, tick_ctx


class Clock:
    def __init__(self, t: float):
        self.t = t

    def __call__(self) -> float:
        return self.t


async def test_a_required_check_that_never_reports_is_shown_with_its_age_then_marked(fake_github, tmp_path):
    clock = Clock(1_800_000_000.0)
    w = await make_world(fake_github, tmp_path, files=fork_files(config=CONFIG), now=clock)
    w.bot.svc.now = clock
    w.fork.required_checks = ["ci/x"]                      # branch protection names a check no workflow reports
    try:
        head = w.push_branch("forksync/bundle-quiet", {"NOTES.md": "t\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-quiet")
        # the sync service records the PR it opened on the unit's row
        row = sync_store.branch_row(w.bot.store, "meta/triton", "forksync/bundle-quiet")
        sync_store.save_branch(w.bot.store, **{**row, "pr": pr["number"]})
        await w.bot.settle()
        assert gate_failing(w, head) == ["check-pending"]
        ctx = await tick_ctx(w)

        clock.t += 3600 + 1800                             # 1.5 h later, the reconcile tick looks again
        await w.bot.validation.evaluate(ctx, "meta/triton", pr["number"])
        assert gate_failing(w, head) == ["check-pending"]
        assert w.run_of(head, "forksync/gate").conclusion is None          # still waiting: in progress
        summary = w.run_of(head, "forksync/gate").output["summary"]
        assert "not reported on this head for 1.5 h since it was pushed" in summary
        await w.bot.svc.refresh_status_issue(ctx, "meta/triton")
        [issue] = await status_issue(w.alice)
        assert f"#{pr['number']}" in issue["body"] and "`ci/x`" in issue["body"]
        assert "not reported for 1.5 h" in issue["body"]
        assert sync_store.load_status(w.bot.store, "meta/triton").degraded() == ""

        clock.t += 2 * 3600                                # 3.5 h: past the default 3 h
        await w.bot.validation.evaluate(ctx, "meta/triton", pr["number"])
        assert gate_failing(w, head) == ["check-never-reported"]
        # a person must act: the gate says so in red, no longer "in progress" for ever
        assert w.run_of(head, "forksync/gate").conclusion == "failure"
        summary = w.run_of(head, "forksync/gate").output["summary"]
        assert "never reported on this head in 3.5 h (limit 3 h)" in summary
        assert "paths:" in summary and "branch protection" in summary
        assert (await w.pr(pr["number"]))["merged"] is False
        [issue] = await status_issue(w.alice)                # re-rendered by the gate: the unit turned overdue
        assert "never reported" in issue["body"] and "3.5 h" in issue["body"]
        reason = sync_store.load_status(w.bot.store, "meta/triton").degraded()
        assert "bundle-quiet" in reason and "ci/x" in reason and "never reported" in reason
        _, _, _, warned = _health(w.bot.store, clock.t, False, 0, HealthPolicy())
        assert any("ci/x" in p.text and "never reported" in p.text for p in warned)
        [unit] = [u for u in units(w.bot.store, "meta/triton", clock.t, Policy())["units"] if u["pr"] == pr["number"]]
        assert unit["gate"] == "waiting on a check that never reported"
        assert unit["check_wait"] == {"checks": ["ci/x"], "since": 1_800_000_000.0, "age_s": 3.5 * 3600,
                                      "overdue": True, "head": head}

        # the check reports at last: the wait is gone everywhere and the gate merges
        ci = w.fake.create_app(app_id=123, slug="ci", name="CI")
        w.fake.add_check_run(w.fork, head, "ci/x", "success", app=ci)
        await check_run_event(w, head, "forksync/bundle-quiet", name="ci/x",
                              pull_requests=[{"number": pr["number"], "head": {"sha": head}}])
        await w.bot.settle()
        assert (await w.pr(pr["number"]))["merged"] is True
        st = sync_store.load_status(w.bot.store, "meta/triton")
        assert st.check_waits == () and st.degraded() == ""
        [issue] = await status_issue(w.alice)
        assert "never reported" not in issue["body"] and "`ci/x`" not in issue["body"]
    finally:
        await close_world(w)


async def test_the_limit_is_configurable(fake_github, tmp_path):
    clock = Clock(1_800_000_000.0)
    config = CONFIG + "gate:\n  unreported_after_s: 600\n"
    w = await make_world(fake_github, tmp_path, files=fork_files(config=config), now=clock)
    w.bot.svc.now = clock
    w.fork.required_checks = ["ci/x"]
    try:
        head = w.push_branch("forksync/bundle-quiet", {"NOTES.md": "t\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-quiet")
        await w.bot.settle()
        clock.t += 601
        await w.bot.validation.evaluate(await tick_ctx(w), "meta/triton", pr["number"])
        assert gate_failing(w, head) == ["check-never-reported"]
        assert "(limit 10 min)" in w.run_of(head, "forksync/gate").output["summary"]
    finally:
        await close_world(w)
