"""The dashboard: a fork's sync state, validation and triage as read-only pages with plots, each
with a JSON twin under ``/api/v1/…`` (docs/dashboard.md).

Owns: the page documents read from the stores (:mod:`bot.dashboard.views`), their plots
(:mod:`bot.dashboard.plots`, plotly, served offline), the aiohttp routes and templates
(:mod:`bot.dashboard.web`) and GitHub login for a deployed serve (:mod:`bot.dashboard.access`).

May import: the services' stores (``bot.sync``, ``bot.validation``, ``bot.l2``, ``bot.triage``),
``bot.store`` and ``bot.templating``. It never computes from git and never writes. What only the
App knows (the delivery queue, worker heartbeats) is passed in by whoever mounts it
(:mod:`bot.app.web`, ``forksync dashboard``).
"""
