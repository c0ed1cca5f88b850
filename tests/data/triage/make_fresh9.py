"""Builds ``fresh9.jsonl``: a tenth, wholly held-out set of real failure texts from public reports,
none of them a source of ``wild.jsonl``, ``labelled.jsonl``, ``holdout.jsonl`` or ``fresh.jsonl`` …
``fresh8.jsonl`` (checked against their ``source`` fields and the issue links inside their texts),
labelled by root cause *before* any signature code was run on them.
Regenerate with ``python tests/data/triage/make_fresh9.py`` (deterministic).

It exists to measure grouping and classification honestly after signature version 10: the labels were
written and committed before the first measurement, and the signature and normaliser code is never
tuned on this file (``bench/bench_triage.py --fresh9`` only reports figures). The whole file is held
out.

Its reports are weighted towards causes and services the older sets' labels do not name: the CI
machinery of a GPU compiler's build (a Kubernetes runner pod evicted for ephemeral storage, sccache's
server failing to start for four different reasons, ccache's temporary files on a read-only or
unwritable directory, S3's ``SlowDown``, a GCS resumable upload's 503, GitHub Actions' cache service
down or a cache key left reserved, container registries unreachable from a kubelet), the GPU machine
(an uncorrectable ECC error, a GPU fallen off the bus, ``/dev/shm`` too small for NCCL in a container),
the compiler's own build (triton's LLVM tarball gone from its blob store, 409 and 404, a download cut,
a self-built LLVM without ``version.txt``), MLIR/LLVM assertion failures with stack dumps in
``triton-opt`` and in a JIT compile, autotuning that finds no valid config, HIP and rocBLAS runtime
texts, Intel XPU's Level Zero and SYCL/UR runtime errors, and GPU tests that fail now and then.

Labelling rule (the same as ``make_wild.py``'s and the other fresh sets'):

* **Same label = same fix.** Two texts carry the same label when one change would fix both, as
  the reports (their comments, a linked duplicate or the fix) show.
* A message that names the fault specifically is one root cause across reports when the reports
  agree on the cause and the fix is one change of the same kind (as ``fresh8.jsonl`` labels NVML's
  mismatch on several machines one cause): a runner pod evicted because its node ran low on
  ephemeral storage (give the pod an ephemeral-storage request or the node more disk), an
  uncorrectable ECC error (take the GPU's node out of service), a GPU fallen off the bus (reseat or
  repair it, drain the node), NCCL's shared-memory segment failing in a container (a larger
  ``/dev/shm``: ``--shm-size`` or ``--ipc=host``), S3's ``SlowDown`` (retry with backoff), sccache's
  client timing out or colliding while it auto-starts its server under a parallel build (start the
  server first), GitHub's cache service down (wait, retry), a cache key left reserved by a failed
  upload (wait for it to expire or change the key), triton's LLVM tarball URL on a storage account
  that stopped public access (point the build at the new URL), ccache's temporary directory made
  read-only by Bazel's sandbox, and ccache's ``/run/user/0`` temporary directory under fakeroot
  (the ccache fix).
* A message that says nothing about where or why — ``Memory access fault by GPU node``, ``HIP error:
  invalid device function``, rocBLAS's ``Cannot read TensileLibrary.dat: Illegal seek``, an MLIR
  assertion, ``Native API returns: -999``, ``UR_RESULT_ERROR_OUT_OF_RESOURCES``, an autotuner's ``No
  valid triton configs`` — is one root cause per report, even when the words are identical, unless the
  reports agree on one fix. The same words with two causes get two labels: sccache's ``Server startup
  failed: cache storage failed to read`` from an unreachable GitHub cache backend, from an invalid S3
  access key and from a bucket policy the server's check ignores; sccache's ``Timed out waiting for
  server startup`` in a report that names the auto-start race and in one that does not; the LLVM
  blob store's ``HTTP Error 404: The specified blob does not exist`` for a platform's build that was
  never made and for a build whose upload did not run; a GCS upload's ``ResumableUploadException:
  503`` that a retry cures and one that persists.
* **Class** is the label's prefix: ``infra-`` (the runner, the network, a service, the machine:
  retry or repair, never blame a commit), ``flaky-`` (the same code passes on a rerun: the report
  says so), anything else ``real``. As in the older sets, a toolchain, library build or container
  definition that does not fit what the job asks (a wheel without the GPU's architecture, ``/dev/shm``
  too small in the job's container, a ccache directory the sandbox makes read-only, a regression in
  a build tool) is ``real``: the fix is a change to the build's environment definition, not a retry.
  A single failure text cannot show flakiness, so a flaky report's text alone is expected to be read
  as real or infrastructure; the class figure counts it anyway.
* Texts of one report in several shapes share the report's label.

Caveat: the person who collected and labelled this set had read docs/triage.md (its description of
signature version 10 and the misses it lists for the older sets) and the older sets' label names,
and chose causes those labels do not name; several texts here nevertheless share words with older
sets' causes (a GitHub service's 503, a download cut, an illegal memory access's wording). No
signature output on this file was read before the labels were committed.

Each record: ``id``, ``fault`` (the label), ``source`` (``owner/repo#N``, the report's URL is
``https://github.com/owner/repo/issues/N``, or ``…/pull/N`` for a pull request), ``test`` (the test
the report names; where it names none, ``job:<project>-<what ran>``), ``shape`` (``real``: the
report's own text, excerpted; ``derived-…``: that text put through a log shape a nightly meets, built
by ``heldout_set.py``), ``why`` (the labelling reason) and ``text``.

Personal data removed: user names in paths → ``user``, home folders → ``/home/user``; no e-mail.
Where GitHub's page rendered a log's line number as a link inside a word (``v0.0.[11](…)``), the link
is undone (``v0.0.11``); markdown quoting (``>``) and backticks around a log line are dropped. Texts
are short excerpts of the error lines (fair use), not whole logs; ``...`` inside a text is the
report's own.
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

# ---------------------------------------------------------------- infra: a runner pod evicted for ephemeral storage
EVICT = ("infra: the CI runner's Kubernetes pod was evicted because its node ran low on ephemeral storage (the "
         "containers declared no ephemeral-storage request); the fix is an ephemeral-storage request for the pod or "
         "more disk on the node, never the change")
add("infra-k8s-pod-evicted-ephemeral-storage", "actions/actions-runner-controller#2695", "job:arc-runner-pod",
    EVICT + " (actions-runner-controller; the job itself ends 'The operation was canceled.')",
    "  Warning  Evicted              44s   kubelet  The node was low on resource: ephemeral-storage. Container runner "
    "was using 3914072Ki, which exceeds its request of 0. Container docker was using 91249008Ki, which exceeds its "
    "request of 0.")
add("infra-k8s-pod-evicted-ephemeral-storage", "pingcap/tidb-operator#1386", "job:tidb-operator-ci-build-kind",
    EVICT + " (a Jenkins pod; the fix adds ephemeral-storage requests)",
    "status:\n"
    "  message: 'The node was low on resource: ephemeral-storage. Container main was using\n"
    "    12012Ki, which exceeds its request of 0. Container jnlp was using 96Ki, which\n"
    "    exceeds its request of 0. '\n"
    "  phase: Failed\n"
    "  reason: Evicted\n"
    "  startTime: \"2019-12-20T05:19:51Z\"")
add("infra-k8s-pod-evicted-ephemeral-storage", "concourse/hush-house#8", "job:hush-house-worker",
    EVICT + " (Concourse workers on GKE; fixed by moving to a 50 GiB disk)",
    "status:\n"
    "  message: 'The node was low on resource: ephemeral-storage. Container hush-house-worker\n"
    "    was using 73712Ki, which exceeds its request of 0. '\n"
    "  phase: Failed\n"
    "  reason: Evicted\n"
    "  startTime: \"2019-02-15T20:18:59Z\"")
add("infra-k8s-pod-evicted-ephemeral-storage", "ai-dynamo/nixl#2240", "job:nixl-ci-test-sanitizers",
    EVICT + " (a Jenkins Kubernetes agent; the analysis asks for an ephemeral-storage request/limit)",
    "nbu-swx-nixl/worker-22064770-07b0-45e3-8528-[REDACTED:Hex High Entropy String]-j3crs-zlzw7 Pod just failed.\n"
    "Reason: Evicted, Message: The node was low on resource: ephemeral-storage.\n"
    "...\n"
    "Agent worker-...-zlzw7 was deleted; cancelling node body")
add("infra-k8s-pod-evicted-ephemeral-storage", "cloud-pi-native/socle#532", "job:socle-gitlab-runner",
    EVICT + " (a GitLab Kubernetes runner; the pull request fixes the runner's ephemeral storage)",
    "WARNING: Event retrieved from the cluster: The node was low on resource: ephemeral-storage. Threshold quantity: "
    "16023864137, available: 12671572Ki. Container build was using 1639680Ki, request is 0, has larger consumption "
    "of ephemeral-storage. Container helper was using 8Ki, request is 0, has larger consumption of ephemeral-storage. "
    "WARNING: Event retrieved from the cluster: Container runtime did not kill the pod within specified grace period.")

# ---------------------------------------------------------------- sccache: the server's start, several causes
PRESTART = ("infra: sccache's clients auto-start its server while a parallel build launches many of them at once; "
            "they time out or collide on the port; the fix is starting the server before the build "
            "(sccache --start-server), never the change")
add("infra-sccache-autostart-race-prestart-server", "matz/spinel#1427", "job:spinel-ci-ubuntu-gcc",
    PRESTART + " (the pull request pre-starts the server; it names the race)",
    "sccache: error: Timed out waiting for server startup. Maybe the remote service is unreachable?\n"
    "make: *** [build/prism/node.o] Error 2")
add("infra-sccache-autostart-race-prestart-server", "mozilla/sccache#824", "job:rustc-build-sccache",
    PRESTART + " (the workaround in the thread: call sccache --start-server first)",
    "sccache: error: Server startup failed: Address already in use (os error 98)\n"
    "error: could not compile `rustc_symbol_mangling`.\n"
    "\n"
    "To learn more, run the command again with --verbose.\n"
    "warning: build failed, waiting for other jobs to finish...\n"
    "sccache: error: Server startup failed: Address already in use (os error 98)")
add("infra-sccache-autostart-race-prestart-server", "mozilla/sccache#176", "job:fennec-build-sccache",
    PRESTART + " (the solution in the thread: start the server by hand with --start-server)",
    "0:13.44 DEBUG: The command returned non-zero exit status 2.\n"
    "0:13.44 DEBUG: Its error output was:\n"
    "0:13.44 DEBUG: | error: Connection to server timed out\n"
    "0:13.44 ERROR: Command `/home/user/.cargo/bin/sccache /home/user/.mozbuild/android-ndk-r11c/toolchains/"
    "arm-linux-androideabi-4.9/prebuilt/linux-x86_64/bin/arm-linux-androideabi-gcc -E /tmp/conftest.nrQTOg.c` failed "
    "with exit status 2.")
add("infra-sccache-startup-timeout-gitlab-ci", "mozilla/sccache#2023", "job:gitlab-ci-cargo-build-sccache",
    "infra: the same words as the auto-start race, but the report (GitLab CI, local disk cache, gone on the next "
    "run) names no cause and no fix; one per report",
    "  process didn't exit successfully: `sccache rustc - --crate-name ___ --print=file-names --crate-type bin "
    "--crate-type rlib --crate-type dylib --crate-type cdylib --crate-type staticlib --crate-type proc-macro "
    "--print=sysroot --print=split-debuginfo --print=crate-name --print=cfg` (exit status: 2)\n"
    "  --- stderr\n"
    "  sccache: error: Timed out waiting for server startup. Maybe the remote service is unreachable?\n"
    "  Run with SCCACHE_LOG=debug SCCACHE_NO_DAEMON=1 to get more information")
add("infra-sccache-gha-cache-backend-unreachable", "HeddleCo/heddle#445", "job:heddle-check-and-test",
    "infra: sccache's server could not reach the GitHub Actions cache backend (a DNS failure) when it started; the "
    "fix is a retry or a non-fatal start, never the change",
    "error: process didn't exit successfully: `sccache .../rustc -vV` (exit status: 2)\n"
    "sccache: error: Server startup failed: cache storage failed to read: Unexpected (temporary) at read => send http "
    "request\n"
    "  ... client error (Connect): dns error: failed to lookup address information: Try again\n"
    "  service: ghac   path: .sccache_check")
add("infra-sccache-s3-access-key-invalid", "llm-d/llm-d#2225", "job:llm-d-cuda-image-build",
    "infra: the AWS credentials given to sccache's S3 backend are rejected on every run; the fix is valid "
    "credentials in the CI's secret, not the change (the same 'Server startup failed' words as two other causes)",
    "sccache: error: Server startup failed: cache storage failed to read:\n"
    "  PermissionDenied (permanent) at read => S3Error {\n"
    "    code: \"InvalidAccessKeyId\",\n"
    "    message: \"The AWS Access Key Id you provided does not exist in our records.\" }\n"
    "\n"
    "Context:\n"
    "   uri: https://s3.us-west-2.amazonaws.com/vllm-nightly-sccache/llm-d-cache/.sccache_check\n"
    "   response: Parts { status: 403, ... }")
add("sccache-check-ignores-s3-key-prefix", "mozilla/sccache#1825", "job:sccache-s3-server-start",
    "real: sccache 0.5's start-up check reads .sccache_check at the bucket's root, ignoring SCCACHE_S3_KEY_PREFIX, "
    "so credentials limited to the prefix are denied; a regression of the tool (0.3.0 worked): the fix is in sccache "
    "or its pinned version, not a retry",
    "error: Server startup failed: cache storage failed to read: PermissionDenied (permanent) at read => S3Error { "
    "code: \"AccessDenied\", message: \"Access Denied\", resource: \"\", request_id: \"3064FNJM6EWP7RTV\" }\n"
    "  \n"
    "  Context:\n"
    "      response: Parts { status: 403, version: HTTP/1.1, headers: {\"x-amz-request-id\": \"3064FNJM6EWP7RTV\", "
    "\"x-amz-id-2\": \"7/gTOvi6k0rQALaarXAK7vwyJF97kKDIPLEa5p/BV1o3R8velMcNQfn8r2B0HK1DSJlQEE7g/78=\", \"content-type\": "
    "\"application/xml\", \"transfer-encoding\": \"chunked\", \"date\": \"Thu, 06 Jul 2023 11:09:06 GMT\", \"server\": "
    "\"AmazonS3\"} }\n"
    "      service: s3\n"
    "      path: .sccache_check\n"
    "      range: 0-")

# ---------------------------------------------------------------- ccache's temporary files, two causes
add("ccache-dir-read-only-in-bazel-sandbox", "enola-dev/enola#1701", "job:enola-bazel-build",
    "real: ccache wraps the compiler and Bazel's sandbox mounts ccache's directory read-only; the fix is making it "
    "writable in the sandbox (or not using the ccache wrapper), the same change as in bazelbuild/bazel#21978",
    "Use --sandbox_debug to see verbose messages from the sandbox and retain the sandbox build root for debugging\n"
    "ccache: error: failed to create temporary file for /home/user/.cache/ccache/tmp/cpp_stdout.tmp.nsFhFk.i: "
    "Read-only file system")
add("ccache-dir-read-only-in-bazel-sandbox", "bazelbuild/bazel#21978", "job:bazel-build-bazel-complete",
    "real: ccache wraps the compiler and Bazel's sandbox mounts ccache's directory read-only; the fix is making it "
    "writable in the sandbox (or not using the ccache wrapper)",
    "Use --sandbox_debug to see verbose messages from the sandbox and retain the sandbox build root for debugging\n"
    "ccache: error: Failed to create temporary file for ~/.ccache/tmp/daemonize.stdout: Read-only file system")
FAKEROOT = ("real: ccache 4.x puts its temporary files under /run/user/0 when it exists, which fakeroot cannot "
            "write; the fix is ccache's own (fall back to a writable directory), the same words as the Bazel sandbox "
            "with another cause")
add("ccache-tmp-under-unwritable-run-user-fakeroot", "ccache/ccache#1044", "job:ccache-fakeroot-compile",
    FAKEROOT + " (the maintainer's report and fix)",
    "ccache: error: Failed to create temporary file for /run/user/0/ccache-tmp/tmp.cpp_stdout.vC3Jmv: Permission "
    "denied")
add("ccache-tmp-under-unwritable-run-user-fakeroot", "ccache/ccache#984", "job:mariadb-deb-build-fakeroot",
    FAKEROOT + " (a MariaDB package build; the report that led to the fix)",
    "/usr/lib/ccache/cc   -g -O2 -ffile-prefix-map=/tmp/build/source=. -fstack-protector-strong -Wformat "
    "-Werror=format-security -Wdate-time -D_FORTIFY_SOURCE=2 -Wdate-time -D_FORTIFY_SOURCE=2  -o "
    "CMakeFiles/cmTC_5f45a.dir/testCCompiler.c.o -c /tmp/build/source/builddir/CMakeFiles/CMakeTmp/testCCompiler.c\n"
    "ccache: error: Failed to create temporary file for /run/user/0/ccache-tmp/tmp.cpp_stdout.x83PCf: Permission "
    "denied")

# ---------------------------------------------------------------- infra: object stores
SLOW = ("infra: the S3 (or S3-compatible) object store answered SlowDown / 503 'reduce your request rate'; the "
        "fix is retrying with backoff, never the change")
add("infra-s3-slowdown", "ray-project/deltacat#51", "job:deltacat-compaction-write-index",
    SLOW + " (a multipart upload)",
    "botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the CompleteMultipartUpload operation")
add("infra-s3-slowdown", "cockpit-project/bots#3991", "job:cockpit-bots-s3-streamer",
    SLOW + " (the CI's log streamer's PUT)",
    "   File \"/usr/lib64/python3.10/urllib/request.py\", line 643, in http_error_default\n"
    "     raise HTTPError(req.full_url, code, msg, hdrs, fp)\n"
    " urllib.error.HTTPError: HTTP Error 503: Slow Down")
add("infra-s3-slowdown", "huridocs/uwazi#7319", "job:uwazi-files-api-s3",
    SLOW + " (the report quotes AWS's advice: retry with exponential backoff)",
    "7:58 PM: 2024-10-07T19:58:33.712Z [tenant] requestId: 6529 \n"
    "url: /api/files/1714673803529gdetwwu5oe9.jpg\n"
    "SlowDown: UnknownError\n"
    "    at throwDefaultError (/opt/uwazi/cores/core-1.187.3/node_modules/@smithy/smithy-client/dist-cjs/index.js:840:20)\n"
    "    at /opt/uwazi/cores/core-1.187.3/node_modules/@smithy/smithy-client/dist-cjs/index.js:849:5\n"
    "    at de_CommandError (/opt/uwazi/cores/core-1.187.3/node_modules/@aws-sdk/client-s3/dist-cjs/index.js:4743:14)")
add("infra-gcs-resumable-upload-503-retry", "googleapis/google-cloud-cpp#6508", "job:google-cloud-cpp-gcb-demo-install",
    "infra: GCS answered 503 to the build cache's upload and gsutil did not retry an upload from stdin; the fix is "
    "a retry (from a temporary file), never the change",
    "Step #4: 2021-05-10T12:36:34Z: ====> cache.sh: save\n"
    "Step #4: 2021-05-10T12:36:34Z: Saving ( .ccache ) to gs://cloud-cpp-testing-resources_cloudbuild/build-cache/"
    "google-cloud-cpp/main/demo-ubuntu-xenial-demo-install/h/cache.tar.gz\n"
    "Step #4: Copying from <STDIN>...\n"
    "Step #4: ResumableUploadException: 503 Server Error\n"
    "Finished Step #4")
add("infra-gcs-parallel-composite-upload-503-persists", "GoogleCloudPlatform/gsutil#294", "job:gsutil-cp-parallel-composite",
    "infra: the same words, another cause: a 30 GB parallel composite upload that keeps failing with 503 after "
    "restarts (the maintainers ask for a debug log); not cured by a retry, one per report",
    "ResumableUploadException: 503 Server Error\n"
    "ResumableUploadException: 503 Server Error\n"
    "ResumableUploadException: 503 Server Error\n"
    "ResumableUploadException: 503 Server Error")

# ---------------------------------------------------------------- infra: GitHub Actions' cache service
add("infra-actions-cache-service-outage", "satackey/action-docker-layer-caching#285", "job:photobuddy-docker-layer-cache",
    "infra: GitHub Actions' cache service answered 503 (an outage on GitHub's side); the fix is waiting and "
    "retrying, never the change",
    "Run satackey/action-docker-layer-caching@v0.0.11\n"
    "Error: getCacheEntry failed: Cache service responded with 503\n"
    "    at /home/runner/work/_actions/satackey/action-docker-layer-caching/v0.0.11/dist/ttsc-dist/main.js/index.js:44587:15\n"
    "    at Generator.next (<anonymous>)")
add("infra-actions-cache-service-outage", "actions/cache#698", "job:setup-java-maven-cache",
    "infra: GitHub Actions' cache service timed out during an incident GitHub mitigated; the fix is waiting and "
    "retrying, never the change",
    "getCacheEntry failed: Request timeout: /JNaOfbZKyvCPCQ3yeg44JpXs8Z4PzKL6A6l2M67Wio6zbZtx5q/_apis/artifactcache/"
    "cache?keys=setup-java-Linux-maven-c379361358a7fc670e80e158f4a881bf3edf105977651a1aa73bb99632425669%2Csetup-java-"
    "Linux-maven&version=3d88543681947283edf8997cb89a71c1522b2e39bc75c36ae780bd628eb8559d")
RESERVED = ("infra: an earlier save of the cache failed between reserving the key and uploading, so the key stays "
            "reserved and every later save is refused; the fix is waiting for the reservation to expire (or a new "
            "key), never the change")
add("infra-actions-cache-key-stuck-reserved", "actions/cache#485", "job:xmltv-download-cache",
    RESERVED + " (the maintainer explains the stuck reservation)",
    "Unable to reserve cache with key Linux-xmltv-cache, another job may be creating this cache.")
add("infra-actions-cache-key-stuck-reserved", "actions/toolkit#658", "job:node-modules-cache",
    RESERVED + " ('the cache is stuck')",
    "Post job cleanup.\n"
    "Unable to reserve cache with key Linux-modules-0c1e633988f0463573ae79cec4e4e741153037a6a270a901c8bf040b3d674a4f, "
    "another job may be creating this cache.")
add("infra-actions-cache-key-stuck-reserved", "actions/cache#1612", "job:eve-cache-save",
    RESERVED + " (the first CreateCacheEntry timed out in a partial outage, the key stayed reserved)",
    "Attempt 1 of 5 failed with error: Request timeout: /twirp/github.actions.results.api.v1.CacheService/"
    "CreateCacheEntry",
    "Failed to save: Unable to reserve cache with key ... another job may be creating this cache.")

# ---------------------------------------------------------------- infra: container registries seen from a kubelet or a runtime
add("infra-docker-index-pull-network-timeout", "kubernetes/kubernetes#21921",
    "job:kubernetes-e2e-pods-back-off-image-update",
    "infra: the e2e flake's cause is the node's pull from Docker's index timing out; a network/registry blip, "
    "never the change",
    "Feb 24 13:38:26.320: INFO: At 2016-02-24 13:34:03 -0800 PST - event for pod-back-off-image: {kubelet "
    "jenkins-e2e-minion-sdss} Failed: Failed to pull image \"nginx\": Network timed out while trying to connect to "
    "https://index.docker.io/v1/repositories/library/nginx/images. You may want to check your internet connection or "
    "if you are behind a proxy.")
add("infra-quay-registry-ping-canceled", "cri-o/cri-o#8872", "job:cri-o-integration-image-bats",
    "infra: the failing pull test could not reach quay.io ('This looks like a registry issue'); never the change",
    "failed: pinging container registry quay.io: Get \"https://quay.io/v2/\": context canceled")

# ---------------------------------------------------------------- infra: the GPU machine's hardware
ECC = ("infra: the GPU reports an uncorrectable ECC error, a hardware fault of the machine the job landed on; the "
       "fix is taking that GPU's node out of service (exclude or drain it, repair), never the change")
add("infra-gpu-uncorrectable-ecc", "MFlowCode/MFC#1748", "job:mfc-phoenix-gpu-syscheck",
    ECC + " (one SLURM node; the pull request excludes it)",
    "Accelerator Fatal Error: call to cuCtxCreate returned error 214\n"
    "  (CUDA_ERROR_ECC_UNCORRECTABLE): uncorrectable ECC error encountered\n"
    "mfc: ERROR > syscheck failed with exit code 1.")
add("infra-gpu-uncorrectable-ecc", "MFlowCode/MFC#1750", "job:mfc-phoenix-gpu-syscheck",
    ECC + " (a second node of the same chassis, excluded the same way; 'Reruns don't help')",
    "Accelerator Fatal Error: call to cuCtxCreate returned error 214\n"
    "  (CUDA_ERROR_ECC_UNCORRECTABLE): uncorrectable ECC error encountered")
add("infra-gpu-uncorrectable-ecc", "jade-hpc-gpu/jade-hpc-gpu.github.io#194", "job:jade-pytorch-training",
    ECC + " (one cluster node; 'investigated and fixed' by the admins)",
    "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
    "incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
add("infra-gpu-uncorrectable-ecc", "nagadit/DeepFaceLab_Linux#89", "job:deepfacelab-train",
    ECC + " ('a hardware problem. I just changed the machine')",
    "F tensorflow/stream_executor/lib/statusor.cc:34] Attempting to fetch value instead of handling error Internal: "
    "failed initializing StreamExecutor for CUDA device ordinal 0: Internal: failed call to cuDevicePrimaryCtxRetain: "
    "CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered")
BUS = ("infra: the GPU fell off the PCIe bus (Xid 79) and the driver lost it; the fix is servicing the machine "
       "(reseat the card, power, drain the node), never the change")
add("infra-gpu-fallen-off-bus", "NVIDIA/open-gpu-kernel-modules#387", "job:nvidia-smi-health-check",
    BUS + " ('Fixed by reseating GPU')",
    "Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error")
add("infra-gpu-fallen-off-bus", "NVIDIA/NVSentinel#155", "job:nvsentinel-syslog-health-monitor",
    BUS + " (a fleet's kernel log the health monitor should catch)",
    "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
    "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
    "               NVRM: fallen off the bus and is not responding to commands.\n"
    "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).")
add("infra-gpu-fallen-off-bus", "leptonai/gpud#604", "job:gpud-nvml-components",
    BUS + " (the health daemon's own words for it)",
    "XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00",
    "failed to get remapped rows for GPU-ac896b35-5782-c478-4b2a-a661de07770f: failed to get device remapped rows: "
    "ERROR_GPU_IS_LOST")
add("infra-gpu-fallen-off-bus", "NVIDIA/dcgm-exporter#604", "job:dcgm-exporter-nvidia-smi",
    BUS + " ('It seems that the GPU has been disconnected')",
    "Unable to determine the device handle for GPU 000:BA:80.0: Unknown Error")

# ---------------------------------------------------------------- real: NCCL's shared memory in a container
SHM = ("real: NCCL (2.7 and later) uses shared memory between local ranks and the container's /dev/shm (64 MB by "
       "default in Docker) is too small; the fix is the container's definition (--shm-size or --ipc=host)")
add("nccl-container-dev-shm-too-small", "NVIDIA/nccl#342", "job:bluefog-docker-nccl",
    SHM + " ('It is the /dev/shm size problem under the docker')",
    "include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device\n"
    "include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-250a7cc850ba9298-0-1-3 "
    "(size 9637888)")
add("nccl-container-dev-shm-too-small", "NVIDIA/nccl#473", "job:nccl-tests-all-reduce",
    SHM + " ('a problem of shared memory in docker containers', fixed by --ipc=host); the message itself says "
    "only 'unhandled system error'",
    "fastmoe: Test NCCL failure common.cu:777 'unhandled system error'",
    "RuntimeError: NCCL Error 2: unhandled system error")
add("nccl-container-dev-shm-too-small", "fal-ai-community/video-diffusion-speedrun#2", "job:video-diffusion-docker-train",
    SHM + " ('What fixed it for me was adding --shm-size=1g')",
    "Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)")

# ---------------------------------------------------------------- triton's build: the LLVM tarball and its store
URL409 = ("real: triton's setup.py downloads its pinned LLVM from tritonlang.blob.core.windows.net, a storage account "
          "that stopped public access; the fix is the build pointing at the new URL (upstream moved to "
          "oaitriton.blob.core.windows.net), the same change in both")
add("triton-build-llvm-url-public-access-revoked", "triton-lang/triton#4527", "job:triton-wheel-build-docker",
    URL409,
    "[] #186 28.67       downloading and extracting https://github.com/pybind/pybind11/archive/refs/tags/v2.11.1.tar.gz ...\n"
    "[] #186 28.67       downloading and extracting https://tritonlang.blob.core.windows.net/llvm-builds/"
    "llvm-49af6502-ubuntu-x64.tar.gz ...\n"
    "[] #186 28.67       error: HTTP Error 409: Public access is not permitted on this storage account.\n"
    "[] #186 28.67       [end of output]")
add("triton-build-llvm-url-public-access-revoked", "ROCm/triton#631", "job:aotriton-compile-triton",
    URL409 + " (the ROCm fork still had the old URL)",
    "2024-08-18T13:02:58,456   downloading and extracting https://github.com/pybind/pybind11/archive/refs/tags/"
    "v2.11.1.tar.gz ...\n"
    "2024-08-18T13:02:58,456   downloading and extracting https://tritonlang.blob.core.windows.net/llvm-builds/"
    "llvm-49af6502-ubuntu-x64.tar.gz ...\n"
    "2024-08-18T13:02:58,457   error: HTTP Error 409: Public access is not permitted on this storage account.")
add("triton-build-llvm-centos-tarball-missing", "triton-lang/triton#4550", "job:triton-setup-install-amazon-linux",
    "real: no LLVM build for the pinned hash exists for the CentOS platform the setup picked; the fix is in the build's "
    "platform choice or the published builds; the same 404 as a build whose upload did not run, one per report",
    "running build_ext\n"
    "downloading and extracting https://oaitriton.blob.core.windows.net/public/llvm-builds/"
    "llvm-ce80c80d-centos-x64.tar.gz ...\n"
    "error: HTTP Error 404: The specified blob does not exist.")
add("triton-build-llvm-tarball-not-uploaded-for-bump", "triton-lang/triton#8075", "job:triton-ci-llvm-bump",
    "real: an LLVM bump's tarball was not stored because the llvm-build workflow was not run from the branch; the fix "
    "is running it again there (the maintainer did)",
    "error: HTTP Error 404: The specified blob does not exist")
add("infra-llvm-release-download-connection-closed", "nelson-liu/lost-in-the-middle#7", "job:triton-pre-mlir-pip-install",
    "infra: the download of LLVM's release tarball was cut by the remote end; 'a connection issue', solved by trying "
    "again",
    "      downloading and extracting https://github.com/pybind/pybind11/archive/refs/tags/v2.10.0.tar.gz ...\n"
    "      downloading and extracting https://github.com/llvm/llvm-project/releases/download/llvmorg-11.0.1/"
    "clang+llvm-11.0.1-x86_64-linux-gnu-ubuntu-16.04.tar.xz ...\n"
    "      error: Remote end closed connection without response\n"
    "      [end of output]")
add("triton-setup-self-built-llvm-without-version-txt", "triton-lang/triton#4463", "job:triton-pip-install-editable",
    "real: with a self-built LLVM the setup still looks for the download's version.txt under the given LLVM path; "
    "the fix is in setup.py's handling of a self-built LLVM, one per report",
    "      downloading and extracting https://oaitriton.blob.core.windows.net/public/llvm-builds/"
    "llvm-4713bd4c-ubuntu-x64.tar.gz ...\n"
    "      error: [Errno 2] No such file or directory: '../llvm-project/build/version.txt'\n"
    "      [end of output]\n"
    "  \n"
    "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
    "  ERROR: Failed building editable for triton")

# ---------------------------------------------------------------- MLIR assertions with stack dumps, one per report
add("assert-axisinfo-rank-amdgpu-to-llvm", "triton-lang/triton#11886", "job:triton-opt-convert-amdgpu-to-llvm",
    "real: an AxisInfo built with mismatched ranks while lowering to LLVM for gfx942; a compiler bug, one per report",
    "triton-opt: /home/user/WorkSpace/fusion-fuzz/projects/triton/triton-src/include/triton/Analysis/AxisInfo.h:39: "
    "mlir::triton::AxisInfo::AxisInfo(ArrayRef<int64_t>, ArrayRef<int64_t>, ArrayRef<int64_t>, "
    "std::optional<APInt>): Assertion `constancy.size() == contiguity.size()' failed.\n"
    "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace and "
    "instructions to reproduce the bug.\n"
    "Stack dump:\n"
    "0.\tProgram arguments: /home/user/WorkSpace/fusion-fuzz/projects/triton/triton-build/bin/triton-opt ./min.txt "
    "--convert-triton-amdgpu-to-llvm=gfx-arch=gfx942")
add("assert-axisinfo-join-negative-max-contiguous", "triton-lang/triton#10909", "job:triton-jit-kernel-compile",
    "real: a negative tl.max_contiguous hint makes AxisInfo's join non-monotonic and the dataflow analysis asserts; "
    "a missing check in the compiler, one per report",
    "python3: /root/.triton/llvm/llvm-850a2b1b-ubuntu-x64-1/include/mlir/Analysis/DataFlow/SparseAnalysis.h:120: "
    "mlir::ChangeResult mlir::dataflow::Lattice<ValueT>::join(const ValueT&) [with ValueT = mlir::triton::AxisInfo]: "
    "Assertion `ValueT::join(newValue, rhs) == newValue && \"expected `join` to be monotonic\"' failed.")

# ---------------------------------------------------------------- autotuning, one per report
add("autotune-no-valid-config-shared-memory-openpi", "Physical-Intelligence/openpi#654", "job:openpi-pi05-train",
    "real: inductor's max-autotune candidates need more shared memory than the GPU has (101376 bytes) and are "
    "dropped; one per report",
    "E0912 11:54:57.366000 1121181 torch/_inductor/select_algorithm.py:2100] [7/0] Runtime error during autotuning: \n"
    "E0912 11:54:57.366000 1121181 torch/_inductor/select_algorithm.py:2100] [7/0] No valid triton configs. "
    "OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: 101376. Reducing block sizes "
    "or `num_stages` may help.. \n"
    "E0912 11:54:57.366000 1121181 torch/_inductor/select_algorithm.py:2100] [7/0] Ignoring this choice.")
add("autotune-store-cubin-on-none", "pytorch/pytorch#150980", "job:torch-compile-max-autotune",
    "real: after autotuning, inductor calls store_cubin on a kernel that is None (no valid triton configs); a "
    "compiler bug, one per report",
    "SingleProcess AUTOTUNE benchmarking takes 0.3201 seconds and 3.5530 seconds precompiling for 18 choices\n"
    "[rank0]:E0410 07:53:02.558000 255947 torch/_inductor/select_algorithm.py:1905] [15/4] Exception No valid triton "
    "configs.")

# ---------------------------------------------------------------- ROCm runtime texts, one per report
add("hip-memory-access-fault-rocm42-training", "ROCm/legacy-rocm-build#1535", "job:rocm42-pytorch-training",
    "real: a GPU page fault during training on ROCm 4.2; the report gives no cause, one per report",
    "Memory access fault by GPU node-2 (Agent handle: 0x55fea5592860) on address 0x7fc133800000. Reason: Page not "
    "present or supervisor privilege.\n"
    "Aborted (core dumped)")
add("infra-hip-memory-access-fault-system-config", "ROCm/pytorch#797", "job:rocm-pytorch-run",
    "infra: the same words, another cause: the maintainer finds it 'system configuration related' (the machine's "
    "ROCm setup), not PyTorch's; one per report",
    "Memory access fault by GPU node-2 (Agent handle: 0x56468ab3bb50) on address 0x7fe55fb03000. Reason: Page not "
    "present or supervisor p rivilege.Aborted (core dumped)")
add("torch-rocm-wheel-without-gfx1010", "pytorch/pytorch#132570", "job:torch-rocm62-radeon-5700xt",
    "real: the PyTorch ROCm wheels carry no gfx1010 code object (roc-obj-ls confirms), so a kernel launch on an RX "
    "5700 XT finds no function; the fix is a build for that architecture",
    "RuntimeError: HIP error: invalid device function\n"
    "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
    "incorrect.\n"
    "For debugging consider passing AMD_SERIALIZE_KERNEL=3\n"
    "Compile with `TORCH_USE_HIP_DSA` to enable device-side assertion")
add("hip-invalid-device-function-gfx1010-rocm53-regression", "ROCm/legacy-rocm-build#2527", "job:comfyui-rocm61",
    "real: the same fault in HIP's trace words, reported as a ROCm 5.3+ regression for gfx1010; not shown to be the "
    "wheel's architecture list, one per report",
    ":3:hip_module.cpp           :668 : 14629861947 us: [pid:31113 tid:0x7fa5a37fe700]  hipLaunchKernel ( "
    "0x7fa9706d5550, {57,1,1}, {256,1,1}, 0x7fa5a37fc9a0, 0, stream:<null> ) \n"
    ":3:hip_module.cpp           :669 : 14629861952 us: [pid:31113 tid:0x7fa5a37fe700] hipLaunchKernel: Returned "
    "hipErrorInvalidDeviceFunction : \n"
    ":3:hip_error.cpp            :35  : 14629861955 us: [pid:31113 tid:0x7fa5a37fe700]  hipGetLastError (  ) ")
add("hip-invalid-device-function-rocm-sdk-builder-gfx1030", "lamikr/rocm_sdk_builder#185", "job:rocm-sdk-pytorch-benchmark",
    "real: the same words on a self-built ROCm SDK for an RX 6800M; no shared cause or fix with the others, one per "
    "report",
    "RuntimeError: HIP error: invalid device function\n"
    "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
    "incorrect.\n"
    "For debugging consider passing AMD_SERIALIZE_KERNEL=3\n"
    "Compile with `TORCH_USE_HIP_DSA` to enable device-side assertions.")
add("rocblas-tensile-library-rpm-mi210", "ROCm/rocBLAS#1267", "job:rocblas-app-mi210-rpm",
    "real: with ROCm 5.2's RPM packages rocBLAS falls back to a TensileLibrary.dat the packages no longer ship (the "
    "library is split per architecture); a packaging fault, one per report",
    "rocBLAS error: Cannot read\n"
    "/opt/rocm/rocblas/library/TensileLibrary.dat: Illegal seek")
add("rocblas-tensile-library-rx7800xt-override", "ROCm/rocBLAS#1339", "job:pytorch-rocm-rx7800xt",
    "real: the same words on an RX 7800 XT run with an overridden gfx version; another cause, one per report",
    "rocBLAS error: Cannot read /home/user/venv/lib/python3.10/site-packages/torch/lib/rocblas/library/"
    "TensileLibrary.dat: Illegal seek")

# ---------------------------------------------------------------- Intel XPU: Level Zero and SYCL/UR, one per report
add("ze-loader-newer-than-driver", "oneapi-src/level-zero#196", "job:level-zero-zello-world-windows",
    "real: a new Level Zero loader over an older GPU driver that lacks a table the loader asks for, so zeInit fails; "
    "the fix is a matching driver/loader pair",
    "zello_world.exe\n"
    "ZE_LOADER_DEBUG_TRACE:Using Loader Library Path:\n"
    "ZE_LOADER_DEBUG_TRACE:Loading Driver C:\\WINDOWS\\System32\\DriverStore\\FileRepository\\"
    "iigd_dch.inf_amd64_eb1c0bb4c867d89a\\ze_intel_gpu64.dll\n"
    "ZE_LOADER_DEBUG_TRACE:Tracing Layer Library Path: ze_tracing_layer.dll\n"
    "Driver not initialized: ZE_RESULT_ERROR_UNINITIALIZED\n"
    "Did NOT find matching ZE_DEVICE_TYPE_GPU device!")
add("ur-out-of-resources-foreach-copy-large-input-xpu", "intel/torch-xpu-ops#2445",
    "test_foreach.py::TestForeachXPU::test_foreach_copy_with_multi_dtypes_large_input_xpu",
    "real: a large-input foreach copy runs out of UR resources on the XPU (the case was skipped); one per report",
    "RuntimeError: UR backend failed. UR backend returns:40 (UR_RESULT_ERROR_OUT_OF_RESOURCES) ; RuntimeError: "
    "Comparing")
add("ur-out-of-resources-sd-cpp-second-run", "ggml-org/ggml#1072", "job:stable-diffusion-cpp-sycl",
    "real: the same UR code on the second run of a SYCL pipeline (a VAE buffer of 2.5 GB); another cause, one per "
    "report",
    "ggml_extend.hpp:1000 - vae compute buffer size: 2496.00 MB(VRAM)\n"
    "Native API failed. Native API returns: 40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)")
add("pi-out-of-resources-sdnext-arc", "vladmandic/sdnext#1526", "job:sdnext-ipex-arc-generate",
    "real: SYCL's PI_ERROR_OUT_OF_RESOURCES at the end of an image generation on an Arc GPU; one per report",
    "23:58:13-803766 ERROR    Exception: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) -5\n"
    "                         (PI_ERROR_OUT_OF_RESOURCES)")
add("pi-unknown-error-ipex-llm-multinomial", "intel/ipex-llm#10173", "job:ipex-llm-rag-generate",
    "real: SYCL's unknown PI error (-999) in torch.multinomial during generation; ipex-llm changed its code for it; "
    "one per report",
    "    next_tokens = torch.multinomial(probs, num_samples=1).squeeze(1)\n"
    "RuntimeError: Native API failed. Native API returns: -999 (Unknown PI error) -999 (Unknown PI error)")
add("pi-unknown-error-sdnext-group-norm", "vladmandic/sdnext#3312", "job:sdnext-ipex-generate",
    "real: the same -999 in group_norm in another program; no shared cause or fix, one per report",
    "RuntimeError: Native API failed. Native API returns: -999 (Unknown PI error) -999 (Unknown PI error)")

# ---------------------------------------------------------------- flaky: tests that fail now and then, one per test
add("flaky-test-copy-non-blocking-rocm", "pytorch/pytorch#29119", "test_cuda.py::TestCuda::test_copy_non_blocking",
    "flaky: the report's title says the test is flaky on ROCm (an event queried before a non-blocking copy ends); "
    "one per test",
    "21:14:00 ======================================================================\n"
    "21:14:00 FAIL: test_copy_non_blocking (__main__.TestCuda)\n"
    "21:14:00 ----------------------------------------------------------------------\n"
    "21:14:00 Traceback (most recent call last):\n"
    "21:14:00   File \"/var/lib/jenkins/workspace/test/common_utils.py\", line 562, in wrapper\n"
    "21:14:00     method(*args, **kwargs)\n"
    "21:14:00   File \"test_cuda.py\", line 459, in test_copy_non_blocking\n"
    "21:14:00     _test_copy_non_blocking(x, y)\n"
    "21:14:00   File \"test_cuda.py\", line 448, in _test_copy_non_blocking\n"
    "21:14:00     self.assertFalse(event.query())\n"
    "21:14:00 AssertionError: True is not false")
add("flaky-mxnet-kernel-error-checking", "apache/mxnet#11592", "test_operator_gpu.py::test_kernel_error_checking",
    "flaky: the report's title says the GPU test is flaky; one per test",
    "  File \"/work/mxnet/tests/python/unittest/../../../python/mxnet/base.py\", line 210, in check_call\n"
    "\n"
    "    raise MXNetError(py_str(_LIB.MXGetLastError()))\n"
    "\n"
    "mxnet.base.MXNetError: [19:32:53] src/operator/tensor/././../mxnet_op.h:586: Check failed: err == cudaSuccess "
    "(9 vs. 0) Name: mxnet_generic_kernel_ex ErrStr:invalid configuration argument")
add("flaky-cuopt-deterministic-bb-seymour1", "NVIDIA/cuopt#1134",
    "DeterministicBB/DeterministicBBInstanceTest.deterministic_across_runs/seymour1_threads16",
    "flaky: the report's title says the GPU solver's determinism test is flaky in CI; one per test",
    "[  FAILED  ] DeterministicBB/DeterministicBBInstanceTest.deterministic_across_runs/seymour1_threads16, where "
    "GetParam() = (\"/mip/seymour1.mps\", 16, 120, 1)")
add("flaky-freenet-nat-subscription-docker-nat", "freenet/freenet-core#5175",
    "nat_subscription_cross_peer_test::test_nat_subscription_cross_peer_update_via_docker_nat",
    "flaky: the test failed and passed on nextest's retry in one CI run (the runner itself reports FLAKY); one per test",
    "TRY 1 FAIL [ 193.018s] freenet-ping-app::nat_subscription_cross_peer_test "
    "test_nat_subscription_cross_peer_update_via_docker_nat\n"
    "TRY 2 PASS [  49.494s]\n"
    "   FLAKY 2/3\n"
    "   Summary [ 242.514s] 2 tests run: 2 passed (1 flaky), 16 skipped")


__all__ = ["F", "add", "records", "render"]

if __name__ == "__main__":
    _SET.write(HERE / "fresh9.jsonl")
