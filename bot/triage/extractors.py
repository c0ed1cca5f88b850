"""The ordered primary-error extractors of :func:`bot.triage.signature.signature_of` (pure).

Each extractor is ``(name, prefilter substrings, function(text) -> (type, line, stage) | None)``;
a text is searched by an extractor only when one of its prefilter substrings is in it.
"""
from __future__ import annotations

import re
from typing import Callable

from bot.triage.infra import infra_hit
from bot.triage.normalize import strip_prefixes

__all__ = ["EXTRACTORS", "Found"]

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
    # (literal the match starts with, pattern anchored there) — the literal is found with
    # str.find (fast on long logs) and the pattern only checked at those places
    ("Triton Error [", re.compile(r"Triton Error \[(CUDA|HIP)\]: ([^\n\"]*)")),
    ("CUDA error: ", re.compile(r"(CUDA) error: ([^\n\"]*)")),
    ("cuda error: ", re.compile(r"(cuda) error: ([^\n\"]*)")),
    ("HIP error: ", re.compile(r"(HIP) error: ([^\n\"]*)")),
    ("hip error: ", re.compile(r"(hip) error: ([^\n\"]*)")),
    ("CUDA_ERROR_", re.compile(r"(CUDA)_ERROR_\w+: ([^\n\"]*)")),
    ("cudaError", re.compile(r"(cuda)Error\w+ \(error \d+\) due to \"([^\n\"]*)")),
    ("hipError", re.compile(r"(hip)Error\w+ \(error \d+\) due to \"([^\n\"]*)")),
)


def _first_at(text: str, literal: str, rx: re.Pattern):
    i = text.find(literal)
    while i >= 0:
        m = rx.match(text, i)
        if m:
            return m
        i = text.find(literal, i + 1)
    return None


def _x_cuda(text: str) -> Found | None:
    best = None
    for literal, rx in _CUDA_RX:
        m = _first_at(text, literal, rx)
        if m and (best is None or m.start() < best.start()):
            best = m
    if best is None:
        return None
    api = best.group(1).upper()
    return f"{api}Error", f"{api} error: {best.group(2).strip()}", "run"


#: (literals that may name the signal, pattern confirming it, signal)
_SIGNALS = (
    (("Segmentation fault", "SIGSEGV", "signal 11", "exit code 139", "exited with 139"),
     re.compile(r"Segmentation fault|SIGSEGV|signal 11\b|exit code 139\b|exited with 139\b"), "SIGSEGV"),
    (("Aborted", "SIGABRT", "signal 6", "IOT instruction", "exit code 134"),
     re.compile(r"Fatal Python error: Aborted|Aborted \(core dumped\)|SIGABRT|signal 6\b|IOT instruction|"
                r"exit code 134\b"), "SIGABRT"),
    (("Bus error", "SIGBUS"), re.compile(r"Bus error|SIGBUS"), "SIGBUS"),
    (("Floating point exception", "SIGFPE"), re.compile(r"Floating point exception|SIGFPE"), "SIGFPE"),
    (("Illegal instruction", "SIGILL"), re.compile(r"Illegal instruction|SIGILL"), "SIGILL"),
)


def _x_signal(text: str) -> Found | None:
    for literals, rx, name in _SIGNALS:
        if any(x in text for x in literals) and rx.search(text):
            return name, f"fatal signal {name}", "run"
    return None


_EXC_TYPE = r"(?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*?(?:Error|Exception|Exit|Failure|Interrupt|Warning)|\w*OutOfResources)"
# a cheap hint finds candidate lines; the anchored match runs on the prefix-stripped line only
_EXC_HINT = re.compile(r"(?:Error|Exception|OutOfResources|Exit|Failure|Interrupt|Warning)(?=:|[ \t]*$)", re.M)
_EXC_LINE = re.compile(r"(" + _EXC_TYPE + r")(?::[ ]?(.*))?$")
_CAUSE_HINT = re.compile(r"(?:Error|Exception)\(")
_CAUSE_LINE = re.compile(r"([A-Za-z_]\w*(?:Error|Exception))\((['\"])(.*)\2\)$")


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
    # a warning printed after the failure (captured stderr, deprecations) is not the failure
    errors = [e for e in excs if not e[1].endswith("Warning")]
    excs = errors or excs
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


def _x_infra(text: str) -> Found | None:
    hit = infra_hit(text)
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
    ("cuda", tuple(lit for lit, _ in _CUDA_RX), _x_cuda),
    ("signal", ("Segmentation", "SIG", "signal", "Abort", "IOT", "Bus error", "Floating point",
                "Illegal instruction", "exit code 13", "exited with 13"), _x_signal),
    ("python", ("Error", "Exception", "OutOfResources", "Exit", "Failure", "Interrupt"), _x_python),
    ("pytest", ("FAILED ", "ERROR "), _x_pytest_summary),
    ("infra", ("",), _x_infra),
    ("exit", ("xit", "returned non-zero"), _x_exit),
)

