"""libgit2's process-wide settings that forksync needs before it opens any repository (edge).

A partial clone made by git 2.19–2.26 (``git clone --filter=…``) carries
``extensions.partialclone = <remote>`` with ``core.repositoryformatversion = 1``; later git writes
``remote.<name>.promisor`` instead but keeps reading the old key. libgit2 refuses to open a
repository naming an extension it does not list as supported ("unsupported extension name
extensions.partialclone", ``git_repository_open``), so every command on such a clone would stop
before reading anything. libgit2 itself never fetches a promisor's objects: an absent object is
an ordinary missing object, which forksync already reports and works around. Listing the
extension as supported (``GIT_OPT_SET_EXTENSIONS``, libgit2 ≥ 1.5) is therefore safe.
"""
from __future__ import annotations

import pygit2

#: extensions forksync opens repositories with, beyond those libgit2 supports itself
EXTRA_EXTENSIONS = ("partialclone",)


def allow_partial_clones() -> None:
    """Let libgit2 open repositories whose config names ``extensions.partialclone`` (idempotent;
    process-wide; call it in every process before it opens a user's repository: the CLI does; the
    plan helper's child opens only the planner's scratch repository). libgit2 replaces its list of
    extra extensions on each call, so the list given keeps every one set before (it skips its own)."""
    have = list(pygit2.settings.extensions)
    missing = [x for x in EXTRA_EXTENSIONS if x not in have]
    if missing:
        pygit2.settings.set_extensions(have + missing)
