"""Builds ``fresh4.jsonl``: a fifth, wholly held-out set of real failure texts from public reports,
none of them a source of ``wild.jsonl``, ``labelled.jsonl``, ``holdout.jsonl``, ``fresh.jsonl``,
``fresh2.jsonl`` or ``fresh3.jsonl`` (checked against their ``source`` fields and the issue links
inside their texts), labelled by root cause *before* any signature code was run on them.
Regenerate with ``python tests/data/triage/make_fresh4.py`` (deterministic).

It exists to measure grouping honestly after the tuning round that uses ``fresh3.jsonl`` and the
older sets: the labels were written and committed before the first measurement, and the signature
and normaliser code is never tuned on this file (``bench/bench_triage.py --fresh4`` only reports
figures). The whole file is held out: there is no tuning split.

Unlike the earlier fresh sets, about half of its causes are not in the compiler: the runner or the
network (a runner that received a shutdown signal, a full disk, a rate-limited or unreachable
download host, a compiler killed for memory) and flakes of the test harness (a port another test
holds, the Triton cache's temporary file raced by another process) — what a fork's nightly meets
beside real compiler faults.

Labelling rule (the same as ``make_wild.py``'s and the other fresh sets'):

* **Same label = same fix.** Two texts carry the same label when one change would fix both, as
  the reports (their comments, a linked duplicate or the fix) show.
* A message that names the fault specifically is one root cause across reports when the reports
  agree on the cause and the fix is one change of the same kind: the runner service stopped under
  the job (rerun on a healthy runner); the runner's disk is full (free disk space); nvcc older than
  the GPU architecture asked for (a newer CUDA toolkit or a build without that architecture); a
  ``tl.math`` function triton 3 no longer has (per function, as a missing import is labelled per
  symbol); the compiler killed by the kernel's OOM killer (fewer parallel jobs, more memory);
  Hugging Face rate-limiting the runner's downloads (a cache or a token); PyPI timing out (retry);
  DNS not resolving ``github.com`` on the machine; a c10d test's TCPStore on a port already taken
  (tests take a free port); Triton's cache renaming a temporary file another process removed (the
  cache's temporary directory, triton-lang/triton#4295). Different words for that cause keep the
  label (``OSError``/``IOError``/a tool's ``error: writing to file`` for the full disk;
  ``ReadTimeoutError`` and ``ConnectTimeoutError`` for PyPI; ``HfHubHTTPError`` and httpx's
  ``HTTPStatusError`` for the rate limit; ``c++: fatal error: Killed signal`` and ``g++: internal
  compiler error: Killed``), and the same words for another cause get another label (``compute_86``
  on CUDA 10.2 vs. ``compute_120`` before CUDA 12.8; a 429 from the Inference API's quota vs. from
  the Hub's downloads; ``ZE_RESULT_ERROR_MODULE_BUILD_FAILURE`` from a triton regression vs. from
  the GPU driver's compiler; ``EADDRINUSE`` in Lightning's own port manager vs. in PyTorch's c10d
  tests).
* A message that says nothing about where or why — an NCCL watchdog timeout, an unspecified launch
  failure, a memory aperture violation, ``device kernel image is invalid``, a bare ``PassManager::run
  failed`` — is one root cause per report (the fix is in that report's kernel, machine or build),
  even when the words are identical, unless the reports agree on one fix.
* Texts of one report in several shapes share the report's label.

Each record: ``id``, ``fault`` (the label), ``source`` (``owner/repo#N``), ``test`` (the test the
report names; where it names none, ``job:<project>-<what ran>``), ``shape`` (``real``: the
report's own text, excerpted; ``derived-…``: that text put through a log shape a nightly meets,
built by ``heldout_set.py``), ``why`` (the labelling reason) and ``text``. Where a report's title
holds the message its excerpt was cut before, the message is the title's, said in ``why``.

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


# ---------------------------------------------------------------- infra: the runner received a shutdown signal
SHUT = ("infra: GitHub's runner service was stopped under the job (the runner's side, not the change); the fix is a "
        "rerun on a healthy runner")
add("infra-runner-shutdown-signal", "actions/runner#2427", "job:ci-workflow",
    SHUT + " (the runner's own log, timestamped)",
    "2023-02-09T20:11:49.9484027Z ##[error]The runner has received a shutdown signal. This can happen when the runner "
    "service is stopped, or a manually started runner is canceled.\n2023-02-09T20:11:49.9749746Z ...\n"
    "2023-02-09T20:11:49.9966268Z ##[error]The operation was canceled.\n"
    "2023-02-09T20:11:50.0154231Z Uploading runner diagnostic logs\n"
    "2023-02-09T20:11:50.1523865Z Completed runner diagnostic log upload\n"
    "2023-02-09T20:11:50.1524223Z Cleaning up orphan processes")
add("infra-runner-shutdown-signal", "actions/runner-images#7437", "job:gradle-build",
    SHUT + " (the annotation alone)",
    "The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually "
    "started runner is canceled.")

# ---------------------------------------------------------------- infra: the disk is full
DISK = "infra: the build machine's disk is full; the fix is free disk space on the runner, in any wording"
add("infra-disk-full", "NixOS/nixpkgs#453992", "job:nixpkgs-aotriton-build",
    DISK + " (Triton's cache write while aotriton compiles its kernels)",
    "       >   File \"/nix/store/faw0gnf2wcr069agffynbwny13fqr9w1-python3.13-triton-3.4.0/lib/python3.13/site-packages/"
    "triton/runtime/cache.py\", line 115, in put\n       >     f.write(data)\n       >     ~~~~~~~^^^^^^\n"
    "       > OSError: [Errno 28] No space left on device")
add("infra-disk-full", "travis-ci/travis-ci#8375", "job:termux-packages-build",
    DISK + " (Python 2's IOError)",
    "  File \"/usr/lib/python2.7/shutil.py\", line 52, in copyfileobj\n    fdst.write(buf)\n"
    "IOError: [Errno 28] No space left on device\nError building metasploit-framework")
add("infra-disk-full", "chatmail/core#7542", "job:chatmail-wheel-build",
    DISK + " (the compressor's own error line, then the step's exit)",
    "error (ignored): failed to compress (Bzip2 compression failed; BZ2_bzCompress() returned -1)\n"
    "error: writing to file: No space left on device\nError: Process completed with exit code 1.")

# ---------------------------------------------------------------- nvcc older than the GPU architecture
SM120 = ("nvcc older than CUDA 12.8 asked to build for sm_120 (Blackwell consumer GPUs); the fix is a newer CUDA "
         "toolkit, or the build without that architecture")
add("nvcc-too-old-for-sm120", "mit-han-lab/Block-Sparse-Attention#15", "job:block-sparse-attention-build",
    SM120 + " (the report's whole text)",
    "nvcc fatal   : Unsupported gpu architecture 'compute_120'")
add("nvcc-too-old-for-sm120", "thu-ml/TurboDiffusion#80", "job:turbodiffusion-pip-install",
    SM120 + " ('compute_120a' in setup.py's list; the answer: drop it from setup.py)",
    "      nvcc fatal   : Unsupported gpu architecture 'compute_120a'")
add("nvcc-too-old-for-sm86", "zai-org/VisualGLM-6B#94", "job:visualglm-build",
    "a CUDA 10.2 image asked to build for sm_86 (Ampere); the fix is a CUDA that knows it — another GPU generation "
    "and toolkit than compute_120's",
    "nvcc fatal   : Unsupported gpu architecture 'compute_86'")

# ---------------------------------------------------------------- tl.math functions triton 3 no longer has
add("tl-math-tanh-removed", "triton-lang/triton#4938", "job:unsloth-train-windows",
    "a kernel calls tl.math.tanh, which triton 3 no longer has (libdevice's tanh instead); the message is the title's, "
    "the frames the report's",
    "  File \"C:\\ProgramData\\anaconda3\\envs\\unsloth_env\\lib\\site-packages\\triton\\runtime\\jit.py\", line 758, "
    "in cache_key\n    dependencies_finder.visit(self.parse())\n"
    "  File \"C:\\ProgramData\\anaconda3\\envs\\unsloth_env\\lib\\ast.py\", line 418, in visit\n"
    "    return visitor(node)\nAttributeError: module 'triton.language.math' has no attribute 'tanh'")
add("tl-math-tanh-removed", "RightNow-AI/autokernel#19", "job:autokernel-fused-mlp",
    "a kernel calls tl.math.tanh, which triton 3 no longer has (libdevice's tanh instead); the title's words",
    "module 'triton.language.math' has no attribute 'tanh'")
add("tl-math-log1p-removed", "OpenHelix-Team/cobra#28", "job:cobra-generate",
    "a mamba kernel calls tl.math.log1p, which triton 3 no longer has (softplus or libdevice's log1p instead)",
    "AttributeError: module 'triton.language.math' has no attribute 'log1p'. Did you mean: 'log2'?")
add("tl-math-log1p-removed", "NVIDIA/Megatron-LM#1800", "job:megatron-mamba-train",
    "a mamba kernel calls tl.math.log1p, which triton 3 no longer has (softplus or libdevice's log1p instead); the "
    "message is the title's, the frames the report's",
    "[rank0]:   File \"/home/user/miniconda3/envs/mm_dev_2/lib/python3.10/site-packages/mamba_ssm/ops/triton/"
    "ssd_chunk_state.py\", line 582, in _chunk_cumsum_fwd\n[rank0]:     _chunk_cumsum_fwd_kernel[grid_chunk_cs](\n"
    "[rank0]:   File \"/home/user/miniconda3/envs/mm_dev_2/lib/python3.10/site-packages/triton/runtime/autotuner.py\", "
    "line 228, in benchmark\n[rank0]: AttributeError: module 'triton.language.math' has no attribute 'log1p'")
add("tl-math-round-removed", "ridgerchu/matmulfreellm#42", "job:mmfreelm-generate",
    "a kernel calls tl.math.round, which triton 3 no longer has (libdevice.round instead, the fixing commit)",
    "AttributeError: module 'triton.language.math' has no attribute 'round'")

# ---------------------------------------------------------------- device kernel image is invalid: one per report
add("kernel-image-invalid-triton-nightly-driver-470", "triton-lang/triton#2971", "job:triton-nightly-a10",
    "a triton nightly's kernels on a 470 driver (CUDA 11.4) that cannot load them; older nightlies work: that machine",
    "  File \"/usr/local/lib/python3.9/site-packages/triton/compiler/compiler.py\", line 285, in _init_handles\n"
    "    self.module, self.function, self.n_regs, self.n_spills = driver.utils.load_binary(\n"
    "RuntimeError: Triton Error [CUDA]: device kernel image is invalid.")
add("kernel-image-invalid-mamba-notebook", "state-spaces/mamba#386", "job:mamba-notebook",
    "mamba's kernels fail to load on one machine, no cause agreed: that report's (the message is the title's)",
    "File ~/anaconda3/lib/python3.9/site-packages/triton/compiler/compiler.py:250, in CompiledKernel._init_handles(self)\n"
    "    248     raise OutOfResources(self.shared, max_shared, \"shared memory\")\n"
    "--> 250 self.module, self.function, self.n_regs, self.n_spills = driver.utils.load_binary(\n"
    "RuntimeError: Triton Error [CUDA]: device kernel image is invalid")

# ---------------------------------------------------------------- Intel XPU module build failures: two causes
add("xpu-module-build-regression-triton-3.5", "intel/intel-xpu-backend-for-triton#5561",
    "job:inductor-xpu-generated-kernel",
    "an inductor kernel that builds with pytorch-triton-xpu 3.4 fails with 3.5: that regression (the title's words)",
    "RuntimeError: ZE_RESULT_ERROR_MODULE_BUILD_FAILURE")
add("xpu-igc-floating-point-exception-driver", "intel/torch-xpu-ops#2979", "job:timm-eca-halonext26ts-xpu",
    "the GPU driver's compiler (IGC) crashes on one model's kernel with the latest driver: that driver",
    "L0 build module failed. Log: IGC: Internal Compiler Error: Floating point exception\n\n"
    "Error during Intel loadBinary: ZE_RESULT_ERROR_MODULE_BUILD_FAILURE")

# ---------------------------------------------------------------- NCCL watchdog timeouts: one per report
add("nccl-timeout-sglang-allgather", "sgl-project/sglang#1693", "job:sglang-serve-tp8",
    "an all-gather that never completes in one sglang deployment: that job's",
    "terminate called after throwing an instance of 'c10::DistBackendError'\n"
    "  what():  [PG 3 Rank 5] Process group watchdog thread terminated with exception: [Rank 5] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=9141, OpType=_ALLGATHER_BASE, NumelIn=19008, NumelOut=152064, "
    "Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n"
    "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:609 (most recent call "
    "first):")
add("nccl-timeout-basicsr-allreduce", "XPixelGroup/BasicSR#737", "job:basicsr-train-ddp",
    "an all-reduce that never completes in one BasicSR training: that job's",
    "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600020 "
    "milliseconds before timing out.\n[rank1]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID "
    "0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 808, last enqueued "
    "NCCL work: 811, last completed NCCL work: 807.")

# ---------------------------------------------------------------- flaky: c10d tests on a port already taken
PORT = ("flaky: a c10d test binds its TCPStore to a port another test or process on the shared CI host holds; the fix "
        "is one: tests take a free port or a FileStore (pytorch#12876)")
add("flaky-c10d-tcpstore-port-in-use", "pytorch/pytorch#30676", "test_distributed.py::"
    "test_DistributedDataParallel", PORT + " (the env rendezvous)",
    "Dec 03 17:59:26   File \"/opt/conda/lib/python3.6/site-packages/torch/distributed/rendezvous.py\", line 168, in "
    "_env_rendezvous_handler\nDec 03 17:59:26     store = TCPStore(master_addr, master_port, world_size, start_daemon)\n"
    "Dec 03 17:59:26 RuntimeError: Address already in use")
add("flaky-c10d-tcpstore-port-in-use", "pytorch/pytorch#52770", "distributed/test_c10d.py::TCPStoreTest::"
    "test_multi_worker_with_fixed_world_size", PORT + " (the test's own TCPStore)",
    "Feb 23 02:11:46 ERROR [0.108s]: test_multi_worker_with_fixed_world_size (__main__.TCPStoreTest)\n"
    "Feb 23 02:11:46 Traceback (most recent call last):\n"
    "Feb 23 02:11:46   File \"distributed/test_c10d.py\", line 379, in test_multi_worker_with_fixed_world_size\n"
    "Feb 23 02:11:46     server_store = dist.TCPStore(addr, port, world_size, True, timedelta(seconds=30))\n"
    "Feb 23 02:11:46 RuntimeError: Address already in use")
add("flaky-c10d-tcpstore-port-in-use", "pytorch/pytorch#64789", "distributed/elastic/utils/distributed_test.py::"
    "DistributedUtilTest::test_create_store_timeout_on_server", PORT + " (elastic's wrapper re-raises it as OSError)",
    "RuntimeError: Address already in use\n\nThe above exception was the direct cause of the following exception:\n\n"
    "Traceback (most recent call last):\n  File \"distributed/elastic/utils/distributed_test.py\", line 93, in "
    "test_create_store_timeout_on_server\n    timeout=1,\n  File \"/opt/conda/lib/python3.6/site-packages/torch/"
    "distributed/elastic/utils/distributed.py\", line 87, in create_c10d_store\n    ) from e\n"
    "OSError: on host, port: 45925 already in use")
add("flaky-lightning-port-reuse", "Lightning-AI/pytorch-lightning#21308", "job:lightning-ddp-tests",
    "flaky: Lightning's test port manager hands out ports still in TIME_WAIT; the fix is in that manager, not in "
    "PyTorch's tests",
    "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. \n"
    "port: 54401, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use")

# ---------------------------------------------------------------- infra: Hugging Face rate limits
HF = ("infra: the Hugging Face Hub rate-limits the runner's IP while tests download a model; the fix is a cache of "
      "the model (or a token), whatever client raises it")
add("infra-hf-hub-rate-limit", "dimensionalOS/dimos#2397", "job:dimos-md-babel",
    HF + " (huggingface_hub's error; the CF id varies)",
    "  File \"/home/runner/work/dimos/dimos/.venv/lib/python3.12/site-packages/huggingface_hub/utils/_http.py\", line "
    "476, in hf_raise_for_status\n    raise _format(HfHubHTTPError, str(e), response) from e\n"
    "huggingface_hub.errors.HfHubHTTPError: 429 Client Error: Too Many Requests for url: https://huggingface.co/openai/"
    "clip-vit-base-patch32/resolve/main/preprocessor_config.json (Amz CF ID: Jhc7g49KyrahfS8WXonO5_TABeJV1JVJIov9JVB7"
    "UDqo8blsphYQSg==)")
add("infra-hf-hub-rate-limit", "opensearch-project/opensearch-py-ml#475",
    "job:opensearch-py-ml-integ-tests", HF + " (pytest's E line)",
    "E           huggingface_hub.errors.HfHubHTTPError: 429 Client Error: Too Many Requests for url: https://"
    "huggingface.co/opensearch-project/opensearch-neural-sparse-encoding-doc-v3-distill/resolve/main/config.json")
add("infra-hf-hub-rate-limit", "lathrys-at/shrike#83", "job:shrike-embedding-lane",
    HF + " (httpx's error; the fixture downloads on every run)",
    "httpx.HTTPStatusError: Client error '429 Too Many Requests' for url 'https://huggingface.co/second-state/"
    "All-MiniLM-L6-v2-Embedding-GGUF/resolve/main/all-MiniLM-L6-v2-Q4_K_M.gguf'")
add("infra-hf-inference-api-quota", "huggingface/smolagents#599",
    "tests/test_models.py::ModelTests::test_get_hfapi_message_no_tool",
    "infra: a test calls the hosted Inference API and hits its quota; the fix is to run it only on request, not a "
    "model cache (another fix than the Hub's download limit)",
    "FAILED tests/test_models.py::ModelTests::test_get_hfapi_message_no_tool - huggingface_hub.errors.HfHubHTTPError: "
    "429 Client Error: Too Many Requests for url: https://api-inference.huggingface.co/models/Qwen/"
    "Qwen2.5-Coder-32B-Instruct/v1/chat/completions (Request ID: BBblp7)")

# ---------------------------------------------------------------- infra: PyPI times out
PYPI = "infra: PyPI does not answer the runner in time (read or connect); the fix is a retry, in either wording"
add("infra-pypi-timeout", "conbench/conbench#815", "job:conbench-docker-build",
    PYPI + " (a Docker build step's prefix)",
    "#10 18.23 ERROR: Exception:\n#10 18.23 Traceback (most recent call last):\n#10 18.23 ...\n"
    "#10 18.23     raise ReadTimeoutError(self._pool, None, \"Read timed out.\")\n"
    "#10 18.23 pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='files.pythonhosted.org', "
    "port=443): Read timed out.")
add("infra-pypi-timeout", "travis-ci/travis-ci#9585", "job:travis-pip-install",
    PYPI + " (the connect timeout, wrapped in MaxRetryError)",
    "pip._vendor.requests.packages.urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='files.pythonhosted.org', "
    "port=443): Max retries exceeded with url: /packages/08/01/803834bc8a4e708aedebb133095a88a4dad9f45bbaf5ad777d2bea"
    "543c7e/pandas-0.22.0.tar.gz (Caused by ConnectTimeoutError(<pip._vendor.requests.packages.urllib3.connection."
    "VerifiedHTTPSConnection object at 0x7fcb3ef44710>, 'Connection to files.pythonhosted.org timed out. (connect "
    "timeout=15)'))")

# ---------------------------------------------------------------- HSA aperture violations: one per fix
add("hsa-aperture-unfold-triton-3.4", "ROCm/triton#829",
    "inductor/test_torchinductor_opinfo.py::TestInductorOpInfoCUDA::test_comprehensive_unfold_copy_cuda_float16",
    "an inductor unfold kernel reads out of bounds on ROCm with triton 3.4's tip (fixed by triton-lang/triton#7326)",
    "2025-06-24T05:49:37.1508205Z inductor/test_torchinductor_opinfo.py::TestInductorOpInfoCUDA::"
    "test_comprehensive_unfold_copy_cuda_float16 :0:rocdevice.cpp            :2991: 23172359403904 us:  Callback: "
    "Queue 0x7f41cc300000 aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to "
    "access memory beyond the largest legal address. code: 0x29\n2025-06-24T05:49:37.1509243Z Fatal Python error: "
    "Aborted")
add("hsa-aperture-scatter-triton-3.3-bump", "pytorch/pytorch#147378", "test/inductor/test_torchinductor.py::GPUTests::"
    "test_scatter5_cuda",
    "inductor's scatter tests read out of bounds on ROCm after a triton bump (fixed by triton-lang/triton#5839): "
    "another change than the unfold one",
    "test_scatter5_cuda (__main__.GPUTests) ... GPU core dump created: gpucore.1422583\n"
    ":0:rocdevice.cpp            :3018: 62491722575d us:  Callback: Queue 0x7fa730c00000 aborting with error : "
    "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal "
    "address. code: 0x29\nAborted (core dumped)")

# ---------------------------------------------------------------- unspecified launch failure
add("unspecified-launch-failure-deepseek-moe", "deepseek-ai/DeepSeek-MoE#47", "job:deepseek-moe-finetune",
    "a kernel of one fine-tuning run faults; the watchdog reports it: that run's",
    "[rank1]:[E410 01:50:33.889423318 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group "
    "watchdog thread terminated with exception: CUDA error: unspecified launch failure\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
    "incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")

# ---------------------------------------------------------------- infra: the compiler killed for memory
OOMK = ("infra: the kernel's OOM killer stops the C++ compiler of a parallel build; the fix is fewer parallel jobs or "
        "more memory on the build machine (the reports: a larger machine worked)")
add("infra-build-compiler-oom-killed", "triton-lang/triton#3761", "job:triton-build-from-source",
    OOMK + " (a triton source build under ninja)",
    "    FAILED: lib/Conversion/TritonGPUToLLVM/CMakeFiles/TritonGPUToLLVM.dir/HistogramOpToLLVM.cpp.o\n"
    "    c++: fatal error: Killed signal terminated program cc1plus\n    compilation terminated.")
add("infra-build-compiler-oom-killed", "hoytech/strfry#41", "job:strfry-make-j4",
    OOMK + " (make -j4 on 4 GB; 8 GB worked)",
    "g++: fatal error: Killed signal terminated program cc1plus\ncompilation terminated.\n"
    "make: *** [golpe/rules.mk:28: build/config.o] Error 1\nmake: *** Waiting for unfinished jobs....")
add("infra-build-compiler-oom-killed", "travis-ci/travis-ci#2407", "job:thrift-build",
    OOMK + " (an older gcc's wording of the same kill)",
    "g++: internal compiler error: Killed (program cc1plus)")

# ---------------------------------------------------------------- PassManager::run failed: one per report
add("passmanager-inductor-argmax-repeat", "pytorch/pytorch#101368", "job:torch-compile-linear-dropout-argmax",
    "one minimal graph's triton kernel fails an MLIR pass in that triton: that kernel's",
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: PassManager::run failed")

# ---------------------------------------------------------------- infra: DNS
DNS = "infra: the machine cannot resolve github.com (DNS, VPN or firewall); the fix is the machine's network"
add("infra-dns-github", "egen/concourse-tutorial#240", "job:concourse-resource-check",
    DNS + " (a CI resource check's clone)",
    "Cloning into '/tmp/git-resource-repo-cache'...\n"
    "fatal: unable to access 'https://github.com/starkandwayne/concourse-tutorial.git/': Could not resolve host: "
    "github.com")
add("infra-dns-github", "Xilinx/DPU-PYNQ#58", "job:dpu-pynq-install",
    DNS + " (an install script's clone)",
    "fatal: unable to access 'https://github.com/Xilinx/DPU-PYNQ.git/': Could not resolve host: github.com")

# ---------------------------------------------------------------- flaky: Triton's cache raced by another process
CACHE = ("flaky: two processes compile the same kernel and one renames a temporary file of Triton's cache that the "
         "other removed; the fix is the cache's temporary directory (triton-lang/triton#3544, #4295)")
add("flaky-triton-cache-tmp-file-race", "triton-lang/triton#2688", "job:deepspeed-rmsnorm-train",
    CACHE + " (distributed training)",
    "  File \"/home/user/anaconda3/envs/deepspeed/lib/python3.10/site-packages/triton/runtime/cache.py\", line 109, in "
    "put\n    os.replace(temp_path, filepath)\nFileNotFoundError: [Errno 2] No such file or directory: '/home/user/"
    ".triton/cache/cff628804055ab05f902072733c9ab2d/_rms_norm_bwd_dx_fused.ttir.tmp.pid_15735_304289' -> '/home/user/"
    ".triton/cache/cff628804055ab05f902072733c9ab2d/_rms_norm_bwd_dx_fused.ttir'")
add("flaky-triton-cache-tmp-file-race", "IBM/vllm#34", "job:vllm-mixtral-tp",
    CACHE + " (vLLM's tensor-parallel workers)",
    "FileNotFoundError: [Errno 2] No such file or directory: '/home/vllm/.triton/cache/c926ad2ef143810ed738a313c473c7b2/"
    "fused_moe_kernel.cubin.tmp.pid_72_945989'")

# ---------------------------------------------------------------- versions that do not match
add("jaxlib-triton-kernel-call-abi-mismatch", "jax-ml/jax#17311", "job:pallas-docs-example",
    "jax-triton nightly and jaxlib disagree on TritonKernelCall.to_proto's arguments: matching versions",
    "  File \"/home/user/venvs/jax-dev/lib/python3.10/site-packages/jax/_src/pallas/triton/lowering.py\", line 1721, in "
    "pallas_call_lowering\n    backend_config=zlib.compress(kernel_call.to_proto(serialized_metadata)),\n"
    "TypeError: to_proto(): incompatible function arguments. The following argument types are supported:\n"
    "    1. (self: jaxlib.cuda._triton.TritonKernelCall, arg0: str, arg1: str) -> bytes")


__all__ = ["F", "add", "records", "render"]

if __name__ == "__main__":
    _SET.write(HERE / "fresh4.jsonl")
