"""The GitHub concern's tables: the last valid configuration read from each fork.

Table ``fork_configs``: the text and blob sha of the last ``.github/forksync.yml`` that validated;
it stays in force while a later push breaks the file (:func:`bot.github.fork_config.load_fork_config`).
"""
from __future__ import annotations

from bot.store import Store, table

FORK_CONFIGS = table("fork_configs", {"repo": str, "blob_sha": str, "text": str}, pk="repo")


def save_fork_config(store: Store, repo: str, blob_sha: str, text: str) -> None:
    with store.lock:
        store.db[FORK_CONFIGS.name].upsert({"repo": repo, "blob_sha": blob_sha, "text": text}, pk="repo")


def last_fork_config(store: Store, repo: str) -> str | None:
    """The text of the fork's last stored configuration, or None."""
    with store.lock:
        rows = list(store.db[FORK_CONFIGS.name].rows_where("repo = ?", [repo]))
    return rows[0]["text"] if rows else None
