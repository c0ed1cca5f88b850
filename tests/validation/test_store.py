"""Suite results keep the attempt they answer: a result of a run a re-run replaced never stands
for the re-run (it is kept aside as superseded), on the real store."""
import json

import pytest

from bot.store import Store
from bot.validation import store as vstore
from gpu_runner.result import Counts, Environment, RunResult

#: one suite's row: repo, PR, commit, suite, platform
PEND = dict(repo="o/f", pr=3, sha="c" * 40, suite="unit", platform="cpu", level="L1", backend="local")


@pytest.fixture
def db(tmp_path):
    store = Store(tmp_path / "v.db")
    vstore.ensure(store)
    yield store
    store.close()


def result(outcome: str) -> RunResult:
    return RunResult(suite="unit", level="L1", commit="c" * 40, verdict="green" if outcome == "pass" else "red",
                     outcome=outcome, counts=Counts(total=1, passed=1 if outcome == "pass" else 0),
                     environment=Environment(runner_id="r"))


def test_a_result_of_a_replaced_attempt_is_superseded_and_the_row_waits_for_the_rerun(db):
    first = vstore.mark_pending(db, now=10.0, **PEND)
    second = vstore.mark_pending(db, now=20.0, **PEND)             # /forksync retest while the first runs
    assert first.startswith("local-") and second.startswith("local-") and first != second
    assert vstore.record(db, repo="o/f", pr=3, result=result("pass"), now=30.0, answers=first) == second
    row = vstore.get(db, "o/f", "c" * 40, "unit", "cpu")
    assert (row["status"], row["verdict"], row["attempt"]) == ("pending", "pending", second)
    assert row["superseded"] == (f"1970-01-01T00:00:30Z request {first}: pass "
                                 f"(arrived after a re-run, request {second}, was asked; not counted)")
    assert vstore.record(db, repo="o/f", pr=3, result=result("fail"), now=40.0, answers=second) is None
    row = vstore.get(db, "o/f", "c" * 40, "unit", "cpu")
    assert (row["status"], row["verdict"], row["attempt"]) == ("done", "fail", second)
    assert row["superseded"].startswith("1970-01-01T00:00:30Z request ")     # still there to read
    # the first run's result arriving even later changes nothing either
    assert vstore.record(db, repo="o/f", pr=3, result=result("pass"), now=50.0, answers=first) == second
    assert vstore.get(db, "o/f", "c" * 40, "unit", "cpu")["verdict"] == "fail"
    # a result tied to no run (a missing nightly's red) is stored as before
    assert vstore.record(db, repo="o/f", pr=3, result=result("pass"), now=60.0) is None
    assert vstore.get(db, "o/f", "c" * 40, "unit", "cpu")["verdict"] == "pass"


def test_a_finished_result_a_rerun_replaces_is_kept_aside(db):
    # a forced re-run overwrote the row: the red it replaced was gone, and no page could say a red
    # had been there
    first = vstore.mark_pending(db, now=10.0, **PEND)
    assert vstore.record(db, repo="o/f", pr=3, result=result("fail"), now=20.0, answers=first) is None
    second = vstore.mark_pending(db, now=30.0, **PEND)
    row = vstore.get(db, "o/f", "c" * 40, "unit", "cpu")
    assert (row["status"], row["verdict"], row["attempt"]) == ("pending", "pending", second)
    line = f"1970-01-01T00:00:30Z request {first}: fail[] (replaced by a re-run, request {second}; not counted)"
    assert row["superseded"] == line
    assert vstore.superseded_runs(row) == [{"at": "1970-01-01T00:00:30Z", "attempt": first, "outcome": "fail",
                                            "codes": (), "definition": "", "by": second, "how": "replaced", "check_url": None, "text": line}]
    # a re-run asked while one still runs replaces no result
    third = vstore.mark_pending(db, now=40.0, **PEND)
    assert vstore.get(db, "o/f", "c" * 40, "unit", "cpu")["superseded"] == line
    # the late one, and a line cut by the column's cap, are read too
    assert vstore.record(db, repo="o/f", pr=3, result=result("pass"), now=50.0, answers=second) == third
    runs = vstore.superseded_runs({"superseded": "equest x: fail (cut\n" + vstore.get(db, "o/f", "c" * 40, "unit", "cpu")["superseded"]})
    assert [(x["how"], x["attempt"], x["outcome"], x["by"]) for x in runs] == [
        ("", "", "", ""), ("replaced", first, "fail", second), ("late", second, "pass", third)]


def test_the_superseded_column_keeps_its_newest_whole_lines(db):
    # the column kept its last 4,000 characters: the oldest line it kept was cut mid-way, and the
    # dashboard showed that fragment as a result it could not read
    attempts = [vstore.mark_pending(db, now=10.0, **PEND)]
    for i in range(60):                       # re-runs of a finished result, each replacing the last
        assert vstore.record(db, repo="o/f", pr=3, result=result("fail"), now=20.0 + i, answers=attempts[-1]) is None
        attempts.append(vstore.mark_pending(db, now=30.0 + i, **PEND))
    notes = vstore.get(db, "o/f", "c" * 40, "unit", "cpu")["superseded"]
    assert 3800 < len(notes) <= 4000
    runs = vstore.superseded_runs({"superseded": notes})
    assert all(x["how"] == "replaced" for x in runs)
    assert [(x["attempt"], x["by"]) for x in runs] == list(zip(attempts[-len(runs) - 1:-1], attempts[-len(runs):]))


def test_a_replaced_result_keeps_its_check_run(db):
    # the re-run's check run took the row's check_url, and the line of the result it replaced named
    # its run only: the dashboard could not link to the check run that showed the replaced red
    first = vstore.mark_pending(db, now=10.0, check_url="https://github.com/o/f/runs/1", **PEND)
    assert vstore.record(db, repo="o/f", pr=3, result=result("fail"), now=20.0, answers=first) is None
    second = vstore.mark_pending(db, now=30.0, check_url="https://github.com/o/f/runs/2", **PEND)
    row = vstore.get(db, "o/f", "c" * 40, "unit", "cpu")
    assert (row["status"], row["check_url"]) == ("pending", "https://github.com/o/f/runs/2")
    line = (f"1970-01-01T00:00:30Z request {first}: fail[] (replaced by a re-run, request {second}; not counted) "
            "https://github.com/o/f/runs/1")
    assert row["superseded"] == line
    assert vstore.superseded_runs(row) == [{"at": "1970-01-01T00:00:30Z", "attempt": first, "outcome": "fail",
                                            "codes": (), "definition": "", "by": second, "how": "replaced",
                                            "check_url": "https://github.com/o/f/runs/1", "text": line}]
    # a line stored before the check run was kept still reads, without one
    older = f"1970-01-01T00:00:30Z request {first}: fail (replaced by a re-run, request {second}; not counted)"
    assert [(x["how"], x["attempt"], x["by"], x["check_url"]) for x in vstore.superseded_runs({"superseded": older})] == [
        ("replaced", first, second, None)]


@pytest.mark.parametrize("url", ["https://github.com/o/f/runs/" + "9" * vstore.SUPERSEDED_CAP,
                                 "https://github.com/o/f/runs/1\nforged line", "https://github.com/o/f/runs/1 x"])
def test_a_check_run_address_that_would_break_the_line_is_left_out(db, url):
    # the line must stay one whole line within the cap: an address too long would have its start
    # cut away, a line break would split it in two, a blank would not read back as one address
    first = vstore.mark_pending(db, now=10.0, check_url=url, **PEND)
    assert vstore.record(db, repo="o/f", pr=3, result=result("fail"), now=20.0, answers=first) is None
    second = vstore.mark_pending(db, now=30.0, **PEND)
    row = vstore.get(db, "o/f", "c" * 40, "unit", "cpu")
    assert row["superseded"] == (f"1970-01-01T00:00:30Z request {first}: fail[] (replaced by a re-run, "
                                 f"request {second}; not counted)")
    assert [(x["how"], x["attempt"], x["check_url"]) for x in vstore.superseded_runs(row)] == [("replaced", first, None)]


@pytest.mark.parametrize("reason, codes, short", [
    ("", [], False),
    ("below-floor: 80 tests ran, fewer than the floor min_tests=100", ["below-floor"], True),
    ("count-mismatch: 60 tests ran, the suite expects exactly 100: 40 skipped or xfail tests do not count; make them run, "
     "or, if they are meant to skip here, set tests.lit.expected: 60", ["count-mismatch"], True),
    ("count-mismatch: 120 tests ran, the suite expects exactly 100 (more: set expected_tests: 120)", ["count-mismatch"], False),
    ("count-mismatch: the benchmark report holds 3 points, the suite expects exactly 5", ["count-mismatch"], True),
    ("zero-tests: no test ran: all 5 were skipped; count-mismatch: 0 tests ran, the suite expects exactly 5 (fewer: tests went "
     "missing)", ["zero-tests", "count-mismatch"], True),
    ("test-failures: 1 failed, 0 errors: test_core.py::test_reduce_fewer_warps", ["test-failures"], False),
    ("below-floor: 80 tests ran, fewer than the floor min_tests=100; test-failures: 1 failed, 0 errors: t.py::x",
     ["below-floor", "test-failures"], False),
    ("a reason stored in no known form", [""], False),
])
def test_a_rows_reasons_are_read_back_by_code_and_short_is_a_shortfall_alone(reason, codes, short):
    # a row with no result JSON (written by hand or by an earlier release): its text is read
    row = {"reason": reason, "result_json": ""}
    assert [r.code for r in vstore.reasons_of(reason)] == [r.code for r in vstore.row_reasons(row)] == codes
    assert vstore.only_short(row) is short


def _json(*reasons: dict) -> str:
    return json.dumps({"schema": "forksync-result/1", "reasons": list(reasons)})


@pytest.mark.parametrize("result_json, reason, codes, short", [
    # the result JSON decides, whatever the text says
    (_json({"code": "count-mismatch", "detail": "60 von 100 Tests liefen", "ran": 60, "expected": 100}),
     "count-mismatch: 60 von 100 Tests liefen", ["count-mismatch"], True),
    (_json({"code": "count-mismatch", "detail": "earlier 80 tests ran, the suite expects exactly 100", "ran": 120,
            "expected": 100}), "count-mismatch: earlier 80 tests ran, the suite expects exactly 100", ["count-mismatch"], False),
    (_json({"code": "below-floor", "detail": "few; test-failures: see below", "ran": 3, "expected": 4}),
     "below-floor: few; test-failures: see below", ["below-floor"], True),
    (_json({"code": "below-floor", "detail": "80 tests ran", "ran": 80, "expected": 100},
           {"code": "test-failures", "detail": "1 failed, 0 errors: t.py::x"}),
     "below-floor: 80 tests ran", ["below-floor", "test-failures"], False),
    # a result JSON written before reasons kept their counts: the detail in this release's or the earlier words
    (_json({"code": "count-mismatch", "detail": "the report holds 60 tests, the suite expects exactly 100"}),
     "", ["count-mismatch"], True),
    (_json({"code": "count-mismatch", "detail": "120 tests ran, the suite expects exactly 100 (more: set expected_tests: 120)"}),
     "", ["count-mismatch"], False),
    (_json({"code": "count-mismatch", "detail": "counted otherwise"}), "", ["count-mismatch"], False),
    (_json(), "", [], False),
    # no readable result JSON: the text
    ("{not json", "zero-tests: the report holds no test case", ["zero-tests"], True),
    (json.dumps({"reasons": [{"code": "zero-tests", "detail": "x", "unknown": 1}]}), "runner-crashed: killed",
     ["runner-crashed"], False),
])
def test_a_rows_reasons_come_from_its_result_json_and_its_text_only_without_one(result_json, reason, codes, short):
    row = {"reason": reason, "result_json": result_json}
    assert [r.code for r in vstore.row_reasons(row)] == codes
    assert vstore.only_short(row) is short
