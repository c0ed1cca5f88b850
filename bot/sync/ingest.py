"""Ingest orchestration: configuration → repositories → commit analysis → ledger → pins.

:func:`load_state` is the one entry point the CLI, the planner and the GitHub app call. Its
signature is stable (docs/core.md). Commit analysis (files, hunks, patch-id) is immutable per sha
and cached in the SQLite store (table ``commit_analysis``), so a warm rebuild skips git's diff
pass; the store is a cache and a history (table ``pin_history``), always rebuildable from git.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import sqlite3
import threading
import time as _time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Iterator, Mapping

import pygit2
from cachetools import LRUCache

from bot.agents.redact import strip_userinfo
from bot.config.forksync import ForksyncConfig, UserError
from bot.config.objects import open_repository
from bot.core.ledger import Ledger, build_ledger
from bot.core.merged import (
    lost_reverts,
    merged_holes,
    picked_candidates,
    reverted_candidates,
    reverted_merges,
    syncs_by_merging,
)
from bot.core.pins import Pin, Pins, compute_pins
from bot.core.provenance import claims, reverted_prs, reverted_targets
from bot.git import repo as gitio
from bot.git.notes import read_decisions
from bot.model import CommitInfo, Decision, FileChange, InFlightBranch
from bot.store import Store
from bot.sync import store as sync_store
from bot.templating import render_part

#: bump when CommitInfo's analysis changes shape or meaning (old rows are then ignored). 2: the
#: analysis shows submodule changes and names paths with a/ b/ prefixes whatever the user's
#: ``diff.ignoreSubmodules`` / ``diff.noprefix`` say; rows analysed under those settings lacked
#: changed paths that the predictor's path merge decides a pick over (one re-analysis per fork). 3: each
#: file change carries its zero-context hunks (``FileChange.edits``), from a diff whose algorithm and
#: indent heuristic no longer follow the user's ``diff.algorithm`` / ``diff.indentHeuristic``
ANALYSIS_VERSION = 3

Progress = Callable[[str, int, int], None]   # (step, done, total)


class AsOfError(ValueError):
    """A date that gives no state: not YYYY-MM-DD, or after today (UTC)."""


class BeforeHistoryError(AsOfError):
    """``as_of`` lies before the first commit of the upstream or the fork."""


def _refuse_future(d: date, what: str) -> None:
    """A date after today (UTC) has no state yet: the repositories say nothing of upstream then,
    and today's numbers under that date would claim they do. Raises :class:`AsOfError`."""
    today = datetime.now(timezone.utc).date()
    if d > today:
        raise AsOfError(f"{what} {d.isoformat()} is in the future (today is {today.isoformat()} UTC): "
                         "there is no state to show for it yet")


@dataclass
class SyncState:
    """Everything the core derived for one (upstream tip, fork tip) pair.

    ``upstream``: CommitInfo of the upstream range by sha, in upstream order (oldest first).
    ``fork_commits``: the fork's own commits (``fork_tip ^upstream_tip``), oldest first.
    ``repo`` sees both object stores (:func:`bot.git.repo.open_pair`); ``fork_repo`` is the fork's own
    repository (refs, notes, forksync branches), ``upstream_repo`` upstream's own (the fork's when
    upstream's history is fetched into it). Times are epoch seconds UTC.
    """

    config: ForksyncConfig
    repo: pygit2.Repository
    git_dir: str
    fork_repo: pygit2.Repository
    upstream_tip: str
    fork_tip: str
    merge_base: str | None
    upstream: dict[str, CommitInfo]
    fork_commits: list[CommitInfo]
    ledger: Ledger
    pins: Pins
    in_flight: list[InFlightBranch] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    as_of: int | None = None
    timings: dict[str, float] = field(default_factory=dict)
    #: when upstream was last seen (epoch s): the time of this fetch, or for a copy not fetched
    #: here the last change to its refs; never after ``as_of``. Days Behind is measured to the
    #: upstream tip known then, so it is shown with it
    upstream_as_of: int | None = None
    #: ``upstream.ref`` names no ref (a sha): upstream is pinned to ``upstream_tip`` and
    #: ``upstream_as_of`` is None — the numbers are as of that commit, never current
    upstream_pinned: bool = False
    #: the commit ``upstream.ref`` pins (pinned only): with ``as_of`` before it, ``upstream_tip``
    #: is an older commit — the pin is still this one
    upstream_pin: str = ""
    #: each hole of the Backlog (``pins.holes``) → the fork commit that took it out (its revert,
    #: or the revert of the merge that brought it)
    hole_reverts: dict[str, str] = field(default_factory=dict)
    #: upstream's own repository (its remotes, its config); None → ``fork_repo``
    upstream_repo: pygit2.Repository | None = None
    #: the fork's or upstream's repository is a partial clone (it has a promisor remote): an
    #: object absent now may be fetched later, so what was computed without it may not be kept
    partial_clone: bool = False

    @property
    def upstream_as_of_unknown(self) -> str | None:
        """Why ``upstream_as_of`` is None, in words (None when it is known)."""
        if self.upstream_as_of is not None:
            return None
        if self.upstream_pinned:
            when = datetime.fromtimestamp(int(self.repo[self.upstream_tip].committer.time), timezone.utc)
            pin = self.upstream_pin or self.upstream_tip
            if pin != self.upstream_tip:
                # --as-of cut the tip back: the pin is the commit the user named, the tip only that date's
                cut = datetime.fromtimestamp(self.as_of or 0, timezone.utc)
                return (f"upstream pinned to {pin[:12]}: {self.config.upstream.ref!r} is no ref, so no fetch moves "
                        f"it; its tip as of {cut:%Y-%m-%dT%H:%M:%SZ} is {self.upstream_tip[:12]}, committed "
                        f"{when:%Y-%m-%dT%H:%M:%SZ}")
            return (f"upstream pinned to {pin[:12]}, committed {when:%Y-%m-%dT%H:%M:%SZ}: "
                    f"{self.config.upstream.ref!r} is no ref, so no fetch moves it")
        return ("nothing dates upstream's ref: no loose ref or reflog of it, no FETCH_HEAD listing its commit "
                "(packed-refs is rewritten whenever any ref is deleted or packed, so its time is no answer)")

    @property
    def missing(self) -> dict[str, tuple[str, ...]]:
        """Commits (upstream and fork) whose objects could not all be read."""
        out = {s: c.missing for s, c in self.upstream.items() if c.missing}
        out.update({c.sha: c.missing for c in self.fork_commits if c.missing})
        return out


def end_of_day(d: str | date) -> int:
    """``YYYY-MM-DD`` → the last second of that day, UTC (epoch seconds). Raises :class:`AsOfError`."""
    if isinstance(d, str):
        try:
            d = date.fromisoformat(d)
        except ValueError:
            raise AsOfError(f"not a date (YYYY-MM-DD): {d!r}") from None
    return int(datetime(d.year, d.month, d.day, tzinfo=timezone.utc).timestamp()) + 86399


def tip_as_of(repo: pygit2.Repository, tip: str, cutoff: int, upstream_tip: str | None = None) -> str | None:
    """The newest first-parent commit from ``tip`` committed at or before ``cutoff``.

    With ``upstream_tip`` (walking the fork's branch): a merge committed after ``cutoff`` whose
    first parent lies on upstream's first-parent line and whose other parent does not — the
    fork's work merged *into* upstream's line and pushed as the fork's branch — is followed
    through that other parent, the fork's own line: upstream's commits before the merge were
    never the fork's tip."""
    line: set[str] | None = None
    c = repo[tip]
    while True:
        if int(c.committer.time) <= cutoff:
            return str(c.id)
        if not c.parent_ids:
            return None
        nxt = c.parent_ids[0]
        if upstream_tip is not None and len(c.parent_ids) > 1:
            if line is None:    # once, and only for a branch with merges past the cutoff
                line = _first_parent_line(repo, upstream_tip)
            if str(nxt) in line:
                nxt = next((p for p in c.parent_ids[1:] if str(p) not in line), nxt)
        c = repo[nxt]


_LINES: "LRUCache[tuple[str, str], frozenset[str]]" = LRUCache(8)
_LINES_LOCK = threading.Lock()


def _first_parent_line(repo: pygit2.Repository, tip: str) -> frozenset[str]:
    """The shas of ``tip``'s first-parent chain (remembered per repository and tip: a ``--series``
    asks for the same upstream tip at every date)."""
    key = (repo.path, tip)
    with _LINES_LOCK:
        hit = _LINES.get(key)
    if hit is None:
        w = repo.walk(tip, pygit2.enums.SortMode.NONE)
        w.simplify_first_parent()
        hit = frozenset(str(c.id) for c in w)
        with _LINES_LOCK:
            _LINES[key] = hit
    return hit


# ---- commit analysis cache ----------------------------------------------------------------------

_COMMIT_FIELDS = tuple(f.name for f in fields(CommitInfo))
_FILE_FIELDS = tuple(f.name for f in fields(FileChange))


def _encode(c: CommitInfo) -> str:
    """The stored text of ``c``: ``json.dumps(asdict(c))`` built directly (``asdict`` deep-copies
    every tuple of every hunk, most of the analysis pass' Python CPU on a fork's history)."""
    d = {k: getattr(c, k) for k in _COMMIT_FIELDS}
    d["files"] = [{k: getattr(f, k) for k in _FILE_FIELDS} for f in c.files]
    return json.dumps(d, separators=(",", ":"))


#: decoded analyses by sha: ``(the stored text, its CommitInfo)``. A long-running App re-reads
#: the same thousands of rows at every sync; decoding them cost ≈ 0.4 s of a 1 s ingest on the
#: Triton fork. An entry serves only the very text it was decoded from (CommitInfo is frozen).
_DECODED: "LRUCache[str, tuple[str, CommitInfo]]" = LRUCache(100_000)
_DECODED_LOCK = threading.Lock()


def _decode_cached(sha: str, text: str) -> CommitInfo:
    """:func:`_decode`, remembered per process (see :data:`_DECODED`)."""
    with _DECODED_LOCK:
        hit = _DECODED.get(sha)
    if hit is not None and hit[0] == text:
        return hit[1]
    info = _decode(text)
    with _DECODED_LOCK:
        _DECODED[sha] = (text, info)
    return info


def _decode(text: str) -> CommitInfo:
    d = json.loads(text)
    d["files"] = tuple(FileChange(path=f["path"], status=f["status"], old_path=f["old_path"],
                                  old_ranges=tuple(map(tuple, f["old_ranges"])),
                                  new_ranges=tuple(map(tuple, f["new_ranges"])),
                                  hunk_headers=tuple(f["hunk_headers"]),
                                  edits=None if f["edits"] is None else tuple(map(tuple, f["edits"])))
                    for f in d["files"])
    d["parents"] = tuple(d["parents"])
    d["missing"] = tuple(d["missing"])
    return CommitInfo(**d)


def analyse(repo: pygit2.Repository, git_dir: str, shas: list[str], *, store: Store | None, renames: bool,
            progress: Progress | None = None) -> dict[str, CommitInfo]:
    """CommitInfo per sha: from the store when cached, else from git (then cached). Commits with
    missing objects are not cached (a later fetch may complete them)."""
    out: dict[str, CommitInfo] = {}
    if store is not None and shas:
        for sha, version, data in sync_store.cached_analyses(store, shas):
            if version == ANALYSIS_VERSION:
                out[sha] = _decode_cached(sha, data)
    todo = [s for s in shas if s not in out]
    if todo:
        fresh = gitio.commit_infos(repo, todo, renames=renames, git_dir=git_dir,
                                   progress=(lambda d, t: progress("analyse", d, t)) if progress else None)
        out.update(fresh)
        if store is not None:
            rows = [{"sha": s, "version": ANALYSIS_VERSION, "data": _encode(c)} for s, c in fresh.items() if not c.missing]
            sync_store.save_analyses(store, rows)
            with _DECODED_LOCK:
                for r in rows:
                    _DECODED[r["sha"]] = (r["data"], fresh[r["sha"]])
    return out


def rewritten_copies(in_flight: list[InFlightBranch], upstream: Mapping[str, CommitInfo],
                     analysed: Callable[[list[str]], Mapping[str, CommitInfo]]) -> list[InFlightBranch]:
    """``in_flight`` with ``copies`` set: for each upstream commit a branch carries (a full sha)
    that is no longer in ``upstream`` (the range, sha → CommitInfo), the one commit of the range
    with the same patch-id, when exactly one has it and no branch carries it — after upstream
    rewrote its history the change is on the branch under the old sha, and planning the copy
    would pick it a second time. Picks landed in the fork survive a rewrite the same way
    (docs/core.md, "Rewritten upstream history"). ``analysed(shas)``: CommitInfo of the old
    commits whose objects are still here (others are skipped: no patch to compare)."""
    carried = {u for br in in_flight for u in br.upstream_shas}
    gone = sorted({u for u in carried if len(u) == 40 and u not in upstream})
    if not gone:
        return in_flight
    old = {s: c for s, c in analysed(gone).items() if not c.missing}
    by_patch: dict[str, list[str]] = {}
    for c in upstream.values():
        if c.patch_id:
            by_patch.setdefault(c.patch_id, []).append(c.sha)
    out = []
    for br in in_flight:
        copies = []
        for u in br.upstream_shas:
            hits = by_patch.get(old[u].patch_id or "", []) if u in old else []
            if len(hits) == 1 and hits[0] not in carried and hits[0] not in copies:
                copies.append(hits[0])
        out.append(dataclasses.replace(br, copies=tuple(copies)) if copies else br)
    return out


def usable_cache_dir(cfg: ForksyncConfig) -> Path:
    """``cfg.cache_dir``, created when absent. Raises :class:`UserError` naming it when it cannot
    be created or written (a configuration in a read-only checkout keeps its relative cache_dir
    there; a path under a file), instead of an ``OSError`` from whichever writer came first."""
    path = Path(cfg.cache_dir)
    why = None
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        why = e.strerror or str(e)
    if why is None and not os.access(path, os.W_OK | os.X_OK):
        why = "not_writable"
    if why is not None:
        raise UserError(render_part("errors/sync.txt.j2", "cache_dir_unusable", path=path, why=why))
    return path


def default_store(cfg: ForksyncConfig) -> Store:
    """The analysis and prediction cache in ``cfg.cache_dir``. Raises :class:`UserError` naming the
    file when it is not a SQLite database (cut short, overwritten): it is only a cache, so the
    way out is to delete it."""
    path = usable_cache_dir(cfg) / "forksync.sqlite"
    try:
        return Store(path)
    except sqlite3.DatabaseError as e:
        raise UserError(render_part("errors/sync.txt.j2", "cache_db_corrupt", path=path, error=str(e))) from None


# ---- the entry point -----------------------------------------------------------------------------

def side_tip(repo: pygit2.Repository, spec, side: str, label: str) -> str:
    """``spec.ref`` resolved in ``repo``. Raises :class:`bot.git.repo.RefError` (``side`` set) whose
    advice works where the generic "fetch it" would not: a ``remote/branch`` ref of a remote the
    repository lacks (add it, then fetch) or never fetched (the fetch); the refs whose names are
    near a mistyped one (``main-perf`` → ``main_perf``); a ref the configuration and the command
    line left at its default (``main``) gets the branch its ``HEAD`` names."""
    try:
        return gitio.resolve(repo, spec.ref, label=label)
    except gitio.RefError as e:
        if e.why != "not found":
            raise gitio.RefError(spec.ref, label, e.why, advice=e.advice, side=side) from None
        names = gitio.ref_names(repo)
        how = ref_advice(spec.ref, names, list(repo.remotes.names()))
        advice = "" if how is None else render_part("errors/sync.txt.j2", how[0], where=gitio.repo_dir(repo), side=side,
                                                    remotes=sorted(repo.remotes.names()), **how[1])
        hints = []
        near = near_refs(spec.ref, names)
        if near:
            hints.append(render_part("errors/sync.txt.j2", "ref_near", names=near))
        head = gitio.head_branch(repo)
        if "ref" not in spec.model_fields_set and head and head != spec.ref:
            hints.append(render_part("errors/sync.txt.j2", "ref_default", side=side, ref=spec.ref, head=head))
        raise gitio.RefError(spec.ref, label, hint="; ".join(hints), advice=advice, side=side) from None


def ref_advice(ref: str, names: list[str], remotes: list[str]) -> tuple[str, dict] | None:
    """Pure: how to get ``ref``, which names no ref of a repository holding ``names``
    (:func:`bot.git.repo.ref_names`) and ``remotes``, when it reads as ``remote/branch`` (also
    ``refs/remotes/remote/branch``): ``("ref_no_remote", {remote, branch})`` when no remote has
    that name (and no branch or tag begins with it, as ROCm's ``release/internal/3.2.x`` does),
    ``("ref_not_fetched", {remote, branch})`` when the remote is there; None otherwise (a plain
    name: the generic advice stands). Observed: a checkout of torch-spyre/triton following
    ``upstream/main`` before ``git remote add upstream``."""
    name = ref.removeprefix("refs/remotes/")
    remote, sep, branch = name.partition("/")
    if not sep or not remote or not branch or ref.startswith(("refs/heads/", "refs/tags/")):
        return None
    if remote in remotes:
        return "ref_not_fetched", {"remote": remote, "branch": branch}
    if ref.startswith("refs/remotes/") or not any(n.startswith(remote + "/") for n in names):
        return "ref_no_remote", {"remote": remote, "branch": branch}
    return None


def near_refs(ref: str, names: list[str], n: int = 3) -> list[str]:
    """Pure: up to ``n`` of ``names`` near ``ref``, closest first: those one typo away (one letter
    added, dropped or changed, or two neighbours swapped), then those difflib's ratio puts at 0.8
    or more (``main-perf`` → ``[main_perf]`` among ROCm/triton's branches). The typo rule is for
    short names: ``mian`` is 0.75 from ``main`` by ratio, as far as names sharing half their
    letters."""
    import difflib

    typo = [m for m in names if _one_typo(ref, m)]
    close = difflib.get_close_matches(ref, names, n=n, cutoff=0.8)
    return (typo + [m for m in close if m not in typo])[:n]


def _one_typo(a: str, b: str) -> bool:
    """Pure: whether ``b`` is ``a`` with one letter added, dropped or changed, or two neighbouring
    letters swapped (Damerau's single error: "A technique for computer detection and correction
    of spelling errors", CACM 7(3), 1964)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        swapped = i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2:] == b[i + 2:]
        return swapped or a[i + 1:] == b[i + 1:]
    return a[i:] == b[i + 1:] if len(a) < len(b) else a[i + 1:] == b[i:]


_NO_MATCH = re.compile(r"no match for id \(([0-9a-f]{40})\)")


@contextmanager
def absent_commits_named(fork_dir: str, up_dir: str) -> Iterator[None]:
    """A history walk that reaches a commit the object database lacks — libgit2's ``object not
    found - no match for id (<sha>)``, or a ``KeyError(<sha>)`` from ``repo[sha]`` — as the
    :class:`UserError` a person can act on: the commit, the repository, and what to do. A copy
    whose ``shallow`` file cuts the history is refused before any walk (``git fetch
    --unshallow``); this is a copy that lost objects with nothing saying so (a deleted loose
    object, a lost pack; real case: the Triton snapshot without `6440b589d1f9`, the #1921
    bundle)."""
    try:
        yield
    except (pygit2.GitError, KeyError) as e:
        text = str(e.args[0]) if e.args else ""
        m = _NO_MATCH.search(text) or (re.fullmatch(r"'?([0-9a-f]{40})'?", text) if isinstance(e, KeyError) else None)
        if not m:
            raise
        where = fork_dir if fork_dir == up_dir else f"{fork_dir} (fork) / {up_dir} (upstream)"
        raise UserError(render_part("errors/sync.txt.j2", "commit_absent", sha=m.group(1), where=where)) from None


def load_state(cfg: ForksyncConfig, store: Store | None = None, as_of: int | str | None = None,
               progress: Progress | None = None, *, use_cache: bool = True, since: str | None = None,
               fetch: bool = True, record: bool = True, default_branch: str | None = None) -> SyncState:
    """Rebuild the ledger and pins for ``cfg``.

    ``store``: the SQLite store for the analysis cache and pin history (None → the default store
    in ``cfg.cache_dir``; ignored with ``use_cache=False``). ``as_of``: epoch seconds, or a
    ``YYYY-MM-DD`` date meaning the end of that day UTC; then both tips are the newest
    first-parent commits committed by then, decisions are those recorded by then, and no branch
    is in flight. ``since``: an explicit base instead of the merge base. ``progress(step, done,
    total)`` is called when each stage starts (``open``, ``walk``, ``ledger``: ``total`` 0) and
    during ``analyse`` (commits done of total). ``default_branch``: the fork ref that keeps
    ``forksync/<unit>`` sync branch names (:func:`bot.model.sync_branch`; None: the fork
    repository's, :func:`bot.git.repo.default_branch`) — the App's one fork ref.

    Raises :class:`bot.git.repo.RefError` (unknown ref, names the ref and the repo),
    :class:`bot.git.repo.GitIOError` (clone/fetch/log failed), ``ValueError`` (bad ``as_of``: not a date, or after today UTC),
    :class:`UserError` (``cfg.cache_dir`` cannot be created or written; a shallow clone; a commit the
    history walk reaches that the repository lacks, :func:`absent_commits_named`).
    Missing objects are not errors: see :attr:`SyncState.missing`.
    """
    t0 = _time.perf_counter()
    timings: dict[str, float] = {}
    cutoff = end_of_day(as_of) if isinstance(as_of, (str, date)) else as_of
    if cutoff is not None:
        _refuse_future(datetime.fromtimestamp(cutoff, timezone.utc).date(), "the date")
    usable_cache_dir(cfg)     # mirrors, the combined repository, the store: a clear error before any of them
    fork_url = cfg.fork.url or "."
    if progress:
        progress("open", 0, 0)
    fork_dir = open_side("fork", fork_url, cfg, fetch)
    up_dir = open_side("upstream", cfg.upstream.url, cfg, fetch, fork_dir=fork_dir) if cfg.upstream.url else fork_dir
    fetched = fetch and not gitio.is_local(cfg.upstream.url or fork_url)
    repo, git_dir = gitio.open_pair(up_dir, fork_dir, cfg.cache_dir)
    fork_repo = open_repository(fork_dir)
    up_repo = fork_repo if up_dir == fork_dir else open_repository(up_dir)
    for side, r, where in (("fork", fork_repo, fork_dir), ("upstream", up_repo, up_dir)):
        # history cut at a depth (git clone --depth, CI checkouts): the merge base and every pick
        # record behind the cut are missing, and the walk would die on the first absent parent
        if r.is_shallow:
            raise UserError(f"the {side} repository {where} is a shallow clone (git clone --depth): forksync reads "
                            f"the whole history; run `git -C {where} fetch --unshallow`, or give its URL instead")
    up_tip = side_tip(up_repo, cfg.upstream, "upstream", f"upstream ({cfg.upstream.url or fork_url})")
    # a sha (any rev that names no ref) pins upstream: no fetch moves it, so no time says when
    # upstream was last seen — not this fetch's, not any ref's
    pinned = gitio.ref_name(up_repo, cfg.upstream.ref) is None
    # one repository for both (upstream's history fetched into the fork): only upstream's ref says
    # when upstream was seen, not the fork's own commits
    seen = None if pinned else _time.time() if fetched else gitio.refs_updated_at(
        up_dir, ref=cfg.upstream.ref if up_dir == fork_dir else None, own_notes=cfg.provenance.notes_ref)
    up_seen = None if seen is None else int(min(seen, cutoff) if cutoff is not None else seen)
    fork_tip = side_tip(fork_repo, cfg.fork, "fork", f"fork ({fork_url})")
    pin = up_tip if pinned else ""
    if cutoff is not None:
        stamp = datetime.fromtimestamp(cutoff, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        cut_up, cut_fork = tip_as_of(repo, up_tip, cutoff), tip_as_of(repo, fork_tip, cutoff, up_tip)
        for side, cut in (("upstream", cut_up), ("fork", cut_fork)):
            if cut is None:   # never show today's state under a past date
                raise BeforeHistoryError(f"as of {stamp} the {side} has no commit yet (its first-parent history starts "
                                 "later); choose a later date")
        up_tip, fork_tip = cut_up, cut_fork
    if progress:
        progress("walk", 0, 0)
    if since:
        since = gitio.resolve(up_repo, since, label=f"upstream ({cfg.upstream.url or fork_url})")
    with absent_commits_named(fork_dir, up_dir):
        base, rng = gitio.upstream_range(repo, up_tip, fork_tip, since=since)
        fork_shas = gitio.rev_list(repo, fork_tip, [up_tip])
        reach = set(gitio.rev_list(repo, fork_tip, [base] if base else []))
    ancestry = {s for s in rng if s in reach}
    timings["walk"] = _time.perf_counter() - t0

    t1 = _time.perf_counter()
    if use_cache and store is None:
        store = default_store(cfg)
    # parse the fork's messages (pure Python, memoized) while git produces the diffs
    messages = [repo[s].message for s in fork_shas]
    parser = threading.Thread(target=lambda: [claims(m, cfg.provenance) for m in messages], daemon=True)
    parser.start()
    infos = analyse(repo, git_dir, rng + fork_shas, store=store if use_cache else None,
                    renames=cfg.rename_detection, progress=progress)
    parser.join()
    timings["analyse"] = _time.perf_counter() - t1

    t2 = _time.perf_counter()
    if progress:
        progress("ledger", 0, 0)
    decisions = read_decisions(fork_repo, cfg.provenance.notes_ref)
    if cutoff is not None:
        decisions = [d for d in decisions if d.time <= cutoff]
    in_flight = gitio.in_flight_branches(fork_repo, fork_tip, fork_ref=cfg.fork.ref,
                                         default=default_branch) if cutoff is None else []
    upstream = {s: infos[s] for s in rng}
    if in_flight:
        # the old commits, while their objects are still here (none: nothing to compare)
        in_flight = rewritten_copies(in_flight, upstream, lambda shas: analyse(
            repo, git_dir, [s for s in shas if s in repo], store=store if use_cache else None,
            renames=cfg.rename_detection))
    fork_commits = [infos[s] for s in fork_shas]
    ledger = build_ledger(list(upstream.values()), fork_commits, upstream_in_fork_ancestry=ancestry,
                          decisions=decisions, in_flight=in_flight, rules=cfg.provenance,
                          isolated=cfg.isolated_picks)
    ledger = _drop_upstream_x_lines(repo, up_tip, ledger)
    base_time = int(repo[base].committer.time) if base else 0
    base_subject = repo[base].message.split("\n", 1)[0] if base else ""
    merged = ancestry if syncs_by_merging(fork_commits) else None
    # upstream commits before the range are in the fork's history — merged, or there when it
    # branched — so the fork's revert of one is a hole either way; so is each upstream commit a
    # merge brought in that the fork reverted (git revert -m 1)
    own = set(fork_shas)
    cands = {full for ref in reverted_candidates(fork_commits, own | set(rng)) if (full := _commit_named(repo, ref))}
    # a revert whose sha names no commit of the fork or the range reverted a pick that a rebase
    # dropped (its change already upstream): then its `Revert "<subject>"` names the upstream commit
    dropped = _dropped_pick_reverts(fork_commits, own | set(rng))
    merges = {m: [s for p in repo[m].parent_ids[1:] for s in gitio.rev_list(repo, str(p), [str(repo[m].parent_ids[0])])]
              for m in reverted_merges(fork_commits)}
    cands |= {s for brought in merges.values() for s in brought if s not in own}
    # upstream commits picked ahead of the merge that brought them: their upstream reverts may not apply
    cands |= {full for ref in picked_candidates(fork_commits, own | set(rng), cfg.provenance)
              if (full := _commit_named(repo, ref))}
    with absent_commits_named(fork_dir, up_dir):
        merged_up, line = _merged_upstream(repo, base, cands, dropped) if (cands or dropped) and base else ({}, [])
    hole_reverts: dict[str, str] = {}
    if merged_up:
        up_infos = analyse(repo, git_dir, list(merged_up), store=store if use_cache else None, renames=cfg.rename_detection)
        up_merged = {s: up_infos[s] for s in reversed(merged_up)}
        hole_reverts = merged_holes(fork_commits, up_merged, merges=merges, rules=cfg.provenance)
        hole_reverts.update(lost_reverts(fork_commits, line, up_merged, cfg.provenance))
    holes = tuple(hole_reverts)
    pins = compute_pins(ledger.entries, base_sha=base, base_time=base_time,
                        upstream_tip_time=int(repo[up_tip].committer.time), rules=cfg.isolated_picks,
                        merged=merged, holes=holes, oldest_hole=_oldest_hole(repo, merged_up, holes) if holes else None,
                        base_pr=gitio.parse_pr(base_subject), base_subject=base_subject)
    timings["ledger"] = _time.perf_counter() - t2
    timings["total"] = _time.perf_counter() - t0
    state = SyncState(config=cfg, repo=repo, git_dir=git_dir, fork_repo=fork_repo, upstream_tip=up_tip,
                      fork_tip=fork_tip, merge_base=base, upstream=upstream, fork_commits=fork_commits,
                      ledger=ledger, pins=pins, in_flight=in_flight, decisions=decisions, as_of=cutoff,
                      timings=timings, upstream_as_of=up_seen, upstream_pinned=pinned, upstream_pin=pin, hole_reverts=hole_reverts,
                      upstream_repo=up_repo,
                      partial_clone=bool(gitio.promisor_remotes(fork_repo) or gitio.promisor_remotes(up_repo)))
    if record and use_cache and store is not None:
        sync_store.record_pins(store, {
            "recorded_at": int(_time.time()), "as_of": cutoff or 0, "fork_tip": fork_tip,
            "upstream_tip": up_tip, "data": json.dumps(asdict(pins), default=str)})
    return state


def open_side(side: str, url: str, cfg: ForksyncConfig, fetch: bool, fork_dir: str = "") -> str:
    """:func:`bot.git.repo.open_remote` for ``side`` ("fork" or "upstream"); its error names the
    side and the key or flag that set the location, since a path or URL alone does not say which
    of the two repositories to fix, and — a local path that does not exist whose last part is the
    name of a remote of the fork's repository ``fork_dir`` (``url: upstream``, meaning the remote)
    — how to name that remote. Raises :class:`bot.git.repo.GitIOError` with ``side`` set."""
    try:
        return gitio.open_remote(url, cfg.cache_dir, fetch=fetch)
    except gitio.GitIOError as e:
        why = str(e)
        name = os.path.basename(url.rstrip("/"))
        if fork_dir and gitio.is_local(url) and not os.path.exists(url):
            remotes = open_repository(fork_dir).remotes
            if name in remotes.names():
                why += "; " + render_part("errors/sync.txt.j2", "url_is_remote", side=side, remote=name, ref=getattr(cfg, side).ref,
                                          remote_url=strip_userinfo(remotes[name].url or ""))
        err = gitio.GitIOError(f"the {side} repository ({side}.url or --{side}): {why}")
        err.side = side
        raise err from None


def _drop_upstream_x_lines(repo: pygit2.Repository, up_tip: str, ledger: Ledger) -> Ledger:
    """Keep in ``ledger.unresolved`` only the ``cherry picked from`` lines that name no upstream
    commit at all: one naming an upstream commit before the range (a pick of an older commit, or
    of one a later merge brought in) is not dangling."""
    keep = []
    for ref, where, rule in ledger.unresolved:
        if rule == "cherry-picked-from":
            try:
                oid = repo.revparse_single(ref).id
                if oid == repo[up_tip].id or repo.descendant_of(up_tip, oid):
                    continue
            except (KeyError, ValueError, pygit2.GitError):
                pass
        keep.append((ref, where, rule))
    return ledger if len(keep) == len(ledger.unresolved) else dataclasses.replace(ledger, unresolved=tuple(keep))


def _commit_named(repo: pygit2.Repository, ref: str) -> str | None:
    """The full sha of the commit ``ref`` (a sha, or an abbreviation of at least 7 hex) names in
    ``repo``, or None when it names none or is ambiguous — the same rule for a revert that opens
    a hole as for one that closes it."""
    try:
        return str(repo.revparse_single(ref).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def _bare_subject(subject: str) -> str:
    return re.sub(r"(\s*\(#\d+\))+\s*$", "", subject.strip()).strip().strip('"').lower()


def _dropped_pick_reverts(fork: list[CommitInfo], known: set[str]) -> set[str]:
    """Subjects (bare, lower-cased) that fork reverts quote (``Revert "<subject>"``) while every sha
    they name (``This reverts commit <sha>``) is neither a fork commit nor in the range: the
    reverted pick is gone — a rebase onto an upstream holding its change dropped it and replayed
    the revert, which now takes that upstream commit itself out (openxla's `llvm-head` is rebased
    so). The upstream commit is found by that subject on upstream's line before the base."""
    out = set()
    for c in fork:
        shas, subjects = reverted_targets(c.message)
        if shas and subjects and not any(k.startswith(x) for x in shas for k in known if k[0] == x[0]):
            out |= {_bare_subject(t) for t in subjects}
    return out


def _merged_upstream(repo: pygit2.Repository, base: str, wanted: set[str], subjects_wanted: set[str] = frozenset()
                     ) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """``({sha: (subject, message)}, line)``: upstream's first-parent commits at or before
    ``base`` that are in ``wanted`` or revert one of them (``This reverts commit <sha>``, or GitHub's
    ``Revert "<subject>"`` / ``Reverts owner/repo#<PR>``), newest
    first — what :func:`bot.core.merged.merged_holes` reads — and that whole first-parent line,
    oldest first (:func:`bot.core.merged.lost_reverts` places merges on it). One walk back from
    ``base``; commits of ``wanted`` that are not on that chain are left out (not merged upstream
    commits)."""
    out: dict[str, tuple[str, str]] = {}
    line: list[str] = []
    # GitHub's revert button writes no sha: 'Revert "<subject>" (#N)' and "Reverts owner/repo#<PR>"
    heads = [repo[w].message.split("\n", 1)[0] for w in wanted if w in repo]
    prs = {str(n) for n in map(gitio.parse_pr, heads) if n is not None}
    subjects = {_bare_subject(h) for h in heads}
    c = repo[base]
    while True:
        sha, msg = str(c.id), c.message
        line.append(sha)
        if sha in wanted or (subjects_wanted and _bare_subject(msg.split("\n", 1)[0]) in subjects_wanted) or (
                "This reverts commit" in msg and any(w in msg for w in wanted)) or (
                msg.startswith("Revert") and (any(n in prs for n in reverted_prs(msg))
                                             or _bare_subject(msg.split("\n", 1)[0][len("Revert "):].strip('"')) in subjects)):
            out[sha] = (msg.split("\n", 1)[0], msg)
        if not c.parent_ids:
            return out, line[::-1]
        c = repo[c.parent_ids[0]]


def _oldest_hole(repo: pygit2.Repository, merged_up: dict[str, tuple[str, str]], holes: tuple[str, ...]
                 ) -> tuple[Pin, Pin]:
    """``(the oldest hole, the upstream commit before it)`` as pins (index -1: before the range).
    ``merged_up`` is in :func:`_merged_upstream`'s order, newest first."""
    sha = [s for s in merged_up if s in holes][-1]

    def pin(c) -> Pin:
        subject = c.message.split("\n", 1)[0]
        return Pin(str(c.id), -1, gitio.parse_pr(subject), int(c.committer.time), subject)
    c = repo[sha]
    return pin(c), (pin(repo[c.parent_ids[0]]) if c.parent_ids else Pin(None, -1, None, 0, ""))


def series(cfg: ForksyncConfig, start: str, end: str, step_days: int = 7, store: Store | None = None,
           progress: Progress | None = None) -> list[tuple[str, SyncState]]:
    """``[(date, state)]`` for ``start``, ``start + step`` … < ``end``, and ``end`` (dates YYYY-MM-DD), for plots.
    Dates before either history begins have no point (there is no state to show). Raises
    ``ValueError`` for a date that is not YYYY-MM-DD, ``start`` after ``end``, ``end`` after today (UTC)
    or ``step_days < 1``."""
    try:
        d, stop = date.fromisoformat(start), date.fromisoformat(end)
    except ValueError:
        raise ValueError(f"series {start} {end}: dates must be YYYY-MM-DD") from None
    if stop < d:
        raise ValueError(f"series {start} {end}: START is after END (give the earlier date first)")
    if step_days < 1:
        raise ValueError("--step must be at least 1 day")
    _refuse_future(stop, "END")
    days = []
    while d <= stop:
        days.append(d)
        d += timedelta(days=step_days)
    if days[-1] != stop:        # a plot "from START to END" ends at END, wherever the step lands
        days.append(stop)
    out = []
    for d in days:
        try:
            out.append((d.isoformat(), load_state(cfg, store=store, as_of=d.isoformat(), progress=progress,
                                                  fetch=False, record=False)))
        except BeforeHistoryError:
            pass
    return out


def before_first_own_commit(own: list[bool]) -> list[bool]:
    """``own``: per point of :func:`series` (same order), whether its state has an own fork commit
    (``bool(state.fork_commits)``). Returns, per point, True where the fork had no own commit yet
    though a later point has one. In a repository that holds upstream's history the fork's tip
    then is one of upstream's commits, so its lag is upstream's own past, not a fork falling
    behind; git cannot tell whether the fork existed then (a fork dormant since the merge base
    looks the same), so plots mark such points rather than drop them. A fork with no own commit
    at any point (a mirror) has none marked."""
    first = next((k for k, o in enumerate(own) if o), 0)
    return [k < first for k in range(len(own))]


__all__ = ["AsOfError", "BeforeHistoryError", "SyncState", "load_state", "open_side", "side_tip",
           "series", "before_first_own_commit", "end_of_day", "tip_as_of", "analyse", "ANALYSIS_VERSION"]
