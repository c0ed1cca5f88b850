"""The conflict agent's work in one sync has a deadline well inside the delivery's limit
(``SyncService.agent_deadline_s``): a chain whose turn comes after it stays a draft for a person,
says it was not tried yet, and is the first the agent is asked about at the next sync."""
from __future__ import annotations

import asyncio
import contextlib

import pytest

from bot.agents import store as agents_store
from bot.agents.client import AgentClient, utc_day
from bot.cli.serve import ServeSettings
from bot.fakeanthropic import FakeAnthropic, Reply
from bot.sync import store as sync_store
from bot.sync.service import agent_deadline
from tests.agents.test_client import until
from tests.agents.test_client_time_limit import SeenTimeouts
from tests.support.e2e import status_issue
from tests.support.github import commit_files, git
from tests.support.sync_world import CONFIG, MIDDLE, upstream_files, validated_world
from tests.support.validation_world import tick_ctx

OPS = "".join(f"line {i}\n" for i in range(1, 21))
X0 = "int x;\n" + MIDDLE + "int z;\n"


@pytest.mark.parametrize("delivery_timeout_s, configured_s, expected", [
    (6 * 3600.0, 0.0, 3 * 3600.0),        # the default: half of the delivery's limit
    (7200.0, 0.0, 3600.0),
    (6 * 3600.0, 1800.0, 1800.0),         # a configured deadline wins
])
def test_the_agent_deadline_is_half_the_delivery_limit_unless_configured(delivery_timeout_s, configured_s, expected):
    assert agent_deadline(delivery_timeout_s, configured_s) == expected


def test_the_service_settings_default_to_half_the_delivery_limit():
    s = ServeSettings()
    assert s.agent_deadline_s == 0.0
    assert agent_deadline(s.delivery_timeout_s, s.agent_deadline_s) == s.delivery_timeout_s / 2
    assert ServeSettings(agent_deadline_s=900).agent_deadline_s == 900.0
    with pytest.raises(ValueError):
        ServeSettings(agent_deadline_s=-1)


def _answer(path: str, content: str, **kw) -> Reply:
    return Reply.tool("resolve_conflicts", {
        "files": [{"path": path, "content": content, "action": "kept both changes", "reason": "independent edits"}],
        "summary": "kept both"}, **kw)


async def test_agent_work_stops_at_the_deadline_and_the_next_sync_starts_with_the_chain_not_reached(
        fake_github, tmp_path, monkeypatch):
    monkeypatch.setenv("FORKSYNC_ANTHROPIC_KEY", "k")
    # agent answers that resolve nothing (the rails reject an answer about another
    # file): each call only moves the clock, as a long stalled call would
    replies = [_answer("nothing.txt", "x\n")] * 4
    async with FakeAnthropic(replies, api_key="k") as ant:
        config = CONFIG + f"agents:\n  base_url: {ant.base_url}\n  max_retries: 0\n"
        async with validated_world(fake_github, tmp_path, config,
                                   files=upstream_files(**{"third_party/amd/x.cpp": X0, "python/ops.py": OPS}),
                                   fork_commits=(({"third_party/amd/x.cpp": "int x = 10;\n" + MIDDLE + "int z;\n",
                                                   "python/ops.py": OPS.replace("line 3\n", "line 3 fork\n")},
                                                  "fork: tune x, ops line 3"),)) as (w, up_src, upstream):
            svc = w.bot.svc
            # the clock: each request the agent makes takes 2,000 s (a call that stalls and retries)
            svc.now = lambda: 1_000_000.0 + 2_000.0 * len(ant.bodies)
            svc.agent_deadline_s = 1_500.0
            c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n"}, "AMD: x = 2 (#102)")
            c3 = commit_files(up_src, {"python/ops.py": OPS.replace("line 3\n", "line 3 upstream\n")}, "ops: line 3 (#103)")
            git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
            await w.bot.settle()
            # one sync: the agent was asked about the older chain only; the deadline passed during it
            assert len(ant.bodies) == 1
            assert "third_party/amd/x.cpp" in str(ant.bodies[0]) and "python/ops.py" not in str(ant.bodies[0])
            prs = {p["head"]["ref"]: p async for p in w.alice.getiter("/repos/meta/triton/pulls?state=open")}
            assert prs[f"forksync/chain-{c2[:12]}"]["draft"] is True     # the agent's answer was rejected
            later = prs[f"forksync/chain-{c3[:12]}"]
            assert later["draft"] is True                     # still there for a person to finish
            said = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{later['number']}/comments")]
            assert any("not yet tried by the conflict agent" in b and "next sync" in b for b in said), said
            [issue] = [i["body"] for i in await status_issue(w.alice)]
            assert "not yet tried by the conflict agent: will be tried at the next sync" in issue
            # the next sync asks about the chain the last one did not reach first
            await svc.sync(await tick_ctx(w), "meta/triton", reason="poll")
            assert len(ant.bodies) == 2
            assert "python/ops.py" in str(ant.bodies[1]) and "third_party/amd/x.cpp" not in str(ant.bodies[1])
            # and the one after that, the chain this one did not reach: each waits one sync at most
            await svc.sync(await tick_ctx(w), "meta/triton", reason="poll")
            assert len(ant.bodies) == 3
            assert "third_party/amd/x.cpp" in str(ant.bodies[2]) and "python/ops.py" not in str(ant.bodies[2])


class _Sleeps(list):
    async def __call__(self, s: float) -> None:       # the backoff, recorded instead of slept
        self.append(s)


@contextlib.asynccontextmanager
async def _cut_at_the_deadline(fake_github, tmp_path, monkeypatch, replies: list[Reply]):
    """Two chains, each stopped at its first pick (``c2``: ``third_party/amd/x.cpp``, ``c3``:
    ``python/ops.py``), the agent answering ``replies`` on a clock of its own: the first answer
    stalls after its first piece, the clock then passes the sync's agent deadline (1,500 s), and
    the sync ends. Yields ``(world, the local Anthropic server, c2, c3, the clock's start, the
    client's backoff sleeps)`` after that sync."""
    monkeypatch.setenv("FORKSYNC_ANTHROPIC_KEY", "k")
    timeouts, sleeps = SeenTimeouts(), _Sleeps()
    base = 1_780_000_000.0

    def clock() -> float:
        return base + timeouts.now

    async with FakeAnthropic(replies, api_key="k") as ant:
        config = CONFIG + f"agents:\n  base_url: {ant.base_url}\n  max_retries: 2\n  timeout_s: 600\n"
        async with validated_world(fake_github, tmp_path, config,
                                   files=upstream_files(**{"third_party/amd/x.cpp": X0, "python/ops.py": OPS}),
                                   fork_commits=(({"third_party/amd/x.cpp": "int x = 10;\n" + MIDDLE + "int z;\n",
                                                   "python/ops.py": OPS.replace("line 3\n", "line 3 fork\n")},
                                                  "fork: tune x, ops line 3"),)) as (w, up_src, upstream):
            svc = w.bot.svc
            svc.now = clock
            svc.agent_deadline_s = 1_500.0
            svc.agent_client = lambda settings, store, **kw: AgentClient.from_env(
                settings, store, now=clock, wait_for=timeouts, sleep=sleeps, **kw)
            c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n"}, "AMD: x = 2 (#102)")
            c3 = commit_files(up_src, {"python/ops.py": OPS.replace("line 3\n", "line 3 upstream\n")}, "ops: line 3 (#103)")
            git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
            settle = asyncio.ensure_future(w.bot.settle())
            try:
                # the first chain's answer began and stalls; the client read its first piece and waits
                await until(lambda: ant.stalled == 1 and "content_block_delta" in timeouts.seen and timeouts.waiting == 1,
                            "the stalled answer")
                # the sync's agent time (1,500 s) runs out meanwhile: a wait the client is in, or
                # one it would start next, must end the call (a bound for a broken test: a client
                # that starts a new wait past the deadline waits for ever on this clock)
                timeouts.advance(1_600)
                await until(settle.done, "the sync to end once its agent time ran out", 120)
            finally:
                settle.cancel()
            settle.result()
            yield w, ant, c2, c3, base, sleeps


async def test_a_call_still_streaming_at_the_deadline_is_cut_there_and_its_chain_waits_for_the_next_sync(
        fake_github, tmp_path, monkeypatch):
    """The deadline bounds the call already running, not only the next one. Seen: the answer for
    the first chain stalls mid-stream before the deadline; the clock passes the deadline while the
    client waits for its next event; the client times the stall out at ``timeout_s`` (600 s, past
    the deadline), retries and takes the second answer, committed and pushed after the sync's
    agent time was spent — a slow model holds the sync as long as ``max_retries`` attempts allow,
    past the delivery's limit. Should be: the wait ends at the deadline, nothing is retried,
    nothing lands on the branch, the chain waits for the agent (its row, its PR, the status
    issue) and is asked again at the next sync; the cut attempt's tokens are counted."""
    resolved = "int x = 2;\n" + MIDDLE + "int z;\n"
    # the first answer stalls after its first piece; the second (a retry's) would resolve the pick
    replies = [_answer("third_party/amd/x.cpp", resolved, stall_after=1, match="third_party/amd/x.cpp"),
               _answer("third_party/amd/x.cpp", resolved, match="third_party/amd/x.cpp")]
    async with _cut_at_the_deadline(fake_github, tmp_path, monkeypatch, replies) as (w, ant, c2, c3, base, sleeps):
        svc = w.bot.svc
        # cut at the deadline: no retry, nothing pushed, the chain waits for the agent
        assert len(ant.requests) == 1, [r.status for r in ant.requests]
        assert sleeps == []
        first = f"forksync/chain-{c2[:12]}"
        prs = {p["head"]["ref"]: p async for p in w.alice.getiter("/repos/meta/triton/pulls?state=open")}
        pr = prs[first]
        assert pr["draft"] is True
        msgs = [c["commit"]["message"] async for c in
                w.alice.getiter(f"/repos/meta/triton/pulls/{pr['number']}/commits")]
        assert not any("Agent-Resolved" in m for m in msgs), msgs
        row = sync_store.branch_row(w.bot.store, "meta/triton", first)
        assert row["agent_waiting_since"] == base         # since its call began: first at the next sync
        said = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{pr['number']}/comments")]
        assert any("stopped when this sync's agent time ran out" in b and "next sync" in b for b in said), said
        assert not any("proposal was not used" in b for b in said), said
        [issue] = [i["body"] for i in await status_issue(w.alice)]
        # the cut chain and the one after it, told apart
        assert issue.count("not yet tried by the conflict agent: will be tried at the next sync") == 1
        assert issue.count("not yet resolved by the conflict agent: its call was stopped") == 1
        # the cut attempt had begun (its message_start gave its input tokens): it is counted
        assert agents_store.tokens_used(w.bot.store, utc_day(base)) >= len(ant.requests[0].raw) // 4
        # the next sync asks about it first; its answer is taken and pushed
        ant.push(_answer("nothing.txt", "x\n", match="python/ops.py"))      # the other chain's: rejected
        await svc.sync(await tick_ctx(w), "meta/triton", reason="poll")
        assert "third_party/amd/x.cpp" in str(ant.bodies[1])
        msgs = [c["commit"]["message"] async for c in
                w.alice.getiter(f"/repos/meta/triton/pulls/{pr['number']}/commits")]
        assert any("Agent-Resolved" in m for m in msgs), msgs
        assert not sync_store.branch_row(w.bot.store, "meta/triton", first)["agent_waiting_since"]
        assert "python/ops.py" in str(ant.bodies[2])       # then the other chain, within the same sync
        assert sync_store.branch_row(w.bot.store, "meta/triton", f"forksync/chain-{c3[:12]}")


CUT = "not yet resolved by the conflict agent: its call was stopped when a sync's agent time ran out"
FIRST = "before any chain that does not wait for it"      # the waiting chains are asked first


async def test_a_chain_whose_first_pick_call_was_cut_says_so_apart_from_one_not_yet_tried(
        fake_github, tmp_path, monkeypatch):
    """Two chains, each stopped at its first pick; the agent's call on the first is cut at the
    sync's deadline, the second's turn comes after it. Each waits for the agent, visibly (its
    row, its draft PR, the status issue, the dashboard), and is asked first at the next sync.
    Seen: the status issue and the dashboard said "not yet tried by the conflict agent" of both
    — of the chain whose call was cut too; only its PR's comment told the two apart. Should be:
    the chain whose call was cut says so, the other that it is not yet tried."""
    from tests.dashboard.test_dash_states_breaks import client_for

    resolved = "int x = 2;\n" + MIDDLE + "int z;\n"
    replies = [_answer("third_party/amd/x.cpp", resolved, stall_after=1, match="third_party/amd/x.cpp")]
    async with _cut_at_the_deadline(fake_github, tmp_path, monkeypatch, replies) as (w, ant, c2, c3, base, sleeps):
        cut, later = f"chain-{c2[:12]}", f"chain-{c3[:12]}"
        # the cut chain, stopped at its first pick, has its row and draft PR and waits
        prs = {p["head"]["ref"]: p async for p in w.alice.getiter("/repos/meta/triton/pulls?state=open")}
        assert prs[f"forksync/{cut}"]["draft"] is True and prs[f"forksync/{later}"]["draft"] is True
        rows = {u: sync_store.branch_row(w.bot.store, "meta/triton", f"forksync/{u}") for u in (cut, later)}
        assert rows[cut]["agent_waiting_since"] == base and rows[later]["agent_waiting_since"] > base
        [issue] = [i["body"] for i in await status_issue(w.alice)]
        lines = {u: next(line for line in issue.splitlines() if f"retry `{u}`" in line) for u in (cut, later)}
        assert CUT in lines[cut] and FIRST in lines[cut], lines[cut]
        assert "not yet tried" not in lines[cut], lines[cut]
        assert "not yet tried by the conflict agent: will be tried at the next sync" in lines[later], lines[later]
        assert FIRST in lines[later], lines[later]
        assert CUT not in lines[later], lines[later]
        c = await client_for(w.bot.store)
        try:
            units = {u["id"]: u for u in (await (await c.get("/api/v1/forks/meta/triton/units")).json())["units"]}
        finally:
            await c.close()
        assert CUT in units[cut]["state"] and "not yet tried" not in units[cut]["state"], units[cut]["state"]
        assert "not yet tried by the conflict agent" in units[later]["state"], units[later]["state"]
        assert FIRST in units[cut]["state"] and FIRST in units[later]["state"], units
        assert units[cut]["agent_waiting_since"] == base
