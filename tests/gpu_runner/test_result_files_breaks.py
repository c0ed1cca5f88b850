"""Breaks of the saturation rule against result files of real runners: CTest's JUnit output
(``ctest --output-junit``, CMake ≥ 3.21) read through the same JUnit reader as pytest's, from a
real ``ctest`` run on the fork's checkout."""
from __future__ import annotations

import shutil

import pytest

from gpu_runner.runner import run_local
from tests.gpu_runner.test_runner import codes, commit, suite

pytestmark = pytest.mark.skipif(shutil.which("ctest") is None or shutil.which("cmake") is None,
                                reason="needs CMake's ctest")

#: configure the tests in ``ctests/`` and run them, CTest writing its JUnit file in the build folder
CTEST = "cmake -S ctests -B build/ct >/dev/null && cd build/ct && ctest --output-junit junit.xml"


def ctest_suite(expected: int):
    return suite(build=None, command=CTEST, report={"format": "junit", "path": "build/ct/junit.xml"},
                 expected_tests=expected, env={})


def cmake_lists(*tests: str) -> dict[str, str]:
    return {"ctests/CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(t NONE)\nenable_testing()\n"
                                     + "".join(t + "\n" for t in tests)}


def test_a_disabled_ctest_test_does_not_count_as_a_test_that_ran(repo):
    """A CTest suite of three tests (``expected_tests: 3``) where the PR sets ``DISABLED TRUE`` on
    the one it breaks. CTest writes that test as ``<testcase … status="disabled">`` with no
    ``<skipped>`` element. What a user sees: green, 3 tests ran — the disabled test is read as
    passed, so disabling a broken test keeps the suite saturated. What they should see: red
    ``count-mismatch`` — 2 tests ran, the disabled one skipped (docs/validation.md "Counting")."""
    commit(repo, cmake_lists("add_test(NAME kernel_a COMMAND true)", "add_test(NAME kernel_b COMMAND true)",
                             "add_test(NAME kernel_c COMMAND false)",
                             "set_tests_properties(kernel_c PROPERTIES DISABLED TRUE)"), "ctest suite")
    r = run_local(ctest_suite(3), repo, "HEAD")
    assert {t.id: t.outcome for t in r.tests} == {"kernel_a::kernel_a": "passed", "kernel_b::kernel_b": "passed",
                                                  "kernel_c::kernel_c": "skipped"}
    assert (r.verdict, codes(r), r.counts.ran, r.counts.skipped) == ("red", ["count-mismatch"], 2, 1)


def test_a_failing_ctest_test_is_a_test_failure_not_a_crashed_runner(repo):
    """A CTest suite of two tests, one failing. ``ctest`` exits with status 8 when tests fail (its
    ``TEST_ERRORS`` bit; pytest and lit use 1). What a user sees: ``runner-crashed: the suite's
    command exited with status 8, which is not the harness's 'tests failed' status`` and outcome
    ``error`` — the suite "cannot be trusted", so the gate blocks even when the same test already
    fails on the base. What they should see: outcome ``fail`` with ``test-failures`` naming the
    test, compared with the base like any other failure."""
    commit(repo, cmake_lists("add_test(NAME kernel_a COMMAND true)", "add_test(NAME kernel_b COMMAND false)"),
           "ctest suite")
    r = run_local(ctest_suite(2), repo, "HEAD")
    assert r.attempts[-1].exit_code == 8
    assert (r.verdict, r.outcome, codes(r), list(r.failing)) == ("red", "fail", ["test-failures"], ["kernel_b::kernel_b"])


def test_a_ctest_test_whose_executable_is_missing_is_a_failure_not_a_skip(repo):
    """A CTest suite of two tests where the PR breaks the build of one test's program: CTest cannot
    find the executable, prints ``***Not Run`` and lists it under "The following tests FAILED", but
    its JUnit file writes ``status="notrun"`` with ``<skipped message="Unable to find
    executable"/>``. What a user sees: red with ``count-mismatch: 1 tests ran, the suite expects
    exactly 2: 1 skipped or xfail tests do not count; make them run, or, if they are meant to skip
    here, set expected_tests: 1`` (advice to lower the count) beside ``runner-crashed``. What they
    should see: the test as an ``error`` — a test failure naming it (``test-failures``), as CTest
    itself counts it."""
    commit(repo, cmake_lists("add_test(NAME kernel_a COMMAND true)",
                             "add_test(NAME kernel_b COMMAND ${CMAKE_BINARY_DIR}/never_built)"), "ctest suite")
    r = run_local(ctest_suite(2), repo, "HEAD")
    assert {t.id: t.outcome for t in r.tests} == {"kernel_a::kernel_a": "passed", "kernel_b::kernel_b": "error"}
    assert (r.verdict, r.outcome, codes(r), list(r.failing)) == ("red", "fail", ["test-failures"], ["kernel_b::kernel_b"])
    assert r.tests[1].message == "Unable to find executable"


def test_a_ctest_test_skipped_by_its_skip_return_code_is_skipped(repo):
    """A CTest test that skips itself (``SKIP_RETURN_CODE``) is written ``status="notrun"`` too,
    with ``<skipped message="SKIP_RETURN_CODE=77"/>``; CTest lists it under "did not run", not as
    failed. It stays a skip (not counted, not a failure)."""
    commit(repo, cmake_lists("add_test(NAME kernel_a COMMAND true)", "add_test(NAME kernel_b COMMAND sh -c \"exit 77\")",
                             "set_tests_properties(kernel_b PROPERTIES SKIP_RETURN_CODE 77)"), "ctest suite")
    r = run_local(ctest_suite(1), repo, "HEAD")
    assert {t.id: t.outcome for t in r.tests} == {"kernel_a::kernel_a": "passed", "kernel_b::kernel_b": "skipped"}
    assert (r.verdict, codes(r)) == ("green", [])


def test_a_pytest_that_colours_its_output_still_gives_its_count(repo):
    """pytest colours its summary line when ``PY_COLORS=1`` or ``FORCE_COLOR`` is set (common in CI
    so that logs show colour): ``\\x1b[32m===… \\x1b[1m3 passed\\x1b[0m\\x1b[32m in 0.41s …``. What a
    user sees: ``harness_total`` null in the result — the harness's own count is never compared with
    the report, so ``count-disagrees-with-harness`` cannot fire for that suite. What they should see:
    pytest's count, 3, as without colour."""
    r = run_local(suite(env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PY_COLORS": "1"}), repo, "HEAD")
    assert "\x1b[" in r.stdout_tail and "3 passed" in r.stdout_tail
    assert (r.verdict, r.counts.total, r.counts.harness_total) == ("green", 3, 3)
