"""Sharded suites: the split by test id, the merge into one saturated verdict, and a suite run end
to end as two runner processes by the local backend (bot/validation/backends.py)."""
from __future__ import annotations

import sys

import pytest
import yaml

from bot.config.suites import SuiteConfig
from bot.validation.backends import LocalBackend
from gpu_runner.__main__ import main as runner_main
from gpu_runner.result import Counts, Environment, Reason, RunResult, TestResult
from gpu_runner.shards import merge, parse_shard, shard_of, split
from tests.gpu_runner.test_runner import PYTEST, commit, git

SHA = "c" * 40
LETTERS = "abcdefghijkl"
IDS = [f"tests/test_letters.py::test_{c}" for c in LETTERS]


def test_the_split_is_fixed_by_the_test_id():
    assert {i: [t[-1] for t in ids] for i, ids in split(IDS, 2).items()} == {
        1: ["a", "b", "c", "j", "k", "l"], 2: ["d", "e", "f", "g", "h", "i"]}
    assert split(["a", "b", "c", "d", "e", "f"], 3) == {1: ["f"], 2: ["a", "b"], 3: ["c", "d", "e"]}
    assert split([], 2) == {1: [], 2: []}
    assert shard_of("examples.kernels.test_kernels::test_add[small-fp32]", 4) == 3
    assert all(shard_of(t, 1) == 1 for t in IDS)


@pytest.mark.parametrize("spec", ["0/2", "3/2", "1/0", "2", "1/65", "a/b"])
def test_a_bad_shard_is_named(spec):
    with pytest.raises(ValueError, match=f"shard '{spec}': give I/N with 1 <= I <= N <= 64"):
        parse_shard(spec)


def result(shard: str, ids: list[str], failed: tuple[str, ...] = (), reasons=()) -> RunResult:
    tests = [TestResult(id=t, name=t, outcome="failed" if t in failed else "passed") for t in ids]
    return RunResult(suite="s", level="L1", commit=SHA, platform="cpu", verdict="red" if reasons else "green",
                     outcome="fail" if reasons else "pass", reasons=list(reasons),
                     counts=Counts(total=len(ids), passed=len(ids) - len(failed), failed=len(failed), harness_total=len(ids)),
                     tests=tests, environment=Environment(runner_id="r"), shard=shard)


def merged(results, expected=12, **kw):
    return merge(results, 2, suite="s", level="L1", commit=SHA, platform="cpu", backend="local", expected_tests=expected, **kw)


def test_green_shards_sum_to_one_green_result():
    halves = split(IDS, 2)
    m = merged({1: result("1/2", halves[1]), 2: result("2/2", halves[2])})
    assert (m.verdict, m.outcome, m.shard, m.counts.ran, m.counts.harness_total) == ("green", "pass", "all/2", 12, 12)
    assert sorted(t.id for t in m.tests) == sorted(IDS)


@pytest.mark.parametrize("case, expected_reasons, outcome", [
    ("missing", [("shard-missing", "shard 2/2 sent no result")], "error"),
    ("failed", [("test-failures", "shard 2/2: 1 failed, 0 errors: tests/test_letters.py::test_d")], "fail"),
    ("short", [("count-mismatch", "12 tests ran, the suite expects exactly 13 (fewer: tests went missing; "
        "if they were removed on purpose, set expected_tests: 12)")], "error"),
    ("overlap", [("shard-overlap", "tests ran in two shards: tests/test_letters.py::test_a (shards 1 and 2)"),
                 ("count-mismatch", "13 tests ran, the suite expects exactly 12 (more: set expected_tests: 13)")], "error"),
    ("mismatch", [("shard-mismatch", "the result given for shard 2/2 is for 's' at cccccccccccc on cpu, shard 1/2")],
     "error"),
])
def test_a_shard_that_is_missing_or_wrong_makes_the_whole_red(case, expected_reasons, outcome):
    one, two = split(IDS, 2)[1], split(IDS, 2)[2]
    shards = {1: result("1/2", one), 2: result("2/2", two)}
    expected = 12
    if case == "missing":
        shards[2] = None
    elif case == "failed":
        shards[2] = result("2/2", two, failed=(two[0],), reasons=[Reason(code="test-failures",
                           detail=f"1 failed, 0 errors: {two[0]}")])
    elif case == "short":
        expected = 13
    elif case == "overlap":
        shards[2] = result("2/2", [*two, one[0]])
    elif case == "mismatch":
        shards[2] = result("1/2", two)
    m = merged(shards, expected)
    assert [(r.code, r.detail) for r in m.reasons] == expected_reasons
    assert (m.verdict, m.outcome) == ("red", outcome)


TEST_LETTERS = "\n".join(f"def test_{c}():\n    assert True\n" for c in LETTERS)


@pytest.fixture
def letters_repo(tmp_path):
    r = tmp_path / "fork"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    sha = commit(r, {"tests/test_letters.py": TEST_LETTERS}, "letters")
    return r, sha


def config_text(**kw) -> str:
    s = dict(name="letters", command=f"{PYTEST} tests --junitxml=out/junit.xml",
             report={"format": "junit", "path": "out/junit.xml"}, expected_tests=12, timeout_s=120, infra_retries=0,
             env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, shards=2)
    s.update(kw)
    return yaml.safe_dump({"suites": [s]})


@pytest.mark.parametrize("expected, verdict, reasons", [
    (12, "green", []),
    (13, "red", [("count-mismatch", "12 tests ran, the suite expects exactly 13 (fewer: tests went missing; "
        "if they were removed on purpose, set expected_tests: 12)")]),
])
def test_the_local_backend_runs_a_sharded_suite_as_two_runner_processes(letters_repo, tmp_path, expected, verdict, reasons):
    repo, sha = letters_repo
    text = config_text(expected_tests=expected)
    suite = SuiteConfig.model_validate(yaml.safe_load(text)["suites"][0])
    backend = LocalBackend(tmp_path / "work", remote_url=None, python=sys.executable)
    r = backend.run_sync(repo, sha, suite, "cpu", text)
    assert (r.verdict, r.shard, r.counts.ran, r.counts.harness_total) == (verdict, "all/2", 12, 12)
    assert [(x.code, x.detail) for x in r.reasons] == reasons
    # each runner process ran its own half (pytest deselected the rest), as split() says
    assert sorted(t.name for t in r.tests) == sorted(f"test_{c}" for c in LETTERS)
    assert [a.number for a in r.attempts] == [1, 2]
    assert r.stdout_tail.count("6 passed, 6 deselected") == 2           # pytest in each shard's process
    assert "--- shard 1/2 ---" in r.stdout_tail and "--- shard 2/2 ---" in r.stdout_tail


def test_merge_on_the_command_line_counts_a_missing_shard_red(letters_repo, tmp_path, capsys):
    repo, sha = letters_repo
    cfg = tmp_path / "forksync.yml"
    cfg.write_text(config_text())
    out1 = tmp_path / "r1.json"
    assert runner_main(["run", "--suite", "letters", "--commit", sha, "--repo", str(repo), "--config", str(cfg),
                        "--out", str(out1), "--shard", "1/2"]) == 0
    one = RunResult.from_json(out1.read_text())
    assert (one.shard, one.counts.ran, [t.name for t in one.tests]) == ("1/2", 6, [f"test_{c}" for c in "abcjkl"])
    merged_out = tmp_path / "merged.json"
    assert runner_main(["merge", "--suite", "letters", "--commit", sha, "--config", str(cfg), "--out", str(merged_out),
                        str(out1), str(tmp_path / "absent.json")]) == 1
    m = RunResult.from_json(merged_out.read_text())
    assert [(x.code, x.detail) for x in m.reasons] == [("shard-missing", "shard 2/2 sent no result")]
    assert "shard-missing: shard 2/2 sent no result" in capsys.readouterr().out


def test_an_unsharded_suite_still_judges_its_own_count(letters_repo, tmp_path):
    """Without --shard nothing changes: a run is judged against expected_tests by itself."""
    repo, sha = letters_repo
    cfg = tmp_path / "forksync.yml"
    cfg.write_text(config_text(shards=1, expected_tests=11))
    out = tmp_path / "r.json"
    assert runner_main(["run", "--suite", "letters", "--commit", sha, "--repo", str(repo), "--config", str(cfg),
                        "--out", str(out)]) == 1
    r = RunResult.from_json(out.read_text())
    assert (r.shard, [x.code for x in r.reasons]) == ("", ["count-mismatch"])
