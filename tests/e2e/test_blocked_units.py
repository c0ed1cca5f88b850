"""A unit GitHub refuses is isolated and visible: the App lacks ``workflows`` and upstream
changes a workflow file (the local GitHub refuses that push with GitHub's own message). The unit
is blocked (stored with the reason and time, on the status issue, on its PR, in /metrics), the
other units go on, later upstream pushes still land, and the unit is retried when the owner
accepts the permission or ticks its retry box. A delivery that fails for good is an alarm too."""
import pytest

from bot.app import queue as q
from bot.sync import store as sync_store
from tests.support.e2e import CONFIG as E2E_CONFIG
from tests.support.e2e import install_on_fork, open_sync_prs, status_issue, sync_world
from tests.support.github import commit_files, git

CONFIG = E2E_CONFIG + """\
  - name: ci
    paths: [".github/**"]
    divergent: true
    owners: [carol]
"""
REFUSAL = ("refusing to allow a GitHub App to create or update workflow `.github/workflows/ci.yml` "
           "without `workflows` permission")


@pytest.fixture
async def world(fake_github, tmp_path):
    """tests/e2e/conftest.py's world, with the bot pushing over HTTP with its installation token."""
    async with sync_world(fake_github, tmp_path, CONFIG, git_http=True) as w:
        yield w


async def permissions_accepted(fake, inst):
    payload = fake.webhooks.build("installation", "created", {
        "action": "new_permissions_accepted",
        "installation": {"id": inst.id, "app_slug": "forksync", "created_at": "2026-11-30T00:00:00Z",
                         "updated_at": "2026-12-01T00:00:00Z"}})
    payload.pop("repositories", None)
    # the stored webhook examples have no new_permissions_accepted body: not validated against them
    await fake.webhooks.deliver("installation", payload, validate=False)


async def metrics_text(bot) -> str:
    async with bot.session.get(str(bot.server.make_url("/metrics")),
                               headers={"Authorization": f"Bearer {bot.settings.metrics_token}"}) as r:
        return await r.text()


async def test_refused_workflow_push_blocks_only_its_unit_and_is_retried_when_permission_is_accepted(world, tmp_path):
    fake, bot, alice, up_src, upstream, fork, inst = world
    assert "workflows" not in inst.permissions
    await install_on_fork(fake, bot, fork, inst.id)
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    c2 = commit_files(up_src, {".github/workflows/ci.yml": "on: push\n"}, "CI: new workflow (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    # the bundle went on; the workflow chain is blocked, stored with GitHub's reason and the time
    assert [p["head"]["ref"] for p in await open_sync_prs(alice)] == [f"forksync/bundle-{c1[:12]}"]
    assert bot.deliveries("dead") == [] and bot.deliveries("failed") == []
    row = sync_store.branch_row(bot.store, "meta/triton", f"forksync/chain-{c2[:12]}")
    assert (row["state"], row["pr"], row["blocked_reason"], row["blocked_requires"], row["blocked_path"],
            row["blocked_step"]) == ("blocked", 0, REFUSAL, "workflows", ".github/workflows/ci.yml", "push")
    assert row["blocked_at"] > 0
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/forksync/chain-{c2[:12]}") == ""
    st = sync_store.load_status(bot.store, "meta/triton")
    assert st.degraded() == f"1 unit(s) blocked: chain-{c2[:12]}: {REFUSAL}"
    [issue] = await status_issue(alice)
    body = issue["body"]
    assert "**Syncing is degraded: 1 unit(s) blocked.**" in body
    assert f"- `chain-{c2[:12]}`: GitHub refused the push " in body and REFUSAL in body
    assert "GitHub requires the App's **`workflows`** permission to push a commit that creates or changes " \
           "`.github/workflows/ci.yml`" in body
    assert "list the path under `github.person_paths` in `.github/forksync.yml`" in body
    assert f"- [ ] <!-- retry:chain-{c2[:12]} --> retry `chain-{c2[:12]}` (chain, blocked: GitHub refused the push)" in body
    text = await metrics_text(bot)
    assert (f'forksync_degraded{{reason="1 unit(s) blocked: chain-{c2[:12]}: {REFUSAL}",repo="meta/triton"}} 1.0'
            in text)
    assert 'forksync_blocked_units{repo="meta/triton"} 1.0' in text

    # a later upstream push that touches no workflow still lands
    c3 = commit_files(up_src, {"python/b.py": "b = 2\n"}, "Speed up b (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    assert bot.deliveries("dead") == []
    prs = await open_sync_prs(alice)
    assert [p["head"]["ref"] for p in prs] == sorted([f"forksync/bundle-{c1[:12]}", f"forksync/bundle-{c3[:12]}"])
    tip = git(up_src, "ls-remote", str(fork.path), f"refs/heads/forksync/bundle-{c3[:12]}").split()[0]
    assert f"Upstream-Commit: {c3}" in git(up_src, f"--git-dir={fork.path}", "log", "--format=%B", f"main..{tip}")

    # the owner grants `workflows` and accepts it: GitHub says so, the blocked unit is retried
    inst.permissions["workflows"] = "write"
    await permissions_accepted(fake, inst)
    await bot.settle()
    heads = [p["head"]["ref"] for p in await open_sync_prs(alice)]
    assert f"forksync/chain-{c2[:12]}" in heads
    row = sync_store.branch_row(bot.store, "meta/triton", f"forksync/chain-{c2[:12]}")
    assert (row["state"], row["blocked_reason"], row["blocked_at"]) == ("open", "", 0.0)
    assert sync_store.load_status(bot.store, "meta/triton").degraded() == ""
    [issue] = await status_issue(alice)
    assert "Syncing is degraded" not in issue["body"]
    assert 'forksync_degraded{reason="",repo="meta/triton"} 0.0' in await metrics_text(bot)
    outcome = [d.outcome for d in bot.deliveries("done") if d.event == "installation" and d.action == "new_permissions_accepted"]
    assert outcome and "permissions changed: retrying 1 blocked unit(s)" in outcome[0]


async def test_refused_push_to_an_open_chain_comments_on_its_pr_and_the_retry_box_retries(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    c1 = commit_files(up_src, {".github/CODEOWNERS": "* @carol\n"}, "CODEOWNERS (#201)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    [chain] = await open_sync_prs(alice)
    branch = f"forksync/chain-{c1[:12]}"
    assert chain["head"]["ref"] == branch
    pushed = git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[0]
    c2 = commit_files(up_src, {".github/workflows/ci.yml": "on: push\n"}, "CI: new workflow (#202)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    assert bot.deliveries("dead") == []
    # GitHub's branch is untouched; the PR says why and what to change
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[0] == pushed
    row = sync_store.branch_row(bot.store, "meta/triton", branch)
    assert (row["state"], row["pr"], row["blocked_reason"], row["blocked_step"]) == ("open", chain["number"], REFUSAL, "push")
    comments = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{chain['number']}/comments")
                if c["user"]["login"] == "forksync[bot]" and "forksync:blocked" in c["body"]]
    assert len(comments) == 1
    assert f"**forksync could not update this PR: GitHub refused the push** of `{row['blocked_tip'][:12]}`." in comments[0]
    assert f"> {REFUSAL}" in comments[0] and "**Workflows: Read and write**" in comments[0]
    [issue] = await status_issue(alice)
    assert (f"- `chain-{c1[:12]}` ([#{chain['number']}](https://github.com/meta/triton/pull/{chain['number']})): "
            f"GitHub refused the push ") in issue["body"]
    # a second sync that is refused again does not comment again
    await bot.svc.sync(await ctx_for(bot, inst), "meta/triton", reason="test: again")
    comments2 = [c async for c in alice.getiter(f"/repos/meta/triton/issues/{chain['number']}/comments")
                 if "forksync:blocked" in c["body"]]
    assert len(comments2) == 1
    # the permission is granted, GitHub's event is missed: the retry box on the status issue retries
    inst.permissions["workflows"] = "write"
    [issue] = await status_issue(alice)
    box = f"- [ ] <!-- retry:chain-{c1[:12]} -->"
    assert box in issue["body"]
    await alice.patch(f"/repos/meta/triton/issues/{issue['number']}",
                      data={"body": issue["body"].replace(box, box.replace("[ ]", "[x]"))})
    await bot.settle()
    assert bot.deliveries("dead") == []
    tip = git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[0]
    assert f"Upstream-Commit: {c2}" in git(up_src, f"--git-dir={fork.path}", "log", "--format=%B", f"main..{tip}")
    row = sync_store.branch_row(bot.store, "meta/triton", branch)
    assert (row["state"], row["pr"], row["blocked_reason"], row["pushed_tip"]) == ("open", chain["number"], "", tip)
    [issue] = await status_issue(alice)
    assert "Syncing is degraded" not in issue["body"] and box in issue["body"]


async def ctx_for(bot, inst):
    from bot.app.dispatch import Context
    d = q.Delivery(id="t", delivery_id="t", hook_id="", event="test", action="", installation_id=inst.id, repo="",
                   sender="", body=b"", content_type="", state="processing", attempts=1, received_at=0)
    return Context(delivery=d, gh=await bot.clients.client_for(inst.id), store=bot.store, settings=bot.settings,
                   sync=bot.svc, validation=bot.validation, installation_id=inst.id)


async def test_a_push_that_keeps_failing_goes_dead_and_raises_the_alarm(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    fake.faults.server_error("/meta/triton.git/git-receive-pack", "POST", status=502, times=50)
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    [dead] = bot.deliveries("dead")
    assert (dead.event, dead.repo, dead.attempts) == ("push", "triton-lang/triton", 3)
    assert "1 unit(s) blocked, retrying: bundle-" in dead.dead_reason
    row = sync_store.branch_row(bot.store, "meta/triton", f"forksync/bundle-{c1[:12]}")
    assert (row["state"], row["blocked_requires"], row["blocked_step"]) == ("blocked", "", "push")
    assert row["blocked_reason"] == ("error: RPC failed; HTTP 502 curl 22 The requested URL returned error: 502; "
                                     "fatal: the remote end hung up unexpectedly")
    [issue] = await status_issue(alice)
    assert "**Syncing is degraded: 1 unit(s) blocked.**" in issue["body"]
    assert "forksync tries again on the next sync" in issue["body"]
    assert ("> **1 webhook delivery for this fork failed for good** (dead-lettered); what it carried was not done."
            in issue["body"])
    assert f"- `{dead.id}` push (0 s ago): gave up after 3 attempts; last error: SyncError: meta/triton: 1 unit(s) blocked" \
        in issue["body"]
    alarm = q.dead_letter_alarm(bot.store)
    assert alarm.startswith(f"1 dead-lettered delivery; newest {dead.id} (push on triton-lang/triton): gave up after 3 attempts")
    text = await metrics_text(bot)
    assert "forksync_dead_letter_alarm{reason=\"1 dead-lettered delivery; newest" in text and text.count("} 1.0\n") >= 1
    # the push delivery was for upstream; the fork's status issue is refreshed by the next sync that fails or succeeds
    fake.faults.clear()
    await bot.svc.sync(await ctx_for(bot, inst), "meta/triton", reason="test: fixed")
    row = sync_store.branch_row(bot.store, "meta/triton", f"forksync/bundle-{c1[:12]}")
    assert (row["state"], row["blocked_reason"]) == ("open", "")


async def test_person_paths_keep_workflow_commits_for_a_person_without_a_push(world, tmp_path):
    fake, bot, alice, up_src, upstream, fork, inst = world
    wt = tmp_path / "cfg"
    git(tmp_path, "clone", "-q", str(fork.path), str(wt))
    commit_files(wt, {".github/forksync.yml": CONFIG + "github:\n  person_paths: ['.github/workflows/*']\n"},
                 "fork: keep workflow changes for a person")
    git(wt, "push", "-q", "origin", "HEAD:main")
    await install_on_fork(fake, bot, fork, inst.id)
    inst.permissions["workflows"] = "write"        # even with the permission, forksync does not push them
    c1 = commit_files(up_src, {".github/workflows/ci.yml": "on: push\n"}, "CI: new workflow (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    assert bot.deliveries("dead") == [] and await open_sync_prs(alice) == []
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/forksync/chain-{c1[:12]}") == ""
    row = sync_store.branch_row(bot.store, "meta/triton", f"forksync/chain-{c1[:12]}")
    assert (row["state"], row["blocked_requires"], row["blocked_reason"]) == (
        "blocked", "person", "`.github/workflows/ci.yml` matches github.person_paths: commits touching it are kept "
                             "in a chain for a person")
    [issue] = await status_issue(alice)
    assert "keeps commits touching `.github/workflows/ci.yml` for a person: push this unit's commits" in issue["body"]
    assert f"- `chain-{c1[:12]}`: kept for a person, not pushed (0 s ago): `.github/workflows/ci.yml` matches" in issue["body"]
    assert f"retry `chain-{c1[:12]}` (chain, blocked: kept for a person (github.person_paths))" in issue["body"]


async def test_a_refused_pr_blocks_only_its_unit(world):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    fake.faults.add("POST", "/repos/meta/triton/pulls", 403, "Resource not accessible by integration", name="pr-403")
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: new x (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    assert bot.deliveries("dead") == [] and bot.deliveries("failed") == []
    rows = {b: sync_store.branch_row(bot.store, "meta/triton", b)
            for b in (f"forksync/bundle-{c1[:12]}", f"forksync/chain-{c2[:12]}")}
    blocked = [b for b, r in rows.items() if r["blocked_reason"]]
    [other] = [b for b in rows if b not in blocked]
    assert len(blocked) == 1
    r = rows[blocked[0]]
    assert (r["state"], r["pr"], r["blocked_step"], r["blocked_requires"], r["blocked_reason"]) == (
        "open", 0, "pr", "permission", "403 Resource not accessible by integration")
    assert [p["head"]["ref"] for p in await open_sync_prs(alice)] == [other]
    [issue] = await status_issue(alice)
    assert "GitHub refused the pull request 0 s ago: 403 Resource not accessible by integration" in issue["body"]
    # the next sync opens it
    await bot.svc.sync(await ctx_for(bot, inst), "meta/triton", reason="test: again")
    assert sorted(p["head"]["ref"] for p in await open_sync_prs(alice)) == sorted(rows)
    assert sync_store.blocked_branches(bot.store, "meta/triton") == []
