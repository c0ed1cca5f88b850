"""The merge gate: a pure function from a PR's state to a decision.

Inputs are plain dataclasses the edges fill in (GitHub API, git, the runner's result JSON, the
sign-off store); :func:`decide` does no I/O. The decision lists *everything* that blocks, so the
``forksync/gate`` check run (``templates/checks/gate.md.j2``) tells a person exactly what is
missing; a finding's words are a block of ``templates/checks/findings.txt.j2``, given the data it
was judged on. Nothing is green by default: a required result that is absent, stale, short or
unreadable blocks ("silence is not green").

Rules, in the order they are reported (the order findings are shown in):

0. ``config-invalid`` — the default branch's ``forksync.yml`` exists but cannot be read (a
   mistake in any section): its suites, areas (owners, L3 sign-offs) and required checks are
   unknown, so nothing passes until it is fixed — never the no-suites fallback of rule 6.
1. Conflicts — ``conflict-markers``: a file the head changes carries conflict-marker lines its
   base version did not have (read from the real trees in the bot's repository, rule
   :func:`bot.core.markers.marker_lines`: runs of ≥ 7 — or the path's ``conflict-marker-size`` —
   ``<``/``|``/``>`` followed by whitespace or the line end, ``=`` inside a conflict or alone on a
   line of a file that is no markup);
   ``markers-unchecked``: the trees could not be read (head not fetchable), which never passes;
   ``conflict-commit``: a commit in base..head carries ``Forksync-Conflict: <upstream sha>`` (a
   stopped chain's placeholder, folded away once a person resolves it); ``picks-missing``: a sync
   PR's head lacks a commit with the ``Upstream-Commit`` trailer of one of its unit's upstream
   commits (a person's push replaced forksync's picks; checked when no conflict commit stands for
   the rest); ``picks-squashed``: a commit of a sync PR's head claims more than one of its unit's
   upstream commits (picks squashed together would land as one fork commit); ``lands-after``: a
   unit its sync PR lands after (its row's ``depends_json``: predicted on that unit's picks) is
   still in flight; ``commits-unlisted``: the
   PR has at least the 250 commits GitHub's API lists and git could not list them all, so which
   commits an approval saw cannot be told (never passes).
2. ``upstream-rewound`` — upstream's branch moved back to an older commit of its own history and
   this sync PR carries commits it no longer has (:mod:`bot.sync.rewind`): held, not closed, until
   upstream builds on the rewound history or returns — a change upstream took back must not land;
   ``hold`` — a ``/forksync hold`` (or hold label) in effect blocks; ``draft`` — a sync PR forksync
   opened ready that a person made a draft since (their "not yet": never undone by forksync).
3. ``stale-base`` — the head must contain the **current** base tip; otherwise the bot merges the
   base into the branch (``pulls/update-branch``, never a rewrite of a person's commits) and the
   suites run again on the new head. Action ``update-branch`` — not while a conflict commit is on
   the branch (a merge on top of it would stand between it and its resolution).
4. ``awaiting-retest`` — a PR by a non-collaborator runs on GPU runners only after a writer's
   ``/forksync retest`` on its current head (:func:`may_run_on_gpu`).
5. Suites — every required L1 suite (trusted copy, default branch; per platform) needs a result
   on exactly the head sha: absent → ``missing-result`` (action ``run-suites``), running →
   ``pending-result``, on an older head → ``stale-result``; a suite-level error (crash,
   timeout, short count, unparsable report) → ``suite-error`` and always blocks; failing tests
   also red on the base's result for the same suite and platform are *pre-existing* (listed,
   not blocking); any other failing test is a ``new-failure``. Without a base result every
   failure is new. A test that ran on the base's last result and is skipped (or xfail) on the
   head is ``newly-skipped``: blocking unless the suite has ``allow_newly_skipped``; without a
   base result the head's skipped tests are only listed (``skipped``, not blocking).
6. External checks — every name in ``required_checks`` (branch protection's required status
   checks, the ``required_status_checks`` rules of the rulesets on the base, and
   ``gate.required_checks``; forksync's own ``forksync/…`` checks excluded) needs a
   check run or commit status on the head that is success, neutral or skipped: absent or
   running → ``check-pending``, anything else → ``check-failed``, each naming the check, and
   the ruleset rule that requires it where one does (``check_rules``); rules that could not be
   read (``rules_error``: GitHub answered 4xx or 5xx) → ``checks-unread``, which holds the gate
   (never merges on an unknown rule set) until they can be. A required check with no run or
   status on the head says for how long (``head_seen_at``: forksync first saw the head, at its
   push) once that is :data:`AGE_SHOWN_AFTER_S` or more; past ``unreported_after_s`` (``gate.unreported_after_s``) it is
   ``check-never-reported`` — a workflow whose ``paths:`` filter the PR does not match, a
   disabled workflow, a renamed check — naming the causes and what to do; it blocks all the
   same (:attr:`GateDecision.unreported`). A check branch
   protection or a ruleset binds to one app (``check_apps``) counts only that app's check runs:
   a run of the same name from another app (or a workflow), and a commit status (which does
   not say which app set it), are ignored for it, and the finding says so. With
   no suites configured and no required names, the fallback: ≥ 1 check on the head and all
   green (``no-required-checks`` / ``check-pending`` / ``check-failed``); never merge with none.
7. Approvals — a chain, and every touched area that has owners, needs an approval by one of
   that area's owners (the account in any case, as GitHub compares logins) given on exactly the head or after the unit's own commits last changed
   (``approval-missing``); a
   chain touching no owned area needs an approval by any writer who is a person (not an App's
   ``[bot]`` account). An owner's outstanding
   "changes requested" blocks (``changes-requested``).
8. L3 runs — every workload and platform someone asked for with ``/forksync l3 <workload>`` on
   this PR (:class:`L3Request`) needs a green result on exactly the head: queued, running or
   dispatched → ``l3-pending``; red (failing tests, a crash, a timeout, fewer tests than the
   suite declares, no result at all) → ``l3-failed``; asked for only on older heads (or
   cancelled) → ``l3-stale``, since a heavy run on another tree says nothing about this one.
   A PR nobody asked L3 of has no L3 finding (sign-offs are rule 9's). A workload the trusted
   configuration has no L3 suite for any more, every request for it answered, is listed
   (``l3-suite-gone``), not judged: no configuration could give it a result.
9. ``l3-signoff-missing`` — each touched area with ``requires_l3`` (and each metric an L3 run
   flagged) needs a sign-off by one of its owners (:mod:`bot.validation.signoff`), given after
   the unit's own commits last changed and after the newest L3 result on the head was in
   (:func:`l3_read_from`): a sign-off given while the run was queued read nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

from bot.core.logins import among, is_app_bot
from bot.templating import duration, render, render_part

#: The findings' details, one block each (the rules' words live there, the gate passes the data).
FINDINGS = "checks/findings.txt.j2"
#: The texts of a required check not reported on the head (rule 6).
WAIT_TEXTS = "validation/check_wait.txt.j2"
#: How long (s) a required check may be unreported before its finding says for how long: a
#: just-pushed head's workflows are still being queued, and "for 12 s" says nothing.
AGE_SHOWN_AFTER_S = 600

#: Check-run name of the gate itself (never counted as one of the PR's required checks).
GATE_CHECK = "forksync/gate"


@dataclass(frozen=True)
class SuiteOutcome:
    """One suite's result on one commit and platform, as the runner's result JSON gives it.

    ``verdict``: ``pass`` | ``fail`` (tests failed) | ``error`` (the suite itself is not
    trustworthy: crash, timeout, missing/unparsable report, fewer tests than expected) |
    ``infrastructure`` (the runner's machine failed: retry on another runner) |
    ``pending`` (dispatched, no result yet). ``failing``, ``skipped`` (skipped or xfail) and
    ``ran`` (passed, failed or error) are test ids (``file::name``)."""

    suite: str
    sha: str
    platform: str = "cpu"
    verdict: str = "pass"
    failing: tuple[str, ...] = ()
    reason: str = ""
    url: str = ""
    skipped: tuple[str, ...] = ()
    ran: tuple[str, ...] = ()


@dataclass(frozen=True)
class Review:
    """The latest review of one reviewer. ``state``: APPROVED | CHANGES_REQUESTED | COMMENTED |
    DISMISSED; ``time`` epoch seconds; ``can_write``: the reviewer has write access;
    ``commit_id``: the head the review was given on (GitHub's ``commit_id``; "" when unknown)."""

    login: str
    state: str
    time: int
    can_write: bool = True
    commit_id: str = ""


@dataclass(frozen=True)
class Check:
    """Another check on the head: a check run, or a commit status (``kind="status"``; its state
    success / failure / error, pending → None). ``conclusion``: success | failure | neutral |
    cancelled | timed_out | action_required | skipped | error | None (still running).
    ``app_id``: the GitHub App that created the check run (its ``app.id``); None for a commit
    status, which does not say which app set it."""

    name: str
    conclusion: str | None
    required: bool = True
    kind: str = "check-run"                # check-run | status
    app_id: int | None = None


@dataclass(frozen=True)
class AreaPolicy:
    """What the gate needs of a configured area (from ``bot.config.forksync.Area``)."""

    name: str
    owners: tuple[str, ...] = ()
    requires_l3: bool = False


@dataclass(frozen=True)
class SuiteRequirement:
    """A required L1 suite and the platforms it must pass on (from ``bot.config.suites.SuiteConfig``);
    ``allow_newly_skipped``: tests newly skipped against the base are listed, not blocking."""

    name: str
    platforms: tuple[str, ...] = ("cpu",)
    allow_newly_skipped: bool = False


@dataclass(frozen=True)
class SignOff:
    """A recorded ``/forksync signoff <area|metric>`` (see :mod:`bot.validation.signoff`)."""

    target: str
    by: str
    time: int


@dataclass(frozen=True)
class L3Request:
    """A ``/forksync l3 <workload>`` run recorded for the PR (table ``l3_runs``): the head it was
    asked for and its ``status`` (queued | running | done | cancelled) and ``verdict`` (pass |
    fail | error | infrastructure once done); ``finished_at``: when forksync recorded and
    answered its result (epoch s; 0 before), the earliest an owner could read it."""

    workload: str
    platform: str
    head_sha: str
    status: str = "queued"
    verdict: str = ""
    finished_at: int = 0


@dataclass(frozen=True)
class PRState:
    """Everything the gate reads about one PR. Times are epoch seconds.

    ``head_contains_base``: the current base tip ``base_sha`` is an ancestor of ``head_sha``
    (``git merge-base --is-ancestor``). ``unit_updated_at``: when the unit's own commits last
    changed (clean merges of the base do not count, a merge with content of its own does:
    :func:`bot.validation.gate_inputs.unit_digest`), so approvals and sign-offs survive a base
    update; ``unit_heads``: the heads forksync saw carrying exactly those own commits (a review
    given on one of them saw them). ``retest_by_writer_on``: head shas a writer authorised with ``/forksync retest``.
    ``conflict_marker_files``: paths whose head blob adds conflict markers
    (:func:`bot.git.markers.files_with_markers` on the bot's repository); ``markers_error``:
    why they could not be checked ("" when they were); ``conflict_commits``: ``(commit sha,
    upstream sha)`` of commits in base..head with a ``Forksync-Conflict:`` trailer; ``rewritten``:
    the fork commits a sync branch was built on that the base no longer has (a force push
    rewrote the base's history: :func:`bot.git.apply.rewritten_base`).
    ``required_checks``: check names that must be green on the head (branch protection, the
    rulesets' ``required_status_checks`` rules and ``gate.required_checks``); ``check_apps``:
    ``(name, app id)`` for each required check branch protection or a ruleset binds to one GitHub
    App (``required_status_checks.checks[].app_id``, a rule's ``integration_id``; unbound names —
    app id null or -1 — are not listed); ``check_rules``: ``(name, words naming the ruleset rule
    that requires it)``; ``rules_error``: why the rules of the rulesets on the base could not be
    read ("" when they were: the required checks are then known in full); ``checks``: the head's
    check runs and commit statuses."""

    number: int
    head_sha: str
    base_sha: str
    head_contains_base: bool
    kind: str = "bundle"                   # bundle | chain | other
    areas: tuple[str, ...] = ()
    author: str = ""
    author_is_collaborator: bool = True
    retest_by_writer_on: tuple[str, ...] = ()
    conflict_marker_files: tuple[str, ...] = ()
    markers_error: str = ""
    commits_error: str = ""                # why the PR's full commit list is unknown ("" when it is)
    conflict_commits: tuple[tuple[str, str], ...] = ()
    missing_picks: tuple[str, ...] = ()    # the unit's upstream commits no commit of base..head claims as a pick
    squashed_picks: tuple[tuple[str, tuple[str, ...]], ...] = ()   # (commit, upstream shas) of a commit claiming several
    lands_after: tuple[tuple[str, int], ...] = ()   # (unit id, PR number; 0 none) of units it lands after, still in flight
    # (unit id, PR number, state, upstream shas) of units it lands after closed unmerged, which its
    # branch's person's work was made on (bot.validation.gate_inputs.lands_after_closed)
    lands_after_closed: tuple[tuple[str, int, str, tuple[str, ...]], ...] = ()
    person_draft: bool = False             # a sync PR forksync did not open as a draft that is one now: a person's "not yet"
    rewritten: tuple[str, ...] = ()        # commits the sync branch was built on that the base no longer has
    required_checks: tuple[str, ...] = ()
    check_apps: tuple[tuple[str, int], ...] = ()   # required check → the only app whose run counts
    check_rules: tuple[tuple[str, str], ...] = ()  # required check → the ruleset rule requiring it
    rules_error: str = ""                  # why the base's ruleset rules could not be read ("" when they were)
    holds: tuple[str, ...] = ()            # who holds it
    #: why the PR is held because upstream's branch moved back past commits it carries (the
    #: finding's words, bot.sync.rewind; "" when it is not)
    upstream_rewound: str = ""
    results: tuple[SuiteOutcome, ...] = ()
    base_results: tuple[SuiteOutcome, ...] = ()
    reviews: tuple[Review, ...] = ()
    checks: tuple[Check, ...] = ()
    signoffs: tuple[SignOff, ...] = ()
    l3_requests: tuple[L3Request, ...] = ()
    metrics_needing_signoff: tuple[str, ...] = ()
    unit_updated_at: int = 0
    unit_heads: tuple[str, ...] = ()       # heads seen carrying exactly the unit's current own commits
    #: when forksync first saw ``head_sha`` as the PR's head (epoch s; 0 unknown): its push, as near
    #: as the ``pull_request`` delivery that announced it (:func:`bot.validation.store.head_seen`)
    head_seen_at: float = 0.0


@dataclass(frozen=True)
class Finding:
    """One line of the gate's explanation: a stable ``code`` and a human ``detail`` (a block of
    ``templates/checks/findings.txt.j2``, rendered by :func:`_text`)."""

    code: str
    detail: str
    subject: str = ""                      # suite/platform, area, check … it is about


@dataclass(frozen=True)
class GateDecision:
    """``allowed`` iff ``blocking`` is empty. ``actions`` are what the bot should do next
    (``update-branch``, ``run-suites``, ``merge``); ``pre_existing`` lists failures already red
    on the base; ``passed`` lists conditions met, for the summary; ``listed`` are facts shown
    but not blocking (skipped tests with no base result to compare, newly skipped tests a
    suite allows)."""

    allowed: bool
    blocking: tuple[Finding, ...]
    passed: tuple[Finding, ...] = ()
    pre_existing: tuple[Finding, ...] = ()
    actions: tuple[str, ...] = ()
    listed: tuple[Finding, ...] = ()
    #: ``(check name, overdue)`` of each required check with no run or status on the head:
    #: ``overdue`` once it stayed so past ``unreported_after_s`` (``check-never-reported``)
    unreported: tuple[tuple[str, bool], ...] = ()

    @property
    def title(self) -> str:
        """The check run's title: ready to merge, or how many conditions block."""
        return _text("title", allowed=self.allowed, n=len(self.blocking))


def may_run_on_gpu(pr: PRState) -> bool:
    """Whether the PR's code may run on GPU runners: collaborators' PRs always; others only after
    a writer's ``/forksync retest`` on the current head (a new push needs a new retest)."""
    return pr.author_is_collaborator or pr.head_sha in pr.retest_by_writer_on


def _text(block: str, **data) -> str:
    """The detail of a finding: ``block`` of :data:`FINDINGS` rendered with ``data`` (no I/O
    beyond reading the template, as for every text forksync shows)."""
    return render_part(FINDINGS, block, **data)


def _skip_findings(s: SuiteRequirement, plat: str, r: SuiteOutcome, last_base: SuiteOutcome | None, base_sha: str,
                   blocking, listed):
    """Tests skipped (or xfail) on the head that ran on the base's last result; a module skipped
    whole at collection (pytest's JUnit: one case, no classname, the module's dotted name) counts
    every test of that module that ran on the base."""
    if not r.skipped:
        return
    subj = f"{s.name}/{plat}"
    if last_base is None:
        listed.append(Finding("skipped", _text("skipped", tests=list(r.skipped)), subj))
        return
    ran_on_base = set(last_base.ran)
    newly = [t for t in r.skipped if t in ran_on_base]
    # a module skipped as a whole (pytest.importorskip, skip(allow_module_level=True)) is one
    # case named for the module, with no class and no test name: it stands for every test of it
    modules = [t for t in r.skipped if "::" not in t and t not in ran_on_base]
    if modules:
        seen = set(newly)
        newly += [t for t in last_base.ran if t not in seen and any(
            (cls := t.split("::", 1)[0]) == m or cls.startswith(m + ".") for m in modules)]
    if not newly:
        return
    finding = Finding("newly-skipped", _text("newly_skipped", tests=newly, ran_on=last_base.sha, base=base_sha,
                                             allowed=s.allow_newly_skipped), subj)
    (listed if s.allow_newly_skipped else blocking).append(finding)


def _gone(r: SuiteOutcome, last_base: SuiteOutcome | None) -> list[str]:
    """Tests that ran on the base's last result and neither ran nor were skipped on the head (a
    skipped one is ``newly-skipped``'s): what a short suite lost, so nobody diffs two reports by
    hand. Empty when the head read no report (a crash or a timeout before any test)."""
    if last_base is None or not (r.ran or r.skipped):
        return []
    here = set(r.ran) | set(r.skipped)
    return [t for t in last_base.ran if t not in here]


def _suite_findings(pr: PRState, suites: tuple[SuiteRequirement, ...], blocking, passed, pre_existing, actions,
                    listed):
    by_key: dict[tuple[str, str], list[SuiteOutcome]] = {}
    for r in pr.results:
        by_key.setdefault((r.suite, r.platform), []).append(r)
    base = {(r.suite, r.platform): r for r in pr.base_results if r.sha == pr.base_sha}
    # the base's last result per suite and platform: on the base tip if there is one, else the
    # newest trunk result given (base_results are in time order)
    last_base: dict[tuple[str, str], SuiteOutcome] = {}
    for r in pr.base_results:
        if r.verdict in ("pass", "fail") and r.ran:
            last_base[(r.suite, r.platform)] = r
    last_base.update({k: v for k, v in base.items() if v.verdict in ("pass", "fail") and v.ran})
    for s in suites:
        for plat in s.platforms:
            subj = f"{s.name}/{plat}"
            rs = by_key.get((s.name, plat), [])
            on_head = [r for r in rs if r.sha == pr.head_sha]
            if not on_head:
                if rs:
                    blocking.append(Finding("stale-result", _text("stale_result", older=sorted({r.sha[:12] for r in rs}),
                                                                  head=pr.head_sha), subj))
                else:
                    blocking.append(Finding("missing-result", _text("missing_result", head=pr.head_sha), subj))
                if "run-suites" not in actions:
                    actions.append("run-suites")
                continue
            r = on_head[-1]
            if r.verdict == "pending":
                blocking.append(Finding("pending-result", _text("pending_result"), subj))
            elif r.verdict == "pass":
                passed.append(Finding("suite-green", _text("suite_green", pre_existing=0), subj))
            elif r.verdict == "fail":
                b = base.get((s.name, plat))
                red_on_base = set(b.failing) if b is not None and b.verdict in ("pass", "fail") else set()
                new = [t for t in r.failing if t not in red_on_base]
                old = [t for t in r.failing if t in red_on_base]
                for t in old:
                    pre_existing.append(Finding("pre-existing", _text("pre_existing", test=t, base=pr.base_sha), subj))
                if new:
                    blocking.append(Finding("new-failure", _text("new_failure", tests=new, compared=b is not None), subj))
                elif not r.failing:
                    blocking.append(Finding("suite-error", _text("fail_without_tests", reason=r.reason), subj))
                else:
                    passed.append(Finding("suite-green", _text("suite_green", pre_existing=len(old)), subj))
            elif r.verdict == "infrastructure":
                # the machine, not the PR: no GPU, a driver that did not start, a full disk
                blocking.append(Finding("infrastructure", _text("infrastructure", reason=r.reason), subj))
                if "retry-on-another-runner" not in actions:
                    actions.append("retry-on-another-runner")
            else:
                b = last_base.get((s.name, plat))
                gone = _gone(r, b)
                blocking.append(Finding("suite-error", _text("suite_error", reason=r.reason, verdict=repr(r.verdict),
                                                             gone=gone, ran_on=b.sha if b else "", base=pr.base_sha),
                                        subj))
            if r.verdict != "pending":
                _skip_findings(s, plat, r, last_base.get((s.name, plat)), pr.base_sha, blocking, listed)


def is_fresh(rv: Review, pr: PRState) -> bool:
    """Whether review ``rv`` saw the unit's own commits as they are now: given on the head, or on
    an earlier head carrying the same own commits (only clean base merges since), whenever
    forksync first looked — else given at/after those commits last changed."""
    on = rv.commit_id and (rv.commit_id == pr.head_sha or rv.commit_id in pr.unit_heads)
    return bool(on) or rv.time >= pr.unit_updated_at


def _set_aside(pr: PRState, reviews) -> list[str]:
    """The logins (sorted) whose approvals among ``reviews`` :func:`is_fresh` set aside: GitHub
    still shows them as approvals, so a finding that only asked for one would leave the approver
    waiting with no idea why."""
    return sorted({rv.login for rv in reviews if rv.state == "APPROVED" and not is_fresh(rv, pr)})


def _approval_findings(pr: PRState, areas: dict[str, AreaPolicy], blocking, passed):
    fresh = [rv for rv in pr.reviews if is_fresh(rv, pr)]
    approvers = {rv.login for rv in fresh if rv.state == "APPROVED"}
    objectors = {rv.login for rv in pr.reviews if rv.state == "CHANGES_REQUESTED"}
    owned = [areas[a] for a in pr.areas if a in areas and areas[a].owners]
    for area in owned:
        # owners are written by people, reviewers given by GitHub: one account in any case
        who = sorted(login for login in approvers if among(login, area.owners))
        if who:
            passed.append(Finding("approved", _text("approved", by=who, chain=False), area.name))
        else:
            aside = _set_aside(pr, [rv for rv in pr.reviews if among(rv.login, area.owners)])
            blocking.append(Finding("approval-missing", _text("approval_missing", owners=sorted(set(area.owners)),
                                                              set_aside=aside, head=pr.head_sha), area.name))
        against = sorted(login for login in objectors if among(login, area.owners))
        if against:
            blocking.append(Finding("changes-requested", _text("changes_requested", by=against), area.name))
    if pr.kind == "chain" and not owned:
        # a person's review: an App's bot account with write access (a dependency or CI bot) is none
        writers = sorted(rv.login for rv in fresh if rv.state == "APPROVED" and rv.can_write
                         and rv.login != pr.author and not is_app_bot(rv.login))
        if writers:
            passed.append(Finding("approved", _text("approved", by=writers, chain=True), "chain"))
        else:
            aside = _set_aside(pr, [rv for rv in pr.reviews if rv.can_write and rv.login != pr.author])
            blocking.append(Finding("approval-missing", _text("approval_missing", owners=None, set_aside=aside,
                                                              head=pr.head_sha), "chain"))


def gone_l3(pr: PRState, l3_suites: tuple[str, ...] | None) -> tuple[str, ...]:
    """The workloads asked for on the PR that the trusted configuration has no L3 suite for any
    more (``l3_suites``: its L3 suite names; None when unknown: none), once every request for them
    is answered (none queued or running): no configuration can give them a result, so they stop
    counting — while one is still queued, the L3 tick has yet to say so on the PR."""
    if l3_suites is None:
        return ()
    asked = dict.fromkeys(q.workload for q in pr.l3_requests if q.workload not in l3_suites)
    return tuple(w for w in asked
                 if not any(q.workload == w and q.status in ("queued", "running") for q in pr.l3_requests))


def _l3_findings(pr: PRState, gone: tuple[str, ...], blocking, passed, listed):
    """Rule 8: each (workload, platform) asked for on the PR, judged on the head's result alone;
    ``gone`` (:func:`gone_l3`) are listed, not judged."""
    for workload in gone:
        listed.append(Finding("l3-suite-gone", _text("l3_suite_gone", workload=workload), workload))
    for workload, plat in dict.fromkeys((q.workload, q.platform) for q in pr.l3_requests if q.workload not in gone):
        subj = f"{workload}/{plat}"
        asked = [q for q in pr.l3_requests if (q.workload, q.platform) == (workload, plat)]
        here = [q for q in asked if q.head_sha == pr.head_sha]
        rows = [r for r in pr.results if (r.suite, r.platform) == (workload, plat) and r.sha == pr.head_sha]
        queued = any(q.status == "queued" for q in here)
        running = any(q.status == "running" for q in here)
        # a finished result on the head is the evidence even while its request is not closed yet
        if queued or (rows and rows[-1].verdict == "pending") or (running and not rows):
            state = "queued" if queued and not running else "running"
            blocking.append(Finding("l3-pending", _text("l3_pending", workload=workload, state=state, head=pr.head_sha),
                                    subj))
        elif rows and rows[-1].verdict == "pass":
            passed.append(Finding("l3-green", _text("l3_green", head=pr.head_sha), subj))
        elif rows:
            r = rows[-1]
            blocking.append(Finding("l3-failed", _text("l3_failed", head=pr.head_sha, reason=r.reason, failing=list(r.failing),
                                                       verdict=repr(r.verdict)), subj))
        elif any(q.status == "done" for q in here):
            verdict = next(q.verdict for q in reversed(here) if q.status == "done")
            blocking.append(Finding("l3-failed", _text("l3_no_result", head=pr.head_sha, verdict=verdict), subj))
        else:
            older = list(dict.fromkeys(q.head_sha[:12] for q in asked if q.head_sha != pr.head_sha))
            blocking.append(Finding("l3-stale", _text("l3_stale", older=older, head=pr.head_sha, workload=workload), subj))


def is_signed_off(target: str, owners, signoffs, since: int = 0) -> str | None:
    """The login of the first owner in ``owners`` who signed off ``target`` at or after ``since``
    (epoch s; the last change to the unit's own commits), else None. Sign-offs by non-owners
    never count, nor an App's bot account's (a sign-off is a person's, as an approval is); no
    owners → never signed off (configure owners for areas that require L3). An owner is the
    account in any case (:func:`bot.core.logins.among`)."""
    for s in sorted(signoffs, key=lambda s: (s.time, s.by)):
        if s.target == target and among(s.by, owners) and not is_app_bot(s.by) and s.time >= since:
            return s.by
    return None


def l3_read_from(pr: PRState, gone: tuple[str, ...] = ()) -> int:
    """The earliest time (epoch s) a sign-off can have been given after reading the newest L3
    result on the head (its ``finished_at``; 0: no result there). A sign-off is read against the
    result it signs off: one given while the run was queued covers nothing the owner saw. GitHub
    stamps comments to the second: one in the result's own second counts, as for
    ``unit_updated_at``."""
    return max((q.finished_at for q in pr.l3_requests
                if q.head_sha == pr.head_sha and q.status == "done" and q.workload not in gone), default=0)


def _signoff_findings(pr: PRState, areas: dict[str, AreaPolicy], gone: tuple[str, ...], blocking, passed,
                      l3_suites: tuple[str, ...] | None = None):
    """Rule 9: a sign-off counts when given after the unit's own commits last changed and after
    the newest L3 result on the head (:func:`l3_read_from`). While no L3 run was asked on the head
    the finding of an area says how to ask, naming the trusted L3 suites (``l3_suites``; None when
    unknown, empty when none is configured: then it says nothing of L3): the sign-off is meant to
    read one."""
    asked = any(q.head_sha == pr.head_sha for q in pr.l3_requests)
    targets = [(a, areas[a].owners) for a in pr.areas if a in areas and areas[a].requires_l3]
    owners_all = tuple(sorted({o for a in pr.areas if a in areas for o in areas[a].owners}))
    targets += [(m, owners_all) for m in pr.metrics_needing_signoff]
    since = max(pr.unit_updated_at, l3_read_from(pr, gone))
    for target, owners in targets:
        who = is_signed_off(target, owners, pr.signoffs, since=since)
        if who:
            passed.append(Finding("signed-off", _text("signed_off", by=who), target))
        else:
            people = [o for o in owners if not is_app_bot(o)]
            mine = [s for s in pr.signoffs if s.target == target and among(s.by, people)]
            # the owner did sign off: say why it no longer counts, or they would wait for nothing
            before = ("l3" if any(s.time >= pr.unit_updated_at for s in mine) else "change" if mine else "")
            hint = not asked and target in areas and bool(l3_suites)
            blocking.append(Finding("l3-signoff-missing", _text("signoff_missing", target=target, people=people,
                                                                owners=bool(owners), signed=sorted({s.by for s in mine}),
                                                                before=before, head=pr.head_sha, ask_l3=hint,
                                                                l3_suites=sorted(l3_suites or ())), target))


#: Check conclusions GitHub's branch protection accepts as passing.
PASSING = ("success", "neutral", "skipped")


def _check_note(rule: str | None, app: int | None = None, ignored=()) -> str:
    """The words after a required check's finding: the ruleset ``rule`` that requires it (None:
    none does) and, for a check bound to ``app`` with no run of that app on the head, why the
    ``ignored`` checks of its name do not count."""
    return _text("check_note", rule=rule, app=app,
                 apps=sorted({c.app_id for c in ignored if c.kind == "check-run" and c.app_id is not None}),
                 unknown_app=any(c.kind == "check-run" and c.app_id is None for c in ignored),
                 status=any(c.kind != "check-run" for c in ignored))


def _unreported(pr: PRState, name: str, note: str, now: float, after_s: float, blocking, unreported):
    """A required check ``name`` with no run or status on the head (rule 6): how long it has
    waited, when the head's first sighting and ``now`` are known; never reported once that is
    ``after_s`` or more. ``note``: the bound-app and ruleset words of the finding."""
    waited = max(0.0, now - pr.head_seen_at)
    if not (pr.head_seen_at and now) or waited < min(AGE_SHOWN_AFTER_S, after_s or AGE_SHOWN_AFTER_S):
        blocking.append(Finding("check-pending", render_part(WAIT_TEXTS, "yet", note=note), name))
        unreported.append((name, False))
        return
    overdue = bool(after_s) and waited >= after_s
    if overdue:
        blocking.append(Finding("check-never-reported", render_part(WAIT_TEXTS, "never", age=duration(waited),
                                                                    limit=duration(after_s), note=note), name))
    else:
        blocking.append(Finding("check-pending", render_part(WAIT_TEXTS, "pending", age=duration(waited), note=note),
                                name))
    unreported.append((name, overdue))


def _check_findings(pr: PRState, have_suites: bool, blocking, passed, *, now: float = 0.0,
                    unreported_after_s: float = 0.0, unreported: list | None = None):
    """Rule 6: required external checks (and the no-suites fallback). ``unreported`` receives
    ``(name, overdue)`` of each required check with no run or status on the head."""
    unreported = [] if unreported is None else unreported
    def own(name: str) -> bool:
        return name == GATE_CHECK or name.startswith("forksync/")

    if pr.rules_error:
        # a ruleset may require a check nothing else names: an unread list is never "none"
        blocking.append(Finding("checks-unread", _text("checks_unread", error=pr.rules_error)))

    by_name: dict[str, list[Check]] = {}
    for c in pr.checks:
        if not own(c.name):
            by_name.setdefault(c.name, []).append(c)
    names = [n for n in dict.fromkeys(pr.required_checks) if not own(n)]
    if not names and not have_suites:
        names = [n for n, cs in by_name.items() if any(c.required for c in cs)]
        if not names:
            blocking.append(Finding("no-required-checks", _text("no_required_checks")))
            return
    bound = dict(pr.check_apps)
    # a check only a ruleset requires surprises people who look for it under branch protection:
    # the finding names the rule, so they know where it comes from and where to change it
    by_rule = dict(pr.check_rules)
    for n in names:
        cs = by_name.get(n, [])
        app = bound.get(n)
        why = _check_note(by_rule.get(n))
        if app is not None:
            # GitHub requires the bound app's run: anyone able to post a check run or status
            # could otherwise satisfy the requirement under the same name
            ignored = [c for c in cs if c.kind != "check-run" or c.app_id != app]
            cs = [c for c in cs if c not in ignored]
            if not cs:
                _unreported(pr, n, _check_note(by_rule.get(n), app, ignored), now, unreported_after_s, blocking,
                            unreported)
                continue
        elif not cs:
            _unreported(pr, n, why, now, unreported_after_s, blocking, unreported)
            continue
        running = [c for c in cs if c.conclusion is None]
        bad = [c for c in cs if c.conclusion is not None and c.conclusion not in PASSING]
        if bad:
            blocking.append(Finding("check-failed", _text("check_failed", states=sorted({(c.kind, c.conclusion) for c in bad}),
                                                          note=why), n))
        elif running:
            blocking.append(Finding("check-pending", _text("check_running", kind=running[0].kind, note=why), n))
        else:
            passed.append(Finding("check-green", _text("check_green", conclusion=cs[-1].conclusion), n))


def decide(pr: PRState, suites: tuple[SuiteRequirement, ...], areas: tuple[AreaPolicy, ...] = (), *,
           config_error: str = "", l3_suites: tuple[str, ...] | None = None, now: float = 0.0,
           unreported_after_s: float = 0.0) -> GateDecision:
    """The gate's decision for ``pr`` given the trusted required L1 ``suites`` (already filtered
    to those that apply, see :func:`bot.config.suites.required_l1`) and the configured ``areas``.
    ``config_error``: why the trusted configuration could not be read ("" when it was, or when
    there is none); ``l3_suites``: the names of its L3 suites (None when unknown: every L3
    request is judged); ``now`` (epoch s; 0 unknown) and ``unreported_after_s`` (s; 0 never): how
    long a required check not reported on the head has waited since ``pr.head_seen_at``, and when
    that wait counts as never reported (rule 6). Pure and deterministic: the same inputs give the same findings in the same order."""
    blocking: list[Finding] = []
    passed: list[Finding] = []
    pre_existing: list[Finding] = []
    listed: list[Finding] = []
    actions: list[str] = []
    area_map = {a.name: a for a in areas}

    if config_error:
        # an unreadable trusted config leaves no suites, areas or required checks: without this
        # finding the no-suites fallback would pass on any one green check
        blocking.append(Finding("config-invalid", _text("config_invalid", error=config_error[:1500])))
    if pr.conflict_marker_files:
        blocking.append(Finding("conflict-markers", _text("conflict_markers", files=pr.conflict_marker_files)))
    if pr.markers_error:
        blocking.append(Finding("markers-unchecked", _text("markers_unchecked", error=pr.markers_error)))
    if pr.commits_error:
        blocking.append(Finding("commits-unlisted", pr.commits_error))
    for commit, upstream in pr.conflict_commits:
        blocking.append(Finding("conflict-commit", _text("conflict_commit", commit=commit, upstream=upstream), commit[:12]))
    if pr.missing_picks:
        blocking.append(Finding("picks-missing", _text("picks_missing", missing=pr.missing_picks)))
    if pr.lands_after:
        blocking.append(Finding("lands-after", _text("lands_after", units=pr.lands_after)))
    for u, n, state, ups in pr.lands_after_closed:
        blocking.append(Finding("lands-after", _text("lands_after_closed", unit=u, number=n, state=state, upstream=ups)))
    for commit, ups in pr.squashed_picks:
        blocking.append(Finding("picks-squashed", _text("picks_squashed", commit=commit, upstream=ups), commit[:12]))
    if pr.rewritten:
        blocking.append(Finding("rewritten-base", _text("rewritten_base", dropped=pr.rewritten)))
    if pr.upstream_rewound:
        blocking.append(Finding("upstream-rewound", pr.upstream_rewound))
    if pr.holds:
        blocking.append(Finding("hold", _text("hold", holds=pr.holds)))
    if pr.person_draft:
        blocking.append(Finding("draft", _text("draft")))
    if pr.head_contains_base:
        passed.append(Finding("base-current", _text("base_current", base=pr.base_sha)))
    elif pr.rewritten:
        pass                # merging the base in would keep the dropped commits: rebuilt or rebased instead
    elif pr.conflict_commits:
        # a merge on top of the conflict commit would stand between it and its resolution (the fold
        # takes only resolution commits): the base is merged in once the conflict is folded away
        blocking.append(Finding("stale-base", _text("stale_base", base=pr.base_sha, conflict=True)))
    else:
        blocking.append(Finding("stale-base", _text("stale_base", base=pr.base_sha, conflict=False)))
        actions.append("update-branch")
    gpu_ok = may_run_on_gpu(pr)
    if not gpu_ok:
        blocking.append(Finding("awaiting-retest", _text("awaiting_retest", author=pr.author)))
    if suites:
        _suite_findings(pr, suites, blocking, passed, pre_existing, actions, listed)
        if not gpu_ok and "run-suites" in actions:
            actions.remove("run-suites")
    unreported: list[tuple[str, bool]] = []
    _check_findings(pr, bool(suites), blocking, passed, now=now, unreported_after_s=unreported_after_s,
                    unreported=unreported)
    _approval_findings(pr, area_map, blocking, passed)
    gone = gone_l3(pr, l3_suites)
    _l3_findings(pr, gone, blocking, passed, listed)
    _signoff_findings(pr, area_map, gone, blocking, passed, l3_suites)
    if "update-branch" in actions and "run-suites" in actions:
        actions.remove("run-suites")      # running on a head that is about to change is wasted
    allowed = not blocking
    if allowed:
        actions.append("merge")
    return GateDecision(allowed, tuple(blocking), tuple(passed), tuple(pre_existing), tuple(actions), tuple(listed),
                        tuple(unreported))


def area_policies(cfg) -> tuple[AreaPolicy, ...]:
    """:class:`AreaPolicy` values from a ``ForksyncConfig``."""
    return tuple(AreaPolicy(a.name, tuple(a.owners), a.requires_l3) for a in cfg.areas)


def suite_requirements(suites) -> tuple[SuiteRequirement, ...]:
    """:class:`SuiteRequirement` values from ``SuiteConfig`` objects (already filtered)."""
    return tuple(SuiteRequirement(s.name, tuple(s.platforms), bool(getattr(s, "allow_newly_skipped", False)))
                 for s in suites)


def render_summary(decision: GateDecision, pr: PRState, dry_run: str | None = None) -> str:
    """The ``forksync/gate`` check-run summary (markdown) from ``templates/checks/gate.md.j2``.
    ``dry_run``: for ``forksync gate explain --repo``, the configuration file its suites came from
    ("" for none): the summary then names no PR and none of the App's ways (it has no PR)."""
    extra = {} if dry_run is None else {"dry_run": dry_run}
    return render("checks/gate.md.j2", decision=decision, pr=pr, **extra)


def outcome_from_result(result) -> SuiteOutcome:
    """A :class:`SuiteOutcome` from the runner's result (``gpu_runner.result.RunResult`` or
    anything with ``suite``, ``commit``, ``platform``, ``outcome``, ``failing``, ``reasons``).
    ``outcome`` pass/fail/error maps to the same verdicts; the reasons become the detail."""
    reason = "; ".join(f"{r.code}: {r.detail}" for r in getattr(result, "reasons", ()) or ())
    tests = getattr(result, "tests", ()) or ()
    return SuiteOutcome(result.suite, result.commit, result.platform, result.outcome,
                        tuple(result.failing), reason,
                        skipped=tuple(t.id for t in tests if t.outcome == "skipped"),
                        ran=tuple(t.id for t in tests if t.outcome != "skipped"))
