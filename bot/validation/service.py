"""Validation on GitHub: run a PR head's required L1 suites, publish them, evaluate the gate, merge.

Flow for one PR head (:meth:`ValidationService.validate_pr`):

1. The trusted configuration: ``.github/forksync.yml`` at the fork's **default branch**
   (:func:`bot.config.forksync.load_trusted_suites`; never the PR's copy). The required L1 suites are those
   that apply to the areas the PR touches (:func:`bot.config.suites.required_l1`).
2. Code from a PR whose author is neither the bot nor a writer runs only after a writer's
   ``/forksync retest`` on that head (:func:`bot.validation.gate.may_run_on_gpu`).
3. Each suite × platform without a result on the head gets a check run ``forksync/L1/<suite>``
   (in progress), then the backend runs it: ``local`` awaits ``python -m gpu_runner`` in a
   subprocess and completes the check run (summary table, ≤ 50 annotations per update, appended);
   ``github-actions`` dispatches the workflow and the result arrives with ``workflow_run.completed``
   (:meth:`on_workflow_run`). When the head has failing or skipped tests and no result exists
   for the suite at the current base tip, the suite runs on the base too (``local``), so
   failures already red there count as pre-existing and tests skipped only on the head are seen
   as newly skipped.
4. The gate (:meth:`evaluate`): :func:`bot.validation.gate_inputs.gather` (conflict markers and
   conflict commits from the validation mirror, :meth:`repo_for`) → :func:`bot.validation.gate.decide` →
   the ``forksync/gate`` check run → its actions: ``update-branch`` (``pulls/update-branch`` with
   ``expected_head_sha``: the base is *merged into* the branch, no commit rewritten; then the
   suites run on the new head), ``run-suites``, ``merge``.
5. Merge (:meth:`merge`): ``cfg.github.merge_method`` (rebase by default; squash is refused by
   the config), always with the head ``sha`` guard; ``mergeable: null`` is polled a few times;
   405 (not mergeable / a required check GitHub expects) and 409 (the head moved) are recorded in
   the gate check run's text, never retried blindly, never a second comment or merge.

Only PRs into the branch forksync syncs are validated (``fork.ref``, :attr:`Trusted.base`: the
default branch unless forksync.yml names another; :func:`bot.sync.prs.off_base`): both entry
points, :meth:`ValidationService.validate_pr` and :meth:`ValidationService.evaluate`, turn any
other away with a note, whichever event, command or tick brought it up.

One suite-running pass and one evaluation per PR at a time (asyncio locks per PR, in this
process); an evaluation may recurse through update-branch → re-test → evaluate at most
:attr:`max_rounds` times. Redeliveries are harmless: a suite with a result on the head is not
run again (unless forced by a retest), a merged PR is not merged again, and the gate check run on
a head is updated in place.
"""
from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass
from pathlib import Path

import gidgethub

from bot.agents.redact import error_text
from bot.config.forksync import ConfigError, ForksyncConfig, load_trusted_suites, on_default_branch, parse_config_text
from bot.config.suites import SuiteConfig, UntrustedConfigError, required_l1
from bot.git.markers import changed_paths
from bot.github.client import rate_limited
from bot.github.common import base_tip, split_repo
from bot.github.drafts import mark_ready
from bot.github.fork_config import CONFIG_PATH, default_branch, fetch_config_text
from bot.github.merge import BASE_MOVED, HEAD_MOVED, MERGED, REFUSED, UPDATED, Outcome, merge_pr, update_branch
from bot.sync import landing
from bot.sync import prs as sync_prs
from bot.sync import store as sync_store
from bot.sync.blocked import github_words
from bot.templating import render_part
from bot.validation import gate_inputs
from bot.validation import store as vstore
from bot.validation.backends import ActionsBackend, LocalBackend, backend_name
from bot.validation.checks import check_name, external_id, finish_suite_run, publish_gate, start_suite_run
from bot.validation.gate import area_policies, decide, render_summary, suite_requirements
from bot.validation.l3 import answer_l3_result
from gpu_runner.github_actions import collect, parse_run_name, session_downloader


@dataclass
class Trusted:
    """The default branch's configuration: ``cfg`` (ForksyncConfig), its raw ``text`` (handed to the
    runner), the trusted ``suites`` and the ``default_branch``. ``error``: why suites are empty."""

    cfg: object
    text: str
    suites: tuple[SuiteConfig, ...]
    default_branch: str
    error: str = ""
    #: the repository has a ``.github/forksync.yml`` (or is a fork forksync adopted): a repository
    #: of the installation without one is not served — no gate, no suites on its pull requests
    served: bool = True

    @property
    def base(self) -> str:
        """The branch forksync syncs: ``fork.ref`` of this configuration, which sync PRs (and L2
        back-outs) are opened into and the nightly and L2 measure — GitHub's default branch
        unless forksync.yml names another (``fork-main`` while ``main`` stays the default branch,
        whose forksync.yml is still the one trusted). The gate acts on PRs into it only."""
        return str(getattr(getattr(self.cfg, "fork", None), "ref", "") or self.default_branch)


#: what ``/forksync retest <suite>`` answers when it runs nothing (blocks ``l3`` and ``none``)
RETEST_TEXTS = "validation/retest.txt.j2"

#: Findings that may stand while a draft sync PR leaves draft: what a person still has to give
#: (approvals, sign-offs, lifting a hold), what the bot does next (merging the base in), and an L3
#: run still going on the head (heavy suites run for hours; review can start meanwhile). A red L3
#: result keeps the PR a draft, as a red L1 result does — and so does ``l3-stale``, which is also
#: what a red L3 result on an older head becomes once the head moves (a base merged in).
LEAVES_DRAFT_DESPITE = frozenset({"approval-missing", "changes-requested", "l3-signoff-missing", "hold", "stale-base",
                                  "l3-pending"})


def leaves_draft(decision) -> bool:
    """Pure: may a draft sync PR leave draft under ``decision``? Only when nothing blocks but
    :data:`LEAVES_DRAFT_DESPITE` — so no conflict commit or marker is left and every required L1
    suite is green on the head."""
    return all(f.code in LEAVES_DRAFT_DESPITE for f in decision.blocking)


class ValidationService:
    """Per process; ``sync`` is the :class:`bot.sync.service.SyncService` (clone URLs, bot login,
    clients). ``merge_poll_s``: wait between reads while GitHub computes ``mergeable``."""

    max_rounds = 3

    def __init__(self, sync, *, backend: str | None = None, settings=None, merge_poll_s: float = 1.0,
                 mergeable_polls: int = 5, now=time.time):
        self.sync = sync
        self._backend = backend
        self._settings = settings
        self.local = LocalBackend(sync.workdir, self._remote_url, claims=sync.claims)
        self.actions = ActionsBackend()
        self.merge_poll_s = merge_poll_s
        self.mergeable_polls = mergeable_polls
        self.now = now
        self._locks: dict[tuple[str, int], asyncio.Lock] = {}          # gate evaluation per PR
        self._run_locks: dict[tuple[str, int], asyncio.Lock] = {}      # suite runs per PR
        self._installation: dict[str, int | None] = {}

    @property
    def bot_login(self) -> str | None:
        """The bot's login as the sync service knows it now (read each time: in token mode it may
        be learnt after start-up, :meth:`bot.app.runtime.Clients.learn_login`)."""
        return getattr(self.sync, "bot_login", None)

    @property
    def backend(self) -> str:
        """The runner backend (``local`` | ``github-actions``), resolved at first use, so a wrong
        ``FORKSYNC_RUNNER_BACKEND`` fails the validation work that needs it (a ``ValueError``
        naming the choices), not the worker's start and with it every sync."""
        if self._backend is None:
            self._backend = backend_name(self._settings)
        return self._backend

    async def _remote_url(self, full: str):
        return await self.sync.remote_url(full, self._installation.get(full))

    async def repo_for(self, full: str, base: str, head: str) -> Path:
        """The bot's bare mirror of the fork (:meth:`LocalBackend.fetch`: branches and
        ``refs/pull/*/head``) with ``base`` and ``head`` in it, fetched when missing. Raises
        ``RuntimeError`` naming the commit that cannot be fetched."""
        d = await self.local.fetch(full, head)
        for sha in (head, base):
            if not await self.local.has(d, sha):
                d = await self.local.fetch(full, sha)
                if not await self.local.has(d, sha):
                    raise RuntimeError(f"commit {sha[:12]} cannot be fetched from {full}")
        return d

    # ------------------------------------------------------------------ configuration
    async def trusted(self, ctx, full: str) -> Trusted:
        default = await default_branch(ctx.gh, full) or "main"
        text, _ = await fetch_config_text(ctx.gh, full, default)
        try:
            cfg = parse_config_text(text, f"{CONFIG_PATH}@{default}") if text is not None else ForksyncConfig()
        except ConfigError:
            cfg = ForksyncConfig()
        cfg = on_default_branch(cfg, default)
        served = text is not None or any(r["fork"] == full for r in sync_store.tracked_forks(ctx.store))
        try:
            suites = load_trusted_suites(lambda ref, path: text if ref == default else None, default, CONFIG_PATH)
            return Trusted(cfg, text or "", suites, default, served=served)
        except UntrustedConfigError as e:
            return Trusted(cfg, text or "", (), default, str(e), served=served)

    # ------------------------------------------------------------------ L1 on a PR head
    def _lock(self, full: str, number: int) -> asyncio.Lock:
        return self._locks.setdefault((full, number), asyncio.Lock())

    async def validate_pr(self, ctx, full: str, number: int, *, only: str | None = None, force: bool = False,
                          granted_by: str | None = None, granted_at: int = 0, explicit: bool = False,
                          _round: int = 0, seen: list | None = None) -> list[str]:
        """Run the PR head's missing (``force``: all, or ``only`` that suite) required L1 suites,
        then evaluate the gate. ``granted_by`` (a writer's ``/forksync retest``, written at
        ``granted_at``, epoch s; 0 = now) authorises the head for GPU runners — only a head that
        forksync saw before the comment was written. A PR into another base than the branch
        forksync syncs is left alone (:func:`bot.sync.prs.off_base`: nothing run or recorded, one note).
        Returns notes for the delivery's outcome."""
        self._installation[full] = ctx.installation_id
        vstore.ensure(ctx.store)
        pr = await ctx.gh.getitem("/repos/{owner}/{repo}/pulls/{number}", {**split_repo(full), "number": number})
        if pr.get("state") != "open":
            return [f"#{number}: {pr.get('state')}, not validated"]
        tr = await self.trusted(ctx, full)
        if not tr.served:
            return [not_served_note(full, number)]
        if sync_prs.off_base(pr, tr.base):
            # before anything is recorded or run: a retest on it authorises nothing
            return [off_base_note(number, pr, tr.base)]
        head = pr["head"]["sha"]
        # asked on every look, a grant or not: it stores when forksync first saw this head
        before_head = self.written_before_head(ctx, full, number, head, granted_at)
        notes: list[str] = []
        if granted_by and before_head:
            # GitHub does not deliver in order: a push after the comment (its events delivered
            # first) is not what the writer looked at; its code waits for a retest on it
            notes.append(f"#{number}: the retest was written before {head[:12]} was pushed; it does not "
                         f"authorise that head — `/forksync retest` again to run it")
            granted_by = None
        if granted_by:
            vstore.grant_retest(ctx.store, full, number, head, granted_by, self.now())
        async with self._run_locks.setdefault((full, number), asyncio.Lock()):
            notes += await self._run_suites(ctx, full, pr, tr, only=only, force=force)
        notes += await self.evaluate(ctx, full, number, _round=_round, tr=tr, explicit=explicit, seen=seen)
        return notes

    def written_before_head(self, ctx, full: str, number: int, head: str, written: int) -> bool:
        """Whether a command written at ``written`` (epoch s, GitHub's stamp; 0 = unknown: False)
        predates ``head`` — forksync first saw it as PR ``number``'s head (stored now, the first
        time) in a later second. GitHub does not deliver in order: a push made after a writer's
        comment may be read first, and the writer's ``/forksync retest`` or ``l3`` authorises
        only the head they looked at."""
        first_seen = vstore.head_seen(ctx.store, full, number, head, self.now())
        return bool(written) and written < math.floor(first_seen)

    async def _run_suites(self, ctx, full: str, pr: dict, tr: Trusted, *, only: str | None, force: bool) -> list[str]:
        head, number = pr["head"]["sha"], pr["number"]
        labels = [lab["name"] for lab in pr.get("labels") or []]
        files = [f["filename"] async for f in ctx.gh.getiter("/repos/{owner}/{repo}/pulls/{number}/files",
                                                             {**split_repo(full), "number": number})]
        if len(files) >= gate_inputs.PR_FILES_LISTED:
            # GitHub cut the list: the gate reads the paths from git, and so must the suites it asks for
            base = pr["base"]["sha"]
            files = list(await asyncio.to_thread(changed_paths, await self.repo_for(full, base, head), base, head))
        suites = required_l1(tr.suites, gate_inputs.pr_areas(tr.cfg, labels, files))
        if only:
            applying = [s.name for s in suites]
            suites = tuple(s for s in suites if s.name == only)
            if not suites:
                # an L3 suite runs on demand only: its check run's Re-run and `/forksync l3` queue it
                level = "l3" if any(s.name == only and s.level == "L3" for s in tr.suites) else "none"
                return [render_part(RETEST_TEXTS, level, number=number, only=only, applying=applying)]
        author = (pr.get("user") or {}).get("login", "")
        if not (await gate_inputs.is_trusted_author(ctx.gh, full, author, self.bot_login)
                or head in vstore.retest_shas(ctx.store, full, number)):
            return [f"#{number}: @{author} is not a collaborator; waiting for a writer's /forksync retest"]
        notes = []
        for s in suites:
            for plat in s.platforms:
                row = vstore.get(ctx.store, full, head, s.name, plat)
                if row is not None and not force and (row["status"] == "done" or self._in_flight(row, s)):
                    continue
                notes.append(await self.run_suite(ctx, full, number, head, s, plat, tr))
                if self.backend == "local":
                    await self._run_on_base_if_needed(ctx, full, pr, s, plat, tr)
        return notes

    def _in_flight(self, row: dict, suite: SuiteConfig) -> bool:
        """A pending row another delivery (or worker process) is still working on: dispatched to
        Actions (the collect tick times it out), or a local run younger than the suite may take."""
        if row["request_id"]:
            return True
        return self.now() - row["updated_at"] < suite.run_limit_s + 120

    async def run_suite(self, ctx, full: str, number: int, sha: str, suite: SuiteConfig, platform: str,
                        tr: Trusted, *, publish: bool = True) -> str:
        """Start one suite run on ``sha`` (check run + backend). Returns a note."""
        name = check_name(suite.name, platform, len(suite.platforms), suite.level)
        run = {"id": 0, "html_url": ""}
        if publish:
            run = await start_suite_run(ctx.gh, full, sha, name, external_id(suite.name, platform, suite.level),
                                        suite=suite.name, level=suite.level, platform=platform, backend=self.backend,
                                        now=self.now())
        if self.backend == "github-actions":
            rid = await self.actions.dispatch(ctx.gh, full, sha, suite, platform, tr.default_branch)
            vstore.mark_pending(ctx.store, repo=full, pr=number, sha=sha, suite=suite.name, platform=platform,
                                level=suite.level, backend=self.backend, now=self.now(), check_run_id=run["id"],
                                definition=vstore.definition_of(suite),
                                check_url=run.get("html_url", ""), request_id=rid)
            return f"{name} @ {sha[:12]}: dispatched ({rid})"
        attempt = vstore.mark_pending(ctx.store, repo=full, pr=number, sha=sha, suite=suite.name, platform=platform,
                                      level=suite.level, backend=self.backend, now=self.now(), check_run_id=run["id"],
                                      definition=vstore.definition_of(suite), check_url=run.get("html_url", ""))
        result = await self.local.run(full, sha, suite, platform, tr.text)
        lost_to = await self.record(ctx, full, number, result, suite, answers=attempt)
        if lost_to:
            return superseded_note(result, attempt, lost_to)
        return f"{name} @ {sha[:12]}: {result.verdict}"

    async def record(self, ctx, full: str, number: int, result, suite: SuiteConfig | None, *,
                     answers: str | None = None) -> str | None:
        """Store a result and complete its check run (if one was started). ``answers``: the attempt
        (request id or local token) the result is of; a result of an attempt that a re-run has
        replaced is kept aside as superseded (:func:`bot.validation.store.record`), completes no
        check run (the re-run's is the one shown) and its replacing attempt is returned."""
        lost_to = vstore.record(ctx.store, repo=full, pr=number, result=result, now=self.now(), answers=answers)
        if lost_to:
            return lost_to
        row = vstore.get(ctx.store, full, result.commit, result.suite, result.platform)
        if row and row["check_run_id"]:
            # a green re-run of a commit an earlier run found red (tests failing, or the suite
            # crashed, hung or ran short), the suite defined as now: a flake the green run must not
            # hide. A red under another definition (an expected count since set as the red
            # advised) or an infrastructure fault (no GPU, a runner lost) is no flake of the code
            earlier = [r for r in vstore.superseded_runs(row) if r["how"] == "replaced"
                       and r["outcome"] in ("fail", "error")
                       and r["definition"] and r["definition"] == row.get("definition")
                       ] if result.verdict == "green" else []
            await finish_suite_run(ctx.gh, full, row["check_run_id"], result, suite, now=self.now(), earlier_red=earlier)
        return None

    async def _run_on_base_if_needed(self, ctx, full: str, pr: dict, suite: SuiteConfig, platform: str,
                                     tr: Trusted) -> None:
        row = vstore.get(ctx.store, full, pr["head"]["sha"], suite.name, platform)
        if not row or row["status"] != "done":
            return
        # the base's run tells new failures from old ones, newly skipped tests, and which tests a
        # short suite lost
        if row["verdict"] != "fail" and not vstore.outcome(row).skipped and not vstore.only_short(row):
            return
        base = await base_tip(ctx.gh, full, pr["base"]["ref"])
        if vstore.get(ctx.store, full, base, suite.name, platform):
            return
        attempt = vstore.mark_pending(ctx.store, repo=full, pr=0, sha=base, suite=suite.name, platform=platform,
                                      level=suite.level, backend="local", now=self.now(),
                                      definition=vstore.definition_of(suite))
        result = await self.local.run(full, base, suite, platform, tr.text)
        vstore.record(ctx.store, repo=full, pr=0, result=result, now=self.now(), answers=attempt)

    # ------------------------------------------------------------------ results from Actions
    async def on_workflow_run(self, ctx, event: dict, download) -> list[str]:
        """``workflow_run.completed`` of a forksync dispatch: record the result, then re-evaluate. A
        run that reports after the collect tick counted it red (it waited in a runner's queue)
        replaces that stand-in (:func:`bot.validation.store.stood_in`), its check run with it."""
        run = event.get("workflow_run") or {}
        d = parse_run_name(run.get("display_title") or run.get("name"))
        if d is None:
            return []
        full = event["repository"]["full_name"]
        self._installation[full] = ctx.installation_id
        vstore.ensure(ctx.store)
        row = vstore.by_request(ctx.store, d.request_id)
        if row is None:
            now_row = vstore.get(ctx.store, full, d.commit, d.suite, d.platform)
            if now_row is not None and vstore.attempt_of(now_row):
                # a re-run was dispatched before this run reported: its result is not this one
                return [superseded_note(d, d.request_id, vstore.attempt_of(now_row))]
            return [f"workflow run for unknown request {d.request_id}: ignored"]
        if row["status"] == "done" and not vstore.stood_in(row):
            return [f"{d.suite} @ {d.commit[:12]}: already recorded"]
        tr = await self.trusted(ctx, full)
        result = await collect(ctx.gh, event, download,
                               suite_for=lambda name: next((s for s in tr.suites if s.name == name), None))
        if result is None:
            return []
        suite = next((s for s in tr.suites if s.name == result.suite), None)
        # the download above yields: a /forksync retest may have dispatched a re-run meanwhile
        lost_to = await self.record(ctx, full, row["pr"], result, suite, answers=d.request_id)
        if lost_to:
            return [superseded_note(result, d.request_id, lost_to)]
        notes = [f"{d.suite} @ {d.commit[:12]}: {result.verdict} (github-actions)"]
        if suite is not None and suite.level == "L3":
            notes += await answer_l3_result(ctx, full, result, suite)
        if row["pr"]:
            notes += await self.evaluate(ctx, full, row["pr"], tr=tr)
        return notes

    # ------------------------------------------------------------------ the gate
    async def evaluate(self, ctx, full: str, number: int, *, _round: int = 0, tr: Trusted | None = None,
                       explicit: bool = False, seen: list | None = None) -> list[str]:
        """Evaluate the gate for PR ``number``, publish ``forksync/gate`` and act on the decision
        (:meth:`_evaluate`). A gate input GitHub would not give (the rules of the rulesets on the
        base) is said on the PR first — the gate holds with ``checks-unread`` — and then raised, as
        the base branch's own read raises: the delivery fails naming the call and is retried, a
        failure that lasts ends a dead letter (status issue, ``/healthz``), and a tick's job fails
        the same visible way; the next evaluation that reads them decides again."""
        unread: list[BaseException] = []
        waits: list[bool] = []
        notes = await self._evaluate(ctx, full, number, _round=_round, tr=tr, explicit=explicit, seen=seen,
                                     unread=unread, waits=waits)
        if any(waits):
            # after the gate is on the PR and outside its lock: a status issue GitHub would not
            # write fails the delivery here, never the gate's own run
            await self.sync.refresh_status_issue(ctx, full)
        if unread:
            raise unread[0]
        return notes

    async def _evaluate(self, ctx, full: str, number: int, *, _round: int, tr: Trusted | None, explicit: bool,
                        seen: list | None, unread: list[BaseException], waits: list[bool] | None = None) -> list[str]:
        """Evaluate the gate for PR ``number``, publish ``forksync/gate`` and act on the decision.
        Sync PRs (branch ``github.branch_prefix`` on the fork) merge by themselves when the gate
        allows; any other PR only when ``explicit`` (``/forksync merge``). ``seen``, when given,
        receives ``(decision, state)`` of each evaluation (``/forksync merge`` replies with it).
        Every gate evaluation passes here, whichever event or tick asked for it, so this is where a
        PR into another base than the branch forksync syncs is turned away (:func:`bot.sync.prs.off_base`):
        no check run, no ``update-branch``, no merge, one note."""
        self._installation[full] = ctx.installation_id
        vstore.ensure(ctx.store)
        async with self._lock(full, number):
            pr = await ctx.gh.getitem("/repos/{owner}/{repo}/pulls/{number}", {**split_repo(full), "number": number})
            if pr.get("state") != "open":
                (waits if waits is not None else []).append(self._record_check_waits(ctx, full, number, None))
                return [f"#{number}: {'merged' if pr.get('merged') else pr.get('state')}"]
            tr = tr or await self.trusted(ctx, full)
            if not tr.served:
                return [not_served_note(full, number)]
            if sync_prs.off_base(pr, tr.base):
                # no check run either: the gate run on its head is the unit's own PR's when the
                # PR comes from forksync's branch
                return [off_base_note(number, pr, tr.base)]
            # asked once: the answer that makes a PR named forksync/chain-… a chain (gather) is
            # the one that lets it merge by itself and says on the gate why it does not
            owner = sync_prs.foreign_reason(ctx.store, full, pr, bot_login=self.bot_login, fork_ref=tr.base)
            state = await gate_inputs.gather(ctx.gh, ctx.store, full, pr, tr.cfg, bot_login=self.bot_login,
                                             foreign=owner, own_checks=set(),
                                             repo_for=lambda base, head: self.repo_for(full, base, head),
                                             now=self.now(), unread=unread)
            suites = suite_requirements(required_l1(tr.suites, state.areas))
            after_s = getattr(getattr(tr.cfg, "gate", None), "unreported_after_s", 0) or 0
            decision = decide(state, suites, area_policies(tr.cfg), config_error=tr.error,
                              l3_suites=None if tr.error else tuple(s.name for s in tr.suites if s.level == "L3"),
                              now=self.now(), unreported_after_s=after_s)
            if seen is not None:
                seen.append((decision, state))
            notes = [f"#{number} gate: {decision.title}"
                     + (" — " + ", ".join(f"{f.code}({f.subject})" if f.subject else f.code
                                          for f in decision.blocking) if decision.blocking else "")]
            extra = [f"Trusted suites unavailable: {tr.error}"] if tr.error else []
            named = pr["head"]["ref"].startswith(tr.cfg.github.branch_prefix)
            foreign = owner if named else ""
            sync_pr = named and not foreign
            (waits if waits is not None else []).append(self._record_check_waits(
                ctx, full, number, check_wait(decision, state, pr, after_s, ctx.store, full) if sync_pr else None))
            if foreign:
                # named like a sync branch, and so once taken for one; saying why it is not keeps a
                # person from waiting for a merge forksync will not make by itself
                extra.append(f"Not forksync's sync PR, although its branch is named `{pr['head']['ref']}`: {foreign}. "
                             "forksync treats it as any other PR: it does not merge it by itself, does not take it "
                             "for a chain by its name, and lands, closes or deletes nothing of it; "
                             "`/forksync merge` asks it to merge.")
                notes.append(f"#{number}: not forksync's sync PR ({foreign})")
            if pr.get("draft") and sync_pr and suites and leaves_draft(decision):
                # a chain opened as a draft (stopped at a conflict) leaves draft once it is whole
                # and L1 is green on its head; approvals and sign-offs are still asked for
                if await mark_ready(ctx.gh, pr):
                    notes.append(f"#{number} left draft: whole, L1 green on {state.head_sha[:12]}")
                    pr = {**pr, "draft": False}
            if sync_pr:
                # the PR's draft state as read here (and as the gate left it): what the status
                # issue and the dashboard say of the unit; a change re-renders the issue after
                (waits if waits is not None else []).append(sync_store.record_pr_draft(
                    ctx.store, full, pr["head"]["ref"], number, bool(pr.get("draft"))))
            if "merge" in decision.actions and not (sync_pr or explicit) and not foreign:
                extra.append("Not a sync PR: forksync does not merge it by itself; `/forksync merge` asks it to.")
            if "merge" in decision.actions and (sync_pr or explicit):
                outcome = await self.merge(ctx, full, pr, state.head_sha, tr.cfg.github.merge_method, unit=sync_pr,
                                           base=state.base_sha)
                notes.append(outcome.text)
                if outcome.code == MERGED:
                    notes += await self._after_merge(ctx, full, number, tr.base)
                await publish_gate(ctx.gh, full, decision, state, now=self.now(), notes=extra + [outcome.text])
                if outcome.code in (HEAD_MOVED, BASE_MOVED) and _round < self.max_rounds:
                    follow = True
                else:
                    return notes
            else:
                await publish_gate(ctx.gh, full, decision, state, now=self.now(), notes=extra)
                follow = False
        if follow:
            return notes + await self.validate_pr(ctx, full, number, explicit=explicit, _round=_round + 1, seen=seen)
        if _round >= self.max_rounds:
            return notes + ["stopped: too many rounds in one evaluation"]
        if "update-branch" in decision.actions:
            updated = await self.update_branch(ctx, full, pr, state.head_sha)
            notes.append(updated.text)
            if updated.code == UPDATED:
                return notes + await self.validate_pr(ctx, full, number, explicit=explicit, _round=_round + 1,
                                                      seen=seen)
            if updated.code == REFUSED:      # e.g. the base conflicts: a person must merge it
                await publish_gate(ctx.gh, full, decision, state, now=self.now(), notes=[updated.text],
                                   conclusion="failure")
        elif "run-suites" in decision.actions:
            return notes + await self.validate_pr(ctx, full, number, explicit=explicit, _round=_round + 1, seen=seen)
        return notes

    def drafted_by_person(self, ctx, full: str, pr: dict) -> bool:
        """Record that a person turned sync PR ``pr`` (GitHub's PR object from
        ``pull_request.converted_to_draft``) of fork ``full`` into a draft: the draft is theirs,
        the gate does not take it out of draft (:func:`bot.validation.gate_inputs.person_draft`;
        the evaluation that follows records the draft state itself). Returns whether the unit's
        row changed; a PR no unit's row speaks for changes nothing."""
        return sync_store.record_person_draft(ctx.store, full, (pr.get("head") or {}).get("ref") or "",
                                              int(pr.get("number") or 0))

    def _record_check_waits(self, ctx, full: str, number: int, wait: dict | None) -> bool:
        """Store the sync PR's wait on unreported required checks (:func:`check_wait`; None: none)
        for the status issue, the dashboard and ``/healthz``. True when the status issue wants a
        render: a unit turned to, or stopped, waiting on a check never reported (a wait still young
        shows at the issue's next render: a refresh per push would cost calls for nothing a person
        acts on)."""
        def open_unit(w: dict) -> bool:
            row = sync_store.branch_row(ctx.store, full, w.get("branch") or "")
            return bool(row) and row.get("state") == "open" and row.get("pr") in (0, None, w["pr"])

        def overdue() -> set[int]:
            st = sync_store.load_status(ctx.store, full)
            return {w["pr"] for w in (st.check_waits if st else ()) if w.get("overdue")}

        before = overdue()
        if not sync_store.record_check_waits(ctx.store, full, number, wait, keep=open_unit):
            return False
        return before != overdue()

    async def _after_merge(self, ctx, full: str, number: int, base: str) -> list[str]:
        """Land a PR the bot merged itself (:func:`bot.sync.landing.on_closed`: ledger refresh,
        branch deletion) — GitHub's ``pull_request.closed`` for it has the bot as sender, which the
        dispatcher's loop guard drops. ``base``: the branch the gate merged into (:attr:`Trusted.base`),
        the unit's base when its row records none."""
        if not self.bot_login:
            return []
        try:
            rv = split_repo(full)
            pr = await ctx.gh.getitem("/repos/{owner}/{repo}/pulls/{number}", {**rv, "number": number})
            waiting = sync_store.lands_after_it(ctx.store, full, (pr.get("head") or {}).get("ref") or "")
            await landing.on_closed(ctx, self.sync, full, pr, sender={"login": self.bot_login, "type": "Bot"},
                                    fork_ref=base)
        except Exception as e:  # noqa: BLE001 - the merge happened; the next sync refreshes the ledger
            return [f"landing after merge not run: {error_text(e, 240)}"]
        return await after_landing(ctx, full, waiting)

    async def update_branch(self, ctx, full: str, pr: dict, head: str) -> Outcome:
        return await update_branch(ctx.gh, full, pr["number"], head, polls=self.mergeable_polls,
                                   poll_s=self.merge_poll_s)

    async def merge(self, ctx, full: str, pr: dict, head: str, method: str, *, unit: bool = True,
                    base: str | None = None) -> Outcome:
        """Merge at ``head`` while the base tip is ``base`` (:func:`bot.github.merge.merge_pr`: its
        :class:`~bot.github.merge.Outcome`, ``refused`` also for 403 and 422); a merge GitHub refuses
        (405, 403, 422) blocks the sync unit, with GitHub's own words
        (:meth:`bot.sync.service.SyncService.merge_refused`: stored, on the status issue and the PR)
        — only when ``unit`` (the PR is forksync's own sync PR): a refusal of a PR merely named
        like a sync branch says nothing about forksync's unit of that name."""
        branch = ((pr.get("head") or {}).get("ref") or "") if unit else ""
        try:
            out = await merge_pr(ctx.gh, full, pr["number"], head, method, base=base, polls=self.mergeable_polls,
                                 poll_s=self.merge_poll_s)
        except gidgethub.HTTPException as e:
            code = int(e.status_code)
            if code not in (403, 422) or rate_limited(e):
                raise           # a rate limit is no refusal: the delivery or the next tick tries again
            words = github_words(e)
            # "" when the branch holds no open unit (an L2 back-out's): nothing is blocked then
            blocked = await self.sync.merge_refused(ctx, full, branch, head, words) if branch else ""
            return Outcome(REFUSED, f"not merged: GitHub refused ({words})"
                           + ("; blocked until a merge goes through" if blocked else ""), e)
        if branch and out.code == REFUSED and out.github_error is not None:
            await self.sync.merge_refused(ctx, full, branch, head, github_words(out.github_error))
        return out


def check_wait(decision, state, pr: dict, after_s: float, store, full: str) -> dict | None:
    """The sync PR's wait on required checks with no run or status on its head
    (:attr:`bot.validation.gate.GateDecision.unreported`), in
    :attr:`bot.sync.status.SyncStatus.check_waits`' shape; None when it waits on none."""
    if not decision.unreported:
        return None
    row = gate_inputs.unit_row(store, full, pr) or {}
    branch = (pr.get("head") or {}).get("ref") or ""
    return {"branch": branch, "unit": row.get("unit_id") or branch.rsplit("/", 1)[-1], "head": state.head_sha,
            "checks": [n for n, _ in decision.unreported], "since": state.head_seen_at,
            "overdue": any(o for _, o in decision.unreported), "limit_s": after_s}


def not_served_note(full: str, number: int) -> str:
    """The note of a PR of a repository forksync does not serve (no ``.github/forksync.yml`` on its
    default branch, not an adopted fork): an installation on all of an organisation's repositories
    reaches them too, and a gate check run there would be noise, or block merges where every check
    is required."""
    return f"#{number}: not validated: {full} has no {CONFIG_PATH} on its default branch (not a repository forksync serves)"


def off_base_note(number: int, pr: dict, base: str) -> str:
    """The note of a PR the gate leaves alone for its base (:func:`bot.sync.prs.off_base`)."""
    return (f"#{number}: not validated: {sync_prs.off_base(pr, base)}; forksync runs, updates and merges only "
            "PRs into it")


def superseded_note(result, attempt: str, lost_to: str) -> str:
    """The note of a result that answered an attempt a re-run replaced (not counted); ``result``:
    what names the suite and commit (``suite``, ``commit``: a ``RunResult`` or a ``Dispatch``)."""
    return (f"{result.suite} @ {result.commit[:12]}: result of request {attempt} superseded by a re-run "
            f"(request {lost_to}); not counted")


# ---------------------------------------------------------------------- commands (bot.commands.runner calls these)
async def command_retest(ctx, full: str, number: int, suite: str | None, user: str, *, written: int = 0) -> str:
    """``/forksync retest [suite]`` by a writer (permission checked by the command handler): the
    suites run again on the PR head — also when the author is not a collaborator (the writer's
    retest, written at ``written``, authorises this head when it was there before the comment) —
    and the gate is evaluated. Returns the reply's result text."""
    notes = await ctx.validation.validate_pr(ctx, full, number, only=suite, force=True, granted_by=user,
                                             granted_at=written)
    return "retest " + (f"of suite `{suite}`" if suite else "of all required suites") + ": " + "; ".join(notes)


async def l3_head_refusal(ctx, full: str, pr: dict, written: int) -> str:
    """Why a writer's ``/forksync l3``, written at ``written`` (epoch s; 0 = now), does not cover
    the PR's head ("" when it does). Heavy runs run the PR's code on GPU runners: a
    non-collaborator's head only when the writer looked at it, the rule ``/forksync retest``
    follows (:meth:`ValidationService.written_before_head`)."""
    v = ctx.validation
    head, author = pr["head"]["sha"], (pr.get("user") or {}).get("login", "")
    if not v or await gate_inputs.is_trusted_author(ctx.gh, full, author, v.bot_login):
        return ""
    if v.written_before_head(ctx, full, int(pr["number"]), head, written):
        return (f"the request was written before `{head[:12]}` was pushed, and the PR's author is not a collaborator: it "
                "does not cover a head pushed after it — look at the new head, then ask again")
    return ""


async def command_merge(ctx, full: str, number: int) -> tuple[str, str]:
    """``/forksync merge``: the same gate decision as auto-merge (:meth:`ValidationService.evaluate`
    with ``explicit``: any PR, not only sync PRs, and without trusted suites the gate's own
    fallback of rule 6). Returns ``(result, details)`` for the reply: the gate's notes, and when
    it did not allow, its findings (the ``forksync/gate`` summary). Without a validation service
    in this process nothing is merged: there is no weaker rule to fall back on."""
    v = ctx.validation
    if not v:
        return ("not merged: the merge gate is not available in this process (no validation service), "
                "and forksync merges only through it."), ""
    seen: list = []
    notes = await v.evaluate(ctx, full, number, explicit=True, seen=seen)
    details = ""
    if seen and not seen[-1][0].allowed:
        decision, state = seen[-1]
        details = render_summary(decision, state)
    return "; ".join(notes), details


async def after_hold(ctx, full: str, branch_prefix: str) -> list[str]:
    """Re-evaluate the gate of every open sync PR of ``full`` (forksync's own into the branch it
    syncs, head branch ``branch_prefix``…: :func:`bot.sync.prs.is_own_sync_pr`) after ``hold``/``unhold`` changed: a
    gate that finished red only for the hold
    would otherwise keep saying "held" after ``unhold`` (nothing else re-evaluates a completed red
    gate whose checks did not move), and a green one would say "ready" while held. Returns the
    evaluations' notes, and one note per PR that GitHub refused to evaluate (the others still run).
    A context without a validation service (a process that only syncs) re-evaluates nothing."""
    v = getattr(ctx, "validation", None)
    if not v:
        return []
    notes: list[str] = []
    rv = split_repo(full)
    base = (await v.trusted(ctx, full)).base
    async for pr in ctx.gh.getiter("/repos/{owner}/{repo}/pulls{?state,base}", {**rv, "state": "open", "base": base}):
        if not sync_prs.is_own_sync_pr(ctx.store, full, pr, prefix=branch_prefix, bot_login=v.bot_login,
                                       fork_ref=base):
            continue
        try:
            notes += await v.evaluate(ctx, full, int(pr["number"]))
        except gidgethub.HTTPException as e:
            notes.append(f"#{pr['number']}: gate not re-evaluated: {error_text(e, 200)}")
    return notes


async def after_landing(ctx, full: str, waiting: list[dict]) -> list[str]:
    """Re-evaluate the gate of the sync PRs ``waiting`` (``sync_branches`` rows, read before a unit
    landed or closed: :func:`bot.sync.store.lands_after_it`) now that it has: their gate said
    ``lands-after`` for it and nothing else would decide again — no push, review or check moves when
    another PR lands, and a gate that finished red is not re-evaluated by the reconcile tick.
    Returns the evaluations' notes, one note per PR GitHub refused to evaluate (the others still
    run). A context without a validation service re-evaluates nothing."""
    v = getattr(ctx, "validation", None)
    if not v or not waiting:
        return []
    notes: list[str] = []
    for row in waiting:
        try:
            notes += await v.evaluate(ctx, full, int(row["pr"]))
        except gidgethub.HTTPException as e:
            notes.append(f"#{row['pr']}: gate not re-evaluated after {row['unit_id']}'s dependency ended: {error_text(e, 200)}")
    return notes


async def after_signoff(ctx, full: str, number: int) -> str:
    """Re-evaluate the gate after a recorded sign-off; returns a short note for the reply."""
    if not ctx.sync:
        return ""
    notes = await ctx.validation.evaluate(ctx, full, number)
    return "; ".join(notes)


async def after_l3_queued(ctx, full: str, number: int) -> str:
    """Re-evaluate the gate after ``/forksync l3`` queued runs: until their results are in on the
    head the gate shows ``l3-pending`` (a green gate would merge before the heavy run reports)."""
    if not ctx.validation:
        return ""
    return "; ".join(await ctx.validation.evaluate(ctx, full, number))


def downloader_for(ctx):
    """``download(url) -> bytes`` for artifact zips with the context client's session and token."""
    gh = ctx.gh
    source = getattr(gh, "_token_source", None)

    async def token() -> str:
        return await source() if source is not None else ""

    return session_downloader(getattr(gh, "_session", None), token)


__all__ = ["ValidationService", "Trusted", "superseded_note", "command_retest", "l3_head_refusal", "command_merge",
           "after_hold",
           "after_signoff", "after_l3_queued",
           "downloader_for"]
