"""A client's time limit (``within_s``, what is left of a sync's agent time) bounds a call as a
whole — its request, each wait for the answer, and the retries with their backoff — against the
local Anthropic server made slow or stalling at a chosen point, on a clock the test moves."""
from __future__ import annotations

import asyncio
import time

import pytest

from bot.agents import store as agents_store
from bot.agents.client import AgentClient, AgentSkipped, utc_day
from bot.config.agents import AgentSettings
from bot.fakeanthropic import FakeAnthropic, Reply
from bot.store import Store
from tests.agents.test_client import ManualTimeouts, until

MSG = [{"role": "user", "content": "hello"}]
BASE = 1_780_000_000.0


class SeenTimeouts(ManualTimeouts):
    """:class:`ManualTimeouts` that keeps the ``type`` of each piece of the answer a wait gave, so
    a test moves the clock only once the client has read what the server sent before it stalled."""

    def __init__(self):
        super().__init__()
        self.seen: list[str] = []

    async def __call__(self, aw, seconds: float):
        got = await super().__call__(aw, seconds)
        self.seen.append(str(getattr(got, "type", "") or type(got).__name__))
        return got


class ClockedSleeps(list):
    """The backoff, recorded and slept on the test's clock (instantly)."""

    def __init__(self, timeouts: ManualTimeouts):
        super().__init__()
        self.timeouts = timeouts

    async def __call__(self, s: float) -> None:
        self.append(s)
        self.timeouts.advance(s)


def client(fake: FakeAnthropic, timeouts: ManualTimeouts, within_s: float | None, stream: bool = True,
           **kw) -> AgentClient:
    return AgentClient(AgentSettings(**kw), Store(), api_key="k", base_url=fake.base_url,
                       now=lambda: BASE + timeouts.now, wait_for=timeouts, sleep=ClockedSleeps(timeouts),
                       within_s=within_s, stream=stream)


async def test_no_request_is_sent_once_the_time_is_spent():
    timeouts = ManualTimeouts()
    async with FakeAnthropic([Reply(text="never asked")]) as fake:
        async with client(fake, timeouts, 10.0) as c:
            timeouts.advance(10)
            with pytest.raises(AgentSkipped) as e:
                await c.call("conflict-resolution", system="s", messages=MSG)
    assert fake.requests == []
    assert c.out_of_time == e.value.reason
    assert "before its request was sent" in e.value.reason and "(10 s) ran out" in e.value.reason
    assert not e.value.api_failure


async def test_no_retry_starts_when_its_backoff_would_end_past_the_time_limit():
    """Overloaded twice: the first backoff (60 s, the server's retry-after) fits in 100 s, the
    second does not — the call stops there instead of sleeping past its limit."""
    timeouts = ManualTimeouts()
    busy = Reply(status=529, retry_after=60, sticky=True)
    async with FakeAnthropic([busy]) as fake:
        async with client(fake, timeouts, 100.0, max_retries=4, backoff_cap_s=60) as c:
            with pytest.raises(AgentSkipped) as e:
                await c.call("conflict-resolution", system="s", messages=MSG)
    assert len(fake.requests) == 2
    assert c.sleep == [60.0]
    assert "after attempt 2 HTTP 529 overloaded_error, with no time for a retry" in e.value.reason
    assert c.out_of_time == e.value.reason


async def test_a_call_whose_answer_has_not_begun_is_cut_at_the_time_limit_not_at_timeout_s():
    timeouts = ManualTimeouts()
    async with FakeAnthropic([Reply(text="late", delay_s=3600), Reply(text="a retry's")]) as fake:
        async with client(fake, timeouts, 50.0, timeout_s=120, max_retries=2) as c:
            call = asyncio.ensure_future(c.call("conflict-resolution", system="s", messages=MSG))
            # no answer yet (the server holds its headers): the one wait is for it to begin
            await until(lambda: len(fake.requests) == 1 and timeouts.waiting == 1, "the request")
            timeouts.advance(50)
            with pytest.raises(AgentSkipped) as e:
                await call
    assert len(fake.requests) == 1                      # not retried
    assert "in attempt 1 (the time limit came while waiting for the answer to begin)" in e.value.reason
    assert c.tokens_used(utc_day(BASE)) == 0           # no answer began: nothing to count


async def test_a_stream_that_stalls_mid_answer_is_cut_at_the_time_limit_and_its_tokens_are_counted():
    timeouts = SeenTimeouts()
    usage = {"input_tokens": 1234, "output_tokens": 40}
    async with FakeAnthropic([Reply(text="x" * 64, stall_after=2, usage=usage), Reply(text="a retry's")]) as fake:
        async with client(fake, timeouts, 50.0, timeout_s=120, max_retries=2) as c:
            call = asyncio.ensure_future(c.call("conflict-resolution", system="s", messages=MSG))
            # the client read the answer's start and first pieces, and waits for the next
            await until(lambda: fake.stalled == 1 and "content_block_delta" in timeouts.seen and timeouts.waiting == 1,
                        "the stalled answer")
            timeouts.advance(50)
            with pytest.raises(AgentSkipped) as e:
                await call
    assert len(fake.requests) == 1
    assert "in attempt 1" in e.value.reason and c.out_of_time == e.value.reason
    # the attempt broke off after message_start: its prompt (message_start's input tokens) and
    # what had streamed (message_start's 1 output token) are counted
    assert c.tokens_used(utc_day(BASE)) == 1234 + 1


async def test_an_answer_that_ends_inside_the_limit_is_unaffected():
    timeouts = ManualTimeouts()
    async with FakeAnthropic([Reply(text="in time")]) as fake:
        async with client(fake, timeouts, 50.0) as c:
            reply = await c.call("conflict-resolution", system="s", messages=MSG)
    assert (reply.text, reply.attempts, c.out_of_time) == ("in time", 1, "")


async def test_a_non_streamed_answer_is_waited_for_only_until_the_time_limit():
    timeouts = ManualTimeouts()
    async with FakeAnthropic([Reply(text="late", delay_s=3600), Reply(text="a retry's")]) as fake:
        c = AgentClient(AgentSettings(timeout_s=120, max_retries=2), Store(), api_key="k", base_url=fake.base_url,
                        now=lambda: BASE + timeouts.now, wait_for=timeouts, sleep=ClockedSleeps(timeouts),
                        within_s=50.0, stream=False)
        async with c:
            call = asyncio.ensure_future(c.call("conflict-resolution", system="s", messages=MSG))
            await until(lambda: len(fake.requests) == 1 and timeouts.waiting == 1, "the request")
            timeouts.advance(50)
            with pytest.raises(AgentSkipped) as e:
                await call
    assert len(fake.requests) == 1
    assert "the time limit came while waiting for the answer" in e.value.reason


PROMPT = "Resolve the conflict of this pick. " * 100      # 3,500 characters: 877 tokens by forksync's estimate


def usage_rows(c: AgentClient) -> list[dict]:
    return list(c.store.db["agent_token_usage"].rows)


async def test_a_non_streamed_call_cut_at_the_time_limit_counts_its_prompt_marked_cut():
    """The request reached the API and its answer was never seen: the API billed its prompt, so
    the budget counts the prompt as forksync sized it before sending, marked as a cut estimate."""
    timeouts = ManualTimeouts()
    async with FakeAnthropic([Reply(text="late", delay_s=3600), Reply(text="a retry's")]) as fake:
        async with client(fake, timeouts, 50.0, timeout_s=120, max_retries=2, stream=False) as c:
            call = asyncio.ensure_future(c.call("conflict-resolution", system=PROMPT, messages=MSG))
            await until(lambda: len(fake.requests) == 1 and timeouts.waiting == 1, "the request")
            timeouts.advance(50)
            with pytest.raises(AgentSkipped):
                await call
    assert len(fake.requests) == 1
    assert c.tokens_used(utc_day(BASE)) == 877
    [row] = usage_rows(c)
    assert (row["calls"], row["input_tokens"], row["output_tokens"]) == (1, 877, 0)
    assert (row["cut_calls"], row["estimated_input_tokens"]) == (1, 877)


async def test_a_non_streamed_attempt_cut_at_its_own_limit_is_counted_and_retried():
    timeouts = ManualTimeouts()
    usage = {"input_tokens": 900, "output_tokens": 12}
    async with FakeAnthropic([Reply(text="late", delay_s=3600), Reply(text="in time", usage=usage)]) as fake:
        async with client(fake, timeouts, None, timeout_s=30, max_output_tokens=1000, stream=False) as c:
            call = asyncio.ensure_future(c.call("summary", system=PROMPT, messages=MSG))
            await until(lambda: len(fake.requests) == 1 and timeouts.waiting == 1, "the first request")
            timeouts.advance(30 + 1000 * 3600 / 128_000)        # the attempt's cap: timeout_s + 1,000 tokens' time
            reply = await call
    assert (reply.text, reply.attempts) == ("in time", 2)
    [row] = usage_rows(c)
    assert (row["calls"], row["input_tokens"], row["output_tokens"]) == (2, 877 + 900, 12)
    assert (row["cut_calls"], row["estimated_input_tokens"]) == (1, 877)


async def after_a_stalled_first_attempt(within_s: float):
    """A call with time limit ``within_s`` (seconds; ``timeout_s`` 60, a 2 s backoff) whose first
    attempt's answer never begins: 60 s pass on the client's clock. ``(the local Anthropic server,
    the client, the reply or the AgentSkipped the call raised)``."""
    timeouts = ManualTimeouts()
    async with FakeAnthropic([Reply(text="late", delay_s=3600), Reply(text="a retry's")]) as fake:
        async with client(fake, timeouts, within_s, timeout_s=60, max_retries=2, backoff_base_s=2) as c:
            call = asyncio.ensure_future(c.call("conflict-resolution", system="s", messages=MSG))
            await until(lambda: len(fake.requests) == 1 and timeouts.waiting == 1, "the request")
            timeouts.advance(60)
            try:
                got = await call
            except AgentSkipped as e:
                got = e
    return fake, c, got


async def test_no_retry_starts_with_less_time_left_than_the_failed_attempt_waited_for_its_answer():
    """The first attempt waited its 60 s for an answer that never began; after the 2 s backoff 38 s
    of the 100 s are left — less than an answer was just seen to need to begin, so a retry would
    send a whole prompt only to be cut. No second request is sent and the call says why."""
    fake, c, e = await after_a_stalled_first_attempt(100.0)
    assert isinstance(e, AgentSkipped), e
    assert len(fake.requests) == 1
    assert c.sleep == []                                # not even the backoff is slept
    assert e.reason == (
        "agent conflict-resolution stopped after attempt 1 timed out after 60 s, with no time for a retry "
        "(38 s would be left after the 2 s backoff, less than the 60 s attempt 1 waited without the "
        "answer beginning): not enough of its time limit (100 s) was left for another attempt; nothing of it "
        "was used")
    assert c.out_of_time == e.reason and not e.api_failure


async def test_a_retry_starts_when_the_time_left_holds_what_the_failed_attempt_waited():
    _, c, reply = await after_a_stalled_first_attempt(200.0)
    assert (reply.text, reply.attempts, c.sleep, c.out_of_time) == ("a retry's", 2, [2.0], "")


def test_a_cut_call_is_added_to_a_row_of_an_earlier_release_with_no_cut_figures():
    """A row written before the cut figures existed holds NULL in them: the first cut call on it
    makes them its own figures, not NULL."""
    store = Store()
    store.conn.execute("INSERT INTO agent_token_usage(day, agent, model, calls, input_tokens, output_tokens) "
                       "VALUES ('2026-05-28', 'summary', 'm', 3, 300, 30)")
    agents_store.record_call(store, "2026-05-28", "summary", "m", 877, 0, cut=True, estimated_input_tokens=877)
    [row] = list(store.db["agent_token_usage"].rows)
    assert (row["calls"], row["input_tokens"], row["cut_calls"], row["estimated_input_tokens"]) == (4, 1177, 1, 877)


def test_agents_status_says_how_much_of_today_is_forksyncs_estimate_for_cut_calls(tmp_path, capsys):
    from bot.cli.main import main

    for attempt in range(2):        # a UTC midnight between the record and the read: once more, on the new day
        db = tmp_path / f"forksync-{attempt}.db"
        day = utc_day(time.time())
        store = Store(db)
        agents_store.record_call(store, day, "summary", "m", 900, 12)
        agents_store.record_call(store, day, "conflict-resolution", "m", 877, 0, cut=True, estimated_input_tokens=877)
        store.close()
        assert main(["agents", "status", "--db", str(db)]) == 0
        if utc_day(time.time()) == day:
            break
    lines = capsys.readouterr().out.splitlines()[-2:]
    assert lines == ["tokens used today (UTC): 1,789 of 2,000,000",
                     "of which forksync's estimate: 877 input tokens; 1 call cut before its answer came"]
