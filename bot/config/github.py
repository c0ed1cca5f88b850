"""``github:`` section of forksync.yml: how the App behaves on GitHub (docs/github.md).

Example::

    github:
      poll_interval_s: 300          # how often this fork's upstream branch is polled, the App installed there or not
      stale_after_s: 86400          # upstream data older than this is flagged stale (status issue, /metrics)
      alarm_after_s: 259200         # … and past this an alarm is raised
      metrics_keep_days: 400        # days the dashboard's metrics history (a snapshot per sync and per poll) is kept
      merge_method: rebase          # rebase | merge — never squash (one fork commit per upstream commit)
      status_issue_title: "forksync status"
      labels: {bundle: "forksync:bundle", chain: "forksync:chain", area_prefix: "area:"}
      branch_prefix: forksync/      # fixed: the only value accepted (so are command_prefix: /forksync
                                    # and config_path: .github/forksync.yml)
      max_open_sync_prs: 20         # further planned units wait (listed on the status issue), oldest opens first
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class GitHubLabels(BaseModel):
    """Label names the bot puts on sync PRs; an area label is ``area_prefix + area name``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bundle: str = Field("forksync:bundle", min_length=1, max_length=50)
    chain: str = Field("forksync:chain", min_length=1, max_length=50)
    pick: str = Field("forksync:pick", min_length=1, max_length=50)
    hold: str = Field("forksync:hold", min_length=1, max_length=50)
    area_prefix: str = Field("area:", max_length=40)


#: keys with one accepted value: (the value, why no other). The ledger, the planner, apply and the
#: CLI all name sync branches ``forksync/<unit>`` (another prefix would make the App's own branches
#: look like a person's); every reply, PR body and issue names its commands ``/forksync …`` (a
#: prefix the parser took and the texts did not would tell people to type commands that do
#: nothing); the App reads the fork's configuration from one place (bot.github.fork_config: another
#: path would only move where triage looks for its rules and which file the status issue tells
#: people to edit)
_FIXED = {
    "branch_prefix": ("forksync/", "sync branches are always forksync/<unit>"),
    "command_prefix": ("/forksync", "comment commands are always `/forksync <verb>`"),
    "config_path": (".github/forksync.yml", "the App reads the fork's configuration there"),
}


class GitHubSettings(BaseModel):
    """How the App behaves on GitHub. Times are seconds.

    ``merge_method``: how sync PRs land. ``squash`` is refused: it would fold many upstream
    commits into one fork commit, losing the one-commit-per-upstream-commit provenance."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    poll_interval_s: int = Field(300, ge=30, le=86_400)
    stale_after_s: int = Field(86_400, ge=60)
    alarm_after_s: int = Field(3 * 86_400, ge=60)
    metrics_keep_days: int = Field(400, ge=1, le=3650)
    merge_method: Literal["rebase", "merge"] = "rebase"
    status_issue_title: str = Field("forksync status", min_length=1, max_length=256)
    labels: GitHubLabels = GitHubLabels()
    branch_prefix: str = Field("forksync/", min_length=1, max_length=100)
    config_path: str = ".github/forksync.yml"
    command_prefix: str = Field("/forksync", min_length=2, max_length=40)
    max_open_sync_prs: int = Field(20, ge=1, le=500)
    # path globs (fnmatch) whose commits forksync never pushes itself: a unit with such a commit
    # is blocked for a person, e.g. [".github/workflows/*"] when the App lacks `workflows`
    person_paths: tuple[str, ...] = ()

    @field_validator("merge_method", mode="before")
    @classmethod
    def _no_squash(cls, v):
        if isinstance(v, str) and v.strip().lower() == "squash":
            raise ValueError("squash is not allowed: sync PRs land by 'rebase' (default) or 'merge' so the fork "
                             "keeps one commit per upstream commit")
        return v

    @field_validator("branch_prefix", "config_path", "command_prefix")
    @classmethod
    def _fixed(cls, v: str, info) -> str:
        want, why = _FIXED[info.field_name]
        if v != want:
            raise ValueError(f"only {want!r} is supported: {why}")
        return v

    @model_validator(mode="after")
    def _alarm_after_stale(self):
        if self.alarm_after_s < self.stale_after_s:
            raise ValueError(f"alarm_after_s ({self.alarm_after_s}) must be ≥ stale_after_s ({self.stale_after_s})")
        return self
