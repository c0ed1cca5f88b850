"""Report parsers: JUnit XML (junitparser), lit's own output, benchmark JSON; and the harness's
own counts printed to stdout (pytest's summary line, lit's "(k of N)").

Pure functions over text/paths; each raises :class:`ReportError` (what and where) on a report it
cannot read, which the runner records as ``report-unparsable`` — never as an empty pass.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from junitparser import Error, Failure, JUnitXml, Skipped, TestSuite
from pydantic import ValidationError

from gpu_runner.result import BENCH_SCHEMA, BenchmarkPoint, Counts, TestResult

#: what a test's traceback is cut to in the result; the parsers return whole texts, and the
#: runner cuts only after hiding secrets (:func:`gpu_runner.runner.clip_result`)
MAX_TRACEBACK = 20_000


class ReportError(ValueError):
    """A report that exists but cannot be parsed; the message names the file and the problem."""


def counts_of(tests: list[TestResult], harness_total: int | None = None) -> Counts:
    c = Counts(total=len(tests), harness_total=harness_total)
    for t in tests:
        setattr(c, t.outcome, getattr(c, t.outcome) + 1)
    return c


# ---------------------------------------------------------------------------------------- JUnit
def parse_junit(paths: list[Path]) -> list[TestResult]:
    """Test cases of one or more JUnit XML files, in file order. A ``<testcase>`` with a
    ``<failure>`` is ``failed``, with ``<error>`` is ``error``, with ``<skipped>`` is ``skipped``
    (pytest writes xfail as skipped), else ``passed``; CTest's ``status`` is read as CTest counts
    (:data:`_CTEST_SKIP`). A test id written more than once in one
    file is one test whose last case is its outcome: pytest-rerunfailures writes a ``<testcase>``
    per attempt (the earlier ones without a result element), while pytest's summary and the
    testsuite's ``tests=`` count the test once. A test id in more than one file (two runs of a
    glob's commands that both took it) is one test too, with its worst outcome (error, failed,
    passed, skipped): the suite's count is of tests, not of runs, and a failure in one run stays
    a failure."""
    return read_junit(paths)[0]


#: how pytest's junitxml begins the ``<error>`` of a failed teardown
_TEARDOWN_ERROR = "failed on teardown with "


#: a test's outcomes from worst to best, for one test written into several files of a glob
_WORST_FIRST = ("error", "failed", "passed", "skipped")


def read_junit(paths: list[Path]) -> tuple[list[TestResult], int, int]:
    """``(tests, teardown errors, repeated)``: :func:`parse_junit`'s tests; how many ``<error>``
    elements of theirs pytest wrote for a failed teardown (message ``failed on teardown with …``) —
    pytest's summary counts each of those as one more error beside the test's own outcome
    (``3 passed, 1 error`` for 3 tests); the test itself is ``error`` here —; and how many test
    cases were of a test id an earlier file already held (each pytest run's summary counts them
    again; here the test is one, with its worst outcome, in the place first written)."""
    tests: dict[str, TestResult] = {}
    teardown = repeated = 0
    for p in paths:
        mine: dict[str, TestResult] = {}
        torn: dict[str, int] = {}
        try:
            xml = JUnitXml.fromfile(str(p))
        except Exception as e:  # junitparser raises lxml/ElementTree errors of several kinds
            raise ReportError(f"{p}: not valid JUnit XML ({type(e).__name__}: {e})") from None
        suites = [xml] if isinstance(xml, TestSuite) else list(xml)
        for suite in suites:
            for case in suite:
                t = _case(case)
                mine.pop(t.id, None)    # the last attempt, in the place it was written
                mine[t.id] = t
                torn[t.id] = sum(isinstance(r, Error) and (r.message or "").startswith(_TEARDOWN_ERROR)
                                 for r in case.result)
        for t in mine.values():
            had = tests.get(t.id)
            if had is not None:
                repeated += 1
                if _WORST_FIRST.index(t.outcome) >= _WORST_FIRST.index(had.outcome):
                    continue
            tests[t.id] = t
        teardown += sum(torn.values())
    return list(tests.values()), teardown, repeated


#: CTest's ``status`` of a test it did not run (``ctest --output-junit``, CMake >= 3.21): ``disabled``
#: (the ``DISABLED`` property) is written without a result element; ``notrun`` with a
#: ``<skipped>`` whose message is CTest's completion status. Only ``SKIP_RETURN_CODE=<n>`` and
#: ``SKIP_REGULAR_EXPRESSION_MATCHED`` are skips to CTest ("did not run"); any other (``Unable to
#: find executable``, ``Required Files Missing``, …) it lists among the failed tests.
_CTEST_SKIP = "SKIP_"


def _case(case) -> TestResult:
    outcome, message, text = "passed", "", ""
    status = case._elem.get("status")
    if status == "disabled":
        outcome, message = "skipped", "Disabled"
    for r in case.result:
        if isinstance(r, Error):
            outcome = "error"
        elif isinstance(r, Failure):
            outcome = "failed"
        elif isinstance(r, Skipped):
            outcome = "skipped" if outcome == "passed" else outcome
        else:
            continue
        message = message or (r.message or "")
        text = text or (r.text or "")
    if status == "notrun" and outcome == "skipped" and not message.startswith(_CTEST_SKIP):
        outcome, text = "error", text or (case.system_out or "")
    classname = case.classname or ""
    name = case.name or ""
    return TestResult(
        id=f"{classname}::{name}" if classname else name, name=name, classname=classname,
        file=case._elem.get("file"), outcome=outcome, duration_s=float(case.time or 0.0),
        message=message.strip().splitlines()[0] if message.strip() else "",
        traceback=text)


def junit_names(nodeid: str) -> tuple[str, str]:
    """``(classname, name)`` of a pytest node id as pytest's junitxml writes them
    (``mangle_test_address``): ``a/b/test_x.py::TestC::test_y[p]`` → ``("a.b.test_x.TestC", "test_y[p]")``.
    The streaming plugin (:mod:`gpu_runner.pytest_stream`, loaded without this package) holds a copy."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


_PYTEST_SUMMARY = re.compile(
    r"^=*\s*((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)"
    r"(?:, )?)+)\s+in\s+[\d.]+s", re.MULTILINE)
_PYTEST_NONE = re.compile(r"^=*\s*no tests ran\b", re.MULTILINE)
#: an ANSI colour or style sequence (``\x1b[32m``, ``\x1b[1m``, ``\x1b[0m``)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def pytest_total(stdout: str, runs: int = 1) -> int | None:
    """The number of tests pytest says it ran (passed + failed + errors + skipped + xfailed +
    xpassed; deselected, reruns and warnings excluded), from its summary line
    (e.g. ``2 failed, 28 passed in 5.40s``) — the sum of the last ``runs`` of them, for a command
    that runs pytest ``runs`` times (a JUnit glob matching one file per run); 0 for ``no tests
    ran``; None when no summary is found, or fewer than ``runs`` (another harness, or a pytest
    that died before printing one: nothing to compare with)."""
    # PY_COLORS / FORCE_COLOR colour the summary even when stdout is a file
    stdout = _ANSI.sub("", stdout or "")
    found = list(_PYTEST_SUMMARY.finditer(stdout))
    if not found:
        return 0 if runs == 1 and _PYTEST_NONE.search(stdout) else None
    if len(found) < runs:
        return None
    total = 0
    for m in found[-runs:]:
        for n, word in re.findall(r"(\d+) (\w+)", m.group(1)):
            if word in ("passed", "failed", "error", "errors", "skipped", "xfailed", "xpassed"):
                total += int(n)
    return total


# ------------------------------------------------------------------------------------------ lit
_LIT_LINE = re.compile(
    r"^(PASS|FAIL|XFAIL|XPASS|UNSUPPORTED|UNRESOLVED|TIMEOUT|SKIPPED|EXCLUDED|FLAKYPASS): (.+?) \((\d+) of (\d+)\)\s*$",
    re.MULTILINE)
_LIT_FAIL_BLOCK = re.compile(r"^\*{20} TEST '(.+?)' FAILED \*{20}\n(.*?)^\*{20}\s*$", re.MULTILINE | re.DOTALL)
_LIT_DISCOVERED = re.compile(r"^Total Discovered Tests:\s*(\d+)", re.MULTILINE)
_LIT_EXCLUDED = re.compile(r"^\s*Excluded\s*:\s*(\d+)", re.MULTILINE)
_LIT_TESTING = re.compile(r"^-- Testing: (\d+) (?:of \d+ )?tests?\b", re.MULTILINE)
_LIT_OUTCOME = {"PASS": "passed", "XFAIL": "passed", "FLAKYPASS": "passed", "FAIL": "failed", "XPASS": "failed",
                "UNRESOLVED": "error", "TIMEOUT": "failed", "UNSUPPORTED": "skipped", "SKIPPED": "skipped",
                "EXCLUDED": "skipped"}


def parse_lit(text: str) -> tuple[list[TestResult], int | None]:
    """Tests from lit's output (``lit -v``: one ``RESULT: suite :: path (k of N)`` line per test,
    failure logs between ``*** TEST '…' FAILED ***`` rulers) and lit's own count of the tests it ran
    (``-- Testing: N of M tests``, else ``N`` of the ``(k of N)`` lines, else ``Total Discovered
    Tests:`` less ``Excluded:`` — a shard or a filter leaves the rest excluded). XFAIL counts as passed; XPASS, TIMEOUT as
    failed; UNRESOLVED as error; UNSUPPORTED as skipped. Raises :class:`ReportError` when the text
    holds no lit result line and no lit summary."""
    logs = {m.group(1): m.group(2) for m in _LIT_FAIL_BLOCK.finditer(text or "")}
    tests, totals = [], set()
    for m in _LIT_LINE.finditer(text or ""):
        code, tid, _k, n = m.groups()
        totals.add(int(n))
        log = logs.get(tid, "")
        outcome = _LIT_OUTCOME[code]
        suite, _, path = tid.partition(" :: ")
        tests.append(TestResult(id=tid, name=path or tid, classname=suite if path else "", outcome=outcome,
                                message=f"{code}: {tid}" if outcome in ("failed", "error") else "",
                                traceback=log))
    disc = _LIT_DISCOVERED.search(text or "")
    if not tests and not disc:
        raise ReportError("no lit result lines ('PASS: suite :: test (k of N)') and no lit summary found")
    if len(totals) > 1:
        raise ReportError(f"lit output mixes runs: result lines give totals {sorted(totals)}")
    # what lit selected to run: a shard (LIT_NUM_SHARDS) or a filter (--filter-out, LIT_FILTER_OUT)
    # leaves the other tests "Excluded", which "Total Discovered Tests" still counts
    testing = _LIT_TESTING.search(text or "")
    if testing:
        harness = int(testing.group(1))
    elif totals:
        harness = max(totals)
    elif disc:
        excluded = _LIT_EXCLUDED.search(text[disc.end():])
        harness = int(disc.group(1)) - (int(excluded.group(1)) if excluded else 0)
    else:
        harness = None
    return tests, harness


# ------------------------------------------------------------------------------ benchmark JSON
def parse_benchmark_json(text: str, source: str = "<benchmark>") -> list[BenchmarkPoint]:
    """Points of a ``forksync-bench/1`` file (``{"schema": …, "points": [ … ]}``, see
    docs/validation.md). Raises :class:`ReportError` naming the point and field that are wrong."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ReportError(f"{source}: not JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    if not isinstance(data, dict) or data.get("schema") != BENCH_SCHEMA or not isinstance(data.get("points"), list):
        raise ReportError(f"{source}: expected an object with schema {BENCH_SCHEMA!r} and a list 'points'")
    points = []
    for i, p in enumerate(data["points"]):
        try:
            points.append(BenchmarkPoint.model_validate(p))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise ReportError(f"{source}: points.{i}.{where}: {first['msg']}") from None
    return points
