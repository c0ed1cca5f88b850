"""The plan helper's task protocol, shared by the planner's side and the helper process.

Kept apart from :mod:`bot.plan.predict` so that the helper's ``spawn`` child can import its entry
point (:mod:`bot.plan.helper`) without loading git and the store before it starts reading hints.
"""
from __future__ import annotations


class _Miss:
    def __repr__(self) -> str:
        return "MISS"


#: A plan helper's answer (:meth:`bot.plan.helper.PlanHelper.take`) when the caller must compute
#: the task itself.
MISS = _Miss()
