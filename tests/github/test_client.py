"""bot.github.client end to end against the local GitHub over HTTP: App auth, token cache and refresh,
the retry policy on each injected fault, clear errors, ETag caching, plain token mode."""
from __future__ import annotations

import aiohttp
import pytest

from bot.github.client import API_VERSION, GitHubAPIError, GitHubApp, token_client
from tests.support.github import FAST_RETRY, make_source_repo

REPO = {"owner": "meta", "repo": "triton"}


@pytest.fixture
def world(fake_github, tmp_path):
    shas = make_source_repo(tmp_path / "src", [{"a.txt": "1\n"}, {"b.txt": "2\n"}])
    fork = fake_github.create_repo("meta/triton", source=tmp_path / "src")
    inst = fake_github.install("meta")
    return fake_github, fork, inst, shas


async def test_app_auth_fetches_one_token_and_pins_api_version(world, github_app):
    fake, fork, inst, shas = world
    fake.require_api_version = True
    gh = github_app.installation(inst.id)
    for _ in range(3):
        repo = await gh.getitem("/repos/{owner}/{repo}", REPO)
    assert repo["full_name"] == "meta/triton"
    assert repo["default_branch"] == "main"
    assert len(fake.requests_for("apps/create-installation-access-token")) == 1
    assert github_app.tokens.fetches == 1
    assert {r["api_version"] for r in fake.requests} == {API_VERSION}
    assert {r["auth"] for r in fake.requests_for("repos/get")} == {"installation"}
    assert fake.requests_for("apps/create-installation-access-token")[0]["auth"] == "app"
    assert github_app.installation(inst.id) is gh


async def test_expired_token_gets_refetched_once(world, github_app):
    fake, fork, inst, shas = world
    gh = github_app.installation(inst.id)
    await gh.getitem("/repos/{owner}/{repo}", REPO)
    assert fake.expire_tokens() == 1
    commit = await gh.getitem("/repos/{owner}/{repo}/commits/{ref}", dict(REPO, ref=shas[-1]))
    assert commit["sha"] == shas[-1]
    assert [r["status"] for r in fake.requests_for("repos/get-commit")] == [401, 200]
    assert github_app.tokens.fetches == 2
    assert gh.stats.token_refreshes == 1
    assert github_app.slept == []


async def test_each_minted_token_is_handed_to_on_minted_before_use(world):
    fake, fork, inst, shas = world
    minted: list[str] = []
    async with aiohttp.ClientSession() as s:
        app = GitHubApp(s, app_id=fake.app.id, private_key=fake.app.private_key_pem, base_url=fake.url,
                        retry=FAST_RETRY, on_minted=minted.append)
        gh = app.installation(inst.id)
        await gh.getitem("/repos/{owner}/{repo}", REPO)
        await gh.getitem("/repos/{owner}/{repo}", REPO)          # cached: not minted again
        assert minted == [await app.tokens.token(inst.id)]
        fake.expire_tokens()
        await gh.getitem("/repos/{owner}/{repo}", REPO)          # the 401 makes a new one
    assert len(minted) == 2 and minted[0] != minted[1] and all(t.startswith("ghs_") for t in minted)


async def test_token_refreshed_before_expiry_without_a_401(fake_github, tmp_path):
    make_source_repo(tmp_path / "src", [{"a.txt": "1\n"}])
    fake_github.create_repo("meta/triton", source=tmp_path / "src")
    inst = fake_github.install("meta")
    now = [fake_github.state.now()]
    async with aiohttp.ClientSession() as s:
        app = GitHubApp(s, app_id=fake_github.app.id, private_key=fake_github.app.private_key_pem,
                        base_url=fake_github.url, retry=FAST_RETRY, clock=lambda: now[0])
        gh = app.installation(inst.id)
        await gh.getitem("/repos/{owner}/{repo}", REPO)
        now[0] += 3600 - 301          # 1 s before the 5-minute margin: still cached
        await gh.getitem("/repos/{owner}/{repo}", REPO)
        assert app.tokens.fetches == 1
        now[0] += 2                   # inside the margin: refreshed proactively
        await gh.getitem("/repos/{owner}/{repo}", REPO)
        assert app.tokens.fetches == 2
    assert [r["status"] for r in fake_github.requests_for("repos/get")] == [200, 304, 304]


@pytest.mark.parametrize("inject, expected_sleeps", [
    (lambda f: f.faults.rate_limited("/repos/meta/triton", retry_after=7), [7.0]),
    (lambda f: f.faults.secondary_limit("/repos/meta/triton", retry_after=3), [3.0]),
    (lambda f: f.faults.secondary_limit("/repos/meta/triton", retry_after=None), [0.02]),
    (lambda f: f.faults.server_error("/repos/meta/triton", status=502, times=2), [0.01, 0.02]),
    (lambda f: f.faults.server_error("/repos/meta/triton", status=503, times=3), [0.01, 0.02, 0.04]),
])
async def test_retries_follow_the_policy(world, github_app, inject, expected_sleeps):
    fake, fork, inst, shas = world
    gh = github_app.installation(inst.id)
    inject(fake)
    repo = await gh.getitem("/repos/{owner}/{repo}", REPO)
    assert repo["name"] == "triton"
    assert github_app.slept == expected_sleeps
    statuses = [r["status"] for r in fake.requests_for("repos/get")]
    assert statuses[-1] == 200 and len(statuses) == len(expected_sleeps) + 1
    assert fake.faults.pending() == []


async def test_primary_limit_waits_until_reset(world, fake_github):
    fake, fork, inst, shas = world
    now = 1_900_000_000.0
    slept = []

    async def sleep(s):
        slept.append(s)

    fake.faults.primary_limit("/repos/meta/triton", reset_at=int(now) + 42)
    async with aiohttp.ClientSession() as s:
        app = GitHubApp(s, app_id=fake.app.id, private_key=fake.app.private_key_pem, base_url=fake.url,
                        retry=FAST_RETRY, sleep=sleep, clock=lambda: now)
        fake.state.clock = lambda: now - 10          # tokens issued "now" in the fake's clock too
        await app.installation(inst.id).getitem("/repos/{owner}/{repo}", REPO)
    assert slept == [43.0]


async def test_gives_up_after_max_attempts_with_a_clear_error(world, github_app):
    fake, fork, inst, shas = world
    fake.faults.server_error("/repos/meta/triton", status=502, times=10)
    with pytest.raises(GitHubAPIError) as e:
        await github_app.installation(inst.id).getitem("/repos/{owner}/{repo}", REPO)
    assert e.value.status_code == 502
    assert e.value.attempts == 4
    assert str(e.value).startswith(f"GitHub answered 502 to GET {fake.url}/repos/meta/triton: Server Error "
                                   "(after 4 attempts)")
    assert github_app.slept == [0.01, 0.02, 0.04]


async def test_wait_longer_than_cap_is_not_slept(world, github_app):
    fake, fork, inst, shas = world
    fake.faults.rate_limited("/repos/meta/triton", retry_after=3600)
    with pytest.raises(GitHubAPIError) as e:
        await github_app.installation(inst.id).getitem("/repos/{owner}/{repo}", REPO)
    assert e.value.status_code == 429 and e.value.attempts == 1
    assert github_app.slept == []


@pytest.mark.parametrize("status", [404, 405, 409, 422])
async def test_non_retryable_answers_surface_at_once(world, github_app, status):
    fake, fork, inst, shas = world
    gh = github_app.installation(inst.id)
    if status == 404:
        call = gh.getitem("/repos/{owner}/{repo}", {"owner": "meta", "repo": "nope"})
    elif status == 422:
        call = gh.post("/repos/{owner}/{repo}/git/refs", REPO, data={"ref": "refs/heads/main", "sha": shas[0]})
    else:
        (fake.faults.not_mergeable if status == 405 else fake.faults.head_changed)()
        call = gh.put("/repos/{owner}/{repo}/pulls/{n}/merge", dict(REPO, n=1), data={"merge_method": "rebase"})
    with pytest.raises(GitHubAPIError) as e:
        await call
    assert e.value.status_code == status
    assert e.value.attempts == 1
    assert github_app.slept == []
    expected = {404: "Not Found", 405: "Pull Request is not mergeable",
                409: "Head branch was modified. Review and try the merge again.",
                422: "Reference already exists"}[status]
    assert e.value.message == expected


async def test_etag_cache_serves_304(world, github_app):
    fake, fork, inst, shas = world
    gh = github_app.installation(inst.id)
    first = await gh.getitem("/repos/{owner}/{repo}/contents/{path}", dict(REPO, path="a.txt"))
    second = await gh.getitem("/repos/{owner}/{repo}/contents/{path}", dict(REPO, path="a.txt"))
    assert second == first
    assert [r["status"] for r in fake.requests_for("repos/get-content")] == [200, 304]
    assert fake.requests_for("repos/get-content")[1]["if_none_match"].startswith('W/"')
    assert gh.stats.cache_hits == 1


async def test_caches_are_per_installation(world, github_app, tmp_path):
    fake, fork, inst, shas = world
    make_source_repo(tmp_path / "src2", [{"c.txt": "3\n"}])
    fake.create_repo("other/triton", source=tmp_path / "src2")
    inst2 = fake.install("other")
    a, b = github_app.installation(inst.id), github_app.installation(inst2.id)
    assert a._cache is not b._cache
    await a.getitem("/repos/{owner}/{repo}", REPO)
    # installation 2 is not installed on meta/triton (public): it reads it fresh, no 304
    await b.getitem("/repos/{owner}/{repo}", REPO)
    assert [r["status"] for r in fake.requests_for("repos/get")] == [200, 200]
    assert len(a._cache) == 1 and len(b._cache) == 1


async def test_plain_token_mode(world):
    fake, fork, inst, shas = world
    fake.add_token("personal-token-1", "alice")
    fake.add_collaborator(fork, "alice", "write")
    async with aiohttp.ClientSession() as s:
        gh = token_client(s, "personal-token-1", base_url=fake.url)
        issue = await gh.post("/repos/{owner}/{repo}/issues", REPO, data={"title": "hello"})
    assert issue["user"]["login"] == "alice"
    assert issue["number"] == 1
    assert fake.requests_for("issues/create")[0]["auth"] == "token"


async def test_unknown_installation_is_a_clear_401_free_error(world, github_app):
    fake, fork, inst, shas = world
    with pytest.raises(GitHubAPIError) as e:
        await github_app.installation(999_999).getitem("/repos/{owner}/{repo}", REPO)
    assert e.value.status_code == 404
    assert "POST" in str(e.value) and "/app/installations/999999/access_tokens" in str(e.value)


async def test_installation_lookup_for_repo(world, github_app):
    fake, fork, inst, shas = world
    assert await github_app.installation_id_for("meta", "triton") == inst.id
    gh = await github_app.for_repo("meta", "triton")
    assert gh is github_app.installation(inst.id)


async def test_connection_errors_are_retried_then_raised():
    slept = []

    async def sleep(s):
        slept.append(s)

    async with aiohttp.ClientSession() as s:
        gh = token_client(s, "t", base_url="http://127.0.0.1:9", retry=FAST_RETRY, sleep=sleep)
        with pytest.raises(aiohttp.ClientConnectionError):
            await gh.getitem("/rate_limit")
    assert slept == [0.01, 0.02, 0.04]


async def test_writes_are_paced_and_requests_serialised(world):
    fake, fork, inst, shas = world
    waits = []

    async def sleep(s):
        waits.append(s)

    from bot.github.client import RetryPolicy

    async with aiohttp.ClientSession() as s:
        app = GitHubApp(s, app_id=fake.app.id, private_key=fake.app.private_key_pem, base_url=fake.url,
                        retry=RetryPolicy(write_interval_s=30.0), sleep=sleep)
        gh = app.installation(inst.id)
        import asyncio
        await asyncio.gather(*[gh.post("/repos/{owner}/{repo}/issues", REPO, data={"title": f"t{i}"})
                               for i in range(3)])
        await gh.getitem("/repos/{owner}/{repo}", REPO)
    # the first write goes at once; the next two each wait (almost) the full interval; reads don't
    assert len(gh.stats.pacing_waits) == 2 and all(29.0 < w <= 30.0 for w in gh.stats.pacing_waits)
    assert gh.stats.sleeps == []
    assert sorted(r["status"] for r in fake.requests_for("issues/create")) == [201, 201, 201]


async def test_emulated_secondary_limit_is_waited_out(world):
    """The fake's own secondary limit (2 writes/min here) answers 403 + retry-after: 60; the client
    sleeps 60 s (a sleep that moves the fake's clock) and the write then succeeds, once."""
    fake, fork, inst, shas = world
    now = [fake.state.now()]
    fake.state.clock = lambda: now[0]
    fake.limits.content_per_minute = 2

    async def sleep(s):
        now[0] += s

    async with aiohttp.ClientSession() as s:
        app = GitHubApp(s, app_id=fake.app.id, private_key=fake.app.private_key_pem, base_url=fake.url,
                        retry=FAST_RETRY, sleep=sleep, clock=lambda: now[0])
        gh = app.installation(inst.id)
        for i in range(3):
            await gh.post("/repos/{owner}/{repo}/issues", REPO, data={"title": f"t{i}"})
    assert gh.stats.sleeps == [60.0]
    assert [r["status"] for r in fake.requests_for("issues/create")] == [201, 201, 403, 201]
    assert sorted(i.title for i in fork.issues.values()) == ["t0", "t1", "t2"]


async def test_emulated_primary_limit_headers_and_exhaustion(world, github_app):
    fake, fork, inst, shas = world
    fake.limits.limit = 3
    gh = github_app.installation(inst.id)
    await gh.getitem("/repos/{owner}/{repo}", REPO)
    assert (gh.rate_limit.limit, gh.rate_limit.remaining) == (3, 2)
    await gh.getitem("/repos/{owner}/{repo}", REPO)                  # 304: free
    assert gh.rate_limit is not None
    limits = await gh.getitem("/rate_limit")                          # free too
    assert (limits["rate"]["used"], limits["rate"]["remaining"]) == (1, 2)
    await gh.getitem("/repos/{owner}/{repo}/commits/{ref}", dict(REPO, ref=shas[0]))
    await gh.getitem("/repos/{owner}/{repo}/commits/{ref}", dict(REPO, ref=shas[1]))
    with pytest.raises(GitHubAPIError) as e:                        # reset is an hour away: > max_wait
        await gh.getitem("/repos/{owner}/{repo}/branches/main", REPO)
    assert (e.value.status_code, e.value.message) == (403, "API rate limit exceeded for installation.")
    assert e.value.headers["x-ratelimit-remaining"] == "0"


async def test_injected_expired_token_and_422_faults(world, github_app):
    fake, fork, inst, shas = world
    gh = github_app.installation(inst.id)
    await gh.getitem("/repos/{owner}/{repo}", REPO)
    fake.faults.expired_token("/repos/meta/triton/issues")
    issue = await gh.post("/repos/{owner}/{repo}/issues", REPO, data={"title": "once"})
    assert [r["status"] for r in fake.requests_for("issues/create")] == [401, 201]
    assert github_app.tokens.fetches == 2 and issue["title"] == "once"
    assert [i.title for i in fork.issues.values()] == ["once"]          # no duplicate
    fake.faults.unprocessable("/repos/meta/triton/issues/*/comments", method="POST",
                              errors=[{"resource": "IssueComment", "code": "custom", "message": "body is too long"}])
    with pytest.raises(GitHubAPIError) as e:
        await gh.post("/repos/{owner}/{repo}/issues/{n}/comments", dict(REPO, n=issue["number"]), data={"body": "x"})
    assert (e.value.status_code, e.value.attempts) == (422, 1)
    assert "body is too long" in str(e.value)
    assert [f.name for f in fake.faults.fired] == ["expired-token", "422"]


async def test_texts_over_githubs_limits_are_cut_to_fit_not_refused(world, github_app):
    """GitHub refuses (422) an issue or comment body over 65,536 characters, a title over 256 and a
    check run's summary over 65,535 (the local GitHub does too). Every write through the client is
    cut to fit instead — a status issue or a triage report listing thousands of failures still
    lands — at a line break, saying how much was cut; short texts go as they are."""
    fake, fork, inst, shas = world
    lines = "".join(f"- `test_case_{i:05d}` failed: AssertionError: 1 != 2\n" for i in range(2000))   # ≈ 100,000 characters
    gh = github_app.installation(inst.id)
    issue = await gh.post("/repos/{owner}/{repo}/issues", REPO,
                          data={"title": "Nightly: " + "x" * 400, "body": "```\n" + lines})
    comment = await gh.post("/repos/{owner}/{repo}/issues/{number}/comments", {**REPO, "number": issue["number"]},
                            data={"body": lines})
    short = await gh.post("/repos/{owner}/{repo}/issues/{number}/comments", {**REPO, "number": issue["number"]},
                          data={"body": "short\n"})
    run = await gh.post("/repos/{owner}/{repo}/check-runs", REPO,
                        data={"name": "forksync/gate", "head_sha": shas[-1], "status": "completed", "conclusion": "failure",
                              "output": {"title": "blocked", "summary": lines}})
    assert len(issue["title"]) <= 256 and issue["title"].endswith("…")
    assert len(issue["body"]) <= 65536 and "characters were cut here" in issue["body"]
    head = issue["body"].split("\n\n_")[0]
    assert head.count("```") == 2                                   # the code block the cut left open is closed
    assert len(comment["body"]) <= 65536 and comment["body"].startswith(lines[:1000])
    assert all(ln.endswith("1 != 2") for ln in comment["body"].split("\n\n_")[0].splitlines())   # cut at a line break
    assert short["body"] == "short\n"
    assert len(run["output"]["summary"]) <= 65535 and "characters were cut here" in run["output"]["summary"]


async def _issue_titled(gh, title: str) -> dict | None:
    async for i in gh.getiter("/repos/{owner}/{repo}/issues{?state}", {**REPO, "state": "open"}):
        if i["title"] == title:
            return i
    return None


async def test_a_create_whose_answer_was_lost_is_looked_up_not_sent_again(world, github_app, monkeypatch):
    """GitHub opens the issue, then its front end answers 502: the retry finds it instead of
    opening a second one."""
    from bot.fakegithub.routing import HANDLERS, GitHubError
    fake, fork, inst, shas = world
    gh = github_app.installation(inst.id)
    real, lost = HANDLERS["issues/create"], []

    async def applied_then_lost(ctx):
        reply = await real(ctx)
        if not lost:
            lost.append(502)
            raise GitHubError(502, "Server Error")
        return reply

    monkeypatch.setitem(HANDLERS, "issues/create", applied_then_lost)
    made = await gh.create("/repos/{owner}/{repo}/issues", REPO, data={"title": "once"},
                           find=lambda: _issue_titled(gh, "once"))
    titles = [i["title"] async for i in gh.getiter("/repos/{owner}/{repo}/issues", REPO)]
    assert (lost, titles, made["title"]) == ([502], ["once"], "once")


async def test_a_create_github_did_not_make_is_sent_again(world, github_app):
    fake, fork, inst, shas = world
    fake.faults.server_error("/repos/meta/triton/issues", "POST", status=502)
    gh = github_app.installation(inst.id)
    made = await gh.create("/repos/{owner}/{repo}/issues", REPO, data={"title": "once"},
                           find=lambda: _issue_titled(gh, "once"))
    titles = [i["title"] async for i in gh.getiter("/repos/{owner}/{repo}/issues", REPO)]
    assert (titles, made["title"], github_app.slept) == (["once"], "once", [0.01])


async def test_a_create_whose_connection_dropped_is_looked_up_not_sent_again(world, github_app, monkeypatch):
    """GitHub opens the issue, then the connection drops before any answer arrives (a proxy
    restart, a reset): the retry finds the issue instead of opening a second one."""
    from bot.fakegithub.routing import HANDLERS
    fake, fork, inst, shas = world
    gh = github_app.installation(inst.id)
    real, dropped = HANDLERS["issues/create"], []

    async def applied_then_dropped(ctx):
        reply = await real(ctx)
        if not dropped:
            dropped.append("reset")
            ctx.request.transport.close()
        return reply

    monkeypatch.setitem(HANDLERS, "issues/create", applied_then_dropped)
    made = await gh.create("/repos/{owner}/{repo}/issues", REPO, data={"title": "once"},
                           find=lambda: _issue_titled(gh, "once"))
    titles = [i["title"] async for i in gh.getiter("/repos/{owner}/{repo}/issues", REPO)]
    assert (dropped, titles, made["title"]) == (["reset"], ["once"], "once")
