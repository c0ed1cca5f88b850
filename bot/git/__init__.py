"""The git edge: reading commits (pygit2, ``git log -p | git patch-id``), applying units to
``forksync/<unit>`` branches (in memory; new objects written as one pack by ``objects``),
finishing a chain stopped at a conflict (``resolution``: the conflict commit, the check of a
resolution and its fold into one pick), decisions in ``refs/notes/forksync``, bisection, and
conflict markers / conflict commits in a range (the rule itself is pure, in :mod:`bot.core.markers`).

May import: core, config, model, templating. Imported by: sync, resolve, l2, triage, cli.
"""
