"""The agent client against the local Anthropic server: retries with capped backoff, timeouts,
the daily token budget in the real store, redaction of everything sent, agents off without a key."""
from __future__ import annotations

import asyncio

import pytest

from bot.agents.client import AgentClient, AgentSkipped, api_key_from_env, backoff_delay, retry_after_seconds
from bot.config.agents import AgentSettings
from bot.config.forksync import ConfigError, parse_config
from bot.fakeanthropic import FakeAnthropic, Reply
from bot.store import Store

MSG = [{"role": "user", "content": "hello"}]
DAY1 = 1_764_460_800.0          # 2025-11-30 00:00:00 UTC


def settings(**kw) -> AgentSettings:
    base = dict(max_retries=3, backoff_base_s=1.0, backoff_cap_s=5.0, timeout_s=10)
    return AgentSettings(**{**base, **kw})


class Sleeps(list):
    async def __call__(self, s: float) -> None:       # record the wait instead of waiting
        self.append(s)


@pytest.mark.parametrize("retry, retry_after, want", [
    (0, None, 1.0), (1, None, 2.0), (2, None, 4.0), (3, None, 5.0), (10, None, 5.0),
    (0, 3600.0, 5.0), (0, 0.25, 0.25), (2, 0.0, 0.0), (0, -3.0, 0.0),
])
def test_backoff_delay_is_capped(retry, retry_after, want):
    assert backoff_delay(retry, retry_after, base=1.0, cap=5.0) == want


def test_retry_after_parsing():
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_seconds({"retry-after": "9"}) == 9.0
    assert retry_after_seconds({"retry-after": "Sun, 30 Nov 2025 00:01:00 GMT"}, now=DAY1) == 60.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_api_key_from_env_prefers_forksync_key():
    assert api_key_from_env({"ANTHROPIC_API_KEY": "a", "FORKSYNC_ANTHROPIC_KEY": "f"}) == "f"
    assert api_key_from_env({"ANTHROPIC_API_KEY": "a", "FORKSYNC_ANTHROPIC_KEY": " "}) == "a"
    assert api_key_from_env({}) is None


async def test_off_without_key_or_when_disabled():
    with pytest.raises(AgentSkipped) as e:
        await AgentClient.from_env(settings(), environ={}).call("x", system="s", messages=MSG)
    assert e.value.reason == "agents are off: no API key set (FORKSYNC_ANTHROPIC_KEY or ANTHROPIC_API_KEY)"
    with pytest.raises(AgentSkipped) as e:
        await AgentClient(settings(enabled=False), api_key="k").call("x", system="s", messages=MSG)
    assert e.value.reason == "agents are off: `agents.enabled` is false in forksync.yml"


@pytest.mark.parametrize("stream", [True, False])
async def test_retries_429_529_and_midstream_with_capped_waits(stream):
    sleeps = Sleeps()
    script = [Reply(status=429, retry_after=3600), Reply(status=529), Reply(status=503, retry_after_ms=250),
              Reply(text="finally", usage={"input_tokens": 11, "output_tokens": 4})]
    async with FakeAnthropic(script) as fake:
        async with AgentClient(settings(), api_key="k", base_url=fake.base_url, sleep=sleeps, stream=stream) as c:
            reply = await c.call("summary", system="s", messages=MSG)
    assert (reply.text, reply.attempts, reply.input_tokens, reply.output_tokens) == ("finally", 4, 11, 4)
    assert sleeps == [5.0, 2.0, 0.25]            # 3600 s capped to 5; then 1*2**1; then the server's 250 ms
    assert len(fake.requests) == 4
    assert all(r.body.get("stream", False) is stream for r in fake.requests)


async def test_midstream_overload_is_retried():
    sleeps = Sleeps()
    async with FakeAnthropic([Reply(text="half an answer", stream_error="overloaded_error"), Reply(text="whole")]) as fake:
        async with AgentClient(settings(), api_key="k", base_url=fake.base_url, sleep=sleeps) as c:
            reply = await c.call("summary", system="s", messages=MSG)
    assert (reply.text, reply.attempts, sleeps) == ("whole", 2, [1.0])


async def test_gives_up_after_max_retries_with_reason():
    sleeps = Sleeps()
    async with FakeAnthropic([Reply(status=529, sticky=True)]) as fake:
        async with AgentClient(settings(max_retries=2), api_key="k", base_url=fake.base_url, sleep=sleeps) as c:
            with pytest.raises(AgentSkipped) as e:
                await c.call("summary", system="s", messages=MSG)
    assert e.value.reason == "agent summary gave up after 3 attempt(s): HTTP 529 overloaded_error"
    assert sleeps == [1.0, 2.0] and len(fake.requests) == 3


async def test_client_errors_are_not_retried():
    async with FakeAnthropic([Reply(status=400, error_message="bad"), Reply(text="unused")]) as fake:
        async with AgentClient(settings(), api_key="k", base_url=fake.base_url, sleep=Sleeps()) as c:
            with pytest.raises(AgentSkipped) as e:
                await c.call("summary", system="s", messages=MSG)
    assert e.value.reason == "agent summary failed: HTTP 400 invalid_request_error (not retried): bad"
    assert len(fake.requests) == 1


class ManualTimeouts:
    """The client's per-attempt timeout on a clock the test moves (no wall-clock budget): an
    attempt times out when :meth:`advance` passes its deadline, never by itself."""

    def __init__(self):
        self.now = 0.0
        self.moved = asyncio.Event()
        self.waiting = 0

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.moved.set()

    async def __call__(self, aw, seconds: float):
        deadline = self.now + seconds
        task = asyncio.ensure_future(aw)
        self.waiting += 1
        try:
            while True:
                self.moved.clear()
                mover = asyncio.ensure_future(self.moved.wait())
                await asyncio.wait({task, mover}, return_when=asyncio.FIRST_COMPLETED)
                mover.cancel()
                if task.done():
                    return task.result()
                if self.now >= deadline:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
                    raise asyncio.TimeoutError
        finally:
            self.waiting -= 1


async def until(pred, what: str, limit_s: float = 60.0):
    """Poll ``pred`` (a bound for a broken test, not a budget: it is normally true at once)."""
    end = asyncio.get_running_loop().time() + limit_s
    while not pred():
        assert asyncio.get_running_loop().time() < end, f"gave up waiting for {what}"
        await asyncio.sleep(0.01)


async def test_slow_response_times_out_and_is_retried():
    timeouts = ManualTimeouts()
    async with FakeAnthropic([Reply(text="too late", delay_s=3600), Reply(text="in time")]) as fake:
        async with AgentClient(settings(timeout_s=30), api_key="k", base_url=fake.base_url, sleep=Sleeps(),
                               wait_for=timeouts) as c:
            call = asyncio.ensure_future(c.call("summary", system="s", messages=MSG))
            await until(lambda: len(fake.requests) == 1 and timeouts.waiting == 1, "the first request")
            timeouts.advance(30)                    # the first attempt's 30 s pass, on the test's clock
            reply = await call
    assert (reply.text, reply.attempts) == ("in time", 2)


async def test_slow_every_time_gives_a_timeout_reason():
    timeouts = ManualTimeouts()
    async with FakeAnthropic([Reply(text="slow", delay_s=3600, sticky=True)]) as fake:
        async with AgentClient(settings(timeout_s=30, max_retries=1), api_key="k", base_url=fake.base_url,
                               sleep=Sleeps(), wait_for=timeouts) as c:
            call = asyncio.ensure_future(c.call("summary", system="s", messages=MSG))
            for n in (1, 2):
                await until(lambda n=n: len(fake.requests) == n and timeouts.waiting == 1, f"request {n}")
                timeouts.advance(30)
            with pytest.raises(AgentSkipped) as e:
                await call
    assert e.value.reason == "agent summary gave up after 2 attempt(s): timed out after 30 s"


async def test_daily_budget_persists_in_the_store_and_resets_next_utc_day(tmp_path):
    db = tmp_path / "forksync.db"
    clock = [DAY1 + 3600]
    script = [Reply(text="one", usage={"input_tokens": 600, "output_tokens": 300}, sticky=True)]
    async with FakeAnthropic(script) as fake:
        async with AgentClient(settings(daily_token_budget=1000), Store(db), api_key="k", base_url=fake.base_url,
                               now=lambda: clock[0]) as c:
            await c.call("summary", system="s", messages=MSG)
            assert c.tokens_used() == 900
        # A restart: a new client on the same database file sees today's spend.
        async with AgentClient(settings(daily_token_budget=1000), Store(db), api_key="k", base_url=fake.base_url,
                               now=lambda: clock[0]) as c2:
            with pytest.raises(AgentSkipped) as e:
                await c2.call("summary", system="s", messages=[{"role": "user", "content": "x" * 400}])
            assert e.value.reason.startswith("agents skipped: daily token budget reached (900 of 1,000 tokens "
                                             "used on 2025-11-30 UTC, this request needs about 101)")
            assert len(fake.requests) == 1
            clock[0] += 86_400
            assert c2.tokens_used() == 0
            await c2.call("summary", system="s", messages=MSG)
    rows = list(Store(db).db["agent_token_usage"].rows)
    assert [(r["day"], r["agent"], r["calls"], r["input_tokens"], r["output_tokens"]) for r in rows] == [
        ("2025-11-30", "summary", 1, 600, 300), ("2025-12-01", "summary", 1, 600, 300)]


async def test_everything_sent_is_redacted_even_if_the_caller_forgot():
    token = "ghp_" + "Q" * 36
    async with FakeAnthropic([Reply(text="ok")]) as fake:
        async with AgentClient(settings(), api_key="k", base_url=fake.base_url) as c:
            await c.call("summary", system=f"sys {token}", messages=[
                {"role": "user", "content": [{"type": "text", "text": f"log: password=hunter22 {token} me@x.org"}]}])
    raw = fake.requests[0].raw
    assert token not in raw and "hunter22" not in raw and "me@x.org" not in raw
    assert fake.requests[0].body["messages"][0]["content"][0]["text"] == \
        "log: password=[REDACTED-secret-1] [REDACTED-github-token-1] [REDACTED-email-1]"


def test_agents_section_of_forksync_yml():
    cfg = parse_config({"agents": {"model": "claude-opus-4-7", "daily_token_budget": 5000,
                                   "allowed_link_hosts": ["GitHub.com"]}})
    assert (cfg.agents.model, cfg.agents.daily_token_budget, cfg.agents.allowed_link_hosts) == \
        ("claude-opus-4-7", 5000, ["github.com"])
    with pytest.raises(ConfigError) as e:
        parse_config({"agents": {"max_retries": -1, "allowed_link_hosts": ["https://x.org/"], "modle": "x"}})
    paths = [p for p, _ in e.value.problems]
    assert paths == ["agents.max_retries", "agents.allowed_link_hosts", "agents.modle"]


async def test_oversized_prompt_is_not_sent():
    async with FakeAnthropic([Reply(text="unused")]) as fake:
        async with AgentClient(settings(max_prompt_tokens=100), api_key="k", base_url=fake.base_url) as c:
            with pytest.raises(AgentSkipped) as e:
                await c.call("conflict-resolution", system="s", messages=[{"role": "user", "content": "x" * 800}])
    assert e.value.reason == ("agent conflict-resolution skipped: the prompt is about 201 tokens, more than "
                              "`agents.max_prompt_tokens` (100)")
    assert fake.requests == []
