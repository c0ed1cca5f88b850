"""The builders of the wholly held-out triage sets (``make_fresh.py``, ``make_fresh2.py``,
``make_fresh3.py`` … ``make_fresh8.py``): the list of real excerpts a builder fills with :func:`add`-style calls, and
the two log shapes each real excerpt is also put through — the same two ``make_wild.py`` applies,
kept here so the frozen files never change with that one (each set's test checks its builder still
reproduces its file byte for byte)."""
from __future__ import annotations

import json
from pathlib import Path


class HeldOutSet:
    """One set's real excerpts, ``(fault, source, test, why, text)`` in the order added."""

    def __init__(self) -> None:
        self.F: list[tuple[str, str, str, str, str]] = []

    def add(self, fault: str, source: str, test: str, why: str, *texts: str) -> None:
        for t in texts:
            self.F.append((fault, source, test, why, t))

    def records(self) -> list[dict]:
        return records(self.F)

    def write(self, path: Path) -> None:
        recs = self.records()
        path.write_text(render(recs))
        real = [r for r in recs if r["shape"] == "real"]
        print(f"wrote {len(recs)} records ({len(real)} real), {len({r['fault'] for r in recs})} faults, "
              f"{len({r['source'] for r in recs})} sources")


def pytest_summary(test: str, text: str, width: int = 120) -> str | None:
    """The summary line pytest prints for a failed test whose output is ``text``: ``FAILED <test> - <Type>: <msg>``,
    cut at the terminal width with ``...`` as pytest (``_get_line_with_reprcrash_message``) does. None when the text
    has no exception line."""
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    exc = [ln for ln in lines if ": " in ln and ln.split(":", 1)[0].replace(".", "").replace("_", "").isalnum()
           and ln.split(":", 1)[0].rsplit(".", 1)[-1][:1].isupper()]
    if not exc or test.startswith("job:"):
        return None
    msg = exc[-1]
    line = f"FAILED {test} - {msg}"
    if len(line) > width:
        line = line[: width - 3] + "..."
    return line


def ci_timestamps(text: str, i: int) -> str:
    ts = f"2026-11-{10 + i % 18:02d}T0{i % 9}:{13 + i % 47:02d}:{(7 * i) % 60:02d}.{1234567 + 31 * i}Z"
    return "\n".join(f"{ts} {line}" for line in text.split("\n"))


def records(F) -> list[dict]:
    out = []
    for n, (fault, source, test, why, text) in enumerate(F):
        base = {"fault": fault, "source": source, "test": test, "why": why}
        out.append({"id": f"{fault}-{n}", **base, "shape": "real", "text": text})
        s = pytest_summary(test, text)
        if s and s not in text:
            out.append({"id": f"{fault}-{n}-summary", **base, "shape": "derived-pytest-summary", "text": s})
        if "T0" not in text[:30]:
            out.append({"id": f"{fault}-{n}-ci", **base, "shape": "derived-ci-timestamps", "text": ci_timestamps(text, n)})
    return out


def render(recs: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)
