"""Secrets where forksync cuts a text for a prompt: the head of a suspect's diff (proposed fix)
and the excerpts of a long conflicted file (conflict resolution). A cut through a secret leaves a
piece the redaction rules no longer recognise (a token's head shorter than its rule asks, a key
body without its BEGIN or END line), so the text is redacted whole first and cut afterwards, on
line boundaries. Tokens and keys are shaped as GitHub and OpenSSL/OpenSSH write them (the values
are made up)."""
from __future__ import annotations

import pytest

from bot.agents.client import AgentClient
from bot.agents.conflict import build_prompt as conflict_prompt
from bot.agents.conflict_rails import ConflictCase, ConflictFile
from bot.agents.fix import MAX_DIFF_CHARS, FixRequest, SuspectDiff, propose_fix
from bot.agents.redact import Redactor
from bot.fakeanthropic import FakeAnthropic
from bot.store import Store
from tests.agents.test_fix_summary import SETTINGS, fix_reply, request

#: a classic personal access token: ``ghp_`` and 36 characters (30 random, 6 checksum)
GHP = "ghp_" + "R8mZq2VbW7xK4tN9pL3cY6hD1fJ5sA0gE8uT"
#: a fine-grained personal access token: ``github_pat_``, 22 characters, ``_``, 59 characters
PAT = "github_pat_" + "11ABCDEFG0kQ7rT2wX9zLm" + "_" + "Qp4Vn8Hs3Jd6Kf1Lg5Zc7Xb2Nm9Wq0Er4Ty6Ui8Op3As5Df7Gh1Jk2Lz4Xc6Vb8"
RSA_BODY = [f"MIIEpAIBAAKCAQEA3Zx9{i:02d}kL2mN8pQ4rS6tU1vW3xY5zA7bC9dE0fG2hJ4kL6mN8pQ0rS" for i in range(25)]
SSH_BODY = [f"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAB{i:02d}wAAAAdzc2gtcn" for i in range(25)]
RSA = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(RSA_BODY) + "\n-----END RSA PRIVATE KEY-----"
SSH = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(SSH_BODY) + "\n-----END OPENSSH PRIVATE KEY-----"
SECRETS = {"ghp": GHP, "github_pat": PAT, "rsa-key": RSA, "openssh-key": SSH}


def _prefix(secret: str) -> str:
    return "github_pat_" if secret.startswith("github_pat_") else secret[:4]


def _cut_into(secret: str) -> int:
    """Where the cut falls in ``secret``: 10 characters past a token's prefix, or 20 characters
    into a key's sixth body line."""
    if secret.startswith("-----"):
        return len("\n".join(secret.splitlines()[:6])) + 21
    return len(_prefix(secret)) + 10


def _pieces(secret: str) -> list[str]:
    """Parts of ``secret`` that must not reach a prompt: the 10 characters past a GitHub token's
    prefix, or each body line of a key."""
    if secret.startswith("-----"):
        return secret.splitlines()[1:-1]
    return [secret[len(_prefix(secret)):len(_prefix(secret)) + 10]]


@pytest.mark.parametrize("name", sorted(SECRETS))
async def test_no_piece_of_a_secret_across_the_cut_of_a_suspect_diff(name):
    """The proposed-fix prompt keeps the head of each suspect's diff. A secret that the cut at
    ``MAX_DIFF_CHARS`` falls inside (a token 10 characters past its prefix, a key inside its
    body) must not reach the model in any part."""
    secret = SECRETS[name]
    at = MAX_DIFF_CHARS - _cut_into(secret) - len('+GH = "')       # where the secret's line starts
    line = "+    acc += tl.dot(a, b)  # the inner loop of the tiled matmul\n"
    lead = (line * (at // len(line) + 1))[:at]
    lead = lead[:lead.rfind("\n") + 1]
    lead += "+" + "x" * (at - len(lead) - 2) + "\n"
    diff = lead + '+GH = "' + secret + '"\n' + line * 20
    assert diff[:MAX_DIFF_CHARS].endswith('+GH = "' + secret[:_cut_into(secret)])
    base = request()
    req = FixRequest(base.group, base.signature, base.klass, base.tests, base.logs,
                     (SuspectDiff("d" * 40, "[matmul] bigger tiles", diff),))
    async with FakeAnthropic([fix_reply()]) as fake:
        async with AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url) as c:
            await propose_fix(c, req)
    sent = fake.bodies[0]
    assert "acc += tl.dot(a, b)" in sent
    for piece in _pieces(secret):
        assert piece not in sent, f"{piece!r} was sent to the model"


def test_a_diff_head_ends_at_a_line_end_and_keeps_placeholders_whole():
    from bot.agents.fix import diff_head
    r = Redactor()
    diff = "".join(f"+line {i:04d}\n" for i in range(100)) + f"+T = {GHP}\n" + "+tail\n" * 50
    head = diff_head(diff, r, limit=len(diff) - 200)
    assert head.endswith("\n") and "+line 0099\n" in head and GHP not in head
    assert "[REDACTED-github-token-1]" in head
    # one long line: cut inside it, never inside a placeholder
    one = "+" + "a" * 49 + " " + GHP + " " + "b" * 300
    cut = diff_head(one, Redactor(), limit=60)
    assert cut == "+" + "a" * 49 + " ", cut


def _key_file(key: str, *, conflict_at: int) -> ConflictFile:
    """A source file holding ``key`` as a test fixture from line 90 on, as a merge output with
    one conflict block: on the key's last ``-conflict_at`` body lines (fork and upstream changed
    them differently) when ``conflict_at`` is negative, else on an ordinary line ``conflict_at``
    lines below the key's END line."""
    key_lines = key.splitlines()
    above = [f"// line {i}\n" for i in range(1, 90)]
    below = [f"// line {i}\n" for i in range(300, 400)]
    if conflict_at < 0:
        body = [ln + "\n" for ln in key_lines[:-1 + conflict_at]]
        block = ["<<<<<<< fork\n", *(ln + "\n" for ln in key_lines[-1 + conflict_at:-1]), "=======\n",
                 *(ln[::-1] + "\n" for ln in key_lines[-1 + conflict_at:-1]), ">>>>>>> upstream\n"]
        merged = "".join(above + body + block + [key_lines[-1] + "\n"] + below)
    else:
        gap = [f"// gap {i}\n" for i in range(conflict_at)]
        block = ["<<<<<<< fork\n", "int tiles = 64;\n", "=======\n", "int tiles = 128;\n", ">>>>>>> upstream\n"]
        merged = "".join(above + [ln + "\n" for ln in key_lines] + gap + block + below)
    return ConflictFile("test/fixtures/Keys.cpp", merged, None, None, None)


def _excerpt_prompt(f: ConflictFile, context: int) -> str:
    case = ConflictCase("a" * 40, "rotate the fixture key", "b" * 40, (f,))
    _, user = conflict_prompt(case, Redactor(), "0" * 16, over_lines=50, context=context)
    return user


@pytest.mark.parametrize("name", ["rsa-key", "openssh-key"])
def test_an_excerpt_that_begins_inside_a_key_whose_body_is_in_conflict_sends_no_body_line(name):
    """The key's last three body lines are in conflict; with 5 lines of context the excerpt
    begins inside the key (no BEGIN line) and its END line comes after the conflict markers, so
    neither the PEM rule nor the cut-key rule (body lines right above an END line) sees it."""
    f = _key_file(SECRETS[name], conflict_at=-3)
    sent = _excerpt_prompt(f, 5)
    for piece in _pieces(SECRETS[name]):
        assert piece not in sent and piece[::-1] not in sent, f"{piece!r} was sent to the model"


@pytest.mark.parametrize("name", ["rsa-key", "openssh-key"])
def test_an_excerpt_that_begins_inside_a_quoted_key_sends_no_body_line(name):
    """A key kept in source as string literals (``"MIIE…\\n"``): a line of it is not a bare
    base64 line, so an excerpt that begins inside it and shows its END line sent every body line
    it held. The block's line numbers stay the merge output's, though the key above it is one
    line once redacted."""
    key = "\n".join(f'"{ln}\\n"' for ln in SECRETS[name].splitlines())
    f = _key_file(key, conflict_at=2)
    sent = _excerpt_prompt(f, 8)
    for piece in _pieces(SECRETS[name]):
        assert piece not in sent, f"{piece!r} was sent to the model"
    first = f.merged.splitlines().index("<<<<<<< fork") + 1
    assert f"@@ conflict block 1 of 1 (lines {first}-{first + 4} of the merge output) @@" in sent
    assert "int tiles = 128;" in sent and "// gap 1" in sent


@pytest.mark.parametrize("over_lines", [50, 0], ids=["excerpts", "whole-file"])
async def test_a_file_whose_key_body_is_in_conflict_is_left_to_a_person(over_lines):
    """Redacted, a key whose body is in conflict is one placeholder that took the conflict
    markers with it: the model would be asked for a block it was never shown. No request is
    made; the case is skipped with the file named."""
    from bot.agents.conflict import propose
    f = _key_file(RSA, conflict_at=-3)
    case = ConflictCase("a" * 40, "rotate the fixture key", "b" * 40, (f,))
    settings = SETTINGS.model_copy(update={"excerpt_over_lines": over_lines})
    async with FakeAnthropic([]) as fake:
        async with AgentClient(settings, Store(), api_key="k", base_url=fake.base_url) as c:
            p = await propose(c, case)
    assert (p.status, fake.bodies) == ("skipped", [])
    assert p.reason.startswith("test/fixtures/Keys.cpp: a secret spans a conflict marker"), p.reason
