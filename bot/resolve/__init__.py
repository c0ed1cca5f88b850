"""Deterministic conflict resolution, tried before any agent, and the benchmarks that measure it
(and the conflict agent) on the fork's own resolved picks and merges of upstream (docs/resolve.md).

* :mod:`bot.resolve.rules` — pure: :class:`~bot.resolve.rules.FileConflict` (one conflicted
  file and the facts the rules need), the rules, :func:`~bot.resolve.rules.resolve_file`;
* :mod:`bot.resolve.bench` — pure: scoring, the held-out split, tables and the
  ``forksync.resolve-bench/1`` document;
* the edge (pygit2, ``git merge-file`` through :mod:`bot.config.merge_file`, ``git log``): :mod:`bot.resolve.picks` finds resolved
  picks in the fork's history, :mod:`bot.resolve.merges` the fork's merges of upstream with their
  merge bases, :mod:`bot.resolve.merge` replays a pick or a merge in memory (missing blobs
  tolerated), :mod:`bot.resolve.history` reads upstream's versions of a path, and
  :mod:`bot.resolve.replay` builds the FileConflicts, replays picks and merges for the benchmark
  and offers :func:`~bot.resolve.replay.resolve_conflicts` for a live pick;
* :mod:`bot.resolve.agent_bench` — the conflict agent asked about the files the rules declined,
  scored the same way (``forksync.resolve-agent-bench/1``) and its runs recorded in the store.

May import: agents, core, config, store, templating (and pygit2). Imported by: sync, cli.
"""
