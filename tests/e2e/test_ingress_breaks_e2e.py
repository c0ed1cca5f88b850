"""Webhook ingress attacks that need the whole bot on the local GitHub (real web app, queue, worker,
handlers, git): deliveries GitHub really sends for an installation, whatever its repositories."""
from tests.support.e2e import install_on_fork
from tests.support.github import commit_files, git, make_source_repo


async def test_a_pr_on_a_repository_that_is_no_fork_to_sync_gets_no_forksync_gate(world, tmp_path):
    # The App is installed on every meta/* repository (GitHub's "All repositories"), as an org
    # installing it for meta/triton often does. meta/website has no .github/forksync.yml: it is no
    # fork to sync (bot/handlers/installation.py), so its pull requests are none of forksync's
    # business. A failing forksync/gate check run on every PR of every other repository of the
    # org is noise at best, and blocks merges where branch protection requires all checks.
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    src = tmp_path / "site"
    make_source_repo(src, [{"README.md": "hi\n"}])
    site = fake.create_repo("meta/website", source=src)
    fake.add_collaborator(site, "alice", "write")
    git(src, "checkout", "-q", "-b", "feature")
    commit_files(src, {"README.md": "hello\n"}, "docs: say hello")
    git(src, "push", "-q", str(site.path), "HEAD:refs/heads/feature")
    pr = await alice.post("/repos/meta/website/pulls", data={"title": "docs", "head": "feature", "base": "main"})
    await bot.settle()
    runs = [(r["name"], r["conclusion"]) async for r in
            alice.getiter(f"/repos/meta/website/commits/{pr['head']['sha']}/check-runs", iterable_key="check_runs")
            if r["name"].startswith("forksync/")]
    assert runs == [], f"forksync judged a PR of a repository it does not sync: {runs}"
    assert bot.deliveries("dead") == []
