"""The rules table, rule suggestions, grouping/classification and the `forksync triage` CLI."""
from __future__ import annotations

import json
import re

import pytest

from bot.cli.main import main
from bot.config.forksync import ConfigError, parse_config
from bot.config.triage import TriageRule
from bot.triage.group import Grouper
from bot.triage.records import FailureRecord
from bot.triage.rules import RulesError, RulesTable, load_rules, suggest_rule
from bot.triage.signature import Signature, signature_of

SMEM = ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: {n}, Hardware limit: 232448. "
        "Reducing block sizes or `num_stages` may help.")


def test_rule_is_the_identity_even_when_the_normaliser_changes():
    table = RulesTable((TriageRule(id="smem-overflow", title="Kernels exceed shared memory",
                                   pattern=r"out of resource: shared memory", type="OutOfResources"),))
    sig = signature_of(SMEM.format(n=262144))
    assert table.group_id(sig) == "smem-overflow"
    # a later normaliser that masks differently gives another key, the same rule
    other = Signature(sig.stage, sig.type, "out of resource: shared memory (masked differently)")
    assert other.key != sig.key and table.group_id(other) == "smem-overflow"
    assert table.group_id(signature_of("LLVM ERROR: Broken module found")).startswith("sig-")


def test_rule_filters_type_and_stage():
    table = RulesTable((TriageRule(id="r", pattern="boom", type="LLVM ERROR", stage="compile"),))
    assert table.match(signature_of("LLVM ERROR: boom")).id == "r"
    assert table.match(signature_of("ValueError: boom")) is None


def test_suggested_rule_matches_its_signature_and_its_variants():
    a = signature_of(SMEM.format(n=262144))
    rule = suggest_rule(a)
    assert rule["id"] == "outofresources-out-of-resource-shared-memory"
    table = RulesTable((TriageRule(**rule),))
    assert table.match(a) is not None
    assert table.match(signature_of(SMEM.format(n=98304))) is not None
    assert table.match(signature_of("ValueError: arange's range must be a power of 2")) is None
    assert suggest_rule(a, taken=[rule["id"]])["id"] == rule["id"] + "-2"


def test_load_rules_file_and_errors(tmp_path):
    f = tmp_path / "rules.yml"
    f.write_text("rules:\n  - id: smem\n    pattern: 'shared memory'\n    class: real\n")
    assert [r.id for r in load_rules(f)] == ["smem"]
    f.write_text("- id: a\n  pattern: '('\n")
    with pytest.raises(RulesError, match=r"rules.yml: rule 0: pattern: .*not a valid regular expression"):
        load_rules(f)
    f.write_text("- id: a\n  pattern: x\n- id: a\n  pattern: y\n")
    with pytest.raises(RulesError, match="rule 1: id 'a' is used twice"):
        load_rules(f)
    with pytest.raises(RulesError, match="not found"):
        load_rules(tmp_path / "missing.yml")


def test_config_section_validates():
    cfg = parse_config({"triage": {"rules": [{"id": "x", "pattern": "y", "class": "infrastructure"}],
                                   "max_new_issues_per_run": 3}})
    assert cfg.triage.rules[0].cls == "infrastructure" and cfg.triage.max_new_issues_per_run == 3
    with pytest.raises(ConfigError, match=r"triage.rules"):
        parse_config({"triage": {"rules": [{"id": "x", "pattern": "y", "class": "nope"}]}})


def _rec(test, outcome, text="", commit="c1", run="n1", platform="h200"):
    return FailureRecord(test=test, outcome=outcome, text=text, commit=commit, run=run, platform=platform)


def test_grouper_classifies_real_flaky_infra():
    recs = [
        _rec("t.py::a", "failed", SMEM.format(n=1)), _rec("t.py::b", "failed", SMEM.format(n=2)),
        _rec("t.py::c", "failed", "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable"),
        _rec("t.py::d", "failed", "ValueError: random hiccup"), _rec("t.py::d", "passed"),
    ]
    groups = {g.id: g for g in Grouper().group(recs)}
    by_cls = {g.cls: g for g in groups.values()}
    assert by_cls["real"].tests == ("t.py::a", "t.py::b")
    assert by_cls["infrastructure"].tests == ("t.py::c",)
    assert by_cls["flaky"].tests == ("t.py::d",)
    inp = by_cls["real"].to_agent_input()
    assert inp["class"] == "real" and inp["tests"] == ("t.py::a", "t.py::b") and len(inp["logs"]) == 2


def test_group_logs_are_redacted():
    recs = [_rec("t.py::a", "failed", "token=ghp_" + "A" * 36 + "\nValueError: x at /home/alice/src/k.py")]
    (g,) = Grouper().group(recs)
    (log,) = g.logs()
    assert "ghp_" not in log and "alice" not in log


def test_cli_group(tmp_path, capsys):
    lines = [
        {"text": SMEM.format(n=262144), "test": "k.py::test_mm[1]", "commit": "c1"},
        {"text": SMEM.format(n=98304), "test": "k.py::test_mm[2]", "commit": "c1"},
        {"text": "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable"},
        {"text": "AssertionError: Tensor-likes are not close!\nMismatched elements: 3 / 9", "test": "k.py::test_sm",
         "commit": "c1"},
        {"outcome": "passed", "test": "k.py::test_sm", "commit": "c1"},
        {"text": "ptxas fatal   : Value 'sm_90' is not defined for option 'gpu-name'", "extra": [1, 2]},
    ]
    f = tmp_path / "logs.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    rules = tmp_path / "rules.yml"
    rules.write_text("- id: smem-overflow\n  pattern: 'out of resource: shared memory'\n")
    assert main(["triage", "group", str(f), "--rules", str(rules)]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(out) == len(lines)
    assert [o.get("extra") for o in out][-1] == [1, 2]            # fields pass through
    assert [(o["group"], o["class"]) for o in out[:3]] == [
        ("smem-overflow", "real"), ("smem-overflow", "real"),
        (out[2]["group"], "infrastructure")]
    assert out[2]["signature"] == "Infrastructure|gpu-busy"
    assert out[3]["class"] == "flaky"                              # passed and failed on c1
    assert out[4]["signature"] is None and out[4]["class"] is None
    assert out[5]["signature"] == "ptxas|Value 'sm_9x' is not defined for option 'gpu-name'"
    assert re.fullmatch(r"sig-[0-9a-f]{12}", out[5]["group"])


def test_cli_group_bad_input_writes_nothing(tmp_path, capsys):
    f = tmp_path / "logs.jsonl"
    f.write_text('{"text": "ok"}\nnot json\n{"test": "x"}\n[1]\n')
    assert main(["triage", "group", str(f)]) == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    assert "3 bad line(s)" in cap.err and "line 2: not JSON" in cap.err and "line 3: no string 'text'" in cap.err
    assert main(["triage", "group", str(tmp_path / "missing.jsonl")]) == 2


def test_cli_suggest(tmp_path, capsys):
    f = tmp_path / "logs.jsonl"
    f.write_text(json.dumps({"text": SMEM.format(n=1)}) + "\n" + json.dumps({"text": SMEM.format(n=2)}) + "\n")
    assert main(["triage", "suggest", str(f)]) == 0
    out = capsys.readouterr().out
    assert out.count("- id: ") == 1 and "outofresources-out-of-resource-shared-memory" in out


def test_cli_extract_then_group(tmp_path, capsys):
    from tests.triage.test_records import JUNIT, LIT

    (tmp_path / "k.xml").write_text(JUNIT)
    (tmp_path / "lit.log").write_text(LIT)
    (tmp_path / "build.log").write_text("step 1\nstep 2\nKilled\nError: Process completed with exit code 137.\n")
    out = []
    for name in ("k.xml", "lit.log", "build.log"):
        assert main(["triage", "extract", str(tmp_path / name)]) == 0
        out += capsys.readouterr().out.splitlines()
    assert [json.loads(line)["outcome"] for line in out] == ["passed", "failed", "skipped", "error", "failed", "passed",
                                                      "skipped", "failed"]
    (tmp_path / "all.jsonl").write_text("\n".join(out) + "\n")
    assert main(["triage", "group", str(tmp_path / "all.jsonl")]) == 0
    grouped = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(g["test"], g["class"]) for g in grouped if g["class"]] == [
        ("examples.kernels.test_kernels::test_matmul[128-bf16]", "real"),
        ("examples.kernels.test_kernels::test_layernorm", "real"),
        ("TRITON :: TritonGPU/loop-pipeline-hopper.mlir", "real"),
        ("job:build", "infrastructure")]
    assert grouped[-1]["signature"] == "Infrastructure|oom-kill"
    (tmp_path / "bad.json").write_text("{not json")
    assert main(["triage", "extract", str(tmp_path / "bad.json")]) == 2
    assert "not JSON" in capsys.readouterr().err
