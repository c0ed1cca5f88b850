"""Validation and the merge gate: L1 suites per PR, the nightly on trunk, L3 on demand with sign-off.

Owns the gate's decision (pure, :func:`bot.validation.gate.decide`), its inputs gathered from
GitHub, the store and the bot's mirror of the fork (conflict markers and conflict commits on the
real trees), sign-offs and L3 runs, the validation service (suites → check runs → gate
→ merge), runner backends, check-run rendering, the nightly's alarm rules, and their tables
(:mod:`bot.validation.store`).

May import: sync, git, github, core, config, model, store, templating (and gpu_runner).
Imported by: l2, triage, commands, handlers, app, cli.
"""
