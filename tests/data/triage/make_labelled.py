"""Builds ``labelled.jsonl``: real failure texts, each labelled with its true fault id.

Sources: public issues of triton-lang/triton, pytorch/pytorch, intel/intel-xpu-backend-for-triton,
vllm-project/vllm, sgl-project/sglang, pytorch/helion, llvm/llvm-project and others (the url of
each base text is in ``source``), plus the H200 texts in ``../shared/notes/runtime-facts.md``.
Personal details are replaced (user names → ``user``, home folders → ``/home/user``, hosts →
``host``). The texts are reduced to the lines that carry the error, rephrased where a source was
long, and then seen through the log shapes a nightly meets: a bare traceback, pytest's report
(``E`` lines, ``FAILED`` summary), a GitHub Actions log (timestamps, ANSI colours), a Kubernetes
log (``stderr F``), Ray/glog/vLLM prefixes. Variants of one fault differ in what varies between
occurrences (sizes, paths, temp names, pids, positions, parameters), never in the fault.

Run ``python tests/data/triage/make_labelled.py`` to regenerate; the output is deterministic.
"""
from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent


def tb(*frames: str) -> str:
    out = ["Traceback (most recent call last):"]
    for f in frames:
        out.append(f'  File "{f}", line {17 + 11 * len(out)}, in run')
        out.append("    return self._run(*args)")
    return "\n".join(out)


# --------------------------------------------------------------------------- log shapes
def w_plain(text: str, test: str, i: int) -> str:
    return text


def w_pytest(text: str, test: str, i: int) -> str:
    name = test.split("::")[-1]
    body = "\n".join(("E       " + line) if line and not line.startswith(" ") else line for line in text.split("\n"))
    last = [line for line in text.split("\n") if line.strip()][-1].strip()
    return (f"_____________________________ {name} _____________________________\n\n"
            f"    def {name.split('[')[0]}(device):\n>       run_kernel(device)\n\n"
            f"python/test/unit/language/test_core.py:{120 + i}: \n{body}\n"
            f"=========================== short test summary info ============================\n"
            f"FAILED {test} - {last[:70]}{'...' if len(last) > 70 else ''}\n"
            f"========================= 1 failed, {300 + i} passed in {41 + i}.{i}2s =========================")


def w_gha(text: str, test: str, i: int) -> str:
    ts = f"2026-11-{10 + i % 18:02d}T0{i % 9}:{13 + i % 47:02d}:{(7 * i) % 60:02d}.{1234567 + 31 * i}Z"
    lines = [f"{ts} \x1b[31m{line}\x1b[0m" if "Error" in line or "error" in line else f"{ts} {line}"
             for line in text.split("\n")]
    return "\n".join(lines) + f"\n{ts} ##[error]Process completed with exit code 1."


def w_k8s(text: str, test: str, i: int) -> str:
    ts = f"2026-10-{1 + i % 27:02d}T18:48:{10 + i % 40}.{418481013 + i}+01:00"
    return "\n".join(f"{ts} stderr F {line}" for line in text.split("\n"))


def w_ray(text: str, test: str, i: int) -> str:
    return "\n".join(f"(BenchmarkWorker pid={700 + 13 * i}) {line}" for line in text.split("\n"))


def w_glog(text: str, test: str, i: int) -> str:
    return "\n".join(f"E1130 0{i % 9}:2{i % 10}:3{i % 10}.{100000 + 7 * i} {4000 + i} compile_worker.py:{88 + i}] {line}"
                     for line in text.split("\n"))


def w_vllm(text: str, test: str, i: int) -> str:
    return "\n".join(f"ERROR 01-{10 + i % 18} 03:21:{i % 60:02d} engine.py:387] {line}" for line in text.split("\n"))


SHAPES = (w_plain, w_pytest, w_gha, w_k8s, w_ray, w_glog, w_vllm)

# --------------------------------------------------------------------------- faults
# fault id → (source, tests, [core texts]); records = every core text × rotating shapes.
F: dict[str, tuple[str, list[str], list[str]]] = {}

F["oor-shared-memory"] = ("https://github.com/triton-lang/triton/issues/8182 ; runtime-facts.md (H200)",
    ["python/test/unit/language/test_matmul.py::test_matmul[128-256-64-4-fp16]",
     "python/test/unit/language/test_matmul.py::test_matmul[256-256-128-3-bf16]",
     "python/tutorials/06-fused-attention.py::test_op[4-48-1024-128]"],
    [tb("/home/user/triton/python/triton/runtime/jit.py", "/home/user/triton/python/triton/compiler/compiler.py")
     + '\n    raise OutOfResources(self.metadata.shared, max_shared, "shared memory")\n'
     "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: 101376. "
     "Reducing block sizes or `num_stages` may help.",
     "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 263168, Hardware limit: 232448. "
     "Reducing block sizes or `num_stages` may help.",
     tb("/usr/local/lib/python3.12/dist-packages/triton/compiler/compiler.py")
     + "\ntriton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 66560, Hardware limit: 65536. "
     "Reducing block sizes or `num_stages` may help.",
     "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 49152. "
     "Reducing block sizes or `num_stages` may help.",
     "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 589824, Hardware limit: 232448. "
     "Reducing block sizes or `num_stages` may help."])

F["oor-threads"] = ("triton/compiler/compiler.py _init_handles (threads check)",
    ["python/test/unit/language/test_core.py::test_reduce[1024-16-max]",
     "python/test/unit/language/test_core.py::test_scan2d[2048-cumsum]"],
    ["triton.runtime.errors.OutOfResources: out of resource: threads, Required: 2048, Hardware limit: 1024. "
     "Reducing block sizes or `num_stages` may help.",
     tb("/home/user/triton/python/triton/compiler/compiler.py")
     + "\ntriton.runtime.errors.OutOfResources: out of resource: threads, Required: 4096, Hardware limit: 1024. "
     "Reducing block sizes or `num_stages` may help.",
     "triton.runtime.errors.OutOfResources: out of resource: threads, Required: 1056, Hardware limit: 1024. "
     "Reducing block sizes or `num_stages` may help.",
     "triton.runtime.errors.OutOfResources: out of resource: threads, Required: 2048, Hardware limit: 1024. "
     "Reducing block sizes or `num_stages` may help."])

F["compile-arange-pow2"] = ("runtime-facts.md (H200): CompilationError 'arange's range must be a power of 2'",
    ["examples/kernels/test_kernels.py::test_softmax[97-fp32]",
     "examples/kernels/test_kernels.py::test_layernorm[1000-fp16]"],
    ["triton.compiler.errors.CompilationError: at 12:15:\ndef softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):\n"
     "    row = tl.program_id(0)\n    offs = tl.arange(0, BLOCK)\n               ^\nValueError(\"arange's range must be a power of 2\")",
     "triton.compiler.errors.CompilationError: at 7:11:\n    cols = tl.arange(0, N_COLS)\n           ^\n"
     "ValueError(\"arange's range must be a power of 2\")",
     "Traceback (most recent call last):\n  File \"/home/user/triton/python/triton/language/core.py\", line 42, in wrapper\n"
     "    return fn(*args, **kwargs)\nValueError: arange's range must be a power of 2\n\n"
     "The above exception was the direct cause of the following exception:\n\n"
     "Traceback (most recent call last):\n  File \"/home/user/fork/examples/kernels/softmax.py\", line 88, in softmax\n"
     "triton.compiler.errors.CompilationError: at 21:8:\n    x = tl.arange(0, BLOCK_SIZE)\n        ^",
     "triton.compiler.errors.CompilationError: at 30:19:\n        offs_k = tl.arange(0, K)\n                   ^\n"
     "ValueError(\"arange's range must be a power of 2\")"])

F["compile-arange-constexpr"] = ("triton frontend: arange's arguments must be of type tl.constexpr",
    ["examples/kernels/test_kernels.py::test_softmax[128-fp32]",
     "examples/kernels/test_kernels.py::test_add[large-fp16]"],
    ["triton.compiler.errors.CompilationError: at 5:11:\n    offs = tl.arange(0, n)\n           ^\n"
     "ValueError(\"arange's arguments must be of type tl.constexpr\")",
     "triton.compiler.errors.CompilationError: at 14:20:\n    cols = pid * BLOCK + tl.arange(0, size)\n                    ^\n"
     "ValueError(\"arange's arguments must be of type tl.constexpr\")",
     "triton.compiler.errors.CompilationError: at 9:4:\n    r = tl.arange(start, end)\n    ^\n"
     "ValueError(\"arange's arguments must be of type tl.constexpr\")",
     "triton.compiler.errors.CompilationError: at 11:13:\n    idx = tl.arange(0, width)\n             ^\n"
     "ValueError(\"arange's arguments must be of type tl.constexpr\")"])

F["compile-name-undefined"] = ("https://github.com/facebookresearch/blt/issues/124 (NameError in a jitted kernel)",
    ["python/test/unit/language/test_core.py::test_dot[32-32-32-4-none]",
     "examples/kernels/test_kernels.py::test_matmul[64-64-32]"],
    ["triton.compiler.errors.CompilationError: at 34:23:\n    acc += tl.dot(a, b, out_dtype=ACC_TYPE)\n                       ^\n"
     "NameError('ACC_TYPE is not defined')",
     "triton.compiler.errors.CompilationError: at 40:12:\n        acc = acc.to(ACC_TYPE)\n            ^\nNameError('ACC_TYPE is not defined')",
     "triton.compiler.errors.CompilationError: at 28:8:\n    c = tl.zeros((BM, BN), dtype=ACC_TYPE)\n        ^\nNameError('ACC_TYPE is not defined')",
     "triton.compiler.errors.CompilationError: at 34:23:\n    acc += tl.dot(a, b, out_dtype=ACC_TYPE)\n                       ^\n"
     "NameError('ACC_TYPE is not defined')"])

F["numeric-matmul"] = ("runtime-facts.md: torch AssertionError 'Tensor-likes are not close!' with mismatch counts",
    ["examples/kernels/test_kernels.py::test_matmul[128-128-128-bf16]",
     "examples/kernels/test_kernels.py::test_matmul[256-128-64-fp16]",
     "examples/kernels/test_kernels.py::test_matmul[512-512-64-bf16]"],
    ["AssertionError: Tensor-likes are not close!\n\nMismatched elements: 1043 / 16384 (6.4%)\n"
     "Greatest absolute difference: 0.5 at index (12, 77) (up to 0.01 allowed)\n"
     "Greatest relative difference: 0.0625 at index (12, 77) (up to 0.016 allowed)",
     "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 12 / 32768 (0.0%)\n"
     "Greatest absolute difference: 0.125 at index (3, 8) (up to 0.01 allowed)\n"
     "Greatest relative difference: 0.0078125 at index (3, 8) (up to 0.016 allowed)",
     "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 262144 / 262144 (100.0%)\n"
     "Greatest absolute difference: nan at index (0, 0) (up to 0.01 allowed)\n"
     "Greatest relative difference: nan at index (0, 0) (up to 0.016 allowed)",
     "  File \"/home/user/.venv/lib/python3.11/site-packages/torch/testing/_comparison.py\", line 1530, in assert_close\n"
     "    raise error_metas[0].to_error(msg)\nAssertionError: Tensor-likes are not close!\n\nMismatched elements: 7 / 16384 (0.0%)\n"
     "Greatest absolute difference: 0.03125 at index (100, 3) (up to 0.01 allowed)\n"
     "Greatest relative difference: 0.0101 at index (100, 3) (up to 0.016 allowed)"])

F["numeric-softmax"] = ("same message as numeric-matmul, another test: a different fault",
    ["examples/kernels/test_kernels.py::test_softmax[1823-781-fp32]",
     "examples/kernels/test_kernels.py::test_softmax[4096-1024-fp16]"],
    ["AssertionError: Tensor-likes are not close!\n\nMismatched elements: 781 / 1423763 (0.1%)\n"
     "Greatest absolute difference: 0.0009765625 at index (0, 12) (up to 1e-05 allowed)\n"
     "Greatest relative difference: 1.0 at index (0, 12) (up to 1.3e-06 allowed)",
     "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 4096 / 4194304 (0.1%)\n"
     "Greatest absolute difference: 0.001 at index (4095, 0) (up to 1e-05 allowed)\n"
     "Greatest relative difference: 0.5 at index (4095, 0) (up to 0.001 allowed)",
     "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 1 / 1423763 (0.0%)\n"
     "Greatest absolute difference: 2.0 at index (17, 400) (up to 1e-05 allowed)\n"
     "Greatest relative difference: 0.25 at index (17, 400) (up to 1.3e-06 allowed)",
     "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 93 / 1423763 (0.0%)\n"
     "Greatest absolute difference: 0.1 at index (3, 3) (up to 1e-05 allowed)\n"
     "Greatest relative difference: 0.2 at index (3, 3) (up to 1.3e-06 allowed)"])

F["assert-cast-incompatible"] = ("https://github.com/pytorch/pytorch/issues/147377",
    ["test/inductor/test_max_autotune.py::TestPrologueFusion::test_broadcast_x_K_64",
     "test/inductor/test_max_autotune.py::TestPrologueFusion::test_upcast[float16]"],
    ["python: /root/.triton/llvm/llvm-1188b1ff-ubuntu-x64/include/llvm/Support/Casting.h:566: decltype(auto) llvm::cast(const From&) "
     "[with To = mlir::RankedTensorType; From = mlir::Type]: Assertion `isa<To>(Val) && \"cast<Ty>() argument of incompatible type!\"' failed.\n"
     "#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 64], warpsPerCTA = [2, 1], order = [1, 0]}>\nAborted (core dumped)",
     "python: /home/user/.triton/llvm/llvm-86b69c31-ubuntu-x64/include/llvm/Support/Casting.h:566: decltype(auto) llvm::cast(const From&) "
     "[with To = mlir::RankedTensorType; From = mlir::Type]: Assertion `isa<To>(Val) && \"cast<Ty>() argument of incompatible type!\"' failed.\n"
     "Fatal Python error: Aborted",
     "python3: /root/.triton/llvm/llvm-1188b1ff-ubuntu-x64/include/llvm/Support/Casting.h:572: decltype(auto) llvm::cast(const From&) "
     "[with To = mlir::RankedTensorType; From = mlir::Type]: Assertion `isa<To>(Val) && \"cast<Ty>() argument of incompatible type!\"' failed.",
     "triton-opt: /source/llvm-project/llvm/include/llvm/Support/Casting.h:566: decltype(auto) llvm::cast(const From&) "
     "[with To = mlir::RankedTensorType; From = mlir::Type]: Assertion `isa<To>(Val) && \"cast<Ty>() argument of incompatible type!\"' failed.\n"
     "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace.\n"
     " #0 0x00005621e6b3d1bf llvm::sys::PrintStackTrace(llvm::raw_ostream&, int)"])

F["assert-dyn-cast-nonexistent"] = ("https://github.com/triton-lang/triton/issues/10256",
    ["python/test/unit/language/test_core.py::test_load_cache_modifier[cg]",
     "test/inductor/test_mla.py::test_decode[gfx950]"],
    ["/source/llvm-project/llvm/include/llvm/Support/Casting.h:650: decltype(auto) llvm::dyn_cast(const From &) "
     "[To = mlir::OpResult, From = mlir::Value]: Assertion `detail::isPresent(Val) && \"dyn_cast on a non-existent value\"' failed.\n"
     "/root/aiter/gemm_a8w8_blockscale.py:47:0: error: Failures have been detected while processing an MLIR pass pipeline\n"
     "note: Pipeline failed while executing [`TritonAMDGPUCanonicalizePointers` on 'tt.func' operation: @_gemm_kernel]",
     "python: /root/.triton/llvm/llvm-a66376b0-ubuntu-x64/include/llvm/Support/Casting.h:650: decltype(auto) llvm::dyn_cast(const From &) "
     "[To = mlir::OpResult, From = mlir::Value]: Assertion `detail::isPresent(Val) && \"dyn_cast on a non-existent value\"' failed.",
     "python3: /opt/llvm/include/llvm/Support/Casting.h:650: decltype(auto) llvm::dyn_cast(const From &) "
     "[To = mlir::OpResult, From = mlir::Value]: Assertion `detail::isPresent(Val) && \"dyn_cast on a non-existent value\"' failed.\n"
     "Aborted (core dumped)",
     "python: /root/.triton/llvm/llvm-a66376b0-ubuntu-x64/include/llvm/Support/Casting.h:650: decltype(auto) llvm::dyn_cast(const From &) "
     "[To = mlir::OpResult, From = mlir::Value]: Assertion `detail::isPresent(Val) && \"dyn_cast on a non-existent value\"' failed.\n"
     "Fatal Python error: Aborted\n\nCurrent thread 0x00007f769f034740 (most recent call first):"])

F["assert-mma-ampere"] = ("https://github.com/sgl-project/sglang/issues/913",
    ["python/test/unit/language/test_core.py::test_dot[64-64-64-8-chain-dot]",
     "python/tutorials/06-fused-attention.py::test_op[1-2-1024-64]"],
    ["python: /project/lib/Analysis/Allocation.cpp:43: std::pair<llvm::SmallVector<unsigned int>, llvm::SmallVector<unsigned int> > "
     "mlir::triton::getCvtOrder(mlir::Attribute, mlir::Attribute): Assertion `!(srcMmaLayout && dstMmaLayout && !srcMmaLayout.isAmpere()) "
     "&& \"mma -> mma layout conversion is only supported on Ampere\"' failed.",
     "python: /home/user/triton/lib/Analysis/Allocation.cpp:51: std::pair<llvm::SmallVector<unsigned int>, llvm::SmallVector<unsigned int> > "
     "mlir::triton::getCvtOrder(mlir::Attribute, mlir::Attribute): Assertion `!(srcMmaLayout && dstMmaLayout && !srcMmaLayout.isAmpere()) "
     "&& \"mma -> mma layout conversion is only supported on Ampere\"' failed.\nAborted (core dumped)",
     "[gpu=0] Prefill batch. #new-seq: 1, #new-token: 7\npython: /project/lib/Analysis/Allocation.cpp:43: std::pair<llvm::SmallVector<unsigned int>, "
     "llvm::SmallVector<unsigned int> > mlir::triton::getCvtOrder(mlir::Attribute, mlir::Attribute): Assertion `!(srcMmaLayout && dstMmaLayout "
     "&& !srcMmaLayout.isAmpere()) && \"mma -> mma layout conversion is only supported on Ampere\"' failed.",
     "python: /project/lib/Analysis/Allocation.cpp:43: std::pair<llvm::SmallVector<unsigned int>, llvm::SmallVector<unsigned int> > "
     "mlir::triton::getCvtOrder(mlir::Attribute, mlir::Attribute): Assertion `!(srcMmaLayout && dstMmaLayout && !srcMmaLayout.isAmpere()) "
     "&& \"mma -> mma layout conversion is only supported on Ampere\"' failed.\nFatal Python error: Aborted"])

F["assert-linear-layout-reshape"] = ("https://github.com/triton-lang/triton/issues/5609",
    ["python/test/unit/language/test_core.py::test_dot[64-128-32-8-bf16]",
     "python/test/unit/tools/test_repro.py::test_repro_kernel[8]"],
    ["python: triton/lib/Tools/LinearLayout.cpp:503: mlir::triton::LinearLayout mlir::triton::LinearLayout::reshapeOuts("
     "llvm::ArrayRef<std::pair<mlir::StringAttr, int> >) const: Assertion `getTotalOutDimSize() == std::accumulate( newOutDims.begin(), "
     "newOutDims.end(), 1, [&](int32_t acc, auto &outDim) { return acc * outDim.second; })' failed.",
     "python: /home/user/triton/lib/Tools/LinearLayout.cpp:517: mlir::triton::LinearLayout mlir::triton::LinearLayout::reshapeOuts("
     "llvm::ArrayRef<std::pair<mlir::StringAttr, int> >) const: Assertion `getTotalOutDimSize() == std::accumulate( newOutDims.begin(), "
     "newOutDims.end(), 1, [&](int32_t acc, auto &outDim) { return acc * outDim.second; })' failed.\nAborted (core dumped)",
     "python3: /project/lib/Tools/LinearLayout.cpp:503: mlir::triton::LinearLayout mlir::triton::LinearLayout::reshapeOuts("
     "llvm::ArrayRef<std::pair<mlir::StringAttr, int> >) const: Assertion `getTotalOutDimSize() == std::accumulate( newOutDims.begin(), "
     "newOutDims.end(), 1, [&](int32_t acc, auto &outDim) { return acc * outDim.second; })' failed.",
     "python: triton/lib/Tools/LinearLayout.cpp:503: mlir::triton::LinearLayout mlir::triton::LinearLayout::reshapeOuts("
     "llvm::ArrayRef<std::pair<mlir::StringAttr, int> >) const: Assertion `getTotalOutDimSize() == std::accumulate( newOutDims.begin(), "
     "newOutDims.end(), 1, [&](int32_t acc, auto &outDim) { return acc * outDim.second; })' failed.\nFatal Python error: Aborted"])

F["llvm-cannot-select-ldmatrix"] = ("LLVM instruction selection failures reported on Triton (nvvm intrinsics)",
    ["python/test/unit/language/test_core.py::test_dot[16-16-16-1-fp8e5]",
     "python/test/unit/language/test_matmul.py::test_mxfp[128-fp8]"],
    ["LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16",
     "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16\n"
     "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace.\n"
     "Stack dump:\n0.\tProgram arguments: python -m pytest\n #0 0x00007f3c1b2e4a1f llvm::sys::PrintStackTrace\nAborted (core dumped)",
     "Fatal Python error: Aborted\nLLVM ERROR: Cannot select: intrinsic %llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16",
     "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16\nFatal Python error: Aborted\n\n"
     "Thread 0x00007fd801468700 (most recent call first):\n  File \"/home/user/triton/python/triton/compiler/compiler.py\", line 297 in compile"])

F["llvm-broken-module"] = ("LLVM verifier failure after lowering (LLVM ERROR: Broken module found)",
    ["python/test/unit/language/test_core.py::test_atomic_rmw[add-bf16]",
     "python/test/unit/language/test_core.py::test_atomic_cas[sem-acq_rel]"],
    ["Intrinsic has incorrect return type!\nptr @llvm.nvvm.atomic.add.gen.f.cta.bf16\nLLVM ERROR: Broken module found, compilation aborted!",
     "Call parameter type does not match function signature!\n  %23 = call bfloat "
     "@llvm.nvvm.atomic.add.gen.f.cta.bf16(ptr addrspace(1) %21, bfloat %22)\n"
     "LLVM ERROR: Broken module found, compilation aborted!\nAborted (core dumped)",
     "LLVM ERROR: Broken module found, compilation aborted!",
     "LLVM ERROR: Broken module found, compilation aborted!\nFatal Python error: Aborted"])

F["mlir-pass-remove-layout"] = ("https://github.com/triton-lang/triton/issues/9809",
    ["python/test/unit/language/test_matmul.py::test_bf16_gemm[256-64]",
     "python/test/unit/language/test_core.py::test_convert2d[blocked-mma]"],
    ["/home/user/vllm/model_executor/layers/fused_moe.py:245:0: error: Failures have been detected while processing an MLIR pass pipeline\n"
     "/home/user/vllm/model_executor/layers/fused_moe.py:245:0: note: Pipeline failed while executing [`TritonGPURemoveLayoutConversions` on "
     "'builtin.module' operation]: reproducer generated at `std::errs, please share the reproducer above with Triton project.`\n"
     "RuntimeError: PassManager::run failed",
     "module {\n  tt.func public @kernel() {\n    tt.return\n  }\n}\n"
     "/tmp/tmpq1w2e3r4/kernel.py:88:0: error: Failures have been detected while processing an MLIR pass pipeline\n"
     "/tmp/tmpq1w2e3r4/kernel.py:88:0: note: Pipeline failed while executing [`TritonGPURemoveLayoutConversions` on 'builtin.module' operation]: "
     "reproducer generated at `std::errs, please share the reproducer above with Triton project.`",
     "RuntimeError: PassManager::run failed\nnote: Pipeline failed while executing "
     "[`TritonGPURemoveLayoutConversions` on 'builtin.module' operation]",
     "loc(\"/home/user/bench/gemm.py\":112:0): error: Failures have been detected while processing an MLIR pass pipeline\n"
     "note: Pipeline failed while executing [`TritonGPURemoveLayoutConversions` on 'builtin.module' operation]: reproducer generated at `std::errs`"])

F["mlir-pass-warp-spec"] = ("https://github.com/triton-lang/triton/issues/8072",
    ["python/test/unit/language/test_warp_specialization.py::test_ws_matmul[128-128-64-8]",
     "test/inductor/test_flex_attention.py::test_flex[sm_120]"],
    ["/home/user/kernels/attn.py:77:0: error: Failures have been detected while processing an MLIR pass pipeline\n"
     "/home/user/kernels/attn.py:77:0: note: Pipeline failed while executing [`TritonGPUAutomaticWarpSpecialization` on 'builtin.module' operation]: "
     "reproducer generated at `std::errs, please share the reproducer above with Triton project.`",
     "note: Pipeline failed while executing [`TritonGPUAutomaticWarpSpecialization` on 'builtin.module' operation]: "
     "reproducer generated at `/tmp/tmpab12cd/repro.mlir`\n"
     "RuntimeError: PassManager::run failed",
     "/tmp/torchinductor_user/ab/cab12xyz.py:40:0: error: Failures have been detected while processing an MLIR pass pipeline\n"
     "note: Pipeline failed while executing [`TritonGPUAutomaticWarpSpecialization` on 'builtin.module' operation]",
     "RuntimeError: PassManager::run failed\n/home/user/kernels/attn.py:91:0: note: Pipeline failed while executing "
     "[`TritonGPUAutomaticWarpSpecialization` "
     "on 'builtin.module' operation]"])

F["mlir-verify-load-ptr"] = ("MLIR op verifier errors raised while lowering a kernel",
    ["python/test/unit/language/test_core.py::test_load_scalar[int64]",
     "python/test/unit/language/test_core.py::test_pointer_arith[i64]"],
    ["/home/user/triton/python/test/unit/language/test_core.py:1520:12: error: 'tt.load' op operand #0 must be ptr or ranked tensor of ptr values, "
     "but got 'i64'\nRuntimeError: PassManager::run failed",
     "loc(\"/tmp/tmpx81kq/test_core.py\":1524:20): error: 'tt.load' op operand #0 must be ptr or ranked tensor of ptr values, but got 'i64'",
     "/home/ci/work/python/test/unit/language/test_core.py:1520:12: error: 'tt.load' op operand #0 must be ptr or ranked tensor of ptr values, "
     "but got 'i64'",
     "test_core.py:1530:4: error: 'tt.load' op operand #0 must be ptr or ranked tensor of ptr values, but got 'i64'\n"
     "triton.compiler.errors.CompilationError: at 3:8:\n    x = tl.load(ptr)\n        ^"])

# One fault: the bundled ptxas does not know the sm_12x family (sm_120 RTX 50xx, sm_121a DGX Spark);
# the fix is the same newer ptxas (TRITON_PTXAS_PATH), whichever member the runner has.
F["ptxas-sm12x"] = ("https://github.com/triton-lang/triton/issues/8539 ; https://github.com/Zyphra/Zonos/issues/184",
    ["python/tutorials/01-vector-add.py::test_add",
     "python/test/unit/language/test_core.py::test_bin_op[float32-add]",
     "python/test/unit/language/test_core.py::test_bin_op[float16-mul]"],
    ["triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\n"
     "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\n\nRepro command: "
     "/home/user/miniforge3/envs/pt/lib/python3.10/site-packages/"
     "triton/backends/nvidia/bin/ptxas -lineinfo -v --gpu-name=sm_121a /tmp/tmpkw7ug6t8.ptx -o /tmp/tmpkw7ug6t8.ptx.o",
     "RuntimeError: Internal Triton PTX codegen error\n`ptxas` stderr:\nptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\n\n"
     "Repro command: /opt/triton/backends/nvidia/bin/ptxas -lineinfo -v --gpu-name=sm_121a /tmp/tmpa1b2c3d4.ptx -o /tmp/tmpa1b2c3d4.ptx.o",
     "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'",
     "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\n"
     "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\n",
     "RuntimeError: Internal Triton PTX codegen error\n`ptxas` stderr:\nptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'\n\n"
     "Repro command: /home/user/miniconda3/envs/z/lib/python3.11/site-packages/triton/backends/nvidia/bin/ptxas -lineinfo -v --gpu-name=sm_120 "
     "/tmp/tmpyign88e6.ptx -o /tmp/tmpyign88e6.ptx.o",
     "ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'",
     "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\n"
     "ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'\n",
     "RuntimeError: Internal Triton PTX codegen error\n`ptxas` stderr:\nptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'\n"])

F["ptxas-regalloc-255"] = ("https://github.com/triton-lang/triton/pull/5017",
    ["python/test/unit/language/test_matmul.py::test_wgmma[256-256-64-8]",
     "python/tutorials/09-persistent-matmul.py::test_persistent[fp8]"],
    ["RuntimeError: Internal Triton PTX codegen error: \n  ptxas info    : (C7516) Potential Performance Loss: "
     "wgmma.mma_async instructions are serialized "
     "due to ill formed pipeline stage in the function 'matmul_kernel'\n  ptxas fatal   : (C7600) Register "
     "allocation failed with register count of '255'. "
     "Compile the program with a higher register target\n  ptxas fatal   : Ptx assembly aborted due to errors",
     "ptxas fatal   : (C7600) Register allocation failed with register count of '255'. Compile the program with a higher register target\n"
     "ptxas fatal   : Ptx assembly aborted due to errors",
     "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\n"
     "ptxas fatal   : (C7600) Register allocation failed with register count of '255'. Compile the program with a higher register target\n"
     "ptxas fatal   : Ptx assembly aborted due to errors\n\nRepro command: ptxas -lineinfo -v --gpu-name=sm_90a "
     "/tmp/tmp9x8y7z6w.ptx -o /tmp/tmp9x8y7z6w.ptx.o",
     "  ptxas fatal   : (C7600) Register allocation failed with register count of '255'. Compile the program with a higher register target"])

F["ptxas-regalloc-168"] = ("same as ptxas-regalloc-255 with another register count: a different fault",
    ["python/test/unit/language/test_matmul.py::test_wgmma[128-256-64-4]",
     "python/tutorials/09-persistent-matmul.py::test_persistent[bf16]"],
    ["ptxas fatal   : (C7600) Register allocation failed with register count of '168'. Compile the program with a higher register target\n"
     "ptxas fatal   : Ptx assembly aborted due to errors",
     "RuntimeError: Internal Triton PTX codegen error: \n  ptxas fatal   : (C7600) Register allocation failed with register count of '168'. "
     "Compile the program with a higher register target\n  ptxas fatal   : Ptx assembly aborted due to errors",
     "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\n"
     "ptxas fatal   : (C7600) Register allocation failed with register count of '168'. Compile the program with a higher register target\n",
     "ptxas fatal   : (C7600) Register allocation failed with register count of '168'. Compile the program with a higher register target"])

F["ptxas-too-much-shared"] = ("https://github.com/ggml-org/llama.cpp/issues/16081 ; https://github.com/BruceCanovas/supersurfel_fusion/issues/1",
    ["ops/test_flash_attn_tile.py::test_build[128-32]",
     "ops/test_flash_attn_tile.py::test_build[128-32-causal]"],
    ["ptxas error   : Entry function "
     "'_Z15flash_attn_tileILi128ELi32ELb1EEvPKcS1_S1_S1_S1_PKiPfP6float2ffffjfiiiiiiiiiiiiiliiliiiiil' uses too much shared data (0xc400 bytes, "
     "0xc000 max)\n"
     "make[3]: *** [ggml/src/ggml-cuda/CMakeFiles/ggml-cuda.dir/build.make:314: fattn-tile.cu.o] Error 255",
     "ptxas error   : Entry function "
     "'_Z15flash_attn_tileILi128ELi32ELb1EEvPKcS1_S1_S1_S1_PKiPfP6float2ffffjfiiiiiiiiiiiiiliiliiiiil' uses too much shared data (0xc500 bytes, "
     "0xc000 max)",
     "[ 27%] Building CUDA object ggml/src/ggml-cuda/CMakeFiles/ggml-cuda.dir/pool2d.cu.o\n"
     "ptxas error   : Entry function "
     "'_Z15flash_attn_tileILi128ELi32ELb1EEvPKcS1_S1_S1_S1_PKiPfP6float2ffffjfiiiiiiiiiiiiiliiliiiiil' uses too much shared data (0xc400 bytes, "
     "0xc000 max)\n"
     "make[2]: *** Waiting for unfinished jobs....",
     "ptxas error   : Entry function "
     "'_Z15flash_attn_tileILi128ELi32ELb1EEvPKcS1_S1_S1_S1_PKiPfP6float2ffffjfiiiiiiiiiiiiiliiliiiiil' uses too much shared data (0xc400 bytes + "
     "0x10 bytes system, 0xc000 max)"])

# An illegal address names no place: one fault is one test's (its parametrizations), not the same
# words in other tests (those are other faults until shown otherwise).
F["cuda-illegal-address"] = ("https://github.com/pytorch/helion/issues/867 ; https://github.com/triton-lang/triton/issues/4577 ; runtime-facts.md",
    ["examples/kernels/test_kernels.py::test_softmax[4096-fp32]",
     "examples/kernels/test_kernels.py::test_softmax[8192-fp32]"],
    ["torch.AcceleratorError: CUDA error: an illegal memory access was encountered\nSearch for `cudaErrorIllegalAddress' in "
     "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.\n"
     "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
     "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
     "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered",
     "RuntimeError: CUDA error: an illegal memory access was encountered\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
     "========= COMPUTE-SANITIZER\n========= Program hit cudaErrorIllegalAddress (error 700) due to \"an illegal memory access was encountered\" "
     "on CUDA API call to cudaDeviceSynchronize.\n=========     Saved host backtrace up to driver entry point at error",
     "  File \"/usr/local/lib/python3.12/dist-packages/triton/runtime/jit.py\", line 757, in run\n"
     "    kernel.run(grid_0, grid_1, grid_2, stream, kernel.function)\nRuntimeError: Triton Error [CUDA]: an illegal memory access was encountered"])

F["cuda-misaligned"] = ("CUDA runtime: misaligned address from vectorised loads",
    ["examples/kernels/test_kernels.py::test_add[odd-fp16]",
     "examples/kernels/test_kernels.py::test_add[odd-bf16]"],
    ["torch.AcceleratorError: CUDA error: misaligned address\nCUDA kernel errors might be asynchronously reported at some other API call, "
     "so the stacktrace below might be incorrect.",
     "RuntimeError: Triton Error [CUDA]: misaligned address",
     "RuntimeError: CUDA error: misaligned address\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1",
     "========= Program hit cudaErrorMisalignedAddress (error 716) due to \"misaligned address\" on CUDA API call to cudaStreamSynchronize."])

F["cuda-launch-resources"] = ("CUDA runtime: too many resources requested for launch",
    ["python/test/unit/language/test_core.py::test_reduce[32-1024-sum]",
     "python/test/unit/language/test_core.py::test_num_warps_pow2[32]"],
    ["RuntimeError: Triton Error [CUDA]: too many resources requested for launch",
     "torch.AcceleratorError: CUDA error: too many resources requested for launch\nCUDA kernel errors might be "
     "asynchronously reported at some other API call.",
     "RuntimeError: CUDA error: too many resources requested for launch",
     "  File \"/home/user/triton/python/triton/backends/nvidia/driver.py\", line 529, in __call__\n"
     "    self.launch(gridX, gridY, gridZ, stream, function, *args)\nRuntimeError: Triton Error [CUDA]: too many resources requested for launch"])

F["segfault-test-scan"] = ("Fatal Python error: Segmentation fault in a test (https://github.com/triton-lang/triton/issues/6721 shape)",
    ["python/test/unit/language/test_core.py::test_scan2d[cumsum-float32-1-32-64]",
     "python/test/unit/language/test_core.py::test_scan2d[cummax-int32-0-16-32]"],
    ["Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f9fa8dd2000 (most recent call first):\n"
     "  File \"/home/user/triton/python/triton/compiler/compiler.py\", line 297 in compile\n"
     "  File \"/home/user/triton/python/test/unit/language/test_core.py\", line 2210 in test_scan2d",
     "python/test/unit/language/test_core.py Fatal Python error: Segmentation fault\n\nThread 0x00007fd801468700 "
     "(most recent call first):\n<no Python frame>",
     "/home/runner/.functions: line 109:  3533 Segmentation fault      (core dumped) pytest -n 8 "
     "python/test/unit\n##[error]Process completed with exit code 139.",
     "Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f3b2c1d0740 (most recent call first):\n"
     "  File \"/usr/lib/python3.12/site-packages/triton/compiler/compiler.py\", line 301 in compile"])

F["segfault-test-atomics"] = ("segfault in another test: a different fault",
    ["python/test/unit/language/test_core.py::test_tensor_atomic_rmw[add-float16-4]",
     "python/test/unit/language/test_core.py::test_tensor_atomic_rmw[max-float32-8]"],
    ["Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f1111111740 (most recent call first):\n"
     "  File \"/home/user/triton/python/test/unit/language/test_core.py\", line 1702 in test_tensor_atomic_rmw",
     "Fatal Python error: Segmentation fault\n\nThread 0x00007fd801468700 (most recent call first):\n<no Python frame>",
     "Segmentation fault (core dumped)",
     "Fatal Python error: Segmentation fault"])

F["filecheck-pipeline-mma"] = ("https://github.com/intel/intel-xpu-backend-for-triton/issues/4259 shape (lit FileCheck)",
    ["lit:TritonGPU/loop-pipeline-hopper.mlir"],
    ["******************** TEST 'TRITON :: TritonGPU/loop-pipeline-hopper.mlir' FAILED ********************\nExit Code: 1\n\n"
     "# | /home/user/triton/test/TritonGPU/loop-pipeline-hopper.mlir:39:12: error: CHECK: expected string not found in input\n"
     "# |  // CHECK: ttng.warp_group_dot {{.*}} {isAsync = true}\n# |            ^\n# | <stdin>:17:46: note: scanning from here",
     "/work/triton/test/TritonGPU/loop-pipeline-hopper.mlir:41:12: error: CHECK: expected string not found in input\n"
     " // CHECK: ttng.warp_group_dot {{.*}} {isAsync = true}\n           ^\n<stdin>:19:2: note: scanning from here",
     "FAIL: TRITON :: TritonGPU/loop-pipeline-hopper.mlir (46 of 202)\n# | C:\\gh15154870476\\test\\TritonGPU\\loop-pipeline-hopper.mlir:39:12: "
     "error: CHECK: expected string not found in input\n# |  // CHECK: ttng.warp_group_dot {{.*}} {isAsync = true}\n# |            ^",
     "test/TritonGPU/loop-pipeline-hopper.mlir:39:12: error: CHECK: expected string not found in input\n // CHECK: "
     "ttng.warp_group_dot {{.*}} {isAsync = true}"])

F["filecheck-remove-masks"] = ("https://github.com/intel/intel-xpu-backend-for-triton/issues/4259",
    ["lit:Triton/Intel/RemoveMasks/loop-invariant-masks.mlir"],
    ["# | C:\\gh15154870476\\test\\Triton\\Intel\\RemoveMasks\\loop-invariant-masks.mlir:39:12: error: CHECK: expected string not found in input\n"
     "# |  // CHECK: [[CST_511:%.+]] = arith.constant 511 : i32\n# |            ^\n# | <stdin>:17:46: note: scanning from here",
     "/home/user/xpu/test/Triton/Intel/RemoveMasks/loop-invariant-masks.mlir:39:12: error: CHECK: expected string not found in input\n"
     " // CHECK: [[CST_511:%.+]] = arith.constant 511 : i32\n           ^",
     "FAIL: TRITON :: Triton/Intel/RemoveMasks/loop-invariant-masks.mlir (12 of 310)\n"
     "# | /build/test/Triton/Intel/RemoveMasks/loop-invariant-masks.mlir:39:12: error: CHECK: expected string not found in input\n"
     "# |  // CHECK: [[CST_511:%.+]] = arith.constant 511 : i32",
     "loop-invariant-masks.mlir:39:12: error: CHECK: expected string not found in input\n // CHECK: [[CST_511:%.+]] = arith.constant 511 : i32"])

F["api-dot-allow-tf32"] = ("triton API change: tl.dot's allow_tf32 removed in favour of input_precision",
    ["examples/kernels/test_kernels.py::test_matmul[64-64-32-fp32]",
     "ops/test_gemm.py::test_gemm_tf32[128]"],
    ["  File \"/usr/lib/python3/site-packages/triton/compiler/code_generator.py\", line 1290, in visit_Call\n"
     "    return fn(*args, **extra_kwargs, **kws)\nTypeError: dot() got an unexpected keyword argument 'allow_tf32'",
     "triton.compiler.errors.CompilationError: at 22:15:\n        acc += tl.dot(a, b, allow_tf32=ALLOW_TF32)\n               ^\n"
     "TypeError(\"dot() got an unexpected keyword argument 'allow_tf32'\")",
     tb("/home/user/fork/ops/gemm.py", "/home/user/.venv/lib/python3.11/site-packages/triton/compiler/code_generator.py")
     + "\nTypeError: dot() got an unexpected keyword argument 'allow_tf32'",
     "triton.compiler.errors.CompilationError: at 40:16:\n        acc = tl.dot(a, b, acc, allow_tf32=False)\n                ^\n"
     "TypeError(\"dot() got an unexpected keyword argument 'allow_tf32'\")"])

F["api-libdevice-moved"] = ("triton API change: triton.language.libdevice moved to triton.language.extra",
    ["ops/test_activation.py::test_gelu[fp16]",
     "ops/test_activation.py::test_gelu[fp32]"],
    ["  File \"/home/user/triton/python/triton/compiler/code_generator.py\", line 1201, in visit_Attribute\n"
     "    return getattr(lhs, node.attr)\nAttributeError: module 'triton.language' has no attribute 'libdevice'",
     tb("/home/user/fork/ops/activation.py", "/home/user/triton/python/triton/compiler/code_generator.py")
     + "\nAttributeError: module 'triton.language' has no attribute 'libdevice'",
     "triton.compiler.errors.CompilationError: at 9:8:\n    g = tl.libdevice.tanh(x)\n        ^\n"
     "AttributeError(\"module 'triton.language' has no attribute 'libdevice'\")",
     "triton.compiler.errors.CompilationError: at 4:11:\n    y = tl.libdevice.erf(x)\n           ^\n"
     "AttributeError(\"module 'triton.language' has no attribute 'libdevice'\")"])

# ---- infrastructure
F["infra-gpu-busy"] = ("CUDA: all CUDA-capable devices are busy or unavailable (exclusive-process GPUs held by another job)",
    ["examples/kernels/test_kernels.py::test_add[small-fp32]",
     "examples/kernels/test_kernels.py::test_matmul[128-128-128-bf16]"],
    ["torch.AcceleratorError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n"
     "CUDA kernel errors might be asynchronously reported at some other API call.",
     "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable\nCompile with `TORCH_USE_CUDA_DSA` "
     "to enable device-side assertions.",
     "RuntimeError: Triton Error [CUDA]: all CUDA-capable devices are busy or unavailable",
     "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable"])

F["infra-no-driver"] = ("https://github.com/pytorch/pytorch/issues/3989 ; runtime-facts.md ('0 active drivers')",
    ["examples/kernels/test_kernels.py::test_add[small-fp32]",
     "python/test/unit/language/test_core.py::test_empty_kernel[float32]"],
    ["RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from "
     "http://www.nvidia.com/Download/index.aspx",
     tb("/home/user/.venv/lib/python3.11/site-packages/torch/cuda/__init__.py")
     + "\nRuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from "
     "http://www.nvidia.com/Download/index.aspx",
     "RuntimeError: 0 active drivers ([]). There should only be one.",
     "E   RuntimeError: 0 active drivers ([]). There should only be one."])

F["infra-driver-mismatch"] = ("https://github.com/nagadomi/nunif/issues/702 ; NVML driver/library mismatch after a driver upgrade",
    ["examples/kernels/test_kernels.py::test_add[small-fp32]",
     "examples/kernels/test_kernels.py::test_softmax[97-fp32]"],
    ["RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
     "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version at torch/csrc/cuda/Module.cpp:107",
     "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.95",
     "torch.AcceleratorError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"])

F["infra-disk-full"] = ("No space left on device (runner disk)",
    ["job:build-wheels", "examples/kernels/test_kernels.py::test_matmul[128-128-128-bf16]"],
    ["OSError: [Errno 28] No space left on device: '/tmp/tmpx1y2z3/cache/kernel.cubin'",
     "error: could not write to '/home/runner/work/triton/build/lib/libtriton.so': No space left on device\nninja: build stopped: subcommand failed.",
     "OSError: [Errno 28] No space left on device",
     "tar: ./llvm-86b69c31-ubuntu-x64/lib/libMLIR.a: Cannot write: No space left on device"])

F["infra-network-download"] = ("toolchain download over the network (LLVM/ptxas fetch) failing",
    ["job:build-wheels", "job:build-triton"],
    ["Downloading https://oaitriton.blob.core.windows.net/public/llvm-builds/llvm-86b69c31-ubuntu-x64.tar.gz\n"
     "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>",
     "curl: (56) Recv failure: Connection reset by peer\nerror: failed to fetch ptxas",
     "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='github.com', port=443): Max retries exceeded with url: /x "
     "(Caused by NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7f2b>: Failed to establish a "
     "new connection: [Errno 111] Connection refused'))",
     "fatal: unable to access 'https://github.com/llvm/llvm-project/': Could not resolve host: github.com"])

F["infra-oom-kill"] = ("host OOM killer (exit code 137) while building/compiling",
    ["job:build-triton", "job:nightly-l2"],
    ["[1234/2890] Building CXX object "
     "lib/Dialect/TritonGPU/Transforms/CMakeFiles/Pipeliner.cpp.o\nKilled\n##[error]Process completed with exit code 137.",
     "c++: fatal error: Killed signal terminated program cc1plus\ncompilation terminated.\nError: Process completed with exit code 137.",
     "Out of memory: Killed process 48213 (python) total-vm:81234567kB",
     "Killed\nmake: *** [Makefile:42: all] Error 137\nexited with 137"])

F["infra-cuda-oom-other-process"] = ("torch.OutOfMemoryError with another process holding the GPU (a busy GPU)",
    ["examples/kernels/test_kernels.py::test_matmul[4096-4096-4096-bf16]",
     "examples/kernels/test_kernels.py::test_softmax[8192-fp32]"],
    ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.81 GiB of which 1.19 GiB is free. "
     "Process 12345 has 138.61 GiB memory in use. Including non-PyTorch memory, this process has 1.02 GiB memory in use.",
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 139.81 "
     "GiB of which 300.12 MiB is free. "
     "Process 987 has 139.50 GiB memory in use.",
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 79.10 GiB of which 10.00 MiB is free. "
     "Process 4321 has 79.09 GiB memory in use.",
     "E   torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 139.81 GiB of which 0 bytes is free. "
     "Process 555 has 139.81 GiB memory in use."])

# ---- bare exit codes: never alone (the job names the fault)
F["job-lint-exit"] = ("a job whose log ends in a bare exit code",
    ["job:lint"],
    ["Run pre-commit run --all-files\nruff....................................................................Failed\n##[error]Process completed "
     "with exit code 1.",
     "pre-commit hook(s) made changes.\nError: Process completed with exit code 1.",
     "##[error]Process completed with exit code 1.",
     "make: *** [Makefile:12: lint] Error 1\nexited with code 1"])

F["job-docs-exit"] = ("another job ending in the same bare exit code: a different fault",
    ["job:docs"],
    ["sphinx-build -W docs build/html\nWarning, treated as error:\n##[error]Process completed with exit code 1.",
     "##[error]Process completed with exit code 1.",
     "make: *** [Makefile:20: html] Error 1\nError: Process completed with exit code 1.",
     "build finished with problems, 1 warning.\nexited with code 1"])


def build() -> list[dict]:
    out = []
    n = 0
    for fault, (source, tests, cores) in F.items():
        k = 0
        # every core text through at least two shapes: ≥ 5 records a fault
        reps = max(2, -(-6 // len(cores)))
        for r in range(reps):
            for j, core in enumerate(cores):
                shape = SHAPES[(j + r * 3 + n) % len(SHAPES)]
                test = tests[(j + r) % len(tests)]
                if test.startswith("job:") and shape is w_pytest:
                    shape = w_gha
                out.append({"id": f"{fault}-{k}", "fault": fault, "test": test,
                            "shape": shape.__name__[2:], "source": source,
                            "text": shape(core, test, n)})
                k += 1
                n += 1
    return out


if __name__ == "__main__":
    recs = build()
    with open(HERE / "labelled.jsonl", "w") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(recs)} records, {len(F)} faults")
