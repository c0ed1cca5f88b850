"""Log normalisation for signatures (pure): ANSI and log-prefix stripping, and masking of what
varies between occurrences of one fault. See :mod:`bot.triage.signature` for the rules' sources.
"""
from __future__ import annotations

import re

from ahocorasick_rs import AhoCorasick, Implementation, MatchKind

__all__ = ["strip_prefixes", "clean_text", "mask", "ascii_twin", "strip_abi_tag", "symbol_name"]


def ascii_twin(rx: re.Pattern) -> re.Pattern:
    """``rx`` compiled with ``re.ASCII``: ``\\d``, ``\\w`` and ``\\b`` are then checked by table
    instead of a Unicode database call per character (several times faster). On a line that is
    all ASCII it matches exactly where ``rx`` does: the ASCII characters that are Unicode digits
    and word characters are ASCII's digits and word characters. Not for ``\\s`` (Unicode's holds
    ``\\x1c``-``\\x1f``, ASCII's does not) nor IGNORECASE."""
    if "\\s" in rx.pattern or "\\S" in rx.pattern or rx.flags & re.IGNORECASE:
        raise ValueError(f"no ASCII twin for {rx.pattern!r}: \\s or IGNORECASE")
    return re.compile(rx.pattern, (rx.flags & ~re.UNICODE) | re.ASCII)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
_PREFIX_SRC = r"""(?:
    [ \t]+
  | \d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?[ \t]*(?:std(?:err|out)[ \t]+[FP][ \t])?
  | \[\d{4}-\d\d-\d\d[^\]\n]{0,40}\][ \t]*
  | (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[ \t]+\d\d?[ \t]+\d\d:\d\d:\d\d(?:[.,]\d+)?(?:[ \t]+|$)
  | \[?\d\d:\d\d:\d\d(?:[.,]\d+)?\]?[ \t]+(?:[\w/]+/(?:INFO|ERROR|WARNING|DEBUG)[ \t]+)?
  | [IWEF]\d{4}[ \t]+\d\d:\d\d:\d\d\.\d+[ \t]+\d+[ \t]+[\w.\-/\\]+:\d+\](?:[ \t]\[[\d/]+\])?[ \t]?
  | \((?:[\w.\-]+[ \t]+)?pid=\d+(?:,[ \t]*ip=[\d.]+)?\)[ \t]*
  | \[rank\d+\]:[ \t]*
  | (?:ERROR|WARNING|INFO|DEBUG|CRITICAL)[ \t]+\d\d-\d\d[ \t]+\d\d:\d\d:\d\d[ \t]+[\w.]+:\d+\][ \t]*
  | \#\#\[(?:error|warning)\][ \t]*
  | E(?:[ \t]{2,}|[ \t]*$)
  | \#[ \t]\|[ \t]?
  | >[ \t]+
)"""
_PREFIX = re.compile(r"^" + _PREFIX_SRC + r"++", re.X)   # possessive: no backtracking
_PREFIX_ASCII = ascii_twin(_PREFIX)
#: the first characters of :data:`_PREFIX`'s alternatives other than a digit (``\d``, tested with
#: ``str.isdigit``, which holds for every ``\d``); syslog's and CircleCI's ``Dec 03 17:59:26``
#: starts with a month's initial
_PREFIX_FIRST = " \t[IWEFDC(#>JMASON"


def strip_prefixes(line: str) -> str:
    """Remove log prefixes (timestamps — ISO 8601's and syslog's ``Dec 03 17:59:26`` —, glog/Ray/vLLM
    headers, pytest ``E``, lit ``# |``) and surrounding blanks from one line."""
    c = line[:1]
    if c in _PREFIX_FIRST or c.isdigit():     # a prefix can start here: only then the regex
        m = (_PREFIX_ASCII if line.isascii() else _PREFIX).match(line)
        if m:
            line = line[m.end():]
    return line.strip()


def clean_text(text: str) -> str:
    """Drop ANSI escapes and carriage returns (kept cheap: only when present)."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


# --------------------------------------------------------------------------- masking
_TIME_FULL = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?")
# digit-first forms of ``\b…`` patterns (the same matches: the look-behind after the leading
# digits checks the ``\b``), so the regex engine skips ahead to digits instead of trying every
# position — several times faster on a typical line
_TIME = re.compile(r"\d\d:\d\d:\d\d(?<!\w\d\d:\d\d:\d\d)(?:\.\d+)?\b")
# a token holding a path separator: keep its last segment (the basename)
_PATH = re.compile(r"(?<![^\s'\"()<>,;=`\[\]{}])[^\s'\"()<>,;=`\[\]{}/\\]*[/\\][^\s'\"()<>,;=`\[\]{}]*")
_TMP = re.compile(r"\btmp[\w\-]{4,}")
# a temporary file named after the file it will replace (triton's cache writes
# ``<kernel>.cubin.tmp.pid_<pid>_<random>`` and renames it): the whole name is temporary. Tried at
# the start of a name only (the look-behind): from every position of a long run of name characters
# each try read to the run's end, quadratic in its length (the leftmost match starts there anyway)
_TMP_FILE = re.compile(r"(?<![\w.\-])[\w.\-]*\.tmp\.[\w\-]*\d[\w.\-]*")
# the redaction's placeholder for a user name inside a path (``/home/[REDACTED-user-1]/x``,
# :func:`bot.agents.redact.redact`): a path segment like any other
_REDACTED_SEGMENT = re.compile(r"(?<=[/\\])\[REDACTED-[\w-]+\](?=[/\\])")
_HEX0X = re.compile(r"\b0x[0-9a-fA-F]+\b")
_SYSBYTES = re.compile(r"\s*\+\s*0x[0-9a-fA-F]+ bytes system")
_HEXID = re.compile(r"\b[0-9a-f]{8,}\b")
_LONGID = re.compile(r"\b[A-Za-z0-9]{20,}+\b")   # possessive: a shorter run never ends at \b
_PID = re.compile(r"\b(pid|PID|[Pp]rocess|[Tt]hread|tid|job|[Rr]ank)([ =:#]+)\d+")
_PID_HINTS = ("pid", "PID", "rocess", "hread", "tid", "job", "ank")   # how _PID's words end
_PID_TAIL = re.compile(r"[ =:#]+\d")                                     # and what follows them
_LABELLED = re.compile(r"\b([A-Za-z]+)(\s*[:=]?\s*)[-+]?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?(?:\s*/\s*\d+)?(?:\s*\([\d.]+%\))?")
#: last words of labels whose number varies between occurrences of one fault
_LABEL_WORDS = frozenset({"required", "limit", "limitation", "allocate", "allocated", "reserved", "free",
                          "elements", "difference", "max", "bytes", "size", "got", "expected", "use"})
_INDEX = re.compile(r"\bat index \([\d,\s]*\)", re.I)
_POS = re.compile(r"\bat \d+:\d+:")
_SRCPOS = re.compile(r"\.(py|pyx|cpp|cc|c|h|hpp|cu|cuh|mlir|td|ll|ptx|test):\d+(?::\d+)?")
_LINENO = re.compile(r"\bline \d+")
_FLOAT = re.compile(r"(?<![\w.<])[-+]?\d+\.\d+(?:[eE][-+]?\d+)?(?![\w.])")
_PCT = re.compile(r"\(\s*(?:<f>|\d+)%\s*\)")
_BIGINT = re.compile(r"\d\d\d\d\d(?<![\w.<]\d\d\d\d\d)\d*(?![\w.])")   # (?<![\w.<])\d{5,}(?![\w.])
# a float needs a digit, a dot and a digit: gates _FLOAT (found from the dot, a literal the regex
# engine skips to; the digit before it is checked behind)
_DOTDIGIT = re.compile(r"\.(?<=\d\.)\d")
_DIGIT5 = re.compile(r"\d\d\d\d\d")   # a big integer needs one: gates _BIGINT
_DIGIT = re.compile(r"\d")
# which device, worker, block or thread reported a fault varies by run, not by fault: torch's
# device index (``cuda:3``, Intel's ``xpu:1``; not a version such as ``cuda:12.4``), a
# pytest-xdist worker id (``gw3``), and the block and thread a device-side assertion names
# (CUDA's ``block: [3,0,0], thread: [17,0,0]``)
_DEVICE = re.compile(r"\b(cuda|xpu):\d+\b(?!\.\d)")
_WORKER = re.compile(r"\bgw\d+\b")
_GRID = re.compile(r"\b(block|thread): \[\d+, ?\d+, ?\d+\]")
_MAX_LINE = 240
# numbers and labels glued together when a message was built without separators
# ("shared memoryRequired: 110592Hardware limit: 101376"): a space goes back in front of the label
#: the Python/ABI tag of an extension module's file name (PEP 3149 and wheel tags:
#: ``x.cpython-310-x86_64-linux-gnu.so``, ``x.cp311-win_amd64.pyd``, ``x.abi3.so``,
#: ``x.pypy39-pp73-x86_64-linux-gnu.so``): it names the interpreter the module was built for,
#: which varies between the reports of one fault, not the module (ASCII classes: no twin needed)
_ABI_TAG = re.compile(r"\.(?:cpython-[0-9]+[a-z]*(?:-[A-Za-z0-9_]+)*|cp[0-9]+-[A-Za-z0-9_]+|abi3"
                      r"|pypy[0-9]+-pp[0-9]+(?:-[A-Za-z0-9_]+)*)(?=\.(?:so|pyd|dylib)(?![A-Za-z0-9_]))")
_ABI_HINTS = (".cp", ".abi3.", ".pypy")


def strip_abi_tag(name: str) -> str:
    """``flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so`` → ``flash_attn_2_cuda.so``."""
    for h in _ABI_HINTS:
        if h in name:
            return _ABI_TAG.sub("", name)
    return name


def symbol_name(symbol: str) -> str:
    """An Itanium-mangled function symbol (the C++ ABI of gcc and clang, ``_Z…``) as the function
    it names, without its parameter types: ``_ZN2at4_ops15to_dtype_layout4callERKNS_6Tensor…`` →
    ``at::_ops::to_dtype_layout::call(…)``, ``_ZNK…`` → ``… const``. The loader reports the
    whole symbol; a report quotes it cut short as often (a title's or a terminal's width), and
    the parameter list, the longest part, is where it is cut. One thing of the parameters is
    kept because it is another build of the function, not another call: the C++11 string ABI
    (``std::__cxx11``) → `` [cxx11 ABI]``. A symbol that names no plain function is returned as
    it is: not mangled, a variable (nothing after the name), a constructor or destructor
    (``C1``/``D2``: the ABI is all that tells two apart), a template, a ``std::`` name, or one
    cut inside its name."""
    if not symbol.startswith("_Z"):
        return symbol
    nested = symbol.startswith("_ZN")
    i, const = (3 if nested else 2), False
    while nested and i < len(symbol) and symbol[i] in "KVrRO":     # a member function's qualifiers
        const = const or symbol[i] == "K"
        i += 1
    parts: list[str] = []
    while i < len(symbol) and symbol[i].isdigit():
        j = i
        while j < len(symbol) and symbol[j].isdigit():
            j += 1
        n = int(symbol[i:j])
        if j + n > len(symbol):
            return symbol
        parts.append(symbol[j:j + n])
        i = j + n
        if not nested:
            break
    if not parts:
        return symbol
    if nested:
        if i >= len(symbol) or symbol[i] != "E":
            return symbol
        i += 1
    params = symbol[i:]
    if not params:
        return symbol
    name = "::".join(parts) + "(…)" + (" const" if const else "")
    return name + " [cxx11 ABI]" if "__cxx11" in params else name


_GLUED_LABEL = re.compile(r"(?<=[a-z0-9])(?=(?:Required|Hardware limit|Tried to allocate|Mismatched elements|Greatest)\b)")


def _basename(m: re.Match) -> str:
    """A path's basename; a token that only holds a separator between two words
    (``global/shared``, ``and/or``, ``fp16/bf16``) is prose, not a path, and stays whole."""
    tok = m.group(0)
    if tok in ("/", "\\") or not _path_like(tok):     # a lone separator: "12 / 4096", a ratio
        return tok
    tok = tok.rstrip("/\\")
    i = max(tok.rfind("/"), tok.rfind("\\"))
    return tok[i + 1:]


def _path_like(tok: str) -> bool:
    """A path: rooted (``/``, ``\\``, ``~``, ``.``, ``C:``), two or more separators, or a last
    segment with a file extension (``ops/attn.py``)."""
    if tok[0] in "/\\~." or (len(tok) > 2 and tok[1] == ":" and tok[2] in "/\\"):
        return True
    if tok.count("/") + tok.count("\\") >= 2:
        return True
    last = tok[max(tok.rfind("/"), tok.rfind("\\")) + 1:]
    dot = last.rfind(".")
    return 0 < dot < len(last) - 1 and last[dot + 1:].isalnum()


def _hexid(m: re.Match) -> str:
    t = m.group(0)
    return "<hex>" if not t.isdigit() and not t.isalpha() else t


def _longid(m: re.Match) -> str:
    t = m.group(0)
    return "<id>" if not t.isalpha() and not t.isdigit() else t


# a run of 8+ ASCII letters and digits between word boundaries that mixes letters and digits (the
# only runs _alnum changes): the digit-letter or letter-digit step is found first, then the run
# is taken whole (possessive: a shorter run never ends at \b)
_ALNUM = re.compile(r"\b(?=[0-9A-Za-z]{8})(?:[0-9]+[A-Za-z]|[A-Za-z]+[0-9])[0-9A-Za-z]*+\b")


def _alnum(m: re.Match) -> str:
    """Random ids: ≥ 20 alphanumerics mixing letters and digits → ``<id>``; ≥ 8 lowercase hex
    digits mixing letters and digits → ``<hex>``; anything else stays."""
    t = m.group(0)
    if t.isalpha() or t.isdigit():
        return t
    if len(t) >= 20:
        return "<id>"
    if t.islower() and not t.strip("0123456789abcdef"):
        return "<hex>"
    return t


#: what follows a label word in a :data:`_LABELLED` match (its groups 2 and on)
_LABEL_NUM = re.compile(r"(\s*[:=]?\s*)[-+]?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?(?:\s*/\s*\d+)?(?:\s*\([\d.]+%\))?")
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
#: ``_LABEL_SCAN(low, overlapping=True)`` → ``(word index, start, end)`` of every occurrence of
#: every label word (offsets in characters)
_LABEL_SCAN = AhoCorasick(sorted(_LABEL_WORDS), matchkind=MatchKind.Standard,
                          implementation=Implementation.DFA).find_matches_as_indexes


def _mask_labels(line: str) -> str:
    """``_LABELLED.sub(_labelled, line)``, found with ``str.find`` per label word instead of a
    regex tried at every word (the same result: a replacement happens exactly where a whole
    ASCII-letter word that is a label, at a word boundary, is followed by a number; the text a
    match of a non-label word consumes never holds the start of such a word)."""
    low = line.lower()
    if len(low) != len(line):          # a lowercase that changes lengths: the plain regex
        return _LABELLED.sub(_labelled, line)
    hits = None
    n = len(line)
    # every occurrence of every label word, in one automaton pass (a prefix of a longer label
    # word, "limit" in "limitation", is followed by a letter and fails the test below: at most
    # one hit starts at a place)
    for _, i, j in _LABEL_SCAN(low, overlapping=True):
        if ((i == 0 or not (line[i - 1].isalnum() or line[i - 1] == "_"))   # \b before
                and (j == n or line[j] not in _ASCII_LETTERS) and line[i:j].isascii()):
            m = _LABEL_NUM.match(line, j)
            if m:
                if hits is None:
                    hits = []
                hits.append((i, j, m))
    if hits is None:
        return line
    hits.sort(key=lambda h: h[0])
    out = []
    pos = 0
    for i, j, m in hits:
        if i < pos:
            continue
        out += (line[pos:j], m.group(1), "<n>")
        pos = m.end()
    out.append(line[pos:])
    return "".join(out)


def _pid_apply(line: str) -> bool:
    """Whether :data:`_PID` can match: one of its words followed by separators and a digit."""
    for h in _PID_HINTS:
        i = line.find(h)
        while i >= 0:
            if _PID_TAIL.match(line, i + len(h)):
                return True
            i = line.find(h, i + 1)
    return False


def _labelled(m: re.Match) -> str:
    if m.group(1).lower() in _LABEL_WORDS:
        return f"{m.group(1)}{m.group(2)}<n>"
    return m.group(0)


def _has_digit(line: str) -> bool:
    """Whether ``line`` holds a digit (ten substring tests cost less than one regex call)."""
    for c in "0123456789":
        if c in line:
            return True
    return False


#: the patterns of :func:`mask` that have an ASCII twin, and the twins in the same order: a line
#: that is all ASCII (``str.isascii``, read from the string's header) takes the twins; masking
#: only removes characters or inserts ASCII, so it stays ASCII through every step
_UNICODE_RX = (_TIME_FULL, _TIME, _TMP, _HEX0X, _ALNUM, _PID, _POS, _SRCPOS, _LINENO, _FLOAT, _BIGINT, _DOTDIGIT,
               _DIGIT5, _GLUED_LABEL, _DEVICE, _WORKER, _GRID)
_ASCII_RX = tuple(map(ascii_twin, _UNICODE_RX))


# the replacements with group references as functions: a template string (r"\1…") is parsed by a
# Python-level call into the re module on every sub() call, matches or not
def _pid_repl(m: re.Match) -> str:
    return f"{m.group(1)}{m.group(2)}<pid>"        # r"\1\2<pid>"


def _srcpos_repl(m: re.Match) -> str:
    return f".{m.group(1)}:<L>"                     # r".\1:<L>"


def _device_repl(m: re.Match) -> str:
    return f"{m.group(1)}:<i>"                      # r"\1:<i>"


def _grid_repl(m: re.Match) -> str:
    return f"{m.group(1)}: [<i>]"                   # r"\1: [<i>]"


def mask(line: str) -> str:
    """Replace what varies between occurrences of one fault; keep fault-telling digits.
    Each step runs only when a cheap test says it can apply.

    >>> mask("out of resource: shared memory, Required: 131072, Hardware limit: 101376")
    'out of resource: shared memory, Required: <n>, Hardware limit: <n>'
    """
    (time_full, time, tmp, hex0x, alnum, pid, pos, srcpos, lineno, float_, bigint, dotdigit, digit5,
     glued_label, device, worker, grid) = _ASCII_RX if line.isascii() else _UNICODE_RX
    digits = _has_digit(line)
    if digits and line.count(":") >= 2:
        if "-" in line:
            line = time_full.sub("<time>", line)
        line = time.sub("<time>", line)
    if "/" in line or "\\" in line:
        if "[REDACTED-" in line:
            line = _REDACTED_SEGMENT.sub("user", line)
        line = _PATH.sub(_basename, line)
    if "tmp" in line:
        if ".tmp." in line:
            line = _TMP_FILE.sub("<tmp>", line)
        line = tmp.sub("<tmp>", line)
    if "." in line:
        line = strip_abi_tag(line)
    if digits:
        if "Required" in line or "Hardware" in line:
            line = glued_label.sub(" ", line)
        if "0x" in line:
            if "system" in line:
                line = _SYSBYTES.sub("", line)
            line = hex0x.sub("<hex>", line)
        line = alnum.sub(_alnum, line)
        if "cuda:" in line or "xpu:" in line:
            line = device.sub(_device_repl, line)
        if "gw" in line:
            line = worker.sub("gw<i>", line)
        if ": [" in line:
            line = grid.sub(_grid_repl, line)
        if _pid_apply(line):
            line = pid.sub(_pid_repl, line)
        line = _mask_labels(line)
        if "index" in line:
            line = _INDEX.sub("at index (<i>)", line)
        if "at " in line:
            line = pos.sub("at <pos>:", line)
        if "." in line:
            if ":" in line:
                line = srcpos.sub(_srcpos_repl, line)
            if dotdigit.search(line):
                line = float_.sub("<f>", line)
        if "line " in line:
            line = lineno.sub("line <L>", line)
        if "%" in line:
            line = _PCT.sub("(<pct>)", line)
        if digit5.search(line):
            line = bigint.sub("<n>", line)
    # (a line without digits holds no id to mask: _LONGID and _alnum change only tokens that mix
    # letters and digits)
    return _trim(" ".join(line.split()))[:_MAX_LINE]


def _trim(line: str) -> str:
    """``line`` without blanks, colons, dots and quotes at its ends, except a closing quote that
    closes one the line opened (``… no attribute 'log1p'``: the quote is part of the name, and the
    same message before Python's ``. Did you mean: …`` keeps it)."""
    t = line.strip(" \t:.'\"`")
    if len(t) < len(line):
        end = line.rstrip(" \t:.")
        q = end[-1:]
        if q and q in "'\"`" and t.endswith(end[-2:-1]) and t.count(q) % 2 == 1:
            return t + q
    return t


