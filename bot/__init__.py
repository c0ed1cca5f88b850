"""forksync: keeps a downstream fork in sync with a fast-moving upstream, one disposition per
upstream commit, and lets nothing land without deterministic validation.

One subpackage per concern; imports run one way (checked by import-linter, contracts in
``pyproject.toml``; the table is in docs/design.md): demo → cli → app → handlers → commands →
l2 | triage → validation → sync → git | github | plan | core | agents → config → model | store |
templating. ``fakegithub`` and ``fakeanthropic`` are the local servers the demo and tests use.
"""
