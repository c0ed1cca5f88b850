"""Infrastructure faults for triage: the shared table :data:`bot.config.infra.INFRA_PATTERNS`
(one table for the runner, bisection and triage) and its fast line lookup, used by the signature
extractors and, through signatures, by :mod:`bot.triage.classify`."""
from __future__ import annotations

from bot.config.infra import INFRA_PATTERNS, infra_hit, infra_kind, infra_match

__all__ = ["INFRA_PATTERNS", "infra_kind", "infra_hit", "infra_match"]
