"""``fresh2.jsonl`` (``tests/data/triage/make_fresh2.py``): its structure only. The file was wholly
held out for one measurement of version 4; since signature version 5 it is tuning data
(``tests/triage/test_signature_general.py`` reads its texts; ``bench/bench_triage.py --fresh2``
reports the figures)."""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "triage"
FIELDS = {"id", "fault", "source", "test", "shape", "why", "text"}


def _load(name: str) -> list[dict]:
    return [json.loads(x) for x in (DATA / name).read_text().splitlines() if x.strip()]


def _records() -> list[dict]:
    return _load("fresh2.jsonl")


def _builder():
    spec = importlib.util.spec_from_file_location("make_fresh2", DATA / "make_fresh2.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_records_have_provenance_label_and_text():
    recs = _records()
    assert recs
    for r in recs:
        assert set(r) == FIELDS, r.get("id")
        assert all(isinstance(r[k], str) and r[k].strip() for k in FIELDS), r["id"]
        assert re.fullmatch(r"[\w.-]+/[\w.-]+#\d+", r["source"]), r["source"]
        assert r["shape"] in {"real", "derived-pytest-summary", "derived-ci-timestamps"}
    assert len({r["id"] for r in recs}) == len(recs)
    # every derived text comes with the real excerpt of its report and the same label
    real = {(r["source"], r["fault"]) for r in recs if r["shape"] == "real"}
    assert {(r["source"], r["fault"]) for r in recs} == real
    # one report, one root cause
    by_source: dict[str, set[str]] = {}
    for r in recs:
        by_source.setdefault(r["source"], set()).add(r["fault"])
    assert all(len(f) == 1 for f in by_source.values())


def test_several_root_causes_span_several_reports():
    reports: dict[str, set[str]] = {}
    for r in _records():
        reports.setdefault(r["fault"], set()).add(r["source"])
    assert sum(len(s) >= 2 for s in reports.values()) >= 8


def test_no_report_of_wild_or_fresh():
    mine = {r["source"] for r in _records()}
    for other in ("wild.jsonl", "fresh.jsonl"):
        assert not mine & {r["source"] for r in _load(other)}, other


def test_builder_reproduces_the_file_byte_for_byte():
    mod = _builder()
    assert mod.render(mod.records()) == (DATA / "fresh2.jsonl").read_text()
