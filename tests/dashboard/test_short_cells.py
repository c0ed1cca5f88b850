"""The validation grid's ``short`` cell — a suite that ran fewer tests than it promises — told
from the run's stored result (its reasons' codes and counts), whatever words the reasons' texts
use, on the page and its JSON twin."""
from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.dashboard.web import Dashboard, make_dashboard_app
from bot.store import Store
from bot.validation import store as vstore
from gpu_runner.result import Counts, Environment, Reason, RunResult, outcome_for
from gpu_runner.saturation import RunFacts, judge
from tests.support.dashboard_world import FORK, NOW, fill, sha

HEAD = sha("h", 401)


def _result(suite: str, reasons: list[Reason], counts: Counts) -> RunResult:
    return RunResult(suite=suite, level="L1", commit=HEAD, platform="h100", verdict="red", outcome=outcome_for(reasons),
                     reasons=reasons, counts=counts, environment=Environment(runner_id="r"))


async def _cell(results: list[RunResult], suite: str) -> tuple[dict, str]:
    """The grid cell of ``suite`` on HEAD (JSON twin) and the validation page, with ``results``
    recorded as the service records them."""
    store = Store()
    fill(store)
    for r in results:
        vstore.record(store, repo=FORK, pr=401, result=r, now=NOW - 60)
    c = TestClient(TestServer(make_dashboard_app(Dashboard(store=store, clock=lambda: NOW))))
    await c.start_server()
    try:
        r = await c.get(f"/api/v1/forks/{FORK}/validation")
        assert r.status == 200, await r.text()
        doc = await r.json()
        page = await (await c.get(f"/forks/{FORK}/validation")).text()
    finally:
        await c.close()
    cells = next(x["cells"] for x in doc["commits"] if x["sha"] == HEAD)
    return next(x for x in cells[suite] if x["platform"] == "h100"), page


async def test_a_short_suite_stored_by_the_earlier_release_is_still_shown_short():
    """Until the count rule counted only tests that ran, the runner wrote a shortfall as
    "the report holds 60 tests, the suite expects exactly 100". A row stored then (or a run
    dispatched before an upgrade, whose workflow installed the earlier wheel) is shown plain
    ``red`` on the validation grid: the words no longer match the pattern the dashboard reads,
    so a person looks for a failing test that does not exist. It must be ``short``, as its
    reason code and counts say."""
    old = _result("lit", [Reason(code="count-mismatch", detail="the report holds 60 tests, the suite expects exactly 100")],
                  Counts(total=60, passed=60))
    cell, page = await _cell([old], "lit")
    assert cell["reason"] == "count-mismatch: the report holds 60 tests, the suite expects exactly 100"
    assert cell["state"] == "short"
    assert '<div class="state-short" title="count-mismatch: the report holds 60 tests' in page


@pytest.mark.parametrize("words", [
    "60 von 100 erwarteten Tests liefen; 40 übersprungen",             # a runner that speaks German
    "only 60 of the 100 expected tests ran (40 skipped or xfail)",     # the same fact, reworded
])
async def test_a_short_suite_is_shown_short_whatever_words_its_reason_uses(words):
    """A suite expected to run 100 tests ran 60 (40 skipped): the runner's reason is a
    ``count-mismatch`` below the expected count. When its detail is worded otherwise than the
    one sentence the dashboard parses (a reworded or translated runner message), the grid calls
    the cell ``red`` — a failure — and no longer ``short``; the result itself still says how
    many ran and how many were expected. The cell must be ``short`` whatever the words."""
    facts = RunFacts(expected_tests=100, exit_code=0, report_state="ok", counts=Counts(total=100, passed=60, skipped=40))
    verdict, reasons = judge(facts)
    assert verdict == "red" and [r.code for r in reasons] == ["count-mismatch"]
    reworded = [r.model_copy(update={"detail": words}) for r in reasons]
    cell, page = await _cell([_result("lit", reworded, facts.counts)], "lit")
    assert cell["reason"] == f"count-mismatch: {words}"
    assert cell["state"] == "short"


async def test_a_suite_that_ran_more_tests_than_expected_is_red_whatever_words_its_reason_uses():
    """The other side: 120 tests ran where 100 are expected (a mismatch, not a shortfall). A
    reworded detail that happens to quote an earlier shortfall ("80 tests ran, the suite expects
    exactly 100" from the run before) makes the grid call it ``short`` — a person looks for
    missing tests while the suite grew. The counts of the result decide: it is ``red``."""
    facts = RunFacts(expected_tests=100, exit_code=0, report_state="ok", counts=Counts(total=120, passed=120))
    verdict, reasons = judge(facts)
    assert verdict == "red" and [r.code for r in reasons] == ["count-mismatch"]
    words = "120 ran this time (the run before: 80 tests ran, the suite expects exactly 100); set expected_tests: 120"
    reworded = [r.model_copy(update={"detail": words}) for r in reasons]
    cell, _ = await _cell([_result("lit", reworded, facts.counts)], "lit")
    assert cell["state"] == "red"
