"""Builds ``holdout.jsonl``: a second labelled set gathered *after* the normaliser was written and
never used to tune it (bench/bench_triage.py reports it apart, as the honest figure).

Sources (public issues; personal details replaced): ModelTC/LightLLM#34, InternLM/lmdeploy#3322,
ROCm/triton#552, triton-lang/triton#7967, pytorch/pytorch#119054, triton-lang/triton#2622,
intel/intel-xpu-backend-for-triton#4866, triton-lang/triton#3708, state-spaces/mamba#387,
triton-lang/triton#384, alipay/PainlessInferenceAcceleration#35, apache/tvm#17267,
MIT-REALM/neural_clbf#30, SiriusNEO/Triton-Puzzles-Lite#7.
"""
from __future__ import annotations

import json
from pathlib import Path

from make_labelled import w_gha, w_k8s, w_plain, w_pytest, w_ray

HERE = Path(__file__).parent
H: dict[str, tuple[list[str], list[str]]] = {}

H["cuda-invalid-argument"] = (["ops/test_moe.py::test_silu_and_mul[4096]"], [
    "RuntimeError: Triton Error [CUDA]: invalid argument",
    "  File \"/home/user/lmdeploy/pytorch/kernels/cuda/activation.py\", line 70, in silu_and_mul\n"
    "    _silu_and_mul_kernel[grid](gate_up,\n  File \"/opt/conda/lib/python3.10/site-packages/triton/backends/nvidia/driver.py\", "
    "line 365, in __call__\n    self.launch(*args, **kwargs)\nRuntimeError: Triton Error [CUDA]: invalid argument",
    "RuntimeError: CUDA driver error: invalid argument",
    "E   RuntimeError: Triton Error [CUDA]: invalid argument",
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: Triton Error [CUDA]: invalid argument",
])
H["hip-invalid-argument"] = (["test/inductor/test_torchinductor.py::test_sum_int[gfx90a]"], [
    "RuntimeError: Triton Error [HIP]: Code: 1, Messsage: invalid argument",
    "  File \"/root/triton/python/triton/backends/amd/driver.py\", line 256, in __call__\n    self.launch(*args, **kwargs)\n"
    "RuntimeError: Triton Error [HIP]: Code: 1, Messsage: invalid argument",
    "E       RuntimeError: Triton Error [HIP]: Code: 1, Messsage: invalid argument",
    "RuntimeError: Triton Error [HIP]: Code: 1, Messsage: invalid argument\n",
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: Triton Error [HIP]: Code: 1, Messsage: invalid argument",
])
H["kernel-image-invalid"] = (["test/inductor/test_compile.py::test_add_tensors"], [
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: Triton Error [CUDA]: device kernel image is invalid",
    "RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
    "BackendCompilerFailed: backend='inductor' raised: RuntimeError: Triton Error [CUDA]: device kernel image is invalid\n\n"
    "Set TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information",
    "E   RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
    "  File \"/home/user/.venv/lib/python3.11/site-packages/triton/compiler/compiler.py\", line 230, in _init_handles\n"
    "RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
])
H["mlir-invalid-layout-rank"] = (["lit:TritonGPU/combine.mlir"], [
    "within split at test/TritonGPU/combine.mlir:211 offset :268:8: error: Result has an invalid layout: "
    "#triton_gpu.blocked<{sizePerThread = [1, 1], "
    "threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>.\nLayout has rank 2, but the tensor it's attached to has rank 1.",
    "within split at /work/triton/test/TritonGPU/combine.mlir:211 offset :270:8: error: Result has an invalid "
    "layout: #triton_gpu.blocked<{sizePerThread = [1, 1], "
    "threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>.",
    "# | test/TritonGPU/combine.mlir:268:8: error: Result has an invalid layout: #triton_gpu.blocked<{sizePerThread = [1, 1], "
    "threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>.",
    "within split at test/TritonGPU/combine.mlir:211 offset :268:8: error: Result has an invalid layout: "
    "#triton_gpu.blocked<{sizePerThread = [1, 1], "
    "threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>.\n  %8 = triton_gpu.convert_layout %7",
    "FAIL: TRITON :: TritonGPU/combine.mlir (88 of 310)\nwithin split at test/TritonGPU/combine.mlir:211 offset "
    ":268:8: error: Result has an invalid layout: "
    "#triton_gpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>.",
])
H["op-destroyed-with-uses"] = (["tests/ops/test_based.py::test_based[B1-T63-H1-D60-torch.float16]"], [
    "/home/runner/envs/fla/ops/based/fused_chunk.py:94:22: error: 'ttg.convert_layout' op operation destroyed but still has uses\n"
    "LLVM ERROR: operation destroyed but still has uses",
    "LLVM ERROR: operation destroyed but still has uses\nFatal Python error: Aborted",
    "/tmp/fla/ops/based/fused_chunk.py:96:22: error: 'ttg.convert_layout' op operation destroyed but still has uses\n"
    "note: - use: \"tt.store\"(%arg26, <<UNKNOWN SSA VALUE>>)\n\nLLVM ERROR: operation destroyed but still has uses",
    "LLVM ERROR: operation destroyed but still has uses",
    "fused_chunk.py:94:22: error: 'ttg.convert_layout' op operation destroyed but still has uses\nLLVM ERROR: "
    "operation destroyed but still has uses\n"
    "Aborted (core dumped)",
])
H["triton-not-installed"] = (["job:compile-smoke"], [
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: RuntimeError: Cannot find a working triton installation. "
    "More information on installing Triton can be found at https://github.com/openai/triton",
    "RuntimeError: Cannot find a working triton installation. More information on installing Triton can be found at https://github.com/openai/triton",
    "E   RuntimeError: Cannot find a working triton installation. More information on installing Triton can be found "
    "at https://github.com/openai/triton",
    "  File \"/opt/conda/lib/python3.10/site-packages/torch/_inductor/scheduler.py\", line 2150, in create_backend\n"
    "    raise RuntimeError(\nRuntimeError: Cannot find a working triton installation. More information on installing Triton can be found at "
    "https://github.com/openai/triton",
    "RuntimeError: Cannot find a working triton installation. More information on installing Triton can be found at "
    "https://github.com/openai/triton\n"
    "##[error]Process completed with exit code 1.",
])
H["oor-shared-memory-old-formats"] = (["python/test/unit/operators/test_attention.py::test_attention_fwd_bwd[64]"], [
    "triton.runtime.autotuner.OutOfResources: out of resource: shared memory, Required: 663808, Hardware limit: 101376. "
    "Reducing block sizes or `num_stages` may help.",
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 163842, Hardware limit: 101376. "
    "Reducing block sizes or `num_stages` may help.",
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 126978, Hardware limit: 101376. "
    "Reducing block sizes or `num_stages` may help.",
    "OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536. Reducing block sizes or `num_stages` may help.  (×5)",
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 589824, Hardware limit: 101376. "
    "Reducing block sizes or num_stages may help.",
])
H["ptxas-shared-tvm-conv"] = (["tests/python/relay/test_vit.py::test_build[rtx4090]"], [
    "ptxas error   : Entry function 'tvmgen_default_fused_nn_conv2d_add_kernel' uses too much shared data (0x2ab44 bytes, 0x29000 max)",
    "Compilation error:\nptxas error   : Entry function 'tvmgen_default_fused_nn_conv2d_add_kernel' uses too much "
    "shared data (0x2ab44 bytes, 0x29000 max)",
    "ptxas error   : Entry function 'tvmgen_default_fused_nn_conv2d_add_kernel' uses too much shared data (0x2c000 bytes, 0x29000 max)",
    "tvm.error.InternalError: Compilation error:\nptxas error   : Entry function "
    "'tvmgen_default_fused_nn_conv2d_add_kernel' uses too much shared data "
    "(0x2ab44 bytes, 0x29000 max)",
    "ptxas error   : Entry function 'tvmgen_default_fused_nn_conv2d_add_kernel' uses too much shared data (0x2ab44 bytes, 0xc000 max)",
])
H["ptxas-shared-scan"] = (["tests/test_scan.py::test_scan_exclusive"], [
    "ptxas error   : Entry function 'scanExclusive' uses too much shared data (0x4010 bytes + 0x10 bytes system, 0x4000 max)",
    "Internal error compiling scan.cl\n    Log for device Tesla C1060\n    ptxas error   : Entry function 'scanExclusive' uses too much shared data "
    "(0x4010 bytes + 0x10 bytes system, 0x4000 max)",
    "ptxas error   : Entry function 'scanExclusive' uses too much shared data (0x4020 bytes, 0x4000 max)",
    "    ptxas error   : Entry function 'scanExclusive' uses too much shared data (0x4010 bytes + 0x10 bytes system, 0x4000 max)",
    "ptxas error   : Entry function 'scanExclusive' uses too much shared data (0x4010 bytes, 0x4000 max)",
])
H["segfault-lidar"] = (["neural_clbf/systems/tests/test_planar_lidar_system.py::test_planar_lidar"], [
    "neural_clbf/systems/tests/test_planar_lidar_system.py Fatal Python error: Segmentation fault\n\nThread "
    "0x00007fd801468700 (most recent call first):\n<no Python frame>",
    "Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f22aa1c0740 (most recent call first):\n"
    "  File \"/home/user/neural_clbf/systems/planar_lidar_system.py\", line 212 in _get_observation",
    "Segmentation fault (core dumped)",
    "Fatal Python error: Segmentation fault",
    "/home/user/.bashrc: line 3:  8812 Segmentation fault      (core dumped) pytest neural_clbf",
])
H["device-print-prefix"] = (["puzzles.py::test_demo1"], [
    "Traceback (most recent call last):\n  File \"/home/user/lib/python3.12/site-packages/triton/language/core.py\", line 35, in wrapper\n"
    "    return fn(*args, **kwargs)\n  File \"/home/user/lib/python3.12/site-packages/triton/language/core.py\", line 2243, in device_print\n"
    "    assert isinstance(prefix, str), f\"{prefix} is not string\"\nAssertionError: int32[constexpr[8]] is not string\n\n"
    "The above exception was the direct cause of the following "
    "exception:\n\ntriton.compiler.errors.CompilationError: at 3:4:\n    tl.device_print(x)\n    ^",
    "triton.compiler.errors.CompilationError: at 3:4:\n    tl.device_print(x)\n    ^\nAssertionError('int32[constexpr[8]] is not string')",
    "triton.compiler.errors.CompilationError: at 5:4:\n    tl.device_print(range)\n    ^\nAssertionError('int32[constexpr[8]] is not string')",
    "AssertionError: int32[constexpr[8]] is not string\n\nThe above exception was the direct cause of the following exception:\n\n"
    "triton.compiler.errors.CompilationError: at 3:4:",
    "triton.compiler.errors.CompilationError: at 3:4:\n    tl.device_print(x)\n    ^\nAssertionError(\"int32[constexpr[8]] is not string\")",
])
H["network-read-timeout"] = (["job:build-triton"], [
    "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='oaitriton.blob.core.windows.net', port=443): Read timed out. (read timeout=30)",
    "urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='github.com', port=443): Read timed out.",
    "pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='files.pythonhosted.org', port=443): Read timed out.",
    "Downloading LLVM...\nrequests.exceptions.ReadTimeout: HTTPSConnectionPool(host='oaitriton.blob.core.windows.net', port=443): Read timed out.",
    "ERROR: Read timed out while fetching https://download.pytorch.org/whl/nightly",
])
H["cuda-oom-self"] = (["examples/kernels/test_kernels.py::test_matmul[8192]"], [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.55 GiB of which 3.06 MiB is free. "
    "Including non-PyTorch memory, this process has 23.54 GiB memory in use.",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.81 GiB of which 1.00 GiB is free. "
    "Including non-PyTorch memory, this process has 138.80 GiB memory in use.",
    "E   torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of "
    "79.10 GiB of which 100.00 MiB is free.",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
    "23.55 GiB of which 3.06 MiB is free.",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 139.81 GiB of which 0 bytes is free.",
])

SHAPES = (w_plain, w_pytest, w_gha, w_k8s, w_ray)


def build() -> list[dict]:
    out = []
    n = 0
    for fault, (tests, cores) in H.items():
        for j, core in enumerate(cores):
            shape = SHAPES[(j + n) % len(SHAPES)] if j >= 3 else w_plain
            test = tests[j % len(tests)]
            if test.startswith("job:") and shape is w_pytest:
                shape = w_gha
            out.append({"id": f"{fault}-{j}", "fault": fault, "test": test, "shape": shape.__name__[2:],
                        "text": shape(core, test, n)})
            n += 1
    return out


if __name__ == "__main__":
    recs = build()
    with open(HERE / "holdout.jsonl", "w") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(recs)} records, {len(H)} faults")
