"""The command runs the bot has answered (table ``command_runs``): one row per (comment, command
line), so a redelivered or edited comment never runs a command twice. ``result``: ``ran``,
``malformed``, ``refused: <why>``, ``failed: <why>`` (GitHub refused what it did, so no retry
runs it again) or ``withdrawn: <why>`` (a sign-off whose line was removed
from its comment, or whose comment was deleted, before or after it ran). ``written``: when the
text the result answers was written (:func:`bot.commands.runner.comment_order` of the comment as
it ran, or as the edit that removed the line left it; :data:`LATEST` for a deletion), so a line
typed again after its removal is told from a late delivery of the text it was removed from."""
from __future__ import annotations

import json
import sqlite3

from bot.store import Store, table

COMMAND_RUNS = table("command_runs", {
    "key": str, "repo": str, "comment_id": int, "line": str, "by": str, "result": str, "time": float,
    "written": str,
    # JSON {"mark", "body"}: the reply of a command that ran, kept until GitHub took it: a reply
    # GitHub failed is posted by the delivery's retry, which never runs the command again
    # (:func:`pending_reply`); "" / NULL once posted, for any other result, and in rows written before
    "reply_pending": str,
}, pk="key")

#: Sorts after every ``written``: a deletion is final, and a row recorded before writings were kept
#: is taken as the latest, so no delivery of an earlier text ever runs after it.
LATEST = "\uffff"


def already_ran(store: Store, key: str) -> bool:
    return result_of(store, key) is not None


def result_of(store: Store, key: str) -> str | None:
    """The recorded result of the command run ``key``; None when it has not been answered."""
    with store.lock:
        row = store.conn.execute("SELECT result FROM command_runs WHERE key=?", (key,)).fetchone()
    return None if row is None else str(row[0])


def run_of(store: Store, key: str) -> tuple[str, str] | None:
    """``(result, written)`` of the command run ``key`` (``written`` :data:`LATEST` when the row
    did not keep it); None when it has not been answered."""
    with store.lock:
        row = store.conn.execute("SELECT result, written FROM command_runs WHERE key=?", (key,)).fetchone()
    return None if row is None else (str(row[0]), str(row[1] or LATEST))


def record(store: Store, key: str, repo: str, comment_id: int, line: str, by: str, result: str, now: float,
           written: str = LATEST, *, reply: tuple[str, str] | None = None) -> None:
    """Record the command run ``key``'s ``result``; ``reply``: ``(mark, body)`` of its reply not
    posted yet (cleared by :func:`reply_posted`)."""
    with store.lock:
        store.db[COMMAND_RUNS.name].upsert({"key": key, "repo": repo, "comment_id": comment_id, "line": line,
                                            "by": by, "result": result[:2000], "time": now, "written": written,
                                            "reply_pending": json.dumps({"mark": reply[0], "body": reply[1]}) if reply else ""},
                                           pk="key", alter=True)


def pending_reply(store: Store, key: str) -> tuple[str, str] | None:
    """``(mark, body)`` of the reply the command run ``key`` ran with and GitHub has not taken yet."""
    with store.lock:
        try:
            row = store.conn.execute("SELECT reply_pending FROM command_runs WHERE key=?", (key,)).fetchone()
        except sqlite3.OperationalError:        # a store from before the column: nothing pending
            return None
    if row is None or not row[0]:
        return None
    got = json.loads(row[0])
    return str(got["mark"]), str(got["body"])


def reply_posted(store: Store, key: str) -> None:
    with store.lock:
        store.conn.execute("UPDATE command_runs SET reply_pending='' WHERE key=?", (key,))
