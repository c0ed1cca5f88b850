"""Classification of failures: infrastructure, flaky or real (pure).

* **infrastructure** — the signature names a busy/missing GPU, a driver mismatch, a toolchain
  download, the network or a proxy, a registry's rate limit, a package mirror's checksum, a download that
  failed pip's hash check, the GitHub API's rate limit, a git transfer cut off, a full disk, the OOM killer, a
  lost runner or the CI's time limit
  (:data:`bot.triage.signature.INFRA_PATTERNS`), or it is a service's HTTP answer that it is busy or
  failing — 429 (rate limit, quota) or a 5xx status — which keeps its own identity (a 429 by code and
  host, a 5xx by the service's domain: :mod:`bot.triage.canonical`) but blames no commit, or conda's ``HTTP
  000 CONNECTION FAILED`` (no answer came) in a text that names no cause. Conservative: a concrete compiler or numeric
  error is chosen as the primary error before any infrastructure phrase is looked at, so it
  always wins (a log that retried a download and then failed in ``ptxas`` is real).
* **flaky** — the same test both passed and failed on the same commit (another platform run,
  a second nightly on the same commit), or passed on a retry in the same run; or, from the text
  alone, a test whose socket found its port taken by another process (``Address already in use``,
  ``EADDRINUSE``, c10d's "server socket has failed to listen"): a test harness's race between
  choosing a free port and binding it (pytorch/pytorch#12782, #13911), which no commit fixes.
* **real** — everything else.

A rule may force a class (``class:`` in the rules table). Infrastructure and flaky failures
are tracked apart and never bisected or blamed.
"""
from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache
from typing import Iterable

from bot.config.triage import TriageRule
from bot.triage.records import FailureRecord
from bot.triage.signature import Signature

INFRA, FLAKY, REAL = "infrastructure", "flaky", "real"


#: an HTTP status that says the service is busy or failing (RFC 9110 §15.6, RFC 6585 §4: 429 Too
#: Many Requests), over a canonical ``HTTPError`` line ``HTTP <code> <reason> from <host>``; any
#: other status (404, 403, 401) answers what the run asked for and may be the change's doing. Since signature
#: version 10 a 5xx is written ``HTTP 5xx Server Error from <domain>`` (:func:`bot.triage.canonical.http_status_line`);
#: a stored line of an older version keeps its code
_SERVICE_STATUS = re.compile(r"HTTP (?:429|5\d\d|5xx) ")
#: conda's status when the connection failed before any HTTP answer (``HTTP 000 CONNECTION FAILED``)
_NO_ANSWER = "HTTP 000 "


#: a socket whose port another process holds, over a masked line (``RuntimeError: Address already in
#: use``, elastic's ``… port: <n> already in use``, ``EADDRINUSE``, torch c10d's "The server socket has
#: failed to listen on any local network address", whose next line names EADDRINUSE)
_PORT_TAKEN = re.compile(r"address already in use|eaddrinuse|port: \S+ already in use"
                         r"|server socket has failed to listen", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _port_taken(line: str) -> bool:
    # a grouping classifies every record and a nightly repeats few lines: one search per line
    return _PORT_TAKEN.search(line) is not None


def signature_class(sig: Signature, rule: TriageRule | None = None) -> str:
    """The class a signature alone implies: the rule's forced class, else infrastructure for
    infrastructure signatures and a service's busy or failing HTTP status (:data:`_SERVICE_STATUS`),
    flaky for a port another process took (:data:`_PORT_TAKEN`), else real (other flakiness needs
    outcomes, see :func:`flaky_keys`)."""
    if rule is not None and rule.cls:
        return rule.cls
    if sig.type == "Infrastructure" or (sig.type == "HTTPError" and _SERVICE_STATUS.match(sig.line)):
        return INFRA
    if sig.type == "CondaHTTPError" and sig.line.startswith(_NO_ANSWER):
        # no HTTP answer came and the text named no cause (a cause would have been the signature)
        return INFRA
    if _port_taken(sig.line):
        return FLAKY
    return REAL


def _case(r: FailureRecord) -> str:
    # flakiness is about one test *case*: test_mm[8] passing while test_mm[16] fails is not flaky
    return r.raw_test or r.test


def flaky_keys(records: Iterable[FailureRecord]) -> frozenset[tuple[str, str]]:
    """``(test case, commit)`` pairs that both passed and failed (any run, platform or attempt),
    the test case being the id as reported (parametrization kept). Records without a commit
    count as one commit per run."""
    seen: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in records:
        if r.outcome == "skipped":
            continue
        seen[(_case(r), r.commit or f"run:{r.run}")].add("f" if r.failed else "p")
    return frozenset(k for k, v in seen.items() if len(v) == 2)


def record_class(rec: FailureRecord, sig: Signature, rule: TriageRule | None,
                 flaky: frozenset[tuple[str, str]]) -> str:
    """The class of one failed record: infrastructure or flaky by its signature or rule first,
    then flaky when its (test, commit) both passed and failed, else real."""
    cls = signature_class(sig, rule)
    if cls != REAL or (rule is not None and rule.cls):
        return cls
    if (_case(rec), rec.commit or f"run:{rec.run}") in flaky:
        return FLAKY
    return cls
