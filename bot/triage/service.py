"""One nightly, end to end (orchestration): records → groups → lifecycle → issues, suspects at
once, bisection when given, and the plain data the proposed-fix agent reads.

Everything that talks to the outside comes in as a parameter: ``gh`` (the fork's GitHub client),
``fork_git_dir`` (a local clone for suspects), ``bisect(good, bad) -> sha | None`` (the bisection
service, e.g. a wrapper of ``bot.git.bisect.bisect_command``). Infrastructure and flaky groups are
never given suspects, bisected or blamed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Sequence

from bot.config.triage import TriageSettings
from bot.git.repo import git
from bot.store import Store
from bot.triage.group import Group, Grouper
from bot.triage.issues import TriageIssues, load_state
from bot.triage.lifecycle import Action, nightly_from_groups
from bot.triage.records import FailureRecord
from bot.triage.rules import RulesTable, suggest_rule
from bot.triage.suspects import FailureContext, Suspect, author_mention, commits_between, confirm, rank_suspects

__all__ = ["NightlyReport", "triage_nightly", "suspect_diffs"]


@dataclass
class NightlyReport:
    """What one nightly did: the groups (all classes), the actions taken, the confirmed culprits
    (group id → suspect) and, per real group with an issue, the agent input
    (``Group.to_agent_input`` with suspect diffs) for ``bot.agents.fix``."""

    groups: list[Group]
    actions: list[Action]
    culprits: dict[str, Suspect] = field(default_factory=dict)
    agent_inputs: dict[str, dict] = field(default_factory=dict)
    issues: dict[str, int] = field(default_factory=dict)


def suspect_diffs(git_dir: str, suspects: Sequence[Suspect], n: int = 3, max_chars: int = 20_000) -> list[dict]:
    """The top ``n`` suspects as ``{"sha", "subject", "diff", "upstream_sha"}`` (the shape of
    ``bot.agents.fix.SuspectDiff``), each diff cut to ``max_chars``."""
    out = []
    for s in list(suspects)[:n]:
        diff = git(git_dir, "show", "--format=", "--patch", s.sha, check=False) or ""
        out.append({"sha": s.sha, "subject": s.subject, "diff": diff[:max_chars], "upstream_sha": s.upstream})
    return out


async def triage_nightly(*, store: Store, gh: Any, owner: str, repo: str, settings: TriageSettings,
                         table: RulesTable, run: str, time: int, commit: str, records: Sequence[FailureRecord],
                         fork_git_dir: str | None = None, areas: Sequence = (),
                         bisect: Callable[[str, str], Awaitable[str | None]] | None = None,
                         logins: dict[str, str] | None = None) -> NightlyReport:
    grouper = Grouper(table)
    groups = grouper.group(records)
    nightly = nightly_from_groups(run, time, commit, groups, records)
    by_id = {g.id: g for g in groups}
    ranked: dict[str, tuple[list[Suspect], str, str]] = {}

    async def suspects_for(t):
        if not fork_git_dir or not t.first_red:
            return (), t.last_green, t.first_red
        g = by_id.get(t.key)
        texts = tuple(g.logs(3)) if g else (t.sample,)
        commits = commits_between(fork_git_dir, t.last_green, t.first_red)
        r = rank_suspects(commits, FailureContext(tuple(sorted(t.tests)), texts), areas=areas)
        ranked[t.key] = (r, t.last_green, t.first_red)
        return r, t.last_green, t.first_red

    taken = [r.id for r in table.rules]
    suggestions = {}
    for g in groups:
        if g.rule is None:
            suggestions[g.id] = s = suggest_rule(g.signature, taken)
            taken.append(s["id"])
    svc = TriageIssues(store, gh, owner, repo, settings, suspects_for=suspects_for,
                       rule_titles={r.id: r.title for r in table.rules if r.title}, suggestions=suggestions,
                       key_of=lambda text, test: grouper.table.group_id(grouper.signature(text, test)))
    actions = await svc.process(nightly)
    report = NightlyReport(groups, actions)
    state = load_state(store, f"{owner}/{repo}")
    for a in actions:
        if a.kind != "open":
            continue
        key = a.keys[0]
        t = state.tracked[key]
        if t.issue:
            report.issues[key] = t.issue
        if t.cls != "real" or key not in ranked:
            continue
        suspects, good, bad = ranked[key]
        g = by_id.get(key)
        if g is not None and fork_git_dir:
            report.agent_inputs[key] = g.to_agent_input(suspect_diffs(fork_git_dir, suspects))
        if bisect is not None and good and bad:
            culprit = await confirm(suspects, good, bad, bisect)
            if culprit is not None:
                report.culprits[key] = culprit
                mention = author_mention(culprit.commit, logins) if culprit.commit and settings.mention_authors else ""
                await svc.write_blame(key, culprit, mention=mention, suspects=suspects, good=good, bad=bad)
    return report
