"""Planning orchestration: a loaded :class:`~bot.sync.ingest.SyncState` → a :class:`~bot.model.Plan`.

Wires the edges to the pure partition (``bot/plan/partition.py``): the PENDING commits from the ledger, the
open ``forksync/*`` branches, a :class:`~bot.plan.predict.MergePredictor` on a scratch repository in
``cache_dir`` (rename detection per config), and a lazy :class:`~bot.plan.symbol_index.SymbolIndex`.
Used by ``forksync plan`` / ``forksync apply`` and by ``bench/bench_plan.py``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import pygit2
from pygit2.enums import ObjectType

from bot.config.objects import open_buffered
from bot.model import CommitInfo, Disposition, Plan
from bot.plan import store as plan_store
from bot.plan.helper import PlanHelper
from bot.plan.partition import build_plan
from bot.plan.predict import MergePredictor, scratch_repo
from bot.plan.symbol_index import SymbolIndex
from bot.store import Store

#: a plan that wrote fewer new objects than this (a re-plan after a push or a landing) writes them
#: loose; more (a cold plan) as one pack — a pack per small re-plan would pile up packs in the
#: scratch repository, and every lookup searches each one
LOOSE_BELOW = 256


#: blobs up to this size (bytes) stay in libgit2's object cache during a plan (:func:`blob_cache`)
BLOB_CACHE_LIMIT = 1 << 20


def blob_cache(limit: int) -> None:
    """Let libgit2 keep blobs up to ``limit`` bytes in its object cache (0: none, libgit2's
    default; the cache's total stays ``cache_max_size``, 256 MB by default). A plan reads most
    blobs twice — a file merge (``path_merge``) and the symbol side read the same versions, and a
    commit's new side is the next commit's ancestor — and libgit2 otherwise inflates each read
    again from its pack (delta chains included): on the real Triton fork this cut the blob reads
    of a cold plan from ≈ 0.4 to ≈ 0.1 s and its file merges by ≈ 25 %. A process-wide libgit2
    setting, set for the plan and back to the default after it."""
    pygit2.settings.cache_object_limit(ObjectType.BLOB, limit)


@dataclass
class PlanRun:
    """A plan and how it was made: ``pending`` (the commits walked, upstream order), ``merges``
    (3-way merges computed), ``cache_hits`` (predictions read from the cache), ``parsed_files``
    (files whose symbols were computed), ``seconds`` (planning only, after the ledger)."""

    plan: Plan
    pending: list[CommitInfo]
    merges: int = 0
    cache_hits: int = 0
    parsed_files: int = 0
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)


def pending_commits(state) -> list[CommitInfo]:
    """The PENDING upstream commits of ``state``'s ledger, oldest first."""
    return [state.upstream[e.sha] for e in state.ledger.entries if e.disposition is Disposition.PENDING]


def fork_paths(repo: pygit2.Repository, merge_base: str | None, fork_tip: str) -> frozenset[str] | None:
    """The files the fork changed since the merge base (one tree diff, no blob reads; old and new
    paths of renames): where the fork's own code can differ from upstream's. None when there is
    no merge base (then every file counts)."""
    if not merge_base:
        return None
    old = repo[merge_base].peel(pygit2.Commit).tree
    new = repo[fork_tip].peel(pygit2.Commit).tree
    out: set[str] = set()
    for d in old.diff_to_tree(new).deltas:
        out.add(d.old_file.path)
        out.add(d.new_file.path)
    return frozenset(out)


def plan_state(state, *, store: Store | None = None, progress: Callable[[int, int], None] | None = None,
               predictor: MergePredictor | None = None, workers: int = 2, helper_min: int = 64,
               resume: dict | None = None) -> PlanRun:
    """Plan the PENDING commits of ``state`` against its fork tip.

    ``store``: persists predictions (a warm re-plan is lookups only); None keeps them in memory.
    ``predictor``: to reuse one (benchmarks); by default a new one on ``cache_dir``'s scratch repo.
    ``workers``: 2 or more runs a helper process (``bot/plan/helper.py``) that merges the next
    pending commits while this process computes symbols (without rename detection only; with a
    given ``predictor`` never, nor for fewer than ``helper_min`` pending commits: its start-up,
    ≈ 0.5 s, would not pay back — counted as the pending commits with no cached prediction on any
    running tree); 1 does everything here. The plan is the same either way.
    ``resume``: a dict the caller keeps between plans of this fork in one process (the App): a
    plan whose pending commits start with the last plan's continues that walk
    (:func:`~bot.plan.partition.build_plan`) — the same plan, without walking them again.
    """
    cfg = state.config
    t0 = time.perf_counter()
    pending = pending_commits(state)
    carried = {u for b in state.in_flight for u in (*b.upstream_shas, *b.copies)}
    if carried:   # the ledger marks these IN_FLIGHT; guard against an abbreviated trailer it missed
        pending = [c for c in pending if not any(c.sha.startswith(u) for u in carried)]
    repo = scratch_repo(state.git_dir, cfg.cache_dir)
    helper = None
    if workers > 1 and predictor is None and len(pending) >= helper_min:
        # a re-plan after a push merges only the new commits (and those whose inputs changed):
        # a helper (≈ 0.5 s CPU to start) pays back only where many commits were never merged
        fresh = len(pending)
        if store is not None:
            store.migrate()
            fresh -= len(plan_store.answered_commits(store, [c.sha for c in pending]))
        if fresh >= helper_min:
            helper = PlanHelper(repo.path)
    mem = None
    if predictor is None and helper is None:
        # the trees (and content-merged blobs) the predictions write are held in memory and
        # written at the end in one pack: a loose object costs a file and an object-database
        # refresh each (≈ 0.3 ms CPU; a cold Triton plan writes ≈ 1,650). With a helper process
        # they stay loose: the helper merges onto the running trees this process writes.
        repo, mem = open_buffered(repo.path)
    # a partial clone's absent blobs read as nothing to libgit2 (no rename pairs, no attributes)
    # without an error: such answers are not kept past this plan, a later fetch may change them
    pred = predictor or MergePredictor(repo, state.fork_tip, rename_detection=cfg.rename_detection, store=store,
                                       rename_limit=cfg.rename_limit,
                                       persist=not state.partial_clone)
    pred.preload([c.sha for c in pending])
    symbols = SymbolIndex(repo, store=store)
    symbols.preload(pending, [s for a in cfg.areas if a.divergent for s in a.symbols])
    if helper is not None:
        pred.use_helper(helper)
        if pending and pred.hint_worthwhile(pending[0]):
            helper.start()
    blob_cache(BLOB_CACHE_LIMIT)
    try:
        plan = build_plan(pending, predictor=pred, areas=cfg.areas, bundle_size_cap=cfg.bundle_size_cap,
                          chain_size_cap=cfg.chain_size_cap,
                          fork_paths=fork_paths(repo, state.merge_base, state.fork_tip),
                          in_flight=state.in_flight, commit_lookup=state.upstream, symbols=symbols,
                          base=state.fork_tip, as_of=state.as_of, progress=progress, resume=resume)
    finally:
        blob_cache(0)
        if helper is not None:
            helper.close()
    if mem is not None:
        mem.flush(loose_below=LOOSE_BELOW)    # before the answers that name these trees are stored
    pred.flush()
    symbols.flush()
    return PlanRun(plan, pending, merges=pred.merges, cache_hits=pred.cache_hits,
                   parsed_files=symbols.parsed_files, seconds=time.perf_counter() - t0,
                   extra={"helper": helper.stats() if helper else None, "helper_merges": pred.helper_merges,
                          "merge_seconds": pred.merge_seconds, "merge_cpu": pred.merge_cpu,
                          "libgit2_merges": pred.libgit2_merges, "path_merges_checked": pred.path_merges_checked,
                          "parses": symbols.parses, "symbol_cpu": symbols.symbol_cpu})
