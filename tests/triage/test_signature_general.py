"""Signature version 5: general normalisation, from ``fresh2.jsonl``'s misses (tuning data since its
one held-out measurement, see docs/triage.md), each rule also checked on texts of no report.

Names without their volatile parts (an extension's Python/ABI tag; the loader's undefined symbol by
library and symbol; an import by name and top-level package; ``No module named`` however it is
reported), a CUDA/HIP runtime message's capital, the wrapped exception over the wrapper's own
sentence, ``ptxas-blackwell``, a message on the line after ``Type:``, torch's driver check, and
triton's own check messages in each release's words."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.triage.canonical import fold_runtime_case
from bot.triage.normalize import mask, strip_abi_tag
from bot.triage.records import normalize_test_id
from bot.triage.signature import signature_of

DATA = Path(__file__).resolve().parents[1] / "data" / "triage"
_FRESH2 = {r["id"]: r for r in (json.loads(x) for x in (DATA / "fresh2.jsonl").read_text().splitlines() if x.strip())}


def f2(rid: str):
    r = _FRESH2[rid]
    return signature_of(r["text"], normalize_test_id(r["test"]))


def keys(*ids: str) -> set[str]:
    return {f2(i).key for i in ids}


# ------------------------------------------------------------------ Python/ABI tags
@pytest.mark.parametrize("name, want", [
    ("flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so", "flash_attn_2_cuda.so"),
    ("_C.cpython-312-darwin.so", "_C.so"),
    ("_C.cp311-win_amd64.pyd", "_C.pyd"),
    ("ext.abi3.so", "ext.so"),
    ("m.pypy39-pp73-x86_64-linux-gnu.so", "m.so"),
    ("libcuda.so.1", "libcuda.so.1"),            # no tag: unchanged
    ("x.cpython-310.sox", "x.cpython-310.sox"),  # not an extension module's name
])
def test_the_python_abi_tag_is_masked(name, want):
    assert strip_abi_tag(name) == want
    assert mask(f"ImportError: {name}: cannot open shared object file") == f"ImportError: {want}: cannot open shared object file"


# ------------------------------------------------------------------ the loader's undefined symbol
def test_one_undefined_symbol_across_pythons_and_wrappings():
    # an ImportError under 3.10, a title line under 3.11, a bare line under 3.9
    ids = ["flash-attn-cxx11abi-mismatch-0", "flash-attn-cxx11abi-mismatch-1", "flash-attn-cxx11abi-mismatch-2",
           "flash-attn-cxx11abi-mismatch-0-ci"]
    assert keys(*ids) == {"ImportError|flash_attn_2_cuda.so: undefined symbol: "
                          "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"}


def test_another_symbol_of_the_same_library_is_another_fault():
    assert len(keys("flash-attn-cxx11abi-mismatch-0", "flash-attn-torch-version-setdevice-3",
                    "flash-attn-torch-version-allocator-4")) == 3


def test_an_undefined_symbol_in_ctypes_words_is_the_same_identity():
    a = signature_of("OSError: /opt/lib/libfoo.cpython-311-x86_64-linux-gnu.so: undefined symbol: bar_init")
    b = signature_of("ImportError: /usr/lib/python3.12/site-packages/libfoo.cpython-312-x86_64-linux-gnu.so: "
                     "undefined symbol: bar_init")
    assert a.key == b.key == "ImportError|libfoo.so: undefined symbol: bar_init"
    c = signature_of("ImportError: libtriton.so.3: undefined symbol: LLVMInitializeSparcTarget")
    assert c.key == "ImportError|libtriton.so: undefined symbol: LLVMInitializeSparcTarget"


# ------------------------------------------------------------------ cannot import name
def test_one_missing_name_from_two_modules_of_one_package():
    assert keys("attrsdescriptor-import-5", "attrsdescriptor-import-6", "attrsdescriptor-import-7") == {
        "ImportError|cannot import name 'AttrsDescriptor' from 'triton'"}


def test_the_same_name_from_another_package_stays_apart():
    a = signature_of("ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' (/x/compiler.py)")
    b = signature_of("ImportError: cannot import name 'triton_key' from 'torch._inductor.runtime.triton_compat'")
    assert a.key == "ImportError|cannot import name 'triton_key' from 'triton'"
    assert b.key == "ImportError|cannot import name 'triton_key' from 'torch'"


def test_a_summary_cut_after_the_package_names_it():
    s = signature_of("FAILED t.py::test_x - ImportError: cannot import name 'triton_key' from 'triton.comp...")
    assert s.key == "ImportError|cannot import name 'triton_key' from 'triton'"
    # cut inside the package's name: only a prefix, joined by the grouper (never a wrong package)
    s = signature_of("FAILED t.py::test_x - ImportError: cannot import name 'triton_key' from 'trit...")
    assert s.partial and "'trit'" not in s.key


# ------------------------------------------------------------------ No module named
def test_no_module_named_however_it_is_reported():
    assert keys("no-triton-on-windows-28", "no-triton-on-windows-29", "no-triton-on-windows-30") == {
        "ModuleNotFoundError|No module named 'triton'"}
    assert signature_of("ModuleNotFoundError: No module named 'triton.ops'").key == \
        "ModuleNotFoundError|No module named 'triton.ops'"


# ------------------------------------------------------------------ runtime message case
def test_a_runtime_message_s_capital_is_folded():
    assert keys("hip-no-kernel-for-gfx-31", "hip-no-kernel-for-gfx-32", "hip-no-kernel-for-gfx-33") == {
        "HIPError|HIP error: invalid device function"}
    assert f2("hip-no-kernel-for-gfx-33").raw == "HIP error: Invalid device function"   # the title keeps its words
    assert signature_of("RuntimeError: CUDA error: Invalid device ordinal").key == "CUDAError|CUDA error: invalid device ordinal"


@pytest.mark.parametrize("ident", [
    "CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling cublasGemmEx",
    "HIP error: hipErrorNoBinaryForGpu",
    "HIP error: Code: <n> Messsage: invalid argument",
])
def test_acronyms_names_and_other_capitals_stay(ident):
    assert fold_runtime_case("CUDAError" if ident.startswith("CUDA") else "HIPError", ident) == ident
    assert fold_runtime_case("RuntimeError", "CUDA error: Invalid x") == "CUDA error: Invalid x"


# ------------------------------------------------------------------ a wrapper around the cause
def test_the_ptxas_line_inside_inductor_s_wrapper_wins():
    s = f2("ptxas-older-than-gpu-9")     # NoTritonConfigsError: No valid triton configs. PTXASError: … ptxas-blackwell fatal
    assert s.key == "ptxas|Value 'sm_11x' is not defined for option 'gpu-name'"


def test_the_wrapped_exception_wins_over_the_wrapper_s_sentence():
    s = signature_of("torch._inductor.runtime.triton_heuristics.NoTritonConfigsError: No valid triton configs. "
                     "PTXASError: PTXAS error: Internal Triton PTX codegen error")
    assert (s.type, s.line) == ("PTXASError", "PTXAS error: Internal Triton PTX codegen error")
    # a sentence without an exception after it is the message itself
    s = signature_of("ValueError: Bad shape. Expected (4, 4) got (4, 5)")
    assert s.type == "ValueError"


# ------------------------------------------------------------------ torch's driver check
def test_torch_s_driver_check_as_error_warning_and_bare_assertion():
    assert keys("nvidia-driver-too-old-22", "nvidia-driver-too-old-23", "nvidia-driver-too-old-24") == {
        "RuntimeError|The NVIDIA driver on your system is too old"}


def test_a_message_on_the_next_line_is_read_there_only_when_it_is_one():
    s = signature_of("Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n"
                     "AssertionError: \nThe table is empty.\n")
    assert s.key == "AssertionError|The table is empty"
    # a traceback or a chained exception below is no message: the bare AssertionError stays generic
    s = signature_of("AssertionError: \n\nDuring handling of the above exception, another exception occurred:\n", "t.py::t")
    assert s.generic


# ------------------------------------------------------------------ triton's own checks across releases
def test_tl_dot_s_size_check_in_three_releases_words():
    assert keys("dot-operand-below-16-11", "dot-operand-below-16-12", "dot-operand-below-16-13",
                "dot-operand-below-16-14") == {"AssertionError|Input shapes should have M >= 16 N >= 16 and K >= 16"}


def test_another_minimum_dot_size_stays_apart():
    s = signature_of("AssertionError: Input shapes should have M >= 1, N >= 1 and K >= 32")
    assert s.key == "AssertionError|Input shapes should have M >= 1 N >= 1 and K >= 32"


def test_triton_s_fp8_check_quoted_as_repr_or_in_a_compilation_error():
    assert keys("fp8e4nv-before-sm89-18", "fp8e4nv-before-sm89-19", "fp8e4nv-before-sm89-20",
                "fp8e4nv-before-sm89-21") == {"ValueError|type fp8e4nv not supported in this architecture"}
    assert signature_of("ValueError(\"type fp8e5 not supported in this architecture. The supported fp8 dtypes are "
                        "('fp8e4nv',)\")").key == "ValueError|type fp8e5 not supported in this architecture"
