"""Builds ``fresh7.jsonl``: an eighth, wholly held-out set of real failure texts from public reports,
none of them a source of ``wild.jsonl``, ``labelled.jsonl``, ``holdout.jsonl`` or ``fresh.jsonl`` …
``fresh6.jsonl`` (checked against their ``source`` fields and the issue links inside their texts),
labelled by root cause *before* any signature code was run on them.
Regenerate with ``python tests/data/triage/make_fresh7.py`` (deterministic).

It exists to measure grouping and classification honestly after the tuning round that uses
``fresh6.jsonl`` and the older sets: the labels were written and committed before the first
measurement, and the signature and normaliser code is never tuned on this file
(``bench/bench_triage.py --fresh7`` only reports figures). The whole file is held out.

Its reports are weighted, as ``fresh6.jsonl``'s, towards what a nightly meets besides a compiler
fault — the CI machinery and the services a build fetches from (Docker Hub's pull limit, a full disk
in the runner's and in docker's words, apt mirrors caught mid-sync, git's fetch cut off, GitHub's
job time limit and its release downloads answering 5xx, the Hugging Face Hub's 5xx, PyPI timing out,
conda's HTTP 000, DNS, a TLS-intercepting proxy, a process killed for memory) and flaky tests
(distributed tests' timeouts, a GPU's memory shared between test processes) — beside compiler and
library faults (triton's API removed under torch, ``triton.language`` attributes missing from an old
triton, ptxas older than the GPU, Intel XPU's bare ``PassManager::run failed``, a lockfile naming a
private mirror).

Labelling rule (the same as ``make_wild.py``'s and the other fresh sets'):

* **Same label = same fix.** Two texts carry the same label when one change would fix both, as
  the reports (their comments, a linked duplicate or the fix) show.
* A message that names the fault specifically is one root cause across reports when the reports
  agree on the cause and the fix is one change of the same kind: Docker Hub's anonymous pull limit
  (authenticate, mirror, retry), a full disk (free space), an apt mirror caught mid-sync (``Hash Sum
  mismatch``: retry), git's fetch cut off (``early EOF``: retry), PyPI's read timeout (retry), the
  Hub's 5xx (retry), a GitHub release download answering 5xx (retry), the runner's DNS (retry), a
  TLS-intercepting proxy (``UnknownIssuer``: the proxy's CA), torch importing triton's removed
  ``get_cuda_stream`` (a torch that matches the triton), ptxas older than sm_121a (a newer ptxas).
* A message that says nothing about where or why — a job over GitHub's time limit, exit code 137 or
  ``Killed``, a bare ``PassManager::run failed``, a test's timeout or out-of-memory — is
  one root cause per report, even when the words are identical, unless the reports agree on one fix.
  The same words with two causes get two labels (conda's ``HTTP 000`` for a refused connection, a
  reset connection and a proxy; ``operation timed out`` from a lockfile's private mirror, a real
  fault of the change, beside PyPI's read timeouts; a ``module 'triton.language' has no attribute``
  of three attributes in three projects' pins).
* **Class** is the label's prefix: ``infra-`` (the runner, the network, a service, the machine:
  retry or repair, never blame a commit), ``flaky-`` (the same code passes on a rerun: the report
  says so), anything else ``real``. A single failure text cannot show flakiness (that needs a pass
  of the same test on the same commit), so a flaky report's text alone is expected to be read as
  real or infrastructure; the class figure counts it anyway.
* Texts of one report in several shapes share the report's label.

Caveat: the person who collected and labelled this set had read ``fresh6.jsonl``'s misses (listed in
docs/triage.md: Docker Hub's ``toomanyrequests``, the lower-case full disk, conda's ``CondaHTTPError``,
GitHub's time limit, uv's HTTP 500) and searched for those classes among others, so several of its
causes are ``fresh6.jsonl``'s causes in other reports' words; the next signature version is tuned on
the older sets only, and no text here is read by that tuning (``make_fresh7.py`` is committed before
it, and its rows are not read while tuning).

Each record: ``id``, ``fault`` (the label), ``source`` (``owner/repo#N``, the report's URL is
``https://github.com/owner/repo/issues/N``, or ``…/pull/N`` for a pull request), ``test`` (the test
the report names; where it names none, ``job:<project>-<what ran>``), ``shape`` (``real``: the
report's own text, excerpted; ``derived-…``: that text put through a log shape a nightly meets, built
by ``heldout_set.py``), ``why`` (the labelling reason) and ``text``.

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

RATE = "https://www.docker.com/increase-rate-limit"

# ---------------------------------------------------------------- infra: Docker Hub's pull limit
HUB = ("infra: Docker Hub refused an anonymous pull over its rate limit; the fix is to authenticate, mirror or "
       "retry, never the change")
add("infra-docker-hub-pull-rate-limit", "kubernetes-sigs/headlamp#2417", "job:headlamp-docker-build",
    HUB + " (buildkit's manifest fetch, 429 in its words)",
    "#8 [internal] load metadata for docker.io/library/node:18@sha256:d0bbfdbad0bff8253e6159dcbee42141db4fc309365d5b8b"
    "cfce46ed71569078\n"
    "#8 ERROR: failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/"
    "library/node/manifests/sha256:d0bbfdbad0bff8253e6159dcbee42141db4fc309365d5b8bcfce46ed71569078: 429 Too Many "
    "Requests - Server message: toomanyrequests: You have reached your pull rate limit. You may increase the limit "
    "by authenticating and upgrading: " + RATE)
add("infra-docker-hub-pull-rate-limit", "Clinical-Genomics/scout#5222", "job:scout-tests",
    HUB + " (docker run; tests passed again a day later)",
    "docker: Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may increase "
    "the limit by authenticating and upgrading: " + RATE + ".")
add("infra-docker-hub-pull-rate-limit", "scylladb/scylladb#26576", "job:scylla-master-next",
    HUB + " (podman's retry warnings on Jenkins, an authenticated account's limit)",
    "Trying to pull docker.io/fsouza/fake-gcs-server:1.52.3...\n"
    "time=\"2025-10-15T16:09:35+03:00\" level=warning msg=\"Failed, retrying in 1s ... (1/3). Error: initializing "
    "source docker://fsouza/fake-gcs-server:1.52.3: reading manifest 1.52.3 in docker.io/fsouza/fake-gcs-server: "
    "toomanyrequests: You have reached your pull rate limit as 'scylladbjenkins': <token>. You may increase the "
    "limit by upgrading. " + RATE + "\"")
add("infra-docker-hub-pull-rate-limit", "php/frankenphp#1386", "job:frankenphp-docker-release",
    HUB + " (the maintainer: common when tagging a release, resolved by itself)",
    "> Too Many Requests - Server message: toomanyrequests: \n"
    "> You have reached your pull rate limit. You may increase the limit by authenticating and upgrading: " + RATE)
add("infra-docker-hub-pull-rate-limit", "aquasecurity/tracee#4248", "job:tracee-pr-action",
    HUB,
    "Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may increase the limit "
    "by authenticating and upgrading: " + RATE + "\n"
    "Unable to find image 'ubuntu:latest' locally\n"
    "docker: Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may increase "
    "the limit by authenticating and upgrading: " + RATE + ".\n"
    "See 'docker run --help'.")
add("infra-docker-hub-pull-rate-limit", "docker/hub-feedback#2429", "job:setup-buildx-action",
    HUB + " (setup-buildx-action booting its builder; closed as a duplicate)",
    "Run docker/setup-buildx-action@v3\n"
    "Booting builder\n"
    "Error: ERROR: Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may "
    "increase the limit by authenticating and upgrading: " + RATE)
add("infra-docker-hub-pull-rate-limit", "apache/incubator-kie-kogito-runtimes#2858", "job:kogito-jib-docker-build",
    HUB + " (jib's Maven plugin: the registry's JSON error and a 429)",
    "[2023-03-07T13:01:06.872Z] [ERROR]       \"code\": \"TOOMANYREQUESTS\",\n"
    "[2023-03-07T13:01:06.872Z] [ERROR]       \"message\": \"You have reached your pull rate limit. You may increase "
    "the limit by authenticating and upgrading: " + RATE + "\"\n"
    "[2023-03-07T13:01:06.872Z] org.apache.maven.lifecycle.LifecycleExecutionException: Failed to execute goal com.google.cloud.tools:"
    "jib-maven-plugin:3.3.1:dockerBuild (default) on project dmn-drools-springboot-metrics: 429 Too Many Requests")

# ---------------------------------------------------------------- infra: a full disk
DISK = "infra: the disk of the runner or of docker's VM was full; the fix is to free space, never the change"
add("infra-disk-full", "actions/runner#1807", "job:self-hosted-runner",
    DISK + " (the runner's own diagnostic log could not be written)",
    "Unhandled exception. System.IO.IOException: No space left on device : '/actions-runner/_diag/"
    "Runner_20220913-135355-utc.log'\n"
    "   at System.IO.RandomAccess.WriteAtOffset(SafeFileHandle handle, ReadOnlySpan`1 buffer, Int64 fileOffset)\n"
    "   at GitHub.Runner.Listener.Program.Main(String[] args)\n"
    "/actions-runner/run-helper.sh: line 20: 26550 Aborted                 \"$DIR\"/bin/Runner.Listener run $*\n"
    "Exiting with unknown error code: 134")
add("infra-disk-full", "rust-lang/rust#70738", "job:rust-ci-arm-android",
    DISK + " (a hosted runner on the arm-android build)",
    "Unhandled exception. System.IO.IOException: No space left on device\n"
    "   at System.IO.FileStream.WriteNative(ReadOnlySpan`1 source)\n"
    "   at System.IO.FileStream.FlushWriteBuffer()\n"
    "   at GitHub.Runner.Common.TraceManager.Dispose()\n"
    "   at GitHub.Runner.Worker.Program.Main(String[] args)")
add("infra-disk-full", "opentdf/platform#371", "job:opentdf-sdk-tests",
    DISK + " (a Go test writing its zip; the hosted runners' 14 GB)",
    "tdf3_writer_reader_test.go:217: Fail to add payload to tdf3 writer: io.Writer.Write failed: write 3.zip: no "
    "space left on device")
add("infra-disk-full", "MediaMarktSaturn/technolinator#420", "job:technolinator-build",
    DISK + " (the fix freed space on the runner before the build)",
    "System.IO.IOException: No space left on device")
add("infra-disk-full", "perber/leafwiki#1523", "job:leafwiki-docker-build",
    DISK + " (go build inside docker's builder)",
    "23.70 # github.com/prometheus/client_golang/prometheus/promhttp\n"
    "23.70 compile: writing output: write $WORK/b533/_pkg_.a: no space left on device\n"
    "24.77 # modernc.org/libc\n"
    "24.77 compile: writing output: write $WORK/b471/_pkg_.a: no space left on device")
add("infra-disk-full", "karalabe/xgo#188", "job:xgo-pull-image",
    DISK + " (docker extracting an image layer; the answer: make room)",
    "a7dd9b3b51ff: Extracting [==================================================>]  437.1MB/437.1MB\n"
    "failed to register layer: Error processing tar file(exit status 1): write /usr/local/go/pkg/linux_mipsle/"
    "internal/trace.a: no space left on device")

# ---------------------------------------------------------------- infra: apt mirrors caught mid-sync
APT = ("infra: an apt mirror or CDN served an index or package whose hash did not match (a mirror mid-sync or a "
       "cache); a retry, never the change")
add("infra-apt-hash-sum-mismatch", "DynamoRIO/dynamorio#5851", "job:dynamorio-cronbuild",
    APT + " (packages.microsoft.com in a nightly cronbuild)",
    "Get:8 https://packages.microsoft.com/ubuntu/20.04/prod focal/main amd64 Packages [171 kB]\n"
    "Err:8 https://packages.microsoft.com/ubuntu/20.04/prod focal/main amd64 Packages\n"
    "  Hash Sum mismatch\n"
    "  Hashes of expected file:\n"
    "   - Filesize:170735 [weak]")
add("infra-apt-hash-sum-mismatch", "JanitorTechnology/dockerfiles#150", "job:janitor-circleci-images",
    APT + " (apt.llvm.org's CDN; fixed by itself)",
    "E: Failed to fetch https://apt.llvm.org/xenial/dists/llvm-toolchain-xenial-6.0/main/binary-amd64/Packages.gz  "
    "Hash Sum mismatch\n"
    "E: Some index files failed to download. They have been ignored, or old ones used instead.")
add("infra-apt-hash-sum-mismatch", "PowerDNS/pdns#7600", "job:pdns-travis",
    APT + " (the report: apt's race condition on mirror updates)",
    "$ sudo apt-get -qq update\n"
    "E: Failed to fetch http://security.ubuntu.com/ubuntu/dists/trusty-security/main/binary-amd64/Packages.gz  "
    "Hash Sum mismatch\n"
    "E: Some index files failed to download. They have been ignored, or old ones used instead.\n"
    "The command \"sudo apt-get -qq update\" failed and exited with 100 during .")
add("infra-apt-hash-sum-mismatch", "docker-library/golang#471", "job:golang-image-apt-install",
    APT + " (a package, not an index, inside a docker build)",
    "#0 45.53 E: Failed to fetch http://deb.debian.org/debian/pool/main/d/dbus/libdbus-1-3_1.14.6-1_amd64.deb  "
    "Hash Sum mismatch\n"
    "#0 45.53    Hashes of expected file:\n"
    "#0 45.53     - SHA256:3a3617c8874085a476df2c7a0dbd45325b2b07ecf21140fb857cd6b58aa9b4d4")
add("infra-apt-hash-sum-mismatch", "svpino/ml.school#46", "job:ml-school-devcontainer",
    APT + " (a dev container's image build)",
    "E: Failed to fetch http://deb.debian.org/debian/pool/main/l/lvm2/dmsetup_1.02.175-2.1_arm64.deb Hash Sum "
    "mismatch\n"
    "E: Unable to fetch some archives, maybe run apt-get update or try with `--fix-missing?")

# ---------------------------------------------------------------- infra: git's fetch cut off
EOF_ = "infra: the connection to the git server broke during the fetch (early EOF); a retry, never the change"
add("infra-git-fetch-early-eof", "actions/checkout#1871", "job:checkout-unshallow",
    EOF_ + " (HTTP/2 stream cancelled; actions/checkout retries)",
    "  Error: error: RPC failed; curl 92 HTTP/2 stream 0 was not closed cleanly: CANCEL (err 8)\n"
    "  Error: error: 2000 bytes of body are still expected\n"
    "  fetch-pack: unexpected disconnect while reading sideband packet\n"
    "  Error: fatal: early EOF\n"
    "  Error: fatal: fetch-pack: invalid index-pack output\n"
    "  The process '/usr/bin/git' failed with exit code 128")
add("infra-git-fetch-early-eof", "actions/checkout#1379", "job:checkout-windows",
    EOF_ + " (a Windows runner)",
    "2023-06-09T19:40:18.4811181Z fetch-pack: unexpected disconnect while reading sideband packet\n"
    "2023-06-09T19:40:18.4849629Z ##[error]fatal: early EOF\n"
    "2023-06-09T19:40:18.4859845Z ##[error]fatal: fetch-pack: invalid index-pack output\n"
    "2023-06-09T19:40:18.4902345Z The process 'C:\\Program Files\\Git\\cmd\\git.exe' failed with exit code 128")
add("infra-git-fetch-early-eof", "RedpointGames/uet#326", "job:uet-git-checkout",
    EOF_ + " (a partial clone fetching a promised object; connection reset)",
    "error: RPC failed; curl 56 Recv failure: Connection reset by peer\n"
    "fatal: early EOF\n"
    "fatal: fetch-pack: invalid index-pack output\n"
    "fatal: could not fetch b31cdf1d4bcfd43f2fe77286daa5ca77348ff3d1 from promisor remote")
add("infra-git-fetch-early-eof", "ocurrent/opam-repo-ci#391", "job:opam-repo-ci-build",
    EOF_ + " (a CI worker; the report asks for retries)",
    "Building on m1-worker-03\n"
    "error: RPC failed; curl 92 HTTP/2 stream 7 was not closed cleanly: CANCEL (err 8)\n"
    "error: 10845 bytes of body are still expected\n"
    "fetch-pack: unexpected disconnect while reading sideband packet\n"
    "fatal: early EOF\n"
    "fatal: fetch-pack: invalid index-pack output\n"
    "git-fetch failed with exit-code 128")

# ---------------------------------------------------------------- infra: DNS
DNS = "infra: the machine could not resolve a host name; the fix is the resolver (or a retry), never the change"
add("infra-dns-resolution", "mozilla/translations#549", "job:translations-taskcluster-checkout",
    DNS + " (a Taskcluster worker cloning github.com)",
    "[vcs 2024-05-23T19:33:53.582Z] Cloning into '/home/ubuntu/tasks/task_171649283082993/checkouts/vcs'...\n"
    "[vcs 2024-05-23T19:34:13.971Z] fatal: unable to access 'https://github.com/mozilla/firefox-translations-"
    "training/': Could not resolve host: github.com")
add("infra-dns-resolution", "bower/bower#2606", "job:bower-git-clone",
    DNS + " (ssh and git's own protocol; the maintainer: the DNS resolver)",
    "Cloning into 'Storm-Breaker'...\n"
    "ssh: Could not resolve hostname github.com: Temporary failure in name resolution\n"
    "fatal: Could not read from remote repository")
add("infra-dns-resolution", "kubernetes/kubernetes#95104", "job:kubernetes-go-get",
    DNS + " (go get cloning through git)",
    "Cloning into '/go/src/github.com/xxx/xxx'...\n"
    "fatal: unable to access 'https://github.com/xxx/xxx/': Could not resolve host: github.com\n"
    "package github.com/xxx/xxx: exit status 128")

# ---------------------------------------------------------------- infra: conda's HTTP 000, three causes
CONDA = ("conda's HTTP 000 names no cause; the exception after it does, and each report's is its own: ")
add("infra-conda-connection-refused", "platformio/platformio-atom-ide#1155", "job:platformio-conda-virtualenv",
    "infra: " + CONDA + "the channel refused the connection ([Errno 61]); the maintainer: conda's side, try again",
    "CondaHTTPError: HTTP 000 CONNECTION FAILED for url <https://repo.continuum.io/pkgs/main/osx-64/"
    "repodata.json.bz2>\n"
    "Elapsed: -\n\n"
    "An HTTP error occurred when trying to retrieve this URL.\n"
    "HTTP errors are often intermittent, and a simple retry will get you on your way.\n"
    "ConnectionError(MaxRetryError(\"HTTPSConnectionPool(host='repo.continuum.io', port=443): Max retries exceeded "
    "with url: /pkgs/main/osx-64/repodata.json.bz2 (Caused by NewConnectionError('<requests.packages.urllib3."
    "connection.VerifiedHTTPSConnection object at 0x10aa60cf8>: Failed to establish a new connection: [Errno 61] "
    "Connection refused',))\",),)")
add("infra-conda-intermittent-connection", "cvxpy/cvxpy#1440", "job:cvxpy-ci-conda-install-windows",
    "infra: " + CONDA + "intermittent connection errors on the CI's runners, fixed by rerunning; the fix proposed: "
    "conda's network retries",
    "CondaHTTPError: HTTP 000 CONNECTION FAILED for url <https://repo.anaconda.com/pkgs/r/noarch/repodata.json>")
add("infra-conda-forge-through-proxy", "conda/conda#7550", "job:conda-install-conda-forge",
    "infra: " + CONDA + "the site's proxy, reached for one channel and not for the other (the report's title)",
    "CondaHTTPError: HTTP 000 CONNECTION FAILED for url <https://conda.anaconda.org/conda-forge/win-64/"
    "jupyter_nbextensions_configurator-0.4.0-py36_0.tar.bz2>\n"
    "Elapsed: -\n\n"
    "An HTTP error occurred when trying to retrieve this URL.\n"
    "HTTP errors are often intermittent, and a simple retry will get you on your way.")

# ---------------------------------------------------------------- infra: PyPI timing out
PYPI = "infra: files.pythonhosted.org stopped sending in the middle of a download; a retry, never the change"
add("infra-pypi-read-timeout", "pypa/pip#11717", "job:gitlab-docker-pip-install",
    PYPI + " (a GitLab pipeline's image build; large wheels)",
    "Collecting tensorflow\n"
    "  Downloading tensorflow-2.11.0-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl (588.3 MB)\n"
    "  File \"/usr/local/lib/python3.10/site-packages/pip/_vendor/urllib3/response.py\", line 442, in _error_catcher\n"
    "    raise ReadTimeoutError(self._pool, None, \"Read timed out.\")\n"
    "pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='files.pythonhosted.org', port=443): "
    "Read timed out.")
add("infra-pypi-read-timeout", "ansible/ansible-zuul-jobs#1181", "job:ansible-zuul-pip-install",
    PYPI + " (the fix: give pip install another chance)",
    "HTTPSConnectionPool(host='files.pythonhosted.org', port=443): Read timed out.")

# ---------------------------------------------------------------- infra: a service answering 5xx
GH5 = "infra: GitHub's release downloads answered 5xx (a GitHub outage); a retry, never the change"
add("infra-github-release-download-5xx", "astral-sh/uv#13949", "job:uv-python-install-windows",
    GH5 + " (uv's Python download; labelled ci-flake)",
    "error: Failed to install cpython-3.13.2-windows-x86_64-none\n"
    "  Caused by: Failed to download https://github.com/astral-sh/python-build-standalone/releases/download/"
    "20250317/cpython-3.13.2%2B20250317-x86_64-pc-windows-msvc-install_only_stripped.tar.gz\n"
    "  Caused by: HTTP status server error (500 Internal Server Error) for url (https://github.com/astral-sh/"
    "python-build-standalone/releases/download/20250317/cpython-3.13.2%2B20250317-x86_64-pc-windows-msvc-"
    "install_only_stripped.tar.gz)")
add("infra-github-release-download-5xx", "astral-sh/uv#9831", "job:pymatgen-setup-uv",
    GH5 + " (setup-uv's download of uv; a GitHub outage at that time)",
    "Downloading uv from \"https://github.com/astral-sh/uv/releases/download/0.5.7/uv-x86_64-unknown-linux-gnu."
    "tar.gz\" ...\n"
    "Unexpected HTTP response: 503\n"
    "Waiting 20 seconds before trying again\n"
    "Unexpected HTTP response: 503\n"
    "Waiting 10 seconds before trying again\n"
    "Error: Unexpected HTTP response: 503")
add("infra-pypi-backend-503", "pypi/warehouse#3710", "job:pip-install-testresources",
    "infra: PyPI's CDN answered 503 Backend is unhealthy; a retry",
    "  HTTP error 503 while getting https://files.pythonhosted.org/packages/45/4d/79a9a1f71de22fbc6c6433ac135f68d005"
    "de72fbe73e2137d2e77da9252c/testresources-2.0.1-py2.py3-none-any.whl\n"
    "    raise HTTPError(http_error_msg, response=self)\n"
    "HTTPError: 503 Server Error: Backend is unhealthy")
HF5 = "infra: the Hugging Face Hub answered 5xx; a retry (or an offline cache), never the change"
add("infra-huggingface-hub-5xx", "embeddings-benchmark/mteb#4027", "tests/test_evaluate.py::test_evaluate",
    HF5 + " (two tests of one PR's CI)",
    "FAILED tests/test_evaluate.py::test_evaluate[mock_retrieval] - huggingface_hub.errors.HfHubHTTPError: 502 Server "
    "Error: Bad Gateway for url: https://huggingface.co/api/models/mock/MockSentenceTransformer")
add("infra-huggingface-hub-5xx", "vllm-project/vllm-omni#1063", "job:vllm-omni-ci-model-download",
    HF5 + " (labelled ci-failure: network issues; the last line is the report's title, the excerpt was cut before "
    "it)",
    "[Stage-0] ERROR 01-28 20:45:51 [multiproc_executor.py:749]     hf_raise_for_status(r)\n"
    "[Stage-0] ERROR 01-28 20:45:51 [multiproc_executor.py:749]     raise _format(HfHubHTTPError, str(e)\n"
    "huggingface_hub.errors.HfHubHTTPError: 502 Server Error")
add("infra-huggingface-hub-5xx", "pytorch/pytorch#136423", "job:linux-focal-py3.9-clang10-onnx-test",
    HF5 + " (the test passed on a rerun)",
    "  File \"/opt/conda/envs/py_3.9/lib/python3.9/site-packages/requests/models.py\", line 1024, in "
    "raise_for_status\n"
    "    raise HTTPError(http_error_msg, response=self)\n"
    "requests.exceptions.HTTPError: 500 Server Error: Internal Server Error for url: https://huggingface.co/"
    "YituTech/conv-bert-base/resolve/main/config.json")
add("infra-huggingface-hub-5xx", "huggingface/datasets#5058",
    "tests/test_upstream_hub.py::TestPushToHub::test_push_dataset_to_hub_skip_identical_files",
    HF5 + " (the CI Hub; such tests now xfail on 5xx)",
    ">           raise HTTPError(http_error_msg, response=self)\n"
    "E           requests.exceptions.HTTPError: 502 Server Error: Bad Gateway for url: https://hub-ci.huggingface.co/"
    "datasets/__DUMMY_TRANSFORMERS_USER__/test-16648055339047.git/info/lfs/objects/batch")
add("infra-huggingface-hub-5xx", "bmaltais/kohya_ss#758", "job:kohya-ss-model-download",
    HF5 + " (a reply: caused by Hugging Face)",
    "requests.exceptions.HTTPError: 502 Server Error: Bad Gateway for url: https://huggingface.co/openai/"
    "clip-vit-large-patch14/resolve/main/model.safetensors")
add("infra-huggingface-hub-5xx", "huggingface/huggingface_hub#1516", "job:hf-create-repo",
    HF5 + " (a gateway timeout across hundreds of runs at once)",
    "HfHubHTTPError: 504 Server Error: Gateway Time-out for URL  https://huggingface.co/api/models/Antreas/"
    "timm-ade20k-debug-137/commit/main")

# ---------------------------------------------------------------- infra: a TLS-intercepting proxy
TLS = ("infra: a proxy re-signed TLS with a CA the client does not trust (UnknownIssuer); the fix is the proxy's CA "
       "or native TLS, never the change")
add("infra-tls-unknown-issuer-proxy", "astral-sh/uv#6072", "job:uv-python-install-macos",
    TLS + " (the reporter: a proxy issue)",
    "DEBUG Transient request failure for https://github.com/indygreg/python-build-standalone/releases/download/"
    "20240726/cpython-3.12.4%2B20240726-aarch64-apple-darwin-install_only_stripped.tar.gz, retrying: error sending "
    "request for url (https://github.com/indygreg/python-build-standalone/releases/download/20240726/cpython-3.12.4"
    "%2B20240726-aarch64-apple-darwin-install_only_stripped.tar.gz)\n"
    "  Caused by: client error (Connect)\n"
    "  Caused by: invalid peer certificate: UnknownIssuer\n"
    "error: Failed to install cpython-3.12.4-macos-aarch64-none: Request failed after 3 retries")
add("infra-tls-unknown-issuer-proxy", "HuaYaoAI/FinGenius#19", "job:fingenius-uv-venv",
    TLS + " (Windows; the same download)",
    "  x Failed to download\n"
    "  | https://github.com/astral-sh/python-build-standalone/releases/download/20250409/cpython-3.12.10%2B20250409-"
    "x86_64-pc-windows-msvc-install_only_stripped.tar.gz\n"
    "  |-> Request failed after 3 retries\n"
    "  |-> client error (Connect)\n"
    "  `-> invalid peer certificate: UnknownIssuer")

# ---------------------------------------------------------------- real: a lockfile's private mirror
add("uv-lock-pins-private-mirror", "mvilanova/intervals-mcp-server#23", "job:intervals-mcp-uv-sync",
    "real: the committed lockfile named an internal mirror (pypi.netflix.net) unreachable from outside; the fix is "
    "the change's lockfile, though the words are a timeout",
    "  × Failed to download `certifi==2025.4.26`\n"
    "  ├─▶ Failed to fetch: `https://pypi.netflix.net/packages/18638484694/certifi-2025.4.26-py3-none-any.whl`\n"
    "  ├─▶ Request failed after 3 retries\n"
    "  ├─▶ error sending request for url (https://pypi.netflix.net/packages/18638484694/certifi-2025.4.26-py3-none-"
    "any.whl)\n"
    "  ╰─▶ operation timed out")

# ---------------------------------------------------------------- infra: GitHub's job time limit, per report
add("infra-actions-time-limit-notion-backup-hang", "darobin/notion-backup#21", "job:notion-backup",
    "infra: a hosted job ran into the 6 h limit (no cause found in the thread); a time limit names no cause, "
    "one per report",
    "The job running on runner Hosted Agent has exceeded the maximum execution time of 360 minutes.")
add("infra-actions-time-limit-curl-multi", "curl/curl-container#37", "job:curl-container-multi",
    "infra: the multi job ran into the 6 h limit (the maintainer: to be investigated); one per report",
    "The job running on runner GitHub Actions 2 has exceeded the maximum execution time of 360 minutes.")
add("infra-actions-time-limit-self-hosted-buildx", "actions/runner#685", "job:buildx-selfhosted",
    "infra: a self-hosted runner still applied the 360 min limit to a long buildx job; one per report",
    "The job running on runner ghrunner-yza3xr has exceeded the maximum execution time of 360.")
add("infra-actions-time-limit-vm-packages-daily", "mandiant/VM-Packages#1448", "job:vm-packages-daily-windows",
    "infra: a daily job of ~6 h crossed the platform's 6 h limit (the fix: fewer retries, split the job); one per "
    "report",
    "The job has exceeded the maximum execution time of 6h0m0s")

# ---------------------------------------------------------------- exit code 137 / Killed, per report
add("infra-circleci-machine-oom", "cypress-io/cypress#23623", "job:cypress-unit-tests-build",
    "infra: the CircleCI machine ran out of memory during a parallel build (the fix: a bigger machine)",
    "@packages/net-stubbing: Killed\n"
    "@packages/net-stubbing: error Command failed with exit code 137.\n"
    "lerna ERR! yarn run build-prod exited 137 in '@packages/net-stubbing'\n"
    "error Command failed with exit code 137.\n\n"
    "Exited with code exit status 137")
add("gene-hints-pipeline-memory", "broadinstitute/gene-hints#25", "job:gene-hints-daily-update",
    "real: the pipeline's own memory use outgrew the runner; fixed by a change to the pipeline",
    "100%|██████████| 180/180 [05:35<00:00,  1.87s/it]/home/runner/work/_temp/3996971a-eb39-4aaf-91b7-d4ed401873fb.sh: "
    "line 1:  1619 Killed                  python gene_hints/gene_hints.py\n"
    "Output to: ./pubmed_citations/data/tmp/prev_timeframe/2021_01_20.tsv\n"
    "Error: Process completed with exit code 137.")
add("infra-libcfgraph-backlog-oom", "regro/libcfgraph#17", "job:libcfgraph-import-to-pkg",
    "infra: a backlog after the service's downtime made one import too large (the smaller commit jobs pass)",
    "submitting jobs:  86% 64822/75000 [09:59<01:03, 160.71it/s]/bin/bash: line 1:  2440 Killed                  "
    "python -m libcflib.import_to_pkg 75000\n\n"
    "Exited with code exit status 137\n"
    "CircleCI received exit code 137")

# ---------------------------------------------------------------- flaky: tests that pass on a rerun
add("flaky-c10d-test-nccl-timeouts", "pytorch/pytorch#32505", "test_c10d.py::test_nccl_timeouts",
    "flaky: labelled flaky-tests; NCCL's unhandled system error in a timeout test, fixed in the test",
    "Jan 22 20:25:11 RuntimeError: NCCL error: unhandled system error, NCCL version 2.4.8\n"
    "Jan 22 20:25:11 \n"
    "Jan 22 20:25:11 During handling of the above exception, another exception occurred:\n"
    "Jan 22 20:25:11 \n"
    "Jan 22 20:25:11 Traceback (most recent call last):\n"
    "Jan 22 20:25:11   File \"test_c10d.py\", line 3278, in test_nccl_timeout\n"
    "Jan 22 20:25:11     c10d.distributed_c10d.all_reduce(torch.rand(10).cuda(self.rank))\n"
    "Jan 22 20:25:11   File \"/opt/conda/lib/python3.6/unittest/case.py\", line 135, in _raiseFailure\n"
    "Jan 22 20:25:11     raise self.test_case.failureException(msg)")
add("flaky-nccl-error-handling-test-nccl-timeout", "pytorch/pytorch#66882",
    "distributed/test_c10d_nccl.py::NcclErrorHandlingTest::test_nccl_timeout",
    "flaky: a distributed test's subprocess exited with error code 10 on one run (a later PR fixed the test)",
    "ERROR [17.751s]: test_nccl_timeout (__main__.NcclErrorHandlingTest)\n"
    "Traceback (most recent call last):\n"
    "  File \"/opt/conda/lib/python3.6/site-packages/torch/testing/_internal/common_distributed.py\", line 688, in "
    "_check_return_codes\n"
    "    raise RuntimeError(error)\n"
    "RuntimeError: Process 0 exited with error code 10 and exception:")
add("flaky-nccl-errors-blocking-clean-exit", "pytorch/pytorch#31924",
    "test_c10d.py::NcclErrorHandlingTest::test_nccl_errors_blocking_clean_exit",
    "flaky: labelled flaky-tests; the processes' exit codes differed on one run",
    "Jan 07 20:36:55 FAIL [3.205s]: test_nccl_errors_blocking_clean_exit (__main__.NcclErrorHandlingTest)\n"
    "Jan 07 20:36:55 Traceback (most recent call last):\n"
    "Jan 07 20:36:55   File \"/var/lib/jenkins/workspace/test/common_utils.py\", line 888, in assertEqual\n"
    "Jan 07 20:36:55     super(TestCase, self).assertLessEqual(abs(x - y), prec, message)\n"
    "Jan 07 20:36:55 AssertionError: 11 not less than or equal to 1e-05 : ")
add("flaky-broadcast-coalesced-nccl-rocm", "pytorch/pytorch#32643", "test_c10d.py::CommTest::test_broadcast_coalesced_nccl",
    "flaky: labelled flaky-tests; a ROCm job's process timed out",
    "08:02:54 ERROR: test_broadcast_coalesced_nccl (__main__.CommTest)\n"
    "08:02:54 Traceback (most recent call last):\n"
    "08:02:54   File \"/var/lib/jenkins/.local/lib/python3.6/site-packages/torch/testing/_internal/common_distributed.py\","
    " line 274, in _check_return_codes\n"
    "08:02:54     raise RuntimeError('Process {} terminated or timed out after {} seconds'.format(i, elapsed_time))\n"
    "08:02:54 RuntimeError: Process 1 terminated or timed out after 156.02865886688232 seconds")
add("flaky-ddp-syncbatchnorm-diff-input-sizes", "pytorch/pytorch#29695",
    "test_distributed.py::TestDistBackend::test_DistributedDataParallel_SyncBatchNorm_Diff_Input_Sizes_Running_Value",
    "flaky: labelled flaky-tests; a rank did not terminate in time on one run",
    "23:43:08 FAIL: test_DistributedDataParallel_SyncBatchNorm_Diff_Input_Sizes_Running_Value (__main__.TestDistBackend)\n"
    "23:43:08 Traceback (most recent call last):\n"
    "23:43:08   File \"test_distributed.py\", line 2079, in _join_and_reduce\n"
    "23:43:08     \"Timeout waiting for rank %d to terminate\" % rank)\n"
    "23:43:08 AssertionError: True is not false : Timeout waiting for rank 1 to terminate")
add("flaky-windows-cuda-oom-parallel-processes", "pytorch/pytorch#18766", "job:pytorch-win-ws2016-cuda9-test1",
    "flaky: labelled flaky-tests; CUDA initialised in several processes of the Windows tests, not reproducible",
    "RuntimeError: CUDA error: out of memory")
add("flaky-rmm-tests-share-gpu", "rapidsai/rmm#1671", "job:rmm-conda-cpp-tests",
    "flaky: the C++ tests ran at once on one GPU and ran out of its memory now and then (the fix: CTest's GPU "
    "resource limits)",
    "C++ exception with description \"CUDA error at: /opt/conda/conda-bld/work/include/rmm/cuda_stream.hpp:71: "
    "cudaErrorMemoryAllocation out of memory\" thrown in the test fixture's constructor.")

# ---------------------------------------------------------------- real: triton's API and torch's import of it
GCS = ("real: torch's inductor imported get_cuda_stream from triton.runtime.jit, which triton removed "
       "(triton#2756); the fix is a torch that matches the triton installed")
add("torch-imports-removed-triton-get-cuda-stream", "sgl-project/sglang#383", "job:sglang-commandr-v100",
    GCS + " (triton-nightly under torch 2.1; the last line is the report's title)",
    "  File \"/mnt/tmp/sglang/lib/python3.10/site-packages/torch/__init__.py\", line 1571, in get_compiler_config\n"
    "    from torch._inductor.compile_fx import get_patched_config_dict\n"
    "ImportError: cannot import name 'get_cuda_stream' from 'triton.runtime.jit'")
add("torch-imports-removed-triton-get-cuda-stream", "pytorch/pytorch#91827", "job:inductor-optimizer-compile",
    GCS + " (the report's title, in its words)",
    "[inductor] `triton.runtime.jit` does not provide `get_cuda_stream`")
add("triton-2.3-lacks-tl-clamp", "triton-lang/triton#3967", "python/test/unit/language/test_core.py::test_clamp",
    "real: test_core's test_clamp run against the released triton 2.3, which predates tl.clamp; fixed by the nightly",
    "Exception has occurred: AttributeError\n"
    "module 'triton.language' has no attribute 'clamp'")

# ---------------------------------------------------------------- real: libraries and kernels, one per report
add("triton-wheel-links-ncurses-setupterm", "triton-lang/triton#42", "job:triton-import",
    "real: an early triton wheel's libtriton.so left setupterm (ncurses, through LLVM) unresolved; one report",
    "    import triton._C.libtriton as libtriton\n"
    "ImportError: /home/user/.local/lib/python3.7/site-packages/triton/_C/libtriton.so: undefined symbol: setupterm")
add("triton-0.2-wheel-lacks-zlib-compress2", "triton-lang/triton#79", "job:triton-0.2.3-import",
    "real: triton 0.2.3's libtriton.so left zlib's compress2 unresolved; the fix: a newer triton",
    "ImportError: triton/_C/libtriton.so: undefined symbol: compress2")
add("deepspeed-libtriton-other-torch-abi", "deepspeedai/DeepSpeed#471", "job:deepspeed-sparse-attn-install",
    "real: the installed libtriton was built against another torch (c10::Error's constructor of another ABI); "
    "the fix is matching versions",
    "  File \"/home/user/anaconda3/envs/nlp/lib/python3.8/site-packages/triton/kernel.py\", line 1, in <module>\n"
    "    import triton._C.libtriton as libtriton\n"
    "ImportError: /home/user/anaconda3/envs/nlp/lib/python3.8/site-packages/triton/_C/libtriton.so: undefined "
    "symbol: _ZN3c105ErrorC1ENS_14SourceLocationESs")
add("triton-tma-needs-cuda-12-driver-api", "triton-lang/triton#2062", "job:triton-a100-cuda-11.8",
    "real: the newer triton's launcher calls cuTensorMapEncodeTiled, absent before CUDA 12 (the answer: install "
    "CUDA 12)",
    "ImportError: /home/user/.triton/cache/c6a7b91a416b1ca1efa1318c10a89f87/cuda_utils.so: undefined symbol: "
    "cuTensorMapEncodeTiled")
add("torch-2.8-nightly-with-triton-3.4-missing", "triton-lang/triton#7594", "job:sglang-launch-server-qwen3",
    "real: a torch nightly and a triton 3.4 build that do not match, so inductor finds no working triton",
    "torch._inductor.exc.TritonMissing: Cannot find a working triton installation. Either the package is not "
    "installed or it is too old. More information on installing Triton can be found at: "
    "https://github.com/triton-lang/triton\n\n"
    "[2025-07-22 04:22:32] Received sigquit from a child process. It usually means the child failed.\n"
    "[1]    123484 killed     python3 -m sglang.launch_server --model Qwen/Qwen3-30B-A3B --tp-size 2 --port")
add("ima-swin-base-inductor-training", "pytorch/torchdynamo#1365", "job:timm-swin-base-patch4-window7-224-train",
    "real: one inductor kernel of swin_base's training reads out of bounds (an illegal address names no cause: one "
    "per report)",
    "  File \"/home/user/torchdynamo/torchinductor/triton_ops/autotune.py\", line 157, in run\n"
    "    return launcher(\n"
    "  File \"<string>\", line 4, in launcher\n"
    "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered")
add("ima-inductor-triton-conv-background-matting", "pytorch/pytorch#93647", "job:torchbench-background-matting",
    "real: inductor's triton convolution template addressed out of bounds in one model; one per report",
    "RuntimeError: CUDA error: an illegal memory access was encountered for kernel45")
add("mamba2-headdim-512-exceeds-shared-memory", "state-spaces/mamba#387", "job:mamba-mqar-experiment",
    "real: a head dimension of 512 needs more shared memory than any GPU has (the thread's finding); the fix is the "
    "configuration, not the GPU",
    "triton.runtime.autotuner.OutOfResources: out of resource: shared memory, Required: 663808, Hardware limit: "
    "101376. Reducing block sizes or `num_stages` may help.")

# ---------------------------------------------------------------- real: generic compiler and runtime faults, per report
add("xpu-passmanager-flexdecoding-ut", "intel/intel-xpu-backend-for-triton#4786",
    "test/inductor/test_flex_decoding.py::TestFlexDecoding::test_builtin_score_mods",
    "real: FlexDecoding's kernel failed a pass on the XPU backend; a bare pass failure names nothing, one per report "
    "(the last line is the report's title's words, the excerpt was cut before the message)",
    "  File \"/workspace1/user/hoshibara-pytorch/torch/_inductor/compile_fx.py\", line 979, in _compile_fx_inner\n"
    "    raise InductorError(e, currentframe()).with_traceback(\n"
    "PassManager::run failed")
add("xpu-passmanager-triton-skipped-case", "intel/torch-xpu-ops#3003", "job:torch-xpu-ops-inductor-ut",
    "real: a triton issue on XPU, the case skipped (the report's title); one per report",
    "RuntimeError: PassManager::run failed")


__all__ = ["F", "add", "records", "render"]

if __name__ == "__main__":
    _SET.write(HERE / "fresh7.jsonl")
