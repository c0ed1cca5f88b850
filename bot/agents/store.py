"""The agents' token budget in the store (table ``agent_token_usage``): calls and tokens per UTC
day and agent, so the daily budget holds across processes and restarts.

``input_tokens`` and ``output_tokens`` are what every call is counted for against the budget;
``cut_calls`` says how many of ``calls`` were cut before their answer was seen (a non-streamed
attempt the client stopped waiting for), and ``estimated_input_tokens`` how many of
``input_tokens`` are forksync's estimate of a prompt (characters / 4) rather than the API's own
figure — such a cut attempt's, or an answer's whose usage a gateway left out. A database of an
earlier release gets the two columns empty (NULL) on its old rows: none of their calls was
counted so."""
from __future__ import annotations

from bot.store import Store, table

USAGE_TABLE = table(
    "agent_token_usage",
    {"day": str, "agent": str, "model": str, "calls": int, "input_tokens": int, "output_tokens": int,
     "cut_calls": int, "estimated_input_tokens": int},
    pk=("day", "agent"),
)


def tokens_used(store: Store, day: str) -> int:
    """Input + output tokens of every agent on ``day`` (``YYYY-MM-DD``, UTC)."""
    with store.lock:
        row = store.conn.execute(
            "SELECT COALESCE(SUM(input_tokens + output_tokens), 0) FROM agent_token_usage WHERE day = ?",
            (day,)).fetchone()
    return int(row[0])


def estimated_today(store: Store, day: str) -> tuple[int, int]:
    """``(cut calls, estimated input tokens)`` of every agent on ``day`` (``YYYY-MM-DD``, UTC): how
    many calls were counted before their answer came, and how much of the input counted is
    forksync's estimate rather than the API's figure."""
    with store.lock:
        row = store.conn.execute(
            "SELECT COALESCE(SUM(cut_calls), 0), COALESCE(SUM(estimated_input_tokens), 0) FROM agent_token_usage "
            "WHERE day = ?", (day,)).fetchone()
    return int(row[0]), int(row[1])


def record_call(store: Store, day: str, agent: str, model: str, input_tokens: int, output_tokens: int,
                *, cut: bool = False, estimated_input_tokens: int = 0) -> None:
    """Count one call of ``agent`` on ``day`` with its tokens (one row per day and agent). ``cut``:
    the call was cut before its answer was seen; ``estimated_input_tokens``: how many of
    ``input_tokens`` are forksync's estimate, not the API's figure."""
    with store.lock:
        store.conn.execute(
            "INSERT INTO agent_token_usage(day, agent, model, calls, input_tokens, output_tokens, cut_calls, "
            "estimated_input_tokens) VALUES (?, ?, ?, 1, ?, ?, ?, ?) ON CONFLICT(day, agent) DO UPDATE SET "
            "calls = calls + 1, input_tokens = input_tokens + excluded.input_tokens, "
            "output_tokens = output_tokens + excluded.output_tokens, model = excluded.model, "
            "cut_calls = COALESCE(cut_calls, 0) + excluded.cut_calls, "
            "estimated_input_tokens = COALESCE(estimated_input_tokens, 0) + excluded.estimated_input_tokens",
            (day, agent, model, input_tokens, output_tokens, int(cut), estimated_input_tokens))
