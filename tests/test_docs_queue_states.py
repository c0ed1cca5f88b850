"""The JSON shapes docs/dashboard.md documents for the overview's ``queue`` and ``/healthz``'s
``deliveries`` name every state a delivery can be in."""
import re
from pathlib import Path

from bot.app import queue as q

DOC = Path(__file__).resolve().parents[1] / "docs" / "dashboard.md"


def test_documented_delivery_states_are_the_queues():
    """An operator reading docs/dashboard.md to write an alert on ``/healthz`` or ``/api/v1``
    sees the queue's states. What they would see: a list without ``paused``, so deliveries that
    wait for a suspended installation to be lifted are a key nobody alerts on. What they should
    see: every state of ``bot.app.queue.STATES``."""
    text = DOC.read_text()
    for key in ("queue", "deliveries"):
        [listed] = re.findall(rf'"{key}": \{{([^}}]*)\}}', text)
        assert set(re.findall(r'"(\w+)"', listed)) == set(q.STATES), (key, listed)
