"""Error signatures: the pure core of nightly triage (no I/O, no clocks).

A failure's raw output (pytest report, traceback, lit output, CI log) becomes a
:class:`Signature` ``(stage, type, masked primary line[, test])``:

1. **Primary error.** An ordered list of extractors (:data:`EXTRACTORS`) is tried, most specific
   first; the first that finds something wins:
   C++ assertion › ``LLVM ERROR`` › MLIR pass failure › FileCheck › MLIR ``error:`` › ``ptxas`` ›
   CUDA/HIP runtime error › fatal signal › Python exception (the root cause of a triton
   ``CompilationError``) › pytest ``FAILED … - Exc: msg`` › infrastructure phrase ›
   ``exit code N`` (never alone: the test or job is added to the signature).
   Each extractor has a cheap substring prefilter so a log is searched only for what it holds.
2. **Prefixes** (ANSI colours, CI timestamps, containerd ``stderr F``, glog ``I1130 …] ``, Ray
   ``(pid=…)``, vLLM ``ERROR 01-28 …] ``, pytest ``E   ``, lit ``# | ``) are stripped from the
   chosen line.
3. **Masking** (:func:`mask`) replaces only what varies between occurrences of one fault:
   directories (basenames stay), temp names, long hex and random ids, pids, timestamps,
   sizes after labels (``Required:``, ``Tried to allocate``, ``Mismatched elements:`` …),
   source positions and floats. Digits that tell faults apart stay: ``sm_80``/``sm_90``,
   ``gfx942``, register counts, dtypes, tensor shapes, small integers.

Numeric mismatches (``Tensor-likes are not close``, ``Mismatched elements``, ``not close``) add
the test identity: one numeric message says nothing about where the numbers went wrong.

Source of the formats: real texts from public Triton/PyTorch issues and the H200 runs noted in
``../shared/notes/runtime-facts.md``; the labelled set in ``tests/data/triage/``.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Callable

__all__ = ["Signature", "signature_of", "mask", "strip_prefixes", "clean_text", "EXTRACTORS",
           "CRASH_RULES"]

#: extractor names whose signatures are crashes (an issue opens on the first occurrence).
CRASH_RULES = frozenset({"assertion", "llvm", "signal"})


@dataclass(frozen=True, slots=True)
class Signature:
    """The identity of one fault's symptom.

    ``stage``: compile | run | check | lit | setup | test | job;
    ``type``: the exception/error kind (``OutOfResources``, ``LLVM ERROR``, ``CUDAError``, ``SIGSEGV``…);
    ``line``: the masked primary line; ``test``: the normalized test id, set only where the
    message alone cannot tell faults apart (numeric mismatches, FileCheck, bare exit codes);
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


# --------------------------------------------------------------------------- prefixes, ANSI
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
_PREFIX_SRC = r"""(?:
    [ \t]+
  | \d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?[ \t]*(?:std(?:err|out)[ \t]+[FP][ \t])?
  | \[\d{4}-\d\d-\d\d[^\]\n]{0,40}\][ \t]*
  | \[?\d\d:\d\d:\d\d(?:[.,]\d+)?\]?[ \t]+(?:[\w/]+/(?:INFO|ERROR|WARNING|DEBUG)[ \t]+)?
  | [IWEF]\d{4}[ \t]+\d\d:\d\d:\d\d\.\d+[ \t]+\d+[ \t]+[\w.\-]+:\d+\][ \t]
  | \((?:[\w.\-]+[ \t]+)?pid=\d+(?:,[ \t]*ip=[\d.]+)?\)[ \t]*
  | (?:ERROR|WARNING|INFO|DEBUG|CRITICAL)[ \t]+\d\d-\d\d[ \t]+\d\d:\d\d:\d\d[ \t]+[\w.]+:\d+\][ \t]*
  | \#\#\[(?:error|warning)\][ \t]*
  | E(?:[ \t]{2,}|[ \t]*$)
  | \#[ \t]\|[ \t]?
  | >[ \t]+
)"""
_PREFIX = re.compile(r"^" + _PREFIX_SRC + r"++", re.X)   # possessive: no backtracking


def strip_prefixes(line: str) -> str:
    """Remove log prefixes (timestamps, glog/Ray/vLLM headers, pytest ``E``, lit ``# |``) and
    surrounding blanks from one line."""
    m = _PREFIX.match(line)
    if m:
        line = line[m.end():]
    return line.strip()


def clean_text(text: str) -> str:
    """Drop ANSI escapes and carriage returns (kept cheap: only when present)."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


# --------------------------------------------------------------------------- masking
_TIME_FULL = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?")
_TIME = re.compile(r"\b\d\d:\d\d:\d\d(?:\.\d+)?\b")
# a token holding a path separator: keep its last segment (the basename)
_PATH = re.compile(r"(?<![^\s'\"()<>,;=`\[\]{}])[^\s'\"()<>,;=`\[\]{}/\\]*[/\\][^\s'\"()<>,;=`\[\]{}]*")
_TMP = re.compile(r"\btmp[\w\-]{4,}")
_HEX0X = re.compile(r"\b0x[0-9a-fA-F]+\b")
_SYSBYTES = re.compile(r"\s*\+\s*0x[0-9a-fA-F]+ bytes system")
_HEXID = re.compile(r"\b[0-9a-f]{8,}\b")
_LONGID = re.compile(r"\b[A-Za-z0-9]{20,}\b")
_PID = re.compile(r"\b(pid|PID|[Pp]rocess|[Tt]hread|tid|job|[Rr]ank)([ =:#]+)\d+")
_PID_HINTS = ("pid", "PID", "rocess", "hread", "tid", "job", "ank")
_LABELLED = re.compile(r"\b([A-Za-z]+)(\s*[:=]?\s*)[-+]?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?(?:\s*/\s*\d+)?(?:\s*\([\d.]+%\))?")
#: last words of labels whose number varies between occurrences of one fault
_LABEL_WORDS = frozenset({"required", "limit", "limitation", "allocate", "allocated", "reserved", "free",
                          "elements", "difference", "max", "bytes", "size", "got", "expected", "use"})
_INDEX = re.compile(r"\bat index \([\d,\s]*\)", re.I)
_POS = re.compile(r"\bat \d+:\d+:")
_SRCPOS = re.compile(r"\.(py|pyx|cpp|cc|c|h|hpp|cu|cuh|mlir|td|ll|ptx|test):\d+(?::\d+)?")
_LINENO = re.compile(r"\bline \d+")
_FLOAT = re.compile(r"(?<![\w.<])[-+]?\d+\.\d+(?:[eE][-+]?\d+)?(?![\w.])")
_PCT = re.compile(r"\(\s*(?:<f>|\d+)%\s*\)")
_BIGINT = re.compile(r"(?<![\w.<])\d{5,}(?![\w.])")
_DIGIT = re.compile(r"\d")
_MAX_LINE = 240


def _basename(m: re.Match) -> str:
    tok = m.group(0).rstrip("/\\")
    i = max(tok.rfind("/"), tok.rfind("\\"))
    return tok[i + 1:]


def _hexid(m: re.Match) -> str:
    t = m.group(0)
    return "<hex>" if not t.isdigit() and not t.isalpha() else t


def _longid(m: re.Match) -> str:
    t = m.group(0)
    return "<id>" if not t.isalpha() and not t.isdigit() else t


def _labelled(m: re.Match) -> str:
    if m.group(1).lower() in _LABEL_WORDS:
        return f"{m.group(1)}{m.group(2)}<n>"
    return m.group(0)


def mask(line: str) -> str:
    """Replace what varies between occurrences of one fault; keep fault-telling digits.
    Each step runs only when a cheap test says it can apply.

    >>> mask("out of resource: shared memory, Required: 131072, Hardware limit: 101376")
    'out of resource: shared memory, Required: <n>, Hardware limit: <n>'
    """
    digits = _DIGIT.search(line) is not None
    if digits and ":" in line:
        if "-" in line:
            line = _TIME_FULL.sub("<time>", line)
        line = _TIME.sub("<time>", line)
    if "/" in line or "\\" in line:
        line = _PATH.sub(_basename, line)
    if "tmp" in line:
        line = _TMP.sub("<tmp>", line)
    if digits:
        if "0x" in line:
            if "system" in line:
                line = _SYSBYTES.sub("", line)
            line = _HEX0X.sub("<hex>", line)
        line = _HEXID.sub(_hexid, line)
        line = _LONGID.sub(_longid, line)
        if any(h in line for h in _PID_HINTS):
            line = _PID.sub(r"\1\2<pid>", line)
        line = _LABELLED.sub(_labelled, line)
        if "index" in line:
            line = _INDEX.sub("at index (<i>)", line)
        if "at " in line:
            line = _POS.sub("at <pos>:", line)
        if "." in line:
            line = _SRCPOS.sub(r".\1:<L>", line)
            line = _FLOAT.sub("<f>", line)
        if "line " in line:
            line = _LINENO.sub("line <L>", line)
        if "%" in line:
            line = _PCT.sub("(<pct>)", line)
        line = _BIGINT.sub("<n>", line)
    else:
        line = _LONGID.sub(_longid, line)
    line = " ".join(line.split()).strip(" \t:.'\"`")
    return line[:_MAX_LINE]


# --------------------------------------------------------------------------- extractors
# Each extractor: (name, prefilter substrings, function(text) -> (type, line, stage) | None).
Found = tuple[str, str, str]

_ASSERT = re.compile(r"Assertion [`'](.+?)' failed")
_ASSERT_WHERE = re.compile(r"([\w.\-]+\.(?:cpp|cc|h|hpp|c|inc)):\d+:")


def _x_assertion(text: str) -> Found | None:
    m = _ASSERT.search(text)
    if not m:
        return None
    start = text.rfind("\n", 0, m.start()) + 1
    head = text[start:m.start()]
    w = _ASSERT_WHERE.search(head)
    where = f"{w.group(1)}: " if w else ""
    return "Assertion", f"{where}Assertion `{m.group(1)}' failed", "compile"


_LLVM = re.compile(r"LLVM ERROR: ?([^\n]*)")


def _x_llvm(text: str) -> Found | None:
    m = _LLVM.search(text)
    return ("LLVM ERROR", m.group(1), "compile") if m else None


_MLIR_PASS = re.compile(r"Pipeline failed while executing \[`([\w.\-]+)`")
_MLIR_HINT = re.compile(r": error: ")
_MLIR_ERR = re.compile(r"(?::\d+:\d+|loc\(.*\)|<unknown>|<stdin>\S*): error: (.*)")
_GENERIC_MLIR = ("Failures have been detected while processing an MLIR pass pipeline",)


def _mlir_errors(text: str) -> list[str]:
    out = []
    for _, line in _lines_at(text, _MLIR_HINT):
        m = _MLIR_ERR.search(line)
        if m and not m.group(1).startswith(_GENERIC_MLIR) and not m.group(1).startswith("CHECK"):
            out.append(m.group(1).strip())
    return out


def _x_mlir_pass(text: str) -> Found | None:
    m = _MLIR_PASS.search(text)
    if not m:
        return None
    errs = _mlir_errors(text[:m.start()])
    detail = f": {errs[0]}" if errs else ""
    return "MLIRPassFailure", f"{m.group(1)} failed{detail}", "compile"


_FILECHECK = re.compile(r"error: ((?:[\w-]+)?CHECK[\w-]*: [^\n]*)\n([^\n]*)")


def _x_filecheck(text: str) -> Found | None:
    m = _FILECHECK.search(text)
    if not m:
        return None
    pattern = strip_prefixes(m.group(2)).lstrip("/ ;#")
    return "FileCheck", f"{m.group(1)}: {pattern}", "lit"


def _x_mlir_error(text: str) -> Found | None:
    errs = _mlir_errors(text)
    return ("MLIR error", errs[0], "compile") if errs else None


_PTXAS = re.compile(r"ptxas (?:fatal|error)\s*: ([^\n]*)")


def _x_ptxas(text: str) -> Found | None:
    first = None
    for m in _PTXAS.finditer(text):
        msg = m.group(1)
        if msg.startswith("Ptx assembly aborted"):
            first = first or msg
            continue
        return "ptxas", msg, "compile"
    return ("ptxas", first, "compile") if first else None


_CUDA_RX = (
    ("Triton Error [", re.compile(r"Triton Error \[(CUDA|HIP)\]: ([^\n\"]*)")),
    (" error: ", re.compile(r"\b(CUDA|HIP|cuda|hip) error: ([^\n\"]*)")),
    ("CUDA_ERROR_", re.compile(r"\b(CUDA)_ERROR_\w+: ([^\n\"]*)")),
    ("(error ", re.compile(r"\b(cuda|hip)Error\w+ \(error \d+\) due to \"([^\n\"]*)")),
)


def _x_cuda(text: str) -> Found | None:
    best = None
    for anchor, rx in _CUDA_RX:
        if anchor in text:
            m = rx.search(text)
            if m and (best is None or m.start() < best.start()):
                best = m
    if best is None:
        return None
    api = best.group(1).upper()
    return f"{api}Error", f"{api} error: {best.group(2).strip()}", "run"


_SIGNALS = (
    (re.compile(r"Segmentation fault|SIGSEGV|signal 11\b|exit code 139\b|exited with 139\b"), "SIGSEGV"),
    (re.compile(r"Fatal Python error: Aborted|Aborted \(core dumped\)|SIGABRT|signal 6\b|IOT instruction|"
                r"exit code 134\b"), "SIGABRT"),
    (re.compile(r"Bus error|SIGBUS"), "SIGBUS"),
    (re.compile(r"Floating point exception|SIGFPE"), "SIGFPE"),
    (re.compile(r"Illegal instruction|SIGILL"), "SIGILL"),
)


def _x_signal(text: str) -> Found | None:
    for rx, name in _SIGNALS:
        if rx.search(text):
            return name, f"fatal signal {name}", "run"
    return None


_EXC_TYPE = r"(?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*?(?:Error|Exception|Exit|Failure|Interrupt|Warning)|\w*OutOfResources)"
# a cheap hint finds candidate lines; the anchored match runs on the prefix-stripped line only
_EXC_HINT = re.compile(r"(?:Error|Exception|OutOfResources|Exit|Failure|Interrupt|Warning)(?=:|[ \t]*$)", re.M)
_EXC_LINE = re.compile(r"(" + _EXC_TYPE + r")(?::[ ]?(.*))?$")
_CAUSE_HINT = re.compile(r"(?:Error|Exception)\(")
_CAUSE_LINE = re.compile(r"([A-Za-z_]\w*(?:Error|Exception))\((['\"])(.*)\2\)$")
_WRAPPERS = ("CompilationError", "PassManager::run failed", "CalledProcessError")


def _lines_at(text: str, rx: re.Pattern):
    """(line start, prefix-stripped line) of each line holding a match of ``rx``, in order."""
    last = -1
    for m in rx.finditer(text):
        ls = text.rfind("\n", 0, m.start()) + 1
        if ls == last:
            continue
        last = ls
        le = text.find("\n", m.end())
        yield ls, strip_prefixes(text[ls:le if le >= 0 else len(text)])


def _py_exceptions(text: str):
    out = []
    for ls, line in _lines_at(text, _EXC_HINT):
        e = _EXC_LINE.match(line)
        if e:
            out.append((ls, e.group(1), (e.group(2) or "").strip()))
    return out


def _cause_call(text: str):
    found = None
    for _, line in _lines_at(text, _CAUSE_HINT):
        c = _CAUSE_LINE.match(line)
        if c:
            found = (c.group(1), c.group(3))
    return found


def _short_type(t: str) -> str:
    return t.rsplit(".", 1)[-1]


def _x_python(text: str) -> Found | None:
    excs = _py_exceptions(text)
    if not excs:
        return None
    pos, typ, msg = excs[-1]
    short = _short_type(typ)
    if short == "CompilationError":
        # Triton: "CompilationError: at L:C:" + source + caret + the cause, either as a
        # repr line ``ValueError('…')`` after the CompilationError or as an earlier exception
        # ("The above exception was the direct cause of the following exception").
        after = text[pos:]
        c = _cause_call(after)
        if c:
            return _short_type(c[0]), c[1], "compile"
        tail = [strip_prefixes(l) for l in after.split("\n")[1:]]
        tail = [l for l in tail if l and not set(l) <= set("^~ ")]
        earlier = [e for e in excs[:-1] if _short_type(e[1]) != "CompilationError"]
        if earlier:
            _, t2, m2 = earlier[-1]
            return _short_type(t2), m2, "compile"
        if tail and not tail[-1].startswith(("File ", "def ", "@", "##[", "Error: ")):
            return "CompilationError", tail[-1], "compile"
        return "CompilationError", msg, "compile"
    if short == "CalledProcessError" or msg.startswith("PassManager::run failed"):
        earlier = [e for e in excs[:-1] if not _short_type(e[1]).endswith("CalledProcessError")]
        if earlier:
            pos, typ, msg = earlier[-1]
            short = _short_type(typ)
    stage = "test"
    if short in ("OutOfResources", "PTXASError") or msg.startswith("PassManager"):
        stage = "compile"
    elif short == "AcceleratorError":
        stage = "run"
    elif _is_numeric(msg, text):
        stage = "check"
    elif "code_generator.py" in text or "triton/compiler/" in text:
        stage = "compile"
    return short, msg, stage


_NUMERIC = re.compile(r"not close|Mismatched elements|mismatch(?:ed)? (?:element|value)s?|"
                      r"Arrays are not (?:almost )?equal|allclose", re.I)


def _is_numeric(msg: str, text: str) -> bool:
    return bool(_NUMERIC.search(msg)) or (msg == "" and "Mismatched elements" in text)


_PYTEST_FAILED = re.compile(r"(?m)^(?:FAILED|ERROR) ([^\s]+)(?: - ([^\n]*))?$")
_EXC_MSG = re.compile(r"((?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*?(?:Error|Exception|Exit|Failure)|\w*OutOfResources))(?:: ?(.*))?")


def _x_pytest_summary(text: str) -> Found | None:
    m = _PYTEST_FAILED.search(text)
    if not m or not m.group(2):
        return None
    e = _EXC_MSG.match(m.group(2))
    if not e:
        return "PytestFailure", m.group(2), "test"
    short = _short_type(e.group(1))
    msg = (e.group(2) or "").strip()
    if msg.endswith("..."):           # pytest truncates to the terminal width
        msg = msg[:-3].rstrip()
    return short, msg, "check" if _is_numeric(msg, "") else "test"


#: Infrastructure faults: kind → phrases. A phrase is a literal, or ``(anchor, regex)`` where the
#: regex runs only when the literal anchor is present. Shared with :mod:`bot.triage.classify`.
INFRA_PATTERNS: tuple[tuple[str, tuple], ...] = (
    ("gpu-busy", ("busy or unavailable", "is/are busy", "already in use by another", "Could not acquire a GPU",
                  "GPU lease")),
    ("gpu-memory-held", (("CUDA out of memory", r"CUDA out of memory\..*\bProcess \d+ has [\d.]+ \w+ memory in use"),)),
    ("gpu-missing", ("no CUDA-capable device is detected", "Found no NVIDIA driver", "0 active drivers",
                     "No GPU available", "No GPUs available", "No CUDA GPUs are available", "NVIDIA-SMI has failed")),
    ("driver-mismatch", ("driver version is insufficient", "Driver/library version mismatch",
                         "unsupported toolchain", "Failed to initialize NVML",
                         "forward compatibility was attempted")),
    ("network", ("Connection reset by peer", "Connection refused", "Could not resolve host",
                 "Temporary failure in name resolution", "Name or service not known", "Read timed out",
                 "ProxyError", "Network is unreachable", "TLS handshake timeout", "RemoteDisconnected",
                 "HTTP Error 50", "503 Service Unavailable", "502 Bad Gateway", "504 Gateway Time",
                 "Connection timed out", "CERTIFICATE_VERIFY_FAILED")),
    ("toolchain-download", ("Failed to download", "Could not download", "error downloading", "download_and_copy",
                            "Could not find a version that satisfies", "No matching distribution found",
                            ("curl: (", r"curl: \(\d+\)"))),
    ("disk-full", ("No space left on device", "Disk quota exceeded", "ENOSPC")),
    ("oom-kill", ("Out of memory: Killed process", "OOMKilled", "oom-kill", "SIGKILL", "Killed signal terminated",
                  ("137", r"(?:exit code|exited with|Error) 137\b"), ("signal 9", r"signal 9\b"),
                  ("Killed", r"(?m)(?:^|[\s\]])Killed[ \t]*$"))),
    ("runner-lost", ("The runner has received a shutdown signal", "lost communication with the server",
                     "The operation was canceled", "Job was cancelled", "timed out waiting for runner")),
)
_INFRA = tuple((kind, p if isinstance(p, str) else p[0], None if isinstance(p, str) else re.compile(p[1]))
               for kind, phrases in INFRA_PATTERNS for p in phrases)


def _infra_hit(text: str):
    for kind, anchor, rx in _INFRA:
        if anchor in text:
            if rx is None:
                return kind, text.find(anchor)
            m = rx.search(text)
            if m:
                return kind, m.start()
    return None


def infra_kind(text: str) -> str | None:
    """The infrastructure kind named in ``text`` (see :data:`INFRA_PATTERNS`), or None."""
    hit = _infra_hit(text)
    return hit[0] if hit else None


def _x_infra(text: str) -> Found | None:
    hit = _infra_hit(text)
    if not hit:
        return None
    start = text.rfind("\n", 0, hit[1]) + 1
    end = text.find("\n", hit[1])
    return "Infrastructure", text[start:end if end >= 0 else len(text)], "setup"


_EXIT = re.compile(r"(?:exit(?:ed with)? (?:code|status) |returned non-zero exit status |Exit Code: )(-?\d+)", re.I)


def _x_exit(text: str) -> Found | None:
    m = None
    for m in _EXIT.finditer(text):
        pass
    if not m:
        return None
    return "ExitCode", f"exit code {m.group(1)}", "job"


Extractor = tuple[str, tuple[str, ...], Callable[[str], "Found | None"]]

#: Ordered: the first extractor that finds something chooses the primary error.
EXTRACTORS: tuple[Extractor, ...] = (
    ("assertion", ("Assertion",), _x_assertion),
    ("llvm", ("LLVM ERROR",), _x_llvm),
    ("mlir-pass", ("Pipeline failed while executing",), _x_mlir_pass),
    ("filecheck", ("CHECK",), _x_filecheck),
    ("mlir", (": error: ",), _x_mlir_error),
    ("ptxas", ("ptxas",), _x_ptxas),
    ("cuda", ("Triton Error [", " error: ", "CUDA_ERROR_", "(error "), _x_cuda),
    ("signal", ("Segmentation", "SIG", "signal", "Abort", "IOT", "Bus error", "Floating point",
                "Illegal instruction", "exit code 1", "exited with 1"), _x_signal),
    ("python", ("Error", "Exception", "OutOfResources", "Exit", "Failure", "Interrupt"), _x_python),
    ("pytest", ("FAILED ", "ERROR "), _x_pytest_summary),
    ("infra", ("",), _x_infra),
    ("exit", ("xit", "returned non-zero"), _x_exit),
)

_NEEDS_TEST = frozenset({"filecheck", "exit", "unknown", "signal"})
#: extractors whose line is too weak to rule out an infrastructure cause named elsewhere
_WEAK = frozenset({"exit", "unknown", "infra"})
#: extractors that name a concrete compiler fault: a concrete error always wins over infrastructure
_NEVER_INFRA = frozenset({"assertion", "llvm", "mlir-pass", "filecheck", "mlir", "ptxas"})


def signature_of(text: str, test: str = "") -> Signature:
    """The signature of one raw failure output. ``test`` is the normalized test id (used only
    for numeric mismatches, FileCheck failures and bare exit codes). Never raises: an output
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
        if name not in _NEVER_INFRA:
            weak = name in _WEAK or (name == "pytest" and typ == "PytestFailure")
            kind = infra_kind(raw) or (infra_kind(text) if weak else None)
            if kind:
                return Signature("setup", "Infrastructure", kind, "", "infra", raw)
        line = mask(raw)
        t = test if (name in _NEEDS_TEST or stage == "check") else ""
        if name == "python" and stage == "check":
            line = _numeric_line(line)
        return Signature(stage, typ, line, t, name, raw)
    lines = [l for l in (strip_prefixes(x) for x in text.split("\n")[-20:]) if l]
    raw = lines[-1] if lines else ""
    return Signature("job", "Unknown", mask(raw), test, "unknown", raw)


def _numeric_line(line: str) -> str:
    # "Tensor-likes are not close! Mismatched elements: …" → the fault is named by the test
    i = line.find("!")
    return line[: i + 1] if 0 < i < len(line) - 1 else line
