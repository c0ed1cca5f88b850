"""Gathering the merge gate's input (:class:`bot.validation.gate.PRState`) from GitHub and the store.

Pure helpers turn API objects into gate values (:func:`latest_reviews`, :func:`unit_updated_at`,
:func:`pr_areas`, :func:`pr_kind`, :func:`protection_checks`, :func:`protection_apps`,
:func:`ruleset_checks`, :func:`ruleset_apps`, :func:`required_checks`, :func:`status_checks`);
:func:`gather` is the edge that calls the API: the PR, the base branch (``repos/get-branch``: its
tip and its protection's required status checks), the rules of the rulesets on it
(``repos/get-branch-rules``: their ``required_status_checks``, as required as protection's),
``compare base...head`` (does the head contain the current base?), the PR's files (areas),
commits (when the unit's own commits last changed, :func:`own_commits`: clean merges of the
base — the bot's ``Update branch`` — do not count, a merge with content of its own does; the
newest committer date, or the time the bot first saw those commits differ from the ones it saw
before, whichever is later), reviews with each reviewer's permission,
the head's other check runs (with the app that created each) and commit statuses, holds,
sign-offs, the ``/forksync l3`` runs asked for, retest grants and the suite results on the head
and the base (the base tip's, else the newest trunk result).

Conflict markers and conflict commits are read from the **real trees** of base..head in the
bot's own repository (:func:`scan_range` over :mod:`bot.git.markers`), never from the API's
patch text, which GitHub leaves out for large files. A head that cannot be fetched or read is a
``markers-unchecked`` finding, never a pass.

GitHub's ``pulls/list-commits`` lists at most :data:`PR_COMMITS_LISTED` commits; a PR that long
may have more, so its unit digest and ``unit_updated_at`` are taken from git's ``base..head``
instead, and when git cannot be read it is a ``commits-unlisted`` finding: a decision on a cut list
could keep an approval of content the owner never saw.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import math
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Awaitable, Callable

from bot.agents.redact import error_text
from bot.config.forksync import ProvenanceRules
from bot.core.logins import same_login
from bot.core.provenance import picks_named, unpicked
from bot.git.apply import rewritten_base
from bot.git.markers import conflict_commits, markers_and_paths, merges_with_content, range_commits
from bot.github.common import WRITE_LEVELS, base_branch, head_contains, permission, split_repo
from bot.model import sync_branch_ref
from bot.sync import prs as sync_prs
from bot.sync import store as sync_store
from bot.templating import render_part
from bot.validation import signoff
from bot.validation import store as vstore
from bot.validation.checks import L1_PREFIX
from bot.validation.gate import GATE_CHECK, Check, L3Request, PRState, Review

#: the words gathering gives to what it read (details of the gate's findings), one block each
TEXTS = "checks/inputs.txt.j2"

#: ``(base sha, head sha) -> git dir`` holding both commits (awaitable); raises when it cannot.
RepoFor = Callable[[str, str], Awaitable[str | Path]]

#: The most commits ``pulls/list-commits`` returns ("Lists a maximum of 250 commits for a pull
#: request", GitHub's REST docs); a list this long may be cut.
PR_COMMITS_LISTED = 250

#: The most files ``pulls/list-files`` returns ("Responses include a maximum of 3000 files",
#: GitHub's REST docs); a list this long may be cut, and a file past it would bring no area (no
#: owner's approval, no area suite), so the paths are then read from git.
PR_FILES_LISTED = 3000


def epoch(iso: str | None) -> int:
    if not iso:
        return 0
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp())


def latest_reviews(reviews: list[dict]) -> list[dict]:
    """Each reviewer's latest review that counts (APPROVED, CHANGES_REQUESTED or DISMISSED; a
    plain comment neither approves nor withdraws), in time order."""
    latest: dict[str, dict] = {}
    for rv in reviews:
        state = (rv.get("state") or "").upper()
        if state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED") and rv.get("user"):
            latest[rv["user"]["login"]] = {**rv, "state": state}
    return sorted(latest.values(), key=lambda r: (epoch(r.get("submitted_at")), r["user"]["login"]))


def own_commits(commits: list[dict], merges_with_content=()) -> list[dict]:
    """The unit's own commits among the PR's (``pulls/list-commits`` objects): every non-merge
    commit, and every merge in ``merges_with_content`` (:func:`bot.git.markers.merges_with_content`:
    a hand resolution, an edit made while committing the merge, an octopus). A merge that is
    git's clean automatic merge of its parents — the bot's ``Update branch``, or a person merging
    the fork's main the same way — is left out: it adds nothing the owner has not seen, since what
    it brings from the other side is on the base already or is itself a listed commit."""
    extra = set(merges_with_content)
    return [c for c in commits if len(c.get("parents") or []) < 2 or c.get("sha") in extra]


def unit_updated_at(commits: list[dict], merges_with_content=()) -> int:
    """When the unit's own commits (:func:`own_commits`) last changed: the newest committer date
    among them."""
    times = [epoch((c.get("commit") or {}).get("committer", {}).get("date"))
             for c in own_commits(commits, merges_with_content)]
    return max(times, default=0)


def unit_digest(commits: list[dict], merges_with_content=()) -> str:
    """The identity of the unit's content, whose change voids earlier approvals and sign-offs:
    a digest of the shas of its own commits (:func:`own_commits`) in order.

    Rule: an approval counts for the exact commits it saw. A pushed, amended, reordered or
    rebased commit changes a sha and so the digest — a rebase too when it keeps the same tree,
    since the commit list (one fork commit per upstream commit, with its message and trailers)
    lands on the base as it is and the owner approved that list. A merge with content of its own
    enters the digest by its sha; a clean merge of the base (what ``Update branch`` makes, by the
    bot or by a person) does not, so approvals survive the base moving on. When the trees cannot
    be read, the caller passes every merge as having content (the gate blocks on
    ``markers-unchecked`` then anyway)."""
    own = [c.get("sha", "") for c in own_commits(commits, merges_with_content)]
    return hashlib.sha1("\n".join(own).encode()).hexdigest()


@dataclass(frozen=True)
class TreeFacts:
    """What the real trees of ``base..head`` say: ``markers`` (paths with new conflict markers),
    ``conflicts`` (``(commit, upstream sha)`` of conflict commits), ``rewritten`` (commits the sync
    branch was built on that the base no longer has), ``merges`` (merge commits with content of
    their own), ``commits`` (every commit of ``base..head``: :func:`bot.git.markers.range_commits`),
    ``paths`` (every path the head changes: :func:`bot.git.markers.markers_and_paths`), and ``error``:
    why the trees could not be read ("" when they were; then the gate blocks with
    ``markers-unchecked`` and every merge is taken as having content)."""

    markers: tuple[str, ...] = ()
    conflicts: tuple[tuple[str, str], ...] = ()
    rewritten: tuple[str, ...] = ()
    merges: tuple[str, ...] = ()
    commits: tuple[dict, ...] = ()
    paths: tuple[str, ...] = ()
    error: str = ""


def scan_range(git_dir: str | Path, base: str, head: str) -> TreeFacts:
    """:class:`TreeFacts` for ``base..head`` in ``git_dir`` (blocking; run it in a thread;
    ``rewritten`` from :func:`bot.git.apply.rewritten_base`, ``merges`` from
    :func:`bot.git.markers.merges_with_content`). Raises :class:`bot.git.repo.RefError` when a sha
    is not there, :class:`bot.git.repo.GitIOError` when git cannot merge a merge's parents."""
    hits, paths = markers_and_paths(git_dir, base, head)
    dropped, _foreign = rewritten_base(git_dir, head, base)
    return TreeFacts(tuple(h.path for h in hits), tuple(conflict_commits(git_dir, base, head)), tuple(dropped),
                     merges_with_content(git_dir, base, head), tuple(range_commits(git_dir, base, head)), paths)


async def tree_facts(repo_for: RepoFor | None, base: str, head: str) -> TreeFacts:
    """:class:`TreeFacts` of ``base..head``; never raises: a failure to read the trees is its ``error``."""
    if repo_for is None:
        return TreeFacts(error=render_part(TEXTS, "no_repository"))
    try:
        d = await repo_for(base, head)
        return await asyncio.to_thread(scan_range, d, base, head)
    except Exception as e:  # noqa: BLE001 - any failure to read the trees blocks, with its reason
        return TreeFacts(error=error_text(e, 340))


def pushed_by_forksync(store, full: str, pr: dict) -> bool:
    """Whether the PR's head is the tip forksync itself last pushed to its sync branch
    (``sync_branches.pushed_tip``). Only then do the commits' dates say when the unit got its
    content: on the first look at a PR there is no earlier one to compare with, and a person's
    commit can carry any committer date (one made an hour ago, pushed after an approval), so any
    other head counts as changed in the second forksync first sees it (GitHub stamps reviews and
    comments to the second; a review given on exactly the head still counts). The row of a unit
    that ended speaks for its own PR only (:func:`bot.sync.prs.speaks_for`): a branch of the same
    name pushed again at its last tip is no push of forksync's."""
    head = pr["head"]
    if (head.get("repo") or {}).get("full_name") != full:
        return False
    row = unit_row(store, full, pr)
    return bool(row) and row.get("pushed_tip") == head.get("sha")


def unit_row(store, full: str, pr: dict) -> dict | None:
    """The ``sync_branches`` row of the PR's head branch when it speaks for this PR
    (:func:`bot.sync.prs.speaks_for`), else None."""
    return sync_prs.speaks_for(sync_store.branch_row(store, full, (pr.get("head") or {}).get("ref") or ""),
                               int(pr.get("number") or 0))


def missing_picks(store, full: str, pr: dict, messages: list[str], rules: ProvenanceRules) -> tuple[str, ...]:
    """The upstream commits of the sync PR's unit (its ``sync_branches`` row speaking for this PR:
    ``shas_json``) that no message of the PR's commits claims as a pick the way the ledger reads
    picks (:func:`bot.core.provenance.unpicked` with the fork's ``provenance`` rules: forksync's
    ``Upstream-Commit`` trailer, a person's ``git cherry-pick -x`` line, a configured trailer) —
    picks a person's push replaced (empty picks are committed too, so forksync's own heads name
    them all). ``()`` for a PR without such a row (an L2 back-out, a person's PR)."""
    row = unit_row(store, full, pr)
    if row is None or row.get("kind") == sync_store.BACKOUT:
        return ()
    return tuple(unpicked(json.loads(row.get("shas_json") or "[]"), messages, rules))


def lands_after(store, full: str, pr: dict) -> tuple[tuple[str, int], ...]:
    """``(unit id, PR number; 0 when it has none)`` of each unit the sync PR's unit lands after (its
    ``sync_branches`` row speaking for this PR: ``depends_json``, docs/plan.md "Landing after
    earlier bundles") whose own row is still in flight (``open`` or ``blocked``); a row written
    before that column lands after every older in-flight unit (:func:`bot.sync.store.depends_of`).
    ``()`` for a PR without such a row. The status issue says the same per unit
    (:func:`bot.sync.store.unit_waits`): both read :func:`bot.sync.store.in_flight_deps`."""
    row = unit_row(store, full, pr)
    if row is None or row.get("kind") == sync_store.BACKOUT:
        return ()
    rows = sync_store.open_branches(store, full) + sync_store.blocked_only_branches(store, full)
    return tuple(sync_store.in_flight_deps(row, rows))


def lands_after_closed(store, full: str, pr: dict) -> tuple[tuple[str, int, str, tuple[str, ...]], ...]:
    """``(unit id, PR number, state, upstream shas)`` of each unit the sync PR's unit lands after
    (its row's ``depends_json``) that was closed without merging (state ``closed`` or ``decided``:
    :func:`bot.sync.store.closed_deps`) while the PR's branch holds a person's work — a folded
    resolution or a head forksync did not push (:func:`bot.sync.store.person_work`): made while
    those picks were to land first, it may carry their changes (docs/plan.md "Landing after
    earlier bundles"). ``()`` for a PR without such a row, or whose branch is forksync's own picks."""
    row = unit_row(store, full, pr)
    if row is None or row.get("kind") == sync_store.BACKOUT \
            or not sync_store.person_work(row, str((pr.get("head") or {}).get("sha") or "")):
        return ()
    return tuple((d["unit_id"], int(d.get("pr") or 0), str(d.get("state")), tuple(json.loads(d.get("shas_json") or "[]")))
                 for d in sync_store.closed_deps(store, full, row))


def squashed_picks(store, full: str, pr: dict, commits: list[dict],
                   rules: ProvenanceRules) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``(commit sha, upstream shas)`` for each of the sync PR's ``commits`` (``pulls/list-commits``
    objects: ``sha``, ``commit.message``) that claims more than one of its unit's upstream commits
    as picks (:func:`bot.core.provenance.picks_named`): picks a person squashed together, which
    would land as one fork commit. ``()`` for a PR without a unit row (an L2 back-out, a person's PR)."""
    row = unit_row(store, full, pr)
    if row is None or row.get("kind") == sync_store.BACKOUT:
        return ()
    shas = json.loads(row.get("shas_json") or "[]")
    out = []
    for c in commits:
        named = picks_named(shas, str((c.get("commit") or {}).get("message") or ""), rules)
        if len(named) > 1:
            out.append((str(c.get("sha") or ""), tuple(named)))
    return tuple(out)


def upstream_rewound(st, number: int) -> str:
    """Why sync PR ``number`` is held because upstream's branch moved back past commits it carries
    (the gate's ``upstream-rewound`` words, ``templates/github/upstream_rewound.txt.j2``); ``""``
    when it is not. ``st``: the fork's :class:`bot.sync.status.SyncStatus` (None: never synced),
    whose ``rewound`` the sync writes (:func:`bot.sync.rewind.record`)."""
    r = st.rewound if st else None
    unit = next((u for u in (r or {}).get("units", ()) if u.get("pr") == number), None)
    return render_part("github/upstream_rewound.txt.j2", "gate", r=r, shas=unit["shas"]) if unit else ""


def person_draft(store, full: str, pr: dict, bot_login: str | None = None) -> bool:
    """Whether forksync did not open this draft sync PR as a draft, so the draft is a person's:
    a person opened the PR on the unit's branch (:func:`bot.sync.prs.opened_by_person` against
    ``bot_login``: from the moment it opens, before any sync records it as the unit's), or its row's
    ``draft_by_forksync`` is 0 (forksync opened it ready, recorded a person's PR, or a person
    converted it to a draft: :func:`bot.sync.store.record_person_draft`), or the PR is a draft its
    row last saw ready (``pr_draft`` 0). Rows written before the columns say nothing (NULL): forksync's."""
    if sync_prs.opened_by_person(pr, bot_login):
        return True
    row = unit_row(store, full, pr)
    # also before ``converted_to_draft`` is handled: deliveries run on several workers, and another
    # event may reach the gate first
    return row is not None and (row.get("draft_by_forksync") == 0
                                or sync_store.drafted_since_seen_ready(row, bool(pr.get("draft"))))


def protection_checks(branch: dict) -> tuple[str, ...]:
    """Required status check names of a ``repos/get-branch`` object's ``protection``
    (``required_status_checks.contexts`` and ``.checks[].context``), in order, without repeats."""
    rsc = ((branch.get("protection") or {}).get("required_status_checks") or {})
    if rsc.get("enforcement_level") == "off":
        return ()
    names = list(rsc.get("contexts") or []) + [c.get("context", "") for c in rsc.get("checks") or []]
    return tuple(n for n in dict.fromkeys(names) if n)


def _bound_app(app) -> int | None:
    """A check's binding to one GitHub App: a positive app id, else None (any source)."""
    return app if isinstance(app, int) and not isinstance(app, bool) and app > 0 else None


def protection_apps(branch: dict) -> tuple[tuple[str, int], ...]:
    """``(context, app id)`` for each required status check of a ``repos/get-branch`` object's
    ``protection`` that is bound to one GitHub App (``required_status_checks.checks[].app_id``).
    GitHub then accepts only that app's result; an ``app_id`` of null or -1 means any source and
    is left out. Empty when the checks are not enforced (:func:`protection_checks`)."""
    rsc = ((branch.get("protection") or {}).get("required_status_checks") or {})
    if rsc.get("enforcement_level") == "off":
        return ()
    out: dict[str, int] = {}
    for c in rsc.get("checks") or []:
        app = _bound_app(c.get("app_id"))
        if c.get("context") and app is not None:
            out.setdefault(c["context"], app)
    return tuple(out.items())


def ruleset_rule(rule: dict) -> str:
    """Words naming a ``required_status_checks`` rule of ``repos/get-branch-rules`` by its ruleset
    (GitHub lists each rule with ``ruleset_id``, ``ruleset_source_type`` and ``ruleset_source``, not
    the ruleset's name)."""
    return render_part(TEXTS, "ruleset_rule", ruleset_id=rule.get("ruleset_id", "?"),
                       source_type=rule.get("ruleset_source_type"), source=rule.get("ruleset_source"))


def _rule_checks(rules: list[dict]):
    """``(rule, check)`` for each named required status check of the ``required_status_checks``
    rules in ``rules`` (``repos/get-branch-rules``), in order."""
    for rule in rules:
        if rule.get("type") != "required_status_checks":
            continue
        for c in (rule.get("parameters") or {}).get("required_status_checks") or []:
            if c.get("context"):
                yield rule, c


def ruleset_checks(rules: list[dict]) -> tuple[tuple[str, str], ...]:
    """``(context, rule)`` for each required status check of the ``required_status_checks`` rules in
    ``rules`` (``repos/get-branch-rules``: the active rulesets' rules on the branch; GitHub leaves
    out rulesets in ``evaluate`` or ``disabled``), ``rule`` naming the first rule that requires it
    (:func:`ruleset_rule`); in order, without repeats."""
    out: dict[str, str] = {}
    for rule, c in _rule_checks(rules):
        out.setdefault(c["context"], ruleset_rule(rule))
    return tuple(out.items())


def ruleset_apps(rules: list[dict]) -> tuple[tuple[str, int], ...]:
    """``(context, app id)`` for each required status check of the rulesets' rules bound to one
    GitHub App (``required_status_checks[].integration_id``; absent or null means any source), as
    :func:`protection_apps` for branch protection's ``app_id``."""
    out: dict[str, int] = {}
    for _rule, c in _rule_checks(rules):
        app = _bound_app(c.get("integration_id"))
        if app is not None:
            out.setdefault(c["context"], app)
    return tuple(out.items())


@dataclass(frozen=True)
class RequiredChecks:
    """The checks GitHub requires before a merge into a branch, and forksync's own list:
    ``names`` (branch protection's, the rulesets', then ``gate.required_checks``; in order, without
    repeats), ``apps`` (``(name, app id)`` of those bound to one GitHub App; branch protection's
    binding first where both bind a name) and ``rules`` (``(name, rule)``: the ruleset rule that
    requires a name, for the gate's findings)."""

    names: tuple[str, ...] = ()
    apps: tuple[tuple[str, int], ...] = ()
    rules: tuple[tuple[str, str], ...] = ()


def required_checks(branch: dict, rules: list[dict], configured=()) -> RequiredChecks:
    """:class:`RequiredChecks` of a ``repos/get-branch`` object (its protection), the branch's
    ``repos/get-branch-rules`` list and ``gate.required_checks`` (``configured``). GitHub enforces
    both kinds of requirement, so a check only a ruleset requires is as required as protection's."""
    from_rules = ruleset_checks(rules)
    names = tuple(dict.fromkeys(protection_checks(branch) + tuple(n for n, _ in from_rules) + tuple(configured or ())))
    apps = dict(protection_apps(branch))
    for n, app in ruleset_apps(rules):
        apps.setdefault(n, app)
    return RequiredChecks(names, tuple(apps.items()), from_rules)


#: Commit status states → check conclusions (pending → None: still running).
STATUS_CONCLUSION = {"success": "success", "failure": "failure", "error": "error", "pending": None}


async def combined_status(gh, full: str, ref: str, *, max_pages: int = 20) -> dict:
    """``repos/get-combined-status-for-ref`` with every page of its ``statuses`` (GitHub lists 30
    a page by default, 100 at most; a required context on a later page would otherwise read as
    missing and hold the gate for good)."""
    out: list[dict] = []
    data: dict = {}
    for page in range(1, max_pages + 1):
        data = await gh.getitem("/repos/{owner}/{repo}/commits/{ref}/status{?per_page,page}",
                                {**split_repo(full), "ref": ref, "per_page": 100, "page": page})
        got = data.get("statuses") or []
        out += got
        if not got or len(out) >= int(data.get("total_count") or 0):
            break
    return {**data, "statuses": out}


def status_checks(combined: dict) -> list[Check]:
    """:class:`Check` values (``kind="status"``) from ``repos/get-combined-status-for-ref``
    (its ``statuses`` hold the latest status per context)."""
    return [Check(st["context"], STATUS_CONCLUSION.get(st.get("state"), st.get("state")), kind="status")
            for st in combined.get("statuses") or [] if st.get("context")]


def pr_areas(cfg, labels: list[str], files: list[str]) -> tuple[str, ...]:
    """Areas the PR touches: the ``area:<name>`` labels the bot set, and the areas of its files."""
    prefix = cfg.github.labels.area_prefix
    known = {a.name for a in cfg.areas}
    from_labels = {n[len(prefix):] for n in labels if prefix and n.startswith(prefix)}
    return tuple(sorted((from_labels & known) | set(cfg.areas_for_paths(files))))


def pr_kind(cfg, labels: list[str], branch: str = "") -> str:
    """``chain`` | ``bundle`` | ``other``: from the PR's labels, and a sync branch named for a chain
    (``forksync/chain-<sha12>``, the unit id, or ``forksync/<fork ref>/chain-<sha12>``,
    :func:`bot.model.sync_branch`; ``branch`` is forksync's own, :func:`own_branch`)
    is a chain whatever its labels — a label anyone who can triage may remove (its removal itself
    makes forksync evaluate the gate), and a chain's writer approval is what stands between a
    resolved conflict (a person's, the rules', an agent's) and a merge."""
    lab = cfg.github.labels
    named = sync_branch_ref(branch) if branch.startswith(cfg.github.branch_prefix) else None
    if lab.chain in labels or (named is not None and named[1].startswith("chain-")):
        return "chain"
    return "bundle" if lab.bundle in labels else "other"


def own_branch(pr: dict, foreign: str) -> str:
    """Pure: the PR's head ref when it is forksync's own sync branch (``foreign``, the PR's
    :func:`bot.sync.prs.foreign_reason`, empty), else ``""``: only a branch forksync built says
    what forksync built, so a person's PR (from a fork of the fork too) named ``forksync/chain-…``
    is what its labels make it."""
    return "" if foreign else (pr.get("head") or {}).get("ref") or ""


async def branch_rules(gh, full: str, ref: str) -> list[dict]:
    """The active rules of every ruleset on branch ``ref`` (``repos/get-branch-rules``, all pages).
    A failure to read them (403 for a token without the permission, 404, 5xx) raises; never read as
    "no required checks", which would let the gate merge past a check GitHub still requires.
    :func:`gather` turns it into the gate's ``checks-unread`` and hands it on (``unread``)."""
    return [r async for r in gh.getiter("/repos/{owner}/{repo}/rules/branches/{branch}{?per_page}",
                                        {**split_repo(full), "branch": ref, "per_page": 100})]


async def is_trusted_author(gh, full: str, login: str, bot_login: str | None) -> bool:
    """The bot itself (its login in any case: :func:`bot.core.logins.same_login`), or a
    collaborator with write access (whose code may run on GPU runners)."""
    if same_login(login, bot_login):
        return True
    return await permission(gh, full, login) in WRITE_LEVELS


async def gather(gh, store, full: str, pr: dict, cfg, *, bot_login: str | None, foreign: str, own_checks: set[str],
                 repo_for: RepoFor | None = None, now: float | None = None,
                 unread: list[BaseException] | None = None) -> PRState:
    """The gate's :class:`PRState` for ``pr`` (a ``pulls/get`` object). ``foreign``: why ``pr``
    is not forksync's own sync PR, ``""`` when it is (:func:`bot.sync.prs.foreign_reason`, asked
    once by the caller, which acts on the same answer); ``own_checks``: names of
    forksync's suite check runs (not counted as other checks). ``repo_for(base, head)`` gives the
    bot's git dir holding both commits, for conflict markers and conflict commits; without it,
    or when it fails, the state carries ``markers_error`` (the gate blocks). When the rules of the
    rulesets on the base cannot be read, the state carries ``rules_error`` (the gate holds:
    ``checks-unread``) and ``unread``, when given, receives the error, for the caller to raise once
    the gate has said so on the PR (the delivery or tick then fails visibly, and is retried)."""
    rv = {**split_repo(full), "number": pr["number"]}
    head = pr["head"]["sha"]
    branch = await base_branch(gh, full, pr["base"]["ref"])
    base = branch["commit"]["sha"]
    gate_cfg = getattr(cfg, "gate", None)
    try:
        rules, rules_error = await branch_rules(gh, full, pr["base"]["ref"]), ""
    except Exception as e:  # noqa: BLE001 - shown on the PR as checks-unread, then raised by the caller
        rules, rules_error = [], error_text(e, 400)
        if unread is not None:
            unread.append(e)
    required = required_checks(branch, rules, getattr(gate_cfg, "required_checks", ()) or ())
    files = [f async for f in gh.getiter("/repos/{owner}/{repo}/pulls/{number}/files", rv)]
    commits = [c async for c in gh.getiter("/repos/{owner}/{repo}/pulls/{number}/commits", rv)]
    reviews = latest_reviews([r async for r in gh.getiter("/repos/{owner}/{repo}/pulls/{number}/reviews", rv)])
    labels = [lab["name"] for lab in pr.get("labels") or []]
    author = (pr.get("user") or {}).get("login", "")
    holds = []
    st = sync_store.load_status(store, full)
    if st and st.held:
        holds.append(render_part(TEXTS, "held_by_command"))
    if cfg.github.labels.hold in labels:
        holds.append(render_part(TEXTS, "held_by_label", label=cfg.github.labels.hold))
    rewound = "" if foreign else upstream_rewound(st, pr["number"])
    checks = []
    async for c in gh.getiter("/repos/{owner}/{repo}/commits/{ref}/check-runs", {**split_repo(full), "ref": head},
                              iterable_key="check_runs"):
        if c["name"] == GATE_CHECK or c["name"] in own_checks or c["name"].startswith(L1_PREFIX):
            continue
        checks.append(Check(c["name"], c.get("conclusion") if c.get("status") == "completed" else None,
                            app_id=(c.get("app") or {}).get("id")))
    combined = await combined_status(gh, full, head)
    checks += [c for c in status_checks(combined) if c.name != GATE_CHECK and not c.name.startswith("forksync/")]
    rows = vstore.rows_for(store, full, shas=(head, base), pr=pr["number"])
    results = tuple(vstore.outcome(r) for r in rows if r["sha"] != base or r["sha"] == head)
    on_base = [r for r in rows if r["sha"] == base and r["status"] == "done"]
    trunk = [r for r in vstore.latest_trunk_rows(store, full, tuple(sorted({r.suite for r in results})))
             if r["sha"] != base and r["sha"] != head]
    base_results = tuple(vstore.outcome(r) for r in trunk + on_base)
    facts = await tree_facts(repo_for, base, head)
    paths = [f["filename"] for f in files]
    if len(files) >= PR_FILES_LISTED and not facts.error:
        paths = list(facts.paths)        # GitHub cut the list (unread trees block: markers-unchecked)
    commits_error = ""
    if len(commits) >= PR_COMMITS_LISTED:
        # GitHub cut the list: a commit past it would change neither the digest nor the date
        if not facts.error:
            commits = list(facts.commits)
        else:
            commits_error = render_part(TEXTS, "commits_unlisted", listed=PR_COMMITS_LISTED, error=facts.error)
    # unread trees: every merge counts as the unit's own (never an approval for unseen content),
    # but that digest is not stored, so a passing read failure does not void a valid approval
    merges = facts.merges if not facts.error else tuple(c["sha"] for c in commits if len(c.get("parents") or []) > 1)
    # committer dates are the pusher's to set (a commit made before an approval and pushed after
    # it carries an older date), so the time the bot saw the unit's own commits change counts too
    first = unit_updated_at(commits, merges)
    now = time.time() if now is None else now
    seen, unit_heads = vstore.unit_seen(store, full, pr["number"], unit_digest(commits, merges),
                                        first=first if pushed_by_forksync(store, full, pr) else math.floor(now),
                                        now=now,
                                        head=head, record=not facts.error)
    updated = max(first, math.ceil(seen))
    missing = () if foreign or facts.conflicts or facts.error or commits_error else \
        missing_picks(store, full, pr, [str((c.get("commit") or {}).get("message") or "") for c in commits],
                      cfg.provenance)
    squashed = () if foreign else squashed_picks(store, full, pr, commits, cfg.provenance)
    rev = []
    for r in reviews:
        login = r["user"]["login"]
        rev.append(Review(login, r["state"], epoch(r.get("submitted_at")),
                          await permission(gh, full, login) in WRITE_LEVELS, r.get("commit_id") or ""))
    return PRState(
        number=pr["number"], head_sha=head, base_sha=base, head_contains_base=await head_contains(gh, full, base, head),
        kind=pr_kind(cfg, labels, own_branch(pr, foreign)), areas=pr_areas(cfg, labels, paths),
        author=author,
        author_is_collaborator=await is_trusted_author(gh, full, author, bot_login),
        retest_by_writer_on=vstore.retest_shas(store, full, pr["number"]),
        conflict_marker_files=facts.markers, markers_error=facts.error, conflict_commits=facts.conflicts,
        missing_picks=missing, squashed_picks=squashed, lands_after=() if foreign else lands_after(store, full, pr),
        lands_after_closed=() if foreign else lands_after_closed(store, full, pr),
        person_draft=bool(pr.get("draft")) and not foreign and person_draft(store, full, pr, bot_login),
        commits_error=commits_error,
        rewritten=facts.rewritten,
        required_checks=required.names, check_apps=required.apps, check_rules=required.rules, rules_error=rules_error,
        holds=tuple(holds), upstream_rewound=rewound, results=results,
        base_results=base_results, reviews=tuple(rev), checks=tuple(checks),
        signoffs=signoff.signoffs_for(store, full, pr["number"]), unit_updated_at=updated, unit_heads=unit_heads,
        head_seen_at=vstore.head_seen(store, full, pr["number"], head, now),
        l3_requests=tuple(L3Request(r.workload, r.platform, r.head_sha, r.status, r.verdict, r.finished_at or 0)
                          for r in signoff.l3_runs_for(store, full, pr["number"])))
