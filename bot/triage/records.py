"""Failure records: what triage reads from a nightly, whatever the source.

Readers (pure: text or parsed data in, records out; the caller reads files):

* :func:`from_run_result` — the runner's result JSON (``gpu_runner.result.RunResult``, schema
  ``forksync-result/1``) or the same shape as a plain dict;
* :func:`from_junit` — JUnit XML (pytest ``--junitxml``), through junitparser;
* :func:`from_lit` — lit's console output (``FAIL: SUITE :: path (k of N)`` and the
  ``******************** TEST '…' FAILED ********************`` blocks);
* :func:`from_log` — a raw CI log with no report: one job-level record (``job:<name>``).

Every reader returns passed tests as well (outcome ``passed``): closing an issue needs to know
that the affected tests *ran and passed*, and flakiness needs passes on the same commit.

Errors: :class:`RecordError` saying what was wrong and where; nothing is dropped silently.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Iterable

from bot.triage.normalize import clean_text, strip_prefixes

__all__ = ["FailureRecord", "RecordError", "normalize_test_id", "test_function", "from_run_result", "from_junit",
           "from_lit", "from_log", "detect_format", "decode_report", "FAILED"]

FAILED = frozenset({"failed", "error"})


class RecordError(ValueError):
    """Input that cannot be read into failure records (message says what, where, what to do)."""


@dataclass(frozen=True)
class FailureRecord:
    """One test outcome of one run.

    ``test``: normalized id (parametrization stripped, lit paths as ``lit:<path>``, job-level
    fallback ``job:<name>``); ``raw_test``: the id as the report gave it; ``outcome``: passed |
    failed | error | skipped; ``stage``: what the source said (build, test, lit, job) — the
    signature infers its own stage from the text; ``message``: the one-line message;
    ``text``: the full failure output (traceback, lit log, log tail); ``platform``: e.g. ``h200``;
    ``commit``: full sha; ``run``: the nightly's id; ``time``: epoch seconds UTC of the run;
    ``attempt``: 1 for the first try, 2… for retries of the same test in the same run.
    """

    test: str
    outcome: str
    raw_test: str = ""
    stage: str = "test"
    message: str = ""
    text: str = ""
    platform: str = ""
    commit: str = ""
    run: str = ""
    time: int = 0
    suite: str = ""
    attempt: int = 1
    source: str = ""

    @property
    def failed(self) -> bool:
        return self.outcome in FAILED

    @property
    def case(self) -> str:
        """The test *case*: the normalized id with its parametrization kept
        (``python/test/unit/language/test_core.py::test_dot[64-fp16]``). One fault may hit 4 of
        a function's 8 cases while another fault hits the other 4: the lifecycle follows cases."""
        return normalize_test_id(self.raw_test, params=True) if self.raw_test else self.test

    @property
    def output(self) -> str:
        """The text a signature is computed from: the full output, else the message."""
        if self.text and self.message and self.message not in self.text:
            return f"{self.text}\n{self.message}"
        return self.text or self.message


_PARAM = re.compile(r"\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\]$")
_LIT_ID = re.compile(r"^\s*([\w.\-]+) :: (.+?)\s*$")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_ROOTS = ("python/test/", "python/tutorials/", "test/", "tests/", "examples/", "third_party/")


def normalize_test_id(raw: str, params: bool = False) -> str:
    """Normalize a test identity so that one test is one id across runs and reports.
    ``params=True`` keeps the pytest parametrization (the test case, see :attr:`FailureRecord.case`).

    * pytest node ids lose their parametrization (``test_dot[64-fp16]`` → ``test_dot``) and
      any absolute prefix before a known root (``/home/ci/triton/python/test/…`` →
      ``python/test/…``); JUnit's dotted classname (``python.test.unit.test_core``) becomes a path;
    * lit ids ``TRITON :: TritonGPU/combine.mlir`` become ``lit:TritonGPU/combine.mlir``;
    * ``job:<name>`` stays as given.

    >>> normalize_test_id("python/test/unit/language/test_core.py::test_dot[64-64-fp16]")
    'python/test/unit/language/test_core.py::test_dot'
    """
    raw = raw.strip()
    if not raw or raw.startswith(("job:", "lit:")):
        return raw
    m = _LIT_ID.match(raw)
    if m and "::" not in m.group(2):
        return f"lit:{m.group(2)}"
    raw = raw.replace("\\", "/")
    head, sep, rest = raw.partition("::")
    if sep:
        if not params:
            rest = _PARAM.sub("", rest)
        if "/" not in head and not head.endswith(".py") and _DOTTED.fullmatch(head):
            # JUnit classname "python.test.unit.language.test_core" (+ optional ".TestClass")
            parts = head.split(".")
            cls = [p for p in parts if p[:1].isupper()]
            mod = [p for p in parts if not p[:1].isupper()]
            # no module part (googletest's classname is its suite, "LinearLayoutTest"): no file to name
            head = "/".join(mod) + ".py" + "".join(f"::{c}" for c in cls) if mod else "::".join(cls)
        if not head.startswith(_ROOTS):
            for root in _ROOTS:
                i = head.find("/" + root)
                if i >= 0:
                    head = head[i + 1:]
                    break
        return f"{head}::{rest}"
    return raw if params else _PARAM.sub("", raw)


def test_function(case: str) -> str:
    """The test function of a case id: ``k.py::test_dot[64-fp16]`` → ``k.py::test_dot``."""
    return _PARAM.sub("", case) if case.endswith("]") else case


def _get(d: Any, *names: str, default: Any = None) -> Any:
    for n in names:
        v = d.get(n) if isinstance(d, dict) else getattr(d, n, None)
        if v not in (None, ""):
            return v
    return default


def from_run_result(result: Any, run: str = "", time: int | None = None) -> list[FailureRecord]:
    """Records from the runner's result (a ``gpu_runner.result.RunResult`` or its JSON as a
    dict: ``{"suite", "commit", "platform", "started_at", "tests": [{"id", "outcome",
    "message", "traceback"}], "reasons": [{"code", "detail"}], "attempts": [{"infra_error"}],
    "stdout_tail", "stderr_tail"}``).

    A red run whose report holds no failing test (build failed, crash, timeout, missing
    report) gives one job-level record ``job:<suite>`` built from the reasons, the last
    attempt's infrastructure error and the output tails, so it is triaged, not lost.
    Raises :class:`RecordError` when ``tests`` is not a list or a test lacks an id/outcome.
    """
    suite = _get(result, "suite", default="")
    commit = _get(result, "commit", default="")
    platform = _get(result, "platform", default="")
    started = int(time if time is not None else _get(result, "started_at", default=0) or 0)
    run = run or f"{suite}@{commit[:12]}@{started}"
    tests = _get(result, "tests", default=[]) or []
    if not isinstance(tests, list):
        raise RecordError(f"result of suite {suite!r} at {commit[:12]}: 'tests' must be a list, "
                          f"not {type(tests).__name__}; is this a forksync-result/1 file?")
    out: list[FailureRecord] = []
    for i, t in enumerate(tests):
        tid = _get(t, "id", "nodeid", "name")
        outcome = _get(t, "outcome")
        if not tid or not outcome:
            raise RecordError(f"result of suite {suite!r} at {commit[:12]}: tests[{i}] has no "
                              f"{'id' if not tid else 'outcome'}; each test needs both")
        out.append(FailureRecord(
            test=normalize_test_id(tid), outcome=str(outcome), raw_test=tid,
            stage="lit" if " :: " in tid else "test",
            message=_get(t, "message", default=""), text=_get(t, "traceback", "longrepr", default=""),
            platform=platform, commit=commit, run=run, time=started, suite=suite,
            attempt=int(_get(t, "attempt", default=1)), source="result-json"))
    verdict = _get(result, "verdict", default="")
    if verdict == "red" and not any(r.failed for r in out):
        reasons = _get(result, "reasons", default=[]) or []
        attempts = _get(result, "attempts", default=[]) or []
        infra = [a for a in (_get(x, "infra_error") for x in attempts) if a]
        parts = [f"{_get(r, 'code')}: {_get(r, 'detail', default='')}" for r in reasons]
        parts += infra
        parts.append(_get(result, "stderr_tail", default="") or "")
        parts.append(_get(result, "stdout_tail", default="") or "")
        exit_codes = [_get(a, "exit_code") for a in attempts if _get(a, "exit_code") is not None]
        if exit_codes:
            parts.append(f"exit code {exit_codes[-1]}")
        out.append(FailureRecord(
            test=f"job:{suite}", outcome="error", raw_test=f"job:{suite}", stage="job",
            message=parts[0] if parts else "", text="\n".join(p for p in parts if p),
            platform=platform, commit=commit, run=run, time=started, suite=suite, source="result-json"))
    return out


def from_junit(xml_text: str | bytes, *, run: str = "", commit: str = "", platform: str = "",
               time: int = 0, suite: str = "", where: str = "<junit>") -> list[FailureRecord]:
    """Records from JUnit XML (junitparser). Raises :class:`RecordError` naming ``where`` for text that is
    not JUnit XML and for a report with no test case (the suite ran nothing)."""
    from junitparser import Error, Failure, JUnitXml, Skipped

    text = xml_text if isinstance(xml_text, str) else xml_text.decode(errors="replace")
    if isinstance(xml_text, str):
        # the text is parsed as UTF-8 bytes: a declaration naming the file's own encoding (utf-16, decoded
        # already by its byte-order mark) would contradict them
        xml_text = _XML_ENCODING.sub(r"\1", xml_text, count=1)
    if _looks_like(text) == "html":     # an error page saved in the report's place: say so, not a parser error
        raise RecordError(f"{where}: not JUnit XML: it holds {_described(text)}; pass the file pytest wrote with "
                          f"--junitxml")
    try:
        data = xml_text.encode() if isinstance(xml_text, str) else xml_text
        xml = JUnitXml.fromstring(data)
    except Exception as e:  # junitparser raises lxml/ElementTree errors of several kinds
        raise RecordError(f"{where}: not valid JUnit XML ({e}); pass the file pytest wrote with "
                          f"--junitxml") from None
    suites = [xml] if xml._tag == "testsuite" else list(xml)
    out: list[FailureRecord] = []
    for s in suites:
        for case in s:
            cls = case.classname or ""
            raw = f"{cls}::{case.name}" if cls else case.name
            outcome, message, text = "passed", "", ""
            for r in case.result:
                if isinstance(r, (Failure, Error)):
                    outcome = "failed" if isinstance(r, Failure) else "error"
                    message, text = r.message or "", r.text or ""
                    break
                if isinstance(r, Skipped):
                    outcome = "skipped"
            out.append(FailureRecord(
                test=normalize_test_id(raw), outcome=outcome, raw_test=raw, message=message,
                text=text, platform=platform, commit=commit, run=run, time=time, suite=suite,
                source="junit"))
    if not out and not any(True for s in suites for _ in s):
        # pytest writes this when it collected nothing (a path typo, a conftest skipping the module, -k
        # matching nothing): no test ran, so no outcome says the nightly was green
        raise RecordError(f"{where}: JUnit XML with no test case: the suite collected or ran no test (a path or -k "
                          f"that matches nothing, a collection that stopped early), which is no nightly's result; "
                          f"pass the job's log instead, or fix the suite")
    return out


_XML_ENCODING = re.compile(r"""^(\s*<\?xml[^>]*?)\s+encoding\s*=\s*["'][^"']*["']""")

RESULT_JSON = "a runner result JSON (forksync-result/1)"
JUNIT_XML = "JUnit XML (the file pytest wrote with --junitxml)"
ANY_REPORT = "a runner result JSON, JUnit XML, lit output or CI log"
_HTML = re.compile(r"<(?:!doctype\s+html|html)[\s>]", re.I)
_LIT_LINE = re.compile(r"^(?:PASS|FAIL|XFAIL|UNSUPPORTED): .+ :: .+ \(\d+ of \d+\)", re.M)


def _looks_like(text: str) -> str:
    """What a report's text is, by its first characters: ``json`` | ``html`` | ``xml`` | ``text``."""
    head = text.lstrip()[:200]
    if head.startswith(("{", "[")):
        return "json"
    if _HTML.match(head):
        return "html"
    return "xml" if head.startswith("<") else "text"


def _described(text: str) -> str:
    kind = {"json": "JSON", "html": "an HTML page", "xml": "XML", "text": "plain text"}[_looks_like(text)]
    first = text.lstrip().split("\n", 1)[0].strip()
    first = first if len(first) <= 60 else first[:59] + "…"
    return f"{kind} (first line {first!r})"


#: compressed files' and archives' first bytes, as ``read_text(errors="replace")`` decodes them (a byte
#: that is no UTF-8 start is U+FFFD): a CI's log artifact is often compressed
_PACKED = (("\x1f\ufffd", "gzip-compressed data (decompress it first)"),
           ("(\ufffd/\ufffd", "zstd-compressed data (decompress it first)"),
           ("\ufffd7zXZ", "xz-compressed data (decompress it first)"),
           ("BZh", "bzip2-compressed data (decompress it first)"),
           ("PK\x03\x04", "a zip archive (extract the report from it)"))
#: the share of control characters (NUL and the other C0 codes but tab, newline, carriage return, form
#: feed, backspace, bell and ESC) in a text's first 8 KB above which it is binary data: a log may hold a
#: stray NUL, never one character in twenty; uniform random bytes hold 25 in 256. Undecodable bytes
#: (U+FFFD) do not count: a log in a legacy code page (GBK, Shift-JIS, cp1252 on a Windows runner) is
#: text whose non-ASCII bytes are not UTF-8
_BINARY_SHARE = 0.05
_TEXT_CONTROLS = frozenset("\t\n\r\f\b\a\x1b")
#: byte-order marks a report may start with (PowerShell 5.1's ``>`` writes UTF-16LE; .NET's XML writers a
#: UTF-8 BOM, which XML allows), longest first (UTF-32LE's starts with UTF-16LE's)
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xef\xbb\xbf", "utf-8"),
         (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def decode_report(data: bytes) -> str:
    """A report file's text: decoded by its byte-order mark (UTF-8, UTF-16 or UTF-32; the mark itself
    left out), else as UTF-8, a byte that is no UTF-8 read as U+FFFD (a log in a legacy code page keeps
    its ASCII: paths, error codes, exception names)."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return data[len(bom):].decode(codec, errors="replace")
    return data.decode("utf-8", errors="replace")


def _binary(text: str) -> str:
    """What a report that is no text holds (``""`` for text): compressed data or an archive by its
    first bytes (bzip2's ``BZh`` only before a digit and a control character), else binary data."""
    for magic, what in _PACKED:
        if text.startswith(magic) and (magic != "BZh" or (text[3:4].isdigit() and _controls(text[4:64]))):
            return what
    head = text[:8192]
    return "binary data, not text" if head and _controls(head) > _BINARY_SHARE * len(head) else ""


def _controls(text: str) -> int:
    return sum(1 for c in text if c < " " and c not in _TEXT_CONTROLS)


def detect_format(text: str, name: str = "") -> str:
    """The format of a report: ``result`` | ``junit`` | ``lit`` | ``log``, from its text and its file
    ``name``. A name ending in ``.json`` or ``.xml`` claims that format: text that is not it is
    refused rather than read as a raw log, since a job-level record made of a broken report would be
    triaged (and an issue opened) as a real failure. Any other name may hold a plain log. Raises
    :class:`RecordError` for such a file, for an empty one (no report holds no outcome) and for one
    that is no text (a compressed log, an archive, binary data: its bytes would be such a record)."""
    suffix = PurePath(name).suffix.lower()
    expected = {".json": RESULT_JSON, ".xml": JUNIT_XML}.get(suffix, ANY_REPORT)
    if not text.strip():
        raise RecordError(f"the file {'is empty' if not text else 'holds only whitespace'}; expected {expected}")
    packed = _binary(text)
    if packed:
        raise RecordError(f"not a report: it holds {packed}; expected {expected}")
    looks = _looks_like(text)
    if suffix == ".json" and looks != "json":
        raise RecordError(f"not JSON: it holds {_described(text)}; expected {expected}")
    if suffix == ".xml" and looks == "text":
        raise RecordError(f"not XML: it holds {_described(text)}; expected {expected}")
    if looks == "json":
        return "result"
    if looks in ("xml", "html"):
        return "junit"
    return "lit" if _LIT_LINE.search(text) else "log"


_LIT_RESULT = re.compile(r"^(PASS|FAIL|XFAIL|XPASS|UNSUPPORTED|UNRESOLVED|TIMEOUT): (.+? :: .+?) \(\d+ of \d+\)\s*$",
                         re.M)
_LIT_BLOCK = re.compile(r"^\*{10,} TEST '(.+?)' FAILED \*{10,}\n(.*?)(?=^\*{10,}\s*$|^\*{10,} TEST |\Z)",
                        re.M | re.S)
_LIT_OUTCOME = {"PASS": "passed", "XFAIL": "passed", "UNSUPPORTED": "skipped", "FAIL": "failed",
                "XPASS": "failed", "UNRESOLVED": "error", "TIMEOUT": "error"}


def from_lit(output: str, *, run: str = "", commit: str = "", platform: str = "", time: int = 0,
             suite: str = "lit") -> list[FailureRecord]:
    """Records from lit's console output (``lit -v``). Each ``FAIL:`` line becomes a failed
    record carrying its ``TEST '…' FAILED`` block as text; ``PASS:`` lines (``lit -a``/``-v``
    with ``--show-pass``) become passes. Raises :class:`RecordError` when the output holds no
    lit result line at all (not lit output, or lit crashed before running)."""
    blocks = {m.group(1): m.group(2).rstrip() for m in _LIT_BLOCK.finditer(output)}
    out: list[FailureRecord] = []
    seen: set[str] = set()
    for m in _LIT_RESULT.finditer(output):
        code, raw = m.group(1), m.group(2)
        seen.add(raw)
        outcome = _LIT_OUTCOME[code]
        text = blocks.get(raw, "")
        out.append(FailureRecord(
            test=normalize_test_id(raw), outcome=outcome, raw_test=raw, stage="lit",
            message=f"{code}: {raw}" if outcome in FAILED else "", text=text,
            platform=platform, commit=commit, run=run, time=time, suite=suite, source="lit"))
    for raw, text in blocks.items():        # blocks whose summary line was cut off
        if raw not in seen:
            out.append(FailureRecord(
                test=normalize_test_id(raw), outcome="failed", raw_test=raw, stage="lit",
                message=f"FAIL: {raw}", text=text, platform=platform, commit=commit, run=run,
                time=time, suite=suite, source="lit"))
    if not out:
        raise RecordError("lit output holds no result line ('PASS: …' / 'FAIL: SUITE :: path (k of N)'); "
                          "run lit with -v, or pass the log to 'from_log' as a job-level failure")
    return out


_LOG_SUMMARY = re.compile(r"^(FAILED|ERROR) (\S+?)(?: - (.*))?$")
_LOG_VERBOSE = re.compile(r"^(\S+::\S+) (PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED)\b")
_LOG_SECTION = re.compile(r"^_{3,} (?:ERROR (?:at \w+ of )?)?(\S.*?) _{3,}$")
_LOG_RULE = re.compile(r"^={3,}")


def _log_sections(lines: list[str]) -> dict[str, str]:
    """pytest's failure sections (``____ test_dot[64-fp16] ____`` … up to the next section or
    ``====`` rule), by the section's name."""
    out: dict[str, str] = {}
    name, body = None, []
    for line in lines:
        m = _LOG_SECTION.match(line)
        if m or _LOG_RULE.match(line):
            if name is not None:
                out.setdefault(name, "\n".join(body).strip("\n"))
            name, body = (m.group(1), []) if m else (None, [])
            continue
        if name is not None:
            body.append(line)
    if name is not None:
        out.setdefault(name, "\n".join(body).strip("\n"))
    return out


def from_log(text: str, *, job: str, run: str = "", commit: str = "", platform: str = "",
             time: int = 0, failed: bool = True, tail_lines: int = 400) -> list[FailureRecord]:
    """A raw CI log with no report.

    When the log holds pytest's outcome lines (the short summary ``FAILED id - Exc: msg`` /
    ``ERROR id``, or ``-v`` lines ``id PASSED``), every test becomes its own record — each error
    of a multi-error log is kept, with the failure section pytest printed for it
    (``____ test_dot[64-fp16] ____``) as its text, else the summary line; passes are kept too.
    Log prefixes (timestamps of any CI) are stripped first. Otherwise the log becomes one job-level
    record ``job:<job>`` carrying its last ``tail_lines`` lines (the error is nearly always there)."""
    if not job:
        raise RecordError("from_log needs the job's name (the record's identity is job:<name>)")
    lines = [strip_prefixes(x) for x in clean_text(text).split("\n")]
    sections = _log_sections(lines)
    outcomes: dict[str, tuple[str, str]] = {}
    for line in lines:
        m = _LOG_SUMMARY.match(line)
        if m and ("::" in m.group(2) or m.group(2).endswith(".py")):
            outcomes[m.group(2)] = ("failed" if m.group(1) == "FAILED" else "error", line)
            continue
        m = _LOG_VERBOSE.match(line)
        if m and m.group(1) not in outcomes:
            word = m.group(2)
            outcome = {"PASSED": "passed", "XFAIL": "passed", "SKIPPED": "skipped", "ERROR": "error"}.get(word, "failed")
            outcomes.setdefault(m.group(1), (outcome, line))
    if outcomes:
        out = []
        for tid, (outcome, line) in outcomes.items():
            body = ""
            if outcome in FAILED:
                name = tid.rsplit("::", 1)[-1]
                body = sections.get(name) or sections.get(tid.split("::", 1)[-1].replace("::", ".")) or ""
                body = f"{body}\n{line}" if body else line
            out.append(FailureRecord(test=normalize_test_id(tid), outcome=outcome, raw_test=tid, stage="test",
                                     message=line if outcome in FAILED else "", text=body, platform=platform,
                                     commit=commit, run=run, time=time, suite=job, source="log"))
        return out
    tail = "\n".join(text.split("\n")[-tail_lines:])
    return [FailureRecord(test=f"job:{job}", outcome="failed" if failed else "passed",
                          raw_test=f"job:{job}", stage="job", text=tail if failed else "",
                          platform=platform, commit=commit, run=run, time=time, suite=job,
                          source="log")]


def failures(records: Iterable[FailureRecord]) -> list[FailureRecord]:
    return [r for r in records if r.failed]
