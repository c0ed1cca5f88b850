"""Signature version 11: from ``fresh8.jsonl``'s misses (tuning data since its one held-out
measurement, see docs/triage.md), each rule a class of text, also checked on texts of no report.

pip's hash check failing on a download (``THESE PACKAGES DO NOT MATCH THE HASHES``) is an infrastructure
kind of its own (a cut or stale cached download: download again without the cache); the GitHub API's rate
limit is two (a token's quota spent: wait; a call without a token, limited by the runner's address: pass a
token). NVML's mismatch in nvidia-container-cli's lower case is the driver's mismatch; Go's HTTP client
timeout (``Client.Timeout exceeded``) is the network's. A registry's status in Go's words (``received
unexpected HTTP status: 503 Service Unavailable``) is an HTTP status of the registry's domain, the host from
the request it quotes or the image the text pulled, not the network's phrase; and a weak line (an exit code)
yields to an HTTP status the text printed above it."""
from __future__ import annotations

import json
from pathlib import Path

from bot.config.infra import infra_kind, infra_match
from bot.triage.classify import INFRA, REAL, signature_class
from bot.triage.records import normalize_test_id
from bot.triage.signature import SIGNATURE_VERSION, signature_of

DATA = Path(__file__).resolve().parents[1] / "data" / "triage"
_FRESH8 = {r["id"]: r for r in (json.loads(x) for x in (DATA / "fresh8.jsonl").read_text().splitlines() if x.strip())}


def f8(rid: str):
    r = _FRESH8[rid]
    return signature_of(r["text"], normalize_test_id(r["test"]))


def test_the_version_names_these_rules():
    assert SIGNATURE_VERSION >= 11     # (version 12 added its own rules, test_signature_v12.py)


# ------------------------------------------------------------------ pip's hash check after a cut download
def test_pips_hash_check_on_a_download_is_one_infrastructure_kind():
    # the line pip ends with is "Got <sha256>" (an unrecognised last line, weak): the phrase above it decides
    ids = [f"infra-pip-wheel-hash-mismatch-cut-download-{n}" for n in range(12, 16)]
    assert {f8(i).key for i in ids} == {"Infrastructure|download-corrupt"}
    assert signature_class(f8(ids[0])) == INFRA
    # the runner retries on it too (a second download, without the partial file)
    kind, line = infra_match("Collecting x\nERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.\n")
    assert kind == "download-corrupt" and line.startswith("ERROR: THESE PACKAGES")
    # apt's checksum stays the mirror's
    assert infra_kind("Hash Sum mismatch") == "package-mirror"


# ------------------------------------------------------------------ the GitHub API's rate limit
def test_a_tokens_api_quota_spent_is_one_kind_whatever_wraps_it():
    # actions/github-script's RequestError ending "status: 403", CodeQL's init, a bare line, a deployment's
    ids = [f"infra-github-api-rate-limit-installation-{n}" for n in range(25, 31)]
    assert {f8(i).key for i in ids} == {"Infrastructure|api-rate-limit"}
    assert signature_class(f8(ids[0])) == INFRA
    # a user token's and the secondary limit, in texts of no report
    assert infra_kind("HttpError: API rate limit exceeded for user ID 1234567.") == "api-rate-limit"
    assert infra_kind("You have exceeded a secondary rate limit. Please wait a few minutes") == "api-rate-limit"


def test_a_call_without_a_token_is_another_kind_the_runners_address():
    s = f8("infra-github-api-anonymous-rate-limit-no-token-31")
    assert s.key == "Infrastructure|api-rate-limit-anonymous" and signature_class(s) == INFRA
    # whatever the address (the line is cut before GitHub's advice)
    assert infra_kind("Error: API rate limit exceeded for 10.1.0.254.") == "api-rate-limit-anonymous"
    # a word that only starts like an address is not one
    assert infra_kind("API rate limit exceeded for 12345 requests") == "api-rate-limit"


# ------------------------------------------------------------------ the driver's mismatch, Go's timeout
def test_nvml_mismatch_in_nvidia_container_clis_lower_case_is_the_drivers_mismatch():
    # docker's OCI hook failing, the script ending "exit code 125" (weak)
    assert f8("infra-nvml-driver-library-mismatch-3").key == f8("infra-nvml-driver-library-mismatch-0").key == \
        "Infrastructure|driver-mismatch"


def test_gos_http_client_timeout_is_the_network():
    assert f8("infra-ghcr-unavailable-22").key == f8("infra-ghcr-unavailable-23").key == "Infrastructure|network"
    assert infra_kind('Get "https://proxy.golang.org/x/@v/list": net/http: request canceled '
                      "(Client.Timeout exceeded while awaiting headers)") == "network"


# ------------------------------------------------------------------ a registry's status in Go's words
def test_a_registrys_5xx_is_its_domains_whatever_line_names_the_host():
    # a Head "https://ghcr.io/…" on the line, a Head without its scheme, none (the image pulled names it), 500
    # under "Docker pull failed with exit code 1"
    ids = [f"infra-ghcr-unavailable-{n}" for n in range(16, 22)]
    assert {f8(i).key for i in ids} == {"HTTPError|HTTP 5xx Server Error from ghcr.io"}
    assert {signature_class(f8(i)) for i in ids} == {INFRA}
    # Docker Hub's 503 is another service
    assert f8("infra-docker-hub-503-24").key == "HTTPError|HTTP 5xx Server Error from docker.io"


def test_an_image_without_a_registry_is_docker_hubs_and_a_4xx_keeps_its_code():
    s = signature_of("/usr/bin/docker pull library/ubuntu:22.04\n"
                     "Error response from daemon: received unexpected HTTP status: 502 Bad Gateway\n"
                     "Error: Docker pull failed with exit code 1", "job:pull")
    assert s.key == "HTTPError|HTTP 5xx Server Error from docker.io"
    # a registry on a port is that registry's
    p = signature_of("docker pull localhost:5000/app:1\n"
                     "Error response from daemon: received unexpected HTTP status: 500 Internal Server Error",
                     "job:pull")
    assert p.key == "HTTPError|HTTP 5xx Server Error from localhost"
    # an image the registry refuses to the caller answers what it asked for: real, by code and host
    d = signature_of('Error response from daemon: Head "https://ghcr.io/v2/org/private/manifests/1": '
                     "received unexpected HTTP status: 403 Forbidden", "job:pull")
    assert d.key == "HTTPError|HTTP 403 Forbidden from ghcr.io" and signature_class(d) != INFRA


def test_a_weak_line_yields_to_an_http_status_above_it_and_a_concrete_error_does_not():
    assert f8("infra-ghcr-unavailable-20").rule == "infra"
    # a compiler error under the same status stays the compiler's
    c = signature_of("Error response from daemon: received unexpected HTTP status: 503 Service Unavailable\n"
                     "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.x", "t")
    assert c.type == "LLVM ERROR"


# ------------------------------------------------------------------ a GPU container the driver is too old for
def test_nvidia_container_clis_cuda_requirement_is_one_real_identity_whatever_version():
    # inside docker's OCI runtime error, on a line of its own, bare; cuda>=10.0, 10.2, 11.0, 12.8
    ids = [f"nvidia-driver-older-than-cuda-runtime-{n}" for n in range(55, 59)]
    sigs = [f8(i) for i in ids]
    assert {s.key for s in sigs} == {
        "RuntimeError|nvidia-container-cli: requirement error: unsatisfied condition: cuda>=<version>"}
    # a driver older than what the image asks for is real, as torch's "driver too old" is (the image is the
    # change's choice): no retry fixes it
    assert {signature_class(s) for s in sigs} == {REAL}
    # a Python error in the same text is the failure
    s = signature_of("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4\n"
                     "ValueError: bad shape (3, 4)", "t")
    assert s.type == "ValueError"
