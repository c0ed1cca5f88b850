"""``schedules:`` section of forksync.yml: when the worker's scheduled validation runs.

Example::

    schedules:
      nightly: {cron: "0 3 * * *"}     # the nightly L1 run at 03:00 UTC (default: {interval_s: 86400})
      nightly_deadline_s: 21600        # results still missing this long after dispatch raise the alarm
      l2: {interval_s: 86400}          # L2 benchmarks on the trunk tip at most this often

A schedule is either ``interval_s`` (seconds since the last run) or ``cron`` (a five-field cron
expression, croniter's syntax, in UTC), not both. The defaults are the intervals forksync always
used. Whether a schedule is due is a pure function of the last run and now (:meth:`Schedule.due`),
so tests drive it with a clock of their own.
"""
from __future__ import annotations

from datetime import datetime, timezone

from croniter import croniter
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Schedule(BaseModel):
    """``interval_s`` (seconds; 0: every tick) or ``cron`` (UTC); exactly one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    interval_s: int | None = Field(None, ge=0, description="seconds since the last run (0: every tick of the worker)")
    cron: str | None = Field(None, description='five-field cron expression in UTC, e.g. "0 3 * * *"; instead of interval_s')

    @field_validator("cron")
    @classmethod
    def _valid_cron(cls, v: str | None) -> str | None:
        if v is not None and (len(v.split()) != 5 or not croniter.is_valid(v)):
            raise ValueError(f"{v!r} is not a cron expression of five fields (minute hour day-of-month month "
                             "day-of-week), e.g. \"0 3 * * *\" for 03:00 UTC every day")
        return v

    @model_validator(mode="after")
    def _one_of(self) -> "Schedule":
        if (self.interval_s is None) == (self.cron is None):
            raise ValueError("give either interval_s (seconds) or cron (an expression in UTC), not both or neither")
        return self

    def next_run(self, last: float) -> float:
        """The first time (epoch seconds) after ``last`` that this schedule runs."""
        if self.cron is None:
            return last + self.interval_s
        return croniter(self.cron, datetime.fromtimestamp(last, timezone.utc)).get_next(float)

    def slot_near(self, at: float) -> float | None:
        """The scheduled time (epoch s) a run started at ``at`` stands for: the cron time nearest
        to it, the earlier one on a tie — a catch-up at 02:58 after a down worker is the 03:00
        run, a late one at 03:04 still the 03:00 one. None for an interval, which has no times."""
        if self.cron is None:
            return None
        after = self.next_run(at - 1)           # cron times fall on whole minutes: at itself counts
        if after <= at:
            return after
        before = croniter(self.cron, datetime.fromtimestamp(at, timezone.utc)).get_prev(float)
        return before if at - before <= after - at else after

    def due(self, last: float | None, now: float) -> bool:
        """Due when it never ran, or its next run after ``last`` is at or before ``now`` (epoch s)."""
        return last is None or self.next_run(last) <= now


def every(seconds: int) -> Schedule:
    return Schedule(interval_s=seconds)


def as_schedule(s: int | float | Schedule) -> Schedule:
    """A :class:`Schedule` as is; a number of seconds as an interval."""
    return s if isinstance(s, Schedule) else every(int(s))


class ScheduleSettings(BaseModel):
    """The worker's scheduled validation (bot/app/schedules.py). Times are seconds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    nightly: Schedule = Field(every(86_400), description="when the nightly L1 run starts on the default branch's tip "
                                                       "(default: interval_s 86400)")
    nightly_deadline_s: int = Field(6 * 3600, ge=60, description="a nightly whose results are not all in this long "
                                                                 "after dispatch raises the alarm issue")
    l2: Schedule = Field(every(86_400), description="when L2 benchmarks run on the trunk tip, one already "
                                                  "measured skipped (default: interval_s 86400)")
