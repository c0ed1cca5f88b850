"""The git edge: reading commits (pygit2, ``git log -p | git patch-id``), applying units to
``forksync/<unit>`` branches (in memory; new objects written as one pack by ``objects``),
decisions in ``refs/notes/forksync``, and bisection.

May import: config, model, templating. Imported by: sync, l2, triage, cli.
"""
