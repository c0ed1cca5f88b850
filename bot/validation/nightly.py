"""The nightly L1 run on trunk and its silence alarm ("an expected nightly result
that never arrives raises an alarm, because silence is not green"). Pure functions; the
scheduler (dispatch), the issue filing and its closing once the results came are the handlers' job.
"""
from __future__ import annotations

from dataclasses import dataclass

from bot.templating import render, utc_minute


@dataclass(frozen=True)
class MissingResult:
    """A (suite, platform) of a nightly dispatched at ``dispatched_at`` with no result after
    ``waited_s`` seconds."""

    suite: str
    platform: str
    sha: str
    dispatched_at: int
    waited_s: int


def expected_pairs(suites) -> tuple[tuple[str, str], ...]:
    """(suite, platform) pairs a nightly L1 run must report: every required L1 suite (trusted
    ``SuiteConfig`` values) on each of its platforms, whatever areas it is limited to."""
    return tuple((s.name, p) for s in suites if s.level == "L1" and s.required for p in s.platforms)


def missing_nightly(expected, sha: str, dispatched_at: int, received: dict[tuple[str, str], int], now: int,
                    deadline_s: int) -> tuple[MissingResult, ...]:
    """Pairs of ``expected`` without a result received at or after ``dispatched_at``
    (``received``: (suite, platform) → time of the newest result for ``sha``), once ``now`` is
    past ``dispatched_at + deadline_s``. Before the deadline nothing is missing yet."""
    if now < dispatched_at + deadline_s:
        return ()
    return tuple(MissingResult(s, p, sha, dispatched_at, now - dispatched_at) for s, p in expected
                 if received.get((s, p), -1) < dispatched_at)


def all_arrived_at(expected, dispatched_at: int, received: dict[tuple[str, str], int]) -> int | None:
    """When the last of ``expected``'s results of a nightly dispatched at ``dispatched_at`` came
    (epoch s: the newest of their times in ``received``, as for :func:`missing_nightly`), or None
    while any is still missing."""
    times = [received.get(pair, -1) for pair in expected]
    if not times or min(times) < dispatched_at:
        return None
    return max(times)


def render_alarm(missing: tuple[MissingResult, ...]) -> str:
    """Body of the alarm issue (``templates/issues/nightly_missing.md.j2``)."""
    return render("issues/nightly_missing.md.j2", missing=missing)


def render_arrived(sha: str, dispatched_at: int, arrived_at: int) -> str:
    """The comment that closes a nightly's alarm once its results came
    (``templates/issues/nightly_arrived.md.j2``); times in epoch s, shown in UTC."""
    return render("issues/nightly_arrived.md.j2", sha=sha, waited_s=arrived_at - dispatched_at,
                  at=utc_minute(arrived_at))
