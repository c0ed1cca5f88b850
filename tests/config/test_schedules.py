"""``schedules:`` in forksync.yml: intervals (the defaults forksync always used) or cron
expressions in UTC, and whether a schedule is due, as a pure function of the last run and now."""
from datetime import datetime, timezone

import pytest

from bot.app.schedules import nightly_due
from bot.config.forksync import ConfigError, parse_config_text
from bot.config.schedules import Schedule
from bot.l2.service import l2_due


def t(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


def test_defaults_are_the_intervals_of_before():
    s = parse_config_text("").schedules
    assert (s.nightly, s.l2, s.nightly_deadline_s) == (Schedule(interval_s=86_400), Schedule(interval_s=86_400), 21_600)


def test_cron_beside_the_interval_form():
    s = parse_config_text('schedules: {nightly: {cron: "0 3 * * *"}, l2: {interval_s: 43200}, nightly_deadline_s: 7200}').schedules
    assert (s.nightly.cron, s.l2.interval_s, s.nightly_deadline_s) == ("0 3 * * *", 43_200, 7_200)


@pytest.mark.parametrize("text, problem", [
    ('schedules: {nightly: {cron: "0 25 * * *"}}',
     ("schedules.nightly.cron", "'0 25 * * *' is not a cron expression of five fields (minute hour "
                                "day-of-month month day-of-week), e.g. \"0 3 * * *\" for 03:00 UTC every day")),
    ('schedules: {nightly: {cron: "@daily"}}',
     ("schedules.nightly.cron", "'@daily' is not a cron expression of five fields (minute hour "
                                "day-of-month month day-of-week), e.g. \"0 3 * * *\" for 03:00 UTC every day")),
    ('schedules: {l2: {cron: "0 3 * * *", interval_s: 60}}',
     ("schedules.l2", "give either interval_s (seconds) or cron (an expression in UTC), not both or neither")),
    ("schedules: {l2: {}}",
     ("schedules.l2", "give either interval_s (seconds) or cron (an expression in UTC), not both or neither")),
    ("schedules: {nightly: {every: 5}}", ("schedules.nightly.every", "unknown key `every`; known keys here: cron, interval_s")),
])
def test_bad_schedules_are_config_errors(text, problem):
    with pytest.raises(ConfigError) as e:
        parse_config_text(text)
    assert e.value.problems == [problem]


@pytest.mark.parametrize("schedule, last, now, due", [
    (Schedule(cron="0 3 * * *"), None, t("2026-12-02T00:00:00"), True),                       # never ran
    (Schedule(cron="0 3 * * *"), t("2026-12-01T03:00:05"), t("2026-12-02T02:59:59"), False),
    (Schedule(cron="0 3 * * *"), t("2026-12-01T03:00:05"), t("2026-12-02T03:00:00"), True),   # on the minute
    (Schedule(cron="0 3 * * *"), t("2026-12-01T03:00:05"), t("2026-12-03T10:00:00"), True),   # missed runs: one is due
    (Schedule(cron="0 3 * * *"), t("2026-12-02T03:04:00"), t("2026-12-02T23:00:00"), False),  # a late run counts for the day
    (Schedule(cron="30 2 * * 1-5"), t("2026-12-04T02:30:00"), t("2026-12-06T12:00:00"), False),  # Friday → not at the weekend
    (Schedule(cron="30 2 * * 1-5"), t("2026-12-04T02:30:00"), t("2026-12-07T02:30:00"), True),   # Monday
    (Schedule(interval_s=3600), t("2026-12-02T00:00:00"), t("2026-12-02T00:59:59"), False),
    (Schedule(interval_s=3600), t("2026-12-02T00:00:00"), t("2026-12-02T01:00:00"), True),
])
def test_due(schedule, last, now, due):
    assert schedule.due(last, now) is due
    assert nightly_due(last, now, schedule) is due
    assert l2_due(last, False, now, schedule) is due and l2_due(last, True, now, schedule) is False


def test_next_run():
    assert Schedule(cron="0 3 * * *").next_run(t("2026-12-02T03:00:00")) == t("2026-12-03T03:00:00")
    assert Schedule(cron="*/15 * * * *").next_run(t("2026-12-02T03:07:30")) == t("2026-12-02T03:15:00")
    assert Schedule(interval_s=86_400).next_run(100.0) == 86_500.0


@pytest.mark.parametrize("schedule, at, slot", [
    (Schedule(cron="0 3 * * *"), t("2026-12-02T02:58:00"), t("2026-12-02T03:00:00")),    # just before: that run
    (Schedule(cron="0 3 * * *"), t("2026-12-02T03:04:00"), t("2026-12-02T03:00:00")),    # a late run counts for it
    (Schedule(cron="0 3 * * *"), t("2026-12-02T14:00:00"), t("2026-12-02T03:00:00")),    # nearer the last one
    (Schedule(cron="0 3 * * *"), t("2026-12-02T16:00:00"), t("2026-12-03T03:00:00")),    # nearer the next one
    (Schedule(cron="0 3 * * *"), t("2026-12-02T15:00:00"), t("2026-12-02T03:00:00")),    # half-way: the last one
    (Schedule(cron="0 3 * * *"), t("2026-12-02T03:00:00"), t("2026-12-02T03:00:00")),
    (Schedule(interval_s=3600), t("2026-12-02T02:58:00"), None),                         # intervals have no times
])
def test_the_scheduled_time_a_run_stands_for(schedule, at, slot):
    assert schedule.slot_near(at) == slot
