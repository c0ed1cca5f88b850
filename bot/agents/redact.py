"""Redaction of secrets and personal data before any text reaches an LLM prompt (pure).

Every string that goes into a prompt passes through :func:`redact` (the prompt builder does it
for each data block and :class:`bot.agents.client.AgentClient` does it again over the whole
request). What is redacted, in this order (the order matters: a PEM block or a URL with
credentials is taken whole before its parts could match the narrower rules):

* the value of every configured secret (:func:`register_secrets`: the webhook secret, the GitHub
  token, the App's private key, the model API key …) and of ``Redactor.known``, wherever it
  appears, percent-encoded too (a URL's query or userinfo) — a value has no shape a pattern could
  know; one that a line break cuts (a wrapped log line), and a GitHub token so cut, is first
  joined again (:func:`mend_cut_secrets`);
* PEM private-key blocks (``-----BEGIN … PRIVATE KEY-----`` … ``-----END …-----``);
* credentials in URLs (``https://user:secret@host``, and a token-long user alone:
  ``https://<token>@host``);
* ``Authorization:`` header values of any scheme (``token``, ``Bearer``, ``Basic`` …);
* GitHub tokens (``ghp_ gho_ ghu_ ghs_ ghr_`` and ``github_pat_``), Anthropic keys (``sk-ant-``),
  other ``sk-`` API keys, Slack tokens (``xox?-``), AWS access key ids (``AKIA``/``ASIA`` + 16),
  PyPI/Hugging Face/Google/npm tokens, JSON web tokens (``eyJ….….…``), ``Bearer …`` values and
  ``Authorization: Basic …`` credentials;
* values after generic labels: ``token=``, ``password:``, ``secret=``, ``api_key=``,
  ``aws_secret_access_key =`` … (the label stays, the value goes);
* e-mail addresses;
* the user name in home paths: ``/home/<user>``, ``/Users/<user>``, ``C:\\Users\\<user>``.

Placeholders look like ``[REDACTED-<kind>-<n>]``; the same secret gets the same placeholder
within one :class:`Redactor`, so a model can still tell two values apart. A :class:`Redactor`
remembers which original each placeholder stands for and, per *source* (e.g. one file's
versions), can put them back into text that never leaves the machine (a resolved file written
to git), see :meth:`Redactor.restore`. Sources: GitHub's token formats
(docs.github.com "About authentication", token prefixes), AWS key id format (IAM docs).
"""
from __future__ import annotations

import bisect
import logging
import re
from dataclasses import dataclass, field
from urllib.parse import quote, quote_plus

from ahocorasick_rs import AhoCorasick, Implementation

#: GitHub's token formats (docs.github.com "About authentication", token prefixes): personal
#: ``ghp_``, OAuth ``gho_``, user-to-server ``ghu_``, installation ``ghs_``, refresh ``ghr_`` and
#: fine-grained ``github_pat_``. Removed by :func:`scrub` as well as by :class:`Redactor`.
#: No boundary before the prefix: a token glued to a word (``TOKEN_ghp_…``, ``AUTH_github_pat_…``,
#: an environment dump, a URL's query) is still one, and the prefix with 20 letters or digits
#: after it names nothing else (none in Triton's sources, tests/agents/test_redact_glued.py).
GITHUB_TOKEN = re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")

#: Before a key whose prefix could end an ordinary word (``sk-``, ``hf_``, ``AKIA``, ``eyJ`` …):
#: no letter or digit, so ``KEY_sk-…`` or ``X_AKIA…`` is caught — ``\b`` would miss it, ``_``
#: being a word character — while ``task-…`` or ``mask_hf_…`` words stay as they are.
_GLUED = r"(?<![A-Za-z0-9])"

#: the END line of a PEM private key, and a line of its body (base64, after an optional log prefix
#: such as a timestamp): :meth:`Redactor._key_tails` finds a key whose BEGIN line was cut off
_KEY_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_KEY_LINE = re.compile(r"[ \t]*(?:\S+[ \t]+)?[A-Za-z0-9+/=]{16,}[ \t\r]*")

#: (kind, compiled pattern, group holding the secret value: 0 = whole match, prefilter: the rule
#: runs only when one of these substrings occurs in the lower-cased text — a cheap skip).
_RULES: tuple[tuple[str, re.Pattern[str], int, tuple[str, ...]], ...] = (
    ("private-key", re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"),
     0, ("private key",)),
    ("url-credentials", re.compile(r"(?<=://)(?:[^/\s:@]+:[^/\s@]+|[^/\s:@]{16,})(?=@)"), 0, ("://",)),
    ("github-token", GITHUB_TOKEN, 0,
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    # an Anthropic key at its issued shape (``sk-ant-api03-…``, ``sk-ant-admin01-…``) glued to anything
    ("anthropic-key", re.compile(_GLUED + r"sk-ant-[A-Za-z0-9_\-]{8,}|sk-ant-[a-z]+\d\d-[A-Za-z0-9_\-]{20,}"), 0,
     ("sk-ant-",)),
    ("api-key", re.compile(_GLUED + r"sk-[A-Za-z0-9_\-]{20,}"), 0, ("sk-",)),
    ("slack-token", re.compile(_GLUED + r"xox[abprs]-[A-Za-z0-9\-]{10,}"), 0, ("xox",)),
    ("aws-key-id", re.compile(_GLUED + r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"), 0, ("akia", "asia")),
    ("jwt", re.compile(_GLUED + r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), 0, ("eyj",)),
    ("api-token", re.compile(_GLUED + r"(?:pypi-[A-Za-z0-9_\-]{50,}|hf_[A-Za-z0-9]{30,}|AIza[0-9A-Za-z_\-]{35}|npm_[A-Za-z0-9]{36})"),
     0, ("pypi-", "hf_", "aiza", "npm_")),
    ("bearer", re.compile(r"(?i)(?<![a-z0-9])bearer\s+([A-Za-z0-9_\-\.=+/]{8,})"), 1, ("bearer",)),
    ("basic-auth", re.compile(r"(?i)(?<![a-z0-9])authorization\s*:\s*basic\s+([A-Za-z0-9+/=]{8,})"), 1, ("authorization",)),
    ("authorization", re.compile(
        r"(?i)(?<![a-z0-9])authorization\s*[:=]\s*(?:(?:token|bearer|basic|digest|bot|apikey)\s+)?([^\s\"',;]{6,})"), 1,
     ("authorization",)),
    ("secret", re.compile(
        r"(?i)(?:token|passwd|password|secret|api[_\-]?key|access[_\-]?key|private[_\-]?key|credentials?)"
        r"[\"']?\s*[:=]\s*[\"']?([^\s\"',;}]{4,})"), 1,
     ("token", "passwd", "password", "secret", "key", "credential")),
    ("email", re.compile(r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b"),
     0, ("@",)),
    ("user", re.compile(r"(?:/home/|/Users/|\\Users\\)(?!\[REDACTED)([A-Za-z0-9._\-]+)"), 1,
     ("/home/", "/users/", "\\users\\")),
)

#: A placeholder the redactor puts in place of a secret (``[REDACTED-<kind>-<n>]``).
PLACEHOLDER = re.compile(r"\[REDACTED-([a-z\-]+)-(\d+)\]")

#: Values that look like secrets to the generic label rule but are not (kept as is).
_NOT_SECRETS = frozenset({"none", "null", "true", "false", "required", "optional", "redacted",
                          "<redacted>", "xxx", "xxxx", "****", "${{", "string", "str", "bool", "int"})


#: Values of configured secrets, redacted wherever they appear (see :func:`register_secrets`).
_CONFIGURED: set[str] = set()
#: Shorter values are not registered: redacting every "abc" would garble text and protect nothing.
MIN_SECRET_LEN = 6


def register_secrets(*values: str | None) -> None:
    """Add configured secret values (the process's own: webhook secret, tokens, keys) to what every
    :class:`Redactor` removes. Empty and short values (< :data:`MIN_SECRET_LEN`) are ignored; a
    multi-line value (a PEM key) is registered line by line too, so a fragment is caught."""
    for v in values:
        if not v:
            continue
        v = v.strip()
        for piece in [v, *v.splitlines()]:
            piece = piece.strip()
            if len(piece) >= MIN_SECRET_LEN and not piece.startswith("-----"):
                _CONFIGURED.update(encoded_forms(piece))


def encoded_forms(value: str) -> set[str]:
    """``value`` and its percent-encoded forms (RFC 3986 ``quote`` with nothing safe, and the form
    encoding's ``quote_plus``): a secret with ``/``, ``+``, ``=`` or ``@`` reaches a URL's query or
    userinfo, and an HTTP library's log or error, only so."""
    return {value, quote(value, safe=""), quote_plus(value)}


#: Secrets minted at run time (installation access tokens), oldest first; see :func:`remember_minted`.
#: A tuple replaced whole, never changed in place: threads scrubbing meanwhile read one version.
_MINTED: tuple[str, ...] = ()
#: How many minted secrets are remembered. An installation token lives one hour (GitHub) and a
#: worker mints one per installation and hour, so this is a day of twenty installations; an older
#: one has long expired, and its shape is still caught by :data:`GITHUB_TOKEN`.
MAX_MINTED = 512


def remember_minted(*values: str | None) -> None:
    """Add secrets obtained at run time — an installation access token from
    ``POST /app/installations/{id}/access_tokens`` — to what :func:`scrub` and every
    :class:`Redactor` remove, whatever their shape. Unlike :func:`register_secrets` the memory is
    bounded (:data:`MAX_MINTED`, oldest forgotten first): a long-running worker mints one every hour."""
    global _MINTED
    for v in values:
        v = (v or "").strip()
        if len(v) >= MIN_SECRET_LEN:
            forms = encoded_forms(v)
            _MINTED = (*(m for m in _MINTED if m not in forms), *sorted(forms))[-MAX_MINTED:]


#: every rule's needles in one automaton: a text holding none of them has nothing the rules redact
_NEEDLES = AhoCorasick(sorted({n for *_, needles in _RULES for n in needles}), implementation=Implementation.DFA)


def _any_needle(lowered: str) -> bool:
    return bool(_NEEDLES.find_matches_as_indexes(lowered))


def _known_values() -> set[str]:
    return _CONFIGURED | set(_MINTED)


#: the automaton over a set of secret values, for the newest set asked about (the registered and
#: minted ones change about once an hour; a log line asks many times between)
_FINDER: tuple[frozenset[str], AhoCorasick | None] = (frozenset(), None)


def _present(text: str, values: set[str] | frozenset[str]) -> set[str]:
    """The ``values`` that occur in ``text``, in one pass over it (Aho-Corasick) instead of one
    substring search per value: a worker remembers up to :data:`MAX_MINTED` tokens."""
    global _FINDER
    key = frozenset(values)
    if not key:
        return set()
    if _FINDER[0] != key:
        _FINDER = (key, AhoCorasick(sorted(key), implementation=Implementation.DFA))
    words, finder = _FINDER[0], _FINDER[1]
    found = {text[a:b] for _, a, b in finder.find_matches_as_indexes(text, overlapping=True)}
    return found & words


def configured_secrets() -> frozenset[str]:
    """The registered and the remembered minted secret values (for checks and log filters, never
    to be printed)."""
    return frozenset(_known_values())


def forget_secrets() -> None:
    """Clear the registry and the minted secrets (tests)."""
    global _MINTED
    _CONFIGURED.clear()
    _MINTED = ()


@dataclass
class Redactor:
    """Redacts text and remembers placeholders (``[REDACTED-<kind>-<n>]`` → original) per source.

    ``counts`` is how many values of each kind were redacted (for logs and tests; never the values).
    ``known`` are secret values to remove besides the registered ones (:func:`register_secrets`).
    """

    known: tuple[str, ...] = ()

    _by_value: dict[str, str] = field(default_factory=dict)
    _by_placeholder: dict[str, str] = field(default_factory=dict)
    _sources: dict[str, set[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def redact(self, text: str, source: str = "") -> str:
        """``text`` with every secret replaced by its placeholder; ``source`` names where the text
        came from (a file path, ``"commit-message"``…) so :meth:`restore` can be limited to it."""
        if not text:
            return text
        known = {f for v in self.known if v and len(v) >= MIN_SECRET_LEN for f in encoded_forms(v)} | _known_values()
        text = mend_cut_secrets(text, known)
        values = sorted({v for v in known if len(v) >= MIN_SECRET_LEN and v in text}, key=len, reverse=True)
        if values:
            rx = re.compile("|".join(re.escape(v) for v in values))
            text = rx.sub(lambda m: self._replace(m, "configured", 0, source), text)
        lowered = text.lower()          # again only after a rule changed the text
        if not _any_needle(lowered):     # the common case (a log line, a test's error): one scan
            return text
        for kind, rx, group, needles in _RULES:
            if not any(n in lowered for n in needles):
                continue
            new = rx.sub(lambda m, kind=kind, group=group: self._replace(m, kind, group, source), text)
            if new != text:
                text, lowered = new, new.lower()
        if "private key" in lowered:
            text = self._key_tails(text, source)
        return text

    def _key_tails(self, text: str, source: str) -> str:
        """``text`` with the body of every private key whose ``-----BEGIN …`` line is missing (an
        excerpt that starts inside the key) replaced: the lines of key text right above an
        ``-----END … PRIVATE KEY-----`` line that no BEGIN line opened, with that END line. Walked
        back line by line (each line matched once), so a long text costs linear time."""
        out, pos = [], 0
        for m in _KEY_END.finditer(text):
            start = text.rfind("\n", 0, m.start()) + 1          # the END line's start
            while start > 0:
                prev = text.rfind("\n", 0, start - 1) + 1
                if not _KEY_LINE.fullmatch(text, prev, start - 1):
                    break
                start = prev
            if start < pos or not _KEY_LINE.fullmatch(text, start, text.find("\n", start)):
                continue                    # no key line above it: an END line alone hides nothing
            value = re.match(r"[\s\S]*", text[start:m.end()])
            out.append(text[pos:start])
            out.append(self._replace(value, "private-key", 0, source))
            pos = m.end()
        return "".join(out) + text[pos:] if out else text

    def _replace(self, m: re.Match[str], kind: str, group: int, source: str) -> str:
        value = m.group(group)
        if value is None or PLACEHOLDER.fullmatch(value) or value.startswith("[REDACTED-"):
            return m.group(0)
        if kind == "secret" and (value.lower() in _NOT_SECRETS or value.startswith(("$", "{", "<", "%"))):
            return m.group(0)
        if kind == "user" and value.lower() in {"runner", "user", "username", "me", "root"}:
            return m.group(0)
        ph = self._by_value.get(value)
        if ph is None:
            n = sum(1 for p in self._by_placeholder if p.startswith(f"[REDACTED-{kind}-")) + 1
            ph = f"[REDACTED-{kind}-{n}]"
            self._by_value[value] = ph
            self._by_placeholder[ph] = value
            self.counts[kind] = self.counts.get(kind, 0) + 1
        self._sources.setdefault(source, set()).add(ph)
        start, end = m.span(group)
        whole = m.group(0)
        return whole[: start - m.start()] + ph + whole[end - m.start():]

    def restore(self, text: str, source: str) -> str:
        """Put back the originals of placeholders that were redacted *from ``source``*; other
        placeholders stay as they are (a secret from a log never lands in a file).
        Use only for text that stays on this machine (e.g. file content committed to the fork,
        which already held the value)."""
        allowed = self._sources.get(source, set())
        return PLACEHOLDER.sub(lambda m: self._by_placeholder[m.group(0)] if m.group(0) in allowed else m.group(0), text)

    @property
    def secrets(self) -> frozenset[str]:
        """Every original value redacted so far (for tests and output checks, never for logs)."""
        return frozenset(self._by_value)


#: A GitHub token at its full length: 40 characters for ``gh?_`` (prefix, 30 random, 6 checksum)
#: and 93 for ``github_pat_`` (GitHub blog, "Behind GitHub's new authentication token formats",
#: 2021). Only a cut inside this length is mended: a token that ends a line stays apart from
#: the next line's first word.
_WHOLE_GITHUB_TOKEN = re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82})")


def mend_cut_secrets(text: str, known: set[str] | frozenset[str] = frozenset()) -> str:
    """``text`` without the line breaks (``\\n``, ``\\r``) that cut a secret in two: a value of
    ``known`` (default: the registered and minted ones) or a GitHub token at its full length
    (:data:`_WHOLE_GITHUB_TOKEN`). A log, a CI output or an error dump wraps
    long lines, and neither piece of a cut token is then recognisable on its own. Other line
    breaks stay, so a token that ends a line does not swallow the next line's first word."""
    if "\n" not in text and "\r" not in text:
        return text
    # the text without its line breaks, searched at C speed; an index of it maps back to the
    # text through the sorted offsets of the breaks (a log of megabytes has few spans to map)
    breaks = [m.start() for m in _LINE_BREAK.finditer(text)]
    joined = _LINE_BREAK.sub("", text)
    spans = [m.span() for m in _WHOLE_GITHUB_TOKEN.finditer(joined)] if "gh" in joined else []
    for v in _present(joined, known or _known_values()):
        at = joined.find(v)
        while at >= 0:
            spans.append((at, at + len(v)))
            at = joined.find(v, at + 1)
    cuts: set[int] = set()
    for a, b in spans:
        # the breaks inside the span: those after the joined text's a-th and before its (b-1)-th
        # kept character; k breaks come before kept character j when breaks[k-1] < j + k
        lo, hi = _kept_at(breaks, a), _kept_at(breaks, b - 1)
        cuts.update(i for i in breaks[bisect.bisect_right(breaks, lo):bisect.bisect_left(breaks, hi)])
    return "".join(ch for i, ch in enumerate(text) if i not in cuts) if cuts else text


_LINE_BREAK = re.compile(r"[\r\n]")


def _kept_at(breaks: list[int], j: int) -> int:
    """The offset in the text of the ``j``-th character that is not a line break (``breaks``:
    the sorted offsets of the line breaks)."""
    lo, hi = 0, len(breaks)          # the number of breaks before it: the least k with breaks[k] > j + k
    while lo < hi:
        mid = (lo + hi) // 2
        if breaks[mid] <= j + mid:
            lo = mid + 1
        else:
            hi = mid
    return j + lo


def redact(text: str) -> str:
    """Redact ``text`` with a fresh :class:`Redactor` (placeholders numbered from 1)."""
    if not text or ("\n" not in text and not _any_needle(text.lower())
                    and not any(len(v) >= MIN_SECRET_LEN and v in text for v in _known_values())):
        return text         # nothing to redact: no Redactor built (a log line per failure calls this)
    return Redactor().redact(text)


def find_secrets(text: str) -> list[str]:
    """The kinds of secret that :func:`redact` would remove from ``text`` (empty: clean)."""
    r = Redactor()
    r.redact(text)
    return sorted(r.counts)


_USERINFO = re.compile(r"(?<=://)[^/\s@]+@")


def strip_userinfo(text: str) -> str:
    """``text`` with the userinfo of every URL replaced (``https://user:pw@h`` → ``https://***@h``):
    a private index, mirror or clone URL carries its password there."""
    return _USERINFO.sub("***@", text) if "://" in text else text


def error_text(e: BaseException, limit: int | None = None) -> str:
    """``"<ExceptionType>: <message>"`` for a note, a log line or a stored error, through
    :func:`scrub` — whole, and only then cut to ``limit`` characters: a cut through a secret leaves
    a part of it that no later scrub recognises."""
    text = scrub(f"{type(e).__name__}: {e}")
    return text if limit is None else text[:limit]


#: An HTTP credential header and its value (any scheme: ``token``, ``Bearer``, ``Basic`` — git's
#: ``http.extraheader=AUTHORIZATION: basic <base64 of x-access-token:TOKEN>`` — …), as a header
#: line, a ``-c`` option or a dumped dict of headers: group 1 is all before the value.
_CREDENTIAL_HEADER = re.compile(
    r"(?i)((?<![a-z0-9])(?:proxy-)?(?:authorization|x-api-key)[\"']?\s*[:=]\s*[\"']?"
    r"(?:(?:token|bearer|basic|digest|bot|apikey)\s+)?)[^\s\"',;}]+")


def scrub(text: str) -> str:
    """``text`` for a log line or a stored error: the userinfo of every URL (``https://user:pw@h``
    → ``https://***@h``), every registered or minted secret value (:func:`register_secrets`,
    :func:`remember_minted`; percent-encoded too), the value of every ``Authorization`` or
    ``x-api-key`` header (:data:`_CREDENTIAL_HEADER`) and every GitHub token
    (:data:`GITHUB_TOKEN`) replaced by ``***``; a secret cut by a line break goes whole
    (:func:`mend_cut_secrets`). Narrower than :class:`Redactor` on purpose: logs keep paths and
    e-mail addresses."""
    if not text:
        return text
    text = strip_userinfo(mend_cut_secrets(text))
    # the header names in any case, as the pattern matches them (``X-Api-Key``, ``AUTHORIZATION``)
    low = text.lower()
    if "authorization" in low or "x-api-key" in low:
        text = _CREDENTIAL_HEADER.sub(r"\1***", text)
    for v in sorted(_present(text, _known_values()), key=len, reverse=True):
        text = text.replace(v, "***")
    # a GitHub token no one registered (a token of the fork's own CI quoted in a log, a minted one
    # forgotten): its shape says what it is
    return GITHUB_TOKEN.sub("***", text) if ("gh" in text or "github_pat_" in text) else text


class ScrubbingFormatter(logging.Formatter):
    """A log formatter whose whole output (message, arguments, traceback) goes through :func:`scrub`."""

    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record))
