"""The client's time limits on a streamed answer, against the local Anthropic server: a long
answer that keeps streaming must be able to finish; a stream that stalls must not hang."""
from __future__ import annotations

from bot.agents.client import AgentClient
from bot.config.agents import AgentSettings
from bot.fakeanthropic import FakeAnthropic, Reply
from bot.store import Store

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
