"""The ordered primary-error extractors of :func:`bot.triage.signature.signature_of` (pure).

Each extractor is ``(name, prefilter substrings, function(text) -> (type, line, stage) | None)``;
a text is searched by an extractor only when one of its prefilter substrings is in it.
"""
from __future__ import annotations

import re
from typing import Callable

from bot.triage.infra import infra_hit
from bot.triage.normalize import ascii_twin, strip_prefixes

__all__ = ["EXTRACTORS", "Found", "SCANNED", "TAKES_PRESENT", "TRUNCATED", "infra_line", "innermost_frame", "signal_in_other_locale"]

#: ends a line that is only the start of the message (pytest's summary cut at the terminal width)
TRUNCATED = "\u2026"

# Each extractor: (name, prefilter substrings, function(text) -> (type, line, stage) | None).
Found = tuple[str, str, str]

_ASSERT = re.compile(r"Assertion [`'](.+?)' failed")
# the condition wrapped over lines (an assertion printed by a tool that breaks long lines): the
# opening quote, up to four more lines, the closing ``' failed``
_ASSERT_WRAPPED = re.compile(r"Assertion [`']([^\n]*?(?:\n[^\n]*?){1,4}?)' failed")
# the source file that asserts: group 1 of the first match of ``([\w.\-]+\.(?:cpp|…)):\d+:``,
# found from its ``.ext:N:`` end (a literal the regex engine skips to) and walked back over the
# name: the regex itself retries every start of a long path, quadratic in the path's length
_ASSERT_WHERE_END = re.compile(r"\.(cpp|cc|h|hpp|c|inc):\d+:")


def _assert_where(head: str) -> str | None:
    for m in _ASSERT_WHERE_END.finditer(head):
        b = s = m.start()
        while b > 0 and (head[b - 1].isalnum() or head[b - 1] in "_.-"):
            b -= 1
        if b < s:
            return head[b:m.end(1)]
    return None


def _x_assertion(text: str) -> Found | None:
    m = _ASSERT.search(text)
    if m:
        cond = m.group(1)
    else:
        m = _ASSERT_WRAPPED.search(text)
        if not m:
            return None
        # one line again: each continuation without its log prefix and indentation
        cond = " ".join(x for x in (strip_prefixes(part).strip() for part in m.group(1).split("\n")) if x)
    start = text.rfind("\n", 0, m.start()) + 1
    w = _assert_where(text[start:m.start()])
    where = f"{w}: " if w else ""
    return "Assertion", f"{where}Assertion `{cond}' failed", "compile"


_LLVM = re.compile(r"LLVM ERROR: ?([^\n]*)")


def _x_llvm(text: str) -> Found | None:
    m = _LLVM.search(text)
    return ("LLVM ERROR", m.group(1), "compile") if m else None


_MLIR_ERR = re.compile(r"(?::\d+:\d+|loc\(.*\)|<unknown>|<stdin>\S*): error: (.*)")
_GENERIC_MLIR = ("Failures have been detected while processing an MLIR pass pipeline",)


def _mlir_errors(text: str) -> list[str]:
    out = []
    for _, line in _lines_with(text, (": error: ",)):
        m = _MLIR_ERR.search(line)
        if m and not m.group(1).startswith(_GENERIC_MLIR) and not m.group(1).startswith("CHECK"):
            out.append(m.group(1).strip())
    return out


_PASS_NAME = re.compile(r"\[`([\w.\-]+)`")
_PIPELINE_FAILED = "Pipeline failed while executing"


def _x_mlir_pass(text: str) -> Found | None:
    """``Pipeline failed while executing [`Pass` on …]`` with the pass on the same line, or on
    the next one (MLIR's note wrapped at the terminal width, after any log prefix there)."""
    i = text.find(_PIPELINE_FAILED)
    while i >= 0:
        line, nxt = _line_at(text, i)
        rest = line[len(_PIPELINE_FAILED):].strip()
        if not rest and nxt <= len(text):
            rest = strip_prefixes(_line_at(text, nxt)[0]).strip()
        m = _PASS_NAME.match(rest)
        if m:
            errs = _mlir_errors(text[:i])
            detail = f": {errs[0]}" if errs else ""
            return "MLIRPassFailure", f"{m.group(1)} failed{detail}", "compile"
        i = text.find(_PIPELINE_FAILED, i + 1)
    return None


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


# "ptxas fatal   : msg", "ptxas error   : msg", and with a position: "ptxas /tmp/x.ptx, line 74; error   : msg"
# (triton ships a second ptxas for Blackwell, ``ptxas-blackwell``, which prints its own name); the
# other tools of NVIDIA's toolchain word their diagnostics the same way ("nvcc fatal   : Unsupported
# gpu architecture 'compute_120'", "nvlink fatal   : …"): the tool's name is the type (each pattern
# starts with its literal, which the regex engine skips to: an alternation of names would be tried
# at every position of a long log)
_PTXAS = re.compile(r"ptxas(?:-[a-z]+)? (?:[^\s,]+, line \d+; )?(?:fatal|error)\s*: ([^\n]*)")
_NV_TOOLS = (("nvcc", re.compile(r"nvcc (?:fatal|error)\s*: ([^\n]*)")),
             ("nvlink", re.compile(r"nvlink (?:fatal|error)\s*: ([^\n]*)")))
NV_TOOL_LITERALS = ("ptxas", "nvcc", "nvlink")


def _x_ptxas(text: str) -> Found | None:
    first = None
    if "ptxas" in text:
        for m in _PTXAS.finditer(text):
            msg = m.group(1)
            if msg.startswith("Ptx assembly aborted"):
                first = first or msg
                continue
            return "ptxas", msg, "compile"
    for tool, rx in _NV_TOOLS:
        if tool in text:
            m = rx.search(text)
            if m:
                return tool, m.group(1), "compile"
    return ("ptxas", first, "compile") if first else None


_LOAD_BINARY = "Error during Intel loadBinary: "
_CUDA_RX = (
    # (literal the match starts with, pattern anchored there) — the literal is found with
    # str.find (fast on long logs) and the pattern only checked at those places
    ("Triton Error [", re.compile(r"Triton Error \[(CUDA|HIP|ZE)\]: ([^\n\"]*)")),
    # Intel's loader, before the RuntimeError it raises (a report's traceback is often cut before
    # that): ``Error during Intel loadBinary: Triton Error [ZE]: 0x78000011`` or the result's name
    # alone (``… loadBinary: ZE_RESULT_ERROR_INVALID_KERNEL_NAME``); the runtime is Level Zero
    (_LOAD_BINARY, re.compile(r"Error during Intel loadBinary: (?:Triton Error \[(ZE)\]: )?([^\n\"]*)")),
    ("CUDA error: ", re.compile(r"(CUDA) error: ([^\n\"]*)")),
    ("cuda error: ", re.compile(r"(cuda) error: ([^\n\"]*)")),
    ("HIP error: ", re.compile(r"(HIP) error: ([^\n\"]*)")),
    ("hip error: ", re.compile(r"(hip) error: ([^\n\"]*)")),
    ("CUDA_ERROR_", re.compile(r"(CUDA)_ERROR_\w+: ([^\n\"]*)")),
    ("cudaError", re.compile(r"(cuda)Error\w+ \(error \d+\) due to \"([^\n\"]*)")),
    ("hipError", re.compile(r"(hip)Error\w+ \(error \d+\) due to \"([^\n\"]*)")),
    # the HIP runtime's own words: the error's name, then its message, on a line of its own, in
    # quotes or inside ROCclr's ``guarantee(false && "hipErrorNoBinaryForGpu: …")``
    ("hipError", re.compile(r"(?=(hip))(hipError[A-Z]\w*: [^\n\"]*)")),
)


def _first_at(text: str, literal: str, rx: re.Pattern):
    i = text.find(literal)
    while i >= 0:
        m = rx.match(text, i)
        if m:
            return m
        i = text.find(literal, i + 1)
    return None


#: torch's warning that its wheel has no kernels for the GPU (``torch/cuda/__init__.py``)
_TORCH_CAPABILITY = "is not compatible with the current PyTorch installation"
_TORCH_CAPABILITY_LINE = re.compile(r"[^\n]*with CUDA capability sm_\d+[af]? is not compatible with the current PyTorch "
                                    r"installation")
#: xFormers' warning that its extensions were built for another torch or Python (``xformers/_cpp_lib.py``)
_XFORMERS = "xFormers was built for:"
#: LLVM's warning that it does not know the target processor (``MCSubtargetInfo``: "'sm_120' is not a
#: recognized processor for this target (ignoring processor)"): triton's LLVM older than the GPU
_LLVM_PROCESSOR = "is not a recognized processor for this target"
_LLVM_PROCESSOR_LINE = re.compile(r"'[\w.-]+' is not a recognized processor for this target")
_XFORMERS_TORCH = re.compile(r"PyTorch (?P<built>\S+) with CUDA \S+ \(you have (?P<have>[^)\s]+)\)")
_XFORMERS_PYTHON = re.compile(r"Python\s+(?P<built>\S+) \(you have (?P<have>[^)\s]+)\)")


def _torch_capability(text: str) -> Found | None:
    m = _TORCH_CAPABILITY_LINE.search(text)
    return ("Warning", m.group(0).strip(), "setup") if m else None


def _x_warning(text: str) -> Found | None:
    """A library's warning that names its cause, read only where no error was found (such a
    warning is printed at start-up, and the error after it, when there is one, is the failure):
    torch's GPU-capability warning (one per GPU generation, :mod:`bot.triage.canonical`), LLVM's
    ``'sm_120' is not a recognized processor for this target`` (an LLVM older than the GPU; one per
    GPU generation too), and
    xFormers' "built for" lines — extensions built for a CUDA torch under a CPU-only one
    (``(you have 2.1.2+cpu)``: the fix is a CUDA build of torch), for another torch (the fix is
    an xFormers built for it), or for another Python only."""
    if _TORCH_CAPABILITY in text:
        found = _torch_capability(text)
        if found:
            return found
    if _LLVM_PROCESSOR in text:
        m = _LLVM_PROCESSOR_LINE.search(text)
        if m:
            return "Warning", m.group(0).strip(), "compile"
    i = text.find(_XFORMERS)
    if i < 0:
        return None
    # the two lines after it, each behind the log's own prefix (a CI timestamp) when it has one
    after = [strip_prefixes(x).strip() for x in text[i:].split("\n")[1:3]]
    torch = _XFORMERS_TORCH.match(after[0]) if after else None
    if torch is None:
        return None
    py = _XFORMERS_PYTHON.match(after[1]) if len(after) > 1 else None
    if torch.group("have").endswith("+cpu") and not torch.group("built").endswith("+cpu"):
        line = "xFormers was built for a CUDA PyTorch: a CPU-only PyTorch is installed"
    elif torch.group("have") != torch.group("built") or py is None or py.group("built") == py.group("have"):
        line = "xFormers was built for another PyTorch"
    else:
        line = "xFormers was built for another Python"
    return "Warning", line, "setup"


#: nvidia-container-cli's check of an image's CUDA requirement against the machine's driver ("nvidia-container-cli:
#: requirement error: unsatisfied condition: cuda>=11.0, please update your driver to a newer version, or use an
#: earlier cuda container"), which docker prints inside its OCI runtime's error and a script ends with an exit code
_CONTAINER_REQUIREMENT = "unsatisfied condition: cuda"
_CONTAINER_REQUIREMENT_LINE = re.compile(r"unsatisfied condition: cuda\s*>=?\s*[\d.]+")


def _x_container_requirement(text: str) -> Found | None:
    """nvidia-container-cli refusing to start a container whose image asks for a newer CUDA than the machine's
    driver gives: one line whatever version the image asks for (the version names the image, not the fault: the
    driver is older than the container's CUDA, as torch's "The NVIDIA driver on your system is too old" says of a
    wheel's). Read only where no error was found (the hook's failure ends the job before any test runs)."""
    m = _CONTAINER_REQUIREMENT_LINE.search(text)
    if m is None:
        return None
    return ("RuntimeError", "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=<version>", "setup")


def _x_cuda(text: str, present=None) -> Found | None:
    """``present``: when given, holds each of :data:`SCANNED` that ``text`` holds (the others
    are not looked for)."""
    best = None
    for literal, rx in _CUDA_RX:
        if present is not None and literal not in present:
            continue
        m = _first_at(text, literal, rx)
        if m and (best is None or m.start() < best.start()):
            best = m
    if best is None:
        return None
    api = (best.group(1) or "ZE").upper()        # (Intel's loadBinary line names no runtime: Level Zero)
    msg = best.group(2).strip()
    if msg.startswith("no kernel image is available") and _TORCH_CAPABILITY in text:
        # the error torch's capability warning announces: the warning names the cause, the
        # error (any kernel of a build without the GPU's code) does not
        found = _torch_capability(text)
        if found:
            return found
    return f"{api}Error", f"{api} error: {msg}", "run"


#: C/C++ compiler and linker diagnostics that name their cause: (literal, pattern over the
#: prefix-stripped line, type). The lines that only say that a tool failed — gcc's ``compilation
#: terminated.``, ``collect2: error: ld returned 1 exit status``, clang's ``linker command failed``
#: — are none of these: the cause is the line above them.
_CC_DIAGNOSTICS = (
    # gcc, clang, nvcc: "main.c:5:10: fatal error: Python.h: No such file or directory"
    ("fatal error: ", re.compile(r"(?:^|[\s:])fatal error: \S"), "CompilerError"),
    # MSVC's compiler and linker in any language: "main.c(12): fatal error C1083: …", "error C2059: …",
    # "LINK : fatal error LNK1181: cannot open input file 'cuda.lib'"
    ("error C", re.compile(r"\berror C\d{4}\s*:"), "CompilerError"),
    ("error LNK", re.compile(r"\berror LNK\d{4}\s*:"), "LinkerError"),
    # TinyCC: "cuda_utils.c:13: error: include file 'Python.h' not found", "tcc: error: library 'cuda' not found"
    ("error: include file '", re.compile(r"error: include file '[^']+' not found"), "CompilerError"),
    ("error: library '", re.compile(r"error: library '[^']+' not found"), "LinkerError"),
    # GNU ld, lld, ld64: "ld: cannot find -lcuda", "ld.lld: error: unable to find library -lcuda",
    # "ld: library not found for -lcuda", "undefined reference to `cuInit'"
    ("cannot find -l", re.compile(r"cannot find -l\S"), "LinkerError"),
    ("unable to find library -l", re.compile(r"unable to find library -l\S"), "LinkerError"),
    ("library not found for -l", re.compile(r"library not found for -l\S"), "LinkerError"),
    ("undefined reference to ", re.compile(r"undefined reference to [`'\"]"), "LinkerError"),
)
CC_LITERALS: tuple[str, ...] = tuple(lit for lit, _, _ in _CC_DIAGNOSTICS)


def _x_cc(text: str) -> Found | None:
    """The first C/C++ compiler or linker diagnostic that names its cause (a missing header or
    library, an MSVC error code, an undefined symbol): triton builds its launcher with the
    system's C compiler, and the exception around that build (``CalledProcessError``) names
    only the command."""
    best = None
    for literal, rx, typ in _CC_DIAGNOSTICS:
        i = text.find(literal)
        while i >= 0 and (best is None or i < best[0]):
            ls = text.rfind("\n", 0, i) + 1
            line = strip_prefixes(_line_at(text, ls)[0]).strip()
            if rx.search(line):
                best = (i, typ, line)
                break
            i = text.find(literal, i + 1)
    if best is None:
        return None
    return best[1], best[2], "compile"


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

#: zsh's report of a job killed by a signal: ``[1]    2964311 abort (core dumped)  python t.py``,
#: ``zsh: segmentation fault  python t.py`` (its own lowercase names)
_ZSH_SIGNAL = re.compile(r"(?:^|\n)[ \t]*(?:zsh: |\[\d+\][ \t]+(?:\+[ \t]+)?\d+ )(abort|segmentation fault|bus error|"
                         r"illegal hardware instruction|floating point exception)\b")
_ZSH_LITERALS = ("zsh: ", " abort ", " abort\n", "segmentation fault", "bus error", "illegal hardware instruction",
                 "floating point exception")
_ZSH_NAMES = {"abort": "SIGABRT", "segmentation fault": "SIGSEGV", "bus error": "SIGBUS",
              "illegal hardware instruction": "SIGILL", "floating point exception": "SIGFPE"}


#: a shell's fatal-signal message in another locale (Python's own "Fatal Python error: …" is never
#: translated, so these are read late: the second ``signal`` entry of :data:`EXTRACTORS`)
_L10N_SIGNALS = (("Speicherzugriffsfehler", "SIGSEGV"), ("Erreur de segmentation", "SIGSEGV"),
                 ("Violación de segmento", "SIGSEGV"), ("Errore di segmentazione", "SIGSEGV"), ("段错误", "SIGSEGV"),
                 ("セグメンテーション違反", "SIGSEGV"), ("Abgebrochen (Speicherabzug", "SIGABRT"),
                 ("Abandon (core dumped)", "SIGABRT"), ("Abortado (", "SIGABRT"), ("已放弃", "SIGABRT"),
                 ("中止 (コアダンプ", "SIGABRT"))


def signal_in_other_locale(text: str) -> Found | None:
    """A fatal signal named in the shell's words of another locale, or None."""
    for words, name in _L10N_SIGNALS:
        if words in text:
            return name, f"fatal signal {name}", "run"
    return None


def _x_signal(text: str) -> Found | None:
    for literals, rx, name in _SIGNALS:
        if any(x in text for x in literals) and rx.search(text):
            return name, f"fatal signal {name}", "run"
    if any(x in text for x in _ZSH_LITERALS):
        m = _ZSH_SIGNAL.search(text)
        if m:
            name = _ZSH_NAMES[m.group(1)]
            return name, f"fatal signal {name}", "run"
    return None


_DID_NOT_RAISE = re.compile(r"DID NOT RAISE[^\n]*")
_XPASS = re.compile(r"\[XPASS\(strict\)\] ?([^\n]*)")
#: pytest-timeout's outcome: ``Failed: Timeout (>300.0s) from pytest-timeout.`` (2.2 and later),
#: ``Failed: Timeout >300.0s`` (before)
PYTEST_TIMEOUT = "Failed: Timeout "
_TIMEOUT = re.compile(r"Failed: Timeout \(?>([\d.]+)s\)?")


def _x_pytest_outcome(text: str) -> Found | None:
    """pytest's own outcomes, which are no exception of the code under test: ``Failed: DID NOT
    RAISE <class 'X'>`` (``pytest.raises`` saw nothing), ``[XPASS(strict)] reason`` (an
    expected failure passed) and pytest-timeout's ``Failed: Timeout (>300.0s) from
    pytest-timeout.`` (the test ran past its limit: the test's own hang, one identity per test in
    both releases' words; the stack dump printed around it is no title)."""
    m = _DID_NOT_RAISE.search(text)
    if m:
        return "Failed", m.group(0).strip(), "test"
    m = _TIMEOUT.search(text) if PYTEST_TIMEOUT in text else None
    if m:
        return "Failed", f"Timeout (>{m.group(1)}s) from pytest-timeout", "test"
    m = _XPASS.search(text)
    if m:
        return "XPASS(strict)", m.group(1).strip(), "test"
    return None


_SETUP_ERROR = re.compile(r"ERROR at (setup|teardown) of ")


def _x_pytest_setup(text: str) -> Found | None:
    """A fixture error whose report holds no exception line: pytest's ``ERROR at setup of t``."""
    m = _SETUP_ERROR.search(text)
    return ("FixtureError", f"error at {m.group(1)}", "test") if m else None


_EXC_TYPE = r"(?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*?(?:Error|Exception|Exit|Failure|Interrupt|Warning)|\w*OutOfResources)"
# candidate lines: one of these words followed by ":" or the line's end (found with str.find); the
# anchored match runs on the prefix-stripped line only
_EXC_WORDS = ("Error", "Exception", "OutOfResources", "Exit", "Failure", "Interrupt", "Warning")
_EXC_TAIL = re.compile(r":|[ \t]*$", re.M)
_EXC_LINE = re.compile(r"(" + _EXC_TYPE + r")(?::[ ]?(.*))?$")
_CAUSE_WORDS = ("Error(", "Exception(")
_CAUSE_LINE = re.compile(r"([A-Za-z_]\w*(?:Error|Exception))\((['\"])(.*)\2\)$")
# (the same patterns for a line that is all ASCII: see normalize.ascii_twin)
_EXC_LINE_ASCII, _CAUSE_LINE_ASCII = ascii_twin(_EXC_LINE), ascii_twin(_CAUSE_LINE)


def _lines_with(text: str, words: tuple[str, ...], tail: re.Pattern | None = None):
    """(line start, prefix-stripped line) of each line holding one of ``words`` (literals, found
    with ``str.find``: several times faster than a regex alternation, on long logs most of all)
    followed by a match of ``tail`` (when given), in order: the lines of the matches of
    ``re.compile("(?:" + "|".join(words) + ")(?=" + tail + ")")``."""
    find = text.find
    for ls in _line_starts(text, words, tail):
        le = find("\n", ls)
        yield ls, strip_prefixes(text[ls:le if le >= 0 else len(text)])


def _line_starts(text: str, words: tuple[str, ...], tail: re.Pattern | None = None) -> list[int]:
    """The sorted start offsets of the lines :func:`_lines_with` yields."""
    starts = set()
    find = text.find
    for w in words:
        n = len(w)
        i = find(w)
        while i >= 0:
            if tail is None or text.startswith(":", i + n) or tail.match(text, i + n):
                starts.add(text.rfind("\n", 0, i) + 1)
            i = find(w, i + 1)
    return sorted(starts)


def _exception_at(text: str, ls: int):
    """``(line start, type, message)`` of the exception line starting at ``ls``, or None."""
    le = text.find("\n", ls)
    line = strip_prefixes(text[ls:le if le >= 0 else len(text)])
    e = (_EXC_LINE_ASCII if line.isascii() else _EXC_LINE).match(line)
    return (ls, e.group(1), (e.group(2) or "").strip()) if e else None


def _last_exception(text: str, starts: list[int] | None = None, parsed: dict | None = None):
    """``(line start, type, message)`` of the last exception line that is not a warning (else
    of the last warning), read from the end: the lines before it are not parsed. None if none.
    ``starts``: the candidate lines (:func:`_line_starts` of the exception words), when known;
    ``parsed``: filled with each line parsed (line start → result), for :func:`_py_exceptions`."""
    warning = None
    if starts is None:
        starts = _line_starts(text, _EXC_WORDS, _EXC_TAIL)
    for ls in reversed(starts):
        found = _exception_at(text, ls)
        if parsed is not None:
            parsed[ls] = found
        if found:
            if not found[1].endswith("Warning"):
                return found
            warning = warning or found
    return warning


def _py_exceptions(text: str, starts: list[int] | None = None, parsed: dict | None = None):
    """Every exception line, in order (``starts`` and ``parsed`` as in :func:`_last_exception`:
    a line parsed there is not parsed again)."""
    if starts is None:
        starts = _line_starts(text, _EXC_WORDS, _EXC_TAIL)
    out = []
    for ls in starts:
        found = parsed[ls] if parsed is not None and ls in parsed else _exception_at(text, ls)
        if found:
            out.append(found)
    return out


def _cause_call(text: str, words: tuple[str, ...] = _CAUSE_WORDS):
    found = None
    for _, line in _lines_with(text, words):
        c = (_CAUSE_LINE_ASCII if line.isascii() else _CAUSE_LINE).match(line)
        if c:
            found = (c.group(1), c.group(3))
    return found


def _short_type(t: str) -> str:
    return t.rsplit(".", 1)[-1]


_CARET = frozenset("^~ ")


def _last_source_line(after: str) -> str:
    """The last line after the first of ``after`` that is not empty nor a caret line
    (``^~~~``), prefix-stripped; "" if none. Read from the end: only the lines it needs."""
    lines = after.split("\n")
    for k in range(len(lines) - 1, 0, -1):
        line = strip_prefixes(lines[k])
        if line and not set(line) <= _CARET:
            return line
    return ""


# pytest's failure report marks the lines of the raised exception's message (and, for a plain
# ``assert``, its explanation) with ``E`` and blanks, after any CI prefix
_E_HEAD = re.compile(r"E(?:[ \t]{2,}|[ \t]*$)")


def _e_content(line: str) -> str | None:
    """The text of ``line`` when it is a line of one of pytest's ``E`` blocks ("" for an empty
    one), else None."""
    i = line.find("E")
    while i >= 0:
        if _E_HEAD.match(line, i) and (i == 0 or strip_prefixes(line[:i] + "x") == "x"):
            return line[i + 1:].strip()
        i = line.find("E", i + 1)
    return None


def _line_at(text: str, ls: int) -> tuple[str, int]:
    """The line starting at ``ls`` and the start of the next one (``len(text) + 1`` at the end)."""
    le = text.find("\n", ls)
    le = len(text) if le < 0 else le
    return text[ls:le], le + 1


def _e_block_after(text: str, ls: int, lines: int = 2) -> list[str]:
    """The first ``lines`` non-empty lines of the ``E`` block that continues after the E line at
    ``ls`` (its message's next lines); [] when the line at ``ls`` is no E line."""
    first, pos = _line_at(text, ls)
    if _e_content(first) is None:
        return []
    out: list[str] = []
    while pos <= len(text) and len(out) < lines:
        line, pos = _line_at(text, pos)
        c = _e_content(line)
        if c is None:
            break
        if c:
            out.append(c)
    return out


#: a plain assertion's message that names no value (the expression was only a call or a name):
#: pytest's first ``+  where`` line says what was asserted
_BARE_ASSERT = re.compile(r"assert (?:not )?(?:False|True|None|0|\[\]|\{\}|''|\"\")$")


def _x_pytest_assert(text: str) -> Found | None:
    """A plain ``assert`` as pytest reports it (assertion rewriting): the first line of the last
    ``E`` block is the evaluated expression without an ``AssertionError:`` prefix (pytest's
    ``ExceptionInfo.exconly(tryshort=True)``), as in ``E       assert torch.Size([64]) == (128,)``
    — the same words as its short summary (``FAILED t - assert …``), read when no such block is
    there. A bare ``assert False`` gets its first ``+  where …`` line. None when an exception
    line of a later ``E`` block follows (the Python extractor reads that one)."""
    found = None
    for ls in _line_starts(text, ("assert ",)):
        c = _e_content(_line_at(text, ls)[0])
        if c is None or not c.startswith("assert "):
            continue
        # only the first line of its block (after "AssertionError: <message>" the Python
        # extractor reads the message)
        if ls == 0 or _e_content(text[text.rfind("\n", 0, ls - 1) + 1:ls - 1]) is None:
            found = (ls, c)
    if found is None:
        m = _first_at_line_start(text, ("FAILED ", "ERROR "), _PYTEST_FAILED)
        msg = m.group(2) if m else None
        if not msg or not msg.startswith("assert "):
            return None
        if msg.endswith("..."):       # cut at the terminal width: a prefix of the message
            msg = msg[:-3].rstrip() + TRUNCATED
        return "AssertionError", msg, "check" if _is_numeric(msg, "") else "test"
    ls, msg = found
    last = _last_exception(text)
    if last is not None and last[0] > ls and not last[1].endswith("Warning") \
            and _e_content(_line_at(text, last[0])[0]) is not None:
        return None
    if _BARE_ASSERT.match(msg):
        more = _e_block_after(text, ls, 1)
        if more and more[0].startswith("+"):
            msg = f"{msg} {more[0].lstrip('+ ')}"
    return "AssertionError", msg, "check" if _is_numeric(msg, "") else "test"


#: exceptions that wrap the real error in their message ("LoweringException: ImportError: …",
#: "InductorError: CalledProcessError: …", "BackendCompilerFailed: backend='inductor' raised: …")
_WRAPPED = re.compile(r"(?:backend='\w+' raised:\s*)?(" + r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*?(?:Error|Exception)" + r"): ?(.*)")


#: a wrapper's own sentence, then the exception it wraps: Inductor's ``No valid triton configs.
#: PTXASError: …`` (``NoTritonConfigsError``), ``Triton compilation failed. OutOfResources: …``
_WRAPPED_AFTER = re.compile(r"[^:]*?[.!]\s+(?=(?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*?(?:Error|Exception)|\w*OutOfResources): ?\S)")
_WRAPPED_INNER = re.compile(r"((?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*?(?:Error|Exception)|\w*OutOfResources)): ?(.*)")


def _unwrap(typ: str, msg: str) -> tuple[str, str]:
    """The innermost ``Type: message`` of a message that starts with another exception, or that
    follows the wrapper's own first sentence (``No valid triton configs. PTXASError: …``)."""
    if "Error" not in msg and "Exception" not in msg and "OutOfResources" not in msg:
        return typ, msg
    for _ in range(4):
        m = _WRAPPED.match(msg)
        if not m:
            a = _WRAPPED_AFTER.match(msg)
            m = _WRAPPED_INNER.match(msg, a.end()) if a else None
            if not m:
                break
        typ, msg = m.group(1), m.group(2).strip()
    return typ, msg


#: lines that are no exception's message: a traceback's own lines, a chained exception's header
_NOT_MESSAGE = ("Traceback (", "File \"", "During handling of", "The above exception", "[end of output]")


def _next_line_message(text: str, ls: int) -> str:
    """The message of an exception line without one at ``ls`` when it starts on the next line
    (Python prints ``Type: `` + ``str(e)``, and a message that begins with a newline — old torch's
    ``AssertionError: \nThe NVIDIA driver on your system is too old …`` — sits below): that line,
    when it is neither empty nor a traceback's line nor another exception line; else ""."""
    first, pos = _line_at(text, ls)
    if _e_content(first) is not None or pos > len(text):
        return ""
    line = strip_prefixes(_line_at(text, pos)[0])
    if not line or line.startswith(_NOT_MESSAGE) or _EXC_LINE.match(line):
        return ""
    return line


def _x_python(text: str, present=None) -> Found | None:
    """``present``: when given, holds each of :data:`SCANNED` that ``text`` holds (the others
    are not looked for)."""
    if present is None:
        words, cause_words = _EXC_WORDS, _CAUSE_WORDS
    else:
        has = present.__contains__
        words, cause_words = tuple(filter(has, _EXC_WORDS)), tuple(filter(has, _CAUSE_WORDS))
    starts = _line_starts(text, words, _EXC_TAIL)
    parsed: dict = {}
    last = _last_exception(text, starts, parsed)
    if last is None:
        c = _cause_call(text, cause_words)       # only a repr line: ValueError("arange's arguments must be …")
        return (_short_type(c[0]), c[1], "compile" if "arange" in c[1] or "tl." in c[1] else "test") if c else None
    pos, typ, msg = last
    if not msg:
        # a message that starts on the next line (numpy's assert_allclose: "AssertionError: ",
        # then "Not equal to tolerance rtol=…", a blank line, and what differs): its first two
        # lines, when pytest marks them as the same E block
        msg = "; ".join(_e_block_after(text, pos)) or _next_line_message(text, pos)
    typ, msg = _unwrap(typ, msg)
    short = _short_type(typ)
    if short in ("CompilationError", "CalledProcessError") or msg.startswith("PassManager::run failed"):
        # these read the exceptions before the last one too
        # (a warning printed after the failure — captured stderr, deprecations — is not the failure)
        excs = _py_exceptions(text, starts, parsed)
        excs = [e for e in excs if not e[1].endswith("Warning")] or excs
    if short == "CompilationError":
        # Triton: "CompilationError: at L:C:" + source + caret + the cause, either as a
        # repr line ``ValueError('…')`` after the CompilationError or as an earlier exception
        # ("The above exception was the direct cause of the following exception").
        after = text[pos:]
        c = _cause_call(after, cause_words)
        if c:
            return _short_type(c[0]), c[1], "compile"
        earlier = [e for e in excs[:-1] if _short_type(e[1]) != "CompilationError"]
        if earlier:
            _, t2, m2 = earlier[-1]
            return _short_type(t2), m2, "compile"
        last = _last_source_line(after)
        if last and not last.startswith(("File ", "def ", "@", "##[", "Error: ")):
            return "CompilationError", last, "compile"
        return "CompilationError", msg, "compile"
    if short == "CalledProcessError" or msg.startswith("PassManager::run failed"):
        earlier = [e for e in excs[:-1] if not _short_type(e[1]).endswith("CalledProcessError")]
        if earlier:
            pos, typ, msg = earlier[-1]
            typ, msg = _unwrap(typ, msg)
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
                      r"Arrays are not (?:almost )?equal|Not equal to tolerance|allclose", re.I)


#: lowercase pieces one of which every _NUMERIC match holds (a case-insensitive alternation is
#: slow to run on a long message; on ASCII text, lowercasing is exact)
_NUMERIC_HINTS = ("not close", "mismatch", "arrays are not", "not equal to tolerance", "allclose")


def _is_numeric(msg: str, text: str) -> bool:
    if msg.isascii():
        low = msg.lower()
        hit = any(h in low for h in _NUMERIC_HINTS) and _NUMERIC.search(msg) is not None
    else:
        hit = _NUMERIC.search(msg) is not None
    return hit or (msg == "" and "Mismatched elements" in text)


_PYTEST_FAILED = re.compile(r"(?:FAILED|ERROR) (?:\[[\d.]+m?s\] )?([^\s]+)(?: - ([^\n]*))?$", re.M)
_EXC_MSG = re.compile(r"((?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*?(?:Error|Exception|Exit|Failure)|\w*OutOfResources))(?:: ?(.*))?")


def _first_at_line_start(text: str, literals: tuple[str, ...], rx: re.Pattern):
    """The first match of ``rx`` at a place where one of ``literals`` begins a line, or follows
    nothing but a log prefix (a CI timestamp, ``##[error]``: what :func:`strip_prefixes` removes)."""
    cands = []
    for lit in literals:
        i = text.find(lit)
        while i >= 0:
            ls = text.rfind("\n", 0, i) + 1
            if i == ls or not strip_prefixes(text[ls:i] + "x")[:-1]:
                cands.append(i)
            i = text.find(lit, i + 1)
    for i in sorted(cands):
        m = rx.match(text, i)
        if m:
            return m
    return None


#: lines that end a summary line's message: the next outcome (``-rfs`` lists skips after failures),
#: pytest's closing rule, ``-x``'s "!!! stopping after 1 failures !!!" and an interrupt, ``pytest -q``'s
#: counts line (no rule around it), a CI runner's own close (the web view's ``Error: Process completed …``,
#: a downloaded log's ``##[error]Process completed …`` once its prefix is stripped)
_SUMMARY_END = ("FAILED ", "ERROR ", "PASSED ", "SKIPPED ", "XFAIL ", "XPASS ", "=", "!", "Interrupted:",
                "KeyboardInterrupt", "Error: Process completed", "Process completed with exit code")
_PYTEST_COUNTS = re.compile(r"\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected|rerun)\b")


def _summary_after(text: str, pos: int, lines: int = 2) -> list[str]:
    """The first ``lines`` non-empty lines after a summary line (``pos``: where the next line starts), without
    their log prefixes, up to the next outcome line or pytest's ``===`` rule, a traceback's line or another
    exception line: the rest of a message that began with a newline (as :func:`_e_block_after` reads it in
    the failure section)."""
    out: list[str] = []
    while pos < len(text) and len(out) < lines:
        raw, pos = _line_at(text, pos)
        line = strip_prefixes(raw)
        if (line.startswith(_SUMMARY_END) or line.startswith(_NOT_MESSAGE) or _EXC_LINE.match(line)
                or _PYTEST_COUNTS.match(line)):
            break
        if line:
            out.append(line)
    return out


def _x_pytest_summary(text: str) -> Found | None:
    m = _first_at_line_start(text, ("FAILED ", "ERROR "), _PYTEST_FAILED)
    if not m or not m.group(2):
        return None
    msg = m.group(2)
    if msg.startswith(("Failed: ", "[XPASS(strict)]")):          # pytest's own outcomes
        typ, _, rest = msg.partition(": ") if msg.startswith("Failed") else ("XPASS(strict)", "", msg[15:].strip())
        return typ, (rest[:-3].rstrip() + TRUNCATED) if rest.endswith("...") else rest, "test"
    e = _EXC_MSG.match(msg)
    if not e:
        return "PytestFailure", msg, "test"
    # a message that starts on the next line (numpy's "AssertionError: " + newline + "Not equal to
    # tolerance …"): pytest prints the rest below the summary line, as the failure section's E block holds it
    # (only after "Type: " — a bare "Type" had no message, and the next line is someone else's)
    after = "; ".join(_summary_after(text, m.end() + 1)) if e.group(2) is not None and not e.group(2).strip() else ""
    typ, msg = _unwrap(e.group(1), (e.group(2) or "").strip() or after)
    if msg.endswith("..."):           # pytest cut it at the terminal width: a prefix of the message
        msg = msg[:-3].rstrip() + TRUNCATED
    return _short_type(typ), msg, "check" if _is_numeric(msg, "") else "test"


def _x_infra(text: str) -> Found | None:
    hit = infra_hit(text)
    return infra_line(text, hit[1]) if hit else None


def infra_line(text: str, at: int) -> Found:
    """The infrastructure extractor's answer for a phrase found at offset ``at``: its whole line."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return "Infrastructure", text[start:end if end >= 0 else len(text)], "setup"


_EXIT = re.compile(r"(?:exit(?:ed with)? (?:code|status) |returned non-zero exit status |Exit Code: )(-?\d+)", re.I)


def _x_exit(text: str) -> Found | None:
    # The last match's number. Every match holds "exit" (any case) and a match also starts at
    # that "exit" with the same number, so trying the occurrences of "exit" from the end finds
    # it without running the case-insensitive alternation over the whole log. Non-ASCII text
    # (where case-folding is not byte-for-byte) takes the plain scan.
    m = None
    if text.isascii():
        low = text.lower()
        i = low.rfind("exit")
        while i >= 0:
            m = _EXIT.match(text, i)
            if m:
                break
            i = low.rfind("exit", 0, i)
    else:
        for m in _EXIT.finditer(text):
            pass
    if not m:
        return None
    return "ExitCode", f"exit code {m.group(1)}", "job"


_FRAME_FAULTHANDLER = re.compile(r'File "([^"\n]+)", line \d+ in ([\w<>.]+)')
_FRAME_TRACEBACK = re.compile(r'File "([^"\n]+)", line \d+, in ([\w<>.]+)')


def innermost_frame(text: str) -> str:
    """``basename:function`` of the innermost Python frame: the first of the current thread in a
    faulthandler dump (``Fatal Python error``: most recent call first), else the last of a
    traceback (most recent call last); "" when the text holds none."""
    i = text.find("Current thread")
    if i >= 0:
        m = _FRAME_FAULTHANDLER.search(text, i)
        if m:
            return f"{_base(m.group(1))}:{m.group(2)}"
    if 'File "' in text:
        last = None
        for last in _FRAME_TRACEBACK.finditer(text):
            pass
        if last is None:
            last = _FRAME_FAULTHANDLER.search(text)
        if last is not None:
            return f"{_base(last.group(1))}:{last.group(2)}"
    return ""


def _base(path: str) -> str:
    return path[max(path.rfind("/"), path.rfind("\\")) + 1:]


Extractor = tuple[str, tuple[str, ...], Callable[[str], "Found | None"]]

#: the literals the Python and CUDA extractors look for: given the set of those a text holds
#: (``present``), they look only for those (:mod:`bot.triage.scan` finds them in one pass)
SCANNED: tuple[str, ...] = _EXC_WORDS + _CAUSE_WORDS + tuple(lit for lit, _ in _CUDA_RX)
#: the extractors that take ``present``
TAKES_PRESENT = frozenset({"python", "cuda"})

#: Ordered: the first extractor that finds something chooses the primary error.
EXTRACTORS: tuple[Extractor, ...] = (
    ("assertion", ("Assertion",), _x_assertion),
    ("llvm", ("LLVM ERROR",), _x_llvm),
    ("mlir-pass", ("Pipeline failed while executing",), _x_mlir_pass),
    ("filecheck", ("CHECK",), _x_filecheck),
    ("mlir", (": error: ",), _x_mlir_error),
    ("ptxas", NV_TOOL_LITERALS, _x_ptxas),
    # " error: " stands for the four "<api> error: " literals (one scan instead of four)
    ("cuda", ("Triton Error [", " error: ", "CUDA_ERROR_", "cudaError", "hipError", _LOAD_BINARY), _x_cuda),
    # a compiler or linker diagnostic (the launcher's build): before a signal and before the
    # Python exception around the build
    ("cc", CC_LITERALS, _x_cc),
    ("signal", ("Segmentation", "SIG", "signal", "Aborted", "IOT instruction", "Bus error", "Floating point",
                "Illegal instruction", "exit code 13", "exited with 13") + _ZSH_LITERALS, _x_signal),
    ("pytest-outcome", ("DID NOT RAISE", "[XPASS(strict)]", PYTEST_TIMEOUT), _x_pytest_outcome),
    ("pytest-assert", ("assert ",), _x_pytest_assert),
    ("python", ("Error", "Exception", "OutOfResources", "Exit", "Failure", "Interrupt"), _x_python),
    ("pytest", ("FAILED ", "ERROR "), _x_pytest_summary),
    ("pytest-setup", ("ERROR at ",), _x_pytest_setup),
    # a shell's fatal-signal message in another locale: only where no exception was found
    # (Python's "Fatal Python error: …" is never translated, and the English names come first)
    ("signal", tuple(w for w, _ in _L10N_SIGNALS), signal_in_other_locale),
    # a warning that names its cause: only where no error was found
    ("warning", (_TORCH_CAPABILITY, _XFORMERS, _LLVM_PROCESSOR), _x_warning),
    # a GPU container the driver is too old for: only where no error was found
    ("container", (_CONTAINER_REQUIREMENT,), _x_container_requirement),
    ("infra", ("",), _x_infra),
    ("exit", ("xit", "returned non-zero"), _x_exit),
)

