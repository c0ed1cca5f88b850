"""A draft sync PR leaves draft through GitHub's GraphQL mutation (REST cannot), against the
local GitHub's ``POST /graphql``."""
from __future__ import annotations

import gidgethub

from bot.github.drafts import mark_ready
from tests.support.github import commit_files, git, make_source_repo


async def test_a_draft_pr_is_marked_ready_for_review(fake_github, github_app, tmp_path):
    src = tmp_path / "src"
    make_source_repo(src, [{"a.txt": "a\n"}])
    git(src, "checkout", "-q", "-b", "forksync/chain-x")
    commit_files(src, {"a.txt": "b\n"}, "change a")
    repo = fake_github.create_repo("meta/triton", source=src)
    inst = fake_github.install("meta")
    gh = github_app.installation(inst.id)
    pr = await gh.post("/repos/meta/triton/pulls", data={"title": "t", "head": "forksync/chain-x", "base": "main",
                                                          "draft": True})
    assert pr["draft"] is True
    assert await mark_ready(gh, pr) is True
    again = await gh.getitem(f"/repos/meta/triton/pulls/{pr['number']}")
    assert again["draft"] is False
    assert await mark_ready(gh, again) is True          # not a draft: nothing asked
    assert [r["operation"] for r in fake_github.requests if r["operation"] == "graphql"] == ["graphql"]
    assert repo.pulls[pr["number"]].draft is False


async def test_an_unknown_node_is_a_graphql_error(fake_github, github_app, tmp_path):
    src = tmp_path / "src"
    make_source_repo(src, [{"a.txt": "a\n"}])
    fake_github.create_repo("meta/triton", source=src)
    inst = fake_github.install("meta")
    gh = github_app.installation(inst.id)
    try:
        await mark_ready(gh, {"draft": True, "node_id": "bm9wZQ"})
    except gidgethub.GraphQLException as e:
        assert "Could not resolve to a node" in str(e)
    else:
        raise AssertionError("a GraphQL error must raise")
