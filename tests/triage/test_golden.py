"""Golden signatures: the exact signature of every record of the labelled and holdout sets, as
written and as it sits after 300 lines of build log, pinned in ``signatures.golden.jsonl``.

Speed work on :mod:`bot.triage.signature` / ``normalize`` / ``extractors`` / ``infra`` must keep
these byte for byte. A deliberate change of the normaliser rewrites the file:

    .venv/bin/python tests/triage/test_golden.py --write

and the diff of the golden file is then the review of what changed.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "triage"
GOLDEN = DATA / "signatures.golden.jsonl"
#: the build log the bench (bench/bench_triage.py) puts in front of each text
NOISE = "\n".join(f"2026-11-30T01:02:{i % 60:02d}.123Z [{i}/2890] Building CXX object "
                  f"lib/Dialect/TritonGPU/Transforms/CMakeFiles/F{i}.cpp.o" for i in range(300))


def _rows():
    from bot.triage.records import normalize_test_id
    from bot.triage.signature import signature_of

    for name in ("labelled", "holdout"):
        for line in (DATA / f"{name}.jsonl").read_text().splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            test = normalize_test_id(r["test"])
            for variant, text in (("plain", r["text"]), ("after-build-log", NOISE + "\n" + r["text"])):
                s = signature_of(text, test)
                yield {"set": name, "id": r["id"], "variant": variant, "stage": s.stage, "type": s.type,
                       "line": s.line, "test": s.test, "rule": s.rule, "raw": s.raw}


def test_signatures_match_golden():
    want = [json.loads(line) for line in GOLDEN.read_text().splitlines() if line.strip()]
    got = list(_rows())
    assert len(got) == len(want) == 2 * (316 + 65)
    diffs = [(w["set"], w["id"], w["variant"], {k: (w[k], g[k]) for k in w if w[k] != g[k]})
             for w, g in zip(want, got) if w != g]
    assert diffs == []


if __name__ == "__main__" and "--write" in sys.argv:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    GOLDEN.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in _rows()))
    print(f"wrote {GOLDEN}")
