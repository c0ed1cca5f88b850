"""Builds ``fresh.jsonl``: a second, wholly held-out set of real failure texts from public reports,
none of them a source of ``wild.jsonl`` (checked against its ``source`` fields), labelled by root
cause *before* any signature code was run on them. Regenerate with
``python tests/data/triage/make_fresh.py`` (deterministic).

The labels were written and committed before the first measurement; the whole file was held out
for that measurement (there is no split). Since signature version 4 it is tuning data: the
version-4 rules were written from its misses, and the figures before and after are in
docs/triage.md. The labels have not changed.

Labelling rule (the same as ``make_wild.py``'s):

* **Same label = same fix.** Two texts carry the same label when one change would fix both, as
  the reports (their comments, a linked duplicate or the fix) show.
* A message that names the fault specifically (the missing library, the missing header, the
  unsupported feature on an architecture, the resource limit, the import) is one root cause
  across reports when the reports agree on the cause and the fix is one change of the same kind
  (make ``libcuda.so`` linkable; give the compiler Python's headers; install a C compiler; use
  fp16 instead of bf16 before sm_80; a smaller block/``num_stages``; build for the GPU's gfx
  target; install triton into the interpreter torch runs in). Different words for that cause
  keep the label (``ld: cannot find -lcuda`` and triton's ``libcuda.so cannot found!``; gcc's,
  MSVC's and TinyCC's wording of a missing ``Python.h``; ``Coudn't find binary`` and ``Unable
  to find code object``); the same words for another cause get another label (``Failed to find
  C compiler`` with no compiler installed vs. a compiler triton's XPU backend failed to find on
  Windows, fixed in triton).
* A missing import is labelled per missing symbol (``triton_key``, ``get_cuda_stream``,
  ``triton.common``): each is its own torch/triton version pair to re-pin.
* A message that says nothing about where or why — a fatal signal, an illegal memory access, a
  misaligned address, a bare ``PassManager::run failed`` — is one root cause per report (the fix
  is in that report's kernel), even when the words are identical or the innermost frame is the
  same.
* Texts of one report in several shapes share the report's label.

Each record: ``id``, ``fault`` (the label), ``source`` (``owner/repo#N``), ``test`` (the test the
report names; where it names none, ``job:<project>-<what ran>``), ``shape`` (``real``: the
report's own text, excerpted; ``derived-…``: that text put through a log shape a nightly meets,
built by ``heldout_set.py`` — the same two shapes ``make_wild.py`` applies, kept apart so this
frozen file never changes with that one), ``why`` (the labelling reason) and ``text``.

Personal data removed: user names in paths → ``user``, home folders → ``/home/user``, an IP
address → ``10.0.0.2``; no host names, no e-mail. Texts are short excerpts of the error lines
(fair use), not whole logs.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from heldout_set import HeldOutSet, render  # noqa: E402  (the shapes shared by the held-out sets)

HERE = Path(__file__).parent

# (fault, source, test, why, text) — real excerpts
_SET = HeldOutSet()
F = _SET.F
add = _SET.add
records = _SET.records


# ---------------------------------------------------------------- libcuda.so not linkable (one fix: make it findable)
LIBCUDA = ("triton links its launcher with -lcuda; the fix in each thread is to make libcuda.so findable "
           "(ldconfig, a symlink, TRITON_LIBCUDA_PATH, a toolkit that ships it)")
add("libcuda-not-linkable", "JIA-Lab-research/Seg-Zero#63", "job:seg-zero-train", LIBCUDA + "; fixed with a conda cuda-toolkit",
    "/usr/bin/ld: cannot find -lcuda\ncollect2: error: ld returned 1 exit status\n\n"
    "subprocess.CalledProcessError: Command '['/usr/bin/gcc', '/tmp/tmpe7nu9b0l/main.c', '-O3', '-shared', '-fPIC', "
    "'-Wno-psabi', '-o', '/tmp/tmpe7nu9b0l/cuda_utils.cpython-312-x86_64-linux-gnu.so', '-lcuda', "
    "'-L/home/user/anaconda3/envs/visionreasoner/lib/python3.12/site-packages/triton/backends/nvidia/lib', "
    "'-L/lib/x86_64-linux-gnu', '-L/lib/i386-linux-gnu', "
    "'-I/home/user/anaconda3/envs/visionreasoner/lib/python3.12/site-packages/triton/backends/nvidia/include', "
    "'-I/tmp/tmpe7nu9b0l', '-I/home/user/anaconda3/envs/visionreasoner/include/python3.12']' returned non-zero exit status 1.")
add("libcuda-not-linkable", "pytorch/pytorch#103417", "job:torch-compile-model", LIBCUDA + " (labelled upstream triton)",
    "/usr/bin/ld: cannot find -lcuda: No such file or directory\ncollect2: error: ld returned 1 exit status\n"
    "/usr/bin/ld: cannot find -lcuda: No such file or directory\ncollect2: error: ld returned 1 exit status")
add("libcuda-not-linkable", "unslothai/unsloth#679", "job:unsloth-train", LIBCUDA + "; triton's own check, asking for a symlink",
    "---> [40]~/.conda/envs/unsloth_env9/lib/python3.9/site-packages/triton/common/build.py:40) "
    "assert any(os.path.exists(os.path.join(path, 'libcuda.so')) for path in dirs), msg\n\n"
    "AssertionError: libcuda.so cannot found!\n"
    "Possible files are located at ['/lib/x86_64-linux-gnu/libcuda.so.1'].Please create a symlink of libcuda.so to any of the file.")
add("libcuda-not-linkable", "MAGICS-LAB/DNABERT_2#56", "job:dnabert2-test", LIBCUDA,
    "/usr/local/lib/python3.10/dist-packages/triton/common/build.py in libcuda_dirs()\n"
    "     28         msg += 'Possible files are located at %s.' % str(locs)\n"
    "     29         msg += 'Please create a symlink of libcuda.so to any of the file.'\n"
    "---> 30     assert any(os.path.exists(os.path.join(path, 'libcuda.so')) for path in dirs), msg\n"
    "     31     return dirs\n\nAssertionError: libcuda.so cannot found!")
add("libcuda-not-linkable", "googlecolab/colabtools#4300", "job:colab-notebook", LIBCUDA + "; fixed with ldconfig on /usr/lib64-nvidia",
    "   assert any(os.path.exists(os.path.join(path, 'libcuda.so')) for path in dirs), msg\n"
    "AssertionError: libcuda.so cannot found!")

# ---------------------------------------------------------------- Python headers missing for the launcher build
PYH = ("triton compiles a C launcher against Python.h; the fix is to give that compiler Python's headers "
       "(python3-dev, or the include folder an embedded Python lacks)")
add("python-headers-missing", "sgl-project/sglang#1117", "job:sglang-launch-server", PYH + " (gcc wording)",
    "/tmp/tmps1rkq3y3/main.c:5:10: fatal error: Python.h: No such file or directory\n"
    "    5 | #include <Python.h>\n      |          ^~~~~~~~~~\ncompilation terminated.")
add("python-headers-missing", "woct0rdho/triton-windows#3", "job:triton-windows-test-triton", PYH + " (MSVC wording, Chinese locale)",
    "main.c\nC:\\Users\\user\\AppData\\Local\\Temp\\tmpqu5oyina\\main.c(12): fatal error C1083: 无法打开包括文件: “Python.h”: "
    "No such file or directory")
add("python-headers-missing", "woct0rdho/triton-windows#156", "job:triton-windows-test-triton", PYH + " (TinyCC wording)",
    "D:\\Other\\ComfyUI_windows_portable\\python_embeded\\Lib\\site-packages\\triton\\windows_utils.py:323: UserWarning: "
    "Failed to find Python libs.\n  warnings.warn(\"Failed to find Python libs.\")\n"
    "C:/Users/user/AppData/Local/Temp/tmpu82jlruc/cuda_utils.c:13: error: include file 'Python.h' not found")
add("python-headers-missing", "numz/ComfyUI-SeedVR2_VideoUpscaler#134", "job:comfyui-seedvr2",
    PYH + "; the report's title names Python.h, its log shows only the compiler's exit status",
    "subprocess.CalledProcessError: Command '['D:\\\\ComfyUI_windows_portable_nvidia\\\\ComfyUI_windows_portable\\\\"
    "python_embeded\\\\Lib\\\\site-packages\\\\triton\\\\runtime\\\\tcc\\\\tcc.exe', 'C:\\\\Users\\\\user\\\\AppData\\\\Local\\\\"
    "Temp\\\\tmpm19j7j3v\\\\cuda_utils.c', '-O3', '-shared', '-fPIC', '-Wno-psabi', '-o', 'C:\\\\Users\\\\user\\\\AppData\\\\"
    "Local\\\\Temp\\\\tmpm19j7j3v\\\\cuda_utils.cp312-win_amd64.pyd', '-lcuda', '-lpython3', '-LC:\\\\Users\\\\user\\\\"
    "AppData\\\\Roaming\\\\Python\\\\Python312\\\\site-packages\\\\triton\\\\backends\\\\nvidia\\\\lib', '-LC:\\\\Program "
    "Files\\\\NVIDIA GPU Computing Toolkit\\\\CUDA\\\\v12.1\\\\lib\\\\x64', '-IC:\\\\Users\\\\user\\\\AppData\\\\Roaming"
    "\\\\Python\\\\Python312\\\\site-packages\\\\triton\\\\backends\\\\nvidia\\\\include', '-IC:\\\\Program Files"
    "\\\\NVIDIA GPU Computing Toolkit\\\\CUDA\\\\v12.1\\\\include', '-IC:\\\\Users\\\\user\\\\AppData\\\\Local"
    "\\\\Temp\\\\tmpm19j7j3v', '-ID:\\\\ComfyUI_windows_portable_nvidia\\\\ComfyUI_windows_portable"
    "\\\\python_embeded\\\\Include']' returned non-zero exit status 1.")

# ---------------------------------------------------------------- no C compiler (same words, two causes)
NOCC = "no C compiler installed; the fix in the thread is to install one (build-essential, MSVC, triton-windows' bundled TCC)"
add("no-c-compiler", "thu-ml/SageAttention#7", "job:cogvideox-sageattn", NOCC,
    "  File \"D:\\CogVideoX\\CogVideo\\venv\\lib\\site-packages\\triton\\runtime\\build.py\", line 52, in _build\n"
    "    raise RuntimeError(\"Failed to find C compiler. Please specify via CC environment variable.\")\n"
    "RuntimeError: Failed to find C compiler. Please specify via CC environment variable.")
add("no-c-compiler", "apple/ml-cross-entropy#5", "job:cce-gemma2-sft", NOCC + " ('Triton requires a working c/c++ compiler')",
    "raise RuntimeError(\"Failed to find C compiler. Please specify via CC environment variable.\")\n"
    "RuntimeError: Failed to find C compiler. Please specify via CC environment variable.")
add("no-c-compiler", "kijai/ComfyUI-HunyuanVideoWrapper#23", "job:comfyui-hunyuanvideo", NOCC + " (ComfyUI's node error)",
    "HyVideoSampler\nFailed to find C compiler. Please specify via CC environment variable.")
add("xpu-windows-cc-lookup", "intel/intel-xpu-backend-for-triton#4707", "python/tutorials/01-vector-add.py",
    "the same words, but gcc was installed: triton's compiler lookup on Windows was wrong and was fixed in the XPU "
    "backend's main branch — another fix",
    "File \"D:\\software\\miniforge\\envs\\awq\\lib\\site-packages\\triton\\runtime\\build.py\", line 50, in _build\n"
    "    raise RuntimeError(\"Failed to find C compiler. Please specify via CC environment variable.\")\n"
    "RuntimeError: Failed to find C compiler. Please specify via CC environment variable.")

# ---------------------------------------------------------------- bf16 on a GPU before sm_80
BF16 = "a bf16 kernel compiled for a pre-Ampere GPU (T4/V100/RTX 20xx); the fix is fp16 on that GPU"
add("bf16-before-sm80", "InternLM/lmdeploy#1266", "job:lmdeploy-chat", BF16,
    "ptxas /tmp/compile-ptx-src-b5bf24, line 372; error   : Feature '.bf16' requires .target sm_80 or higher\n"
    "ptxas /tmp/compile-ptx-src-b5bf24, line 372; error   : Feature '.bf16' requires .target sm_80 or higher\n"
    "ptxas /tmp/compile-ptx-src-b5bf24, line 376; error   : Feature '.bf16' requires .target sm_80 or higher")
add("bf16-before-sm80", "unslothai/unsloth#434", "job:unsloth-finetune", BF16 + " (RTX 2060)",
    "ptxas /tmp/compile-ptx-src-3c809d, line 382; error   : Feature '.bf16' requires .target sm_80 or higher\n"
    "ptxas /tmp/compile-ptx-src-3c809d, line 386; error   : Feature '.bf16' requires .target sm_80 or higher")
add("bf16-before-sm80", "state-spaces/mamba#269", "job:mamba-train", BF16 + " (the conversion's wording first)",
    "ptxas /tmp/compile-ptx-src-0cc16a, line 774; error   : Feature 'cvt.bf16.f32' requires .target sm_80 or higher\n"
    "ptxas /tmp/compile-ptx-src-0cc16a, line 776; error   : Feature '.bf16' requires .target sm_80 or higher\n"
    "ptxas /tmp/compile-ptx-src-0cc16a, line 776; error   : Feature 'cvt.bf16.f32' requires .target sm_80 or higher")
add("bf16-before-sm80", "hiyouga/LlamaFactory#7417", "job:llamafactory-train", BF16 + " (newer triton's .ptx temp name)",
    "ptxas /tmp/tmpmfrp_3wp.ptx, line 277; error   : Feature 'cvt.bf16.f32' requires .target sm_80 or higher\n"
    "ptxas /tmp/tmpmfrp_3wp.ptx, line 281; error   : Feature '.bf16' requires .target sm_80 or higher\n"
    "ptxas /tmp/tmpmfrp_3wp.ptx, line 281; error   : Feature 'cvt.bf16.f32' requires .target sm_80 or higher")

# ---------------------------------------------------------------- shared memory over the limit
OOR = "a kernel config needing more shared memory than the GPU has; the fix is a smaller block or fewer num_stages"
add("oor-shared-memory", "pytorch/pytorch#139755",
    "test/inductor/test_flex_attention.py::TestFlexAttention::test_builtin_score_mods_bfloat16_score_mod4",
    OOR + " (ROCm, new software pipelining; a test report's dict repr)",
    "{'message': 'torch._dynamo.exc.BackendCompilerFailed: backend=\\'inductor\\' raised:\\nOutOfResources: out of "
    "resource: shared memory, Required: 81920, Hardware limit: 65536. Reducing block sizes or `num_stages` may help."
    "\\n\\nSet TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information")
add("oor-shared-memory", "meta-pytorch/segment-anything-fast#63", "job:sam-fast-amg", OOR + " (RTX A6000 / 3090)",
    "raise OutOfResources(self.shared, max_shared, \"shared memory\")\ntriton.runtime.autotuner.OutOfResources: out of "
    "resource: shared memory, Required: 133136, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.")
add("oor-shared-memory", "sgl-project/sglang#2384", "job:sglang-deepseek-v2-lite", OOR + " (MI300)",
    "    raise OutOfResources(self.metadata.shared, max_shared, \"shared memory\")\n"
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: 65536. "
    "Reducing block sizes or `num_stages` may help.\n\n"
    "[2024-12-07 02:54:42 TP3] Scheduler hit an exception: Traceback (most recent call last):")

# ---------------------------------------------------------------- ROCm: no code object for the GPU
HIP = "the ROCm build has no code object for this gfx target; the fix is a build for it or HSA_OVERRIDE_GFX_VERSION"
add("hip-no-code-object-for-gpu", "rocm-arch/tensorflow-rocm#21", "job:tf-rocm-list-devices", HIP + " (older wording)",
    "2021-03-18 17:08:24.639375: I tensorflow/stream_executor/platform/default/dso_loader.cc:49] Successfully opened dynamic "
    "library libamdhip64.so\n/build/hip-rocclr/src/HIP-rocm-4.0.0/rocclr/hip_code_object.cpp:120: guarantee(false && "
    "\"hipErrorNoBinaryForGpu: Coudn't find binary for current devices!\")\n[1]    2964311 abort (core dumped)  python test.py")
add("hip-no-code-object-for-gpu", "ROCm/legacy-rocm-build#1560", "job:tf-rocm-mnist", HIP + " (newer wording)",
    "2021-08-20 06:58:23.004539: I tensorflow/stream_executor/platform/default/dso_loader.cc:53] Successfully opened dynamic "
    "library libamdhip64.so\n\"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\"\nAborted (core dumped)")
add("hip-no-code-object-for-gpu", "ROCm/legacy-rocm-build#2061", "job:koboldai-rocm", HIP + "; fixed with HSA_OVERRIDE_GFX_VERSION=10.3.0",
    "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!")

# ---------------------------------------------------------------- torch and triton versions apart (one label per missing symbol)
add("torch-too-old-for-triton3-common", "kijai/ComfyUI-MochiWrapper#94", "job:comfyui-mochi",
    "torch 2.3 imports triton.common, gone in triton 3; the fix is torch >= 2.4 (or the triton torch pins)",
    "backend='inductor' raised:\nModuleNotFoundError: No module named 'triton.common'\n\n"
    "Set TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information")
add("torch-too-old-for-triton3-common", "fishaudio/fish-speech#541", "job:fish-speech-compile",
    "the same import from torch/utils/_triton.py; fixed with torch >= 2.4.1",
    "  File \"E:\\anaconda3\\envs\\fish-speech\\lib\\site-packages\\torch\\utils\\_triton.py\", line 37, in triton_backend_hash\n"
    "    from triton.common.backend import get_backend, get_cuda_version_key\n"
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nModuleNotFoundError: No module named 'triton.common'")
add("triton-key-import", "FoundationVision/Infinity#31", "job:infinity-infer",
    "torch's inductor imports triton_key from a triton that lacks it; the fix is the triton torch pins",
    "    raise BackendCompilerFailed(self.compiler_fn, e) from e\ntorch._dynamo.exc.BackendCompilerFailed: backend='inductor' "
    "raised:\nImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' "
    "(/opt/conda/lib/python3.10/site-packages/triton/compiler/compiler.py)")
add("triton-key-import", "coreweave/ml-containers#64", "job:ml-containers-train",
    "the same import under torchrun's rank prefix; fixed by pinning triton back to 2.2.0",
    "[rank7]:     from triton.compiler.compiler import triton_key\n"
    "[rank7]: torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    "[rank7]: ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' "
    "(/usr/local/lib/python3.10/dist-packages/triton/compiler/compiler.py)")
add("get-cuda-stream-import", "pytorch/pytorch#120199", "job:torch-compile-optimizer",
    "torch 2.2's inductor imports get_cuda_stream, removed from triton.runtime.jit; the fix is the triton torch pins",
    "ImportError: cannot import name 'get_cuda_stream' from 'triton.runtime.jit' "
    "(/home/user/.local/lib/python3.10/site-packages/triton/runtime/jit.py)")
NOTRITON = "torch found no importable triton in its interpreter; the fix is installing triton into that interpreter"
add("triton-not-installed", "kijai/ComfyUI-WanVideoWrapper#978", "job:comfyui-wanvideo", NOTRITON + " (torch 2.6's TritonMissing)",
    "  File \"G:\\ComfyUI_windows_portable\\python_embeded\\Lib\\site-packages\\torch\\_inductor\\scheduler.py\", line 3957, "
    "in create_backend\n    raise TritonMissing(inspect.currentframe())\ntorch._inductor.exc.TritonMissing: Cannot find a "
    "working triton installation. Either the package is not installed or it is too old. More information on installing "
    "Triton can be found at: https://github.com/triton-lang/triton")
add("triton-not-installed", "woct0rdho/triton-windows#34", "job:comfyui-compile",
    NOTRITON + "; pip had installed it into another Python (fix: python -m pip)",
    "backend='inductor' raised:\nRuntimeError: Cannot find a working triton installation. Either the package is not "
    "installed or it is too old. More information on installing Triton can be found at https://github.com/openai/triton\n\n"
    "Set TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information")
add("triton-not-installed", "triton-lang/triton#4034", "job:torch-compile",
    NOTRITON + " (older wording; no comment names another cause)",
    "RuntimeError: Cannot find a working triton installation. More information on installing Triton can be found at "
    "https://github.com/openai/triton\n\nSet TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information")
add("jit-launch-metadata-needs-triton3", "flashinfer-ai/flashinfer#1032", "job:flashinfer-page",
    "flashinfer 0.2.5 passes launch_metadata, which triton < 3.0 lacks; the fix is triton >= 3.0",
    "  File \"/users/user/.local/lib/python3.10/site-packages/flashinfer/triton/kernels/sm_constraint_gemm.py\", line 52, "
    "in <module>\n    @triton.jit(launch_metadata=_matmul_launch_metadata)\n"
    "TypeError: jit() got an unexpected keyword argument 'launch_metadata'")
add("no-active-driver-ray-cpu-actor", "hiyouga/EasyR1#211", "job:easyr1-ray-runner",
    "triton imported in a Ray actor that has no GPU; the fix is where the actor runs, not in a kernel",
    "  File \"/root/miniconda3/lib/python3.12/site-packages/triton/runtime/driver.py\", line 8, in _create_driver\n"
    "    raise RuntimeError(f\"{len(actives)} active drivers ({actives}). There should only be one.\")\n"
    "RuntimeError: 0 active drivers ([]). There should only be one.\n"
    "^[[36m(TemporaryActor pid=87176)^[[0m Exception raised in creation task: The actor died because of an error raised in "
    "its creation task, ^[[36mray::Runner.__init__()^[[39m (pid=87176, ip=10.0.0.2, "
    "actor_id=056fe1a4980c19c25fb82f0d09000000, repr=<main.FunctionActorManager._create_fake_actor_class.<locals>."
    "TemporaryActor object at 0x7fbe657964b0>)")

# ---------------------------------------------------------------- ptxas out of registers at the 255 cap
REG = ("ptxas cannot allocate a kernel within 255 registers; the fix is a config that needs fewer "
       "(maxnreg 250 in one, dropping the config in the other) — one issue, like a shared-memory overflow")
add("ptxas-regalloc-255", "triton-lang/triton#8488", "job:b200-kernels", REG + " (B200, triton 3.5)",
    "Internal Triton PTX codegen error\n`ptxas` stderr:\nptxas fatal   : (C7600) Register allocation failed with register "
    "count of '255'. Compile the program with a higher register target\nptxas fatal   : Ptx assembly aborted due to errors\n\n"
    "Repro command: /opt/conda/lib/python3.11/site-packages/triton/backends/nvidia/bin/ptxas -lineinfo -v "
    "--gpu-name=sm_100a /tmp/tmp3kqk4on2.ptx -o /tmp/tmp3kqk4on2.ptx.o")
add("ptxas-regalloc-255", "triton-lang/triton#5017", "job:autotune-matmul", REG + " (H100 autotuning)",
    "RuntimeError: Internal Triton PTX codegen error: \n  ptxas info    : (C7516) Potential Performance Loss: "
    "wgmma.mma_async instructions are serialized due to ill formed pipeline stage in the function '\n"
    "  ptxas fatal   : (C7600) Register allocation failed with register count of '255'. Compile the program with a higher "
    "register target\n  ptxas fatal   : Ptx assembly aborted due to errors")

# ---------------------------------------------------------------- AMD pointer canonicalisation: one pass, three faults
add("amd-canonptr-dyncast-nonexistent", "triton-lang/triton#10256", "job:vllm-aiter-mla-decode",
    "the reporter suspects #9859, but the assertion differs and no shared fix is shown: its own label",
    "/root/aiter/aiter/ops/triton/_triton_kernels/gemm/basic/gemm_a8w8_blockscale.py:47:0:\n"
    "  error: Failures have been detected while processing an MLIR pass pipeline\nnote: Pipeline failed while executing\n"
    "  [`TritonAMDGPUCanonicalizePointers` on 'tt.func' operation:\n"
    "   @_gemm_a8w8_blockscale_kernel_GROUP_K_128_GROUP_N_128_BLOCK_SIZE_M_4_BLOCK_SIZE_N_32_BLOCK_SIZE_K_128_GROUP_SIZE_M_1_"
    "NUM_KSPLIT_1_SPLITK_BLOCK_SIZE_256_EVEN_K_1_GRID_MN_224_cache_modifier_CG]:\n"
    "  reproducer generated at `std::errs`, please share the reproducer above with Triton project.",
    "/source/llvm-project/llvm/include/llvm/Support/Casting.h:650:\n  decltype(auto) llvm::dyn_cast(const From &)\n"
    "    [To = mlir::OpResult, From = mlir::Value]:\n"
    "  Assertion `detail::isPresent(Val) && \"dyn_cast on a non-existent value\"' failed.")
add("amd-canonptr-select-size-mismatch", "triton-lang/triton#9859", "job:amd-select-ptr",
    "a select of a fat and a plain pointer; fixed by #9891 (no promotion at such merge points)",
    "Assertion `adaptor.getTrueValue().size() == adaptor.getFalseValue().size()\n"
    "  && \"expected both true and false operands to be the same size\"' failed.")
add("amd-canonptr-where-scalar-base", "triton-lang/triton#10381", "job:amd-gfx1150-where-ptr",
    "tl.where between two scalar base pointers reaches a cast to ShapedType: another path of the pass",
    "llvm/Support/Casting.h:560: cast<mlir::ShapedType>: Assertion `isa<To>(Val) && \"cast<Ty>() argument of incompatible "
    "type!\"' failed.\nTritonAMDGPUCanonicalizePointers on tt.func @k -> PassManager::run failed")

# ---------------------------------------------------------------- pass failures: one fault per report
add("amd-pipeline-load-destroyed-sageattn", "triton-lang/triton-windows#24", "job:sageattn-amd-windows",
    "TritonAMDGPUPipeline leaves a used tt.load behind in SageAttention's kernel: that report's fault",
    "C:\\ComfyUI\\venv\\Lib\\site-packages\\sageattention\\attn_qk_int8_per_block.py:17:26: error: 'tt.load' op operation "
    "destroyed but still has uses\n        k_scale = tl.load(K_scale_ptr)\n                         ^")
add("tma-kernel-on-a100", "ByteDance-Seed/Triton-distributed#11", "test_ag_gemm_intra_node.py",
    "a tensor-descriptor kernel lowered for A100 (an enhancement request); the log is two processes interleaved",
    "/app/software2/Triton-distributed/python/triton/distributed/kernels/nvidia/allgather_gemm.py:320:0Failures have been "
    "detected while processing an MLIR pass pipelines:r o: \n= pcn-i-av/app/software2/Triton-distributed/python/triton/"
    "distributed/kernels/nvidia/allgather_gemm.py:320:0: 132sneerror:  , pornote: r!engettcieFailures have been detected "
    "while processing an MLIR pass pipelineg.icn\nPipeline failed while executing [`ConvertTritonGPUToLLVM` on "
    "'builtin.module' operation]: reproducer generated at `std::errs, please share the reproducer above with Triton "
    "project.`itensordesc<tensor<128x64xf16, #shared>>aac")
add("intel-coalesce-pass-failure", "intel/intel-xpu-backend-for-triton#4817", "job:intel-xpu-kernel",
    "a bare PassManager::run failed (the report's title names TritonIntelGPUCoalesce): that report's fault",
    "  File \"/workspace1/user/code-repo/intel-xpu-backend-for-triton/python/triton/backends/intel/compiler.py\", line 332, "
    "in make_llir\n    pm.run(mod)\nRuntimeError: PassManager::run failed")

# ---------------------------------------------------------------- runtime faults without a place: one per report
add("ima-helion-specialize-b200", "pytorch/helion#867", "test/test_loops.py::TestLoops::test_specialize_shape_sequence",
    "an illegal access on B200 CI, surfacing at the next allocation: that report's kernel",
    ">       args = (torch.randn([32, 16], device=DEVICE),)\n                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    "E       torch.AcceleratorError: CUDA error: an illegal memory access was encountered\n"
    "E       Search for `cudaErrorIllegalAddress' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html "
    "for more information.\nE       CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\nE       For debugging consider passing CUDA_LAUNCH_BLOCKING=1")
add("ima-minference-vertical-slash", "microsoft/MInference#128", "job:minference-vertical-slash",
    "an illegal access in MInference's sparse attention kernel: that report's kernel",
    "  File \"/path/MInference/minference/ops/pit_sparse_flash_attention_v2.py\", line 153, in _triton_mixed_sparse_attention\n"
    "    o = torch.zeros_like(q)\n        ^^^^^^^^^^^^^^^^^^^\n"
    "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
add("ima-softmax-tutorial-int32-offsets", "triton-lang/triton#3296", "python/tutorials/02-fused-softmax.py",
    "the softmax tutorial on a 756480x3152 input; fixed by an updated tutorial",
    "RuntimeError: CUDA error: an illegal memory access was encountered")
add("ima-multi-dot-h100", "triton-lang/triton#10486", "job:multi-dot-repro",
    "a probabilistic illegal access from a kernel with several tl.dot on H100: that report's kernel",
    "========= COMPUTE-SANITIZER\n========= Program hit cudaErrorIllegalAddress (error 700) due to \"an illegal memory "
    "access was encountered\" on CUDA API call to cudaDeviceSynchronize.\n=========     Saved host backtrace up to driver "
    "entry point at error\n=========         Host Frame: c10::cuda::device_synchronize() in libc10_cuda.so")
add("misaligned-matmul-odd-stride", "triton-lang/triton#1297", "job:triton-ops-matmul",
    "a misaligned address from the matmul template with an odd innermost dimension: that report's kernel",
    "RuntimeError: CUDA error: misaligned address")
add("kernel-image-invalid-inductor", "pytorch/pytorch#119054", "job:torch-compile-ray",
    "a cubin the driver rejects under torch.compile; no cause shared with another report",
    "  File \"/home/user/anaconda3/envs/pytorch-temp/lib/python3.11/site-packages/triton/compiler/compiler.py\", line 683, "
    "in _init_handles\n    mod, func, n_regs, n_spills = fn_load_binary(self.metadata[\"name\"], self.asm[bin_path], "
    "self.shared, device)\ntorch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    "RuntimeError: Triton Error [CUDA]: device kernel image is invalid")

# ---------------------------------------------------------------- crashes: one fault per report
add("segv-codegen-init-rope", "triton-lang/triton#8693", "job:flash-attn-rope",
    "a segfault while building the RoPE kernel's AST: that report's fault (no report links it to another)",
    "Fatal Python error: Segmentation fault\n\nThread 0x00007b8eb0d98640 (most recent call first):\n"
    "  File \"/usr/local/lib/python3.11/dist-packages/torch/_inductor/compile_worker/subproc_pool.py\", line 53 in _recv_msg\n"
    "  File \"/usr/local/lib/python3.11/dist-packages/torch/_inductor/compile_worker/subproc_pool.py\", line 161 in _read_thread\n\n"
    "Current thread 0x00007b9063494480 (most recent call first):\n"
    "  File \"/usr/local/lib/python3.11/dist-packages/triton/compiler/code_generator.py\", line 203 in __init__\n"
    "  File \"/usr/local/lib/python3.11/dist-packages/triton/compiler/code_generator.py\", line 1295 in ast_to_ttir")
add("segv-codegen-init-alphafold3", "google-deepmind/alphafold3#407", "job:alphafold3-inference",
    "a segfault in the same constructor from another program (a setup problem per its label): its own fault",
    "Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f1518f2e480 (most recent call first):\n"
    "  File \"/alphafold3_venv/lib/python3.11/site-packages/triton/compiler/code_generator.py\", line 223 in __init__\n"
    "  File \"/alphafold3_venv/lib/python3.11/site-packages/triton/compiler/code_generator.py\", line 1069 in call_JitFunction\n"
    "  File \"/alphafold3_venv/lib/python3.11/site-packages/triton/language/core.py\", line 1987 in make_combine_region")
add("py312-gil-not-held", "triton-lang/triton#3502", "job:py312-triton-smoke",
    "triton not yet built for Python 3.12: its allocator is called without the GIL",
    "Fatal Python error: _PyMem_DebugMalloc: Python memory allocator called without holding the GIL\n"
    "Python runtime state: initialized\n\nCurrent thread 0x00007ff4ede91740 (most recent call first):\n"
    "  File \"/data/users/user/py312-debug-env/lib/python3.12/site-packages/triton/backends/nvidia/compiler.py\", line 204 "
    "in make_ptx")
add("segv-dataloader-fork-llvm-threads", "triton-lang/triton#3864", "job:dataloader-train",
    "compiling while DataLoader workers fork: LLVM's threads joined in the child",
    "ERROR: Unexpected segmentation fault encountered in worker\n"
    "#5  __pthread_clockjoin_ex (threadid=125287851361984, thread_return=0x0, clockid=0, abstime=0x0, block=true) at "
    "pthread_join_common.c:43\n#6  0x000071f392131228 in llvm::llvm_thread_join_impl(unsigned long) ()")
add("llvm-shfl-mamba-generation", "state-spaces/mamba#173", "job:mamba-benchmark-generation",
    "an instruction the GPU's NVPTX target cannot select; several users, one report",
    "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32\nAborted (core dumped)")
add("inductor-undefined-symbol-blt", "facebookresearch/blt#124", "job:blt-generate",
    "inductor generated a kernel naming an undefined size symbol: that report's fault",
    "Triton compilation error:\nNameError('s10 is not defined')")


__all__ = ["F", "add", "records", "render"]

if __name__ == "__main__":
    _SET.write(HERE / "fresh.jsonl")
