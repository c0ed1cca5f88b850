"""A sync PR's draft state (edge). GitHub's REST API cannot change it; its GraphQL API can:
``markPullRequestReadyForReview`` (docs.github.com/graphql/reference/mutations). forksync opens a
chain stopped at a conflict as a draft and lets it leave draft only when the chain is whole (no
conflict commit, no marker) and L1 is green on its head — the caller decides; this only acts.
"""
from __future__ import annotations

MARK_READY = ("mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) "
              "{ pullRequest { number isDraft } } }")


async def mark_ready(gh, pr: dict) -> bool:
    """Mark ``pr`` (a REST pull request object: its ``node_id`` is the GraphQL id) ready for review.
    Returns True when it is no longer a draft. Raises ``gidgethub.GraphQLException`` (or an HTTP
    error) when GitHub refuses."""
    if not pr.get("draft"):
        return True
    data = await gh.graphql(MARK_READY, endpoint=f"{gh.base_url.rstrip('/')}/graphql", id=pr["node_id"])
    return not data["markPullRequestReadyForReview"]["pullRequest"]["isDraft"]


__all__ = ["mark_ready", "MARK_READY"]
