"""The local GitHub's programmable faults (:mod:`bot.fakegithub.faults`)."""
from __future__ import annotations

from bot.fakegithub.faults import Faults


def test_a_fault_with_a_query_answers_only_the_requests_whose_query_holds_it():
    faults = Faults()
    faults.add("GET", "/app/installations", 500, "Server Error", times=2, query={"page": "2"})
    assert faults.take("GET", "/app/installations") is None                      # page 1: no page parameter
    assert faults.take("GET", "/app/installations", {"per_page": "1", "page": "3"}) is None
    assert faults.take("GET", "/app/installations", {"per_page": "1", "page": "2"}).status == 500
    assert faults.take("GET", "/app/installations", {"page": "2"}).status == 500
    assert faults.take("GET", "/app/installations", {"page": "2"}) is None       # used up
    assert [(f.path, f.status) for f in faults.fired] == [("/app/installations", 500)] * 2


def test_a_fault_without_a_query_answers_any_query():
    faults = Faults()
    faults.add(None, "/repos/*", 502, "Server Error")
    assert faults.take("POST", "/repos/meta/triton/pulls", {"page": "9"}).status == 502
