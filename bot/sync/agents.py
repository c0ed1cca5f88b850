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
  ``<!-- forksync:agent-report:start/end -->``, replaced on re-runs, the rest of the body kept);
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from bot.agents.client import AgentClient
from bot.agents.client import AgentClient as _Client
from bot.agents.conflict import ConflictOutcome, resolve_pick
from bot.agents.conflict_git import conflict_case
from bot.agents.policy import Verdict, may_leave_draft
from bot.agents.render import render
from bot.agents.summary import summarize_results
from bot.git.repo import git_env
from bot.git.resolution import find_stop, keep_ref
from bot.github.common import comment_once, marker, split_repo
from bot.github.limits import fit_title
from bot.sync import store as sync_store
from bot.sync.prs import create_pull, find_open_pr, fit_own, placed, title_digest
from bot.sync.rules import rules_resolution

__all__ = ["ChainResolution", "resolve_chain_conflict", "draft_verdict", "post_test_summary",
           "agents_configured", "REPORT_SECTION"]


REPORT_SECTION = "agent-report"
_SECTION = re.compile(r"<!-- forksync:agent-report:start -->.*?<!-- forksync:agent-report:end -->\n?", re.S)


@dataclass(frozen=True)
class ChainResolution:
    """What :func:`resolve_chain_conflict` did. ``status``: ``clean`` (the pick no longer
    conflicts), ``off`` (agents not configured: nothing done), or the agent's outcome status
    (``committed`` / ``rejected`` / ``skipped``). ``pushed``: the agent commit reached the
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


def _reports(section: str) -> list[tuple[str | None, str]]:
    """The agent reports inside a section's text, each with its upstream sha (None: no heading)."""
    heads = list(_REPORT_HEAD.finditer(section))
    if not heads:
        return [(None, section.strip("\n"))] if section.strip() else []
    ends = [h.start() for h in heads[1:]] + [len(section)]
    return [(h.group(1), section[h.start():e].strip("\n")) for h, e in zip(heads, ends)]


def with_report(body: str, report: str) -> str:
    """``body`` with ``report`` in its agent-report section (appended when absent): the report
    of the same upstream commit is replaced, those of the chain's other picks are kept, so a chain
    whose agent resolved several picks shows every one of them. A whole over GitHub's body limit
    is fitted by cutting forksync's own section (:func:`bot.sync.prs.fit_own`), never the report."""
    m = _SECTION.search(body or "")
    new_key = (_reports(report) or [(None, "")])[0][0]
    kept = []
    if m:
        inner = m.group(0).split("\n", 1)[1].rsplit("<!-- forksync:agent-report:end -->", 1)[0]
        kept = [text for key, text in _reports(inner) if key is not None and key != new_key]
    section = render("github/pr_section.md.j2", report="\n\n".join([*kept, report.rstrip("\n")]))
    if m:
        return fit_own(_SECTION.sub(lambda _: section, body, count=1))
    return fit_own((body or "").rstrip("\n") + "\n\n" + section)


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
                                 labels: Sequence[str] = (), allowed_mentions: tuple[str, ...] = ()
                                 ) -> ChainResolution:
    """Ask the conflict agent to resolve the pick of ``upstream_sha`` that stopped the chain
    ``branch`` (``forksync/chain-…``) in the working repository ``git_dir`` (which holds the
    fork's branches and upstream's objects, as :class:`bot.sync.service.SyncService` keeps it).

    * ``committed`` (every rail passed): the commit (``Agent-Resolved:`` trailer) is pushed to
      ``remote_url`` fast-forward only; the chain PR into ``base`` is opened as a draft (``title``,
      ``body`` + the report) or, when open already, its body's report section is refreshed;
    * ``rejected`` / ``skipped``: nothing pushed; the reason is commented on the open chain PR
      (once per upstream commit and chain tip);
    * agents not configured (``client`` None, no key, disabled): ``status="off"``, no call at all.

    ``secrets`` (e.g. the installation token in ``remote_url``) are scrubbed from error texts.
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
        rc, err = await _git(git_dir, "push", "-q", *lease, remote_url, f"refs/heads/{branch}:refs/heads/{branch}",
                             *[f"{k}:{k}" for k in keep], secrets=secrets)
        if rc != 0:
            raise RuntimeError(f"push of the agent-resolved {branch} to {full_name} was refused "
                               f"(someone pushed meanwhile? re-plan the chain): {err.strip()[:300]}")
    except Exception:
        await _put_back(git_dir, branch, tip, out.commit)
        raise
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
        new_body = with_report(pr.get("body") or "", out.body)
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
async def on_chain_conflict(ctx, full_name: str, *, git_dir: str | Path, cfg, branch: str, upstream_sha: str,
                            remote_url: str, secrets: Sequence[str] = (), client: AgentClient | None = None,
                            title: str = "", body: str = "", labels: Sequence[str] = ()) -> str:
    """For :meth:`bot.sync.service.SyncService.publish` when a chain stopped at a conflicting pick
    (``ApplyResult.conflict``): run :func:`resolve_chain_conflict` when agents are configured
    (``cfg.agents`` and a key in the environment; otherwise nothing at all happens and ``""`` is
    returned), keep ``sync_branches.pushed_tip`` in step with an agent commit forksync pushed (so
    it is not mistaken for a person's), and return a one-line note. ``title``/``body``/``labels``
    are used when the chain has no PR yet (its first pick conflicted). Never raises: a failure
    (push refused, API trouble) is the note, and the conflict stays for a person."""
    own = client is None
    client = client or _Client.from_env(cfg.agents, ctx.store)
    try:
        if not agents_configured(client) or not cfg.agents.conflict_resolution:
            return ""
        base = cfg.fork.ref.removeprefix("refs/heads/")
        res = await resolve_chain_conflict(ctx.gh, full_name, git_dir=git_dir, branch=branch, base=base,
                                           upstream_sha=upstream_sha, client=client, remote_url=remote_url,
                                           secrets=secrets, title=title, body=body, labels=labels)
    except Exception as e:  # noqa: BLE001 - agent trouble never breaks the sync; the conflict stays for a person
        msg = str(e)
        for s in secrets:
            msg = msg.replace(s, "***") if s else msg
        return f"agent resolution of {upstream_sha[:12]} on {branch} failed: {type(e).__name__}: {msg[:200]}"
    finally:
        if own:
            await client.aclose()
    if res.pushed:
        try:
            row = sync_store.branch_row(ctx.store, full_name, branch)
            if row:
                sync_store.save_branch(ctx.store, **{**row, "pushed_tip": res.commit})
        except ImportError:                     # the handlers are not part of this process
            pass
    return (f"agent resolution of {upstream_sha[:12]} on {branch}: {res.status}"
            + (f" ({res.commit[:12]}, PR #{res.pr}{' draft' if res.draft else ''})" if res.pushed else
               (f" ({res.note[:120]})" if res.note else "")))
