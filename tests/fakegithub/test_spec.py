"""The copied GitHub description and examples: valid OpenAPI, every operation the fake serves
is documented, the data-pack files are present with their licenses."""
from __future__ import annotations

import json

from bot.fakegithub import contract
from bot.fakegithub.routing import HANDLERS
from bot.fakegithub.server import _import_routes
from bot.fakegithub.spec.build import EXTRA_OPERATIONS
from bot.fakegithub.webhooks import example_names


def test_rest_description_is_valid_openapi():
    from openapi_spec_validator import validate

    validate(contract.rest_document())


def test_every_handler_serves_a_documented_operation():
    _import_routes()
    ops = contract.operations()
    assert sorted(set(HANDLERS) - set(ops)) == []
    assert set(EXTRA_OPERATIONS) <= set(ops)
    # the fake serves every operation of the description
    assert sorted(set(ops) - set(HANDLERS)) == []
    assert len(ops) == 73


def test_operations_match_paths():
    assert contract.find_operation("PUT", "/repos/o/r/pulls/3/merge") == "pulls/merge"
    assert contract.find_operation("GET", "/repos/o/r/git/ref/heads/forksync/x") == "git/get-ref"
    assert contract.find_operation("GET", "/repos/o/r/commits/abc/check-runs") == "checks/list-for-ref"
    assert contract.find_operation("GET", "/repos/o/r/commits/abc/status") == "repos/get-combined-status-for-ref"
    assert contract.find_operation("POST", "/repos/o/r/pulls/3/merge") is None


def test_examples_and_licenses_travel_with_the_data():
    names = example_names()
    assert {"push", "pull_request.opened", "pull_request.closed.merged", "issue_comment.created.on-pull-request",
            "issue_comment.edited", "issues.opened", "pull_request_review.submitted", "check_run.completed",
            "installation.created"} <= set(names)
    text = (contract.SPEC_DIR / "LICENSES.md").read_text()
    for notice in ("Copyright (c) 2018 Gregor Martynus", "Copyright (c) 2020 Octokit contributors",
                   "github/rest-api-description"):
        assert notice in text
    webhooks = json.loads(contract.WEBHOOK_SPEC.read_text())["x-webhooks"]
    assert {"issues-opened", "pull-request-review-submitted", "issue-comment-edited"} <= set(webhooks)
