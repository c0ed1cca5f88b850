"""Signature version 9: from ``fresh6.jsonl``'s misses (tuning data since its one held-out
measurement, see docs/triage.md), each rule a class of text, also checked on texts of no report.

Docker Hub's pull limit (``toomanyrequests``) is its own infrastructure kind, and so is a TLS
certificate the client does not trust (a TLS-intercepting proxy: its CA, not a retry); a full disk is read in
the lower-case words of buildkit, docker and Go (``no space left on device``); a job over GitHub's
time limit is infrastructure (``time-limit``), and ``The operation was canceled`` alone names no
cause (GitHub prints it after any cancelled step, a test's watchdog included); conda's ``HTTP 000
CONNECTION FAILED`` says only that no answer came, so the cause printed after it decides (DNS,
``getaddrinfo failed``, a proxy), and without one it is still infrastructure; uv's (reqwest's)
``HTTP status server error (500 …) for url (…)`` is an HTTP status by code and host; Intel's Unified
Runtime code in ``Native API failed. Native API returns: 20 (UR_…)`` is kept, and names no kernel;
the dynamic loader's ``version 'GLIBCXX_…' not found`` is one identity by library, version and the
program that needs it, whether Python's ImportError wraps it or a tool prints it bare."""
from __future__ import annotations

import json
from pathlib import Path

from bot.config.infra import infra_kind, infra_match
from bot.triage.classify import INFRA, REAL, signature_class
from bot.triage.records import normalize_test_id
from bot.triage.signature import SIGNATURE_VERSION, signature_of

DATA = Path(__file__).resolve().parents[1] / "data" / "triage"
_FRESH6 = {r["id"]: r for r in (json.loads(x) for x in (DATA / "fresh6.jsonl").read_text().splitlines() if x.strip())}


def f6(rid: str):
    r = _FRESH6[rid]
    return signature_of(r["text"], normalize_test_id(r["test"]))


def test_the_version_names_these_rules():
    assert SIGNATURE_VERSION >= 9      # (version 10 added its own rules, test_signature_v10.py)


# ------------------------------------------------------------------ Docker Hub's pull limit
def test_docker_hubs_pull_limit_is_one_infrastructure_kind_in_every_client_s_words():
    # podman's retry warning, docker's daemon answer, the runner's "exit code 1" after it, buildkit's 429
    ids = ["infra-docker-hub-pull-rate-limit-19", "infra-docker-hub-pull-rate-limit-20",
           "infra-docker-hub-pull-rate-limit-21", "infra-docker-hub-pull-rate-limit-22"]
    assert {f6(i).key for i in ids} == {"Infrastructure|registry-rate-limit"}
    assert signature_class(f6(ids[0])) == INFRA
    # the registry's JSON error code, upper case, in a text of no report
    assert infra_kind('{"errors":[{"code":"TOOMANYREQUESTS","message":"You have reached your pull rate limit."}]}') \
        == "registry-rate-limit"


def test_the_runner_retries_on_the_pull_limit_too():
    kind, line = infra_match("Unable to find image 'ubuntu:22.04' locally\n"
                             "docker: Error response from daemon: toomanyrequests: You have reached your pull rate "
                             "limit.\nSee 'docker run --help'.")
    assert kind == "registry-rate-limit" and line.startswith("docker: Error response")


# ------------------------------------------------------------------ an untrusted certificate
def test_an_untrusted_certificate_is_its_own_kind_not_the_network():
    assert f6("infra-tls-intercepted-self-signed-13").key == "Infrastructure|tls"
    assert infra_kind("curl: (60) SSL certificate problem: self signed certificate in certificate chain") == "tls"
    # the network's own faults stay the network's
    assert infra_kind("[Errno -3] Temporary failure in name resolution") == "network"


# ------------------------------------------------------------------ a full disk in lower case
def test_a_full_disk_in_lower_case_is_the_full_disk():
    ids = ["infra-disk-full-23", "infra-disk-full-24", "infra-disk-full-25", "infra-disk-full-26"]
    assert {f6(i).key for i in ids} == {"Infrastructure|disk-full"}
    assert infra_kind("go: writing go.sum: write /tmp/go.sum: no space left on device") == "disk-full"


# ------------------------------------------------------------------ GitHub's time limit, a cancelled step
def test_a_job_over_githubs_time_limit_is_infrastructure():
    s = f6("infra-actions-job-max-time-external-hang-48")
    # (since version 10 a time limit names no cause alone: one per job, test_signature_v10.py)
    assert s.key == "Infrastructure|time-limit|job:metrics-action"
    assert infra_kind("The job running on runner ci-7 has exceeded the maximum execution time of 120 minutes.") == \
        "time-limit"


def test_a_cancelled_step_alone_names_no_cause():
    # a test's watchdog ended the step: "The operation was canceled." is not a runner lost
    s = f6("flaky-trio-dtls-watchdog-timeout-58")
    assert s.type != "Infrastructure"
    assert infra_kind("##[error]The operation was canceled.") is None
    # the runner's own words beside it still name the runner
    assert infra_kind("##[error]The runner has received a shutdown signal. This can happen when the runner service "
                      "is stopped.\n##[error]The operation was canceled.") == "runner-lost"


# ------------------------------------------------------------------ conda's HTTP 000
def test_condas_http_000_yields_to_the_cause_printed_after_it():
    # DNS in urllib3's words and in Windows' getaddrinfo's, and in a newer conda's retry warning
    for i in ("infra-dns-resolution-4", "infra-dns-resolution-5", "infra-dns-resolution-6"):
        assert f6(i).key == "Infrastructure|network", i
    # a proxy refusing the tunnel is the proxy's kind
    assert f6("infra-proxy-tunnel-503-10").key == "Infrastructure|proxy"


def test_condas_http_000_without_a_cause_is_still_infrastructure():
    s = signature_of("CondaHTTPError: HTTP 000 CONNECTION FAILED for url <https://conda.anaconda.org/conda-forge/"
                     "linux-64/repodata.json>\nElapsed: -\n\nAn HTTP error occurred when trying to retrieve this URL.",
                     "job:conda-env-create")
    assert s.type == "CondaHTTPError"
    assert signature_class(s) == INFRA
    # an HTTP status conda got is the service's answer, read as before
    s404 = signature_of("CondaHTTPError: HTTP 404 NOT FOUND for url <https://conda.anaconda.org/my-channel/noarch/"
                        "repodata.json>", "job:conda-env-create")
    assert signature_class(s404) == REAL


# ------------------------------------------------------------------ uv's HTTP status
def test_uvs_http_status_is_an_http_status_by_code_and_host():
    s = f6("infra-download-pytorch-500-16")
    # (since version 10 a 5xx is one identity per service's domain, test_signature_v10.py)
    assert s.key == "HTTPError|HTTP 5xx Server Error from pytorch.org"
    assert signature_class(s) == INFRA
    c = signature_of("  Caused by: HTTP status client error (404 Not Found) for url "
                     "(https://pypi.org/simple/no-such-package/)", "job:uv-sync")
    assert c.key == "HTTPError|HTTP 404 Not Found from pypi.org"
    assert signature_class(c) == REAL


# ------------------------------------------------------------------ Unified Runtime's codes
def test_a_unified_runtime_code_is_kept_and_names_no_kernel():
    lost = f6("ur-device-lost-gemm-postop-benchmark-39")
    oom = f6("ur-out-of-device-memory-inductor-collectives-38")
    assert lost.ident == "Native API failed: UR_RESULT_ERROR_DEVICE_LOST"
    assert oom.ident == "Native API failed: UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"
    assert lost.generic and oom.generic
    a = signature_of("RuntimeError: Native API failed. Native API returns: 20 (UR_RESULT_ERROR_DEVICE_LOST)", "t1")
    b = signature_of("RuntimeError: Native API failed. Native API returns: 20 (UR_RESULT_ERROR_DEVICE_LOST)", "t2")
    assert a.key != b.key and a.ident == b.ident
    # the older SYCL plugin interface's names too
    assert signature_of("RuntimeError: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) -5 "
                        "(PI_ERROR_OUT_OF_RESOURCES)", "t").ident == "Native API failed: PI_ERROR_OUT_OF_RESOURCES"


# ------------------------------------------------------------------ the loader's version error
def test_the_loaders_version_error_is_one_identity_bare_or_in_an_import_error():
    full = f6("llvm-prebuilt-needs-glibcxx-3.4.30-54")     # "(required by …/mlir-tblgen)"
    cut = f6("llvm-prebuilt-needs-glibcxx-3.4.30-55")      # "mlir-tblgen: …: version … not found"
    assert full.key == cut.key == \
        "ImportError|libstdc++.so.6: version 'GLIBCXX_3.4.30' not found (required by mlir-tblgen)"
    assert not full.generic
    # the same library and version needed by another program is another fault
    lt = f6("flagtree-ascend-wheel-glibcxx-requirement-57")
    assert lt.key == "ImportError|libstdc++.so.6: version 'GLIBCXX_3.4.30' not found (required by libtriton.so)"
    # a Python extension's ABI tag is not part of the program's name
    e = signature_of("ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.32' not found "
                     "(required by /opt/venv/lib/python3.12/site-packages/triton/_C/libtriton.cpython-312-x86_64-"
                     "linux-gnu.so)", "t")
    assert e.key == "ImportError|libstdc++.so.6: version 'GLIBCXX_3.4.32' not found (required by libtriton.so)"
