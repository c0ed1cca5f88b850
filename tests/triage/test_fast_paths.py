"""The fast paths of the signature code give exactly what the plain forms they replace give.

Each plain form (the straightforward loop or regex the fast path was derived from) is kept here
only, and compared on the labelled texts' lines and on random text built from the pieces the
fast path looks for (hypothesis).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config import infra
from bot.triage import extractors, normalize, scan, signature

DATA = Path(__file__).resolve().parents[1] / "data" / "triage"


def _corpus_texts() -> list[str]:
    out = []
    for name in ("labelled", "holdout"):
        for line in (DATA / f"{name}.jsonl").read_text().splitlines():
            if line.strip():
                out.append(json.loads(line)["text"])
    return out


TEXTS = _corpus_texts()
LINES = sorted({line for t in TEXTS for line in t.split("\n")})


def _pieces(words) -> st.SearchStrategy[str]:
    """Text made of the given words, corpus lines, and random characters around them."""
    noise = st.text(alphabet=st.sampled_from(list(" \t\n:=-+./()[]'\"_#xX09aAeE\u00e9")), max_size=6)
    part = st.one_of(st.sampled_from(list(words)), st.sampled_from(LINES), noise, st.text(max_size=8))
    return st.lists(part, max_size=12).map("".join)


# --------------------------------------------------------------------------- infrastructure phrases
def _plain_infra_hit(text: str):
    """Every anchor in table order; the first that is there (its regex matching) wins."""
    for kind, anchor, rx in infra._INFRA:
        if anchor in text:
            if rx is None:
                return kind, text.find(anchor)
            m = rx.search(text)
            if m:
                return kind, m.start()
    return None


_INFRA_WORDS = [a for _, a, _ in infra._INFRA] + list(infra._GATE_KEYS) + [
    "CUDA out of memory. Process 12 has 3.5 GiB memory in use", "exit code 137", "signal 9", "\nKilled\n",
    "curl: (7)", "memory", "Killed"]


def test_infra_hit_corpus():
    for text in TEXTS + LINES:
        assert infra.infra_hit(text) == _plain_infra_hit(text), text


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pieces(_INFRA_WORDS))
def test_infra_hit_random(text):
    assert infra.infra_hit(text) == _plain_infra_hit(text)


# --------------------------------------------------------------------------- log prefixes
def _plain_strip_prefixes(line: str) -> str:
    m = normalize._PREFIX.match(line)
    return (line[m.end():] if m else line).strip()


_PREFIX_PIECES = ["2026-11-30T01:02:03.123Z ", "stderr F ", "[2026-11-30 01:02:03] ", "01:02:03 ", "[01:02:03] ",
                  "I1130 01:02:03.123456 123 file.py:533] [0/0] ", "(pid=12) ", "(Worker pid=12, ip=1.2.3.4) ",
                  "[rank0]: ", "ERROR 01-28 01:02:03 x.py:12] ", "##[error]", "E   ", "E", "# | ", "> ", "\u0661\u0662",
                  "\u00b2", "ValueError: x", "\t", " "]


def test_strip_prefixes_corpus():
    for line in LINES:
        assert normalize.strip_prefixes(line) == _plain_strip_prefixes(line), line


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pieces(_PREFIX_PIECES))
def test_strip_prefixes_random(line):
    assert normalize.strip_prefixes(line) == _plain_strip_prefixes(line)


# --------------------------------------------------------------------------- one scan for every literal
def _plain_bits(text: str) -> int:
    """Each extractor's prefilter, one ``in`` test at a time."""
    bits = 0
    for k, (_, pre, _) in enumerate(extractors.EXTRACTORS):
        if any(p in text for p in pre):
            bits |= 1 << k
    return bits


def _check_scan(text: str) -> None:
    found = scan.scan(text, overlapping=True)
    assert set(found) == {lit for lit in scan.LITERALS if lit in text}
    assert scan.extractor_bits(found) == _plain_bits(text)
    assert scan.infra_hit(text) == _plain_infra_hit(text)


_SCAN_WORDS = sorted(scan.LITERALS) + _INFRA_WORDS


def test_scan_corpus():
    for text in TEXTS + LINES:
        _check_scan(text)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pieces(_SCAN_WORDS))
def test_scan_random(text):
    _check_scan(text)


_EXC_PIECES = list(extractors.SCANNED) + ["\nValueError: x", "\nE   RuntimeError: CUDA error: y", "Error(\"m\")",
                                          "\nCompilationError: at 1:2:", "CalledProcessError", "Warning",
                                          "\ntriton.compiler.errors.CompilationError: at 3:4:\n", "ValueError('arange')",
                                          "Triton Error [CUDA]: z", "CUDA error: w", "cudaErrorX (error 2) due to \"q\""]


def _check_present(text: str) -> None:
    present = set(scan.scan(text, overlapping=True))
    assert extractors._x_python(text, present) == extractors._x_python(text)
    assert extractors._x_cuda(text, present) == extractors._x_cuda(text)


def test_extractors_given_present_corpus():
    for text in TEXTS:
        _check_present(text)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pieces(_EXC_PIECES))
def test_extractors_given_present_random(text):
    _check_present(text)


# --------------------------------------------------------------------------- signature_of: scanned or not
def _both_paths(text: str, monkeypatch) -> None:
    fast = signature.signature_of(text)
    with monkeypatch.context() as m:
        m.setattr(signature, "SCAN_MAX", -1)        # every text takes the plain prefilter loop
        plain = signature.signature_of(text)
    assert type(fast) is signature.Signature
    assert fast == plain
    assert fast == signature.Signature(**{f: getattr(fast, f) for f in signature._FIELDS})


def test_signature_scanned_corpus(monkeypatch):
    for text in TEXTS:
        _both_paths(text, monkeypatch)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(_pieces(_SCAN_WORDS + _EXC_PIECES))
def test_signature_scanned_random(monkeypatch, text):
    _both_paths(text, monkeypatch)


# --------------------------------------------------------------------------- mask and identity
_PLAIN_ALNUM = re.compile(r"\b[0-9A-Za-z]{8,}+\b")
_PLAIN_DOTDIGIT = re.compile(r"\d\.\d")


def _plain_mask(line: str) -> str:
    """:func:`bot.triage.normalize.mask` with the Unicode patterns only, every label found by
    ``_LABELLED``, every alphanumeric run of 8+ given to ``_alnum``, and only the tests that
    decide something (masking needs an ASCII digit; a glued label is split only beside
    ``Required``/``Hardware``; ``at index`` is masked in lower case)."""
    n = normalize
    digits = any(c in line for c in "0123456789")
    if digits and line.count(":") >= 2:
        line = n._TIME.sub("<time>", n._TIME_FULL.sub("<time>", line))
    line = n._PATH.sub(n._basename, n._REDACTED_SEGMENT.sub("user", line))
    line = n._ABI_TAG.sub("", n._TMP.sub("<tmp>", n._TMP_FILE.sub("<tmp>", line)))
    if digits:
        if "Required" in line or "Hardware" in line:
            line = n._GLUED_LABEL.sub(" ", line)
        line = n._HEX0X.sub("<hex>", n._SYSBYTES.sub("", line))
        line = _PLAIN_ALNUM.sub(n._alnum, line)
        line = n._DEVICE.sub(r"\1:<i>", line)
        line = n._WORKER.sub("gw<i>", line)
        line = n._GRID.sub(r"\1: [<i>]", line)
        line = n._PID.sub(r"\1\2<pid>", line)
        line = n._LABELLED.sub(n._labelled, line)
        if "index" in line:
            line = n._INDEX.sub("at index (<i>)", line)
        line = n._POS.sub("at <pos>:", line)
        line = n._SRCPOS.sub(r".\1:<L>", line)
        if _PLAIN_DOTDIGIT.search(line):
            line = n._FLOAT.sub("<f>", line)
        line = n._LINENO.sub("line <L>", line)
        line = n._PCT.sub("(<pct>)", line)
        line = n._BIGINT.sub("<n>", line)
    return n._trim(" ".join(line.split()))[:n._MAX_LINE]


_MASK_PIECES = ["Required: 131072", "Hardware limit: 101376", "memoryRequired: 110592Hardware limit", "Tried to allocate 2.00 GiB",
                "Mismatched elements: 3 / 64 (4.7%)", "pid 1234", "PID=77", "Process 12 has", "thread #3", "rank: 2",
                "/tmp/tmpab12cd/x.py:12:3", "C:\\x\\y.cpp:7", "ops/attn.py", "global/shared", "0xdeadbeef", "deadbeef12",
                "a1b2c3d4e5f6a7b8c9d0e1", "abc123def456", "2026-11-30T01:02:03.123Z", "01:02:03.5", "at 12:5:",
                "at index (1, 2)", "line 74", "3.14e-5", "1.5", "123456", "sm_90", "gfx942", "int32", "'255'", "(×5)",
                "max 12", "size=4", "got 3, expected 4", "\u0661\u0662\u0663\u0664\u0665", "\u00e9", "_x", "\x1c",
                "\u00a0", "INDEX (3)", "limitation 5", "allocated: 7", "Use 9", "bytes 12345", " + 0x10 bytes system", "(12%)",
                "cuda:3", "xpu:1", "cuda:12.4", "[gw3]", "gw12", "block: [3,0,0], thread: [17,0,0]", "thread: [1, 2, 3]", " / ",
                "x.cpython-310-x86_64-linux-gnu.so", ".cp311-win_amd64.pyd", "m.abi3.so", ".cpython-39.sox", ".cp",
                "k.cubin.tmp.pid_72_945989", ".tmp.", "/home/[REDACTED-user-1]/", "'", "\"", "`"]


def test_mask_corpus():
    for line in LINES:
        assert normalize.mask(line) == _plain_mask(line), line


@settings(max_examples=4000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pieces(_MASK_PIECES))
def test_mask_random(line):
    assert normalize.mask(line) == _plain_mask(line)


def _plain_identity(line: str) -> str:
    """:func:`bot.triage.signature.identity` with the punctuation mapped by ``str.translate``."""
    if line.endswith(")"):
        line = signature._REPEAT.sub("", line)
    i = line.find(". ")
    if i > 0 and line.count(" ", 0, i) >= 2:
        line = line[:i]
    if line.startswith("[Errno ") and "' -> '" in line:
        line = line[:line.index("' -> '") + 1]
    if "," in line or ";" in line or "`" in line:
        line = " ".join(line.translate(str.maketrans({",": " ", ";": " ", "`": "'"})).split())
    return line.rstrip(" .:")


def test_identity_corpus():
    for line in LINES:
        m = normalize.mask(line)
        assert signature.identity(m) == _plain_identity(m), m


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pieces(_MASK_PIECES + [",", ";", "`", ". ", "(x3)", "(×2)", " a b c. d", "[Errno 2] x: 'a' -> 'b'"]))
def test_identity_random(line):
    assert signature.identity(line) == _plain_identity(line)


# --------------------------------------------------------------------------- ASCII twins of patterns
_TWINS = list(zip(normalize._UNICODE_RX, normalize._ASCII_RX)) + [
    (normalize._PREFIX, normalize._PREFIX_ASCII), (extractors._EXC_LINE, extractors._EXC_LINE_ASCII),
    (extractors._CAUSE_LINE, extractors._CAUSE_LINE_ASCII)]


def _same_matches(text: str) -> None:
    for uni, asc in _TWINS:
        want = [(m.span(), m.groups()) for m in uni.finditer(text)]
        assert [(m.span(), m.groups()) for m in asc.finditer(text)] == want, uni.pattern
        um, am = uni.match(text), asc.match(text)
        assert (um and (um.span(), um.groups())) == (am and (am.span(), am.groups())), uni.pattern


def test_ascii_twins_corpus():
    for line in LINES:
        if line.isascii():
            _same_matches(line)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pieces(_MASK_PIECES + _PREFIX_PIECES + _EXC_PIECES + ["\x1c", "\x1f", "\x0b", "_", "tmpab_12", "line 7"]))
def test_ascii_twins_random(text):
    text = text.encode("ascii", "replace").decode()
    _same_matches(text)
