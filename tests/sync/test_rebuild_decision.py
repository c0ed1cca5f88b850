"""May a sync branch be rebuilt before it is published, and how: a table of plain facts and the
exact decision :func:`bot.sync.rebuild.decide` gives, with the costly facts it asked for (in order)."""
from dataclasses import replace

import pytest

from bot.sync.rebuild import (
    HOLDS_FORK_TIP,
    MERGE_CONFLICTS,
    RESOLVED_BY_HAND,
    Ask,
    BranchFacts,
    Decision,
    Path,
    Prior,
    decide,
    holds_persons_work,
    refusal_key,
)

FORK, OLD_FORK, TIP, PERSON = "f" * 40, "e" * 40, "a" * 40, "b" * 40

#: a branch forksync pushed (GitHub's tip is the one it pushed), published on an older fork tip,
#: holding nothing but forksync's commits, with no conflict and no resolution
BRANCH = BranchFacts(retry=False, dropped=0, foreign=0, tip=TIP, kept=0, conflict_commit=False, error=False,
                     fork_head=FORK, remote_tip=TIP, prior=Prior(pushed_tip=TIP, verified_tip="", base_sha=OLD_FORK))
STOPPED = replace(BRANCH, conflict_commit=True)
RESOLVED = replace(BRANCH, prior=replace(BRANCH.prior, verified_tip=TIP))


def facts(base: BranchFacts = BRANCH, prior: dict | None = None, **kw) -> BranchFacts:
    """``base`` with the fields ``kw`` and its row's fields ``prior`` changed."""
    return replace(base, prior=replace(base.prior, **prior), **kw) if prior else replace(base, **kw)


def run(f: BranchFacts, answers: dict[str, bool]) -> tuple[Decision, list[str]]:
    """Decide as the sync does: read each fact asked (from ``answers``) and decide again."""
    asked = []
    step = decide(f)
    while isinstance(step, Ask):
        assert step.fact not in asked, f"{step.fact} asked again once given"
        asked.append(step.fact)
        f = replace(f, **{step.fact: answers[step.fact]})
        step = decide(f)
    return step, asked


ROWS = [
    # (facts, answers to the costly reads, decision, facts asked in order)
    pytest.param(facts(prior={"base_sha": FORK}), {}, Decision(Path.LEAVE), [], id="nothing-moved"),
    pytest.param(BRANCH, {}, Decision(Path.LEAVE), [], id="fork-moved-no-conflict-no-resolution"),
    pytest.param(replace(BRANCH, prior=None, remote_tip=None), {}, Decision(Path.LEAVE), [], id="first-publish"),
    # the fork's history rewritten (force push) under the branch
    pytest.param(facts(dropped=2, foreign=1), {RESOLVED_BY_HAND: False}, Decision(Path.BLOCKED),
                 [RESOLVED_BY_HAND], id="dropped+foreign"),
    pytest.param(facts(dropped=2), {RESOLVED_BY_HAND: True}, Decision(Path.BLOCKED, resolved_by_hand=True),
                 [RESOLVED_BY_HAND], id="dropped+by_hand"),
    pytest.param(facts(dropped=2, foreign=1), {RESOLVED_BY_HAND: True}, Decision(Path.BLOCKED, resolved_by_hand=True),
                 [RESOLVED_BY_HAND], id="dropped+foreign+by_hand"),
    pytest.param(facts(dropped=2), {RESOLVED_BY_HAND: False}, Decision(Path.REBUILD_REWRITTEN, forget_kept=True),
                 [RESOLVED_BY_HAND], id="dropped+only-forksyncs"),
    # apply kept the dropped fork commits as not forksync's: they are the fork's old ones, forgotten
    pytest.param(facts(dropped=2, kept=2), {RESOLVED_BY_HAND: False}, Decision(Path.REBUILD_REWRITTEN, forget_kept=True),
                 [RESOLVED_BY_HAND], id="dropped+kept-dropped-commits"),
    pytest.param(facts(dropped=2, foreign=1, tip=""), {}, Decision(Path.BLOCKED), [], id="dropped+foreign-no-tip"),
    pytest.param(facts(dropped=2, tip=""), {}, Decision(Path.LEAVE, forget_kept=True), [], id="dropped-no-tip"),
    pytest.param(facts(STOPPED, dropped=1, retry=True), {RESOLVED_BY_HAND: False},
                 Decision(Path.REBUILD_REWRITTEN, forget_kept=True), [RESOLVED_BY_HAND], id="dropped+retry+stopped"),
    # "retry" from the status issue (or a shrink's rebuild)
    pytest.param(facts(retry=True), {RESOLVED_BY_HAND: False}, Decision(Path.REBUILD_RETRY), [RESOLVED_BY_HAND],
                 id="retry"),
    pytest.param(facts(retry=True), {RESOLVED_BY_HAND: True}, Decision(Path.LEAVE, retry_kept=True, resolved_by_hand=True),
                 [RESOLVED_BY_HAND], id="retry+by_hand"),
    pytest.param(facts(STOPPED, retry=True), {RESOLVED_BY_HAND: True},
                 Decision(Path.REBUILD_STOPPED, retry_kept=True, resolved_by_hand=True), [RESOLVED_BY_HAND],
                 id="retry+by_hand+stopped-fork-moved"),
    pytest.param(facts(retry=True, kept=1), {}, Decision(Path.LEAVE), [], id="retry+kept-person-commits"),
    pytest.param(facts(STOPPED, retry=True, kept=1), {}, Decision(Path.LEAVE), [], id="retry+kept+stopped"),
    pytest.param(facts(retry=True, tip=""), {}, Decision(Path.LEAVE), [], id="retry-no-tip"),
    # a chain stopped at a conflict commit
    pytest.param(STOPPED, {}, Decision(Path.REBUILD_STOPPED), [], id="stopped+fork-moved"),
    pytest.param(facts(STOPPED, prior={"base_sha": FORK}), {}, Decision(Path.LEAVE), [], id="stopped+fork-not-moved"),
    pytest.param(facts(STOPPED, remote_tip=PERSON), {}, Decision(Path.LEAVE), [], id="stopped+person-pushed"),
    pytest.param(facts(STOPPED, kept=1), {}, Decision(Path.LEAVE), [], id="stopped+kept-person-commits"),
    pytest.param(replace(STOPPED, prior=None), {}, Decision(Path.LEAVE), [], id="stopped+unit-ended"),
    pytest.param(facts(STOPPED, remote_tip=None, prior={"pushed_tip": ""}), {}, Decision(Path.LEAVE), [],
                 id="stopped+not-on-github"),
    pytest.param(facts(STOPPED, error=True), {}, Decision(Path.REBUILD_STOPPED), [], id="stopped+error"),
    # a chain a person's folded resolution finished
    pytest.param(RESOLVED, {HOLDS_FORK_TIP: False, MERGE_CONFLICTS: True}, Decision(Path.REBUILD_RESOLVED),
                 [HOLDS_FORK_TIP, MERGE_CONFLICTS], id="resolved+merge-conflicts"),
    pytest.param(RESOLVED, {HOLDS_FORK_TIP: False, MERGE_CONFLICTS: False}, Decision(Path.LEAVE_MERGES),
                 [HOLDS_FORK_TIP, MERGE_CONFLICTS], id="resolved+merges-cleanly"),
    pytest.param(RESOLVED, {HOLDS_FORK_TIP: True}, Decision(Path.LEAVE_MERGES), [HOLDS_FORK_TIP],
                 id="resolved+holds-fork-tip"),
    pytest.param(facts(RESOLVED, prior={"rebuild_refused": refusal_key(FORK, TIP)}), {}, Decision(Path.LEAVE_REFUSED), [],
                 id="resolved+refused-here"),
    pytest.param(facts(RESOLVED, prior={"rebuild_refused": refusal_key(OLD_FORK, TIP)}),
                 {HOLDS_FORK_TIP: False, MERGE_CONFLICTS: True}, Decision(Path.REBUILD_RESOLVED),
                 [HOLDS_FORK_TIP, MERGE_CONFLICTS], id="resolved+refused-on-older-fork-tip"),
    pytest.param(facts(RESOLVED, prior={"rebuild_refused": refusal_key(FORK, PERSON)}),
                 {HOLDS_FORK_TIP: False, MERGE_CONFLICTS: True}, Decision(Path.REBUILD_RESOLVED),
                 [HOLDS_FORK_TIP, MERGE_CONFLICTS], id="resolved+refused-at-another-branch-tip"),
    pytest.param(facts(RESOLVED, remote_tip=PERSON), {}, Decision(Path.LEAVE), [], id="resolved+person-pushed"),
    pytest.param(facts(RESOLVED, error=True), {}, Decision(Path.LEAVE), [], id="resolved+error"),
    pytest.param(facts(RESOLVED, kept=1), {}, Decision(Path.LEAVE), [], id="resolved+kept-person-commits"),
    pytest.param(facts(RESOLVED, retry=True), {RESOLVED_BY_HAND: True, HOLDS_FORK_TIP: False, MERGE_CONFLICTS: True},
                 Decision(Path.REBUILD_RESOLVED, retry_kept=True, resolved_by_hand=True),
                 [RESOLVED_BY_HAND, HOLDS_FORK_TIP, MERGE_CONFLICTS], id="retry+by_hand+resolved"),
]


@pytest.mark.parametrize("f,answers,decision,asked", ROWS)
def test_decide(f, answers, decision, asked):
    assert run(f, answers) == (decision, asked)


@pytest.mark.parametrize("f,answers,decision,asked", ROWS)
def test_decide_with_every_fact_given_asks_nothing(f, answers, decision, asked):
    given = {RESOLVED_BY_HAND: False, HOLDS_FORK_TIP: False, MERGE_CONFLICTS: False, **answers}
    assert decide(replace(f, **given)) == decision


@pytest.mark.parametrize("persons_commits,resolved_by_hand,expected", [
    (False, False, False), (True, False, True), (False, True, True), (True, True, True)])
def test_a_persons_work_is_commits_of_theirs_or_their_folded_resolution(persons_commits, resolved_by_hand, expected):
    assert holds_persons_work(persons_commits=persons_commits, resolved_by_hand=resolved_by_hand) is expected
