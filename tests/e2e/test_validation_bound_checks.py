"""A required check that branch protection binds to one GitHub App
(``required_status_checks.checks[].app_id``) is passed only by that app's run: GitHub requires
it, so a green run of the same name from another app must not let the gate merge."""
from tests.support.validation_world import CONFIG, close_world, fork_files, make_world, tick_ctx


def codes(w, sha):
    run = w.run_of(sha, "forksync/gate")
    return run.conclusion, [line.split("`")[1] for line in run.output["summary"].splitlines() if line.startswith("| ❌")]


async def test_a_check_bound_to_one_app_is_not_passed_by_another_apps_run(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path, files=fork_files(config=CONFIG))
    ci_a = w.fake.create_app(app_id=123, slug="ci-a", name="CI A")
    ci_b = w.fake.create_app(app_id=456, slug="ci-b", name="CI B")
    w.fork.required_checks = ["ci/x"]                      # branch protection on main …
    w.fork.required_check_apps = {"ci/x": ci_a.id}         # … bound to app A
    try:
        head = w.push_branch("forksync/bundle-bound", {"NOTES.md": "t\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-bound")
        await w.bot.settle()
        assert w.run_of(head, "forksync/L1/unit").conclusion == "success"
        assert codes(w, head) == (None, ["check-pending"])
        # app B (or a workflow) posts a green ci/x: GitHub does not count it, neither does the gate
        w.fake.add_check_run(w.fork, head, "ci/x", "success", app=ci_b)
        await w.bot.validation.evaluate(await tick_ctx(w), "meta/triton", pr["number"])
        assert codes(w, head) == (None, ["check-pending"])
        summary = w.run_of(head, "forksync/gate").output["summary"]
        assert "(bound to app 123; a run from app 456 does not count)" in summary
        assert (await w.pr(pr["number"]))["merged"] is False
        # the bound app's green run is what the requirement waits for
        w.fake.add_check_run(w.fork, head, "ci/x", "success", app=ci_a)
        await w.bot.validation.evaluate(await tick_ctx(w), "meta/triton", pr["number"])
        assert codes(w, head) == ("success", [])
        assert (await w.pr(pr["number"]))["merged"] is True
    finally:
        await close_world(w)
