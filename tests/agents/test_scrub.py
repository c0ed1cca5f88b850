"""``scrub`` (log lines, stored errors, notes): configured secrets, minted ones of any shape and
GitHub's token formats become ``***``; minted secrets are remembered up to a bound."""
import pytest

from bot.agents import redact
from bot.agents.redact import configured_secrets, forget_secrets, remember_minted, scrub


@pytest.fixture(autouse=True)
def clean_registry():
    forget_secrets()
    yield
    forget_secrets()


@pytest.mark.parametrize("text, expected", [
    ("fatal: token ghs_16C7e42F292c6912E7710c838347Ae178B4a refused", "fatal: token *** refused"),
    ("Authorization: token ghp_0123456789abcdefghijABCDEFGHIJ", "Authorization: token ***"),
    ("gho_0123456789abcdefghijABCDEFGHIJ and ghu_0123456789abcdefghijABCDEFGHIJ", "*** and ***"),
    ("refresh ghr_0123456789abcdefghijABCDEFGHIJ.", "refresh ***."),
    ("pat github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "pat ***"),
    ("https://x-access-token:anything@github.com/o/r.git", "https://***@github.com/o/r.git"),
    # not tokens: too short, or the prefix inside a word
    ("ghs_short and the_ghs_ prefix and ghost_town", "ghs_short and the_ghs_ prefix and ghost_town"),
])
def test_github_token_formats_are_scrubbed(text, expected):
    assert scrub(text) == expected


def test_a_minted_secret_of_any_shape_is_scrubbed_and_forgotten_oldest_first(monkeypatch):
    monkeypatch.setattr(redact, "MAX_MINTED", 3)
    remember_minted("v1.stateless-token-AAAA", None, "", "abc")       # empty and short ones are ignored
    assert scrub("push refused for v1.stateless-token-AAAA") == "push refused for ***"
    assert "v1.stateless-token-AAAA" in configured_secrets()
    for i in range(3):
        remember_minted(f"v1.stateless-token-{i}")
    assert "v1.stateless-token-AAAA" not in configured_secrets()        # the oldest made room
    assert scrub("v1.stateless-token-2") == "***"
