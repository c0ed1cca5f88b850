"""GitHub logins compared as GitHub compares them (case-insensitively): a table of pairs and the answer."""
from __future__ import annotations

import pytest

from bot.core.logins import among, login_key, same_login


@pytest.mark.parametrize("a, b, same", [
    ("forksync-bot", "forksync-bot", True),
    ("ForkSync-Bot", "forksync-bot", True),          # one account, however FORKSYNC_BOT_LOGIN spells it
    ("forksync-bot", "FORKSYNC-BOT", True),
    ("forksync[bot]", "ForkSync[Bot]", True),         # an App's bot login
    (" forksync-bot\n", "forksync-bot", True),        # a login pasted into a settings file with its line end
    ("forksync[bot]", "forksync", False),             # the App's bot is not the account of its slug
    ("forksync-bot", "forksync-bot2", False),
    ("forksync-bot", "forksync_bot", False),          # GitHub logins have no underscores: not a spelling of it
    ("", "", False),                                  # an unknown login is nobody's
    (None, None, False),
    ("", "alice", False),
    (None, "alice", False),
    ("alice", None, False),
])
def test_same_login(a, b, same):
    assert same_login(a, b) is same
    assert same_login(b, a) is same


@pytest.mark.parametrize("login, key", [
    ("ForkSync-Bot", "forksync-bot"),
    ("dependabot[bot]", "dependabot[bot]"),
    ("  Alice ", "alice"),
    ("", ""),
    (None, ""),
])
def test_login_key(login, key):
    assert login_key(login) == key


@pytest.mark.parametrize("login, logins, answer", [
    ("alice", ("Alice", "bob"), True),               # an owner written as the account spells it
    ("ALICE", ("alice",), True),                      # a commenter's login in another case
    ("bob", ["carol", "BoB"], True),
    ("dave", ("alice", "bob"), False),
    ("alice", (), False),                             # no owners: nobody is one
    ("", ("", "alice"), False),                       # an unknown login is nobody's, even beside a blank entry
    (None, ("alice",), False),
    ("alice-x", ("alice",), False),
])
def test_among(login, logins, answer):
    assert among(login, logins) is answer
