"""A non-streamed attempt cut by the time limit is counted at its prompt's estimate because "the
request reached the API, which billed its prompt" — so one whose connection was never made (the
API's address takes no connection: nothing was sent) must count nothing."""
from __future__ import annotations

import asyncio
import socket

import pytest

from bot.agents.client import AgentClient, AgentSkipped, utc_day
from bot.config.agents import AgentSettings
from bot.store import Store
from tests.agents.test_client import ManualTimeouts, until
from tests.agents.test_client_time_limit import BASE, MSG, PROMPT, ClockedSleeps


@pytest.fixture
def full_listener():
    """An address whose connections never complete: a listening socket with a backlog of none,
    already held by one connection it never accepts, so the kernel drops every further SYN."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    held = socket.create_connection(srv.getsockname())
    yield f"http://127.0.0.1:{srv.getsockname()[1]}"
    held.close()
    srv.close()


async def test_an_attempt_whose_connection_never_opened_is_not_counted_as_a_billed_prompt(full_listener):
    timeouts = ManualTimeouts()
    c = AgentClient(AgentSettings(timeout_s=120, max_retries=2), Store(), api_key="k", base_url=full_listener,
                    now=lambda: BASE + timeouts.now, wait_for=timeouts, sleep=ClockedSleeps(timeouts),
                    within_s=50.0, stream=False)
    async with c:
        call = asyncio.ensure_future(c.call("conflict-resolution", system=PROMPT, messages=MSG))
        await until(lambda: timeouts.waiting == 1, "the attempt's wait")
        timeouts.advance(50)
        with pytest.raises(AgentSkipped) as e:
            await call
    assert "time limit" in e.value.reason
    assert list(c.store.db["agent_token_usage"].rows) == [], "a request that never went out counted as billed"
    assert c.tokens_used(utc_day(BASE)) == 0
