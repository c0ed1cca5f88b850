"""The suites section: validation errors, trusted copy from the default branch, infra patterns."""
from __future__ import annotations

import pytest

from bot.config.forksync import ConfigError, load_trusted_suites, parse_config_text
from bot.config.suites import UntrustedConfigError, infra_error_match, required_l1, suite_problems, suites_changed

GOOD = """
areas:
  - {name: llvm-pin, paths: [cmake/llvm-hash.txt], owners: [alice], requires_l3: true}
suites:
  - name: kernels
    command: pytest examples/kernels --junitxml=out/kernels.xml
    report: {format: junit, path: out/kernels.xml}
    expected_tests: 12
    platforms: [cpu, h200]
    env: {TRITON_INTERPRET: "1"}
  - name: lit
    build: pip install -e python
    command: lit -v test
    report: {format: lit, path: out/lit.txt}
    min_tests: 100
    areas: [llvm-pin]
    timeout_s: 7200
  - name: matmul-sweep
    level: L2
    command: python examples/kernels/sweep.py
    report: {format: benchmark-json, path: out/sweep.json}
    platforms: [h200]
  - name: e2e
    level: L3
    command: python e2e.py
    report: {format: junit, path: out/e2e.xml}
    min_tests: 1
    platforms: [b200, mi350]
    required: false
"""


def test_good_config_parses():
    cfg = parse_config_text(GOOD)
    k, lit, sweep, e2e = cfg.suites
    assert (k.level, k.floor, k.platforms, k.env, k.infra_retries, k.timeout_s) == (
        "L1", 12, ["cpu", "h200"], {"TRITON_INTERPRET": "1"}, 1, 3600)
    assert (lit.build, lit.floor, lit.areas) == ("pip install -e python", 100, ["llvm-pin"])
    assert sweep.level == "L2" and sweep.floor == 1
    assert suite_problems(cfg.suites, [a.name for a in cfg.areas]) == []
    assert [s.name for s in required_l1(cfg.suites)] == ["kernels"]
    assert [s.name for s in required_l1(cfg.suites, ["llvm-pin"])] == ["kernels", "lit"]


@pytest.mark.parametrize("snippet,problem", [
    ("- {name: a, command: x, report: {format: xml, path: r}, min_tests: 1}",
     ("suites[a].report.format", "Input should be 'junit', 'lit' or 'benchmark-json'")),
    ("- {name: a, command: x, report: {format: junit, path: r}, min_tests: 1, platforms: [h300]}",
     ("suites[a].platforms", "unknown platform label(s) ['h300']; use some of "
                            "['cpu', 'h100', 'h200', 'b200', 'mi210', 'mi300', 'mi350']")),
    ("- {name: a, command: x, report: {format: junit, path: r}}",
     ("suites[a]", "suite 'a': give expected_tests (exact) or min_tests (floor) — without one "
                  "a suite that silently runs fewer tests would pass")),
    ("- {name: a, command: x, report: {format: junit, path: r}, min_tests: 5, expected_tests: 3}",
     ("suites[a]", "suite 'a': min_tests 5 exceeds expected_tests 3")),
    ("- {name: a, level: L2, command: x, report: {format: junit, path: r}}",
     ("suites[a]", "suite 'a': an L2 suite reports benchmark-json, not junit")),
    ("- {name: a, command: x, report: {format: junit, path: r}, min_tests: 1, env: {1BAD: x}}",
     ("suites[a].env", "environment variable name '1BAD' is not valid (letters, digits, _)")),
    ("- {name: a, command: x, report: {format: junit, path: r}, min_tests: 1, retries: 3}",
     ("suites[a].retries", "unknown key `retries`; did you mean `infra_retries`?")),
    ("- {name: a, command: x, report: {format: junit, path: r}, min_tests: 1, infra_retries: 9}",
     ("suites[a].infra_retries", "Input should be less than or equal to 5")),
    ("- {name: a, command: x, report: {format: junit, path: r}, expected_tests: 0}",
     ("suites[a].expected_tests", "Input should be greater than or equal to 1")),
    ("- {name: a, command: x, report: {format: junit, path: r}, platforms: [cpu, h200], expected_tests: {cpu: 28}}",
     ("suites[a]", "suite 'a': expected_tests per platform must name exactly the suite's platforms "
                  "['cpu', 'h200']; missing ['h200']")),
    ("- {name: a, command: x, report: {format: junit, path: r}, expected_tests: {cpu: 28, h300: 30}}",
     ("suites[a].expected_tests", "unknown platform label(s) ['h300'] in the per-platform counts; "
                                 "use some of ['cpu', 'h100', 'h200', 'b200', 'mi210', 'mi300', 'mi350']")),
    ("- {name: a, command: x, report: {format: junit, path: r}, platforms: [cpu, h200], min_tests: 29, "
     "expected_tests: {cpu: 28, h200: 30}}",
     ("suites[a]", "suite 'a': min_tests 29 exceeds expected_tests 28 on cpu")),
])
def test_bad_suites_name_the_field(snippet, problem):
    with pytest.raises(ConfigError) as e:
        parse_config_text("suites:\n  " + snippet, "forksync.yml")
    assert e.value.problems == [problem]


def test_expected_tests_per_platform_and_newly_skipped():
    cfg = parse_config_text("""
suites:
  - name: kernels
    command: pytest
    report: {format: junit, path: out/k.xml}
    expected_tests: {h200: 30, cpu: 28}
    platforms: [cpu, h200]
    allow_newly_skipped: true
  - name: lit
    command: lit
    report: {format: lit, path: "-"}
    expected_tests: 12
""")
    k, lit = cfg.suites
    assert (k.expected_for("cpu"), k.expected_for("h200"), k.floor, k.allow_newly_skipped) == (28, 30, 28, True)
    assert (lit.expected_for("cpu"), lit.expected_for("h200"), lit.allow_newly_skipped) == (12, 12, False)


def test_gate_required_checks():
    cfg = parse_config_text("gate:\n  required_checks: [internal-ci, ci/oss]\n")
    assert cfg.gate.required_checks == ["internal-ci", "ci/oss"]
    assert parse_config_text("").gate.required_checks == []
    for bad, why in [("[forksync/gate]", "'forksync/gate' is forksync's own check; its suites are required "
                                         "through `suites:`, and the gate cannot require itself"),
                     ("[a, a]", "a required check is listed twice"),
                     ("[' ']", "a required check name is empty")]:
        with pytest.raises(ConfigError) as e:
            parse_config_text(f"gate:\n  required_checks: {bad}\n", "forksync.yml")
        assert e.value.problems == [("gate.required_checks", why)]


def test_whole_config_problems():
    from bot.config.forksync import ConfigError
    text = """
suites:
  - {name: a, command: x, report: {format: junit, path: r}, min_tests: 1, areas: [nope]}
  - {name: a, command: y, report: {format: junit, path: r}, min_tests: 1}
"""
    with pytest.raises(ConfigError) as e:       # load_config/parse_config run the cross-section checks
        parse_config_text(text)
    assert e.value.problems == [
        ("suites[a].areas", "unknown area 'nope'; configured areas: []"),
        ("suites[a].name", "suite name 'a' is used twice")]
    cfg = parse_config_text("suites:\n  - {name: a, command: x, report: {format: junit, path: r}, min_tests: 1}\n")
    assert suite_problems(list(cfg.suites) * 2, ["llvm-pin"]) == [("suites.1.name", "suite name 'a' is used twice")]


def test_trusted_copy_comes_from_default_branch_only():
    asked = []
    files = {("main", ".github/forksync.yml"): GOOD,
             ("pr-head", ".github/forksync.yml"): "suites: []\n"}

    def read(ref, path):
        asked.append(ref)
        return files.get((ref, path))

    trusted = load_trusted_suites(read, "main")
    assert asked == ["main"] and [s.name for s in trusted] == ["kernels", "lit", "matmul-sweep", "e2e"]
    proposed = tuple(parse_config_text(files[("pr-head", ".github/forksync.yml")]).suites)
    assert suites_changed(trusted, proposed) == ("e2e", "kernels", "lit", "matmul-sweep")
    assert suites_changed(trusted, trusted) == ()
    assert load_trusted_suites(lambda ref, path: None, "main") == ()
    with pytest.raises(UntrustedConfigError, match=r"suites\[\w+\]\.command"):
        load_trusted_suites(lambda ref, path: "suites:\n  - {name: a, report: {format: lit, path: r}, min_tests: 1}\n",
                            "main")


@pytest.mark.parametrize("text,hit", [
    ("RuntimeError: No CUDA-capable device is detected", "gpu-missing: RuntimeError: No CUDA-capable device is detected"),
    ("Failed to initialize NVML: Driver/library version mismatch",
     "driver-mismatch: Failed to initialize NVML: Driver/library version mismatch"),
    ("OSError: [Errno 28] No space left on device", "disk-full: OSError: [Errno 28] No space left on device"),
    ("RuntimeError: 0 active drivers ([]). There should only be one.",
     "gpu-missing: RuntimeError: 0 active drivers ([]). There should only be one."),
    # CUDA/HIP/driver start-up failures (torch, the HIP runtime, nvidia-smi), one line of a longer output
    ("collected 30 items\nE   RuntimeError: No CUDA GPUs are available\n1 failed",
     "gpu-missing: E   RuntimeError: No CUDA GPUs are available"),
    ("RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.",
     "driver-mismatch: RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu."),
    ("RuntimeError: HIP error: hipErrorNoDevice", "gpu-missing: RuntimeError: HIP error: hipErrorNoDevice"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
     "gpu-missing: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."),
    ("AssertionError: Tensor-likes are not close!", None),
    ("RuntimeError: CUDA error: uncorrectable ECC error encountered",
     "gpu-hardware: RuntimeError: CUDA error: uncorrectable ECC error encountered"),
    # a test's own CUDA OOM (in a container: its own process listed by pid, holding what PyTorch holds) is no retry
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 GiB. Process 414660 has 79.68 GiB memory in use. "
     "Of the allocated memory 77.91 GiB is allocated by PyTorch, and 1.12 GiB is reserved by PyTorch but unallocated.", None),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. Process 4101543 has 39.37 GiB memory in use. "
     "Of the allocated memory 9.27 GiB is allocated by PyTorch, and 8.61 MiB is reserved by PyTorch but unallocated.",
     "gpu-memory-held: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. Process 4101543 has 39.37 "
     "GiB memory in use. Of the allocated memory 9.27 GiB is allocated by PyTorch, and 8.61 MiB is reserved by PyTorch but "
     "unallocated."),
    ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144, "
     "Hardware limit: 232448", None),
    # a package mirror in apt's and dnf's own words; the same words in a test's assertion are the test's
    ("E: Failed to fetch http://archive.ubuntu.com/ubuntu/dists/jammy-updates/main/binary-amd64/by-hash/SHA256/"
     "3f1c  Hash Sum mismatch",
     "package-mirror: E: Failed to fetch http://archive.ubuntu.com/ubuntu/dists/jammy-updates/main/binary-amd64/by-hash/"
     "SHA256/3f1c  Hash Sum mismatch"),
    ("W: Failed to fetch store:/var/lib/apt/lists/partial/archive.ubuntu.com_ubuntu_dists_focal_InRelease  "
     "Hash Sum mismatch [IP: 91.189.91.39 80]",
     "package-mirror: W: Failed to fetch store:/var/lib/apt/lists/partial/archive.ubuntu.com_ubuntu_dists_focal_InRelease"
     "  Hash Sum mismatch [IP: 91.189.91.39 80]"),
    ("Errors during downloading metadata for repository 'appstream':\n  - Downloading successful, but checksum doesn't "
     "match. Calculated: 1b2c(sha256)  Expected: 9f8e(sha256)",
     "package-mirror: - Downloading successful, but checksum doesn't match. Calculated: 1b2c(sha256)  Expected: "
     "9f8e(sha256)"),
    ("FAILED tests/test_cache.py::test_entry - AssertionError: hash sum mismatch", None),
    ("E   AssertionError: cache checksum doesn't match the kernel's", None),
    ("E   AssertionError: Hash Sum mismatch between the two builds of the kernel", None),
    # a perf test's own words: a slowdown is what L2 bisects, never a throttled service
    ("E   AssertionError: 14% slowdown against the baseline", None),
    ("FAILED tests/test_perf.py::test_matmul - AssertionError: matmul shows a slow down of 1.2x", None),
    ("E   AssertionError: SlowDown of 12% on kernel add_kernel", None),
    ("E   AssertionError: the warp was preempted before the barrier", None),
    # a scheduler's, a compiler cache's, a storage service's and NVIDIA's words, only in their own form
    ("E   AssertionError: 12% slower than baseline; timings noisy due to preemption", None),
    ("E   AssertionError: Instance was preempted? expected 3 blocks, got 2", None),
    ("RuntimeError: proton server: Server startup failed (port 8123 in use)", None),
    ("E   TimeoutError: Timed out waiting for server startup", None),
    ("E   AssertionError: eviction reason: Evicted != Expired", None),
    ("E   assert 'ServerBusy' == 'Ok'", None),
    ("print: xid = 64", None),
    ("slurmstepd: error: *** JOB 123 ON node7 CANCELLED AT 2026-01-01T00:00:00 DUE TO PREEMPTION ***",
     "evicted: slurmstepd: error: *** JOB 123 ON node7 CANCELLED AT 2026-01-01T00:00:00 DUE TO PREEMPTION ***"),
    ("Instance was preempted.", "evicted: Instance was preempted."),
    ("sccache: error: Timed out waiting for server startup. Maybe the remote service is unreachable?",
     "compiler-cache: sccache: error: Timed out waiting for server startup. Maybe the remote service is unreachable?"),
    ("pod status\n  phase: Failed\n  reason: Evicted\n", "evicted: reason: Evicted"),
    ("Status: 503 (The server is busy.)\nErrorCode: ServerBusy", "service-throttled: ErrorCode: ServerBusy"),
    ("NVRM: Xid (PCI:0000:07:00): 48, pid=88, DBE (double bit error) ECC Error",
     "gpu-hardware: NVRM: Xid (PCI:0000:07:00): 48, pid=88, DBE (double bit error) ECC Error"),
    # a health daemon's upper-case "XID 94": the kernel log's "Xid" phrase, tried first at the same place, fails
    # its capitals; the next phrase that matches there still names it
    ("XID 94(Contained ECC error) detected on PCI:0000:1a:00",
     "gpu-hardware: XID 94(Contained ECC error) detected on PCI:0000:1a:00"),
    # S3's throttling, in boto's, the REST API's and the HTTP status line's words
    ("botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the PutObject operation "
     "(reached max retries: 4): Please reduce your request rate.",
     "service-throttled: botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the PutObject "
     "operation (reached max retries: 4): Please reduce your request rate."),
    ("<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>",
     "service-throttled: <Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"),
    ("upload failed: s3://bucket/wheel.whl An error occurred (503) 503 Slow Down",
     "service-throttled: upload failed: s3://bucket/wheel.whl An error occurred (503) 503 Slow Down"),
])
def test_infra_patterns(text, hit):
    assert infra_error_match(text) == hit
