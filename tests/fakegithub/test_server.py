"""The local GitHub itself: contract enforcement, real git merges, PR semantics, checks, webhooks."""
from __future__ import annotations

import json
import subprocess

import aiohttp
import pytest
from aiohttp import web
from gidgethub import sansio

from bot.github.client import GitHubAPIError
from tests.support.github import WEBHOOK_SECRET, R, commit_files, git, make_source_repo, open_pr, pr_world, push_branch


@pytest.fixture
def world(fake_github, github_app, tmp_path):
    return pr_world(fake_github, github_app, tmp_path)


# --- contract -----------------------------------------------------------------------------------

async def test_unknown_operation_is_404_and_a_violation(world):
    fake, fork, gh, src, base = world
    with pytest.raises(GitHubAPIError) as e:
        await gh.post("/repos/{owner}/{repo}/pulls/1/merge_now", R, data={})
    assert e.value.status_code == 404
    assert [(v.kind, v.path) for v in fake.violations] == [("unknown-operation", "/repos/meta/triton/pulls/1/merge_now")]
    fake.violations.clear()


async def test_invalid_body_is_422_and_a_violation(world):
    fake, fork, gh, src, base = world
    with pytest.raises(GitHubAPIError) as e:
        await gh.post("/repos/{owner}/{repo}/check-runs", R,
                      data={"name": "L1", "head_sha": base, "status": "completed"})   # no conclusion
    assert e.value.status_code == 422
    with pytest.raises(GitHubAPIError):
        await gh.put("/repos/{owner}/{repo}/pulls/{n}/merge", dict(R, n=1), data={"merge_method": "fast-forward"})
    assert [(v.kind, v.operation) for v in fake.violations] == [("invalid-request", "checks/create"),
                                                                ("invalid-request", "pulls/merge")]
    assert "fast-forward" in fake.violations[1].detail
    fake.violations.clear()


async def test_a_held_request_waits_until_released_then_is_served(world, tmp_path):
    """A hold pauses matching requests before their handler (no answer of its own), counts them
    and lets them all go at once: two creates of one issue both held, then both served. (Two
    clients: one client sends one request at a time, the second would wait behind the first.)"""
    import asyncio

    from bot.github.client import GitHubApp
    from tests.support.github import FAST_RETRY

    fake, fork, gh, src, base = world
    async with aiohttp.ClientSession() as session:
        other_gh = GitHubApp(session, app_id=fake.app.id, private_key=fake.app.private_key_pem, base_url=fake.url,
                             retry=FAST_RETRY).installation(next(iter(fake.state.installations)))
        hold = fake.faults.hold("POST", "/repos/meta/triton/issues", times=2)
        first = asyncio.create_task(gh.post("/repos/{owner}/{repo}/issues", R, data={"title": "one"}))
        await hold.reached.wait()
        assert [i async for i in other_gh.getiter("/repos/{owner}/{repo}/issues", R)] == []     # not created yet
        other = fake.faults.hold("POST", "/repos/meta/triton/issues")    # the next one, once the first is full
        second = asyncio.create_task(other_gh.post("/repos/{owner}/{repo}/issues", R, data={"title": "two"}))
        await hold.full.wait()
        assert (hold.arrived, other.arrived, fake.faults.holds) == (2, 0, [other])
        hold.release()
        assert sorted([(await first)["title"], (await second)["title"]]) == ["one", "two"]
        fake.faults.clear()                 # releases and drops the holds left
        assert fake.faults.holds == [] and other.released.is_set()


async def test_multi_segment_ref_and_path_params(world):
    fake, fork, gh, src, base = world
    push_branch(src, fork, "forksync/bundle-abc", [({"c.txt": "c\n"}, "add c", "ann")])
    ref = await gh.getitem("/repos/{owner}/{repo}/git/ref/{ref}", dict(R, ref="heads/forksync/bundle-abc"))
    assert ref["ref"] == "refs/heads/forksync/bundle-abc"
    commit_files(src, {".github/forksync.yml": "github: {merge_method: merge}\n"}, "config")
    git(src, "push", "-q", str(fork.path), "main")
    content = await gh.getitem("/repos/{owner}/{repo}/contents/{path}", dict(R, path=".github/forksync.yml"))
    import base64
    assert base64.b64decode(content["content"]) == b"github: {merge_method: merge}\n"
    assert fake.violations == []


# --- pull requests and merges -------------------------------------------------------------------

async def test_rebase_merge_replays_each_commit_with_authors_kept(world):
    fake, fork, gh, src, base = world
    shas = push_branch(src, fork, "forksync/chain-1", [({"a.txt": "2\n"}, "up: one\n\nUpstream-Commit: " + "1" * 40, "ann"),
                                                       ({"b.txt": "c\n"}, "up: two\n\nUpstream-Commit: " + "2" * 40, "bob")])
    # main moves meanwhile, so the rebase really re-commits
    commit_files(src, {"z.txt": "z\n"}, "fork-only change")
    git(src, "push", "-q", str(fork.path), "main")
    pr = await open_pr(gh, "forksync/chain-1")
    assert pr["head"]["sha"] == shas[-1] and pr["mergeable"] is None and pr["commits"] == 2
    got = await gh.getitem("/repos/{owner}/{repo}/pulls/{n}", dict(R, n=pr["number"]))
    assert (got["mergeable"], got["mergeable_state"]) == (True, "clean")
    assert fork.git.ref(f"refs/pull/{pr['number']}/merge") == got["merge_commit_sha"]
    res = await gh.put("/repos/{owner}/{repo}/pulls/{n}/merge", dict(R, n=pr["number"]),
                       data={"merge_method": "rebase", "sha": shas[-1]})
    assert res["merged"] is True
    log = git(fork.path, "log", "--format=%an|%cn|%s", "main", "-3").splitlines()
    assert log == ["bob|GitHub|up: two", "ann|GitHub|up: one", "Upstream Dev|Upstream Dev|fork-only change"]
    assert git(fork.path, "rev-parse", "main") == res["sha"]
    trailers = git(fork.path, "log", "--format=%(trailers:key=Upstream-Commit,valueonly)", "main", "-2").split()
    assert trailers == ["2" * 40, "1" * 40]
    merged = await gh.getitem("/repos/{owner}/{repo}/pulls/{n}", dict(R, n=pr["number"]))
    assert (merged["merged"], merged["state"], merged["merge_commit_sha"]) == (True, "closed", res["sha"])
    assert merged["merged_by"]["login"] == "forksync[bot]"
    assert await gh.getstatus("/repos/{owner}/{repo}/pulls/{n}/merge", dict(R, n=pr["number"])) == 204


async def test_merge_commit_and_squash(world):
    fake, fork, gh, src, base = world
    push_branch(src, fork, "m", [({"a.txt": "2\n"}, "one", "ann"), ({"a.txt": "3\n"}, "two", "ann")])
    pr = await open_pr(gh, "m")
    res = await gh.put("/repos/{owner}/{repo}/pulls/{n}/merge", dict(R, n=pr["number"]), data={"merge_method": "merge"})
    parents = git(fork.path, "rev-list", "--parents", "-n1", res["sha"]).split()[1:]
    assert parents == [base, pr["head"]["sha"]]
    git(src, "fetch", "-q", str(fork.path), "main")
    git(src, "reset", "-q", "--hard", "FETCH_HEAD")
    push_branch(src, fork, "s", [({"b.txt": "x\n"}, "three", "cat"), ({"b.txt": "y\n"}, "four", "cat")])
    pr2 = await open_pr(gh, "s")
    res2 = await gh.put("/repos/{owner}/{repo}/pulls/{n}/merge", dict(R, n=pr2["number"]), data={"merge_method": "squash"})
    assert git(fork.path, "rev-list", "--count", f"{res['sha']}..{res2['sha']}") == "1"
    assert git(fork.path, "show", f"{res2['sha']}:b.txt") == "y"


async def test_merge_guards_head_sha_conflicts_and_disallowed_methods(world):
    fake, fork, gh, src, base = world
    push_branch(src, fork, "x", [({"a.txt": "from-x\n"}, "x", "ann")])
    pr = await open_pr(gh, "x")
    n = dict(R, n=pr["number"])
    with pytest.raises(GitHubAPIError) as e:
        await gh.put("/repos/{owner}/{repo}/pulls/{n}/merge", n, data={"merge_method": "rebase", "sha": base})
    assert (e.value.status_code, e.value.message) == (409, "Head branch was modified. Review and try the merge again.")
    commit_files(src, {"a.txt": "from-main\n"}, "conflicting")
    git(src, "push", "-q", str(fork.path), "main")
    got = await gh.getitem("/repos/{owner}/{repo}/pulls/{n}", n)
    assert (got["mergeable"], got["mergeable_state"]) == (False, "dirty")
    with pytest.raises(GitHubAPIError) as e:
        await gh.put("/repos/{owner}/{repo}/pulls/{n}/merge", n, data={"merge_method": "rebase"})
    assert (e.value.status_code, e.value.message) == (405, "Pull Request is not mergeable")
    fork.allow_squash_merge = False
    with pytest.raises(GitHubAPIError) as e:
        await gh.put("/repos/{owner}/{repo}/pulls/{n}/merge", n, data={"merge_method": "squash"})
    assert (e.value.status_code, e.value.message) == (405, "Squash merges are not allowed on this repository.")


async def test_required_check_blocks_until_green(world):
    fake, fork, gh, src, base = world
    fork.required_checks = ["L1"]
    sha = push_branch(src, fork, "y", [({"c.txt": "c\n"}, "y", "ann")])[-1]
    pr = await open_pr(gh, "y")
    n = dict(R, n=pr["number"])
    assert (await gh.getitem("/repos/{owner}/{repo}/pulls/{n}", n))["mergeable_state"] == "blocked"
    with pytest.raises(GitHubAPIError) as e:
        await gh.put("/repos/{owner}/{repo}/pulls/{n}/merge", n, data={"merge_method": "rebase", "sha": sha})
    assert e.value.message == 'Required status check "L1" is expected.'
    run = await gh.post("/repos/{owner}/{repo}/check-runs", R, data={"name": "L1", "head_sha": sha, "status": "in_progress"})
    await gh.patch("/repos/{owner}/{repo}/check-runs/{id}", dict(R, id=run["id"]),
                   data={"conclusion": "success", "output": {"title": "L1", "summary": "all green"}})
    listed = await gh.getitem("/repos/{owner}/{repo}/commits/{ref}/check-runs", dict(R, ref=sha))
    assert [(c["name"], c["status"], c["conclusion"]) for c in listed["check_runs"]] == [("L1", "completed", "success")]
    assert listed["check_runs"][0]["pull_requests"][0]["number"] == pr["number"]
    assert (await gh.getitem("/repos/{owner}/{repo}/pulls/{n}", n))["mergeable_state"] == "clean"
    assert (await gh.put("/repos/{owner}/{repo}/pulls/{n}/merge", n, data={"merge_method": "rebase", "sha": sha}))["merged"]


async def test_a_required_check_bound_to_an_app_needs_that_apps_run(world):
    fake, fork, gh, src, base = world
    other = fake.create_app(app_id=999, slug="other-ci", name="Other CI")
    fork.required_checks, fork.required_check_apps = ["L1"], {"L1": other.id}
    branch = await gh.getitem("/repos/{owner}/{repo}/branches/{branch}", dict(R, branch="main"))
    assert branch["protection"]["required_status_checks"]["checks"] == [{"context": "L1", "app_id": 999}]
    sha = push_branch(src, fork, "bound", [({"c.txt": "c\n"}, "bound", "ann")])[-1]
    pr = await open_pr(gh, "bound")
    n = dict(R, n=pr["number"])
    # the authenticated app's own green L1 is not the bound app's
    await gh.post("/repos/{owner}/{repo}/check-runs", R, data={"name": "L1", "head_sha": sha, "status": "completed",
                                                                 "conclusion": "success"})
    fake.set_status(fork, sha, "L1", "success")
    assert (await gh.getitem("/repos/{owner}/{repo}/pulls/{n}", n))["mergeable_state"] == "blocked"
    fake.add_check_run(fork, sha, "L1", "success", app=other)
    listed = await gh.getitem("/repos/{owner}/{repo}/commits/{ref}/check-runs", dict(R, ref=sha))
    # the newest run of a name per app (check suite): both apps' L1 are listed
    assert [(c["name"], c["app"]["id"]) for c in listed["check_runs"]] == [("L1", 999), ("L1", fake.app.id)]
    assert (await gh.getitem("/repos/{owner}/{repo}/pulls/{n}", n))["mergeable_state"] == "clean"


async def test_a_rulesets_required_check_is_listed_in_its_branch_rules_and_holds_the_merge(world):
    """``repos/get-branch-rules`` lists the active rulesets' rules on a branch (held to GitHub's
    ``repository-rule-detailed`` schema), and a ``required_status_checks`` rule holds merges into
    it as branch protection does, bound to its ``integration_id``; an ``evaluate`` ruleset and
    one on other branches neither show nor hold."""
    fake, fork, gh, src, base = world
    other = fake.create_app(app_id=999, slug="other-ci", name="Other CI")
    checks = {"type": "required_status_checks", "parameters": {
        "required_status_checks": [{"context": "ci/rules", "integration_id": other.id}, {"context": "lint"}],
        "strict_required_status_checks_policy": False}}
    rs = fake.add_ruleset(fork, "main checks", [checks, {"type": "deletion"}])
    fake.add_ruleset(fork, "dry run", [{"type": "required_status_checks", "parameters": {
        "required_status_checks": [{"context": "ci/evaluated"}], "strict_required_status_checks_policy": True}}],
        enforcement="evaluate")
    fake.add_ruleset(fork, "releases", [{"type": "required_linear_history"}], branches=("release-*",))
    rules = [r async for r in gh.getiter("/repos/{owner}/{repo}/rules/branches/{branch}", dict(R, branch="main"))]
    info = {"ruleset_source_type": "Repository", "ruleset_source": "meta/triton", "ruleset_id": rs.id}
    assert rules == [{**checks, **info}, {"type": "deletion", **info}]
    released = [r async for r in gh.getiter("/repos/{owner}/{repo}/rules/branches/{branch}",
                                            dict(R, branch="release-3.4"))]
    assert [r["type"] for r in released] == ["required_linear_history"]       # the branch need not exist
    sha = push_branch(src, fork, "ruled", [({"c.txt": "c\n"}, "ruled", "ann")])[-1]
    pr = await open_pr(gh, "ruled")
    n = dict(R, n=pr["number"])
    fake.set_status(fork, sha, "lint", "success")
    await gh.post("/repos/{owner}/{repo}/check-runs", R, data={"name": "ci/rules", "head_sha": sha,
                                                                 "status": "completed", "conclusion": "success"})
    assert (await gh.getitem("/repos/{owner}/{repo}/pulls/{n}", n))["mergeable_state"] == "blocked"
    with pytest.raises(GitHubAPIError) as e:
        await gh.put("/repos/{owner}/{repo}/pulls/{n}/merge", n, data={"merge_method": "rebase", "sha": sha})
    assert e.value.message == 'Required status check "ci/rules" is expected.'    # the bound app's run is not there
    fake.add_check_run(fork, sha, "ci/rules", "success", app=other)
    assert (await gh.getitem("/repos/{owner}/{repo}/pulls/{n}", n))["mergeable_state"] == "clean"
    assert (await gh.put("/repos/{owner}/{repo}/pulls/{n}/merge", n, data={"merge_method": "rebase", "sha": sha}))["merged"]
    assert fake.violations == []


async def test_mergeable_null_for_first_reads(world):
    fake, fork, gh, src, base = world
    push_branch(src, fork, "z", [({"c.txt": "c\n"}, "z", "ann")])
    pr = await open_pr(gh, "z")
    fake.mergeable_unknown(fork, pr["number"], reads=2)
    states = [(await gh.getitem("/repos/{owner}/{repo}/pulls/{n}", dict(R, n=pr["number"])))["mergeable"]
              for _ in range(3)]
    # reads 2 and 3 hit the ETag cache only if the body is unchanged; mergeable changes it
    assert states == [None, None, True]


async def test_duplicate_pr_and_empty_pr_are_422(world):
    fake, fork, gh, src, base = world
    push_branch(src, fork, "d", [({"c.txt": "c\n"}, "d", "ann")])
    await open_pr(gh, "d")
    with pytest.raises(GitHubAPIError) as e:
        await open_pr(gh, "d")
    assert e.value.status_code == 422 and "A pull request already exists for meta:d." in str(e.value)
    git(src, "push", "-q", str(fork.path), "main:refs/heads/same")
    with pytest.raises(GitHubAPIError) as e:
        await open_pr(gh, "same")
    assert "No commits between main and same" in str(e.value)


async def test_update_branch_merges_base_into_head(world):
    fake, fork, gh, src, base = world
    head = push_branch(src, fork, "u", [({"c.txt": "c\n"}, "u", "ann")])[-1]
    commit_files(src, {"d.txt": "d\n"}, "main moves")
    git(src, "push", "-q", str(fork.path), "main")
    pr = await open_pr(gh, "u")
    res = await gh.put("/repos/{owner}/{repo}/pulls/{n}/update-branch", dict(R, n=pr["number"]),
                       data={"expected_head_sha": head})
    assert res["message"] == "Updating pull request branch."
    new_head = fork.git.ref("refs/heads/u")
    assert git(fork.path, "rev-list", "--parents", "-n1", new_head).split()[1:] == [head, fork.git.ref("refs/heads/main")]


# --- issues, comments, labels, reactions, permissions -------------------------------------------

async def test_issue_comment_label_reaction_roundtrip(world):
    fake, fork, gh, src, base = world
    fake.add_collaborator(fork, "alice", "maintain")
    issue = await gh.post("/repos/{owner}/{repo}/issues", R, data={"title": "forksync status", "body": "- [ ] replan"})
    n = dict(R, n=issue["number"])
    c = await gh.post("/repos/{owner}/{repo}/issues/{n}/comments", n, data={"body": "hello"})
    r1 = await gh.post("/repos/{owner}/{repo}/issues/comments/{id}/reactions", dict(R, id=c["id"]), data={"content": "eyes"})
    r2 = await gh.post("/repos/{owner}/{repo}/issues/comments/{id}/reactions", dict(R, id=c["id"]), data={"content": "eyes"})
    assert r1["id"] == r2["id"]
    labels = await gh.post("/repos/{owner}/{repo}/issues/{n}/labels", n, data={"labels": ["forksync:chain", "area:amd"]})
    assert [x["name"] for x in labels] == ["forksync:chain", "area:amd"]
    await gh.patch("/repos/{owner}/{repo}/issues/{n}", n, data={"body": "- [x] replan"})
    got = await gh.getitem("/repos/{owner}/{repo}/issues/{n}", n)
    assert (got["body"], got["comments"], [x["name"] for x in got["labels"]]) == (
        "- [x] replan", 1, ["forksync:chain", "area:amd"])
    perm = await gh.getitem("/repos/{owner}/{repo}/collaborators/{u}/permission", dict(R, u="alice"))
    assert (perm["permission"], perm["role_name"]) == ("write", "maintain")
    perm = await gh.getitem("/repos/{owner}/{repo}/collaborators/{u}/permission", dict(R, u="meta"))
    assert perm["permission"] == "admin"
    fake.create_user("mallory")
    perm = await gh.getitem("/repos/{owner}/{repo}/collaborators/{u}/permission", dict(R, u="mallory"))
    assert perm["permission"] == "read"


async def test_app_without_permission_is_403(fake_github, github_app, tmp_path):
    make_source_repo(tmp_path / "src", [{"a.txt": "1\n"}])
    fake_github.create_repo("meta/triton", source=tmp_path / "src")
    inst = fake_github.install("meta", permissions={"metadata": "read", "issues": "read"})
    with pytest.raises(GitHubAPIError) as e:
        await github_app.installation(inst.id).post("/repos/{owner}/{repo}/issues", R, data={"title": "x"})
    assert (e.value.status_code, e.value.message) == (403, "Resource not accessible by integration")


async def test_repo_outside_selected_installation_is_404(fake_github, github_app, tmp_path):
    make_source_repo(tmp_path / "src", [{"a.txt": "1\n"}])
    a = fake_github.create_repo("meta/triton", source=tmp_path / "src", private=True)
    fake_github.create_repo("meta/secret", source=tmp_path / "src", private=True)
    inst = fake_github.install("meta", repos=[a])
    gh = github_app.installation(inst.id)
    assert (await gh.getitem("/repos/{owner}/{repo}", R))["private"] is True
    with pytest.raises(GitHubAPIError) as e:
        await gh.getitem("/repos/{owner}/{repo}", {"owner": "meta", "repo": "secret"})
    assert e.value.status_code == 404


# --- webhooks -----------------------------------------------------------------------------------

@pytest.fixture
async def receiver():
    got = []

    async def hook(request):
        body = await request.read()
        event = sansio.Event.from_http(request.headers, body, secret=WEBHOOK_SECRET)
        got.append((event, dict(request.headers), body))
        return web.Response(status=202)

    app = web.Application()
    app.router.add_post("/webhook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}/webhook", got
    await runner.cleanup()


async def test_state_changes_emit_signed_valid_webhooks(world, receiver):
    fake, fork, gh, src, base = world
    url, got = receiver
    fake.webhooks.url = url
    sha = push_branch(src, fork, "w", [({"c.txt": "c\n"}, "w", "ann")])[-1]
    pr = await open_pr(gh, "w")
    push_branch(src, fork, "w", [({"c.txt": "c2\n"}, "w2", "ann")], start="w")
    await fake.refresh()
    c = await gh.post("/repos/{owner}/{repo}/issues/{n}/comments", dict(R, n=pr["number"]), data={"body": "/forksync plan"})
    await gh.patch("/repos/{owner}/{repo}/issues/comments/{id}", dict(R, id=c["id"]), data={"body": "/forksync hold"})
    await gh.put("/repos/{owner}/{repo}/pulls/{n}/merge", dict(R, n=pr["number"]), data={"merge_method": "rebase"})
    await fake.webhooks.drain()
    kinds = [(e.event, e.data.get("action")) for e, _, _ in got]
    assert kinds == [("push", None), ("pull_request", "opened"), ("push", None), ("pull_request", "synchronize"),
                     ("issue_comment", "created"), ("issue_comment", "edited"), ("push", None),
                     ("pull_request", "closed")]
    ev, headers, body = got[1]
    assert ev.data["pull_request"]["head"]["sha"] == sha and ev.data["installation"]["id"] > 0
    assert headers["X-GitHub-Hook-Installation-Target-Type"] == "integration"
    assert headers["User-Agent"].startswith("GitHub-Hookshot/")
    assert headers["X-GitHub-Hook-ID"] == str(fake.webhooks.hook_id)
    comment_ev = got[4][0]
    assert comment_ev.data["issue"]["pull_request"]["url"].endswith(f"/pulls/{pr['number']}")
    assert got[5][0].data["changes"] == {"body": {"from": "/forksync plan"}}
    closed = got[7][0].data["pull_request"]
    assert (closed["merged"], closed["merge_commit_sha"]) == (True, fork.git.ref("refs/heads/main"))
    assert len(fake.webhooks.deliveries) == 8 and all(d.ok for d in fake.webhooks.deliveries)
    assert fake.violations == []


async def test_deliver_and_redeliver_same_bytes_same_guid(world, receiver):
    fake, fork, gh, src, base = world
    url, got = receiver
    fake.webhooks.url = url
    payload = fake.webhooks.build("issue_comment", "created", {"comment": {"body": "/forksync plan"}})
    d = await fake.webhooks.deliver("issue_comment", payload)
    again = await fake.webhooks.redeliver(d.guid)
    assert again is d and d.statuses == [202, 202]
    (e1, h1, b1), (e2, h2, b2) = got
    assert b1 == b2 and h1["X-GitHub-Delivery"] == h2["X-GitHub-Delivery"] == d.guid
    assert h1["X-Hub-Signature-256"] == h2["X-Hub-Signature-256"]
    assert e1.data["comment"]["body"] == "/forksync plan"


async def test_failed_delivery_is_recorded(world):
    fake, fork, gh, src, base = world
    d = await fake.webhooks.deliver("ping", fake.webhooks.build("ping", None, {}), url="http://127.0.0.1:9/webhook")
    assert d.statuses == [None] and d.errors and not d.ok


# --- actions ------------------------------------------------------------------------------------

async def test_workflow_dispatch_runs_and_artifacts(world):
    fake, fork, gh, src, base = world
    fork.workflows.add("gpu-l2.yml")
    await gh.post("/repos/{owner}/{repo}/actions/workflows/{wf}/dispatches", dict(R, wf="gpu-l2.yml"),
                  data={"ref": "main", "inputs": {"suite": "L2"}})
    runs = await gh.getitem("/repos/{owner}/{repo}/actions/workflows/{wf}/runs", dict(R, wf="gpu-l2.yml"))
    assert runs["total_count"] == 1 and runs["workflow_runs"][0]["status"] == "queued"
    run_id = runs["workflow_runs"][0]["id"]
    fake.complete_workflow_run(fork, run_id, "success", {"junit": b"PK\x05\x06" + b"\0" * 18})
    wr = fake.webhooks.of("workflow_run", "completed")
    assert [(d.payload["workflow_run"]["id"], d.payload["workflow_run"]["conclusion"]) for d in wr] == [
        (run_id, "success")]
    arts = await gh.getitem("/repos/{owner}/{repo}/actions/runs/{id}/artifacts", dict(R, id=run_id))
    assert [a["name"] for a in arts["artifacts"]] == ["junit"]
    async with aiohttp.ClientSession() as s:
        token = await github_app_token(fake, gh)
        async with s.get(f"{fake.url}/repos/meta/triton/actions/artifacts/{arts['artifacts'][0]['id']}/zip",
                         headers={"Authorization": f"token {token}", "User-Agent": "t"}) as resp:
            assert resp.status == 200 and await resp.read() == b"PK\x05\x06" + b"\0" * 18


async def github_app_token(fake, gh):
    return await gh._token_source()


# --- subprocess mode ----------------------------------------------------------------------------

async def test_runs_as_a_process(tmp_path):
    import asyncio
    import sys

    make_source_repo(tmp_path / "src", [{"a.txt": "1\n"}])
    setup = tmp_path / "setup.json"
    setup.write_text(json.dumps({"repos": [{"full_name": "meta/triton", "source": str(tmp_path / "src")}],
                                 "installations": [{"account": "meta"}],
                                 "tokens": [{"token": "pat-1", "login": "alice"}]}))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.fakegithub", "--port", "0", "--state", str(tmp_path / "state"),
        "--setup", str(setup), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        info = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
        async with aiohttp.ClientSession() as s:
            async with s.get(f"{info['url']}/repos/meta/triton", headers={"Authorization": "token pat-1",
                                                                          "User-Agent": "t"}) as resp:
                assert resp.status == 200
                assert (await resp.json())["full_name"] == "meta/triton"
        assert info["repos"]["meta/triton"].endswith("repos/meta/triton.git")
    finally:
        proc.terminate()
        await proc.wait()
    assert proc.returncode == 0


# --- git over smart HTTP ------------------------------------------------------------------------

async def _git(cwd, *args):
    import asyncio
    import os

    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1", HOME=str(cwd),
               GIT_AUTHOR_NAME="a", GIT_AUTHOR_EMAIL="a@x", GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@x")
    p = await asyncio.create_subprocess_exec("git", *args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE)
    out, err = await p.communicate()
    return p.returncode, (out + err).decode()


async def test_push_and_fetch_over_smart_http_with_installation_token(fake_github, github_app, tmp_path):
    from bot.github.client import authenticated_remote

    fake = fake_github
    fake.render.git_http = True
    src = tmp_path / "src"
    make_source_repo(src, [{"a.txt": "1\n"}])
    fork = fake.create_repo("meta/triton", source=src)
    inst = fake.install("meta")
    gh = github_app.installation(inst.id)
    repo = await gh.getitem("/repos/{owner}/{repo}", R)
    assert repo["clone_url"] == f"{fake.url}/meta/triton.git"
    rc, out = await _git(tmp_path, "clone", "-q", repo["clone_url"], "clone")       # public: anonymous
    assert rc == 0, out
    work = tmp_path / "clone"
    (work / "c.txt").write_text("c\n")
    await _git(work, "add", "c.txt")
    await _git(work, "commit", "-qm", "c")
    rc, out = await _git(work, "push", "-q", repo["clone_url"], "HEAD:refs/heads/forksync/x")
    assert rc != 0, out                                # pushing needs a token
    token = await gh._token_source()
    rc, out = await _git(work, "push", "-q", authenticated_remote(repo["clone_url"], token),
                         "HEAD:refs/heads/forksync/x")
    assert rc == 0, out
    assert fork.git.ref("refs/heads/forksync/x") == (await _git(work, "rev-parse", "HEAD"))[1].strip()
    pushes = fake.webhooks.of("push")
    assert [d.payload["ref"] for d in pushes] == ["refs/heads/forksync/x"]
    assert pushes[0].payload["pusher"]["name"] == "forksync[bot]"
    assert [(g["service"], g["status"]) for g in fake.git_requests if g["service"] == "git-receive-pack"][-1] == (
        "git-receive-pack", 200)


async def test_every_emitted_event_kind_matches_githubs_schema(world, receiver):
    fake, fork, gh, src, base = world
    url, got = receiver
    fake.webhooks.url = url
    fake.add_collaborator(fork, "alice", "write")
    fake.install("meta", repos=[fork])                 # installation.created
    sha = push_branch(src, fork, "e", [({"c.txt": "c\n"}, "e", "ann")])[-1]
    pr = await open_pr(gh, "e")
    n = dict(R, n=pr["number"])
    await gh.post("/repos/{owner}/{repo}/issues/{n}/labels", n, data={"labels": ["forksync:bundle"]})
    await gh.patch("/repos/{owner}/{repo}/pulls/{n}", n, data={"body": "new body"})
    await gh.post("/repos/{owner}/{repo}/pulls/{n}/reviews", n, data={"event": "COMMENT", "body": "looks fine"})
    run = await gh.post("/repos/{owner}/{repo}/check-runs", R, data={"name": "L1", "head_sha": sha,
                                                                    "conclusion": "failure",
                                                                    "output": {"title": "L1", "summary": "2 failed"}})
    await gh.post("/repos/{owner}/{repo}/check-runs/{id}/rerequest", dict(R, id=run["id"]), data=b"")
    issue = await gh.post("/repos/{owner}/{repo}/issues", R, data={"title": "status"})
    await gh.patch("/repos/{owner}/{repo}/issues/{n}", dict(R, n=issue["number"]), data={"state": "closed"})
    await gh.patch("/repos/{owner}/{repo}/pulls/{n}", n, data={"state": "closed"})
    await gh.patch("/repos/{owner}/{repo}/pulls/{n}", n, data={"state": "open"})
    await fake.webhooks.drain()
    kinds = [(e.event, e.data.get("action")) for e, _, _ in got]
    assert kinds == [
        ("installation", "created"), ("push", None), ("pull_request", "opened"), ("pull_request", "labeled"),
        ("pull_request", "edited"), ("pull_request_review", "submitted"), ("check_run", "created"),
        ("check_run", "completed"), ("check_run", "rerequested"), ("issues", "opened"), ("issues", "closed"),
        ("pull_request", "closed"), ("pull_request", "reopened")]
    assert got[0][0].data["repositories"][0]["full_name"] == "meta/triton"
    assert got[5][0].data["review"]["state"] == "commented"
    assert got[4][0].data["changes"] == {"body": {"from": "body"}}
    assert fake.violations == []


async def test_scoped_installation_token(fake_github, tmp_path):
    make_source_repo(tmp_path / "src", [{"a.txt": "1\n"}])
    fake_github.create_repo("meta/triton", source=tmp_path / "src", private=True)
    fake_github.create_repo("meta/other", source=tmp_path / "src", private=True)
    inst = fake_github.install("meta")
    from bot.github.client import GitHubClient, token_client

    async with aiohttp.ClientSession() as s:
        app_gh = GitHubClient(s, app_id=fake_github.app.id, private_key=fake_github.app.private_key_pem,
                              base_url=fake_github.url)
        tok = await app_gh.post("/app/installations/{id}/access_tokens", {"id": inst.id},
                                data={"repositories": ["triton"], "permissions": {"issues": "read"}})
        assert [r["full_name"] for r in tok["repositories"]] == ["meta/triton"]
        assert tok["repository_selection"] == "selected"
        gh = token_client(s, tok["token"], base_url=fake_github.url)
        assert (await gh.getitem("/repos/{owner}/{repo}", R))["name"] == "triton"
        with pytest.raises(GitHubAPIError) as e:
            await gh.getitem("/repos/{owner}/{repo}", {"owner": "meta", "repo": "other"})
        assert e.value.status_code == 404
        with pytest.raises(GitHubAPIError) as e:
            await gh.post("/repos/{owner}/{repo}/issues", R, data={"title": "x"})
        assert e.value.status_code == 403
        with pytest.raises(GitHubAPIError) as e:
            await app_gh.post("/app/installations/{id}/access_tokens", {"id": inst.id},
                              data={"repositories": ["nope"]})
        assert e.value.status_code == 422


async def test_held_events_go_out_of_order_and_duplicates_keep_the_guid(world, receiver):
    fake, fork, gh, src, base = world
    url, got = receiver
    fake.webhooks.url = url
    fake.webhooks.auto_deliver = False
    i1 = await gh.post("/repos/{owner}/{repo}/issues", R, data={"title": "one"})
    i2 = await gh.post("/repos/{owner}/{repo}/issues", R, data={"title": "two"})
    sent = await fake.webhooks.flush(order="reverse")
    assert [e.data["issue"]["number"] for e, _, _ in got] == [i2["number"], i1["number"]]
    assert [d.payload["issue"]["title"] for d in sent] == ["two", "one"]
    fake.webhooks.auto_deliver = True
    fake.webhooks.duplicate_next = 1
    await gh.post("/repos/{owner}/{repo}/issues", R, data={"title": "three"})
    await fake.webhooks.drain()
    assert [h["X-GitHub-Delivery"] for _, h, _ in got[2:]] == [fake.webhooks.emitted[-1].guid] * 2


async def test_ping_and_slow_receiver_timeout(world, receiver, tmp_path):
    fake, fork, gh, src, base = world
    url, got = receiver
    fake.webhooks.url = url
    d = await fake.webhooks.ping()
    assert d.ok and got[0][0].event == "ping" and got[0][0].data["hook"]["type"] == "App"
    import asyncio

    release = asyncio.Event()

    async def slow(request):                # answers only after the test is done: always too late
        await release.wait()
        return web.Response(status=202)

    app = web.Application()
    app.router.add_post("/slow", slow)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    fake.webhooks.timeout_s = 1.0          # GitHub gives 10 s; shortened so the test does not wait long
    d = await fake.webhooks.deliver("ping", d.payload, url=f"http://127.0.0.1:{port}/slow")
    assert d.statuses == [None]
    assert "Timeout" in d.errors[0]
    release.set()
    await runner.cleanup()


async def test_deleting_the_head_branch_closes_the_pr(world):
    fake, fork, gh, src, base = world
    push_branch(src, fork, "gone", [({"c.txt": "c\n"}, "gone", "ann")])
    pr = await open_pr(gh, "gone")
    await gh.delete("/repos/{owner}/{repo}/git/refs/{ref}", dict(R, ref="heads/gone"))
    got = await gh.getitem("/repos/{owner}/{repo}/pulls/{n}", dict(R, n=pr["number"]))
    assert (got["state"], got["merged"]) == ("closed", False)
    assert [d.action for d in fake.webhooks.of("pull_request")] == ["opened", "closed"]


async def test_issue_reopen_event(world):
    fake, fork, gh, src, base = world
    issue = await gh.post("/repos/{owner}/{repo}/issues", R, data={"title": "flaky"})
    n = dict(R, n=issue["number"])
    await gh.patch("/repos/{owner}/{repo}/issues/{n}", n, data={"state": "closed", "state_reason": "not_planned"})
    got = await gh.patch("/repos/{owner}/{repo}/issues/{n}", n, data={"state": "open"})
    assert (got["state"], got["state_reason"]) == ("open", "reopened")
    assert [d.action for d in fake.webhooks.of("issues")] == ["opened", "closed", "reopened"]
    assert fake.webhooks.of("issues")[1].payload["issue"]["state_reason"] == "not_planned"


async def test_label_events_on_issues_and_prs(world):
    fake, fork, gh, src, base = world
    push_branch(src, fork, "l", [({"c.txt": "c\n"}, "l", "ann")])
    pr = await open_pr(gh, "l")
    issue = await gh.post("/repos/{owner}/{repo}/issues", R, data={"title": "status"})
    for n in (pr["number"], issue["number"]):
        await gh.post("/repos/{owner}/{repo}/issues/{n}/labels", dict(R, n=n), data={"labels": ["forksync:hold"]})
        await gh.delete("/repos/{owner}/{repo}/issues/{n}/labels/{name}", dict(R, n=n, name="forksync:hold"))
    assert [(d.event, d.action, d.payload["label"]["name"]) for d in fake.webhooks.emitted
            if d.action in ("labeled", "unlabeled")] == [
        ("pull_request", "labeled", "forksync:hold"), ("pull_request", "unlabeled", "forksync:hold"),
        ("issues", "labeled", "forksync:hold"), ("issues", "unlabeled", "forksync:hold")]


async def test_pr_from_a_fork_repository_merges(world, tmp_path):
    fake, fork, gh, src, base = world
    mine = fake.create_repo("alice/triton", source=src, fork_of=fork)
    fake.add_collaborator(fork, "alice", "read")
    push_branch(src, mine, "fix", [({"c.txt": "fix\n"}, "fix", "alice")])
    pr = await gh.post("/repos/{owner}/{repo}/pulls", R, data={"title": "fix", "head": "alice:fix", "base": "main"})
    assert (pr["head"]["repo"]["full_name"], pr["head"]["label"]) == ("alice/triton", "alice:fix")
    got = await gh.getitem("/repos/{owner}/{repo}/pulls/{n}", dict(R, n=pr["number"]))
    assert got["mergeable"] is True
    files = await gh.getitem("/repos/{owner}/{repo}/pulls/{n}/files", dict(R, n=pr["number"]))
    assert [f["filename"] for f in files] == ["c.txt"]
    res = await gh.put("/repos/{owner}/{repo}/pulls/{n}/merge", dict(R, n=pr["number"]), data={"merge_method": "rebase"})
    assert git(fork.path, "show", f"{res['sha']}:c.txt") == "fix"


async def test_an_installation_token_acts_as_the_app_that_minted_it(fake_github, tmp_path):
    # a second App (the one `forksync app setup` creates beside the fake's own): its bot is the
    # author of what its installation tokens do, as on GitHub; the status issue is found by its
    # creator, so a write credited to the first App made the bot open one more on every sync
    from bot.github.client import GitHubApp
    from tests.support.github import FAST_RETRY

    make_source_repo(tmp_path / "src", [{"a.txt": "1\n"}])
    fork = fake_github.create_repo("meta/triton", source=tmp_path / "src")
    second = fake_github.create_app(app_id=1003, slug="forksync-meta", name="forksync-meta", fresh_key=True)
    inst = fake_github.install("meta")
    async with aiohttp.ClientSession() as session:
        apps = [GitHubApp(session, app_id=a.id, private_key=a.private_key_pem, base_url=fake_github.url, retry=FAST_RETRY)
                for a in (fake_github.app, second)]
        made = [await a.installation(inst.id).post("/repos/{owner}/{repo}/issues", R, data={"title": str(a.app_id)})
                for a in apps]
        assert [m["user"]["login"] for m in made] == ["forksync[bot]", "forksync-meta[bot]"]
        mine = await apps[1].installation(inst.id).getitem("/repos/{owner}/{repo}/issues{?creator}",
                                                           {**R, "creator": "forksync-meta[bot]"})
        # its check runs are its own too (the gate tells a check bound to one App from another App's run)
        run = await apps[1].installation(inst.id).post("/repos/{owner}/{repo}/check-runs", R, data={
            "name": "forksync/gate", "head_sha": fork.git.ref("refs/heads/main")})
    assert [i["number"] for i in mine] == [made[1]["number"]]
    assert (run["app"]["id"], run["app"]["slug"]) == (1003, "forksync-meta")


async def test_setup_signs_a_user_in_for_the_oauth_flow(fake_github):
    # a local GitHub run as a process (`python -m bot.fakegithub`) is driven only through
    # /_fake/setup: the dashboard's sign-in needs someone signed in to its "browser"
    no_redirect = dict(allow_redirects=False)
    authorize = f"{fake_github.url}/login/oauth/authorize?client_id={fake_github.app.client_id}&redirect_uri=http://x/cb&state=s"
    async with aiohttp.ClientSession() as s:
        async with s.get(authorize, **no_redirect) as r:
            assert r.status == 401 and "/_fake/setup" in (await r.json())["message"]
        async with s.post(f"{fake_github.url}/_fake/setup", json={"oauth_user": "alice"}) as r:
            assert r.status == 200
        async with s.get(authorize, **no_redirect) as r:
            assert r.status == 302 and r.headers["Location"].startswith("http://x/cb?code=")
    assert fake_github.oauth_user == "alice"
