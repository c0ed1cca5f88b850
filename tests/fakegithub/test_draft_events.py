"""A pull request's draft state changed through GitHub's GraphQL mutations is told as GitHub tells
it: ``pull_request`` ``converted_to_draft`` and ``ready_for_review``, which forksync handles
(bot/handlers/gate.py). The local GitHub's webhook description holds both, with GitHub's schema
(``spec/webhooks.json``) and example payloads (``spec/webhooks/``), so what it sends is held to them."""
from __future__ import annotations

from bot.fakegithub import contract
from bot.fakegithub.webhooks import example_names
from bot.github.drafts import MARK_READY
from tests.support.github import commit_files, git, make_source_repo

TO_DRAFT = MARK_READY.replace("markPullRequestReadyForReview", "convertPullRequestToDraft")


def test_the_webhook_description_holds_the_draft_events_as_the_others():
    hooks = contract.webhook_document()["x-webhooks"]
    for name in ("pull-request-converted-to-draft", "pull-request-ready-for-review"):
        assert name in hooks, sorted(hooks)
    assert {"pull_request.converted_to_draft", "pull_request.ready_for_review"} <= set(example_names())


async def test_a_draft_change_is_sent_as_the_pull_request_event_github_sends(fake_github, github_app, tmp_path):
    fake = fake_github
    src = tmp_path / "src"
    make_source_repo(src, [{"a.txt": "a\n"}])
    git(src, "checkout", "-q", "-b", "forksync/chain-x")
    commit_files(src, {"a.txt": "b\n"}, "change a")
    fake.create_repo("meta/triton", source=src)
    inst = fake.install("meta")
    gh = github_app.installation(inst.id)
    pr = await gh.post("/repos/meta/triton/pulls", data={"title": "t", "head": "forksync/chain-x", "base": "main"})
    for query, action, draft in ((TO_DRAFT, "converted_to_draft", True), (MARK_READY, "ready_for_review", False)):
        await gh.graphql(query, endpoint=f"{fake.url}/graphql", id=pr["node_id"])
        [sent] = fake.webhooks.of("pull_request", action)
        assert (sent.payload["number"], sent.payload["pull_request"]["draft"]) == (pr["number"], draft)
        assert sent.payload["sender"]["login"] == "forksync[bot]"
        assert sent.payload["repository"]["full_name"] == "meta/triton"
        # asked again in the same state, GitHub changes nothing and tells nothing
        await gh.graphql(query, endpoint=f"{fake.url}/graphql", id=pr["node_id"])
        assert len(fake.webhooks.of("pull_request", action)) == 1
    assert fake.violations == []
