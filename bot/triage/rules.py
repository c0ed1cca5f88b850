"""The rules table: human-editable patterns that map signatures to tracked root causes (pure,
except :func:`load_rules` which reads the file that ``triage.rules`` may name).

An issue's identity is its rule's ``id``, not a hash of the signature: when the normaliser
improves and a signature's text changes, the rule still matches and the issue is found again.
Signatures no rule matches are grouped by their own key (``sig-<digest>``) and get a
:func:`suggest_rule` a maintainer can paste into the table.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import yaml
from pydantic import ValidationError

from bot.config.triage import TriageRule, TriageSettings
from bot.triage.signature import Signature

__all__ = ["RulesTable", "RulesError", "load_rules", "suggest_rule"]


class RulesError(ValueError):
    """A rules file that cannot be used (names the file, the rule's index and the field)."""


def load_rules(path: str | Path) -> list[TriageRule]:
    """Read a YAML rules file: a list of rules, or a mapping with a ``rules:`` list.
    Raises :class:`RulesError` naming the file, the rule's index and the bad field."""
    p = Path(path)
    if not p.is_file():
        raise RulesError(f"{p}: rules file not found (triage.rules names it; give a path relative "
                         f"to forksync.yml, or list the rules inline)")
    try:
        data = yaml.safe_load(p.read_text())
    except yaml.YAMLError as e:
        raise RulesError(f"{p}: not valid YAML: {e}") from None
    if isinstance(data, dict):
        data = data.get("rules", None)
    if data is None:
        return []
    if not isinstance(data, list):
        raise RulesError(f"{p}: expected a list of rules (or 'rules:' holding one), not {type(data).__name__}")
    rules: list[TriageRule] = []
    seen: set[str] = set()
    for i, item in enumerate(data):
        try:
            r = TriageRule.model_validate(item)
        except ValidationError as e:
            where = "; ".join(f"{'.'.join(map(str, x['loc'])) or '<rule>'}: {x['msg']}" for x in e.errors())
            raise RulesError(f"{p}: rule {i}: {where}") from None
        if r.id in seen:
            raise RulesError(f"{p}: rule {i}: id {r.id!r} is used twice")
        seen.add(r.id)
        rules.append(r)
    return rules


@dataclass
class RulesTable:
    """Ordered rules; the first that matches a signature wins. Matching is cached per signature key."""

    rules: tuple[TriageRule, ...] = ()

    def __post_init__(self) -> None:
        self.rules = tuple(self.rules)
        self._compiled = tuple((r, re.compile(r.pattern)) for r in self.rules)
        self._cache: dict[str, TriageRule | None] = {}

    @classmethod
    def from_settings(cls, settings: TriageSettings, base_dir: str | Path = ".") -> "RulesTable":
        rules = settings.rules
        if isinstance(rules, str):
            p = Path(rules)
            rules = load_rules(p if p.is_absolute() else Path(base_dir) / p)
        return cls(tuple(rules))

    def match(self, sig: Signature) -> TriageRule | None:
        k = sig.key
        if k in self._cache:
            return self._cache[k]
        found = None
        text = sig.text
        for r, rx in self._compiled:
            if r.type and r.type not in sig.type:
                continue
            if r.stage and r.stage != sig.stage:
                continue
            if rx.search(text):
                found = r
                break
        if len(self._cache) > 100_000:
            self._cache.clear()
        self._cache[k] = found
        return found

    def group_id(self, sig: Signature) -> str:
        """The tracked root cause: the matching rule's id, else ``sig-<12 hex of the key>``."""
        r = self.match(sig)
        return r.id if r else f"sig-{sig.digest}"

    def unmatched(self, sigs: Iterable[Signature]) -> list[Signature]:
        seen: dict[str, Signature] = {}
        for s in sigs:
            if self.match(s) is None:
                seen.setdefault(s.key, s)
        return list(seen.values())


_PLACEHOLDER = re.compile(r"<(?:n|hex|id|tmp|time|pid|pos|L|f|i|pct)>")
_SLUG = re.compile(r"[^a-z0-9]+")
_SPECIAL = re.compile(r"([\\.^$*+?{}\[\]|()])")


def _escape(text: str) -> str:
    """``re.escape`` for the characters that are special in a pattern only (readable rules)."""
    return _SPECIAL.sub(r"\\\1", text)


def suggest_rule(sig: Signature, taken: Sequence[str] = ()) -> dict:
    """A rule a maintainer can paste into the table for an unmatched signature:
    ``{"id", "title", "pattern", "type", "stage"}``. The pattern is the masked line, escaped,
    with mask placeholders widened to ``.+?`` and cut at 100 characters, so it keeps matching
    when the normaliser changes what it masks."""
    line = sig.line[:100]
    parts = _PLACEHOLDER.split(line)
    pattern = ".+?".join(_escape(p) for p in parts)
    words = _SLUG.sub("-", f"{sig.type} {sig.line}".lower()).strip("-").split("-")
    base = "-".join(w for w in words if w and not w.isdigit())[:48].strip("-") or f"sig-{sig.digest}"
    rid, n = base, 2
    while rid in taken:
        rid, n = f"{base}-{n}", n + 1
    return {"id": rid, "title": f"{sig.type}: {sig.line[:80]}", "pattern": pattern,
            "type": sig.type, "stage": sig.stage}
