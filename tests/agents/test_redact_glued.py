"""Secrets glued to a word: ``TOKEN_ghp_…``, ``AUTH_github_pat_…``, ``KEY_sk-ant-…`` are secrets as
much as the same value after a space; ``\\b`` before the prefix missed them (``_`` is a word
character), in :func:`redact` (prompts, pages, PR and issue bodies) and :func:`scrub` (logs).

Over the 2,930 text files of the Triton fork's ``main`` the rules remove the same values as with
``\\b`` (secret 260, user 9, email 5, authorization 1; none of the kinds below): counted by
running the old and the new :class:`Redactor` over each blob of
``/work/.mirror/facebookexperimental+triton/repo``."""
import pytest

from bot.agents.redact import Redactor, find_secrets, forget_secrets, redact, scrub

GHP = "ghp_" + "A1b2C3d4E5" * 3 + "f6G7h8"            # 36 after the prefix, as GitHub issues them
GHS = "ghs_" + "16C7e42F292c6912E7710c838347Ae178B4a"
PAT = "github_pat_11ABCDEFG0" + "123456789a" * 2 + "_" + "Zyxwvutsrq" * 5 + "ponmlkjih"
ANT = "sk-ant-api03-" + "Q1w2E3r4T5y6" * 8 + "-AbCdAA"


@pytest.fixture(autouse=True)
def clean_registry():
    forget_secrets()
    yield
    forget_secrets()


@pytest.mark.parametrize("text, secret", [
    (f"export TOKEN_{GHP}", GHP),
    (f"env: AUTH_{PAT} set", PAT),
    (f"x_{GHS}", GHS),
    (f"https://example.com/hook?t=v1{GHS}&x=1", GHS),
    (f"gho_glued: id{'gho_' + 'a' * 36}", "gho_" + "a" * 36),
    (f"ANTHROPIC_KEY_{ANT}", ANT),
    (f"key{ANT} sent", ANT),
    ("cfg AWS_ID_AKIAIOSFODNN7EXAMPLE end", "AKIAIOSFODNN7EXAMPLE"),
    ("hdr X_AUTHORIZATION: abcdef123456 x", "abcdef123456"),
])
def test_a_secret_glued_to_a_word_is_redacted(text, secret):
    r = Redactor()
    out = r.redact(text)
    assert secret not in out and secret in r.secrets
    assert secret not in redact(text)
    assert find_secrets(text)


@pytest.mark.parametrize("text, expected", [
    (f"TOKEN_{GHP} refused", "TOKEN_*** refused"),
    (f"AUTH_{PAT}", "AUTH_***"),
    (f"GIT_CONFIG_VALUE_0=x_{GHS}", "GIT_CONFIG_VALUE_0=x_***"),
    ("HTTP_AUTHORIZATION: token abcdef123456", "HTTP_AUTHORIZATION: token ***"),
])
def test_a_github_token_glued_to_a_word_is_scrubbed_from_logs(text, expected):
    assert scrub(text) == expected


def test_a_glued_token_cut_by_a_line_break_is_mended_and_scrubbed():
    text = f"TOKEN_{GHP[:20]}\n{GHP[20:]} end"
    assert scrub(text) == "TOKEN_*** end"
    assert GHP[:20] not in redact(text) and GHP[20:] not in redact(text)


@pytest.mark.parametrize("text", [
    "ghost_town the_ghs_ prefix ghs_short high_ghp_short",
    "def _weigh_s_block_size(num_warps, num_stages): return thoughs_and_sighs",
    "task-antecedent and desk-ant-colony and mask-of-the-ants",
    "TASK_AKIA is short; FLASKAKIAIOSFODNN7EXAMPLE is inside a word",
    "hello_world eyJustAWord xox-and-more",
    "for (int i = 0; i < n; ++i) { out[i] = sk_load(in, i); }",
])
def test_ordinary_identifiers_are_kept(text):
    assert redact(text) == text
    assert scrub(text) == text
