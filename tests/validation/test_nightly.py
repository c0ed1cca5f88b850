"""The nightly silence alarm."""
from __future__ import annotations

from bot.config.forksync import parse_config_text
from bot.validation.nightly import MissingResult, expected_pairs, missing_nightly, render_alarm

CFG = parse_config_text("""
suites:
  - {name: kernels, command: x, report: {format: junit, path: r}, min_tests: 1, platforms: [cpu, h200]}
  - {name: opt, command: x, report: {format: junit, path: r}, min_tests: 1, required: false}
  - {name: sweep, level: L2, command: x, report: {format: benchmark-json, path: r}}
""")
S = "c" * 40


def test_missing_nightly():
    exp = expected_pairs(CFG.suites)
    assert exp == (("kernels", "cpu"), ("kernels", "h200"))
    assert missing_nightly(exp, S, 1000, {}, now=1000 + 3599, deadline_s=3600) == ()
    got = missing_nightly(exp, S, 1000, {("kernels", "cpu"): 2000, ("kernels", "h200"): 500}, now=1000 + 7200,
                          deadline_s=3600)
    assert got == (MissingResult("kernels", "h200", S, 1000, 7200),)
    body = render_alarm(got)
    assert body.startswith("## Nightly L1 results never arrived\n")
    assert "| `kernels` | h200 | 2.0 h |" in body
