"""Error signatures: the pure core of nightly triage (no I/O, no clocks).

A failure's raw output (pytest report, traceback, lit output, CI log) becomes a
:class:`Signature` ``(stage, type, masked primary line[, test])``:

1. **Primary error.** An ordered list of extractors (:data:`EXTRACTORS`, in
   :mod:`bot.triage.extractors`) is tried, most specific
   first; the first that finds something wins:
   C++ assertion › ``LLVM ERROR`` › MLIR pass failure › FileCheck › MLIR ``error:`` › ``ptxas`` ›
   CUDA/HIP runtime error › C/C++ compiler or linker diagnostic › fatal signal › pytest's report of a plain ``assert``
   (``E       assert …``) › Python exception (the root cause of a triton ``CompilationError``;
   a message that starts on the next ``E`` line, as numpy's ``assert_allclose`` writes it, is
   read there) › pytest ``FAILED … - Exc: msg`` › nvidia-container-cli's CUDA requirement › infrastructure phrase ›
   ``exit code N`` (never alone: the test or job is added to the signature).
   Each extractor has a cheap substring prefilter so a log is searched only for what it holds.
2. **Prefixes** (:mod:`bot.triage.normalize`: ANSI colours, CI timestamps, containerd ``stderr F``, glog ``I1130 …] ``, Ray
   ``(pid=…)``, vLLM ``ERROR 01-28 …] ``, pytest ``E   ``, lit ``# | ``) are stripped from the
   chosen line.
3. **Masking** (:func:`mask`) replaces only what varies between occurrences of one fault:
   directories (basenames stay), temp names, long hex and random ids, pids, timestamps,
   sizes after labels (``Required:``, ``Tried to allocate``, ``Mismatched elements:`` …),
   source positions, floats, and which device, pytest-xdist worker, block or thread reported
   the fault (``cuda:3``, ``gw3``, a device-side assertion's ``block: [3,0,0]``). Digits that
   tell faults apart stay: ``sm_80``/``sm_90``, ``gfx942``, register counts, dtypes, tensor
   shapes, small integers.

Numeric mismatches (``Tensor-likes are not close``, ``Mismatched elements``, ``not close``,
numpy's ``Not equal to tolerance``) add the test identity: one numeric message says nothing about
where the numbers went wrong (the same holds for FileCheck failures, fatal signals, bare exit
codes and a plain ``assert``, whose message is the test's own expression).

Infrastructure (:mod:`bot.triage.infra`) is canonical: ``("setup", "Infrastructure", <kind>)``,
looked for in the chosen line, and in the log's tail only when the chosen line is weak (an exit
code, nothing recognisable): a concrete compiler or numeric error always wins.

Source of the formats: real texts from public Triton/PyTorch issues and the H200 runs noted in
``../shared/notes/runtime-facts.md``; the labelled set in ``tests/data/triage/``.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from bot.agents.redact import redact
from bot.triage.canonical import canonical, fold_runtime_case, http_status_line, is_generic
from bot.triage.extractors import EXTRACTORS, TAKES_PRESENT, TRUNCATED, innermost_frame
from bot.triage.extractors import infra_line as _infra_line
from bot.triage.infra import INFRA_PATTERNS, infra_kind
from bot.triage.normalize import clean_text, mask, strip_prefixes
from bot.triage.scan import SCAN_MAX, extractor_bits, infra_hit_of, infra_in, scan
from bot.triage.scan import infra_kind as scan_infra_kind

__all__ = ["Signature", "signature_of", "mask", "strip_prefixes", "clean_text", "EXTRACTORS",
           "CRASH_RULES", "INFRA_PATTERNS", "infra_kind", "identity", "locate", "SIGNATURE_VERSION"]

#: extractor names whose signatures are crashes (an issue opens on the first occurrence).
CRASH_RULES = frozenset({"assertion", "llvm", "signal"})


#: Version of the signature rules. An issue filed under an older version is found by its marker
#: and re-keyed (its old identity kept as an alias), never filed twice: see
#: :func:`bot.triage.lifecycle.rekey`.
SIGNATURE_VERSION = 13
# 4: C/C++ compiler and linker diagnostics (a missing header or library is one identity across
# compilers, and triton's ``libcuda.so cannot found`` is the missing library ``cuda``), the C
# compiler's ``CalledProcessError`` generic, HIP errors by name (``hipErrorNoBinaryForGpu: …``),
# zsh's signal lines, a ptxas feature by its data type, MLIR pass names and assertions on wrapped lines
# 5: names without their volatile parts and one check in every wording: an extension's Python/ABI
# tag masked, the dynamic loader's ``undefined symbol`` by library and symbol, ``cannot import name
# 'X' from 'pkg…'`` by name and top-level package, ``No module named 'X'`` however reported, a
# CUDA/HIP runtime message's capital folded, a wrapper's own sentence before the exception it wraps
# (``No valid triton configs. PTXASError: …``), ``ptxas-blackwell``, a message on the line after
# ``Type:``, torch's driver check, and triton's ``tl.dot`` size and fp8 type checks in each release's words
# 6: a library's warning that names its cause where no error is in the text (xFormers built for another
# or a CUDA torch under a CPU one; torch's GPU-capability warning, also over the ``no kernel image`` error it
# announces), the Windows loader's message by its English words, a mangled C++ symbol by the function it
# names (a report cuts its parameters), and a pip requirement that excludes every published version
# no longer infrastructure
# 7: syslog's ``Dec 03 17:59:26`` prefix stripped, nvcc's own diagnostics read (one identity per GPU generation),
# a closing quote kept, ``module 'X' has no attribute 'Y'`` however reported, ``device kernel image is invalid``
# generic (and HIP's ``Code: N, Messsage: …`` generic lines matched without their comma), a temporary file named
# after the file it replaces masked and an OSError's rename target out of its identity, a redacted user name a
# path segment, an HTTP error status by code, reason and host; gcc's ``internal compiler error: Killed`` and
# urllib3's ``ConnectTimeoutError`` infrastructure
# 8: Level Zero's results by name and generic, Intel's ``loadBinary`` line, an HTTP proxy its own infrastructure
# kind, ``pyconfig.h`` as Python's headers, LLVM's unknown processor as a warning
# 9: Docker Hub's pull limit (``toomanyrequests``) its own infrastructure kind, a lower-case ``no space left on
# device``, GitHub's job time limit infrastructure and ``The operation was canceled`` alone no cause, conda's
# ``HTTP 000`` weak (the cause after it decides; alone, infrastructure), ``getaddrinfo failed`` the network,
# uv's ``HTTP status … error (N …) for url (…)`` an HTTP status, a Unified Runtime code kept (generic), the
# loader's ``version 'GLIBCXX_…' not found`` one identity bare or in an ImportError
# 10: a package mirror's checksum (apt's ``Hash Sum mismatch``), a git transfer cut off (``early EOF``, ``RPC
# failed; curl N``) and rustls' ``invalid peer certificate`` infrastructure; a 5xx one identity per service's
# domain (``HTTP 5xx Server Error from huggingface.co``), any other status with RFC 9110's reason; a status
# read in pip's, the tool cache's and huggingface_hub's words, its host from the text when the line names none;
# a download's failure yields to the HTTP status under it; Maven's ``Failed to execute goal`` weak; a job's
# time limit one per test or job
# 11: pip's hash check on a download (``THESE PACKAGES DO NOT MATCH THE HASHES``) and the GitHub API's rate limits
# (a token's quota spent; a call without a token, limited by the runner's address) infrastructure kinds, NVML's
# mismatch in nvidia-container-cli's lower case the driver's, Go's ``Client.Timeout exceeded`` the network's; a
# registry's status in Go's words (``received unexpected HTTP status: 503 …``) an HTTP status of the registry's
# domain (the request's host, else the image pulled) before the network's status phrase; a weak line yields to an
# HTTP status printed above it; nvidia-container-cli's ``unsatisfied condition: cuda>=X`` one real identity
# 12: a GPU lost (fallen off the bus, Xid 79, ``GPU is lost``), a pod evicted or preempted, a cloud service throttling
# (S3's ``SlowDown``), the CI's cache service down and a cache key held, and a compiler cache's server that did not
# start infrastructure kinds; the driver's ECC Xids the ECC error's; Rust's name lookup, http.client's closed
# connection and a registry's ping the network's; ccache's temporary file one identity per OS error; an
# unrecognised last line yields to an HTTP status above it
# 13: pytest-timeout's ``Failed: Timeout (>Ns) from pytest-timeout`` (and the words before 2.2) pytest's own
# outcome, the test joining its identity in the failure section and in the short summary alike; an HTTP status's
# host without the URL's user info (``user:token@host``); a summary line's message that starts on the next line
# read there, as in the failure section


@dataclass(frozen=True, slots=True)
class Signature:
    """The identity of one fault's symptom.

    ``stage``: compile | run | check | lit | setup | test | job (where it surfaced: shown, not part
    of the identity — the same line in a compile step and in a test is one fault);
    ``type``: the exception/error kind (``OutOfResources``, ``LLVM ERROR``, ``CUDAError``, ``SIGSEGV``…);
    ``line``: the masked primary line (canonical for the faults in
    :data:`bot.triage.canonical.CANONICAL`); ``ident``: what of the line makes the identity (its
    first sentence, without list punctuation or a repeat counter);
    ``generic``: the line says only *that* something failed (a fatal signal, a numeric mismatch,
    an illegal address, an exception without a message…): the test joins the identity, or without
    one ``where`` (the innermost frame, else a digest of the text), so two faults are never merged
    by a generic line; ``test``: the normalized test id, set only on generic signatures;
    ``partial``: the line is only the start of the message (pytest's summary cut at the terminal
    width): :class:`bot.triage.group.Grouper` joins it to the one full signature it starts;
    ``rule``: the extractor that chose the line; ``raw``: the primary line before masking.
    """

    stage: str
    type: str
    line: str
    test: str = ""
    rule: str = ""
    raw: str = ""
    ident: str = ""
    generic: bool = False
    partial: bool = False
    where: str = ""

    @property
    def text(self) -> str:
        """What rules-table patterns are matched against: ``"<type>: <line>"``."""
        return f"{self.type}: {self.line}"

    @property
    def key(self) -> str:
        k = f"{self.type}|{self.ident or self.line}"
        if self.generic:
            return f"{k}|{self.test or self.where}"
        return f"{k}|{self.test}" if self.test else k

    @property
    def digest(self) -> str:
        """12 hex of sha1(key): a short, stable name for an unmatched signature."""
        return hashlib.sha1(self.key.encode()).hexdigest()[:12]

    @property
    def crash(self) -> bool:
        return self.rule in CRASH_RULES

    def to_dict(self) -> dict:
        return {"stage": self.stage, "type": self.type, "line": self.line, "test": self.test,
                "rule": self.rule, "key": self.key}


_FIELDS = ("stage", "type", "line", "test", "rule", "raw", "ident", "generic", "partial", "where")


class _Unfrozen:
    """The slots of :class:`Signature` in the same order without its frozen ``__setattr__``: an
    instance is filled with plain attribute stores, then becomes a ``Signature`` by ``__class__``
    assignment (allowed between classes of one layout)."""

    __slots__ = _FIELDS

    def __init__(self, stage, typ, line, test, rule, raw, ident, generic, partial, where):
        self.stage = stage
        self.type = typ
        self.line = line
        self.test = test
        self.rule = rule
        self.raw = raw
        self.ident = ident
        self.generic = generic
        self.partial = partial
        self.where = where


if Signature.__slots__ != _FIELDS:
    raise TypeError("bot/triage/signature.py: _FIELDS must list Signature's fields in their order")


def _signature(stage, typ, line, test, rule, raw, ident, generic, partial, where) -> Signature:
    """``Signature(…)`` (fields in :data:`_FIELDS` order) without the frozen dataclass's
    ``__init__`` (an ``object.__setattr__`` per field): the same object, built in a third of the time."""
    s = _Unfrozen(stage, typ, line, test, rule, raw, ident, generic, partial, where)
    s.__class__ = Signature
    return s


_INFRA_TAIL = 16_384
_ALL_EXTRACTORS = (1 << len(EXTRACTORS)) - 1
# (a plain assert's message is the test's own expression, evaluated: it names no place)
_NEEDS_TEST = frozenset({"filecheck", "exit", "unknown", "signal", "pytest-outcome", "pytest-setup", "pytest-assert"})
#: extractors whose line is too weak to rule out an infrastructure cause named elsewhere
_WEAK = frozenset({"exit", "unknown", "infra"})
#: extractors that name a concrete compiler fault: a concrete error always wins over infrastructure
_NEVER_INFRA = frozenset({"assertion", "llvm", "mlir-pass", "filecheck", "mlir", "ptxas", "pytest-outcome"})
#: conda's status when no HTTP answer came (``CondaHTTPError: HTTP 000 CONNECTION FAILED for url <…>``):
#: the cause is printed after it (``ConnectionError(…[Errno -3] Temporary failure in name resolution…)``,
#: a ``ProxyError``), so the line is weak, as an exit code is
_NO_ANSWER = "HTTP 000 "
#: Maven's wrapper around any plugin's failure ("Failed to execute goal <plugin> … on project <p>: <cause>"):
#: it names the plugin and the project, not the fault, so the line is weak and a cause printed beside it
#: decides (jib's registry answer ``TOOMANYREQUESTS`` over its ``429 Too Many Requests``)
_MAVEN_GOAL = "Failed to execute goal "
#: the infrastructure kind that says only that a download failed: the HTTP status printed under it (uv's
#: "Caused by: HTTP status server error (500 …) for url (…)") names the service that failed
_DOWNLOAD = "toolchain-download"
#: infrastructure kinds that name no cause alone (as a fatal signal does not): the CI's time limit ends a
#: hung test, a slow build or a stuck download alike — one per test or job (the labelled sets' rule for a
#: generic line). The OOM killer stays one kind, as the network does: the labelled set calls every OOM kill
#: one fault (the machine's memory), ``fresh7.jsonl`` one per report, and a split would lower the former's recall
_NO_CAUSE_KINDS = frozenset({"time-limit"})
#: a URL's host, for a status line that names none (the last one the text printed before the status)
_URL_HOST = re.compile(r"https?://([^/\s'\"()<>]+)")
#: the infrastructure kinds some of whose phrases are an HTTP status's words (``503 Service Unavailable``,
#: ``502 Bad Gateway``): a line that a canonical entry reads as a status is the status instead
_STATUS_KINDS = frozenset({"network"})
#: an image docker pulls (``docker pull ghcr.io/org/image:tag``): its registry is the service a pull's status
#: line speaks of when the line names no URL
_DOCKER_PULL = re.compile(r"docker pull (?:--?[\w-]+(?:[ =]\S+)? )*([^\s'\"]+)")
#: a cut-off line shorter than this names nothing on its own
_MIN_PARTIAL = 16
_REPEAT = re.compile(r"\s*\((?:×|x)\d+\)\s*$")


def identity(line: str) -> str:
    """What of a masked line makes the identity: its first sentence when that has three words or
    more (advice and details follow it: "Reducing block sizes … may help"), an OSError's first file
    name only (``[Errno 2] … 'a' -> 'b'`` is ``… 'a'``), without commas,
    semicolons or a trailing repeat counter (``(×5)``), backticks as quotes, blanks collapsed."""
    if line.endswith(")") and ("(×" in line or "(x" in line):
        line = _REPEAT.sub("", line)
    i = line.find(". ")
    if i > 0 and line.count(" ", 0, i) >= 2:
        line = line[:i]
    if line.startswith("[Errno ") and "' -> '" in line:
        # Python's OSError of a rename or copy names both files ("… directory: 'a' -> 'b'"): the
        # first is the one that failed, the second where it was going
        line = line[:line.index("' -> '") + 1]
    if "," in line or ";" in line or "`" in line:
        # (three replace passes: str.translate looks every character up in its table)
        line = " ".join(line.replace(",", " ").replace(";", " ").replace("`", "'").split())
    return line.rstrip(" .:")


_VOLATILE = re.compile(r"0x[0-9a-fA-F]+|\d+|tmp\w+")


def locate(text: str) -> str:
    """Where a generic failure happened when no test is known: the innermost frame, else a
    digest of the text's last 2,000 characters without numbers, addresses and temp names —
    identical outputs meet, different ones do not."""
    f = innermost_frame(text)
    if f:
        return f
    tail = _VOLATILE.sub("", text[-2000:].rstrip())
    return "text:" + hashlib.sha1(tail.encode()).hexdigest()[:10]


def signature_of(text: str, test: str = "", locate_generic: bool = True) -> Signature:
    """The signature of one raw failure output. ``test`` is the normalized test id (it joins only
    generic signatures, see :class:`Signature`); without one, a generic signature's ``where`` is
    :func:`locate` of the text (``locate_generic=False`` leaves it empty, for a caller that adds
    the test or the place itself). Never raises: an output with no recognisable error gets type
    ``Unknown`` and its last non-empty line."""
    text = clean_text(text)
    if len(text) <= SCAN_MAX:
        # one automaton pass answers every prefilter, and which infrastructure anchors the text
        # holds (``anchors``: their table indices)
        lits = scan(text, overlapping=True)
        bits = extractor_bits(lits)
        anchors = infra_in(lits)
    else:       # a long log: each prefilter's ``in`` test, which stops at its first occurrence
        bits = _ALL_EXTRACTORS
        anchors = None
    no_infra = False        # the infra extractor read the whole text and found no phrase
    while bits:
        low = bits & -bits
        bits ^= low
        name, pre, fn = EXTRACTORS[low.bit_length() - 1]
        if anchors is None:
            for p in pre:
                if p in text:
                    break
            else:
                continue
            found = fn(text)
        elif name == "infra":
            hit = infra_hit_of(text, anchors)
            found = None if hit is None else _infra_line(text, hit[1])
        elif name in TAKES_PRESENT:
            found = fn(text, set(lits))
        else:
            found = fn(text)
        if found is None:
            if name == "infra":
                no_infra = True
            continue
        typ, raw, stage = found
        partial = raw.endswith(TRUNCATED)
        if partial:
            raw = raw[:-1].rstrip()
        elif raw.endswith("..."):       # an elided message: only its start is known
            partial, raw = True, raw[:-3].rstrip()
        # the primary line becomes the key, the title and its signature row: a secret in
        # it (a token in a URL the test fetched) is replaced by its kind, so that it reaches no
        # issue or prompt, and a rotated token does not split one root cause
        raw = redact(strip_prefixes(raw))
        if name not in _NEVER_INFRA and stage != "check":
            weak = (name in _WEAK or (name == "pytest" and typ == "PytestFailure")
                    or (typ == "CondaHTTPError" and _NO_ANSWER in raw) or _MAVEN_GOAL in raw)
            # a weak line: look for an infrastructure phrase in the log's tail (where a job's
            # last words are; bounded so a long log stays cheap)
            if anchors is not None and not anchors and raw in text:
                kind = None         # a part of a text that holds no anchor holds none either
            else:
                kind = scan_infra_kind(raw)
            if kind is None and weak:
                if anchors is not None:     # the tail is the whole text: its anchors are known
                    hit = infra_hit_of(text, anchors)
                    kind = hit[0] if hit else None
                elif not (no_infra and len(text) <= _INFRA_TAIL):
                    # (a tail that is the whole text, already read by the infra extractor, holds none)
                    kind = infra_kind(text[-_INFRA_TAIL:])
            if kind in _STATUS_KINDS:
                # the network's phrase is an HTTP status's words ("503 Service Unavailable") in a line that
                # is a status a canonical entry reads (docker's "received unexpected HTTP status: 503 Service
                # Unavailable"): the status names the service that failed, the phrase only that one did
                found = canonical(typ, raw)
                if found is not None and found[0] == "HTTPError":
                    kind, weak = None, False
            if kind is None and weak and name != "infra":
                # a weak line (an exit code, an unrecognised last line) yields to an HTTP status the text
                # printed above it (docker's pull ends "Docker pull failed with exit code 1" under its
                # registry's "received unexpected HTTP status: 500 Internal Server Error")
                status = _status_under(text)
                if status is not None:
                    return status
            if kind:
                if kind == _DOWNLOAD:
                    status = _status_under(text)
                    if status is not None:
                        return status
                if kind in _NO_CAUSE_KINDS:
                    return _signature("setup", "Infrastructure", kind, test, "infra", raw, kind, True, False,
                                      locate(text) if not test and locate_generic else "")
                return _signature("setup", "Infrastructure", kind, "", "infra", raw, kind, False, False, "")
        canon = canonical(typ, raw)
        if canon is not None:
            typ, line = canon
            if typ == "HTTPError" and " from " not in line:
                line = _with_host(line, text, raw)
            partial = False
        else:
            line = mask(raw)
            if name == "python" and stage == "check":
                line = _numeric_line(line)
        ident = identity(line)
        if name == "cuda":
            ident = fold_runtime_case(typ, ident)
        generic = (name in _NEEDS_TEST or stage == "check" or is_generic(typ, ident)
                   or (partial and len(ident) < _MIN_PARTIAL))
        where = locate(text) if generic and not test and locate_generic else ""
        return _signature(stage, typ, line, test if generic else "", name, raw, ident, generic, partial, where)
    lines = [line for line in (strip_prefixes(x) for x in text.split("\n")[-20:]) if line]
    found = lines[-1] if lines else ""
    # redacted before anything is made of it (its key, its title, a suggested rule), as an extractor's
    # line is: git's "Authentication failed for 'https://x-access-token:<token>@…'", a bare bearer token
    raw = redact(found)
    canon = canonical("Unknown", raw)
    if canon is not None:       # a known fault in words no extractor recognises (a title, a prose line)
        if canon[0] == "HTTPError" and " from " not in canon[1]:
            canon = (canon[0], _with_host(canon[1], text, found))
        ident = identity(canon[1])
        generic = is_generic(canon[0], ident)
        return _signature("job", canon[0], canon[1], test if generic else "", "unknown", raw, ident, generic,
                          False, locate(text) if generic and not test and locate_generic else "")
    # an unrecognised last line is weak, as an exit code is: an HTTP status the text printed above it names the
    # service that failed (Cloud Build's "Step #4: ResumableUploadException: 503 Server Error" then "Finished
    # Step #4")
    status = _status_under(text)
    if status is not None:
        return status
    line = mask(raw)
    ident = identity(line)
    # an unrecognised text is generic: its identity also needs the test or where it failed
    return _signature("job", "Unknown", line, test, "unknown", raw, ident, True, False,
                      locate(text) if not test and locate_generic else "")


def _with_host(line: str, text: str, raw: str) -> str:
    """A canonical HTTP status ``line`` that names no host, with the host of the last URL ``text`` printed
    before ``raw`` (the download a tool announced, pip's ``while getting <url>``, the url of requests'
    traceback): the service that answered. ``line`` as it is when the text names no URL."""
    at = text.rfind(raw)
    hosts = _URL_HOST.findall(text, 0, at if at >= 0 else len(text))
    if not hosts:
        hosts = [_registry(ref) for ref in _DOCKER_PULL.findall(text, 0, at if at >= 0 else len(text))]
    if not hosts:
        return line
    code = line.split(" ", 2)[1]
    return http_status_line("500" if code == "5xx" else code, hosts[-1])


def _registry(ref: str) -> str:
    """The registry host of a docker image reference: its first component when that names a host (holds a
    ``.`` or a ``:``, or is ``localhost``), else Docker Hub's (``docker.io``) — the rule of docker's reference
    grammar (``distribution/reference``'s ``splitDockerDomain``): ``ghcr.io/org/image:tag`` → ``ghcr.io``,
    ``org/image:tag`` → ``docker.io``."""
    first, sep, _ = ref.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def _status_under(text: str) -> Signature | None:
    """The HTTP status a failed download printed under its phrase (uv's and reqwest's ``Caused by: HTTP status
    server error (500 …) for url (…)``), as an ``HTTPError`` signature, or None: the status names the service
    that failed, the phrase only that a download did."""
    for raw in text.split("\n")[-40:]:
        raw = strip_prefixes(raw)
        canon = canonical("Unknown", raw) if raw else None
        if canon is not None and canon[0] == "HTTPError":
            line = canon[1] if " from " in canon[1] else _with_host(canon[1], text, raw)
            # the raw line becomes a title and a signature row: a URL's credentials are redacted as an
            # extractor's line is (uv prints the URL it was given, user info included)
            return _signature("setup", "HTTPError", line, "", "infra", redact(raw), identity(line), False, False, "")
    return None


def _numeric_line(line: str) -> str:
    # "Tensor-likes are not close! Mismatched elements: …" → the fault is named by the test
    i = line.find("!")
    return line[: i + 1] if 0 < i < len(line) - 1 else line
