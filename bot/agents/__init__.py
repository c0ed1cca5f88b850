"""LLM agents behind deterministic rails (see docs/agents.md).

* :mod:`bot.agents.client` — the one door to the Anthropic API (budget, retries, timeouts, redaction);
* :mod:`bot.agents.conflict` — conflict resolution for chain picks (rails in
  :mod:`bot.agents.conflict_rails`, git side in :mod:`bot.agents.conflict_git`);
* :mod:`bot.agents.fix` — proposed fixes on triage issues; :mod:`bot.agents.summary` — test-result summaries;
* :mod:`bot.agents.redact` (input rail), :mod:`bot.agents.textrails` (output rails),
  :mod:`bot.agents.policy` (draft/approval requirements for agent-resolved commits).

Agents propose; nothing in this package merges, approves or pushes.

May import: config, store (and anthropic). Imported by: sync, triage, cli.
"""
