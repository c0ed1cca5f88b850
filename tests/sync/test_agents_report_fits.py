"""The agent's report reaches a long chain PR: GitHub's body limit (65,536 characters) on the
local GitHub, a chain whose own text the sync already cut to fit it."""
from __future__ import annotations

from bot.agents.client import AgentClient
from bot.fakeanthropic import FakeAnthropic
from bot.github.limits import BODY_LIMIT
from bot.store import Store
from bot.sync.agents import resolve_chain_conflict
from bot.sync.prs import open_or_update_pr
from tests.sync.test_agents import BRANCH, FULL, SETTINGS, git, honest, remote_refs, world, write  # noqa: F401 - fixture

#: a long chain's own text: one line per upstream commit of the chain
CHAIN_BODY = "Sync chain of 900 upstream commits.\n\n" + "".join(
    f"- `{i:012x}` [AMD] a change to the pipeliner of upstream commit number {i} (#{8000 + i})\n" for i in range(900))


async def test_the_agents_report_reaches_a_chain_pr_whose_body_is_at_githubs_limit(world, github_app, tmp_path):  # noqa: F811
    """A user sees: on a long chain (its PR text cut by forksync to GitHub's 65,536 characters),
    the agent's pick is pushed, then GitHub refuses the PR body with the report (422 "body is too
    long") — the delivery fails and the chain PR carries an agent's commit with no File / Action /
    Reason block. They should see the report in the PR body (the chain's own text cut further)."""
    fork, inst, work, tip, up = world("[ops] rename line 3 and fix line 15")
    gh = github_app.installation(inst.id)
    # the chain's earlier clean picks are on its branch and its PR is open
    src = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(fork.path), str(src))
    git(src, "checkout", "-q", BRANCH)
    write(src, "docs/x.md", "x\n")
    git(src, "add", "-A")
    git(src, "commit", "-qm", "an earlier clean pick\n\nUpstream-Commit: " + "a" * 40)
    git(src, "push", "-q", "origin", BRANCH)
    git(work, "fetch", "-q", str(fork.path), f"+refs/heads/{BRANCH}:refs/heads/{BRANCH}")
    pr, _ = await open_or_update_pr(gh, FULL, branch=BRANCH, base="main", title="[forksync] chain: ops",
                                    body=CHAIN_BODY, labels=[], draft=True)
    assert len(pr["body"]) > BODY_LIMIT - 1000          # less than a report left
    async with FakeAnthropic([honest()], api_key="k") as ant:
        async with AgentClient(SETTINGS, Store(), api_key="k", base_url=ant.base_url) as client:
            res = await resolve_chain_conflict(gh, FULL, git_dir=work, branch=BRANCH, base="main", upstream_sha=up,
                                               client=client, remote_url=str(fork.path))
    assert (res.status, res.pushed, res.pr) == ("committed", True, pr["number"])
    body = (await gh.getitem(f"/repos/{FULL}/pulls/{pr['number']}"))["body"]
    assert len(body) <= BODY_LIMIT
    assert "| `python/triton/ops.py` | kept both changes | the fork's line 3 and upstream's line 3 edit are independent |" in body
    assert body.startswith("<!-- forksync:body:start -->\nSync chain of 900 upstream commits.\n")
    assert remote_refs(fork.path)[f"refs/heads/{BRANCH}"] == res.commit
