"""L3 on demand end to end, as people use it: ``/forksync l3 <workload>`` on a PR, the queued run
on a tick, its result, owners' sign-offs, and what the gate and the PR show when any of it goes
wrong (a short or red run, a head that moves, a result that never arrives, a broken config)."""

import pytest

from bot.app import schedules
from tests.support.validation_world import CONFIG, close_world, fork_files, make_world, tick_ctx

#: ``heavy`` declares four tests; the fork has three, so every run of it is short (red).
SHORT_L3 = CONFIG + """\
  - name: heavy
    level: L3
    command: python3 -m pytest -q -p no:cacheprovider -o addopts= tests_fork --junitxml=out/heavy.xml
    report: {format: junit, path: out/heavy.xml}
    expected_tests: 4
    timeout_s: 300
"""
GREEN_L3 = SHORT_L3.replace("expected_tests: 4", "expected_tests: 3")


def codes(w, sha):
    run = w.run_of(sha, "forksync/gate")
    return run.conclusion, [line.split("`")[1] for line in run.output["summary"].splitlines() if line.startswith("| ❌")]


async def say(w, who: str, number: int, body: str) -> None:
    await w.people[who].post(f"/repos/meta/triton/issues/{number}/comments", data={"body": body})
    await w.bot.settle()


async def replies_on(w, number: int) -> list[str]:
    return [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{number}/comments")
            if c["user"]["login"] == "forksync[bot]"]


@pytest.fixture
async def short_world(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path, files=fork_files(config=SHORT_L3))
    yield w
    await close_world(w)


async def test_a_short_l3_run_blocks_the_merge_even_when_signed_off(short_world):
    w = short_world
    head = w.push_branch("forksync/chain-llvm-l3", {"llvm/pin.txt": "llvm 22\n"}, "Bump the LLVM pin")
    pr = await w.open_pr("forksync/chain-llvm-l3")
    await w.bot.settle()
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    await say(w, "alice", pr["number"], "/forksync l3 heavy")
    assert codes(w, head) == ("failure", ["l3-pending", "l3-signoff-missing"])
    notes = await schedules.l3_tick(await tick_ctx(w), "meta/triton")
    assert notes[0] == f"L3 heavy@cpu on #{pr['number']}: red"
    assert w.run_of(head, "forksync/L3/heavy").conclusion == "failure"
    await say(w, "carol", pr["number"], "/forksync signoff llvm")
    assert (await w.pr(pr["number"]))["merged"] is False
    assert codes(w, head) == ("failure", ["l3-failed"])
    summary = w.run_of(head, "forksync/gate").output["summary"]
    assert "heavy/cpu" in summary and "the suite expects exactly 4" in summary, summary
