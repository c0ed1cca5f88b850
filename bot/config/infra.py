"""Infrastructure faults (pure, one table for the runner, bisection and triage): the phrases that
name a busy/missing GPU, GPU memory held by another process, the GPU's memory failing (an
uncorrectable ECC error), a GPU lost from the machine (fallen off the bus), a GPU or driver that failed
to start, a driver mismatch, an HTTP proxy, a container registry's rate limit, the GitHub API's rate
limits, an untrusted TLS certificate, a package mirror's checksum, a download's hash check, a cloud
service throttling, the CI's cache service or a cache key held, a compiler cache's server, a git
transfer cut off, the network, a toolchain download, a pod evicted or preempted, a full disk, the OOM
killer, a lost runner or the CI's time limit on a job.

* the runner (:mod:`gpu_runner.runner`, through :func:`bot.config.suites.infra_error_match`) retries
  an attempt whose output holds one and reports outcome ``infrastructure`` when it persists;
* bisection (:mod:`bot.git.bisect`) skips such a step instead of blaming it;
* triage (:mod:`bot.triage.infra`, :mod:`bot.triage.signature`) files it as an infrastructure
  signature, never as an issue.

It lives in ``bot.config`` (which imports nothing of the project) so that ``gpu_runner`` stays
importable on a GPU machine with pydantic and pyyaml alone.

Sources: CUDA runtime/driver and HIP error names and strings (``cudaErrorNoDevice``,
``CUDA_ERROR_NO_DEVICE``, ``hipErrorNoDevice``, ``cudaErrorECCUncorrectable``: "uncorrectable ECC
error encountered"), torch's ``No CUDA GPUs are available`` and CUDA OOM messages (the process
list and the allocator's figures: ``c10/cuda/CUDACachingAllocator.cpp``), NVML/nvidia-smi's
start-up failures, GitHub Actions runner messages, Docker Hub's pull-limit error (``toomanyrequests``,
the registry API's ``TOOMANYREQUESTS``), curl/pip/urllib3 network and proxy errors
(urllib3's ``ProxyError``, an HTTP CONNECT's ``Tunnel connection failed: <status>``), the Linux OOM
killer's log line.
"""
from __future__ import annotations

import re

__all__ = ["INFRA_PATTERNS", "PERSISTING_IS_THE_CHANGE", "PHRASES", "CheckedPattern", "anchor_hit",
           "held_by_another_process", "infra_kind", "infra_hit",
           "infra_match"]

# torch's words, matched in the lowercased message (as case-insensitive as the phrase that led
# here, at the speed of patterns that start with a literal)
_UNIT = {"bytes": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
_SIZE = r"([\d.]+) (bytes|[kmgt]ib)"
_PROCESS_MEM = re.compile(r"process \d+ has " + _SIZE + " memory in use")
_TORCH_ALLOCATED = re.compile(r"of the allocated memory " + _SIZE + " is allocated by pytorch")
_TORCH_UNALLOCATED = re.compile(r"and " + _SIZE + " is reserved by pytorch but unallocated")
#: what a process may hold on the GPU beyond PyTorch's own pool (the CUDA context, the libraries'
#: workspaces: cuBLAS, triton's loaded kernels): this, or a tenth of its memory in use if larger
_NON_TORCH_ALLOWANCE = 2 << 30


def _size(number: str, unit: str) -> float:
    return float(number) * _UNIT[unit]


def held_by_another_process(message: str) -> bool:
    """Whether a CUDA out-of-memory ``message`` (from "CUDA out of memory" to the end of its line)
    names GPU memory held by a process other than the one that ran out.

    torch (``c10/cuda/CUDACachingAllocator.cpp``) lists every process NVML reports on the GPU:
    its own as "Including non-PyTorch memory, this process has X memory in use", any other as
    "Process <pid> has X memory in use", then "Of the allocated memory A is allocated by PyTorch,
    and R is reserved by PyTorch but unallocated" for itself. In a container NVML reports host
    pids, torch cannot match its own, and its own memory is listed as "Process <pid> has X": one
    process listed, no "this process", and X is what PyTorch holds (A + R) up to the CUDA context
    and the libraries' workspaces (2 GiB, or a tenth of X if larger) — the test's own allocation,
    no other process. Two processes listed, "this process" beside a listed one, or a
    single one holding far more than PyTorch's A + R: another process holds the memory."""
    low = message.lower()
    procs = _PROCESS_MEM.findall(low)
    if len(procs) != 1 or "this process has" in low:
        return bool(procs)
    allocated = _TORCH_ALLOCATED.search(low)
    if allocated is None:               # nothing tells the listed process is the one that ran out
        return True
    unallocated = _TORCH_UNALLOCATED.search(low, allocated.end())
    torch_holds = _size(*allocated.groups()) + (_size(*unallocated.groups()) if unallocated else 0.0)
    in_use = _size(*procs[0])
    return in_use - torch_holds > max(_NON_TORCH_ALLOWANCE, in_use / 10)


def _no_version_published(line: str) -> bool:
    """Whether pip's ``Could not find a version that satisfies the requirement X (from versions: …)``
    (from the phrase to the end of its line) lists no version: ``(from versions: none)``."""
    return "(from versions: none)" in line


class CheckedPattern:
    """A phrase's regex whose match names the fault only when ``check`` holds of the text from the
    match to the end of its line (a condition no regex states, such as a comparison of two sizes).
    ``search`` answers as a compiled pattern's does, with the first match that passes."""

    __slots__ = ("rx", "check", "pattern")

    def __init__(self, pattern: str, check):
        self.rx = re.compile(pattern)
        self.check = check
        self.pattern = pattern

    def search(self, text: str):
        for m in self.rx.finditer(text):
            if self.check(_rest_of_line(text, m.start())):
                return m
        return None


def _own_form(anchor: str, pattern: str) -> tuple:
    """A phrase (``(anchor, regex, check)``, :data:`INFRA_PATTERNS`) that counts only in its tool's own
    form and capitals: ``pattern`` must match from the phrase on, case-sensitively too. The runner and
    bisection search whole outputs case-insensitively, and the same words in another case or another
    form are someone else's (a test's assertion: a perf test's "slowdown", "hash sum mismatch")."""
    rx = re.compile(pattern)
    return anchor, pattern, lambda rest: bool(rx.match(rest))


def _rest_of_line(text: str, at: int) -> str:
    end = text.find("\n", at)
    return text[at:end if end >= 0 else len(text)]


#: Infrastructure faults: kind → phrases. A phrase is a literal, ``(anchor, regex)`` where the
#: regex runs only when the literal anchor is present, or ``(anchor, regex, check)`` where a match
#: counts only when ``check`` holds of the rest of its line (:class:`CheckedPattern`). Shared
#: with :mod:`bot.triage.classify`.
INFRA_PATTERNS: tuple[tuple[str, tuple], ...] = (
    ("gpu-busy", ("busy or unavailable", "is/are busy", "already in use by another", "Could not acquire a GPU",
                  "GPU lease")),
    # a test's own allocation that does not fit is the test's fault (a real failure), not this kind
    ("gpu-memory-held", (("CUDA out of memory", r"CUDA out of memory\..*\bProcess \d+ has [\d.]+ \w+ memory in use",
                          held_by_another_process),)),
    # the GPU's memory failing (an uncorrectable ECC error): hardware, no commit is to blame
    ("gpu-hardware", ("uncorrectable ECC error encountered", "cudaErrorECCUncorrectable",
                      "CUDA_ERROR_ECC_UNCORRECTABLE", "hipErrorECCNotCorrectable",
                      # the driver's own record of a double-bit ECC error or a retired/remapped page failing:
                      # NVIDIA's Xid 48 (DBE), 63/64 (page retirement or row remapping), 92 (high single-bit
                      # rate), 94/95 (contained/uncontained ECC error), in the kernel log's "NVRM: Xid (PCI:…):
                      # 48, …" and the health daemons' "XID 48(…)". Only these codes: Xid 13, 31, 43 are an
                      # application's own faults (an illegal address, a page fault) and stay the test's
                      _own_form("Xid", r"\bXid\b\W{0,3}(?:\(PCI:[^)]*\)\W{0,3})?(?:48|6[34]|9[245])\b"),
                      _own_form("XID ", r"\bXID (?:48|6[34]|9[245])\b"))),
    # the GPU gone from the machine while it ran (the PCIe link lost: "GPU has fallen off the bus", NVIDIA's
    # Xid 79; NVML's NVML_ERROR_GPU_IS_LOST, "GPU is lost"; nvidia-smi's "Unable to determine the device handle
    # for GPU …: Unknown Error" for a GPU the driver still lists but cannot reach): the machine needs servicing
    # (a reset, a reboot, a reseat), no commit is to blame; its own kind, as the fix differs from an ECC
    # error's (the memory's) and from "gpu-missing"'s (no GPU or driver on the machine at all). NVIDIA's
    # documentation and every health monitor (DCGM, gpud, node-problem-detector) use these words
    ("gpu-lost", ("fallen off the bus", "GPU_IS_LOST", "GPU is lost",
                  _own_form("Xid (PCI:", r"\bXid \(PCI:[^)]*\)\W{0,3}79\b"), _own_form("XID 79", r"XID 79\b"),
                  "Unable to determine the device handle for GPU")),
    ("gpu-missing", ("no CUDA-capable device is detected", "Found no NVIDIA driver", "0 active drivers",
                     "No GPU available", "No GPUs available", "No CUDA GPUs are available", "NVIDIA-SMI has failed",
                     "CUDA_ERROR_NO_DEVICE", "cudaErrorNoDevice", "hipErrorNoDevice", "No HIP GPUs are available",
                     "no ROCm-capable device is detected")),
    ("driver-mismatch", ("driver version is insufficient", "Driver/library version mismatch",
                         "unsupported toolchain", "Failed to initialize NVML",
                         "forward compatibility was attempted", "CUDA driver initialization failed",
                         "cudaErrorInsufficientDriver", "hipErrorInsufficientDriver", "CUDA_ERROR_NOT_INITIALIZED",
                         "cuInit failed", "hipErrorNotInitialized",
                         # (nvidia-container-cli's words for NVML's mismatch, in lower case: "nvidia-container-cli:
                         # initialization error: nvml error: driver/library version mismatch" when docker starts a GPU
                         # container on a machine whose loaded kernel module is older than its libraries)
                         "driver/library version mismatch")),
    # an HTTP proxy that refused the tunnel or the credentials (urllib3's ProxyError, the CONNECT
    # answer "Tunnel connection failed: 403 Forbidden"): the site's proxy, another fix than the
    # network's; before "network", whose status phrases ("503 Service Unavailable") such a line holds
    ("proxy", ("ProxyError", "Tunnel connection failed", "407 Proxy Authentication Required")),
    # a container registry that refused a pull over its rate limit (Docker Hub's ``toomanyrequests``,
    # its error code in the registry API's JSON upper case): authenticate, mirror or retry — another
    # fix than the network's, though buildkit prints it with "429 Too Many Requests"
    ("registry-rate-limit", ("toomanyrequests", "TOOMANYREQUESTS", "You have reached your pull rate limit")),
    # the GitHub API's rate limit for a call without a token: the limit is the runner's address's ("API rate
    # limit exceeded for 52.160.111.19. (But here's the good news: Authenticated requests get a higher rate
    # limit …)", GitHub's REST documentation, "Rate limits for the REST API"); the fix is passing a token — the
    # workflow's, not the change under test — and another fix than a spent quota's, so its own kind (before
    # "api-rate-limit", whose anchor the line also holds)
    ("api-rate-limit-anonymous", (("rate limit exceeded for ", r"rate limit exceeded for \d{1,3}(?:\.\d{1,3}){3}\b"),)),
    # the GitHub API's quota of a token spent ("API rate limit exceeded for installation ID 7125406", "… for
    # user ID N", the secondary limit's "You have exceeded a secondary rate limit"): many jobs calling the API at
    # once; the quota resets within the hour, so a retry later — no commit is to blame
    ("api-rate-limit", ("API rate limit exceeded for ", "exceeded a secondary rate limit")),
    # a TLS certificate the client does not trust (a TLS-intercepting proxy's, a self-signed one): the
    # machine's trust store or the proxy's CA — no retry fixes it; before "network", which retries
    # (rustls, under uv, cargo and reqwest, says it as "invalid peer certificate: UnknownIssuer")
    ("tls", ("CERTIFICATE_VERIFY_FAILED", "SSL certificate problem", "invalid peer certificate")),
    # a package mirror that served an index or archive whose checksum is not the one its index names (a
    # mirror in the middle of a sync, a stale CDN cache): apt's "Hash Sum mismatch", dnf's (librepo's)
    # "Downloading successful, but checksum doesn't match"; a retry or another mirror — no commit is to
    # blame, and the line apt ends with ("E: Some index files failed to download", the hash list) is weak
    # — in apt's and librepo's own words only: "hash sum mismatch" or "checksum doesn't match" in a
    # test's assertion is the test's (the runner and bisection search whole outputs, case-insensitively)
    # (apt's ends its line: "E: Failed to fetch <url>  Hash Sum mismatch", at most an "[IP: …]" after it)
    ("package-mirror", (_own_form("Hash Sum mismatch", r"(?m)Hash Sum mismatch[ \t\r]*(?:\[IP:[^\n]*)?$"),
                        "Downloading successful, but checksum doesn't match")),
    # pip's hash check failing on a download (``ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE
    # REQUIREMENTS FILE``, then "Expected sha256 … Got …"): a large wheel whose download was cut, or a
    # cached partial file, hashes to something else than the index names; downloading again without the
    # cache fixes it — another fix than a mirror's, so its own kind. (A requirements file whose pinned
    # hash a change left stale reads the same; it fails on every attempt, where a cut download passes
    # on a retry: so the runner and bisection retry it, and one that persists is the change's —
    # :data:`PERSISTING_IS_THE_CHANGE`)
    ("download-corrupt", ("THESE PACKAGES DO NOT MATCH THE HASHES",)),
    # a git fetch or clone whose connection broke in the middle of the pack (git's "fatal: early EOF",
    # "RPC failed; curl 92 HTTP/2 stream … was not closed cleanly", "unexpected disconnect while reading
    # sideband packet"): the git server or the network between, a retry; its own kind because the labels
    # call it apart from DNS and a refused connection, and before "network", whose "Connection reset by
    # peer" curl's line may hold
    ("git-transfer", ("fatal: early EOF", "unexpected disconnect while reading sideband packet",
                      ("RPC failed; curl ", r"RPC failed; curl \d+"))),
    # a cloud service that throttles its callers: S3's "SlowDown" error code (HTTP "503 Slow Down", "Please
    # reduce your request rate"), DynamoDB's and the AWS APIs' "ThrottlingException", "RequestLimitExceeded",
    # "TooManyRequestsException", Google APIs' (GCS's) "rateLimitExceeded", Azure Storage's "ServerBusy": the
    # service's own words that it is over its request rate, whatever client prints them (botocore, the AWS SDK
    # for JavaScript, curl, urllib). Many jobs at once or a hot prefix; a retry with back-off — no commit is to
    # blame. Before "network", whose "HTTP Error 50" urllib's "HTTP Error 503: Slow Down" holds
    # S3's two are checked in S3's own form and capitals — an error code in "(SlowDown)", "<Code>SlowDown<",
    # "Error Code: SlowDown", "SlowDown: UnknownError", the status "503 Slow Down" —: a perf test's "slowdown" is what L2 bisects
    ("service-throttled", (_own_form("SlowDown", r"(?:[(>]|Error Code: )SlowDown\b|SlowDown: \w*Error\b"),
                           _own_form("Slow Down", r"\b503\W{1,3}Slow Down\b"), "reduce your request rate",
                           "ThrottlingException",
                           "RequestLimitExceeded", "TooManyRequestsException", "rateLimitExceeded",
                           # Azure Storage's error code, as its clients print it
                           _own_form("ServerBusy", r"(?:ErrorCode:\s*|<Code>)ServerBusy\b"))),
    # the CI's cache service (GitHub Actions' cache, @actions/cache and every action built on it) down or
    # not answering: "getCacheEntry failed", "Cache service responded with 503", a request to its endpoints
    # timing out (the REST "_apis/artifactcache", the twirp "CacheService/CreateCacheEntry"): the platform's
    # service, a retry later
    ("ci-cache-service", ("getCacheEntry failed", "Cache service responded with", "_apis/artifactcache",
                          "CacheService/", "reserveCache failed")),
    # a cache key another job holds reserved (@actions/cache: "Unable to reserve cache with key X, another job
    # may be creating this cache"): concurrent jobs saving one key, or a reservation left by a cancelled job;
    # the workflow's keys or a wait, no commit is to blame — another fix than the service's outage
    ("ci-cache-reserved", ("Unable to reserve cache with key", "another job may be creating this cache")),
    # a compiler cache's server that did not start (sccache: "Server startup failed: Address already in use",
    # "Timed out waiting for server startup"): its clients auto-start one server, and a parallel build starts
    # many at once; starting it before the build fixes it, no commit is to blame. sccache's start-up check of
    # its storage ("Server startup failed: cache storage failed to read: …") is not this kind: the storage's
    # own error after it names the cause (a DNS failure, a key the bucket refuses), and a refusal is often the
    # configuration's, not the machine's
    # — after sccache's own "sccache: error: " (the same words are any server's)
    ("compiler-cache", (_own_form("sccache: error: Timed out", r"sccache: error: Timed out waiting for server startup"),
                        ("sccache: error: Server startup failed", r"sccache: error: Server startup failed",
                         lambda rest: rest.startswith("sccache: error: Server startup failed")
                         and "cache storage" not in rest))),
    ("network", ("Connection reset by peer", "Connection refused", "Could not resolve host",
                 "Temporary failure in name resolution", "Name or service not known", "getaddrinfo failed",
                 "Read timed out",
                 # Go's HTTP client that gave up waiting ("net/http: request canceled (Client.Timeout exceeded
                 # while awaiting headers)": docker's and containerd's pulls, gh, terraform) — a read timeout
                 # in Go's words
                 "Client.Timeout exceeded",
                 "Network is unreachable", "TLS handshake timeout", "RemoteDisconnected",
                 # Python's http.client when the server closed the connection before answering (the message of
                 # its RemoteDisconnected, often printed without the class), Rust's std and hyper's name lookup
                 # failing ("failed to lookup address information: Try again": getaddrinfo's EAI_AGAIN), docker's
                 # registry client's "Network timed out while trying to connect", and a container registry's ping
                 # (podman, buildah, skopeo, cri-o: "pinging container registry quay.io: Get …: context canceled")
                 # that got no answer — the general words of a connection that failed, whatever the tool
                 "Remote end closed connection without response", "failed to lookup address information",
                 "Network timed out",
                 ("pinging container registry",
                  r"pinging container registry \S+: .*(?:context canceled|i/o timeout|deadline exceeded|EOF)"),
                 "HTTP Error 50", "503 Service Unavailable", "502 Bad Gateway", "504 Gateway Time",
                 # also urllib3's connect timeout, which names the host (pip's MaxRetryError: "Connection
                 # to files.pythonhosted.org timed out. (connect timeout=15)"), beside its ReadTimeoutError
                 ("timed out", r"Connection (?:to [^\s'\"]+ )?timed out"))),
    # pip that found no version at all (the index unreachable, or nothing published for the
    # platform); a requirement that excludes every published version (``(from versions: 3.2.0,
    # 3.3.0)``) is the change's pin, not the infrastructure, and pip's next line ("No matching
    # distribution found") says the same of both
    ("toolchain-download", ("Failed to download", "Could not download", "error downloading", "download_and_copy",
                            ("Could not find a version that satisfies", r"Could not find a version that satisfies",
                             _no_version_published),
                            ("curl: (", r"curl: \(\d+\)"))),
    # the job's pod or machine taken away by its scheduler: Kubernetes' kubelet evicting a pod under node
    # pressure ("The node was low on resource: ephemeral-storage.", "The node had condition: [DiskPressure]",
    # the pod's "reason: Evicted", the event "Warning  Evicted"), a higher-priority pod preempting it
    # ("Preempted by <ns>/<pod> on node <n>"), Slurm's "CANCELLED … DUE TO PREEMPTION", a cloud's spot or
    # preemptible machine reclaimed ("Instance was preempted"). The node's resources or the pod's requests,
    # never the change; in the scheduler's general words, which every CI on Kubernetes (actions-runner-
    # controller, Jenkins' kubernetes plugin, GitLab's runner, Tekton) prints or quotes
    # (each in its own form and capitals: the pod's status line "reason: Evicted" alone on its line, the
    # operator's "Reason: Evicted, Message: …", Slurm's whole "CANCELLED AT <time> DUE TO PREEMPTION", the
    # cloud's "Instance was preempted." ending its line — "due to preemption" in a perf test's words is the test's)
    ("evicted", ("The node was low on resource", "The node had condition",
                 _own_form("reason: Evicted", r"(?m)reason: Evicted[ \t]*$"),
                 _own_form("Reason: Evicted, Message:", r"Reason: Evicted, Message:"),
                 ("Evicted", r"\bWarning\s+Evicted\b"), ("Preempted by", r"Preempted by \S+/\S+ on node"),
                 _own_form("DUE TO PREEMPTION", r"CANCELLED AT \S+ DUE TO PREEMPTION"),
                 _own_form("Instance was preempted", r"(?m)Instance was preempted\.?[ \t]*$"))),
    # (strerror's words capitalised by C libraries and .NET, in lower case by Go's and buildkit's errors)
    ("disk-full", ("No space left on device", "no space left on device", "Disk quota exceeded", "ENOSPC")),
    # (gcc's driver reports its compiler killed by a signal as "fatal error: Killed signal terminated
    # program cc1plus" and, in older releases, "internal compiler error: Killed (program cc1plus)")
    ("oom-kill", ("Out of memory: Killed process", "OOMKilled", "oom-kill", "SIGKILL", "Killed signal terminated",
                  "Cannot allocate memory",
                  ("137", r"(?:exit code|exited with|Error) 137\b"), ("signal 9", r"signal 9\b"),
                  ("Killed", r"(?m)(?:^|[\s\]])Killed[ \t]*$|internal compiler error: Killed \(program"))),
    # (GitHub prints "The operation was canceled." after any cancelled step — the runner's shutdown, a
    # job's time limit, a test's own watchdog —: it names no cause alone, so it is no phrase here)
    ("runner-lost", ("The runner has received a shutdown signal", "lost communication with the server",
                     "Job was cancelled", "timed out waiting for runner")),
    # a job that ran into the CI's limit on its duration (GitHub Actions: "The job running on runner X
    # has exceeded the maximum execution time of 360 minutes."): the platform ended it
    ("time-limit", ("exceeded the maximum execution time",)),
)


#: kinds whose words a change can cause as well as the machine (pip's hash check: a cut download or
#: a pin the change left stale): retried like any infrastructure fault, but one that fails every
#: attempt is the change's — the runner reports the run's own failure, bisection blames the step
PERSISTING_IS_THE_CHANGE = frozenset({"download-corrupt"})


def _compiled(p):
    if isinstance(p, str):
        return None
    return re.compile(p[1]) if len(p) == 2 else CheckedPattern(p[1], p[2])


#: every phrase as ``(kind, literal anchor, compiled regex, a CheckedPattern, or None)``, in table order
PHRASES = _INFRA = tuple((kind, p if isinstance(p, str) else p[0], _compiled(p))
                         for kind, phrases in INFRA_PATTERNS for p in phrases)


#: substrings one of which every anchor holds (each checked once instead of 57 anchors: most lines
#: hold none, and then no anchor can be there). An anchor no key covers is added as its own key.
_GATE_KEYS = ("able", "down", "lled", "onnect", "Could", "Gateway", "NVIDIA", "match", "timed", "serv",
              "CERTIFICATE", "compatib", "insufficient", "unsupported", "resolution", "Proxy", "initialize",
              "handshake", "cancel", "exceeded", "oom-kill", "another", "SIGKILL", "drivers", "ENOSPC",
              "lease", "space", "curl:", "HTTP", "busy", "137", "signal", "memory")
_ANCHORS = tuple(anchor for _, anchor, _ in _INFRA)
_GATE = _GATE_KEYS + tuple(a for a in _ANCHORS if not any(k in a for k in _GATE_KEYS))
_BY_ANCHOR = {anchor: (kind, rx) for kind, anchor, rx in _INFRA}
if len(_BY_ANCHOR) != len(_INFRA):
    raise ValueError("bot/triage/infra.py INFRA_PATTERNS: a phrase (or a regex's anchor) is listed twice; "
                     "list each once, under the kind it names")
#: each gate key with the anchors it is the first key of, as (table index, anchor, kind, regex):
#: an anchor in a text puts its first key there too, so the anchors under the keys a short text
#: holds are all the anchors it can hold
_UNDER_KEY = tuple((key, tuple((i, a, kind, rx) for i, (kind, a, rx) in enumerate(_INFRA)
                               if next(k for k in _GATE if k in a) == key))
                   for key in _GATE)


def infra_hit(text: str) -> tuple[str, int] | None:
    """``(kind, offset of the phrase)`` of the first :data:`INFRA_PATTERNS` phrase in ``text``
    (in the table's order), or None. The common case (no phrase at all) is settled by the gate
    keys (on a line or a short text: a long log holds some key too often to gain from them); a hit
    is looked up afterwards."""
    if len(text) <= 4096:
        # the first phrase in table order among the anchors under the keys present (each anchor
        # tried only where its key is: a line holding "memory" tries the few memory phrases)
        best = None
        for key, under in _UNDER_KEY:
            if key in text:
                for i, anchor, kind, rx in under:
                    if best is not None and i >= best[0]:
                        break
                    if anchor in text:
                        if rx is None:
                            best = (i, kind, text.find(anchor))
                            break
                        m = rx.search(text)
                        if m:
                            best = (i, kind, m.start())
                            break
        return None if best is None else (best[1], best[2])
    for anchor in _ANCHORS:
        if anchor in text:
            kind, rx = _BY_ANCHOR[anchor]
            hit = anchor_hit(text, kind, anchor, rx)
            if hit:
                return hit
    return None


def anchor_hit(text: str, kind: str, anchor: str, rx) -> tuple[str, int] | None:
    """``(kind, offset)`` of one table phrase whose ``anchor`` is in ``text``: the anchor's
    offset, or where its regex ``rx`` matches (None when it does not)."""
    if rx is None:
        return kind, text.find(anchor)
    m = rx.search(text)
    return (kind, m.start()) if m else None


def infra_kind(text: str) -> str | None:
    """The infrastructure kind named in ``text`` (see :data:`INFRA_PATTERNS`), or None."""
    hit = infra_hit(text)
    return hit[0] if hit else None




def _phrase_rx(p) -> str:
    return re.escape(p) if isinstance(p, str) else p[1].replace("(?m)", "")


#: every phrase in one case-insensitive alternation, a named group per phrase (index in
#: :data:`PHRASES`), for whole outputs
_ANY = re.compile("|".join(f"(?P<p{j}>{_phrase_rx(p)})" for j, p in enumerate(p for _, ps in INFRA_PATTERNS for p in ps)),
                  re.IGNORECASE | re.MULTILINE)
#: each phrase of :data:`_ANY` alone (index in :data:`PHRASES`): the alternation reports the first
#: phrase that matches at a place, and where that one's check fails a later one may match there too
_EACH = tuple(re.compile(_phrase_rx(p), re.IGNORECASE | re.MULTILINE) for _, ps in INFRA_PATTERNS for p in ps)


def _checked_at(text: str, at: int, first: int) -> tuple[str, int] | None:
    """``(kind, end)`` of the first phrase from index ``first`` on (:data:`PHRASES` order, as the
    alternation tries them) that matches ``text`` at ``at`` and whose check, if it has one, holds."""
    rest = _rest_of_line(text, at)
    for j in range(first, len(_EACH)):
        m = _EACH[j].match(text, at)
        if m:
            kind, _, rx = PHRASES[j]
            if not isinstance(rx, CheckedPattern) or rx.check(rest):
                return kind, m.end()
    return None


def infra_match(text: str) -> tuple[str, str] | None:
    """``(kind, the line holding the phrase)`` of the first :data:`INFRA_PATTERNS` phrase in
    ``text`` (case-insensitive, anywhere in a whole output; a phrase with a check only where it
    holds), or None. The runner retries an attempt on it and bisection skips a step on it; triage
    looks only at a failure's chosen line (:func:`infra_hit`), so a concrete compiler error
    elsewhere in a log always wins there."""
    text = text or ""
    pos = 0
    while True:
        m = _ANY.search(text, pos)
        if not m:
            return None
        hit = _checked_at(text, m.start(), int(m.lastgroup[1:]))
        if hit:
            kind, stop = hit
            break
        pos = m.start() + 1
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", stop)
    return kind, text[start:end if end >= 0 else len(text)].strip()[:300]
