"""Deterministic conflict resolution, tried before any agent, and the benchmark that measures it
on the fork's own resolved picks (docs/resolve.md).

* :mod:`bot.resolve.rules` — pure: :class:`~bot.resolve.rules.FileConflict` (one conflicted
  file and the facts the rules need), the rules, :func:`~bot.resolve.rules.resolve_file`;
* :mod:`bot.resolve.bench` — pure: scoring, the held-out split, tables and the
  ``forksync.resolve-bench/1`` document;
* :mod:`bot.resolve.replay` — the edge (pygit2, ``git merge-file``, ``git log``): finds resolved
  picks in the fork's history, replays them, builds FileConflicts, and
  :func:`~bot.resolve.replay.resolve_conflicts` for a live pick.

May import: core, config, model (and pygit2 in replay). Imported by: sync, cli.
"""
