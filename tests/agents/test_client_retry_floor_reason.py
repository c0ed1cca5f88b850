"""The reason a call stopped by the retry floor gives: its two figures say "less than" of each
other, so the one left after the backoff must read less than what the earlier attempt waited."""
from __future__ import annotations

import asyncio
import re

import pytest

from bot.agents.client import AgentSkipped
from bot.fakeanthropic import FakeAnthropic, Reply
from tests.agents.test_client import ManualTimeouts, until
from tests.agents.test_client_time_limit import MSG, client


async def test_the_retry_floors_reason_never_shows_equal_figures_as_less_than():
    """The first attempt waited its 60 s for an answer that never began; after the 2 s backoff
    59.96 s of the 121.96 s are left: less than 60 s, so no retry starts — but the reason, rounded
    to one decimal, reads "60 s would be left ..., less than the 60 s attempt 1 waited"."""
    timeouts = ManualTimeouts()
    async with FakeAnthropic([Reply(text="late", delay_s=3600), Reply(text="a retry's")]) as fake:
        async with client(fake, timeouts, 121.96, timeout_s=60, max_retries=2, backoff_base_s=2) as c:
            call = asyncio.ensure_future(c.call("conflict-resolution", system="s", messages=MSG))
            await until(lambda: len(fake.requests) == 1 and timeouts.waiting == 1, "the request")
            timeouts.advance(60)
            with pytest.raises(AgentSkipped) as e:
                await call
    assert len(fake.requests) == 1, "a retry was sent: not the case under test"
    m = re.search(r"\(([\d.]+) s would be left after the [\d.]+ s backoff, less than the ([\d.]+) s ", e.value.reason)
    assert m, e.value.reason
    left, waited = float(m.group(1)), float(m.group(2))
    assert left < waited, e.value.reason
