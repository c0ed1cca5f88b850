"""Keeping a fork in sync on GitHub: fetch → ingest → plan → apply → push → sync PRs → status issue.

Owns the sync service, the ingest (git → ledger → pins), sync status and the status issue, sync
PRs and the check of a person's resolution, upstream tracking and polling, landing (merged or
closed unmerged), the conflict agent on GitHub, and the tables of all of these (:mod:`bot.sync.store`).

May import: git, github, plan, core, agents, config, model, store, templating.
Imported by: validation, l2, triage, commands, handlers, app, cli, demo.
"""
