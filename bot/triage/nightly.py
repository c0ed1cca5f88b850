"""The nightly loop on GitHub (shell): runner results → triage issues, suspects, bisection, blame
and the proposed fix, idempotent across restarts and redeliveries.

:func:`on_nightly_results` is what the nightly tick calls once every L1 result of a nightly on
trunk is in (``bot.app.schedules``). It

1. reads the results into failure records (:func:`bot.triage.records.from_run_result`),
2. runs :func:`bot.triage.service.triage_nightly` (issues opened / updated / closed / reopened on
   the fork through the client; suspects ranked and written when an issue opens; infrastructure
   and flaky groups tracked without issues),
3. then, for every **open real** issue of a root cause that failed in this nightly, does the
   follow-ups that have not been done yet:

   * **blame** — the bisection service (``bisect(good, bad) -> sha | None``, e.g.
     :func:`command_bisector` around :func:`bot.git.bisect.bisect_command`) over last green ..
     first red; the culprit goes into the issue's blame section with its ``Upstream-Commit`` and
     a comment mentions its author (:meth:`bot.triage.issues.TriageIssues.write_blame`). Only
     real failures are ever bisected;
   * **proposed fix** — with an agent client that may run (``agents``), the fix agent
     (:func:`bot.agents.fix.propose_fix`) reads the group, its redacted logs and the suspects'
     diffs; its answer (sanitised, rendered by ``templates/agents/proposed_fix.md.j2``) is
     commented on the issue inside ``templates/triage/proposed_fix_comment.md.j2``. Never pushed.

Idempotency: the lifecycle marks a run processed only after its issue actions ran. The
follow-ups are found again from state, not from the run: table ``nightly_followups`` records a
finished bisection / fix per root cause, and before writing, the issue itself is checked (a
confirmed culprit in its blame section; a comment holding ``<!-- forksync:proposed-fix:<key> -->``).
A crash between the GitHub write and the table write therefore repeats nothing, and a crash
before it is completed on the next delivery or nightly.
"""
from __future__ import annotations

import asyncio
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

from bot.agents.client import AgentClient
from bot.agents.fix import FixRequest, propose_fix
from bot.git.bisect import bisect_command
from bot.git.repo import GitIOError, git
from bot.store import Store
from bot.triage import store as triage_store
from bot.triage.issues import TriageIssues, load_state, render
from bot.triage.lifecycle import OlderNightly
from bot.triage.records import from_run_result
from bot.triage.rules import RulesError, RulesTable, load_rules
from bot.triage.service import NightlyReport, suspect_diffs, triage_nightly
from bot.triage.suspects import FailureContext, author_mention, commits_between, confirm, rank_suspects
from bot.validation import store as vstore
from gpu_runner.result import RunResult

__all__ = ["NightlyOutcome", "on_nightly_results", "command_bisector", "rules_table"]


CULPRIT_MARK = "**Culprit (confirmed by bisection):**"
Bisect = Callable[[str, str], Awaitable[str | None]]


@dataclass
class NightlyOutcome:
    """What one nightly did on GitHub. ``report``: triage's own report (groups, actions);
    ``issues``: root cause → issue number for every open real issue this nightly touched;
    ``tracked``: root causes tracked without an issue (infrastructure / flaky), with their class;
    ``culprits``: root cause → confirmed culprit sha; ``fixes``: root cause → fix status
    (proposed / rejected / skipped); ``notes``: one line per thing done, for logs; ``refused``:
    why nothing was done (a nightly older than the newest triaged), also in ``notes`` the first
    time that nightly is refused (table ``triage_refused`` keeps it)."""

    run: str
    commit: str
    report: NightlyReport | None = None
    issues: dict[str, int] = field(default_factory=dict)
    tracked: dict[str, str] = field(default_factory=dict)
    culprits: dict[str, str] = field(default_factory=dict)
    fixes: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: why the nightly was not triaged ("" when it was): it ran before the newest one already
    #: triaged (:class:`bot.triage.lifecycle.OlderNightly`); nothing was written
    refused: str = ""


def command_bisector(git_dir: str | Path, command: str, *, timeout_s: int = 3600,
                     env: dict[str, str] | None = None) -> Bisect:
    """``bisect(good, bad)`` for triage: :func:`bot.git.bisect.bisect_command` with the failing
    suite's ``command`` (run in a worktree per step, in a thread), returning the culprit sha when
    bisection found exactly one and verified it (re-tested bad, its parent good); None when skips
    left several suspects or the verification failed."""
    async def run(good: str, bad: str) -> str | None:
        res = await asyncio.to_thread(bisect_command, str(git_dir), good, bad, command, timeout_s=timeout_s, env=env)
        # an unverified culprit is what a flaky test or noise points at: the issue would call it
        # "confirmed by bisection" and mention its author, so it is not handed on
        return res.culprit if res.verified else None

    return run


def rules_table(cfg, fork_git_dir: str | Path | None = None, base_dir: str | Path | None = None) -> RulesTable:
    """The triage rules of ``cfg.triage``: inline rules, or the file ``triage.rules`` names —
    read from ``base_dir`` when given, else from the fork's default branch in ``fork_git_dir``
    (relative to the folder of ``github.config_path``, e.g. ``.github/``). Raises
    :class:`bot.triage.rules.RulesError` (file, index, field) when the file is missing or bad."""
    rules = cfg.triage.rules
    if not isinstance(rules, str):
        return RulesTable(tuple(rules))
    if base_dir is not None or fork_git_dir is None:
        return RulesTable.from_settings(cfg.triage, base_dir or ".")

    folder = str(Path(cfg.github.config_path).parent)
    rel = rules if folder in ("", ".") else f"{folder}/{rules}"
    ref = cfg.fork.ref if cfg.fork.ref.startswith("refs/") else f"refs/heads/{cfg.fork.ref}"
    try:
        text = git(str(fork_git_dir), "show", f"{ref}:{rel}")
    except GitIOError:
        raise RulesError(f"{rel} at {ref} of the fork: rules file not found (triage.rules names it, relative "
                         f"to {folder or 'the repository root'}/); commit it or list the rules inline") from None
    with tempfile.TemporaryDirectory(prefix="forksync-rules-") as tmp:
        p = Path(tmp) / Path(rel).name
        p.write_text(text)
        try:
            return RulesTable(tuple(load_rules(p)))
        except RulesError as e:
            raise RulesError(str(e).replace(str(p), f"{rel} at {ref}")) from None


def _client_of(ctx_or_client: Any):
    return getattr(ctx_or_client, "gh", None) or ctx_or_client


def _fork_dir_of(ctx_or_client: Any, full_name: str) -> str | None:
    svc = getattr(ctx_or_client, "sync", None)
    repo_dir = getattr(svc, "repo_dir", None) if svc else None
    if callable(repo_dir):
        d = Path(repo_dir(full_name))
        if (d / "HEAD").exists():
            return str(d)
    return None


async def on_nightly_results(ctx_or_client: Any, repo_full_name: str, cfg, results: Sequence[Any], *,
                             run_id: str, when: int, store: Store, bisect: Bisect | None = None,
                             agents: Any = None, fork_git_dir: str | Path | None = None,
                             logins: dict[str, str] | None = None, rules: RulesTable | None = None
                             ) -> NightlyOutcome:
    """Triage one nightly's results on the fork ``repo_full_name`` (``owner/repo``).

    ``ctx_or_client``: a handler context (``ctx.gh``, optionally ``ctx.sync.repo_dir``) or a
    gidgethub-style client for the fork's installation. ``cfg``: the fork's
    :class:`bot.config.forksync.ForksyncConfig` (``triage``, ``areas``, ``agents``). ``results``:
    ``gpu_runner.result.RunResult`` objects or their JSON dicts, every suite × platform of the
    nightly. ``run_id``: the nightly's id (a redelivery with the same id changes nothing);
    ``when``: epoch seconds UTC. ``bisect(good, bad)``: the bisection service (None: suspects
    only). ``agents``: a :class:`bot.agents.client.AgentClient` (None or without a key: no
    proposed fix, everything else works). ``fork_git_dir``: a local clone holding the nightly
    commits (suspects and diffs; default: the sync service's working repository).
    ``logins``: e-mail → GitHub login for mentions.

    A nightly that ran (``when``) before the newest one already triaged for the fork is refused:
    nothing of the lifecycle is written, ``refused`` says why, and the refusal is kept
    (:func:`bot.triage.store.record_refusal`) and a note the first time only. Raises
    :class:`bot.triage.records.RecordError` for a result that cannot be read (nothing is written
    then) and GitHub errors from the client (the delivery is retried; done work is kept).
    """
    gh = _client_of(ctx_or_client)
    owner, _, repo = repo_full_name.partition("/")
    store.migrate()
    fork_git_dir = str(fork_git_dir) if fork_git_dir else _fork_dir_of(ctx_or_client, repo_full_name)
    records = [r for res in results for r in from_run_result(res, run=run_id, time=when)]
    commits = Counter(r.commit for r in records if r.commit) or Counter(
        (res.get("commit") if isinstance(res, dict) else getattr(res, "commit", "")) for res in results)
    commit = commits.most_common(1)[0][0] if commits else ""
    out = NightlyOutcome(run_id, commit)
    table_ = rules or rules_table(cfg, fork_git_dir)
    settings = cfg.triage
    try:
        report = await triage_nightly(store=store, gh=gh, owner=owner, repo=repo, settings=settings, table=table_,
                                      run=run_id, time=when, commit=commit, records=records, fork_git_dir=fork_git_dir,
                                      areas=cfg.areas, bisect=None, logins=logins)
    except OlderNightly as e:
        # a refusal, not a failure: the delivery is not retried. Kept, and said in the notes (the
        # tick logs them) the first time only: the tick hands the same nightly on at every tick
        # until the next one is dispatched, and the refusal cannot change meanwhile
        out.refused = f"not triaged: {e} for {repo_full_name}"
        if triage_store.record_refusal(store, repo_full_name, e.run, e.time, e.newest_run, e.newest_time,
                                       now=int(time.time())):
            out.notes.append(out.refused)
        return out
    out.report = report
    out.notes += [f"{a.kind} {', '.join(a.keys)}" for a in report.actions]
    state = load_state(store, repo_full_name)
    by_id = {g.id: g for g in report.groups}
    for g in report.groups:
        t = state.tracked.get(g.id)
        if t is not None and t.state == "tracked":
            out.tracked[g.id] = t.cls
    svc = TriageIssues(store, gh, owner, repo, settings)
    for key, g in by_id.items():
        t = state.tracked.get(key)
        if t is None or t.state != "open" or t.cls != "real" or not t.issue:
            continue
        out.issues[key] = t.issue
        await _follow_up(out, store, gh, svc, repo_full_name, t, g, fork_git_dir=fork_git_dir, areas=cfg.areas,
                         bisect=bisect, agents=agents, logins=logins, settings=settings)
    return out


async def _follow_up(out: NightlyOutcome, store: Store, gh, svc: TriageIssues, full: str, t, g, *,
                     fork_git_dir, areas, bisect, agents, logins, settings) -> None:
    """Blame and proposed fix for one open real issue, each at most once (see the module doc)."""
    rkey = f"{full}:{t.key}"
    row = triage_store.followup(store, rkey) or {"key": rkey, "repo": full, "cause": t.key, "issue": t.issue, "bisected": 0,
                                "culprit": "", "fix": ""}
    row["issue"] = t.issue
    suspects, good, bad = [], t.last_green, t.first_red
    if fork_git_dir and bad:
        try:
            commits = await asyncio.to_thread(commits_between, fork_git_dir, good, bad)
        except Exception as e:  # noqa: BLE001 - a clone without these commits: no suspects, said so
            commits = []
            out.notes.append(f"{t.key}: no suspects: {good[:12]}..{bad[:12]} not readable in {fork_git_dir}: "
                             f"{type(e).__name__}: {str(e)[:200]}")
        suspects = rank_suspects(commits, FailureContext(tuple(sorted(t.tests)), tuple(g.logs(3))), areas=areas)
    owner, _, repo = full.partition("/")
    if bisect is not None and not row["bisected"] and good and bad:
        issue = await gh.getitem(f"/repos/{owner}/{repo}/issues/{t.issue}")
        if CULPRIT_MARK in (issue.get("body") or ""):            # written before a crash: keep it
            row["bisected"] = 1
        else:
            try:
                culprit, failed = await confirm(suspects, good, bad, bisect), False
            except Exception as e:  # noqa: BLE001 - bad input or a broken runner: retried next nightly
                culprit, failed = None, True
                out.notes.append(f"{t.key}: bisection of {good[:12]}..{bad[:12]} failed: {type(e).__name__}: {str(e)[:200]}")
            if failed:
                pass
            elif culprit is not None:
                mention = (author_mention(culprit.commit, logins)
                           if culprit.commit is not None and settings.mention_authors else "")
                await svc.write_blame(t.key, culprit, mention=mention, suspects=suspects, good=good, bad=bad)
                row["culprit"] = culprit.sha
                out.culprits[t.key] = culprit.sha
                out.notes.append(f"{t.key}: culprit {culprit.sha[:12]} written into #{t.issue}")
            else:
                out.notes.append(f"{t.key}: bisection of {good[:12]}..{bad[:12]} found no single culprit")
            row["bisected"] = int(not failed)
        triage_store.save_followup(store, row)
    elif row.get("culprit"):
        out.culprits[t.key] = row["culprit"]
    if row.get("fix"):
        out.fixes[t.key] = row["fix"]
        return
    if agents is None or getattr(agents, "off_reason", None):
        return                                              # agents off: no comment, nothing recorded
    mark = f"<!-- forksync:proposed-fix:{t.key} -->"
    async for c in gh.getiter(f"/repos/{owner}/{repo}/issues/{t.issue}/comments"):
        if mark in (c.get("body") or ""):
            row["fix"] = "proposed"
            break
    else:
        diffs = await asyncio.to_thread(suspect_diffs, fork_git_dir, suspects) if fork_git_dir and suspects else []
        proposal = await propose_fix(agents, FixRequest.from_group(g.to_agent_input(diffs)))
        if proposal.status == "skipped":                     # budget, API trouble: try again next nightly
            out.fixes[t.key] = "skipped"
            out.notes.append(f"{t.key}: no proposed fix ({proposal.reason})")
            return
        body = render("proposed_fix_comment.md.j2", marker=mark, fix=proposal.body.rstrip("\n"), key=t.key, run=out.run)
        await gh.post(f"/repos/{owner}/{repo}/issues/{t.issue}/comments", data={"body": body})
        row["fix"] = proposal.status
        out.notes.append(f"{t.key}: proposed fix {proposal.status} on #{t.issue}")
    out.fixes[t.key] = row["fix"]
    triage_store.save_followup(store, row)


# ---------------------------------------------------------------------- the scheduler's adapter
async def triage_stored_nightly(ctx, full: str, nightly: dict, expected: Sequence[tuple[str, str]], *,
                                cfg=None, suites: Sequence[Any] | None = None, fork_git_dir: str | Path | None = None,
                                agents: Any = "env") -> list[str]:
    """For the nightly tick (:func:`bot.app.schedules.nightly_tick`): once every expected
    ``(suite, platform)`` result of ``nightly`` (a ``nightly_runs`` row: ``key``, ``sha``,
    ``dispatched_at``) is stored (``suite_results``, status done), triage it with
    :func:`on_nightly_results` (run id = the row's key). Returns notes; nothing when results are
    still missing (the silence alarm covers that) or the nightly was triaged already (a no-op).

    Defaults come from the process: ``cfg`` and ``suites`` from the fork's trusted configuration
    (``bot.validation.service``), ``fork_git_dir`` from the local backend's mirror, ``agents``
    from the environment's key (:meth:`bot.agents.client.AgentClient.from_env`; no key: no fix).
    Bisection runs the failing suite's command (its ``build`` first) over the mirror."""
    sha = nightly["sha"]
    done = {(r["suite"], r["platform"]): r for r in vstore.rows_for(ctx.store, full, shas=(sha,))
            if r["status"] == "done" and r.get("result_json")}
    if not expected or any(p not in done for p in expected):
        return []
    results = [RunResult.from_json(done[p]["result_json"]) for p in expected]
    if cfg is None or suites is None or fork_git_dir is None:
        v = ctx.validation
        if cfg is None or suites is None:
            tr = await v.trusted(ctx, full)
            cfg = cfg if cfg is not None else tr.cfg
            suites = suites if suites is not None else tr.suites
        if fork_git_dir is None:
            fork_git_dir = await v.local.fetch(full, sha)
    by_name = {s.name: s for s in suites or ()}
    red = next((by_name[r.suite] for r in results if r.outcome == "fail" and r.suite in by_name), None)
    bisect = None
    if red is not None and fork_git_dir:
        cmd = f"{red.build} && {red.command}" if getattr(red, "build", None) else red.command
        bisect = command_bisector(fork_git_dir, cmd, timeout_s=red.timeout_s, env=dict(red.env or {}))
    client = None
    if agents == "env":
        client = AgentClient.from_env(cfg.agents, ctx.store)
        agents = client if client.off_reason is None else None
    try:
        out = await on_nightly_results(ctx, full, cfg, results, run_id=nightly["key"],
                                       when=int(nightly["dispatched_at"]), store=ctx.store, bisect=bisect,
                                       agents=agents, fork_git_dir=fork_git_dir)
    finally:
        if client is not None:
            await client.aclose()
    return [f"nightly triage {sha[:12]}: {n}" for n in out.notes]
