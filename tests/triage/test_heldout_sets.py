"""The wholly held-out triage sets ``fresh.jsonl`` … ``fresh10.jsonl``
(``tests/data/triage/make_fresh*.py``, shapes in ``heldout_set.py``): their structure only. No test
here reads a signature or a grouping figure from them (``bench/bench_triage.py --fresh``,
``--fresh2`` … ``--fresh10`` report those). ``fresh.jsonl`` is tuning data since signature version 4
(``test_signature_toolchain.py`` reads its texts), ``fresh2.jsonl`` since version 5
(``test_signature_general.py``); ``fresh3.jsonl`` was held out for one measurement (of version 5) and
``fresh4.jsonl`` for one (of version 6), ``fresh5.jsonl`` for one (of versions 6 and 7) and
``fresh6.jsonl`` for one (of versions 7 and 8), ``fresh7.jsonl`` for one (of versions 8 and 9; tuning data
since version 10), ``fresh8.jsonl`` for one (of versions 9 and 10; since 11) and ``fresh9.jsonl`` for one (of
versions 10 and 11; since 12); ``fresh10.jsonl`` is held out (measured on versions 11 and 12, docs/triage.md).
``fresh10.jsonl``'s records also carry ``kind``: ``known`` (a fault
kind an older set's labels name) or ``new``."""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "triage"
FIELDS = {"id", "fault", "source", "test", "shape", "why", "text"}
#: each set, in the order they were collected: none may hold a report of a set before it
SETS = ("fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "fresh10")
#: fields a set's records carry beyond ``FIELDS``
EXTRA_FIELDS = {"fresh10": {"kind"}}
OLDER = ("wild.jsonl", "labelled.jsonl", "holdout.jsonl")
#: reports of ``fresh.jsonl`` whose texts ``labelled.jsonl`` already quotes (found by its links after
#: fresh's one held-out measurement; docs/triage.md says so): no more may appear
SEEN_BEFORE = {"fresh": {"triton-lang/triton#10256", "pytorch/helion#867", "facebookresearch/blt#124",
                         "triton-lang/triton#5017"}}


def _load(name: str) -> list[dict]:
    return [json.loads(x) for x in (DATA / name).read_text().splitlines() if x.strip()]


def _builder(name: str):
    spec = importlib.util.spec_from_file_location(f"make_{name}", DATA / f"make_{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", SETS)
def test_records_have_provenance_label_and_text(name):
    recs = _load(f"{name}.jsonl")
    assert recs
    for r in recs:
        assert set(r) == FIELDS | EXTRA_FIELDS.get(name, set()), r.get("id")
        assert all(isinstance(r[k], str) and r[k].strip() for k in set(r)), r["id"]
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


@pytest.mark.parametrize("name", SETS)
def test_several_root_causes_span_several_reports(name):
    """What grouping is tested on: one cause in several reports' wordings."""
    reports: dict[str, set[str]] = {}
    for r in _load(f"{name}.jsonl"):
        reports.setdefault(r["fault"], set()).add(r["source"])
    assert sum(len(s) >= 2 for s in reports.values()) >= 8


@pytest.mark.parametrize("name", SETS)
def test_no_report_of_an_earlier_set(name):
    mine = {r["source"] for r in _load(f"{name}.jsonl")}
    for other in (*OLDER, *(f"{s}.jsonl" for s in SETS[:SETS.index(name)])):
        recs = _load(other)
        assert not mine & {r["source"] for r in recs if "source" in r}, other
        # an issue link inside another set's source or text names the report too
        blob = "\n".join(r.get("source", "") + "\n" + r["text"] for r in recs)
        for s in mine - SEEN_BEFORE.get(name, set()):
            repo, n = s.split("#")
            assert not re.search(rf"{re.escape(repo)}/(?:issues|pull)/{n}(?!\d)", blob), (other, s)


@pytest.mark.parametrize("name", SETS)
def test_builder_reproduces_the_file_byte_for_byte(name):
    mod = _builder(name)
    assert mod.render(mod.records()) == (DATA / f"{name}.jsonl").read_text()


def test_fresh10_kinds_are_known_or_new_per_label():
    """``kind`` says whether an older set's labels name the fault's kind; it is the label's, so one
    label is one kind, and both parts hold several reports (what ``--fresh10`` prints per part)."""
    recs = _load("fresh10.jsonl")
    by_fault: dict[str, set[str]] = {}
    for r in recs:
        by_fault.setdefault(r["fault"], set()).add(r["kind"])
    assert all(len(k) == 1 for k in by_fault.values())
    assert {r["kind"] for r in recs} == {"known", "new"}
    reports = {kind: {r["source"] for r in recs if r["kind"] == kind} for kind in ("known", "new")}
    assert len(reports["known"]) == 42 and len(reports["new"]) == 28
    # the builder's KNOWN set is the labels marked known, no more
    assert _builder("fresh10").KNOWN == {f for f, k in by_fault.items() if k == {"known"}}
    # none of the new kinds reuses a label an older set has: a known kind's label may, a new one's not
    older = {r["fault"] for name in (*OLDER, *(f"{s}.jsonl" for s in SETS[:-1])) for r in _load(name) if "fault" in r}
    assert not {f for f, k in by_fault.items() if k == {"new"}} & older
