"""``gate:`` section of forksync.yml: what the merge gate requires besides forksync's own suites.

Example::

    gate:
      required_checks: [ci/build, internal-ci]   # check runs or commit statuses that must be green on the head
      unreported_after_s: 10800                  # a required check not reported on a head this long never will be

The fork's practice is that each commit lands only when it passes both the open-source CI and the
fork's internal CI. The gate therefore also requires, on the PR head, every check named by the
base branch's protection (``required_status_checks``), by the ``required_status_checks`` rules of
the rulesets on it, and every name listed here; a check run or a commit status of that name
counts. Missing or still running → blocked (``check-pending``), anything but
success/neutral/skipped → blocked (``check-failed``).

A required check that never reports on a head (the workflow behind it has a ``paths:`` filter the
PR's files do not match, is disabled, or branch protection names a check that was renamed) would
hold the gate for ever in silence: the wait shows with its age (since forksync first saw the head,
at its push), and past ``unreported_after_s`` (default 3 h) the gate says ``check-never-reported``,
naming the likely causes and what to do, and the sync unit is marked as waiting on it (status
issue, dashboard, ``/healthz``). It never merges without the check.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator


class GateSettings(BaseModel):
    """The merge gate's settings (docs/validation.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    required_checks: list[str] = Field(default_factory=list)   # check runs or commit statuses required green, besides branch protection's
    unreported_after_s: int = Field(default=3 * 3600, gt=0)   # seconds a required check may stay unreported on a head before `check-never-reported`

    @field_validator("required_checks")
    @classmethod
    def _names(cls, v: list[str]) -> list[str]:
        for n in v:
            if not n.strip():
                raise ValueError("a required check name is empty")
            if n.startswith("forksync/"):
                raise ValueError(f"{n!r} is forksync's own check; its suites are required through `suites:`, "
                                 "and the gate cannot require itself")
        if len(set(v)) != len(v):
            raise ValueError("a required check is listed twice")
        return v
