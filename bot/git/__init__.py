"""The git edge: reading commits (pygit2, ``git log -p | git patch-id``), applying units to
``forksync/<unit>`` branches, decisions in ``refs/notes/forksync``, bisection, and conflict
markers / conflict commits in a range (the rule itself is pure, in :mod:`bot.core.markers`).

May import: core, config, model, templating. Imported by: sync, l2, triage, cli.
"""
