"""Adverse model and API behaviour against the conflict agent's rails, through the local
Anthropic server and real repositories: a stream a proxy cut off, an answer without usage
figures, reStructuredText heading rules on both sides of a conflict. Each docstring says what a
user sees today and what they should see."""
from __future__ import annotations

import logging

import pytest

from bot.agents.client import AgentClient, AgentSkipped, estimate_tokens
from bot.agents.conflict import resolve_pick
from bot.agents.conflict_git import conflict_case
from bot.fakeanthropic import FakeAnthropic, Reply
from bot.store import Store
from tests.agents.test_agents_breaks import BRANCH, _answer, _branch_at, _two_sided
from tests.agents.test_conflict import SETTINGS, make_repo

MSG = [{"role": "user", "content": "hello"}]
DAY1 = 1_764_460_800.0          # 2025-11-30 00:00:00 UTC


class Sleeps(list):
    async def __call__(self, s: float) -> None:       # record the wait instead of waiting
        self.append(s)


async def _resolve(root, fork, up, replies, settings=SETTINGS):
    case = conflict_case(str(root), fork, up)
    async with FakeAnthropic(replies) as fake:
        async with AgentClient(settings, Store(), api_key="k", base_url=fake.base_url, sleep=Sleeps()) as client:
            out = await resolve_pick(client, case, str(root), BRANCH, branch_old=fork)
    return fake, out


# -- a stream cut off by the network ------------------------------------------------------------
async def test_a_stream_cut_off_before_message_stop_is_retried_not_blamed_on_the_model(tmp_path):
    """A proxy drops the connection halfway through the tool call's JSON: no SSE ``error``, no
    ``message_stop``. Today the SDK hands back what arrived (``stop_reason`` None) and the pick
    is ``rejected`` under rail "output parses" ("the answer did not finish (stop_reason None)"),
    as if the model had misbehaved, without asking again. A dropped connection is the API's
    trouble, like a mid-stream ``overloaded_error``: the request should be retried, and the
    second, whole answer committed."""
    root, fork, up = make_repo(tmp_path)
    good = _answer("python/triton/ops.py", blocks=["line 3 fork + upstream\n"])
    cut = _answer("python/triton/ops.py", blocks=["line 3 fork + upstream\n"], stream_cut=True)
    fake, out = await _resolve(root, fork, up, [cut, good])
    assert len(fake.requests) == 2
    assert out.status == "committed", out.body
    assert _branch_at(root) == out.commit


async def test_a_stream_cut_off_every_time_is_skipped_with_the_reason():
    """Every attempt is cut off: the call gives up with a reason that says the stream ended
    early (an API failure, not a rail rejection)."""
    sleeps = Sleeps()
    async with FakeAnthropic([Reply(text="half of a long answer " * 4, stream_cut=True, sticky=True)]) as fake:
        async with AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url, sleep=sleeps) as c:
            try:
                await c.call("summary", system="s", messages=MSG)
            except AgentSkipped as e:
                skipped = e
            else:
                raise AssertionError("a cut-off answer was returned as an answer")
    assert len(fake.requests) == SETTINGS.max_retries + 1
    assert skipped.api_failure is True
    assert skipped.reason == ("agent summary gave up after 3 attempt(s): the stream ended before the answer did "
                              "(no message_stop event)")


# -- usage figures missing -----------------------------------------------------------------------
NO_USAGE = [
    (True, {"usage": {"input_tokens": None, "output_tokens": None}}),    # a gateway that nulls the figures
    (False, {"usage": {"input_tokens": None, "output_tokens": None}}),
    (False, {"omit_usage": True}),                                       # or leaves them out
]


@pytest.mark.parametrize("stream, kw", NO_USAGE)
async def test_an_answer_without_usage_figures_is_counted_by_estimate(caplog, stream, kw):
    """A gateway in front of the API nulls ``usage`` in the answer, or leaves it out. Today null
    figures count as 0 tokens, silently: the answer costs nothing against
    ``agents.daily_token_budget``, which such a gateway then never stops. Without ``usage`` at all
    (a JSON answer) ``AgentClient.call`` raises a bare ``AttributeError`` ('NoneType' object has
    no attribute 'input_tokens') — every agent caller is documented never to raise for agent
    trouble. The answer should be used, its tokens counted by forksync's own estimate (prompt
    characters / 4, answer characters / 4, as the budget check before sending does), and a
    warning logged that the API gave no usage figures."""
    want_in = estimate_tokens("s", MSG)
    async with FakeAnthropic([Reply(text="an answer of 28 characters..", **kw)]) as fake:
        async with AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url, sleep=Sleeps(),
                               now=lambda: DAY1, stream=stream) as c:
            with caplog.at_level(logging.WARNING, logger="bot.agents.client"):
                reply = await c.call("summary", system="s", messages=MSG)
            used = c.tokens_used()
    assert len(fake.requests) == 1
    assert (reply.text, reply.attempts) == ("an answer of 28 characters..", 1)
    assert (reply.input_tokens, reply.output_tokens) == (want_in, 28 // 4 + 1)
    assert used == want_in + 28 // 4 + 1
    assert "agent summary: the API's answer gave no usage figures" in caplog.text


async def test_a_resolution_with_null_usage_figures_counts_its_tokens(tmp_path):
    """The same through the conflict agent: the answer passes every rail, is committed, and its
    tokens are counted."""
    root, fork, up = make_repo(tmp_path)
    case = conflict_case(str(root), fork, up)
    reply = _answer("python/triton/ops.py", blocks=["line 3 fork + upstream\n"],
                    usage={"input_tokens": None, "output_tokens": None})
    async with FakeAnthropic([reply]) as fake:
        async with AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url, sleep=Sleeps()) as client:
            out = await resolve_pick(client, case, str(root), BRANCH, branch_old=fork)
            used = client.tokens_used()
    assert len(fake.requests) == 1
    assert out.status == "committed", out.body
    assert used > len(fake.requests[0].raw) // 8      # the prompt's estimate at least, not 0


# -- reStructuredText heading rules in the conflict ----------------------------------------------
@pytest.mark.parametrize("rule", ["=======", "=" * 12])       # git's separator's width, and a longer rule
async def test_rst_sections_both_sides_added_can_be_kept_together(tmp_path, rule):
    """``docs/passes.rst`` gains a section at the same place on both sides, each with its own
    ``=======`` heading rule (the conflict block's sides hold them). The agent keeps both
    sections: three heading rules where the fork's file and upstream's hold two each. Today rail 2
    rejects it ("docs/passes.rst:12 still has `=======`, a line neither the fork's side nor
    upstream's has") — the count is taken over whole files, so the one correct resolution of a
    both-sides doc addition can never be agent-resolved. The rule lines the resolution keeps come
    from the two sides; it should be committed. A separator that neither side's block held (below)
    is still rejected."""
    base = f"Passes\n{rule}\n\nintro\n"
    fork_text = base + f"\nFusion\n{rule}\n\nfork text\n"
    up_text = base + f"\nPipelining\n{rule}\n\nupstream text\n"
    root, fork, up = _two_sided(tmp_path, "docs/passes.rst", base, fork_text, up_text)
    both = base + f"\nFusion\n{rule}\n\nfork text\n\nPipelining\n{rule}\n\nupstream text\n"
    _, out = await _resolve(root, fork, up, [_answer("docs/passes.rst", both)])
    assert out.status == "committed", out.body


async def test_a_leftover_separator_between_kept_sides_is_still_rejected(tmp_path):
    """The guard the count exists for: a plain edit on both sides, the agent keeps both halves
    with the ``=======`` separator left between them — rejected under rail 2."""
    base = "Passes\n=======\n\nintro\n"
    root, fork, up = _two_sided(tmp_path, "docs/passes.rst", base, base.replace("intro", "intro fork"),
                                base.replace("intro", "intro upstream"))
    left = "Passes\n=======\n\nintro fork\n=======\nintro upstream\n"
    _, out = await _resolve(root, fork, up, [_answer("docs/passes.rst", left)])
    assert (out.status, out.rail) == ("rejected", "no conflict markers"), out.body
    assert _branch_at(root) == fork


# -- tokens of an attempt that failed after the answer began --------------------------------------
@pytest.mark.parametrize("first", [{"stream_cut": True}, {"stream_error": "overloaded_error"}],
                         ids=["cut-off", "overloaded mid-stream"])
async def test_tokens_of_an_answer_that_broke_off_count_against_the_budget(first):
    """The first answer begins (``message_start`` with its input tokens) and breaks off: the
    connection drops, or an ``overloaded_error`` arrives mid-stream; the retry answers whole.
    Today only the whole answer is counted: the prompt of every broken attempt — up to
    ``agents.max_prompt_tokens`` each, ``agents.max_retries`` + 1 attempts per call — is spent
    outside ``agents.daily_token_budget``. Each attempt whose answer began should be counted
    (its input tokens as the API gave them at the start, its output as far as it streamed)."""
    async with FakeAnthropic([Reply(text="half of an answer " * 8, **first), Reply(text="whole")]) as fake:
        async with AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url, sleep=Sleeps(),
                               now=lambda: DAY1) as c:
            reply = await c.call("summary", system="s", messages=MSG)
            used = c.tokens_used()
    assert (reply.text, reply.attempts, len(fake.requests)) == ("whole", 2, 2)
    first_input = len(fake.requests[0].raw) // 4            # the local server's input figure
    assert reply.input_tokens == first_input
    assert used >= reply.input_tokens + reply.output_tokens + first_input + 1, used     # + at least 1 output token


async def test_tokens_of_a_streamed_answer_without_usage_count_against_the_budget():
    """A gateway strips ``usage`` from the event stream: the SDK cannot read the answer (each
    attempt fails), and today none of the attempts is counted. Each should be, by estimate."""
    async with FakeAnthropic([Reply(text="an answer", omit_usage=True, sticky=True)]) as fake:
        async with AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url, sleep=Sleeps(),
                               now=lambda: DAY1) as c:
            with pytest.raises(AgentSkipped):
                await c.call("summary", system="s", messages=MSG)
            used = c.tokens_used()
    assert len(fake.requests) == SETTINGS.max_retries + 1
    assert used >= (SETTINGS.max_retries + 1) * estimate_tokens("s", MSG), used


# -- the proposed fix's patch and CI paths -----------------------------------------------------
HUNK = "@@ -1 +1 @@\n-a\n+b\n"


@pytest.mark.parametrize("patch, touched", [
    ("--- a/src/../.github/workflows/ci.yml\n+++ b/src/../.github/workflows/ci.yml\n" + HUNK,
     "src/../.github/workflows/ci.yml"),
    ("--- a/./.github/workflows/ci.yml\n+++ b/./.github/workflows/ci.yml\n" + HUNK, "./.github/workflows/ci.yml"),
    ('diff --git "a/.github/x y.yml" "b/.github/x y.yml"\n--- "a/.github/x y.yml"\n+++ "b/.github/x y.yml"\n' + HUNK,
     ".github/x y.yml"),
    ("diff --git a/ci.yml b/.github/workflows/ci.yml\nsimilarity index 100%\nrename from ci.yml\n"
     "rename to .github/workflows/ci.yml\n--- a/x.py\n+++ b/x.py\n" + HUNK, ".github/workflows/ci.yml"),
    ("--- a/x.py\n+++ b/x.py\n" + HUNK + "--- a/.ci/run.sh\n+++ b/.ci/run.sh\n" + HUNK, ".ci/run.sh"),   # held already
], ids=["dot-dot", "dot-slash", "quoted", "rename", "second-file"])
def test_a_proposed_patch_cannot_reach_ci_by_another_spelling_of_the_path(patch, touched):
    """The proposed-fix rail "patch leaves CI alone" reads each ``---``/``+++`` path up to the
    first space and compares its start with ``.github/``/``.ci/``. Today ``src/../.github/…``,
    ``./.github/…``, a quoted path (git quotes one with a space) and a rename's ``rename to
    .github/…`` (a pure rename has no ``---``/``+++`` lines) pass, and the issue shows a "Proposed fix" that ``git apply`` turns into a change of
    a CI workflow. Each should be rejected ("patch leaves CI alone"), naming the path."""
    from bot.agents.conflict_rails import RailViolation
    from bot.agents.fix import check_patch
    with pytest.raises(RailViolation) as e:
        check_patch(patch)
    assert (e.value.rail, e.value.detail) == ("patch leaves CI alone", f"the patch touches {touched}")


@pytest.mark.parametrize("patch, path", [
    ("--- a/x.py\n+++ ../../.github/workflows/x.yml\n" + HUNK, "../../.github/workflows/x.yml"),
    ("--- a/x.py\n+++ /etc/cron.d/x\n" + HUNK, "/etc/cron.d/x"),
], ids=["above-the-root", "absolute"])
def test_a_proposed_patch_outside_the_repository_is_rejected(patch, path):
    """A path that leaves the repository (``..`` above its root, an absolute path) is no fix of
    this repository; today it passes. It should be rejected, naming the path."""
    from bot.agents.conflict_rails import RailViolation
    from bot.agents.fix import check_patch
    with pytest.raises(RailViolation) as e:
        check_patch(patch)
    assert (e.value.rail, e.value.detail) == ("patch is a unified diff", f"{path} is outside the repository")


def test_ordinary_patches_still_pass():
    from bot.agents.fix import check_patch
    check_patch("--- a/python/triton/ops.py\n+++ b/python/triton/ops.py\n" + HUNK)
    check_patch("--- /dev/null\n+++ b/lib/New.cpp\n" + HUNK)
    check_patch("--- a/lib/Old.cpp\t2025-01-01 00:00:00\n+++ /dev/null\n" + HUNK)
    check_patch("--- a/docs/.github-notes.md\n+++ b/docs/.github-notes.md\n" + HUNK)


# -- secrets cut by forksync's own excerpting ---------------------------------------------------
KEY_BODY = "".join(f"MIIEowIBAAKCAQEAx7d2Qm5nZ3J5c2VjcmV0a2V5ZGF0YWhlcmVm{i:012d}\n" for i in range(20))
TOKEN = "ghp_" + "Zq9XkW3mT7vB2nL8pR4sY6uA1cE5gH0jK2dF"


def test_a_private_key_whose_begin_line_is_cut_off_is_redacted():
    """A log excerpt that starts inside a PEM private key (its ``-----BEGIN …`` line is above
    the excerpt): the PEM rule needs the BEGIN line, so today every body line of the key goes into
    the prompt. The body lines above an ``-----END … PRIVATE KEY-----`` line should be redacted
    as well."""
    from bot.agents.redact import Redactor
    text = KEY_BODY[25:] + "-----END RSA PRIVATE KEY-----\nerror: bad key\n"
    out = Redactor().redact(text, "logs")
    assert "IBAAKCAQEAx7d2Qm5nZ3J5c2VjcmV0a2V5ZGF0YWhlcmVm" not in out, out
    assert out.endswith("\nerror: bad key\n")


@pytest.mark.parametrize("secret", [TOKEN, "-----BEGIN RSA PRIVATE KEY-----\n" + KEY_BODY + "-----END RSA PRIVATE KEY-----"],
                         ids=["github-token", "private-key"])
async def test_the_log_tail_of_a_proposed_fix_never_starts_inside_a_secret(secret):
    """``build_prompt`` of the proposed-fix agent keeps the last ``MAX_LOG_CHARS`` characters of
    each log and then redacts. Where that cut falls inside a secret, the part after the cut has
    lost what the redaction rules recognise (the ``ghp_`` prefix, the BEGIN line) and goes to the
    model as it is. No piece of the secret should be sent."""
    from bot.agents.fix import MAX_LOG_CHARS, FixRequest, propose_fix
    from tests.agents.test_fix_summary import fix_reply, request
    cut_at = len(secret) // 3                 # the excerpt begins a third of the way into the secret
    line = "\nE   RuntimeError: out of resource: shared memory"
    need = MAX_LOG_CHARS - (len(secret) - cut_at)
    tail = (line * (need // len(line) + 1))[:need - 1] + "\n"
    log = "pre\n" + "w" * 500 + "\n" + secret + tail
    assert log[-MAX_LOG_CHARS:] == secret[cut_at:] + tail
    base = request()
    req = FixRequest(base.group, base.signature, base.klass, base.tests, (log,), base.suspects)
    async with FakeAnthropic([fix_reply()]) as fake:
        async with AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url, sleep=Sleeps()) as c:
            await propose_fix(c, req)
    sent = fake.bodies[0]
    piece = secret[cut_at + 2: cut_at + 26].replace("\n", "\\n")
    assert piece not in sent, f"{piece!r} was sent to the model"


# -- the File / Action / Reason block against what the answer did -------------------------------
@pytest.mark.parametrize("block, reading", [
    ("line 3 fork\n", "block 1: the fork's side"),
    ("line 3 upstream\n", "block 1: upstream's side"),
    ("line 3 fork\nline 3 upstream\n", "block 1: both sides, the fork's first"),
    ("", "block 1: neither side (removed)"),
    ("line 3\n", "block 1: the base (neither change)"),
    ("line 3 fork + upstream\n", "block 1: rewritten"),
])
async def test_the_report_says_what_each_block_holds_beside_the_agents_claim(tmp_path, block, reading):
    """The agent's File / Action / Reason block is its own words: here it claims "kept upstream's
    fix" whatever it did. Today the report shows only that claim, and nothing checks it against
    the change — an answer that kept the fork's side and dropped upstream's fix reads as
    "kept upstream's fix" to the reviewer. The report should also give forksync's own reading
    of each conflict block (fork's side, upstream's side, both, the base, removed, rewritten),
    computed from the answer, so a claim that does not match is visible."""
    root, fork, up = make_repo(tmp_path)
    reply = _answer("python/triton/ops.py", blocks=[block])
    reply.tool_uses[0]["input"]["files"][0].update(action="kept upstream's fix", reason="upstream's line is newer")
    _, out = await _resolve(root, fork, up, [reply])
    assert out.status == "committed", out.body
    assert f"`python/triton/ops.py` — {reading}" in out.body, out.body
