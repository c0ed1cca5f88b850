"""The agents' token budget in the store (table ``agent_token_usage``): calls and tokens per UTC
day and agent, so the daily budget holds across processes and restarts."""
from __future__ import annotations

from bot.store import Store, table

USAGE_TABLE = table(
    "agent_token_usage",
    {"day": str, "agent": str, "model": str, "calls": int, "input_tokens": int, "output_tokens": int},
    pk=("day", "agent"),
)


def tokens_used(store: Store, day: str) -> int:
    """Input + output tokens of every agent on ``day`` (``YYYY-MM-DD``, UTC)."""
    with store.lock:
        row = store.conn.execute(
            "SELECT COALESCE(SUM(input_tokens + output_tokens), 0) FROM agent_token_usage WHERE day = ?",
            (day,)).fetchone()
    return int(row[0])


def record_call(store: Store, day: str, agent: str, model: str, input_tokens: int, output_tokens: int) -> None:
    """Count one call of ``agent`` on ``day`` with its tokens (one row per day and agent)."""
    with store.lock:
        store.conn.execute(
            "INSERT INTO agent_token_usage(day, agent, model, calls, input_tokens, output_tokens) "
            "VALUES (?, ?, ?, 1, ?, ?) ON CONFLICT(day, agent) DO UPDATE SET calls = calls + 1, "
            "input_tokens = input_tokens + excluded.input_tokens, "
            "output_tokens = output_tokens + excluded.output_tokens, model = excluded.model",
            (day, agent, model, input_tokens, output_tokens))
