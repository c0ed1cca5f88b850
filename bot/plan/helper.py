"""A plan helper process (edge): merges, on a second CPU core, the commits the plan walk will
predict next, while the planning process computes symbols and places the current commit.

Why: a cold plan is two kinds of work that threads do not overlap (libgit2's ``merge_trees`` and
tree-sitter's ``parse`` both hold the GIL): the pick predictions and the symbols (docs/plan.md,
"Benchmark 11b"). A merge is a pure function of its inputs, so *who* computes it never changes
the plan, only *when* it is ready.

A **merge** task ``(commit, ours tree)`` is :func:`bot.plan.predict.merge_answer`: the 3-way merge
``git cherry-pick`` performs, without rename detection, and what it produced at each path the
pick changes. Without rename detection a 3-way merge is decided path by path over those paths
(every other path keeps ours' entry), so the predictor may reuse an answer computed on an older
running tree for any tree whose entries at those paths (and their parent directories) are the
same, and merges again otherwise (``MergePredictor._from_helper``). The walk hints the next
``lookahead`` pending commits on the running tree of the moment (``bot/plan/partition.py``); a clean bundle
pick in between rarely touches their paths (23 of 634 on the Triton bench with 8 ahead).

(Symbols were tried as helper tasks too: forecasting which files a share check will ask for
wasted most of the helper's parses, and splitting a file's versions over two processes lost the
incremental re-parse; the plan got slower, docs/plan.md.)

Protocol (one helper per plan walk, :class:`PlanHelper`):

* the planner sends *hints*, task batches, in the order it expects to need them;
* the helper takes them first-in first-out and *claims* each in a shared byte array (0 = free,
  1 = taken by the planner, 2 = taken by the helper) before computing it, so no task runs twice
  except in a benign race (both read 0: both compute the same answer);
* when the planner needs an answer: a delivered one is used; one the helper is computing is
  waited for; a free one is claimed and computed by the planner itself (it never waits behind
  the helper's queue).

Processes start with ``spawn`` (safe in a threaded web app; the child imports only what its tasks
need, ≈ 0.5 s, overlapped with the planner's own work). A helper that cannot start or dies is
dropped: every answer is then computed by the planner (``PlanHelper.failed`` says why).
"""
from __future__ import annotations

import multiprocessing
import threading
import time
from collections import deque
from contextlib import contextmanager

from bot.plan.tasks import MISS

#: Task ids index the claim array; tasks beyond it are never hinted (the planner computes them).
CAPACITY = 1 << 17

FREE, LOCAL, HELPER = 0, 1, 2


class PlanHelper:
    """The planner's side of one helper process over the repository at ``repo_path`` (a
    :func:`~bot.plan.predict.scratch_repo`: the helper writes merged blobs there, the planner reads them).

    Started lazily by the first :meth:`hint`; :meth:`close` stops it (idempotent; also fine when it
    never started). Task keys are ``(kind, ...)`` tuples; the one kind is ``("merge", commit sha,
    ours tree)`` with payload ``(commit sha, ours tree)``."""

    def __init__(self, repo_path: str, *, start_method: str = "spawn"):
        self.repo_path = repo_path
        self.start_method = start_method
        self.ids: dict[tuple, int] = {}
        self.answers: dict[int, object] = {}
        self.proc = None
        self.failed: str | None = None
        self.delivered = 0          # answers received from the helper
        self.used: dict[str, int] = {}          # answers the planner took, per kind
        self.waited = 0             # answers the planner waited for

    def start(self) -> bool:
        """Start the process now (else the first hint does): its start-up (≈ 0.5 s) then overlaps
        the planner's own set-up. False when it cannot run (``failed`` says why)."""
        return self._start()

    def _start(self) -> bool:
        if self.proc is not None or self.failed:
            return self.proc is not None
        try:
            ctx = multiprocessing.get_context(self.start_method)
            self.claims = ctx.RawArray("b", CAPACITY)
            self._hints_r, self._hints_w = ctx.Pipe(duplex=False)
            self._results_r, self._results_w = ctx.Pipe(duplex=False)
            self.proc = ctx.Process(target=_serve, name="forksync-plan-helper", daemon=True,
                                    args=(self.repo_path, self.claims, self._hints_r, self._results_w))
            with _sigint_ignored():
                self.proc.start()
            self._results_w.close()             # the child holds the write end now
            self._hints_r.close()
        except (OSError, ValueError, RuntimeError) as e:
            self.failed = f"plan helper did not start: {e}"
            self.proc = None
        return self.proc is not None

    def hint(self, tasks) -> int:
        """Queue ``[(key, payload)]`` (see the class docstring; keys hinted before are skipped).
        Returns the number queued."""
        batch = []
        for key, payload in tasks:
            if key in self.ids or len(self.ids) >= CAPACITY:
                continue
            self.ids[key] = i = len(self.ids)
            batch.append((i, key[0], payload))
        if not batch or not self._start():
            return 0
        try:
            self._hints_w.send(batch)
        except (OSError, EOFError) as e:
            self._dead(e)
            return 0
        self.drain()
        return len(batch)

    def settle(self, timeout: float = 30.0) -> bool:
        """Wait until every task hinted so far has an answer (or ``timeout`` seconds pass; then
        False). For tests and demonstrations: a planner never needs to wait for all."""

        end = time.monotonic() + timeout
        while self.proc is not None and len(self.answers) < len(self.ids):
            left = end - time.monotonic()
            if left <= 0:
                return False
            try:
                if self._results_r.poll(min(left, 1.0)):
                    self._receive()
                elif not self.proc.is_alive():
                    raise EOFError("the plan helper exited")
            except (OSError, EOFError) as e:
                self._dead(e)
                return False
        return self.proc is not None

    def hinted(self, key: tuple) -> bool:
        return key in self.ids

    def drain(self) -> None:
        """Receive every answer the helper has sent so far (never blocks)."""
        if self.proc is None:
            return
        try:
            while self._results_r.poll():
                self._receive()
        except (OSError, EOFError) as e:
            self._dead(e)

    def _receive(self) -> None:
        i, answer = self._results_r.recv()
        self.answers[i] = answer
        self.delivered += 1

    def take(self, key: tuple):
        """The helper's answer for task ``key``, waiting while the helper computes it; :data:`MISS`
        when the caller must compute it (the task is then claimed for the caller)."""
        i = self.ids.get(key)
        if i is None or self.proc is None:
            return MISS
        self.drain()
        if i not in self.answers:
            if self.claims[i] == FREE:
                self.claims[i] = LOCAL
            if self.claims[i] == LOCAL:          # ours (a race with the helper may still run it twice)
                return MISS
            self.waited += 1                      # the helper is computing it
            try:
                while i not in self.answers:
                    if not self._results_r.poll(5.0) and not self.proc.is_alive():
                        raise EOFError("the plan helper exited")
                    self.drain()
            except (OSError, EOFError) as e:
                self._dead(e)
                return MISS
        self.used[key[0]] = self.used.get(key[0], 0) + 1
        return self.answers[i]

    def _dead(self, e: Exception) -> None:
        self.failed = f"plan helper stopped: {e}"
        self.close()

    def close(self) -> None:
        """Stop the helper process (answers not received are dropped)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            self._hints_w.send(None)
        except (OSError, EOFError):
            pass
        proc.join(0.2)
        if proc.is_alive():     # busy (a merge, or still starting): its answers are not needed
            proc.terminate()    # (libgit2 writes objects to a temporary file, then renames it)
            proc.join(2.0)
        for conn in (self._hints_w, self._results_r):
            conn.close()

    def stats(self) -> dict:
        return {"delivered": self.delivered, "used": dict(self.used), "waited": self.waited,
                "failed": self.failed}


# -- helper side ----------------------------------------------------------------------------------
@contextmanager
def _sigint_ignored():
    """SIGINT ignored while the helper starts (main thread only: elsewhere the disposition cannot
    change): a spawned child inherits an ignored SIGINT, and Python then installs no
    KeyboardInterrupt handler, so a Ctrl-C during its start-up (≈ 0.5 s, before :func:`_serve`
    ignores it itself) prints no traceback either. The parent's window is the fork and exec only."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _serve(repo_path: str, claims, hints, results) -> None:
    """The helper process: take hints FIFO, claim, compute, send ``(id, answer)``. Ctrl-C signals
    the terminal's whole process group: the planner handles it (and stops this process), so the
    helper ignores SIGINT rather than print a KeyboardInterrupt traceback of its own."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    queue: deque = deque()
    ready = threading.Condition()
    closed: list[bool] = []

    def read() -> None:                         # keeps the hint pipe drained: the planner never blocks
        try:
            while True:
                batch = hints.recv()
                with ready:
                    if batch is None:
                        closed.append(True)
                    else:
                        queue.extend(batch)
                    ready.notify()
                if batch is None:
                    return
        except (OSError, EOFError):
            with ready:
                closed.append(True)
                ready.notify()

    threading.Thread(target=read, daemon=True).start()
    # lazy: the child reads hints from the moment it starts; git and the merge code load meanwhile
    from bot.config.objects import open_repository  # lazy: loads pygit2
    from bot.plan.predict import merge_answer  # lazy: as above

    tasks = {"merge": merge_answer}
    repo = open_repository(repo_path)
    while True:
        with ready:
            while not queue and not closed:
                ready.wait()
            if closed:
                return
            i, kind, payload = queue.popleft()
        if claims[i] != FREE:
            continue
        claims[i] = HELPER
        answer = tasks[kind](repo, *payload)
        try:
            results.send((i, answer))
        except (OSError, EOFError):
            return
