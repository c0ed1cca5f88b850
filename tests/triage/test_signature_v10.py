"""Signature version 10: from ``fresh7.jsonl``'s misses (tuning data since its one held-out
measurement, see docs/triage.md), each rule a class of text, also checked on texts of no report.

A package mirror that served a file whose checksum is not its index's (apt's ``Hash Sum mismatch``,
dnf's ``checksum doesn't match``) and a git transfer cut off in the middle of the pack (``early EOF``,
``RPC failed; curl N``) are infrastructure kinds of their own; rustls' ``invalid peer certificate`` is
an untrusted certificate (``tls``). A 5xx is the service failing: one identity per service's domain
whatever code its gateway answered (``HTTP 5xx Server Error from huggingface.co``); any other status
keeps its code, RFC 9110's reason and the whole host. A status is read in pip's (``HTTP error 503
while getting <url>``), GitHub Actions' tool cache's (``Unexpected HTTP response: 503``) and
huggingface_hub's words (``for URL``, a bare ``502 Server Error``), its host from the text when the
line names none. A failed download yields to the HTTP status printed under it; Maven's ``Failed to
execute goal`` is a wrapper (weak); a job's time limit names no cause (one per test or job)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.config.infra import infra_kind, infra_match
from bot.triage.canonical import http_status_line, service_domain
from bot.triage.classify import INFRA, REAL, signature_class
from bot.triage.records import normalize_test_id
from bot.triage.signature import SIGNATURE_VERSION, signature_of

DATA = Path(__file__).resolve().parents[1] / "data" / "triage"
_FRESH7 = {r["id"]: r for r in (json.loads(x) for x in (DATA / "fresh7.jsonl").read_text().splitlines() if x.strip())}


def f7(rid: str):
    r = _FRESH7[rid]
    return signature_of(r["text"], normalize_test_id(r["test"]))


def test_the_version_names_these_rules():
    assert SIGNATURE_VERSION >= 10     # (version 11 added its own rules, test_signature_v11.py)


# ------------------------------------------------------------------ a package mirror's checksum
def test_apts_hash_sum_mismatch_is_one_infrastructure_kind_whatever_line_apt_ends_with():
    # apt's hash list, "E: Some index files failed to download", Travis' "failed and exited with 100",
    # a docker build's "#0 45.53" prefix, "E: Unable to fetch some archives"
    ids = [f"infra-apt-hash-sum-mismatch-{n}" for n in range(13, 18)]
    assert {f7(i).key for i in ids} == {"Infrastructure|package-mirror"}
    assert signature_class(f7(ids[0])) == INFRA
    # dnf's (librepo's) words, in a text of no report
    assert infra_kind("[MIRROR] kernel-devel-6.5.6.rpm: Downloading successful, but checksum doesn't match. "
                      "Calculated: 1f2e Expected: 9a8b") == "package-mirror"
    # the runner retries on it too
    kind, line = infra_match("Err:3 http://archive.ubuntu.com/ubuntu jammy/main amd64 Packages\n  Hash Sum mismatch\n")
    assert kind == "package-mirror" and line == "Hash Sum mismatch"


# ------------------------------------------------------------------ a git transfer cut off
def test_a_git_transfer_cut_off_is_its_own_kind_before_the_network():
    # two "exit code 128" endings, a reset connection under curl 56, opam's "git-fetch failed"
    ids = [f"infra-git-fetch-early-eof-{n}" for n in range(18, 22)]
    assert {f7(i).key for i in ids} == {"Infrastructure|git-transfer"}
    assert signature_class(f7(ids[0])) == INFRA
    # a clone that could not resolve the host is the network's, as before
    assert f7("infra-dns-resolution-22").key == "Infrastructure|network"
    # curl 18 under git, in a text of no report; git's "RPC failed; HTTP 413" (a push too large) is not a
    # transfer cut off
    assert infra_kind("error: RPC failed; curl 18 transfer closed with outstanding read data remaining") == \
        "git-transfer"
    assert infra_kind("error: RPC failed; HTTP 413 curl 22 The requested URL returned error: 413") is None


# ------------------------------------------------------------------ rustls' untrusted certificate
def test_rustls_unknown_issuer_is_an_untrusted_certificate():
    # behind uv's "Request failed after 3 retries" and under its "Failed to download"
    assert f7("infra-tls-unknown-issuer-proxy-39").key == f7("infra-tls-unknown-issuer-proxy-40").key == \
        "Infrastructure|tls"
    assert infra_kind("warning: spurious network error: [60] invalid peer certificate: UnknownIssuer") == "tls"


# ------------------------------------------------------------------ a service's 5xx
def test_a_5xx_is_one_identity_per_service_domain_whatever_its_gateway_answered():
    # 500, 502 and 504, huggingface.co and hub-ci.huggingface.co, requests' words, "for URL" and bare
    ids = [f"infra-huggingface-hub-5xx-{n}" for n in range(33, 39)]
    assert {f7(i).key for i in ids} == {"HTTPError|HTTP 5xx Server Error from huggingface.co"}
    assert {signature_class(f7(i)) for i in ids} == {INFRA}
    # uv's 500 and setup-uv's 503, both from GitHub's release downloads
    assert f7("infra-github-release-download-5xx-30").key == f7("infra-github-release-download-5xx-31").key == \
        "HTTPError|HTTP 5xx Server Error from github.com"
    # another service's 5xx stays apart
    assert f7("infra-pypi-backend-503-32").key == "HTTPError|HTTP 5xx Server Error from pythonhosted.org"


def test_any_other_status_keeps_its_code_its_reason_and_the_whole_host():
    a = signature_of("requests.exceptions.HTTPError: 404 Client Error: NOT FOUND for url: https://x.org/a", "t")
    assert a.key == "HTTPError|HTTP 404 Not Found from x.org"
    assert signature_class(a) == REAL
    # the Inference API's quota is not the Hub's downloads' rate limit
    q = signature_of("requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: "
                     "https://api-inference.huggingface.co/models/gpt2")
    assert q.key == "HTTPError|HTTP 429 Too Many Requests from api-inference.huggingface.co"
    assert http_status_line("504", "hub-ci.huggingface.co") == "HTTP 5xx Server Error from huggingface.co"
    assert http_status_line("403", "download.pytorch.org") == "HTTP 403 Forbidden from download.pytorch.org"


@pytest.mark.parametrize(("host", "domain"), [
    ("hub-ci.huggingface.co", "huggingface.co"), ("files.pythonhosted.org:443", "pythonhosted.org"),
    ("github.com", "github.com"), ("www.example.co.uk", "example.co.uk"), ("10.1.2.3", "10.1.2.3"),
    # a short name under a two-letter top-level domain is no public suffix: one operator's hosts are one
    # service (the Hub's LFS and Xet CDNs, the regions of Google's registry)
    ("cdn-lfs-us-1.hf.co", "hf.co"), ("cas-bridge.xethub.hf.co", "hf.co"), ("us.gcr.io", "gcr.io"),
    ("eu.gcr.io", "gcr.io"), ("mirror.example.com.au", "example.com.au"), ("www.ac.jp", "www.ac.jp"),
])
def test_the_service_is_the_registrable_domain(host, domain):
    assert service_domain(host) == domain


def test_pips_and_the_tool_caches_status_lines_are_read_with_the_host_the_text_named():
    # pip's own words, with the host on the line
    p = signature_of("ERROR: HTTP error 404 while getting https://download.pytorch.org/whl/cu118/x.whl", "job:pip")
    assert p.key == "HTTPError|HTTP 404 Not Found from download.pytorch.org"
    # setup-node's download through the same tool cache as setup-uv: the host of the url it announced
    n = signature_of("Acquiring 20.11.0 - x64 from https://github.com/actions/node-versions/releases/download/"
                     "20.11.0-7483185386/node-20.11.0-linux-x64.tar.gz\nUnexpected HTTP response: 502\n"
                     "Error: Unexpected HTTP response: 502", "job:setup-node")
    assert n.key == "HTTPError|HTTP 5xx Server Error from github.com"
    assert signature_class(n) == INFRA
    # a status with no host anywhere in the text is still the service failing
    bare = signature_of("Error: Unexpected HTTP response: 503", "job:setup-go")
    assert bare.key == "HTTPError|HTTP 5xx Server Error" and signature_class(bare) == INFRA


# ------------------------------------------------------------------ a failed download, Maven's wrapper
def test_a_failed_download_yields_to_the_http_status_under_it():
    assert f7("infra-github-release-download-5xx-30").rule == "infra"
    # a download that failed with no status under it (a private mirror timing out: a real fault in a
    # timeout's words, which no text tells apart) is still the download's kind
    assert f7("uv-lock-pins-private-mirror-41").key == "Infrastructure|toolchain-download"
    # a file the index does not have (404) under the same phrase answers what the run asked for: real
    gone = signature_of("error: Failed to download `torch==2.0.0+cu118`\n  Caused by: Failed to fetch: "
                        "`https://download.pytorch.org/whl/cu118/torch-2.0.0.whl`\n  Caused by: HTTP status client "
                        "error (404 Not Found) for url (https://download.pytorch.org/whl/cu118/torch-2.0.0.whl)",
                        "job:uv-sync")
    assert gone.key == "HTTPError|HTTP 404 Not Found from download.pytorch.org"
    assert signature_class(gone) == REAL


def test_mavens_failed_goal_is_a_wrapper_and_the_cause_beside_it_decides():
    assert f7("infra-docker-hub-pull-rate-limit-6").key == "Infrastructure|registry-rate-limit"
    # a goal that failed for a reason of its own keeps its identity, real
    s = signature_of("[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:compile "
                     "(default-compile) on project core: Compilation failure", "job:mvn")
    assert s.type != "Infrastructure" and signature_class(s) == REAL


# ------------------------------------------------------------------ a job's time limit
def test_a_time_limit_is_infrastructure_one_per_job():
    ids = ["infra-actions-time-limit-notion-backup-hang-42", "infra-actions-time-limit-curl-multi-43",
           "infra-actions-time-limit-self-hosted-buildx-44", "infra-actions-time-limit-vm-packages-daily-45"]
    sigs = [f7(i) for i in ids]
    assert len({s.key for s in sigs}) == 4
    assert {s.ident for s in sigs} == {"time-limit"}
    assert {signature_class(s) for s in sigs} == {INFRA}
    # the same job's time limit on two nights is one group
    line = "The job running on runner X has exceeded the maximum execution time of 360 minutes."
    assert signature_of(line, "job:a").key == signature_of(line + "\n", "job:a").key == "Infrastructure|time-limit|job:a"
