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


async def test_forksync_triage_beside_the_app_waits_for_the_apps_claim(tmp_path, fake_github, capsys, monkeypatch,
                                                                       caplog):
    """``forksync triage nightly --github-url`` on the App's ``--workdir`` takes the same claim: while
    the App holds it (here: the test), the command waits, and files its issue once it is let go."""
    import json
    import logging

    from bot.cli.main import main
    from bot.triage.issues import TRIAGE_CLAIM
    from tests.triage.test_cli_nightly import CASES, LLVM, night

    monkeypatch.chdir(tmp_path)
    make_source_repo(tmp_path / "src", [{"README.md": "fork\n"}])
    repo = fake_github.create_repo("meta/triton", source=tmp_path / "src")
    fake_github.add_collaborator(repo, "alice", "write")
    fake_github.add_token("alice-token", "alice")
    args = ["triage", "nightly", "--db", str(tmp_path / "g.db"), "--run", "n1", "--date", "2026-12-01",
            "--commit", "a" * 40, "--repo", "meta/triton", "--github-url", fake_github.url, "--token", "alice-token",
            "--workdir", str(tmp_path / "work"), str(night(tmp_path, "n1", {CASES[0]: LLVM}))]
    caplog.set_level(logging.INFO, logger="bot.github.claims")
    app = Claims(tmp_path / "work" / "locks")
    async with app.hold("meta/triton", TRIAGE_CLAIM):
        command = asyncio.create_task(asyncio.to_thread(main, args))
        for _ in range(600):            # until the command says it waits (a wait for an event, not a budget)
            if any("triage-issues" in r.getMessage() for r in caplog.records) or command.done():
                break
            await asyncio.sleep(0.1)
        assert not command.done(), capsys.readouterr()
        assert await issues(fake_github.url) == []
    assert await command == 0
    out = json.loads(capsys.readouterr().out)
    assert out["opened"][0]["issue"] == 1 and len(await issues(fake_github.url)) == 1


async def issues(url: str) -> list[dict]:
    import aiohttp

    from bot.github.client import token_client
    async with aiohttp.ClientSession() as session:
        gh = token_client(session, "alice-token", base_url=url)
        return [i async for i in gh.getiter("/repos/meta/triton/issues?state=all")]
