"""``forksync demo``: a realistic upstream/fork pair built in a scratch folder, then forksync end
to end on it — locally, on the local GitHub, and a triaged nightly.

May import: anything, including the local GitHub and Anthropic servers. Imported by: nothing
but the CLI's command table.
"""
