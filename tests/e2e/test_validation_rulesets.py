"""A check a repository ruleset requires (a ``required_status_checks`` rule, listed by
``repos/get-branch-rules``) is as required as branch protection's: GitHub refuses the merge
without it, so the gate waits for it, blocks on it red naming the rule, and counts only the app
the rule binds it to (``integration_id``). Rules that cannot be read are never "none"."""
import pytest

from bot.github.client import GitHubAPIError
from bot.sync import store as sync_store
from tests.support.validation_world import CONFIG, close_world, fork_files, make_world, tick_ctx


def codes(w, sha):
    run = w.run_of(sha, "forksync/gate")
    return run.conclusion, [line.split("`")[1] for line in run.output["summary"].splitlines() if line.startswith("| ❌")]


def required_by(ci_app_id: int, *contexts: str) -> dict:
    return {"type": "required_status_checks", "parameters": {
        "required_status_checks": [{"context": c, "integration_id": ci_app_id} for c in contexts],
        "strict_required_status_checks_policy": False}}


async def test_a_check_a_ruleset_requires_holds_the_gate_and_blocks_red_naming_the_rule(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path, files=fork_files(config=CONFIG))
    ci_a = w.fake.create_app(app_id=123, slug="ci-a", name="CI A")
    ci_b = w.fake.create_app(app_id=456, slug="ci-b", name="CI B")
    # no branch protection at all: the fork requires ci/rules through a ruleset, bound to app A
    rs = w.fake.add_ruleset(w.fork, "main needs ci", [required_by(ci_a.id, "ci/rules"), {"type": "deletion"}])
    rule = f"the required_status_checks rule of ruleset {rs.id} (Repository meta/triton)"
    try:
        head = w.push_branch("forksync/bundle-ruled", {"NOTES.md": "t\n"}, "Note")
        pr = await w.pr((await w.open_pr("forksync/bundle-ruled"))["number"])
        await w.bot.settle()
        assert w.run_of(head, "forksync/L1/unit").conclusion == "success"
        # the gate waits for it, where it took the suite for all that was required, merged, and
        # GitHub's refusal blocked the unit
        assert codes(w, head) == (None, ["check-pending"])
        summary = w.run_of(head, "forksync/gate").output["summary"]
        assert f"required, not reported on this head yet (bound to app 123) — required by {rule}" in summary
        assert (await w.pr(pr["number"]))["merged"] is False
        assert [r for r in w.fake.requests_for("pulls/merge")] == []
        assert sync_store.blocked_branches(w.bot.store, "meta/triton") == []
        # another app's green run of the name does not count (GitHub would not take it either)
        w.fake.add_check_run(w.fork, head, "ci/rules", "success", app=ci_b)
        await w.bot.validation.evaluate(await tick_ctx(w), "meta/triton", pr["number"])
        assert codes(w, head) == (None, ["check-pending"])
        # the bound app's red run blocks, and the finding says which rule requires it
        w.fake.add_check_run(w.fork, head, "ci/rules", "failure", app=ci_a)
        await w.bot.validation.evaluate(await tick_ctx(w), "meta/triton", pr["number"])
        assert codes(w, head) == ("failure", ["check-failed"])
        assert f"check-run failure — required by {rule}" in w.run_of(head, "forksync/gate").output["summary"]
        assert (await w.pr(pr["number"]))["merged"] is False
        # green from the bound app: the gate allows and GitHub takes the merge
        w.fake.add_check_run(w.fork, head, "ci/rules", "success", app=ci_a)
        await w.bot.validation.evaluate(await tick_ctx(w), "meta/triton", pr["number"])
        assert codes(w, head) == ("success", [])
        assert (await w.pr(pr["number"]))["merged"] is True
        assert sync_store.blocked_branches(w.bot.store, "meta/triton") == []
    finally:
        await close_world(w)


async def test_a_ruleset_requirement_changed_after_the_gate_brings_the_pr_up_again(fake_github, tmp_path):
    """The reconcile tick compares the required checks now with the gate's (its external_id):
    a ruleset's new requirement counts as a change, an unchanged one does not."""
    from bot.app.schedules import reconcile_tick

    w = await make_world(fake_github, tmp_path, files=fork_files(config=CONFIG))
    ci_a = w.fake.create_app(app_id=123, slug="ci-a", name="CI A")
    w.fake.add_ruleset(w.fork, "main needs ci", [required_by(ci_a.id, "ci/rules")])
    try:
        head = w.push_branch("feature", {"NOTES.md": "t\n"}, "Note")
        pr = await w.open_pr("feature")
        await w.bot.settle()
        assert codes(w, head) == (None, ["check-pending"])
        w.fake.add_check_run(w.fork, head, "ci/rules", "success", app=ci_a)
        await w.bot.validation.evaluate(await tick_ctx(w), "meta/triton", pr["number"])
        assert codes(w, head)[0] == "success"
        assert not any("required checks changed" in n for n in await reconcile_tick(await tick_ctx(w), "meta/triton"))
        w.fake.add_ruleset(w.fork, "main needs lint", [required_by(ci_a.id, "lint")])
        notes = await reconcile_tick(await tick_ctx(w), "meta/triton")
        assert f"#{pr['number']}: required checks changed since the gate" in notes
        assert codes(w, head) == (None, ["check-pending"])
        assert (await w.pr(pr["number"]))["merged"] is False
    finally:
        await close_world(w)


UNREAD = "the base branch's required checks could not be read (the rules of its rulesets): "


def holds_unread(w, head, status: int) -> str:
    """The gate run on ``head`` holds (in progress, not red: GitHub may answer again) on
    ``checks-unread`` alone, naming the call and GitHub's answer; returns its summary."""
    run = w.run_of(head, "forksync/gate")
    assert (run.status, run.conclusion) == ("in_progress", None)
    assert codes(w, head) == (None, ["checks-unread"])
    summary = run.output["summary"]
    assert (UNREAD + f"GitHubAPIError: GitHub answered {status} to GET ") in summary
    assert "/repos/meta/triton/rules/branches/main" in summary and "never merging on an unknown rule set" in summary
    return summary


@pytest.mark.parametrize("status", [403, 404])
async def test_rules_that_cannot_be_read_hold_the_gate_on_the_pr_and_end_a_dead_letter(fake_github, tmp_path, status):
    """A token without the permission (403), or a GitHub without rulesets (404): the gate's check
    run says the required checks could not be read and holds — where the PR showed nothing — and
    the delivery fails naming the call and GitHub's answer, as when the base branch cannot be
    read, ending a dead letter that /healthz reports; nothing merges."""
    from bot.app.web import app_facts

    w = await make_world(fake_github, tmp_path, files=fork_files(config=CONFIG))
    w.fake.add_ruleset(w.fork, "main needs ci", [required_by(123, "ci/rules")])
    try:
        w.fake.faults.add("GET", "/repos/meta/triton/rules/branches/*", status,
                          "Resource not accessible by integration" if status == 403 else "Not Found", times=100)
        head = w.push_branch("forksync/bundle-unread", {"NOTES.md": "t\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-unread")
        await w.bot.settle()
        [dead] = [d for d in w.bot.deliveries("dead") if d.event == "pull_request"]
        assert f"{status} to GET" in dead.dead_reason and "/rules/branches/main" in dead.dead_reason
        holds_unread(w, head, status)
        assert "1 dead-lettered delivery: see `forksync queue --state dead`" in app_facts(w.bot.store, 0)["problems"]
        with pytest.raises(GitHubAPIError) as e:
            await w.bot.validation.evaluate(await tick_ctx(w), "meta/triton", pr["number"])
        assert e.value.status_code == status and "/rules/branches/main" in str(e.value)
        holds_unread(w, head, status)
        assert (await w.pr(pr["number"]))["merged"] is False
        assert [r for r in w.fake.requests_for("pulls/merge")] == []
    finally:
        await close_world(w)


async def test_rules_github_fails_to_give_hold_the_gate_until_it_answers_then_it_decides_on_them(fake_github, tmp_path):
    """GitHub answers 500 to the rules of the base, however often the client tries: the PR's gate
    says so and holds (the suite is green and nothing else is required that forksync could read,
    so without the rules it would merge), the delivery ends a dead letter on /healthz. Once GitHub
    answers 200, the dead letter retried decides on the rules — the ruleset's check is pending —
    the dead letter is gone from /healthz, and the PR merges when that check is green."""
    from bot.app import queue as q
    from bot.app.web import app_facts

    w = await make_world(fake_github, tmp_path, files=fork_files(config=CONFIG))
    ci_a = w.fake.create_app(app_id=123, slug="ci-a", name="CI A")
    rs = w.fake.add_ruleset(w.fork, "main needs ci", [required_by(ci_a.id, "ci/rules")])
    try:
        w.fake.faults.server_error("/repos/meta/triton/rules/branches/*", "GET", status=500, times=1000)
        head = w.push_branch("forksync/bundle-unread", {"NOTES.md": "t\n"}, "Note")
        pr = await w.open_pr("forksync/bundle-unread")
        await w.bot.settle()
        assert w.run_of(head, "forksync/L1/unit").conclusion == "success"
        holds_unread(w, head, 500)
        assert (await w.pr(pr["number"]))["merged"] is False and w.fake.requests_for("pulls/merge") == []
        [dead] = [d for d in w.bot.deliveries("dead") if d.event == "pull_request"]
        assert "GitHub answered 500 to GET " in dead.dead_reason and "/rules/branches/main" in dead.dead_reason
        assert "1 dead-lettered delivery: see `forksync queue --state dead`" in app_facts(w.bot.store, 0)["problems"]

        w.fake.faults.clear()                   # GitHub answers again
        assert q.retry_dead(w.bot.store, dead.id)
        await w.bot.settle()
        assert w.bot.deliveries("dead") == [] and app_facts(w.bot.store, 0)["problems"] == []
        assert codes(w, head) == (None, ["check-pending"])
        summary = w.run_of(head, "forksync/gate").output["summary"]
        assert UNREAD not in summary
        assert f"required by the required_status_checks rule of ruleset {rs.id} (Repository meta/triton)" in summary
        assert (await w.pr(pr["number"]))["merged"] is False
        w.fake.add_check_run(w.fork, head, "ci/rules", "success", app=ci_a)
        await w.bot.validation.evaluate(await tick_ctx(w), "meta/triton", pr["number"])
        assert codes(w, head) == ("success", [])
        assert (await w.pr(pr["number"]))["merged"] is True
    finally:
        await close_world(w)
