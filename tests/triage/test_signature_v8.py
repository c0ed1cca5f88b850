"""Signature version 8: from ``fresh5.jsonl``'s misses (tuning data since its one held-out
measurement, see docs/triage.md), each rule a class of text, also checked on texts of no report.

Level Zero's result codes are codes, not addresses: ``Triton Error [ZE]: 0x78000011`` is
``ZE_RESULT_ERROR_INVALID_KERNEL_NAME`` (the Level Zero specification's ``ze_result_t``), read as
the CUDA and HIP runtimes' errors are and, like theirs, generic (it names no kernel); Intel's
``Error during Intel loadBinary: …`` line is read before a traceback cut short; an HTTP proxy
refusing the tunnel is its own infrastructure kind, not the network's; ``pyconfig.h`` missing is
Python's headers missing, as ``Python.h`` is; LLVM's ``'sm_120' is not a recognized processor`` is
a warning that names its cause (a toolchain older than the GPU), one per GPU generation."""
from __future__ import annotations

import json
from pathlib import Path

from bot.config.infra import infra_kind
from bot.triage.records import normalize_test_id
from bot.triage.signature import SIGNATURE_VERSION, signature_of

DATA = Path(__file__).resolve().parents[1] / "data" / "triage"
_FRESH5 = {r["id"]: r for r in (json.loads(x) for x in (DATA / "fresh5.jsonl").read_text().splitlines() if x.strip())}


def f5(rid: str):
    r = _FRESH5[rid]
    return signature_of(r["text"], normalize_test_id(r["test"]))


def keys(*ids: str) -> set[str]:
    return {f5(i).key for i in ids}


def test_the_version_names_these_rules():
    assert SIGNATURE_VERSION >= 8      # (version 9 added its own rules, test_signature_v9.py)


# ------------------------------------------------------------------ Level Zero's result codes
def test_a_level_zero_code_is_its_name_not_an_address():
    s = signature_of("RuntimeError: Triton Error [ZE]: 0x78000011", "test_core.py::test_dot")
    assert s.key == "ZEError|ZE error: ZE_RESULT_ERROR_INVALID_KERNEL_NAME|test_core.py::test_dot"
    assert signature_of("RuntimeError: Triton Error [ZE]: 0x70000004", "t").key == \
        "ZEError|ZE error: ZE_RESULT_ERROR_MODULE_BUILD_FAILURE|t"
    # a code the table does not name keeps its digits: two unknown codes stay apart
    a = signature_of("RuntimeError: Triton Error [ZE]: 0x7800ffff", "t")
    b = signature_of("RuntimeError: Triton Error [ZE]: 0x7800fffe", "t")
    assert a.key == "ZEError|ZE error: 0x7800ffff|t" and a.key != b.key


def test_a_level_zero_code_names_no_kernel_so_the_test_joins_it():
    # four causes of 0x78000011 and two of 0x70000004 (fresh5.jsonl): one group each, not one for all
    ze = ["ze-0x78000011-bmg-windows-inductor-10", "ze-0x78000011-driver-regression-pt27-12",
          "ze-0x78000011-a770-persistent-matmul-13", "ze-0x78000011-vllm-rejection-sampler-14",
          "ze-0x70000004-a770-dot-int8-15", "ze-0x70000004-a770-atomic-rmw-fp64-16"]
    sigs = [f5(i) for i in ze]
    assert all(s.generic for s in sigs)
    assert len({s.key for s in sigs}) == len(ze)
    assert {s.ident for s in sigs} == {"ZE error: ZE_RESULT_ERROR_INVALID_KERNEL_NAME",
                                          "ZE error: ZE_RESULT_ERROR_MODULE_BUILD_FAILURE"}


def test_intel_s_load_binary_line_is_read_before_a_cut_traceback():
    # the reproducer's traceback is cut before the raise: the loadBinary line is the only error
    s = f5("ze-0x78000011-bmg-windows-inductor-11")
    assert s.ident == "ZE error: ZE_RESULT_ERROR_INVALID_KERNEL_NAME"
    # the code's name in the line itself is the same fault as the code
    n = f5("ze-invalid-kernel-name-fp8-block-mm-17")
    assert n.ident == "ZE error: ZE_RESULT_ERROR_INVALID_KERNEL_NAME"
    assert signature_of("Error during Intel loadBinary: ZE_RESULT_ERROR_MODULE_BUILD_FAILURE", "t").ident == \
        signature_of("RuntimeError: Triton Error [ZE]: 0x70000004", "t").ident


def test_cuda_and_hip_runtime_errors_are_read_as_before():
    assert signature_of("RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered", "t").key == \
        "CUDAError|CUDA error: an illegal memory access was encountered|t"


# ------------------------------------------------------------------ a proxy is not the network
def test_a_proxy_refusing_the_tunnel_is_its_own_kind():
    assert infra_kind("ProxyError('Cannot connect to proxy.', OSError('Tunnel connection failed: 403 Forbidden'))") == \
        "proxy"
    assert infra_kind("OSError('Tunnel connection failed: 407 Proxy Authentication Required')") == "proxy"
    assert infra_kind("pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='files.pythonhosted"
                      ".org', port=443): Read timed out.") == "network"
    assert keys("infra-proxy-forbidden-6") == {"Infrastructure|proxy"}
    assert keys("infra-pypi-read-timeout-4", "infra-pypi-read-timeout-5") == {"Infrastructure|network"}


# ------------------------------------------------------------------ Python's headers
def test_pyconfig_h_missing_is_python_s_headers_missing():
    ids = [r for r in _FRESH5 if r.startswith("python-headers-missing") and _FRESH5[r]["shape"] == "real"]
    assert len(ids) == 4
    assert keys(*ids) == {"CompilerError|missing header Python.h"}
    # another header stays itself
    assert signature_of("main.c:3:10: fatal error: cuda.h: No such file or directory").key == \
        "CompilerError|missing header cuda.h"


# ------------------------------------------------------------------ LLVM's unknown processor
def test_llvm_s_unknown_processor_is_a_warning_that_names_its_cause():
    ids = [r for r in _FRESH5 if r.startswith("triton-too-old-for-sm120") and _FRESH5[r]["shape"] == "real"]
    assert len(ids) == 2
    assert keys(*ids) == {"Warning|'sm_12x' is not a recognized processor for this target"}
    # one identity per GPU generation
    assert signature_of("'sm_100a' is not a recognized processor for this target (ignoring processor)").key == \
        "Warning|'sm_10x' is not a recognized processor for this target"
    # an error after the warning is the failure
    assert signature_of("'sm_120' is not a recognized processor for this target (ignoring processor)\n"
                        "ValueError: bad block size", "t").key == "ValueError|bad block size"


# ------------------------------------------------------------------ a service's busy answer is infrastructure
def test_a_rate_limit_or_a_server_error_is_infrastructure_with_its_identity_kept():
    from bot.triage.classify import INFRA, REAL, signature_class
    from bot.triage.group import Grouper
    from bot.triage.records import FailureRecord

    hub = signature_of("requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: "
                       "https://huggingface.co/x/resolve/main/config.json")
    assert hub.key == "HTTPError|HTTP 429 Too Many Requests from huggingface.co"
    assert signature_class(hub) == INFRA
    assert signature_class(signature_of("httpx.HTTPStatusError: Server error '503 Service Unavailable' for url "
                                        "'https://api.example.org/v1'")) == INFRA
    # a file that is not there is the run's request, not the service's state
    assert signature_class(signature_of("requests.exceptions.HTTPError: 404 Client Error: Not Found for url: "
                                        "https://x.org/a")) == REAL
    # fresh4.jsonl's rate limits (the Hub's downloads, the Inference API's quota): two groups, both infrastructure
    fresh4 = [json.loads(x) for x in (DATA / "fresh4.jsonl").read_text().splitlines() if x.strip()]
    recs = [FailureRecord(test=normalize_test_id(r["test"]), raw_test=r["test"], outcome="failed", text=r["text"])
            for r in fresh4 if r["fault"] in ("infra-hf-hub-rate-limit", "infra-hf-inference-api-quota")]
    groups = Grouper().group(recs)
    assert len(groups) == 2 and {g.cls for g in groups} == {INFRA}


# ------------------------------------------------------------------ a port another process took is a flake
def test_a_port_already_in_use_is_flaky_from_its_text_alone():
    from bot.triage.classify import FLAKY, REAL, signature_class
    from bot.triage.group import Grouper
    from bot.triage.records import FailureRecord

    assert signature_class(signature_of("RuntimeError: Address already in use")) == FLAKY
    assert signature_class(signature_of("OSError: [Errno 98] EADDRINUSE: bind failed")) == FLAKY
    assert signature_class(signature_of("RuntimeError: the buffer is already in use")) == REAL
    # fresh4.jsonl's and fresh5.jsonl's port races (c10d's TCPStore, elastic's agent, lightning's
    # rendezvous), their real excerpts and CI shapes (a pytest summary cut at "OSEr" names no port):
    # one nightly, no passes, and still flaky — never bisected, never blamed
    recs = []
    for name in ("fresh4", "fresh5"):
        for x in (DATA / f"{name}.jsonl").read_text().splitlines():
            r = json.loads(x) if x.strip() else None
            if r and r["fault"] in ("flaky-c10d-tcpstore-port-in-use", "flaky-lightning-port-reuse") \
                    and r["shape"] != "derived-pytest-summary":
                recs.append(FailureRecord(test=normalize_test_id(r["test"]), raw_test=r["test"], outcome="failed",
                                          text=r["text"], commit="c1"))
    assert len(recs) >= 10
    assert {g.cls for g in Grouper().group(recs)} == {FLAKY}
