"""The git edge: the fork's and upstream's repositories read and written with pygit2 and the git CLI.

* :mod:`bot.git.repo` — repositories, refs, ranges and per-commit analysis (pygit2,
  ``git log -p | git patch-id``);
* :mod:`bot.git.apply` — a plan unit applied to its ``forksync/<unit>`` branch, in memory (new
  objects written as one pack by :mod:`bot.config.objects`);
* :mod:`bot.git.resolution` — finishing a chain stopped at a conflict: the conflict commit, the
  check of a resolution and its fold into one pick;
* :mod:`bot.git.notes` — decisions in ``refs/notes/forksync``;
* :mod:`bot.git.bisect` — bisection of the fork's landed commits;
* :mod:`bot.git.markers` — conflict markers and conflict commits in a range (the rule itself is
  pure, in :mod:`bot.core.markers`).

May import: core, config, model, templating. Imported by: sync, validation, l2, triage, cli.
"""
