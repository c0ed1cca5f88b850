"""The local runner on real git repositories: a tiny suite with a real build step (cc), real
pytest runs producing JUnit, and every way a run can go wrong — each a red result with its reason."""
from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml

from bot.config.suites import SuiteConfig
from gpu_runner.__main__ import main as runner_main
from gpu_runner.local import CheckoutError
from gpu_runner.runner import LocalOptions, redact, run_local

GIT_ENV = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com", "GIT_COMMITTER_NAME": "Dev",
           "GIT_COMMITTER_EMAIL": "dev@example.com", "GIT_CONFIG_NOSYSTEM": "1"}
PYTEST = "python3 -m pytest -q -p no:cacheprovider"

SQUARE_C = textwrap.dedent("""\
    #include <stdio.h>
    #include <stdlib.h>
    int main(int argc, char **argv) { long x = atol(argv[1]); printf("%ld\\n", x * x); return 0; }
    """)
TEST_SQUARE = textwrap.dedent("""\
    import subprocess
    import pytest

    @pytest.mark.parametrize("x", [2, 3, 12])
    def test_square(x):
        out = subprocess.run(["build/square", str(x)], capture_output=True, text=True, check=True).stdout
        assert int(out) == x * x, f"square({x}) printed {out.strip()}"
    """)


def git(cwd: Path, *args: str) -> str:
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                       env={**os.environ, **GIT_ENV, "HOME": str(cwd)})
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    for name, content in files.items():
        f = repo / name
        if content is None:
            f.unlink()
            continue
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(content)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def suite(**kw) -> SuiteConfig:
    base = dict(name="tiny", build="mkdir -p build && cc -O1 -o build/square src/square.c",
                command=f"{PYTEST} tests --junitxml=out/junit.xml", report={"format": "junit", "path": "out/junit.xml"},
                expected_tests=3, timeout_s=120, infra_retries=0,
                env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})     # this repo's tests need no plugin: faster
    base.update(kw)
    return SuiteConfig.model_validate(base)


def codes(result):
    return [r.code for r in result.reasons]


def test_green_with_a_real_build_in_an_isolated_worktree(repo):
    sha = git(repo, "rev-parse", "HEAD")
    r = run_local(suite(), repo, "main", LocalOptions(runner_id="ci-1"))
    assert (r.verdict, r.outcome, r.reasons) == ("green", "pass", [])
    assert (r.commit, r.counts.total, r.counts.passed, r.counts.harness_total) == (sha, 3, 3, 3)
    assert [t.id for t in r.tests] == [f"tests.test_square::test_square[{x}]" for x in (2, 3, 12)]
    assert [(a.number, a.build_exit_code, a.exit_code) for a in r.attempts] == [(1, 0, 0)]
    assert r.durations.build > 0 and r.durations.command > 0 and r.durations.total >= r.durations.command
    assert (r.environment.runner_id, r.environment.torch) == ("ci-1", "2.13.0+cpu")
    # the caller's checkout is untouched and the worktree is gone
    assert not (repo / "build").exists() and not (repo / "out").exists()
    assert len(git(repo, "worktree", "list").splitlines()) == 1


def test_older_commit_runs_while_head_is_broken(repo):
    good = git(repo, "rev-parse", "HEAD")
    commit(repo, {"src/square.c": SQUARE_C.replace("x * x", "x + x")}, "break square")
    bad = run_local(suite(), repo, "HEAD")
    assert (bad.verdict, bad.outcome, codes(bad)) == ("red", "fail", ["test-failures"])
    assert bad.failing == ("tests.test_square::test_square[3]", "tests.test_square::test_square[12]")
    t = next(t for t in bad.tests if t.outcome == "failed")
    assert t.message == "AssertionError: square(3) printed 6"
    assert "assert int(out) == x * x" in t.traceback
    assert run_local(suite(), repo, good).verdict == "green"


def test_build_failure_is_red_and_the_command_never_runs(repo):
    commit(repo, {"src/square.c": "int main( {"}, "syntax error")
    r = run_local(suite(), repo, "HEAD")
    assert codes(r) == ["build-failed", "report-missing"]
    assert r.attempts[0].build_exit_code == 1 and r.attempts[0].exit_code is None
    assert "error" in r.stderr_tail


def test_timeout_kills_the_run(repo):
    r = run_local(suite(build=None, command="sleep 30 & sleep 30", timeout_s=1), repo, "HEAD")
    assert codes(r) == ["timed-out", "report-missing"]
    assert r.attempts[0].timed_out and r.attempts[0].exit_code is None and r.durations.command < 15


def test_crashed_command(repo):
    kill = "python3 -c 'import os, signal; os.kill(os.getpid(), signal.SIGKILL)'"
    r = run_local(suite(build=None, command=kill), repo, "HEAD")
    assert codes(r) == ["runner-crashed", "report-missing"]
    assert r.reasons[0].detail == "the suite's command was killed by signal 9"


def test_missing_report(repo):
    r = run_local(suite(command=f"{PYTEST} tests"), repo, "HEAD")
    # the JUnit file is missing, but the streaming per-test report tells the three tests that ran
    assert codes(r) == ["report-missing"]
    assert r.reasons[0].detail == "no report at 'out/junit.xml'; 3 finished tests read from the streaming per-test report"
    assert [t.outcome for t in r.tests] == ["passed"] * 3 and r.not_run == []


def test_committed_report_is_stale(repo):
    junit = '<testsuite tests="3">' + '<testcase classname="c" name="t{}"/>' * 3 + "</testsuite>"
    commit(repo, {"out/junit.xml": junit.format(1, 2, 3)}, "a report in the tree")
    r = run_local(suite(command="true"), repo, "HEAD")
    assert codes(r) == ["report-stale"]


def test_unparsable_report(repo):
    r = run_local(suite(command="mkdir -p out && echo '<testsuite><testcase' > out/junit.xml"), repo, "HEAD")
    assert codes(r) == ["report-unparsable"] and "not valid JUnit XML" in r.reasons[0].detail


def test_zero_tests(repo):
    commit(repo, {"tests/test_square.py": None}, "tests gone")
    r = run_local(suite(), repo, "HEAD")
    # pytest exits 5 when it collects nothing
    assert codes(r) == ["runner-crashed", "zero-tests", "count-mismatch"]


def test_fewer_tests_than_expected(repo):
    commit(repo, {"tests/test_square.py": TEST_SQUARE.replace("[2, 3, 12]", "[2, 3]")}, "one test fewer")
    r = run_local(suite(), repo, "HEAD")
    assert (codes(r), r.reasons[0].detail) == (
        ["count-mismatch"], "2 tests ran, the suite expects exactly 3 (fewer: tests went missing; "
        "if they were removed on purpose, set expected_tests: 2)")
    r = run_local(suite(expected_tests=None, min_tests=3), repo, "HEAD")
    assert codes(r) == ["below-floor"]


def test_skipped_and_xfail_tests_do_not_count(repo):
    # a PR marks the tests it breaks skip / xfail: the report still holds 3, but only 1 ran
    hidden = TEST_SQUARE.replace('@pytest.mark.parametrize("x", [2, 3, 12])', textwrap.dedent("""\
        @pytest.mark.parametrize("x", [2, pytest.param(3, marks=pytest.mark.skip(reason="flaky")),
                                       pytest.param(12, marks=pytest.mark.xfail(reason="wip"))])"""))
    commit(repo, {"src/square.c": SQUARE_C.replace("x * x", "x == 2 ? 4 : x"), "tests/test_square.py": hidden},
           "hide two tests")
    r = run_local(suite(), repo, "HEAD")
    assert (r.counts.total, r.counts.passed, r.counts.skipped) == (3, 1, 2)
    assert (r.verdict, codes(r), r.reasons[0].detail) == ("red", ["count-mismatch"], (
        "1 tests ran, the suite expects exactly 3: 2 skipped or xfail tests do not count; make them run, or, if "
        "they are meant to skip here, set expected_tests: 1"))
    assert [t.id for t in r.tests if t.outcome == "skipped"] == [
        "tests.test_square::test_square[3]", "tests.test_square::test_square[12]"]
    # counts per platform: 1 is what this platform promises, so it is green here and red elsewhere
    per = suite(expected_tests={"cpu": 1, "h200": 3}, platforms=["cpu", "h200"])
    assert run_local(per, repo, "HEAD", LocalOptions(platform="cpu")).verdict == "green"
    r = run_local(per, repo, "HEAD", LocalOptions(platform="h200"))
    assert (codes(r), r.reasons[0].detail.endswith("set expected_tests.h200: 1")) == (["count-mismatch"], True)


def test_report_disagrees_with_the_harness(repo):
    # the JUnit file comes from one pytest invocation, the last summary line from another
    cmd = f"{PYTEST} tests --junitxml=out/junit.xml && {PYTEST} tests -k 'not 12'"
    r = run_local(suite(command=cmd), repo, "HEAD")
    assert codes(r) == ["count-disagrees-with-harness"]
    assert r.reasons[0].detail == "the report holds 3 tests but the harness reported 2"


def test_infra_error_is_retried_then_passes(repo, tmp_path):
    marker = tmp_path / "first-attempt-done"
    cmd = (f"if [ ! -e {marker} ]; then touch {marker}; "
           "echo 'CUDA driver version is insufficient for CUDA runtime version' >&2; exit 1; fi; "
           f"{PYTEST} tests --junitxml=out/junit.xml")
    r = run_local(suite(command=cmd, infra_retries=1), repo, "HEAD")
    assert r.verdict == "green"
    assert [(a.number, a.exit_code, a.infra_error) for a in r.attempts] == [
        (1, 1, "driver-mismatch: CUDA driver version is insufficient for CUDA runtime version"), (2, 0, None)]


def test_infra_error_that_persists_is_red(repo):
    cmd = "echo 'write failed: No space left on device' >&2; exit 1"
    r = run_local(suite(command=cmd, infra_retries=2), repo, "HEAD")
    assert codes(r) == ["infra-error", "report-missing"] and len(r.attempts) == 3


def test_a_download_hash_failure_that_persists_is_red_as_the_commits(repo):
    """pip's hash check fails alike on a cut download (a retry clears it) and on a pin the commit
    left stale (every retry fails): one that persists is the commit's failure, not the machine's."""
    cmd = ("echo 'ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.' >&2; "
           "echo '    Expected sha256 1111' >&2; echo '         Got        2222' >&2; exit 1")
    r = run_local(suite(command=cmd, infra_retries=2), repo, "HEAD")
    assert len(r.attempts) == 3
    assert r.attempts[0].infra_error == ("download-corrupt: ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE "
                                         "REQUIREMENTS FILE.")
    assert r.outcome != "infrastructure" and "infra-error" not in codes(r)


def test_real_failures_are_never_retried(repo):
    commit(repo, {"src/square.c": SQUARE_C.replace("x * x", "x + x")}, "break square")
    r = run_local(suite(infra_retries=3), repo, "HEAD")
    assert codes(r) == ["test-failures"] and len(r.attempts) == 1


def test_secrets_are_redacted_from_log_tails(repo, monkeypatch):
    monkeypatch.setenv("FORKSYNC_GITHUB_TOKEN", "ghs_abcdefghijklmnop")
    r = run_local(suite(command="echo token=$FORKSYNC_GITHUB_TOKEN; exit 3"), repo, "HEAD")
    assert r.stdout_tail == "token=***\n"
    assert redact("key sekrit123 here", {"AWS_SECRET_ACCESS_KEY": "sekrit123", "HOME": "/root"}) == "key *** here"


LIT_SUITE = {
    "lit/lit.cfg.py": "import lit.formats\nconfig.name = 'Tiny'\nconfig.test_format = lit.formats.ShTest()\n"
                      "config.suffixes = ['.txt']\n",
    "lit/pass.txt": "# RUN: echo hello | grep hello\n",
    "lit/fail.txt": "# RUN: echo hello | grep bye\n",
    "lit/unsup.txt": "# REQUIRES: h200\n# RUN: true\n",
    "lit/xfail.txt": "# XFAIL: *\n# RUN: false\n",
}


def test_real_lit_run_read_from_its_own_output(repo):
    commit(repo, LIT_SUITE, "a lit suite")
    # 3 ran (pass, fail, xfail — lit's XFAIL ran and failed as expected); the unsupported one was skipped
    r = run_local(suite(build=None, command="lit -v lit", report={"format": "lit", "path": "-"}, expected_tests=3),
                  repo, "HEAD")
    assert (codes(r), r.failing, r.counts.harness_total) == (["test-failures"], ("Tiny :: fail.txt",), 4)
    assert sorted((t.name, t.outcome) for t in r.tests) == [
        ("fail.txt", "failed"), ("pass.txt", "passed"), ("unsup.txt", "skipped"), ("xfail.txt", "passed")]
    fail = next(t for t in r.tests if t.outcome == "failed")
    assert "# error: command failed with exit status: 1" in fail.traceback
    # the same run through lit's own JUnit writer
    r = run_local(suite(build=None, command="mkdir -p out && lit -v lit --xunit-xml-output out/lit.xml",
                        report={"format": "junit", "path": "out/lit.xml"}, expected_tests=3), repo, "HEAD")
    assert (codes(r), r.counts.failed, r.counts.skipped) == (["test-failures"], 1, 1)


def test_bad_commit_is_an_input_error(repo):
    with pytest.raises(CheckoutError, match="commit 'no-such-ref' not found in"):
        run_local(suite(), repo, "no-such-ref")


def test_in_place_requires_the_checkout_at_the_commit(repo):
    first = git(repo, "rev-parse", "HEAD")
    commit(repo, {"README": "x\n"}, "second")
    with pytest.raises(CheckoutError, match=f"is at .*, not at the requested commit {first[:12]}"):
        run_local(suite(), repo, first, LocalOptions(in_place=True))


# --- the command line ---------------------------------------------------------------------------

def write_config(repo: Path, *suites: dict) -> Path:
    cfg = repo.parent / "forksync.yml"
    cfg.write_text(yaml.safe_dump({"suites": list(suites)}))
    return cfg


def test_cli_exit_codes_and_result_file(repo, capsys):
    s = suite().model_dump(exclude_none=True)
    cfg = write_config(repo, s)
    out = repo.parent / "result.json"
    assert runner_main(["run", "--suite", "tiny", "--commit", "HEAD", "--repo", str(repo), "--config", str(cfg),
                        "--out", str(out), "--platform", "cpu"]) == 0
    data = json.loads(out.read_text())
    assert (data["schema"], data["verdict"], data["counts"]["passed"]) == ("forksync-result/1", "green", 3)
    line = capsys.readouterr().out.splitlines()[0]
    d = data["durations"]
    assert f"suite process {d['command']:.1f}s, test bodies {d['tests']:.1f}s, total {d['total']:.1f}s" in line
    assert runner_main(["run", "--suite", "nope", "--commit", "HEAD", "--repo", str(repo), "--config", str(cfg)]) == 2
    assert "no suite named 'nope'; defined: tiny" in capsys.readouterr().err
    bad = write_config(repo, {**s, "expected_tests": 0})
    assert runner_main(["run", "--suite", "tiny", "--commit", "HEAD", "--repo", str(repo), "--config", str(bad)]) == 2
    assert "suites.0.expected_tests: Input should be greater than or equal to 1" in capsys.readouterr().err


def test_cli_red_exit_code(repo, capsys):
    cfg = write_config(repo, suite(expected_tests=4).model_dump(exclude_none=True))
    out = repo.parent / "result.json"
    assert runner_main(["run", "--suite", "tiny", "--commit", "HEAD", "--repo", str(repo), "--config", str(cfg),
                        "--out", str(out)]) == 1
    assert ("count-mismatch: 3 tests ran, the suite expects exactly 4 (fewer: tests went missing; "
            "if they were removed on purpose, set expected_tests: 3)") in capsys.readouterr().out


def test_in_place_at_the_commit_and_in_a_plain_folder(repo, tmp_path):
    sha = git(repo, "rev-parse", "HEAD")
    r = run_local(suite(), repo, sha, LocalOptions(in_place=True))
    assert (r.verdict, r.commit, r.durations.checkout) == ("green", sha, 0.0)
    assert (repo / "build" / "square").exists()          # in place: the build is left in the checkout
    plain = tmp_path / "plain"                          # e.g. a machine without git: the commit is recorded as given
    subprocess.run(["cp", "-r", str(repo), str(plain)], check=True)
    subprocess.run(["rm", "-rf", str(plain / ".git"), str(plain / "out")], check=True)
    r = run_local(suite(), plain, "build-1234", LocalOptions(in_place=True))
    assert (r.verdict, r.commit) == ("green", "build-1234")


SLOW = textwrap.dedent("""\
    import time

    def test_a():
        pass

    def test_b():
        assert 1 + 1 == 3, "arithmetic"

    def test_c():
        time.sleep(120)

    def test_d():
        pass
    """)


def test_a_suite_killed_at_its_timeout_still_reports_every_finished_test(repo):
    commit(repo, {"tests/test_slow.py": SLOW}, "a slow test")
    r = run_local(suite(build=None, command=f"{PYTEST} tests/test_slow.py --junitxml=out/junit.xml", timeout_s=20,
                        expected_tests=4), repo, "HEAD")
    assert codes(r) == ["timed-out", "report-missing", "test-failures", "tests-not-run"]
    assert [(t.id, t.outcome) for t in r.tests] == [("tests.test_slow::test_a", "passed"), ("tests.test_slow::test_b", "failed")]
    assert r.tests[1].message == "AssertionError: arithmetic\nassert (1 + 1) == 3"
    assert r.not_run == ["tests.test_slow::test_c", "tests.test_slow::test_d"]
    assert r.reasons[3].detail == "2 collected tests did not finish (2 did): tests.test_slow::test_c, tests.test_slow::test_d"
    assert r.outcome == "error" and r.failing == ("tests.test_slow::test_b",)


PYTEST_OUTCOMES = textwrap.dedent("""\
    import pytest

    @pytest.fixture
    def broken():
        raise RuntimeError("fixture could not start")

    def test_raises():
        with pytest.raises(ValueError):
            pass

    @pytest.mark.xfail(strict=True, reason="known bad")
    def test_xpass():
        pass

    def test_fixture(broken):
        pass
    """)


def test_pytests_own_outcomes_are_tests_with_their_messages(repo):
    commit(repo, {"tests/test_outcomes.py": PYTEST_OUTCOMES}, "pytest outcomes")
    r = run_local(suite(build=None, command=f"{PYTEST} tests/test_outcomes.py --junitxml=out/junit.xml", expected_tests=3),
                  repo, "HEAD")
    got = {t.name: (t.outcome, t.message) for t in r.tests}
    assert got == {"test_raises": ("failed", "Failed: DID NOT RAISE ValueError"),
                   "test_xpass": ("failed", "[XPASS(strict)] known bad"),
                   "test_fixture": ("error", 'failed on setup with "RuntimeError: fixture could not start"')}
    # the streaming report gives the same outcomes and messages (it stands in when the JUnit file is missing)
    r2 = run_local(suite(build=None, command=f"{PYTEST} tests/test_outcomes.py", expected_tests=3), repo, "HEAD")
    assert {t.name: t.outcome for t in r2.tests} == {k: v[0] for k, v in got.items()}
    assert {t.name: t.message for t in r2.tests}["test_raises"] == "Failed: DID NOT RAISE ValueError"


NO_GPU = textwrap.dedent("""\
    def test_one():
        raise RuntimeError("No CUDA GPUs are available")

    def test_two():
        raise RuntimeError("No CUDA GPUs are available")

    def test_three():
        pass
    """)


def test_no_gpu_is_infrastructure_retried_and_reported_as_such(repo):
    commit(repo, {"tests/test_gpu.py": NO_GPU}, "needs a GPU")
    r = run_local(suite(build=None, command=f"{PYTEST} tests/test_gpu.py --junitxml=out/junit.xml", infra_retries=1),
                  repo, "HEAD")
    assert [(a.number, a.infra_error) for a in r.attempts] == [
        (1, "gpu-missing: RuntimeError: No CUDA GPUs are available"),
        (2, "gpu-missing: RuntimeError: No CUDA GPUs are available")]
    assert (r.outcome, codes(r)) == ("infrastructure", ["infra-error", "test-failures"])


def test_one_real_failure_beside_an_infrastructure_line_is_not_retried(repo):
    commit(repo, {"tests/test_gpu.py": NO_GPU.replace('raise RuntimeError("No CUDA GPUs are available")\n\ndef test_two',
                                                      'assert 2 == 3\n\ndef test_two', 1)}, "one real failure")
    r = run_local(suite(build=None, command=f"{PYTEST} tests/test_gpu.py --junitxml=out/junit.xml", infra_retries=1),
                  repo, "HEAD")
    assert [a.infra_error for a in r.attempts] == [None] and (r.outcome, codes(r)) == ("fail", ["test-failures"])


CACHE = "if test -f $TRITON_CACHE_DIR/kernel.bin; then echo warm; else echo cold; fi; touch $TRITON_CACHE_DIR/kernel.bin; "


def test_the_triton_cache_is_kept_per_runner_for_l1_and_fresh_for_l2(repo, tmp_path):
    opts = LocalOptions(work_dir=tmp_path / "runner")
    l1 = suite(command=CACHE + f"{PYTEST} tests --junitxml=out/junit.xml")
    first, second = run_local(l1, repo, "HEAD", opts), run_local(l1, repo, "HEAD", opts)
    assert (first.triton_cache, first.stdout_tail.split()[0], second.stdout_tail.split()[0]) == ("per-runner", "cold", "warm")
    assert (tmp_path / "runner" / "triton-cache" / "kernel.bin").is_file()
    bench = '{"schema": "forksync-bench/1", "points": [{"benchmark": "b", "shape": "s", "dtype": "fp16", "impl": "triton", ' \
            '"metric": "time", "unit": "ms", "value": 1.0}]}'
    l2 = suite(name="sweep", level="L2", build=None, command=CACHE + f"echo '{bench}' > out.json",
               report={"format": "benchmark-json", "path": "out.json"}, expected_tests=None)
    runs = [run_local(l2, repo, "HEAD", opts) for _ in range(2)]
    assert [(x.triton_cache, x.stdout_tail.split()[0], x.verdict) for x in runs] == [("fresh", "cold", "green")] * 2
    # a suite's own TRITON_CACHE_DIR wins
    own = run_local(suite(env={"TRITON_CACHE_DIR": str(tmp_path / "own"), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
                          command="mkdir -p $TRITON_CACHE_DIR; " + CACHE + f"{PYTEST} tests --junitxml=out/junit.xml"),
                    repo, "HEAD", opts)
    assert own.triton_cache == "suite" and (tmp_path / "own" / "kernel.bin").is_file()


def test_time_to_signal_is_process_wall_beside_test_bodies(repo):
    r = run_local(suite(), repo, "HEAD")
    d = r.durations
    assert d.command > d.tests > 0 and d.outside_tests == pytest.approx(d.command - d.tests)


def test_workers_run_the_suite_with_xdist_and_the_same_verdict(repo):
    one = run_local(suite(), repo, "HEAD")
    two = run_local(suite(workers=2), repo, "HEAD")
    # once seen red on CI with no pytest summary and not reproduced since: say why if it comes back
    why = f"{two.reasons} {two.attempts} stdout: {two.stdout_tail[-2000:]!r} stderr: {two.stderr_tail[-2000:]!r}"
    assert (two.verdict, two.workers, two.counts.total, two.counts.harness_total) == ("green", 2, 3, 3), why
    assert sorted(t.id for t in two.tests) == sorted(t.id for t in one.tests)
    assert "bringing up nodes" in two.stdout_tail


GPU_PER_WORKER = textwrap.dedent("""\
    import os
    import pytest

    @pytest.mark.parametrize("i", range(4))
    def test_gpu(i):
        with open(os.environ["SEEN"], "a") as f:
            f.write(os.environ["PYTEST_XDIST_WORKER"] + " " + os.environ["CUDA_VISIBLE_DEVICES"] + "\\n")
    """)


def test_each_worker_takes_its_own_gpu(repo, tmp_path):
    commit(repo, {"tests/test_gpu.py": GPU_PER_WORKER}, "gpu per worker")
    seen = tmp_path / "seen.txt"
    r = run_local(suite(build=None, workers=2, expected_tests=4, command=f"{PYTEST} tests/test_gpu.py --junitxml=out/junit.xml",
                        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "CUDA_VISIBLE_DEVICES": "5,7", "SEEN": str(seen)}),
                  repo, "HEAD")
    assert r.verdict == "green"
    assert set(seen.read_text().split("\n")) - {""} <= {"gw0 5", "gw1 7"} and len(set(seen.read_text().split())) >= 3


def test_secrets_are_redacted_from_test_messages_and_tracebacks(repo, monkeypatch):
    # a failing test that prints the runner's environment (or asserts on a credential) puts the
    # value into the JUnit report: messages and tracebacks end up in check-run annotations and
    # triage issues just like the log tails
    canary = "hf_CANARYrunnerCredential0123456789"
    monkeypatch.setenv("HF_TOKEN", canary)
    commit(repo, {"tests/test_env.py": "import os\n\ndef test_env():\n"
                                       "    print(dict(os.environ))\n"
                                       "    assert os.environ['HF_TOKEN'] == 'x'\n"}, "env dump")
    r = run_local(suite(expected_tests=4), repo, "HEAD")
    failing = [t for t in r.tests if t.outcome == "failed"]
    assert failing and "***" in failing[0].traceback
    assert canary not in r.to_json()


def test_credentials_in_urls_are_redacted_whatever_the_variable_is_called(repo, monkeypatch):
    # a private package index (PIP_INDEX_URL, UV_INDEX_URL …) carries its password in the URL,
    # under a name no secret-name pattern knows; an env dump prints it
    canary = "CANARYindexPassword77"
    monkeypatch.setenv("PIP_INDEX_URL", f"https://ci:{canary}@pypi.example.com/simple")
    r = run_local(suite(command="env | grep INDEX_URL; exit 3"), repo, "HEAD")
    assert "PIP_INDEX_URL=https://***@pypi.example.com/simple" in r.stdout_tail
    assert canary not in r.to_json()
