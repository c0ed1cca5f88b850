"""The reason a call stopped by the retry floor gives: its two figures say "less than" of each
other, so the one left after the backoff must read less than what the earlier attempt waited."""
from __future__ import annotations

import asyncio
import re

import pytest

from bot.agents.client import AgentSkipped
from bot.fakeanthropic import FakeAnthropic, Reply
from tests.agents.test_client import ManualTimeouts, until
from tests.agents.test_client_time_limit import MSG, after_a_stalled_first_attempt, client


async def test_the_retry_floors_reason_never_shows_equal_figures_as_less_than():
    """The first attempt waited its 60 s for an answer that never began; after the 2 s backoff
    59.96 s of the 121.96 s are left: less than 60 s, so no retry starts — but the reason, rounded
    to one decimal, reads "60 s would be left ..., less than the 60 s attempt 1 waited"."""
    fake, _, e = await after_a_stalled_first_attempt(121.96)
    assert isinstance(e, AgentSkipped), e
    assert len(fake.requests) == 1, "a retry was sent: not the case under test"
    m = re.search(r"\(([\d.]+) s would be left after the [\d.]+ s backoff, less than the ([\d.]+) s ", e.reason)
    assert m, e.reason
    left, waited = float(m.group(1)), float(m.group(2))
    assert left < waited, e.reason


async def test_the_retry_floors_reason_says_one_figure_for_how_long_the_cut_attempt_waited():
    """A non-streamed attempt waits for its whole answer up to its cap (30 s + 1,000 tokens' time:
    58.1 s), is cut there, and no retry fits in the 41.9 s left: the reason names that wait twice —
    as the attempt's timeout and as what the retry would need — and both must be the same figure,
    not "timed out after 30 s" beside "the 58.1 s attempt 1 waited"."""
    timeouts = ManualTimeouts()
    async with FakeAnthropic([Reply(text="late", delay_s=3600), Reply(text="a retry's")]) as fake:
        async with client(fake, timeouts, 100.0, timeout_s=30, max_output_tokens=1000, max_retries=2,
                          backoff_base_s=2, stream=False) as c:
            call = asyncio.ensure_future(c.call("summary", system="s", messages=MSG))
            await until(lambda: len(fake.requests) == 1 and timeouts.waiting == 1, "the request")
            timeouts.advance(30 + 1000 * 3600 / 128_000)
            with pytest.raises(AgentSkipped) as e:
                await call
    assert len(fake.requests) == 1, "a retry was sent: not the case under test"
    timed_out = re.search(r"timed out after ([\d.]+) s", e.value.reason)
    waited = re.search(r"less than the ([\d.]+) s attempt 1 waited", e.value.reason)
    assert timed_out and waited, e.value.reason
    assert timed_out.group(1) == waited.group(1), e.value.reason
