"""The pure parts of bot.github.client: the retry policy as a table of inputs and exact outputs, its
invariants under hypothesis, and the ``github:`` settings section."""
from __future__ import annotations

from http import HTTPStatus

import gidgethub
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.config.forksync import ConfigError, parse_config_text
from bot.github.client import (
    GitHubAPIError,
    LRUCache,
    RetryPolicy,
    authenticated_remote,
    installation_suspended,
    rate_limited,
    refused_request,
    retry_delay,
)

P = RetryPolicy()            # production defaults: base 1 s, cap 60 s, secondary ≥ 60 s, 4 attempts
NOW = 1_900_000_000.0
SECONDARY = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."


@pytest.mark.parametrize("status, headers, message, attempt, expected", [
    (429, {"retry-after": "7"}, "", 1, 7.0),
    (403, {"retry-after": "30"}, SECONDARY, 2, 30.0),
    (403, {}, SECONDARY, 1, 60.0),
    (403, {}, SECONDARY, 3, 60.0),
    (429, {}, "", 1, 60.0),
    (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 120)}, "API rate limit exceeded", 1, 121.0),
    (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) - 5)}, "API rate limit exceeded", 1, 1.0),
    (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 3600)}, "", 1, None),   # > max_wait
    (403, {}, "Resource not accessible by integration", 1, None),
    (502, {}, "Server Error", 1, 1.0),
    (502, {}, "Server Error", 2, 2.0),
    (503, {}, "", 3, 4.0),
    (503, {"retry-after": "12"}, "", 1, 12.0),
    (502, {}, "", 4, None),                     # attempts used up
    (429, {"retry-after": "Wed, 21 Oct 2030 07:28:00 GMT"}, "", 1, None),   # years away: > max_wait
    (400, {}, "Problems parsing JSON", 1, None),
    (401, {}, "Bad credentials", 1, None),
    (404, {}, "Not Found", 1, None),
    (405, {}, "Pull Request is not mergeable", 1, None),
    (409, {}, "Head branch was modified.", 1, None),
    (422, {"retry-after": "1"}, "Validation Failed", 1, None),
])
def test_retry_delay_table(status, headers, message, attempt, expected):
    assert retry_delay(status, headers, message, attempt, P, NOW) == expected


def test_backoff_is_capped():
    p = RetryPolicy(max_attempts=20, base_delay_s=1.0, max_delay_s=60.0)
    assert [retry_delay(500, {}, "", n, p, NOW) for n in range(1, 10)] == [1, 2, 4, 8, 16, 32, 60, 60, 60]


@given(status=st.integers(100, 599), attempt=st.integers(1, 10),
       retry_after=st.one_of(st.none(), st.integers(-10, 10_000).map(str), st.text(max_size=8)),
       reset_in=st.one_of(st.none(), st.integers(-100, 10_000)), remaining=st.sampled_from([None, "0", "12"]))
def test_retry_delay_invariants(status, attempt, retry_after, reset_in, remaining):
    headers = {}
    if retry_after is not None:
        headers["retry-after"] = retry_after
    if reset_in is not None:
        headers["x-ratelimit-reset"] = str(int(NOW) + reset_in)
    if remaining is not None:
        headers["x-ratelimit-remaining"] = remaining
    d = retry_delay(status, headers, SECONDARY, attempt, P, NOW)
    if d is not None:
        assert 0.0 <= d <= P.max_wait_s
        assert attempt < P.max_attempts
        assert status in (403, 429) or status >= 500
    if status < 400 or status in (400, 401, 404, 405, 409, 410, 422):
        assert d is None


def test_lru_cache_drops_oldest():
    c = LRUCache(2)
    c["a"], c["b"] = 1, 2
    assert c["a"] == 1          # a is now the newest
    c["c"] = 3
    assert sorted(c) == ["a", "c"] and len(c) == 2


def test_authenticated_remote():
    assert authenticated_remote("https://github.com/meta/triton.git", "ghs_x") == \
        "https://x-access-token:ghs_x@github.com/meta/triton.git"
    assert authenticated_remote("http://127.0.0.1:8080/meta/triton.git", "t") == \
        "http://x-access-token:t@127.0.0.1:8080/meta/triton.git"
    assert authenticated_remote("/srv/repos/meta/triton.git", "t") == "/srv/repos/meta/triton.git"
    assert authenticated_remote("file:///srv/repos/meta/triton.git", "t") == "file:///srv/repos/meta/triton.git"


def test_github_settings_defaults_and_errors():
    g = parse_config_text("").github
    assert (g.merge_method, g.poll_interval_s, g.labels.bundle, g.labels.chain, g.branch_prefix) == (
        "rebase", 300, "forksync:bundle", "forksync:chain", "forksync/")
    assert parse_config_text("github: {merge_method: merge, poll_interval_s: 60}").github.poll_interval_s == 60
    with pytest.raises(ConfigError) as e:
        parse_config_text("github: {merge_method: squash}")
    assert e.value.problems == [("github.merge_method", "squash is not allowed: sync PRs land by "
                                 "'rebase' (default) or 'merge' so the fork keeps one commit per upstream commit")]
    with pytest.raises(ConfigError) as e:
        parse_config_text("github: {poll_interval_s: 5, colour: red}")
    assert [p for p, _ in e.value.problems] == ["github.poll_interval_s", "github.colour"]
    with pytest.raises(ConfigError) as e:
        parse_config_text("github: {stale_after_s: 1000, alarm_after_s: 500}")
    assert e.value.problems == [("github", "alarm_after_s (500) must be ≥ stale_after_s (1000)")]


def test_a_cache_of_size_zero_caches_nothing():
    from bot.github.client import _etag_cache
    assert _etag_cache(0) is None and _etag_cache(3).maxsize == 3


def test_branch_and_command_prefixes_accept_only_what_the_app_uses():
    g = parse_config_text("github: {branch_prefix: forksync/, command_prefix: /forksync, max_open_sync_prs: 3}").github
    assert (g.branch_prefix, g.command_prefix, g.max_open_sync_prs) == ("forksync/", "/forksync", 3)
    with pytest.raises(ConfigError) as e:
        parse_config_text("github: {branch_prefix: sync/, command_prefix: /sync}")
    assert e.value.problems == [
        ("github.branch_prefix", "only 'forksync/' is supported: sync branches are always forksync/<unit>"),
        ("github.command_prefix", "only '/forksync' is supported: comment commands are always `/forksync <verb>`")]
    with pytest.raises(ConfigError) as e:
        parse_config_text("github: {max_open_sync_prs: 0}")
    assert [p for p, _ in e.value.problems] == ["github.max_open_sync_prs"]


def _http(status: int, message: str, headers: dict | None = None) -> gidgethub.HTTPException:
    return gidgethub.HTTPException(HTTPStatus(status), message, headers=headers or {})


@pytest.mark.parametrize("error, expected", [
    (_http(429, "Too Many Requests"), True),
    (_http(403, "API rate limit exceeded for installation.", {"x-ratelimit-remaining": "0"}), True),
    (_http(403, SECONDARY), True),
    (GitHubAPIError("PUT", "https://api.github.com/x", _http(403, "API rate limit exceeded for installation.",
                                                             {"x-ratelimit-remaining": "0"}), 1), True),
    (_http(403, "Resource not accessible by integration", {"x-ratelimit-remaining": "4000"}), False),
    (_http(422, "Validation Failed"), False),
    (_http(502, "Server Error"), False),
    (ValueError("rate limit"), False),
])
def test_rate_limited_table(error, expected):
    assert rate_limited(error) is expected


@pytest.mark.parametrize("error, expected", [
    (_http(403, "Resource not accessible by integration", {"x-ratelimit-remaining": "4000"}), True),
    (_http(422, "Validation Failed"), True),
    (_http(404, "Not Found"), True),
    (_http(401, "Bad credentials"), False),
    (_http(429, "Too Many Requests"), False),
    (_http(403, SECONDARY), False),
    (_http(502, "Server Error"), False),
    (GitHubAPIError("PATCH", "https://api.github.com/x", _http(503, "Service Unavailable"), 4), False),
    (GitHubAPIError("PATCH", "https://api.github.com/x", _http(422, "Validation Failed"), 1), True),
])
def test_refused_request_is_a_4xx_but_credentials_and_rate_limits(error, expected):
    """What publishing a sync PR (and writing its body again) records as the unit's refusal;
    the rest is the delivery's to retry."""
    assert refused_request(error) is expected


@pytest.mark.parametrize("error, expected", [
    (_http(403, "This installation has been suspended"), True),
    # a token mint refused, as the App's client raises it
    (GitHubAPIError("POST", "https://api.github.com/app/installations/7/access_tokens",
                    _http(403, "This installation has been suspended"), 1), True),
    (_http(403, "Resource not accessible by integration"), False),
    (_http(401, "This installation has been suspended"), False),
    (_http(403, "API rate limit exceeded for installation.", {"x-ratelimit-remaining": "0"}), False),
    (ValueError("This installation has been suspended"), False),
])
def test_installation_suspended_table(error, expected):
    """A poll or tick refused for a suspended installation pauses its forks; any other refusal,
    a rate limit or a non-HTTP error with the same words is a failure as before."""
    assert installation_suspended(error) is expected
