"""Error signatures: a table of real texts with exact signatures, and the labelled set
(``tests/data/triage/labelled.jsonl``): one fault's variants share a signature, different
faults never do."""
from __future__ import annotations

import itertools
import json
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.triage.records import normalize_test_id
from bot.triage.signature import infra_kind, mask, signature_of, strip_prefixes

DATA = Path(__file__).resolve().parents[1] / "data" / "triage"


def load_labelled() -> list[dict]:
    return [json.loads(line) for line in (DATA / "labelled.jsonl").read_text().splitlines() if line.strip()]


# (text, test, expected key)
CASES = [
    # H200 text from runtime-facts.md: one canonical identity for the shared-memory overflow
    ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144, Hardware limit: 232448. "
     "Reducing block sizes or `num_stages` may help.", "",
     "OutOfResources|out of resource: shared memory"),
    # CompilationError: the cause names the fault, the position is dropped
    ("triton.compiler.errors.CompilationError: at 12:15:\n    offs = tl.arange(0, BLOCK)\n               ^\n"
     "ValueError(\"arange's range must be a power of 2\")", "",
     "ValueError|arange's range must be a power of 2"),
    # numeric mismatch: the test joins the signature, the counts go
    ("E       AssertionError: Tensor-likes are not close!\nE\nE       Mismatched elements: 12 / 4096 (0.3%)\n",
     "examples/kernels/test_kernels.py::test_matmul",
     "AssertionError|Tensor-likes are not close!|examples/kernels/test_kernels.py::test_matmul"),
    # CUDA runtime error through torch.AcceleratorError (H200): it names no place, the test joins it
    ("torch.AcceleratorError: CUDA error: an illegal memory access was encountered\n"
     "Search for `cudaErrorIllegalAddress' in https://docs.nvidia.com/cuda/ for more information.",
     "examples/kernels/test_kernels.py::test_add",
     "CUDAError|CUDA error: an illegal memory access was encountered|examples/kernels/test_kernels.py::test_add"),
    # C++ assertion: file kept, line number and directories dropped
    ("python: /project/lib/Analysis/Allocation.cpp:43: f(): Assertion `!(a && b) && \"mma -> mma\"' failed.\n"
     "Aborted (core dumped)", "",
     "Assertion|Allocation.cpp: Assertion '!(a && b) && \"mma -> mma\"' failed"),
    ("LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16\nAborted (core dumped)", "",
     "LLVM ERROR|Cannot select: intrinsic %llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16"),
    # MLIR: the failing pass, not the generic "Failures have been detected" line
    ("/tmp/tmpq1w2e3r4/k.py:88:0: error: Failures have been detected while processing an MLIR pass pipeline\n"
     "/tmp/tmpq1w2e3r4/k.py:88:0: note: Pipeline failed while executing [`TritonGPURemoveLayoutConversions` on "
     "'builtin.module' operation]", "",
     "MLIRPassFailure|TritonGPURemoveLayoutConversions failed"),
    # ptxas: the specific fatal line, not "Ptx assembly aborted"; register count kept
    ("ptxas fatal   : (C7600) Register allocation failed with register count of '255'. Compile the program with a "
     "higher register target\nptxas fatal   : Ptx assembly aborted due to errors", "",
     "ptxas|(C7600) Register allocation failed with register count of '255'"),
    # prefixes: GitHub Actions timestamps + ANSI, containerd, Ray, glog, vLLM
    ("2026-11-10T01:13:07.1234567Z \x1b[31mRuntimeError: Triton Error [CUDA]: misaligned address\x1b[0m", "t.py::t",
     "CUDAError|CUDA error: misaligned address|t.py::t"),
    ("2026-01-17T18:48:10.418481013+01:00 stderr F ValueError: bad block shape (128, 64)", "",
     "ValueError|bad block shape (128 64)"),
    ("(BenchmarkWorker pid=726) KeyError: 'BLOCK_M'", "", "KeyError|BLOCK_M"),
    ("E1130 01:23:45.100007 4001 worker.py:89] TypeError: dot() got an unexpected keyword argument 'allow_tf32'", "",
     "TypeError|dot() got an unexpected keyword argument 'allow_tf32'"),
    # infrastructure: canonical kind, whatever the wording
    ("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable", "", "Infrastructure|gpu-busy"),
    ("OSError: [Errno 28] No space left on device: '/tmp/x/kernel.cubin'", "", "Infrastructure|disk-full"),
    ("Killed\n##[error]Process completed with exit code 137.", "job:build", "Infrastructure|oom-kill"),
    ('  File "/x/triton/compiler/compiler.py", line 3, in compile\nOSError: [Errno 28] No space left on device', "",
     "Infrastructure|disk-full"),
    # a generic exit code never stands alone: the job joins it
    ("##[error]Process completed with exit code 1.", "job:lint", "ExitCode|exit code 1|job:lint"),
    # a concrete compiler error wins over an infrastructure phrase in the same log
    ("curl: (56) Recv failure: Connection reset by peer\nretrying download… ok\n"
     "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'", "",
     "ptxas|Value 'sm_12x' is not defined for option 'gpu-name'"),
    # pytest summary only (truncated message)
    ("FAILED python/test/unit/test_x.py::test_y[4] - ZeroDivisionError: division by zero", "",
     "ZeroDivisionError|division by zero"),
    # nothing recognisable: the last line, plus the test
    ("something odd happened\nno idea", "t.py::t", "Unknown|no idea|t.py::t"),
]


@pytest.mark.parametrize("text,test,key", CASES, ids=[c[2][:40] for c in CASES])
def test_signature_table(text, test, key):
    assert signature_of(text, test).key == key


def test_digits_that_tell_faults_apart_are_kept():
    a = signature_of("ptxas fatal   : Value 'sm_80' is not defined for option 'gpu-name'")
    b = signature_of("ptxas fatal   : Value 'sm_90' is not defined for option 'gpu-name'")
    assert a.key != b.key
    assert mask("expected tensor<128x64xf16> but got tensor<128x64xbf16>") == \
        "expected tensor<128x64xf16> but got tensor<128x64xbf16>"
    assert mask("register count of '168' on sm_90a with num_warps=8") == "register count of '168' on sm_90a with num_warps=8"


def test_what_the_run_masks_keeps_the_fault_apart():
    """Device indexes, xdist workers and a device-side assertion's block and thread are masked;
    a CUDA version, the devices' kinds and the assertion's own words stay."""
    assert mask("image nvidia/cuda:12.4.1 on cuda:3") == "image cuda:12.4.1 on cuda:<i>"
    assert mask("found at least two devices, cuda:0 and cpu!") != mask("found at least two devices, cuda:1 and cuda:0!")
    assert mask("[gw3] node down") == "[gw<i>] node down"
    assert mask("block: [3,0,0], thread: [17,0,0] Assertion `a < 64` failed") == \
        "block: [<i>], thread: [<i>] Assertion `a < 64` failed"
    assert mask("block: [3,0,0], thread: [17,0,0] Assertion `a < 64` failed") != \
        mask("block: [3,0,0], thread: [17,0,0] Assertion `b < 64` failed")


def test_plain_asserts_that_name_no_value_stay_apart():
    """Two bare ``assert False`` in one test are told apart by what pytest says was asserted."""
    def section(call: str) -> str:
        return (f">       assert {call}\nE       assert False\n"
                f"E        +  where False = <built-in method {call.split('.')[-1][:-2]} of Tensor object at 0x7f3a2c1b9e40>()\n\n"
                "python/test/unit/language/test_reduce.py:44: AssertionError")
    t = "python/test/unit/language/test_reduce.py::test_reduce"
    a, b = signature_of(section("out.is_contiguous()"), t), signature_of(section("out.isfinite().all()"), t)
    assert a.key != b.key and a.type == b.type == "AssertionError"
    # a plain assert's message is the test's own expression: another test's same words are another fault
    other = signature_of(section("out.is_contiguous()"), "python/test/unit/language/test_scan.py::test_scan")
    assert other.key != a.key


def test_a_plain_assert_is_one_fault_in_its_section_and_its_summary_line():
    t = "python/test/unit/language/test_reduce.py::test_reduce"
    section = (">       assert out.shape == (128,)\nE       assert torch.Size([64]) == (128,)\nE         At index 0 diff: 64 != 128\n\n"
               "python/test/unit/language/test_reduce.py:40: AssertionError")
    summary = f"FAILED {t}[fp16] - assert torch.Size([64]) == (128,)"
    assert signature_of(section, t).key == signature_of(summary, t).key
    # an explicit message is the exception's own line; an exception in a later E block wins
    assert signature_of(">       assert x, 'boom'\nE       AssertionError: boom\nE       assert False", t).key == \
        "AssertionError|boom"
    later = section + "\n\nduring teardown:\nE       RuntimeError: CUDA error: an illegal memory access was encountered"
    assert signature_of(later, t).type == "CUDAError"


def test_a_numpy_tolerance_miss_is_one_fault_whatever_the_array_size():
    t = "python/test/unit/language/test_core.py::test_dot"
    def miss(n: int) -> str:
        return ("E   AssertionError: \nE   Not equal to tolerance rtol=0.01, atol=0.01\nE   \n"
                f"E   Mismatched elements: 12 / {n} (0.293%)\nE   Max absolute difference among violations: 0.5")
    assert signature_of(miss(4096), t).key == signature_of(miss(1024), t).key
    assert signature_of(miss(4096), t).stage == "check"


def test_mask_drops_what_varies():
    assert mask("pid=4123 at /home/user/triton/python/triton/compiler/compiler.py:297 0x7f3c1b2e4a1f tmpkw7ug6t8.ptx") \
        == "pid=<pid> at compiler.py:<L> <hex> <tmp>.ptx"
    assert mask("Tried to allocate 2.00 GiB at 2026-11-30T04:49:37Z") == "Tried to allocate <n> GiB at <time>"


def test_strip_prefixes():
    assert strip_prefixes("2026-11-10T01:13:07.1234567Z ##[error]boom") == "boom"
    assert strip_prefixes("E       AssertionError") == "AssertionError"
    assert strip_prefixes("# | error: x") == "error: x"
    assert strip_prefixes("ERROR 01-28 03:21:01 engine.py:387] x") == "x"


def test_infra_kinds():
    assert infra_kind("Failed to initialize NVML: Driver/library version mismatch") == "driver-mismatch"
    assert infra_kind("fatal: unable to access 'https://github.com/x/': Could not resolve host: github.com") == "network"
    assert infra_kind("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. Process 12 has 9.0 GiB memory in use") \
        == "gpu-memory-held"
    assert infra_kind("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.") is None
    assert infra_kind("AssertionError: Tensor-likes are not close!") is None
    assert infra_kind("RuntimeError: CUDA error: uncorrectable ECC error encountered") == "gpu-hardware"


OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 GiB. GPU 0 has a total capacity of 139.81 GiB "
       "of which 60.12 GiB is free. {procs}Of the allocated memory {alloc} is allocated by PyTorch, and 1.12 GiB is reserved "
       "by PyTorch but unallocated.")


@pytest.mark.parametrize("procs,alloc,kind", [
    # in a container: the one process listed is the test's own, PyTorch holds what it uses
    ("Process 414660 has 79.68 GiB memory in use. ", "77.91 GiB", None),
    # PyTorch holds far less than the process listed uses: another process holds the GPU
    ("Process 4101543 has 79.68 GiB memory in use. ", "9.27 GiB", "gpu-memory-held"),
    # two processes listed: at least one is another
    ("Process 414660 has 79.68 GiB memory in use. Process 12 has 40.00 GiB memory in use. ", "77.91 GiB", "gpu-memory-held"),
    # torch found its own pid: any process listed is another
    ("Process 12 has 79.68 GiB memory in use. Including non-PyTorch memory, this process has 79.60 GiB memory in use. ",
     "77.91 GiB", "gpu-memory-held"),
    # the test's own, found by its pid: no process listed
    ("Including non-PyTorch memory, this process has 79.60 GiB memory in use. ", "77.91 GiB", None),
])
def test_a_cuda_oom_is_infrastructure_only_when_another_process_holds_the_memory(procs, alloc, kind):
    text = OOM.format(procs=procs, alloc=alloc)
    assert infra_kind(text) == kind
    s = signature_of(text, "python/test/unit/language/test_matmul.py::test_matmul")
    assert (s.type, s.line) == (("Infrastructure", kind) if kind else ("OutOfMemoryError", "CUDA out of memory"))


def test_labelled_set_is_large_and_varied():
    recs = load_labelled()
    faults = defaultdict(list)
    for r in recs:
        faults[r["fault"]].append(r)
    assert len(recs) >= 150
    assert len(faults) >= 25
    assert all(len(v) >= 5 for v in faults.values())
    assert all(len({r["text"] for r in v}) >= 4 for v in faults.values())   # several distinct variants


def test_labelled_variants_share_a_signature_and_faults_do_not():
    recs = load_labelled()
    by_fault: dict[str, set[str]] = defaultdict(set)
    by_key: dict[str, set[str]] = defaultdict(set)
    for r in recs:
        key = signature_of(r["text"], normalize_test_id(r["test"])).key
        by_fault[r["fault"]].add(key)
        by_key[key].add(r["fault"])
    split = {f: sorted(k) for f, k in by_fault.items() if len(k) > 1}
    merged = {k: sorted(f) for k, f in by_key.items() if len(f) > 1}
    assert split == {}
    assert merged == {}


def test_labelled_pairwise_precision_and_recall():
    recs = load_labelled()
    keys = [signature_of(r["text"], normalize_test_id(r["test"])).key for r in recs]
    tp = fp = fn = 0
    for (a, ka), (b, kb) in itertools.combinations(zip(recs, keys), 2):
        same, grouped = a["fault"] == b["fault"], ka == kb
        tp += same and grouped
        fp += grouped and not same
        fn += same and not grouped
    assert tp / (tp + fp) >= 0.95
    assert tp / (tp + fn) >= 0.8


_ALPHABET = st.sampled_from(list(" \t\n:./\\'\"`()[]<>-_=#|0123456789abcdefxEKLMNOPRSTUVWYZ") +
                            ["Error", "E   ", "LLVM ERROR: ", "Assertion `", "' failed", "ptxas fatal : ",
                             "CUDA error: ", "Traceback", "FAILED ", " - ", "CHECK: ", ": error: ", "\x1b[31m",
                             "2026-11-30T01:02:03.4Z ", "Segmentation fault", "exit code 137", "No space left"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=80).map("".join), st.sampled_from(["", "t.py::t"]))
def test_signature_never_raises_and_is_deterministic(text, test):
    a, b = signature_of(text, test), signature_of(text, test)
    assert a == b
    assert a.stage and a.type and len(a.line) <= 240
    assert "\n" not in a.line and "\x1b" not in a.line


def test_pathological_lines_do_not_backtrack():
    # these shapes once made the prefix pattern backtrack exponentially (minutes for one line)
    for text in ("E" + " " * 60 + "x", "(pid=1) " * 40 + "ValueError", " \t" * 500 + "Error: x" + "E  " * 200,
                 "a/" * 5000 + "b", "0x" + "f" * 10000, "Required: " + "1," * 5000):
        sig = signature_of(text)
        assert sig.type and len(sig.line) <= 240
