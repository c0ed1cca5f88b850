"""Infrastructure faults for triage: the shared table :data:`bot.config.infra.INFRA_PATTERNS`
(one table for the runner, bisection and triage) and its fast line lookup, used by the signature
extractors and, through signatures, by :mod:`bot.triage.classify`.

A text longer than :data:`LONG` (a log's tail) is searched for the table's anchors in one
Aho-Corasick pass (``ahocorasick-rs``, a triage dependency; ``bot.config`` stays importable without
it on a GPU machine) instead of once per anchor: the answer is the table's own
(:func:`bot.config.infra.infra_hit`), its cost no longer grows with the number of anchors."""
from __future__ import annotations

from ahocorasick_rs import AhoCorasick, Implementation, MatchKind

from bot.config.infra import INFRA_PATTERNS, PHRASES, anchor_hit, infra_match
from bot.config.infra import infra_hit as _table_infra_hit

__all__ = ["INFRA_PATTERNS", "LONG", "infra_kind", "infra_hit", "infra_match"]

#: texts up to this many characters take the table's lookup (its gate keys settle a short text at once)
LONG = 4096
#: anchor → its index in the table (table order decides between two phrases)
_INDEX: dict[str, int] = {anchor: i for i, (_, anchor, _) in enumerate(PHRASES)}
_ANCHORS = AhoCorasick(sorted(_INDEX), matchkind=MatchKind.Standard, implementation=Implementation.DFA)


def infra_hit(text: str) -> tuple[str, int] | None:
    """``(kind, offset of the phrase)`` of the first :data:`INFRA_PATTERNS` phrase in ``text`` in the
    table's order, or None: :func:`bot.config.infra.infra_hit`'s answer."""
    if len(text) <= LONG:
        return _table_infra_hit(text)
    # (overlapping: an anchor inside another, "Xid" in "Xid (PCI:", is found too)
    found = _ANCHORS.find_matches_as_strings(text, overlapping=True)
    if not found:
        return None
    for i in sorted({_INDEX[a] for a in found}):
        kind, anchor, rx = PHRASES[i]
        hit = anchor_hit(text, kind, anchor, rx)
        if hit:
            return hit
    return None


def infra_kind(text: str) -> str | None:
    """The infrastructure kind named in ``text`` (see :data:`INFRA_PATTERNS`), or None."""
    hit = infra_hit(text)
    return hit[0] if hit else None
