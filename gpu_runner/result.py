"""The runner's result JSON (schema ``forksync-result/1``): one file per suite run, read by the
merge gate (``bot/validation/gate.py``), the check-run renderer, L2 regression detection and triage.

Shapes and units: durations in seconds (float), times in epoch seconds UTC, shas full 40-hex.
Test ids are ``<classname>::<name>`` for JUnit (pytest: ``examples.kernels.test_kernels::test_add[small-fp32]``)
and lit's own ``<suite> :: <path>``. The file is written once, at the end of a run; a run that
never writes it is *absent*, which the gate counts as red (saturated validation).

``verdict`` is ``green`` only when the suite is trustworthy **and** nothing failed; ``outcome``
refines a red verdict for the gate: ``fail`` (the suite ran as configured and tests failed) or
``error`` (the suite itself cannot be trusted: crash, timeout, build failure, missing/unparsable
report, short or disagreeing count) or ``infrastructure`` (an infrastructure error — no GPU, a
driver that failed to start, a full disk — persisted through the retries: retry on another
runner). ``reasons`` say why, one per problem.
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA = "forksync-result/1"
BENCH_SCHEMA = "forksync-bench/1"

Outcome = Literal["passed", "failed", "error", "skipped"]

#: Reason codes. ``test-failures`` alone makes outcome ``fail``; every other code makes it ``error``.
REASON_CODES = (
    "test-failures",          # tests failed or errored (names in detail)
    "build-failed",           # the suite's build step exited non-zero
    "timed-out",              # build + command ran past timeout_s (process group killed)
    "runner-crashed",         # killed by a signal, or exit status the harness does not use for test failures
    "exit-status-disagrees",  # exit status ≠ 0 while the report shows no failure (or the reverse)
    "report-missing",         # no report file at the configured path
    "report-stale",           # a report file exists but this run did not write it
    "report-unparsable",      # the report could not be parsed
    "zero-tests",             # the report holds no test (or no test ran: all skipped)
    "below-floor",            # fewer tests ran than min_tests
    "count-mismatch",         # the count of tests that ran (skipped and xfail excluded) ≠ expected_tests
    "count-disagrees-with-harness",  # the report's count ≠ the harness's own count (pytest/lit summary)
    "benchmark-failed",       # a benchmark point is marked not ok (wrong result)
    "infra-error",            # an infrastructure error persisted through infra_retries, or the GPU is not the platform's
    "tests-not-run",          # collected tests that never finished (the suite was killed or crashed first)
    "suite-absent",           # a required suite has no result in a run
    "workflow-failed",        # github-actions: the workflow finished without a result artifact
    "shard-missing",          # a sharded suite: one shard sent no result
    "shard-mismatch",         # a sharded suite: a shard's result is for another suite, commit, platform or shard
    "shard-overlap",          # a sharded suite: one test ran in two shards
)


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Reason(_M):
    """Why a run is red. ``code`` is one of :data:`REASON_CODES`; ``detail`` is for a person.

    The count reasons (``zero-tests``, ``count-mismatch``, ``below-floor``) also carry their
    counts as numbers, so a reader tells a shortfall without reading the detail's words: ``ran``
    (tests that ran, skipped and xfail excluded; benchmark points) and ``expected`` (the count
    the rule compared it with: ``expected_tests``, ``min_tests``; None for ``zero-tests``).
    Both are None for other reasons and in results written before they were kept."""

    code: str
    detail: str
    ran: int | None = None
    expected: int | None = None


class TestResult(_M):
    """One test case as the report gives it. ``message`` is the failure's one-line message;
    ``traceback`` its full text (pytest's long repr, lit's failure log), cut to 20 000 chars."""

    id: str
    name: str
    classname: str = ""
    file: str | None = None
    outcome: Outcome
    duration_s: float = 0.0
    message: str = ""
    traceback: str = ""


TestResult.__test__ = False   # a data class, not a pytest test class


class Counts(_M):
    """Counts from the report (``total`` = passed + failed + error + skipped), and the harness's
    own count when it printed one (pytest's summary line, lit's "(k of N)" / "Total Discovered
    Tests"), else None."""

    total: int = 0
    passed: int = 0
    failed: int = 0
    error: int = 0
    skipped: int = 0
    harness_total: int | None = None

    @property
    def ran(self) -> int:
        return self.total - self.skipped


class BenchmarkPoint(_M):
    """One L2 point: the median (``value``, in ``unit``) of ``repeats`` repeat medians.
    ``ok`` false means the kernel computed a wrong result while being measured."""

    model_config = ConfigDict(extra="allow")
    benchmark: str
    shape: str
    dtype: str
    impl: str
    metric: str
    unit: str
    value: float
    config: str | None = None
    median_ms: float | None = None
    repeat_medians_ms: list[float] = Field(default_factory=list)
    repeats: int = 1
    ok: bool = True


class Environment(_M):
    """What the run found on the machine (nothing is installed by the runner)."""

    runner_id: str
    hostname: str = ""
    os: str = ""
    python: str = ""
    cpu: str = ""
    gpu_model: str | None = None
    gpu_count: int = 0
    driver: str | None = None
    cuda: str | None = None
    torch: str | None = None
    triton: str | None = None
    git: str | None = None


class Attempt(_M):
    """One try of build + command. ``exit_code`` is None when the process was killed (timeout)
    and negative for a signal. ``infra_error`` is the matched infrastructure-error text."""

    number: int
    build_exit_code: int | None = None
    exit_code: int | None = None
    timed_out: bool = False
    infra_error: str | None = None
    duration_s: float = 0.0


class Durations(_M):
    """Seconds: ``checkout`` (worktree), ``build``, ``command`` (the suite's own process, wall
    time, last attempt), ``tests`` (sum of the report's test-case times: the test bodies with their
    fixtures), ``outside_tests`` (``command`` − ``tests``, at least 0: interpreter start, imports
    such as torch, collection, CUDA start-up — time to signal the test times leave out; with
    ``workers`` > 1 the bodies overlap and this is 0), ``total`` (the runner, start to end)."""

    checkout: float = 0.0
    build: float = 0.0
    command: float = 0.0
    tests: float = 0.0
    outside_tests: float = 0.0
    total: float = 0.0


class RunResult(_M):
    """One suite run on one commit and platform (see the module docstring)."""

    schema_: str = Field(SCHEMA, alias="schema")
    suite: str
    level: str
    commit: str
    platform: str = "cpu"
    backend: str = "local"
    verdict: Literal["green", "red"]
    outcome: Literal["pass", "fail", "error", "infrastructure"]
    reasons: list[Reason] = Field(default_factory=list)
    counts: Counts = Counts()
    tests: list[TestResult] = Field(default_factory=list)
    benchmarks: list[BenchmarkPoint] = Field(default_factory=list)
    durations: Durations = Durations()
    attempts: list[Attempt] = Field(default_factory=list)
    environment: Environment
    report_path: str = ""
    shard: str = ""                  # "i/N" for one shard of a sharded suite, "all/N" once merged, "" unsharded
    started_at: int = 0
    finished_at: int = 0
    stdout_tail: str = ""
    stderr_tail: str = ""
    #: where the Triton compile cache lived: ``per-runner`` (kept across runs: warm), ``fresh``
    #: (a new one per attempt: L2 measures cold compile time), ``suite`` (the suite's env sets it)
    triton_cache: str = ""
    #: collected tests that did not finish (read from the streaming report of a killed suite)
    not_run: list[str] = Field(default_factory=list)
    workers: int = 1

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @property
    def failing(self) -> tuple[str, ...]:
        """Ids of failed or errored tests, in report order (what the gate compares with the base)."""
        return tuple(t.id for t in self.tests if t.outcome in ("failed", "error"))

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=1)

    @classmethod
    def from_json(cls, text: str | bytes) -> "RunResult":
        """Parse a result file. Raises pydantic ``ValidationError`` naming the bad field."""
        return cls.model_validate_json(text)


def outcome_for(reasons: list[Reason]) -> Literal["pass", "fail", "error", "infrastructure"]:
    """``pass`` with no reason, ``infrastructure`` when an infrastructure error persisted through
    the retries (the machine, not the code: retry on another runner), ``fail`` when the only
    reasons are test failures, else ``error``."""
    if not reasons:
        return "pass"
    if any(r.code == "infra-error" for r in reasons):
        return "infrastructure"
    return "fail" if all(r.code == "test-failures" for r in reasons) else "error"
