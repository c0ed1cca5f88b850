"""GitHub logins compared as GitHub compares them: case-insensitively (pure).

GitHub keeps the spelling an account chose (``ForkSync-Bot``) but takes any other case for the
same account: it signs in, answers ``GET /users/forksync-bot`` and matches ``creator=`` filters
either way. The logins forksync is told about come from people — its own (``FORKSYNC_BOT_LOGIN``)
and the areas' ``owners`` in forksync.yml, written as they remember them — while the authors of
PRs, reviews, comments and commits come from GitHub in the account's own spelling, so every
comparison of a login someone wrote with one GitHub gave goes through :func:`same_login` (or
:func:`among`, for a list), never ``==`` or ``in``: a case difference must neither make the bot's
own events look like a person's (the loop guard would let them through) nor its PRs like someone
else's, nor keep an owner's approval or sign-off from counting.
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


def among(login: str | None, logins) -> bool:
    """Pure: is ``login`` one of the accounts ``logins`` names (an area's ``owners``, say), in any
    case? Never for an empty or None ``login`` (:func:`same_login`)."""
    key = login_key(login)
    return bool(key) and any(key == login_key(other) for other in logins)


def is_app_bot(login: str | None) -> bool:
    """Pure: is ``login`` a GitHub App's bot account (``name[bot]``, GitHub's suffix for an App's
    actor; no person's login may hold brackets)? Such an account may have write access, yet its
    approval is no person's review."""
    return login_key(login).endswith("[bot]")


__all__ = ["among", "is_app_bot", "login_key", "same_login"]
