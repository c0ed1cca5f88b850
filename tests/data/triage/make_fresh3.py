"""Builds ``fresh3.jsonl``: a fourth, wholly held-out set of real failure texts from public reports,
none of them a source of ``wild.jsonl``, ``fresh.jsonl``, ``fresh2.jsonl`` or ``labelled.jsonl``
(checked against their ``source`` fields and the issue links inside them), labelled by root cause
*before* any signature code was run on them. Regenerate with ``python
tests/data/triage/make_fresh3.py`` (deterministic).

It exists to measure grouping honestly after a tuning round that uses the other sets: the labels
were written and committed before the first measurement, and the signature and normaliser code is
never tuned on this file (``bench/bench_triage.py --fresh3`` only reports figures). The whole file
is held out: there is no tuning split.

Labelling rule (the same as ``make_wild.py``'s, ``make_fresh.py``'s and ``make_fresh2.py``'s):

* **Same label = same fix.** Two texts carry the same label when one change would fix both, as
  the reports (their comments, a linked duplicate or the fix) show.
* A message that names the fault specifically (the missing module or attribute, the undefined C++
  symbol, the GPU the wheel has no kernels for, the resource limit, the missing wheel) is one root
  cause across reports when the reports agree on the cause and the fix is one change of the same
  kind (a bitsandbytes that no longer imports ``triton.ops``; a bitsandbytes that no longer uses
  ``tl.libdevice``; no stale MSVC runtime DLLs beside ``python.exe``; a torch wheel built for
  sm_120; a triton (triton-windows) that matches torch; a Windows triton wheel instead of PyPI's;
  a CUDA build of torch instead of the CPU one; an xformers built for the installed torch; a vLLM
  built for the installed torch; a findable ``libcuda.so``; a smaller block or fewer
  ``num_stages``). Different words for that cause keep the label (``No module named 'triton.ops'``
  bare and after the import that raised it; the DLL initialisation failure in German and in
  English; torch's sm_120 warning and the ``no kernel image`` error it announces; the old and new
  wording of inductor's missing-triton error; ``Torch not compiled with CUDA enabled`` and
  xformers' ``built for … (you have …+cpu)``), and the same words for another cause get another
  label (``No matching distribution found for triton`` on Windows vs. on Linux aarch64 vs. under
  Python 3.13 with a ``triton<3`` pin; ``Torch not compiled with CUDA enabled`` from a CPU-only
  torch on an NVIDIA machine vs. on a machine with no CUDA GPU vs. from a test hard-coding
  ``cuda`` on XPU; xformers' ``built for`` line naming a CPU torch vs. another CUDA torch
  version; ``LLVM ERROR: mma16816 data type not supported`` from a triton kernel vs. from JAX).
* An undefined C++ symbol in ``vllm/_C`` is labelled per symbol, as a missing import is: the
  ``at::_ops::to_dtype_layout`` symbol is vLLM 0.3 built for torch 2.1; ``torch::Library`` with
  ``std::optional`` is another torch pair.
* A message that says nothing about where or why — a bare ``Failures have been detected while
  processing an MLIR pass pipeline``, an illegal memory access, a tensor mismatch, a hang, an
  LLVM ERROR with no cause the reports share, a linker error of one build — is one root cause per
  report (the fix is in that report's kernel, machine or build), even when the words are
  identical.
* Texts of one report in several shapes share the report's label.

Each record: ``id``, ``fault`` (the label), ``source`` (``owner/repo#N``), ``test`` (the test the
report names; where it names none, ``job:<project>-<what ran>``), ``shape`` (``real``: the
report's own text, excerpted; ``derived-…``: that text put through a log shape a nightly meets,
built by ``heldout_set.py`` — the same two shapes ``make_wild.py`` applies, kept apart so this
frozen file never changes with that one), ``why`` (the labelling reason) and ``text``.

Personal data removed: user names in paths → ``user``, home folders → ``/home/user``, host names
→ ``host``; no e-mail. Texts are short excerpts of the error lines (fair use), not whole logs.
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


# ---------------------------------------------------------------- bitsandbytes imports triton.ops (removed in triton 3.2)
TOPS = ("a bitsandbytes older than 0.45.x imports triton.ops.matmul_perf_model, which triton 3.2 removed; the fix is "
        "upgrading bitsandbytes")
add("bnb-imports-removed-triton-ops", "ostris/ai-toolkit#279", "job:ai-toolkit-train",
    TOPS + " (the reporter: 'Upgrading bitsandbytes is enough', 0.45.5)",
    "No module named 'triton.ops'")
add("bnb-imports-removed-triton-ops", "triton-lang/triton#5471", "job:unsloth-import",
    TOPS + " (unsloth imports bitsandbytes first; a notebook traceback, its last line as the title gives it)",
    "File ~/.local/lib/python3.13/site-packages/unsloth/__init__.py:107\n--> 107 import bitsandbytes as bnb\n"
    "File ~/.local/lib/python3.13/site-packages/bitsandbytes/__init__.py:15\n---> 15 from .nn import modules\n"
    "ModuleNotFoundError: No module named 'triton.ops'")
add("bnb-imports-removed-triton-ops", "lamikr/rocm_sdk_builder#202", "job:rocm-sdk-bitsandbytes-import",
    TOPS + " (a ROCm build; the frame that imports matmul_perf_model)",
    "  File \"/opt/rocm_sdk_612/lib/python3.11/site-packages/bitsandbytes/triton/int8_matmul_mixed_dequantize.py\", "
    "line 12, in <module>\n    from triton.ops.matmul_perf_model import early_config_prune, estimate_matmul_time\n"
    "ModuleNotFoundError: No module named 'triton.ops'")

# ---------------------------------------------------------------- bitsandbytes uses tl.libdevice (moved in triton 2.1)
LIBDEV = ("bitsandbytes' triton modules call tl.libdevice, which triton moved (tl.math / extra.cuda.libdevice); the fix "
          "is in bitsandbytes' triton code")
add("bnb-uses-moved-tl-libdevice", "bitsandbytes-foundation/bitsandbytes#909", "job:bnb-triton-based-modules",
    LIBDEV + " (the issue that names it)",
    "AttributeError: module 'triton.language' has no attribute 'libdevice'")
add("bnb-uses-moved-tl-libdevice", "mlfoundations/open_clip#1010", "job:open-clip-int8-inference",
    LIBDEV + " (open_clip's int8 path uses bnb's SwitchBackLinear; the error line as the title gives it)",
    "      2 from open_clip.utils import convert_int8_model_to_inference_mode\n"
    "----> 3 convert_int8_model_to_inference_mode(int8_model)\n"
    "AttributeError: module 'triton.language' has no attribute 'libdevice'")

# ---------------------------------------------------------------- libtriton.pyd and stale MSVC runtime DLLs (Windows)
DLL = ("libtriton.pyd's DLL initialisation fails because older vcruntime140/msvcp140 copies beside python.exe are loaded "
       "first (dlltracer shows them); the fix is removing them / a current MSVC redistributable")
add("libtriton-dll-stale-msvc-runtime", "woct0rdho/triton-windows#27", "job:triton-windows-import",
    DLL + " (copied into the venv by hand; German Windows)",
    "  File \"[...]\\.venv\\lib\\site-packages\\triton\\backends\\amd\\compiler.py\", line 2, in <module>\n"
    "    from triton._C.libtriton import ir, passes, llvm, amd\n"
    "ImportError: DLL load failed while importing libtriton: Eine DLL-Initialisierungsroutine ist fehlgeschlagen.")
add("libtriton-dll-stale-msvc-runtime", "woct0rdho/triton-windows#58", "job:comfyui-torch-compile-node",
    DLL + " (ComfyUI portable: the DLLs in python_embeded)",
    "!!! Exception during processing !!! backend='inductor' raised:\n"
    "ImportError: DLL load failed while importing libtriton: A dynamic link library (DLL) initialization routine failed.")

# ---------------------------------------------------------------- torch wheel without sm_120 kernels (RTX 50xx)
SM120 = ("the installed torch wheel has no kernels for sm_120 (RTX 5090); the fix is a cu128 (or newer) torch build; "
         "the warning and the 'no kernel image' error are the same fault")
add("torch-wheel-without-sm120", "FlyMyAI/flymyai-lora-trainer#47", "job:flymyai-lora-train", SM120 + " (the warning only)",
    "VIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
    "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n"
    "If you want to use the NVIDIA GeForce RTX 5090 GPU with PyTorch, please check the instructions at "
    "https://pytorch.org/get-started/locally/")
add("torch-wheel-without-sm120", "Janrupf/stable-diffusion-webui-nix#9", "job:sd-webui-forge-generate",
    SM120 + " (the error the warning announced, in journald's shape)",
    "Oct 04 15:02:41 host sd-webui-forge-start[394]: RuntimeError: CUDA error: no kernel image is available for execution "
    "on the device\nOct 04 15:02:41 host sd-webui-forge-start[394]: CUDA kernel errors might be asynchronously reported at "
    "some other API call, so the stacktrace below might be incorrect.\n"
    "Oct 04 15:02:41 host sd-webui-forge-start[394]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1.")
add("torch-wheel-without-sm120", "pytorch/pytorch#167244", "job:falcon3-inference-5090",
    SM120 + " (a cu124 nightly; the error first, then the warning)",
    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
    "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.")

# ---------------------------------------------------------------- inductor finds no working triton
NOTRI = ("torch.compile's inductor finds no usable triton (none installed, or one too old for torch); the fix is a "
         "triton (triton-windows on Windows) matching torch")
add("inductor-no-working-triton", "lum3on/comfyui_HiDream-Sampler#7", "job:comfyui-hidream-sampler",
    NOTRI + " (triton 3.1 under torch 2.6: 'install 3.2 fixed the issue')",
    "HiDreamSampler\nbackend='inductor' raised:\nRuntimeError: Cannot find a working triton installation. Either the "
    "package is not installed or it is too old. More information on installing Triton can be found at "
    "https://github.com/openai/triton")
add("inductor-no-working-triton", "kijai/ComfyUI-WanVideoWrapper#92", "job:comfyui-wanvideo-sampler",
    NOTRI + " (the thread: 'you haven't installed Triton')",
    "WanVideoSampler\nbackend='inductor' raised:\nRuntimeError: Cannot find a working triton installation. Either the "
    "package is not installed or it is too old. More information on installing Triton can be found at "
    "https://github.com/openai/triton\n\nSet TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information")
add("inductor-no-working-triton", "kijai/ComfyUI-WanVideoWrapper#148", "job:comfyui-wanvideo-sampler",
    NOTRI + " (an older torch's shorter wording; the reporter asks how to install triton on Windows)",
    "> WanVideoSampler\nbackend='inductor' raised:\nRuntimeError: Cannot find a working triton installation. More "
    "information on installing Triton can be found at https://github.com/openai/triton")

# ---------------------------------------------------------------- no triton wheel for the platform (same words, three causes)
PIPWIN = "PyPI had no triton wheel for Windows; the fix is a Windows build (triton-windows) or dropping the pin"
add("pip-no-triton-wheel-windows", "bytedance/LatentSync#55", "job:latentsync-install", PIPWIN + " (PowerShell)",
    "PS C:\\Github\\LatentSync> miniconda3/python.exe -m pip install triton==2.2.0\n"
    "ERROR: Could not find a version that satisfies the requirement triton==2.2.0 (from versions: none)\n"
    "ERROR: No matching distribution found for triton==2.2.0")
add("pip-no-triton-wheel-windows", "wenhaochai/StableVideo#11", "job:stablevideo-install",
    PIPWIN + " (the maintainer: 'it seems happen only on windows')",
    "ERROR: Could not find a version that satisfies the requirement triton==2.0.0 (from versions: none)\n"
    "ERROR: No matching distribution found for triton==2.0.0")
add("pip-no-triton-wheel-windows", "Facico/Chinese-Vicuna#135", "job:chinese-vicuna-install",
    PIPWIN + " (the thread: no triton on Windows, a prebuilt wheel)",
    "ERROR: Could not find a version that satisfies the requirement triton==2.0.0 (from versions: none)\n"
    "ERROR: No matching distribution found for triton==2.0.0")
add("pip-no-triton-wheel-aarch64", "JCruan519/VM-UNet#59", "job:vm-unet-install",
    "the same words on Linux aarch64 (no triton 2.0.0 wheel for that architecture): another fix (a build for aarch64)",
    "ERROR: Could not find a version that satisfies the requirement triton==2.0.0 (from versions: none)\n"
    "ERROR: No matching distribution found for triton==2.0.0\nMy system is Linux_arch64")
add("pip-triton-pin-too-old-for-python", "ufal/SimulStreaming#30", "job:simulstreaming-install",
    "the same words under Python 3.13 with a triton<3 pin: wheels exist, none of 2.x for 3.13 — the fix is the pin",
    "ERROR: Could not find a version that satisfies the requirement triton<3,>=2.0.0 (from versions: 3.2.0, 3.3.0, "
    "3.3.1, 3.4.0, 3.5.0, 3.5.1, 3.6.0)\nERROR: No matching distribution found for triton<3,>=2.0.0")

# ---------------------------------------------------------------- CPU-only torch on an NVIDIA machine (two wordings)
CPUT = ("a CPU-only torch is installed on a machine with an NVIDIA GPU; the fix is the CUDA build of torch (xformers' "
        "'you have …+cpu' and torch's own assertion say the same)")
add("cpu-only-torch-installed", "open-mmlab/PIA#30", "job:pia-inference",
    CPUT + " (the maintainer: 'your pytorch is the cpu one')",
    "(pia) PS E:\\PIA> python inference.py --config=example/config/majic_girl.yaml\n"
    "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
    "    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.2+cpu)")
add("cpu-only-torch-installed", "facebookresearch/xformers#982", "job:xformers-info", CPUT + " (python -m xformers.info)",
    "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
    "    PyTorch 2.2.0+cu121 with CUDA 1201 (you have 2.2.0+cpu)\n    Python  3.11.7 (you have 3.11.0)\n"
    "  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)")
add("cpu-only-torch-installed", "invoke-ai/InvokeAI#4788", "job:invokeai-launch", CPUT + " (with InvokeAI's log line after it)",
    "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
    "    PyTorch 2.0.1+cu118 with CUDA 1108 (you have 2.0.1+cpu)\n    Python  3.10.11 (you have 3.10.11)\n"
    "[2023-10-05 01:21:25,831]::[InvokeAI]::INFO --> Patchmatch initialized")
add("cpu-only-torch-installed", "facebookresearch/detectron2#460", "job:detectron2-demo",
    CPUT + " (torch's own assertion; the maintainer: 'a pytorch installation issue')",
    "  File \"/home/user/anaconda3/envs/tf-gpu/lib/python3.7/site-packages/torch/cuda/__init__.py\", line 95, in "
    "_check_driver\n    raise AssertionError(\"Torch not compiled with CUDA enabled\")\n"
    "AssertionError: Torch not compiled with CUDA enabled")
add("cuda-device-without-cuda-gpu", "karpathy/nanoGPT#281", "job:nanogpt-train",
    "the same assertion on a machine with no CUDA GPU: the fix is device='cpu' in the script (the thread) — another fix",
    "AssertionError: Torch not compiled with CUDA enabled")
add("xpu-test-hardcodes-cuda", "intel/intel-xpu-backend-for-triton#2404",
    "inductor/test_triton_kernels.py::CustomOpTests::test_autotune_unbacked",
    "the same assertion from an inductor test that hard-codes device='cuda' on XPU: fixed in the test (pytorch#137189)",
    "  File \"/runner/_work/intel-xpu-backend-for-triton/intel-xpu-backend-for-triton/pytorch/test/inductor/"
    "test_triton_kernels.py\", line 2913, in test_autotune_unbacked\n    x = torch.randn(M, K, device=\"cuda\")\n"
    "  File \"/opt/hostedtoolcache/Python/3.9.20/x64/lib/python3.9/site-packages/torch/cuda/__init__.py\", line 310, in "
    "_lazy_init\n    raise AssertionError(\"Torch not compiled with CUDA enabled\")\n"
    "AssertionError: Torch not compiled with CUDA enabled")

# ---------------------------------------------------------------- xformers built for another CUDA torch
XFV = ("xformers was built for another torch version than the installed CUDA torch; the fix is the xformers wheel for "
       "that torch (or the torch xformers wants)")
add("xformers-built-for-other-torch", "deforum/deforum-stable-diffusion#377", "job:deforum-launch", XFV + " (2.2.0 vs 2.3.0)",
    "xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
    "    PyTorch 2.2.0+cu121 with CUDA 1201 (you have 2.3.0+cu121)\n    Python  3.10.13 (you have 3.10.12)")
add("xformers-built-for-other-torch", "Engineer-of-Stuff/stable-diffusion-paperspace#111", "job:sd-paperspace-webui",
    XFV + " (2.1.0+cu121 vs 2.0.1+cu118)",
    "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
    "PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.0.1+cu118)\nPython  3.10.13 (you have 3.10.10)\n\n"
    "Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)")
add("xformers-built-for-other-torch", "TheLastBen/fast-stable-diffusion#2672", "job:a1111-webui-launch",
    XFV + " (2.0.1+cu118 vs 2.1.0+cu121, through the logging module's prefix)",
    "WARNING:xformers:WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
    "    PyTorch 2.0.1+cu118 with CUDA 1108 (you have 2.1.0+cu121)")

# ---------------------------------------------------------------- vLLM's _C built for another torch (labelled per symbol)
VTD = "vLLM 0.3's _C was built for torch 2.1 and misses at::_ops::to_dtype_layout under torch 2.2; the fix is torch 2.1.x"
add("vllm-c-to-dtype-layout-torch22", "vllm-project/vllm#3147", "job:vllm-langchain",
    VTD + " ('solved by downgrading torch to 2.1.2')",
    "ImportError: /usr/local/lib/python3.10/dist-packages/vllm/_C.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
    "_ZN2at4_ops15to_dtype_layout4callERKNS_6TensorEN3c108optionalINS5_10ScalarTypeEEENS6_INS5_6LayoutEEENS6_INS5_"
    "6DeviceEEENS6_IbEEbbNS6_INS5_12MemoryFormatEEE")
add("vllm-c-to-dtype-layout-torch22", "vllm-project/vllm#3528", "job:vllm-import",
    VTD + " (the title, cut by GitHub; 'downgrade the torch version to torch==2.1.1')",
    "ImportError: /usr/local/lib/python3.10/dist-packages/vllm/_C.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
    "_ZN2at4_ops15to_dtype_layout4callERKNS_6TensorEN3c108optionalINS5_10ScalarTypeEEENS6_INS")
add("vllm-c-torch-library-optional", "vllm-project/vllm#5501", "job:vllm-import",
    "another symbol (torch::Library with std::optional): a vLLM built for torch 2.3 under an older torch — another pair",
    "WARNING 06-13 11:42:20 _custom_ops.py:11] Failed to import from vllm._C with ImportError('/usr/local/lib/python3.8/"
    "dist-packages/vllm/_C.abi3.so: undefined symbol: _ZN5torch7LibraryC1ENS0_4KindESsSt8optionalIN3c1011DispatchKey"
    "EEPKcj')")

# ---------------------------------------------------------------- triton cannot find libcuda.so
LIBCUDA = ("triton 2.1 looks for a file named libcuda.so (ldconfig) and finds none (Colab: only in LD_LIBRARY_PATH, or "
           "only libcuda.so.1); the fix is a findable libcuda.so (symlink, or a triton that also searches there)")
add("triton-libcuda-so-not-found", "jianfch/stable-ts#259", "job:stable-ts-transcribe-colab", LIBCUDA + " (Colab)",
    "[/usr/local/lib/python3.10/dist-packages/triton/common/build.py](https://localhost:8080/#) in libcuda_dirs()\n"
    "     29         msg += 'Please create a symlink of libcuda.so to any of the file.'\n"
    "---> 30     assert any(os.path.exists(os.path.join(path, 'libcuda.so')) for path in dirs), msg\n"
    "     31     return dirs\n\nAssertionError: libcuda.so cannot found!")
add("triton-libcuda-so-not-found", "state-spaces/mamba#14", "job:mamba-colab-v100", LIBCUDA + " (Colab, mamba's layernorm kernel)",
    "[/usr/local/lib/python3.10/dist-packages/mamba_ssm/ops/triton/layernorm.py](https://localhost:8080/#) in "
    "_layer_norm_fwd(x, weight, bias, eps, residual, out_dtype, residual_dtype, is_rms_norm)\n"
    "    155         _layer_norm_fwd_1pass_kernel[(M,)](\nAssertionError: libcuda.so cannot found!")
add("triton-libcuda-so-not-found", "hustvl/Vim#130", "job:vim-train", LIBCUDA + " (no root to make the symlink)",
    "assert any(os.path.exists(os.path.join(path, 'libcuda.so')) for path in dirs), msg AssertionError: libcuda.so "
    "cannot found!")

# ---------------------------------------------------------------- shared memory over the limit
OOR = "a kernel config needing more shared memory than the GPU has; the fix is a smaller block or fewer num_stages"
add("oor-shared-memory", "thunlp/InfLLM#7", "job:infllm-chat", OOR + " (101376 bytes: an A100/3090-class limit)",
    "OutOfResources: out of resource: shared memory, Required: 151680, Hardware limit: 101376.")
add("oor-shared-memory", "sgl-project/sglang#2847", "job:sglang-mla-a10", OOR + " (MLA with a larger head dim on A10)",
    "\"triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 106496, Hardware limit: 101376. "
    "Reducing block sizes or `num_stages` may help.\"")
add("oor-shared-memory", "sgl-project/sglang#6001", "job:sglang-deepseek-r1-mi308",
    OOR + " (AMD MI308, 64 KiB LDS; the log is not in the report, its title is)",
    "[Bug] OutOfResources: out of resource: shared memory, Required: 196608, Hardware limit: 65536 when run deepseek-r1 "
    "on sglang 0.4.6 with AMD Mi308")

# ---------------------------------------------------------------- illegal memory access: one fault per report
add("illegal-address-sglang-fp8-quant", "sgl-project/sglang#17274", "job:sglang-deepseek-r1-0528",
    "an illegal address in sglang's per-token-group fp8 quant kernel (DeepSeek R1 0528): that report's kernel (the "
    "container log's frames, then the error as the title gives it)",
    "2026-01-17T18:48:10.418492732+01:00 stderr F     a_q, a_sf = per_token_group_quant_fp8(\n"
    "2026-01-17T18:48:10.418509818+01:00 stderr F     _per_token_group_quant_8bit[(M,)](\n"
    "2026-01-17T18:48:10.418562021+01:00 stderr F   File \"/usr/local/lib/python3.12/dist-packages/triton/runtime/jit.py\", "
    "line 757, in run\n"
    "Triton Error [CUDA]: an illegal memory access was encountered")
add("illegal-address-lightning-attn-backward", "OpenNLPLab/lightning-attention#19", "job:megatron-lightning-attn-h20",
    "an illegal address in lightning attention's backward inside Megatron on H20: its own fault",
    "  File \"/home/Megatron/megatron/core/pipeline_parallel/schedules.py\", line 142, in custom_backward\n"
    "    Variable._execution_engine.run_backward(\n"
    "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered")

# ---------------------------------------------------------------- bare pass failures: one fault per report
add("mlir-pipeline-modelscope-5090d", "modelscope/modelscope#1289", "job:modelscope-finetune-5090d",
    "a bare pipeline failure on an RTX 5090D with a torch nightly (only at batch size >= 4): that report's own",
    "error: Failures have been detected while processing an MLIR pass pipeline")
add("mlir-accelerate-matmul-sm121-block-scaled", "triton-lang/triton#8546", "job:triton-tutorial-block-scaled-matmul",
    "TritonGPUAccelerateMatmul fails for the block-scaled matmul tutorial on sm_121: that pass and GPU",
    "/home/user/ai/./triton/python/tutorials/10-block-scaled-matmul.py:106:0: error: Failures have been detected while "
    "processing an MLIR pass pipeline\n/home/user/ai/./triton/python/tutorials/10-block-scaled-matmul.py:106:0: note: "
    "Pipeline failed while executing [`TritonGPUAccelerateMatmul` on 'builtin.module' operation]: reproducer generated at "
    "`std::errs, please share the reproducer above with Triton project.`")
add("mlir-to-llvm-dot-scaled-fp16-mxfp-sm120", "triton-lang/triton#9558", "job:triton-dot-scaled-sm120",
    "ConvertTritonGPUToLLVM fails for tl.dot_scaled fp16 @ mxfp on sm_120, bisected to one commit: another fault",
    "<ipython-input-13-759611f06b58>:6:0: error: Failures have been detected while processing an MLIR pass pipeline\n"
    "<ipython-input-13-759611f06b58>:6:0: note: Pipeline failed while executing [`ConvertTritonGPUToLLVM` on "
    "'builtin.module' operation]: reproducer generated at `std::errs, please share the reproducer above with Triton project.`")

# ---------------------------------------------------------------- mma16816 (same words, two causes)
add("mma16816-bitpacked-dot-in-loop", "triton-lang/triton#4922", "job:triton-bitpacked-gemm",
    "tl.dot on bitpacked data unpacked inside a loop on Ampere/Hopper with triton 3.1 (a triton fix is pointed at): that kernel",
    "The latest Triton build (3.1.0) throws the following error when using bitpacked data inside a loop with `tl.dot`:\n"
    "LLVM ERROR: mma16816 data type not supported")
add("mma16816-jax-xla-scan", "kmheckel/spyx#31", "job:spyx-jax-train",
    "the same words from JAX: XLA's own GPU compilation of a scan, not a triton kernel of this fork — another fix",
    "Finished tracing + transforming unpackbits for pjit in 0.009809017181396484 sec\n"
    "Finished tracing + transforming dot for pjit in 0.0012443065643310547 sec\n"
    "LLVM ERROR: mma16816 data type not supported")

# ---------------------------------------------------------------- hangs: one fault per report
add("hang-inductor-argmax-topological-sort", "pytorch/pytorch#96662", "job:torch-compile-argmax-max",
    "torch.compile never finishes compiling an argmax/max graph: triton spins in mlir::multiRootTopologicalSort",
    "  58.03%  libtriton.so                    [.] mlir::multiRootTopologicalSort\n"
    "  16.37%  libtriton.so                    [.] llvm::DenseMap<mlir::Operation*, llvm::detail::DenseSetEmpty\n"
    "  12.57%  libtriton.so                    [.] mlir::(anonymous namespace)::DFSState::addToReadyQueue")
add("hang-sglang-jit-compile-deadlock", "sgl-project/sglang#24588", "job:sglang-deepseek-eagle",
    "a triton JIT compile deadlocks the scheduler until the watchdog fires (py-spy dump): that job's own",
    "Thread 2897 (active): \"MainThread\"\n    __call__ (torch/_ops.py:841)\n"
    "    sgl_per_token_group_quant_8bit (sgl_kernel/gemm.py:118)\n"
    "    sglang_per_token_group_quant_fp8 (quantization/fp8_kernel.py:515)")

# ---------------------------------------------------------------- numerical mismatches: one fault per report
add("mismatch-liger-flce-xpu-machine", "intel/intel-xpu-backend-for-triton#3237",
    "test/transformers/test_fused_linear_cross_entropy.py::test_correctness",
    "liger-kernel's fused linear cross entropy mismatches on one PVC CI machine only: that machine",
    ">           raise AssertionError(\"\\n\".join(mismatch_details))\n"
    "E           AssertionError: Number of mismatched elements: 758364\n"
    "E           Mismatch at index (1792, 0): tensor1[(1792, 0)] = 1.843913742050063e-05, tensor2[(1792, 0)] = "
    "5.113658829714041e-09")
add("mismatch-liger-rocm-num-warps", "linkedin/Liger-Kernel#326", "test/transformers/test_jsd.py::test_correctness_with_beta",
    "liger-kernel's tests on ROCm before num_warps was picked per platform (the pull request fixes it): that change",
    "FAILED test/transformers/test_jsd.py::test_correctness_with_beta[0.1-dtype1-1e-08-1e-06-1-4096-128256] - "
    "AssertionError: Number of mismatched elements: 1\n"
    "Mismatch at index (): tensor1[()] = 0.08055037260055542, tensor2[()] = 0.08055023849010468")

# ---------------------------------------------------------------- build and link errors: one fault per build
add("build-triton-llvm-opt-missing-llvmanalysis", "triton-lang/triton#2880", "job:triton-build-from-source",
    "triton-llvm-opt not linked against LLVMAnalysis (the pull request adds it): that build rule",
    "      ld.lld: error: undefined symbol: llvm::AnalysisManager<llvm::Loop, llvm::LoopStandardAnalysisResults&>::"
    "AnalysisManager()\n      >>> referenced by triton-llvm-opt.cpp:47 (/home/user/work/triton/bin/triton-llvm-opt.cpp:47)")
add("build-triton-missing-libtinfo", "triton-lang/triton#171", "job:triton-build-from-source-ngc",
    "an old source build in the NGC container without system LLVM: -ltinfo missing (installing llvm fixed it)",
    "/usr/bin/ld: cannot find -ltinfo")


__all__ = ["F", "add", "records", "render"]

if __name__ == "__main__":
    _SET.write(HERE / "fresh3.jsonl")
