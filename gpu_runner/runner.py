"""Run one suite on one commit with the ``local`` backend and produce its :class:`RunResult`.

Flow (each attempt in a fresh isolated worktree of the commit): build step (if the suite has one)
→ command → read the report → :func:`gpu_runner.saturation.judge`. The suite's ``timeout_s``
bounds build + command together. An attempt that did not pass and whose output matches the
built-in infrastructure-error patterns (:func:`bot.config.suites.infra_error_match`: no GPU visible,
driver mismatch, disk full, …) is retried, up to ``infra_retries`` times; nothing else is ever
retried. The runner installs nothing: it runs with what the machine has and records it
(:mod:`gpu_runner.fingerprint`).

Report paths are relative to the checkout; JUnit paths may be globs (several files are merged);
the path ``-`` means the command's own stdout (for lit, whose report *is* its output).

JUnit (pytest) suites also get a streaming per-test report (:mod:`gpu_runner.pytest_stream`, JSON
lines flushed as each test ends, beside the logs): when the JUnit file is missing, unparsable or
stale — the suite was killed at its timeout or while pytest wrote the file, or crashed — every finished test is still reported and the collected
tests that never finished are named (``tests-not-run``). ``workers: N`` adds pytest-xdist's
``-n N`` with one GPU per worker (``CUDA_VISIBLE_DEVICES``) where the machine has several.

Time to signal: ``durations.command`` (the suite's process, wall) beside ``durations.tests``
(the test bodies) and ``outside_tests`` (interpreter, imports, collection, CUDA start-up).
Triton's compile cache (``TRITON_CACHE_DIR``) is kept per runner across runs for L1/L3 suites
(``<work dir>/triton-cache``), and is a fresh folder per attempt for L2, which measures cold
compile time: a warm cache never hides a compile-time regression. A suite's own
``TRITON_CACHE_DIR`` wins.
"""
from __future__ import annotations

import glob
import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from bot.agents.redact import strip_userinfo
from bot.config.suites import SuiteConfig, infra_error_match, persists_as_change
from gpu_runner import fingerprint as fp
from gpu_runner.local import CheckoutError, Worktree, is_git_repo, resolve_commit, run_step
from gpu_runner.reports import MAX_TRACEBACK, ReportError, counts_of, junit_names, parse_benchmark_json, parse_lit, pytest_total, read_junit
from gpu_runner.result import Attempt, Counts, Durations, Reason, RunResult, TestResult, outcome_for
from gpu_runner.saturation import RunFacts, judge
from gpu_runner.shards import ENV_SHARD

TAIL_CHARS = 8000
#: Variables that give a process its GPUs (the runner's: those set in a suite's environment; each
#: worker narrows HIP's and CUDA's, else ROCr's: :func:`_runner_env`), in the order HIP's runtime
#: reads them: HIP's (read whenever set; then CUDA's is ignored: ROCm's rocclr,
#: ``HIP_VISIBLE_DEVICES[0] != '\0' ? HIP_VISIBLE_DEVICES : CUDA_VISIBLE_DEVICES``), CUDA's (CUDA
#: reads only it; HIP reads it when HIP's is unset), and ROCr's (below HIP: what ROCm advises for a
#: runner).
WORKER_GPU_VARS = ("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|API_KEY|_KEY$", re.IGNORECASE)


def redact(text: str, env: dict[str, str]) -> str:
    """``text`` with the values of secret-looking environment variables (names matching
    TOKEN/SECRET/PASSWORD/…_KEY, values ≥ 6 chars) and the userinfo of every URL replaced by
    ``***`` — logs end up in check runs. Longest values first: a secret that is the start of
    another (a key and the key with its secret suffix, a password and ``user:password``) would
    otherwise be replaced inside the longer one and leave its remainder in clear."""
    secrets = {v for name, v in env.items() if v and len(v) >= 6 and SECRET_NAME.search(name)}
    for value in sorted(secrets, key=len, reverse=True):
        text = text.replace(value, "***")
    # a private package index or mirror carries its password in its URL, under a variable name
    # no secret-name pattern knows
    return strip_userinfo(text)


def redact_result(result: RunResult, env: dict[str, str]) -> RunResult:
    """``result`` with :func:`redact` applied to every string in it: not only the log tails but the
    tests' messages and tracebacks (a failing test may print the environment or assert on a
    credential), the reasons and the benchmarks all reach check runs and triage issues. Give it
    whole texts and cut them afterwards (:func:`clip_result`): a cut through a secret leaves a part
    of it that redaction no longer recognises."""
    def walk(v):
        if isinstance(v, str):
            return redact(v, env)
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        return v
    return RunResult.model_validate(walk(result.model_dump(by_alias=True)))


def clip_result(result: RunResult, keep_end: bool = False) -> RunResult:
    """``result`` cut to the sizes it is stored at: log tails to their last :data:`TAIL_CHARS`
    characters, each test's message to 500 characters and traceback to :data:`MAX_TRACEBACK`
    (its end for ``keep_end`` — lit's failure log ends with the error —, else its start). Run it
    after :func:`redact_result`."""
    def cut(t: TestResult) -> TestResult:
        tb = t.traceback[-MAX_TRACEBACK:] if keep_end else t.traceback[:MAX_TRACEBACK]
        return t.model_copy(update={"message": t.message[:500], "traceback": tb})
    return result.model_copy(update={"stdout_tail": result.stdout_tail[-TAIL_CHARS:],
                                     "stderr_tail": result.stderr_tail[-TAIL_CHARS:],
                                     "tests": [cut(t) for t in result.tests]})


@dataclass(frozen=True)
class LocalOptions:
    platform: str = "cpu"
    runner_id: str | None = None
    in_place: bool = False          # run in ``repo`` as it is (it must be at the commit), no worktree
    keep_worktree: bool = False
    logs_dir: Path | None = None     # full stdout/stderr logs; default: a temporary folder
    worktree_parent: str | None = None
    work_dir: Path | None = None     # kept across runs (the Triton cache); default: $FORKSYNC_RUNNER_DIR or ~/.cache/forksync-runner
    shard: tuple[int, int] | None = None    # (i, N): run only shard i of N (gpu_runner.shards)


def run_local(suite: SuiteConfig, repo: Path, commit: str, opts: LocalOptions = LocalOptions()) -> RunResult:
    """Run ``suite`` on ``commit`` of ``repo``. Raises :class:`gpu_runner.local.CheckoutError` when
    the commit cannot be resolved/checked out (bad input: nothing ran); every other problem is a
    red :class:`RunResult` with its reasons."""
    started, t0 = int(time.time()), time.monotonic()
    repo = repo.resolve()
    if opts.in_place and not is_git_repo(repo):
        sha = commit     # a plain folder (e.g. a machine without git): recorded as given
    else:
        sha = resolve_commit(repo, commit)
    if opts.in_place and is_git_repo(repo):
        head = resolve_commit(repo, "HEAD")
        if head != sha:
            raise CheckoutError(f"--in-place: {repo} is at {head[:12]}, not at the requested commit {sha[:12]}")
    environment = fp.fingerprint(fp.runner_id(opts.runner_id))
    if wrong := fp.wrong_gpu(opts.platform, environment.gpu_model):
        # an hour of another GPU's results must not count for this platform: stop before running
        reasons = [Reason(code="infra-error", detail=wrong)]
        return RunResult(suite=suite.name, level=suite.level, commit=sha, platform=opts.platform, backend="local",
                         verdict="red", outcome=outcome_for(reasons), reasons=reasons, environment=environment,
                         report_path=suite.report.path, shard=f"{opts.shard[0]}/{opts.shard[1]}" if opts.shard else "",
                         started_at=started, finished_at=int(time.time()), workers=suite.workers)
    logs = opts.logs_dir or Path(tempfile.mkdtemp(prefix="forksync-logs-"))
    logs.mkdir(parents=True, exist_ok=True)
    env = suite_env(suite, sha, opts.platform, opts.shard)
    env, cache = _runner_env(suite, env, logs, opts, environment.gpu_count)
    attempts: list[Attempt] = []
    durations = Durations()
    for number in range(1, suite.infra_retries + 2):
        tc = time.monotonic()
        if cache == "fresh":
            shutil.rmtree(env["TRITON_CACHE_DIR"], ignore_errors=True)
        if opts.in_place:
            facts, stdout, stderr, build_s, cmd_s = _attempt(suite, repo, env, logs / f"attempt{number}", opts.platform,
                                                             sharded=opts.shard is not None)
        else:
            with Worktree(repo, sha, parent=opts.worktree_parent, keep=opts.keep_worktree) as checkout:
                durations.checkout += time.monotonic() - tc
                facts, stdout, stderr, build_s, cmd_s = _attempt(suite, checkout, env, logs / f"attempt{number}",
                                                                 opts.platform, sharded=opts.shard is not None)
        durations.build, durations.command = build_s, cmd_s
        passed_run = (not facts.timed_out and facts.exit_code == 0
                      and (not suite.build or facts.build_exit_code == 0))
        infra = None if passed_run else attempt_infra(stdout + "\n" + stderr, facts.tests)
        attempts.append(Attempt(number=number, build_exit_code=facts.build_exit_code, exit_code=facts.exit_code,
                                timed_out=facts.timed_out, infra_error=infra, duration_s=build_s + cmd_s))
        if infra and number <= suite.infra_retries:
            continue
        # a kind a change can cause too (pip's hash check on a pin it left stale) that failed every
        # attempt is the run's own failure, judged from its report as any other
        facts = replace(facts, infra_error=None if persists_as_change(infra) else infra)
        break
    verdict, reasons = judge(facts)
    durations.tests = sum(t.duration_s for t in facts.tests)
    durations.outside_tests = max(0.0, durations.command - durations.tests)
    durations.total = time.monotonic() - t0
    if cache == "fresh":
        shutil.rmtree(env["TRITON_CACHE_DIR"], ignore_errors=True)
    return clip_result(redact_result(RunResult(
        suite=suite.name, level=suite.level, commit=sha, platform=opts.platform, backend="local",
        verdict=verdict, outcome=outcome_for(reasons), reasons=reasons, counts=facts.counts,
        tests=list(facts.tests), benchmarks=list(facts.benchmarks), durations=durations, attempts=attempts,
        environment=environment, report_path=suite.report.path,
        shard=f"{opts.shard[0]}/{opts.shard[1]}" if opts.shard else "", started_at=started, finished_at=int(time.time()),
        stdout_tail=stdout, stderr_tail=stderr,
        triton_cache=cache, not_run=list(facts.not_run), workers=suite.workers), env),
        keep_end=suite.report.format == "lit")


def attempt_infra(output: str, tests) -> str | None:
    """The infrastructure error of an attempt that did not pass (:func:`infra_error_match`), or
    None. With failing tests in the report, only when every one of them failed on an
    infrastructure phrase itself (``RuntimeError: No CUDA GPUs are available`` in each): one real
    failure beside a flaky network line is never retried away. Without failing tests (a crash,
    no report), the whole output is searched."""
    bad = [t for t in tests if t.outcome in ("failed", "error")]
    if not bad:
        return infra_error_match(output)
    hits = [infra_error_match(f"{t.message}\n{t.traceback}") for t in bad]
    return hits[0] if all(hits) else None


def _runner_env(suite: SuiteConfig, env: dict[str, str], logs: Path, opts: LocalOptions,
                gpu_count: int) -> tuple[dict[str, str], str]:
    """``(env, cache policy)``: the Triton cache folder (see the module docstring), and for JUnit
    suites the streaming per-test report plugin and, with ``workers`` > 1, pytest-xdist with a GPU
    per worker (``gpu_count``: the GPUs the run's fingerprint counted)."""
    env = dict(env)
    if "TRITON_CACHE_DIR" in suite.env:
        cache = "suite"
    elif suite.level == "L2":
        cache = "fresh"
        env["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="forksync-triton-cold-")
    else:
        cache = "per-runner"
        work = opts.work_dir or Path(os.environ.get("FORKSYNC_RUNNER_DIR") or Path.home() / ".cache" / "forksync-runner")
        (work / "triton-cache").mkdir(parents=True, exist_ok=True)
        env["TRITON_CACHE_DIR"] = str(work / "triton-cache")
    if suite.report.format == "junit":
        plugin_dir = logs / "pytest-plugin"
        plugin_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(__file__).with_name("pytest_stream.py"), plugin_dir / "forksync_stream.py")
        env["PYTHONPATH"] = os.pathsep.join(x for x in (str(plugin_dir), env.get("PYTHONPATH", "")) if x)
        env["PYTEST_PLUGINS"] = ",".join(x for x in (env.get("PYTEST_PLUGINS", ""), "forksync_stream") if x)
        if suite.workers > 1:
            # plugin autoload off (PYTEST_DISABLE_PLUGIN_AUTOLOAD): name xdist, or -n is unknown
            load = " -p xdist.plugin" if env.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD") else ""
            env["PYTEST_ADDOPTS"] = f"{env.get('PYTEST_ADDOPTS', '')}{load} -n {suite.workers}".strip()
            # the variables the runner is pinned with, each narrowed from its own list: HIP's and
            # CUDA's both where both are set (HIP reads HIP's, CUDA only CUDA's: whichever vendor
            # runs, its variable names one GPU), else ROCr's (HIP numbers its GPUs within ROCr's,
            # so ROCr's is narrowed only where neither other is set), else CUDA's over the GPUs
            # the fingerprint counted
            pinned = [v for v in WORKER_GPU_VARS[:2] if env.get(v)] or [v for v in WORKER_GPU_VARS[2:] if env.get(v)]
            gpus = env.get(pinned[0]) if pinned else ",".join(str(i) for i in range(gpu_count))
            if gpus:
                env["FORKSYNC_WORKER_GPUS"] = gpus
                env["FORKSYNC_WORKER_GPU_VAR"] = ",".join(pinned or ["CUDA_VISIBLE_DEVICES"])
    return env, cache


def suite_env(suite: SuiteConfig, sha: str, platform: str, shard: tuple[int, int] | None = None) -> dict[str, str]:
    """The environment of the suite's steps: this process's, the folder of the interpreter running
    the runner first on ``PATH`` (so ``python3`` in a suite command is that interpreter, with its
    torch/triton), the suite's ``env``, and ``FORKSYNC_SUITE``/``FORKSYNC_COMMIT``/``FORKSYNC_PLATFORM``.
    For shard ``(i, N)`` also ``FORKSYNC_SHARD=i/N``, pytest's ``-p gpu_runner.pytest_shard`` (added to
    ``PYTEST_ADDOPTS``, with this package's folder at the end of ``PYTHONPATH`` so the suite's
    interpreter finds it) and lit's ``LIT_NUM_SHARDS``/``LIT_RUN_SHARD``."""
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    env = {**os.environ, "PATH": path, **suite.env, "FORKSYNC_SUITE": suite.name, "FORKSYNC_COMMIT": sha,
           "FORKSYNC_PLATFORM": platform}
    if shard is not None:
        here = str(Path(__file__).resolve().parent.parent)
        env[ENV_SHARD] = f"{shard[0]}/{shard[1]}"
        env["PYTEST_ADDOPTS"] = (env.get("PYTEST_ADDOPTS", "") + " -p gpu_runner.pytest_shard").strip()
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH", ""), here) if p)
        env["LIT_NUM_SHARDS"], env["LIT_RUN_SHARD"] = str(shard[1]), str(shard[0])
    return env


def _attempt(suite: SuiteConfig, checkout: Path, env: dict[str, str], log_prefix: Path, platform: str = "cpu",
             sharded: bool = False):
    deadline = time.monotonic() + suite.timeout_s
    stream = Path(f"{log_prefix}.tests.jsonl")
    # the plugin appends (a command may run pytest several times); a logs folder kept from an
    # earlier run (a self-hosted runner's workspace) must not lend that run's tests to this one
    stream.unlink(missing_ok=True)
    if "PYTEST_PLUGINS" in env and "forksync_stream" in env["PYTEST_PLUGINS"]:
        env = {**env, "FORKSYNC_STREAM_REPORT": str(stream)}
    before = report_files(suite, checkout)
    build_code, build_s, timed_out = None, 0.0, False
    stdout = stderr = ""
    if suite.build:
        b = run_step(suite.build, checkout, env, deadline, Path(f"{log_prefix}.build"))
        build_code, build_s, timed_out = b.exit_code, b.duration_s, b.timed_out
        stdout, stderr = b.stdout, b.stderr
    exit_code, cmd_s = None, 0.0
    if not timed_out and (not suite.build or build_code == 0):
        c = run_step(suite.command, checkout, env, deadline, log_prefix)
        exit_code, cmd_s, timed_out = c.exit_code, c.duration_s, c.timed_out
        stdout, stderr = stdout + c.stdout, stderr + c.stderr
        command_stdout = c.stdout
    else:
        command_stdout = ""
    per_platform = isinstance(suite.expected_tests, dict)
    base = dict(level=suite.level, report_format=suite.report.format,
                expected_tests=None if sharded else suite.expected_for(platform),
                expected_field=f"expected_tests.{platform}" if per_platform else "expected_tests",
                min_tests=None if sharded else suite.min_tests, sharded=sharded, has_build=bool(suite.build), build_exit_code=build_code,
                exit_code=exit_code, timed_out=timed_out, timeout_s=float(suite.timeout_s),
                report_path=suite.report.path)
    report = read_report(suite, checkout, command_stdout, before)
    # a JUnit file that is missing, cut short by a kill while pytest wrote it, or left by an earlier
    # run says nothing of this run's tests; the stream (removed above, so this run's) still does
    if report["report_state"] != "ok" and suite.report.format == "junit" and stream.exists():
        tests, not_run = read_stream(stream.read_text(errors="replace"))
        report.update(tests=tuple(tests), counts=counts_of(tests), not_run=tuple(not_run))
    return RunFacts(**base, **report), stdout, stderr, build_s, cmd_s


def read_stream(text: str) -> tuple[list[TestResult], list[str]]:
    """``(tests that finished, ids of collected tests that did not)`` from a streaming per-test
    report (:mod:`gpu_runner.pytest_stream`). A torn last line (the process was killed while
    writing it) is ignored; the ids are JUnit's ``classname::name``."""
    tests: dict[str, TestResult] = {}
    collected: dict[str, None] = {}
    for line in text.splitlines():
        try:
            o = json.loads(line)
        except json.JSONDecodeError:
            continue
        if o.get("event") == "collected":
            for nodeid in o.get("ids") or ():
                c, n = junit_names(nodeid)
                collected[f"{c}::{n}" if c else n] = None
        elif o.get("event") == "test":
            tests[o["id"]] = TestResult(id=o["id"], name=o.get("name", ""), classname=o.get("classname", ""),
                                        file=o.get("file"), outcome=o.get("outcome", "error"),
                                        duration_s=float(o.get("duration_s") or 0.0), message=o.get("message", ""),
                                        traceback=o.get("traceback", ""))
    return list(tests.values()), [i for i in collected if i not in tests]


def report_files(suite: SuiteConfig, checkout: Path) -> dict[str, tuple[int, int, int]]:
    """``{path: (mtime_ns, size, inode)}`` of the files the report path matches now (before the
    build runs), so that :func:`read_report` can tell a report this run wrote from one already there."""
    if suite.report.path == "-":
        return {}
    out = {}
    for p in glob.glob(str(checkout / suite.report.path)):
        st = os.stat(p)
        out[p] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return out


def read_report(suite: SuiteConfig, checkout: Path, command_stdout: str,
                before: dict[str, tuple[int, int, int]] | None = None) -> dict:
    """The report-related fields of :class:`RunFacts`: ``report_state`` (ok/missing/stale/
    unparsable), ``report_error``, ``tests``, ``counts``, ``benchmarks``. A file that is unchanged
    since before the run (``before``, from :func:`report_files`: same mtime, size and inode) is
    stale: a report committed to the repository, or left by an earlier run, never counts."""
    fmt, rel = suite.report.format, suite.report.path
    try:
        if rel == "-":
            text = command_stdout
            if fmt == "junit":
                raise ReportError("a JUnit report must be a file, not '-' (stdout)")
        else:
            paths = sorted(Path(p) for p in glob.glob(str(checkout / rel)))
            if not paths:
                return dict(report_state="missing")
            if any((before or {}).get(str(p)) == (p.stat().st_mtime_ns, p.stat().st_size, p.stat().st_ino)
                   for p in paths):
                return dict(report_state="stale")
            if fmt == "junit":
                tests, teardown_errors, repeated = read_junit(paths)
                harness = pytest_total(command_stdout, len(paths))
                # pytest's summary counts a test whose teardown failed twice (its outcome, then
                # the error); the report holds it once, as an error: a test failure, not a count
                # the suite cannot be trusted on. A test two runs of a glob both took is one
                # test (each run's summary counted it), so two overlapping runs never make up
                # the count of tests a suite promises
                return dict(report_state="ok", tests=tuple(tests), repeated=repeated,
                            counts=counts_of(tests, None if harness is None
                                             else harness - teardown_errors - repeated))
            if len(paths) > 1:
                raise ReportError(f"{rel} matches {len(paths)} files; a {fmt} report is one file")
            text = paths[0].read_text(errors="replace")
        if fmt == "lit":
            tests, harness = parse_lit(text)
            return dict(report_state="ok", tests=tuple(tests), counts=counts_of(tests, harness))
        points = parse_benchmark_json(text, rel)
        return dict(report_state="ok", benchmarks=tuple(points), counts=Counts(total=len(points),
                    passed=sum(p.ok for p in points), failed=sum(not p.ok for p in points)))
    except ReportError as e:
        return dict(report_state="unparsable", report_error=str(e))
