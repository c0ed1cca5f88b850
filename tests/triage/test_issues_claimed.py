"""Two triage runs of one fork at once — two workers' pollers — file one issue per cause:
:meth:`TriageIssues.process` looks up and opens under the fork's triage claim
(:mod:`bot.github.claims`), carried by the GitHub client as every claim is."""
from __future__ import annotations

import asyncio

from bot.config.triage import TriageSettings
from bot.github.claims import Claims
from bot.store import Store
from bot.triage.issues import TriageIssues
from tests.support.github import make_source_repo
from tests.triage.test_issues import ALLOC, DOT, MM, OWNER, REPO, nightly


async def test_two_runs_at_once_open_one_issue_per_cause(fake_github, github_app, tmp_path):
    make_source_repo(tmp_path / "src", [{"README.md": "fork\n"}])
    fake_github.create_repo(f"{OWNER}/{REPO}", source=tmp_path / "src")
    inst = fake_github.install(OWNER)
    # two workers: each its own client, claims and store connection, on one workdir and database
    runs = []
    for _ in range(2):
        gh = github_app.installation(inst.id)
        gh.claims = Claims(tmp_path / "locks")
        runs.append(TriageIssues(Store(tmp_path / "forksync.db"), gh, OWNER, REPO, TriageSettings()))
    n = nightly(1, "b" * 40, {DOT: ALLOC, MM: ALLOC})

    await asyncio.gather(*(r.process(n) for r in runs))

    gh = github_app.installation(inst.id)
    issues = [i async for i in gh.getiter(f"/repos/{OWNER}/{REPO}/issues?state=all")]
    assert len(issues) == 1, [i["title"] for i in issues]
    assert "<!-- forksync:triage:" in issues[0]["body"]
    assert list(tmp_path.joinpath("locks").glob("*.lock")) == []       # each claim removed its file
