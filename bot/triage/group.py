"""Grouping: failure records → signature groups, one per tracked root cause (pure).

:class:`Grouper` caches signatures by output text (a nightly repeats the same output across
parametrizations, platforms and retries), matches the rules table once per signature, and
classifies each record. A :class:`Group` is the plain data the issue lifecycle, the suspects
ranking and the agents (``bot.agents.fix.FixRequest.from_group``) read.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

from bot.agents.redact import redact
from bot.config.triage import TriageRule
from bot.triage.classify import FLAKY, INFRA, REAL, flaky_keys, record_class
from bot.triage.records import FailureRecord
from bot.triage.rules import RulesTable
from bot.triage.signature import Signature, locate, signature_of

__all__ = ["Grouper", "Group"]

#: the longest secret looked for around a sample's cut (tokens, keys and JWTs are far shorter)
_SECRET_MAX = 4096


@dataclass
class Group:
    """Failures of one root cause in one batch of records (a nightly, or a file of logs).

    ``id``: the rule id or ``sig-<digest>``; ``cls``: real | flaky | infrastructure (real when
    any record is real); ``signature``: the first record's; ``rule``: the matching rule or None.
    """

    id: str
    cls: str
    signature: Signature
    rule: TriageRule | None
    records: list[FailureRecord] = field(default_factory=list)

    @property
    def title(self) -> str:
        """The fault in words: the rule's title, else the primary line as the log wrote it
        (unmasked: masking is for identity, and a title must not lose words to it)."""
        if self.rule is not None and self.rule.title:
            return self.rule.title
        s = self.signature
        line = s.line if s.type == "Infrastructure" else " ".join((s.raw or s.line).split())
        if s.type.lower() in line[:60].lower():
            return line[:120]
        return f"{s.type}: {line}"[:120]

    @property
    def cases(self) -> tuple[str, ...]:
        """The failing test cases, parametrization kept (``k.py::test_dot[64-fp16]``)."""
        return tuple(sorted({r.case for r in self.records}))

    @property
    def tests(self) -> tuple[str, ...]:
        return tuple(sorted({r.test for r in self.records}))

    @property
    def platforms(self) -> tuple[str, ...]:
        return tuple(sorted({r.platform for r in self.records if r.platform}))

    @property
    def runs(self) -> tuple[str, ...]:
        return tuple(sorted({r.run for r in self.records if r.run}))

    @property
    def crash(self) -> bool:
        return self.signature.crash

    def logs(self, n: int = 3, chars: int = 4000) -> tuple[str, ...]:
        """Up to ``n`` distinct outputs, each cut to its last ``chars`` characters and redacted
        (secrets, e-mails, home-folder user names: ``bot.agents.redact``)."""
        out: list[str] = []
        seen: set[str] = set()
        for r in self.records:
            text = r.output
            if text in seen:
                continue
            seen.add(text)
            # redacted before the cut: a secret the window starts inside would no longer be
            # recognisable by its shape (a token without its ``ghp_`` prefix)
            out.append(redact(text[-(chars + _SECRET_MAX):])[-chars:])
            if len(out) >= n:
                break
        return tuple(out)

    def to_agent_input(self, suspects: Sequence = ()) -> dict:
        """What the proposed-fix agent needs, as plain data (``FixRequest.from_group`` reads it):
        ``{"group", "signature", "class", "tests", "logs", "suspects"}``."""
        return {"group": self.id, "signature": self.signature, "class": self.cls,
                "tests": self.tests, "logs": self.logs(), "suspects": tuple(suspects)}


class Grouper:
    """Signatures (cached by text), rule matching and classification for batches of records."""

    def __init__(self, table: RulesTable | None = None, cache_size: int = 65_536):
        self.table = table or RulesTable()
        self.cache_size = cache_size
        self._cache: dict[str, Signature] = {}

    def signature(self, text: str, test: str = "") -> Signature:
        """``signature_of(text, test)``, cached by ``text`` (the test is added where it counts)."""
        sig = self._cache.get(text)
        if sig is None:
            sig = signature_of(text, "", locate_generic=False)
            if len(self._cache) >= self.cache_size:
                self._cache.clear()
            self._cache[text] = sig
        if sig.generic:
            # the test joins a generic signature; without one, where in the code it failed
            sig = replace(sig, test=test) if test else replace(sig, where=locate(text))
        return sig

    def group(self, records: Iterable[FailureRecord]) -> list[Group]:
        """Groups of the failed records, most records first. Passed records only serve the
        flakiness check (same test passed and failed on one commit). A partial signature (a
        message cut off by pytest's summary) joins the one group whose signature it starts, when
        there is exactly one (see :func:`_join_partial`); otherwise it stays on its own."""
        records = list(records)
        flaky = flaky_keys(records)
        groups: dict[str, Group] = {}
        partial: list[tuple[FailureRecord, Signature]] = []
        for r in records:
            if not r.failed:
                continue
            sig = self.signature(r.output, r.test)
            if sig.partial:
                partial.append((r, sig))
                continue
            self._add(groups, r, sig, flaky)
        for r, sig in partial:
            g = _join_partial(groups, r, sig)
            if g is None:
                self._add(groups, r, sig, flaky)
            else:
                cls = record_class(r, g.signature, g.rule, flaky)
                if cls == REAL or (cls == FLAKY and g.cls == INFRA):
                    g.cls = cls
                g.records.append(r)
        return sorted(groups.values(), key=lambda g: (-len(g.records), g.id))

    def _add(self, groups: dict[str, Group], r: FailureRecord, sig: Signature, flaky) -> None:
        rule = self.table.match(sig)
        gid = rule.id if rule else f"sig-{sig.digest}"
        cls = record_class(r, sig, rule, flaky)
        g = groups.get(gid)
        if g is None:
            g = groups[gid] = Group(gid, cls, sig, rule)
        elif cls == REAL or (cls == FLAKY and g.cls == INFRA):
            g.cls = cls
        g.records.append(r)


def _join_partial(groups: dict[str, Group], r: FailureRecord, sig: Signature) -> Group | None:
    """The one group of full signatures that ``sig`` (a cut-off message) starts: same type, its
    identity a prefix of the group's, the same test where the group's signature is generic, and
    — for a prefix too short to name anything — a group that holds this very test. None when no
    group, or more than one, qualifies: a prefix that fits two faults joins neither."""
    found = None
    for g in groups.values():
        s = g.signature
        if s.partial or s.type != sig.type or not (s.ident or s.line).startswith(sig.ident):
            continue
        if s.generic and s.test != r.test:
            continue
        if len(sig.ident) < 16 and r.test not in g.tests:
            continue
        if found is not None:
            return None
        found = g
    return found
