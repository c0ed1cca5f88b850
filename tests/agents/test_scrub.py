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


def test_an_authorization_header_value_of_any_scheme_is_scrubbed():
    """git authenticates with ``-c http.extraheader="AUTHORIZATION: basic <base64>"`` (the form
    actions/checkout and credential helpers write), and an HTTP client's error dump quotes its
    request headers. A log line, a stored error or ``/healthz`` showed the base64 of
    ``x-access-token:<token>`` (decodable by anyone) and a Bearer token of no GitHub shape
    whole; they should show the header's name and scheme with ``***`` for the value."""
    import base64
    b64 = base64.b64encode(b"x-access-token:ghs_" + b"Q7x9" * 9).decode()
    assert scrub(f"git -c http.extraheader=AUTHORIZATION: basic {b64} fetch failed") == \
        "git -c http.extraheader=AUTHORIZATION: basic *** fetch failed"
    assert scrub("401 Unauthorized; sent Authorization: Bearer v1.0123456789abcdef0123456789abcdef01234567") == \
        "401 Unauthorized; sent Authorization: Bearer ***"
    assert scrub("request headers: {'x-api-key': 'sk-ant-api03-zzzzzzzzzzzzzzzzzzzz'}") == \
        "request headers: {'x-api-key': '***'}"


def test_a_credential_header_is_scrubbed_whatever_the_case_of_its_name():
    """HTTP header names are case-insensitive (RFC 9110 §5.1), and clients write ``X-Api-Key`` or
    ``X-API-Key``: a log line quoting ``curl -H "X-Api-Key: …"`` kept the key whole; it should
    lose the value as the lower-case name does."""
    assert scrub('curl -H "X-Api-Key: sk-ant-api03-zzzzzzzzzzzzzzzzzzzz" https://api.example') == \
        'curl -H "X-Api-Key: ***" https://api.example'
    assert scrub("sent X-API-Key=sk-ant-api03-zzzzzzzzzzzzzzzzzzzz; Proxy-AuthoriZation: Basic dXNlcjpwYXNzd29yZA==") == \
        "sent X-API-Key=***; Proxy-AuthoriZation: Basic ***"


def test_a_registered_secret_url_encoded_is_scrubbed_and_redacted():
    """A secret with ``/``, ``+`` or ``=`` in it (a webhook secret, a mirror's password) reaches a
    text percent-encoded: a URL's query or userinfo as an HTTP library logs it. ``scrub`` (logs,
    stored errors) and the Redactor (LLM prompts) knew only its plain form, so the encoded one
    went through whole; it should become ``***`` / a placeholder like the plain one."""
    from urllib.parse import quote, quote_plus

    from bot.agents.redact import Redactor, register_secrets
    secret = "wh/sec+ret=value"
    register_secrets(secret)
    for encoded in (quote(secret, safe=""), quote_plus(secret)):
        assert scrub(f"GET https://mirror.example/hook?s={encoded} failed") == \
            "GET https://mirror.example/hook?s=*** failed"
        assert encoded not in Redactor().redact(f"GET https://mirror.example/hook?s={encoded} failed")


def test_a_token_cut_by_a_line_break_is_scrubbed_whole():
    """A CI log or an error dump wraps long lines, cutting a token in two. Each piece alone is
    too short for the token's shape and is not the registered value, so both pieces reached the
    log, the stored error and the LLM prompt; the token should go whole, whatever the cut."""
    from bot.agents.redact import Redactor
    token = "ghs_" + "Q7x9" * 9
    minted = "v1.0123456789abcdef0123456789abcdef01234567"
    remember_minted(minted)
    for value in (token, minted):
        for cut in (8, 20, 30):
            text = f"remote: denied for {value[:cut]}\n{value[cut:]} (push)"
            out = scrub(text)
            assert value[:cut] not in out and value[cut:] not in out, out
            prompt = Redactor().redact(text)
            assert value[:cut] not in prompt and value[cut:] not in prompt, prompt
