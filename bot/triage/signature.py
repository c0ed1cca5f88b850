"""Error signatures: the pure core of nightly triage (no I/O, no clocks).

A failure's raw output (pytest report, traceback, lit output, CI log) becomes a
:class:`Signature` ``(stage, type, masked primary line[, test])``:

1. **Primary error.** An ordered list of extractors (:data:`EXTRACTORS`, in
   :mod:`bot.triage.extractors`) is tried, most specific
   first; the first that finds something wins:
   C++ assertion › ``LLVM ERROR`` › MLIR pass failure › FileCheck › MLIR ``error:`` › ``ptxas`` ›
   CUDA/HIP runtime error › fatal signal › Python exception (the root cause of a triton
   ``CompilationError``) › pytest ``FAILED … - Exc: msg`` › infrastructure phrase ›
   ``exit code N`` (never alone: the test or job is added to the signature).
   Each extractor has a cheap substring prefilter so a log is searched only for what it holds.
2. **Prefixes** (:mod:`bot.triage.normalize`: ANSI colours, CI timestamps, containerd ``stderr F``, glog ``I1130 …] ``, Ray
   ``(pid=…)``, vLLM ``ERROR 01-28 …] ``, pytest ``E   ``, lit ``# | ``) are stripped from the
   chosen line.
3. **Masking** (:func:`mask`) replaces only what varies between occurrences of one fault:
   directories (basenames stay), temp names, long hex and random ids, pids, timestamps,
   sizes after labels (``Required:``, ``Tried to allocate``, ``Mismatched elements:`` …),
   source positions and floats. Digits that tell faults apart stay: ``sm_80``/``sm_90``,
   ``gfx942``, register counts, dtypes, tensor shapes, small integers.

Numeric mismatches (``Tensor-likes are not close``, ``Mismatched elements``, ``not close``) add
the test identity: one numeric message says nothing about where the numbers went wrong (the
same holds for FileCheck failures, fatal signals and bare exit codes).

Infrastructure (:mod:`bot.triage.infra`) is canonical: ``("setup", "Infrastructure", <kind>)``,
looked for in the chosen line, and in the log's tail only when the chosen line is weak (an exit
code, nothing recognisable): a concrete compiler or numeric error always wins.

Source of the formats: real texts from public Triton/PyTorch issues and the H200 runs noted in
``../shared/notes/runtime-facts.md``; the labelled set in ``tests/data/triage/``.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from bot.triage.extractors import EXTRACTORS
from bot.triage.infra import INFRA_PATTERNS, infra_kind
from bot.triage.normalize import clean_text, mask, strip_prefixes

__all__ = ["Signature", "signature_of", "mask", "strip_prefixes", "clean_text", "EXTRACTORS",
           "CRASH_RULES", "INFRA_PATTERNS", "infra_kind"]

#: extractor names whose signatures are crashes (an issue opens on the first occurrence).
CRASH_RULES = frozenset({"assertion", "llvm", "signal"})


@dataclass(frozen=True, slots=True)
class Signature:
    """The identity of one fault's symptom.

    ``stage``: compile | run | check | lit | setup | test | job;
    ``type``: the exception/error kind (``OutOfResources``, ``LLVM ERROR``, ``CUDAError``, ``SIGSEGV``…);
    ``line``: the masked primary line; ``test``: the normalized test id, set only where the
    message alone cannot tell faults apart (numeric mismatches, FileCheck, fatal signals, bare
    exit codes);
    ``rule``: the extractor that chose the line; ``raw``: the primary line before masking.
    """

    stage: str
    type: str
    line: str
    test: str = ""
    rule: str = ""
    raw: str = ""

    @property
    def text(self) -> str:
        """What rules-table patterns are matched against: ``"<type>: <line>"``."""
        return f"{self.type}: {self.line}"

    @property
    def key(self) -> str:
        k = f"{self.stage}|{self.type}|{self.line}"
        return f"{k}|{self.test}" if self.test else k

    @property
    def digest(self) -> str:
        """12 hex of sha1(key): a short, stable name for an unmatched signature."""
        return hashlib.sha1(self.key.encode()).hexdigest()[:12]

    @property
    def crash(self) -> bool:
        return self.rule in CRASH_RULES

    def to_dict(self) -> dict:
        return {"stage": self.stage, "type": self.type, "line": self.line, "test": self.test,
                "rule": self.rule, "key": self.key}


_new = object.__new__
_SET = tuple(Signature.__dict__[f].__set__ for f in ("stage", "type", "line", "test", "rule", "raw"))


def _signature(stage: str, typ: str, line: str, test: str, rule: str, raw: str) -> Signature:
    """``Signature(stage, typ, line, test, rule, raw)`` without the frozen dataclass's
    ``__init__`` (six ``object.__setattr__`` calls): the same object, built in half the time."""
    s = _new(Signature)
    set_stage, set_type, set_line, set_test, set_rule, set_raw = _SET
    set_stage(s, stage)
    set_type(s, typ)
    set_line(s, line)
    set_test(s, test)
    set_rule(s, rule)
    set_raw(s, raw)
    return s


_INFRA_TAIL = 16_384
_NEEDS_TEST = frozenset({"filecheck", "exit", "unknown", "signal"})
#: extractors whose line is too weak to rule out an infrastructure cause named elsewhere
_WEAK = frozenset({"exit", "unknown", "infra"})
#: extractors that name a concrete compiler fault: a concrete error always wins over infrastructure
_NEVER_INFRA = frozenset({"assertion", "llvm", "mlir-pass", "filecheck", "mlir", "ptxas"})


def signature_of(text: str, test: str = "") -> Signature:
    """The signature of one raw failure output. ``test`` is the normalized test id (used only
    where the message cannot tell faults apart, see :class:`Signature`). Never raises: an output
    with no recognisable error gets type ``Unknown`` and its last non-empty line."""
    text = clean_text(text)
    for name, pre, fn in EXTRACTORS:
        for p in pre:
            if p in text:
                break
        else:
            continue
        found = fn(text)
        if found is None:
            continue
        typ, raw, stage = found
        raw = strip_prefixes(raw)
        if name not in _NEVER_INFRA and stage != "check":
            weak = name in _WEAK or (name == "pytest" and typ == "PytestFailure")
            # a weak line: look for an infrastructure phrase in the log's tail (where a job's
            # last words are; bounded so a long log stays cheap)
            kind = infra_kind(raw) or (infra_kind(text[-_INFRA_TAIL:]) if weak else None)
            if kind:
                return _signature("setup", "Infrastructure", kind, "", "infra", raw)
        line = mask(raw)
        t = test if (name in _NEEDS_TEST or stage == "check") else ""
        if name == "python" and stage == "check":
            line = _numeric_line(line)
        return _signature(stage, typ, line, t, name, raw)
    lines = [line for line in (strip_prefixes(x) for x in text.split("\n")[-20:]) if line]
    raw = lines[-1] if lines else ""
    return Signature("job", "Unknown", mask(raw), test, "unknown", raw)


def _numeric_line(line: str) -> str:
    # "Tensor-likes are not close! Mismatched elements: …" → the fault is named by the test
    i = line.find("!")
    return line[: i + 1] if 0 < i < len(line) - 1 else line
