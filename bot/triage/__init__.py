"""Nightly triage: failures grouped by error signature into one issue per root cause.

Owns failure records from runner results, normalisation and signatures (pure), the rules table
(infrastructure / flaky / real), grouping and classes, suspects and bisection windows, issue
lifecycle, the issue bodies, and the nightly's triage on GitHub (:mod:`bot.triage.nightly`).

May import: validation, git, agents, config, model, store, templating. Imported by: app, cli, demo.
"""
