"""A worker whose every turn fails (its store's volume full: every write refused) neither floods
the log nor spins. Measured with a real ``forksync serve --workers 1`` on a filled 4 MiB tmpfs:
400 ``worker loop error`` tracebacks in 45 s, one every turn of its 0.1 s loop, written to the
log of a host whose disk is full. The first is logged with its traceback, the same error again
only once a minute with how often it came, and each failed turn waits twice as long as the last
(up to :data:`bot.app.worker.LOOP_ERROR_BACKOFF_CAP_S`); the first turn that goes through says
so and the loop polls as before. The turns are counted by a stand-in for the wake event, so no
real time passes."""
from __future__ import annotations

import asyncio
import logging

from bot.app import worker as worker_mod
from bot.app.worker import Worker
from bot.store import Store

LOG_EVERY_S = getattr(worker_mod, "LOOP_ERROR_LOG_EVERY_S", 60.0)
BACKOFF_CAP_S = getattr(worker_mod, "LOOP_ERROR_BACKOFF_CAP_S", 5.0)


class Turns:
    """The worker's wake event: each ``wait`` is one idle turn of its loop, recorded; ``on_turn``
    runs at each (the test's hook); the loop's ``stop`` is set after ``turns`` of them."""

    def __init__(self, stop, turns: int, on_turn):
        self.stop, self.turns, self.on_turn = stop, turns, on_turn
        self.waits: list[float] = []

    def wait(self, timeout=None):
        self.waits.append(timeout)
        self.on_turn(len(self.waits))
        if len(self.waits) >= self.turns:
            self.stop.set()
        return False

    def set(self):
        pass

    def clear(self):
        pass

    def is_set(self):
        return False


async def _nothing(d):
    return "handled"


def test_a_worker_whose_store_refuses_every_write_logs_once_and_backs_off(tmp_path, caplog):
    store = Store(tmp_path / "q.db")
    now = [1_000.0]
    stop = asyncio.Event()

    def on_turn(n):
        now[0] += 1.0                                       # a heartbeat is due at every turn
        if n == 1:
            store.conn.execute("PRAGMA query_only=ON")      # the volume is full from the second turn
        if n == 30:
            now[0] += LOG_EVERY_S       # a minute later, still failing
        if n == 40:
            store.conn.execute("PRAGMA query_only=OFF")     # freed

    turns = Turns(stop, 45, on_turn)
    w = Worker(store, _nothing, poll_interval_s=0.1, wake=turns, clock=lambda: now[0], heartbeat_every_s=1.0)
    caplog.set_level(logging.INFO, logger="bot.app.worker")
    try:
        asyncio.run(w.run(stop))
    finally:
        store.close()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 2, [r.getMessage() for r in errors]
    assert errors[0].exc_info is not None                   # the first with its traceback
    assert "readonly" in errors[1].getMessage() and "30 times" in errors[1].getMessage(), errors[1].getMessage()
    assert errors[1].exc_info is None
    failed = turns.waits[1:40]
    assert failed[:4] == [0.2, 0.4, 0.8, 1.6], turns.waits
    assert max(failed) == BACKOFF_CAP_S
    assert turns.waits[40:] == [0.1] * 5, turns.waits        # going again: polls as before
    assert any("going again after 39 failed turns" in r.getMessage() for r in caplog.records)
