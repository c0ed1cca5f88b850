"""What one fork commit message says about upstream commits (pure; no git, no I/O).

:func:`claims` turns a fork commit message into :class:`Claim` values, which the ledger
(:mod:`bot.core.ledger`) resolves against the upstream range and orders in time. Rules, in the order
they are tried (each configurable in :class:`bot.config.forksync.ProvenanceRules`):

1. forksync trailers — ``Upstream-Commit: <sha>`` (pick), ``Upstream-Deferred:`` /
   ``Upstream-Skipped:`` / ``Upstream-Wont-Port:`` / ``Upstream-Reverted: <sha> <reason>``
   (decisions), ``Upstream-Urgent: <reason>`` (the commit's picks are isolated).
2. ``(cherry picked from commit <sha>)`` (``git cherry-pick -x``); prose that names the sha it
   took: "Sync upstream commit 5900ea6b2 by …" (sync/port/apply/backport/cherry-pick, real case:
   the Triton fork's #2982), rule ``upstream-commit-prose``; ``git merge --squash``'s own message
   (subject ``Squashed commit of the following:``, then per squashed commit a ``commit <40 hex>``
   line followed by its ``Author:`` line), rule ``squash-merge`` — only that form: a ``commit
   <sha>`` mention anywhere else claims nothing.
3. user trailer regexes (``TrailerRule``: group ``sha``, meaning picked/reverted/deferred/…).
4. upstream PR citations (``#N`` per ``pr_citation_pattern``):

   * in the subject: every ``#N`` except the fork's own PR number (a trailing ``(#N)`` that
     follows another citation, e.g. ``… (#9552, #9642) (#1872)``, or a number named by an
     ``own_pr_patterns`` match such as ``Pull Request resolved: …/pull/1872``). A subject with a
     pick marker (``pick_markers``: cherry-pick, backport, bundle …) gives *strong* claims; without
     one the claim is *weak*: the ledger accepts it only when the upstream subject text appears
     in the fork subject (so "Fix X after upstream refactor (#9133)" is not a pick);
   * in the body, only in list sections: a heading such as ``Picked (12):``, ``Upstream PRs:``
     or ``Reactor-Bundle (applied …):`` makes its cited PRs picks (when the subject has a pick
     marker), and lines starting ``...`` continue a subject cut with ``...``; a heading such as
     ``Deferred (8):``, ``Won't-port (1):`` or ``Skipped:`` makes them decisions with the line as
     reason. Markdown headings (``### Still deferred``) and bold lead-ins count as headings.
     A heading such as ``Pin-advance only (no beta code):`` or ``Dependents already satisfied``
     makes its PRs ``no-op``; ``Inapplicable (…):`` makes them ``skip``. A list item's own
     annotation after its dash separator (``— NO-OP (not adopted)``, ``— declined; …``,
     ``— ADOPTED``) overrides its section. A body decision about a PR of the subject's list
     replaces that PR's subject pick: the subject lists every member, the body says what became
     of each. The prose sentence "Built on the earlier 3-pick bundle (#a, #b, #c)" makes those
     picks. Prose elsewhere, and quoted upstream messages (lines starting ``>``), are ignored.
   * PR numbers nested in a quoted upstream title are that title's references: in
     ``'Reapply "X (#7918)" (#8029) (#8129)'`` only #8129 counts. A line of ``;``-separated
     items that open with their PR claims only those opening numbers.
   * a subject whose only citation is a trailing ``(#N)`` — the form a squash merge gives every
     fork PR ("Sync upstream (#88)") — gives a weak claim: the ledger accepts it only when
     confirmed (upstream subject in the fork subject, same patch-id, or the same paths).

0. **A forksync conflict commit claims nothing.** A message with a ``Forksync-Conflict: <sha>``
   trailer (:func:`is_conflict_commit`; written by ``bot/git/apply.py`` when a chain stops at a
   conflicted pick) holds that pick *unresolved*, with conflict markers: it is never a pick, a
   revert or a decision, whatever its subject cites — even once merged into the fork. The ledger
   also leaves it out of patch-id matching and of back-out detection.

Fork back-outs are read by :func:`reverted_targets`: ``This reverts commit <sha>`` (not
quoted; the sha may be abbreviated, or a commit URL on the next line), ``Revert "<subject>"``,
``Back out "<subject>"`` (also behind ``[tag]`` prefixes and followed by more words),
``Revert D123: <subject>``; and by :func:`reverted_diffs`: Phabricator ids (``Revert D123
(#869)``, ``This diff reverts D123``), matched against the fork commits'
``Differential Revision: D123`` lines.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from bot.config.forksync import ProvenanceRules


@dataclass(frozen=True)
class Claim:
    """One statement of a fork commit about an upstream commit.

    ``kind``: ``pick`` | ``revert`` | ``defer`` | ``skip`` | ``wont-port``.
    ``ref``: a sha (full or abbreviated, lower-case hex) or ``#N`` (an upstream PR number).
    ``rule``: the evidence rule (``trailer:Upstream-Commit``, ``cherry-picked-from``,
    ``trailer:<name>``, ``pr-citation``). ``weak``: a subject citation without a pick marker.
    """

    kind: str
    ref: str
    rule: str
    reason: str = ""
    weak: bool = False


_FS_TRAILER = re.compile(
    r"^Upstream-(Commit|Deferred|Skipped|Wont-Port|Reverted):[ \t]*([0-9a-fA-F]{7,40})\b[ \t]*(.*)$",
    re.MULTILINE | re.IGNORECASE)
_FS_KIND = {"commit": "pick", "deferred": "defer", "skipped": "skip", "wont-port": "wont-port",
            "reverted": "revert"}
_CONFLICT = re.compile(r"^Forksync-Conflict:[ \t]*[0-9a-fA-F]{7,40}\b", re.MULTILINE | re.IGNORECASE)
_URGENT = re.compile(r"^Upstream-Urgent:[ \t]*(.*)$", re.MULTILINE | re.IGNORECASE)
_CHERRY = re.compile(r"^\(cherry picked from commit ([0-9a-f]{7,40})\)\s*$", re.MULTILINE)
# git merge --squash: "Squashed commit of the following:", then a `git log` of the squashed commits
_SQUASH_SUBJECT = "Squashed commit of the following:"
_SQUASHED = re.compile(r"^commit ([0-9a-f]{40})\n(?:Merge: [0-9a-f ]+\n)?Author: ", re.MULTILINE)
_PROSE_SHA = re.compile(r"(?im)^(?![ \t]*>).*?\b(?:sync|port|apply|backport|cherry-pick)(?:s|ed)?\s+upstream\s+commit\s+"
                        r"([0-9a-f]{7,40})\b")
# a pick stated by sha in prose or a list: "* Cherry-pick 06e6799f… to 3.0.x", "cherry-pick of\n<sha>"
_PICK_SHA = re.compile(r"(?im)^(?![ \t]*>).*?\bcherry[- ]?pick(?:s|ed)?(?:\s+of)?\s+([0-9a-f]{7,40})\b")
# under a pick subject: a line that is a commit URL ("https://github.com/o/r/commit/<sha>", bulleted
# or bare), and a list item that opens with an abbreviated sha ("- 9a0a7c2cc [AMD] Add … (#4117)")
_URL_COMMIT = re.compile(r"(?m)^[ \t]*(?:[-*•][ \t]*)?<?https?://github\.com/[\w.-]+/[\w.-]+/commit/([0-9a-f]{7,40})\b")
_LISTED_SHA = re.compile(r"(?m)^[ \t]*[-*•][ \t]+((?=[0-9a-f]*\d)[0-9a-f]{7,40})[ \t]+\S")
_MEANING_KIND = {"picked": "pick", "reverted": "revert", "deferred": "defer", "skipped": "skip",
                 "wont-port": "wont-port"}
_URL_PR = re.compile(r"github\.com/[\w.-]+/[\w.-]+/pull/(\d+)")
_TRAILING_OWN = re.compile(r"\(#(\d+)\)\s*$")
_HEADING = re.compile(r"^[A-Za-z][^:\n]{0,120}?:|^[A-Za-z][\w' \-]{0,60}\(\d+\)\s*\.?$")
_SECTION_KINDS = (
    ("wont-port", re.compile(r"(?i)\bwon'?t[- ]?port|\bdeclined\b|\bwill not port|\bnot ported\b")),
    ("defer", re.compile(r"(?i)\bdefer(?:red)?\b|\bblocked\b|\bpostponed\b")),
    ("skip", re.compile(r"(?i)\bskip(?:ped)?\b|\binapplicable\b|\bnot applicable\b")),
    ("no-op", re.compile(r"(?i)\bno[- ]?ops?\b|\bpin[- ]advance|\balready (?:satisfied|present|applied|in)\b|"
                         r"\bfrontier advance\b|\bnothing to (?:port|apply)\b")),
    ("pick", re.compile(r"(?i)\bpicked\b|\bapplied\b|\bbundle\b|\bupstream prs?\b|\bincluded\b|\bbackports?\b|cherry[- ]?pick")),
)


@lru_cache(maxsize=64)
def _rx(pattern: str, flags: int = 0) -> re.Pattern:
    return re.compile(pattern, flags)


def own_prs(message: str, rules: ProvenanceRules) -> set[int]:
    """The fork's own PR numbers named by a message (never upstream citations)."""
    subject = message.split("\n", 1)[0].rstrip()
    own: set[int] = set()
    for pat in rules.own_pr_patterns:
        for m in _rx(pat, re.MULTILINE).finditer(message):
            own.add(int(m.group(1)))
    m = _TRAILING_OWN.search(subject)
    if m and _rx(rules.pr_citation_pattern).search(subject[:m.start()]):
        own.add(int(m.group(1)))
    return own


def has_pick_marker(subject: str, rules: ProvenanceRules) -> bool:
    return any(_rx(p).search(subject) for p in rules.pick_markers)


def _cites(text: str, rules: ProvenanceRules, with_urls: bool = False) -> list[int]:
    out = [int(m.group(1)) for m in _rx(rules.pr_citation_pattern).finditer(text)]
    if with_urls:
        out += [int(m.group(1)) for m in _URL_PR.finditer(text)]
    return out


def _section_kind(line: str) -> str | None:
    if re.match(r"^https?://", line):
        return None
    m = _HEADING.match(line.strip())
    if not m:
        return None
    head = m.group(0)
    for kind, rx in _SECTION_KINDS:
        if rx.search(head):
            return kind
    return "neutral"


_MEMO: dict[tuple[int, str], tuple[Claim, ...]] = {}
_RULES_KEYS: dict[int, tuple[ProvenanceRules, int]] = {}


def claims(message: str, rules: ProvenanceRules) -> list[Claim]:
    """All claims of one fork commit message, in message order (see the module docstring).
    Memoized per (rules, message): a series over many dates parses each message once."""
    rid = id(rules)
    ent = _RULES_KEYS.get(rid)
    if ent is None or ent[0] is not rules:
        key = hash(rules.model_dump_json())
        _RULES_KEYS[rid] = (rules, key)
    else:
        key = ent[1]
    hit = _MEMO.get((key, message))
    if hit is None:
        if len(_MEMO) > 200_000:
            _MEMO.clear()
        hit = _MEMO[(key, message)] = tuple(_claims(message, rules))
    return list(hit)


def unpicked(shas, messages, rules: ProvenanceRules) -> list[str]:
    """The upstream commits of ``shas`` (full shas, in order) that no message of ``messages`` claims
    as a pick the ledger counts: a strong ``pick`` claim (:func:`claims`: an ``Upstream-Commit``
    trailer, ``(cherry picked from commit …)``, a configured trailer) whose sha is the commit's or
    a prefix of it. PR-number citations (``#N``) are not resolved here (that needs upstream's
    subjects), so a commit named only by its PR counts as unpicked. ``[]`` when all are picked."""
    named = {c.ref for m in messages for c in claims(m, rules) if c.kind == "pick" and not c.weak
             and not c.ref.startswith("#")}
    return [s for s in shas if s not in named and not any(s.startswith(r) for r in named)]


def picks_named(shas, message: str, rules: ProvenanceRules) -> list[str]:
    """The upstream commits of ``shas`` (full shas, in order) that one fork commit ``message``
    claims as picks the way :func:`unpicked` reads them (strong ``pick`` claims by sha). More
    than one is a squash of picks: one fork commit standing for several upstream commits."""
    named = {c.ref for c in claims(message, rules) if c.kind == "pick" and not c.weak and not c.ref.startswith("#")}
    return [s for s in shas if s in named or any(s.startswith(r) for r in named)]


def clear_memo() -> None:
    """Forget memoized claims (benchmarks measure a fresh process this way)."""
    _MEMO.clear()
    _RULES_KEYS.clear()


def is_conflict_commit(message: str) -> bool:
    """Whether a fork commit is forksync's conflict commit (a ``Forksync-Conflict: <sha>``
    trailer): an unresolved pick that counts for nothing (rule 0 of the module docstring)."""
    return _CONFLICT.search(message) is not None


def _claims(message: str, rules: ProvenanceRules) -> list[Claim]:
    out: list[Claim] = []
    if is_conflict_commit(message):
        return out
    if rules.forksync_trailers:
        for m in _FS_TRAILER.finditer(message):
            kind = _FS_KIND[m.group(1).lower()]
            out.append(Claim(kind, m.group(2).lower(), f"trailer:Upstream-{m.group(1).title()}", m.group(3).strip()))
    if rules.cherry_picked_from:
        for m in _CHERRY.finditer(message):
            out.append(Claim("pick", m.group(1), "cherry-picked-from"))
        if message.startswith(_SQUASH_SUBJECT):
            for m in _SQUASHED.finditer(message):
                out.append(Claim("pick", m.group(1), "squash-merge", "named by git merge --squash's message"))
        # prose that says a commit took an upstream change by sha: "Sync upstream commit 5900ea6b2 by …"
        for m in _PROSE_SHA.finditer(message):
            out.append(Claim("pick", m.group(1).lower(), "upstream-commit-prose", m.group(0)[:200]))
        said = {c.ref for c in out}
        subject, _, body = message.partition("\n")
        listed = [*_PICK_SHA.finditer(message)]
        if has_pick_marker(subject, rules):
            listed += [*_URL_COMMIT.finditer(body), *_LISTED_SHA.finditer(body)]
        for m in listed:
            sha = m.group(1).lower()
            if sha not in said:
                said.add(sha)
                out.append(Claim("pick", sha, "upstream-commit-prose", m.group(0).strip()[:200]))
    for tr in rules.trailers:
        for m in _rx(tr.pattern, re.MULTILINE).finditer(message):
            reason = m.groupdict().get("reason") or ""
            out.append(Claim(_MEANING_KIND[tr.meaning], m.group("sha").lower(), f"trailer:{tr.name}", reason.strip()))
    if rules.pr_citations:
        out += _citation_claims(message, rules)
    return out


_ITEM_KINDS = (
    ("no-op", re.compile(r"(?i)^(?:no[- ]?ops?|pin[- ]advance|already (?:satisfied|present|applied|in)|nothing to (?:port|apply))\b")),
    ("skip", re.compile(r"(?i)^(?:inapplicable|not applicable|skip(?:ped)?)\b")),
    ("wont-port", re.compile(r"(?i)^(?:declined|won'?t[- ]?port|will not port|not ported)\b")),
    ("defer", re.compile(r"(?i)^(?:defer(?:red)?|blocked|postponed)\b")),
    ("pick", re.compile(r"(?i)^(?:(?:clean\s*/\s*)?adopted|applied|picked|clean)\b")),
)
_EARLIER_BUNDLE = re.compile(
    r"(?i)\b(?:built|based|stacked|landed) on (?:top of )?(?:the |an )?earlier\b[^.()\n]{0,60}?\bbundle\s*\(([^()\n]*)\)")
_QUOTED = re.compile(r"(?<![\w])'(.+)'(?![\w])")
_DQUOTED = re.compile(r'"[^"\n]*"')


def _item_kind(tail: str) -> str | None:
    """The disposition a list item states after its dash separator ("— NO-OP (…)", "— declined;
    …", "— ADOPTED"), or None when the tail is only a description."""
    t = tail.strip().lstrip("*_`(").strip()
    for kind, rx in _ITEM_KINDS:
        if rx.match(t):
            return kind
    return None


def _outer_cites(text: str, rules: ProvenanceRules, with_urls: bool = False) -> list[int]:
    """Citations of ``text`` without the ones nested in a quoted upstream title: inside
    ``'Reapply "X (#7918)" (#8029) (#8129)'`` only the last number (#8129, the quoted commit's own
    PR) counts — the others are the upstream title's references to older commits; a double-quoted
    title inside unquoted text cites nothing when a number outside the quotes exists."""
    m = _QUOTED.search(text)
    if m:
        inner = _cites(m.group(1), rules)
        outer = _outer_cites(text[:m.start()] + " " + text[m.end():], rules, with_urls)
        return inner[-1:] + outer if inner else outer
    stripped = _DQUOTED.sub(" ", text)
    out = _cites(stripped, rules, with_urls)
    return out if out or stripped == text else _cites(text, rules, with_urls)


def _item_cites(head: str, rules: ProvenanceRules) -> list[int]:
    """Citations of a list line. A line of ``;``-separated items that each open with their PR
    ("#10124 [Gluon] …; #10120 Python typing followup to #10048; …") claims only those opening
    numbers: the others are the items' titles referring to older commits."""
    pieces = head.split(";")
    lead = [re.match(r"^[\s\-*•]*(?:\*\*)?(?:triton-lang/triton)?#(\d+)\b", p) for p in pieces]
    if len(pieces) < 2 or sum(1 for m in lead if m) < 2:
        return _outer_cites(head, rules, with_urls=True)
    out: list[int] = []
    for p, m in zip(pieces, lead):
        out += [int(m.group(1))] if m else _outer_cites(p, rules, with_urls=True)
    return out


def _heading_text(line: str) -> str:
    """A markdown heading or bold lead-in without its markup (``### Still deferred`` → ``Still deferred``)."""
    line = re.sub(r"^#{1,6}\s+", "", line)
    return re.sub(r"^\*\*(.+?)\*\*", r"\1", line).strip()


def _citation_claims(message: str, rules: ProvenanceRules) -> list[Claim]:
    subject, _, body = message.partition("\n")
    own = own_prs(message, rules)
    marker = has_pick_marker(subject, rules)
    out: list[Claim] = []
    subject_prs: list[int] = []
    lone = _lone_trailing(subject, rules)
    for n in _outer_cites(subject, rules):
        if n not in own and n not in subject_prs:
            subject_prs.append(n)
            out.append(Claim("pick", f"#{n}", "pr-citation", "cited in the subject", weak=not marker or n == lone))
    cut = bool(re.search(r"(\.\.\.|…)\s*(\(#\d+\))?\s*$", subject))
    # "(#9709 and 13 more)": the other PRs are the body's bullets that start with a citation
    more = marker and bool(re.search(r"\band \d+ more\b", subject))
    section: str | None = None
    seen = set(subject_prs)
    decided: set[int] = set()       # subject PRs a body item gave another disposition
    just_headed = False
    for raw in body.split("\n"):
        line = raw.strip()
        if line.startswith(">"):
            continue                    # quoted upstream message
        if not line:
            if not just_headed:
                section = None          # a blank line ends a list (unless it follows its heading)
            continue
        if marker:
            # "Built on the earlier 3-pick bundle (#9954, #10031, #10013).": they land with this one
            for m in _EARLIER_BUNDLE.finditer(line):
                for n in _cites(m.group(1), rules):
                    if n not in own and n not in seen:
                        seen.add(n)
                        out.append(Claim("pick", f"#{n}", "pr-citation", m.group(0)[:300]))
        hl = _heading_text(line)
        kind = _section_kind(hl) if hl and hl[0].isalpha() and (":" in hl or hl[-1] in ").") else None
        if kind is None and hl != line and hl and hl[0].isalpha():
            kind = _section_kind(hl + ":")       # a markdown heading needs no colon
        just_headed = kind is not None
        if kind is not None:
            section = kind
        elif not re.match(r"^([-*•]|\d+[.)]|#\d|https?://|\.\.\.|…)", line):
            section = None              # prose ends a list section
        is_cont = (cut and (line.startswith("...") or line.startswith("…"))) or (
            more and section not in ("defer", "skip", "wont-port", "no-op") and bool(re.match(r"^[-*•]?\s*#\d", line)))
        if not (section or is_cont):
            continue
        # in a list line, the PRs before a dash separator are its subject; after it comes the
        # reason, which may name other PRs (dependencies) that are not part of the claim, and
        # may open with the item's own disposition ("— NO-OP (…)", "— declined; …")
        parts = re.split(r"\s(?:—|–|--)\s", line, maxsplit=1)
        head = parts[0]
        item = _item_kind(parts[1]) if len(parts) > 1 and kind is None else None
        nums = _item_cites(head, rules)
        if not nums and section == "pick" and kind is not None:
            # "Applied (94): 9720 9725 …": a heading followed by bare PR numbers only
            tail = head.split(":", 1)[1] if ":" in head else ""
            if re.fullmatch(r"(?:[\s,;]*\d{2,6})+[\s,;.]*", tail):
                nums = [int(x) for x in re.findall(r"\d+", tail)]
        eff = item or (section if not is_cont else "pick")
        if eff == "pick" or (is_cont and item is None):
            if not marker:
                continue
            for n in nums:
                if n not in own and n not in seen:
                    seen.add(n)
                    out.append(Claim("pick", f"#{n}", "pr-citation",
                                     ("continued in the body" if cut else "one of the subject's \"more\"")
                                     if is_cont else "listed in the body"))
        elif eff in ("defer", "skip", "wont-port", "no-op"):
            reason = re.sub(r"^[-*•]\s*", "", line)[:300]
            for n in nums:
                if n in own or n in decided:
                    continue
                if n in subject_prs:
                    # the bundle's subject lists every member; the body's own words about one
                    # member ("Pin-advance only (no beta code): #9653", "— NO-OP (not adopted)")
                    # say what became of it
                    decided.add(n)
                    out.append(Claim(eff, f"#{n}", "pr-citation", reason))
                elif n not in seen:
                    seen.add(n)
                    out.append(Claim(eff, f"#{n}", "pr-citation", reason))
    if decided:
        out = [c for c in out if not (c.kind == "pick" and c.rule == "pr-citation" and c.reason == "cited in the subject"
                                      and int(c.ref[1:]) in decided)]
    return out


def _lone_trailing(subject: str, rules: ProvenanceRules) -> int | None:
    """The number of a subject's only citation when it is a trailing ``(#N)`` — the form a
    squash merge gives every fork PR ("Sync upstream (#88)", "[forksync] bundle: … (#88)"), so it
    may be the fork's own PR: such a citation is weak and claims an upstream commit only when
    the ledger confirms it (the upstream subject in the fork subject, or the same paths)."""
    m = _TRAILING_OWN.search(subject)
    if not m or _rx(rules.pr_citation_pattern).search(subject[:m.start()]):
        return None
    return int(m.group(1))


def is_urgent(message: str, patterns: list[str] | tuple[str, ...] = ()) -> str | None:
    """The urgency reason when a fork commit is an isolated pick (``Upstream-Urgent:`` or one of
    the config's ``isolated_picks.message_patterns``), else None."""
    m = _URGENT.search(message)
    if m:
        return m.group(1).strip() or "urgent"
    for p in patterns:
        if _rx(p, re.MULTILINE).search(message):
            return f"matches {p!r}"
    return None


# "This reverts commit <sha>", and the form a hand-written body gives it: "This reverts commit\n
# https://github.com/<org>/<repo>/commit/<sha>." (the Intel fork's 1bd6d4375b)
_REVERTS_SHA = re.compile(r"^This reverts commit(?: |\s*\n<?https?://\S+?/commit/)([0-9a-f]{7,40})", re.MULTILINE)
_REVERT_SUBJ = re.compile(r'^(?:Revert|Back ?out|Backout)\s+"(.*)"\s*(?:\(#\d+\))?\s*$', re.IGNORECASE)
# 'Back out "Revert D86123088", Fix old TMA API' behind the fork's tags: the quoted subject, then more words
_REVERT_SUBJ_LEAD = re.compile(r'^(?:\[[^\]]*\]\s*)*(?:Revert|Back ?out|Backout)\s+"([^"]+)"[,:;]\s', re.IGNORECASE)
_REVERT_D = re.compile(r"^(?:Revert|Back ?out)\s+D\d+:\s*(.+)$", re.IGNORECASE)


#: GitHub's revert button writes ``Reverts owner/repo#<PR>`` in the revert's body (real case:
#: triton-lang/triton ``23719b7c8a`` "Reverts triton-lang/triton#5707"); the number ends where
#: GitHub's reference ends (``#11abc`` links nothing)
_REVERTS_PR = re.compile(r"^Reverts [\w.-]+/[\w.-]+#(\d+)\b", re.MULTILINE)


def reverted_prs(message: str) -> list[str]:
    """Pure: the PR numbers (as written, digits) an upstream commit's ``message`` reverts with
    GitHub's ``Reverts owner/repo#<PR>`` line (not quoted), in order."""
    return _REVERTS_PR.findall(message)


def reverted_targets(message: str) -> tuple[list[str], list[str]]:
    """``(shas, subjects)`` a fork commit reverts/backs out: ``This reverts commit <sha>`` lines
    (not quoted with ``>``; full or abbreviated sha, or a commit URL on the next line), and the subject quoted by ``Revert "…"`` / ``Back out "…"`` /
    ``Revert D123: …``."""
    subject = message.split("\n", 1)[0].strip()
    shas = [m.group(1) for m in _REVERTS_SHA.finditer(message)]
    subjects = []
    m = _REVERT_SUBJ.match(subject) or _REVERT_D.match(subject) or _REVERT_SUBJ_LEAD.match(subject)
    if m:
        subjects.append(m.group(1).strip())
    return shas, subjects


_DIFF_REVISION = re.compile(r"^Differential Revision:\s*(?:\S*/)?(D\d+)\s*$", re.MULTILINE)
_REVERT_DIFF_SUBJ = re.compile(r"^(?:Revert|Back ?out|Backout)\s+(D\d+)\b", re.IGNORECASE)
_REVERT_DIFF_BODY = re.compile(r"^This diff (?:reverts|backs out) (D\d+)\b", re.MULTILINE | re.IGNORECASE)


def differential_id(message: str) -> str | None:
    """The Phabricator id a fork commit landed as (``Differential Revision: D123``), or None."""
    m = _DIFF_REVISION.search(message)
    return m.group(1) if m else None


def reverted_diffs(message: str) -> list[str]:
    """Phabricator ids a fork commit reverts: ``Revert D123 (#869)`` / ``Revert D123: …`` /
    ``Back out D123`` subjects and ``This diff reverts D123`` lines (real case: fork #869
    "Revert D92486154", whose body names no subject; D92486154 is the fork's back-out of #7771)."""
    subject = message.split("\n", 1)[0].strip()
    out = [m.group(1) for m in (_REVERT_DIFF_SUBJ.match(subject),) if m]
    out += [m.group(1) for m in _REVERT_DIFF_BODY.finditer(message)]
    return list(dict.fromkeys(out))


def mentioned_diffs(message: str) -> list[str]:
    """Every Phabricator id (``D`` + at least 5 digits) a message names, in order, once each."""
    return list(dict.fromkeys(re.findall(r"\bD\d{5,}\b", message)))


def normalize_subject(s: str) -> str:
    """A subject without a trailing ``(#N)`` and surrounding space, lower-cased (for matching)."""
    return re.sub(r"\s*\(#\d+\)\s*$", "", s.strip()).strip().lower()
