"""Agent output on its way to a template: every agent-written string goes through :func:`Cleaner.text`
(the output rails of :mod:`bot.agents.textrails`, with limits from ``agents:`` settings)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.agents.conflict_rails import RailViolation
from bot.agents.redact import Redactor
from bot.agents.textrails import sanitize
from bot.config.agents import AgentSettings

_LINK = re.compile(r"https?://", re.IGNORECASE)


@dataclass
class Cleaner:
    """Sanitises many fields of one agent answer with one link/mention allowance, and collects
    what the rails changed (``notes``) for the template."""

    settings: AgentSettings
    redactor: Redactor = field(default_factory=Redactor)
    allowed_mentions: tuple[str, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    _links_left: int | None = None
    _mentions_left: int | None = None

    def text(self, s: str, max_chars: int | None = None) -> str:
        if self._links_left is None:
            self._links_left, self._mentions_left = self.settings.max_links, self.settings.max_mentions
        out = sanitize(s, allowed_hosts=self.settings.allowed_link_hosts, max_links=self._links_left,
                       max_mentions=self._mentions_left, allowed_mentions=self.allowed_mentions,
                       max_chars=max_chars or self.settings.max_text_chars, redactor=self.redactor)
        self._links_left = max(0, self._links_left - len(_LINK.findall(out.text)))
        self._mentions_left = max(0, self._mentions_left - out.mentions_kept)
        for k in ("secrets_redacted", "html_removed", "links_removed", "mentions_neutralised",
                  "closing_keywords_neutralised", "decorators_neutralised"):
            self.counts[k] = self.counts.get(k, 0) + getattr(out, k)
        # Decorator-like names (``@triton.jit``) are neutralised too, but reported apart: writing
        # one is not an attempt to ping anybody.
        self.counts["mentions_neutralised"] -= out.decorators_neutralised
        if out.truncated:
            self.counts["truncated"] = self.counts.get("truncated", 0) + 1
        return out.text

    def secret_free(self, s: str) -> str:
        """Only redaction (for code such as a patch, shown in a fence where mentions and HTML are inert)."""
        before = sum(self.redactor.counts.values())
        out = self.redactor.redact(s or "", source="agent-output")
        self.counts["secrets_redacted"] = self.counts.get("secrets_redacted", 0) + sum(self.redactor.counts.values()) - before
        return out

    @property
    def acted(self) -> list[str]:
        """Notes of what the rails had to change, truncation excepted: a non-empty list means the
        agent tried to leak a secret, ping people, link out or inject HTML (it obeyed its data)."""
        return [n for n in self.notes if "truncated" not in n and "decorator" not in n]

    @property
    def notes(self) -> list[str]:
        c = self.counts
        labels = [("secrets_redacted", "secret value(s) redacted"), ("html_removed", "HTML tag(s)/comment(s) removed"),
                  ("links_removed", "link(s) removed"), ("mentions_neutralised", "@-mention(s) neutralised"),
                  ("closing_keywords_neutralised", "issue-closing keyword(s) neutralised"),
                  ("decorators_neutralised", "decorator-like @name(s) neutralised"),
                  ("truncated", "text field(s) truncated")]
        return [f"{c[k]} {label}" for k, label in labels if c.get(k)]


def check_prose(settings: AgentSettings, texts, allowed_mentions: tuple[str, ...] = ()) -> None:
    """Rail "prose within limits": when ``agents.reject_on_sanitize`` is set, agent prose the
    output rails had to change (secrets, mentions past the allowance, links, HTML, closing
    keywords) rejects the whole answer. Raises :class:`RailViolation`."""
    if not settings.reject_on_sanitize:
        return
    probe = Cleaner(settings, allowed_mentions=allowed_mentions)
    for t in texts:
        probe.text(t, 100_000)
    if probe.acted:
        raise RailViolation("prose within limits", "the agent's text needed: " + "; ".join(probe.acted))
