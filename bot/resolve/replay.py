"""Replaying resolved picks and merges and resolving live picks (an edge: pygit2; the entry points of the package).

* :func:`find_resolved_picks` (from :mod:`bot.resolve.picks`) — the fork's resolved picks;
  :func:`find_resolved_merges` (from :mod:`bot.resolve.merges`) — its merges of upstream;
* :func:`replay` — each such upstream commit picked again onto the first parent of the fork
  commit that landed it (``merge_trees`` of the upstream parent, that commit and the upstream
  commit, as ``git cherry-pick`` does), or each merge's two parents merged again over their merge
  base (as ``git merge`` does), with per conflicted file the
  :class:`~bot.resolve.rules.FileConflict` and the file the fork landed (the merge commit's file
  for a merge: "the picked upstream commit" is the merge's second parent, the fork's side its first).
* :func:`resolve_conflicts` — the same for a live pick, and the configured rules' decisions;
  :func:`history_memory` / :func:`memory_from_history` — what the fork's earlier resolutions
  teach the memory rules; :func:`chain_memory` — what a chain's own resolved picks add to it.

Missing objects (a partial clone or snapshot) never stop a run: a pick whose merge needs a missing
tree, or a file whose blob is missing, is skipped and counted with the reason
(:class:`~bot.resolve.merge.Merger`). Upstream's versions of each path come from
:class:`~bot.resolve.history.UpstreamHistory`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import pygit2
from pygit2.enums import SortMode

from bot.config.forksync import ForksyncConfig, glob_match
from bot.config.merge_file import diff3_text
from bot.config.objects import open_repository
from bot.resolve.history import UpstreamHistory
from bot.resolve.merge import ConflictEntry, Merger, read_text
from bot.resolve.merges import ResolvedMerge, find_resolved_merges
from bot.resolve.picks import ResolvedPick, Skipped, commit_of, find_resolved_picks
from bot.resolve.rules import Decision, Declined, FileConflict, Memory, has_conflict_markers, resolve_file

__all__ = ["PickReplay", "ReplayedFile", "ResolvedMerge", "ResolvedPick", "Skipped", "chain_memory", "file_kind", "find_resolved_merges",
           "find_resolved_picks", "history_memory", "memory_from_history", "replay", "resolve_conflicts"]


@dataclass(frozen=True)
class ReplayedFile:
    """One conflicted file of a replayed pick or merge and what the fork landed (``landed`` None:
    deleted; a binary landed file is ``"\\0binary:<blob sha>"``, which no text answer equals);
    ``kind`` its file class (:func:`file_kind`); ``landed_markers``: the landed file still holds
    git's conflict markers (:func:`~bot.resolve.rules.has_conflict_markers`)."""

    conflict: FileConflict
    landed: str | None
    kind: str
    landed_markers: bool = False     # the landed file holds conflict markers (committed unresolved)


@dataclass
class PickReplay:
    """A replayed pick or merge (``pick``; ``pick.source`` says which): ``files`` conflicted again
    (empty when it now applies cleanly)."""

    pick: ResolvedPick | ResolvedMerge
    files: list[ReplayedFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    set_aside: tuple[str, ...] = ()     # files missing from the repository, merged without (see Merger)


_KINDS = (
    ("C++", re.compile(r"\.(c|cc|cpp|cxx|h|hh|hpp|inc|cu|cuh)$")),
    ("Python", re.compile(r"\.(py|pyi)$")),
    ("MLIR", re.compile(r"\.mlir$")),
    ("TableGen", re.compile(r"\.td$")),
    ("CMake/txt", re.compile(r"(CMakeLists\.txt|\.cmake|\.txt)$")),
    ("CI yaml", re.compile(r"^\.github/.*|\.(ya?ml)$")),
)


def file_kind(path: str) -> str:
    """The benchmark's file class of a path: C++, Python, MLIR, TableGen, CMake/txt, CI yaml, other."""
    for name, rx in _KINDS:
        if rx.search(path):
            return name
    return "other"


def _areas_of(path: str, cfg: ForksyncConfig) -> tuple[tuple[str, ...], bool, bool]:
    hits = [a for a in cfg.areas if a.matches_path(path)]
    keep = (any(a.name in cfg.resolve.keep_fork_areas for a in hits)
            or any(glob_match(path, g) for g in cfg.resolve.keep_fork_paths))
    return tuple(a.name for a in hits), any(a.divergent for a in hits), keep


def _file_conflict(repo: pygit2.Repository, raw: ConflictEntry, cfg: ForksyncConfig, facts: UpstreamHistory, up: pygit2.Commit,
                   merge_base: str | None, known_at: int | None = None) -> FileConflict:
    """Raises KeyError when a blob is missing."""
    texts, binary = [], False
    for e in (raw.anc, raw.ours, raw.theirs):
        if e is None:
            texts.append(None)
            continue
        t, b = read_text(repo, e.id)
        binary = binary or b
        texts.append(t)
    base, ours, theirs = texts
    merged = None
    if not binary and ours is not None and theirs is not None:
        merged = diff3_text(base, ours, theirs)
    areas, divergent, keep = _areas_of(raw.path, cfg)
    blobs = facts.blobs(raw.path, up, merge_base)
    fuv = None if blobs is None or raw.ours is None else str(raw.ours.id) in blobs
    up_lines = None if blobs is None else facts.lines(blobs)
    later = facts.later_blobs(raw.path, up, known_at)
    ahead = None if later is None or raw.ours is None else str(raw.ours.id) in later
    later_lines = None if later is None else facts.lines(later)
    latest = None
    newest = facts.latest_blob(raw.path, up, known_at)
    if newest is not None:
        try:
            t, b = read_text(repo, newest)
            latest = None if b else t
        except KeyError:      # a missing blob only leaves the fact unknown
            latest = None
    if binary:
        base = ours = theirs = None
    return FileConflict(raw.path, base, ours, theirs, merged, binary, areas, divergent, keep, fuv,
                        fork_is_later_upstream_version=ahead, upstream_lines=up_lines,
                        later_upstream_lines=later_lines, latest_upstream=latest)


def replay(repo: pygit2.Repository, picks: Sequence[ResolvedPick | ResolvedMerge], cfg: ForksyncConfig,
           upstream_tip: str, progress: Callable[[str, int, int], None] | None = None) -> list[PickReplay]:
    """Replay each pick (the upstream commit onto the fork commit's first parent, over the upstream
    parent) or merge (its two parents over their merge base) and read the fork's landed files. One
    ``git log`` pass gathers upstream's versions of every conflicted path; a missing object skips
    only the pick, merge or file it hits. ``progress(step, done, total)`` follows the two stages:
    ``"replay"`` (the merges, one per pick or merge) and ``"history"`` (upstream's versions of the
    conflicted files and the facts read from them, one per pick or merge)."""
    git_dir = repo.path
    merger = Merger(repo)
    stage: list[tuple[PickReplay, pygit2.Commit | None, pygit2.Commit | None, list[ConflictEntry], str | None]] = []
    paths: set[str] = set()
    bases: set[str] = set()
    try:
        for i, p in enumerate(picks):
            if progress is not None:
                progress("replay", i, len(picks))
            rep = PickReplay(p)
            merge = p.source == "merge"
            key = p.fork_commit if merge else p.upstream
            try:
                onto, up = repo[p.onto], repo[p.upstream]
                if merge:
                    raws, affected = merger.merge(repo[p.base].tree, onto.tree, up.tree, key)
                else:
                    raws, affected = merger.conflicts(onto, up)
            except (KeyError, pygit2.GitError) as e:
                rep.skipped.append(Skipped(p.fork_commit, f"the merge needs a missing object ({e})"))
                stage.append((rep, None, None, [], None))
                continue
            if merge:
                mb_s: str | None = p.base
            else:
                mb = repo.merge_base(onto.id, up.id)
                mb_s = str(mb) if mb else None
            if mb_s:
                bases.add(mb_s)
            paths.update(r.path for r in raws)
            stage.append((rep, onto, up, raws, mb_s))
            rep.skipped += [Skipped(f"{p.fork_commit}:{a}", f"a blob the {p.source} needs is missing; the file was left out")
                            for a in affected]
            if key in merger.set_aside:
                rep.set_aside = merger.set_aside[key]
    finally:
        merger.close()
    if progress is not None:
        progress("replay", len(picks), len(picks))
        progress("history", 0, len(stage))
    facts = UpstreamHistory(repo, git_dir, upstream_tip, paths, _oldest(repo, bases, upstream_tip))
    out = []
    for i, (rep, onto, up, raws, mb) in enumerate(stage):
        if progress is not None:
            progress("history", i, len(stage))
        if not raws:
            out.append(rep)
            continue
        landed_tree = repo[rep.pick.fork_commit].tree
        # what the fork could know when it resolved: upstream up to the pick's parent's date, or
        # the merge commit's date (a merge is committed when its conflicts are resolved)
        known_at = rep.pick.time if rep.pick.source == "merge" else onto.commit_time
        for raw in raws:
            try:
                fc = _file_conflict(repo, raw, cfg, facts, up, mb, known_at=known_at)
                landed_entry = _entry(landed_tree, raw)
                landed = None
                if landed_entry is not None:
                    landed, lb = read_text(repo, landed_entry.id)
                    if lb:
                        landed = "\0binary:" + str(landed_entry.id)
            except KeyError as e:
                rep.skipped.append(Skipped(f"{rep.pick.fork_commit}:{raw.path}", f"a blob is missing ({e})"))
                continue
            rep.files.append(ReplayedFile(fc, landed, file_kind(raw.path), has_conflict_markers(landed)))
        out.append(rep)
    if progress is not None:
        progress("history", len(stage), len(stage))
    return out


def _oldest(repo: pygit2.Repository, bases: set[str], upstream_tip: str) -> str | None:
    """The oldest merge base, which bounds the one log pass (each pick or merge then reads only its
    own range): one that descends from none of the others. When every base is on upstream's
    first-parent line (the usual case) it is the last met walking that line back from the tip —
    one walk; ``descendant_of`` per base costs a graph walk each (≈ 40 ms on the Intel fork, whose
    900 merges have as many bases)."""
    if len(bases) > 1:
        want = set(bases)
        w = repo.walk(upstream_tip, SortMode.NONE)
        w.simplify_first_parent()
        for c in w:
            want.discard(str(c.id))
            if not want:
                return str(c.id)
    base = None
    for b in bases:
        if base is None or repo.descendant_of(base, b):
            base = b
    return base


def _entry(tree: pygit2.Tree, raw: ConflictEntry):
    """The landed tree's entry for a conflict: at its path (a renamed file's new path), else at
    a side's own path."""
    for path in dict.fromkeys([raw.path] + [e.path for e in (raw.ours, raw.theirs) if e is not None]):
        try:
            return tree[path]
        except KeyError:
            continue
    return None


# -- a live pick -----------------------------------------------------------------------------
def resolve_conflicts(repo_path: str, onto_sha: str, upstream_sha: str, cfg: ForksyncConfig, *,
                      memory: Memory | None = None, upstream_tip: str | None = None) -> list[tuple[str, Decision | Declined]]:
    """The configured rules' answer for each conflicted file of picking ``upstream_sha`` onto
    ``onto_sha`` (both commit-ish in the repository at ``repo_path``, which holds both histories).

    Returns ``[(path, Decision | Declined), …]`` sorted by path; [] when the pick is clean. The
    facts are those of the benchmark: areas from ``cfg.areas``, ``resolve.keep_fork_*``, and
    upstream's versions of each path from the merge base of the two commits up to
    ``upstream_tip`` (default: the picked commit; give upstream's tip so that ``fork-ahead`` sees
    the versions after the picked commit). ``memory`` is what
    the fork's earlier resolved picks teach (:func:`history_memory`); without it ``rerere`` and
    ``fork-deleted`` decline. A file whose blob is missing, or a binary file, is Declined with
    that reason. Raises ValueError for an unknown revision or a merge commit upstream."""
    repo = open_repository(repo_path)
    onto, up = commit_of(repo, onto_sha), commit_of(repo, upstream_sha)
    if onto is None or up is None:
        raise ValueError(f"{repo_path}: unknown revision {onto_sha if onto is None else upstream_sha!r}")
    if len(up.parent_ids) != 1:
        raise ValueError(f"upstream {up.id} has {len(up.parent_ids)} parents; only single-parent commits are picked")
    merger = Merger(repo)
    try:
        raws, affected = merger.conflicts(onto, up)
    finally:
        merger.close()
    mb = repo.merge_base(onto.id, up.id)
    mb_s = str(mb) if mb else None
    tip = commit_of(repo, upstream_tip) if upstream_tip else up
    if tip is None:
        raise ValueError(f"{repo_path}: unknown revision {upstream_tip!r}")
    facts = UpstreamHistory(repo, repo.path, str(tip.id), [r.path for r in raws], mb_s)
    out: list[tuple[str, Decision | Declined]] = [(a, Declined((), "a blob the pick needs is missing")) for a in affected]
    for raw in raws:
        try:
            fc = _file_conflict(repo, raw, cfg, facts, up, mb_s)
        except KeyError as e:
            out.append((raw.path, Declined((), f"a blob is missing ({e})")))
            continue
        if memory is not None:
            fc = memory.apply(fc)
        out.append((raw.path, resolve_file(fc, cfg.resolve.rules)))
    return sorted(out, key=lambda x: x[0])


def history_memory(replays: Iterable[PickReplay], memory: Memory | None = None) -> Memory:
    """What the fork's resolved picks teach the memory rules, learned in landing order on top of
    ``memory`` (default: nothing learned yet; pass the result of :func:`replay` over
    :func:`find_resolved_picks`; compute it once per sync)."""
    memory = memory if memory is not None else Memory()
    for rep in sorted(replays, key=lambda r: (r.pick.time, r.pick.fork_commit)):
        for f in rep.files:
            memory = memory.learn(f.conflict, f.landed)
    return memory


def memory_from_history(repo_path: str, fork_tip: str, upstream_tip: str, cfg: ForksyncConfig) -> Memory:
    """:func:`history_memory` of every resolved pick on the fork's first-parent history from
    ``fork_tip`` and, with ``resolve.merges``, every merge of upstream in its history (one replay
    of them all: about half a minute on the Triton fork; compute it once per sync). Raises
    ValueError for an unknown revision."""
    repo = open_repository(repo_path)
    fork, up = commit_of(repo, fork_tip), commit_of(repo, upstream_tip)
    if fork is None or up is None:
        raise ValueError(f"{repo_path}: unknown revision {fork_tip if fork is None else upstream_tip!r}")
    found: list[ResolvedPick | ResolvedMerge] = list(find_resolved_picks(repo, str(fork.id), str(up.id), cfg)[0])
    if cfg.resolve.merges:
        found += find_resolved_merges(repo, str(fork.id), str(up.id))[0]
    return history_memory(replay(repo, found, cfg, str(up.id)))


def chain_memory(repo_path: str, memory: Memory, base: str, tip: str, upstream_tip: str, cfg: ForksyncConfig) -> Memory:
    """``memory`` plus what the resolved picks of a chain's branch teach: its first-parent commits
    from ``tip`` down to ``base`` (the fork tip the chain is built on), found and replayed as the
    landed ones are. A pick a person resolved a moment ago on the branch (the fold's
    ``[RESOLVED]`` commit) is "the last time" for the chain's next conflict, as it will be once
    the chain lands: without it the same decision would be asked at every later pick of the chain.
    A few picks at most, so cheap beside :func:`memory_from_history`. Raises ValueError for an
    unknown revision."""
    repo = open_repository(repo_path)
    top, low, up = commit_of(repo, tip), commit_of(repo, base), commit_of(repo, upstream_tip)
    if top is None or low is None or up is None:
        raise ValueError(f"{repo_path}: unknown revision among {tip!r}, {base!r}, {upstream_tip!r}")
    if top.id == low.id:
        return memory
    picks = find_resolved_picks(repo, str(top.id), str(up.id), cfg, hide=str(low.id))[0]
    if not picks:
        return memory
    return history_memory(replay(repo, picks, cfg, str(up.id)), memory)
