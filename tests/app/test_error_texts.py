"""Error texts cut to length are scrubbed whole first: a cut through a secret leaves a part that no
later scrub recognises."""
from __future__ import annotations

import asyncio

from bot.agents.redact import forget_secrets, register_secrets
from bot.app.dispatch import _short
from bot.validation.gate_inputs import tree_facts

TOKEN = "ghs_" + "A1b2C3d4" * 5


def test_a_dispatch_error_text_is_scrubbed_before_it_is_cut():
    text = _short(RuntimeError("x" * 460 + f" Authorization: token {TOKEN}"), 500)
    assert "ghs_" not in text and "A1b2C3d4" not in text
    assert text.endswith("token ***")


def test_a_tree_read_error_is_scrubbed_before_it_is_cut():
    secret = "s3cr3t-" + "q" * 40
    register_secrets(secret)
    try:
        async def failing(base, head):
            raise OSError("p" * 200 + f" fetch https://x-access-token:{TOKEN}@github.example/meta/triton {secret}")

        facts = asyncio.run(tree_facts(failing, "a" * 40, "b" * 40))
    finally:
        forget_secrets()
    why = facts.error
    assert (facts.markers, facts.conflicts, facts.rewritten) == ((), (), ())
    assert why.startswith("OSError: ppp")
    assert "A1b2C3d4" not in why and "s3cr3t" not in why and "qqqq" not in why
