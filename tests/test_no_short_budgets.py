"""No test leans on a wall-clock budget under one second (on a busy machine such a test fails
for no fault of the code); time-based behaviour is tested with an injected clock instead
(e.g. ``ManualTimeouts`` in tests/agents/test_client.py)."""
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
#: A timeout-like name or a wait_for/join/wait call given a literal below 1 s.
SHORT = re.compile(r"(?:\b\w*(?:timeout|deadline|budget)\w*\s*[=:]\s*|(?:wait_for\([^,()]+,|\.join\(|\.wait\()\s*(?:timeout\s*=\s*)?)"
                   r"0?\.\d+\b", re.IGNORECASE)


def test_no_wall_clock_budget_below_one_second():
    found = [f"{p.relative_to(TESTS)}:{n}: {line.strip()}"
             for p in sorted(TESTS.rglob("*.py")) if p.name != Path(__file__).name
             for n, line in enumerate(p.read_text().splitlines(), 1) if SHORT.search(line)]
    assert found == []


def test_the_pattern_finds_what_it_should():
    for bad in ("settings(timeout_s=0.2)", "fake.webhooks.timeout_s = 0.2", "await asyncio.wait_for(x, 0.5)",
                "t.join(timeout=0.1)", "ev.wait(0.3)"):
        assert SHORT.search(bad), bad
    for ok in ("timeout_s=1.0", "timeout_s=30", "await asyncio.sleep(0.01)", "base_delay_s=0.01"):
        assert not SHORT.search(ok), ok
