"""Deterministic conflict resolution, tried before any agent, and the benchmark that measures it
on the fork's own resolved picks (docs/resolve.md).

* :mod:`bot.resolve.rules` — pure: :class:`~bot.resolve.rules.FileConflict` (one conflicted
  file and the facts the rules need), the rules, :func:`~bot.resolve.rules.resolve_file`;
* :mod:`bot.resolve.bench` — pure: scoring, the held-out split, tables and the
  ``forksync.resolve-bench/1`` document;
* the edge (pygit2, ``git merge-file``, ``git log``): :mod:`bot.resolve.picks` finds resolved
  picks in the fork's history, :mod:`bot.resolve.merge` replays a pick in memory (missing blobs
  tolerated), :mod:`bot.resolve.history` reads upstream's versions of a path, and
  :mod:`bot.resolve.replay` builds the FileConflicts, replays picks for the benchmark and offers
  :func:`~bot.resolve.replay.resolve_conflicts` for a live pick.

May import: core, config, model (and pygit2 in replay). Imported by: sync, cli.
"""
