"""How texts name the model behind an agent's answer: a configured model by its name, the scripted
local model (demo, tests) as what it is."""
from __future__ import annotations

import pytest

from bot.agents.render import agent_label, render
from bot.config.agents import SCRIPTED_MODEL


@pytest.mark.parametrize("model, want", [
    ("claude-sonnet-4-6", "`claude-sonnet-4-6`"),
    ("claude-opus-4-7", "`claude-opus-4-7`"),
    (SCRIPTED_MODEL, "scripted local model, not a real LLM"),
    ("", "model not named"),
])
def test_agent_label(model, want):
    assert agent_label(model) == want


@pytest.mark.parametrize("template, data, line", [
    ("proposed_fix.md.j2", {"status": "proposed", "confidence": "high", "diagnosis": "d", "patch": "", "sanitized_notes": []},
     "An agent ({}) read this issue's signature group, the redacted logs and the suspect diffs. Confidence: **high**."),
    ("conflict_report.md.j2", {"status": "rejected", "upstream_sha": "a" * 40, "paths": ["x.py"], "rail": "r", "detail": "d",
                               "sanitized_notes": []},
     f"The pick of upstream {'a' * 40} conflicted in 1 file(s) (x.py). An agent ({{}}) proposed a resolution, and the rails "
     "**rejected** it: nothing was committed."),
    ("test_summary.md.j2", {"title": "", "verdict": "", "counts": {"passed": 3}, "failing": [], "more_failing": 0,
                            "summary": "all good", "sanitized_notes": [], "reason": ""},
     "**Agent summary** ({}; counts above are computed by forksync, not by the agent): all good"),
])
@pytest.mark.parametrize("model, shown", [("claude-sonnet-4-6", "`claude-sonnet-4-6`"),
                                          (SCRIPTED_MODEL, "scripted local model, not a real LLM")])
def test_every_agent_text_names_its_model(template, data, line, model, shown):
    assert line.format(shown) in render(template, model=model, **data).splitlines()
