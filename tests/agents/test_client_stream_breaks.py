"""The client's time limits on a streamed answer, against the local Anthropic server: a long
answer that keeps streaming must be able to finish; a stream that stalls must not hang."""
from __future__ import annotations

import asyncio

from bot.agents.client import AgentClient, attempt_cap
from bot.config.agents import AgentSettings
from bot.fakeanthropic import FakeAnthropic, Reply
from bot.store import Store
from tests.agents.test_client import ManualTimeouts, until

MSG = [{"role": "user", "content": "hello"}]


class Sleeps(list):
    async def __call__(self, s: float) -> None:       # record the wait instead of waiting
        self.append(s)


async def test_an_answer_that_keeps_streaming_longer_than_timeout_s_finishes():
    """With the defaults (``timeout_s: 120``, ``max_output_tokens: 16000``) a conflict answer of
    ~8,000 tokens streams for two minutes or more at the model's usual speed. Seen: the attempt is
    cut at ``timeout_s`` however steadily the tokens arrive ("gave up after 1 attempt(s): timed
    out after 2 s" here, on a scaled-down clock: 2 s limit, an answer streaming for ~4 s in 0.15 s
    steps), so any answer that long can never finish, and each retry costs the whole answer
    again. Should be: ``timeout_s`` bounds a stall between streamed chunks; an answer that keeps
    coming finishes (within an overall cap that fits ``max_output_tokens``)."""
    text = "x" * 400                           # 25 deltas of 16 characters, plus the framing events
    settings = AgentSettings(max_retries=0, timeout_s=2, max_output_tokens=1000)
    async with FakeAnthropic([Reply(text=text, chunk_delay_s=0.15)]) as fake:
        async with AgentClient(settings, Store(), api_key="k", base_url=fake.base_url, sleep=Sleeps()) as c:
            reply = await c.call("summary", system="s", messages=MSG)
    assert (reply.text, reply.attempts, reply.stop_reason) == (text, 1, "end_turn")


class CountedTimeouts(ManualTimeouts):
    """:class:`ManualTimeouts` that counts the waits it was given."""

    calls = 0

    async def __call__(self, aw, seconds: float):
        self.calls += 1
        return await super().__call__(aw, seconds)


async def test_a_stream_that_stalls_after_it_started_times_out_at_timeout_s_and_is_retried():
    """The other half of the limit: an answer that starts and then stops sending (a stalled
    connection) ends after ``timeout_s`` without data, on the test's clock, and is retried."""
    timeouts = CountedTimeouts()
    async with FakeAnthropic([Reply(text="stalls", chunk_delay_s=3600), Reply(text="in time")]) as fake:
        async with AgentClient(AgentSettings(max_retries=1, timeout_s=30), Store(), api_key="k",
                               base_url=fake.base_url, sleep=Sleeps(), wait_for=timeouts) as c:
            call = asyncio.ensure_future(c.call("summary", system="s", messages=MSG))
            # the response started (headers, then message_start); the wait for the next event stalls
            await until(lambda: timeouts.calls >= 3 and timeouts.waiting == 1, "the stalled stream")
            timeouts.advance(30)
            reply = await call
    assert (reply.text, reply.attempts, len(fake.requests)) == ("in time", 2, 2)


def test_the_whole_attempt_is_capped_to_fit_max_output_tokens():
    """The default limits fit the default answer: 16,000 tokens at the SDK's own estimate of the
    slowest speed (an hour per 128,000) plus ``timeout_s`` to start."""
    assert attempt_cap(120, 16_000) == 570.0
    assert attempt_cap(2, 1000) == 2 + 1000 * 3600 / 128_000
