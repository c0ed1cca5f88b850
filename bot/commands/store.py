"""The command runs the bot has answered (table ``command_runs``): one row per (comment, command
line), so a redelivered or edited comment never runs a command twice. ``result``: ``ran``,
``malformed``, ``refused: <why>`` or ``withdrawn: <why>`` (a sign-off whose line was removed
from its comment, or whose comment was deleted, before or after it ran)."""
from __future__ import annotations

from bot.store import Store, table

COMMAND_RUNS = table("command_runs", {
    "key": str, "repo": str, "comment_id": int, "line": str, "by": str, "result": str, "time": float,
}, pk="key")


def already_ran(store: Store, key: str) -> bool:
    return result_of(store, key) is not None


def result_of(store: Store, key: str) -> str | None:
    """The recorded result of the command run ``key``; None when it has not been answered."""
    with store.lock:
        row = store.conn.execute("SELECT result FROM command_runs WHERE key=?", (key,)).fetchone()
    return None if row is None else str(row[0])


def record(store: Store, key: str, repo: str, comment_id: int, line: str, by: str, result: str, now: float) -> None:
    with store.lock:
        store.db[COMMAND_RUNS.name].upsert({"key": key, "repo": repo, "comment_id": comment_id, "line": line,
                                            "by": by, "result": result[:2000], "time": now}, pk="key")
