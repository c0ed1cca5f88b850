"""Saturated validation: a pure function from what a run produced to a verdict.

Nothing is green by default: :func:`judge` starts from the facts and returns ``green`` only when
the suite ran to completion, wrote a fresh parsable report, the count of tests that **ran**
(passed + failed + error; skipped and xfail — JUnit ``<skipped>`` — do not count) matches what
the suite promises (``expected_tests`` exactly, ``min_tests`` as a floor), the report's count
agrees with the harness's own count, no test failed and no infrastructure error remained.
Counting skipped tests would let a PR skip (or xfail) the very tests it breaks and stay green.
Every problem found becomes one :class:`~gpu_runner.result.Reason`; all are reported, not only
the first, so a person sees everything that is wrong at once.

:func:`missing_required` turns required suites absent from a set of results into reasons
(``suite-absent``) — silence is not green.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from gpu_runner.result import BenchmarkPoint, Counts, Reason, TestResult

#: Exit statuses a harness uses for "tests ran and some failed" (pytest 1, lit 1, ctest 8: its
#: ``TEST_ERRORS`` bit). Any other non-zero status (pytest 2 interrupted, 3 internal error, 4
#: usage, 5 no tests; a signal) means the harness itself did not complete.
TEST_FAILURE_EXIT = frozenset({1, 8})
SHOW_FAILING = 10


@dataclass(frozen=True)
class RunFacts:
    """What one run of a suite left behind (filled in by the runner; plain data).

    ``build_exit_code``/``exit_code``: None when the step did not run or was killed; negative for
    a signal. ``report_state``: ``ok`` | ``missing`` | ``stale`` (exists, but older than the run)
    | ``unparsable``; ``report_error`` says why. ``harness_total`` is the harness's own count
    (None when it printed none)."""

    level: str = "L1"
    report_format: str = "junit"
    expected_tests: int | None = None
    min_tests: int | None = None
    has_build: bool = False
    build_exit_code: int | None = None
    exit_code: int | None = None
    timed_out: bool = False
    timeout_s: float | None = None
    report_state: str = "missing"
    report_error: str = ""
    report_path: str = ""
    tests: tuple[TestResult, ...] = ()
    counts: Counts = field(default_factory=Counts)
    benchmarks: tuple[BenchmarkPoint, ...] = ()
    infra_error: str | None = None
    expected_field: str = "expected_tests"     # where expected_tests came from, for the red reason (``expected_tests.h200``)
    not_run: tuple[str, ...] = ()              # collected tests that never finished (streaming report)
    sharded: bool = False      # one shard of a sharded suite: no count rule here (a shard may hold no test);
                               # gpu_runner.shards.merge judges the summed counts
    repeated: int = 0          # test cases of an id an earlier JUnit file of the glob held (counted once)


def judge(f: RunFacts) -> tuple[str, list[Reason]]:
    """``("green", [])`` or ``("red", reasons)`` for one run. Rules in report order:

    1. ``timed-out``; ``build-failed``; ``infra-error`` (still present after retries);
       ``runner-crashed`` (killed by a signal, or an exit status outside :data:`TEST_FAILURE_EXIT`);
    2. the report: ``report-missing`` / ``report-stale`` / ``report-unparsable``;
    3. counts (JUnit, lit): ``zero-tests`` (none in the report, or none ran), ``count-mismatch``
       (tests that ran ≠ ``expected_tests``; the detail says how many were skipped and what to
       change), ``below-floor`` (ran < ``min_tests``),
       ``count-disagrees-with-harness`` (report total ≠ the harness's summary);
       benchmark JSON: ``zero-tests`` / ``count-mismatch`` / ``below-floor`` over points,
       ``benchmark-failed`` for points not ok;
    4. ``test-failures`` (names of the first ten), and ``exit-status-disagrees`` when the exit
       status is non-zero yet the report shows no failure, or zero while it shows failures.
    """
    reasons: list[Reason] = []
    add = lambda code, detail, **counts: reasons.append(Reason(code=code, detail=detail, **counts))  # noqa: E731

    if f.timed_out:
        add("timed-out", f"build + command ran past timeout_s={f.timeout_s:g}s and were killed"
            if f.timeout_s is not None else "the run was killed at its time limit")
    if f.has_build and f.build_exit_code not in (0, None):
        add("build-failed", f"the build step exited with status {f.build_exit_code}")
    if f.infra_error:
        add("infra-error", f"infrastructure error persisted through the retries: {f.infra_error!r}")
    command_ran = not f.timed_out and not (f.has_build and f.build_exit_code != 0)
    crashed = command_ran and (f.exit_code is None or (f.exit_code != 0 and f.exit_code not in TEST_FAILURE_EXIT))
    if crashed:
        what = ("was killed by signal %d" % -f.exit_code) if (f.exit_code or 0) < 0 else (
            "left no exit status" if f.exit_code is None else f"exited with status {f.exit_code}, "
            "which is not the harness's 'tests failed' status")
        add("runner-crashed", f"the suite's command {what}")

    streamed = f"; {len(f.tests)} finished tests read from the streaming per-test report" if f.tests else ""
    if f.report_state == "missing":
        add("report-missing", f"no report at {f.report_path!r}{streamed}")
    elif f.report_state == "stale":
        add("report-stale", f"the report at {f.report_path!r} predates this run (not written by it){streamed}")
    elif f.report_state == "unparsable":
        add("report-unparsable", (f.report_error or f"the report at {f.report_path!r} could not be parsed") + streamed)
    elif f.report_state != "ok":
        add("report-unparsable", f"unknown report state {f.report_state!r}")
    if f.report_state != "ok":
        # a killed suite: the tests that finished (streaming report) still count, and what did not run is named
        bad = [t.id for t in f.tests if t.outcome in ("failed", "error")]
        if bad:
            more = f" and {len(bad) - SHOW_FAILING} more" if len(bad) > SHOW_FAILING else ""
            add("test-failures", f"{f.counts.failed} failed, {f.counts.error} errors (before the suite stopped): "
                + ", ".join(bad[:SHOW_FAILING]) + more)
        if f.not_run:
            more = f" and {len(f.not_run) - SHOW_FAILING} more" if len(f.not_run) > SHOW_FAILING else ""
            add("tests-not-run", f"{len(f.not_run)} collected tests did not finish ({len(f.tests)} did): "
                + ", ".join(f.not_run[:SHOW_FAILING]) + more)
        return "red", reasons

    if f.report_format == "benchmark-json":
        _judge_points(f, add)
    else:
        _judge_tests(f, add)
    return ("green" if not reasons else "red"), reasons


def _judge_tests(f: RunFacts, add) -> None:
    c = f.counts
    if f.sharded:
        pass
    elif c.total == 0:
        add("zero-tests", "the report holds no test case", ran=0)
    elif c.ran == 0:
        add("zero-tests", f"no test ran: all {c.total} were skipped", ran=0)
    if f.expected_tests is not None and c.ran != f.expected_tests:
        add("count-mismatch", _count_detail(c, f.expected_tests, f.expected_field, f.repeated), ran=c.ran,
            expected=f.expected_tests)
    if f.min_tests is not None and c.ran < f.min_tests:
        add("below-floor", f"{c.ran} tests ran ({c.skipped} skipped or xfail, which do not count), fewer than the "
            f"floor min_tests={f.min_tests}" + (": make the skipped tests run, or lower min_tests if they are "
                                                "meant to skip here" if c.skipped else ""), ran=c.ran, expected=f.min_tests)
    if c.harness_total is not None and c.harness_total != c.total:
        add("count-disagrees-with-harness",
            f"the report holds {c.total} tests but the harness reported {c.harness_total}")
    bad = [t.id for t in f.tests if t.outcome in ("failed", "error")]
    if bad:
        more = f" and {len(bad) - SHOW_FAILING} more" if len(bad) > SHOW_FAILING else ""
        add("test-failures", f"{c.failed} failed, {c.error} errors: " + ", ".join(bad[:SHOW_FAILING]) + more)
    if f.exit_code not in (None, 0) and f.exit_code in TEST_FAILURE_EXIT and not bad:
        add("exit-status-disagrees", f"the command exited with status {f.exit_code} but the report shows no failure")
    if f.exit_code == 0 and bad:
        add("exit-status-disagrees", "the command exited 0 but the report shows failures")


def _count_detail(c: Counts, expected: int, where: str, repeated: int = 0) -> str:
    """The ``count-mismatch`` detail: how many ran, how many were skipped, and what to change;
    ``repeated``: test cases of ids another JUnit file already held, which count once."""
    head = f"{c.ran} tests ran, the suite expects exactly {expected}"
    if c.ran > expected:
        detail = head + f" (more: set {where}: {c.ran})"
    elif c.ran == 0:
        # no hint to expect none: the configuration refuses 0, and a suite that runs nothing is
        # rarely meant to
        detail = head + (f": {c.skipped} skipped or xfail tests do not count, and none ran; make them run here"
                         if c.skipped else
                         ": none ran, which usually means the command's test path matches no test or collecting "
                         "them failed (an import error); the run's log shows which")
    elif not c.skipped:
        detail = head + f" (fewer: tests went missing; if they were removed on purpose, set {where}: {c.ran})"
    else:
        detail = (head + f": {c.skipped} skipped or xfail tests do not count; make them run, or, if they are meant "
                  f"to skip here, set {where}: {c.ran}")
    if repeated:
        detail += (f"; {repeated} test id(s) are in more than one report file: a test counts once, however many "
                   "runs of the command took it")
    return detail


def _judge_points(f: RunFacts, add) -> None:
    n = len(f.benchmarks)
    if n == 0 and not f.sharded:
        add("zero-tests", "the benchmark report holds no point", ran=0)
    if f.expected_tests is not None and n != f.expected_tests:
        add("count-mismatch", f"the benchmark report holds {n} points, the suite expects exactly {f.expected_tests}",
            ran=n, expected=f.expected_tests)
    if f.min_tests is not None and n < f.min_tests:
        add("below-floor", f"{n} benchmark points, fewer than the floor min_tests={f.min_tests}", ran=n, expected=f.min_tests)
    bad = [f"{p.benchmark}[{p.shape},{p.dtype},{p.impl}]" for p in f.benchmarks if not p.ok]
    if bad:
        add("benchmark-failed", "wrong results while measuring: " + ", ".join(bad[:SHOW_FAILING]))
    # a 0 ms timer reading gives inf TFLOP/s, 0/0 NaN: a point, but no measurement
    nan = [f"{p.benchmark}[{p.shape},{p.dtype},{p.impl}] = {p.value}" for p in f.benchmarks
           if p.value is None or not math.isfinite(p.value)]
    if nan:
        add("benchmark-not-finite", "values that are no measurement: " + ", ".join(nan[:SHOW_FAILING]))
    if f.exit_code not in (None, 0) and not bad:
        add("exit-status-disagrees", f"the benchmark exited with status {f.exit_code} but no point is marked failed")


#: The counts in a ``count-mismatch`` detail of a result written before reasons kept them as
#: numbers: "<n> tests ran" (tests, since counts leave skipped ones out), "the report holds <n>
#: tests" (earlier), "the benchmark report holds <n> points", then ", the suite expects exactly <m>".
_MISMATCH = re.compile(r"(\d+) (?:tests ran|tests|points), the suite expects exactly (\d+)")


def ran_short(reason: Reason) -> bool:
    """Whether ``reason`` says the suite ran fewer tests (or benchmark points) than it promises:
    ``below-floor``, ``zero-tests``, or a ``count-mismatch`` whose ``ran`` is below its
    ``expected`` (more than expected is a mismatch, not a shortfall). A ``count-mismatch`` without
    them (a result written before they were kept) is read back from the detail as :func:`judge`
    wrote it then (:data:`_MISMATCH`); in no such words, it is not a shortfall."""
    if reason.code in ("below-floor", "zero-tests"):
        return True
    if reason.code != "count-mismatch":
        return False
    if reason.ran is not None and reason.expected is not None:
        return reason.ran < reason.expected
    m = _MISMATCH.search(reason.detail)
    return bool(m) and int(m[1]) < int(m[2])


def missing_required(required: list[str] | tuple[str, ...], present: list[str] | tuple[str, ...]) -> list[Reason]:
    """One ``suite-absent`` reason for each required suite name with no result among ``present``
    (in ``required`` order)."""
    have = set(present)
    return [Reason(code="suite-absent", detail=f"required suite {name!r} has no result in this run")
            for name in required if name not in have]
