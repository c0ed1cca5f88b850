"""The local Anthropic server speaks the real wire format: checked through the real SDK and raw HTTP."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import aiohttp
import anthropic
import pytest

from bot.fakeanthropic import FakeAnthropic, Reply
from bot.fakeanthropic.script import load_script

ROOT = Path(__file__).resolve().parents[2]
ASK = {"model": "claude-sonnet-4-6", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}
TOOL = {"name": "lookup", "description": "d", "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}}


def sdk(fake: FakeAnthropic, key: str = "sk-test") -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=fake.base_url, api_key=key, max_retries=0)


async def test_text_reply_and_request_recording():
    async with FakeAnthropic([Reply(text="hello from the fake", usage={"input_tokens": 7, "output_tokens": 3})],
                             api_key="sk-test") as fake:
        async with sdk(fake) as c:
            msg = await c.messages.create(**ASK)
    assert msg.content[0].type == "text" and msg.content[0].text == "hello from the fake"
    assert (msg.stop_reason, msg.usage.input_tokens, msg.usage.output_tokens) == ("end_turn", 7, 3)
    assert msg.model == "claude-sonnet-4-6"
    [req] = fake.requests
    assert req.path == "/v1/messages" and req.status == 200
    assert req.body["messages"] == [{"role": "user", "content": "hi"}] and req.body["max_tokens"] == 50
    assert req.headers["authorization"] == "Bearer sk-test"


async def test_tool_use_streamed_reassembles_exactly():
    tool_input = {"q": "a long query that spans several input_json_delta chunks", "n": [1, 2, 3], "nested": {"k": "v"}}
    async with FakeAnthropic([Reply(text="let me look", tool_uses=[{"name": "lookup", "input": tool_input, "id": "toolu_1"}])]) as fake:
        async with sdk(fake) as c:
            async with c.messages.stream(**ASK, tools=[TOOL]) as s:
                msg = await s.get_final_message()
    assert [b.type for b in msg.content] == ["text", "tool_use"]
    assert msg.content[0].text == "let me look"
    assert (msg.content[1].name, msg.content[1].id, msg.content[1].input) == ("lookup", "toolu_1", tool_input)
    assert msg.stop_reason == "tool_use"
    assert fake.requests[0].body["stream"] is True


async def test_sse_event_sequence_is_anthropics():
    async with FakeAnthropic([Reply(text="abcdefghijklmnopqrstuvwxyz0123456789")], chunk_chars=16) as fake:
        async with aiohttp.ClientSession() as http:
            async with http.post(fake.base_url + "/v1/messages", json={**ASK, "stream": True}) as r:
                assert r.headers["content-type"].startswith("text/event-stream")
                raw = await r.text()
    events = [line[len("event: "):] for line in raw.splitlines() if line.startswith("event: ")]
    assert events == ["message_start", "ping", "content_block_start", "content_block_delta", "content_block_delta",
                      "content_block_delta", "content_block_stop", "message_delta", "message_stop"]
    datas = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: ")]
    assert "".join(d["delta"]["text"] for d in datas if d["type"] == "content_block_delta") == \
        "abcdefghijklmnopqrstuvwxyz0123456789"
    assert datas[0]["message"]["content"] == [] and datas[0]["message"]["stop_reason"] is None
    assert datas[-2]["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}


@pytest.mark.parametrize("reply, exc, status, etype, header", [
    (Reply(status=429, retry_after=7), anthropic.RateLimitError, 429, "rate_limit_error", ("retry-after", "7")),
    (Reply(status=529, retry_after_ms=1500), anthropic.APIStatusError, 529, "overloaded_error", ("retry-after-ms", "1500")),
    (Reply(status=500), anthropic.InternalServerError, 500, "api_error", ("retry-after", None)),
])
async def test_errors_carry_type_and_retry_after(reply, exc, status, etype, header):
    async with FakeAnthropic([reply]) as fake:
        async with sdk(fake) as c:
            with pytest.raises(exc) as e:
                await c.messages.create(**ASK)
    assert e.value.status_code == status
    assert e.value.body == {"type": "error", "error": {"type": etype, "message": "scripted error"}}
    assert e.value.response.headers.get(header[0]) == header[1]


async def test_mid_stream_error_event():
    async with FakeAnthropic([Reply(text="partial answer here", stream_error="overloaded_error")]) as fake:
        async with sdk(fake) as c:
            with pytest.raises(anthropic.APIStatusError) as e:
                async with c.messages.stream(**ASK) as s:
                    await s.get_final_message()
    assert e.value.body["error"]["type"] == "overloaded_error"


async def test_auth_and_validation():
    async with FakeAnthropic([Reply(text="never")], api_key="right") as fake:
        async with sdk(fake, "wrong") as c:
            with pytest.raises(anthropic.AuthenticationError):
                await c.messages.create(**ASK)
        async with sdk(fake, "right") as c:
            with pytest.raises(anthropic.BadRequestError) as e:
                await c.messages.create(model="m", max_tokens=5, messages=[])
    assert e.value.body["error"]["message"] == "messages: at least one message is required"
    assert [r.status for r in fake.requests] == [401, 400]


async def test_match_sticky_and_exhausted_queue():
    script = [Reply(text="for tools", match='"tools"', sticky=True), Reply(text="first plain"), Reply(text="second plain")]
    async with FakeAnthropic(script) as fake:
        async with sdk(fake) as c:
            texts = [(await c.messages.create(**ASK)).content[0].text,
                     (await c.messages.create(**ASK, tools=[TOOL])).content[0].text,
                     (await c.messages.create(**ASK, tools=[TOOL])).content[0].text,
                     (await c.messages.create(**ASK)).content[0].text]
            with pytest.raises(anthropic.InternalServerError) as e:
                await c.messages.create(**ASK)
    assert texts == ["first plain", "for tools", "for tools", "second plain"]
    assert e.value.body["error"]["message"] == "fake anthropic: script exhausted"


async def test_function_script_sees_the_request():
    async with FakeAnthropic(lambda body: {"text": f"you said {body['messages'][-1]['content']}"}) as fake:
        async with sdk(fake) as c:
            msg = await c.messages.create(**ASK)
    assert msg.content[0].text == "you said hi"


def test_script_file_errors_name_file_and_reply(tmp_path):
    good = tmp_path / "s.yaml"
    good.write_text("replies:\n  - text: hello\n  - status: 529\n    retry_after: 2\n")
    assert [r.status for r in load_script(good)] == [200, 529]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"text": "ok"}, {"txet": "typo"}]))
    with pytest.raises(ValueError, match=r"bad.json: replies\[1\]: unknown field\(s\) \['txet'\]"):
        load_script(bad)
    empty = tmp_path / "empty.json"
    empty.write_text("[{}]")
    with pytest.raises(ValueError, match=r"replies\[0\]: a 200 reply needs `text` or `tool_uses`"):
        load_script(empty)


async def test_runs_as_a_process(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [{"text": "from the process", "sticky": True}]}))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.fakeanthropic", "--port", "0", "--script", str(script),
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
        assert line.startswith("listening on http://127.0.0.1:")
        async with anthropic.AsyncAnthropic(base_url=line.split()[-1], api_key="x", max_retries=0) as c:
            msg = await c.messages.create(**ASK)
        assert msg.content[0].text == "from the process"
    finally:
        proc.terminate()
        await proc.wait()


def test_bad_script_file_exits_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{\"replies\": 3}")
    r = subprocess.run([sys.executable, "-m", "bot.fakeanthropic", "--script", str(bad)], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.strip() == f"fakeanthropic: {bad}: expected a list of replies or {{'replies': [...]}}"


def test_in_thread_for_synchronous_callers():
    with FakeAnthropic([Reply.tool("lookup", {"q": "x"})]).in_thread() as fake:
        c = anthropic.Anthropic(base_url=fake.base_url, api_key="k", max_retries=0)
        msg = c.messages.create(**ASK, tools=[TOOL])
        c.close()
    assert (msg.content[0].name, msg.content[0].input) == ("lookup", {"q": "x"})
    assert len(fake.requests) == 1
