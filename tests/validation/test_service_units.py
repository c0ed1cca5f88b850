"""Pure parts of validation on GitHub: check-run names and ids, annotation paths and lines,
the gate check's conclusion, reviews and the unit's last change from API objects."""
import pytest

from bot.validation.checks import check_name, failing_test_line, failing_test_path, gate_conclusion, parse_external_id
from bot.validation.gate import Check, Finding, GateDecision
from bot.validation.gate_inputs import (
    TreeFacts,
    epoch,
    latest_reviews,
    pr_kind,
    protection_apps,
    protection_checks,
    required_checks,
    ruleset_apps,
    ruleset_checks,
    status_checks,
    tree_facts,
    unit_digest,
    unit_updated_at,
)
from gpu_runner.result import TestResult


def t(id_, classname="", file=None):
    return TestResult(id=id_, name=id_.split("::")[-1], classname=classname, file=file, outcome="failed")


@pytest.mark.parametrize("test, path", [
    (t("tests_fork.test_basic::test_two", "tests_fork.test_basic"), "tests_fork/test_basic.py"),
    (t("tests.test_k::TestAdd::test_x", "tests.test_k.TestAdd"), "tests/test_k.py"),
    (t("x::y", "a.b", file="python/test/unit/test_x.py"), "python/test/unit/test_x.py"),
    (t("Triton :: Conversion/tritongpu.mlir"), "Conversion/tritongpu.mlir"),
    (t("test/a.py::test_b"), "test/a.py"),
])
def test_annotation_paths(test, path):
    assert failing_test_path(test) == path


def test_annotation_line_is_the_last_frame_in_that_file():
    tb = "tests/t.py:4: in helper\n    x()\nlib.py:2: in x\ntests/t.py:17: AssertionError"
    assert failing_test_line("tests/t.py", tb) == 17 and failing_test_line("other.py", tb) == 1


def test_check_names_and_external_ids():
    assert check_name("unit", "cpu") == "forksync/L1/unit"
    assert check_name("kernels", "h200", 2) == "forksync/L1/kernels@h200"
    assert check_name("heavy", "cpu", 1, "L3") == "forksync/L3/heavy"
    assert parse_external_id("L1:kernels:h200") == ("L1", "kernels", "h200")
    assert parse_external_id("gate") is None and parse_external_id(None) is None


@pytest.mark.parametrize("codes, expected", [
    ((), "success"),
    (("pending-result",), None),
    (("stale-base", "missing-result"), None),
    (("pending-result", "approval-missing"), "failure"),
    (("new-failure",), "failure"),
    # upstream moved back past the PR's commits: waiting (the tick decides again once it returns)
    (("upstream-rewound", "check-pending"), None),
])
def test_gate_conclusion(codes, expected):
    d = GateDecision(not codes, tuple(Finding(c, "") for c in codes))
    assert gate_conclusion(d) == expected


def test_latest_review_per_reviewer_and_comments_do_not_count():
    reviews = [
        {"user": {"login": "carol"}, "state": "CHANGES_REQUESTED", "submitted_at": "2026-11-30T01:00:00Z"},
        {"user": {"login": "carol"}, "state": "APPROVED", "submitted_at": "2026-11-30T02:00:00Z"},
        {"user": {"login": "carol"}, "state": "COMMENTED", "submitted_at": "2026-11-30T03:00:00Z"},
        {"user": {"login": "dan"}, "state": "approved", "submitted_at": "2026-11-30T00:30:00Z"},
    ]
    assert [(r["user"]["login"], r["state"]) for r in latest_reviews(reviews)] == [("dan", "APPROVED"),
                                                                                   ("carol", "APPROVED")]


def test_unit_updated_at_ignores_merge_commits():
    commits = [
        {"parents": [{}], "commit": {"committer": {"date": "2026-11-30T01:00:00Z"}}},
        {"parents": [{}, {}], "commit": {"committer": {"date": "2026-11-30T05:00:00Z"}}},   # the bot's base merge
        {"parents": [{}], "commit": {"committer": {"date": "2026-11-30T02:00:00Z"}}},
    ]
    assert unit_updated_at(commits) == epoch("2026-11-30T02:00:00Z") == 1_796_004_000
    assert unit_updated_at([]) == 0


def test_a_merge_with_content_of_its_own_is_part_of_the_unit():
    pick = {"sha": "a" * 40, "parents": [{}], "commit": {"committer": {"date": "2026-11-30T01:00:00Z"}}}
    merge = {"sha": "b" * 40, "parents": [{}, {}], "commit": {"committer": {"date": "2026-11-30T05:00:00Z"}}}
    assert unit_digest([pick, merge]) == unit_digest([pick])                       # a clean base merge
    assert unit_digest([pick, merge], ("b" * 40,)) != unit_digest([pick])          # an edit in the merge
    assert unit_updated_at([pick, merge], ("b" * 40,)) == epoch("2026-11-30T05:00:00Z")


def test_required_checks_from_branch_protection():
    branch = {"protected": True, "protection": {"enabled": True, "required_status_checks": {
        "enforcement_level": "non_admins", "contexts": ["ci/oss", "internal-ci"],
        "checks": [{"context": "internal-ci", "app_id": None}, {"context": "lint", "app_id": 3}]}}}
    assert protection_checks(branch) == ("ci/oss", "internal-ci", "lint")
    assert protection_checks({"protected": False}) == ()
    off = {"protection": {"required_status_checks": {"enforcement_level": "off", "contexts": ["x"]}}}
    assert protection_checks(off) == ()


def test_checks_bound_to_an_app_from_branch_protection():
    """``checks[].app_id``: a number binds the check to that app; null and -1 mean any source."""
    from bot.validation.checks import required_fingerprint

    branch = {"protection": {"required_status_checks": {"enforcement_level": "everyone", "contexts": [],
              "checks": [{"context": "internal-ci", "app_id": None}, {"context": "lint", "app_id": 3},
                         {"context": "ci/any", "app_id": -1}]}}}
    assert protection_apps(branch) == (("lint", 3),)
    off = {"protection": {"required_status_checks": {"enforcement_level": "off", "checks": [{"context": "x", "app_id": 3}]}}}
    assert protection_apps(off) == ()
    names = protection_checks(branch)
    assert required_fingerprint(names) == required_fingerprint(names, ())           # unbound: as before
    assert required_fingerprint(names, (("lint", 3),)) != required_fingerprint(names)
    assert required_fingerprint(names, (("lint", 3),)) != required_fingerprint(names, (("lint", 4),))


def test_required_checks_are_branch_protections_and_the_rulesets():
    """``repos/get-branch-rules`` items: a ``required_status_checks`` rule's contexts are required
    like protection's; ``integration_id`` binds one to an app (absent or null: any source); other
    rule types add nothing; protection's binding of a name comes first."""
    branch = {"protection": {"required_status_checks": {"enforcement_level": "everyone", "contexts": ["ci/oss"],
              "checks": [{"context": "ci/oss", "app_id": None}, {"context": "lint", "app_id": 3}]}}}
    info = {"ruleset_source_type": "Repository", "ruleset_source": "meta/triton"}
    rules = [{"type": "deletion", "ruleset_id": 7, **info},
             {"type": "required_status_checks", "ruleset_id": 7, **info, "parameters": {
                 "required_status_checks": [{"context": "ci/rules", "integration_id": 123}, {"context": "lint",
                                            "integration_id": 4}, {"context": "ci/oss"}],
                 "strict_required_status_checks_policy": True}},
             {"type": "required_status_checks", "ruleset_id": 8, "ruleset_source_type": "Organization",
              "ruleset_source": "meta", "parameters": {"required_status_checks": [
                  {"context": "ci/org", "integration_id": None}, {"context": "ci/rules"}],
                  "strict_required_status_checks_policy": False}}]
    r7 = "the required_status_checks rule of ruleset 7 (Repository meta/triton)"
    assert ruleset_checks(rules) == (("ci/rules", r7), ("lint", r7), ("ci/oss", r7),
                                     ("ci/org", "the required_status_checks rule of ruleset 8 (Organization meta)"))
    assert ruleset_apps(rules) == (("ci/rules", 123), ("lint", 4))
    req = required_checks(branch, rules, ["nightly", "ci/oss"])
    assert req.names == ("ci/oss", "lint", "ci/rules", "ci/org", "nightly")
    assert req.apps == (("lint", 3), ("ci/rules", 123))
    assert req.rules == ruleset_checks(rules)
    assert required_checks(branch, [], ()).names == protection_checks(branch)
    assert required_checks({}, rules).names == ("ci/rules", "lint", "ci/oss", "ci/org")


def test_commit_statuses_become_checks():
    combined = {"state": "pending", "statuses": [
        {"context": "ci/oss", "state": "success"}, {"context": "internal-ci", "state": "pending"},
        {"context": "nightly", "state": "error"}, {"context": "x", "state": "failure"}]}
    assert status_checks(combined) == [Check("ci/oss", "success", kind="status"), Check("internal-ci", None, kind="status"),
                                       Check("nightly", "error", kind="status"), Check("x", "failure", kind="status")]


async def test_tree_facts_never_pass_silently(tmp_path):
    from bot.demo.repobuilder import RepoBuilder

    r = RepoBuilder.init(tmp_path / "r")
    base = r.commit("base", {"a.py": "x = 1\n"}, when=1_700_000_000)
    head = r.commit("conflict left behind", {"a.py": "<<<<<<< HEAD\nx = 1\n=======\nx = 2\n>>>>>>> up\n"},
                    when=1_700_000_100)

    async def here(b, h):
        return r.path

    async def unreachable(b, h):
        raise RuntimeError(f"commit {h[:12]} cannot be fetched from meta/triton")

    # every commit of base..head too, as pulls/list-commits shapes them (it lists 250 at most),
    # and every changed path (pulls/list-files lists 3000 at most)
    assert await tree_facts(here, base, head) == TreeFacts(markers=("a.py",), commits=(
        {"sha": head, "parents": [{"sha": base}],
         "commit": {"message": "conflict left behind\n", "committer": {"date": "2023-11-14T22:15:00Z"}}},),
        paths=("a.py",))
    assert await tree_facts(None, base, head) == TreeFacts(error="no repository to read the head's trees from")
    assert await tree_facts(unreachable, base, head) == TreeFacts(
        error=f"RuntimeError: commit {head[:12]} cannot be fetched from meta/triton")
    facts = await tree_facts(here, base, "f" * 40)
    assert (facts.markers, facts.conflicts) == ((), ()) and facts.error.startswith(
        "RefError: ref 'ffffffffffffffffffffffffffffffffffffffff' not found")


def test_the_runner_never_sees_the_bots_secrets():
    from bot.validation.backends import runner_env
    env = runner_env({"PATH": "/usr/bin", "HOME": "/h", "FORKSYNC_TOKEN": "t0k", "FORKSYNC_WEBHOOK_SECRET": "s",
                      "FORKSYNC_PRIVATE_KEY_FILE": "/k.pem", "GITHUB_TOKEN": "g", "GH_TOKEN": "g2",
                      "AWS_SECRET_ACCESS_KEY": "a", "ANTHROPIC_API_KEY": "k", "CUDA_VISIBLE_DEVICES": "0",
                      "TRITON_INTERPRET": "1"})
    assert env == {"PATH": "/usr/bin", "HOME": "/h", "CUDA_VISIBLE_DEVICES": "0", "TRITON_INTERPRET": "1"}


BOT = "forksync[bot]"


@pytest.mark.parametrize("head, user, recorded, reason", [
    ({"repo": {"full_name": "meta/triton"}}, BOT, False, ""),                 # the App opened it
    ({"repo": {"full_name": "meta/triton"}}, "alice", True, ""),              # a person's PR on forksync's branch
    ({"repo": {"full_name": "meta/triton"}}, BOT, True, ""),
    ({"repo": {"full_name": "meta/triton"}}, "alice", False,
     "opened by @alice on a branch forksync did not push"),
    ({"repo": {"full_name": "meta/triton"}}, "", False, "opened by someone else on a branch forksync did not push"),
    # a fork of the fork: its branch is never forksync's, whoever opened the PR or whatever is recorded
    ({"repo": {"full_name": "eve/triton"}}, "eve", True, "its head branch is in eve/triton, not in meta/triton"),
    ({"repo": {"full_name": "eve/triton"}}, BOT, True, "its head branch is in eve/triton, not in meta/triton"),
    ({"repo": None}, BOT, True, "its head repository was deleted"),             # GitHub: a deleted fork
    ({}, BOT, True, "its head repository was deleted"),
])
def test_only_forksyncs_own_branch_on_the_fork_makes_a_sync_pr(head, user, recorded, reason):
    from bot.sync.prs import not_forksyncs

    pr = {"head": {"ref": "forksync/chain-0123456789ab", **head}, "base": {"ref": "main"}, "user": {"login": user}}
    assert not_forksyncs(pr, "meta/triton", bot_login=BOT, recorded=recorded, base="main") == reason


def test_a_second_pr_on_forksyncs_recorded_branch_is_not_the_unit():
    """The row names the unit's PR: a person's other PR from the same branch (into another base)
    is not forksync's; the unit's own PR, one on a branch with no PR recorded yet, and one the
    App opened are."""
    from bot.sync.prs import not_forksyncs

    pr = {"number": 9, "head": {"ref": "forksync/bundle-1", "repo": {"full_name": "meta/triton"}},
          "base": {"ref": "main"}, "user": {"login": "alice"}}
    assert not_forksyncs(pr, "meta/triton", bot_login=BOT, recorded=True, base="main", unit_pr=2) == (
        "opened by @alice on forksync's branch, whose sync PR is #2")
    assert not_forksyncs(pr, "meta/triton", bot_login=BOT, recorded=True, base="main", unit_pr=9) == ""
    assert not_forksyncs(pr, "meta/triton", bot_login=BOT, recorded=True, base="main", unit_pr=0) == ""
    assert not_forksyncs({**pr, "user": {"login": BOT}}, "meta/triton", bot_login=BOT, recorded=True, base="main",
                         unit_pr=2) == ""


@pytest.mark.parametrize("into, user, unit_pr, reason", [
    ("main", "alice", 0, ""),
    # a PR from forksync's branch into another base is never the unit's: not while the row names
    # no PR yet, not when it is the PR the row names, not when the App opened it
    ("release", "alice", 0, "into `release`, not the unit's base `main`"),
    ("release", "alice", 9, "into `release`, not the unit's base `main`"),
    ("release", BOT, 0, "into `release`, not the unit's base `main`"),
    ("", "alice", 0, "its base branch is unknown"),
])
def test_a_pr_into_another_base_than_the_units_is_not_forksyncs(into, user, unit_pr, reason):
    from bot.sync.prs import not_forksyncs

    pr = {"number": 9, "head": {"ref": "forksync/bundle-1", "repo": {"full_name": "meta/triton"}},
          "base": {"ref": into}, "user": {"login": user}}
    assert not_forksyncs(pr, "meta/triton", bot_login=BOT, recorded=True, base="main", unit_pr=unit_pr) == reason


@pytest.mark.parametrize("row, base", [
    (None, "fork-main"),                     # no row: the configured fork.ref
    ({"base": ""}, "fork-main"),             # a row written before the base was recorded
    ({"base": "trunk"}, "trunk"),            # fork.ref when forksync pushed the unit
])
def test_a_units_base_is_the_recorded_one_else_the_configured_fork_ref(row, base):
    from bot.sync.prs import unit_base

    assert unit_base(row, "fork-main") == base


@pytest.mark.parametrize("row, number, user, reason", [
    # a unit in flight: its branch is forksync's, whoever opened the PR into the unit's base
    ({"state": "open", "pr": 0}, 9, "alice", ""),
    ({"state": "blocked", "pr": 0}, 9, "alice", ""),
    # a unit that ended (landed, closed, re-planned) left a record, kept as history: it speaks for
    # its own PR (a redelivered close still finds its unit) and makes no other PR forksync's
    ({"state": "closed", "pr": 5}, 5, "alice", ""),
    ({"state": "merged", "pr": 5}, 5, BOT, ""),
    ({"state": "closed", "pr": 5}, 9, "alice", "opened by @alice on a branch forksync did not push"),
    ({"state": "replanned", "pr": 0}, 9, "alice", "opened by @alice on a branch forksync did not push"),
    ({"state": "merged", "pr": 5}, 9, BOT, ""),                         # the App opened it
    # a new unit on the same branch name: the PRs of the units it carried before are not its own
    ({"state": "open", "pr": 0, "earlier_prs": "[5]"}, 5, BOT,
     "forksync's earlier sync PR from this branch, whose unit ended; the branch carries another unit now"),
    ({"state": "open", "pr": 9, "earlier_prs": "[5]"}, 5, "alice",
     "forksync's earlier sync PR from this branch, whose unit ended; the branch carries another unit now"),
    ({"state": "open", "pr": 9, "earlier_prs": "[5]"}, 9, "alice", ""),
    ({"state": "open", "pr": 0, "earlier_prs": None}, 5, "alice", ""),  # a row written before the column
])
def test_a_finished_units_row_speaks_only_for_its_own_pr(row, number, user, reason):
    from bot.sync.prs import row_reason

    pr = {"number": number, "head": {"ref": "forksync/bundle-1", "repo": {"full_name": "meta/triton"}},
          "base": {"ref": "main"}, "user": {"login": user}}
    assert row_reason(pr, "meta/triton", {"base": "main", **row}, bot_login=BOT, fork_ref="main") == reason


def test_without_a_known_bot_login_only_recorded_branches_are_forksyncs():
    from bot.sync.prs import not_forksyncs

    pr = {"head": {"ref": "forksync/bundle-1", "repo": {"full_name": "meta/triton"}}, "base": {"ref": "main"},
          "user": {"login": BOT}}
    assert not_forksyncs(pr, "meta/triton", bot_login=None, recorded=True, base="main") == ""
    assert not_forksyncs(pr, "meta/triton", bot_login="", recorded=False, base="main") == (
        "opened by @forksync[bot] on a branch forksync did not push")


@pytest.mark.parametrize("bot_login, author", [
    ("Deploy-Bot", "deploy-bot"),            # FORKSYNC_BOT_LOGIN as a person wrote it, the author as GitHub shows it
    ("deploy-bot", "Deploy-Bot"),
    ("forksync[bot]", "ForkSync[bot]"),
])
def test_the_bots_own_pr_is_recognised_whatever_the_case_of_its_login(bot_login, author):
    """GitHub logins are case-insensitive: a PR the bot opened on a branch it has no row for is its
    own however the configured login and GitHub's spelling differ in case."""
    from bot.sync.prs import not_forksyncs

    pr = {"head": {"ref": "forksync/bundle-1", "repo": {"full_name": "meta/triton"}}, "base": {"ref": "main"},
          "user": {"login": author}}
    assert not_forksyncs(pr, "meta/triton", bot_login=bot_login, recorded=False, base="main") == ""


@pytest.mark.parametrize("codes, leaves", [
    ((), True),
    (("approval-missing", "l3-signoff-missing", "hold"), True),
    # L3 runs for hours on demand: a person can review while it runs
    (("approval-missing", "l3-pending"), True),
    # a red heavy suite is a red result on the head, as a red L1 suite is: not ready for review;
    # l3-stale is also what such a red becomes once the head moves (the base merged in)
    (("l3-failed",), False),
    (("approval-missing", "l3-stale"), False),
    (("approval-missing", "new-failure"), False),
    (("conflict-commit",), False),
    (("conflict-markers",), False),
    (("pending-result",), False),
])
def test_a_draft_sync_pr_leaves_draft_only_when_what_is_left_is_a_persons_or_a_long_run(codes, leaves):
    from bot.validation.service import leaves_draft

    decision = GateDecision(allowed=not codes, blocking=tuple(Finding(c, c) for c in codes))
    assert leaves_draft(decision) is leaves


def test_the_gate_external_id_carries_what_held_the_pr():
    """``gate:<fingerprint>`` alone for a PR not held for a unit it lands after; ``;lands-after`` and
    ``;lands-after-closed`` when the gate's ``lands-after`` finding held it — the reconcile tick's data."""
    from dataclasses import replace

    from bot.validation.checks import gate_external_id, parse_gate_external_id, required_fingerprint
    from bot.validation.gate import PRState, decide

    base = PRState(number=3, head_sha="a" * 40, base_sha="b" * 40, head_contains_base=True, required_checks=("ci",))
    fp = required_fingerprint(("ci",))
    assert gate_external_id(decide(base, ()), base) == fp
    held = replace(base, lands_after=(("bundle-1", 2),))
    assert gate_external_id(decide(held, ()), held) == fp + ";lands-after"
    closed = replace(base, lands_after_closed=(("bundle-1", 2, "deferred", ("c" * 40,)),))
    assert parse_gate_external_id(gate_external_id(decide(closed, ()), closed)) == (fp, {"lands-after-closed"})
    assert parse_gate_external_id(fp) == (fp, frozenset()) and parse_gate_external_id(None) == ("", frozenset())


def test_a_chain_named_for_a_fork_ref_is_a_chain_whatever_its_labels():
    # forksync/<fork ref>/chain-<sha12>: the sync branch of a fork ref other than the repository's
    # default branch (several fork branches in one repository, ROCm/triton)
    from bot.config.forksync import ForksyncConfig
    cfg = ForksyncConfig()
    assert pr_kind(cfg, [], "forksync/chain-0123456789ab") == "chain"
    assert pr_kind(cfg, [], "forksync/release/internal/3.2.x/chain-0123456789ab") == "chain"
    assert pr_kind(cfg, [], "forksync/release/internal/3.2.x/bundle-0123456789ab") == "other"
    assert pr_kind(cfg, [], "alice/chain-0123456789ab") == "other"
