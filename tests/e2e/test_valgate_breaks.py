"""Breaks of validation on the local GitHub (helper ``valgate``): the real bot, store, runner and
git, with what a person sees on the PR, the check runs and the regression issues."""
from __future__ import annotations

import subprocess

from bot.l2 import service as l2_service
from tests.e2e.test_validation_schedules import BENCH, L2_CONFIG
from tests.support.github import commit_files, git, make_source_repo
from tests.support.validation_world import LIB, close_world, fork_files, make_world, tick_ctx

# --------------------------------------------------------------------------- a whole module skipped
MIN_CONFIG = """\
suites:
  - name: unit
    command: python3 -m pytest -q -p no:cacheprovider -o addopts= tests_fork --junitxml=out/unit.xml
    report: {format: junit, path: out/unit.xml}
    min_tests: 2
    timeout_s: 300
    infra_retries: 0
"""
TESTS = """\
import pytest
from lib import add


@pytest.mark.parametrize("a", [1, 2, 3])
def test_add(a):
    assert add(a, 1) == a + 1
"""
MORE = """\
from lib import add


def test_zero():
    assert add(0, 0) == 0


def test_neg():
    assert add(-1, -1) == -2
"""


def gate(w, sha):
    run = w.run_of(sha, "forksync/gate")
    return run.conclusion, [line.split("`")[1] for line in run.output["summary"].splitlines() if line.startswith("| ❌")]


async def test_a_pr_that_skips_a_whole_test_module_is_newly_skipped(fake_github, tmp_path):
    """A suite with a floor (``min_tests: 2``, as docs/validation.md allows) over two modules, 3 + 2
    tests. A sync PR breaks ``add`` and hides the module that tests it behind a module-level skip
    (``pytest.importorskip("no_such_module")`` — or ``pytest.skip(allow_module_level=True)``). pytest's
    JUnit then has ONE skipped case named for the module (``tests_fork.test_basic``) instead of the
    three test ids, so the gate's newly-skipped rule, which looks for the base's test ids among the
    head's skipped ones, finds nothing. What a user sees: the suite green with 2 tests, the gate
    green, and the sync PR merged with a broken ``add`` — the very attack the newly-skipped rule
    exists for. What they should see: ``newly-skipped`` naming the three tests that ran on the base,
    and the PR not merged."""
    files = fork_files(config=MIN_CONFIG, tests=TESTS)
    files["tests_fork/test_more.py"] = MORE
    w = await make_world(fake_github, tmp_path, files=files)
    try:
        hidden = 'import pytest\npytest.importorskip("no_such_module")\n' + TESTS
        broken = LIB.replace("a + b", "a + b + (1 if a > 0 else 0)")      # test_more's cases still pass
        head = w.push_branch("forksync/bundle-hide", {"tests_fork/test_basic.py": hidden, "lib.py": broken},
                             "Break add, skip its tests")
        pr = await w.open_pr("forksync/bundle-hide")
        await w.bot.settle()
        conclusion, blocking = gate(w, head)
        merged = (await w.pr(pr["number"]))["merged"]
        assert (conclusion, "newly-skipped" in blocking, merged) == ("failure", True, False), (conclusion, blocking)
    finally:
        await close_world(w)


# --------------------------------------------------------------------------- two forks, one store
async def test_the_l2_series_of_two_forks_served_by_one_bot_are_kept_apart(fake_github, tmp_path):
    """One forksync serves two forks of the same project (``meta/triton`` and ``meta/triton-amd``,
    both tracked; same benchmark names). Each fork's own series is flat: meta/triton measures 100
    TFLOP/s on every commit, meta/triton-amd 50 (another kernel). The ``l2_points`` table has no
    fork column, so the two forks' points land in one series, ordered by first-parent position.
    What a user sees: a "regression" of −50 % investigated on the fork whose numbers never moved,
    between a sha of one fork and a sha of the other (notes ``L2 change on toy[triton]… at <the
    other fork's sha>: not confirmed …``, an ``l2_regressions`` row; with shared history it would
    bisect and open a back-out). What they should see: no L2 change on either fork."""
    files = {"README.md": "fork\n", ".github/forksync.yml": L2_CONFIG, "bench.py": BENCH, "speed.txt": "1.0\n"}
    w = await make_world(fake_github, tmp_path, files=files)
    try:
        ctx = await tick_ctx(w)
        now = 1_000_000.0
        notes: dict[str, list[str]] = {"meta/triton": [], "meta/triton-amd": []}

        async def tick(full: str):
            nonlocal now
            now += 3600
            notes[full] += await l2_service.l2_tick(ctx, full, now=now, interval_s=0)

        await tick("meta/triton")
        for i in range(2, 8):
            w.push_main({f"f{i}.txt": f"{i}\n"}, f"Unit {i}")
            await tick("meta/triton")
        # the second fork: a longer history, its own kernel (half the speed), the same benchmark
        amd_files = {**files, "speed.txt": "0.5\n"}
        make_source_repo(tmp_path / "src-amd", [amd_files] + [{f"h{i}.txt": f"{i}\n"} for i in range(12)])
        amd = w.fake.create_repo("meta/triton-amd", source=tmp_path / "src-amd")
        w.fake.add_collaborator(amd, "alice", "write")
        work = tmp_path / "work-amd"
        subprocess.run(["git", "clone", "-q", str(amd.path), str(work)], check=True, capture_output=True)
        await tick("meta/triton-amd")
        for i in range(3):
            commit_files(work, {f"amd{i}.txt": f"{i}\n"}, f"AMD unit {i}")
            git(work, "push", "-q", "origin", "HEAD:refs/heads/main")
            await tick("meta/triton-amd")
        w.push_main({"f8.txt": "8\n"}, "Unit 8")
        await tick("meta/triton")

        changes = {full: [n for n in ns if n.startswith(("L2 change", "L2 regression"))] for full, ns in notes.items()}
        assert changes == {"meta/triton": [], "meta/triton-amd": []}
        assert [(r["repo"], r["status"]) for r in w.bot.store.db["l2_regressions"].rows] == []
    finally:
        await close_world(w)
