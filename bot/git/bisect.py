"""Bisection as a service: find the landed commit that broke or slowed trunk.

* **Candidates** (:func:`landed_commits`): the fork's first-parent history between a good and a
  bad commit, oldest first. Sync units land as one fork commit per upstream commit (rebase), so
  a culprit is a single upstream commit; a unit that landed as a merge commit is *descended
  into* — its own commits (the first-parent line of the merge's second parent, not already
  reachable from the first) come before the merge itself.
* **Search** (:func:`bisect`): binary search with a test callable per step returning
  :class:`Outcome` — ``good``, ``bad``, ``skip`` (exit 125: cannot be tested, e.g. does not
  build) or ``infra`` (runner trouble: retried up to ``infra_retries`` times, then treated as
  skip, never blamed). A skipped midpoint is replaced by its nearest untested neighbour.
* **Reverted in the range**: a binary search finds *a* good→bad step; when the culprit it finds
  is reverted later in the range (a "Revert"/"Reland" pair landed between two nightlies), the
  revert is tested too, and if trunk is good there the search goes on after it: the culprit is
  the step after which trunk stays bad (:func:`reverts_in` tells a revert from its message).
* **Merges**: a merge's side commits are built on an older trunk, so one can test good only for
  lacking a trunk commit the merge brings in (gate's ``update-branch`` merges trunk into a sync
  branch); a merge found as the culprit whose parent tests bad is no culprit: that parent's
  history is searched instead (``dag``, :class:`GitDag`).
* **Verification**: the culprit is re-tested (bad) and its parent re-tested (good); only then is
  it reported ``verified``. A culprit that passes its re-test is no culprit: the failure did not
  reproduce (a flaky test, the runner), and nothing is blamed. Without skips, a search over N candidates takes at most
  ⌈log2 N⌉ + 2 test steps (search + verification).
* **Edges**: :func:`command_test` runs a build/test command in a detached worktree (exit code
  0 = good, 125 = skip, other = bad — a segfault or abort included —, infra patterns of
  :mod:`bot.config.suites`, a timeout or another signal = infra);
  :func:`perf_test` classifies timings against last-good/first-bad samples for slowdowns.

The evidence record and texts for people live in :mod:`bot.l2.report`.
"""
from __future__ import annotations

import math
import os
import re
import shutil
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

from bot.config.suites import infra_error_match, persists_as_change
from bot.core.provenance import reverted_targets

GOOD, BAD, SKIP, INFRA = "good", "bad", "skip", "infra"


class BisectError(ValueError):
    """Bad input to a bisection (unknown sha, good not an ancestor of bad, nothing to search)."""


@dataclass(frozen=True)
class Outcome:
    """One test of one commit: ``verdict`` good | bad | skip | infra; ``value`` an optional
    measurement (e.g. median TFLOP/s) kept for the evidence; ``detail`` e.g. the exit code."""

    verdict: str
    value: float | None = None
    detail: str = ""
    samples: tuple[float, ...] = ()
    #: an ``infra`` verdict's phrase, ``"<kind>: <line>"`` (:func:`bot.config.suites.infra_error_match`); "" otherwise
    infra: str = ""


@dataclass(frozen=True)
class Step:
    """One step of the search (retries of infrastructure errors are ``attempts`` of one step)."""

    sha: str
    index: int                 # position in the candidates (−1 = the given good commit)
    outcome: Outcome
    attempts: int = 1
    phase: str = "search"      # search | verify


@dataclass(frozen=True)
class BisectResult:
    """``culprit``: the first bad commit (None when skips left several candidates, listed in
    ``suspects``, or when the failure did not reproduce on a re-test or the good end fails too: no suspects, ``note`` says
    so); ``verified``: culprit re-tested bad and its parent good; ``steps`` in order;
    ``bound`` = ⌈log2 N⌉ + 2."""

    good: str
    bad: str
    candidates: tuple[str, ...]
    culprit: str | None
    verified: bool
    steps: tuple[Step, ...]
    suspects: tuple[str, ...] = ()
    bound: int = 0
    note: str = ""

    @property
    def test_steps(self) -> int:
        return len(self.steps)


def _git(repo: str, *args: str) -> str:
    p = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise BisectError(f"git {' '.join(args)} failed in {repo}: {p.stderr.strip()}")
    return p.stdout


def landed_commits(repo: str, good: str, bad: str) -> list[str]:
    """Commits that landed on the fork's first-parent line after ``good`` up to ``bad``
    (inclusive), oldest first, with merge commits descended into at any depth (their side's own
    commits first, then the merge): a sync PR merged with a merge commit whose branch holds the
    merge of upstream (intel-xpu-backend-for-triton's "Merge commit '<sha>'") yields upstream's
    own commits. Raises :class:`BisectError` when a sha is unknown or ``good`` is not an ancestor
    of ``bad``."""
    good = _git(repo, "rev-parse", "--verify", f"{good}^{{commit}}").strip()
    bad = _git(repo, "rev-parse", "--verify", f"{bad}^{{commit}}").strip()
    if subprocess.run(["git", "-C", repo, "merge-base", "--is-ancestor", good, bad]).returncode != 0:
        raise BisectError(f"good {good[:12]} is not an ancestor of bad {bad[:12]}: pass the last good trunk "
                          "commit and a later bad one")
    out: list[str] = []
    seen: set[str] = set()

    def walk(since: str, tip: str) -> None:
        for line in _git(repo, "rev-list", "--first-parent", "--reverse", "--parents", f"{since}..{tip}").splitlines():
            sha, *parents = line.split()
            for side in parents[1:]:
                walk(parents[0], side)
            if sha not in seen:
                seen.add(sha)
                out.append(sha)

    walk(good, bad)
    return out


class Dag(Protocol):
    """The commit graph :func:`bisect` asks about merges (:class:`GitDag` reads it with git)."""

    def parents(self, sha: str) -> Sequence[str]: ...

    def is_ancestor(self, ancestor: str, sha: str) -> bool: ...


class GitDag:
    """:class:`Dag` of the commits of ``repo``, read with git (each commit's answer once)."""

    def __init__(self, repo: str):
        self.repo = repo
        self._parents: dict[str, tuple[str, ...]] = {}
        self._reach: dict[str, frozenset[str]] = {}

    def parents(self, sha: str) -> tuple[str, ...]:
        if sha not in self._parents:
            self._parents[sha] = tuple(_git(self.repo, "rev-list", "--parents", "-n", "1", sha).split()[1:])
        return self._parents[sha]

    def is_ancestor(self, ancestor: str, sha: str) -> bool:
        if sha not in self._reach:
            self._reach[sha] = frozenset(_git(self.repo, "rev-list", sha).split())
        return ancestor in self._reach[sha]


def _through_parent(cands: list[str], hi: int, good: str, parents: Sequence[str], tested: dict[str, Outcome], run,
                    dag: Dag, search) -> tuple[str, BisectResult] | None:
    """For a merge culprit ``cands[hi]`` (its ``parents``; ``tested``: those already tested): its
    first parent that tests bad and is a candidate, with ``search`` run over the candidates of its
    own history (ending at it); None when every parent tests good (the merge itself is the culprit)
    or a bad parent is no candidate. A merge's side commits are built on an older trunk: one
    tests good for lacking a trunk commit the merge brought in, so the search stops at the merge."""
    for p in parents:
        if p not in tested:
            tested[p] = run(p, cands.index(p) if p in cands else -1, "verify")
        if tested[p].verdict != BAD:
            continue
        sub = [c for c in cands[:hi] if c == p or dag.is_ancestor(c, p)]
        if sub and sub[-1] == p:
            return p, search(sub)
    return None


def bisect(candidates: Sequence[str], good: str, test: Callable[[str], Outcome], *,
           infra_retries: int = 2, parent_of: Callable[[str], str] | None = None,
           reverts: Callable[[str, str], bool] | None = None, dag: Dag | None = None) -> BisectResult:
    """Find the first bad commit in ``candidates`` (oldest first; the last one is known bad,
    ``good`` known good) after which trunk stays bad. ``test(sha)`` returns an :class:`Outcome`.
    ``parent_of`` maps a culprit to its parent for verification (default: the previous candidate,
    or ``good``). ``reverts(later, culprit)``: whether candidate ``later`` reverts ``culprit``
    (:func:`reverts_in`; None: never) — a culprit whose revert lands later in the range and tests
    good was undone there, so the search goes on after the revert (a reland, or another commit,
    made trunk bad again); each such revert costs one more step than ⌈log2 N⌉ + 2. ``dag``
    (:class:`GitDag`; None: no merge rule): a merge found as the culprit is one only when each of
    its parents tests good; a parent that is a candidate and tests bad is searched instead
    (:func:`_through_parent`), the steps of both searches kept. Raises :class:`BisectError` for no
    candidates."""
    cands = list(candidates)
    if not cands:
        raise BisectError("nothing to bisect: no commit landed between good and bad")
    n = len(cands)
    bound = math.ceil(math.log2(n)) + 2 if n > 1 else 2
    steps: list[Step] = []
    cache: dict[str, Outcome] = {}

    def run(sha: str, idx: int, phase: str) -> Outcome:
        attempts = 0
        while True:
            attempts += 1
            o = test(sha)
            if o.verdict != INFRA or attempts > infra_retries:
                break
        if o.verdict == INFRA and persists_as_change(o.infra):
            # a kind a change can cause too (pip's hash check on a pin it left stale) that failed
            # every attempt: the commit's, as a plain failure would be
            o = Outcome(BAD, o.value, f"{o.detail} (each of {attempts} attempts)", o.samples)
        elif o.verdict == INFRA:
            o = Outcome(SKIP, o.value, f"infrastructure error after {attempts} attempts: {o.detail}", o.samples)
        steps.append(Step(sha, idx, o, attempts, phase))
        if phase == "search":
            cache[sha] = o
        return o

    lo, hi = -1, n - 1            # cands[lo] good (−1 = ``good``), cands[hi] bad
    skipped: set[int] = set()
    while True:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            order = [mid] + [i for d in range(1, hi - lo) for i in (mid + d, mid - d) if lo < i < hi]
            pick = next((i for i in order if i not in skipped), None)
            if pick is None:
                break
            o = run(cands[pick], pick, "search")
            if o.verdict == GOOD:
                lo = pick
            elif o.verdict == BAD:
                hi = pick
            else:
                skipped.add(pick)
        if hi - lo > 1 or reverts is None:
            break
        # a binary search over a trunk that went bad, good and bad again finds either step; the
        # one that matters is the last (the back-out of a commit already reverted undoes nothing)
        undo = next((j for j in range(hi + 1, n - 1) if reverts(cands[j], cands[hi])), None)
        if undo is None or run(cands[undo], undo, "search").verdict != GOOD:
            break
        lo = undo
        hi = min((i for i in range(undo + 1, n) if (o := cache.get(cands[i])) and o.verdict == BAD), default=n - 1)
    if hi - lo > 1:
        suspects = tuple(cands[lo + 1:hi + 1])
        return BisectResult(good, cands[-1], tuple(cands), None, False, tuple(steps), suspects, bound,
                            f"{len(suspects)} suspects: the commits between could not be tested (skip)")
    culprit = cands[hi]
    parent = parent_of(culprit) if parent_of else (cands[hi - 1] if hi > 0 else good)
    v_bad = run(culprit, hi, "verify")
    if v_bad.verdict == GOOD:
        # the failure went away on a re-run: a flaky test or the runner, not this commit. The bad
        # end is never tested by the search, so naming it would blame whoever landed last
        seen_bad = any(s.sha == culprit and s.outcome.verdict == BAD for s in steps)
        note = (f"the failure did not reproduce: {culprit[:12]} "
                + ("failed, then passed when tested again" if seen_bad else "(the bad commit) passed when tested again")
                + " — a flaky test or a runner problem, not a regression; no commit is blamed")
        return BisectResult(good, cands[-1], tuple(cands), None, False, tuple(steps), (), bound, note)
    v_good = run(parent, hi - 1, "verify")
    if dag is not None and v_bad.verdict == BAD and len(ps := tuple(dag.parents(culprit))) > 1:
        inner = _through_parent(cands, hi, good, ps, {parent: v_good}, run, dag,
                                lambda sub: bisect(sub, good, test, infra_retries=infra_retries, parent_of=parent_of,
                                                   reverts=reverts, dag=dag))
        if inner is not None:
            p, found = inner
            note = (f"{culprit[:12]} is a merge and its parent {p[:12]} tested bad as well: the regression came "
                    "with that parent's history, which was searched instead" + (f"; {found.note}" if found.note else ""))
            return BisectResult(good, cands[-1], tuple(cands), found.culprit, found.verified, tuple(steps) + found.steps,
                                found.suspects, bound + found.bound, note)
    verified = v_bad.verdict == BAD and v_good.verdict == GOOD
    if verified:
        note = ""
    elif parent == good and v_bad.verdict == v_good.verdict == BAD:
        # every commit failed, the good end too: the search never tests it, so a command that
        # cannot pass anywhere (a dependency its environment lacks) walks down to the first
        # candidate — no flake, and no commit of the range to blame
        note = (f"the good end {good[:12]} fails too: the command does not pass where the range starts "
                "(check the command and what its environment provides, or pick an older good commit); "
                "no commit is blamed")
        # nor named: the first candidate fails no differently than the good end does
        return BisectResult(good, cands[-1], tuple(cands), None, False, tuple(steps), (), bound, note)
    else:
        note = (f"verification failed: culprit tested {v_bad.verdict}, parent tested "
                f"{v_good.verdict} — flaky test or noise; not blamed")
    return BisectResult(good, cands[-1], tuple(cands), culprit, verified, tuple(steps), (culprit,), bound, note)


_UPSTREAM_COMMIT = re.compile(r"^Upstream-Commit:\s*([0-9a-f]{7,40})\b", re.MULTILINE | re.IGNORECASE)


def reverts_in(repo: str) -> Callable[[str, str], bool]:
    """``reverts(later, culprit)`` for :func:`bisect` over commits of ``repo``: ``later``'s message
    says it reverts ``culprit`` — ``This reverts commit <sha>`` (full or abbreviated:
    :func:`bot.core.provenance.reverted_targets`) naming the culprit, or naming the upstream commit
    the culprit picks (its ``Upstream-Commit:`` trailer): a pick of upstream's own revert names
    upstream's sha. Messages are read with git, each once."""
    messages: dict[str, str] = {}

    def message(sha: str) -> str:
        if sha not in messages:
            messages[sha] = _git(repo, "log", "-1", "--format=%B", sha)
        return messages[sha]

    def reverts(later: str, culprit: str) -> bool:
        shas, _ = reverted_targets(message(later))
        if not shas:
            return False
        names = [culprit, *_UPSTREAM_COMMIT.findall(message(culprit))]
        return any(n.lower().startswith(s.lower()) for s in shas for n in names)

    return reverts


def command_test(repo: str, command: str, *, timeout_s: int = 3600, env: dict[str, str] | None = None,
                 workdir: str | None = None) -> Callable[[str], Outcome]:
    """A test callable that checks out each sha in a detached worktree of ``repo`` and runs
    ``command`` with the shell (``git bisect run`` conventions: 0 good, 125 skip, 1–127 bad;
    a crash of the code under test — :data:`CRASH_SIGNALS`, also as the shell's 128 + N — is bad;
    a timeout, another signal, or output matching :data:`bot.config.infra.INFRA_PATTERNS` is
    ``infra``: :func:`classify_exit`). The worktree lives under ``workdir`` (default: a temp folder) and is removed."""
    def test(sha: str) -> Outcome:
        base = tempfile.mkdtemp(prefix="forksync-bisect-", dir=workdir)
        wt = os.path.join(base, "wt")
        try:
            _git(repo, "worktree", "add", "--detach", "--force", wt, sha)
            try:
                p = subprocess.run(command, shell=True, cwd=wt, capture_output=True, text=True,
                                   timeout=timeout_s, env={**os.environ, **(env or {})})
            except subprocess.TimeoutExpired:
                return Outcome(INFRA, detail=f"timed out after {timeout_s} s")
            return classify_exit(p.returncode, (p.stdout or "") + (p.stderr or ""))
        finally:
            subprocess.run(["git", "-C", repo, "worktree", "remove", "--force", wt], capture_output=True)
            shutil.rmtree(base, ignore_errors=True)

    return test


#: Signals by which the code under test itself dies (a segfault, a failed C++ assertion's abort,
#: a bus error, a floating-point trap, an illegal instruction): the regression triage files as a
#: real crash, so bisection must be able to blame it. Other signals (SIGKILL from the OOM killer,
#: SIGTERM from a runner shutting down) say nothing about the commit.
CRASH_SIGNALS = frozenset({4, 6, 7, 8, 11})


def classify_exit(code: int, text: str) -> Outcome:
    """Pure: the :class:`Outcome` of one bisection step from the command's exit status (negative:
    killed by that signal; a shell reports signal N as 128 + N) and its output. 0 good, 125 skip,
    a crash signal bad, any other signal infra, an infrastructure phrase with a non-zero status
    infra, 1–127 bad."""
    signal = -code if code < 0 else code - 128 if code > 128 else 0
    infra = infra_error_match(text)
    if code != 0 and infra:
        return Outcome(INFRA, detail=f"exit {code}: {infra}", infra=infra)
    if signal and signal not in CRASH_SIGNALS or code > 255 or code == 128:
        return Outcome(INFRA, detail=f"exit {code}")
    if code == 0:
        return Outcome(GOOD, detail="exit 0")
    if code == 125:
        return Outcome(SKIP, detail="exit 125 (cannot test)")
    last = text.strip().splitlines()[-1][:200] if text.strip() else ""
    return Outcome(BAD, detail=f"exit {code}" + (f" (signal {signal})" if signal else "") + (f": {last}" if last else ""))


def perf_test(measure: Callable[[str], Sequence[float]], good_samples: Sequence[float],
              bad_samples: Sequence[float], higher_is_better: bool = True) -> Callable[[str], Outcome]:
    """A test callable for slowdowns: ``measure(sha)`` returns repeats (e.g. TFLOP/s); a commit
    is ``bad`` when its median lies past the midpoint between the last-good and first-bad
    medians (in the worse direction), else ``good``. An empty measurement is ``skip``."""
    mg, mb = statistics.median(good_samples), statistics.median(bad_samples)
    mid = (mg + mb) / 2

    def test(sha: str) -> Outcome:
        xs = list(measure(sha))
        if not xs:
            return Outcome(SKIP, detail="no measurement")
        m = statistics.median(xs)
        worse = m < mid if higher_is_better else m > mid
        return Outcome(BAD if worse else GOOD, m, f"median {m:.4g} vs midpoint {mid:.4g}", tuple(xs))

    return test


def bisect_command(repo: str, good: str, bad: str, command: str, *, timeout_s: int = 3600,
                   infra_retries: int = 2, env: dict[str, str] | None = None) -> BisectResult:
    """The service entry point (used by triage for correctness failures on trunk and by L2 for
    confirmed regressions with a test command): landed commits between ``good`` and ``bad``,
    bisected with ``command`` in worktrees, culprit verified against its git parent. Raises
    :class:`BisectError` on bad input."""
    cands = landed_commits(repo, good, bad)
    good_sha = _git(repo, "rev-parse", "--verify", f"{good}^{{commit}}").strip()
    return bisect(cands, good_sha, command_test(repo, command, timeout_s=timeout_s, env=env),
                  infra_retries=infra_retries, parent_of=lambda s: _git(repo, "rev-parse", f"{s}^").strip(),
                  reverts=reverts_in(repo), dag=GitDag(repo))
