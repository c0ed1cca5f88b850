"""Builds ``fresh5.jsonl``: a sixth, wholly held-out set of real failure texts from public reports,
none of them a source of ``wild.jsonl``, ``labelled.jsonl``, ``holdout.jsonl`` or ``fresh.jsonl`` …
``fresh4.jsonl`` (checked against their ``source`` fields and the issue links inside their texts),
labelled by root cause *before* any signature code was run on them.
Regenerate with ``python tests/data/triage/make_fresh5.py`` (deterministic).

It exists to measure grouping honestly after the tuning round that uses ``fresh4.jsonl`` and the
older sets: the labels were written and committed before the first measurement, and the signature
and normaliser code is never tuned on this file (``bench/bench_triage.py --fresh5`` only reports
figures). The whole file is held out: there is no tuning split.

Its reports come from the backends a fork of Triton meets beside NVIDIA's — Intel's XPU backend
(Level Zero errors by code), ROCm (HIP's runtime errors, no code object for the GPU) — and from
what a nightly's harness meets: PyTorch's c10d tests on a port another process took, PyPI timing
out, a full disk, a proxy refusing the index, Python's headers missing where triton builds its
launcher (gcc, MSVC, TinyCC; ``Python.h`` or ``pyconfig.h``), and toolchains older than the GPU.

Labelling rule (the same as ``make_wild.py``'s and the other fresh sets'):

* **Same label = same fix.** Two texts carry the same label when one change would fix both, as
  the reports (their comments, a linked duplicate or the fix) show.
* A message that names the fault specifically is one root cause across reports when the reports
  agree on the cause and the fix is one change of the same kind: a c10d test's TCPStore on a port
  another process took (tests take a free port and retry, pytorch/pytorch#12782, #13911); PyPI
  timing out (retry); the runner's disk full (free space); a HIP binary without a code object for
  the GPU's gfx target (build for it, or ``HSA_OVERRIDE_GFX_VERSION`` where a sibling target runs);
  a kernel's tiles over the GPU's shared memory (smaller blocks or stages); Python's headers missing
  where triton compiles its launcher (install them, or the embedded Python's ``include``); a triton
  whose ptxas/LLVM predates sm_120 (a newer triton); ``libtriton``'s DLL initialisation failing on
  Windows (stale MSVC runtime DLLs beside Python); Level Zero's ``0x78000011`` on Battlemage under
  Windows where one report says it re-creates the other. Different words for one cause keep the
  label (``Python.h`` and ``pyconfig.h``; gcc's, MSVC's and TinyCC's lines; ``ReadTimeoutError`` as
  a raise line or as pip's exception), and the same words for another cause get another label.
* A message that says nothing about where or why — a Level Zero or HIP error code (``0x78000011``,
  ``0x70000004``, ``invalid argument``), ``device kernel image is invalid`` — is one root cause per
  report (the fix is in that report's kernel, driver or build), even when the words are identical,
  unless the reports agree on one fix.
* Texts of one report in several shapes share the report's label.

Caveat: the person who collected and labelled this set had read ``fresh4.jsonl``'s misses (listed
in docs/triage.md) before collecting; two of its causes (the c10d port, PyPI timing out) are also
causes of ``fresh4.jsonl``, reported here by other reports in other wordings.

Each record: ``id``, ``fault`` (the label), ``source`` (``owner/repo#N``), ``test`` (the test the
report names; where it names none, ``job:<project>-<what ran>``), ``shape`` (``real``: the
report's own text, excerpted; ``derived-…``: that text put through a log shape a nightly meets,
built by ``heldout_set.py``), ``why`` (the labelling reason) and ``text``. Where a report's title
holds the message its excerpt was cut before, the message is the title's, said in ``why``.

Personal data removed: user names in paths → ``user``, home folders → ``/home/user``; no e-mail.
Texts are short excerpts of the error lines (fair use), not whole logs.
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


# ---------------------------------------------------------------- flaky: c10d's TCPStore on a port already taken
PORT = ("flaky: a c10d test binds its TCPStore to a port another process took between find_free_port() and the bind; "
        "the fix is in the tests (a free port, a retry: pytorch/pytorch#12782, #13911)")
add("flaky-c10d-tcpstore-port-in-use", "pytorch/pytorch#55053",
    "distributed/test_jit_c10d.py::test_init_process_group_nccl_as_base_process_group_torchbind",
    PORT + " (CircleCI's timestamped log)",
    "Mar 31 05:50:43 Traceback (most recent call last):\n"
    "Mar 31 05:50:43   File \"distributed/test_jit_c10d.py\", line 101, in "
    "test_init_process_group_nccl_as_base_process_group_torchbind\n"
    "Mar 31 05:50:43     self._create_nccl_pg_as_base_process_group(name)\n"
    "Mar 31 05:50:43   File \"distributed/test_jit_c10d.py\", line 68, in _create_nccl_pg_as_base_process_group\n"
    "Mar 31 05:50:43     tcp_store = _create_tcp_store()\n"
    "Mar 31 05:50:43   File \"distributed/test_jit_c10d.py\", line 40, in _create_tcp_store\n"
    "Mar 31 05:50:43     return torch.classes.dist_c10d.TCPStore(addr, port, 1, True, timeout_millisecond)\n"
    "Mar 31 05:50:43 RuntimeError: Address already in use")
add("flaky-c10d-tcpstore-port-in-use", "pytorch/pytorch#59441",
    "distributed/test_jit_c10d.py::test_process_group_nccl_serialization",
    PORT + " (the same helper, in an EasyBuild build's test step)",
    "ERROR: test_process_group_nccl_serialization (__main__.ProcessGroupNCCLJitTest)\n\n"
    "Traceback (most recent call last):\n"
    "  File \"/tmp/eb-nk9KGi/tmpUJ_a1q/lib/python3.8/site-packages/torch/testing/_internal/common_distributed.py\", "
    "line 146, in wrapper\n    return func(*args, **kwargs)\n"
    "  File \"distributed/test_jit_c10d.py\", line 143, in test_process_group_nccl_serialization\n"
    "    pg_nccl = self._create_nccl_pg(\"nccl_process_group_as_module_member\")\n"
    "  File \"distributed/test_jit_c10d.py\", line 60, in _create_nccl_pg\n"
    "    tcp_store = _create_tcp_store()\n"
    "  File \"distributed/test_jit_c10d.py\", line 40, in _create_tcp_store\n"
    "    return torch.classes.dist_c10d.TCPStore(addr, port, 1, True, timeout_millisecond)\n"
    "RuntimeError: Address already in use\n\n"
    "----------------------------------------------------------------------\n"
    "Ran 9 tests in 0.455s\n\nFAILED (errors=1)")
add("flaky-c10d-tcpstore-port-in-use", "pytorch/pytorch#52839",
    "distributed/test_c10d.py::test_multi_worker_with_nonfixed_world_size",
    PORT + " (a TCPStoreTest, disabled as flaky)",
    "Feb 24 07:33:34 ======================================================================\n"
    "Feb 24 07:33:34 ERROR [0.002s]: test_multi_worker_with_nonfixed_world_size (__main__.TCPStoreTest)\n"
    "Feb 24 07:33:34 ----------------------------------------------------------------------\n"
    "Feb 24 07:33:34 Traceback (most recent call last):\n"
    "Feb 24 07:33:34   File \"distributed/test_c10d.py\", line 392, in test_multi_worker_with_nonfixed_world_size\n"
    "Feb 24 07:33:34     server_store = dist.TCPStore(addr, port, is_master=True, timeout=timedelta(seconds=30))\n"
    "Feb 24 07:33:34 RuntimeError: Address already in use\n"
    "Feb 24 07:33:34 \n"
    "Feb 24 07:33:34 ----------------------------------------------------------------------")
add("flaky-c10d-tcpstore-port-in-use", "pytorch/pytorch#13907", "test_c10d.py::test_nominal",
    PORT + " (the env rendezvous's TCPStore, an older test file)",
    "Nov 13 17:26:57 ======================================================================\n"
    "Nov 13 17:26:57 ERROR: test_nominal (__main__.RendezvousEnvTest)\n"
    "Nov 13 17:26:57 ----------------------------------------------------------------------\n"
    "Nov 13 17:26:57 Traceback (most recent call last):\n"
    "Nov 13 17:26:57   File \"test_c10d.py\", line 263, in test_nominal\n"
    "Nov 13 17:26:57     store0, rank0, size0 = next(gen0)\n"
    "Nov 13 17:26:57   File \"/opt/conda/lib/python3.6/site-packages/torch/distributed/rendezvous.py\", line 131, in "
    "_env_rendezvous_handler\n"
    "Nov 13 17:26:57     store = TCPStore(master_addr, master_port, start_daemon)\n"
    "Nov 13 17:26:57 RuntimeError: Address already in use")

# ---------------------------------------------------------------- infra: PyPI timing out
PYPI = "infra: PyPI (files.pythonhosted.org) timed out while pip downloaded; the fix is a retry, not the change"
add("infra-pypi-read-timeout", "pysal/spaghetti#213", "job:spaghetti-travis-install",
    PYPI + " (pip's vendored urllib3 frames ending in the raise line; the report's title names it)",
    "  File \"/home/travis/build/pysal/spaghetti/miniconda/envs/test-env/lib/python3.5/site-packages/pip/_vendor/"
    "urllib3/response.py\", line 401, in read\n"
    "    raise IncompleteRead(self._fp_bytes_read, self.length_remaining)\n"
    "  File \"/home/travis/build/pysal/spaghetti/miniconda/envs/test-env/lib/python3.5/contextlib.py\", line 77, in "
    "__exit__\n    self.gen.throw(type, value, traceback)\n"
    "  File \"/home/travis/build/pysal/spaghetti/miniconda/envs/test-env/lib/python3.5/site-packages/pip/_vendor/"
    "urllib3/response.py\", line 307, in _error_catcher\n"
    "    raise ReadTimeoutError(self._pool, None, 'Read timed out.')")
add("infra-pypi-read-timeout", "HuangCongQing/Python#6", "job:pip-install",
    PYPI + " (the raise line and pip's exception)",
    "   raise ReadTimeoutError(self._pool, None, 'Read timed out.')\n"
    "pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='files.pythonhosted.org', port=443): "
    "Read timed out.")

# ---------------------------------------------------------------- infra: a proxy refusing the package index
add("infra-proxy-forbidden", "triton-lang/triton#1829", "job:triton-nightly-install",
    "infra: the machine's proxy refuses the tunnel to the nightly index (403); the fix is the network's, not triton's",
    "pip install -U --index-url https://aiinfra.pkgs.visualstudio.com/PublicPackages/_packaging/Triton-Nightly/pypi/"
    "simple/ triton-nightly\n"
    "Looking in indexes: https://aiinfra.pkgs.visualstudio.com/PublicPackages/_packaging/Triton-Nightly/pypi/simple/\n"
    "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken "
    "by 'ProxyError('Cannot connect to proxy.', OSError('Tunnel connection failed: 403 Forbidden'))': "
    "/PublicPackages/_packaging/Triton-Nightly/pypi/simple/triton-nightly/\n"
    "WARNING: Retrying (Retry(total=3, connect=None, read=None, redirect=None, status=None)) after connection broken "
    "by 'ProxyError('Cannot connect to proxy.', OSError('Tunnel connection failed: 403 Forbidden'))': "
    "/PublicPackages/_packaging/Triton-Nightly/pypi/simple/triton-nightly/")

# ---------------------------------------------------------------- infra: the disk is full
DISK = "infra: the machine's disk is full; the fix is free disk space, in any wording"
add("infra-disk-full", "bytedance/Dolphin#117", "job:dolphin-online-demo",
    DISK + " (the demo host; the report's whole text)",
    "在线Demo报错OSError: [Errno 28] No space left on device")
add("infra-disk-full", "pymedusa/Medusa#360", "job:medusa-show-refresh",
    DISK + " (Python 2's IOError after the application's own line)",
    "SHOWQUEUE-REFRESH :: [75db5cd] Unable to write image to /media/extssd/Shows/Horizon/season-all-banner.jpg - are "
    "you sure the show folder is writable? error 28 : No space left on device\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/user/SickRage/sickbeard/metadata/generic.py\", line 707, in _write_image\n"
    "    outFile.write(image_data)\n"
    "IOError: [Errno 28] No space left on device")
add("infra-disk-full", "graphnet-team/graphnet#608", "job:graphnet-icetray-unit-tests",
    DISK + " (a CI runner's disk under a large docker image; the message is the PR title's)",
    "OSError: [Errno 28] No space left on device")

# ---------------------------------------------------------------- Level Zero errors by code (Intel XPU backend)
add("ze-0x78000011-bmg-windows-inductor", "intel/intel-xpu-backend-for-triton#3481", "job:hf-models-inductor-xpu",
    "Level Zero 0x78000011 loading inductor's kernels on Battlemage under Windows; #3889 says it re-creates this "
    "one, so one fix",
    "Error during Intel loadBinary: Triton Error [ZE]: 0x78000011\n\n"
    "triton\\backends\\intel\\driver.py\", line 206, in load_binary\n"
    "    return self.shared_library.load_binary(args)\n"
    "RuntimeError: Triton Error [ZE]: 0x78000011")
add("ze-0x78000011-bmg-windows-inductor", "intel/intel-xpu-backend-for-triton#3889", "job:ao-int-scaled-matmul-xpu",
    "Level Zero 0x78000011 on Battlemage under Windows, re-created from #3481 by its reporter (the excerpt is cut "
    "before the last frame)",
    "Error during Intel loadBinary: Triton Error [ZE]: 0x78000011\n\n"
    "Traceback (most recent call last):\n"
    "  File \"F:\\ao\\reproducer.py\", line 143, in <module>\n"
    "    int_scaled_matmul_kernel(a, b, scales1, c, config)\n"
    "  File \"F:\\ao\\reproducer.py\", line 102, in int_scaled_matmul_kernel\n"
    "    scaled_matmul_kernel_with_block_pointers[grid](")
add("ze-0x78000011-driver-regression-pt27", "intel/intel-xpu-backend-for-triton#3916", "job:pt27-inductor-xpu",
    "Level Zero 0x78000011 after a public driver update (PyTorch 2.7 release testing): the driver's regression, "
    "another fix than the other reports of the code",
    "  File \"C:\\Users\\user\\miniforge3\\envs\\pt27_pdt_copy\\lib\\site-packages\\triton\\compiler\\compiler.py\", "
    "line 412, in _init_handles\n"
    "    self.module, self.function, self.n_regs, self.n_spills = driver.active.utils.load_binary(\n"
    "  File \"C:\\Users\\user\\miniforge3\\envs\\pt27_pdt_copy\\lib\\site-packages\\triton\\backends\\intel\\driver.py\", "
    "line 208, in load_binary\n"
    "    return self.shared_library.load_binary(args)\n"
    "torch._inductor.exc.InductorError: RuntimeError: Triton Error [ZE]: 0x78000011")
add("ze-0x78000011-a770-persistent-matmul", "intel/intel-xpu-backend-for-triton#4434", "job:tutorial-09-persistent-matmul",
    "Level Zero 0x78000011 from one tutorial on A770 (skip-listed there): a code that says nothing about why, one "
    "cause per report",
    "    return self.shared_library.load_binary(args)\nRuntimeError: Triton Error [ZE]: 0x78000011")
add("ze-0x78000011-vllm-rejection-sampler", "intel/intel-xpu-backend-for-triton#3777", "job:vllm-spec-decode-xpu",
    "Level Zero 0x78000011 from vLLM's rejection sampler on Ubuntu 22.04: one cause per report; the frames are the "
    "report's, the message its title's",
    "ERROR 03-27 11:38:51 [core.py:343]   File \"/workspace/vllm-13/vllm/v1/sample/rejection_sampler.py\", line 406, "
    "in sample_recovered_tokens\n"
    "ERROR 03-27 11:38:51 [core.py:343]     sample_recovered_tokens_kernel[(batch_size, max_spec_len)](\n"
    "RuntimeError: Triton Error [ZE]: 0x78000011")
add("ze-0x70000004-a770-dot-int8", "intel/intel-xpu-backend-for-triton#1689", "language/test_core.py::test_dot",
    "Level Zero 0x70000004 for int8 test_dot cases on A770 in a nightly: one cause per report",
    "FAILED language/test_core.py::test_dot[1-64-128-128-4-True-True-none-tf32-int8-int8-1_0] - RuntimeError: Triton "
    "Error [ZE]: 0x70000004\n"
    "FAILED language/test_core.py::test_dot[1-64-128-128-4-True-True-none-tf32-int8-int8-1_1] - RuntimeError: Triton "
    "Error [ZE]: 0x70000004\n"
    "= 4 failed, 9479 passed, 22 skipped, 1258 xfailed, 168 warnings in 842.37s (0:14:02) =")
add("ze-0x70000004-a770-atomic-rmw-fp64", "intel/intel-xpu-backend-for-triton#1548",
    "language/test_core.py::test_tensor_atomic_rmw",
    "Level Zero 0x70000004 for float64 atomics on A770 in a nightly: another test, dtype and fix than #1689's",
    "FAILED language/test_core.py::test_tensor_atomic_rmw[shape3-0-1-float64] - RuntimeError: Triton Error [ZE]: "
    "0x70000004\n"
    "FAILED language/test_core.py::test_tensor_atomic_rmw[shape7-1-1-float64] - RuntimeError: Triton Error [ZE]: "
    "0x70000004\n"
    "FAILED language/test_core.py::test_tensor_atomic_rmw[shape11-0-1-float64] - RuntimeError: Triton Error [ZE]: "
    "0x70000004")
add("ze-invalid-kernel-name-fp8-block-mm", "intel/intel-xpu-backend-for-triton#6027", "job:vllm-fp8-block-mm-xpu",
    "Level Zero names no kernel of that name in vLLM's fp8 block-scaled matmul binary: one report",
    "(EngineCore_DP0 pid=8084) WARNING 02-02 07:13:14 [_logger.py:68] Using default W8A8 Block FP8 kernel config. "
    "Performance might be sub-optimal!\n"
    "Error during Intel loadBinary: ZE_RESULT_ERROR_INVALID_KERNEL_NAME")

# ---------------------------------------------------------------- HIP runtime errors (generic, one cause per report)
add("hip-invalid-argument-unsloth", "ROCm/triton#552", "job:unsloth-finetune-rocm",
    "HIP's invalid argument from a triton launch under unsloth: a generic runtime error, one cause per report",
    "RuntimeError: Triton Error [HIP]:  Code: 1, Messsage: invalid argument\n\n"
    "The above exception was the direct cause of the following exception:\n\n"
    "Traceback (most recent call last):\n"
    "  File \"/app/model/finetune.py\", line 97, in <module>\n"
    "    trainer_stats = trainer.train()")
add("hip-invalid-argument-mmfreelm-vega", "triton-lang/triton#4128", "job:mmfreelm-generate-rocm",
    "HIP's invalid argument on a Radeon RX Vega (warp size guessed from the name): one cause per report; the warning "
    "is the report's, the message its title's",
    "/home/matmulfreellm/mmfreelm/modules/layernorm.py:111: UserWarning: 'torch._C._CudaDeviceProperties' object has "
    "no attribute 'gcnArchName', warp size set to 32 based on device name: Radeon RX Vega\n"
    "  warnings.warn(f\"{e}, warp size set to {warp_size} based on device name: {device_name}\", UserWarning)\n"
    "RuntimeError: Triton Error [HIP]: Code: 1, Messsage: invalid argument")
add("hip-invalid-argument-comfyui-windows", "ROCm/TheRock#2707", "job:comfyui-rocm-windows",
    "torch's HIP invalid argument in ComfyUI on a Windows ROCm build: one cause per report",
    "!!! Exception during processing !!! HIP error: invalid argument\n"
    "Search for `hipErrorInvalidValue' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__HIPRT__TYPES.html for "
    "more information.\n"
    "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
    "incorrect.\n"
    "For debugging consider passing AMD_SERIALIZE_KERNEL=3\n"
    "Compile with `TORCH_USE_HIP_DSA` to enable device-side assertions.")
add("hip-kernel-image-invalid-device-assert", "pytorch/pytorch#99725", "job:inductor-device-assert-rocm",
    "HIP's device kernel image is invalid for kernels with tl.device_assert under ROCm CI: one report; the title's "
    "words",
    "RuntimeError: Triton Error [HIP]: Code: 200, Messsage: device kernel image is invalid")

# ---------------------------------------------------------------- ROCm: no code object for the GPU
NOBIN = ("the HIP binary has no code object for the GPU's gfx target (a consumer or APU GPU outside the build's "
         "targets); the fix is a build for that target, or HSA_OVERRIDE_GFX_VERSION where a sibling target runs")
add("rocm-no-code-object-for-gpu", "ROCm/tensorflow-upstream#1800", "job:tensorflow-rocm",
    NOBIN + " (the title's quoted words; the answer: HSA_OVERRIDE_GFX_VERSION=10.3.0)",
    "\"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\"")
add("rocm-no-code-object-for-gpu", "ROCm/legacy-rocm-build#1525", "job:rocm-app-gfx1012",
    NOBIN + " (gfx1012, outside ROCm's targets then)",
    "ERROR：\"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\"")
add("rocm-no-code-object-for-gpu", "pytorch/pytorch#73534", "job:pytorch-rocm-import",
    NOBIN + " (an APU's gfx902:xnack+, outside the wheel's targets)",
    "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!")

# ---------------------------------------------------------------- shared memory over the GPU's limit
SMEM = ("a kernel's tiles need more shared memory than the GPU has; the fix is smaller blocks or fewer stages for "
        "that GPU (precedent: the earlier sets label this one cause across kernels)")
add("triton-shared-memory-out-of-resources", "vllm-project/vllm#11584", "job:vllm-prefix-prefill-p40",
    SMEM + " (Pascal's 48 KiB)",
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 65536, Hardware limit: 49152. "
    "Reducing block sizes or `num_stages` may help.")
add("triton-shared-memory-out-of-resources", "helicalAI/helical#234", "job:transcriptformer-finetune",
    SMEM + " (an A6000 below the H100's limit)",
    "OutOfResources: out of resource: shared memory, Required: 147456, Hardware limit: 101376. Reducing block sizes "
    "or `num_stages` may help.")

# ---------------------------------------------------------------- Python's headers missing for triton's launcher
PYH = ("triton compiles its launcher against Python's headers, which this Python lacks (an embedded Windows Python "
       "without include/, a Linux Python without python3-dev); the fix is the headers, in any compiler's words")
add("python-headers-missing", "woct0rdho/triton-windows#113", "job:framepack-test-triton",
    PYH + " (TinyCC: Python.h)",
    "D:\\AI\\FramePack\\framepack_cu126_torch26\\framepack_cu126_torch26\\system\\python\\lib\\site-packages\\triton\\"
    "windows_utils.py:315: UserWarning: Failed to find Python libs.\n"
    "  warnings.warn(\"Failed to find Python libs.\")\n"
    "C:/Users/user/AppData/Local/Temp/tmptw09ntof/cuda_utils.c:14: error: include file 'Python.h' not found")
add("python-headers-missing", "woct0rdho/triton-windows#96", "job:comfyui-test-triton",
    PYH + " (TinyCC: Python.h found, its pyconfig.h not — the same incomplete include/)",
    "E:\\Comfy_UI\\ComfyUI_windows_portable\\python_embeded\\Lib\\site-packages\\triton\\windows_utils.py:254: "
    "UserWarning: Failed to find Python libs.\n"
    "  warnings.warn(\"Failed to find Python libs.\")\n"
    "In file included from C:/Users/user/AppData/Local/Temp/tmpcf9ftjcn/cuda_utils.c:13:\n"
    "E:/Comfy_UI/ComfyUI_windows_portable/python_embeded/Include/Python.h:12: error: include file 'pyconfig.h' not "
    "found")
add("python-headers-missing", "lum3on/comfyui_HiDream-Sampler#52", "job:comfyui-hidream-sampler",
    PYH + " (MSVC's C1083; the title's words)",
    "fatal error C1083: Cannot open include file: 'Python.h': No such file or directory !!! ERROR during execution")
add("python-headers-missing", "gensyn-ai/rl-swarm#226", "job:rl-swarm-node",
    PYH + " (gcc, importing bitsandbytes' triton modules)",
    "/tmp/tmpltteoigt/main.c:5:10: fatal error: Python.h: No such file or directory\n"
    "    5 | #include <Python.h>\n"
    "      |          ^~~~~~~~~~\n"
    "compilation terminated.")

# ---------------------------------------------------------------- a triton older than sm_120
SM120 = ("triton's bundled LLVM and ptxas predate sm_120 (RTX 50xx): LLVM warns the processor is unknown and ptxas "
         "fails; the fix is a triton that knows sm_120")
add("triton-too-old-for-sm120", "Adamdad/rational_kat_cu#17", "job:kat-rational-5090d",
    SM120 + " (Linux; the excerpt is cut at CalledProcessError's command)",
    "'sm_120' is not a recognized processor for this target (ignoring processor)\n"
    "'sm_120' is not a recognized processor for this target (ignoring processor)\n"
    "'sm_120' is not a recognized processor for this target (ignoring processor)\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/user/anaconda3/envs/mambair/lib/python3.10/site-packages/triton/backends/nvidia/compiler.py\", "
    "line 356, in make_cubin\n"
    "    subprocess.run(ptxas_cmd, check=True, close_fds=False, stderr=flog)\n"
    "  File \"/home/user/anaconda3/envs/mambair/lib/python3.10/subprocess.py\", line 526, in run\n"
    "    raise CalledProcessError(retcode, process.args,")
add("triton-too-old-for-sm120", "woct0rdho/triton-windows#93", "job:comfyui-5090",
    SM120 + " (Windows; the excerpt is cut in subprocess.run)",
    "'sm_120' is not a recognized processor for this target (ignoring processor)\n"
    "'sm_120' is not a recognized processor for this target (ignoring processor)\n"
    "'sm_120' is not a recognized processor for this target (ignoring processor)\n"
    "Traceback (most recent call last):\n"
    "  File \"E:\\ComfyUI_windows_portable_nightly_pytorch\\python_embeded\\Lib\\site-packages\\triton\\backends\\"
    "nvidia\\compiler.py\", line 376, in make_cubin\n"
    "    subprocess.run(ptxas_cmd, check=True, close_fds=False, stdout=flog, stderr=flog)\n"
    "  File \"subprocess.py\", line 579, in run")

# ---------------------------------------------------------------- other toolchains older than the GPU
add("nvcc-too-old-for-sm75", "csuhan/s2anet#44", "job:s2anet-build",
    "CUDA 9.2's nvcc asked to build for sm_75 (Turing): another toolkit and generation than sm_120's",
    "nvcc fatal   : Unsupported gpu architecture 'compute_75'")
add("nvptx-shfl-sync-before-sm70", "llvm/llvm-project#90421", "job:llc-nvptx-sm60",
    "LLVM's NVPTX backend cannot select shfl.sync for sm_60 without the ptx60 feature (the cause of triton's "
    "Pascal failure fixed in triton-lang/triton#3874): one report",
    "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32\n"
    "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace.\n"
    "Stack dump:\n"
    "0.      Program arguments: llvm-5e5a22ca-ubuntu-x64/bin/llc sum.ll -march=nvptx64 -mcpu sm_60 "
    "-mtriple=nvptx64-nvidia-cuda -o sum60.ptx\n"
    "1.      Running pass 'Function Pass Manager' on module 'sum.ll'.\n"
    "2.      Running pass 'NVPTX DAG->DAG Pattern Instruction Selection' on function '@test_sum_kernel_'")

# ---------------------------------------------------------------- versions that do not match
add("triton-key-not-reexported-triton35-windows", "woct0rdho/triton-windows#158", "job:comfyui-torchcompile",
    "torch 2.8's inductor imports triton_key from triton.compiler.compiler, which the Windows triton 3.5 no longer "
    "re-exports: one report here",
    "ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler'")
DLL = ("libtriton's DLL initialisation fails on Windows (older MSVC runtime DLLs beside Python are loaded first; the "
       "maintainer's first question); the fix is the current runtime, in the system's Chinese wording")
add("libtriton-dll-init-failed", "woct0rdho/triton-windows#87", "job:triton-windows-import",
    DLL + " (the title's words)",
    "ImportError: DLL load failed while importing libtriton: 动态链接库(DLL)初始化例程失败。")
add("libtriton-dll-init-failed", "woct0rdho/triton-windows#71", "job:sageattention-import",
    DLL + " (the title's words, through SageAttention)",
    "Can't import SageAttention: DLL load failed while importing libtriton: 动态链接库(DLL)初始化例程失败。")


__all__ = ["F", "add", "records", "render"]

if __name__ == "__main__":
    _SET.write(HERE / "fresh5.jsonl")
