"""The GitHub side of the agents (edge): conflict resolution on a stopped chain PR, the draft
verdict after L1, and test-result summaries on sync PRs.

It lives outside ``bot/agents/`` on purpose: that package holds no GitHub or process code at
all (``tests/agents/test_canary.py::test_no_code_path_from_agents_to_a_merge``); this module
calls no merge, review or ready-for-review endpoint (``tests/sync/test_agents.py`` checks it).

Rails that live here (the agent-side rails are in :mod:`bot.agents.conflict`):

* an agent-resolved pick is pushed **fast-forward only** onto the chain branch it was replayed
  onto (``git push`` without force: a person's push meanwhile makes it fail, nothing is lost) —
  except where the chain carries forksync's own conflict commit for that pick: the resolved pick
  takes its place, pushed with a lease (force-with-lease) on exactly that commit (so a person's push
  meanwhile still makes it fail), and the conflict commit is kept under
  ``refs/forksync/resolutions/<unit>/<sha12>`` (docs/github.md, "Finishing a conflicted chain");
* the chain PR is opened as a **draft** carrying the agent's report in its body (section
  ``<!-- forksync:agent-report:start/end -->``, one report per resolved pick, a pick's replaced
  on re-runs, the rest of the body kept); reports that would pass GitHub's body limit leave it
  oldest first, each for a comment holding it whole and a line linking that comment
  (:func:`with_report`), so the newest stays whole and none is cut mid-table;
  a PR that already existed as a non-draft gets a comment saying it must be treated as one
  (GitHub's REST API cannot convert a PR to a draft);
* it may leave draft only when L1 passed on its current head (:func:`bot.agents.policy.may_leave_draft`),
  which :func:`draft_verdict` tells people; a person must approve; nothing here merges, approves
  or marks a PR ready (tested: ``tests/sync/test_agents.py``);
* a rejected or skipped proposal pushes nothing and comments the reason once per
  (upstream commit, chain tip) on the chain PR (hidden marker, so redeliveries repeat nothing).

Every text is a template under ``templates/agents/`` (the report itself is the conflict agent's
``conflict_report.md.j2``, sanitised by the output rails).
"""
from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from bot.agents.client import AgentClient, api_key_from_env
from bot.agents.client import AgentClient as _Client
from bot.agents.conflict import ConflictOutcome, resolve_pick
from bot.agents.conflict_git import conflict_case
from bot.agents.policy import Verdict, may_leave_draft
from bot.agents.render import render
from bot.agents.summary import summarize_results
from bot.git.repo import git_env
from bot.git.resolution import find_stop, keep_ref
from bot.github.common import comment_once, marker, split_repo
from bot.github.limits import BODY_LIMIT, fit_body, fit_title
from bot.sync import store as sync_store
from bot.sync.prs import create_pull, find_open_pr, fit_own, own_floor, placed, title_digest
from bot.sync.rules import rules_resolution

__all__ = ["ChainResolution", "resolve_chain_conflict", "draft_verdict", "post_test_summary",
           "agents_configured", "REPORT_SECTION", "with_report", "fit_reports", "report_moves",
           "report_comment", "moved_line"]


REPORT_SECTION = "agent-report"
_SECTION = re.compile(r"<!-- forksync:agent-report:start -->.*?<!-- forksync:agent-report:end -->\n?", re.S)


@dataclass(frozen=True)
class ChainResolution:
    """What :func:`resolve_chain_conflict` did. ``status``: ``clean`` (the pick no longer
    conflicts), ``off`` (agents not configured: nothing done), or the agent's outcome status
    (``committed`` / ``rejected`` / ``skipped``), or ``out of time`` (the client's time limit
    stopped the call: nothing pushed, nothing said on the PR). ``pushed``: the agent commit reached the
    remote branch; ``pr``: the chain PR's number (0 when none); ``draft``: whether that PR is a
    draft on GitHub."""

    status: str
    upstream_sha: str
    branch: str
    pr: int = 0
    draft: bool = False
    pushed: bool = False
    commit: str = ""
    outcome: ConflictOutcome | None = None
    note: str = ""


def agents_configured(client: AgentClient | None) -> bool:
    """True when ``client`` exists and may call the model (a key is set, agents enabled)."""
    return client is not None and client.off_reason is None


_REPORT_HEAD = re.compile(r"^### Conflict resolution by an agent — upstream ([0-9a-f]{7,40})", re.M)
_MOVED = re.compile(r"<!-- forksync:agent-report-moved:([0-9a-f]{7,40}) -->\s*$")
_COMMITTED = re.compile(r"\bcommitted as ([0-9a-f]{7,40})\b")
#: characters a moved report's line reserves for its comment's link while the body is fitted (the
#: link is known only once the comment is posted); GitHub's are about 80 (``…/pull/N#issuecomment-ID``)
LINK_WIDTH = 200
_SEP = "\n\n"


def _reports(section: str) -> list[tuple[str | None, str, bool]]:
    """The items of a section's text in order: ``(upstream sha, text, moved)`` — an agent report
    (from its heading to the next item; sha None for text before any heading) or the one line
    left for a report moved to a comment (``moved`` True)."""
    out: list[tuple[str | None, str, bool]] = []
    cur: list | None = None
    for line in section.split("\n"):
        moved, head = _MOVED.search(line), _REPORT_HEAD.match(line)
        if moved or head:
            if cur:
                out.append((cur[0], "\n".join(cur[1]).strip("\n"), False))
            cur = None
            if moved:
                out.append((moved.group(1), line.rstrip(), True))
                continue
            cur = [head.group(1), [line]]
        elif cur is not None:
            cur[1].append(line)
        elif line.strip():
            cur = [None, [line]]
    if cur:
        out.append((cur[0], "\n".join(cur[1]).strip("\n"), False))
    return [it for it in out if it[1]]


def fit_reports(reports: Sequence[str], lines: Sequence[str], room: int) -> list[str]:
    """Pure: the texts an agent-report section shows for ``reports`` (oldest first, the newest
    last), joined by a blank line within ``room`` characters: each report whole or, oldest first,
    replaced by its line ``lines[i]`` (where the line is the shorter) until the whole fits. The
    newest is never replaced: where it does not fit even with every older one replaced, it alone
    is cut (:func:`bot.github.limits.fit_body`, with the note of how much was cut) — no other cut.
    ``lines`` has one entry per report. Returns a list as long as ``reports``."""
    out = list(reports)
    for i in range(len(out) - 1):
        if len(_SEP.join(out)) <= room:
            break
        if len(lines[i]) < len(out[i]):
            out[i] = lines[i]
    if out and len(_SEP.join(out)) > room:
        rest = len(_SEP.join(out[:-1])) + (len(_SEP) if len(out) > 1 else 0)
        out[-1] = fit_body(out[-1], max(room - rest, 0))
    return out


def moved_line(upstream: str, commit: str, link: str) -> str:
    """The line (``templates/agents/github/report_moved.md.j2``) left in the body for the report
    of upstream ``upstream`` (12 hex) on fork commit ``commit`` ("" when the report names none),
    whole in the comment at ``link``."""
    return render("github/report_moved.md.j2", upstream=upstream, commit=commit, link=link,
                  limit=BODY_LIMIT).rstrip("\n")


@dataclass(frozen=True)
class _Plan:
    before: str                               # the body up to the section (or the body, then a blank line)
    after: str                                # the body after it
    items: list[tuple[str | None, str, bool]]  # the section's items, the new report last
    texts: list[str]                          # what fitting shows of each, moved lines with a placeholder link


def _plan(body: str, report: str) -> _Plan:
    """How :func:`with_report` fits ``report`` into ``body``. Moving an older report to a comment
    loses nothing, cutting forksync's own section loses its text: so the older reports give way
    first (room: the body as it stands), then the own section (room: its floor,
    :func:`bot.sync.prs.own_floor`), and only then is the newest report cut."""
    body = body or ""
    m = _SECTION.search(body)
    new_key = (_reports(report) or [(None, "", False)])[0][0]
    items: list[tuple[str | None, str, bool]] = []
    if m:
        inner = m.group(0).split("\n", 1)[1].rsplit("<!-- forksync:agent-report:end -->", 1)[0]
        items = [it for it in _reports(inner) if it[0] is not None and it[0] != new_key]
        before, after = body[:m.start()], body[m.end():]
    else:
        before, after = body.rstrip("\n") + "\n\n", ""
    items.append((new_key, report.rstrip("\n"), False))
    frame = render("github/pr_section.md.j2", report="\0")
    outside = len(before) + len(frame) - 1 + len(after)
    room_now = BODY_LIMIT - outside
    room_floor = BODY_LIMIT - (own_floor(before + frame + after) - 1)
    reports = [text for _, text, _ in items]
    lines = [text if moved else moved_line(key or "", _commit_of(text), "x" * LINK_WIDTH)
             for key, text, moved in items]
    texts = fit_reports(reports, lines, room_now)
    if texts[-1] != reports[-1]:              # the newest would be cut: the own section's text first
        texts = fit_reports([*texts[:-1], reports[-1]], [*texts[:-1], reports[-1]], room_floor)
    return _Plan(before, after, items, texts)


def _commit_of(report: str) -> str:
    m = _COMMITTED.search(report)
    return m.group(1)[:12] if m else ""


def report_moves(body: str, report: str) -> list[tuple[str, str, str]]:
    """Pure: the older reports that :func:`with_report` (``body``, ``report``) replaces by a line,
    each ``(upstream sha, fork commit, report text)``, oldest first: each must be posted whole as
    a comment (:func:`report_comment`) before the body that drops it is sent."""
    plan = _plan(body, report)
    return [(key or "", _commit_of(text), text) for (key, text, moved), shown in zip(plan.items[:-1], plan.texts[:-1])
            if not moved and shown != text]


def report_comment(upstream: str, commit: str, report: str) -> tuple[str, str]:
    """``(marker key, body)`` of the comment holding a moved report whole
    (``templates/agents/github/report_comment.md.j2``); the key makes it one per pick and commit."""
    return (f"agent-report-moved:{upstream}:{commit or 'none'}",
            render("github/report_comment.md.j2", upstream=upstream, commit=commit, report=report, limit=BODY_LIMIT))


def with_report(body: str, report: str, links: Mapping[str, str] | None = None) -> str:
    """``body`` with ``report`` in its agent-report section (appended when absent): the report
    of the same upstream commit is replaced, those of the chain's other picks are kept, so a chain
    whose agent resolved several picks shows every one of them. A whole over GitHub's body limit
    keeps the newest report whole: the oldest reports, oldest first, become one line each naming
    the pick, its fork commit and the comment at ``links[upstream sha]`` that holds the report
    whole (:func:`report_moves` says which; those lines stay on later runs); then forksync's own
    section is cut (:func:`bot.sync.prs.fit_own`); only a newest report over the limit on its own
    is cut (:func:`fit_reports`). Raises ``ValueError`` when a report to move has no link: its text
    would be lost."""
    plan = _plan(body, report)
    shown = list(plan.texts)
    for i, ((key, text, moved), fitted) in enumerate(zip(plan.items[:-1], plan.texts[:-1])):
        if not moved and fitted != text:
            link = (links or {}).get(key or "")
            if not link:
                raise ValueError(f"the agent report of upstream {key} must leave the body of the chain PR but "
                                 f"has no comment to point to: post it first (report_moves, report_comment)")
            shown[i] = moved_line(key or "", _commit_of(text), link)
    section = render("github/pr_section.md.j2", report=_SEP.join(shown))
    return fit_own(plan.before + section + plan.after)


async def _post_moved(gh: Any, full_name: str, number: int, body: str, report: str) -> dict[str, str]:
    """Post, once each, the comments holding whole the reports that ``report`` pushes out of
    ``body`` (PR ``number``); returns their links by upstream sha. A redelivery finds the comment
    by its marker and posts nothing again."""
    moves = report_moves(body, report)
    if not moves:
        return {}
    marks = {}
    for upstream, commit, text in moves:
        key, comment = report_comment(upstream, commit, text)
        await comment_once(gh, full_name, number, key, comment)
        marks[marker(key)] = upstream
    links: dict[str, str] = {}
    async for c in gh.getiter("/repos/{owner}/{repo}/issues/{number}/comments", {**split_repo(full_name), "number": number}):
        for mark, upstream in marks.items():
            if mark in (c.get("body") or "") and upstream not in links:
                links[upstream] = c.get("html_url") or ""
    return links


async def _git(git_dir: str, *argv: str, secrets: Sequence[str] = ()) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec("git", f"--git-dir={git_dir}", *argv, env=git_env(),
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 600)
    text = (out + err).decode(errors="replace")
    for s in secrets:
        if s:
            text = text.replace(s, "***")
    return proc.returncode, re.sub(r"x-access-token:[^@]+@", "x-access-token:***@", text)


async def _has_parent(git_dir: str, sha: str) -> bool:
    rc, _ = await _git(git_dir, "rev-parse", "--verify", "-q", f"{sha}~1^{{commit}}")
    return rc == 0


async def _put_back(git_dir: str, branch: str, tip: str, pick: str | None) -> None:
    """The agent's pick ``pick`` did not reach GitHub: the working repository's branch goes back
    to ``tip`` (compare-and-swap on ``pick``), so that nothing after this — the sync going on with
    the chain's next picks — takes an unpushed pick for a published one. Nothing when ``pick`` is None."""
    if pick:
        await _git(git_dir, "update-ref", f"refs/heads/{branch}", tip, pick)


async def resolve_chain_conflict(gh: Any, full_name: str, *, git_dir: str | Path, branch: str, base: str,
                                 upstream_sha: str, client: AgentClient | None, remote_url: str,
                                 secrets: Sequence[str] = (), title: str = "", body: str = "",
                                 labels: Sequence[str] = (), allowed_mentions: tuple[str, ...] = (),
                                 on_pushed: Callable[[str], None] = lambda commit: None,
                                 before_push: Callable[[str], None] = lambda commit: None) -> ChainResolution:
    """Ask the conflict agent to resolve the pick of ``upstream_sha`` that stopped the chain
    ``branch`` (``forksync/chain-…``) in the working repository ``git_dir`` (which holds the
    fork's branches and upstream's objects, as :class:`bot.sync.service.SyncService` keeps it).

    * ``committed`` (every rail passed): the commit (``Agent-Resolved:`` trailer) is pushed to
      ``remote_url`` fast-forward only; the chain PR into ``base`` is opened as a draft (``title``,
      ``body`` + the report) or, when open already, its body's report section is refreshed;
    * ``rejected`` / ``skipped``: nothing pushed; the reason is commented on the open chain PR
      (once per upstream commit and chain tip);
    * ``out of time`` (``client``'s time limit, ``within_s``, stopped the call): nothing pushed and
      nothing commented — the caller says the pick waits for the agent;
    * agents not configured (``client`` None, no key, disabled): ``status="off"``, no call at all.

    ``before_push(commit)`` is called right before the push of the agent's commit: the caller
    writes down the tip it is about to push (:func:`bot.sync.store.begin_push`), so that a process
    killed between the push and its record still leaves the commit known as forksync's.
    ``on_pushed(commit)`` is called as soon as the push of the agent's commit succeeded, before
    any GitHub call about the PR: the caller records the pushed tip as forksync's even when what
    follows fails or is cancelled. ``secrets`` (e.g. the installation token in ``remote_url``)
    are scrubbed from error texts.
    Raises ``RuntimeError`` when the push is refused (the branch moved: re-plan; the working
    repository's branch is put back at the tip it had), ``ValueError``
    when ``branch`` is not a ``forksync/`` branch or does not exist in ``git_dir``.
    """
    git_dir = str(git_dir)
    if not agents_configured(client):
        return ChainResolution("off", upstream_sha, branch, note=(client.off_reason if client else "agents are off"))
    if not branch.startswith("forksync/"):
        raise ValueError(f"{branch!r} is not a forksync/… chain branch; agents only work on proposal branches")
    rc, tip = await _git(git_dir, "rev-parse", "--verify", "-q", f"refs/heads/{branch}^{{commit}}")
    if rc != 0:
        raise ValueError(f"{branch} does not exist in {git_dir}; apply the chain first (bot.git.apply.apply_unit)")
    tip = tip.strip()
    # a chain stopped at a conflict carries the pick as forksync's conflict commit: the agent's
    # pick replaces it (its parent is the clean prefix), never a person's commit
    onto, replaces, decided = tip, None, ()
    stop = await asyncio.to_thread(find_stop, git_dir, tip + "~1", tip) if await _has_parent(git_dir, tip) else None
    if stop is not None and stop.conflict_commit == tip and stop.upstream_sha == upstream_sha:
        onto, replaces = stop.parent, tip
    elif await _has_parent(git_dir, tip + "~1"):
        # forksync's rules decided some files in a commit on the conflict commit: the agent is
        # asked only about the rest, and its pick (with the rules' files) replaces both
        stop = await asyncio.to_thread(find_stop, git_dir, tip + "~2", tip)
        by_rules = (await asyncio.to_thread(rules_resolution, git_dir, stop)
                    if stop is not None and stop.upstream_sha == upstream_sha else None)
        if by_rules is not None:
            onto, replaces, decided = stop.parent, tip, by_rules
    if replaces is None:
        # the pick's conflict commit lower on the branch, with a person's commit(s) on it: the
        # person is resolving it; an agent's pick on top would apply the upstream commit again
        # over their unfinished resolution
        try:
            below = await asyncio.to_thread(find_stop, git_dir, f"refs/heads/{base}", tip)
        except ValueError:          # the base branch is not in the working repository
            below = None
        if below is not None and below.upstream_sha == upstream_sha:
            return ChainResolution("skipped", upstream_sha, branch, note=(
                f"a person's commit(s) on the conflict commit {below.conflict_commit[:12]} of upstream "
                f"{upstream_sha[:12]}: the resolution is theirs, the agent is not asked"))
    case = await asyncio.to_thread(conflict_case, git_dir, onto, upstream_sha, decided)
    if case is None:
        return ChainResolution("clean", upstream_sha, branch, note=f"upstream {upstream_sha[:12]} applies cleanly on {tip[:12]}")
    out = await resolve_pick(client, case, git_dir, branch, branch_old=tip, replaces=replaces,
                             allowed_mentions=allowed_mentions)
    try:
        pr = await find_open_pr(gh, full_name, branch, base)
    except Exception:
        await _put_back(git_dir, branch, tip, out.commit if out.status == "committed" else None)
        raise
    rv = split_repo(full_name)
    if out.status != "committed" and client.out_of_time:
        # the call was stopped at the client's time limit (the sync's agent time): no answer to
        # tell of, and the pick is asked about again later; what happens meanwhile is the caller's
        return ChainResolution("out of time", upstream_sha, branch, pr=pr["number"] if pr else 0,
                               draft=bool(pr and pr.get("draft")), outcome=out, note=client.out_of_time)
    if out.status != "committed":
        if pr is not None:
            await comment_once(gh, full_name, pr["number"], f"agent-conflict:{upstream_sha}:{tip}",
                                render("github/rejected_comment.md.j2", upstream_sha=upstream_sha, branch=branch,
                                       status=out.status, rail=out.rail or "", report=out.body.rstrip("\n")))
        return ChainResolution(out.status, upstream_sha, branch, pr=pr["number"] if pr else 0,
                               draft=bool(pr and pr.get("draft")), outcome=out,
                               note=out.detail or out.reason)
    # committed: fast-forward push (never force), then the draft PR with the report
    lease = [f"--force-with-lease=refs/heads/{branch}:{replaces}"] if replaces else []
    keep = [f"{keep_ref(branch.removeprefix('forksync/'), replaces)}"] if replaces else []
    try:
        if replaces:
            await _git(git_dir, "update-ref", keep[0], replaces)
        before_push(out.commit or "")
        rc, err = await _git(git_dir, "push", "-q", *lease, remote_url, f"refs/heads/{branch}:refs/heads/{branch}",
                             *[f"{k}:{k}" for k in keep], secrets=secrets)
        if rc != 0:
            raise RuntimeError(f"push of the agent-resolved {branch} to {full_name} was refused "
                               f"(someone pushed meanwhile? re-plan the chain): {err.strip()[:300]}")
    except Exception:
        await _put_back(git_dir, branch, tip, out.commit)
        raise
    on_pushed(out.commit or "")
    if pr is None:
        # forksync's text as its own section (prs.placed), as a PR the sync opens has it, so that
        # the sync's next refresh rewrites only that section and keeps what a person wrote
        title = fit_title(title or f"forksync: {branch}")
        pr = await create_pull(gh, full_name, {"title": title, "head": branch, "base": base,
                                               "body": with_report(placed("", body, title_digest(title), ""), out.body),
                                               "draft": True, "maintainer_can_modify": True})
        if labels:
            await gh.post("/repos/{owner}/{repo}/issues/{number}/labels", {**rv, "number": pr["number"]},
                          data={"labels": list(labels)})
    else:
        # the older reports that leave the body are in comments before the body drops them
        links = await _post_moved(gh, full_name, pr["number"], pr.get("body") or "", out.body)
        new_body = with_report(pr.get("body") or "", out.body, links)
        if new_body != (pr.get("body") or ""):
            pr = await gh.patch("/repos/{owner}/{repo}/pulls/{number}", {**rv, "number": pr["number"]},
                                data={"body": new_body})
        if not pr.get("draft"):
            await comment_once(gh, full_name, pr["number"], f"agent-not-draft:{out.commit}",
                                render("github/not_draft_comment.md.j2", commit=out.commit or ""))
    return ChainResolution("committed", upstream_sha, branch, pr=pr["number"], draft=bool(pr.get("draft")),
                           pushed=True, commit=out.commit or "", outcome=out)


async def draft_verdict(gh: Any, full_name: str, number: int, l1_conclusion_on_head: str | None) -> Verdict:
    """After an L1 result on PR ``number``: may it leave draft (:func:`bot.agents.policy.may_leave_draft`
    over the PR's commits as GitHub lists them)? Comments the verdict once per head when the PR
    carries agent-resolved commits. Never marks the PR ready and never merges: a person does."""
    rv = {**split_repo(full_name), "number": number}
    pr = await gh.getitem("/repos/{owner}/{repo}/pulls/{number}", rv)
    head = pr["head"]["sha"]
    commits = [(c["sha"], (c.get("commit") or {}).get("message") or "")
               async for c in gh.getiter("/repos/{owner}/{repo}/pulls/{number}/commits", rv)]
    verdict = may_leave_draft(head, commits, l1_conclusion_on_head)
    if verdict.reason != "no agent-resolved commits":
        await comment_once(gh, full_name, number, f"agent-draft:{head}:{l1_conclusion_on_head or 'none'}",
                            render("github/draft_verdict.md.j2", ok=verdict.ok, head=head, reason=verdict.reason))
    return verdict


async def post_test_summary(gh: Any, full_name: str, number: int, result: Any, client: AgentClient | None,
                            title: str = "") -> str:
    """Comment the summary of a runner result (``gpu_runner.result.RunResult`` or its JSON) on
    sync PR ``number``: counts and failing tests computed by forksync, a few sentences of prose by
    the summary agent when configured (:func:`bot.agents.summary.summarize_results`). One comment
    per (suite, platform, commit): a redelivery does not post twice. Returns the comment's body."""
    get = (lambda k: result.get(k, "")) if isinstance(result, dict) else (lambda k: getattr(result, k, ""))
    key = f"test-summary:{get('suite')}:{get('platform')}:{get('commit')}"
    mark = marker(key)
    async for c in gh.getiter("/repos/{owner}/{repo}/issues/{number}/comments", {**split_repo(full_name), "number": number}):
        if mark in (c.get("body") or ""):                 # posted already: no second agent call
            return (c.get("body") or "").replace(mark + "\n", "", 1)
    out = await summarize_results(client if agents_configured(client) else None, result, title)
    await comment_once(gh, full_name, number, key, out.body)
    return out.body


# ---------------------------------------------------------------------- the sync service's hook
def agent_would_run(cfg) -> bool:
    """Whether :func:`on_chain_conflict` would ask the agent under ``cfg`` (conflict resolution on,
    agents enabled, an API key in the environment), without building a client."""
    return bool(cfg.agents and cfg.agents.enabled and cfg.agents.conflict_resolution and api_key_from_env())


async def on_chain_conflict(ctx, full_name: str, *, git_dir: str | Path, cfg, branch: str, upstream_sha: str,
                            remote_url: str, secrets: Sequence[str] = (), client: AgentClient | None = None,
                            title: str = "", body: str = "", labels: Sequence[str] = (),
                            now: Callable[[], float] | None = None) -> str:
    """For :meth:`bot.sync.service.SyncService.publish` when a chain stopped at a conflicting pick
    (``ApplyResult.conflict``): run :func:`resolve_chain_conflict` when agents are configured
    (``cfg.agents`` and a key in the environment; otherwise nothing at all happens and ``""`` is
    returned), keep ``sync_branches.pushed_tip`` in step with an agent commit forksync pushed (so
    it is not mistaken for a person's; recorded right after the push, before the PR is touched),
    and return a one-line note. ``title``/``body``/``labels`` are used when the chain has no PR
    yet (its first pick conflicted). The push is written down before it is made
    (:func:`bot.sync.store.begin_push`, at ``now()``, epoch s; the wall clock when None) and
    ended once the row records it. Never raises: a failure
    (push refused, API trouble) is the note, and the conflict stays for a person."""
    own = client is None
    client = client or _Client.from_env(cfg.agents, ctx.store)

    def pushing(commit: str) -> None:
        # written down before the push, as the service's own pushes are: a worker killed between
        # the push and the row below leaves it, and the next sync still knows the agent's pick
        # on GitHub for forksync's own (bot.sync.service: ``resumed``), not a person's
        sync_store.begin_push(ctx.store, full_name, branch, commit, time.time() if now is None else now())

    def pushed(commit: str) -> None:
        # the agent's pick is on GitHub: forksync's own from now on, whatever the PR calls after
        # it answer (a failure there must not leave it looking like a person's commit)
        row = sync_store.branch_row(ctx.store, full_name, branch)
        if row:
            sync_store.save_branch(ctx.store, **{**row, "pushed_tip": commit})
            sync_store.end_push(ctx.store, full_name, branch)
        # no row yet (no sync recorded the chain): the written-down push stays for the sync that
        # records the chain to take the pick for forksync's

    try:
        if not agents_configured(client) or not cfg.agents.conflict_resolution:
            return ""
        base = cfg.fork.ref.removeprefix("refs/heads/")
        res = await resolve_chain_conflict(ctx.gh, full_name, git_dir=git_dir, branch=branch, base=base,
                                           upstream_sha=upstream_sha, client=client, remote_url=remote_url,
                                           secrets=secrets, title=title, body=body, labels=labels,
                                           on_pushed=pushed, before_push=pushing)
    except Exception as e:  # noqa: BLE001 - agent trouble never breaks the sync; the conflict stays for a person
        msg = str(e)
        for s in secrets:
            msg = msg.replace(s, "***") if s else msg
        return f"agent resolution of {upstream_sha[:12]} on {branch} failed: {type(e).__name__}: {msg[:200]}"
    finally:
        if own:
            await client.aclose()
    return (f"agent resolution of {upstream_sha[:12]} on {branch}: {res.status}"
            + (f" ({res.commit[:12]}, PR #{res.pr}{' draft' if res.draft else ''})" if res.pushed else
               (f" ({res.note[:120]})" if res.note else "")))
