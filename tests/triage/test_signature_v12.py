"""Signature version 12: from ``fresh9.jsonl``'s misses (tuning data since its one held-out
measurement, see docs/triage.md), each rule a kind of fault in the words every tool uses for it, also
checked on texts of no report.

The GPU gone from the machine (fallen off the bus, NVIDIA's Xid 79, NVML's ``GPU is lost``, nvidia-smi's
``Unable to determine the device handle``) is an infrastructure kind of its own, beside the ECC error's, which
now also reads the driver's ECC Xids; a scheduler evicting or preempting the job's pod or machine is one; a
cloud service throttling its callers (S3's ``SlowDown``, the AWS APIs' ``ThrottlingException``) is one; the
CI's cache service down and a cache key another job holds are two (two fixes); a compiler cache's server that
did not start (sccache) is one, its storage check not. The network reads a name lookup in Rust's words,
http.client's closed connection, docker's and a container registry's ping. ccache's temporary file is one
identity per OS error; an unrecognised last line yields to an HTTP status above it."""
from __future__ import annotations

import json
from pathlib import Path

from bot.config.infra import infra_kind, infra_match
from bot.triage.classify import INFRA, REAL, signature_class
from bot.triage.records import normalize_test_id
from bot.triage.signature import SIGNATURE_VERSION, signature_of

DATA = Path(__file__).resolve().parents[1] / "data" / "triage"
_FRESH9 = {r["id"]: r for r in (json.loads(x) for x in (DATA / "fresh9.jsonl").read_text().splitlines() if x.strip())}


def f9(rid: str):
    r = _FRESH9[rid]
    return signature_of(r["text"], normalize_test_id(r["test"]))


def test_the_version_names_these_rules():
    assert SIGNATURE_VERSION >= 12     # (version 13 added its own rules, test_signature_v13.py)


# ------------------------------------------------------------------ the GPU's hardware
def test_a_gpu_fallen_off_the_bus_is_one_kind_in_every_monitors_words():
    # nvidia-smi's device handle (twice), the kernel log's NVRM lines, a health daemon's "XID 79(…)", NVML's
    # ERROR_GPU_IS_LOST under a remapped-rows query
    ids = [f"infra-gpu-fallen-off-bus-{n}" for n in range(33, 38)]
    assert {f9(i).key for i in ids} == {"Infrastructure|gpu-lost"}
    assert {signature_class(f9(i)) for i in ids} == {INFRA}
    # the kernel log's own Xid line, with no words after the code
    assert infra_kind("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.") == "gpu-lost"
    assert infra_kind("[ 12.3] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>") == "gpu-lost"
    assert infra_kind("nvmlDeviceGetHandleByIndex failed: GPU is lost") == "gpu-lost"


def test_the_drivers_ecc_xids_are_the_ecc_errors_kind_and_an_applications_xid_is_not_infrastructure():
    assert {f9(f"infra-gpu-uncorrectable-ecc-{n}").key for n in range(29, 33)} == {"Infrastructure|gpu-hardware"}
    assert infra_kind("NVRM: Xid (PCI:0000:07:00): 48, pid=88, DBE (double bit error) ECC Error") == "gpu-hardware"
    assert infra_kind("XID 94(Contained ECC error) detected on PCI:0000:1a:00") == "gpu-hardware"
    # Xid 13 (a graphics engine exception: an out-of-range access) and 31 (a page fault) are a kernel's own
    assert infra_kind("NVRM: Xid (PCI:0000:3b:00): 13, pid=77, Graphics SM Warp Exception") is None
    assert infra_kind("NVRM: Xid (PCI:0000:3b:00): 31, pid=77, Ch 00000010, intr 10000000. MMU Fault") is None
    # an Xid code that only starts with a listed one
    assert infra_kind("NVRM: Xid (PCI:0000:3b:00): 480, pid=77") is None


# ------------------------------------------------------------------ the scheduler took the job's pod away
def test_a_pod_evicted_is_one_kind_in_the_kubelets_and_each_cis_words():
    # kubelet's event, a pod's status (twice, its last line "startTime: …"), a Jenkins agent "was deleted"
    # under the eviction, GitLab's "Event retrieved from the cluster"
    ids = [f"infra-k8s-pod-evicted-ephemeral-storage-{n}" for n in range(0, 5)]
    assert {f9(i).key for i in ids} == {"Infrastructure|evicted"}
    assert signature_class(f9(ids[0])) == INFRA
    # another resource, a node condition, preemption by a pod, Slurm's and a cloud's preemption
    for line in ("The node was low on resource: memory. Container build was using 7Gi, which exceeds its request of 0.",
                 "The node had condition: [DiskPressure].",
                 "Preempted by ci/high-priority-pod on node gpu-node-3",
                 "slurmstepd: error: *** JOB 123 ON node7 CANCELLED AT 2026-01-01T00:00:00 DUE TO PREEMPTION ***",
                 "Instance was preempted."):
        assert infra_kind(line) == "evicted", line
    # the runner retries on it too
    assert infra_match("pod status\n  reason: Evicted\n")[0] == "evicted"


# ------------------------------------------------------------------ services
def test_a_cloud_services_throttling_is_one_kind_whatever_client_prints_it():
    # botocore's ClientError, urllib's "HTTP Error 503: Slow Down" (the network's phrase before), the AWS SDK for
    # JavaScript's "SlowDown: UnknownError" above its stack
    ids = [f"infra-s3-slowdown-{n}" for n in range(16, 19)]
    assert {f9(i).key for i in ids} == {"Infrastructure|service-throttled"}
    assert infra_kind("botocore.exceptions.ClientError: An error occurred (ThrottlingException) when calling "
                      "the DescribeStacks operation: Rate exceeded") == "service-throttled"
    assert infra_kind('"reason": "rateLimitExceeded", "message": "The project exceeded the rate limit"') == \
        "service-throttled"


def test_the_ci_cache_service_down_and_a_key_held_by_another_job_are_two_kinds():
    assert {f9(f"infra-actions-cache-service-outage-{n}").key for n in (21, 22)} == {
        "Infrastructure|ci-cache-service"}
    held = [f9(f"infra-actions-cache-key-stuck-reserved-{n}") for n in (23, 24, 26)]
    assert {s.key for s in held} == {"Infrastructure|ci-cache-reserved"}
    assert {signature_class(s) for s in held} == {INFRA}
    # a request to the cache service timing out is the service's, whatever the label's cause
    assert f9("infra-actions-cache-key-stuck-reserved-25").key == "Infrastructure|ci-cache-service"


def test_a_compiler_caches_server_that_did_not_start_is_infrastructure_and_its_storage_check_is_not():
    # a time-out (under make's "Error 2" and under cargo's advice) and the port taken: no longer flaky by the
    # port's words, the server's start decides
    for rid in ("infra-sccache-autostart-race-prestart-server-5", "infra-sccache-autostart-race-prestart-server-6",
                "infra-sccache-startup-timeout-gitlab-ci-8"):
        s = f9(rid)
        assert s.key == "Infrastructure|compiler-cache" and signature_class(s) == INFRA, rid
    # the storage check's own error decides: a name lookup that failed is the network's
    assert f9("infra-sccache-gha-cache-backend-unreachable-9").key == "Infrastructure|network"
    # a bucket refusing the key is no phrase (often the configuration's): the text's own identity
    assert infra_kind("sccache: error: Server startup failed: cache storage failed to read: PermissionDenied") is None
    assert signature_class(f9("sccache-check-ignores-s3-key-prefix-11")) == REAL


def test_the_networks_new_words():
    assert f9("infra-llvm-release-download-connection-closed-46").key == "Infrastructure|network"
    assert f9("infra-docker-index-pull-network-timeout-27").key == "Infrastructure|network"
    assert f9("infra-quay-registry-ping-canceled-28").key == "Infrastructure|network"
    assert infra_kind('Error: initializing source docker://quay.io/x: pinging container registry quay.io: '
                      'Get "https://quay.io/v2/": dial tcp 1.2.3.4:443: i/o timeout') == "network"
    # a registry's ping refused for its certificate names no timeout: not this phrase
    assert infra_kind("pinging container registry r.example: Get \"https://r.example/v2/\": x509: certificate "
                      "signed by unknown authority") is None


# ------------------------------------------------------------------ real faults' identities
def test_ccaches_temporary_file_is_one_identity_per_os_error():
    ro = {f9(f"ccache-dir-read-only-in-bazel-sandbox-{n}").key for n in (12, 13)}
    assert ro == {"ccache|ccache: error: failed to create temporary file: Read-only file system"}
    denied = {f9(f"ccache-tmp-under-unwritable-run-user-fakeroot-{n}").key for n in (14, 15)}
    assert denied == {"ccache|ccache: error: failed to create temporary file: Permission denied"}
    # a sandbox's or build user's definition: real, as the older sets' container definitions are
    assert signature_class(f9("ccache-dir-read-only-in-bazel-sandbox-12")) == REAL


def test_an_unrecognised_last_line_yields_to_an_http_status_above_it():
    s = f9("infra-gcs-resumable-upload-503-retry-19")      # "… ResumableUploadException: 503 Server Error" / "Finished Step #4"
    assert s.key == "HTTPError|HTTP 5xx Server Error" and signature_class(s) == INFRA
    # with a URL above, the status is that service's
    u = signature_of("GET https://storage.googleapis.com/b/o\nHTTPError: 503 Server Error\nall done", "job:x")
    assert u.key == "HTTPError|HTTP 5xx Server Error from googleapis.com"
    # an unrecognised last line with no status keeps its job
    assert signature_of("something odd\nall done", "job:x").key.endswith("|job:x")


# ------------------------------------------------------------------ a long text's lookup
def test_a_long_texts_infrastructure_lookup_is_the_tables_answer():
    # one automaton pass over a log's tail answers as the table's lookup of each anchor in turn: the first phrase
    # in table order, its regex or check holding (a GPU lost before a mere "Xid", the network's phrase after
    # a cache service's)
    from bot.config.infra import infra_hit as table_hit
    from bot.triage.infra import LONG
    from bot.triage.infra import infra_hit as long_hit
    texts = [r["text"] for r in _FRESH9.values()]
    noise = "\n".join(f"[{i}/900] Building CXX object lib/F{i}.cpp.o" for i in range(120))
    assert len(noise) > LONG
    for k in range(0, len(texts), 7):
        t = noise + "\n" + "\n".join(texts[k:k + 7])
        assert long_hit(t) == table_hit(t), k
    assert long_hit(noise) is None and table_hit(noise) is None
    # an anchor inside another is found (overlapping matches): Xid 79 after the kernel's "Xid (PCI:"
    assert long_hit(noise + "\nNVRM: Xid (PCI:0000:3b:00): 79, pid=1") == table_hit(
        noise + "\nNVRM: Xid (PCI:0000:3b:00): 79, pid=1")
    assert long_hit(noise + "\nNVRM: Xid (PCI:0000:3b:00): 79, pid=1")[0] == "gpu-lost"
