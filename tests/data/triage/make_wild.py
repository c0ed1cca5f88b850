"""Builds ``wild.jsonl``: real failure texts from public reports, labelled by root cause, with a
frozen held-out split. Regenerate with ``python tests/data/triage/make_wild.py`` (deterministic).

Labelling rule (written before any signature code was changed, and applied to every text):

* **Same label = same fix.** Two texts carry the same label when one change would fix both, as
  the report (its comments, a linked duplicate or the fix) shows.
* A message that names the fault specifically (the limit, the instruction, the architecture, the
  import, the language rule: ``out of resource: shared memory``, ``Value 'sm_121a' is not
  defined``, ``cannot import name 'triton_key'``, ``arange's range must be a power of 2``) is one
  root cause across reports when the reports agree on the cause and the fix is one change of the
  same kind (``TRITON_PTXAS_PATH`` to a newer ptxas; a smaller ``num_stages``/block; matching torch
  and triton; padding a range to a power of two): what one issue in a fork's tracker would be
  about. The same cause in different words (``sm_120`` vs ``sm_121a``, a wrapper exception around
  it, another tool's wording) keeps the label; different causes in the same words get two labels
  (``LLVM ERROR: Cannot select … tcgen05.wait.st`` on GB300 vs under sm_120 instrumentation).
* A message that says nothing about where or why — a fatal signal, an illegal memory access, an
  unspecified launch failure, a numeric mismatch, a bare ``PassManager::run failed`` or
  ``AssertionError``, ``invalid argument`` — is one root cause per report (the fix is in that
  report's kernel), even when the words are identical.
* Texts of one report in several shapes (the traceback, pytest's ``E`` lines, its summary line,
  a CI log with timestamps, a wrapper exception) share the report's label.

Each record: ``id``, ``fault``, ``source`` (``owner/repo#N`` or URL), ``test`` (the test the report
names; where it names none, ``job:<project>-<what ran>`` — a nightly always knows its job),
``shape`` (``real``: the report's own text, excerpted; ``derived-…``: the real text put through a
log shape a nightly meets — pytest's summary line cut at the terminal width, a CI timestamp
prefix — built by the functions below, never edited by hand), ``split`` (``tune`` | ``heldout``)
and ``text``.

Personal data removed: user names in paths → ``user``, home folders → ``/home/user``, no host
names, no e-mail. Texts are short excerpts of the error lines (fair use), not whole logs.

**Held-out split (frozen):** whole *sources* (reports) are assigned, so no report is on both
sides: ``sha1(source) % 10 < 4`` → held-out (about 40 %). It was fixed and committed before any
signature change, and the held-out records are never used to tune the signature code (bench and
tests read them only to report figures).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

HERE = Path(__file__).parent

# (fault, source, test, text) — real excerpts
W: list[tuple[str, str, str, str]] = []


def add(fault: str, source: str, test: str, *texts: str) -> None:
    for t in texts:
        W.append((fault, source, test, t))


# ---------------------------------------------------------------- toolchain: ptxas does not know the GPU
add("ptxas-arch-newer-than-toolchain", "triton-lang/triton#8539", "python/tutorials/01-vector-add.py::test_add",
    "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\n"
    "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\n\n"
    "Repro command: /home/user/miniforge3/envs/pt10/lib/python3.10/site-packages/triton/backends/nvidia/bin/ptxas "
    "-lineinfo -v --gpu-name=sm_121a /tmp/tmpkw7ug6t8.ptx -o /tmp/tmpkw7ug6t8.ptx.o",
    "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'")
add("ptxas-arch-newer-than-toolchain", "gpustack/gpustack#4372", "job:gpustack-serve",
    "ptxas fatal : Value 'sm_121a' is not defined for option 'gpu-name'")
add("ptxas-arch-newer-than-toolchain", "triton-lang/triton#8096", "job:vllm-engine-core",
    "(EngineCore_0 pid=9492)   File \"/home/user/.venv/lib/python3.12/site-packages/triton/backends/nvidia/compiler.py\", "
    "line 468, in make_cubin\n(EngineCore_0 pid=9492)     subprocess.run(ptxas_cmd, check=True, close_fds=False, stderr=flog)\n"
    "(EngineCore_0 pid=9492)   File \"/usr/lib/python3.12/subprocess.py\", line 571, in run\n"
    "(EngineCore_0 pid=9492)     raise CalledProcessError(retcode, process.args,\n"
    "(EngineCore_0 pid=9492) subprocess.CalledProcessError: Command '['/home/user/.venv/lib/python3.12/site-packages/triton/"
    "backends/nvidia/bin/ptxas', '-lineinfo', '-v', '--gpu-name=sm_110a', '/tmp/tmp95oy_b9d.ptx', '-o', "
    "'/tmp/tmp95oy_b9d.ptx.o']' returned non-zero exit status 255.")
add("ptxas-arch-newer-than-toolchain", "vllm-project/vllm#31338", "job:vllm-serve",
    "ptxas fatal: Value 'sm_110a' is not defined for option 'gpu-name'")
add("ptxas-arch-newer-than-toolchain", "tensorflow/serving#1821", "job:tf-serving",
    "2021-02-27 01:33:51.779607: W external/org_tensorflow/tensorflow/stream_executor/gpu/asm_compiler.cc:235] Your CUDA "
    "software stack is old. We fallback to the NVIDIA driver for some compilation. Update your CUDA version to get the "
    "best performance. The ptxas error was: ptxas fatal   : Value 'sm_86' is not defined for option 'gpu-name'")
# an old architecture a new toolchain dropped: the same words, another fix (change the arch list)
add("ptxas-arch-dropped-by-toolchain", "utcs-scea/altis#19", "job:altis-cmake",
    "    Building CUDA object CMakeFiles/cmTC_a1746.dir/main.cu.o\n    /usr/bin/nvcc     -x cu -c "
    "/home/user/gpgpu/altis/CMakeFiles/CMakeTmp/main.cu -o CMakeFiles/cmTC_a1746.dir/main.cu.o\n"
    "    ptxas fatal   : Value 'sm_30' is not defined for option 'gpu-name'\n"
    "    make[1]: *** [CMakeFiles/cmTC_a1746.dir/build.make:66: CMakeFiles/cmTC_a1746.dir/main.cu.o] Error 255",
    "ptxas fatal : Value 'sm_30' is not defined for option 'gpu-name'")
# tcgen05 instructions compiled for sm_120 (consumer Blackwell has none): two wordings of one fault
add("tcgen05-on-sm120", "triton-lang/triton#11747", "python/test/gluon/test_consan.py::test_async_tma_kernel",
    "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\n"
    "ptxas /tmp/tmpa1b2c3d4.ptx, line 74; error   : Instruction 'tcgen05.alloc' not supported on .target 'sm_120a'",
    "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.tcgen05.wait.st\nFatal Python error: Aborted")
add("llvm-tcgen05-wait-gb300", "triton-lang/triton#8481", "job:sglang-launch-server",
    "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.tcgen05.wait.st\nFatal Python error: Aborted\n\n"
    "Thread 0x0000fe47c000f100 (most recent call first):\n  File \"/usr/lib/python3.12/threading.py\", line 359 in wait\n"
    "  File \"/usr/local/lib/python3.12/dist-packages/tqdm/_monitor.py\", line 60 in run")
add("llvm-redux-fmax", "triton-lang/triton#7517", "job:triton-minimal-max",
    "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.redux.sync.fmax\nzsh: IOT instruction (core dumped)  python repro.py")
add("llvm-shfl-pascal", "triton-lang/triton#3875", "job:triton-pascal",
    "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32")
add("llvm-shfl-old-triton-rtx50", "woct0rdho/SageAttention#64", "job:sageattention-test",
    "  File \"E:\\ComfyUI\\.ext\\Lib\\site-packages\\triton\\compiler\\compiler.py\", line 286, in compile\n"
    "    next_module = compile_ir(module,\nLLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32")
add("libtriton-missing-llvm-target", "triton-lang/triton#3782", "job:triton-import",
    "ImportError: /home/user/triton/python/triton/_C/libtriton.so: undefined symbol: LLVMInitializeSparcTarget")

# ---------------------------------------------------------------- resource limits
add("oor-shared-memory", "Yuliang-Liu/MonkeyOCR#25", "job:monkeyocr-parse",
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 65538, Hardware limit: 65536.")
add("oor-shared-memory", "FlashML-org/FreeToken#246", "job:freetoken-start",
    "[16:10:33] stdout/INFO  triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, "
    "Hardware limit: 65536. Reducing block sizes or `num_stages` may help.",
    "[16:10:42] health/ERROR  OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536. "
    "Reducing block sizes or `num_stages` may help.  (×5)")
add("oor-shared-memory", "triton-lang/triton#8182", "job:gpt-oss-generate",
    "out of resource: shared memory, Required: 131072, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.")
add("oor-shared-memory", "pytorch/helion#470", "test/test_examples.py::TestExamples::test_geglu",
    "  File \"/home/user/.conda/envs/helion/lib/python3.12/site-packages/triton/compiler/compiler.py\", line 483, in "
    "_init_handles\n    raise OutOfResources(self.metadata.shared, max_shared, \"shared memory\")\n"
    "triton.runtime.errors.OutOfResources: out of resource: shared memory,")
add("oor-shared-memory", "Yuliang-Liu/MonkeyOCR#86", "job:monkeyocr-agent",
    "File \"/usr/local/lib/python3.11/dist-packages/triton/compiler/compiler.py\", line 374, in _init_handles\n"
    "    raise OutOfResources(self.metadata.shared, max_shared, \"shared memory\")\n"
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 126978, Hardware limit: 101376. "
    "Reducing block sizes or `num_stages` may help.")
add("oor-shared-memory", "OpenSpaceAI/DEST3D#2", "job:dest3d-train",
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 589824, Hardware limit: 101376. "
    "Reducing block sizes or num_stages may help.")
add("oor-shared-memory", "triton-lang/triton#384", "python/test/unit/operators/test_flash_attention.py::test_attention_fwd_bwd",
    "triton.code_gen.OutOfResources: out of resource: shared memoryRequired: 110592Hardware limit: 101376")
add("oor-shared-memory", "sasha0552/pascal-pkgs-ci#50", "job:vllm-pascal-long-context",
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 49152. "
    "Reducing block sizes or `num_stages` may help.")
add("oor-shared-memory", "intel/intel-xpu-backend-for-triton#5762", "language/test_matmul.py::test_batched_mxfp[0-4-1-128-64-128-16-4]",
    "FAILED language/test_matmul.py::test_batched_mxfp[0-4-1-128-64-128-16-4] - triton.runtime.errors.OutOfResources: "
    "out of resource: shared memory, Required: 196608, Hardware limit: 131072. Reducing block sizes or `num_stages` may help.")
add("oor-shared-memory", "intel/intel-xpu-backend-for-triton#1083", "operators/test_flash_attention.py::test_op[False-False-dtype0-2-4-512-16]",
    "2024-05-09T20:19:45.9729182Z FAILED operators/test_flash_attention.py::test_op[False-False-dtype0-2-4-512-16] - "
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 73728, Hardware limit: 65536. "
    "Reducing block sizes or `num_stages` may help.",
    "2024-05-09T20:19:45.9731569Z FAILED operators/test_flash_attention.py::test_op[True-True-dtype0-2-4-512-16] - "
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 81920, Hardware limit: 65536. "
    "Reducing block sizes or `num_stages` may h")
add("oor-shared-memory", "intel/intel-xpu-backend-for-triton#4402", "test_tensor_descriptor.py::test_mxfp8_mxfp4_matmul_tma",
    "The failures are cause by triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 196608, "
    "Hardware limit: 131072.")
add("unsloth-blocksize-limit", "unslothai/unsloth#7", "job:unsloth-finetune",
    "RuntimeError: Cannot launch Triton kernel since n = 46336 exceeds the maximum CUDA blocksize = 65535.",
    "  File \"/storage/venvs/unsloth/lib/python3.11/site-packages/unsloth/kernels/utils.py\", line 23, in calculate_settings\n"
    "    raise RuntimeError(f\"Cannot launch Triton kernel since n = {n} exceeds \"\\\n"
    "RuntimeError: Cannot launch Triton kernel since n = 64000 exceeds the maximum CUDA blocksize = 65535.")

# ---------------------------------------------------------------- version mismatches and installs
add("triton-key-import", "pytorch/pytorch#127271", "test/inductor/test_torchinductor.py::test_add",
    "  File \"/home/user/project/pytorch/torch/_inductor/codecache.py\", line 166, in get_system\n"
    "    from triton.compiler.compiler import triton_key\ntorch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    "LoweringException: ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' "
    "(/home/user/anaconda3/envs/sam/lib/python3.10/site-packages/triton/compiler/compiler.py)")
add("triton-key-import", "pytorch/pytorch#157242", "test/inductor/test_torchinductor.py::test_add",
    "  File \"/home/user/pytorch/torch/_inductor/codecache.py\", line 205, in get_system\n"
    "    from triton.compiler.compiler import triton_key\ntorch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    "ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' (/home/user/pytorch/triton/compiler/compiler.py)")
add("triton-key-compat-import", "pytorch/helion#392", "job:helion-import",
    "ImportError: cannot import name 'triton_key' from 'torch._inductor.runtime.triton_compat'")
add("triton-too-old-or-missing", "welltop-cn/ComfyUI-TeaCache#40", "job:teacache-compile",
    "backend='inductor' raised:\nRuntimeError: Cannot find a working triton installation. Either the package is not "
    "installed or it is too old. More information on installing Triton can be found at https://github.com/openai/triton\n\n"
    "Set TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information")
add("attrs-descriptor-import", "leomaxwell973/Triton-3.3.0-UPDATE_FROM_3.2.0_and_FIXED-Windows-Nvidia-Prebuilt#6", "job:comfyui-compile",
    "ImportError: cannot import name 'AttrsDescriptor' from 'triton.backends.compiler'")
add("jitfunction-import", "Deep-Learning-Profiling-Tools/triton-viz#30", "job:triton-viz-vec-add",
    "ImportError: cannot import name 'JITFunction' from 'triton' (unknown location)")
add("device-fixture-default-cuda", "triton-lang/triton#7675", "python/test/unit/language/test_core.py::test_split_subview[128-128-64-64]",
    "FAILED python/test/unit/language/test_core.py::test_split_subview[128-128-64-64] - AssertionError: Torch not "
    "compiled with CUDA enabled",
    "FAILED python/test/unit/language/test_core.py::test_split_subview[256-128-64-64] - AssertionError: Torch not "
    "compiled with CUDA enabled")

# ---------------------------------------------------------------- fatal signals: one fault per report
add("segv-free-threading-driver-build", "triton-lang/triton#6721", "tests/models/test_mimo.py",
    "Fatal Python error: Segmentation fault\n\nCurrent thread 0x000078eb0d55e080 (most recent call first):\n"
    "  File \"<frozen importlib._bootstrap>\", line 488 in _call_with_frames_removed\n"
    "  File \"<frozen importlib._bootstrap_external>\", line 1320 in create_module\n"
    "  File \"<frozen importlib._bootstrap>\", line 813 in module_from_spec\n"
    "  File \"/root/vm313t/lib/python3.13t/site-packages/triton/backends/nvidia/driver.py\", line 71 in compile_module_from_src\n"
    "  File \"/root/vm313t/lib/python3.13t/site-packages/triton/backends/nvidia/driver.py\", line 89 in __init__")
add("segv-intel-make-spv", "intel/intel-xpu-backend-for-triton#1009", "python/test/unit/language/test_core.py::test_bin_op",
    "Fatal Python error: Segmentation fault\n...\nCurrent thread 0x00007fdd4d367740 (most recent call first):\n"
    "  File \"/opt/hostedtoolcache/Python/3.12.3/x64/lib/python3.12/site-packages/triton/backends/intel/compiler.py\", "
    "line 190 in make_spv\n  File \"/opt/hostedtoolcache/Python/3.12.3/x64/lib/python3.12/site-packages/triton/backends/"
    "intel/compiler.py\", line 198 in <lambda>\n  File \"/opt/hostedtoolcache/Python/3.12.3/x64/lib/python3.12/site-packages/"
    "triton/compiler/compiler.py\", line 280 in compile")
add("segv-intel-load-binary", "intel/intel-xpu-backend-for-triton#3556", "python/test/unit/language/test_core.py::test_convert_mma2mma",
    "Fatal Python error: Segmentation fault\n\nThread 0x00007fc2bada8640 (most recent call first):\n"
    "  File \"/opt/hostedtoolcache/Python/3.9.21/x64/lib/python3.9/site-packages/execnet/gateway_base.py\", line 534 in read\n\n"
    "Current thread 0x00007fc2bb69a600 (most recent call first):\n"
    "  File \"/opt/hostedtoolcache/Python/3.9.21/x64/lib/python3.9/site-packages/triton/backends/intel/driver.py\", line 206 "
    "in load_binary\n  File \"/opt/hostedtoolcache/Python/3.9.21/x64/lib/python3.9/site-packages/triton/compiler/compiler.py\","
    " line 411 in _init_handles")
add("sigfpe-triton-shared-launch", "microsoft/triton-shared#175", "python/test/unit/language/test_core.py::test_binary",
    ".s...........s...........s...........s...........s...........s.......... [  4%]\n"
    "Fatal Python error: Floating point exception\n\nCurrent thread 0x00007fb24d8e4000 (most recent call first):\n"
    "  File \"/home/runner/.local/lib/python3.10/site-packages/triton/backends/triton_shared/driver.py\", line 267 in launch")
add("abort-ttgir-to-llir-openfold", "triton-lang/triton#2936", "tests/unit/ops/attention/flash_attention_test.py::test_flash_attention_fwd",
    "Fatal Python error: Aborted\n\nCurrent thread 0x00007f7325dfa280 (most recent call first):\n"
    "  File \"/home/user/anaconda3/envs/test-fold/lib/python3.10/site-packages/triton/compiler.py\", line 1006 in ttgir_to_llir\n"
    "  File \"/home/user/anaconda3/envs/test-fold/lib/python3.10/site-packages/triton/compiler.py\", line 1554 in <lambda>\n"
    "  File \"/home/user/anaconda3/envs/test-fold/lib/python3.10/site-packages/triton/compiler.py\", line 1621 in compile")
add("abort-vllm-logprobs", "vllm-project/vllm#7421", "tests/samplers/test_logprobs.py::test_get_prompt_logprobs[True-0-1-float-facebook/opt-125m]",
    "./all-failed-wip.sh: line 4: 1829169 Aborted                 (core dumped) pytest -s "
    "tests/samplers/test_logprobs.py::test_get_prompt_logprobs[True-0-1-float-facebook/opt-125m]")

# ---------------------------------------------------------------- numeric mismatches: one fault per report
add("mismatch-mxfp8-mxfp4-pvc", "intel/intel-xpu-backend-for-triton#5428",
    "language/test_matmul.py::test_mxfp8_mxfp4_matmul[0-True-True-float4-float8e5-False-False-False-3-128-256-128-1024-512-512]",
    "language/test_matmul.py::test_mxfp8_mxfp4_matmul[0-True-True-float4-float8e5-False-False-False-3-128-256-128-1024-512-512]"
    " - AssertionError: Tensor-likes are not close",
    ">       torch.testing.assert_close(ref_out, output, atol=1e-3, rtol=1e-3)\nE       AssertionError: Tensor-likes are not "
    "close!\nE       \nE       Mismatched elements: 2069 / 524288 (0.4%)\nE       Greatest absolute difference: "
    "54.87181854248047 at index (399, 467) (up to 0.001 allowed)\nE       Greatest relative difference: 40.02494812011719 at "
    "index (143, 159) (up to 0.001 allowed)")
add("mismatch-upsample-nearest1d-rocm", "pytorch/pytorch#154215",
    "test/inductor/test_torchinductor_dynamic_shapes.py::DynamicShapesGPUTests::test_upsample_nearest1d_dynamic_shapes_cuda",
    "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 288 / 592 (48.6%)\nGreatest absolute difference: "
    "4.519928932189941 at index (1, 3, 30) (up to 1e-05 allowed)\nGreatest relative difference: 119.00628662109375 at index "
    "(0, 1, 8) (up to 1.3e-06 allowed)\n\nThe failure occurred for item [0]")
add("mismatch-conv-as-strided", "pytorch/pytorch#154232", "test/inductor/test_inductor_freezing.py::FreezingCpuTests::test_conv_with_as_strided_cpu",
    "  File \"/tmp/pytorch/test/inductor/test_inductor_freezing.py\", line 784, in test_conv_with_as_strided\n"
    "    self.assertEqual(foo(mod, x), mod_eager)\nAssertionError: Tensor-likes are not close!\n\nMismatched elements: "
    "1574636 / 1769472 (89.0%)\nGreatest absolute difference: 3.915588855743408 at index (0, 166, 0, 0, 8, 2) (up to 1e-05 allowed)")
add("mismatch-topk-xpu", "intel/intel-xpu-backend-for-triton#7361", "inductor/test_compile_subprocess.py::GPUTests::test_topk_xpu",
    "2026-07-06T00:14:18.1317565Z FAILED [0.3314s] inductor/test_compile_subprocess.py::GPUTests::test_topk_xpu - "
    "AssertionError: Tensor-likes are not close!\n2026-07-06T00:14:18.1317571Z \n2026-07-06T00:14:18.1317698Z Mismatched "
    "elements: 11 / 16 (68.8%)\n2026-07-06T00:14:18.1317937Z Greatest absolute difference: 588.0 at index (0, 0, 5, 0) "
    "(up to 1e-05 allowed)")
add("nsa-grad-allclose", "lucidrains/native-sparse-attention-pytorch#31", "tests/test_triton_nsa.py",
    "line 194, in <module>\n    assert torch.allclose(rsel_scale.grad, nsel_scale.grad, atol = 1e-2)\n"
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\nAssertionError")

# ---------------------------------------------------------------- runtime errors without a place: one fault per report
add("ima-pylate-inductor", "lightonai/pylate#75", "job:pylate-train",
    "  File \"/tmp/torchinductor_root/iq/ciqrfu3ucgsquenkxp6d3hnf3br5rzxifpxeazprcynhjvbnl2na.py\", line 413, in call\n"
    "    triton_poi_fused__to_copy_0.run(tangents_1, buf0, triton_poi_fused__to_copy_0_xnumel, grid=grid(triton_poi_fused__to_copy_0_xnumel), stream=stream0)\n"  # noqa: E501
    "  File \"<string>\", line 7, in launcher\nRuntimeError: Triton Error [CUDA]: an illegal memory access was encountered")
add("ima-realtime-vla", "dexmal/realtime-vla#23", "job:realtime-vla-infer",
    "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered")
add("ima-lmdeploy", "InternLM/lmdeploy#2999", "job:lmdeploy-serve",
    "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered")
add("ima-nccl-watchdog-peft", "NVIDIA-NeMo/Automodel#156", "tests/functional_tests/checkpoint/test_peft.py",
    "  tests/functional_tests/checkpoint/test_peft.py [rank0]:[E701 01:25:12.697538425 ProcessGroupNCCL.cpp:1899] [PG ID 1 "
    "PG GUID 1(mesh_data_parallel) Rank 0] Process group watchdog thread terminated with exception: CUDA error: an illegal "
    "memory access was encountered")
add("ima-decomp-jit", "pytorch/pytorch#118135", "test/test_ops_jit.py::TestJitCUDA::test_variant_consistency_jit_all_cuda_float32",
    "TEST SUITE EARLY TERMINATION due to torch.cuda.synchronize() failure\nCUDA error: an illegal memory access was encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.")
add("ima-swin-alignment", "pytorch/torchdynamo#1338", "job:timm-swin-accuracy",
    "  File \"/home/user/torchdynamo/torchinductor/triton_ops/autotune.py\", line 157, in run\n    return launcher(\n"
    "  File \"<string>\", line 4, in launcher\nRuntimeError: Triton Error [CUDA]: an illegal memory access was encountered")
add("ulf-deepseek-h100", "sgl-project/sglang#10570", "job:sglang-deepseek-v31",
    "RuntimeError: Triton Error [CUDA]: unspecified launch failure")
add("ulf-flex-attention-bwd-b200", "triton-lang/triton#8475", "job:attention-gym-flex-perf",
    "E1017 15:14:02.287000 11462 torch/_inductor/select_algorithm.py:3255] [1/0] Runtime error during autotuning: \n"
    "CUDA error: unspecified launch failure")
add("ulf-openrlhf-qwen2", "OpenRLHF/OpenRLHF#829", "job:openrlhf-train",
    "  File \"/root/venv/lib/python3.11/site-packages/transformers/models/qwen2/modeling_qwen2.py\", line 259, in forward\n"
    "    hidden_states,\nRuntimeError: CUDA error: unspecified launch failure")
add("no-kernel-image-triton-mocked-capability", "intel/auto-round#2048", "test/unit/test_cuda/models/test_fp8_model.py::test_small_model_rtn_generation",  # noqa: E501
    "  -> triton/runtime/jit.py -> compiler.py: _init_handles()\n"
    "  -> RuntimeError: Triton Error [CUDA]: no kernel image is available for execution on the device",
    "RuntimeError: Triton Error [CUDA]: no kernel image is available for execution on the device")
add("no-kernel-image-mamba-build", "hustvl/Vim#42", "job:vim-train",
    "CUDA error: no kernel image is available for execution on the device\nCUDA kernel errors might be asynchronously "
    "reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing "
    "CUDA_LAUNCH_BLOCKING=1.\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
add("kernel-image-invalid-unsloth", "unslothai/unsloth#424", "job:unsloth-finetune",
    "  File \"/home/user/anaconda3/envs/unsloth/lib/python3.10/site-packages/transformers/trainer.py\", line 3161, in compute_loss\n"
    "    outputs = model(**inputs)\nRuntimeError: Triton Error [CUDA]: device kernel image is invalid")
add("hip-gfx-unsupported", "pytorch/pytorch#164346", "job:comfyui-rocm",
    "RuntimeError: HIP error: invalid device function\nHIP kernel errors might be asynchronously reported at some other API "
    "call, so the stacktrace below might be incorrect.\nFor debugging consider passing AMD_SERIALIZE_KERNEL=3")
add("hip-gfx-unsupported", "pytorch/pytorch#147626", "job:rocm-smoke",
    "    a = torch.randn((1000, 1000), device=device, dtype=torch.float32)\nRuntimeError: HIP error: invalid device function\n"
    "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
    "For debugging consider passing AMD_SERIALIZE_KERNEL=3\nCompile with TORCH_USE_HIP_DSA to enable device-side assertions.")
add("hip-gfx-unsupported", "etched-ai/open-oasis#27", "job:open-oasis-generate",
    "    x = vae.encode(x * 2 - 1).mean * scaling_factor\n                   ~~^~~\nRuntimeError: HIP error: invalid device "
    "function\nHIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.")
add("hip-no-binary-for-gpu", "ROCm/hip#2187", "job:tf-rocm",
    "/src/external/hip-on-vdi/rocclr/hip_code_object.cpp:120: guarantee(false && \"hipErrorNoBinaryForGpu: Coudn't find "
    "binary for current devices!\")")
add("hip-no-binary-for-gpu", "ROCm/tensorflow-upstream#1106", "job:tf-rocm",
    "hip_code_object.cpp:92: guarantee(false && \"hipErrorNoBinaryForGpu: Coudn't find binary for current devices!\")")

# ---------------------------------------------------------------- compiler pipeline failures
add("passmanager-make-ttgir-block-ptr", "intel/intel-xpu-backend-for-triton#5654", "test/inductor/test_cuda_repro.py::CudaReproTests::test_block_ptr",
    "  File \"/home/user/miniforge3/lib/python3.10/site-packages/triton/backends/intel/compiler.py\", line 304, in make_ttgir\n"
    "    pm.run(mod, 'make_ttgir')\nRuntimeError: PassManager::run failed")
add("passmanager-make-llir-bsr-addmm", "intel/torch-xpu-ops#3433",
    "test_sparse_csr_xpu.py::TestSparseCompressedTritonKernelsXPU::test_triton_kernel_op__int_bsr_dense_addmm_blocksize_32_out_dtype_unspecified_xpu_int8",  # noqa: E501
    "test_sparse_csr_xpu.py::TestSparseCompressedTritonKernelsXPU::test_triton_kernel_op__int_bsr_dense_addmm_blocksize_32_"
    "out_dtype_unspecified_xpu_int8 - RuntimeError: PassManager::run failed")
add("passmanager-sm75-lowering-fastkmeans", "AnswerDotAI/fastkmeans#7", "job:fastkmeans-fit",
    "/home/user/miniconda3/envs/nlp/lib/python3.12/site-packages/fastkmeans/triton_kernels.py:33:0: error: Failures have been "
    "detected while processing an MLIR pass pipeline\nRuntimeError: PassManager::run failed")
add("passmanager-var-mean-regression", "intel/intel-xpu-backend-for-triton#3519",
    "test/inductor/test_torchinductor_codegen_dynamic_shapes.py::DynamicShapesCodegenGPUTests::test_var_mean_tile_reduction_True_dynamic_shapes_xpu",
    "  File \"/home/user/miniforge3/lib/python3.10/site-packages/triton/compiler/compiler.py\", line 285, in compile\n"
    "    next_module = compile_ir(module, metadata)\nRuntimeError: PassManager::run failed")
add("passmanager-framepack", "lllyasviel/FramePack#350", "job:framepack-generate",
    "RuntimeError: PassManager::run failed")
add("compile-constexpr-real-number", "ROCm/triton#254", "python/test/unit/language/test_vecadd.py::test_vecadd",
    "E           triton.compiler.errors.CompilationError: at 14:42:           z_ptr,\n"
    "E               pid = tl.program_id(axis=0)\nE               for i in range(math.ceil(block_size / iter_size)):\n"
    "E                                                     ^\nE           TypeError('must be real number, not constexpr')\n\n"
    "/usr/local/lib/python3.8/site-packages/triton/compiler/code_generator.py:989: CompilationError")
add("compile-stickbreaking-varlen", "shawntan/stickbreaking-attention#6", "tests/test_attn.py::TestClass::test_varlen[False-False-dtype0-4096-64-24-4]",  # noqa: E501
    "FAILED tests/test_attn.py::TestClass::test_varlen[False-False-dtype0-4096-64-24-4] - triton.compiler.errors.CompilationError: at 80:4:")
add("compile-scatter-reduce-triton-bump", "pyg-team/pyg-lib#210", "test/ops/test_scatter_reduce.py::test_fused_scatter_reduce",
    "/usr/local/lib/python3.8/dist-packages/triton/compiler.py:942: CompilationError")

# ---------------------------------------------------------------- Windows toolchains
add("ptxas-windows-exit-4294967295", "woct0rdho/triton-windows#66", "job:comfyui-windows",
    "`ptxas` failed with error code 4294967295 `ptxas` stderr:")
add("ptxas-windows-exit-4294967295", "kijai/ComfyUI-WanVideoWrapper#88", "job:comfyui-windows",
    "- **Exception Type:** RuntimeError\n- **Exception Message:** `ptxas` failed with error code 4294967295:")
add("ptxas-windows-exit-4294967295", "woct0rdho/triton-windows#69", "job:comfyui-windows",
    "    subprocess.run(ptxas_cmd, check=True, close_fds=False, stderr=flog)\n  File \"E:\\ComfyUI-aki-v1.4\\python\\lib\\"
    "subprocess.py\", line 526, in run\n    raise CalledProcessError(retcode, process.args,\nsubprocess.CalledProcessError: "
    "Command '['C:\\\\Program Files\\\\NVIDIA GPU Computing Toolkit\\\\CUDA\\\\v12.4\\\\bin\\\\ptxas.exe', '-lineinfo', '-v', "
    "'--gpu-name=sm_75', 'C:\\\\Users\\\\user\\\\AppData\\\\Local\\\\Temp\\\\tmpx3t7clg2.ptx', '-o', 'C:\\\\Users\\\\user\\\\AppData\\\\"
    "Local\\\\Temp\\\\tmpx3t7clg2.ptx.o']' returned non-zero exit status 4294967295.")
add("tcc-cuda-utils-build", "deepbeepmeep/Wan2GP#2117", "job:wan2gp-generate",
    "  File \"D:\\Pinokio\\api\\wan.git\\app\\venv\\Lib\\site-packages\\triton\\runtime\\build.py\", line 136, in _build\n"
    "    subprocess.check_call(cc_cmd)\n  File \"C:\\Users\\user\\AppData\\Roaming\\uv\\python\\cpython-3.11.14-windows-x86_64-"
    "none\\Lib\\subprocess.py\", line 413, in check_call\n    raise CalledProcessError(retcode, cmd)\n"
    "subprocess.CalledProcessError: Command '['D:\\\\Pinokio\\\\api\\\\wan.git\\\\app\\\\venv\\\\Lib\\\\site-packages\\\\triton\\\\"
    "runtime\\\\tcc\\\\tcc.exe', '\\\\\\\\?\\\\D:\\\\Pinokio\\\\cache\\\\TMPDIR\\\\tmppkhjvo8b\\\\cuda_utils.c', '-O3', '-shared']' "
    "returned non-zero exit status 1.")
add("tcc-cuda-utils-build", "woct0rdho/triton-windows#107", "job:comfyui-windows",
    "subprocess.CalledProcessError: Command '['C:\\\\ComfyUI_windows_portable_nvidia\\\\ComfyUI_windows_portable\\\\python_embeded"
    "\\\\Lib\\\\site-packages\\\\triton\\\\runtime\\\\tcc\\\\tcc.exe', 'C:\\\\Users\\\\user\\\\AppData\\\\Local\\\\Temp\\\\"
    "tmpapts0935\\\\cuda_utils.c', '-O3', '-shared', '-fPIC', '-Wno-psabi', '-o', 'C:\\\\Users\\\\user\\\\AppData\\\\Local\\\\"
    "Temp\\\\tmpapts0935\\\\cuda_utils.cp311-win_amd64.pyd', '-lcuda', '-lpython3']' returned non-zero exit status 1.")
add("msvc-launcher-c2059", "woct0rdho/triton-windows#178", "job:comfyui-windows",
    "__triton_launcher.c\nC:\\Users\\user\\AppData\\Local\\Temp\\tmpjq12u9wr\\__triton_launcher.c(123): error C2059: syntax "
    "error: '}'\nC:\\Users\\user\\AppData\\Local\\Temp\\tmpjq12u9wr\\__triton_launcher.c(131): error C2059: syntax error: '}'\n"
    "Failed to compile. cc_cmd: ['C:\\\\Program Files (x86)\\\\Microsoft Visual Studio\\\\2019\\\\BuildTools\\\\VC\\\\Tools\\\\"
    "MSVC\\\\14.29.30133\\\\bin\\\\Hostx64\\\\x64\\\\cl.EXE']")


# ---------------------------------------------------------------- more reports of the faults above, and others
add("ptxas-arch-newer-than-toolchain", "fishaudio/fish-speech#907", "job:fish-speech-compile",
    "E0303 11:40:42.533000 713 site-packages/torch/_inductor/runtime/triton_heuristics.py:533] subprocess.CalledProcessError: "
    "Command '['/home/user/anaconda3/envs/fish-speech/lib/python3.10/site-packages/triton/backends/nvidia/bin/ptxas', "
    "'-lineinfo', '-v', '--gpu-name=sm_120', '/tmp/tmpdy7phawp.ptx', '-o', '/tmp/tmpdy7phawp.ptx.o']' returned non-zero "
    "exit status 255.\nE0303 11:40:42.533000 713 site-packages/torch/_inductor/runtime/triton_heuristics.py:533]\n"
    "E0303 11:40:42.533000 713 site-packages/torch/_inductor/runtime/triton_heuristics.py:533] During handling of the above "
    "exception, another exception occurred:")
add("ptxas-arch-newer-than-toolchain", "ModelTC/LightLLM#176", "job:lightllm-llama2",
    "ptxas fatal : Value 'sm_89' is not defined for option 'gpu-name'")
add("ptxas-arch-newer-than-toolchain", "InternLM/lmdeploy#3410", "job:lmdeploy-serve",
    "lmdeploy - ERROR - base.py:53 - RuntimeError: Internal Triton PTX codegen error: ptxas fatal : Value 'sm_120' is "
    "not defined for option 'gpu-name'")
add("did-not-raise-non-p2p", "triton-lang/triton#385", "python/test/unit/runtime/test_p2p.py::test_non_p2p[cuda:0-cuda:0-cuda:1-default-default]",
    "test_non_p2p[cuda:0-cuda:0-cuda:1-default-default]\nFailed: DID NOT RAISE <class 'RuntimeError'>")
add("rocm-load-binary-null", "ROCm/triton#323", "python/tutorials/05-layer-norm.py::test_layer_norm",
    "File \"/home/user/.local/lib/python3.10/site-packages/triton/compiler/compiler.py\", line 595, in _init_handles\n"
    "  mod, func, n_regs, n_spills = fn_load_binary(self.metadata[\"name\"], self.asm[bin_path], self.shared, device)\n"
    "SystemError: <built-in function load_binary> returned NULL without setting an exception")
add("compile-dion-ortho-frac", "microsoft/dion#39", "job:dion-train",
    "  File \"/home/user/miniforge3/lib/python3.13/site-packages/triton/compiler/compiler.py\", line 80, in make_ir\n"
    "    return ast_to_ttir(self.fn, self, context=context, options=options, codegen_fns=codegen_fns,\n"
    "                       module_map=module_map)\ntriton.compiler.errors.CompilationError")
add("proton-no-active-driver", "intel/intel-xpu-backend-for-triton#5265", "third_party/proton/test/test_api.py",
    "RuntimeError: 0 active drivers ([]). There should only be one")
add("aoti-device1-cpu-pointer", "pytorch/pytorch#157737", "test/inductor/test_aot_inductor.py::AOTInductorTestABICompatibleGpu::test_on_gpu_device1_cuda",  # noqa: E501
    "RuntimeError: Failed to run autotuning code block: Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?)")
add("hip-double-load-invalid-argument", "ROCm/triton#609", "test_backward.py::test_op_bwd",
    "    def __call__(self, *args, **kwargs):\n        print(f'{args=}')\n        print(f'{kwargs=}')\n"
    ">       self.launch(*args, **kwargs)\nE       RuntimeError: Triton Error [HIP]:  Code: 1, Messsage: invalid argument\n\n"
    "../../../aotriton/third_party/triton/python/triton/backends/amd/driver.py:420: RuntimeError")
add("llvm-parent-layout-lightllm", "ModelTC/LightLLM#1030", "job:lightllm-serve",
    "LLVM ERROR: Failed to compute parent layout for slice layout.")
add("llvm-valid-layout-getdescriptor", "triton-lang/triton#8606", "job:xla-fusion-h100",
    "LLVM ERROR: Failed to find a valid layout")
add("minifier-without-triton", "pytorch/pytorch#94549", "test/inductor/test_minifier.py::MinifierTests::test_after_aot_cpu_accuracy_backend_passes",
    "  File \"/home/user/.local/lib/python3.8/site-packages/torch/testing/_comparison.py\", line 1270, in assert_equal\n"
    "    raise error_metas[0].to_error(msg)\nAssertionError: Scalars are not equal!\n\nAbsolute difference: 1\nRelative difference: inf")
add("ctypes-corrupt-python", "woct0rdho/triton-windows#16", "job:comfyui-windows",
    "  File \"C:\\Users\\user\\AppData\\Local\\Programs\\Python\\Python312\\Lib\\ctypes\\__init__.py\", line 157, in <module>\n"
    "    class py_object(_SimpleCData):\nAttributeError: class must define a '_type_' attribute")
add("mismatch-dot3d-windows-bmg", "intel/intel-xpu-backend-for-triton#3544", "language/test_core.py::test_dot3d[8-2-64-64-64-32-32-float32-float32]",
    "2025-02-26T07:40:38.1837785Z FAILED language\\test_core.py::test_dot3d[8-2-64-64-64-32-32-float32-float32] - AssertionError: \n"
    "2025-02-26T07:40:38.1841923Z Not equal to tolerance rtol=0.01, atol=0.01\n2025-02-26T07:40:38.1842122Z \n"
    "2025-02-26T07:40:38.1842258Z Mismatched elements: 509 / 32768 (1.55%)\n2025-02-26T07:40:38.1842485Z Max absolute "
    "difference: 15.552111")
add("assert-cast-dot-without-load", "triton-lang/triton#2794", "test/unit/language/test_core.py::test_dot_without_load[float16]",
    "test/unit/language/test_core.py::test_dot_without_load[float16] python3: /root/.triton/llvm/llvm-5e5a22ca-ubuntu-x64/"
    "include/llvm/Support/Casting.h:578: decltype(auto) llvm::cast(From*) [with To = mlir::triton::gpu::ConvertLayoutOp; "
    "From = mlir::Operation]: Assertion `isa<To>(Val) && \"cast<Ty>() argument of incompatible type!\"' failed.\n"
    "Fatal Python error: Aborted\n\nCurrent thread 0x000079415fd36280 (most recent call first):\n"
    "  File \"/content/triton/python/triton/compiler/backends/cuda.py\", line 158 in make_ttgir")
add("ze-0x70000004-lts", "intel/intel-xpu-backend-for-triton#1329", "python/test/unit/language/test_core.py::test_dot[1-128-128-64-2-False-True-none-tf32-int8-int8-1_1]",  # noqa: E501
    "FAILED python/test/unit/language/test_core.py::test_dot[1-128-128-64-2-False-True-none-tf32-int8-int8-1_1] - "
    "RuntimeError: Triton Error [ZE]: 0x70000004",
    "FAILED python/test/unit/language/test_core.py::test_dot[1-128-128-64-2-False-True-none-tf32-float16-float32-1_0] - "
    "RuntimeError: Triton Error [ZE]: 0x70000004")
add("oom-other-process-fuser", "NVIDIA/Fuser#2600", "tests/python/pytest_ops.py::test_definition_op_in_schedule_error_sub_complex128",
    "00:17:01 FAILED tests/python/pytest_ops.py::test_definition_op_in_schedule_error_sub_complex128 - torch.OutOfMemoryError: "
    "CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total capacity of 39.39 GiB of which 11.94 MiB is free. "
    "Process 4101543 has 39.37 GiB memory in use. Of the allocated memory 9.27 GiB is allocated by PyTorch, and 8.61 MiB "
    "is reserved by PyTorch but unallocated.",
    "00:17:01 FAILED tests/python/pytest_ops.py::test_definition_op_in_schedule_error_sub_complex64 - torch.OutOfMemoryError: "
    "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 39.39 GiB of which 11.94 MiB is free. "
    "Process 4101543 has 39.37 GiB memory in use. Of the allocated memory 9.27 GiB is allocated by PyTorch, and 8.60 MiB "
    "is reserved by PyTorch but unallocated.")
add("oom-12gb-gpu-milabench", "mila-iqia/milabench#55", "job:milabench-efficientnet_b4",
    "    torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 46.00 MiB (GPU 0; 11.92 GiB total capacity; "
    "11.24 GiB already allocated; 5.69 MiB free; 11.46 GiB reserved in total by PyTorch) If reserved memory is >> allocated "
    "memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
    "    torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 74.00 MiB (GPU 0; 11.92 GiB total capacity; "
    "11.32 GiB already allocated; 50.69 MiB free; 11.42 GiB reserved in total by PyTorch) If reserved memory is >> allocated "
    "memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF")
add("cublas-handle-exhaustion", "tile-ai/TileOPs#219", "tests/functions/test_matmul_func.py::test_matmul",
    "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")
add("pycuda-invalid-resource-handle", "lebedov/scikit-cuda#257", "tests/test_linalg.py::test_linalg::test_diag_1d_float64",
    "  File \"c:\\users\\user\\anaconda3\\envs\\tsne\\lib\\site-packages\\pycuda\\driver.py\", line 495, in function_prepared_async_call\n"
    "    func._set_block_shape(*block)\npycuda._driver.LogicError: cuFuncSetBlockShape failed: invalid resource handle")
add("arange-range-not-power-of-2", "vllm-project/vllm#25030", "job:vllm-qwen3-next-rocm",
    "  File \"/usr/local/lib/python3.12/dist-packages/triton/language/semantic.py\", line 627, in arange\n"
    "    raise ValueError(\"arange's range must be a power of 2\")\nValueError: arange's range must be a power of 2\n\n"
    "The above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n"
    "  File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/multiproc_executor.py\", line 666, in worker_busy_loop")
add("arange-range-not-power-of-2", "alexzhang13/Triton-Puzzles-Solutions#1", "job:triton-puzzles-flashatt",
    "ValueError: arange's range must be a power of 2")
add("arange-args-not-constexpr", "OpenGVLab/VideoMamba#11", "job:videomamba-flops",
    "    cols = tl.arange(0, BLOCK_N)\n                        ^\nValueError(\"arange's arguments must be of type tl.constexpr\")\n"
    "ValueError: arange's arguments must be of type tl.constexpr\n\nThe above exception was the direct cause of the following "
    "exception:\n\n  File \"/home/user/models/videomamba.py\", line 480, in <module>\n    print(flop_count_table(flops, max_depth=1))\n"
    "triton.compiler.errors.CompilationError: at 31:24:    HAS_BIAS: tl.constexpr")
add("arange-args-not-constexpr", "triton-lang/triton#2735", "job:inductor-repro",
    "ValueError(\"arange's arguments must be of type tl.constexpr\")")
add("arange-args-not-constexpr", "Deep-Learning-Profiling-Tools/triton-viz#164", "job:triton-sanitizer-sin",
    "ValueError: arange's arguments must be of type tl.constexpr")
add("cuda-visible-devices-names-missing-gpu", "Grace9994/CoMoSVC#6", "job:comosvc-train",
    "RuntimeError: No CUDA GPUs are available")
add("cuda-visible-devices-names-missing-gpu", "yuangh-x/2022-NIPS-Tenrec#29", "job:tenrec-mtl",
    "torch._C._cuda_init() RuntimeError: No CUDA GPUs are available")
add("cuda-visible-devices-names-missing-gpu", "xianlin7/SAMUS#39", "job:samus-train",
    "    torch._C._cuda_init()\nRuntimeError: No CUDA GPUs are available")
add("rocm-torch-on-nvidia-node", "triton-lang/triton#2327", "job:triton-smoke",
    "  File \"/home/user/.local/lib/python3.10/site-packages/torch/cuda/__init__.py\", line 247, in _lazy_init\n"
    "    torch._C._cuda_init()\nRuntimeError: No HIP GPUs are available")
add("triton-too-old-language-api", "triton-lang/triton#2024", "job:flash-attn-block-ptr",
    "AttributeError: module 'triton.language' has no attribute 'make_block_ptr'")
add("triton-too-old-language-api", "Adamdad/rational_kat_cu#20", "job:kat-train",
    "AttributeError: module 'triton.language' has no attribute 'fma'")
add("triton-too-old-language-api", "Shiyan-cps/PointKAN-pytorch#3", "job:pointkan-train",
    "\"anaconda3/envs/pointkan/lib/python3.8/site-packages/triton/runtime/jit.py\", line 78, in visit_Attribute\n"
    "    return getattr(lhs, node.attr)\nAttributeError: module 'triton.language' has no attribute 'cast'")
add("triton-too-old-language-api", "state-spaces/mamba#366", "job:mamba2-train",
    "  File \"/root/miniconda3/lib/python3.8/site-packages/mamba_ssm/ops/triton/ssd_chunk_state.py\", line 582, in _chunk_cumsum_fwd\n"
    "    _chunk_cumsum_fwd_kernel[grid_chunk_cs](\nAttributeError: module 'triton.language' has no attribute 'cumsum'")
add("private-tensor-descriptor-api-removed", "triton-lang/triton#8562", "job:symm-mem-matmul",
    "[rank0]: triton.compiler.errors.CompilationError: at 81:12:\n[rank0]:         a = tl._tensor_descriptor_load(\n"
    "[rank0]:             ^\n[rank0]: AttributeError(\"module 'triton.language' has no attribute '_tensor_descriptor_load'\")")
add("ascend-triton-stub", "vllm-project/vllm-ascend#3175", "tests/e2e/conftest.py",
    "ImportError while loading conftest '/__w/vllm-ascend/vllm-ascend/tests/e2e/conftest.py'.\n"
    "AttributeError: module 'triton.language' has no attribute 'tensor'")
add("broken-install-constexpr-missing", "triton-lang/triton#695", "python/tutorials/01-vector-add.py::test_add",
    "  File \"/home/user/triton/python/tutorials/01-vector-add.py\", line 27, in <module>\n"
    "    BLOCK_SIZE: tl.constexpr,  # Number of elements each program should process\n"
    "AttributeError: module 'triton.language' has no attribute 'constexpr'")
add("ptxas-too-much-shared-moe-utils", "ByteDance-Seed/Triton-distributed#5", "job:triton-distributed-build",
    "  ptxas error   : Entry function '_ZN11distributed3ops47moe_ag_scatter_align_block_size_parallel_kernelILi64ELi256EEEvPliiiiiPjPVjPiS6_S6_S6_S6_' "  # noqa: E501
    "uses too much shared data (0x20400 bytes, 0xc000 max)")
add("ptxas-too-much-shared-fattn-tile", "ggml-org/llama.cpp#16081", "job:llama-cpp-cuda-build",
    "[ 27%] Building CUDA object ggml/src/ggml-cuda/CMakeFiles/ggml-cuda.dir/pool2d.cu.o\nptxas error   : Entry function "
    "'_Z15flash_attn_tileILi128ELi32ELb1EEvPKcS1_S1_S1_S1_PKiPfP6float2ffffjfiiiiiiiiiiiiiliiliiiiil' uses too much shared "
    "data (0xc400 bytes, 0xc000 max)\nmake[3]: *** [ggml/src/ggml-cuda/CMakeFiles/ggml-cuda.dir/build.make:314: "
    "ggml/src/ggml-cuda/CMakeFiles/ggml-cuda.dir/fattn-tile.cu.o] Error 255")
add("ptxas-too-much-shared-radix-sort", "BruceCanovas/supersurfel_fusion#1", "job:supersurfel-build",
    "ptxas error   : Entry function '_ZN3cub30DeviceRadixSortDownsweepKernelINS_21DeviceRadixSortPolicyIiN6thrust5tupleI6float3S4_4int25Mat334Cov36float2fNS2_9null_typeES9_S9_EEiE9Policy700ELb0ELb0EiSA_iEEvPKT2_PSD_PKT3_PSH_PT4_SL_iiNS_13GridEvenShareISL_EE' "  # noqa: E501
    "uses too much shared data (0xc300 bytes, 0xc000 max)\nCMake Error at sfusion_generated_supersurfel_fusion.cu.o.Release.cmake:279 (message):")
add("oor-shared-memory", "pytorch/torchtitan#1437", "job:torchtitan-flex-debug",
    "[rank0]:Exception No valid triton configs. OutOfMemoryError: out of resource: triton_flex_attention Required: 262144 "
    "Hardware limit:232448 Reducing block sizes or `num_stages` may help. for benchmark choice "
    "TritonTemplateCaller(/tmp/torchinductor_user/uu/cuuzcmwjztg3bl3ujzslc4ma26j6dinag6nocsnpg3dtmquqyno2.py, "
    "BLOCKS_ARE_CONTIGUOUS=False, BLOCK_M=128, BLOCK_N=128, num_stages=2, num_warps=8)")
add("oor-shared-memory", "alipay/PainlessInferenceAcceleration#35", "job:flood-simple-example",
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 163842, Hardware limitation: 101376. "
    "reducing the block size or `num_stages` may help")
add("misaligned-mamba", "state-spaces/mamba#492", "job:mamba-train",
    "RuntimeError: Triton Error [CUDA]: misaligned address")
add("misaligned-fla-gated-delta-bwd-b200", "fla-org/flash-linear-attention#913", "job:fla-chunk-gated-delta-rule-bwd",
    "[Bug] chunk_gated_delta_rule_bwd gives RuntimeError: Triton Error [CUDA]: misaligned address")
add("misaligned-tcgen05-mma-sm100", "triton-lang/triton#10309", "job:triton-sm100-fwd-kernel",
    "fwd_kernel[(1,)](q, k, y, BM, BN, DH, num_warps=4, num_stages=2)\nRuntimeError: Triton Error [CUDA]: misaligned address")
add("misaligned-helion-gemm-persistent", "pytorch/helion#904", "benchmarks/run.py::gemm",
    "pid_type='persistent_blocked', range_flattens=[False, None], range_multi_buffers=[True, None], range_num_stages=[4, 2], "
    "range_unroll_factors=[4, 4]), static_shapes=True)\nRuntimeError: Triton Error [CUDA]: misaligned address")
add("misaligned-convert-layout-ttgir", "triton-lang/triton#3078", "job:ttgir-compile",
    "Compilation crashes with `CUDA_ERROR_MISALIGNED_ADDRESS: misaligned address error.`\n"
    "========= Invalid __shared__ write of size 8 bytes\n=========     at 0x3130 in a_\n"
    "=========     Address 0x84 is misaligned")
add("legalize-tt-load-triton-linalg", "Cambricon/triton-linalg#18", "job:triton-linalg-opt-matmul",
    "example.mlir:69:13: error: failed to legalize operation 'tt.load' that was explicitly marked illegal\n"
    "      %71 = tt.load %arg14 : tensor<128x64x!tt.ptr<bf16>>\n            ^\n"
    "triton-linalg-opt: /home/runner/work/triton/triton/llvm-project/mlir/include/mlir/IR/UseDefLists.h:198: "
    "mlir::IRObjectWithUseList<mlir::OpOperand>::~IRObjectWithUseList() [OperandType = mlir::OpOperand]: Assertion "
    "`use_empty() && \"Cannot destroy a value that still has uses!\"' failed.")
add("legalize-tt-load-rocm-forked-subproc", "ROCm/triton#266", "python/test/unit/runtime/test_subproc.py::test_compile_in_subproc",
    "E       AssertionError: assert -6 == 0\nE        +  where -6 = <Process name='Process-1' pid=3911 parent=3874 stopped "
    "exitcode=-SIGABRT>.exitcode\n\npython/test/unit/runtime/test_subproc.py:50: AssertionError\n"
    "------------------------------ Captured stderr call ------------------------------\n"
    "error: failed to legalize operation 'tt.load' that was explicitly marked illegal\n"
    "Pass execution failedLLVM ERROR: Failed to translate TritonGPU to LLVM IR.")
add("legalize-get-program-id-triton-cpu", "meta-pytorch/triton-cpu#5", "python/tutorials/01-vector-add.py::test_add",
    "error: failed to legalize operation 'tt.get_program_id' that was explicitly marked illegal")
add("legalize-extern-elementwise-triton-shared", "microsoft/triton-shared#18", "job:triton-shared-opt-linalg",
    "/home/user/test/ttirs_linalg_failed/0.mlir:61:11: error: failed to legalize operation 'tt.extern_elementwise'\n"
    "    %23 = tt.extern_elementwise %c-845247145_i32, %c0_i32 {libname = \"libdevice\", pure = true, symbol = \"__nv_umulhi\"} "
    ": (i32, i32) -> i32\n          ^")

# --------------------------------------------------------------------------- derived log shapes
def pytest_summary(test: str, text: str, width: int = 120) -> str | None:
    """pytest's ``short test summary info`` line for a failure whose last exception line is in
    ``text``: ``FAILED <test> - <Type>: <msg>``, cut at the terminal width with ``...`` as
    pytest (``_get_line_with_reprcrash_message``) does. None when the text has no exception line."""
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    exc = [ln for ln in lines if ": " in ln and ln.split(":", 1)[0].replace(".", "").replace("_", "").isalnum()
           and ln.split(":", 1)[0].rsplit(".", 1)[-1][:1].isupper()]
    if not exc or test.startswith("job:"):
        return None
    msg = exc[-1]
    line = f"FAILED {test} - {msg}"
    if len(line) > width:
        line = line[: width - 3] + "..."
    return line


def ci_timestamps(text: str, i: int) -> str:
    ts = f"2026-11-{10 + i % 18:02d}T0{i % 9}:{13 + i % 47:02d}:{(7 * i) % 60:02d}.{1234567 + 31 * i}Z"
    return "\n".join(f"{ts} {line}" for line in text.split("\n"))


def held_out(source: str) -> bool:
    return int(hashlib.sha1(source.encode()).hexdigest(), 16) % 10 < 4


def records() -> list[dict]:
    out = []
    for n, (fault, source, test, text) in enumerate(W):
        split = "heldout" if held_out(source) else "tune"
        base = {"fault": fault, "source": source, "test": test, "split": split}
        out.append({"id": f"{fault}-{n}", **base, "shape": "real", "text": text})
        s = pytest_summary(test, text)
        if s and s not in text:
            out.append({"id": f"{fault}-{n}-summary", **base, "shape": "derived-pytest-summary", "text": s})
        if "T0" not in text[:30]:
            out.append({"id": f"{fault}-{n}-ci", **base, "shape": "derived-ci-timestamps", "text": ci_timestamps(text, n)})
    return out


if __name__ == "__main__":
    recs = records()
    (HERE / "wild.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs))
    real = [r for r in recs if r["shape"] == "real"]
    print(f"wrote {len(recs)} records ({len(real)} real), {len({r['fault'] for r in recs})} faults, "
          f"{len({r['source'] for r in recs})} sources; held-out: "
          f"{sum(r['split'] == 'heldout' for r in recs)} records, {len({r['fault'] for r in recs if r['split'] == 'heldout'})} faults")
