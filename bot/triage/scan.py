"""One pass over a failure output for every literal the signature code gates on (pure).

:func:`bot.triage.signature.signature_of` asks two questions of each text that are answered by
literal substrings: which extractors' prefilters it holds (:data:`bot.triage.extractors.EXTRACTORS`,
~40 literals) and which infrastructure anchors (:data:`bot.config.infra.INFRA_PATTERNS`, ~70
phrases). Tested one ``in`` at a time they cost a scan of the text each; an Aho-Corasick automaton
(``ahocorasick_rs``, compiled, a DFA) finds all of them in one pass. The answers are exactly those
of the ``in`` tests: a literal is reported when and only when it occurs
(``tests/triage/test_fast_paths.py`` compares both on the corpora and on random text). The same
pass also tells the Python and CUDA extractors which of their words
(:data:`bot.triage.extractors.SCANNED`) are there, so they look only for those.

Overlapping search reports every occurrence, so a long log full of one word would return a long
list: texts over :data:`SCAN_MAX` characters take the ``in`` tests instead (each stops at its first
occurrence).
"""
from __future__ import annotations

from functools import reduce
from operator import or_

from ahocorasick_rs import AhoCorasick, Implementation, MatchKind

from bot.config.infra import PHRASES as _INFRA
from bot.config.infra import anchor_hit
from bot.triage.extractors import EXTRACTORS, SCANNED
from bot.triage.infra import infra_hit as _long_infra_hit

__all__ = ["SCAN_MAX", "ALWAYS", "BITS", "LITERALS", "INFRA_INDEX", "scan", "extractor_bits", "infra_in", "infra_hit_of",
           "infra_hit", "infra_kind"]

#: longest text scanned with the automaton (a longer one takes the plain ``in`` tests)
SCAN_MAX = 8192

#: bitmask of the extractors whose prefilter holds the empty literal (tried on every text)
ALWAYS = 0
#: prefilter literal → bitmask of the extractors (index in EXTRACTORS) whose prefilter holds it
BITS: dict[str, int] = {}
for _k, (_name, _pre, _fn) in enumerate(EXTRACTORS):
    for _p in _pre:
        if _p:
            BITS[_p] = BITS.get(_p, 0) | (1 << _k)
        else:
            ALWAYS |= 1 << _k
#: infrastructure anchor → its index in the table (:data:`bot.config.infra.PHRASES`, table order)
INFRA_INDEX: dict[str, int] = {anchor: i for i, (_, anchor, _) in enumerate(_INFRA)}

#: every literal a scan reports
LITERALS = frozenset(BITS) | frozenset(INFRA_INDEX) | frozenset(SCANNED)
_INFRA_ANCHORS = frozenset(INFRA_INDEX)
#: every scanned literal → its extractor bitmask (0 for a literal no prefilter holds)
_BITS_OF = {**dict.fromkeys(LITERALS, 0), **BITS}.__getitem__
_AUTOMATON = AhoCorasick(sorted(LITERALS), matchkind=MatchKind.Standard,
                         implementation=Implementation.DFA)
#: ``scan(text, overlapping=True)`` → every occurrence of every literal of :data:`LITERALS`, as
#: the literal (repeats included, in the order of their ends)
scan = _AUTOMATON.find_matches_as_strings


def extractor_bits(found: list[str]) -> int:
    """The bitmask of the extractors whose prefilter holds one of the ``found`` literals (plus
    :data:`ALWAYS`): bit ``k`` set ⇔ ``any(p in text for p in EXTRACTORS[k][1])``."""
    return reduce(or_, map(_BITS_OF, found), ALWAYS)


def infra_in(found: list[str]) -> list[int]:
    """The sorted table indices of the infrastructure anchors among the ``found`` literals."""
    if _INFRA_ANCHORS.isdisjoint(found):
        return []
    get = INFRA_INDEX.get
    return sorted({i for i in map(get, found) if i is not None})


def infra_hit_of(text: str, anchors: list[int]) -> tuple[str, int] | None:
    """:func:`bot.config.infra.infra_hit` of ``text`` given the sorted table indices of the
    anchors it holds: the first anchor in table order that is there (its regex, if any,
    matching)."""
    for i in anchors:
        hit = anchor_hit(text, *_INFRA[i])
        if hit:
            return hit
    return None


def infra_hit(text: str) -> tuple[str, int] | None:
    """:func:`bot.config.infra.infra_hit` through one automaton pass (a text over
    :data:`SCAN_MAX` characters through the anchors' own automaton, :func:`bot.triage.infra.infra_hit`)."""
    if len(text) > SCAN_MAX:
        return _long_infra_hit(text)
    return infra_hit_of(text, infra_in(scan(text, overlapping=True)))


def infra_kind(text: str) -> str | None:
    """:func:`bot.config.infra.infra_kind` through :func:`infra_hit`."""
    hit = infra_hit(text)
    return hit[0] if hit else None
