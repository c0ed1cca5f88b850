"""Signature version 6: from ``fresh3.jsonl``'s misses (tuning data since its one held-out
measurement, see docs/triage.md), each rule also checked on texts of no report.

A library's warning that names its cause is read when no error is in the text (xFormers' "built
for" lines; torch's GPU-capability warning, which also wins over the ``no kernel image`` error it
announces); the Windows loader's message in another language is its English message; a pip
requirement that excludes every published version is the change's fault, not the infrastructure;
a mangled C++ symbol cut short by a report is the function it names."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.config.infra import infra_kind
from bot.triage.records import normalize_test_id
from bot.triage.signature import signature_of

DATA = Path(__file__).resolve().parents[1] / "data" / "triage"
_FRESH3 = {r["id"]: r for r in (json.loads(x) for x in (DATA / "fresh3.jsonl").read_text().splitlines() if x.strip())}


def f3(rid: str):
    r = _FRESH3[rid]
    return signature_of(r["text"], normalize_test_id(r["test"]))


def keys(*ids: str) -> set[str]:
    return {f3(i).key for i in ids}


# ------------------------------------------------------------------ xFormers' "built for" warning
def test_xformers_built_for_a_cuda_torch_under_a_cpu_torch_is_one_fault():
    # three reports, three torch versions, with and without the Python line, another log line last
    assert keys("cpu-only-torch-installed-18", "cpu-only-torch-installed-19", "cpu-only-torch-installed-20",
                "cpu-only-torch-installed-18-ci") == {
        "Warning|xFormers was built for a CUDA PyTorch: a CPU-only PyTorch is installed"}


def test_xformers_built_for_another_torch_is_another_fault():
    other = keys("xformers-built-for-other-torch-24", "xformers-built-for-other-torch-25",
                 "xformers-built-for-other-torch-26")
    assert other == {"Warning|xFormers was built for another PyTorch"}
    assert other != keys("cpu-only-torch-installed-19")


def test_xformers_built_for_another_python_only():
    text = ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
            "    PyTorch 2.2.0+cu121 with CUDA 1201 (you have 2.2.0+cu121)\n"
            "    Python  3.11.7 (you have 3.12.1)\n")
    assert signature_of(text, "job:x").key == "Warning|xFormers was built for another Python"


def test_an_error_after_the_warning_wins():
    text = ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
            "    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.2+cpu)\n"
            "Traceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n"
            "ValueError: unknown scheduler name\n")
    assert signature_of(text, "job:x").key == "ValueError|unknown scheduler name"


# ------------------------------------------------------------------ torch's GPU-capability warning
def test_the_capability_warning_names_the_fault_alone_and_under_no_kernel_image():
    # the warning alone (its first letter cut by the report) and the error followed by the warning
    assert keys("torch-wheel-without-sm120-7", "torch-wheel-without-sm120-9", "torch-wheel-without-sm120-9-ci") == {
        "Warning|CUDA capability sm_12x is not compatible with the current PyTorch installation"}


def test_no_kernel_image_without_the_warning_stays_generic_by_cause():
    assert f3("torch-wheel-without-sm120-8").key.startswith("CUDAError|CUDA error: no kernel image is available")


def test_another_gpu_generation_is_another_fault():
    text = ("NVIDIA H100 80GB HBM3 with CUDA capability sm_90 is not compatible with the current PyTorch installation.\n"
            "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.\n")
    assert signature_of(text, "job:x").key == (
        "Warning|CUDA capability sm_9x is not compatible with the current PyTorch installation")


# ------------------------------------------------------------------ the Windows loader in other languages
def test_one_dll_initialisation_failure_in_german_and_english():
    assert keys("libtriton-dll-stale-msvc-runtime-5", "libtriton-dll-stale-msvc-runtime-6") == {
        "ImportError|DLL load failed while importing libtriton: A dynamic link library (DLL) initialization routine failed"}


@pytest.mark.parametrize("message, want", [
    ("Eine DLL-Initialisierungsroutine ist fehlgeschlagen.", "A dynamic link library (DLL) initialization routine failed."),
    ("Das angegebene Modul wurde nicht gefunden.", "The specified module could not be found."),
    ("找不到指定的模块。", "The specified module could not be found."),
    ("Le module spécifié est introuvable.", "The specified module could not be found."),
    ("Die angegebene Prozedur wurde nicht gefunden.", "The specified procedure could not be found."),
    ("The specified module could not be found.", "The specified module could not be found."),
    ("Something else entirely.", "Something else entirely."),     # not in the table: as it is
])
def test_windows_messages_by_error_code(message, want):
    key = signature_of(f"ImportError: DLL load failed while importing m: {message}", "job:x").key
    assert key == f"ImportError|DLL load failed while importing m: {want.rstrip('.')}"


def test_a_missing_dll_is_not_a_failed_initialisation():
    missing = signature_of("ImportError: DLL load failed while importing libtriton: Das angegebene Modul wurde nicht "
                           "gefunden.", "job:x").key
    assert missing == "ImportError|DLL load failed while importing libtriton: The specified module could not be found"
    assert missing not in keys("libtriton-dll-stale-msvc-runtime-5")


# ------------------------------------------------------------------ pip: no version vs. a pin that excludes them
def test_a_requirement_that_excludes_every_published_version_is_not_infrastructure():
    pin = f3("pip-triton-pin-too-old-for-python-17")
    assert pin.type != "Infrastructure"
    assert "triton<3" in pin.key
    assert keys("pip-no-triton-wheel-windows-13", "pip-no-triton-wheel-aarch64-16") == {
        "Infrastructure|toolchain-download"}


@pytest.mark.parametrize("line, want", [
    ("ERROR: Could not find a version that satisfies the requirement triton==2.0.0 (from versions: none)",
     "toolchain-download"),
    ("ERROR: Could not find a version that satisfies the requirement triton<3 (from versions: 3.2.0, 3.3.0)", None),
    ("ERROR: No matching distribution found for triton<3", None),
])
def test_pip_lines(line, want):
    assert infra_kind(line) == want


# ------------------------------------------------------------------ a mangled symbol cut short
def test_one_undefined_symbol_whole_and_cut_by_the_report():
    assert keys("vllm-c-to-dtype-layout-torch22-27", "vllm-c-to-dtype-layout-torch22-28") == {
        "ImportError|_C.so: undefined symbol: at::_ops::to_dtype_layout::call(…)"}
    assert keys("vllm-c-torch-library-optional-29") != keys("vllm-c-to-dtype-layout-torch22-27")


@pytest.mark.parametrize("symbol, want", [
    ("_ZN2at4_ops15to_dtype_layout4callERKNS_6TensorEN3c108optionalINS5_10ScalarTypeEEE", "at::_ops::to_dtype_layout::call(…)"),
    ("_ZN2at4_ops15to_dtype_layout4callERKNS_6TensorEN3c108optionalINS", "at::_ops::to_dtype_layout::call(…)"),
    ("_ZN3c104cuda9SetDeviceEi", "c10::cuda::SetDevice(…)"),
    ("_ZNK3c1010TensorImpl4sizeEl", "c10::TensorImpl::size(…) const"),
    ("_Z5helloi", "hello(…)"),
    # the C++11 string ABI in the parameters: another build of the same function, kept apart
    ("_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
     "c10::detail::torchCheckFail(…) [cxx11 ABI]"),
    # a variable (no parameters) and a constructor (C1/C2: the ABI is all there is to tell): as they are
    ("_ZN3c104cuda20CUDACachingAllocator9allocatorE", "_ZN3c104cuda20CUDACachingAllocator9allocatorE"),
    ("_ZN3c105ErrorC2ENS_14SourceLocationESs", "_ZN3c105ErrorC2ENS_14SourceLocationESs"),
    ("cuMemAddressReserve", "cuMemAddressReserve"),
])
def test_symbol_names(symbol, want):
    key = signature_of(f"ImportError: /opt/venv/lib/x/_C.cpython-311-x86_64-linux-gnu.so: undefined symbol: {symbol}",
                       "job:x").key
    assert key == f"ImportError|_C.so: undefined symbol: {want}"
