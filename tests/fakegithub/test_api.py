"""The local GitHub's remaining REST surface: pagination, git data, compare, contents listings,
merge-upstream, auth failures, and the response check catching a drifted fake."""
from __future__ import annotations

import contextlib
import time

import aiohttp
import jwt
import pytest

from bot.github.client import GitHubAPIError, GitHubClient, token_client
from tests.support.github import commit_files, git, make_source_repo

R = {"owner": "meta", "repo": "triton"}


@pytest.fixture
def world(fake_github, github_app, tmp_path):
    src = tmp_path / "src"
    shas = make_source_repo(src, [{"a.txt": "1\n", "dir/x.txt": "x\n"}, {"b.txt": "2\n"}, {"a.txt": "3\n"}])
    fork = fake_github.create_repo("meta/triton", source=src)
    inst = fake_github.install("meta")
    return fake_github, fork, github_app.installation(inst.id), src, shas


async def test_pagination_follows_link_headers(world):
    fake, fork, gh, src, shas = world
    for i in range(5):
        await gh.post("/repos/{owner}/{repo}/issues", R, data={"title": f"issue {i}"})
    titles = [i["title"] async for i in gh.getiter("/repos/{owner}/{repo}/issues?per_page=2&direction=asc", R)]
    assert titles == [f"issue {i}" for i in range(5)]
    pages = [r for r in fake.requests_for("issues/list-for-repo")]
    assert len(pages) == 3
    commits = [c["sha"] async for c in gh.getiter("/repos/{owner}/{repo}/commits?per_page=2", R)]
    assert commits == list(reversed(shas))


async def test_git_data_api_builds_a_commit_and_moves_a_ref(world):
    fake, fork, gh, src, shas = world
    blob = await gh.post("/repos/{owner}/{repo}/git/blobs", R, data={"content": "hello\n", "encoding": "utf-8"})
    assert blob["sha"] == "ce013625030ba8dba906f756967f9e9ca394464a"       # git hash-object of "hello\n"
    base_tree = (await gh.getitem("/repos/{owner}/{repo}/git/commits/{sha}", dict(R, sha=shas[-1])))["tree"]["sha"]
    tree = await gh.post("/repos/{owner}/{repo}/git/trees", R, data={
        "base_tree": base_tree, "tree": [{"path": "docs/new.md", "mode": "100644", "type": "blob", "sha": blob["sha"]}]})
    names = {e["path"] for e in tree["tree"]}
    assert names == {"a.txt", "b.txt", "dir", "docs"}
    commit = await gh.post("/repos/{owner}/{repo}/git/commits", R, data={
        "message": "add docs\n\nUpstream-Commit: " + "a" * 40, "tree": tree["sha"], "parents": [shas[-1]],
        "author": {"name": "Ann", "email": "ann@example.com"}})
    assert commit["parents"][0]["sha"] == shas[-1] and commit["author"]["name"] == "Ann"
    ref = await gh.post("/repos/{owner}/{repo}/git/refs", R, data={"ref": "refs/heads/forksync/docs", "sha": commit["sha"]})
    assert ref["object"]["sha"] == commit["sha"]
    assert git(fork.path, "show", f"{commit['sha']}:docs/new.md") == "hello"
    # a non-fast-forward without force is refused, with force it moves
    with pytest.raises(GitHubAPIError) as e:
        await gh.patch("/repos/{owner}/{repo}/git/refs/{ref}", dict(R, ref="heads/forksync/docs"), data={"sha": shas[0]})
    assert (e.value.status_code, e.value.message) == (422, "Update is not a fast forward")
    moved = await gh.patch("/repos/{owner}/{repo}/git/refs/{ref}", dict(R, ref="heads/forksync/docs"),
                           data={"sha": shas[0], "force": True})
    assert moved["object"]["sha"] == shas[0]
    matching = await gh.getitem("/repos/{owner}/{repo}/git/matching-refs/{ref}", dict(R, ref="heads/forksync/"))
    assert [m["ref"] for m in matching] == ["refs/heads/forksync/docs"]
    await gh.delete("/repos/{owner}/{repo}/git/refs/{ref}", dict(R, ref="heads/forksync/docs"))
    assert fork.git.ref("refs/heads/forksync/docs") is None
    assert [d.payload["deleted"] for d in fake.webhooks.of("push")] == [False, False, True]


async def test_compare_and_commit_files(world):
    fake, fork, gh, src, shas = world
    cmp = await gh.getitem("/repos/{owner}/{repo}/compare/{basehead}", dict(R, basehead=f"{shas[0]}...main"))
    assert (cmp["status"], cmp["ahead_by"], cmp["behind_by"]) == ("ahead", 2, 0)
    assert [c["sha"] for c in cmp["commits"]] == shas[1:]
    assert sorted(f["filename"] for f in cmp["files"]) == ["a.txt", "b.txt"]
    commit = await gh.getitem("/repos/{owner}/{repo}/commits/{ref}", dict(R, ref=shas[2]))
    assert [(f["filename"], f["status"], f["additions"], f["deletions"]) for f in commit["files"]] == [
        ("a.txt", "modified", 1, 1)]
    assert commit["author"] is None          # no account with that email: GitHub says null
    fake.create_user("updev", email="dev@upstream.example")
    commit = await gh.getitem("/repos/{owner}/{repo}/commits/{ref}", dict(R, ref=shas[1]))
    assert commit["author"]["login"] == "updev"


async def test_contents_directory_listing(world):
    fake, fork, gh, src, shas = world
    listing = await gh.getitem("/repos/{owner}/{repo}/contents/{path}", dict(R, path="dir"))
    assert [(e["name"], e["type"], e["path"]) for e in listing] == [("x.txt", "file", "dir/x.txt")]
    with pytest.raises(GitHubAPIError) as e:
        await gh.getitem("/repos/{owner}/{repo}/contents/{path}", dict(R, path=".github/forksync.yml"))
    assert e.value.status_code == 404


async def test_merge_upstream_fast_forwards_a_fork(fake_github, github_app, tmp_path):
    src = tmp_path / "src"
    make_source_repo(src, [{"a.txt": "1\n"}])
    up = fake_github.create_repo("triton-lang/triton", source=src)
    fork = fake_github.create_repo("meta/triton", source=src, fork_of=up)
    inst = fake_github.install("meta")
    gh = github_app.installation(inst.id)
    new = commit_files(src, {"u.txt": "u\n"}, "upstream moves")
    git(src, "push", "-q", str(up.path), "main")
    res = await gh.post("/repos/{owner}/{repo}/merge-upstream", R, data={"branch": "main"})
    assert (res["merge_type"], res["base_branch"]) == ("fast-forward", "triton-lang:main")
    assert fork.git.ref("refs/heads/main") == new
    res = await gh.post("/repos/{owner}/{repo}/merge-upstream", R, data={"branch": "main"})
    assert res["merge_type"] == "none"
    repo = await gh.getitem("/repos/{owner}/{repo}", R)
    assert repo["fork"] is True and repo["parent"]["full_name"] == "triton-lang/triton"


async def test_commit_statuses_of_other_ci_systems(world):
    fake, fork, gh, src, shas = world
    empty = await gh.getitem("/repos/{owner}/{repo}/commits/{ref}/status", {**R, "ref": shas[-1]})
    assert (empty["state"], empty["total_count"], empty["statuses"]) == ("pending", 0, [])
    fake.set_status(fork, shas[-1], "ci/oss", "pending")
    fake.set_status(fork, shas[-1], "ci/oss", "success", target_url="https://ci.example/1")
    fake.set_status(fork, shas[-1], "internal-ci", "failure", description="2 failed")
    st = await gh.getitem("/repos/{owner}/{repo}/commits/{ref}/status", {**R, "ref": "main"})
    assert (st["state"], st["sha"], st["total_count"]) == ("failure", shas[-1], 2)
    assert [(x["context"], x["state"], x["description"]) for x in st["statuses"]] == [
        ("ci/oss", "success", None), ("internal-ci", "failure", "2 failed")]
    fake.set_status(fork, shas[-1], "internal-ci", "success")
    st = await gh.getitem("/repos/{owner}/{repo}/commits/{ref}/status", {**R, "ref": shas[-1]})
    assert st["state"] == "success"
    with pytest.raises(ValueError, match="commit status state 'green'"):
        fake.set_status(fork, shas[-1], "x", "green")
    assert fake.violations == []


async def test_app_jwt_is_verified(world):
    fake, fork, gh, src, shas = world
    from bot.fakegithub.server import generate_app_key

    other_key, _ = generate_app_key()
    async with aiohttp.ClientSession() as s:
        bad = GitHubClient(s, app_id=fake.app.id, private_key=other_key, base_url=fake.url)
        with pytest.raises(GitHubAPIError) as e:
            await bad.getitem("/app")
        assert (e.value.status_code, e.value.message) == (401, "A JSON web token could not be decoded")
        now = int(time.time())
        too_long = jwt.encode({"iat": now - 60, "exp": now + 3600, "iss": str(fake.app.id)},
                              fake.app.private_key_pem, algorithm="RS256")
        plain = GitHubClient(s, base_url=fake.url)
        with pytest.raises(GitHubAPIError) as e:
            await plain.getitem("/app", jwt=too_long)
        assert e.value.message == "'Expiration time' claim ('exp') is too far in the future"
        good = GitHubClient(s, app_id=fake.app.id, private_key=fake.app.private_key_pem, base_url=fake.url)
        me = await good.getitem("/app")
        assert (me["id"], me["slug"]) == (fake.app.id, "forksync")
        installs = await good.getitem("/app/installations")
        assert [i["account"]["login"] for i in installs] == ["meta"]
        # an installation token cannot call App endpoints, a JWT cannot call repository endpoints
        tok = await gh._token_source()
        with pytest.raises(GitHubAPIError) as e:
            await token_client(s, tok, base_url=fake.url).getitem("/app")
        assert e.value.status_code == 401
        with pytest.raises(GitHubAPIError) as e:
            await good.getitem("/repos/{owner}/{repo}", R)
        assert e.value.status_code == 401


async def test_anonymous_access(world):
    fake, fork, gh, src, shas = world
    async with aiohttp.ClientSession() as s:
        anon = GitHubClient(s, base_url=fake.url)
        assert (await anon.getitem("/repos/{owner}/{repo}", R))["private"] is False
        with pytest.raises(GitHubAPIError) as e:
            await anon.post("/repos/{owner}/{repo}/issues", R, data={"title": "x"})
        assert (e.value.status_code, e.value.message) == (401, "Requires authentication")
        fork.private = True
        with pytest.raises(GitHubAPIError) as e:
            await anon.getitem("/repos/{owner}/{repo}/issues/1", R)
        assert e.value.status_code == 404


async def test_a_drifted_response_is_caught(world, monkeypatch):
    fake, fork, gh, src, shas = world
    real = fake.render.label

    def broken(r, lab):
        out = real(r, lab)
        del out["color"]
        return out

    monkeypatch.setattr(fake.render, "label", broken)
    await gh.post("/repos/{owner}/{repo}/labels", R, data={"name": "forksync:bundle", "color": "0e8a16"})
    assert [(v.kind, v.operation) for v in fake.violations] == [("invalid-response", "issues/create-label")]
    assert "color" in fake.violations[0].detail
    fake.violations.clear()


async def test_admin_endpoints_configure_a_running_fake(fake_github, tmp_path):
    make_source_repo(tmp_path / "src", [{"a.txt": "1\n"}])
    async with aiohttp.ClientSession() as s:
        async with s.post(f"{fake_github.url}/_fake/setup", json={
                "repos": [{"full_name": "meta/triton", "source": str(tmp_path / "src")}],
                "installations": [{"account": "meta", "id": 77}],
                "collaborators": [{"repo": "meta/triton", "login": "alice", "permission": "admin"}],
                "tokens": [{"token": "alice-token", "login": "alice"}]}) as r:
            info = await r.json()
        assert info["installations"] == [{"id": 77, "account": "meta"}]
        assert info["repos"][0]["path"].endswith("repos/meta/triton.git")
        async with s.post(f"{fake_github.url}/_fake/faults", json={"kind": "server_error", "path": "/repos/*",
                                                                  "status": 503}) as r:
            assert (await r.json()) == {"queued": 1}
        from bot.github.client import RetryPolicy

        gh = token_client(s, "alice-token", base_url=fake_github.url, retry=RetryPolicy(max_attempts=1))
        with pytest.raises(GitHubAPIError) as e:
            await gh.getitem("/repos/{owner}/{repo}", R)
        assert e.value.status_code == 503 and e.value.attempts == 1
        async with s.post(f"{fake_github.url}/_fake/setup", json={"repos": [{"full_name": "meta/triton"}]}) as r:
            assert r.status == 400 and "exists already" in (await r.json())["error"]
        async with s.get(f"{fake_github.url}/_fake/violations") as r:
            assert await r.json() == []


async def test_the_authenticated_user_is_the_tokens_account_and_not_an_installations(fake_github, tmp_path):
    """``GET /user`` (users/get-authenticated) as GitHub answers it: a personal token's account
    (the private-user shape, held to the description like every other operation), 403 for an
    installation token (it acts for the App, not for a user), 401 for an unknown token."""
    fake_github.add_token("ghp_alicePersonalToken", "alice")
    inst = fake_github.install("meta")
    inst_token = fake_github.state.issue_token(installation_id=inst.id).token
    async with aiohttp.ClientSession() as s:
        me = await token_client(s, "ghp_alicePersonalToken", base_url=fake_github.url).getitem("/user")
        assert (me["login"], me["type"]) == ("alice", "User")
        with pytest.raises(GitHubAPIError) as e:
            await token_client(s, inst_token, base_url=fake_github.url).getitem("/user")
        assert (e.value.status_code, e.value.message) == (403, "Resource not accessible by integration")
        with pytest.raises(GitHubAPIError) as e:
            await token_client(s, "ghp_nobodys", base_url=fake_github.url).getitem("/user")
        assert e.value.status_code == 401
    assert [r["status"] for r in fake_github.requests_for("users/get-authenticated")] == [200, 403, 401]


@contextlib.asynccontextmanager
async def a_reader(world):
    """``(issue, the owner's comment on it, rita's client)``: rita has read access to meta/triton, and
    the App opened an issue and commented on it."""
    fake, fork, gh, src, shas = world
    fake.add_collaborator(fork, "rita", "read")
    fake.add_token("ghp_ritaReadOnly", "rita")
    async with aiohttp.ClientSession() as s:
        issue = await gh.post("/repos/{owner}/{repo}/issues", R, data={"title": "status"})
        theirs = await gh.post("/repos/{owner}/{repo}/issues/{n}/comments", {**R, "n": issue["number"]},
                               data={"body": "the owner's words"})
        yield issue, theirs, token_client(s, "ghp_ritaReadOnly", base_url=fake.url)


async def test_a_reader_comments_and_opens_issues_but_cannot_label(world):
    """GitHub lets a person with read access comment on a repository's issues and pull requests and
    open issues (only triage and up edit others' labels): a maintainer's ``/forksync`` command from a
    reader must reach the App, which then refuses it by the sender's permission, not the local
    GitHub at the comment's POST (where it stood: "Must have push access")."""
    async with a_reader(world) as (issue, _, rita):
        c = await rita.post("/repos/{owner}/{repo}/issues/{n}/comments", {**R, "n": issue["number"]},
                            data={"body": "/forksync help"})
        assert c["user"]["login"] == "rita"
        opened = await rita.post("/repos/{owner}/{repo}/issues", R, data={"title": "a question"})
        assert opened["user"]["login"] == "rita"
        with pytest.raises(GitHubAPIError) as e:
            await rita.post("/repos/{owner}/{repo}/issues/{n}/labels", {**R, "n": issue["number"]},
                            data={"labels": ["x"]})
        assert e.value.status_code == 403


async def test_a_reader_edits_and_deletes_their_own_comment_but_not_anothers(world):
    """GitHub lets a comment's author edit and delete it whatever their access (a reader's own
    ``/forksync`` comment, edited to take a command back, is an ``edited`` event forksync reads);
    another person's comment takes write access. The local GitHub asked for push access of both."""
    async with a_reader(world) as (issue, theirs, rita):
        c = await rita.post("/repos/{owner}/{repo}/issues/{n}/comments", {**R, "n": issue["number"]},
                            data={"body": "/forksync help"})
        with pytest.raises(GitHubAPIError) as e:
            await rita.patch("/repos/{owner}/{repo}/issues/comments/{id}", {**R, "id": theirs["id"]},
                             data={"body": "rewritten by a reader"})
        assert e.value.status_code == 403
        edited = await rita.patch("/repos/{owner}/{repo}/issues/comments/{id}", {**R, "id": c["id"]},
                                  data={"body": "never mind"})
        assert edited["body"] == "never mind"
        await rita.delete("/repos/{owner}/{repo}/issues/comments/{id}", {**R, "id": c["id"]})


async def test_a_reader_reacts_to_a_comment_and_closes_the_issue_they_opened(world):
    """GitHub lets a person with read access react to comments and issues and edit or close an issue
    they opened; the local GitHub asked for push access of both (a reader's 👍 on a status issue)."""
    async with a_reader(world) as (issue, theirs, rita):
        x = await rita.post("/repos/{owner}/{repo}/issues/comments/{id}/reactions", {**R, "id": theirs["id"]},
                            data={"content": "+1"})
        assert x["user"]["login"] == "rita"
        opened = await rita.post("/repos/{owner}/{repo}/issues", R, data={"title": "a question"})
        closed = await rita.patch("/repos/{owner}/{repo}/issues/{n}", {**R, "n": opened["number"]},
                                  data={"state": "closed"})
        assert closed["state"] == "closed"
