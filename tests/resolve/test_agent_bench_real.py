"""``bench resolve --agent`` on picks shaped like the Triton fork's: what a run records when one
pick's prompt is too long for the model, and the reason recorded for a deleted file."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace as NS

from bot.agents.client import AgentClient
from bot.config.agents import AgentSettings
from bot.fakeanthropic import FakeAnthropic, Reply
from bot.resolve.agent_bench import AgentAsk, case_of, score_agent
from bot.store import Store

SETTINGS = AgentSettings(max_retries=0, backoff_base_s=0, backoff_cap_s=0, timeout_s=10)


def _rep(sha: str, path: str, *, merged: str | None = "<<<<<<< fork\nx\n=======\ny\n>>>>>>> upstream\n",
         ours: str | None = "x\n", theirs: str | None = "y\n", landed: str | None = "xy\n"):
    f = NS(conflict=NS(path=path, binary=False, merged=merged, ours=ours, theirs=theirs, base="b\n"),
           landed=landed, kind="C++")
    return NS(pick=NS(fork_commit=sha, upstream="u" + sha, onto="o" + sha, time=1), files=(f,))


def _declined(*reps) -> NS:
    return NS(outcomes=[{"fork_commit": r.pick.fork_commit, "path": f.conflict.path, "part": "held-out",
                         "outcomes": {"chain": "declined"}} for r in reps for f in r.files])


def test_a_pick_whose_prompt_is_too_long_for_the_model_is_declined_and_the_run_goes_on():
    """A user sees: with a real model, one large pick (a 2,000-line WSDataPartition.cpp; the
    estimate of four characters a token is low for C++) gets 400 "prompt is too long", and the
    whole run stops with exit 2 telling them to check the URL and the key — nothing recorded, the
    other picks never asked. They should see that pick's files declined with the API's reason and
    every other pick scored."""
    big, small = _rep("f1", "WSDataPartition.cpp"), _rep("f2", "Coalesce.cpp")
    too_long = Reply(status=400, error_type="invalid_request_error",
                     error_message="prompt is too long: 212345 tokens > 200000 maximum", match="WSDataPartition.cpp")
    answer = Reply.tool("resolve_conflicts", {"files": [{"path": "Coalesce.cpp", "content": "xy\n", "action": "merged",
                                                         "reason": "both sides kept"}], "summary": "merged"},
                        match="Coalesce.cpp")

    async def run():
        async with FakeAnthropic([too_long, answer], api_key="k") as ant:
            async with AgentClient(SETTINGS, Store(), api_key="k", base_url=ant.base_url) as client:
                return await score_agent(client, [big, small], _declined(big, small), message_of=lambda s: "m",
                                         part="all")
    doc = asyncio.run(run())
    rows = {o["path"]: o for o in doc["outcomes"]}
    assert rows["Coalesce.cpp"]["outcome"] == "exact"
    assert rows["WSDataPartition.cpp"]["outcome"] == "declined"
    assert "prompt is too long" in rows["WSDataPartition.cpp"]["why"]


def test_a_file_deleted_on_one_side_is_not_called_binary():
    """A user sees: in a run on the Triton fork, `.github/workflows/integration-tests-amd.yml`
    (deleted by the fork, changed upstream) is declined as "binary file". They should read that it
    was deleted on one side and changed on the other, as a live resolution says."""
    rep = _rep("f1", ".github/workflows/integration-tests-amd.yml", merged=None, ours=None, theirs="on: push\n",
               landed=None)
    case = case_of(AgentAsk(rep, "held-out", rep.files), "m")
    assert case.unsupported == (".github/workflows/integration-tests-amd.yml: deleted on one side and changed on "
                                "the other")
