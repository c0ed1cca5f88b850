"""The pure core: what happened to each upstream commit and where the fork stands.

Owns provenance (trailers, citations, patch-ids → claims), the ledger (one disposition per
upstream commit, with its evidence), pins (frontier, contiguous pin, Days Behind Upstream,
Backlog Commits), what a fork that syncs by merging upstream holds (:mod:`bot.core.merged`),
the ``/forksync`` command parser, the conflict-marker rule with the
``Forksync-Conflict:`` trailer (:mod:`bot.core.markers`), and GitHub logins compared as GitHub
does, case-insensitively (:mod:`bot.core.logins`: the bot's own login against an author's, areas'
owners against reviewers and commenters). Pure functions over plain data, tested
with tables; no git, SQLite, network or templates.

May import: config, model. Imported by: everything above it (the edges too: git applies the
marker rule to blobs).
"""
