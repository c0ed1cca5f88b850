"""The command runs the bot has answered (table ``command_runs``): one row per (comment, command
line), so a redelivered or edited comment never runs a command twice."""
from __future__ import annotations

from bot.store import Store, table

COMMAND_RUNS = table("command_runs", {
    "key": str, "repo": str, "comment_id": int, "line": str, "by": str, "result": str, "time": float,
}, pk="key")


def already_ran(store: Store, key: str) -> bool:
    with store.lock:
        return store.conn.execute("SELECT 1 FROM command_runs WHERE key=?", (key,)).fetchone() is not None


def record(store: Store, key: str, repo: str, comment_id: int, line: str, by: str, result: str, now: float) -> None:
    with store.lock:
        store.db[COMMAND_RUNS.name].upsert({"key": key, "repo": repo, "comment_id": comment_id, "line": line,
                                            "by": by, "result": result[:2000], "time": now}, pk="key")
