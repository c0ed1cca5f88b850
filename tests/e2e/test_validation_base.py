"""Failures already red on the base do not block a unit that adds none (local backend, real
pytest suite, the base's result computed on the base tip)."""
import pytest

from tests.support.validation_world import TESTS, close_world, fork_files, make_world

RED_ON_MAIN = TESTS.replace("assert add(-1, 1) == 0", "assert add(-1, 1) == 5")


@pytest.fixture
async def world(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path, files=fork_files(tests=RED_ON_MAIN))
    yield w
    await close_world(w)


async def test_pre_existing_failures_do_not_block(world):
    w = world
    head = w.push_branch("forksync/bundle-pre", {"NOTES.md": "n\n"}, "Note")
    pr = await w.open_pr("forksync/bundle-pre")
    await w.bot.settle()
    l1 = w.run_of(head, "forksync/L1/unit")
    assert (l1.conclusion, l1.output["title"]) == ("failure", "1 failing of 3")
    gate = w.run_of(head, "forksync/gate")
    assert gate.conclusion == "success"
    assert "tests_fork.test_basic::test_three (also red on base" in gate.output["summary"]
    assert (await w.pr(pr["number"]))["merged"] is True


async def test_a_new_failure_on_top_of_a_pre_existing_one_blocks(world):
    w = world
    broken = RED_ON_MAIN.replace("assert add(1, 1) == 2", "assert add(1, 1) == 3")
    head = w.push_branch("forksync/bundle-new", {"tests_fork/test_basic.py": broken}, "Break another")
    pr = await w.open_pr("forksync/bundle-new")
    await w.bot.settle()
    summary = w.run_of(head, "forksync/gate").output["summary"]
    assert "1 new failing test(s): tests_fork.test_basic::test_one" in summary
    assert "tests_fork.test_basic::test_three (also red on base" in summary
    assert (await w.pr(pr["number"]))["merged"] is False
