"""The fast paths of the signature code give exactly what the plain forms they replace give.

Each plain form (the straightforward loop or regex the fast path was derived from) is kept here
only, and compared on the labelled texts' lines and on random text built from the pieces the
fast path looks for (hypothesis).
"""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config import infra
from bot.triage import normalize

DATA = Path(__file__).resolve().parents[1] / "data" / "triage"


def _corpus_texts() -> list[str]:
    out = []
    for name in ("labelled", "holdout"):
        for line in (DATA / f"{name}.jsonl").read_text().splitlines():
            if line.strip():
                out.append(json.loads(line)["text"])
    return out


TEXTS = _corpus_texts()
LINES = sorted({line for t in TEXTS for line in t.split("\n")})


def _pieces(words) -> st.SearchStrategy[str]:
    """Text made of the given words, corpus lines, and random characters around them."""
    noise = st.text(alphabet=st.sampled_from(list(" \t\n:=-+./()[]'\"_#xX09aAeE\u00e9")), max_size=6)
    part = st.one_of(st.sampled_from(list(words)), st.sampled_from(LINES), noise, st.text(max_size=8))
    return st.lists(part, max_size=12).map("".join)


# --------------------------------------------------------------------------- infrastructure phrases
def _plain_infra_hit(text: str):
    """Every anchor in table order; the first that is there (its regex matching) wins."""
    for kind, anchor, rx in infra._INFRA:
        if anchor in text:
            if rx is None:
                return kind, text.find(anchor)
            m = rx.search(text)
            if m:
                return kind, m.start()
    return None


_INFRA_WORDS = [a for _, a, _ in infra._INFRA] + list(infra._GATE_KEYS) + [
    "CUDA out of memory. Process 12 has 3.5 GiB memory in use", "exit code 137", "signal 9", "\nKilled\n",
    "curl: (7)", "memory", "Killed"]


def test_infra_hit_corpus():
    for text in TEXTS + LINES:
        assert infra.infra_hit(text) == _plain_infra_hit(text), text


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pieces(_INFRA_WORDS))
def test_infra_hit_random(text):
    assert infra.infra_hit(text) == _plain_infra_hit(text)


# --------------------------------------------------------------------------- log prefixes
def _plain_strip_prefixes(line: str) -> str:
    m = normalize._PREFIX.match(line)
    return (line[m.end():] if m else line).strip()


_PREFIX_PIECES = ["2026-11-30T01:02:03.123Z ", "stderr F ", "[2026-11-30 01:02:03] ", "01:02:03 ", "[01:02:03] ",
                  "I1130 01:02:03.123456 123 file.py:533] [0/0] ", "(pid=12) ", "(Worker pid=12, ip=1.2.3.4) ",
                  "[rank0]: ", "ERROR 01-28 01:02:03 x.py:12] ", "##[error]", "E   ", "E", "# | ", "> ", "\u0661\u0662",
                  "\u00b2", "ValueError: x", "\t", " "]


def test_strip_prefixes_corpus():
    for line in LINES:
        assert normalize.strip_prefixes(line) == _plain_strip_prefixes(line), line


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pieces(_PREFIX_PIECES))
def test_strip_prefixes_random(line):
    assert normalize.strip_prefixes(line) == _plain_strip_prefixes(line)
