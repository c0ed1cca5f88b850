"""GitHub logins compared as GitHub compares them: case-insensitively (pure).

GitHub keeps the spelling an account chose (``ForkSync-Bot``) but takes any other case for the
same account: it signs in, answers ``GET /users/forksync-bot`` and matches ``creator=`` filters
either way. The login forksync knows itself by may come from a person (``FORKSYNC_BOT_LOGIN``,
written as they remember it) while the authors of PRs, comments and commits come from GitHub in
the account's own spelling, so every comparison of the bot's login with an author goes through
:func:`same_login`, never ``==``: a case difference must neither make the bot's own events look
like a person's (the loop guard would let them through) nor its PRs like someone else's.
"""
from __future__ import annotations


def login_key(login: str | None) -> str:
    """Pure: ``login`` as GitHub compares it: without surrounding blanks, lower-cased; ``""``
    for None. Logins are ASCII (letters, digits, hyphens; an App's bot adds ``[bot]``)."""
    return (login or "").strip().lower()


def same_login(a: str | None, b: str | None) -> bool:
    """Pure: are ``a`` and ``b`` the same GitHub account? Never when either is empty or None: an
    unknown login (token mode before ``GET /user`` answered) is nobody's, not everybody's."""
    ka = login_key(a)
    return bool(ka) and ka == login_key(b)


__all__ = ["login_key", "same_login"]
