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
_PREFIX = re.compile(r"^" + _PREFIX_SRC + r"+", re.X)


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
_MASKS: tuple[tuple[re.Pattern, str], ...] = tuple((re.compile(p, f), r) for p, r, f in (
    # timestamps first (they contain ':' and digits the later rules would half-eat)
    (r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?", "<time>", 0),
    (r"\b\d\d:\d\d:\d\d(?:\.\d+)?\b", "<time>", 0),
    # URLs keep only their host-less last segment; directories go, basenames stay
    (r"(?:[A-Za-z]:[\\/]|~?/|\.\.?/)(?:[^\s/\\:'\"()<>]+[\\/])*|(?<![\w.\-+@])(?:[\w.\-+@]+[\\/]){2,}", "", 0),
    (r"\btmp[\w\-]{4,}", "<tmp>", 0),
    (r"\b0x[0-9a-fA-F]+\b", "<hex>", 0),
    (r"\s*\+\s*<hex> bytes system", "", 0),
    (r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{8,}\b", "<hex>", 0),
    (r"\b(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{20,}\b", "<id>", 0),
    (r"\b(pid|PID|[Pp]rocess|[Tt]hread|tid|job|[Rr]ank)([ =:#]+)\d+", r"\1\2<pid>", 0),
    # sizes and counts after labels
    (r"(?i)\b(required|hardware limit(?:ation)?|tried to allocate|total capacity of|of which|"
     r"has a total capacity of|memory in use|allocated|reserved|free|mismatched elements|"
     r"greatest (?:absolute|relative) difference|up to|max|bytes|size|got|expected)"
     r"(\s*[:=]?\s*)[-+]?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?(?:\s*/\s*\d+)?(?:\s*\([\d.]+%\))?", r"\1\2<n>", 0),
    (r"(?i)\bat index \([\d,\s]*\)", "at index (<i>)", 0),
    (r"\bat \d+:\d+:", "at <pos>:", 0),
    (r"\.(py|pyx|cpp|cc|c|h|hpp|cu|cuh|mlir|td|ll|ptx|test):\d+(?::\d+)?", r".\1:<L>", 0),
    (r"\bline \d+", "line <L>", 0),
    (r"(?<![\w.<])[-+]?\d+\.\d+(?:[eE][-+]?\d+)?(?![\w.])", "<f>", 0),
    (r"\(\s*<f>%\s*\)|\(\s*\d+%\s*\)", "(<pct>)", 0),
    (r"(?<![\w.<])\d{5,}(?![\w.])", "<n>", 0),
    (r"\s+", " ", 0),
))
_MAX_LINE = 240


def mask(line: str) -> str:
    """Replace what varies between occurrences of one fault; keep fault-telling digits.

    >>> mask("out of resource: shared memory, Required: 131072, Hardware limit: 101376")
    'out of resource: shared memory, Required: <n>, Hardware limit: <n>'
    """
    for rx, rep in _MASKS:
        line = rx.sub(rep, line)
    line = line.strip(" \t:.'\"`")
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
_MLIR_ERR = re.compile(r"(?m)^[^\n]*?(?::\d+:\d+|loc\([^\n]*\)|<unknown>|<stdin>[^\n]*?): error: ([^\n]*)")
_GENERIC_MLIR = ("Failures have been detected while processing an MLIR pass pipeline",)


def _mlir_errors(text: str) -> list[str]:
    return [m.group(1).strip() for m in _MLIR_ERR.finditer(text)
            if not m.group(1).startswith(_GENERIC_MLIR) and not m.group(1).startswith("CHECK")]


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


_CUDA = re.compile(r"(?:Triton Error \[(CUDA|HIP)\]: |\b(CUDA|HIP|hip|cuda) error: |"
                   r"\bCUDA_ERROR_\w+: |cudaError\w+ \(error \d+\) due to \")([^\n\"]*)")


def _x_cuda(text: str) -> Found | None:
    m = _CUDA.search(text)
    if not m:
        return None
    api = (m.group(1) or m.group(2) or "CUDA").upper()
    msg = m.group(3).strip()
    return f"{api}Error", f"{api} error: {msg}", "run"


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


_PYEXC = re.compile(
    r"(?m)^" + _PREFIX_SRC + r"*"
    r"((?:[A-Za-z_][\w]*\.)*(?:[A-Za-z_]\w*?(?:Error|Exception|Exit|Failure|Interrupt|Warning)|\w*OutOfResources))"
    r"(?::[ ]?([^\n]*))?$", re.X)
_CAUSE_CALL = re.compile(r"(?m)^" + _PREFIX_SRC + r"*([A-Za-z_]\w*(?:Error|Exception))\(['\"](.*)['\"]\)[ \t]*$", re.X)
_WRAPPERS = ("CompilationError", "PassManager::run failed", "CalledProcessError")


def _py_exceptions(text: str):
    return [(m.start(), m.group(1), (m.group(2) or "").strip()) for m in _PYEXC.finditer(text)]


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
        c = None
        for c in _CAUSE_CALL.finditer(after):
            pass
        if c:
            return _short_type(c.group(1)), c.group(2), "compile"
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


#: Phrases of infrastructure faults. Shared with :mod:`bot.triage.classify`.
INFRA_PATTERNS: tuple[tuple[str, str], ...] = (
    ("gpu-busy", r"CUDA-capable devices? (?:is|are) busy or unavailable|device\(s\) is/are busy|"
                 r"device(?:s)? (?:is|are) already in use|Could not acquire (?:a )?GPU|GPU lease"),
    ("gpu-memory-held", r"CUDA out of memory\..*\bProcess \d+ has [\d.]+ \w+ memory in use"),
    ("gpu-missing", r"no CUDA-capable device is detected|Found no NVIDIA driver|0 active drivers|"
                    r"No (?:CUDA )?GPUs? (?:are |is )?available|NVIDIA-SMI has failed"),
    ("driver-mismatch", r"driver version is insufficient|Driver/library version mismatch|"
                        r"unsupported toolchain|Failed to initialize NVML|"
                        r"forward compatibility was attempted on non supported HW"),
    ("network", r"Connection reset by peer|Connection refused|Could not resolve host|"
                r"Temporary failure in name resolution|Name or service not known|Read timed out|"
                r"ProxyError|Network is unreachable|TLS handshake timeout|RemoteDisconnected|"
                r"HTTP Error 50[0234]|50[234] (?:Service Unavailable|Bad Gateway|Gateway Time-out)|"
                r"Connection timed out|SSL: CERTIFICATE_VERIFY_FAILED"),
    ("toolchain-download", r"Failed to download|Could not download|error downloading|download_and_copy|"
                           r"Could not find a version that satisfies|No matching distribution found|"
                           r"curl: \(\d+\)"),
    ("disk-full", r"No space left on device|Disk quota exceeded|ENOSPC"),
    ("oom-kill", r"Out of memory: Killed process|OOMKilled|oom-kill|exit code 137\b|"
                 r"exited with 137\b|Error 137\b|signal 9\b|SIGKILL|Killed signal terminated|^Killed$"),
    ("runner-lost", r"The runner has received a shutdown signal|lost communication with the server|"
                    r"The operation was canceled|Job was cancelled|timed out waiting for runner"),
)
_INFRA_ALL = re.compile("|".join(f"(?:{p})" for _, p in INFRA_PATTERNS), re.M)
_INFRA_EACH = tuple((n, re.compile(p, re.M)) for n, p in INFRA_PATTERNS)


def infra_kind(text: str) -> str | None:
    """The infrastructure kind named in ``text`` (gpu-busy, driver, download, network, disk,
    oom-kill, runner), or None."""
    if not _INFRA_ALL.search(text):
        return None
    for name, rx in _INFRA_EACH:
        if rx.search(text):
            return name
    return None


def _x_infra(text: str) -> Found | None:
    m = _INFRA_ALL.search(text)
    if not m:
        return None
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    line = strip_prefixes(text[start:end if end >= 0 else len(text)])
    e = _EXC_MSG.match(line)
    typ = _short_type(e.group(1)) if e else "Infrastructure"
    return typ, (e.group(2) or line) if e else line, "setup"


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
    ("cuda", ("rror", "CUDA_ERROR"), _x_cuda),
    ("signal", ("Segmentation", "SIG", "signal", "Abort", "IOT", "Bus error", "Floating point",
                "Illegal instruction", "exit code 1", "exited with 1"), _x_signal),
    ("python", ("Error", "Exception", "OutOfResources", "Exit", "Failure", "Interrupt"), _x_python),
    ("pytest", ("FAILED ", "ERROR "), _x_pytest_summary),
    ("infra", ("",), _x_infra),
    ("exit", ("xit", "returned non-zero"), _x_exit),
)

_NEEDS_TEST = frozenset({"filecheck", "exit", "unknown", "signal"})
#: extractors whose line is too weak to rule out an infrastructure cause named elsewhere
_WEAK = frozenset({"exit", "unknown", "infra", "pytest-plain"})


def signature_of(text: str, test: str = "") -> Signature:
    """The signature of one raw failure output. ``test`` is the normalized test id (used only
    for numeric mismatches, FileCheck failures and bare exit codes). Never raises: an output
    with no recognisable error gets type ``Unknown`` and its last non-empty line."""
    text = clean_text(text)
    for name, pre, fn in EXTRACTORS:
        if not any(p in text for p in pre):
            continue
        found = fn(text)
        if found is None:
            continue
        typ, raw, stage = found
        raw = strip_prefixes(raw)
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
