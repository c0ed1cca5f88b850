"""The merge gate, table-driven: each row is a PR state and the exact decision expected."""
from __future__ import annotations

import pytest

from bot.validation.gate import (
    AreaPolicy,
    Check,
    L3Request,
    PRState,
    Review,
    SignOff,
    SuiteOutcome,
    SuiteRequirement,
    decide,
    may_run_on_gpu,
    render_summary,
)

HEAD = "h" * 40
OLD = "o" * 40
BASE = "b" * 40
SUITES = (SuiteRequirement("kernels", ("cpu",)), SuiteRequirement("lit", ("cpu", "h200")))
AREAS = (AreaPolicy("llvm-pin", ("alice", "bob"), requires_l3=True),
         AreaPolicy("amd", ("carol",)),
         AreaPolicy("docs", ()))


def green(suite, plat="cpu", sha=HEAD):
    return SuiteOutcome(suite, sha, plat, "pass")


ALL_GREEN = (green("kernels"), green("lit"), green("lit", "h200"))


def pr(**kw) -> PRState:
    base = dict(number=7, head_sha=HEAD, base_sha=BASE, head_contains_base=True, kind="bundle",
                author="forksync[bot]", results=ALL_GREEN, unit_updated_at=100)
    base.update(kw)
    return PRState(**base)


def fail(suite, tests, plat="cpu", sha=HEAD, verdict="fail", reason=""):
    return SuiteOutcome(suite, sha, plat, verdict, tuple(tests), reason)


def ran(suite, tests, skipped=(), plat="cpu", sha=HEAD):
    """A green result whose ``tests`` ran and ``skipped`` were skipped (or xfail)."""
    return SuiteOutcome(suite, sha, plat, "pass", skipped=tuple(skipped), ran=tuple(tests))


T10 = tuple(f"t.py::test_{i}" for i in range(10))
UP = "u" * 40
C1 = "c" * 40
GATED = (SuiteRequirement("kernels", ("cpu",)),)
ALLOWING = (SuiteRequirement("kernels", ("cpu",), allow_newly_skipped=True),)


CASES = [
    # id, state, suites, expected allowed, expected blocking (code, subject), expected actions
    ("all-green", pr(), SUITES, True, [], ["merge"]),
    # a person's push replaced forksync's picks, or a person made the PR a draft: never merged
    ("picks-missing", pr(missing_picks=(UP,)), SUITES, False, [("picks-missing", "")], []),
    ("person-draft", pr(person_draft=True), SUITES, False, [("draft", "")], []),
    # a person squashed two picks into one commit: merged, the fork would get one commit for both
    ("picks-squashed", pr(squashed_picks=(("c" * 40, (UP, "d" * 40)),)), SUITES, False,
     [("picks-squashed", "c" * 12)], []),
    # a unit it lands after (predicted on that unit's picks) is still open: never merged before it
    ("lands-after", pr(lands_after=(("bundle-abc", 7),)), SUITES, False, [("lands-after", "")], []),
    # one closed unmerged that a person's resolution on the branch was made on: held for a person
    ("lands-after-closed", pr(lands_after_closed=(("bundle-abc", 7, "closed", (UP,)),)), SUITES, False,
     [("lands-after", "")], []),
    ("no-results-silence-is-red", pr(results=()), SUITES, False,
     [("missing-result", "kernels/cpu"), ("missing-result", "lit/cpu"), ("missing-result", "lit/h200")],
     ["run-suites"]),
    ("one-platform-missing", pr(results=ALL_GREEN[:2]), SUITES, False,
     [("missing-result", "lit/h200")], ["run-suites"]),
    ("result-on-older-head", pr(results=(green("kernels", sha=OLD),) + ALL_GREEN[1:]), SUITES, False,
     [("stale-result", "kernels/cpu")], ["run-suites"]),
    ("pending", pr(results=(SuiteOutcome("kernels", HEAD, "cpu", "pending"),) + ALL_GREEN[1:]), SUITES, False,
     [("pending-result", "kernels/cpu")], []),
    ("stale-base-update-branch", pr(head_contains_base=False), SUITES, False,
     [("stale-base", "")], ["update-branch"]),
    ("stale-base-and-missing-runs-after-update", pr(head_contains_base=False, results=()), SUITES[:1], False,
     [("stale-base", ""), ("missing-result", "kernels/cpu")], ["update-branch"]),
    ("new-failure-blocks", pr(results=(fail("kernels", ["t.py::test_add"]),) + ALL_GREEN[1:]), SUITES, False,
     [("new-failure", "kernels/cpu")], []),
    ("pre-existing-failure-does-not-block",
     pr(results=(fail("kernels", ["t.py::test_add"]),) + ALL_GREEN[1:],
        base_results=(fail("kernels", ["t.py::test_add"], sha=BASE),)), SUITES, True, [], ["merge"]),
    ("adds-to-pre-existing-blocks",
     pr(results=(fail("kernels", ["t.py::test_add", "t.py::test_mm"]),) + ALL_GREEN[1:],
        base_results=(fail("kernels", ["t.py::test_add"], sha=BASE),)), SUITES, False,
     [("new-failure", "kernels/cpu")], []),
    ("base-result-on-old-base-is-not-comparable",
     pr(results=(fail("kernels", ["t.py::test_add"]),) + ALL_GREEN[1:],
        base_results=(fail("kernels", ["t.py::test_add"], sha=OLD),)), SUITES, False,
     [("new-failure", "kernels/cpu")], []),
    ("short-suite-is-red-even-if-base-short",
     pr(results=(fail("kernels", [], verdict="error", reason="3 tests ran, expected 4"),) + ALL_GREEN[1:],
        base_results=(fail("kernels", [], sha=BASE, verdict="error", reason="3 tests ran, expected 4"),)),
     SUITES, False, [("suite-error", "kernels/cpu")], []),
    ("fail-without-tests-is-error", pr(results=(fail("kernels", []),) + ALL_GREEN[1:]), SUITES, False,
     [("suite-error", "kernels/cpu")], []),
    # no GPU on the runner: not a new failure of the PR, retried on another runner
    ("infrastructure-retries-on-another-runner",
     pr(results=(fail("kernels", ["t.py::test_add"], verdict="infrastructure",
                      reason="infra-error: gpu-missing: RuntimeError: No CUDA GPUs are available"),) + ALL_GREEN[1:]),
     SUITES, False, [("infrastructure", "kernels/cpu")], ["retry-on-another-runner"]),
    ("hold", pr(holds=("dave",)), SUITES, False, [("hold", "")], []),
    # upstream's branch moved back past the PR's commits (bot.sync.rewind): held, everything else green
    ("upstream-rewound", pr(upstream_rewound="upstream's `main` moved back"), SUITES, False,
     [("upstream-rewound", "")], []),
    ("conflict-markers", pr(conflict_marker_files=("lib/a.cpp",)), SUITES, False, [("conflict-markers", "")], []),
    ("non-collaborator-without-retest", pr(author="eve", author_is_collaborator=False, results=()), SUITES[:1],
     False, [("awaiting-retest", ""), ("missing-result", "kernels/cpu")], []),
    ("non-collaborator-retest-on-old-head", pr(author="eve", author_is_collaborator=False,
                                               retest_by_writer_on=(OLD,)), SUITES, False,
     [("awaiting-retest", "")], []),
    ("non-collaborator-after-retest", pr(author="eve", author_is_collaborator=False,
                                         retest_by_writer_on=(HEAD,)), SUITES, True, [], ["merge"]),
    ("no-suites-no-checks-never-merges", pr(results=()), (), False, [("no-required-checks", "")], []),
    ("no-suites-gate-check-alone-does-not-count", pr(results=(), checks=(Check("forksync/gate", "success"),)), (),
     False, [("no-required-checks", "")], []),
    ("no-suites-checks-green", pr(results=(), checks=(Check("ci", "success"), Check("lint", "failure", False))),
     (), True, [], ["merge"]),
    ("no-suites-check-running", pr(results=(), checks=(Check("ci", "success"), Check("build", None))), (), False,
     [("check-pending", "build")], []),
    ("no-suites-check-failing", pr(results=(), checks=(Check("ci", "failure"),)), (), False,
     [("check-failed", "ci")], []),
    # conflicts: markers in the trees, trees that cannot be read, conflict commits in the range
    ("markers-unchecked-never-green", pr(markers_error="commit hhhhhhhhhhhh cannot be fetched"), SUITES, False,
     [("markers-unchecked", "")], []),
    ("commits-unlisted-never-green", pr(commits_error="GitHub lists at most 250 commits of a pull request"), SUITES,
     False, [("commits-unlisted", "")], []),
    ("stale-base-with-a-conflict-commit-waits-for-the-fold", pr(head_contains_base=False, conflict_commits=((C1, UP),)),
     SUITES, False, [("conflict-commit", C1[:12]), ("stale-base", "")], []),
    ("conflict-commit-blocks", pr(conflict_commits=((C1, UP),)), SUITES, False,
     [("conflict-commit", C1[:12])], []),
    # the fork's own CI: required external checks (branch protection / gate.required_checks)
    ("required-check-green", pr(required_checks=("internal-ci",), checks=(Check("internal-ci", "success"),)),
     SUITES, True, [], ["merge"]),
    ("required-check-not-reported", pr(required_checks=("internal-ci",)), SUITES, False,
     [("check-pending", "internal-ci")], []),
    ("required-check-running", pr(required_checks=("internal-ci",), checks=(Check("internal-ci", None),)),
     SUITES, False, [("check-pending", "internal-ci")], []),
    ("required-status-pending", pr(required_checks=("ci/oss",), checks=(Check("ci/oss", None, kind="status"),)),
     SUITES, False, [("check-pending", "ci/oss")], []),
    ("required-check-failing", pr(required_checks=("internal-ci", "ci/oss"),
                                  checks=(Check("internal-ci", "failure"), Check("ci/oss", "success", kind="status"))),
     SUITES, False, [("check-failed", "internal-ci")], []),
    ("required-status-error", pr(required_checks=("ci/oss",), checks=(Check("ci/oss", "error", kind="status"),)),
     SUITES, False, [("check-failed", "ci/oss")], []),
    # a required check branch protection binds to one app counts only that app's runs
    ("bound-check-green-from-another-app-does-not-count",
     pr(required_checks=("ci/x",), check_apps=(("ci/x", 123),), checks=(Check("ci/x", "success", app_id=456),)),
     SUITES, False, [("check-pending", "ci/x")], []),
    ("bound-check-green-status-does-not-count",
     pr(required_checks=("ci/x",), check_apps=(("ci/x", 123),), checks=(Check("ci/x", "success", kind="status"),)),
     SUITES, False, [("check-pending", "ci/x")], []),
    ("bound-check-green-from-the-bound-app",
     pr(required_checks=("ci/x",), check_apps=(("ci/x", 123),),
        checks=(Check("ci/x", "failure", app_id=456), Check("ci/x", "success", app_id=123))),
     SUITES, True, [], ["merge"]),
    ("bound-check-red-from-the-bound-app",
     pr(required_checks=("ci/x",), check_apps=(("ci/x", 123),),
        checks=(Check("ci/x", "success", app_id=456), Check("ci/x", "failure", app_id=123))),
     SUITES, False, [("check-failed", "ci/x")], []),
    ("unbound-check-green-from-any-app",
     pr(required_checks=("ci/x",), checks=(Check("ci/x", "success", app_id=456),)), SUITES, True, [], ["merge"]),
    ("unrequired-failing-check-ignored-with-suites", pr(checks=(Check("lint", "failure"),)), SUITES, True, [],
     ["merge"]),
    ("required-forksync-checks-are-the-suites", pr(required_checks=("forksync/gate", "forksync/L1/kernels")),
     SUITES, True, [], ["merge"]),
    # skipped and xfail tests against the base's last result
    ("newly-skipped-blocks", pr(results=(ran("kernels", T10[:1], T10[1:]),),
                                base_results=(ran("kernels", T10, sha=BASE),)), GATED, False,
     [("newly-skipped", "kernels/cpu")], []),
    ("newly-skipped-against-last-trunk-result", pr(results=(ran("kernels", T10[:1], T10[1:]),),
                                                   base_results=(ran("kernels", T10, sha=OLD),)), GATED, False,
     [("newly-skipped", "kernels/cpu")], []),
    ("newly-skipped-allowed-by-suite", pr(results=(ran("kernels", T10[:1], T10[1:]),),
                                          base_results=(ran("kernels", T10, sha=BASE),)), ALLOWING, True, [],
     ["merge"]),
    ("skipped-on-base-too", pr(results=(ran("kernels", T10[:9], T10[9:]),),
                               base_results=(ran("kernels", T10[:9], T10[9:], sha=BASE),)), GATED, True, [],
     ["merge"]),
    ("skipped-without-base-result-listed-only", pr(results=(ran("kernels", T10[:1], T10[1:]),)), GATED, True, [],
     ["merge"]),
    ("owned-area-needs-owner-approval", pr(areas=("amd",)), SUITES, False, [("approval-missing", "amd")], []),
    ("owned-area-non-owner-approval", pr(areas=("amd",), reviews=(Review("dave", "APPROVED", 200),)), SUITES,
     False, [("approval-missing", "amd")], []),
    ("owned-area-owner-approved", pr(areas=("amd", "docs"), reviews=(Review("carol", "APPROVED", 200),)), SUITES,
     True, [], ["merge"]),
    ("approval-before-unit-changed-is-stale", pr(areas=("amd",), reviews=(Review("carol", "APPROVED", 50),)),
     SUITES, False, [("approval-missing", "amd")], []),
    ("approval-on-exactly-the-head-holds-whenever-given",
     pr(areas=("amd",), reviews=(Review("carol", "APPROVED", 50, commit_id=HEAD),)), SUITES, True, [], ["merge"]),
    ("approval-on-an-earlier-head-of-the-same-unit-holds",
     pr(areas=("amd",), unit_heads=("e" * 40, HEAD), reviews=(Review("carol", "APPROVED", 50, commit_id="e" * 40),)),
     SUITES, True, [], ["merge"]),
    ("approval-on-an-older-head-before-the-change-is-stale",
     pr(areas=("amd",), reviews=(Review("carol", "APPROVED", 50, commit_id=BASE),)), SUITES, False,
     [("approval-missing", "amd")], []),
    ("owner-requested-changes", pr(areas=("amd",), reviews=(Review("carol", "CHANGES_REQUESTED", 200),)), SUITES,
     False, [("approval-missing", "amd"), ("changes-requested", "amd")], []),
    ("chain-without-owned-area-needs-writer", pr(kind="chain", areas=("docs",)), SUITES, False,
     [("approval-missing", "chain")], []),
    ("chain-approved-by-writer", pr(kind="chain", reviews=(Review("dave", "APPROVED", 200),)), SUITES, True, [],
     ["merge"]),
    ("chain-approved-by-reader-only", pr(kind="chain", reviews=(Review("dave", "APPROVED", 200, False),)),
     SUITES, False, [("approval-missing", "chain")], []),
    # an App's bot account may hold write access; its approval is no person's (agent-resolved picks need one)
    ("chain-approved-by-an-app-bot-only", pr(kind="chain", reviews=(Review("Renovate[bot]", "APPROVED", 200),)),
     SUITES, False, [("approval-missing", "chain")], []),
    ("l3-area-needs-signoff", pr(areas=("llvm-pin",), reviews=(Review("alice", "APPROVED", 200),)), SUITES, False,
     [("l3-signoff-missing", "llvm-pin")], []),
    ("l3-signoff-by-non-owner", pr(areas=("llvm-pin",), reviews=(Review("alice", "APPROVED", 200),),
                                   signoffs=(SignOff("llvm-pin", "carol", 300),)), SUITES, False,
     [("l3-signoff-missing", "llvm-pin")], []),
    ("l3-signed-off", pr(areas=("llvm-pin",), reviews=(Review("alice", "APPROVED", 200),),
                         signoffs=(SignOff("llvm-pin", "bob", 300),)), SUITES, True, [], ["merge"]),
    ("metric-signoff-needed", pr(areas=("amd",), reviews=(Review("carol", "APPROVED", 200),),
                                 metrics_needing_signoff=("matmul:4096x4096:bf16",)), SUITES, False,
     [("l3-signoff-missing", "matmul:4096x4096:bf16")], []),
    ("metric-signed-off", pr(areas=("amd",), reviews=(Review("carol", "APPROVED", 200),),
                             metrics_needing_signoff=("matmul:4096x4096:bf16",),
                             signoffs=(SignOff("matmul:4096x4096:bf16", "carol", 300),)), SUITES, True, [],
     ["merge"]),
    ("everything-wrong-lists-everything",
     pr(head_contains_base=False, holds=("dave",), conflict_marker_files=("x.py",), results=(),
        kind="chain", areas=("llvm-pin",)), SUITES[:1], False,
     [("conflict-markers", ""), ("hold", ""), ("stale-base", ""), ("missing-result", "kernels/cpu"),
      ("approval-missing", "llvm-pin"), ("l3-signoff-missing", "llvm-pin")], ["update-branch"]),
]


@pytest.mark.parametrize("state,suites,allowed,blocking,actions", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gate_table(state, suites, allowed, blocking, actions):
    d = decide(state, suites, AREAS)
    assert [(f.code, f.subject) for f in d.blocking] == blocking
    assert d.allowed is allowed
    assert list(d.actions) == actions


def test_pre_existing_listed_and_rendered():
    state = pr(results=(fail("kernels", ["t.py::test_add"]),) + ALL_GREEN[1:],
               base_results=(fail("kernels", ["t.py::test_add"], sha=BASE),))
    d = decide(state, SUITES, AREAS)
    assert [(f.subject, f.detail) for f in d.pre_existing] == [
        ("kernels/cpu", f"t.py::test_add (also red on base {BASE[:12]})")]
    text = render_summary(d, state)
    assert text.startswith("## Ready to merge\n")
    assert "### Pre-existing failures" in text and "t.py::test_add" in text


def test_blocked_summary_lists_missing():
    state = pr(results=ALL_GREEN[:2])
    text = render_summary(decide(state, SUITES, AREAS), state)
    assert text.startswith("## Blocked: 1 condition not met\n")
    assert f"| ❌ | `missing-result` | lit/h200 | no result on {HEAD[:12]} |" in text


def test_may_run_on_gpu():
    assert may_run_on_gpu(pr())
    assert not may_run_on_gpu(pr(author_is_collaborator=False))
    assert may_run_on_gpu(pr(author_is_collaborator=False, retest_by_writer_on=(HEAD,)))


def test_skip_findings_say_what_and_what_to_do():
    state = pr(results=(ran("kernels", T10[:1], T10[1:]),), base_results=(ran("kernels", T10, sha=BASE),))
    d = decide(state, GATED, AREAS)
    assert [f.detail for f in d.blocking] == [
        f"9 test(s) ran on the base ({BASE[:12]}) and are skipped or xfail on the head: "
        + ", ".join(T10[1:]) + "; make them run again, or set allow_newly_skipped: true on the suite if skipping "
        "them is intended"]
    d = decide(pr(results=state.results, base_results=(ran("kernels", T10, sha=OLD),)), GATED, AREAS)
    assert d.blocking[0].detail.startswith(f"9 test(s) ran on the base ({OLD[:12]}, the last trunk result; the base "
                                           f"tip {BASE[:12]} has none yet) and are skipped or xfail on the head: ")
    d = decide(state, ALLOWING, AREAS)
    assert [(f.code, f.subject) for f in d.listed] == [("newly-skipped", "kernels/cpu")]
    d = decide(pr(results=(ran("kernels", T10[:1], T10[1:]),)), GATED, AREAS)
    assert [(f.code, f.subject, f.detail) for f in d.listed] == [
        ("skipped", "kernels/cpu", "9 skipped or xfail test(s), no base result to compare with: " + ", ".join(T10[1:]))]
    text = render_summary(d, pr())
    assert "### Listed (not blocking)" in text and "`skipped` kernels/cpu: 9 skipped" in text


def test_conflict_findings_name_the_commit_and_upstream():
    d = decide(pr(conflict_commits=((C1, UP),), conflict_marker_files=("lib/a.cpp", "README.md"),
                  markers_error=""), SUITES, AREAS)
    assert [(f.code, f.detail) for f in d.blocking] == [
        ("conflict-markers", "the head adds conflict markers in: lib/a.cpp, README.md"),
        ("conflict-commit", f"commit {C1[:12]} stands for the unresolved conflict of upstream {UP[:12]} "
                            f"(Forksync-Conflict: {UP}); resolve it and fold the commit away")]


def test_external_check_findings_name_the_check():
    d = decide(pr(required_checks=("internal-ci", "ci/oss"),
                  checks=(Check("internal-ci", "timed_out"), Check("ci/oss", None, kind="status"))), SUITES, AREAS)
    assert [(f.code, f.subject, f.detail) for f in d.blocking] == [
        ("check-failed", "internal-ci", "check-run timed_out"), ("check-pending", "ci/oss", "status pending")]


def test_a_bound_check_finding_says_which_runs_do_not_count():
    d = decide(pr(required_checks=("ci/x", "ci/y"), check_apps=(("ci/x", 123), ("ci/y", 123)),
                  checks=(Check("ci/x", "success", app_id=456), Check("ci/y", "success", kind="status"))),
               SUITES, AREAS)
    assert [(f.code, f.subject, f.detail) for f in d.blocking] == [
        ("check-pending", "ci/x", "required, not reported on this head yet (bound to app 123; a run from app 456 "
                                  "does not count)"),
        ("check-pending", "ci/y", "required, not reported on this head yet (bound to app 123; a commit status "
                                  "does not count (it does not say which app set it))")]


def test_a_check_a_ruleset_requires_is_found_with_the_rule_that_requires_it():
    rule = "the required_status_checks rule of ruleset 42 (Repository meta/triton)"
    d = decide(pr(required_checks=("ci/x", "ci/y", "ci/z", "ci/p"), check_apps=(("ci/x", 123),),
                  check_rules=(("ci/x", rule), ("ci/y", rule), ("ci/z", rule)),
                  checks=(Check("ci/y", "failure", app_id=9), Check("ci/z", None, app_id=9))), SUITES, AREAS)
    assert [(f.code, f.subject, f.detail) for f in d.blocking] == [
        ("check-pending", "ci/x", f"required, not reported on this head yet (bound to app 123) — required by {rule}"),
        ("check-failed", "ci/y", f"check-run failure — required by {rule}"),
        ("check-pending", "ci/z", f"still running — required by {rule}"),
        ("check-pending", "ci/p", "required, not reported on this head yet")]      # protection's: no rule named


@pytest.mark.parametrize(("seen", "now", "code", "words", "unreported"), [
    (0.0, 50_000.0, "check-pending", "required, not reported on this head yet", (("ci/x", False),)),  # head unseen
    (40_000.0, 40_599.0, "check-pending", "required, not reported on this head yet", (("ci/x", False),)),
    (40_000.0, 45_400.0, "check-pending", "required, not reported on this head for 1.5 h since it was pushed",
     (("ci/x", False),)),
    (40_000.0, 50_800.0, "check-never-reported", "required, never reported on this head in 3 h (limit 3 h)",
     (("ci/x", True),)),
])
def test_a_required_check_never_reported_says_for_how_long_then_that_it_will_not_come(seen, now, code, words,
                                                                                       unreported):
    d = decide(pr(required_checks=("ci/x",), head_seen_at=seen), SUITES, AREAS, now=now,
               unreported_after_s=10_800)
    [f] = [f for f in d.blocking if f.subject == "ci/x"]
    assert (f.code, f.detail[:len(words)]) == (code, words)
    assert d.unreported == unreported and not d.allowed
    if code == "check-never-reported":
        assert "`paths:`" in f.detail and "branch protection" in f.detail and "`gate.required_checks`" in f.detail


def test_a_check_that_reported_is_no_wait_however_old_the_head():
    d = decide(pr(required_checks=("ci/x",), head_seen_at=1.0, checks=(Check("ci/x", None),)), SUITES, AREAS,
               now=1e9, unreported_after_s=60)
    assert [(f.code, f.detail) for f in d.blocking if f.subject == "ci/x"] == [("check-pending", "still running")]
    assert d.unreported == ()


def test_rules_that_could_not_be_read_hold_the_gate_beside_the_checks_it_knows():
    """The rulesets' rules unread: the checks protection requires are still judged, and one more
    finding holds the gate (in progress, never green) naming GitHub's answer; with every known
    check green it is what stands between the PR and a merge on an unknown rule set."""
    from bot.validation.checks import gate_conclusion

    err = "GitHubAPIError: GitHub answered 500 to GET /repos/meta/triton/rules/branches/main: Server Error"
    d = decide(pr(required_checks=("ci/p",), checks=(Check("ci/p", "success"),), rules_error=err), SUITES, AREAS)
    assert [(f.code, f.subject, f.detail) for f in d.blocking] == [
        ("checks-unread", "", "the base branch's required checks could not be read (the rules of its rulesets): "
                              + err + " — which checks GitHub requires is unknown, so the gate holds, never merging "
                              "on an unknown rule set, and decides again once they can be read")]
    assert ("check-green", "ci/p") in [(f.code, f.subject) for f in d.passed]
    assert not d.allowed and "merge" not in d.actions and gate_conclusion(d) is None


def test_outcome_from_runner_result():
    from bot.validation.gate import outcome_from_result
    from gpu_runner.result import Environment, Reason, RunResult, TestResult

    r = RunResult(suite="kernels", level="L1", commit=HEAD, platform="h200", verdict="red", outcome="error",
                  reasons=[Reason(code="below-floor", detail="3 tests ran, floor 4")],
                  tests=[TestResult(id="t::a", name="a", outcome="failed"),
                         TestResult(id="t::b", name="b", outcome="passed")],
                  environment=Environment(runner_id="r1"))
    o = outcome_from_result(r)
    assert o == SuiteOutcome("kernels", HEAD, "h200", "error", ("t::a",), "below-floor: 3 tests ran, floor 4",
                             ran=("t::a", "t::b"))
    d = decide(pr(results=(o,)), (SuiteRequirement("kernels", ("h200",)),), AREAS)
    assert [(f.code, f.subject, f.detail) for f in d.blocking] == [
        ("suite-error", "kernels/h200", "below-floor: 3 tests ran, floor 4")]


def test_infrastructure_finding_says_retry_on_another_runner():
    state = pr(results=(fail("kernels", [], verdict="infrastructure", reason="infra-error: gpu-missing: NVIDIA-SMI has failed"),)
               + ALL_GREEN[1:])
    d = decide(state, SUITES)
    (f,) = d.blocking
    assert f.detail == "infra-error: gpu-missing: NVIDIA-SMI has failed — not a failure of this PR: retry on another runner"
    assert not any(x.code == "new-failure" for x in d.blocking)


def test_an_invalid_trusted_config_blocks_even_the_fallback():
    """No suites and no areas because the trusted file could not be read: one green check of
    another CI would pass the fallback, but an unreadable config is never green."""
    state = pr(results=(), checks=(Check("ci/oss", "success"),))
    assert decide(state, ()).allowed
    d = decide(state, (), config_error="triage.open_after_nigths: extra inputs are not permitted")
    assert not d.allowed and [f.code for f in d.blocking] == ["config-invalid"]
    assert "open_after_nigths" in d.blocking[0].detail and "merge" not in d.actions


L3_RESULTS = ALL_GREEN + (SuiteOutcome("heavy", HEAD, "cpu", "pending"),)


@pytest.mark.parametrize("requests,results,codes", [
    ((), ALL_GREEN, ([], [])),                                                         # nobody asked: nothing
    ((L3Request("heavy", "cpu", HEAD),), ALL_GREEN, (["l3-pending"], [])),              # queued, no row yet
    ((L3Request("heavy", "cpu", HEAD, "running"),), L3_RESULTS, (["l3-pending"], [])),  # dispatched
    ((L3Request("heavy", "cpu", HEAD, "done", "pass"),), ALL_GREEN + (green("heavy"),), ([], ["l3-green"])),
    ((L3Request("heavy", "cpu", HEAD, "done", "error"),),
     ALL_GREEN + (fail("heavy", [], verdict="error", reason="count-mismatch: 3 tests ran"),), (["l3-failed"], [])),
    ((L3Request("heavy", "cpu", HEAD, "done", "fail"),), ALL_GREEN + (fail("heavy", ["t::a"]),), (["l3-failed"], [])),
    ((L3Request("heavy", "cpu", HEAD, "done", "error"),), ALL_GREEN, (["l3-failed"], [])),     # no row at all
    # green on an older head only: says nothing about this one
    ((L3Request("heavy", "cpu", OLD, "done", "pass"),), ALL_GREEN + (green("heavy", sha=OLD),), (["l3-stale"], [])),
    ((L3Request("heavy", "cpu", HEAD, "cancelled"),), ALL_GREEN, (["l3-stale"], [])),
    # a re-run asked for after a red result: pending, not the old red
    ((L3Request("heavy", "cpu", HEAD, "done", "fail"), L3Request("heavy", "cpu", HEAD)),
     ALL_GREEN + (fail("heavy", ["t::a"]),), (["l3-pending"], [])),
])
def test_l3_runs_asked_for_need_green_on_the_head(requests, results, codes):
    d = decide(pr(results=results, l3_requests=requests), SUITES, AREAS)
    got = ([f.code for f in d.blocking], [f.code for f in d.passed if f.code.startswith("l3")])
    assert got == codes
    assert d.allowed is (not codes[0])


@pytest.mark.parametrize("requests,l3_suites,blocking,listed", [
    # answered, and the trusted config has no such suite any more: listed, not judged
    ((L3Request("heavy", "cpu", HEAD, "done", "error"),), ("heavy-v2",), [], ["l3-suite-gone"]),
    # still queued: the tick has yet to say so on the PR
    ((L3Request("heavy", "cpu", HEAD),), ("heavy-v2",), ["l3-pending"], []),
    # the suite is there, or the trusted config is unknown: judged as ever
    ((L3Request("heavy", "cpu", HEAD, "done", "error"),), ("heavy",), ["l3-failed"], []),
    ((L3Request("heavy", "cpu", HEAD, "done", "error"),), None, ["l3-failed"], []),
])
def test_an_answered_l3_request_for_a_suite_gone_from_the_config_stops_counting(requests, l3_suites, blocking, listed):
    d = decide(pr(l3_requests=requests), SUITES, AREAS, l3_suites=l3_suites)
    assert ([f.code for f in d.blocking], [f.code for f in d.listed]) == (blocking, listed)


@pytest.mark.parametrize("signed_at,counts", [(149, False), (150, True), (151, True)])
def test_a_signoff_counts_only_after_the_newest_l3_result_on_the_head(signed_at, counts):
    """The L3 reply asks owners to sign off once they have read it: one given before the result
    was in read nothing (GitHub stamps to the second: the result's own second counts)."""
    state = pr(areas=("llvm-pin",), unit_updated_at=100, signoffs=(SignOff("llvm-pin", "bob", signed_at),),
               results=ALL_GREEN + (green("heavy"),),
               l3_requests=(L3Request("heavy", "cpu", OLD, "done", "pass", 300),
                            L3Request("heavy", "cpu", HEAD, "done", "pass", 150)))
    d = decide(state, SUITES, AREAS)
    assert ("signed-off" in [f.code for f in d.passed]) is counts
    if not counts:
        [f] = [f for f in d.blocking if f.code == "l3-signoff-missing"]
        assert "before the newest L3 result" in f.detail and "once you have read it" in f.detail


def test_an_approval_or_signoff_set_aside_as_older_than_the_unit_says_so():
    """An owner who approved (or signed off) sees "approved" on GitHub; when the gate sets that
    approval aside — given before the unit's own commits last changed, or on a head forksync never
    saw carrying them (before its first look at the PR) — the finding says whose, and that it must
    be given again on the head, instead of asking for an approval that was given."""
    d = decide(pr(areas=("amd", "llvm-pin"), head_sha=HEAD, unit_updated_at=100,
                  reviews=(Review("carol", "APPROVED", 50, commit_id=OLD), Review("alice", "APPROVED", 200)),
                  signoffs=(SignOff("llvm-pin", "bob", 60),)), SUITES, AREAS)
    text = {f.subject: f.detail for f in d.blocking if f.code in ("approval-missing", "l3-signoff-missing")}
    assert "carol approved" in text["amd"] and "again" in text["amd"] and HEAD[:12] in text["amd"]
    assert "bob signed off" in text["llvm-pin"] and "again" in text["llvm-pin"]
    chain = decide(pr(kind="chain", unit_updated_at=100, reviews=(Review("dave", "APPROVED", 50),)), SUITES, AREAS)
    detail = next(f.detail for f in chain.blocking if f.code == "approval-missing")
    assert "dave approved" in detail and "again" in detail


#: the areas of AREAS with their owners written in another case than the accounts spell them
CASED = (AreaPolicy("llvm-pin", ("Alice", "BOB"), requires_l3=True), AreaPolicy("amd", ("Carol",)))


@pytest.mark.parametrize("state, blocking, passed", [
    (pr(areas=("amd",), reviews=(Review("carol", "APPROVED", 200),)), [], [("approved", "amd", "approved by carol")]),
    (pr(areas=("amd",), reviews=(Review("CAROL", "APPROVED", 200),)), [], [("approved", "amd", "approved by CAROL")]),
    (pr(areas=("amd",), reviews=(Review("dave", "APPROVED", 200),)),
     [("approval-missing", "amd", "needs an approval from an owner: Carol")], []),
    (pr(areas=("amd",), reviews=(Review("carol", "CHANGES_REQUESTED", 200),)),
     [("approval-missing", "amd", "needs an approval from an owner: Carol"),
      ("changes-requested", "amd", "changes requested by carol")], []),
    (pr(areas=("amd",), reviews=(Review("carol", "APPROVED", 50),)),
     [("approval-missing", "amd", "needs an approval from an owner: Carol; carol approved before the unit's own "
       f"commits last changed (or on a head forksync never saw carrying them): approve again on {HEAD[:12]}")], []),
    (pr(areas=("llvm-pin",), reviews=(Review("alice", "APPROVED", 200),), signoffs=(SignOff("llvm-pin", "bob", 300),)),
     [], [("approved", "llvm-pin", "approved by alice"), ("signed-off", "llvm-pin", "L3 sign-off by bob")]),
    (pr(areas=("llvm-pin",), reviews=(Review("alice", "APPROVED", 200),), signoffs=(SignOff("llvm-pin", "bob", 60),)),
     [("l3-signoff-missing", "llvm-pin", "needs `/forksync signoff llvm-pin` from one of: Alice, BOB; bob signed off "
       f"before the unit's own commits last changed (or before forksync first saw them): sign off again on {HEAD[:12]}")],
     [("approved", "llvm-pin", "approved by alice")]),
    (pr(areas=("amd",), reviews=(Review("carol", "APPROVED", 200),), metrics_needing_signoff=("matmul:bf16",),
        signoffs=(SignOff("matmul:bf16", "carol", 300),)),
     [], [("approved", "amd", "approved by carol"), ("signed-off", "matmul:bf16", "L3 sign-off by carol")]),
])
def test_owners_are_matched_with_logins_in_any_case(state, blocking, passed):
    """GitHub takes a login in any case for the same account and gives reviews and comments in the
    account's own spelling: an owner written ``Carol`` in forksync.yml is the account ``carol``,
    for approvals, changes requested and L3 sign-offs alike."""
    d = decide(state, SUITES, CASED)
    assert [(f.code, f.subject, f.detail) for f in d.blocking] == blocking
    assert [(f.code, f.subject, f.detail) for f in d.passed if f.code in ("approved", "signed-off")] == passed


def test_an_unknown_verdict_without_a_reason_is_shown_as_python_writes_it():
    """A result whose verdict is none of the runner's words and which gives no reason: the finding
    names the verdict as ``repr`` writes it, so a quote or a backslash in it shows as what it is."""
    d = decide(pr(results=(fail("kernels", [], verdict="it's\\odd"),) + ALL_GREEN[1:]), SUITES, AREAS)
    assert [f.detail for f in d.blocking if f.code == "suite-error"] == ["verdict \"it's\\\\odd\""]
