"""Output rails judged by real parsers: links by the host a browser resolves (WHATWG URL, ada-url),
HTML by nh3, code by markdown-it-py; entity-encoded mentions and URL-form closing keywords; the
redaction of Authorization headers and configured secret values."""
import pytest

from bot.agents.redact import Redactor, forget_secrets, register_secrets
from bot.agents.textrails import ZWJ, LinkTarget, link_target, live_links, sanitize


@pytest.mark.parametrize("dest,want", [
    ("https://github.com/a/b", LinkTarget("https", "github.com", False)),
    ("//evil.com/x", LinkTarget("https", "evil.com", False)),                       # protocol-relative
    ("https://evil.com\\.github.com/a", LinkTarget("https", "evil.com", False)),    # backslash = slash
    ("https:\\\\evil.com/a", LinkTarget("https", "evil.com", False)),
    ("/\\evil.com/a", LinkTarget("https", "evil.com", False)),                      # relative-looking, is not
    ("https://github.com@evil.com/", LinkTarget("https", "evil.com", False)),      # userinfo
    ("https://github.com:x@evil.com/", LinkTarget("https", "evil.com", False)),
    ("https://g\u0456thub.com/", LinkTarget("https", "xn--gthub-n2e.com", False)),  # Cyrillic і: IDNA
    ("HTTPS://GITHUB.COM./a", LinkTarget("https", "github.com.", False)),
    ("https://0x7f.1/", LinkTarget("https", "127.0.0.1", False)),
    ("<https://github.com/x>", LinkTarget("https", "github.com", False)),
    ("docs/x.md", LinkTarget("https", "github.com", True)),
    ("#section", LinkTarget("https", "github.com", True)),
    ("javascript:alert(1)", LinkTarget("javascript", "", False)),
    ("https://exa mple.com", LinkTarget("", "", False, valid=False)),
])
def test_link_target_is_what_a_browser_resolves(dest, want):
    assert link_target(dest) == want


@pytest.mark.parametrize("text,want", [
    ("[x](//evil.com/a)", "x [link removed: evil.com]"),
    ("see https://evil.com\\.github.com/a now", "see [link removed: evil.com] now"),
    ("[x](https://github.com@evil.com/)", "x [link removed: unknown]"),   # the e-mail redaction ate the host first
    ("[x](https://g\u0456thub.com/)", "x [link removed: xn--gthub-n2e.com]"),
    ("[x](/\\evil.com)", "x [link removed: evil.com]"),
    ("[x]( <//evil.com> )", "x [link removed: evil.com]"),
    ("see www.evil.com/x", "see [link removed: www.evil.com]"),
    ("[x][1]\n\n[1]: //evil.com/a", "[x][1]\n\n[link removed: evil.com]"),
    ("<//evil.com>", "<//evil.com>"),                       # not an autolink: no scheme, shown as text
    ("[a [b] c](//evil.com)", "\\[a \\[b\\] c\\](//evil.com)"),   # missed by the patterns, caught by the parser
    ("[docs](docs/x.md) and [top](#top)", "[docs](docs/x.md) and [top](#top)"),       # relative: stays on GitHub
    ("[ok](https://github.com/a/b)", "[ok](https://github.com/a/b)"),
])
def test_links_are_judged_by_the_resolved_host(text, want):
    out = sanitize(text, allowed_hosts=("github.com",))
    assert out.text == want
    assert all(h.startswith(("https://github.com", "docs/", "#")) for h in live_links(out.text))


@pytest.mark.parametrize("text,want,counts", [
    # (mentions, closing keywords, html)
    ("&#64;everyone look", f"@{ZWJ}everyone look", (1, 0, 0)),
    ("&amp;#64;everyone", f"@{ZWJ}everyone", (1, 0, 0)),                       # double-encoded
    ("&commat;alice", f"@{ZWJ}alice", (1, 0, 0)),
    ("`&#64;everyone` is inert in code", "`&#64;everyone` is inert in code", (0, 0, 0)),
    ("Fixes https://github.com/ORG/REPO/issues/1", f"F{ZWJ}ixes https://github.com/ORG/REPO/issues/1", (0, 1, 0)),
    ("closes: https://github.com/o/r/pull/7.", f"c{ZWJ}loses: https://github.com/o/r/pull/7.", (0, 1, 0)),
    ("Resolves <https://github.com/o/r/issues/2>", f"R{ZWJ}esolves <https://github.com/o/r/issues/2>", (0, 1, 0)),
    ("fixes&#32;#12", f"fixes #{ZWJ}12", (0, 1, 0)),
    ("fixe&#115; #12", f"fixes #{ZWJ}12", (0, 1, 0)),
    ("a < b && c > d; std::vector<int> v", "a < b && c > d; std::vector<int> v", (0, 0, 0)),
    ("<details><summary>S</summary>hidden</details> x", "Shidden x", (0, 0, 4)),
    ("&lt;img src=x onerror=alert(1)&gt; x", " x", (0, 0, 1)),                 # encoded HTML is HTML once decoded
    ("<!-- forksync:status-issue --> x", " x", (0, 0, 1)),
    # code keeps its HTML and references as written (mentions are neutralised everywhere)
    ("```\n<b>@alice</b> &#64;x\n```", f"```\n<b>@{ZWJ}alice</b> &#64;x\n```", (1, 0, 0)),
    ("````\n```\n<b>x</b>\n````", "````\n```\n<b>x</b>\n````", (0, 0, 0)),
    ("intro\n\n    <b>x</b>", "intro\n\n    <b>x</b>", (0, 0, 0)),           # indented code block
])
def test_entities_html_mentions_and_closing_keywords(text, want, counts):
    out = sanitize(text)
    assert out.text == want
    assert (out.mentions_neutralised, out.closing_keywords_neutralised, out.html_removed) == counts


def test_authorization_headers_of_any_scheme_are_redacted():
    r = Redactor()
    text = ("curl -H 'Authorization: token abcdef0123456789' -H \"authorization: Bearer zz.yy-xx_ww\" "
            "Authorization: Basic dXNlcjpwYXNz Authorization=sekrit-value")
    assert r.redact(text) == ("curl -H 'Authorization: token [REDACTED-authorization-1]' -H \"authorization: Bearer "
                              "[REDACTED-bearer-1]\" Authorization: Basic [REDACTED-basic-auth-1] "
                              "Authorization=[REDACTED-authorization-2]")


def test_urls_with_credentials_are_redacted():
    assert Redactor().redact("https://x-access-token:ghs_notreal@github.com/o/r.git and "
                             "https://abcdef0123456789abcdef@host/x") == (
        "https://[REDACTED-url-credentials-1]@github.com/o/r.git and https://[REDACTED-url-credentials-2]@host/x")


def test_configured_secret_values_are_redacted_wherever_they_appear():
    forget_secrets()
    try:
        register_secrets("whsec-CANARY-0001", "", "abc", "-----BEGIN KEY-----\nLINE-OF-KEY-CANARY\n-----END KEY-----")
        r = Redactor(known=("model-key-CANARY-9",))
        text = "xwhsec-CANARY-0001y model-key-CANARY-9 LINE-OF-KEY-CANARY abc"
        assert r.redact(text) == "x[REDACTED-configured-1]y [REDACTED-configured-2] [REDACTED-configured-3] abc"
        out = sanitize("the secret is whsec-CANARY-0001")
        assert out.text == "the secret is [REDACTED-configured-1]" and out.secrets_redacted == 1
    finally:
        forget_secrets()
