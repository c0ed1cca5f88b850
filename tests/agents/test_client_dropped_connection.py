"""A non-streamed attempt whose connection the server drops after the request went out whole
(``anthropic.APIConnectionError``: "Server disconnected without sending a response") had its
prompt sent to the API like one cut at its time limit: it is counted the same way, at its
prompt's estimate, once per attempt — and one whose request never went out counts nothing.
Against the local Anthropic server made to hang up (``Reply(hang_up=True)``)."""
from __future__ import annotations

import socket

import pytest

from bot.agents.client import AgentClient, AgentSkipped, utc_day
from bot.config.agents import AgentSettings
from bot.fakeanthropic import FakeAnthropic, Reply
from bot.store import Store
from tests.agents.test_client import ManualTimeouts
from tests.agents.test_client_time_limit import BASE, MSG, PROMPT, ClockedSleeps, client, usage_rows

# PROMPT is 877 tokens by forksync's estimate (chars / 4)


async def test_an_attempt_dropped_after_its_request_went_out_is_counted_and_retried():
    timeouts = ManualTimeouts()
    usage = {"input_tokens": 900, "output_tokens": 12}
    async with FakeAnthropic([Reply(hang_up=True), Reply(text="in time", usage=usage)]) as fake:
        async with client(fake, timeouts, None, max_retries=2, stream=False) as c:
            reply = await c.call("summary", system=PROMPT, messages=MSG)
    assert (reply.text, reply.attempts) == ("in time", 2)
    assert [r.status for r in fake.requests] == [0, 200]       # the first was read whole, then hung up on
    [row] = usage_rows(c)
    assert (row["calls"], row["input_tokens"], row["output_tokens"]) == (2, 877 + 900, 12)
    assert (row["cut_calls"], row["estimated_input_tokens"]) == (1, 877)


async def test_each_dropped_attempt_is_counted_once():
    timeouts = ManualTimeouts()
    async with FakeAnthropic([Reply(hang_up=True, sticky=True)]) as fake:
        async with client(fake, timeouts, None, max_retries=2, stream=False) as c:
            with pytest.raises(AgentSkipped) as e:
                await c.call("summary", system=PROMPT, messages=MSG)
    assert "gave up after 3 attempt(s): connection error: APIConnectionError" in e.value.reason
    assert len(fake.requests) == 3
    [row] = usage_rows(c)
    assert (row["calls"], row["input_tokens"], row["output_tokens"]) == (3, 3 * 877, 0)
    assert (row["cut_calls"], row["estimated_input_tokens"]) == (3, 3 * 877)
    assert c.tokens_used(utc_day(BASE)) == 3 * 877


async def test_the_budget_check_sees_a_dropped_attempt():
    """877 of a 1,500-token budget went on a prompt the server hung up on: the next call of the
    same size would pass the budget, so it is not made."""
    timeouts = ManualTimeouts()
    async with FakeAnthropic([Reply(hang_up=True), Reply(text="never asked")]) as fake:
        async with client(fake, timeouts, None, max_retries=0, daily_token_budget=1500, stream=False) as c:
            with pytest.raises(AgentSkipped):
                await c.call("summary", system=PROMPT, messages=MSG)
            with pytest.raises(AgentSkipped) as e:
                await c.call("summary", system=PROMPT, messages=MSG)
    assert len(fake.requests) == 1
    assert e.value.reason.startswith("agents skipped: daily token budget reached (877 of 1,500 tokens used on ")
    assert "this request needs about 877" in e.value.reason


async def test_a_streamed_attempt_dropped_before_its_answer_began_counts_nothing():
    """The streamed path counts an attempt from its ``message_start`` on (docs/agents.md): a hang-up
    before it is no exception."""
    timeouts = ManualTimeouts()
    async with FakeAnthropic([Reply(hang_up=True), Reply(text="in time", usage={"input_tokens": 900,
                                                                                  "output_tokens": 12})]) as fake:
        async with client(fake, timeouts, None, max_retries=2) as c:
            reply = await c.call("summary", system=PROMPT, messages=MSG)
    assert reply.attempts == 2
    [row] = usage_rows(c)
    assert (row["calls"], row["input_tokens"], row["cut_calls"], row["estimated_input_tokens"]) == (1, 900, 0, 0)


@pytest.fixture
def closed_port():
    """An address nothing listens on: the connection is refused, no byte of a request goes out."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


async def test_a_connection_refused_counts_nothing(closed_port):
    timeouts = ManualTimeouts()
    c = AgentClient(AgentSettings(max_retries=1), Store(), api_key="k", base_url=closed_port,
                    now=lambda: BASE + timeouts.now, wait_for=timeouts, sleep=ClockedSleeps(timeouts), stream=False)
    async with c:
        with pytest.raises(AgentSkipped) as e:
            await c.call("summary", system=PROMPT, messages=MSG)
    assert "connection error" in e.value.reason
    assert usage_rows(c) == []


@pytest.fixture
async def refusing_proxy():
    """An HTTPS proxy that reads the tunnel's CONNECT and refuses it (403, as a proxy whose ACL
    lacks the API's host does): no byte of the API request goes anywhere."""
    import asyncio
    seen: list[bytes] = []

    async def handle(reader, writer):
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head.split(b"\r\n", 1)[0])
        writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"http://127.0.0.1:{port}", seen


async def test_a_tunnel_the_proxy_refused_counts_nothing(refusing_proxy, monkeypatch):
    """The SDK reaches the API through HTTPS_PROXY (its httpx client trusts the environment). The
    tunnel's CONNECT request carries the API request's extensions, the ``trace`` that marks "went
    out whole" included, so its empty body's ``send_request_body.complete`` marks the attempt sent
    before the proxy refuses the tunnel; the refusal is an ``APIConnectionError`` and each attempt
    was counted at its prompt's estimate (877 tokens) though the API never saw a byte."""
    proxy, seen = refusing_proxy
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", proxy)
    timeouts = ManualTimeouts()
    c = AgentClient(AgentSettings(max_retries=1), Store(), api_key="k", base_url="https://api.anthropic.test",
                    now=lambda: BASE + timeouts.now, wait_for=timeouts, sleep=ClockedSleeps(timeouts), stream=False)
    async with c:
        with pytest.raises(AgentSkipped) as e:
            await c.call("summary", system=PROMPT, messages=MSG)
    assert "connection error" in e.value.reason
    assert seen == [b"CONNECT api.anthropic.test:443 HTTP/1.1"] * 2
    assert usage_rows(c) == []
