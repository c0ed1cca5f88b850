"""Signature classes that must generalise, on real texts: the tuning split of the corpus of public
reports (``tests/data/triage/wild.jsonl``, by record id; its held-out split is never used here),
the labelled set, and pytest's own output for its outcomes (produced by pytest 8 on a small test
file: a failing fixture, a strict xfail that passed, ``pytest.raises`` that saw nothing).

Each class: texts of one fault get one identity; texts of different faults do not."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.triage.group import Grouper
from bot.triage.normalize import mask
from bot.triage.records import FailureRecord, normalize_test_id
from bot.triage.signature import signature_of

DATA = Path(__file__).resolve().parents[1] / "data" / "triage"
_WILD = {r["id"]: r for r in (json.loads(x) for x in (DATA / "wild.jsonl").read_text().splitlines() if x.strip())}
_LABELLED = {r["id"]: r for r in (json.loads(x) for x in (DATA / "labelled.jsonl").read_text().splitlines() if x.strip())}


def w(rid: str) -> tuple[str, str]:
    """(text, normalized test) of a tuning-split record of the corpus."""
    r = _WILD[rid]
    assert r["split"] == "tune", f"{rid} is held out: tests never use the held-out split"
    return r["text"], normalize_test_id(r["test"])


def lab(rid: str) -> tuple[str, str]:
    r = _LABELLED[rid]
    return r["text"], normalize_test_id(r["test"])


def key(t: tuple[str, str]) -> str:
    return signature_of(*t).key


# pytest 8's own report sections (run locally on a small test file; paths shortened)
SETUP_ERROR = ("__________________________ ERROR at setup of test_softmax ________________________\n\n"
               "    @pytest.fixture\n    def kernel_cache():\n        import os\n"
               ">       return os.listdir(\"/nonexistent-cache-dir\")\n"
               "E       FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent-cache-dir'\n\n"
               "test_outcomes.py:10: FileNotFoundError")
SETUP_SUMMARY = "ERROR test_outcomes.py::test_softmax - FileNotFoundError: [Errno 2] No such f..."
XPASS = ("_________________________________ test_fp8_dot _________________________________\n"
         "[XPASS(strict)] tl.dot on fp8 not supported before sm_90")
XPASS_SUMMARY = "FAILED test_outcomes.py::test_fp8_dot - [XPASS(strict)] tl.dot on fp8 not sup..."
NOT_RAISED = ("    def test_bad_constexpr():\n>       with pytest.raises(CompilationError):\n"
              "E       Failed: DID NOT RAISE CompilationError\n\ntest_outcomes.py:26: Failed")
NOT_RAISED_SUMMARY = "FAILED test_outcomes.py::test_bad_constexpr - Failed: DID NOT RAISE Compilati..."


# ------------------------------------------------------------------ one fault, one identity
SAME = [
    # the stage is not the identity: a traceback through triton's compiler (compile) and pytest's
    # summary line (test) of the same overflow
    ("stage", w("oor-shared-memory-20"), w("oor-shared-memory-24")),
    # numbers glued to the labels (triton 1.x) and the same overflow in today's words
    ("glued numbers", w("oor-shared-memory-22"), w("oor-shared-memory-15")),
    # the overflow in Inductor's autotuner words ("out of resource: triton_flex_attention Required: …")
    ("another wording", w("oor-shared-memory-124"), w("oor-shared-memory-21")),
    # a title without the exception type
    ("no type", w("oor-shared-memory-18"), w("oor-shared-memory-16")),
    # a wrapper exception around the real error: LoweringException around the ImportError
    ("wrapper", w("triton-key-import-30"), w("triton-key-import-31")),
    # CI timestamps before pytest's FAILED line, and a duration after it
    ("timestamp prefix", w("oor-shared-memory-25"), w("oor-shared-memory-26")),
    # one GPU generation the bundled ptxas does not know: sm_121a and sm_120 (labelled set)
    ("sm_120 vs sm_121a", lab("ptxas-sm12x-0"), lab("ptxas-sm12x-5")),
    # ptxas known only by its exit status, in triton's words and as the subprocess error around it
    ("ptxas exit status", w("ptxas-windows-exit-4294967295-76"), w("ptxas-windows-exit-4294967295-78")),
    # a repr line alone and the exception line of one language rule
    ("repr cause", w("arange-args-not-constexpr-108"), w("arange-args-not-constexpr-109")),
    # CUDA OOM on one GPU size: the tail differs between runs
    ("oom tail", w("oom-12gb-gpu-milabench-101"), w("oom-12gb-gpu-milabench-102")),
]


@pytest.mark.parametrize("cls,a,b", SAME, ids=[c[0] for c in SAME])
def test_one_fault_one_identity(cls, a, b):
    assert key(a) == key(b)


def test_stage_is_shown_but_not_the_identity():
    a, b = signature_of(*w("oor-shared-memory-20")), signature_of(*w("oor-shared-memory-24"))
    assert (a.stage, b.stage) == ("compile", "test") and a.key == b.key == "OutOfResources|out of resource: shared memory"


# ------------------------------------------------------------------ different faults, different identities
DIFFERENT = [
    # two segfaults with no test known: the innermost frame tells them apart
    ("segfaults", w("segv-free-threading-driver-build-38"), w("segv-intel-load-binary-40")),
    ("segfault vs abort", w("segv-intel-load-binary-40"), w("abort-ttgir-to-llir-openfold-42")),
    # two numeric mismatches: the tests tell them apart
    ("not close", w("mismatch-upsample-nearest1d-rocm-46"), w("mismatch-conv-as-strided-47")),
    # the same illegal-address words from two jobs
    ("illegal address", w("ima-lmdeploy-52"), w("ima-swin-alignment-55")),
    ("launch failure", w("ulf-deepseek-h100-56"), w("ulf-openrlhf-qwen2-58")),
    ("misaligned", w("misaligned-mamba-126"), w("misaligned-fla-gated-delta-bwd-b200-127")),
    # a bare PassManager failure says nothing of the pass
    ("bare PassManager", w("passmanager-framepack-72"), w("passmanager-sm75-lowering-fastkmeans-70")),
    # an unsupported architecture is not an unrelated LLVM error
    ("arch vs LLVM", w("ptxas-arch-newer-than-toolchain-4"), w("llvm-parent-layout-lightllm-91")),
    # a GPU generation dropped by a new toolchain is not one too new for an old one
    ("sm_3x vs sm_8x", w("ptxas-arch-newer-than-toolchain-83"),
     ("ptxas fatal   : Value 'sm_30' is not defined for option 'gpu-name'", "job:altis-cmake")),
    # two different resources of triton's OutOfResources (labelled set: threads)
    ("smem vs threads", w("oor-shared-memory-15"), lab("oor-threads-0")),
    # an exception without a message from two tests
    ("empty message", ("AssertionError", "t.py::a"), ("AssertionError", "t.py::b")),
]


@pytest.mark.parametrize("cls,a,b", DIFFERENT, ids=[c[0] for c in DIFFERENT])
def test_different_faults_different_identities(cls, a, b):
    assert key(a) != key(b)


def test_generic_lines_carry_the_test_or_the_frame():
    seg = signature_of(*w("segv-intel-load-binary-40"))
    assert seg.generic and seg.key.endswith("|python/test/unit/language/test_core.py::test_convert_mma2mma")
    assert signature_of(w("segv-intel-load-binary-40")[0]).key == "SIGSEGV|fatal signal SIGSEGV|driver.py:load_binary"
    assert signature_of(w("abort-ttgir-to-llir-openfold-42")[0]).key == "SIGABRT|fatal signal SIGABRT|compiler.py:ttgir_to_llir"
    assert signature_of("Speicherzugriffsfehler (Speicherabzug geschrieben)", "t.py::t").key == \
        "SIGSEGV|fatal signal SIGSEGV|t.py::t"


# ------------------------------------------------------------------ pytest's own outcomes
def test_pytest_outcomes_get_real_signatures():
    assert key((NOT_RAISED, "test_outcomes.py::test_bad_constexpr")) == \
        "Failed|DID NOT RAISE CompilationError|test_outcomes.py::test_bad_constexpr"
    assert key(w("did-not-raise-non-p2p-85")) == \
        "Failed|DID NOT RAISE <class 'RuntimeError'>|python/test/unit/runtime/test_p2p.py::test_non_p2p"
    assert key((XPASS, "test_outcomes.py::test_fp8_dot")) == \
        "XPASS(strict)|tl.dot on fp8 not supported before sm_90|test_outcomes.py::test_fp8_dot"
    # a fixture error is the fixture's exception
    assert key((SETUP_ERROR, "test_outcomes.py::test_softmax")) == \
        "FileNotFoundError|[Errno 2] No such file or directory: 'nonexistent-cache-dir'"
    assert key(("ERROR at setup of test_dot", "t.py::test_dot")) == "FixtureError|error at setup|t.py::test_dot"


@pytest.mark.parametrize("full,summary,test", [
    (NOT_RAISED, NOT_RAISED_SUMMARY, "test_outcomes.py::test_bad_constexpr"),
    (XPASS, XPASS_SUMMARY, "test_outcomes.py::test_fp8_dot"),
    (SETUP_ERROR, SETUP_SUMMARY, "test_outcomes.py::test_softmax"),
])
def test_a_summary_cut_at_the_terminal_width_joins_its_full_report(full, summary, test):
    s = signature_of(summary, test)
    assert s.partial
    recs = [FailureRecord(test=test, outcome="failed", text=full), FailureRecord(test=test, outcome="failed", text=summary)]
    groups = Grouper().group(recs)
    assert len(groups) == 1 and len(groups[0].records) == 2


def test_a_cut_off_prefix_that_fits_two_faults_joins_neither():
    # "cannot import name 'triton_key" starts both the triton.compiler and the triton_compat import errors
    recs = [FailureRecord(test="job:a", outcome="failed", text=w("triton-key-import-31")[0]),
            FailureRecord(test="job:b", outcome="failed", text=w("triton-key-compat-import-32")[0]),
            FailureRecord(test="job:c", outcome="failed",
                          text="FAILED t.py::t - ImportError: cannot import name 'triton_key' fr...")]
    assert sorted(len(g.records) for g in Grouper().group(recs)) == [1, 1, 1]


# ------------------------------------------------------------------ masking keeps the words
def test_masking_does_not_eat_words():
    # the H200 replay's title lost "global/" when a path mask took "global/shared" for a path
    assert mask("illegal access to global/shared address space") == "illegal access to global/shared address space"
    assert mask("see /home/user/triton/python/triton/compiler/compiler.py and ops/attn.py") == \
        "see compiler.py and attn.py"
    assert mask("out of resource: shared memoryRequired: 110592Hardware limit: 101376") == \
        "out of resource: shared memory Required: <n> Hardware limit: <n>"
