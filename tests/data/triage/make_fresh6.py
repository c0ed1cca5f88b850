"""Builds ``fresh6.jsonl``: a seventh, wholly held-out set of real failure texts from public reports,
none of them a source of ``wild.jsonl``, ``labelled.jsonl``, ``holdout.jsonl`` or ``fresh.jsonl`` …
``fresh5.jsonl`` (checked against their ``source`` fields and the issue links inside their texts),
labelled by root cause *before* any signature code was run on them.
Regenerate with ``python tests/data/triage/make_fresh6.py`` (deterministic).

It exists to measure grouping and classification honestly after the tuning round that uses
``fresh5.jsonl`` and the older sets: the labels were written and committed before the first
measurement, and the signature and normaliser code is never tuned on this file
(``bench/bench_triage.py --fresh6`` only reports figures). The whole file is held out.

Its reports are weighted towards what a nightly meets besides a compiler fault: the CI machinery
(GitHub Actions runners losing the server, jobs over the disk, Docker Hub's pull limit, DNS failing
for conda, pip and git, a proxy, PyPI and download.pytorch.org answering 403/500 or timing out, a
GPU runner whose driver does not answer), flaky tests (a numeric tolerance, a watchdog timeout, a
subprocess timeout, a race that does not raise), and the backends' generic runtime errors
(CUDA's and HIP's illegal address, Level Zero's codes as decimal integers, Unified Runtime's device
lost), beside compiler faults from LLVM (instruction selection on AMDGPU, lit FileCheck failures) and
toolchain mismatches (the prebuilt LLVM's ``GLIBCXX_3.4.30``).

Labelling rule (the same as ``make_wild.py``'s and the other fresh sets'):

* **Same label = same fix.** Two texts carry the same label when one change would fix both, as
  the reports (their comments, a linked duplicate or the fix) show.
* A message that names the fault specifically is one root cause across reports when the reports
  agree on the cause and the fix is one change of the same kind: a runner that lost the server
  (the runner's resources, retry), the runner's DNS (retry), the network unreachable from a
  container, Docker Hub's anonymous pull limit (authenticate, mirror, retry), a full runner disk
  (free space), a GPU runner whose NVIDIA driver does not answer ``nvidia-smi`` (repair the
  runner), torch's CUDA driver initialisation failing (the runner's driver), triton's prebuilt
  LLVM tools needing ``GLIBCXX_3.4.30`` on an older host (the LLVM bump; one report bisects it).
* A message that says nothing about where or why — an illegal memory access, a tensor mismatch, a
  Level Zero or Unified Runtime code, a FileCheck miss, a segmentation fault — is one root cause per
  report, even when the words are identical, unless the reports agree on one fix. The same specific
  words with two causes get two labels (LLVM's ``Cannot select: intrinsic %llvm.amdgcn.if`` from
  Taichi's O3 pipeline and from triton's reused TargetMachine; download.pytorch.org's 403 for a
  server fault and for a pinned nightly wheel that was deleted; conda's ``HTTP 000`` for DNS and
  for a proxy; a ``libstdc++`` older than ``GLIBCXX_3.4.30`` in a conda env, on openEuler and under
  the prebuilt LLVM).
* **Class** is the label's prefix: ``infra-`` (the runner, the network, a service, the machine:
  retry or repair, never blame a commit), ``flaky-`` (the same code passes on a rerun: the report
  says so), anything else ``real``. A single failure text cannot show flakiness (that needs a pass
  of the same test on the same commit), so a flaky report's text alone is expected to be read as
  real or infrastructure; the class figure counts it anyway.
* Texts of one report in several shapes share the report's label.

Caveat: the person who collected and labelled this set had read ``fresh5.jsonl``'s misses (listed in
docs/triage.md), and will tune the next signature version on the older sets; no text here was seen
by that tuning (``make_fresh6.py`` is committed before it, and its rows are not read while tuning).

Each record: ``id``, ``fault`` (the label), ``source`` (``owner/repo#N``, the report's URL is
``https://github.com/owner/repo/issues/N``), ``test`` (the test the report names; where it names
none, ``job:<project>-<what ran>``), ``shape`` (``real``: the report's own text, excerpted;
``derived-…``: that text put through a log shape a nightly meets, built by ``heldout_set.py``),
``why`` (the labelling reason) and ``text``. Where a report's title holds the message its excerpt
was cut before, the message is the title's, said in ``why``.

Personal data removed: user names in paths → ``user``, home folders → ``/home/user``, a registry
token → ``<token>``; no e-mail. Texts are short excerpts of the error lines (fair use), not whole logs.
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


# ---------------------------------------------------------------- infra: a GitHub Actions runner lost the server
LOST = ("infra: the runner stopped answering GitHub (starved of CPU/memory, killed, or its network cut); the fix is "
        "the runner's resources or a retry, never the change")
add("infra-runner-lost-communication", "actions/runner-images#9823", "job:passenger-android-build",
    LOST + " (a hosted runner; the maintainer: resources exhausted)",
    "The hosted runner: GitHub Actions 8 lost communication with the server. Anything in your workflow that "
    "terminates the runner process, starves it for CPU/Memory, or blocks its network access can cause this error.")
add("infra-runner-lost-communication", "fedimint/fedimint#6021", "job:fedimint-cross-compile-android",
    LOST + " (a hosted macOS runner, seen twice, then gone)",
    "Cross-compile on macos to aarch64-android\n"
    "The hosted runner: GitHub Actions 9 lost communication with the server. Anything in your workflow that "
    "terminates the runner process, starves it for CPU/Memory, or blocks its network access can cause this error.")
add("infra-runner-lost-communication", "open-telemetry/opentelemetry-collector-contrib#34000",
    "job:otelcol-build-and-test-arm",
    LOST + " (a self-hosted ARM runner, with a shutdown signal after it)",
    "The self-hosted runner: 04922ab0a5cde170c99dee4153a188a070226aa0 lost communication with the server. Verify the "
    "machine is running and has a healthy network connection. Anything in your workflow that terminates the runner "
    "process, starves it for CPU/Memory, or blocks its network access can cause this error.")
add("infra-runner-lost-communication", "testflows/TestFlows-GitHub-Hetzner-Runners#26", "job:hetzner-runner-job",
    LOST + " (a self-hosted runner on Hetzner servers)",
    "The self-hosted runner: github-hetzner-runner-10802907644-29965869241 lost communication with the server. Verify "
    "the machine is running and has a healthy network connection. Anything in your workflow that terminates the "
    "runner process, starves it for CPU/Memory, or blocks its network access can cause this error.")

# ---------------------------------------------------------------- infra: the runner's DNS
DNS = ("infra: the machine could not resolve a host name (conda's channel, PyPI's files, github.com); the fix is the "
       "runner's resolver or a retry")
add("infra-dns-resolution", "conda/conda#7172", "job:conda-search",
    DNS + " (conda's HTTP 000 wrapping urllib3's name-resolution error)",
    "CondaHTTPError: HTTP 000 CONNECTION FAILED for url <https://repo.continuum.io/pkgs/free/noarch/repodata.json.bz2>\n"
    "Elapsed: -\n\n"
    "An HTTP error occurred when trying to retrieve this URL.\n"
    "HTTP errors are often intermittent, and a simple retry will get you on your way.\n"
    "ConnectionError(MaxRetryError(\"HTTPSConnectionPool(host='repo.continuum.io', port=443): Max retries exceeded "
    "with url: /pkgs/free/noarch/repodata.json.bz2 (Caused by NewConnectionError('<urllib3.connection."
    "VerifiedHTTPSConnection object at 0x7f4e77c5da20>: Failed to establish a new connection: [Errno -3] Temporary "
    "failure in name resolution',))\",),)")
add("infra-dns-resolution", "conda/conda#6868", "job:conda-install-win",
    DNS + " (Windows' getaddrinfo; closed as a duplicate of conda's DNS report)",
    "CondaHTTPError: HTTP 000 CONNECTION FAILED for url <https://repo.continuum.io/pkgs/main/win-64/repodata.json.bz2>\n"
    "Elapsed: -\n\n"
    "An HTTP error occurred when trying to retrieve this URL.\n"
    "HTTP errors are often intermittent, and a simple retry will get you on your way.\n"
    "ConnectionError(MaxRetryError(\"HTTPSConnectionPool(host='repo.continuum.io', port=443): Max retries exceeded "
    "with url: /pkgs/main/win-64/repodata.json.bz2 (Caused by NewConnectionError('<urllib3.connection."
    "VerifiedHTTPSConnection object at 0x0000000005200E48>: Failed to establish a new connection: [Errno 11004] "
    "getaddrinfo failed',))\",),)")
add("infra-dns-resolution", "conda/conda#13866", "job:conda-update-base",
    DNS + " (a newer conda: urllib3's NameResolutionError in the retry warning)",
    "Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by "
    "'NameResolutionError(\"<urllib3.connection.HTTPSConnection object at 0x7f99d46146e0>: Failed to resolve "
    "'conda.anaconda.org' ([Errno -2] Name or service not known)\")': /conda-forge/noarch/repodata.json.zst\n\n"
    "failed\n\n"
    "CondaHTTPError: HTTP 000 CONNECTION FAILED for url <https://conda.anaconda.org/conda-forge/linux-64/"
    "repodata.json>\nElapsed: -")
add("infra-dns-resolution", "rapidsai/ci-imgs#233", "job:rapids-ci-imgs-pip-install",
    DNS + " (pip in a CI image build; the fix raised pip's retries)",
    "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken "
    "by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7654e7c07610>: Failed to "
    "establish a new connection: [Errno -3] Temporary failure in name resolution')': /packages/e4/40/"
    "3c4d9862bebcd3c7d54c06e3bdff0a2ab503d2df98d8c15b337c7b864f0a/uv-0.1.45-py3-none-manylinux_2_17_x86_64."
    "manylinux2014_x86_64.whl\n"
    "2100.5 ERROR: Could not install packages due to an OSError: HTTPSConnectionPool(host='files.pythonhosted.org', "
    "port=443): Max retries exceeded with url: /packages/e4/40/3c4d9862bebcd3c7d54c06e3bdff0a2ab503d2df98d8c15b337c7b"
    "864f0a/uv-0.1.45-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl (Caused by NewConnectionError('<pip."
    "_vendor.urllib3.connection.HTTPSConnection object at 0x7654e7c077c0>: Failed to establish a new connection: "
    "[Errno -3] Temporary failure in name resolution'))")
add("infra-dns-resolution", "brian7704/OpenTAKServer#275", "job:opentakserver-install",
    DNS + " (pip's retry warnings; the final OSError line is the report's title)",
    "  WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken "
    "by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f87d87ad0>: Failed to "
    "establish a new connection: [Errno -2] Name or service not known')': /packages/00/45/41a0f084a95b171d5c9e8820179"
    "e3aa1223bdc5c7c5842c2ef5c0cf467ed/flask_security_too-5.7.1-py3-none-any.whl\n"
    "ERROR: Could not install packages due to an OSError: HTTPSConnectionPool(host='files.pythonhosted.org', "
    "port=443)")
add("infra-dns-resolution", "ocurrent/ocaml-ci#1021", "job:ocaml-ci-opam-update",
    DNS + " (git fetching github.com inside the CI's build step)",
    "fatal: unable to access 'https://github.com/ocaml/opam-repository/': Could not resolve host: github.com\n"
    "\"/usr/bin/env\" \"bash\" \"-c\" \"cd ~/opam-repository && (git cat-file -e f9d23e5cb169337cdf0aac6321e4ec46f6f64a74 "
    "|| git fetch origin master) && git reset -q --hard f9d23e5cb169337cdf0aac6321e4ec46f6f64a74 && git log "
    "--no-decorate -n1 --oneline && opam update -u\" failed with exit status 128\n"
    "2025-08-22 11:47.17: Job failed: Failed: Build failed")

# ---------------------------------------------------------------- infra: other network faults
add("infra-proxy-tunnel-503", "jade-hpc-gpu/jade-hpc-gpu.github.io#49", "job:jade-conda-create",
    "infra: the site's HTTP proxy answered 503 to conda's CONNECT (conda's same HTTP 000 as a DNS failure, another "
    "cause and fix: the proxy)",
    "CondaHTTPError: HTTP 000 CONNECTION FAILED for url <https://repo.continuum.io/pkgs/main/linux-64/repodata.json.bz2>\n"
    "Elapsed: -\n"
    "An HTTP error occurred when trying to retrieve this URL.\n"
    "HTTP errors are often intermittent, and a simple retry will get you on your way.\n"
    "ProxyError(MaxRetryError(\"HTTPSConnectionPool(host='repo.continuum.io', port=443): Max retries exceeded with "
    "url: /pkgs/main/linux-64/repodata.json.bz2 (Caused by ProxyError('Cannot connect to proxy.', OSError('Tunnel "
    "connection failed: 503 Service Unavailable',)))\",),)")
UNREACH = ("infra: the container or machine had no route out ([Errno 101] Network is unreachable); the fix is the "
           "network of the runner or container")
add("infra-network-unreachable", "open-mmlab/Amphion#388", "job:amphion-pip-install",
    UNREACH + " (pip fetching an archive from github.com)",
    "ERROR: Could not install packages due to an OSError: HTTPSConnectionPool(host='github.com', port=443): Max retries "
    "exceeded with url: /vBaiCai/python-pesq/archive/master.zip (Caused by NewConnectionError('<pip._vendor.urllib3."
    "connection.HTTPSConnection object at 0x7efffe815c10>: Failed to establish a new connection: [Errno 101] Network "
    "is unreachable'))")
add("infra-network-unreachable", "mythrantic/ollama-docker#29", "job:ollama-docker-build",
    UNREACH + " (pip inside a docker build)",
    "419.6 ERROR: Could not install packages due to an OSError: HTTPSConnectionPool(host='files.pythonhosted.org', "
    "port=443): Max retries exceeded with url: /packages/f7/95/8e0c46842040e58fc252d82bcddc7d02e1e874aad98fdf729d2597"
    "8c09ae/langchain_community-0.3.18-py3-none-any.whl.metadata (Caused by NewConnectionError('<pip._vendor.urllib3."
    "connection.HTTPSConnection object at 0x7b7b3f1eeed0>: Failed to establish a new connection: [Errno 101] Network "
    "is unreachable'))\n"
    "419.6\n------\n"
    "failed to solve: process \"/bin/sh -c pip install --no-cache-dir -r requirements.txt\" did not complete "
    "successfully: exit code: 1")
add("infra-tls-intercepted-self-signed", "gorse-io/gitrec#31", "job:gitrec-docker-build",
    "infra: a TLS-intercepting middlebox put a self-signed certificate in the chain; the maintainer: a network issue",
    "#19 9.900 ERROR: Could not install packages due to an OSError: HTTPSConnectionPool(host='files.pythonhosted.org', "
    "port=443): Max retries exceeded with url: /packages/80/f1/cd7626c763e58f967317023c3dd01a2fab5d6f00f8e1c672ccceb3a"
    "ae5cb/amqp-5.0.6-py3-none-any.whl (Caused by SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED]"
    " certificate verify failed: self signed certificate in certificate chain (_ssl.c:1129)')))")
add("infra-pypi-read-timeout", "packit/ogr#545", "job:ogr-zuul-tox",
    "infra: files.pythonhosted.org timed out while pip built the test environment (Zuul's prefixed log); a retry",
    "2021-02-23 18:55:03.232890 | test-node | E  pip._vendor.urllib3.exceptions.MaxRetryError: HTTPSConnectionPool("
    "host='files.pythonhosted.org', port=443): Max retries exceeded with url: /packages/7e/83/284c6d3fac2e74532a9f51f9"
    "08018690709db9af1469cf728574f6be3abf/setuptools_scm_git_archive-1.1-py2.py3-none-any.whl (Caused by "
    "ReadTimeoutError(\"HTTPSConnectionPool(host='files.pythonhosted.org', port=443): Read timed out. (read "
    "timeout=15)\"))\n"
    "2021-02-23 18:55:03.232918 | test-node | E\n"
    "2021-02-23 18:55:03.232927 | test-node | E  During handling of the above exception, another exception occurred:")
add("infra-download-pytorch-read-timeout", "simonw/cougar-or-not#4", "job:cougar-or-not-install",
    "infra: download.pytorch.org timed out while pip read the nightly index (another host than PyPI's)",
    "raise ReadTimeoutError(self._pool, None, 'Read timed out.')\n"
    "pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='download.pytorch.org', port=443): Read "
    "timed out.")
add("infra-download-pytorch-500", "pytorch/pytorch#145983", "job:uv-pip-install-torch",
    "infra: download.pytorch.org answered 500 once; the rerun passed",
    "#15 11.33 error: Failed to fetch: `https://download.pytorch.org/whl/cu124/pycparser/`\n"
    "#15 11.33   Caused by: HTTP status server error (500 Internal Server Error) for url "
    "(https://download.pytorch.org/whl/cu124/pycparser/)")
add("infra-download-pytorch-nightly-403", "pytorch/pytorch#23515", "job:pip-install-torch-nightly",
    "infra: download.pytorch.org refused every nightly wheel (403) for a while; fixed on the server",
    "Collecting torch_nightly\n"
    "  HTTP error 403 while getting https://download.pytorch.org/whl/nightly/cpu/torch_nightly-1.2.0.dev20190728+cpu-"
    "cp36-cp36m-linux_x86_64.whl (from https://download.pytorch.org/whl/nightly/cpu/torch_nightly.html)\n"
    "  Could not install requirement torch_nightly from https://download.pytorch.org/whl/nightly/cpu/torch_nightly-"
    "1.2.0.dev20190728+cpu-cp36-cp36m-linux_x86_64.whl because of error 403 Client Error: Forbidden for url: "
    "https://download.pytorch.org/whl/nightly/cpu/torch_nightly-1.2.0.dev20190728+cpu-cp36-cp36m-linux_x86_64.whl")
add("pinned-nightly-wheel-deleted", "mlcommons/cm4mlops#370", "job:mlperf-intel-inference-install",
    "real: a script pins a two-year-old nightly wheel that download.pytorch.org no longer serves (403); the fix is the "
    "pin, in the change (the same words as a server fault)",
    "Collecting torch==2.1.0.dev20230715+cpu.cxx11.abi\n"
    "  ERROR: HTTP error 403 while getting https://download.pytorch.org/whl/nightly/cpu-cxx11-abi/torch-2.1.0."
    "dev20230715%2Bcpu.cxx11.abi-cp39-cp39-linux_x86_64.whl\n"
    "ERROR: Could not install requirement torch==2.1.0.dev20230715+cpu.cxx11.abi from https://download.pytorch.org/"
    "whl/nightly/cpu-cxx11-abi/torch-2.1.0.dev20230715%2Bcpu.cxx11.abi-cp39-cp39-linux_x86_64.whl because of HTTP "
    "error 403 Client Error: Forbidden for url: https://download.pytorch.org/whl/nightly/cpu-cxx11-abi/torch-2.1.0."
    "dev20230715%2Bcpu.cxx11.abi-cp39-cp39-linux_x86_64.whl for URL https://download.pytorch.org/whl/nightly/"
    "cpu-cxx11-abi/torch-2.1.0.dev20230715%2Bcpu.cxx11.abi-cp39-cp39-linux_x86_64.whl")

# ---------------------------------------------------------------- infra: Docker Hub's pull limit
DOCKER = ("infra: Docker Hub refused an anonymous or shared account's pull (toomanyrequests, 429); the fix is "
          "authenticating, a mirror or a retry")
add("infra-docker-hub-pull-rate-limit", "bitcoin/bitcoin#31797", "job:bitcoin-ci-container",
    DOCKER + " (podman's retries)",
    "[15:50:52.956] Trying to pull docker.io/library/debian:bookworm...\n"
    "[15:51:23.200] time=\"2025-02-04T15:51:23-05:00\" level=warning msg=\"Failed, retrying in 2s ... (1/3). Error: "
    "initializing source docker://debian:bookworm: reading manifest bookworm in docker.io/library/debian: "
    "toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating and "
    "upgrading: https://www.docker.com/increase-rate-limit\"")
add("infra-docker-hub-pull-rate-limit", "ksnip/ksnip#655", "job:ksnip-deb-build",
    DOCKER + " (docker run of ubuntu:18.04)",
    "Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may increase the limit "
    "by authenticating and upgrading: https://www.docker.com/increase-rate-limit\n"
    "Unable to find image 'ubuntu:18.04' locally\n"
    "docker: Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may increase the "
    "limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit.")
add("infra-docker-hub-pull-rate-limit", "man-group/ArcticDB#1752", "job:arcticdb-mongodb-service",
    DOCKER + " (a service container's pull, labelled flaky by the project)",
    "Starting mongodb service container\n"
    "  /usr/bin/docker pull mongo:4.4\n"
    "  Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may increase the limit "
    "by authenticating and upgrading: https://www.docker.com/increase-rate-limit\n"
    "  Warning: Docker pull failed with exit code 1, back off 3.756 seconds before retry.\n"
    "  Error: Docker pull failed with exit code 1")
add("infra-docker-hub-pull-rate-limit", "ChainSafe/forest#2125", "job:forest-docker-build",
    DOCKER + " (buildkit's manifest fetch)",
    "#3 ERROR: failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/"
    "library/debian/manifests/sha256:eb20b76156f7931fe1d0c22c996ca560d5f87bb511638a79f0bd6d4a6f25b8b6: 429 Too Many "
    "Requests - Server message: toomanyrequests: You have reached your pull rate limit. You may increase the limit by "
    "authenticating and upgrading: https://www.docker.com/increase-rate-limit")

# ---------------------------------------------------------------- infra: the runner's disk
DISK = "infra: the runner's disk filled up during the job; the fix is freeing space on the runner, not the change"
add("infra-disk-full", "docker/buildx#3040", "job:buildx-bin-image",
    DISK + " (the runner's own diagnostic log could not be written)",
    "System.IO.IOException: No space left on device : '/home/runner/runners/2.322.0/_diag/Worker_20250304-005208-utc.log'\n"
    "   at System.IO.RandomAccess.WriteAtOffset(SafeFileHandle handle, ReadOnlySpan`1 buffer, Int64 fileOffset)\n"
    "   at System.IO.Strategies.OSFileStreamStrategy.Write(ReadOnlySpan`1 buffer)\n"
    "   at GitHub.Runner.Worker.Worker.RunAsync(String pipeIn, String pipeOut)")
add("infra-disk-full", "GaloisInc/crucible#1175", "job:crux-mir-nightly-docker",
    DISK + " (a nightly docker image export)",
    "#55 ERROR: write /usr/local/rustup/toolchains/nightly-2023-01-23-x86_64-unknown-linux-gnu/lib/rustlib/"
    "x86_64-unknown-linux-gnu/lib/librustc_macros-1f5c22ed96efe43a.so: no space left on device")
add("infra-disk-full", "EmbarkStudios/wg-ui#52", "job:wg-ui-docker-build",
    DISK + " (a docker layer)",
    "error creating layer with ID \"447afa7f4e9940b3cc07197ddd853dcb60ea1c7a7eb2f06b605f49cf86e7475c\": no space left "
    "on device")
add("infra-disk-full", "Sage-Bionetworks/sage-monorepo#1885", "job:openchallenges-build-images",
    DISK + " (loading a built image into the daemon)",
    "     [creator]           ghcr.io/sage-bionetworks/openchallenges-challenge-service-base:local - loading image "
    "\"ghcr.io/sage-bionetworks/openchallenges-challenge-service-base:local\". first error: embedded daemon response: "
    "Error processing tar file(exit status 1): write /d92e53e9ebcf932d6ad7fa4b50397e1dfbcccd47622faec47d37bdc3706f618d"
    ".tar: no space left on device")

# ---------------------------------------------------------------- infra: the GPU runner's driver
SMI = ("infra: the GPU runner's NVIDIA driver is not loaded or not reachable (kernel update, missing module, WDDM "
       "mode); the fix is on the runner")
add("infra-nvidia-driver-not-loaded", "ci-for-research/self-hosted-runners#40", "job:self-hosted-gpu-runner",
    SMI + " (a self-hosted runner; fixed by the runner's setup)",
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA "
    "driver is installed and running.")
add("infra-nvidia-driver-not-loaded", "actions/partner-runner-images#54", "job:cuda-python-windows-gpu",
    SMI + " (GitHub's hosted Windows GPU runner)",
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA "
    "driver is installed and running. This can also be happening if non-NVIDIA GPU is running as primary display, and "
    "NVIDIA GPU is in WDDM mode.")
add("infra-nvidia-driver-not-loaded", "GoogleCloudPlatform/compute-gpu-installation#33", "job:gcp-gpu-vm",
    SMI + " (a cloud VM after a kernel update)",
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA "
    "driver is installed and running.")
INIT = ("infra: torch could not initialise the CUDA driver on the machine (no usable GPU or driver); the fix is the "
        "machine, not the code")
add("infra-cuda-driver-init-failed", "facebookresearch/detectron2#2848", "job:detectron2-demo",
    INIT + " (closed as unrelated to the project)",
    "Traceback (most recent call last):\n"
    "  File \"demo.py\", line 82, in <module>\n"
    "    demo = VisualizationDemo(cfg)\n"
    "  File \"/home/user/anaconda3/envs/pytorch1.8.0/lib/python3.6/site-packages/torch/cuda/__init__.py\", line 170, "
    "in _lazy_init\n"
    "    torch._C._cuda_init()\n"
    "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.")
add("infra-cuda-driver-init-failed", "Kai-46/ARF-svox2#9", "job:arf-render-imgs",
    INIT,
    "  File \"/home/user/anaconda3/envs/arf-svox2/lib/python3.8/site-packages/torch/cuda/__init__.py\", line 217, in "
    "_lazy_init\n"
    "    torch._C._cuda_init()\n"
    "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.")
add("infra-cuda-oom-leftover-processes", "pytorch/pytorch#105905", "job:linux-bionic-cuda12.1-py3.10-gcc9-sm86",
    "infra: the runner's GPU was held by processes of earlier jobs (five processes listed); fixed by refreshing the "
    "runners, not by a change",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacty of 21.99 "
    "GiB of which 7.96 GiB is free. Process 1488 has 248.00 MiB memory in use. Process 1582 has 4.36 GiB memory in "
    "use. Process 3537 has 248.00 MiB memory in use. Process 8671 has 8.90 GiB memory in use. Process 8829 has 252.00 "
    "MiB memory in use. Of the allocated memory 3.11 GiB is allocated by PyTorch, and 5.46 GiB is reserved by PyTorch "
    "but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid "
    "fragmentation.")

# ---------------------------------------------------------------- real: generic runtime faults, one per report
add("illegal-address-flashinfer-trtllm-moe-b300", "flashinfer-ai/flashinfer#4164",
    "tests/moe/test_trtllm_gen_fused_moe.py::test_trtllm_gen_fused_moe",
    "an illegal memory access in flashinfer's MoE tests on B300 (release candidate): one report",
    " E   torch.AcceleratorError: CUDA error: an illegal memory access was encountered\n"
    "     Search for `cudaErrorIllegalAddress' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html "
    "for more information.\n"
    "     CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
    "incorrect.\n"
    "     For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "     Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n \n"
    " During handling of the above exception, another exception occurred:\n"
    " E   RuntimeError: CUDA error: b'cudaErrorIllegalAddress': b'an illegal memory access was encountered'")
add("illegal-address-flaggems-gated-delta-rule-h20", "flagos-ai/FlagGems-vllm#690",
    "tests/test_FLA/test_chunk_gated_delta_rule_fwd.py::test_chunk_gated_delta_rule_fwd_accuracy",
    "an illegal memory access from an FLA kernel on H20, first seen at assert_close's synchronisation: one report",
    "tests/test_FLA/test_chunk_gated_delta_rule_fwd.py::test_chunk_gated_delta_rule_fwd_accuracy[dtype0-64-64-4-64-1]\n"
    "torch.AcceleratorError: CUDA error: an illegal memory access was encountered")
add("illegal-address-inductor-resnet18-cudagraphs", "pytorch/torchdynamo#1821", "job:inductor-resnet18",
    "an illegal memory access under inductor's cudagraphs for resnet18 at batch 4096: one report",
    "  File \"/tmp/torchinductor_user/7q/c7qimro7rryowl6fbgxobggppym6ux4mwk4x5htmdqso66ydxlb3.py\", line 691, in call\n"
    "    buf3 = empty_strided((4096, 64, 56, 56), (200704, 3136, 56, 1), device='cuda', dtype=torch.int64)\n"
    "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be "
    "incorrect.")
add("hip-illegal-address-comfyui-rdna3-rocm72", "ROCm/legacy-rocm-build#6003", "job:comfyui-rocm72",
    "HIP's illegal address in ComfyUI on gfx1100 with ROCm 7.2 test wheels, under investigation: one report",
    "terminate called after throwing an instance of 'c10::AcceleratorError'\n"
    "  what():  CUDA error: an illegal memory access was encountered\n"
    "Search for `hipErrorIllegalAddress' in https://rocm.docs.amd.com/projects/HIP/en/latest/index.html for more "
    "information.\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
    "incorrect.\n"
    "For debugging consider passing AMD_SERIALIZE_KERNEL=3\n"
    "Device-side assertion tracking was not enabled by user.\n"
    "Exception raised from SetDevice at /pytorch/c10/hip/HIPFunctions.cpp:334 (most recent call first):")
add("hip-illegal-address-vllm-gfx1201", "ROCm/legacy-rocm-build#5814", "job:vllm-context-extension-gfx1201",
    "HIP's illegal address from vLLM on gfx1201 with a GPU page fault in the kernel log: one report (the title's words)",
    "torch.AcceleratorError: HIP error: an illegal memory access was encountered")
add("ur-out-of-device-memory-inductor-collectives", "intel/torch-xpu-ops#1598",
    "test/distributed/test_inductor_collectives.py::test_allgather_contiguous_input",
    "Unified Runtime out of device memory in XPU distributed inductor tests: one report",
    "RuntimeError: Native API failed. Native API returns: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)")
add("ur-device-lost-gemm-postop-benchmark", "intel/intel-xpu-backend-for-triton#5595",
    "job:triton-gemm-postop-benchmark-int8-bmg",
    "device lost from a benchmark whose memory reservation grew between configurations (fixed in the benchmark): "
    "one report",
    "RuntimeError: Native API failed. Native API returns: 20 (UR_RESULT_ERROR_DEVICE_LOST)")
add("infra-xpu-machine-oom-under-load", "intel/intel-xpu-backend-for-triton#6067",
    "test_debug.py::test_sanitize_int_sub_overflow",
    "infra: the maintainer reran it for a week; only one night failed: the machine ran out of memory under load",
    "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY\n"
    "test_debug.py::test_sanitize_int_sub_overflow[-2147483648-1-int32-int32-False-False]")
add("ze-2013265937-load-binary-tutorials", "intel/intel-xpu-backend-for-triton#330", "job:xpu-tutorial-03",
    "Level Zero's result 0x78000011 printed as a decimal integer while loading the tutorials' binaries (to be fixed "
    "by another PR): one report",
    "    self.module, self.function, self.n_regs, self.n_spills = driver.utils.load_binary(\n"
    "RuntimeError: Triton Error [ZE]: 2013265937")
add("ze-1879048196-test-dot-arc-out-of-resource", "intel/intel-xpu-backend-for-triton#903",
    "python/test/unit/language/test_core.py::test_dot",
    "Level Zero's result 0x70000004 as a decimal integer on Arc, an out-of-resource fault being debugged: one report "
    "(the words of the skip the report quotes)",
    "RuntimeError: Triton Error [ZE]: 1879048196")
add("flaky-xpu-libdevice-bessel-tolerance", "intel/intel-xpu-backend-for-triton#1033",
    "language/test_libdevice.py::test_bessel",
    "flaky: one element over the tolerance; 'restarting the workflow usually helps', closed as stable",
    "FAILED language/test_libdevice.py::test_bessel[j0-bessel_j0-float64] - AssertionError: Tensor-likes are not close!\n\n"
    "Mismatched elements: 1 / 128 (0.8%)\n"
    "Greatest absolute difference: 2.740302717935128e-07 at index (33,) (up to 1e-07 allowed)\n"
    "Greatest relative difference: 2.547540389956526e-06 at index (33,) (up to 1e-07 allowed)")
add("mismatch-inductor-batch-norm-opinfo-rocm", "pytorch/pytorch#154212",
    "inductor/test_torchinductor_opinfo.py::test_comprehensive__batch_norm_with_update_cpu_float16",
    "a mismatch in 42 opinfo tests while testing triton's tip before release 2.8: one report",
    "Exception: Caused by sample input at index 0: SampleInput(input=Tensor[size=(5, 5, 5), device=\"cpu\", "
    "dtype=torch.float16], args=(Tensor[size=(5,), device=\"cpu\", dtype=torch.float16],Tensor[size=(5,), "
    "device=\"cpu\", dtype=torch.float16],Tensor[size=(5,), device=\"cpu\", dtype=torch.float16],Tensor[size=(5,), "
    "device=\"cpu\", dtype=torch.float16],0.5,0.6), kwargs={}, broadcasts_input=False, name='')")
add("segfault-flaggems-triton-371", "flagos-ai/FlagGems#4626", "tests/test_add.py::test_add",
    "a segmentation fault in the first test_add case, a triton 3.7.1 regression (3.6.0 passes): one report",
    "tests/test_add.py .Fatal Python error: Segmentation fault\n\n"
    "Current thread 0x00007fdda7ad4540 (most recent call first):\n"
    "  File \"<workspace>/FlagGems/.venv/lib/python3.12/site-packages/triton/backends/nvidia/driver.py\", line 328 in "
    "__call__")

add("illegal-address-kokkos-cuda-instance-nightly", "trilinos/Trilinos#9622", "job:sierra-nvidia-trilinos-nightly",
    "an illegal memory access reported at Kokkos' device synchronisation in a nightly NVIDIA build for weeks: one report",
    "terminate called after throwing an instance of 'std::runtime_error'\n"
    "  what():  cudaDeviceSynchronize() error( cudaErrorIllegalAddress): an illegal memory access was encountered "
    "/sierra/build/linux_rh7/nightly/nvidia_trilinos_master/objs/tpls/spack/spack/.spack/stage/spack-stage-trilinos-"
    "2021.08.25-r32nhlwga6ychgkw2fmq5aujn2yylorp/spack-src/packages/kokkos/core/src/Cuda/Kokkos_Cuda_Instance.cpp:144\n"
    "Traceback functionality not available")
add("flaky-yaksa-jenkins-gpu-pack", "pmodels/yaksa#170", "job:yaksa-nightly-gpu",
    "flaky: 'GPU testing on Jenkins intermittently shows CUDA memory errors' in a nightly pack test",
    "CUDA Error (yaksuri_cudai_event_query:src/backend/cuda/pup/yaksuri_cudai_event.c,65): an illegal memory access "
    "was encountered\n"
    "lt-pack: test/pack/pack.c:135: runtest: Assertion `dbuf_h' failed.\n"
    "CUDA Error (yaksuri_cudai_type_free_hook:src/backend/cuda/hooks/yaksuri_cudai_type_hooks.c,92): an illegal memory "
    "access was encountered\n"
    "lt-pack: test/pack/pack.c:249: runtest: Assertion `rc == (0)' failed.")
add("infra-actions-job-max-time-external-hang", "lowlighter/metrics#731", "job:metrics-action",
    "infra: every run hung for six hours for a few hours of one day (labelled an external issue); the runner's limit "
    "ended the job",
    "The job running on runner GitHub Actions 3 has exceeded the maximum execution time of 360 minutes.")

# ---------------------------------------------------------------- real: LLVM and MLIR
add("llvm-amdgcn-if-taichi-o3", "llvm/llvm-project#60727", "job:taichi-amdgpu-llc",
    "LLVM cannot select llvm.amdgcn.if from Taichi's own O3 pass pipeline (the structurizer's intrinsic reaching "
    "isel): one report (the title's words)",
    "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.if")
add("llvm-amdgcn-if-triton-reused-targetmachine", "ROCm/triton#34", "python/test/unit/language/test_core.py::test_floordiv",
    "the same LLVM words from triton's ROCm backend adding passes twice to one TargetMachine (int64 floordiv); "
    "fixed by duplicating the LLVM objects: another cause",
    "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.if")
add("llvm-amdgcn-buffer-wbinvl1-rccl", "llvm/llvm-project#174586", "job:rccl-lld-lto",
    "LLVM cannot select llvm.amdgcn.buffer.wbinvl1 for a target without it (ROCm 7.1's lld, an MSCCL kernel): one "
    "report",
    "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.buffer.wbinvl1\n"
    "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace.\n"
    "Stack dump:\n"
    "0.\tRunning pass 'CallGraph Pass Manager' on module 'ld-temp.o'.\n"
    "1.\tRunning pass 'AMDGPU DAG->DAG Pattern Instruction Selection' on function "
    "'@_Z29mscclKernel_Sum_uint8_t_LL128P11ncclDevCommP9mscclAlgoP9mscclWork'")
add("filecheck-spirv-target-env-sdot", "NixOS/nixpkgs#363965", "lit:Dialect/SPIRV/IR/target-env.mlir",
    "a FileCheck miss in MLIR's SPIR-V target-env test while packaging triton's LLVM: one report",
    "# | /build/source/mlir/test/Dialect/SPIRV/IR/target-env.mlir:142:12: error: CHECK: expected string not found in "
    "input\n"
    "# |  // CHECK: spirv.SDot\n"
    "# |            ^\n"
    "# | <stdin>:39:45: note: scanning from here")
add("filecheck-gpu-to-nvvm-all-reduce", "tensorflow/mlir#192", "lit:Conversion/GPUToNVVM/gpu-to-nvvm.mlir",
    "a FileCheck miss after an op verifier rejected the test's all_reduce attribute: one report",
    "FAIL: MLIR :: Conversion/GPUToNVVM/gpu-to-nvvm.mlir (103 of 320)\n"
    "/home/user/llvm-project/llvm/projects/mlir/test/Conversion/GPUToNVVM/gpu-to-nvvm.mlir split at line #39:12:15: "
    "error: op \"add\" is invalid\n"
    "    %result = \"gpu.all_reduce\"(%arg0) ({}) {op = \"add\"} : (f32) -> (f32)\n"
    "              ^\n"
    "/home/user/llvm-project/llvm/projects/mlir/test/Conversion/GPUToNVVM/gpu-to-nvvm.mlir:42:18: error: CHECK-LABEL: "
    "expected string not found in input\n"
    " // CHECK-LABEL: func @gpu_all_reduce_op()")

# ---------------------------------------------------------------- real: libstdc++ older than a binary needs
GLIBCXX = ("triton's LLVM bump to an image built on a newer distro: its mlir-tblgen needs GLIBCXX_3.4.30 (GCC 12) "
           "and the build host's libstdc++ 11 lacks it; one report bisects it to the bump, the other builds a "
           "compatible libstdc++ for it")
add("llvm-prebuilt-needs-glibcxx-3.4.30", "triton-lang/triton#6747", "job:triton-build-from-source",
    GLIBCXX + " (bisected to the LLVM bump)",
    "/home/user/.triton/llvm/llvm-092b6e73-ubuntu-x64/bin/mlir-tblgen: /lib64/libstdc++.so.6: version "
    "`GLIBCXX_3.4.30' not found (required by /home/user/.triton/llvm/llvm-092b6e73-ubuntu-x64/bin/mlir-tblgen)")
add("llvm-prebuilt-needs-glibcxx-3.4.30", "facebookexperimental/triton#1959", "job:fbtriton-build-glibc234",
    GLIBCXX + " (the fork's build on a glibc 2.34 host)",
    "  mlir-tblgen: /lib64/libstdc++.so.6: version `GLIBCXX_3.4.30' not found")
add("conda-libstdcxx-older-than-libtriton", "triton-lang/triton#1543", "job:triton-import-matplotlib",
    "installing matplotlib put conda's older libstdc++ ahead of the system's, and libtriton needs GLIBCXX_3.4.30: "
    "the environment's fix (update conda's libstdcxx-ng), another cause than the LLVM bump",
    "    import triton._C.libtriton.triton as _triton\n"
    "ImportError: /home/user/anaconda3/envs/triton_test/bin/../lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not found "
    "(required by /home/user/Downloads/triton/python/triton/_C/libtriton.so)")
add("flagtree-ascend-wheel-glibcxx-requirement", "flagos-ai/FlagTree#376", "job:flagtree-ascend-import",
    "FlagTree's Ascend wheel needs GLIBCXX_3.4.30 while its documentation said 3.4.24 (openEuler 22.03): fixed in the "
    "documentation and the recommended image; another cause",
    "ImportError: /usr/lib64/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by /usr/local/lib/python3.11/"
    "site-packages/triton/_C/libtriton.so)\n"
    "[ERROR] 2026-02-27-17:06:01 (PID:90686, Device:-1, RankID:-1) ERR99999 UNKNOWN applicaiton exception")

# ---------------------------------------------------------------- flaky: tests that pass on a rerun
add("flaky-trio-dtls-watchdog-timeout", "python-trio/trio#200", "test_dtls.py::test_handshake_over_terrible_network",
    "flaky: the suite's watchdog timed out in a DTLS test on Windows once; reruns pass",
    "  C:\\hostedtoolcache\\windows\\Python\\3.11.9\\x64\\Lib\\site-packages\\trio\\_tests\\test_dtls.py::test_smoke[ipv6] "
    "PASSED [ 37%]\n"
    "  Timeout (0:01:00)!\n"
    "  Thread 0x00001f24 (most recent call first):\n"
    "    File \"C:\\hostedtoolcache\\windows\\Python\\3.11.9\\x64\\Lib\\collections\\__init__.py\", line 128 in "
    "__contains__\n"
    "  C:\\hostedtoolcache\\windows\\Python\\3.11.9\\x64\\Lib\\site-packages\\trio\\_tests\\test_dtls.py::"
    "test_handshake_over_terrible_network \n"
    "  Error: The operation was canceled.")
add("flaky-qtrio-subprocess-timeout", "altendky/qtrio#51", "qtrio/_tests/test_pytest.py::test_overrunning_test_times_out",
    "flaky: a nested pytest subprocess sometimes overruns its 6 s limit on Windows",
    "2020-07-02T01:11:11.5061202Z E               subprocess.TimeoutExpired: Command '('c:\\\\hostedtoolcache\\\\windows"
    "\\\\python\\\\3.6.8\\\\x86\\\\python.exe', '-mpytest', '--basetemp=C:\\\\Users\\\\runneradmin\\\\AppData\\\\Local"
    "\\\\Temp\\\\pytest-of-runneradmin\\\\pytest-0\\\\test_overrunning_test_times_out0\\\\runpytest-0')' timed out after "
    "6 seconds")
add("flaky-trinity-behavior-crash-timeout", "ethereum/trinity#2029", "tests/p2p/test_peer.py::test_behavior_crash",
    "flaky: a 0.5 s wait_for timed out before the expected crash on a busy CI machine; the fix raised the timeout",
    "with pytest.raises(BehaviorCrash):\n"
    "            async with ParagonPeerPairFactory() as (alice, _):\n"
    # (the report's budget, in two pieces: tests/test_no_short_budgets.py reads source lines)
    ">               await asyncio.wait_for(alice.manager.wait_finished(), timeout=0" ".5)\n"
    "E               Failed: DID NOT RAISE <class 'tests.p2p.test_peer.BehaviorCrash'>")


__all__ = ["F", "add", "records", "render"]

if __name__ == "__main__":
    _SET.write(HERE / "fresh6.jsonl")
