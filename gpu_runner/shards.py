"""Sharding a suite across runners: which tests a shard runs, and one verdict from all shards.

A suite with ``shards: N`` runs as N runs of the same commit, shard ``i/N`` (1-based) each. A test
belongs to shard :func:`shard_of` ``(test id, N)`` — a hash of the id, so the split is the same on
every machine and every run and needs no shared list of tests. pytest applies it through
:mod:`gpu_runner.pytest_shard` (the other tests are *deselected*, so neither the JUnit report nor
pytest's summary counts them); lit through its own ``LIT_NUM_SHARDS``/``LIT_RUN_SHARD``.

:func:`merge` is pure: the shards' results in, one :class:`RunResult` out, saturated like a single
run — every shard must be there (a missing one is red ``shard-missing``), each must be green or
only have failing tests, no test may run in two shards (``shard-overlap``), and the *summed* count
of tests that ran is judged against ``expected_tests`` / ``min_tests`` (a shard on its own is not).
"""
from __future__ import annotations

import hashlib
import re

from gpu_runner.result import Attempt, Counts, Durations, Environment, Reason, RunResult, TestResult, outcome_for
from gpu_runner.saturation import RunFacts, judge

ENV_SHARD = "FORKSYNC_SHARD"        # "i/N" in the suite's environment
_SPEC = re.compile(r"^([1-9][0-9]*)/([1-9][0-9]*)$")


def parse_shard(spec: str) -> tuple[int, int]:
    """``"2/4"`` → ``(2, 4)``. Raises ``ValueError`` naming the spec unless 1 ≤ i ≤ N ≤ 64."""
    m = _SPEC.match(spec.strip())
    if not m or not 1 <= int(m[1]) <= int(m[2]) <= 64:
        raise ValueError(f"shard {spec!r}: give I/N with 1 <= I <= N <= 64, e.g. 1/2")
    return int(m[1]), int(m[2])


def shard_of(test_id: str, count: int) -> int:
    """The shard (1-based) that runs ``test_id`` when the suite has ``count`` shards: the first
    8 bytes of sha256(test id), modulo ``count``. Stable across machines, Python versions and runs."""
    return int.from_bytes(hashlib.sha256(test_id.encode()).digest()[:8], "big") % count + 1


def split(test_ids, count: int) -> dict[int, list[str]]:
    """``{shard: [test ids]}`` for every shard 1..count (empty lists included), ids in input order."""
    out: dict[int, list[str]] = {i: [] for i in range(1, count + 1)}
    for t in test_ids:
        out[shard_of(t, count)].append(t)
    return out


def merge(results: dict[int, RunResult | None], count: int, *, suite: str, level: str, commit: str, platform: str,
          backend: str, report_format: str = "junit", expected_tests: int | None = None, min_tests: int | None = None,
          expected_field: str = "expected_tests") -> RunResult:
    """One result for a suite run as ``count`` shards. ``results``: shard number → its result (None
    or absent: it sent none). Reasons, in order: ``shard-missing`` for each absent shard,
    ``shard-mismatch`` for a result of another suite/commit/platform/shard, each shard's own
    reasons prefixed ``shard i/N:``, ``shard-overlap`` for a test id in two shards, then the
    summed counts judged as one run would be (``zero-tests``, ``count-mismatch``, ``below-floor``).
    Counts, tests and benchmark points are the shards' together; durations: ``total`` is the
    slowest shard (they run side by side), the others summed."""
    reasons: list[Reason] = []
    present: dict[int, RunResult] = {}
    for i in range(1, count + 1):
        r = results.get(i)
        if r is None:
            reasons.append(Reason(code="shard-missing", detail=f"shard {i}/{count} sent no result"))
            continue
        if (r.suite, r.commit, r.platform) != (suite, commit, platform) or (r.shard or f"{i}/{count}") != f"{i}/{count}":
            reasons.append(Reason(code="shard-mismatch", detail=f"the result given for shard {i}/{count} is for "
                                  f"{r.suite!r} at {r.commit[:12]} on {r.platform}, shard {r.shard or 'none'}"))
            continue
        present[i] = r
        reasons += [x.model_copy(update={"detail": f"shard {i}/{count}: {x.detail}"}) for x in r.reasons]
    tests: list[TestResult] = []
    seen: dict[str, int] = {}
    overlap: list[str] = []
    for i, r in present.items():
        for t in r.tests:
            if t.id in seen:
                overlap.append(f"{t.id} (shards {seen[t.id]} and {i})")
            seen.setdefault(t.id, i)
            tests.append(t)
    if overlap:
        reasons.append(Reason(code="shard-overlap", detail="tests ran in two shards: " + ", ".join(overlap[:10])))
    cs = [r.counts for r in present.values()]
    harness = [c.harness_total for c in cs]
    counts = Counts(total=sum(c.total for c in cs), passed=sum(c.passed for c in cs), failed=sum(c.failed for c in cs),
                    error=sum(c.error for c in cs), skipped=sum(c.skipped for c in cs),
                    harness_total=sum(h for h in harness) if harness and None not in harness else None)
    benchmarks = [p for r in present.values() for p in r.benchmarks]
    if present and len(present) == count:
        _, whole = judge(RunFacts(level=level, report_format=report_format, expected_tests=expected_tests,
                                  min_tests=min_tests, expected_field=expected_field, report_state="ok",
                                  tests=tuple(tests), counts=counts, benchmarks=tuple(benchmarks), exit_code=None))
        reasons += [x for x in whole if x.code in ("zero-tests", "count-mismatch", "below-floor")]
    rs = list(present.values())
    first = rs[0] if rs else None
    durations = Durations(checkout=sum(r.durations.checkout for r in rs), build=sum(r.durations.build for r in rs),
                          command=sum(r.durations.command for r in rs), tests=sum(r.durations.tests for r in rs),
                          outside_tests=sum(r.durations.outside_tests for r in rs),
                          total=max((r.durations.total for r in rs), default=0.0))
    attempts = [Attempt(**{**a.model_dump(), "number": n}) for n, a in enumerate((a for r in rs for a in r.attempts), 1)]
    tails = lambda attr: "\n".join(f"--- shard {i}/{count} ---\n{getattr(r, attr)[-2000:]}" for i, r in present.items())  # noqa: E731
    return RunResult(
        suite=suite, level=level, commit=commit, platform=platform, backend=backend,
        verdict="red" if reasons else "green", outcome=outcome_for(reasons), reasons=reasons, counts=counts,
        tests=tests, benchmarks=benchmarks, durations=durations, attempts=attempts,
        environment=first.environment if first else Environment(runner_id="unknown"),
        report_path=first.report_path if first else "", shard=f"all/{count}",
        started_at=min((r.started_at for r in rs), default=0), finished_at=max((r.finished_at for r in rs), default=0),
        stdout_tail=tails("stdout_tail"), stderr_tail=tails("stderr_tail"),
        triton_cache=first.triton_cache if first else "", not_run=sorted({t for r in rs for t in r.not_run}),
        workers=max((r.workers for r in rs), default=1))


def merge_suite(results: dict[int, RunResult | None], suite, commit: str, platform: str, backend: str,
                count: int | None = None) -> RunResult:
    """:func:`merge` for ``suite`` (a :class:`bot.config.suites.SuiteConfig`): its level, report
    format, and the counts it expects on ``platform``; ``count`` shards (default ``suite.shards``)."""
    per_platform = isinstance(suite.expected_tests, dict)
    return merge(results, count or suite.shards, suite=suite.name, level=suite.level, commit=commit, platform=platform,
                 backend=backend, report_format=suite.report.format, expected_tests=suite.expected_for(platform),
                 min_tests=suite.min_tests, expected_field=f"expected_tests.{platform}" if per_platform else "expected_tests")
