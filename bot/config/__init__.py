"""``forksync.yml``: the typed configuration (pydantic models per section: upstream/fork,
provenance, areas, suites, github, triage, agents), its loader with file/line/key errors, and the
generator of docs/config-reference.md.

May import: nothing of the project (pydantic, yaml). Imported by: everything above it.
"""
