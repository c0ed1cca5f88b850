"""``triage:`` section of forksync.yml (owned by the triage work; see docs/triage.md).

Example::

    triage:
      rules: .github/triage-rules.yml        # or an inline list of rules (below)
      labels: [nightly-failure]
      open_after_nights: 2                   # a real signature opens an issue after failing on
      open_window_days: 3                    #   this many nightlies within this many days …
      open_crashes_at_once: true             # … or at once when it is a crash
      close_after_green_nights: 3            # nightlies in which the affected tests ran and passed
      max_new_issues_per_run: 10             # at most this many new issues a run; the rest wait in one flood issue

A rule maps a pattern over a failure's signature to a tracked root cause; its ``id`` is the
identity of the issue, so improving the normaliser never orphans an issue::

      rules:
        - id: smem-overflow
          title: "Kernels exceed the shared-memory limit"
          pattern: "out of resource: shared memory"
          type: OutOfResources                # optional: the exception type must contain this
          stage: compile                      # optional
          labels: [area:pipeliner]            # optional, added to the issue's labels
"""
from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

CLASSES = ("infrastructure", "flaky", "real")


#: a label name: GitHub refuses one over 50 characters ("name is too long (maximum is 50 characters)")
Label = Annotated[str, Field(min_length=1, max_length=50)]


class TriageRule(BaseModel):
    """One row of the rules table: ``pattern`` is a regular expression searched in the
    signature text ``"<type>: <masked primary line>"`` (see :mod:`bot.triage.signature`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,79}$")
    title: str = ""
    pattern: str
    type: str | None = None
    stage: str | None = None
    cls: str | None = Field(None, alias="class")
    labels: tuple[Label, ...] = ()

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as e:
            raise ValueError(f"not a valid regular expression: {e}") from None
        return v

    @field_validator("cls")
    @classmethod
    def _known_class(cls, v: str | None) -> str | None:
        if v is not None and v not in CLASSES:
            raise ValueError(f"class must be one of {', '.join(CLASSES)}, not {v!r}")
        return v


class TriageSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    #: inline rules, or a path (relative to forksync.yml's folder) of a YAML file holding a list
    #: of rules (or a mapping with a ``rules:`` list).
    rules: list[TriageRule] | str = Field(default_factory=list)
    labels: tuple[Label, ...] = ("nightly-failure",)
    crash_label: Label = "crash"
    flood_label: Label = "nightly-flood"
    open_after_nights: int = Field(2, ge=1)
    open_window_days: float = Field(3.0, gt=0)
    open_crashes_at_once: bool = True
    close_after_green_nights: int = Field(3, ge=1)
    max_new_issues_per_run: int = Field(10, ge=1)
    mention_authors: bool = True

    @field_validator("rules")
    @classmethod
    def _unique_ids(cls, v):
        if isinstance(v, list):
            seen: set[str] = set()
            for r in v:
                if r.id in seen:
                    raise ValueError(f"rule id {r.id!r} is used twice")
                seen.add(r.id)
        return v
