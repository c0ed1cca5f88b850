"""Signature classes of signature version 4, on real texts: ``fresh.jsonl`` (tuning data since its
one held-out measurement, see docs/triage.md) and the tuning split of ``wild.jsonl``.

C/C++ compiler and linker diagnostics (triton builds its launcher with the system's C compiler),
the C compiler's ``CalledProcessError``, HIP errors by name, zsh's signal lines, ptxas features by
data type, and MLIR pass names and assertions wrapped onto the next line."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.triage.records import normalize_test_id
from bot.triage.signature import signature_of

DATA = Path(__file__).resolve().parents[1] / "data" / "triage"


def _load(name: str) -> dict[str, dict]:
    return {r["id"]: r for r in (json.loads(x) for x in (DATA / name).read_text().splitlines() if x.strip())}


_FRESH = _load("fresh.jsonl")
_WILD = _load("wild.jsonl")


def f(rid: str) -> tuple[str, str]:
    """(text, normalized test) of a record of fresh.jsonl."""
    r = _FRESH[rid]
    return r["text"], normalize_test_id(r["test"])


def w(rid: str) -> tuple[str, str]:
    r = _WILD[rid]
    assert r["split"] == "tune", f"{rid} is held out: tests never use the held-out split"
    return r["text"], normalize_test_id(r["test"])


def sig(t: tuple[str, str]):
    return signature_of(*t)


# ------------------------------------------------------------------ a missing library
def test_a_missing_library_is_one_identity_across_ld_and_triton_s_own_check():
    ids = ["libcuda-not-linkable-0",       # ld: cannot find -lcuda, then CalledProcessError around gcc
           "libcuda-not-linkable-0-ci",    # the same behind CI timestamps
           "libcuda-not-linkable-1",       # ld's "cannot find -lcuda: No such file or directory" + collect2
           "libcuda-not-linkable-2",       # triton's AssertionError: libcuda.so cannot found!
           "libcuda-not-linkable-3", "libcuda-not-linkable-4"]
    keys = {sig(f(i)).key for i in ids}
    assert keys == {"LinkerError|missing library cuda"}
    # the ld line is the cause: neither collect2's exit status nor the CalledProcessError wins
    assert sig(f("libcuda-not-linkable-0")).rule == "cc"
    assert sig(f("libcuda-not-linkable-1")).raw == "/usr/bin/ld: cannot find -lcuda: No such file or directory"


@pytest.mark.parametrize("line", [
    "ld.lld: error: unable to find library -lcuda",                # lld
    "ld: library not found for -lcuda",                            # ld64
    "tcc: error: library 'cuda' not found",                        # TinyCC
    "LINK : fatal error LNK1181: cannot open input file 'cuda.lib'",   # MSVC's linker
])
def test_other_linkers_name_the_same_missing_library(line):
    assert sig((line + "\ncollect2: error: ld returned 1 exit status", "")).key == "LinkerError|missing library cuda"


def test_another_library_is_another_fault():
    text = f("libcuda-not-linkable-1")[0].replace("-lcuda", "-lnvidia-ml")
    assert sig((text, "")).key == "LinkerError|missing library nvidia-ml"


# ------------------------------------------------------------------ a missing header
def test_a_missing_header_is_one_identity_across_gcc_msvc_and_tinycc():
    gcc = sig(f("python-headers-missing-5"))     # gcc, then "compilation terminated."
    msvc = sig(f("python-headers-missing-6"))    # MSVC C1083 in Chinese, curly quotes
    tcc = sig(f("python-headers-missing-7"))     # TinyCC's "include file 'Python.h' not found"
    assert gcc.key == msvc.key == tcc.key == "CompilerError|missing header Python.h"
    assert not gcc.generic
    # the title keeps the compiler's own line, not "compilation terminated."
    assert gcc.raw.endswith("fatal error: Python.h: No such file or directory")


def test_clang_s_wording_and_msvc_in_english():
    clang = "/tmp/tmpab/main.c:3:10: fatal error: 'Python.h' file not found\n#include <Python.h>\n1 error generated."
    msvc = "main.c(12): fatal error C1083: Cannot open include file: 'Python.h': No such file or directory"
    assert sig((clang, "")).key == sig((msvc, "")).key == "CompilerError|missing header Python.h"
    assert sig((clang.replace("Python.h", "cuda.h"), "")).key == "CompilerError|missing header cuda.h"


def test_a_line_that_only_says_the_tool_failed_is_never_the_cause():
    for line in ("compilation terminated.", "collect2: error: ld returned 1 exit status"):
        s = sig((line, "job:build"))
        assert s.generic and s.test == "job:build"


# ------------------------------------------------------------------ the C compiler's CalledProcessError
def test_the_c_compiler_s_called_process_error_is_generic():
    tcc = sig(f("python-headers-missing-8"))     # tcc.exe …' returned non-zero exit status 1, nothing above it
    assert (tcc.type, tcc.line, tcc.generic, tcc.test) == ("CompilerError", "C compiler failed with exit status 1",
                                                           True, "job:comfyui-seedvr2")
    a, b = sig(w("tcc-cuda-utils-build-80")), signature_of(w("tcc-cuda-utils-build-80")[0], "job:other")
    assert a.generic and a.key != b.key          # the test joins it: another job, another group
    gcc = ("subprocess.CalledProcessError: Command '['/usr/bin/x86_64-linux-gnu-gcc-11', '/tmp/t/main.c', '-O3']' "
           "returned non-zero exit status 1.")
    assert sig((gcc, "t")).key == "CompilerError|C compiler failed with exit status 1|t"


def test_other_commands_and_ptxas_keep_their_identity():
    assert sig(w("ptxas-windows-exit-4294967295-78")).line == "ptxas failed with exit status 4294967295"
    cmake = "subprocess.CalledProcessError: Command '['/usr/bin/cmake', '--build', '.']' returned non-zero exit status 2."
    assert sig((cmake, "t")).type == "CalledProcessError"


# ------------------------------------------------------------------ HIP errors by name, signals after them
def test_hip_no_binary_for_gpu_is_one_identity_in_guarantee_quotes_and_alone():
    ids = ["hip-no-code-object-for-gpu-20",      # guarantee(false && "hipErrorNoBinaryForGpu: Coudn't find …"), zsh abort
           "hip-no-code-object-for-gpu-21",      # "hipErrorNoBinaryForGpu: Unable to find code object …", Aborted (core dumped)
           "hip-no-code-object-for-gpu-22"]      # the line alone
    sigs = [sig(f(i)) for i in ids] + [sig(w("hip-no-binary-for-gpu-66"))]
    assert {s.key for s in sigs} == {"HIPError|HIP error: hipErrorNoBinaryForGpu"}
    # the specific line printed before the abort wins over the signal
    assert all(s.rule == "cuda" for s in sigs)


def test_a_generic_hip_error_by_name_carries_the_test():
    s = sig(("RuntimeError: HIP error: hipErrorIllegalAddress: an illegal memory access was encountered", "t"))
    assert s.generic and s.test == "t"


@pytest.mark.parametrize("line, name", [
    ("[1]    2964311 abort (core dumped)  python test.py", "SIGABRT"),     # fresh hip-no-code-object-for-gpu-20's last line
    ("zsh: segmentation fault  python test.py", "SIGSEGV"),
    ("[2]  + 812 bus error  python t.py", "SIGBUS"),
])
def test_zsh_signal_lines(line, name):
    s = sig((line, "job:x"))
    assert (s.type, s.generic, s.test) == (name, True, "job:x")


# ------------------------------------------------------------------ ptxas features by data type
def test_bf16_before_sm80_is_one_identity_in_both_wordings():
    ids = ["bf16-before-sm80-13", "bf16-before-sm80-14",     # Feature '.bf16' …
           "bf16-before-sm80-15", "bf16-before-sm80-16"]     # Feature 'cvt.bf16.f32' … first
    assert {sig(f(i)).key for i in ids} == {"ptxas|Feature '.bf16' requires .target sm_80 or higher"}


def test_another_type_or_target_is_another_fault():
    text = f("bf16-before-sm80-15")[0]
    e4m3 = text.replace("cvt.bf16.f32", "cvt.rn.satfinite.e4m3x2.f32").replace("'.bf16'", "'.e4m3x2'").replace("sm_80", "sm_89")
    assert sig((e4m3, "")).key == "ptxas|Feature '.e4m3' requires .target sm_89 or higher"
    assert sig((text.replace("sm_80", "sm_90"), "")).key == "ptxas|Feature '.bf16' requires .target sm_90 or higher"


# ------------------------------------------------------------------ lines wrapped onto the next one
def test_mlir_pass_name_on_the_next_line():
    s = sig(f("amd-canonptr-dyncast-nonexistent-35"))
    assert (s.rule, s.line) == ("mlir-pass", "TritonAMDGPUCanonicalizePointers failed")
    # behind a CI prefix, and still on the same line as before
    ci = sig(f("amd-canonptr-dyncast-nonexistent-35-ci"))
    assert ci.line == s.line
    assert sig(f("tma-kernel-on-a100-40")).line == "ConvertTritonGPUToLLVM failed"


def test_assertion_wrapped_over_two_lines():
    s = sig(f("amd-canonptr-select-size-mismatch-37"))
    assert s.rule == "assertion"
    assert s.ident == ("Assertion 'adaptor.getTrueValue().size() == adaptor.getFalseValue().size() && "
                      "\"expected both true and false operands to be the same size\"' failed")
    ci = sig(f("amd-canonptr-select-size-mismatch-37-ci"))
    assert ci.key == s.key
