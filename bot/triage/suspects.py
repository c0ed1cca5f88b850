"""Suspects: rank the commits between the last green and the first red nightly (pure), then let
bisection confirm (through a plain function parameter: ``bot.git.bisect`` or anything shaped like it).

Evidence and weights (an observed case behind each: a failure's text names the file, the pass
or the function that broke far more often than chance):

* 6 — a changed file's name (basename or stem) is named in the error (``Allocation.cpp``,
  ``LinearLayout.cpp``);
* 5 — an MLIR pass named in the error matches a changed file's stem once the dialect prefix is
  dropped (``TritonGPURemoveLayoutConversions`` ↔ ``RemoveLayoutConversions.cpp``);
* 4 — a symbol named in the error (``getCvtOrder``, ``reshapeOuts``) is in a changed hunk's
  function context or the commit's symbols;
* 3 — the commit changes one of the failing tests' files;
* 2 — the commit touches the failing tests' subsystem (a path component such as
  ``TritonGPU`` or ``language``), or an area (``forksync.yml`` ``areas``) the failing tests'
  files belong to.

Ties are ordered newest first: a weak prior (a later commit had less time to be caught), used
only to order equal scores.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Awaitable, Callable, Iterable, Sequence

from bot.git.repo import commit_infos, rev_list
from bot.model import CommitInfo

__all__ = ["Suspect", "FailureContext", "rank_suspects", "upstream_of", "author_mention", "confirm"]

_UPSTREAM = re.compile(r"^Upstream-Commit:\s*([0-9a-f]{7,40})\s*$", re.M | re.I)
_FILE = re.compile(r"\b([\w\-]+\.(?:cpp|cc|c|h|hpp|td|py|mlir|cu|inc))\b")
_PASS = re.compile(r"\b((?:Triton|Convert)\w*?(?:GPU|Nvidia|AMD|Intel)?\w+)\b")
_DIALECT_PREFIX = re.compile(r"^(?:TritonAMDGPU|TritonNvidiaGPU|TritonIntelGPU|TritonGPU|TritonNVGPU|Triton|Convert)")
_SYMBOL = re.compile(r"(?:::|\b)([a-z][A-Za-z0-9]{3,}|[A-Z][a-z]+[A-Z]\w+)(?=\()")
_NOREPLY = re.compile(r"^(?:\d+\+)?([A-Za-z0-9](?:[A-Za-z0-9\-]{0,38}))@users\.noreply\.github\.com$")


@dataclass(frozen=True)
class FailureContext:
    """What the failure says: the failing tests and a few of their outputs."""

    tests: tuple[str, ...]
    texts: tuple[str, ...] = ()

    @property
    def test_files(self) -> frozenset[str]:
        out = set()
        for t in self.tests:
            if t.startswith("lit:"):
                out.add("test/" + t[4:])
            elif "::" in t:
                out.add(t.split("::", 1)[0])
        return frozenset(out)

    @property
    def subsystems(self) -> frozenset[str]:
        """Distinctive path components of the failing tests (``TritonGPU``, ``language``…)."""
        generic = {"python", "test", "tests", "unit", "lit", "examples", "third_party"}
        out = set()
        for f in self.test_files:
            parts = PurePosixPath(f).parts[:-1]
            out |= {p for p in parts if p not in generic}
        return frozenset(out)

    @property
    def named_files(self) -> frozenset[str]:
        return frozenset(m.lower() for t in self.texts for m in _FILE.findall(t))

    @property
    def named_passes(self) -> frozenset[str]:
        out = set()
        for t in self.texts:
            for m in re.findall(r"executing \[`([\w\-.]+)`", t):
                out.add(_DIALECT_PREFIX.sub("", m).lower())
        return frozenset(out)

    @property
    def named_symbols(self) -> frozenset[str]:
        return frozenset(s for t in self.texts for s in _SYMBOL.findall(t)
                         if s not in {"assert", "decltype", "cast", "dyn_cast", "isa", "run", "main"})


@dataclass(frozen=True)
class Suspect:
    sha: str
    subject: str
    author: str
    score: int
    reasons: tuple[str, ...]
    upstream: str | None = None
    commit: CommitInfo | None = None


def upstream_of(commit: CommitInfo) -> str | None:
    """The upstream sha a sync pick came from (its ``Upstream-Commit:`` trailer), else None."""
    m = _UPSTREAM.findall(commit.message)
    return m[-1] if m else None


def author_mention(commit: CommitInfo, logins: dict[str, str] | None = None) -> str:
    """``@login`` for a GitHub noreply e-mail or an e-mail in ``logins``; else the author's name
    (never the e-mail: it is personal data)."""
    email = commit.author_email.lower()
    if logins and email in logins:
        return f"@{logins[email]}"
    m = _NOREPLY.match(email)
    if m:
        return f"@{m.group(1)}"
    return commit.author_name or "the author"


def _stem(path: str) -> str:
    name = PurePosixPath(path).name.lower()
    return name.split(".", 1)[0]


def rank_suspects(commits: Sequence[CommitInfo], failure: FailureContext, *,
                  areas: Sequence = (), symbols_of: Callable[[CommitInfo], Iterable[str]] | None = None
                  ) -> list[Suspect]:
    """Rank ``commits`` (oldest first, the range last green..first red) by the evidence in the
    module docstring. ``areas``: ``bot.config.forksync.Area`` values; ``symbols_of``: the changed symbols
    of a commit (e.g. ``bot.plan.symbols``), else the hunks' function context is used. Commits with no
    evidence stay in the list with score 0 (bisection may still need them)."""
    files = failure.named_files
    passes = failure.named_passes
    symbols = failure.named_symbols
    test_files = failure.test_files
    subsystems = {s.lower() for s in failure.subsystems}
    test_areas = {a.name for a in areas if any(a.matches_path(f) for f in test_files)}
    ranked = []
    for pos, c in enumerate(commits):
        score, why = 0, []
        paths = sorted(c.paths)
        hit = sorted({PurePosixPath(p).name for p in paths if PurePosixPath(p).name.lower() in files})
        if hit:
            score += 6 * len(hit)
            why.append(f"changes {', '.join(hit)} named in the error")
        phit = sorted({p for p in paths if _stem(p) in passes})
        if phit:
            score += 5
            why.append(f"changes the failing pass's file {PurePosixPath(phit[0]).name}")
        csyms = set(symbols_of(c)) if symbols_of else {h for f in c.files for h in f.hunk_headers}
        shit = sorted(s for s in symbols if any(s in cs for cs in csyms))
        if shit:
            score += 4
            why.append(f"touches {', '.join(shit[:3])} named in the error")
        thit = sorted(set(paths) & test_files)
        if thit:
            score += 3
            why.append(f"changes the failing test file {thit[0]}")
        comps = {part.lower() for p in paths for part in PurePosixPath(p).parts[:-1]}
        sub = sorted(subsystems & comps)
        carea = {a.name for a in areas if any(a.matches_path(p) for p in paths)}
        if sub or (test_areas & carea):
            score += 2
            why.append(f"touches the tests' subsystem {(sub or sorted(test_areas & carea))[0]}")
        ranked.append((-score, -pos, Suspect(c.sha, c.subject, c.author_name, score, tuple(why),
                                             upstream_of(c), c)))
    ranked.sort(key=lambda x: (x[0], x[1]))
    return [s for _, _, s in ranked]


async def confirm(suspects: Sequence[Suspect], good: str, bad: str,
                  bisect: Callable[[str, str], Awaitable[str | None]]) -> Suspect | None:
    """Ask ``bisect(good, bad)`` (the bisection service, e.g. a wrapper of
    ``bot.git.bisect.bisect_command``) for the first bad commit and return it as a :class:`Suspect`
    (from the ranking when it is there). None when bisection found nothing."""
    sha = await bisect(good, bad)
    if not sha:
        return None
    for s in suspects:
        if s.sha == sha or s.sha.startswith(sha):
            return s
    return Suspect(sha, "", "", 0, ("found by bisection outside the ranked range",))


def commits_between(git_dir: str, good: str, bad: str) -> list[CommitInfo]:
    """The edge: the fork's commits in ``good..bad`` (first parent, oldest first) as
    :class:`CommitInfo` with their changed files and hunk context (``bot.git.repo``). With no
    ``good`` (no green nightly known) the range is just ``bad``."""
    from bot.config.objects import open_repository  # lazy: loads pygit2


    repo = open_repository(git_dir)
    shas = rev_list(repo, bad, (good,) if good else (), first_parent=True)
    if not good:
        shas = shas[-1:]
    infos = commit_infos(repo, shas, git_dir=git_dir)
    return [infos[s] for s in shas if s in infos]
