"""Builds ``fresh8.jsonl``: a ninth, wholly held-out set of real failure texts from public reports,
none of them a source of ``wild.jsonl``, ``labelled.jsonl``, ``holdout.jsonl`` or ``fresh.jsonl`` …
``fresh7.jsonl`` (checked against their ``source`` fields and the issue links inside their texts),
labelled by root cause *before* any signature code was run on them.
Regenerate with ``python tests/data/triage/make_fresh8.py`` (deterministic).

It exists to measure grouping and classification honestly after signature version 9: the labels were
written and committed before the first measurement, and the signature and normaliser code is never
tuned on this file (``bench/bench_triage.py --fresh8`` only reports figures). The whole file is held
out.

Its reports are weighted towards what a GPU compiler fork's nightly meets: the GPU machine and its
toolchain (NVML's driver/library mismatch after a driver update, a driver older than the CUDA runtime in
the runtime's and in nvidia-container-cli's words, ``libcuda.so`` missing from the linker's path when
triton builds its launcher, nvcc older than the GPU architecture asked for and nvcc newer than an architecture CUDA 11 dropped, a ROCm library without
the GPU's code object, Level Zero's device lost and out of device memory), the CI machinery (GitHub's
container registry ghcr.io answering 5xx or timing out, Docker Hub's 503, the GitHub API's rate limit
for an installation token and for an anonymous address, a runner that lost communication, pip's wheel
whose hash does not match after a cut download) and compiler faults (LLVM's ``Cannot select`` on AMDGPU,
MLIR's ``failed to legalize operation`` in triton's lowerings, lit/FileCheck failures, triton's
``device kernel image is invalid``, ``no kernel image is available`` from a build without the GPU's
architecture) and CUDA tests that fail now and then.

Labelling rule (the same as ``make_wild.py``'s and the other fresh sets'):

* **Same label = same fix.** Two texts carry the same label when one change would fix both, as
  the reports (their comments, a linked duplicate or the fix) show.
* A message that names the fault specifically is one root cause across reports when the reports
  agree on the cause and the fix is one change of the same kind: NVML's ``Driver/library version
  mismatch`` after the driver's packages were updated under a loaded kernel module (reload the
  module or reboot), a driver older than the CUDA runtime (a newer driver), ``cannot find -lcuda``
  (make ``libcuda.so`` visible to the linker), pip's ``THESE PACKAGES DO NOT MATCH THE HASHES`` after
  a cut download (download again, without the cached file), ghcr.io's 5xx or timeouts during a GitHub
  incident (retry), ``API rate limit exceeded for installation`` (wait or make fewer calls), nvcc's
  ``Unsupported gpu architecture`` for an architecture newer than the toolkit (a newer CUDA).
* A message that says nothing about where or why — the runner ``lost communication with the server``,
  ``device kernel image is invalid``, LLVM's ``Cannot select``, a FileCheck mismatch, ``failed to
  legalize operation`` — is one root cause per report, even when the words are identical, unless the
  reports agree on one fix. The same words with two causes get two labels (NVML's mismatch from a
  driver installed at another patch version than its kernel module; ``Unsupported gpu architecture
  'compute_30'``, an architecture CUDA 11 removed, beside the toolkits too old for the GPU; ``API rate
  limit exceeded`` for an unauthenticated address, fixed by passing a token; Docker Hub's 503 beside
  ghcr.io's).
* **Class** is the label's prefix: ``infra-`` (the runner, the network, a service, the machine:
  retry or repair, never blame a commit), ``flaky-`` (the same code passes on a rerun: the report
  says so), anything else ``real``. As in the older sets, a toolchain or driver too old for what the
  build asks (``nvcc-…``, ``nvidia-driver-too-old`` in ``fresh2.jsonl``, ``libcuda-not-linkable``) is
  ``real``: the fix is a change to the build's environment definition, not a retry. A single failure
  text cannot show flakiness, so a flaky report's text alone is expected to be read as real or
  infrastructure; the class figure counts it anyway.
* Texts of one report in several shapes share the report's label.

Caveat: the person who collected and labelled this set had read docs/triage.md, including the misses
it lists for ``fresh6.jsonl`` and ``fresh7.jsonl``, and the older sets' label names (to keep the class
of a toolchain fault the same); several causes here are older sets' causes in other reports' words
(a driver too old, ``libcuda.so`` not found, nvcc too old). No signature output on this file was read
before the labels were committed.

Each record: ``id``, ``fault`` (the label), ``source`` (``owner/repo#N``, the report's URL is
``https://github.com/owner/repo/issues/N``, or ``…/pull/N`` for a pull request), ``test`` (the test
the report names; where it names none, ``job:<project>-<what ran>``), ``shape`` (``real``: the
report's own text, excerpted; ``derived-…``: that text put through a log shape a nightly meets, built
by ``heldout_set.py``), ``why`` (the labelling reason) and ``text``.

Personal data removed: user names in paths → ``user``, home folders → ``/home/user``; no e-mail.
Where GitHub's page rendered a log's line number as a link inside a word (``v[2](…).2.0``), the link is
undone (``v2.2.0``); markdown quoting and backticks around a log line are dropped. Texts are short
excerpts of the error lines (fair use), not whole logs; ``...`` inside a text is the report's own.
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

# ---------------------------------------------------------------- infra: NVML's driver/library mismatch
NVML = ("infra: the NVIDIA driver's user-space libraries were updated while the older kernel module stayed loaded; "
        "the fix is to reload the module or reboot the machine, never the change")
add("infra-nvml-driver-library-mismatch", "mozilla/translations#1167", "job:translations-train-task",
    NVML + " (Taskcluster GPU workers; tasks restarted by hand, then it went away)",
    "[task 2025-07-01T05:06:30.004+00:00] [train] nvidia-smi failed with return code 18\n"
    "[task 2025-07-01T05:06:30.005+00:00] [train] [nvidia-smi(stdout)] Failed to initialize NVML: Driver/library "
    "version mismatch\n"
    "[task 2025-07-01T05:06:30.005+00:00] [train] [nvidia-smi(stdout)] NVML library version: 550.144\n"
    "[task 2025-07-01T05:06:30.005+00:00] [train] No GPUs were found available on this machine. Exiting with "
    "EX_TEMPFAIL (75)")
add("infra-nvml-driver-library-mismatch", "intel/llvm#17614", "job:ur-cuda-ci-platform-info",
    NVML + " (the UR CUDA CI machines; the report asks to fix the driver/library installations on them)",
    "**********CUDA Version**********\n"
    "Failed to initialize NVML: Driver/library version mismatch\n"
    "NVML library version: 550.144")
add("infra-nvml-driver-library-mismatch", "madgraph5/madgraph4gpu#996", "job:madgraph4gpu-gpu-ci-v100",
    NVML + " (fixed by rmmod of the nvidia modules and modprobe)",
    "Linux itscrd-v100.cern.ch x86_64\n"
    "...\n"
    "nvidia-smi -L\n"
    "Failed to initialize NVML: Driver/library version mismatch")
add("infra-nvml-driver-library-mismatch", "apache/tvm#7536", "job:tvm-unit-test-python3-gpu",
    NVML + " (nvidia-container-cli's words, starting the CI's GPU container)",
    "docker: Error response from daemon: OCI runtime create failed: container_linux.go:370: starting container "
    "process caused: process_linux.go:459: container init caused: Running hook #1:: error running hook: exit status "
    "1, stdout: , stderr: nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: "
    "unknown.\n"
    "script returned exit code 125")
add("infra-nvml-driver-library-mismatch", "lyulyul/shine-cluster#30", "job:shine-cluster-slurm-node",
    NVML + " (unattended-upgrade had updated libnvidia-common under the running module)",
    "$ nvidia-smi\n"
    "Failed to initialize NVML: Driver/library version mismatch")
add("infra-nvml-mismatch-p2p-module-other-patch", "tinygrad/open-gpu-kernel-modules#47", "job:open-gpu-kernel-modules-p2p",
    "infra: the same words, another cause: the p2p kernel modules were built at 570.124.06 over a 570.124.04 "
    "driver; the fix is installing the driver of the modules' exact version, not a reload",
    "nvidia-smi \n"
    "Failed to initialize NVML: Driver/library version mismatch\n"
    "NVML library version: 570.124")

# ---------------------------------------------------------------- real: the driver older than the runtime
DRV = ("real: the installed NVIDIA driver is older than the CUDA runtime the program was built with; the fix is a "
       "newer driver (or a build for the older runtime), the same change in each report")
add("nvidia-driver-older-than-cuda-runtime", "onnxruntime/mobius#316", "job:mobius-ci-cuda-ep",
    DRV + " (onnxruntime's CUDA execution provider in CI; 'upgrade the cuda driver')",
    "*************** EP Error ***************\n"
    "CUDA failure 35: CUDA driver "
    "version is insufficient for CUDA runtime version ; GPU=-1 ; hostname=c4327188c000000 ; file=/onnxruntime_src/"
    "onnxruntime/core/providers/cuda/cuda_execution_provider.cc ; line=336 ; expr=cudaSetDevice(info_.device_id); ")
add("nvidia-driver-older-than-cuda-runtime", "uzh-rpg/rpg_open_remode#9", "job:open-remode-all-tests",
    DRV + " (solved by updating the driver from 340.93 to 346.72)",
    "./all_tests\n"
    "Running executable: ./all_tests\n"
    "Checking available CUDA-capable devices...\n"
    "ERROR: cudaGetDeviceCount CUDA driver version is insufficient for CUDA runtime version")
add("nvidia-driver-older-than-cuda-runtime", "CESNET/GPUJPEG#4", "job:gpujpeg-macos-static",
    DRV + " (the maintainer: CUDA 8.0.63's runtime requires a newer driver)",
    "[GPUJPEG] [Error] /gpujpeg/src/gpujpeg_common.cpp (line 122): Cannot get number of CUDA devices!: CUDA driver "
    "version is insufficient for CUDA runtime version.")

# ---------------------------------------------------------------- real: libcuda.so not visible to the linker
LIBCUDA = ("real: triton builds its launcher with -lcuda and the linker finds no unversioned libcuda.so on its "
           "path; the fix is making it visible (ldconfig, a symlink, TRITON_LIBCUDA_PATH), as libcuda-not-linkable "
           "in the older sets")
add("libcuda-not-linkable", "pytorch/pytorch#92745", "job:torch-compile-model",
    LIBCUDA + " (torch.compile through inductor)",
    "torch._dynamo.exc.BackendCompilerFailed: debug_wrapper raised CalledProcessError: Command '['/usr/bin/gcc', "
    "'/tmp/tmp0zvqksim/main.c', '-O3', '-I/home/user/miniforge3/envs/pt-nightly/include', '-I/home/user/"
    "miniforge3/envs/pt-nightly/include/python3.10', '-I/tmp/tmp0zvqksim', '-shared', '-fPIC', '-lcuda', '-o', "
    "'/tmp/tmp0zvqksim/triton_.cpython-310-x86_64-linux-gnu.so']' returned non-zero exit status 1.\n"
    "/usr/bin/ld: cannot find -lcuda\n"
    "collect2: error: ld returned 1 exit status")
add("libcuda-not-linkable", "HannesStark/boltzgen#2", "job:boltzgen-inference",
    LIBCUDA + " (the report's fix: a symlink to libcuda.so.1)",
    "/usr/bin/ld: cannot find -lcuda: No such file or directory")
add("libcuda-not-linkable", "state-spaces/mamba#123", "job:mamba-triton-kernels",
    LIBCUDA + " (the reporter's fix: LIBRARY_PATH to the stubs and ldconfig; a comment: TRITON_LIBCUDA_PATH)",
    "/usr/bin/ld: cannot find -lcuda")

# ---------------------------------------------------------------- infra: pip's hash check after a cut download
PIPHASH = ("infra: pip's download of a large wheel was cut or served truncated (a slow link, a stale cached "
           "file), so its sha256 differs from the index's; the fix is downloading again without the cache, never the "
           "change")
add("infra-pip-wheel-hash-mismatch-cut-download", "oobabooga/textgen#4414", "job:textgen-installer-torch",
    PIPHASH + " (a cached torch wheel from download.pytorch.org)",
    "Looking in indexes: https://download.pytorch.org/whl/cu121\n"
    "Collecting torch==2.2.1\n"
    "  Using cached https://download.pytorch.org/whl/cu121/torch-2.2.1%2Bcu121-cp311-cp311-linux_x86_64.whl (757.3 MB)\n"
    "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the package "
    "versions, please update the hashes. Otherwise, examine the package contents carefully; someone may have "
    "tampered with them.\n"
    "    torch==2.2.1 from https://download.pytorch.org/whl/cu121/torch-2.2.1%2Bcu121-cp311-cp311-linux_x86_64.whl"
    "#sha256=23bb28ba800f25a9d33d51768bf5fdefa0220cbc5cd9a17f22d2a42628359468:\n"
    "        Expected sha256 23bb28ba800f25a9d33d51768bf5fdefa0220cbc5cd9a17f22d2a42628359468\n"
    "             Got        b0b4f3ec9234ae37110ac46681848e7269f290d924a6881ceb34a15c1f31df32")
add("infra-pip-wheel-hash-mismatch-cut-download", "pytorch/pytorch#152009", "job:pip-install-torch-nightly-cu128",
    PIPHASH + " (a nightly torchvision wheel, cached)",
    "Collecting torchvision\n"
    "  Using cached https://download.pytorch.org/whl/nightly/cu128/torchvision-0.22.0.dev20250422%2Bcu128-cp312-cp312-"
    "win_amd64.whl.metadata (6.3 kB)\n"
    "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the package "
    "versions, please update the hashes. Otherwise, examine the package contents carefully; someone may have "
    "tampered with them.\n"
    "    torchvision from https://download.pytorch.org/whl/nightly/cu128/torchvision-0.22.0.dev20250422%2Bcu128-"
    "cp312-cp312-win_amd64.whl:\n"
    "        Expected sha256 8ee0514d2cddf2b615ce0a85415d9c98f99e98cbd185c22d2a23e2d849dce06e\n"
    "             Got        0bf6ad5fc142196eb0559a44a47b9787e97a7777df9140f74474f262aa17fe9f")
add("infra-pip-wheel-hash-mismatch-cut-download", "vectorch-ai/ScaleLLM#286", "job:scalellm-ci-pip-install",
    PIPHASH + " (in CI; the fix: disable pip's cache)",
    "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the package "
    "versions, please update the hashes. Otherwise, examine the package contents carefully; someone may have "
    "tampered with them.\n"
    "    nvidia-cusparse-cu12==12.1.0.106 from https://download.pytorch.org/whl/cu121/nvidia_cusparse_cu12-12.1.0.106-"
    "py3-none-manylinux1_x86_64.whl#sha256=f3b50f42cf363f86ab21f720998517a659a48131e8d538dc02f8768237bd884c (from "
    "torch==2.4.0):\n"
    "        Expected sha256 f3b50f42cf363f86ab21f720998517a659a48131e8d538dc02f8768237bd884c\n"
    "             Got        911befe2250b2c01281278eed38a04766c4ba0fec12dd3d0457d3f027e6e2b01")
add("infra-pip-wheel-hash-mismatch-cut-download", "abus-aikorea/voice-pro#47", "job:voice-pro-start-bat",
    PIPHASH + " (a 2.4 GB wheel at 1.1 MB/s, failing at the end of the download)",
    "  Downloading https://download.pytorch.org/whl/cu121/torch-2.5.1%2Bcu121-cp310-cp310-win_amd64.whl (2449.4 MB)\n"
    "     ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╺━ 2.3/2.4 GB 1.1 MB/s eta 0:01:50\n"
    "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the package "
    "versions, please update the hashes. Otherwise, examine the package contents carefully; someone may have "
    "tampered with them.\n"
    "    torch==2.5.1+cu121 from https://download.pytorch.org/whl/cu121/torch-2.5.1%2Bcu121-cp310-cp310-win_amd64.whl"
    "#sha256=9b22d6d98aa56f9317902dec0e066814a6edba1aada90110ceea2bb0678df22f (from -r requirements-voice-gpu.txt "
    "(line 66)):\n"
    "        Expected sha256 9b22d6d98aa56f9317902dec0e066814a6edba1aada90110ceea2bb0678df22f\n"
    "             Got        f7a4de098c11b853287023049f89ad6da9123ba63ec075336727e07eb7df8746")

# ---------------------------------------------------------------- infra: ghcr.io unavailable during GitHub incidents
GHCR = ("infra: GitHub's container registry ghcr.io was unavailable (5xx or no answer) during a GitHub incident; "
        "the fix is to retry once it recovers, never the change")
add("infra-ghcr-unavailable", "EnricoMi/publish-unit-test-result-action#379", "job:publish-unit-test-result-pull",
    GHCR + " (503 on the action's image)",
    "Pull down action image 'ghcr.io/enricomi/publish-unit-test-result-action:v2.2.0'\n"
    "  /usr/bin/docker pull ghcr.io/enricomi/publish-unit-test-result-action:v2.2.0\n"
    "  Error response from daemon: received unexpected HTTP status: 503 Service Unavailable\n"
    "  Warning: Docker pull failed with exit code 1, back off 1.655 seconds before retry.\n"
    "  /usr/bin/docker pull ghcr.io/enricomi/publish-unit-test-result-action:v2.2.0\n"
    "  Error response from daemon: received unexpected HTTP status: 503 Service Unavailable\n"
    "Error: Docker pull failed with exit code 1")
add("infra-ghcr-unavailable", "irongut/CodeCoverageSummary#6", "job:code-coverage-summary-pull",
    GHCR + " (503; 'sometimes it works')",
    "Pull down action image 'ghcr.io/irongut/codecoveragesummary:v1.0.2'\n"
    "  /usr/bin/docker pull ghcr.io/irongut/codecoveragesummary:v1.0.2\n"
    "  Error response from daemon: received unexpected HTTP status: 503 Service Unavailable\n"
    "  Warning: Docker pull failed with exit code 1, back off 6.596 seconds before retry.\n"
    "  /usr/bin/docker pull ghcr.io/irongut/codecoveragesummary:v1.0.2\n"
    "  Error response from daemon: Head \"ghcr.io/v2/irongut/codecoveragesummary/manifests/v1.0.2\": received "
    "unexpected HTTP status: 503 Service Unavailable\n"
    "Error: Docker pull failed with exit code 1")
add("infra-ghcr-unavailable", "wangyoucao577/go-release-action#115", "job:go-release-action-pull",
    GHCR + " (503 on every job that day)",
    "/usr/bin/docker pull ghcr.io/wangyoucao577/go-release-action:v1.36\n"
    "Error response from daemon: Head \"https://ghcr.io/wangyoucao577/go-release-action/manifests/v1.36\": received "
    "unexpected HTTP status: 503 Service Unavailable\n"
    "Warning: Docker pull failed with exit code 1, back off 5.225 seconds before retry.")
add("infra-ghcr-unavailable", "rtCamp/action-slack-notify#146", "job:action-slack-notify-pull",
    GHCR + " (githubstatus.com: packages down; resolved the same day)",
    "***[group]Pull down action image 'ghcr.io/rtcamp/action-slack-notify:v2.2.0'\n"
    "  ***[command]/usr/bin/docker pull ghcr.io/rtcamp/action-slack-notify:v2.2.0\n"
    "  Error response from daemon: Head \"https://ghcr.io/v2/rtcamp/action-slack-notify/manifests/v2.2.0\": received "
    "unexpected HTTP status: 503 Service Unavailable\n"
    "  Warning: ***[warning]Docker pull failed with exit code 1, back off 5.589 seconds before retry.")
add("infra-ghcr-unavailable", "EnricoMi/publish-unit-test-result-action#401", "job:publish-unit-test-result-pull",
    GHCR + " (500 in its words: 'ghcr.io down')",
    "Pull down action image 'ghcr.io/enricomi/publish-unit-test-result-action:v2.3.0'\n"
    "  /usr/bin/docker pull ghcr.io/enricomi/publish-unit-test-result-action:v2.3.0\n"
    "  Error response from daemon: received unexpected HTTP status: 500 Internal Server Error\n"
    "  Warning: Docker pull failed with exit code 1, back off 9.381 seconds before retry.\n"
    "  /usr/bin/docker pull ghcr.io/enricomi/publish-unit-test-result-action:v2.3.0\n"
    "  Error response from daemon: received unexpected HTTP status: 500 Internal Server Error")
add("infra-ghcr-unavailable", "bridgecrewio/checkov-action#125", "job:checkov-static-code-analysis",
    GHCR + " (the maintainer: GitHub packages had some issues)",
    "Error response from daemon: Head \"https://ghcr.io/v2/bridgecrewio/checkov/manifests/2.3.51\": received "
    "unexpected HTTP status: 503 Service Unavailable\n"
    "  Warning: Docker pull failed with exit code 1, back off 2.263 seconds before retry.")
add("infra-ghcr-unavailable", "EnricoMi/publish-unit-test-result-action#257", "job:publish-unit-test-result-pull",
    GHCR + " (no answer in its words: the token request timed out)",
    "Pull down action image 'ghcr.io/enricomi/publish-unit-test-result-action:v1.33'\n"
    "  /usr/bin/docker pull ghcr.io/enricomi/publish-unit-test-result-action:v1.33\n"
    "  Error response from daemon: Head \"https://ghcr.io/v2/enricomi/publish-unit-test-result-action/manifests/v1.33\": "
    "Get \"https://ghcr.io/token?scope=repository%3Aenricomi%2Fpublish-unit-test-result-action%3Apull&service=ghcr.io\": "
    "net/http: request canceled (Client.Timeout exceeded while awaiting headers)\n"
    "  Warning: Docker pull failed with exit code 1, back off 6.118 seconds before retry.")
add("infra-ghcr-unavailable", "actions/jekyll-build-pages#77", "job:jekyll-build-pages-pull",
    GHCR + " (a githubstatus.com incident; the token request timed out)",
    "Error response from daemon: Head \"https://ghcr.io/v2/actions/jekyll-build-pages/manifests/latest\": Get "
    "\"https://ghcr.io/token?scope=repository%3Aactions%2Fjekyll-build-pages%3Apull&service=ghcr.io\": net/http: "
    "request canceled (Client.Timeout exceeded while awaiting headers)")
add("infra-docker-hub-503", "devops-infra/action-pull-request#196", "job:action-pull-request-pull",
    "infra: the same words from another service: Docker Hub's registry answered 503; retry once it recovers "
    "(a different service from ghcr.io, so another label, as the older sets keep services apart)",
    "Pull down action image 'devopsinfra/action-pull-request:v0.5.5'\n"
    "  /usr/bin/docker pull devopsinfra/action-pull-request:v0.5.5\n"
    "  Error response from daemon: Head \"https://registry-1.docker.io/v2/devopsinfra/action-pull-request/manifests/"
    "v0.5.5\": received unexpected HTTP status: 503 Service Unavailable\n"
    "  Warning: Docker pull failed with exit code 1, back off 3.432 seconds before retry.")

# ---------------------------------------------------------------- infra: the GitHub API's rate limit
RATE = ("infra: the workflow's GitHub App installation token ran out of its hourly API quota; the fix is to wait "
        "or retry (or make fewer calls), never the change under test")
add("infra-github-api-rate-limit-installation", "NixOS/nixpkgs#413832", "job:nixpkgs-github-script",
    RATE + " (many workflows at once through actions/github-script)",
    "RequestError [HttpError]: API rate limit exceeded for installation. If you reach out to GitHub Support for help, "
    "please include the request ID 4C32:E66A2:27EF37:4E976C:683F3085 and timestamp 2025-06-03 17:27:33 UTC.\n"
    "    at /home/runner/work/_actions/actions/github-script/60a0d83039c74a4aee543508d2ffcb1c3799cdea/dist/index.js:9537:21\n"
    "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n"
    "  status: 403,")
add("infra-github-api-rate-limit-installation", "github/codeql#5106", "job:codeql-init",
    RATE + " (the answer: the token got rate-limited; re-trying the build should work)",
    "Error: init action failed: HttpError: API rate limit exceeded for installation ID 7125406")
add("infra-github-api-rate-limit-installation", "fountainhead/action-wait-for-check#30", "job:wait-for-check",
    RATE + " (a comment: wait some minutes and it works again)",
    "Error: API rate limit exceeded for installation ID 8440595")
add("infra-github-api-rate-limit-installation", "dawidd6/action-download-artifact#163", "job:download-artifact",
    RATE + " (working again shortly after)",
    "Error: API rate limit exceeded for installation ID 19497584.")
add("infra-github-api-rate-limit-installation", "bobheadxi/deployments#67", "job:deployments-finish",
    RATE + " (the maintainer: the token's quota)",
    "finishing deployment for 469535842 with status success\n"
    "Error: unexpected error encountered: API rate limit exceeded for installation ID 12770951.")
add("infra-github-api-rate-limit-installation", "dotCMS/core#30073", "job:dotcms-developer-workflow",
    RATE,
    "API rate limit exceeded for site ID installation. If you reach out to GitHub Support for help, please include "
    "the request ID E7C3:39F39A:911EBA8:117896EF:66E40ED1 and timestamp 2024-09-13 10:07:13 UTC. - "
    "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api")
add("infra-github-api-anonymous-rate-limit-no-token", "extractions/setup-crate#1", "job:setup-crate-mdbook",
    "infra: the same words, another fix: the action called the API without a token, so the runner's address hit "
    "the anonymous limit; the fix is passing GITHUB_TOKEN (the action's documentation), not waiting",
    "Run extractions/setup-crate@v1\n"
    "  with:\n"
    "    owner: rust-lang\n"
    "    name: mdBook\n"
    "Error: API rate limit exceeded for 52.160.111.19. (But here's the good news: Authenticated requests get a higher "
    "rate limit. Check out the documentation for more details.)")

# ---------------------------------------------------------------- infra: a runner that lost communication, one per report
LOST = ("The self-hosted runner: {} lost communication with the server. Verify the machine is running and has a "
        "healthy network connection. Anything in your workflow that terminates the runner process, starves it for "
        "CPU/Memory, or blocks its network access can cause this error.")
add("infra-runner-lost-comm-starved-by-build", "Quansight/open-gpu-server#28", "job:conda-forge-mongodb-feedstock",
    "infra: a demanding build starved the runner process; the fix is a larger runner or less parallelism (the "
    "report's solution); the message names no cause, one per report",
    LOST.format("cirun-conda-forge--mongodb-feedstock-fd6a0cc"))
add("infra-runner-lost-comm-reboot-script", "pytorch/serve#2736", "job:torchserve-docker-gpu-regression",
    "infra: the GPU runner's reboot script ran during the nightly (the fix: move the reboot); the same words, "
    "another cause; manual retries always passed",
    LOST.format("regression-test-gpu-3"))
add("infra-runner-lost-comm-ec2-windows", "actions/runner#2040", "job:self-hosted-ec2-windows",
    "infra: a self-hosted EC2 Windows runner stops mid-job; the cause is not found in the report, one per report",
    "The self-hosted runner: lost communication with the server. Verify the machine is running and has a healthy "
    "network connection. Anything in your workflow that terminates the runner process, starves it for CPU/Memory, or "
    "blocks its network access can cause this error.")

# ---------------------------------------------------------------- real: nvcc and the GPU architecture
NVCC = ("real: the installed nvcc is older than the GPU architecture the build asks for; the fix is a newer CUDA "
        "toolkit (or asking for an older architecture), one change of the same kind in each report")
add("nvcc-older-than-gpu-arch", "NVlabs/tiny-cuda-nn#239", "job:tiny-cuda-nn-install-rtx4090",
    NVCC + " (CUDA 11.3 on an RTX 4090; the answer: upgrade CUDA or TCNN_CUDA_ARCHITECTURES=86)",
    "nvcc fatal : Unsupported gpu architecture 'compute_89'")
add("nvcc-older-than-gpu-arch", "facebookresearch/3detr#59", "job:3detr-pointnet2-setup-install",
    NVCC + " (CUDA 11.5 on an RTX 4090)",
    "nvcc fatal: Unsupported gpu architecture 'compute_89'\n"
    "Cuda compilation tools, release 11.5, V11.5.119\n"
    "Build cuda_11.5.r11.5/compiler.30672275_0")
add("nvcc-older-than-gpu-arch", "NVIDIA/thrust#1948", "job:thrust-cmake-build",
    NVCC + " (CUDA 11.7 asked for sm_90)",
    "nvcc fatal   : Unsupported gpu architecture 'compute_90'\n"
    "gmake[2]: *** [examples/CMakeFiles/thrust.example.mode.dir/build.make:76: examples/CMakeFiles/thrust.example.mode."
    "dir/mode.cu.o] Error 1\n"
    "gmake[1]: *** [CMakeFiles/Makefile2:15918: examples/CMakeFiles/thrust.example.mode.dir/all] Error 2\n"
    "[  3%] Building CUDA object examples/CMakeFiles/thrust.example.monte_carlo_disjoint_sequences.dir/"
    "monte_carlo_disjoint_sequences.cu.o\n"
    "nvcc fatal   : Unsupported gpu architecture 'compute_90'")
add("nvcc-older-than-gpu-arch", "DeadAt0m/ActiveSparseShifts-PyTorch#8", "job:active-sparse-shifts-setup-install",
    NVCC + " (CUDA 11.0 on an Ampere GPU; 'please update your cuda toolkit first')",
    "nvcc fatal : Unsupported gpu architecture 'compute_86'")
DROP = ("real: the same words, the opposite cause: the build's architecture list names compute_30, which CUDA 11 "
        "removed; the fix is the project's list, not another toolkit")
add("build-arch-list-names-compute-30-removed-in-cuda-11", "rapidsai/cugraph#1064", "job:cugraph-cpu-branch-build-cuda11",
    DROP + " (cugunrock's list)",
    "nvcc fatal   : Unsupported gpu architecture 'compute_30'")
add("build-arch-list-names-compute-30-removed-in-cuda-11", "flashlight/flashlight#213", "job:flashlight-cuda-build",
    DROP + " (a comment: it is because of CUDA 11; the fix is a PR changing the list)",
    "[  1%] Building NVCC (Device) object CMakeFiles/fl-libraries-cuda.dir/lib/sequence/criterion/cuda/"
    "fl-libraries-cuda_generated_ViterbiPath.cu.o\n"
    "nvcc fatal   : Unsupported gpu architecture 'compute_30'\n"
    "CMake Error at fl-libraries-cuda_generated_ViterbiPath.cu.o.Release.cmake:220 (message):\n"
    "  Error generating\n"
    "  /home/user/flashlight/build/CMakeFiles/fl-libraries-cuda.dir/lib/sequence/criterion/cuda/./"
    "fl-libraries-cuda_generated_ViterbiPath.cu.o")

# ---------------------------------------------------------------- Intel XPU: Level Zero
add("flaky-ur-usm-host-mem-register-out-of-device-memory", "intel/llvm#21633",
    "exp_usm_host_mem_register-test/urUSMHostMemRegisterTest/Success",
    "flaky: the test 'sometimes fails' with UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY on Level Zero V2 and was marked a "
    "known failure until the cause is found (the report and its PR)",
    "FAIL: Unified Runtime Conformance :: exp_usm_host_mem_register//exp_usm_host_mem_register-test/1/8 (1523 of 3069)\n"
    "******************** TEST 'Unified Runtime Conformance :: exp_usm_host_mem_register//"
    "exp_usm_host_mem_register-test/1/8' FAILED ********************")
add("infra-xpu-level-zero-device-lost-until-reboot", "intel/torch-xpu-ops#5432", "test/regressions/test_copy.py",
    "infra: the machine's XPU runtime enters a state where every test fails until a reboot (the report: machine-level, "
    "not a test expectation); repair the machine",
    "- UR_RESULT_ERROR_DEVICE_LOST\n"
    "- UR_RESULT_ERROR_OUT_OF_RESOURCES\n"
    "- UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY")

# ---------------------------------------------------------------- ROCm: code objects, one per report
add("rocalution-lacks-gfx1031-code-object", "ROCm/rocALUTION#197", "job:rocalution-app-hip-backend",
    "real: rocALUTION was not built for gfx1031 (the maintainers: not supported); HSA_OVERRIDE_GFX_VERSION=10.3.0 "
    "made it run; one report",
    "Number of HIP devices in the system: 1\n"
    "Matrix+Vectors loading:5.7e-05 sec\n"
    "HIP error: invalid device function\n"
    "File: /long_pathname_so_that_rpms_can_package_the_debug_info/src/extlibs/rocALUTION/src/base/hip/hip_vector.cpp; "
    "line: 845")
add("easydiffusion-install-without-system-pip", "easydiffusion/easydiffusion#1477", "job:easydiffusion-start-server",
    "real: the same words as a missing code object, on a machine with an NVIDIA GPU; the reporter's fix was "
    "installing the system's pip, so the installer's environment, not the GPU, was at fault; one report",
    "PYTHONPATH=/home/user/easy-diffusion/installer_files/env/lib/python3.8/site-packages\n"
    "/home/user/easy-diffusion/installer_files/env/bin/python\n"
    "Python 3.8.5\n"
    "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!")

# ---------------------------------------------------------------- triton: kernel image invalid, one per report
add("triton-kernel-image-invalid-code-sensitive", "triton-lang/triton#1556", "job:triton-cast-kernel",
    "real: a triton 2.0 kernel that fails to load on some machines, sensitive to whitespace and comments in its "
    "source (a KeyError beside it); the message names no cause, one per report",
    "RuntimeError: Triton Error [CUDA]: device kernel image is invalid")
add("triton-kernel-image-invalid-a100-cuda-11.8", "triton-lang/triton#4172", "job:triton-a100-torch-2.2.2-cu118",
    "real: the same words on an A100 with CUDA 11.8 and torch 2.2.2; no cause named in what was read of the "
    "report, one per report",
    "Triton Error [CUDA]: device kernel image is invalid")

# ---------------------------------------------------------------- LLVM AMDGPU instruction selection, one per report
add("llvm-amdgpu-wmma-f16-isel-llc-gfx1100", "llvm/llvm-project#102981", "job:llc-wmma-gfx1100",
    "real: LLVM cannot select the f16-accumulating wmma for gfx1100 on the reported IR; LLVM's 'Cannot select' names "
    "no cause, one per report",
    "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.wmma.f16.16x16x16.f16\n"
    "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace.\n"
    "Stack dump:\n"
    "0.      Program arguments: ./llvm-project/bin/llc wmma.ll -march=amdgcn -mcpu=gfx1100\n"
    "1.      Running pass 'CallGraph Pass Manager' on module 'wmma.ll'.\n"
    "2.      Running pass 'AMDGPU DAG->DAG Pattern Instruction Selection' on function "
    "'@matmul_dispatch_0_matmul_16x16x16_f16'")
add("iree-sdxl-clip-wmma-f16-accumulate-gfx1100", "iree-org/iree#17807", "job:iree-compile-sdxl-clip-gfx1100",
    "real: IREE's SDXL CLIP compile asked for a wmma accumulating in f16 on gfx1100 (the report's title); the same "
    "LLVM words, one per report",
    "iree.compiler.tools.binaries.CompilerToolError: Error invoking IREE compiler tool iree-compile.exe\n"
    "Error code: 3\n"
    "Diagnostics:\n"
    "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.wmma.f16.16x16x16.f16\n"
    "Please report issues to https://github.com/iree-org/iree/issues and include the crash backtrace.\n"
    "Stack dump:\n"
    "0.      Running pass 'CallGraph Pass Manager' on module 'encode_prompts$async_dispatch_8'.\n"
    "1.      Running pass 'AMDGPU DAG->DAG Pattern Instruction Selection' on function "
    "'@\"encode_prompts$async_dispatch_8_batch_matmul_transpose_b_12x64x64x64_f16\"'")

# ---------------------------------------------------------------- lit / FileCheck, one per report
add("triton-amd-mfma-k-dim-pass-lit-failure", "triton-lang/triton#8301",
    "TRITON :: TritonGPU/amd/accelerate-amd-matmul-mfma.mlir",
    "real: the pull request's own change to the AMD accelerate-matmul pass broke its lit test (the author's words); "
    "one per report",
    "[0/1] Running the triton regression tests\n"
    "FAIL: TRITON :: TritonGPU/amd/accelerate-amd-matmul-mfma.mlir (46 of 202)\n"
    "******************** TEST 'TRITON :: TritonGPU/amd/accelerate-amd-matmul-mfma.mlir' FAILED ********************\n"
    "Exit Code: 1")
add("llvm-bpf-argpromotion-test-broken-on-main", "llvm/llvm-project#198311",
    "LLVM :: Transforms/ArgumentPromotion/BPF/argpromotion.ll",
    "real: the test was broken on main by another change, unrelated to the pull request that met it (the report); "
    "a real fault of the tree, one per report",
    "Exit Code: 1\n"
    "\n"
    "Command Output (stdout):\n"
    "--\n"
    "# RUN: at line 1\n"
    "/home/gha/actions-runner/_work/llvm-project/llvm-project/build/bin/opt -passes=argpromotion -mtriple=bpf-pc-linux "
    "-S /home/gha/actions-runner/_work/llvm-project/llvm-project/llvm/test/Transforms/ArgumentPromotion/BPF/"
    "argpromotion.ll | /home/gha/actions-runner/_work/llvm-project/llvm-project/build/bin/FileCheck /home/gha/"
    "actions-runner/_work/llvm-project/llvm-project/llvm/test/Transforms/ArgumentPromotion/BPF/argpromotion.ll\n"
    "# note: command had no output on stdout or stderr")
add("offload-test-root-signature-manual-descriptors", "llvm/offload-test-suite#406",
    "OffloadTest-d3d12 :: Feature/RootSignatures/ManualDescriptors.test",
    "real: the test's output buffer stayed zero where the check expects data; one per report",
    "# | C:\\Users\\user\\projects\\offload-test-suite\\test\\Feature\\RootSignatures\\ManualDescriptors.test:97:10: "
    "error: CHECK: expected string not found in input\n"
    "# | # CHECK: Data: [ 20, 48, 84, 128 ]\n"
    "# |          ^\n"
    "# | <stdin>:50:14: note: scanning from here\n"
    "# |  - Name: Out1\n"
    "# |              ^\n"
    "# | <stdin>:53:2: note: possible intended match here\n"
    "# |  Data: [ 0, 0, 0, 0 ]")

# ---------------------------------------------------------------- MLIR: failed to legalize, one per report
add("triton-linalg-tt-load-mask-legalize", "Cambricon/triton-linalg#12", "job:triton-linalg-opt-matmul-ttir",
    "real: triton-linalg's conversion could not lower the matmul tutorial's masked tt.load; one per report",
    "/workspace/projs/triton_shared/triton/python/tutorials/03-matrix-multiplication.py:304:20: error: failed to "
    "legalize operation 'tt.load' that was explicitly marked illegal\n"
    "        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)\n"
    "                   ^\n"
    "triton-linalg-opt: /home/runner/work/triton/triton/llvm-project/mlir/include/mlir/IR/UseDefLists.h:198: "
    "mlir::IRObjectWithUseList<mlir::OpOperand>::~IRObjectWithUseList() [OperandType = mlir::OpOperand]: Assertion "
    "`use_empty() && \"Cannot destroy a value that still has uses!\"' failed.")
add("rocm-triton-compile-in-subproc-tt-load-legalize", "ROCm/triton#208", "python/test/unit/runtime/test_subproc.py::test_compile_in_subproc",
    "real: ROCm triton's lowering of tt.load failed in the subprocess compile test; one per report",
    "error: failed to legalize operation 'tt.load' that was explicitly marked illegal")
add("triton-cpu-get-program-id-legalize", "meta-pytorch/triton-cpu#6", "job:triton-cpu-01-vector-add",
    "real: the CPU backend could not lower tt.get_program_id in the vector-add tutorial; one per report",
    "loc(\"01-vector-add.py\":37:24): error: failed to legalize operation 'tt.get_program_id' that was explicitly "
    "marked illegal\n"
    "  File \"triton/backends/cpu/compiler.py\", line 112, in make_llir\n"
    "    pm.run(mod)\n"
    "RuntimeError: PassManager::run failed")

# ---------------------------------------------------------------- real: the driver older than the runtime, in the container runtime's words
add("nvidia-driver-older-than-cuda-runtime", "nodefluxio/vortex#106", "job:vortex-docker-image-build",
    DRV + " (nvidia-container-cli's check of the image's CUDA against the host driver; the answer: a driver "
    ">=440.33 for CUDA 10.2)",
    r'OCI runtime create failed: container_linux.go:349: starting container process caused "process_linux.go:449: '
    r'container init caused \"process_linux.go:432: running prestart hook 1 caused \\\"error running hook: exit '
    r'status 1, stdout: , stderr: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=10.2, please '
    r'update your driver to a newer version, or use an earlier cuda container\\\\n\\\"\"": unknown')
add("nvidia-driver-older-than-cuda-runtime", "Xilinx/Vitis-AI#103", "job:vitis-ai-docker-run-gpu",
    DRV + " (the answer: NVIDIA driver >=410.78 for CUDA 10.0)",
    r'docker: Error response from daemon: OCI runtime create failed: container_linux.go:345: starting container '
    r'process caused "process_linux.go:430: container init caused \"process_linux.go:413: running prestart hook 0 '
    r'caused \\\"error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: requirement error: '
    r'unsatisfied condition: cuda>=10.0\\\\n\\\"\"": unknown.')
add("nvidia-driver-older-than-cuda-runtime", "NVIDIA/nvidia-docker#1442", "job:nvidia-docker-cuda-11-container",
    DRV + " (the maintainer: a CUDA 11 container needs a host driver of 450 or newer)",
    "docker: Error response from daemon: OCI runtime create failed: container_linux.go:370: starting container process "
    "caused: process_linux.go:459: container init caused: Running hook #0:: error running hook: exit status 1, "
    "stdout: , stderr: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=11.0, please update your "
    "driver to a newer version, or use an earlier cuda container: unknown.")
add("nvidia-driver-older-than-cuda-runtime", "SyneRBI/PETRIC2#27", "job:petric2-docker-run-sirf",
    DRV + " (a driver of CUDA 12.4 for an image of CUDA 12.8)",
    "Status: Downloaded newer image for ghcr.io/synerbi/sirf:petric2\n"
    "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime "
    "create failed: runc create failed: unable to start container process: error during container init: error running "
    "prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
    "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer "
    "version, or use an earlier cuda container")
add("cuda-11.8-image-retagged-requires-newer-driver", "NVIDIA/nvidia-container-toolkit#152", "job:cuda-11.8-base-container",
    "real: the same words, another cause: the nvidia/cuda:11.8 image was re-pushed under its tag asking for a newer "
    "driver than CUDA 11.8 lists; the fixes offered are an older digest or NVIDIA_DISABLE_REQUIRES, not the driver",
    "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=11.8")

# ---------------------------------------------------------------- real: no kernel image for the GPU, one per build
# (pytorch/pytorch#167244, the cu124 wheel without sm_120, was dropped: fresh3.jsonl holds that report)
add("mish-cuda-extension-built-without-sm52", "thomasbrandon/mish-cuda#10", "job:mish-cuda-titan-x",
    "real: an extension built without the GPU's architecture; fixed by adding 5.2 to TORCH_CUDA_ARCH_LIST; the "
    "message names the build's fault, not which build, so one per build",
    "RuntimeError: CUDA error: no kernel image is available for execution on the device")

# ---------------------------------------------------------------- flaky: CUDA tests that fail now and then, one per test
add("flaky-test-nuclear-norm-axes-small-brute-force", "pytorch/pytorch#21785",
    "test_cuda.py::TestCuda::test_nuclear_norm_axes_small_brute_force",
    "flaky: the report's title says the test is flaky (an allclose on a CUDA norm); one per test",
    "Jun 14 15:36:31 ======================================================================\n"
    "Jun 14 15:36:31 FAIL: test_nuclear_norm_axes_small_brute_force (__main__.TestCuda)\n"
    "Jun 14 15:36:31 ----------------------------------------------------------------------\n"
    "Jun 14 15:36:31 Traceback (most recent call last):\n"
    "Jun 14 15:36:31   File \"/var/lib/jenkins/workspace/test/common_utils.py\", line 399, in wrapper\n"
    "Jun 14 15:36:31     method(*args, **kwargs)\n"
    "Jun 14 15:36:31   File \"test_cuda.py\", line 2696, in test_nuclear_norm_axes_small_brute_force\n"
    "Jun 14 15:36:31     _TestTorchMixin._test_nuclear_norm_axes(self, device='cuda')\n"
    "Jun 14 15:36:31   File \"/var/lib/jenkins/workspace/test/test_torch.py\", line 994, in check_single_nuclear_norm\n"
    "Jun 14 15:36:31     self.assertTrue(np.allclose(ans.cpu(), expected, rtol=1e-02, atol=1e-03))\n"
    "Jun 14 15:36:31 AssertionError: False is not true")
add("flaky-test-triangular-solve-cuda", "pytorch/pytorch#21577", "test_cuda.py::TestCuda::test_triangular_solve",
    "flaky: the report's title says the test is flaky (an exact comparison of a CUDA solve); one per test",
    "Jun 08 06:44:19 FAIL: test_triangular_solve (__main__.TestCuda)\n"
    "Jun 08 06:44:19 ----------------------------------------------------------------------\n"
    "Jun 08 06:44:19 Traceback (most recent call last):\n"
    "Jun 08 06:44:19   File \"test_cuda.py\", line 2686, in test_triangular_solve\n"
    "Jun 08 06:44:19     _TestTorchMixin._test_triangular_solve(self, lambda t: t.cuda())\n"
    "Jun 08 06:44:19   File \"/var/lib/jenkins/workspace/test/test_torch.py\", line 5426, in _test_triangular_solve\n"
    "Jun 08 06:44:19     self.assertEqual(res1, tb, 0)\n"
    "Jun 08 06:44:19   File \"/var/lib/jenkins/workspace/test/common_utils.py\", line 539, in assertTensorsEqual\n"
    "Jun 08 06:44:19     self.assertLessEqual(max_err, prec, message)\n"
    "Jun 08 06:44:19 AssertionError: tensor(12.3821, device='cuda:0') not less than or equal to 0 : ")
add("flaky-meta-fft-ifft-cuda-float64", "pytorch/pytorch#89156",
    "test_meta.py::TestMetaCUDA::test_dispatch_meta_outplace_fft_ifft_cuda_float64",
    "flaky: 'has flakily failed at least 6 times in the past week' and was disabled; the failure is in the next "
    "test's setUp, after a cuFFT fault (possibly another report's cause, not agreed); one per report",
    "2022-11-13T05:14:02.4425915Z ERROR [0.002s]: test_dispatch_meta_outplace_fft_ifft_cuda_float64 (__main__.TestMetaCUDA)\n"
    "2022-11-13T05:14:02.4426166Z ----------------------------------------------------------------------\n"
    "2022-11-13T05:14:02.4426273Z Traceback (most recent call last):\n"
    "2022-11-13T05:14:02.4426625Z   File \"/opt/conda/lib/python3.10/site-packages/torch/testing/_internal/common_utils.py\", "
    "line 2129, in setUp\n"
    "2022-11-13T05:14:02.4426708Z     set_rng_seed(SEED)\n"
    "2022-11-13T05:14:02.4427329Z   File \"/opt/conda/lib/python3.10/site-packages/torch/random.py\", line 40, in manual_seed\n"
    "2022-11-13T05:14:02.4427442Z     torch.cuda.manual_seed_all(seed)")


__all__ = ["F", "add", "records", "render"]

if __name__ == "__main__":
    _SET.write(HERE / "fresh8.jsonl")
