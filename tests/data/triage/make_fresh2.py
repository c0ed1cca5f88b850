"""Builds ``fresh2.jsonl``: a third, wholly held-out set of real failure texts from public reports,
none of them a source of ``wild.jsonl`` or of ``fresh.jsonl`` (checked against their ``source``
fields), labelled by root cause *before* any signature code was run on them. Regenerate with
``python tests/data/triage/make_fresh2.py`` (deterministic).

It exists to measure grouping honestly after a tuning round that uses ``wild.jsonl`` and
``fresh.jsonl``: the labels were written and committed before the first measurement, and the
signature and normaliser code is never tuned on this file (``bench/bench_triage.py --fresh2``
only reports figures). The whole file is held out: there is no tuning split.

Labelling rule (the same as ``make_wild.py``'s and ``make_fresh.py``'s):

* **Same label = same fix.** Two texts carry the same label when one change would fix both, as
  the reports (their comments, a linked duplicate or the fix) show.
* A message that names the fault specifically (the undefined C++ symbol, the missing import, the
  unsupported type on an architecture, the resource limit, the target the tool does not know) is
  one root cause across reports when the reports agree on the cause and the fix is one change of
  the same kind (install the flash-attn wheel whose C++ ABI flag matches torch; pin torch and
  triton so that ``AttrsDescriptor`` exists; give triton a ptxas that knows the GPU; blocks of at
  least 16 for ``tl.dot``; a smaller block or fewer ``num_stages``; no fp8e4nv before sm_89; a
  newer driver; a machine with an NVIDIA GPU; a triton wheel for Windows; a ROCm build for the
  gfx target; launch under the tensor's device; a bitsandbytes with Windows binaries). Different
  words for that cause keep the label (``AssertionError('All values … must be >= 16!')``,
  ``All non-batch values …`` and ``Input shapes should have M >= 16, N >= 16 and K >= 16``;
  ``ptxas fatal`` and ``ptxas-blackwell fatal`` inside a ``PTXASError``; torch's driver check as
  a ``RuntimeError``, a ``UserWarning`` and an old multi-line ``AssertionError``); the same words
  for another cause get another label (``Pointer argument … (cpu tensor?)`` from a tensor on
  another GPU vs. a model really on the CPU; ``Found no NVIDIA driver`` on a machine without an
  NVIDIA GPU vs. inside a Docker container not given the GPU).
* An undefined C++ symbol in ``flash_attn_2_cuda`` is labelled per symbol, as a missing import is:
  ``c10::Error`` with ``std::__cxx11`` strings is the C++ ABI flag of the wheel, ``SetDevice(int)``
  and ``CUDACachingAllocator::allocator`` are two other torch versions the binary was built for.
* A message that says nothing about where or why — a fatal signal, a bare ``PassManager::run
  failed``, a tensor mismatch, an NCCL watchdog timeout, a CUDA out-of-memory, an LLVM
  translation failure — is one root cause per report (the fix is in that report's kernel,
  machine or job), even when the words are identical.
* Texts of one report in several shapes share the report's label.

Each record: ``id``, ``fault`` (the label), ``source`` (``owner/repo#N``), ``test`` (the test the
report names; where it names none, ``job:<project>-<what ran>``), ``shape`` (``real``: the
report's own text, excerpted; ``derived-…``: that text put through a log shape a nightly meets,
built by ``heldout_set.py`` — the same two shapes ``make_wild.py`` applies, kept apart so this
frozen file never changes with that one), ``why`` (the labelling reason) and ``text``.

Personal data removed: user names in paths → ``user``, home folders → ``/home/user`` (and a
cluster's shared folder of a guest account likewise); no host names, no e-mail. Texts are short
excerpts of the error lines (fair use), not whole logs.
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


# ---------------------------------------------------------------- flash-attn wheel with the other C++ ABI flag (one fix: the matching wheel)
ABI = ("flash_attn_2_cuda wants c10::Error with std::__cxx11 strings, which a torch of the other C++ ABI does not "
       "export; the fix is the flash-attn wheel whose cxx11abi flag matches torch")
add("flash-attn-cxx11abi-mismatch", "Dao-AILab/flash-attention#1691", "job:flash-attn-import",
    ABI + " (a cxx11abiTRUE wheel under torch 2.4)",
    "  File \"/home/user/miniconda3/envs/quanllm/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py\", "
    "line 15, in <module>\n    import flash_attn_2_cuda as flash_attn_gpu\n"
    "ImportError: /home/user/miniconda3/envs/quanllm/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-"
    "linux-gnu.so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE")
add("flash-attn-cxx11abi-mismatch", "Dao-AILab/flash-attention#940", "job:flash-attn-import",
    ABI + "; fixed by reinstalling per the README's wheel choice (the title's wording)",
    "flash-attn error flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined symbol: "
    "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE")
add("flash-attn-cxx11abi-mismatch", "Dao-AILab/flash-attention#680", "job:flash-attn-varlen-import",
    ABI + " (a cxx11abiTRUE wheel under torch 2.1.0)",
    "python3.9/site-packages/flash_attn_2_cuda.cpython-39-x86_64-linux-gnu.so: undefined symbol: "
    "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE")
add("flash-attn-torch-version-setdevice", "Dao-AILab/flash-attention#966", "job:flash-attn-import",
    "the same kind of ImportError with another symbol: c10::cuda::SetDevice(int) is a torch version the binary was "
    "built against that the installed torch is not — another torch/flash-attn pair, its own label",
    "ImportError: flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi")
add("flash-attn-torch-version-allocator", "EleutherAI/gpt-neox#1079", "job:gpt-neox-train",
    "undefined c10::cuda::CUDACachingAllocator::allocator: flash-attn built for another torch than gpt-neox's venv "
    "has — another symbol, another pair to re-pin",
    "  File \"/media/user/nvme/gpt-neox/.venv/lib/python3.8/site-packages/flash_attn/flash_attn_interface.py\", line 8, "
    "in <module>\n    import flash_attn_2_cuda as flash_attn_cuda\n"
    "ImportError: /media/user/nvme/gpt-neox/.venv/lib/python3.8/site-packages/flash_attn_2_cuda.cpython-38-x86_64-linux-"
    "gnu.so: undefined symbol: _ZN3c104cuda20CUDACachingAllocator9allocatorE")

# ---------------------------------------------------------------- AttrsDescriptor gone from triton (one fix: a torch/triton pair that agree)
ATTRS = ("torch's inductor imports triton's AttrsDescriptor, which newer triton removed; the fix is a torch and "
         "triton pinned together (the missing symbol is the same in each report)")
add("attrsdescriptor-import", "deepbeepmeep/Wan2GP#1263", "job:wan2gp-generate", ATTRS + " ('the wrong version of triton')",
    "ImportError: cannot import name 'AttrsDescriptor' from 'triton.compiler.compiler' "
    "(G:\\pinokio\\api\\wan.git\\app\\env\\lib\\site-packages\\triton\\compiler\\compiler.py)")
add("attrsdescriptor-import", "Comfy-Org/ComfyUI#7106", "job:comfyui-torch-compile-node", ATTRS + " (the frame in torch's hints.py)",
    "  File \"I:\\ComfyUI_windows_portable\\python_embeded\\Lib\\site-packages\\torch\\_inductor\\runtime\\hints.py\", "
    "line 64, in <module>\n    from triton.compiler.compiler import AttrsDescriptor\n"
    "ImportError: cannot import name 'AttrsDescriptor' from 'triton.compiler.compiler' "
    "(I:\\ComfyUI_windows_portable\\python_embeded\\Lib\\site-packages\\triton\\compiler\\compiler.py)")
add("attrsdescriptor-import", "leomaxwell973/Triton-3.3.0-UPDATE_FROM_3.2.0_and_FIXED-Windows-Nvidia-Prebuilt#2",
    "job:comfyui-triton-windows", ATTRS + " (the other module torch tries first; 'an architecture change from Triton')",
    "ImportError: cannot import name 'AttrsDescriptor' from 'triton.backends.compiler'")

# ---------------------------------------------------------------- ptxas older than the GPU
PTXAS = "the ptxas triton runs does not know the GPU's target; the fix is a newer ptxas (TRITON_PTXAS_PATH, a newer CUDA/triton)"
add("ptxas-older-than-gpu", "deepseek-ai/DeepSeek-OCR#106", "job:deepseek-ocr-h100", PTXAS + " (sm_90a, H100)",
    "ptxas fatal   : Value 'sm_90a' is not defined for option 'gpu-name'")
add("ptxas-older-than-gpu", "triton-inference-server/server#8632", "job:tritonserver-torch-compile-thor",
    PTXAS + " (sm_110a on Jetson Thor, triton's ptxas-blackwell)",
    "torch._inductor.runtime.triton_heuristics.NoTritonConfigsError: No valid triton configs. PTXASError: PTXAS error: "
    "Internal Triton PTX codegen error\n`ptxas` stderr:\n"
    "ptxas-blackwell fatal   : Value 'sm_110a' is not defined for option 'gpu-name'")
add("nvcc-too-old-for-sm86", "NVlabs/stylegan2-ada#107", "job:stylegan2-ada-custom-ops",
    "nvcc (not triton's ptxas) of a CUDA before 11.1 building a project's own ops for an A4000: the fix is that "
    "project's toolkit, another change than triton's ptxas",
    "nvcc fatal : Value 'sm_86' is not defined for option 'gpu-architecture'")

# ---------------------------------------------------------------- tl.dot below 16 (three wordings of one frontend check)
DOT = "tl.dot on a block smaller than 16 in some dimension; the fix is blocks of at least 16 (pad or change the tiling)"
add("dot-operand-below-16", "triton-lang/triton#4197", "job:triton-dot-8x8", DOT + " (8x8, 'non-batch' wording)",
    "z = tl.dot(x, y)\n\nAssertionError: All non-batch values in both first input shape ([constexpr[8], constexpr[8]]) "
    "and second input shape ([constexpr[8], constexpr[8]]) must be >= 16!")
add("dot-operand-below-16", "triton-lang/triton#2266", "job:triton-dot-matvec", DOT + " (a 16x1 vector, older wording)",
    "AssertionError('All values in both first input shape ([constexpr[16], constexpr[16]]) and second input shape "
    "([constexpr[16], constexpr[1]]) must be >= 16!')")
add("dot-operand-below-16", "triton-lang/triton#8426", "job:triton-dot-n8-gh200", DOT + " (N=8 on GH200, newest wording)",
    "    C = tl.dot(A, B)  # Error: \"Input shapes should have M >= 16, N >= 16 and K >= 16\"")
add("dot-operand-below-16", "a710128/nanovllm-voxcpm#74", "job:voxcpm-lora-decode", DOT + " (LoRA shrink with batch < 16)",
    "File \".../nanovllm_voxcpm/lora_ops/triton_ops/lora_shrink_op.py\", line 231, in _run_small_m_shrink\n"
    "    _lora_shrink_small_m_kernel[grid](...)\n...\n"
    "File \".../triton/language/semantic.py\", line 1503, in dot\n"
    "    assert lhs.shape[-2].value >= min_dot_size[0] and lhs.shape[-1].value >= min_dot_size[2] ...\n"
    "AssertionError: Input shapes should have M >= 16, N >= 16 and K >= 16")

# ---------------------------------------------------------------- shared memory over the limit
OOR = "a kernel config needing more shared memory than the GPU has; the fix is a smaller block or fewer num_stages"
add("oor-shared-memory", "vllm-project/vllm#12498", "job:vllm-fp8-block-matmul", OOR + " (64 KiB GPU, vLLM's w8a8 block fp8)",
    "ERROR 01-28 03:21:01 engine.py:387]   File \"/opt/conda/envs/vllm_python12/lib/python3.10/site-packages/triton/"
    "compiler/compiler.py\", line 374, in _init_handles\n"
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 66560, Hardware limit: 65536. "
    "Reducing block sizes or `num_stages` may help.")
add("oor-shared-memory", "Knowledgator/TurboT5#8", "job:turbot5-flash-inference", OOR + " (RTX 3090)",
    "OutOfResources: out of resource: shared memory, Required: 114688, Hardware limit: 101376. Reducing block sizes or "
    "`num_stages` may help.")
add("oor-shared-memory", "InternLM/lmdeploy#2451", "job:lmdeploy-deepseek-coder-v2-lite",
    OOR + " (A6000; the maintainer points at the paged-attention block config; the autotuner's module path)",
    "triton.runtime.autotuner.OutOfResources: out of resource: shared memory, Required: 108672, Hardware limit: 101376. "
    "Reducing block sizes or `num_stages` may help.")

# ---------------------------------------------------------------- fp8e4nv before sm_89
FP8 = "an fp8 e4m3 kernel on a GPU before sm_89 (A10/A100/3090); the fix is a GPU with fp8 or a non-fp8 path"
add("fp8e4nv-before-sm89", "sgl-project/sglang#5871", "job:sglang-qwen3-moe-fp8", FP8 + " (A10)",
    "type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\"")
add("fp8e4nv-before-sm89", "vllm-project/vllm#15336", "job:vllm-deepseek-r1",
    FP8 + " (vLLM's MLA weight dequantisation)",
    "ERROR 03-22 06:48:14 [worker_base.py:620]     kv_b_proj_weight = get_and_maybe_dequant_weights(self.kv_b_proj).T\n"
    "ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")")
add("fp8e4nv-before-sm89", "WeChatCV/Stand-In_Preprocessor_ComfyUI#10", "job:comfyui-stand-in",
    FP8 + " (an inductor-generated copy kernel, as a CompilationError)",
    "!!! Exception during processing !!! CompilationError: at 1:0:\n"
    "def triton_poi_fused__to_copy_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):\n^\n"
    "ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")")
add("fp8e4nv-before-sm89", "kvcache-ai/ktransformers#1978", "job:ktransformers-deepseek-v4-flash", FP8 + " (sm80)",
    "ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")")

# ---------------------------------------------------------------- driver older than torch's CUDA (three wordings of torch's check)
DRV = "the NVIDIA driver is older than the CUDA torch was built with; the fix is a newer driver (or a torch for that CUDA)"
add("nvidia-driver-too-old", "lllyasviel/Fooocus#1313", "job:fooocus-launch", DRV + " (driver 470 / CUDA 11.4)",
    "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by "
    "downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go "
    "to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver.")
add("nvidia-driver-too-old", "IEIT-Yuan/Yuan-2.0#65", "job:yuan2-finetune", DRV + "; the maintainers advise driver 535 (a warning)",
    "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:124: UserWarning: CUDA initialization: The NVIDIA "
    "driver on your system is too old (found version 11000). Please update your GPU driver by downloading and installing "
    "a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to "
    "install a PyTorch version that has been compiled with your version of the CUDA driver. (Triggered internally at "
    "/opt/pytorch/pytorch/c10/cuda/CUDAFunctions.cpp:108.)")
add("nvidia-driver-too-old", "ai4d-iasc/trixie#9", "job:trixie-slurm-train", DRV + " (old torch's multi-line AssertionError)",
    "  File \"/home/user/anaconda3/envs/patchy_discs_model/lib/python3.7/site-packages/torch/cuda/__init__.py\", line 63, "
    "in _check_driver\n    of the CUDA driver.\"\"\".format(str(torch._C._cuda_getDriverVersion())))\nAssertionError: \n"
    "The NVIDIA driver on your system is too old (found version 10010).\n"
    "Please update your GPU driver by downloading and installing a new\n"
    "version from the URL: http://www.nvidia.com/Download/index.aspx\nAlternatively, go to: https://pytorch.org to install")

# ---------------------------------------------------------------- no NVIDIA driver (same words, two causes)
NOGPU = "the machine has no NVIDIA GPU (Intel graphics, an AMD Radeon); the fix is an NVIDIA machine or the CPU path"
add("no-nvidia-gpu", "mks0601/I2L-MeshNet_RELEASE#105", "job:i2l-meshnet-demo", NOGPU + " ('I don't have any NVIDIA adapter')",
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver "
    "from http://www.nvidia.com/Download/index.aspx")
add("no-nvidia-gpu", "robbyant-research/MagicQuill#96", "job:magicquill-launch", NOGPU + " (the thread: 'i'm using AMD Radeon')",
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver "
    "from http://www.nvidia.com/Download/index.aspx")
add("docker-without-gpu", "facebookresearch/detectron2#3105", "job:detectron2-docker-demo",
    "the same words inside a Docker container on Windows 10 with a GTX 1660: the host has the GPU, the container was not "
    "given it (CPU works there) — another fix (the container's GPU access)",
    "  File \"/home/appuser/detectron2_repo/detectron2/modeling/meta_arch/build.py\", line 23, in build_model\n"
    "    model.to(torch.device(cfg.MODEL.DEVICE))\nRuntimeError: Found no NVIDIA driver on your system.")

# ---------------------------------------------------------------- no triton on Windows (xformers' optional import)
NOTRI = ("no triton wheel on Windows, so xformers' optional triton import fails; the fix is a Windows triton build "
         "(or nothing: xformers runs without it)")
add("no-triton-on-windows", "lllyasviel/stable-diffusion-webui-forge#1139", "job:forge-xformers", NOTRI,
    "WARNING:xformers:A matching Triton is not available, some optimizations will not be enabled\n"
    "Traceback (most recent call last):\n"
    "  File \"C:\\Users\\user\\Desktop\\webui_forge_cu121_torch231\\system\\python\\lib\\site-packages\\xformers\\__init__.py\", "
    "line 57, in _is_triton_available\n    import triton  # noqa\nModuleNotFoundError: No module named 'triton'")
add("no-triton-on-windows", "Nerogar/OneTrainer#223", "job:onetrainer-launch", NOTRI + " (older xformers: the import sits in its softmax)",
    "A matching Triton is not available, some optimizations will not be enabled\nTraceback (most recent call last):\n"
    "  File \"E:\\OneTrainer\\venv\\lib\\site-packages\\xformers\\__init__.py\", line 55, in _is_triton_available\n"
    "    from xformers.triton.softmax import softmax as triton_softmax  # noqa\n"
    "  File \"E:\\OneTrainer\\venv\\lib\\site-packages\\xformers\\triton\\softmax.py\", line 11, in <module>\n"
    "    import triton\nModuleNotFoundError: No module named 'triton'")
add("no-triton-on-windows", "invoke-ai/InvokeAI#4055", "job:invokeai-launch", NOTRI + " (the two-line warning, no traceback)",
    "A matching Triton is not available, some optimizations will not be enabled.\nError caught was: No module named 'triton'")

# ---------------------------------------------------------------- ROCm: no kernel for the gfx target
HIP = "the ROCm torch has no kernel for this gfx target; the fix is a build for it or HSA_OVERRIDE_GFX_VERSION"
add("hip-no-kernel-for-gfx", "ROCm/legacy-rocm-build#2536", "job:rocm-stability-matrix", HIP + "; fixed with HSA_OVERRIDE_GFX_VERSION=10.3.0",
    "RuntimeError: HIP error: invalid device function")
add("hip-no-kernel-for-gfx", "ROCm/legacy-rocm-build#5668", "job:rocm-strix-halo", HIP + " (Strix Halo, gfx1151)",
    "RuntimeError: HIP error: invalid device function\nHIP kernel errors might be asynchronously reported at some other "
    "API call, so the stacktrace below might be incorrect.\nFor debugging consider passing AMD_SERIALIZE_KERNEL=3\n"
    "Compile with `TORCH_USE_HIP_DSA` to enable device-side assertions.")
add("hip-no-kernel-for-gfx", "ROCm/legacy-rocm-build#5264", "job:comfyui-rocm-wx5100", HIP + " (Radeon Pro WX 5100; retyped by hand)",
    "VAEEncode\nHIP error: Invalid device function\nHIP kernel errors might be asynchronously reported at some other API "
    "call, so the stacktrace below might be incorrect.\nFor debugging consider passing AMD_SERIALIZE_KERNEL=3\n"
    "Complie with 'TORCH_USE_HIP_DSA' to enable device-side assertions. ")

# ---------------------------------------------------------------- "cpu tensor?" (same words, two causes)
OTHERGPU = ("the tensor is on another GPU than the current one (multi-GPU, device_map='auto'); the fix is launching the "
            "kernel under the tensor's device (torch.cuda.device / set_device)")
add("pointer-arg-on-other-gpu", "jy-yuan/KIVI#24", "job:kivi-multi-gpu", OTHERGPU + " (the thread's fix)",
    "ValueError: Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?)")
add("pointer-arg-on-other-gpu", "linkedin/Liger-Kernel#401", "job:liger-qwen2-device-map-auto", OTHERGPU,
    "Getting `ValueError: Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?)` when doing inference "
    "using HF `from_pretrained()` with `device_map=\"auto\"`.")
add("pointer-arg-on-other-gpu", "state-spaces/mamba#593", "job:mamba2-train",
    OTHERGPU + " ('I put all the data and models on the GPU'; the linked set_device fix worked)",
    "Error when using mamba2: Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?). I put all the data "
    "and models on the GPU.")
add("triton-kernel-on-cpu-inference", "AnswerDotAI/ModernBERT#152", "job:modernbert-cpu-inference",
    "the same words from a model really run on the CPU: the triton path must not be taken there — another fix",
    "File ~/dev/.venv/lib/python3.12/site-packages/triton/backends/nvidia/driver.py:365, in CudaLauncher.__call__(self, "
    "*args, **kwargs)\n    364 def __call__(self, *args, **kwargs):\n--> 365     self.launch(*args, **kwargs)\n\n"
    "ValueError: Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?)")

# ---------------------------------------------------------------- bitsandbytes without a Windows binary
BNB = ("a bitsandbytes of before Windows support loads its CPU .so on Windows; the fix is a bitsandbytes with Windows "
       "CUDA binaries")
add("bnb-no-windows-binary", "bitsandbytes-foundation/bitsandbytes#1568", "job:bnb-windows-import", BNB,
    "bin C:\\Users\\user\\AppData\\Roaming\\Python\\Python312\\site-packages\\bitsandbytes\\libbitsandbytes_cpu.so\nFalse\n"
    "CUDA_SETUP: WARNING! libcudart.so not found in any environmental path. Searching in backup paths...\n"
    "CUDA SETUP: WARNING! libcuda.so not found! Do you have a CUDA driver installed? If you are on a cluster, make sure "
    "you are on a CUDA machine!\nCUDA SETUP: Loading binary C:\\Users\\user\\AppData\\Roaming\\Python\\Python312\\"
    "site-packages\\bitsandbytes\\libbitsandbytes_cpu.so...")
add("bnb-no-windows-binary", "bitsandbytes-foundation/bitsandbytes#512", "job:bnb-windows-import", BNB + " (a conda env on E:)",
    "bin E:\\Miniconda3\\envs\\AI002\\lib\\site-packages\\bitsandbytes\\libbitsandbytes_cpu.so\n"
    "E:\\Miniconda3\\envs\\AI002\\lib\\site-packages\\bitsandbytes\\cuda_setup\\main.py:145: UserWarning: "
    "E:\\Miniconda3\\envs\\AI002 did not contain ['libcudart.so', 'libcudart.so.11.0', 'libcudart.so.12.0'] as "
    "expected! Searching further paths...\n  warn(msg)\n"
    "CUDA_SETUP: WARNING! libcudart.so not found in any environmental path.")

# ---------------------------------------------------------------- pass failures: one fault per report
add("intel-passmanager-inductor-ut-4000", "intel/intel-xpu-backend-for-triton#4000", "job:xpu-inductor-ut",
    "a bare PassManager::run failed from a new inductor test on XPU (its CI log, already timestamped): that report's kernel",
    "2025-04-24T06:46:09.0393831Z E0424 06:38:03.231041 431206 site-packages/torch/_inductor/runtime/triton_heuristics.py:616]"
    "             tmp0 = tl.load(block_ptr0, boundary_check=[0, 1], padding_option='zero', eviction_policy='evict_first')"
    "[None, :, :]\n"
    "2025-04-24T06:46:09.0394609Z E0424 06:38:03.231041 431206 site-packages/torch/_inductor/runtime/triton_heuristics.py:616]"
    "             tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK, R1_BLOCK])\n"
    "2025-04-24T06:46:09.0396509Z E0424 06:38:03.231041 431206 site-packages/torch/_inductor/runtime/triton_heuristics.py:616]"
    "             block_ptr0 = tl.advance(block_ptr0, [0, R1_BLOCK])")
add("intel-passmanager-lts2-driver", "intel/intel-xpu-backend-for-triton#4725", "job:xpu-inductor-ut-lts2",
    "PassManager::run failed in inductor tests only on the LTS2 driver: a driver fault, that report's own",
    "E0716 07:25:08.857000 3132999 .scripts_cache/pytorch/torch/_inductor/runtime/triton_heuristics.py:714]     "
    "tl.store(tl.make_block_ptr(out_ptr0, shape=[384], strides=[1], block_shape=[XBLOCK], order=[0], offsets=[xoffset]), "
    "tl.broadcast_to(tmp11, [XBLOCK]).to(tl.float16), boundary_check=[0])\n"
    "E0716 07:25:08.857000 3132999 .scripts_cache/pytorch/torch/_inductor/runtime/triton_heuristics.py:714] metadata: "
    "{'signature': {'in_ptr0': '*i64', 'in_ptr1': '*fp16', 'out_ptr0': '*fp16', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, "
    "'device': 0, 'constants': {'XBLOCK': 256}, 'device_type': 'xpu', 'num_warps': 4, 'num_stages': 1, 'debug': True}")

# ---------------------------------------------------------------- LLVM errors and MLIR verifier errors: one fault per report
add("llvm-translate-unrealized-cast-mixed-mm", "triton-lang/triton#2156", "job:torch-inductor-mixed-mm",
    "a type conversion feeding tl.dot left an unrealized cast after a triton pin bump: that regression",
    "loc(\"/tmp/torchinductor_user/bm/cbm7qsh5esh6xdkdddmv7l2ilel4kdbfwgy2luolzmme62njagrb.py\":64:17): error: LLVM "
    "Translation failed for operation: builtin.unrealized_conversion_cast\nFailed to emit LLVM IR\n"
    "Translate to LLVM IR failedLLVM ERROR: Failed to translate TritonGPU to LLVM IR.\nAborted (core dumped)")
add("fp16-extf-unsupported-pascal", "triton-lang/triton#3874", "job:vllm-pascal-prefix-prefill",
    "fp16 to fp32 extension on a Pascal GPU had no lowering; the pull request adds it",
    "Unsupported conversion from f16 to f16\nLLVM ERROR: Unsupported rounding mode for conversion.\n"
    "*** SIGABRT received at time=1715319299 on cpu 0 ***\nPC: @     0x787e96bdb32c  (unknown)  (unknown)\n"
    "Fatal Python error: Aborted\n\nStack (most recent call first):\n"
    "  File \"/mnt/ml/vllm/venv/lib/python3.11/site-packages/triton/backends/nvidia/compiler.py\", line 212 in make_llir")
add("fp8-arith-on-sm75-windows", "woct0rdho/triton-windows#176", "job:comfyui-fp8-sm75",
    "fp8 arithmetic lowered for a cuda:75 GPU: the multiply got i8 operands; that report's own",
    "llvm.fmul' op operand #0 must be floating point LLVM type or LLVM dialect-compatible vector of floating point LLVM "
    "type, but got 'i8'")
add("fp8-constant-padding-zero", "triton-lang/triton#4960", "job:triton-fp8-load-padding",
    "an fp8 constant from tl.load(padding_option='zero'), fixed on triton's main branch: a similar verifier message, "
    "another fault",
    "Error: 'llvm.mlir.constant' op result #0 must be LLVM dialect-compatible type, but got 'f8E5M2'")

# ---------------------------------------------------------------- crashes: one fault per report
add("segv-dot-5x5-get-parent", "triton-lang/triton#335", "job:triton-dot-5x5",
    "a segfault compiling tl.dot on 5x5 blocks in the old triton IR: that report's kernel",
    "Thread 1 \"python\" received signal SIGSEGV, Segmentation fault.\n0x00007ffed7580a34 in "
    "triton::ir::instruction::get_parent (this=0x0) at /data/work/git/triton/include/triton/ir/instructions.h:54\n"
    "54        basic_block *get_parent()                                   { return parent_;  }")
add("segv-blocksparse-replace-uses", "ptillet/torch-blocksparse#1", "job:torch-blocksparse-test",
    "a segfault in the old triton IR from another program and another pass: its own fault",
    "Thread 1 \"python3\" received signal SIGSEGV, Segmentation fault.\n0x00007fff9ab8a8b4 in "
    "triton::ir::user::replace_uses_of_with(triton::ir::value*, triton::ir::value*) () from "
    "/usr/local/lib/python3.7/dist-packages/triton-0.1-py3.7-linux-x86_64.egg/triton/_C/libtriton.so")

# ---------------------------------------------------------------- timeouts: one fault per report
add("nccl-timeout-llamafactory-allreduce", "hiyouga/LlamaFactory#7396", "job:llamafactory-train",
    "an NCCL watchdog timeout in an all-reduce: nothing says why, that job's own",
    "[80746] [rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for "
    "600060 milliseconds before timing out.\n"
    "[80748] [rank0]:[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or "
    "timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579.")
add("nccl-timeout-llamafactory-reduce-scatter", "hiyouga/LlamaFactory#6269", "job:llamafactory-train",
    "the same watchdog words in another job (a reduce-scatter): its own fault",
    "[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, NumelIn=544997376, NumelOut=68124672, Timeout(ms)=600000) ran "
    "for 600061 milliseconds before timing out.\n"
    "[rank0]:[E1206 18:44:12.715588844 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or timeout) "
    "detected by watchdog at work: 7753, last enqueued NCCL work: 7755, last completed NCCL work: 7752.")

# ---------------------------------------------------------------- out of memory: one fault per report
add("oom-leetgpu-t4-bench", "AlphaGPU/leetgpu-challenges#52", "job:leetgpu-perf-test",
    "CUDA out of memory in a T4 performance test (the harness keeps several copies): that job's own",
    "CUDA out of memory. Tried to allocate 7.45 GiB. GPU 0 has a total capacity of 14.56 GiB of which 3.24 GiB is free. "
    "Process 1 has 11.32 GiB memory in use. Of the allocated memory 8.40 GiB is allocated by PyTorch, and 2.80 GiB is "
    "reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")
add("oom-vmamba-cross-scan", "MzeroMiko/VMamba#294", "job:vmamba-csm-triton-check",
    "CUDA out of memory in another program's benchmark (torch.stack of four copies): its own",
    "  File \"/workspace/source/VMamba/classification/models/csm_triton.py\", line 555, in cross_scan\n"
    "    xs = torch.stack([\ntorch.cuda.OutOfMemoryError: CUDA out of memory.")

# ---------------------------------------------------------------- numerical mismatches: one fault per report
add("mismatch-rocm-decode-int4-kv", "ROCm/triton#514", "decoding1.py::test_op_fwd_int4_kv[2-1-32768-16-1-128]",
    "the decode-attention perf kernel with int4 KV 'generates wrong results now': a regression of that kernel",
    "Mismatched elements: 8192 / 8192 (100.0%)\n"
    "Greatest absolute difference: 0.4072265625 at index (0, 9, 0, 61) (up to 0.021 allowed)\n"
    "Greatest relative difference: 0.407958984375 at index (0, 9, 0, 111) (up to 0 allowed)\n"
    "FAILED decoding1.py::test_op_fwd_int4_kv[2-1-32768-16-1-128] - AssertionError: Tensor-likes are not close!")
add("mismatch-tlx-async-dot-b200", "facebookexperimental/triton#263",
    "python/test/unit/language/test_tlx.py::test_async_dot_blackwell_not_use_d[64-64-32]",
    "a B200 numerical error of an async dot that does not use its accumulator: that kernel's fault",
    "        xy = torch.matmul(x, y)\n>       torch.testing.assert_close(z2, xy + 1)\n"
    "E       AssertionError: Tensor-likes are not close!\nE\n"
    "E       Mismatched elements: 111 / 4096 (2.7%)\n"
    "E       Greatest absolute difference: 0.00048828125 at index (5, 28) (up to 1e-05 allowed)\n"
    "E       Greatest relative difference: 0.1556396484375 at index (11, 6) (up to 0.001 allowed)")

# ---------------------------------------------------------------- build: linking against a self-built LLVM
add("self-built-llvm-link-regex", "triton-lang/triton#5445", "job:triton-build-self-built-llvm",
    "libMLIRIR of a self-built LLVM wants an llvm::Regex::match the linked LLVM does not have: that build's configuration",
    "      /home/user/dwarftools/bin/ld: /home/user/llvm-project/llvm-project/build/lib/libMLIRIR.a(Diagnostics.cpp.o): "
    "in function `mlir::SourceMgrDiagnosticVerifierHandler::process(mlir::FileLineColLoc, llvm::StringRef, "
    "mlir::DiagnosticSeverity) [clone .localalias]':\n"
    "      Diagnostics.cpp:(.text._ZN4mlir34SourceMgrDiagnosticVerifierHandler7processENS_14FileLineColLocEN4llvm9StringRefE"
    "NS_18DiagnosticSeverityE+0xea): undefined reference to `llvm::Regex::match(llvm::StringRef, "
    "llvm::SmallVectorImpl<llvm::StringRef>*, std::__cxx11::basic_string<char, std::char_traits<char>, "
    "std::allocator<char> >*) const'")


__all__ = ["F", "add", "records", "render"]

if __name__ == "__main__":
    _SET.write(HERE / "fresh2.jsonl")
