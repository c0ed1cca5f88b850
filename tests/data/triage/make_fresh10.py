"""Builds ``fresh10.jsonl``: an eleventh, wholly held-out set of real failure texts from public reports,
none of them a source of ``wild.jsonl``, ``labelled.jsonl``, ``holdout.jsonl`` or ``fresh.jsonl`` …
``fresh9.jsonl`` (checked against their ``source`` fields and the issue links inside their texts),
labelled by root cause *before* any signature code was run on them.
Regenerate with ``python tests/data/triage/make_fresh10.py`` (deterministic).

It exists to measure grouping and classification honestly after signature version 11, and to tell
two questions apart: do the rules carry over to **new wordings of fault kinds the older sets already
name**, and how do they meet **kinds none of them names**? Each record therefore carries ``kind``:

* ``known`` — a kind an older set's labels name, here in other tools' words or from other reports:
  Docker Hub's pull limit (kubelet/containerd, podman and buildx wordings), the
  compiler killed for memory (make, ninja, crosstool-NG), apt's ``Hash Sum mismatch``, a hosted
  runner's disk full (buildx, docker pull, the runner's own diagnostics, Python's ``Errno 28``), git's
  transfer cut off (GnuTLS, OpenSSL, HTTP/2), pip's hash mismatch on a cut download, DNS, a driver
  older than the CUDA runtime, nvcc older than the target architecture, an fp8e4nv cast compiled for
  a GPU before sm_89, an illegal memory access, a CI job over its time limit (Travis, SLURM), wrong
  results beyond a tolerance, ``triton-opt`` assertion failures and crashes.
* ``new`` — kinds no older label names: CUDA peer access unsupported between two GPUs, NCCL's
  ``unhandled system error`` / ``internal error`` / ``unhandled cuda error`` and its InfiniBand
  completion error 12, an NVLink Xid 145/149 and the GSP firmware's Xid 119 timeout, lit's
  configuration failing to load (``llvm_config`` is None) in Triton and triton-shared, a Kubernetes
  runner pod's image that cannot be pulled (network reset vs. a tag that does not exist), hooks run
  in a sandbox without network (pre-commit.ci, a distribution's offline build), Docker Hub
  rate-limiting a whole IPv6 prefix, a kernel ended by the display driver's watchdog (``the launch
  timed out and was terminated``) and torch.distributed's rendezvous store failing (several NICs,
  1536 ranks at once, two jobs sharing one rendezvous).

Labelling rule (the same as ``make_wild.py``'s and the other fresh sets'):

* **Same label = same fix.** Two texts carry the same label when one change would fix both, as
  the reports (their comments, a linked duplicate or the fix) show.
* A message that names the fault specifically is one root cause across reports when the reports
  agree on the cause and the fix is one change of the same kind: Docker Hub's unauthenticated pull
  limit (authenticate the pulls or wait for the window), cc1plus killed for memory (fewer parallel
  jobs or more memory), apt's ``Hash Sum mismatch`` from a mirror mid-update (retry), a GitHub-hosted
  runner's disk filled by a CUDA image (free the runner's disk first or use a larger runner), git's
  transfer cut mid-pack (retry), pip's hash check failing on a download cut short (retry the
  download), peer access unsupported between two consumer or virtualised GPUs (disable P2P:
  ``NCCL_P2P_DISABLE=1``), NCCL's IB completion error 12 (the NICs cannot reach each other: fix the
  fabric), the GSP firmware's RPC timeout (a driver bug on that node: disable GSP or update the
  driver, drain meanwhile), a driver older than the image's CUDA runtime (newer driver or older
  image).
* A message that says nothing about where or why — NCCL's ``unhandled system error`` or ``internal
  error``, an illegal memory access, ``Tensor-likes are not close``, a ``triton-opt`` assertion, a job
  over its time limit, ``Temporary failure in name resolution`` — is one root cause per report unless
  the reports agree on one fix. The same words with two causes get two labels: Docker Hub's
  ``toomanyrequests`` from an over-used anonymous limit and from Docker Hub counting a whole IPv6
  /64 as one client; ``ImagePullBackOff`` from a connection reset and from a tag that does not exist;
  ``Temporary failure in name resolution`` from a flaky network, from a VPN on the build host and from
  a sandbox that has no network by design; lit's ``'NoneType' object has no attribute
  'use_lit_shell'`` in Triton and in triton-shared (two repositories, two fixes); pip's hash mismatch
  on a cut download and on a corrupt cache; nvcc's ``Unsupported gpu architecture`` for sm_86, for
  sm_61 and for an empty architecture from a failed detection.
* **Class** is the label's prefix: ``infra-`` (the runner, the network, a service, the machine:
  retry or repair, never blame a commit), ``flaky-`` (the same code passes on a rerun: the report
  says so), anything else ``real``. As in the older sets, a toolchain, driver, image or sandbox that
  does not fit what the job asks (nvcc older than the GPU, a driver older than the image's runtime,
  P2P enabled on GPUs without it, a hook that needs the network in a sandbox without one) is
  ``real``: the fix is a change to the build's environment definition, not a retry. A single failure
  text cannot show flakiness, so a flaky report's text alone is expected to be read as real or
  infrastructure; the class figure counts it anyway.
* Texts of one report in several shapes share the report's label.

Caveat: the person who collected and labelled this set had read docs/triage.md (its description of
signature versions up to 11 and the misses it lists for the older sets) and the older sets' label
names, and chose about three fifths of the reports (42 of 70) from kinds those labels name,
deliberately in other tools' words, and 28 from kinds they do not name. No signature or triage
code was run on this file, and no signature output on it was read, before the labels were
committed.

Each record: ``id``, ``fault`` (the label), ``source`` (``owner/repo#N``, the report's URL is
``https://github.com/owner/repo/issues/N``, or ``…/pull/N`` for a pull request), ``test`` (the test
the report names; where it names none, ``job:<project>-<what ran>``), ``kind`` (``known`` or ``new``,
above), ``shape`` (``real``: the report's own text, excerpted; ``derived-…``: that text put through a
log shape a nightly meets, built by ``heldout_set.py``), ``why`` (the labelling reason) and ``text``.

Personal data removed: user names in paths → ``user``, home folders → ``/home/user``; no e-mail.
Where GitHub's page rendered a log's line number as a link inside a word, the link is undone;
markdown quoting (``>``) and backticks around a log line are dropped. Texts are short excerpts of
the error lines (fair use), not whole logs; ``...`` inside a text is the report's own.
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

#: the labels whose fault kind an older set's labels already name (``kind`` = ``known``); every other
#: label is of a kind none of them names (``kind`` = ``new``)
KNOWN: set[str] = set()


def known(fault: str) -> str:
    KNOWN.add(fault)
    return fault


def records() -> list[dict]:
    """The records of ``heldout_set.records`` with ``kind`` (``known`` / ``new``) after ``test``."""
    out = []
    for r in _SET.records():
        kind = "known" if r["fault"] in KNOWN else "new"
        out.append({k: r[k] for k in ("id", "fault", "source", "test")} | {"kind": kind}
                   | {k: r[k] for k in ("why", "shape", "text")})
    return out


# ================================================================ KNOWN KINDS, NEW WORDINGS

# ---------------------------------------------------------------- Docker Hub's pull limit
HUB = known("infra-dockerhub-unauthenticated-pull-limit")
HUBWHY = ("infra: Docker Hub's pull limit for unauthenticated (or free) clients was reached; the fix is "
          "authenticating the pulls (or a mirror) or waiting for the window, never the change")
add(HUB, "suxess-it/kubriX#1075", "job:kubrix-kind-install", HUBWHY + " (kubelet's words; the thread moves to an authenticated user)",
    "Failed to pull image \"prom/memcached-exporter:v0.15.0\": failed to pull and unpack image "
    "\"docker.io/prom/memcached-exporter:v0.15.0\": failed to copy: httpReadSeeker: failed open: unexpected status code "
    "https://registry-1.docker.io/v2/prom/memcached-exporter/manifests/sha256:bb01ad25e9fcf0630cbae9c091a7687bca7fc0c7869912d98d95a6887b9eb599: "
    "429 Too Many Requests - Server message: toomanyrequests: You have reached your unauthenticated pull rate limit. "
    "https://www.docker.com/increase-rate-limit")
add(HUB, "jenkinsci/helm-charts#1586", "job:jenkins-helm-charts-ci-checks", HUBWHY + " (a kind cluster in GitHub Actions; 'sometimes fail')",
    "  Warning  Failed   6m50s (x4 over 9m46s)  kubelet  Failed to pull image \"docker.io/bats/bats:1.13.0\": failed to pull "
    "and unpack image \"docker.io/bats/bats:1.13.0\": failed to copy: httpReadSeeker: failed open: unexpected status from GET "
    "request to https://registry-1.docker.io/v2/bats/bats/manifests/sha256:ba5704b9c118b7e9f358700b8973800aaaa5bce36800ee8db375fe59fb5f4e09: "
    "429 Too Many Requests\n"
    "toomanyrequests: You have reached your unauthenticated pull rate limit. https://www.docker.com/increase-rate-limit")
add(HUB, "kcp-dev/kcp#3819", "job:kcp-pull-kcp-build-image", HUBWHY + " (podman/buildah's words in a Prow job)",
    "Trying to pull docker.io/library/golang:1.24.11...\n"
    "time=\"2026-02-04T17:13:48Z\" level=warning msg=\"Failed, retrying in 1s ... (1/3). Error: initializing source "
    "docker://golang:1.24.11: reading manifest 1.24.11 in docker.io/library/golang: toomanyrequests: You have reached your "
    "unauthenticated pull rate limit. https://www.docker.com/increase-rate-limit\"\n"
    "Error: creating build container: initializing source docker://golang:1.24.11: reading manifest 1.24.11 in "
    "docker.io/library/golang: toomanyrequests: You have reached your unauthenticated pull rate limit. "
    "https://www.docker.com/increase-rate-limit")
add(HUB, "ScribeMD/docker-cache#829", "job:docker-cache-buildx", HUBWHY + " (buildx's words; the answer: the CI hit Docker's limits)",
    "ERROR: failed to copy: httpReadSeeker: failed open: unexpected status code "
    "https://registry-1.docker.io/v2/library/rust/manifests/sha256:de6e081a4e9c10e70731071cec6f629892da1bbaa24b478a96bdc59060674117: "
    "429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit. You may increase the "
    "limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit\n"
    "------")

# ---------------------------------------------------------------- the compiler killed for memory
OOM = known("infra-cc1plus-killed-out-of-memory")
OOMWHY = ("infra: the kernel's OOM killer ended the C++ compiler (Killed signal terminated program cc1plus) on a "
          "machine with too little memory for the parallel build; fewer jobs or more memory, never the change")
add(OOM, "stellar/stellar-core#5308", "job:stellar-core-build-linux-gcc-current", OOMWHY + " (one CI variant, no diagnostics before it)",
    "g++: fatal error: Killed signal terminated program cc1plus\n"
    "compilation terminated.\n"
    "make[3]: *** [Makefile:8448: ledger/test/LedgerCloseMetaStreamTests.o] Error 1\n"
    "make[2]: *** [Makefile:5333: all] Error 2\n"
    "make[1]: *** [Makefile:712: all-recursive] Error 1\n"
    "make: *** [Makefile:520: all] Error 2")
add(OOM, "AliceO2Group/AliceO2#10272", "job:o2-fullci-build", OOMWHY + " (ninja's words, a bot's CI comment)",
    "## sw/BUILD/O2Physics-latest/log\n"
    "c++: fatal error: Killed signal terminated program cc1plus\n"
    "ninja: build stopped: subcommand failed.")
add(OOM, "crosstool-ng/crosstool-ng#2044", "job:crosstool-ng-gcc-core-build", OOMWHY + " (crosstool-NG's log prefixes, in a docker build)",
    "1583.5 [ERROR]    g++: fatal error: Killed signal terminated program cc1plus\n"
    "1583.5 [ALL  ]    compilation terminated.\n"
    "1583.6 [ERROR]    make[2]: *** [Makefile:1157: insn-emit.o] Error 1\n"
    "1583.6 [ERROR]    make[2]: *** Waiting for unfinished jobs....\n"
    "1638.9 [ERROR]  >>  Build failed in step 'Installing core C gcc compiler'")

# ---------------------------------------------------------------- apt's Hash Sum mismatch
APT = known("infra-apt-hash-sum-mismatch-mirror-mid-update")
APTWHY = ("infra: apt's index and the file it lists were read while the repository was being updated (the "
          "reports: upstream repositories' issue, re-run apt-get update); retry, never the change")
add(APT, "r-lib/actions#51", "job:setup-r-ubuntu-16.04", APTWHY + " (packages.microsoft.com; 'issues in the upstream PPAs')",
    "E: Failed to fetch https://packages.microsoft.com/ubuntu/16.04/prod/dists/xenial/main/binary-amd64/Packages.bz2  "
    "Hash Sum mismatch\n"
    "E: Some index files failed to download. They have been ignored, or old ones used instead.")
add(APT, "GoogleCloudDataproc/initialization-actions#168", "job:dataproc-datalab-init-action", APTWHY + " (the answer: re-run apt-get updat"
    "e until it succeeds)",
    "+ apt-get update\n"
    "...\n"
    "W: Failed to fetch http://repo.stackdriver.com/apt/dists/jessie/main/binary-amd64/Packages  Hash Sum mismatch\n"
    "\n"
    "E: Some index files failed to download. They have been ignored, or old ones used instead.")

# ---------------------------------------------------------------- a hosted runner's disk full
DISK = known("infra-hosted-runner-disk-full")
DISKWHY = ("infra: a GitHub-hosted runner's disk filled up (large CUDA/conda images); the fix is freeing the "
           "runner's disk first (remove /opt/hostedtoolcache, maximize-build-space) or a larger runner, never the change")
add(DISK, "actions/runner-images#10237", "job:siaimes-pytorch-docker-image", DISKWHY + " (buildx's words)",
    "buildx failed with: ERROR: failed to solve: failed to register layer: write /opt/conda/lib/libnppial.so.11.8.0.86: "
    "no space left on device")
add(DISK, "ameli/manylinux-cuda#2", "job:manylinux-cuda-container-job", DISKWHY + " (a job container; fixed by clearing the runner's cache)",
    "  failed to register layer: write /usr/local/cuda-11.7/targets/x86_64-linux/lib/libcusolver_static.a: no space left on device")
add(DISK, "tlc-pack/tlcpack#186", "job:tlcpack-conda-gpu-nightly", DISKWHY + " (docker pull in a nightly)",
    "docker: failed to register layer: ApplyLayer exit status 1 stdout:  \n"
    "stderr: write /usr/local/cuda-11.6/targets/x86_64-linux/lib/libnppif.so.11.6.3.9: no space left on device.")
add(DISK, "rvolosatovs/docker-protobuf#289", "job:docker-protobuf-build", DISKWHY + " (the runner's own diagnostics log; the PR maximizes b"
    "uild space)",
    "build System.IO.IOException: No space left on device : '/home/runner/runners/2.311.0/_diag/Worker_20231116-033846-utc.log'")

# ---------------------------------------------------------------- git's transfer cut off
GIT = known("infra-git-transfer-cut-retry")
GITWHY = ("infra: the HTTPS transfer from github.com was cut mid-pack (GnuTLS/OpenSSL/HTTP/2 words); the reports "
          "retry or rerun, never the change")
add(GIT, "adoptium/aqa-tests#4308", "job:openj9-sanity-system-ppc64le-nightly", GITWHY + " (the issue asks for a retry of git fetch)",
    "01:24:28  git fetch -q --unshallow\n"
    "01:28:20  error: RPC failed; curl 56 GnuTLS recv error (-54): Error in the pull function.\n"
    "01:28:20  fatal: The remote end hung up unexpectedly\n"
    "01:28:20  fatal: early EOF\n"
    "01:28:20  fatal: index-pack failed")
add(GIT, "kata-containers/tests#4307", "job:kata-ci-clone-repos", GITWHY + " (two distributions' wordings; 'github's issue')",
    "error: RPC failed; curl 56 GnuTLS recv error (-54): Error in the pull function.\n"
    "error: RPC failed; curl 56 OpenSSL SSL_read: Connection reset by peer, errno 104")
add(GIT, "pytorch/ci-infra#111", "job:pytorch-arc-docker-build", GITWHY + " (ARC runners; 're-running the job a few times will eventually g"
    "et them to resolve')",
    "47.38   Running command git clone --filter=blob:none --quiet https://github.com/openai/triton /tmp/pip-req-build-cqkk4lff\n"
    "47.38   error: RPC failed; curl 92 HTTP/2 stream 0 was not closed cleanly: CANCEL (err 8)\n"
    "47.38   fatal: the remote end hung up unexpectedly\n"
    "47.38   fatal: early EOF\n"
    "47.38   fatal: index-pack failed\n"
    "47.38   error: subprocess-exited-with-error",
    "35.99 error: RPC failed; curl 56 GnuTLS recv error (-9): Error decoding the received TLS packet.\n"
    "35.99 fatal: the remote end hung up unexpectedly\n"
    "35.99 fatal: early EOF\n"
    "36.00 fatal: index-pack failed\n"
    "ERROR: process \"/bin/sh -c if [ -n \\\"${UCX_COMMIT}\\\" ] && [ -n \\\"${UCC_COMMIT}\\\" ]; then bash ./install_ucc.sh; fi\" "
    "did not complete successfully: exit code: 128")

# ---------------------------------------------------------------- pip's hash check on a cut download
PIPCUT = known("infra-pip-hash-mismatch-cut-download")
PIPWHY = ("infra: pip's hash check failed because the wheel's download ended early (the progress bar stops short of "
          "the size); retry the download, never the change")
add(PIPCUT, "vllm-project/vllm#18280", "job:vllm-tpu-ci-docker-build", PIPWHY + " (291.6/393.1 MB in a Buildkite job)",
    "16.78         Downloading nvidia_cublas_cu12-12.6.4.1-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl (393.1 MB)\n"
    "16.78            ━━━━━━━━━━━━━━━━━━━━━━━━━━━           291.6/393.1 MB 257.4 MB/s eta 0:00:01\n"
    "16.78       ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the package "
    "versions, please update the hashes. Otherwise, examine the package contents carefully; someone may have tampered with them.\n"
    "16.78           nvidia-cublas-cu12==12.6.4.1 from https://files.pythonhosted.org/packages/af/eb/ff4b8c503fa1f1796679dce648854d58751982"
    "426e4e4b37d6fce49d259c/nvidia_cublas_cu12-12.6.4.1-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl (from torch==2.7.0):\n"
    "16.78               Expected sha256 08ed2686e9875d01b58e3cb379c6896df8e76c75e0d4a7f7dace3d7b6d9ef8eb\n"
    "16.78                    Got        ec2c4ea862d8226ec197fc31ce80d449ee3696a312cdd3e26e0c2bd0e08881a5")
add(PIPCUT, "pytorch/pytorch#104598", "job:docker-build-requirements", PIPWHY + " (62.4/619.9 MB in a docker build)",
    "#0 7.830   Downloading torch-2.0.1-cp311-cp311-manylinux1_x86_64.whl (619.9 MB)\n"
    "#0 10.95      ━━━╸                                    62.4/619.9 MB 18.7 MB/s eta 0:00:30\n"
    "#0 11.07 ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the package "
    "versions, please update the hashes. Otherwise, examine the package contents carefully; someone may have tampered with them.\n"
    "#0 11.07     torch>=1.6.0 from https://files.pythonhosted.org/packages/c8/21/25020cfdd9f564a72f400ee491610e50cb212e8add8031abaa959af64"
    "51e/torch-2.0.1-cp311-cp311-manylinux1_x86_64.whl (from sentence-transformers==2.2.1->-r requirements.txt (line 1)):\n"
    "#0 11.07         Expected sha256 e617b1d0abaf6ced02dbb9486803abfef0d581609b09641b34fa315c9c40766d")
add(PIPCUT, "hacksider/Deep-Live-Cam#1193", "job:deep-live-cam-pip-install", PIPWHY + " (2.4/2.7 GB from download.pytorch.org)",
    "Collecting torch==2.5.1+cu118\n"
    "  Downloading https://download.pytorch.org/whl/cu118/torch-2.5.1%2Bcu118-cp310-cp310-win_amd64.whl (2700.1 MB)\n"
    "     ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╸━━━━ 2.4/2.7 GB 3.4 MB/s eta 0:01:23\n"
    "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the package versions, "
    "please update the hashes. Otherwise, examine the package contents carefully; someone may have tampered with them.\n"
    "    torch==2.5.1+cu118 from https://download.pytorch.org/whl/cu118/torch-2.5.1%2Bcu118-cp310-cp310-win_amd64.whl#sha256=0d8b4ebe8429e8"
    "bcaf7ae833531b2949169db788d5ed5accaabb481175c7443c (from -r .\\requirements.txt (line 13)):\n"
    "        Expected sha256 0d8b4ebe8429e8bcaf7ae833531b2949169db788d5ed5accaabb481175c7443c\n"
    "             Got        2970c70601025abc8b79e645c7049bbd2cd78c61787e0cb7f3365e079ca00c33")

# ---------------------------------------------------------------- DNS: the same words, several causes
add(known("infra-dns-flaky-network-rerun"), "ML-TANGO/TANGO#23", "job:tango-docker-compose-build",
    "infra: name resolution fails 'from time to time' on a low-bandwidth network or a problematic DNS server; the "
    "project's answer is to run the build again, never the change",
    "failed to solve: rpc error: code = Unknown desc = failed to solve with frontend dockerfile.v0: \n"
    "failed to create LLB definition: \n"
    "failed to do request: Head \"https://registry-1.docker.io/al tcp: lookup registry-1.docker.io: \n"
    "Temporary failure in name resolution")
add(known("infra-dns-docker-build-host-vpn"), "Twisted-Fields/acorn-precision-farming-rover#23", "job:acorn-simulation-docker-build",
    "infra: the build host's VPN / docker daemon state broke name resolution inside the build (it worked after "
    "restarting docker and leaving the VPN); the build machine, never the change",
    "So it seems im getting a Temp failure resolving issue/error pulling down ubuntu repos when running the "
    "simulation.sh file when trying to fire up the docker. \n"
    "It seems its failing right after step 2/14.")
add(known("infra-dns-numerai-node-deploy"), "numerai/numerai-cli#60", "job:numerai-node-deploy-docker-build",
    "infra: name resolution failed inside a docker build; the report does not say why: one per report",
    "Step 11/13 : RUN pip install -r requirements.txt --no-cache-dir -i https://pypi.org/simple\n"
    " ---> Running in bdfdc3932929\n"
    "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by "
    "'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f1d2894bcd0>: Failed to establish a "
    "new connection: [Errno -3] Temporary failure in name resolution')': /simple/certifi/")

# ---------------------------------------------------------------- a driver older than the image's CUDA runtime
DRV = known("driver-older-than-cuda-runtime")
DRVWHY = ("real: the node's NVIDIA driver is older than the CUDA runtime the image or binary was built with; the fix "
          "is a newer driver or an image of an older CUDA, a change to the environment definition")
add(DRV, "NVIDIA/nvidia-docker#781", "job:caffe-nvidia-docker-run", DRVWHY + " (driver 387.26 with the latest nvidia/cuda image)",
    " Check failed: error == cudaSuccess (35 vs. 0)  CUDA driver version is insufficient for CUDA runtime version")
add(DRV, "NVIDIA/nccl-tests#12", "job:nccl-tests-all-reduce-perf", DRVWHY + " (driver 384.81 under nccl-tests)",
    "./build/all_reduce_perf -b 8 -e 128M -f 2 -g 8\n"
    "nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1 \n"
    "Cuda failure common.cu:891 'CUDA driver version is insufficient for CUDA runtime version'")

# ---------------------------------------------------------------- nvcc older than the target architecture: per architecture
add(known("nvcc-too-old-for-sm86-naf-cbct"), "Ruyi-Zha/naf_cbct#15", "job:naf-cbct-cuda-extension-build",
    "real: the installed CUDA toolkit's nvcc predates sm_86 (RTX 3090); the maintainer: change the CUDA version",
    "nvcc fatal: Unsupported gpu architecture 'compute_86' ninja: build stopped: subcommand failed")
add(known("nvcc-too-old-for-sm61-darknet"), "AlexeyAB/darknet#471", "job:darknet-make-gpu",
    "real: an old CUDA (< 8.0) still on the machine's path cannot target sm_61 (GTX 1060); the maintainer: use the new nvcc",
    "nvcc fatal   : Unsupported gpu architecture 'compute_61'")
add(known("nvcc-empty-arch-from-failed-detection"), "ggml-org/llama.cpp#13893", "job:llama.cpp-ci-run-sh-cuda",
    "real: the architecture list came out empty ('compute_'), so nvcc's words are the same but no toolkit is too old: "
    "the build's detection of the GPU failed; one per report",
    "Compile bug: nvcc fatal : Unsupported gpu architecture 'compute_'\n"
    "CUDA build fails when running the CI script on the latest master branch with RTX 3090 GPU.")

# ---------------------------------------------------------------- an fp8e4nv cast compiled for a GPU before sm_89
add(known("inductor-fp8e4nv-cast-before-sm89"), "kijai/ComfyUI-WanVideoWrapper#252", "job:wanvideo-sampler-torch-compile",
    "real: an fp8_e4m3fn weight's cast compiled by inductor for an RTX 30xx (before sm_89); the maintainer: use "
    "fp8_e5m2 there",
    "WanVideoSampler\n"
    "backend='inductor' raised:\n"
    "CompilationError: at 8:11:\n"
    "def triton_poi_fused__to_copy_1(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):\n"
    "xnumel = 26214400\n"
    "xoffset = tl.program_id(0) * XBLOCK\n"
    "xindex = xoffset + tl.arange(0, XBLOCK)[:]\n"
    "xmask = tl.full([XBLOCK], True, tl.int1)\n"
    "x0 = xindex\n"
    "tmp0 = tl.load(in_ptr0 + (x0), None)\n"
    "tmp1 = tmp0.to(tl.float32)\n"
    "^\n"
    "\n"
    "Set TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information")

# ---------------------------------------------------------------- an illegal memory access: one per report
add(known("infra-ima-megatron-pp-after-other-training-restart-container"), "NVIDIA/Megatron-LM#1554", "job:megatron-pp-training",
    "infra: the illegal memory access appears after other training ran in the same container and goes away when the "
    "container is restarted (resources not released); the machine's state, not the change",
    "[BUG]RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered\n"
    "Every time I run PP parallel after running other training, the following error will be reported. It will be fixed "
    "after restarting the container.")
add(known("ima-triton-ops-blocksparse-softmax-attn-mask"), "triton-lang/triton#332", "job:triton-blocksparse-model",
    "real: triton.ops.blocksparse matmul/softmax with an attention mask on 8 heads of 1024; one per report",
    "RuntimeError: CUDA error: an illegal memory access was encountered")

# ---------------------------------------------------------------- a job over its time limit: one per report
add(known("infra-travis-time-limit-ecell4"), "travis-ci/travis-ci#7098", "job:ecell4-travis",
    "infra: the job ran past Travis's 50-minute limit and was terminated; the support answer: shorten the build; "
    "one per report",
    "The job exceeded the maximum time limit for jobs, and has been terminated.")
add(known("infra-travis-time-limit-hermitcore"), "travis-ci/travis-ci#5881", "job:hermitcore-travis",
    "infra: the job ran past Travis's limit; the support answer: split or parallelize the build; one per report",
    "\"The job exceeded the maximum time limit for jobs, and has been terminated.\"")
add(known("infra-travis-time-limit-geosx-cuda-debug"), "GEOS-DEV/GEOS#1260", "job:geosx-centos7-gcc8-cuda10.1-debug",
    "infra: the CUDA debug build 'sometimes' exceeds Travis's 2 h limit (it does not happen all the time); one per report",
    "The job exceeded the maximum time limit for jobs, and has been terminated.")
add(known("cuda-compile-time-regression-panzer-slurm-limit"), "trilinos/Trilinos#1113", "job:drekar-cuda-build-slurm",
    "real: Panzer's CUDA compile times grew until a 12 h SLURM job could not finish the build (SLURM's words for a "
    "time limit); the code's compile times, not the machine",
    "srun: Force Terminated job 1000646\n"
    "slurmd[shiller04]: *** STEP 1000646.0 CANCELLED AT 2017-03-10T04:45:19 DUE TO TIME LIMIT ***")

# ---------------------------------------------------------------- wrong results beyond a tolerance: one per report
add(known("mismatch-dot3d-b580-linux"), "intel/intel-xpu-backend-for-triton#3919",
    "language/test_core.py::test_dot3d[8-2-64-64-64-32-32-float32-float32]",
    "real: test_dot3d's float32 case off by up to 22 on a B580 under Linux; one per report",
    "FAILED language/test_core.py::test_dot3d[8-2-64-64-64-32-32-float32-float32] - AssertionError: \n"
    "Not equal to tolerance rtol=0.01, atol=0.01\n"
    "\n"
    "Mismatched elements: 510 / 32768 (1.56%)\n"
    "Max absolute difference: 22.157192\n"
    "Max relative difference: 5313.6147")
add(known("mismatch-aiter-rmsnorm-constexpr-triton-regression"), "ROCm/pytorch#3398",
    "op_tests/triton_tests/torch_compile/test_compile_constexpr_mutation.py",
    "real: a Triton compiler change makes AITER's RMSNorm kernel wrong in 99% of elements (a good and a bad Triton commit "
    "are named); one per report",
    "AssertionError: Tensor-likes are not close!\n"
    "Mismatched elements 99%+")
add(known("mismatch-efficient-attn-bias-padding-mi350"), "pytorch/pytorch#170919",
    "test_effn_attn_bias_padding_misaligned",
    "real: efficient attention with misaligned bias padding is off on MI350; the pull request skips it there; one per report",
    "Mismatched elements: 23 / 33062912 (0.0%)\n"
    "Greatest absolute difference: 0.07861328125 at index (14, 13, 1008, 36) (up to 1e-05 allowed)\n"
    "Greatest relative difference: 2.90625 at index (14, 13, 1008, 36) (up to 0.016 allowed)")
add(known("mismatch-rocm-fp32-gemm-order-max-autotune-tolerance"), "pytorch/pytorch#197468",
    "test_nested_region_inductor_config_max_autotune",
    "real: the Triton GEMM template and hipBLAS sum fp32 products in different orders; seeded, so it fails "
    "deterministically on MI200/MI300; the fix widens the ROCm tolerance",
    "`test_nested_region_inductor_config_max_autotune`, added in #195865, fails on MI200 and MI300 (the "
    "`parent_max_autotune_True` variants) with a single element outside the default fp32 tolerance, e.g. 1.6e-5 absolute "
    "/ 6.3e-6 relative against rtol=1.3e-6, atol=1e-5.")
add("flaky-aiter-gdr-decode-bf16-ulp", "ROCm/aiter#5215", "job:aiter-flydsl-gdr-decode-test",
    "flaky: FlyDSL and the Triton reference differ by one BF16 ULP now and then ('causing flaky CI failures'); one per test",
    "FlyDSL and the Triton reference use different reduction orders, which can occasionally produce one-ULP BF16 output "
    "differences. The existing `1e-4` threshold effectively allows zero mismatches for small outputs, causing flaky CI "
    "failures across different configurations.")
KNOWN.add("flaky-aiter-gdr-decode-bf16-ulp")

# ---------------------------------------------------------------- triton-opt assertions and crashes: one per report
add(known("assert-arrayref-index-intel-pipeline-block-ptr"), "intel/intel-xpu-backend-for-triton#3810", "job:triton-opt-intel-pipeline",
    "real: the Intel pipeline pass indexes past an op's operands on a block-pointer example; one per report",
    "triton-opt: /home/user/.triton/llvm/llvm-71a977d0-ubuntu-x64/include/llvm/ADT/ArrayRef.h:446: T& "
    "llvm::MutableArrayRef<T>::operator[](size_t) const [with T = mlir::OpOperand; size_t = long unsigned int]: Assertion "
    "`Index < this->size() && \"Invalid index!\"' failed.\n"
    "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace.\n"
    "Stack dump:")
add(known("assert-global-scratch-two-public-kernels"), "triton-lang/triton#11542", "job:triton-opt-global-scratch-allocation",
    "real: global scratch allocation asserts on a module with two public functions; one per report",
    "triton-opt: triton-src/lib/Conversion/TritonGPUToLLVM/GlobalScratchMemoryAllocation.cpp:126: auto "
    "mlir::triton::gpu::runGlobalScratchMemoryAllocation(mlir::ModuleOp)::(anonymous class)::operator()(triton::FuncOp) "
    "const: Assertion `!seenKernel' failed.\n"
    "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace and "
    "instructions to reproduce the bug.\n"
    "Stack dump:\n"
    "0.\tProgram arguments: projects/triton/triton-build/bin/triton-opt /tmp/two_pub.mlir --tritongpu-global-scratch-memory-allocation")
add(known("segv-coalesce-axisinfo-after-llvm-bump"), "triton-lang/triton#5122", "job:triton-opt-tritongpu-coalesce",
    "real: the TTGIR coalescing pass segfaults in ModuleAxisInfoAnalysis after an LLVM update (bisected to it); one per report",
    "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace.\n"
    "Stack dump:\n"
    "0.      Program arguments: ./python/build/cmake.linux-x86_64-cpython-3.10/bin/triton-opt --tritongpu-coalesce ttgir.txt")

# ================================================================ NEW KINDS

# ---------------------------------------------------------------- CUDA peer access unsupported between two GPUs
P2P = "p2p-unsupported-between-gpus-disable-p2p"
P2PWHY = ("real: CUDA peer access between the two GPUs is not supported (consumer cards or a virtualised PCIe "
          "topology); the fix is disabling P2P in the job's environment (NCCL_P2P_DISABLE=1) or other hardware")
add(P2P, "ray-project/ray_lightning#24", "job:ray-lightning-tune-ddp", P2PWHY + " (NCCL's P2P transport on two GPUs)",
    "(pid=909597) RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1603729062494/work/torch/lib/c10d/ProcessGroupNCCL.cpp:784, "
    "unhandled cuda error, NCCL version 2.7.8\n"
    "(pid=909608) z-pc:909608:910337 [0] NCCL INFO Channel 00 : 0[2d000] -> 1[2e000] via P2P/IPC\n"
    "(pid=909608) z-pc:909608:910337 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access "
    "is not supported between these two devices")
add(P2P, "tunib-ai/parallelformers#44", "job:parallelformers-readme-example", P2PWHY + " (RTX 2080 Ti; 'common in virtualized cloud providers')",
    "RuntimeError: CUDA error: peer access is not supported between these two devices")
add(P2P, "ai-dynamo/dynamo#1229", "job:dynamo-vllm-engine-start", P2PWHY + " (vLLM's engine start under dynamo)",
    "RuntimeError: CUDA error: peer access is not supported between these two devices\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
add("p2p-enabled-unconditionally-llama-cpp-multi-gpu", "ggml-org/llama.cpp#3230", "job:llama.cpp-server-multi-gpu",
    "real: llama.cpp's own CUDA backend enabled peer access between every pair without checking; its code, not the "
    "job's environment: one per report",
    "CUDA error 217 at ggml-cuda.cu:6292: peer access is not supported between these two devices")

# ---------------------------------------------------------------- NCCL's errors that say little: one per report
add("nccl-unhandled-system-error-2x8-h100-multinode", "NVIDIA/nccl#1016", "job:nccl-2x8-h100-multinode",
    "real: NCCL's 'unhandled system error' between two H100 nodes, most of the times; the report does not say why: one per report",
    "NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled system error "
    "(run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1 ncclSystemError")
add("nccl-unhandled-system-error-3gpu-a6000", "NVIDIA/nccl-tests#320", "job:nccl-tests-3gpu-a6000",
    "real: nccl-tests fails with 'unhandled system error' on a 3-GPU RTX A6000 machine; one per report",
    "Test NCCL failure common.cu:1119 unhandled system error")
add("nccl-internal-check-failed-p4d-broadcast", "NVIDIA/nccl#520", "job:deepspeed-gpt-p4d-broadcast",
    "real: NCCL's 'Internal check failed' during a broadcast on p4d nodes; one per report",
    "compute-dy-p4d24xlarge-77: RuntimeError: NCCL error in: ../torch/lib/c10d/ProcessGroupNCCL.cpp:825, internal error, "
    "NCCL version 20.9.9\n"
    "compute-dy-p4d24xlarge-77: ncclInternalError: Internal check failed. This is either a bug in NCCL or due to memory corruption")
add("flaky-nccl-internal-error-gone-after-restart", "MariusBeckerIESE/ChatBot_AI#7", "job:chatbot-ai-distributed-train",
    "flaky: the same NCCL internal error does not occur after a restart (the report says so); one per report",
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, internal "
    "error - please report this issue to the NCCL developers, NCCL version 2.18.1")
add("nccl-unhandled-cuda-error-invalid-argument", "NVIDIA/nccl#1410", "job:nccl-check-8gpu",
    "real: NCCL's 'unhandled cuda error' with Cuda failure 1 'invalid argument'; one per report",
    "[rank7]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled "
    "cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
    "[rank7]: ncclUnhandledCudaError: Call to CUDA function failed.\n"
    "[rank7]: Last error:\n"
    "[rank7]: Cuda failure 1 'invalid argument'")

# ---------------------------------------------------------------- NCCL's InfiniBand completion error 12
IB = "infra-nccl-ib-completion-error-12-fabric"
IBWHY = ("infra: NCCL's IB completion status 12 (transport retry counter exceeded): the NICs cannot reach each other; "
         "the maintainers: fix the routing/fabric/RoCE configuration, never the change")
add(IB, "NVIDIA/nccl#1170", "job:nccl-2x8-h800-training", IBWHY + " (2 x 8 H800; 'NICs can't talk to each other')",
    "Distributed model training with nccl error：NCCL WARN NET/IB Got completion error 12")
add(IB, "NVIDIA/nccl#1664", "job:nccl-tests-two-nodes-ib", IBWHY + " (two machines under nccl-tests; 'connectivity problems')",
    "NET/IBP:Got completion from peer 7.6.13.83<36315> with status=12 opcode=32698 len=32696 vendor err 129 (Send)")
add(IB, "NVIDIA/nccl#1405", "job:kp-ddp-worker-training", IBWHY + " (an IB plugin's words in a DDP job)",
    "kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 10.216.210.236<54862> with "
    "status=12 opcode=0 len=0 vendor err 129 (Recv) localGid fd00:1148:9000:5000:4:200:3:ff22 remoteGidsfd00:1148:9000:5000:4:200:3:ff1f\n"
    "kp-ddp-worker-0:3468:3905 [4] NCCL INFO transport/net.cc:1302 -> 6\n"
    "kp-ddp-worker-0:3468:3905 [4] NCCL INFO proxy.cc:698 -> 6\n"
    "kp-ddp-worker-0:3468:3905 [4] NCCL INFO proxy.cc:878 -> 6 [Progress Thread]")

# ---------------------------------------------------------------- the GPU node: NVLink and GSP Xids
add("infra-nvlink-xid-145-149-reboot", "NVIDIA/open-gpu-kernel-modules#1150", "job:gpu-node-python3-training",
    "infra: NVLink errors (Xid 145/149, then 45 on every GPU) on one node, resolved by each reboot; the node, never the change",
    "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149\n"
    "kernel: NVRM: Xid (PCI:0000:ed:00): 45, pid=1818992, name=python3, Ch 0000000c caused by previous Xid 145\n"
    "kernel: NVRM: Xid (PCI:0000:ba:00): 45, pid=1818989, name=python3, Ch 00000002 caused by previous Xid 145")
GSP = "infra-gsp-rpc-timeout-xid-119"
GSPWHY = ("infra: the driver's GSP firmware stops answering RPCs (Xid 119), a driver bug on that node; drain it and "
          "disable GSP or update the driver, never the change")
add(GSP, "NVIDIA/open-gpu-kernel-modules#446", "job:gpu-node-nvidia-smi", GSPWHY + " (nvidia-smi hangs)",
    "[Fri Mar  3 04:27:08 2023] NVRM: Xid (PCI:0000:61:00): 119, pid=1346198, name=nvidia-smi, Timeout waiting for RPC from "
    "GSP! Expected function 103 (GSP_RM_ALLOC) (0x80 0x38).\n"
    "[Fri Mar  3 04:27:53 2023] NVRM: Xid (PCI:0000:61:00): 119, pid=1346198, name=nvidia-smi, Timeout waiting for RPC from "
    "GSP! Expected function 103 (GSP_RM_ALLOC) (0x2080 0x4).")
add(GSP, "NVIDIA/nvidia-docker#1648", "job:gpu-node-docker-run", GSPWHY + " (the same node seen from docker run's failure)",
    "[Mon Mar  6 21:37:31 2023] NVRM: Xid (PCI:0000:61:00): 119, pid=905052, name=python, Timeout waiting for RPC from GSP! "
    "Expected function 76 (GSP_RM_CONTROL) (0x20801702 0x4).\n"
    "[Mon Mar  6 21:38:16 2023] NVRM: Xid (PCI:0000:61:00): 119, pid=977823, name=nvidia-smi, Timeout waiting for RPC from "
    "GSP! Expected function 76 (GSP_RM_CONTROL) (0x2080014b 0x5).")

# ---------------------------------------------------------------- lit's configuration not loaded: two repositories, two fixes
add("lit-subfolder-target-without-site-config-triton", "triton-lang/triton#7965", "job:triton-check-lit-tests-conversion",
    "real: triton's per-folder lit targets point lit at the source folder, so lit.site.cfg.py never runs and llvm_config "
    "is None; fixed in triton's CMake (triton-lang/triton#7966)",
    "lit: /home/user/triton-project/triton/.venv/lib/python3.10/site-packages/lit/TestingConfig.py:152: fatal: unable to "
    "parse config file '/home/user/triton-project/triton/test/lit.cfg.py', traceback: Traceback (most recent call last):\n"
    "  File \"/home/user/triton-project/triton/.venv/lib/python3.10/site-packages/lit/TestingConfig.py\", line 140, in load_from_path\n"
    "    exec(compile(data, path, \"exec\"), cfg_globals, None)\n"
    "  File \"/home/user/triton-project/triton/test/lit.cfg.py\", line 17, in <module>\n"
    "    config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)\n"
    "AttributeError: 'NoneType' object has no attribute 'use_lit_shell'")
add("lit-subfolder-target-without-site-config-triton-shared", "microsoft/triton-shared#337", "job:triton-shared-check-lit-tests-conversion",
    "real: the same words in triton-shared's own per-folder lit targets; its fix is a change to triton-shared's CMake",
    "lit: /home/user/.local/lib/python3.10/site-packages/lit/TestingConfig.py:152: fatal: unable to parse config file "
    "'/home/user/Project/triton-project/triton-shared/test/lit.cfg.py', traceback: Traceback (most recent call last):\n"
    "  File \"/home/user/.local/lib/python3.10/site-packages/lit/TestingConfig.py\", line 140, in load_from_path\n"
    "    exec(compile(data, path, \"exec\"), cfg_globals, None)\n"
    "  File \"/home/user/Project/triton-project/triton-shared/test/lit.cfg.py\", line 19, in <module>\n"
    "    config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)\n"
    "AttributeError: 'NoneType' object has no attribute 'use_lit_shell'")

# ---------------------------------------------------------------- a Kubernetes runner pod's image: two causes
add("infra-k8s-runner-image-pull-connection-reset", "konstructio/kubefirst#924", "job:kubefirst-actions-runner-pod",
    "infra: the runner pod's image pull from docker.io was cut (connection reset, unexpected EOF), then backed off; "
    "the network, never the change",
    "  Warning  Failed     25m                kubelet            Failed to pull image \"summerwind/actions-runner-dind\": rpc "
    "error: code = Unknown desc = failed to pull and unpack image \"docker.io/summerwind/actions-runner-dind:latest\": failed "
    "to copy: read tcp 192.168.16.6:35464->104.18.122.25:443: read: connection reset by peer\n"
    "  Warning  Failed     16m                kubelet            Failed to pull image \"summerwind/actions-runner-dind\": rpc "
    "error: code = Unknown desc = failed to pull and unpack image \"docker.io/summerwind/actions-runner-dind:latest\": failed "
    "to read expected number of bytes: unexpected EOF\n"
    "  Normal   BackOff    16m (x2 over 25m)  kubelet            Back-off pulling image \"summerwind/actions-runner-dind\"")
add("k8s-runner-image-tag-does-not-exist", "actions/actions-runner-controller#4654", "job:arc-ephemeral-runner-pod",
    "real: the runner template names an image that can never be pulled (a tag that does not exist); the fix is the "
    "template, not a retry",
    "1. Install gha-runner-scale-set with a runner template whose runner container image can never be pulled, e.g.\n"
    "   `image: ghcr.io/actions/actions-runner:tag-that-does-not-exist`\n"
    "   (any of these give the same result: an invalid reference such as `ghcr.io/actions/actions-runner::bad` -> InvalidImageName;")

# ---------------------------------------------------------------- no network by design: DNS words, sandbox cause
add("hook-needs-network-in-precommit-ci", "pre-commit-ci/issues#80", "job:precommit-ci-mypy",
    "real: pre-commit.ci runs hooks without network, so mypy's install of stub packages cannot resolve pypi.org; the fix "
    "is declaring them as additional_dependencies (the hook's configuration), not a retry",
    "mypy.....................................................................Failed\n"
    "- hook id: mypy\n"
    "- exit code: 1\n"
    "\n"
    "Installing missing stub packages:\n"
    "/pc/clone/YrazQxi0S1yH44hGHdKFJg/py_env-python3/bin/python -m pip install types-PyYAML types-python-dateutil types-redis types-request"
    "s types-setuptools\n"
    "\n"
    "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by "
    "'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7fdfdb70c850>: Failed to establish a "
    "new connection: [Errno -3] Temporary failure in name resolution')': /simple/types-pyyaml/")
add("tests-need-network-in-offline-package-build", "jaraco/pip-run#65", "job:pip-run-pytest-offline-build",
    "real: two units install from an index while a distribution's package build runs without network; the tests' "
    "assumption, not the network",
    "WARNING: Retrying (Retry(total=3, connect=None, read=None, redirect=None, status=None)) after connection broken by "
    "'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f6ac61e1580>: Failed to establish a "
    "new connection: [Errno -3] Temporary failure in name resolution')': /root/pypi/+simple/path-py/")

# ---------------------------------------------------------------- Docker Hub's limit counted per IPv6 prefix
add("infra-dockerhub-ratelimit-ipv6-prefix-shared", "docker/hub-feedback#2464", "job:ovh-host-docker-pull",
    "infra: the same toomanyrequests words on a host that pulled three images: Docker Hub counted a whole IPv6 prefix "
    "of the provider as one client (a Docker Hub side fix); a different cause from an over-used anonymous limit",
    "ratelimit-limit: 100;w=21600\n"
    "ratelimit-remaining: 0;w=21600\n"
    "docker-ratelimit-source: 2001:41d0:801:2000::\n"
    "\n"
    "Error response from daemon: toomanyrequests: You have reached your unauthenticated pull rate limit. "
    "https://www.docker.com/increase-rate-limit")


# ---------------------------------------------------------------- a kernel killed by the display watchdog: the same words, per report
add("gpu-drives-display-watchdog-kills-long-kernel", "numba/numba#9381", "job:numba-cuda-repro",
    "real: the GPU also drives the desktop, so the driver's watchdog ends a kernel that runs too long; the maintainer: "
    "use another GPU for the display or run without X (the machine's set-up, not a retry)",
    "Unexpected \"CUDA error: the launch timed out and was terminated\" or `CUDA_ERROR_LAUNCH_TIMEOUT`")
add("launch-timeout-sygil-webui-512-50-steps", "Sygil-Dev/sygil-webui#1488", "job:sygil-webui-txt2img",
    "real: a launch timeout generating 512x512 images on Windows; the report does not say why: one per report",
    "RuntimeError: CUDA error: the launch timed out and was terminated\n"
    "CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.")
add("launch-timeout-cudpp-mtf-test-1m-nodes", "cudpp/cudpp#146", "cudpp_testrig MTF test",
    "real: cudpp's MTF test on 1048577 nodes outlasts the Windows display driver's limit on a laptop GPU; one per report",
    "Running a MTF test of 1048577 uchar nodes\n"
    "Cuda error in file 'C:\\src\\cudpp\\apps\\cudpp_testrig\\test_compress.cpp' in line 4\n"
    "67 : the launch timed out and was terminated.")

# ---------------------------------------------------------------- torch.distributed's rendezvous store: one per report
add("c10d-rendezvous-store-multiple-nics", "pytorch/pytorch#64926", "job:pipeline-resnet50-torchrun-2-nodes",
    "real: elastic training stuck at rendezvous on machines with several NICs (the store is reached on the wrong "
    "interface); one per report",
    "[ERROR] 2021-09-13 22:18:26,678 error_handler: {\n"
    "  \"message\": {\n"
    "    \"message\": \"RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.\",")
add("c10d-tcpstore-reset-at-384-nodes", "pytorch/pytorch#76913", "job:cosmictagger-384-nodes",
    "real: TCPStore's connection reset when 1536 ranks connect at once (fine up to 256 nodes, 'runs fine occasionally' "
    "at 384); the store's scaling, one per report",
    "Pytorch return TCPStore( RuntimeError: Connection reset by peer)\n"
    "It runs file up to 256 nodes(1024 ranks). However, when I try to run on higher number of nodes 384 nodes(1536 ranks) "
    "it runs fine occasionally. Most of the time it fails")
add("c10d-rendezvous-shared-by-jobs-on-one-node", "wenet-e2e/wespeaker#171", "job:wespeaker-torchrun-multi-job-node",
    "real: several torchrun jobs on one node share a rendezvous; when one finishes it shuts the store the others use "
    "(give each job its own rendezvous endpoint); one per report",
    "WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'node04.localdomain_3882442_0' has failed to "
    "shutdown the rendezvous '9987b766-350c-48bf-aa45-cfc2da182f33' due to an error of type RendezvousConnectionError.\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/user/miniconda3/envs/wespeaker/lib/python3.9/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend"
    ".py\", line 113, in _call_store\n"
    "    return getattr(self._store, store_op)(*args, **kwargs)\n"
    "RuntimeError: Broken pipe")


__all__ = ["F", "KNOWN", "add", "records", "render"]

if __name__ == "__main__":
    recs = records()
    (HERE / "fresh10.jsonl").write_text(render(recs))
    real = [r for r in recs if r["shape"] == "real"]
    print(f"wrote {len(recs)} records ({len(real)} real), {len({r['fault'] for r in recs})} faults, "
          f"{len({r['source'] for r in recs})} sources, "
          f"{len({r['source'] for r in recs if r['kind'] == 'known'})} of them of a known kind")
