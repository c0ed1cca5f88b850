"""``/forksync`` commands in comments: run each once, with its permission, and reply.

Owns the command runner (:mod:`bot.commands.runner`) and its table (:mod:`bot.commands.store`).
Parsing is pure and lives in :mod:`bot.core.commands`. May import: validation, sync, github,
core, config, model, store, templating. Imported by: handlers, app.
"""
