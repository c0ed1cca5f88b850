"""Breaks of the GPU runner as real GPU CI uses it (helper ``gpurun``): runners that die mid-suite,
workspaces reused between jobs on a self-hosted runner, secrets in log tails, a runner on the
wrong GPU, failure messages that are not valid UTF-8."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gpu_runner.result import RunResult
from gpu_runner.runner import LocalOptions, run_local
from tests.gpu_runner.test_runner import PYTEST, codes, commit, suite, write_config

ROOT = Path(__file__).resolve().parents[2]


def _runner(argv: list[str], env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python -m gpu_runner …`` in a real subprocess, this checkout first on PYTHONPATH."""
    e = {**os.environ, **(env or {})}
    e["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), e.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "gpu_runner", *argv], capture_output=True, text=True, env=e,
                          cwd=str(cwd or ROOT), timeout=300)


def test_a_secret_cut_by_the_log_tail_does_not_leak_its_other_half(repo, monkeypatch):
    """A suite prints a credential and then a little over 8,000 characters of log, so the 8,000
    character tail starts in the middle of the credential. What a user sees: the tail kept in the
    result JSON (check run, triage issue) holds the credential's last 20 characters in clear —
    redaction replaces whole values only, and runs after the cut. What they should see: no part of
    the credential (redact before cutting, or cut the tail at a redacted value)."""
    canary = "ghp_CANARYfirstHalf0123SECONDhalfCANARY9"      # 40 chars
    monkeypatch.setenv("HF_TOKEN", canary)
    # 8,000 - 20 characters after the token: the tail begins 20 characters into it
    cmd = "printf 'token=%s' \"$HF_TOKEN\"; python3 -c \"import sys; sys.stdout.write('x' * 7980)\"; exit 3"
    r = run_local(suite(build=None, command=cmd), repo, "HEAD")
    # redacted whole, then cut: "token=***" and the 7,980 characters after it, under the 8,000 limit
    assert r.stdout_tail == "token=***" + "x" * 7980
    assert canary[20:] not in r.stdout_tail, r.stdout_tail[:60]
    assert canary[20:] not in r.to_json()


def test_two_secrets_one_the_start_of_the_other_are_both_hidden(repo, monkeypatch):
    """Two credentials where one is the start of the other (an API key and the same key with its
    secret suffix, ``HF_TOKEN`` and ``HF_TOKEN_FULL``-style pairs, a password and the
    ``user:password`` pair). A failing suite prints both. What a user sees: the longer one shows
    as ``***`` followed by its remaining characters in clear — the shorter value was replaced
    first, so the longer one no longer matches. What they should see: neither value in any part."""
    monkeypatch.setenv("A_TOKEN", "CANARYabcdef")
    monkeypatch.setenv("B_TOKEN", "CANARYabcdefTAILsecret42")
    r = run_local(suite(build=None, command='echo "a=$A_TOKEN b=$B_TOKEN"; exit 3'), repo, "HEAD")
    assert r.stdout_tail.startswith("a=*** b=")
    assert "TAILsecret42" not in r.stdout_tail, r.stdout_tail


def test_a_runner_that_dies_mid_suite_leaves_no_earlier_green_result_in_its_out_file(repo, tmp_path):
    """The GPU workflow runs ``python -m gpu_runner run … --out result.json`` in the job's workspace
    and uploads ``result.json`` with ``if: always()``; a self-hosted runner keeps its workspace
    between jobs. A first run of the suite on a commit is green; a later run of the same suite on
    the same commit (``/forksync retest``) dies mid-suite (the OOM killer, a lost machine: here the
    suite kills the runner process). What a user sees: ``result.json`` still holds the first run's
    green result — the artifact the bot collects passes its suite/commit check and the retest is
    green although it never finished. What they should see: no result file (or a red one) once a
    run has started and not finished."""
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    cfg = write_config(repo, dict(name="tiny", build="mkdir -p build && cc -O1 -o build/square src/square.c",
                                  command=f"{PYTEST} tests --junitxml=out/junit.xml",
                                  report={"format": "junit", "path": "out/junit.xml"}, expected_tests=3,
                                  timeout_s=120, infra_retries=0, env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}))
    out = tmp_path / "result.json"
    p = _runner(["run", "--suite", "tiny", "--commit", sha, "--repo", str(repo), "--config", str(cfg),
                 "--out", str(out)])
    assert p.returncode == 0 and RunResult.from_json(out.read_text()).verdict == "green"
    # the second run: the suite's command kills the runner (its grandparent: bash's parent)
    killer = cfg.parent / "killer.yml"
    killer.write_text(cfg.read_text().replace(f"{PYTEST} tests --junitxml=out/junit.xml",
                                              "kill -9 $PPID; sleep 5"))
    p = _runner(["run", "--suite", "tiny", "--commit", sha, "--repo", str(repo), "--config", str(killer),
                 "--out", str(out)])
    assert p.returncode == -9
    left = RunResult.from_json(out.read_text()) if out.exists() else None
    assert left is None or left.verdict == "red", "the dead run's out file still says green"


SLOW_ONE = """\
import time

def test_a():
    pass

def test_b():
    time.sleep(120)
"""

EARLIER = """\
def test_a():
    assert False, "broken in the earlier commit"

def test_b():
    pass

def test_c():
    pass
"""


def test_a_reused_logs_folder_does_not_lend_an_earlier_runs_tests(repo, tmp_path):
    """The GPU workflow passes ``--logs logs`` in the job's workspace, which a self-hosted runner
    keeps between jobs; the streaming per-test report ``logs/attempt1.tests.jsonl`` is appended
    to. An earlier run (another commit) finished three tests there. This run is killed at its
    timeout after one test passed and one hung. What a user sees: the result lists the earlier
    commit's ``test_a`` failure and ``test_c`` as tests of this commit (read from the old lines), and
    ``tests-not-run`` leaves out ``test_b`` — triage files the earlier commit's failure against this
    one. What they should see: only this run's tests (test_a passed; test_b did not finish)."""
    logs = tmp_path / "logs"
    commit(repo, {"tests/test_square.py": None, "tests/test_slow.py": EARLIER}, "earlier")
    r1 = run_local(suite(build=None, command=f"{PYTEST} tests/test_slow.py --junitxml=out/junit.xml"), repo, "HEAD",
                   LocalOptions(logs_dir=logs))
    assert [t.outcome for t in r1.tests] == ["failed", "passed", "passed"]
    commit(repo, {"tests/test_slow.py": SLOW_ONE}, "now one test hangs")
    r2 = run_local(suite(build=None, command=f"{PYTEST} tests/test_slow.py --junitxml=out/junit.xml", timeout_s=15,
                         expected_tests=2), repo, "HEAD", LocalOptions(logs_dir=logs))
    assert "timed-out" in codes(r2)
    assert [(t.id, t.outcome) for t in r2.tests] == [("tests.test_slow::test_a", "passed")]
    assert r2.not_run == ["tests.test_slow::test_b"]
    assert "test-failures" not in codes(r2)


FAILS_ON_A_PATH = """\
import os

def test_ok():
    pass

def test_file_there(tmp_path):
    name = os.fsdecode(b"weights-\\xff.bin")      # a file name that is not UTF-8
    assert (tmp_path / name).exists(), f"missing {name}"

def test_after():
    pass
"""


def test_a_failure_message_that_is_not_utf8_is_a_test_failure_not_a_crash(repo):
    """A kernel test fails on a file whose name is not valid UTF-8 (Python holds it as a
    surrogate escape, as ``os.listdir`` gives it). Plain pytest reports one failed test and writes
    its JUnit file. Under the runner, the streaming plugin writes the message to a UTF-8 file.
    What a user sees: red ``runner-crashed`` (pytest INTERNALERROR, exit 3), the JUnit file missing,
    the other tests' outcomes lost. What they should see: red ``test-failures`` naming
    ``test_file_there``, with the two other tests passed (as without the runner)."""
    commit(repo, {"tests/test_square.py": None, "tests/test_paths.py": FAILS_ON_A_PATH}, "path test")
    r = run_local(suite(build=None, command=f"{PYTEST} tests/test_paths.py --junitxml=out/junit.xml"), repo, "HEAD")
    assert codes(r) == ["test-failures"], [(x.code, x.detail[:200]) for x in r.reasons]
    assert [(t.name, t.outcome) for t in r.tests] == [("test_ok", "passed"), ("test_file_there", "failed"),
                                                      ("test_after", "passed")]


FAKE_SMI = """\
#!/bin/sh
# nvidia-smi of a machine with one H100 (what a runner mislabelled h200 has)
case "$*" in
  *--query-gpu*) echo "NVIDIA H100 80GB HBM3, 550.54.15" ;;
  -L) echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0f0e0d0c-0000-1111-2222-333344445555)" ;;
  *) echo "| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4 |" ;;
esac
"""


def test_a_suite_for_h200_run_on_an_h100_is_not_green(repo, tmp_path, monkeypatch):
    """A self-hosted runner labelled ``h200`` whose machine holds an H100 (a label typo, a machine
    swapped under the runner, ``CUDA_VISIBLE_DEVICES`` pointing at the wrong card of a mixed box).
    The runner knows: its own fingerprint records ``gpu_model: NVIDIA H100 80GB HBM3``. What a user
    sees: ``verdict: green`` for platform ``h200`` — the gate counts the H200 suite as passed though
    no H200 ran it. What they should see: not green (the GPU is not the platform's: an
    infrastructure error naming both, "retry on another runner")."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(FAKE_SMI)
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    r = run_local(suite(platforms=["h200"]), repo, "HEAD", LocalOptions(platform="h200"))
    assert (r.platform, r.environment.gpu_model) == ("h200", "NVIDIA H100 80GB HBM3")
    assert r.verdict == "red", "an H100 run reported as a green h200 result"
    assert r.outcome == "infrastructure"


def test_a_suite_killed_while_writing_its_junit_file_still_reports_its_finished_tests(repo):
    """pytest writes its JUnit file only at the very end; a runner killed at that moment (the
    timeout, the OOM killer, a full disk) leaves it truncated or empty. The streaming per-test report
    beside the logs holds every finished test. What a user sees: red ``report-unparsable`` and
    nothing else — no test, no failure named, no ``tests-not-run`` — although the stream says which
    test failed; triage has nothing to group. What they should see: as for a missing JUnit file
    (docs/validation.md "Streaming per-test report"): the finished tests, ``test-failures`` naming the
    failing one."""
    from tests.gpu_runner.test_runner import SQUARE_C
    commit(repo, {"src/square.c": SQUARE_C.replace("x * x", "x == 2 ? 4 : x * x + 1")}, "break square for x != 2")
    # pytest runs to the end; then the file is cut as a kill in the middle of writing leaves it
    cmd = (f"{PYTEST} tests --junitxml=out/junit.xml; rc=$?; "
           "python3 -c \"import pathlib; p = pathlib.Path('out/junit.xml'); t = p.read_text(); "
           "p.write_text(t[:len(t) // 2])\"; exit $rc")
    r = run_local(suite(command=cmd), repo, "HEAD")
    assert codes(r)[0] == "report-unparsable"
    assert sorted((t.name, t.outcome) for t in r.tests) == [
        ("test_square[12]", "failed"), ("test_square[2]", "passed"), ("test_square[3]", "failed")]
    assert "test-failures" in codes(r)


def test_the_local_backend_whose_python_is_gone_gives_a_red_result_not_an_exception(repo, tmp_path):
    """``LocalBackend.run`` promises "always returns a result (red when the runner fails)"; the bot
    runs ``python -m gpu_runner`` with its own interpreter path. After the bot's venv is rebuilt or
    its Python upgraded under a running worker (the path no longer exists, or lost its exec bit),
    what a user sees: ``FileNotFoundError`` out of ``run_sync`` — the delivery fails, the check run
    started ``in_progress`` stays so and the row stays ``pending``. What they should see: a red
    ``runner-crashed`` result naming the interpreter that could not be started."""
    import yaml

    from bot.config.suites import SuiteConfig
    from bot.validation.backends import LocalBackend

    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    text = yaml.safe_dump({"suites": [dict(name="tiny", command=f"{PYTEST} tests --junitxml=out/junit.xml",
                                           report={"format": "junit", "path": "out/junit.xml"}, expected_tests=3)]})
    s = SuiteConfig.model_validate(yaml.safe_load(text)["suites"][0])
    gone = tmp_path / "old-venv" / "bin" / "python3"
    b = LocalBackend(tmp_path / "work", remote_url=None, python=str(gone))
    r = b.run_sync(repo, sha, s, "cpu", text)
    assert (r.verdict, [x.code for x in r.reasons]) == ("red", ["runner-crashed"])
    assert str(gone) in r.reasons[0].detail


def test_two_runs_of_the_kernel_suite_on_one_sha_test_the_same_inputs(tmp_path):
    """Real Triton kernels under ``TRITON_INTERPRET=1`` (examples/kernels, the suite the README's
    quick start and the H200 run use). A commit makes the add kernel write NaN into the last
    element; the suite catches it (held up: every add test fails, "1 of 1000 outputs are NaN").
    Validation is meant to be deterministic: the gate compares the head's failures with the
    base's result, bisection re-tests a culprit and its parent, a retest of the same sha must say
    the same. What a user sees: each run draws fresh inputs (``secrets.randbits``), so two runs of
    one sha test different data — the failure messages differ run to run (``seed=…``), and a
    kernel bug that shows on some inputs only is red on one run and green on the next. What they
    should see: the same inputs, hence the same messages, for the same test id on the same sha (a
    seed derived from the test id, or fixed, still printed on failure)."""
    from gpu_runner.suites_file import find_suite, load_suites
    from tests.gpu_runner.test_kernels import FILES, KERNELS
    from tests.gpu_runner.test_runner import git

    kr = tmp_path / "fork"
    (kr / "examples" / "kernels").mkdir(parents=True)
    for f in FILES:
        (kr / "examples" / "kernels" / f).write_text((KERNELS / f).read_text())
    src = (kr / "examples/kernels/kernels.py").read_text()
    nan_tail = src.replace("(x.to(tl.float32) + y.to(tl.float32))",
                           '(x.to(tl.float32) + y.to(tl.float32) + tl.where(offs == n - 1, float("nan"), 0.0))')
    assert nan_tail != src
    (kr / "examples/kernels/kernels.py").write_text(nan_tail)
    git(kr, "init", "-q", "-b", "main")
    sha = commit(kr, {}, "add writes NaN into its last element")
    cfg = kr / "examples" / "kernels" / "suites.yml"
    base = find_suite(load_suites(cfg), "kernels-cpu", cfg)
    s = base.model_copy(update={"command": base.command + " -k vector_add", "expected_tests": 6})
    first, second = (run_local(s, kr, sha) for _ in range(2))
    for r in (first, second):
        assert (r.verdict, [x.code for x in r.reasons], r.counts.failed) == ("red", ["test-failures"], 6)
        assert "outputs are NaN" in r.tests[0].message
    assert [(t.id, t.message) for t in first.tests] == [(t.id, t.message) for t in second.tests]


TEARDOWN = """\
import pytest

@pytest.fixture
def gpu():
    yield "cuda:0"
    # a GPU suite's usual teardown check: an asynchronous kernel error surfaces at synchronize
    raise RuntimeError("CUDA error: an illegal memory access was encountered")

def test_kernel(gpu):
    pass

def test_other():
    pass

def test_third():
    pass
"""


def test_a_test_that_fails_in_teardown_is_a_test_failure_not_an_untrustworthy_suite(repo):
    """GPU suites check for asynchronous CUDA errors and leaked memory in fixture teardown; a
    kernel that corrupts memory fails there. pytest's summary then counts that test twice
    (``3 passed, 1 error`` for 3 tests: the call passed, the teardown errored), while its JUnit file
    holds 3 test cases, the one with the teardown error an ``<error>``. What a user sees: red with
    ``count-disagrees-with-harness: the report holds 3 tests but the harness reported 4`` — outcome
    ``error`` (the gate's ``suite-error``: "a suite that did not run fully", blocking even when the
    base fails alike, no pre-existing comparison). What they should see: ``test-failures`` naming
    ``test_kernel`` (outcome ``fail``), as for an error in setup."""
    commit(repo, {"tests/test_square.py": None, "tests/test_td.py": TEARDOWN}, "teardown check")
    r = run_local(suite(build=None, command=f"{PYTEST} tests/test_td.py --junitxml=out/junit.xml"), repo, "HEAD")
    assert "1 error" in r.stdout_tail
    assert [(t.name, t.outcome) for t in r.tests] == [("test_kernel", "error"), ("test_other", "passed"),
                                                      ("test_third", "passed")]
    assert (codes(r), r.outcome) == (["test-failures"], "fail"), [(x.code, x.detail) for x in r.reasons]


def test_an_out_path_that_cannot_be_written_is_refused_before_the_suite_runs(repo, tmp_path):
    """``python -m gpu_runner run … --out results/tiny.json`` where ``results/`` does not exist
    (a CI script that forgot ``mkdir``). What a user sees: the whole suite runs (an hour on a real
    GPU suite), then a Python traceback (``FileNotFoundError``) and exit status 1 — which the CLI
    documents as "red (the result JSON says why)", yet no JSON exists. What they should see: exit 2
    (bad input) at once, naming the path, nothing run."""
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    marker = tmp_path / "suite-ran"
    cfg = write_config(repo, dict(name="tiny", command=f"touch {marker}; {PYTEST} tests --junitxml=out/junit.xml",
                                  build="mkdir -p build && cc -O1 -o build/square src/square.c",
                                  report={"format": "junit", "path": "out/junit.xml"}, expected_tests=3,
                                  timeout_s=120, infra_retries=0, env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}))
    p = _runner(["run", "--suite", "tiny", "--commit", sha, "--repo", str(repo), "--config", str(cfg),
                 "--out", str(tmp_path / "results" / "tiny.json")])
    assert "Traceback" not in p.stderr, p.stderr[-600:]
    assert p.returncode == 2 and "results" in p.stderr
    assert not marker.exists()


def test_a_test_written_into_two_junit_files_of_a_glob_counts_once(repo):
    """A suite whose report is a glob runs pytest twice (two selections, one JUnit file each),
    and the selections overlap: both runs take ``tests/test_square.py`` (a mistyped ``-k`` or marker
    expression, a path given to both). The suite expects 6 tests; only its 3 ran, each twice.
    What a user sees: green, ``6 passed`` — each of the 3 tests counted once per file, and the
    harness's two summaries (3 + 3) agreeing with it, so the suite is "saturated" with half its
    tests. What they should see: a test id counts once, whichever files hold it (its worst
    outcome), so ``count-mismatch`` red saying 3 tests ran and why."""
    cmd = (f"{PYTEST} tests/test_square.py --junitxml=out/a.xml; "
           f"{PYTEST} tests/test_square.py --junitxml=out/b.xml")
    r = run_local(suite(command=cmd, report={"format": "junit", "path": "out/*.xml"}, expected_tests=6), repo, "HEAD")
    assert (r.verdict, codes(r)) == ("red", ["count-mismatch"]), [(x.code, x.detail) for x in r.reasons]
    assert (r.counts.total, r.counts.passed, r.counts.harness_total) == (3, 3, 3)
    assert len({t.id for t in r.tests}) == len(r.tests) == 3
    mismatch = r.reasons[0]
    assert (mismatch.ran, mismatch.expected) == (3, 6)
    assert mismatch.detail.startswith("3 tests ran, the suite expects exactly 6"), mismatch.detail
    assert "3 test id(s) are in more than one report file" in mismatch.detail, mismatch.detail


def test_a_test_failing_in_one_junit_file_of_a_glob_and_passing_in_another_is_a_failure(repo):
    """The same test in two JUnit files of a glob (run twice, under two settings): it passes in
    one and fails in the other. Counted once, it must keep the failure (its worst outcome), never
    the later file's pass."""
    commit(repo, {"tests/test_env.py": "import os\n\n\ndef test_env():\n    assert os.environ.get('MODE') != 'b'\n"},
           "env test")
    cmd = (f"MODE=a {PYTEST} tests/test_env.py --junitxml=out/a.xml; "
           f"MODE=b {PYTEST} tests/test_env.py --junitxml=out/b.xml")
    r = run_local(suite(command=cmd, report={"format": "junit", "path": "out/*.xml"}, expected_tests=1), repo, "HEAD")
    assert [(t.name, t.outcome) for t in r.tests] == [("test_env", "failed")]
    assert (codes(r), r.outcome) == (["test-failures"], "fail"), [(x.code, x.detail) for x in r.reasons]
