"""Proposed fixes and test-result summaries through the local Anthropic server (honest model)."""
from __future__ import annotations

import pytest

from bot.agents.client import AgentClient
from bot.agents.fix import FixRequest, SuspectDiff, propose_fix
from bot.agents.summary import count_outcomes, summarize_results
from bot.config.agents import AgentSettings
from bot.fakeanthropic import FakeAnthropic, Reply
from bot.store import Store
from bot.triage.signature import Signature
from gpu_runner.result import Environment, Reason, RunResult, TestResult

SETTINGS = AgentSettings(max_retries=0, timeout_s=10)
PATCH = ("--- a/python/triton/ops/matmul.py\n+++ b/python/triton/ops/matmul.py\n@@ -10,3 +10,3 @@\n"
         "     acc = tl.zeros((BM, BN), dtype=tl.float32)\n-    BK = 128\n+    BK = 64\n")
LOG = ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144, "
       "Hardware limit: 232448. Reducing block sizes or `num_stages` may help.\n"
       "  File \"/home/jdoe/triton/python/triton/ops/matmul.py\", line 12\n")


def fix_reply(patch: str = PATCH, confidence: str = "medium") -> Reply:
    return Reply(tool_uses=[{"name": "propose_fix", "input": {
        "diagnosis": "The suspect raised BK to 128, so the tile needs 262144 bytes of shared memory; "
                     "the H200 allows 232448.", "patch": patch, "confidence": confidence}}])


def request() -> FixRequest:
    sig = Signature("compile", "OutOfResources", "out of resource: shared memory, Required: <N>, Hardware limit: 232448",
                    rule="python")
    return FixRequest.from_group({"rule": "matmul-smem-overflow", "signature": sig, "class": "real",
                                  "tests": ["test_matmul.py::test_op"]}, logs=[LOG],
                                 suspects=[SuspectDiff("d" * 40, "[matmul] bigger tiles", "-    BK = 64\n+    BK = 128\n")])


def test_fix_request_from_triage_signature():
    req = request()
    assert (req.group, req.klass, req.tests) == ("matmul-smem-overflow", "real", ("test_matmul.py::test_op",))
    assert req.signature == "compile | OutOfResources: out of resource: shared memory, Required: <N>, Hardware limit: 232448"
    bare = FixRequest.from_group(Signature("check", "AssertionError", "Tensor-likes are not close!", test="t::x"))
    assert (bare.group, bare.tests) == (Signature("check", "AssertionError", "Tensor-likes are not close!", test="t::x").digest, ("t::x",))


async def test_proposed_fix_is_rendered_as_a_suggestion():
    async with FakeAnthropic([fix_reply()]) as fake:
        async with AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url) as c:
            out = await propose_fix(c, request())
    assert (out.status, out.confidence, out.patch) == ("proposed", "medium", PATCH)
    assert out.body == (
        "### Proposed fix (agent, not applied)\n\n"
        "An agent (`claude-sonnet-4-6`) read this issue's signature group, the redacted logs and the suspect diffs. "
        "Confidence: **medium**.\n\n"
        "**Diagnosis.** The suspect raised BK to 128, so the tile needs 262144 bytes of shared memory; the H200 allows 232448.\n\n"
        "Suggested patch (a suggestion only — never pushed; apply it yourself if it is right):\n\n"
        f"```diff\n{PATCH.rstrip()}\n```\n")
    sent = fake.requests[0].body
    assert sent["tool_choice"] == {"type": "tool", "name": "propose_fix"}
    assert [t["name"] for t in sent["tools"]] == ["propose_fix"]
    prompt = sent["messages"][0]["content"]
    assert "/home/[REDACTED-user-1]/triton" in prompt and "jdoe" not in prompt
    assert "Root cause: matmul-smem-overflow (class: real)" in prompt


async def test_bad_patch_is_rejected_and_infra_is_never_diagnosed():
    async with FakeAnthropic([fix_reply(patch="please lower BK")]) as fake:
        async with AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url) as c:
            out = await propose_fix(c, request())
            infra = await propose_fix(c, FixRequest("gpu-busy", "setup | InfraError: all CUDA-capable devices are busy",
                                                    "infrastructure"))
    assert (out.status, out.rail, out.detail) == ("rejected", "patch is a unified diff",
                                                  "no `--- `/`@@` lines: not a unified diff")
    assert out.body == ("### Proposed fix (agent, not applied)\n\nAn agent's proposal was rejected by the rails "
                        "(patch is a unified diff): no `--- `/`@@` lines: not a unified diff\n")
    assert infra.status == "skipped" and len(fake.requests) == 1
    assert infra.body.endswith("No proposed fix: infrastructure failures are tracked, never diagnosed or blamed\n")


def run_result() -> RunResult:
    return RunResult(
        suite="l1-kernels", level="L1", commit="e" * 40, verdict="red", outcome="fail",
        reasons=[Reason(code="test-failures", detail="1 failed")],
        tests=[TestResult(id="k::test_add[fp32]", name="test_add[fp32]", outcome="passed"),
               TestResult(id="k::test_matmul[fp16]", name="test_matmul[fp16]", outcome="failed",
                          message="AssertionError: Tensor-likes are not close!"),
               TestResult(id="k::test_dot[bf16]", name="test_dot[bf16]", outcome="skipped")],
        environment=Environment(runner_id="h200-1"))


def test_count_outcomes_of_a_runner_result():
    assert count_outcomes(run_result().model_dump(by_alias=True, mode="json")) == (
        {"failed": 1, "passed": 1, "skipped": 1}, ["k::test_matmul[fp16]"])


async def test_summary_with_and_without_agent(tmp_path):
    off = await summarize_results(None, run_result(), "L1 on eeeeeeeeeeee")
    assert off.body == ("### Test results — L1 on eeeeeeeeeeee\n\nVerdict: **red (fail): test-failures: 1 failed**\n\n"
                        "failed: **1** · passed: **1** · skipped: **1**\n\nFailing:\n\n- `k::test_matmul[fp16]`\n\n"
                        "<sub>No agent summary: agents are off</sub>\n")
    async with FakeAnthropic([Reply(text="One fp16 matmul case lost precision; look at the accumulator dtype.")]) as fake:
        async with AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url) as c:
            on = await summarize_results(c, run_result(), "L1 on eeeeeeeeeeee")
    assert on.summary == "One fp16 matmul case lost precision; look at the accumulator dtype."
    assert on.body.endswith("**Agent summary** (`claude-sonnet-4-6`; counts above are computed by forksync, not by "
                            "the agent): One fp16 matmul case lost precision; look at the accumulator dtype.\n")
    assert '"id": "k::test_matmul[fp16]"' in fake.requests[0].body["messages"][0]["content"]


async def test_summary_over_budget_says_why():
    async with FakeAnthropic([]) as fake:
        async with AgentClient(SETTINGS.model_copy(update={"daily_token_budget": 10}), Store(), api_key="k",
                               base_url=fake.base_url) as c:
            out = await summarize_results(c, run_result())
    assert fake.requests == []
    assert out.reason.startswith("agents skipped: daily token budget reached (0 of 10 tokens used on ")
    assert "<sub>No agent summary: agents skipped: daily token budget reached" in out.body


def test_fix_request_from_a_real_triage_group():
    from bot.model import CommitInfo, FileChange
    from bot.triage.suspects import Suspect

    sig = Signature("compile", "OutOfResources", "out of resource: shared memory, Required: <N>, Hardware limit: 232448")
    try:
        from bot.triage.group import Group
        group = Group("sig-abc", "real", sig, None)
    except TypeError:                                  # triage's Group changed shape: skip the adapter check
        pytest.skip("bot.triage.group.Group has a different constructor now")
    commit = CommitInfo("f" * 40, ("e" * 40,), "[matmul] bigger tiles", files=(FileChange("python/triton/ops/matmul.py"),))
    req = FixRequest.from_group(group.to_agent_input([Suspect("f" * 40, "[matmul] bigger tiles", "dev", 6, ("file",),
                                                              upstream="1" * 40, commit=commit)]))
    assert (req.group, req.klass, req.logs) == ("sig-abc", "real", ())
    assert req.suspects == (SuspectDiff("f" * 40, "[matmul] bigger tiles",
                                        "(diff not at hand) changed files:\npython/triton/ops/matmul.py", "1" * 40),)
    assert FixRequest.from_group(group).group == "sig-abc"
