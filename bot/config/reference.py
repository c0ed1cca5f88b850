"""The configuration reference (docs/config-reference.md), generated from the pydantic models so
it cannot drift from what ``load_config`` accepts: ``python -m bot.config.reference > docs/config-reference.md``
(a test checks the committed file is current)."""
from __future__ import annotations

import json
import typing
from enum import Enum

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from bot.config.forksync import ForksyncConfig


def _type_name(tp) -> str:
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return " | ".join(json.dumps(a) for a in typing.get_args(tp))
    if origin in (list, tuple, set, frozenset):
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        return f"list[{', '.join(_type_name(a) for a in args)}]"
    if origin is dict:
        k, v = typing.get_args(tp)
        return f"map[{_type_name(k)}, {_type_name(v)}]"
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return " | ".join(_type_name(a) for a in typing.get_args(tp))
    if isinstance(tp, type) and issubclass(tp, Enum):
        return " | ".join(json.dumps(m.value) for m in tp)
    if tp is type(None):
        return "null"
    return getattr(tp, "__name__", str(tp))


def _default(field) -> str:
    if field.default is not PydanticUndefined:
        d = field.default
    elif field.default_factory is not None:
        try:
            d = field.default_factory()
        except TypeError:
            return "(computed)"
    else:
        return "**required**"
    if isinstance(d, BaseModel):
        return "(section)"
    if isinstance(d, Enum):
        d = d.value
    text = json.dumps(d, default=str)
    return f"`{text}`" if len(text) <= 60 else f"`{text[:57]}…`"


def _models_in(tp) -> list[type[BaseModel]]:
    out = []
    for a in (typing.get_args(tp) or (tp,)):
        if isinstance(a, type) and issubclass(a, BaseModel):
            out.append(a)
        elif typing.get_args(a):
            out.extend(_models_in(a))
    return out


def _comments(model: type[BaseModel]) -> dict[str, str]:
    """Trailing ``# comments`` on field lines of the model's source (our config models document
    fields that way)."""
    import inspect
    import io
    import re
    import tokenize

    try:
        src = inspect.getsource(model)
    except (OSError, TypeError):
        return {}
    comment_at = {tok.start[0]: tok.string.lstrip("#").strip()
                  for tok in tokenize.generate_tokens(io.StringIO(src).readline) if tok.type == tokenize.COMMENT}
    out: dict[str, str] = {}
    for row, line in enumerate(src.splitlines(), start=1):
        m = re.match(r"^\s{4}(\w+)\s*:", line)
        if m and row in comment_at:
            out[m.group(1)] = comment_at[row]
    return out


#: Notes for fields whose model carries none (kept beside the generator so the table is complete).
NOTES = {
    "upstream": "the repository forksync ingests from",
    "upstream.url": "remote URL or local path (relative to the config file); `--upstream` overrides (its relative path: to the current directory)",
    "upstream.ref": "the upstream tip: branch, tag or any commit-ish (sha); `--upstream-ref` overrides",
    "fork": "the downstream fork",
    "fork.url": "remote URL or local path (relative to the config file); `--fork` overrides (its relative path: to the current directory)",
    "fork.ref": "the fork branch (or sha) whose history is the ledger's evidence and that sync PRs go into; "
                "left out, the App takes the repository's default branch on GitHub (the CLI: `main`); "
                "`--fork-ref` overrides",
    "provenance": "evidence sources of the ledger (docs/core.md: rules and precedence)",
    "provenance.trailers": "extra trailer rules, e.g. `Reactor Cherry-pick Revision: <sha>`",
    "provenance.trailers[].name": "label shown as the evidence rule (`trailer:<name>`)",
    "provenance.trailers[].pattern": "regex with a named group `(?P<sha>…)` (≥ 7 hex digits)",
    "provenance.trailers[].meaning": "picked, reverted, deferred, skipped or wont-port",
    "provenance.patch_id": "match picks without provenance by `git patch-id --stable`",
    "provenance.ancestry": "upstream commits reachable from the fork head are PICKED (merge-based forks)",
    "provenance.reverts": "fork reverts/back-outs of a pick make it REVERTED (revert of revert: PICKED)",
    "provenance.notes_ref": "git notes ref holding decisions that land no commit",
    "provenance.pick_markers": "a subject citing PRs counts as a pick claim only with one of these",
    "provenance.own_pr_patterns": "regexes whose group 1 is the fork's own PR number (never a citation)",
    "isolated_picks": "which picks are urgent/isolated and do not move the frontier",
    "isolated_picks.message_patterns": "regexes over fork commit messages marking isolated picks",
    "isolated_picks.max_gap": "fallback: an island of picks this many upstream commits past the rest…",
    "isolated_picks.min_run": "…holding fewer than this many commits is isolated",
    "areas": "named parts of the code base, shared by risk partition, labels, owners and the gate",
    "areas[].name": "letters, digits, `_ . -`; used in labels (`area:<name>`) and `/forksync signoff`",
    "bundle_size_cap": "most upstream commits in one low-risk bundle PR",
    "cache_dir": "mirrors, commit-analysis cache and scratch repos (relative to the config file)",
    "rename_detection": "rename detection in the pick predictor (off is faster)",
    "rename_limit": "rename candidates plan and apply examine (never the user's merge.renameLimit); past it, "
                    "inexact rename detection is skipped and said so",
    "github": "the GitHub App's behaviour (docs/github.md)",
    "github.poll_interval_s": "seconds between polls of upstream's branch (conditional requests) for each tracked fork, "
                              "the App installed upstream or not",
    "github.stale_after_s": "upstream data older than this is shown as stale",
    "github.alarm_after_s": "past this age an alarm is raised",
    "github.metrics_keep_days": "days of metrics history (a snapshot per sync and per poll) the dashboard keeps",
    "github.merge_method": "how sync PRs land; squash is refused (one fork commit per upstream commit)",
    "github.status_issue_title": "title of the status (dashboard) issue",
    "github.labels": "label names on sync PRs",
    "github.branch_prefix": "prefix of sync branches; only `forksync/` is accepted",
    "github.config_path": "where the fork keeps this file",
    "github.command_prefix": "only `/forksync` is accepted: comment commands are always `/forksync <verb>`",
    "github.max_open_sync_prs": "most sync PRs open at once; further planned units wait, oldest first, listed on the status issue",
    "github.person_paths": "path globs whose commits forksync never pushes itself: such a unit is blocked for a person",
    "suites": "validation suites (docs/validation.md); the gate trusts the default branch's copy only",
    "suites[].level": "L1 per PR, L2 periodic on trunk, L3 on demand",
    "suites[].build": "optional build command run before the suite (e.g. building the compiler)",
    "suites[].command": "the suite's command, run in an isolated worktree of the commit",
    "suites[].report": "where the suite writes its report",
    "suites[].report.format": "junit, lit or benchmark-json",
    "suites[].report.path": "report path in the worktree; `-` = the command's stdout",
    "suites[].expected_tests": ("exact count of tests that ran (passed, failed, error; skipped and xfail do not count); "
                                "one number or per platform `{h200: 30, cpu: 28}`"),
    "suites[].min_tests": "floor on the count of tests that ran",
    "suites[].timeout_s": "build + command time limit, seconds",
    "suites[].platforms": "runner labels (cpu, h100, h200, b200, mi210, mi300, mi350)",
    "suites[].env": "environment for build and command",
    "suites[].infra_retries": "retries for infrastructure errors only",
    "suites[].workers": "pytest-xdist processes on one machine, one GPU per worker where there are several",
    "suites[].required": "the gate requires it green",
    "suites[].areas": "areas whose owners this suite concerns",
    "suites[].shards": "runners the suite's tests are split over (by test id, 1-64); the shards merge into one verdict",
    "suites[].allow_newly_skipped": "accept tests that ran on the base's result and are skipped or xfail on the head",
    "gate": "what the merge gate requires besides the suites (docs/validation.md)",
    "provenance.pr_citation_pattern": "regex whose group 1 is an upstream PR number cited in a fork message",
    "github.labels.bundle": "label of bundle PRs",
    "github.labels.chain": "label of chain PRs",
    "github.labels.pick": "label of urgent isolated pick PRs",
    "github.labels.hold": "label shown while on hold",
    "github.labels.area_prefix": "one label per touched area: prefix + area name (GitHub allows at most 50 characters in all)",
    "suites[].name": "unique; check runs are named `forksync/<level>/<name>`",
    "triage": "nightly triage (docs/triage.md)",
    "triage.rules[].id": "the root cause's identity (the issue's marker): keep it stable",
    "triage.rules[].title": "issue title",
    "triage.rules[].pattern": "regex over the masked primary error line",
    "triage.rules[].type": "exception type to match (optional)",
    "triage.rules[].stage": "stage to match (optional)",
    "triage.rules[].cls": "force the class: infrastructure, flaky or real",
    "triage.rules[].labels": "extra labels on this cause's issue",
    "triage.crash_label": "label for crash issues",
    "triage.flood_label": "label for the flood summary issue",
    "agents.backoff_base_s": "first retry wait; doubles per try",
    "agents.backoff_cap_s": "longest wait, also for retry-after",
    "agents.max_output_tokens": "max_tokens per request",
    "triage.rules": "root-cause rules (list, or a path to a YAML file holding the list)",
    "triage.labels": "labels on triage issues",
    "triage.open_after_nights": "a real signature opens an issue after failing on this many nightlies…",
    "triage.open_window_days": "…within this many days",
    "triage.open_crashes_at_once": "crashes open an issue on the first occurrence",
    "triage.close_after_green_nights": "close after this many consecutive nightlies where the tests ran and passed",
    "triage.max_new_issues_per_run": "at most this many new issues a run (largest, then newest root causes); the rest wait in one flood issue",
    "triage.mention_authors": "mention the culprit's author in the issue",
    "agents": "LLM agents (docs/agents.md); off without an API key",
    "agents.enabled": "master switch",
    "agents.model": "Anthropic model name",
    "agents.daily_token_budget": "input + output tokens per UTC day; past it agents are skipped",
    "agents.timeout_s": "longest stall, s: the wait for an answer to start or for its next streamed event "
                        "(a whole answer may take timeout_s + max_output_tokens / 128000 h)",
    "agents.max_retries": "our capped retries (the SDK's own are off)",
    "agents.excerpt_over_lines": "a conflicted file longer than this goes to the agent as excerpts around its blocks (0: always whole)",
    "agents.excerpt_context_lines": "lines of context around each conflict block in an excerpt",
    "agents.max_links": "most links kept in agent text",
    "agents.allowed_link_hosts": "hosts agent text may link to",
    "agents.max_mentions": "@-mentions are neutralised past this many (0 = all)",
    "agents.max_text_chars": "agent text is cut to this length",
    "agents.conflict_resolution": "propose resolutions for conflicting chain picks",
    "agents.proposed_fix": "propose fixes on triage issues",
    "agents.summaries": "summarise test results on sync PRs",
}


def rows(model: type[BaseModel] = ForksyncConfig, prefix: str = "") -> list[tuple[str, str, str, str]]:
    """``[(dotted path, type, default, description), …]`` for every field, depth first; list items
    appear as ``path[]``."""
    out = []
    notes = _comments(model)
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        desc = field.description or notes.get(name) or NOTES.get(path, "")
        out.append((path, _type_name(field.annotation), _default(field), desc.replace("\n", " ")))
        for sub in _models_in(field.annotation):
            is_list = typing.get_origin(field.annotation) in (list, tuple)
            is_list = is_list or any(typing.get_origin(a) in (list, tuple) for a in typing.get_args(field.annotation))
            out.extend(rows(sub, f"{path}[]." if is_list else f"{path}."))
    return out


def markdown() -> str:
    lines = ["# forksync.yml reference", "",
             "Generated from the pydantic models in `bot/` by `python -m bot.config.reference`; do not edit by hand.",
             "Unknown keys are errors. Section docs: core (`docs/core.md`, `docs/plan.md`), `github` (`docs/github.md`),",
             "`suites` (`docs/validation.md`), `triage` (`docs/triage.md`), `agents` (`docs/agents.md`).", "",
             "## Errors", "",
             "Every problem is reported at once, one line each, as `FILE:LINE:COLUMN: KEY: REASON` (the CLI exits 2;",
             "in GitHub mode the `forksync/config` check run lists them with their lines). A list item with a `name`",
             "is named by it: `areas[autows].divergent`, `suites[kernels].min_tests`; one without, by its index",
             "(`areas[3]`). An unknown key suggests the closest known one; a key given twice is an error (YAML",
             "would silently keep the last one); a YAML syntax error shows the line and a caret:", "",
             "```text",
             "forksync: invalid forksync configuration in forksync.yml:",
             "  forksync.yml:41:5: areas[tlx].divergnt: unknown key `divergnt`; did you mean `divergent`?",
             "```", "",
             "A ref or a local path the repository lacks is found when the command opens the repositories; the",
             "error then names the key at `FILE:LINE:COLUMN` (or the flag that overrode it), what a relative path",
             "was relative to, the `git remote add` / `git fetch` that gets a `remote/branch` ref, the nearest",
             "branch names of a mistyped one, \"ambiguous\" for a sha prefix several objects share, and how to name",
             "a remote of the fork's repository that `upstream.url` names as if it were a folder (exit 2):", "",
             "```text",
             "forksync: ref 'upstream/main' not found in repository upstream (.) (this repository has no remote `upstream` "
             "(its remotes: origin): add it and fetch its branch: `git -C /src/spyre remote add upstream <upstream URL>` "
             "then `git -C /src/spyre fetch upstream main`); upstream.ref at forksync.yml:2:8",
             "forksync: ref 'main-perf' not found in repository fork (rocm) (check the branch or sha, or fetch it: "
             "`git fetch <remote> main-perf`); did you mean `main_perf`?; given by --fork-ref",
             "```", "",
             "## Keys", "",
             "| key | type | default | notes |", "|---|---|---|---|"]
    for path, typ, default, desc in rows():
        lines.append(f"| `{path}` | {typ.replace('|', '&#124;')} | {default.replace('|', '&#124;')} | {desc.replace('|', '&#124;')} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
