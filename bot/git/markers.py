"""Conflict markers and conflict commits in a range of a repository (pygit2; bare repos work).

* :func:`files_with_markers` — the files a head changes against a base whose **head** blob has
  conflict-marker lines the base's blob of the same path does not have (rule:
  :func:`bot.core.markers.marker_lines`; text and binary-looking blobs alike), each with the
  ``conflict-marker-size`` attribute that applies to it (the smaller of the head's and the
  base's: a head cannot raise it to hide its markers). Reads the real trees, so large files (whose patch GitHub's API omits) count.
* :func:`conflict_commits` — the commits in ``base..head`` whose message carries a
  ``Forksync-Conflict: <upstream sha>`` trailer.
* :func:`merges_with_content` — the merge commits in ``base..head`` that add content of their
  own: their tree is not git's clean automatic merge of their parents.
* :func:`range_commits` — every commit in ``base..head``, for a pull request longer than the 250
  commits GitHub's API lists; :func:`changed_paths` — every path the head changes, for one
  wider than the 3000 files it lists; :func:`markers_and_paths` — both of the head's answers
  from one diff.

All raise :class:`bot.git.repo.RefError` for a base or head that does not resolve, so a caller
can report "cannot check markers" rather than pass silently.
"""
from __future__ import annotations

import subprocess
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pygit2
from pygit2.enums import AttrCheck, DeltaStatus, FileMode, SortMode

from bot.config.objects import open_repository
from bot.core.markers import DEFAULT_MARKER_SIZE, conflict_upstream, marker_lines, separators_alone_count
from bot.git.repo import NO_LAZY_FETCH, AbsentObjectsError, GitIOError, RefError, git_env


@dataclass(frozen=True)
class MarkerHit:
    """One file with conflict markers on the head: ``path`` (repository-relative, ``/``),
    ``lines`` the new marker lines as ``(1-based line number, kind)`` with kind ``<``, ``|``,
    ``=`` or ``>``, and ``size`` the marker size used (the path's ``conflict-marker-size``)."""

    path: str
    lines: tuple[tuple[int, str], ...]
    size: int = DEFAULT_MARKER_SIZE


def _open(repo_path) -> pygit2.Repository:
    try:
        return open_repository(str(repo_path))
    except (pygit2.GitError, KeyError) as e:
        raise RefError("(repository)", str(repo_path), f"is not a git repository ({e})") from e


def _commit(repo: pygit2.Repository, rev: str, repo_path) -> pygit2.Commit:
    try:
        obj = repo.revparse_single(rev)
        return obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as e:
        raise RefError(rev, str(repo_path)) from e


def marker_size(repo: pygit2.Repository, path: str, commit: pygit2.Oid) -> int:
    """The ``conflict-marker-size`` of ``path`` from the ``.gitattributes`` files of ``commit``'s
    tree (and the repository's ``info/attributes``; system files ignored), as libgit2 matches
    them (gitattributes(5) patterns). Unset or not a positive integer → 7."""
    try:
        v = repo.get_attr(path, "conflict-marker-size",
                          AttrCheck.INCLUDE_COMMIT | AttrCheck.NO_SYSTEM | AttrCheck.INDEX_ONLY, commit=commit)
    except pygit2.GitError:
        return DEFAULT_MARKER_SIZE
    try:
        n = int(v) if isinstance(v, str) else 0
    except ValueError:
        n = 0
    return n if n > 0 else DEFAULT_MARKER_SIZE


def _text(repo: pygit2.Repository, oid, size: int, alone: bool = False) -> str | None:
    """The blob's text for the marker rule, binary-looking or not (the rule and why:
    :mod:`bot.core.markers`), bytes that are not UTF-8 replaced; None when it is no blob or
    holds no run of ``size`` ``<``, ``|`` or ``>`` — nor of ``=`` when a separator alone counts
    (``alone``) — (no marker can open or close without one, so most files, large binaries
    included, are never decoded)."""
    blob = repo[oid]
    if not isinstance(blob, pygit2.Blob):
        return None
    data = blob.data
    if not any(c * size in data for c in (b"<", b"|", b">", b"=") if alone or c != b"="):
        return None
    return data.decode("utf-8", errors="replace")


def _new_lines(head_text: str, base_text: str | None, size: int,
               alone: bool = False) -> tuple[tuple[int, str], ...]:
    """Head marker lines whose exact text occurs more often on the head than on the base (a file
    that legitimately documents markers, unchanged there, is not a new conflict); ``alone``: a
    line of ``=`` alone counts (no markup file)."""
    hl = head_text.split("\n")
    head = marker_lines(head_text, size, separators_alone=alone)
    if base_text is None:
        return tuple(head)
    bl = base_text.split("\n")
    before = Counter(bl[i - 1] for i, _ in marker_lines(base_text, size, separators_alone=alone))
    after = Counter(hl[i - 1] for i, _ in head)
    grown = {t for t, n in after.items() if n > before.get(t, 0)}
    return tuple((i, k) for i, k in head if hl[i - 1] in grown)


def files_with_markers(repo_path: str | Path, base: str, head: str) -> list[MarkerHit]:
    """Files changed by ``head`` since its merge base with ``base`` (``base`` itself when the head
    contains it; base's tree when they share no history) whose head blob adds conflict-marker
    lines. Every blob, binary-looking or not (the rule and why: :mod:`bot.core.markers`;
    submodule entries are skipped, bytes that are not UTF-8 replaced). The marker size is the
    smaller of the path's ``conflict-marker-size`` on the head and on ``base``. Sorted by path.
    Raises :class:`RefError` when ``base`` or ``head`` does not resolve in ``repo_path``,
    :class:`bot.git.repo.AbsentObjectsError` naming the blobs it would read that the repository
    lacks (a partial clone)."""
    return _markers(repo_path, *_head_diff(repo_path, base, head))


def changed_paths(repo_path: str | Path, base: str, head: str) -> tuple[str, ...]:
    """Every path ``head`` changes since its merge base with ``base`` (added, modified, deleted;
    a rename as both its paths), sorted — what ``pulls/list-files`` lists, without its cap of 3000
    files. Raises :class:`RefError` when ``base`` or ``head`` does not resolve."""
    return _paths(_head_diff(repo_path, base, head)[3])


def markers_and_paths(repo_path: str | Path, base: str, head: str) -> tuple[list[MarkerHit], tuple[str, ...]]:
    """``(files_with_markers(…), changed_paths(…))`` from one diff of the head against its merge
    base (the gate reads both on every evaluation). Raises as :func:`files_with_markers`."""
    repo, b, h, diff = _head_diff(repo_path, base, head)
    return _markers(repo_path, repo, b, h, diff), _paths(diff)


def _paths(diff: pygit2.Diff) -> tuple[str, ...]:
    return tuple(sorted({p for d in diff.deltas for p in (d.old_file.path, d.new_file.path) if p}))


def _markers(repo_path: str | Path, repo: pygit2.Repository, b: pygit2.Commit, h: pygit2.Commit,
             diff: pygit2.Diff) -> list[MarkerHit]:
    """:func:`files_with_markers` over ``diff`` (``h``'s changes since its merge base with ``b``)."""
    hits: list[MarkerHit] = []
    absent: list[tuple[str, str]] = []
    for d in diff.deltas:
        if d.status == DeltaStatus.DELETED or d.new_file.mode == FileMode.COMMIT:
            continue
        # a blob a partial clone lacks is named with its path, each one this check reads, rather
        # than libgit2's bare "not found" for the first
        if d.new_file.id not in repo:
            absent.append((d.new_file.path, str(d.new_file.id)))
            continue
        # the head's attribute alone would let a head raise the size in its own .gitattributes
        # and so turn the 7-character markers git wrote into no markers at all
        size = min(marker_size(repo, d.new_file.path, h.id), marker_size(repo, d.new_file.path, b.id))
        alone = separators_alone_count(d.new_file.path)
        text = _text(repo, d.new_file.id, size, alone)
        if text is None:
            continue
        # git writes no markers into a file with a NUL in its first 8000 bytes (buffer_is_binary),
        # so no half-resolved conflict leaves a separator there: a line of "=" in it is data
        alone = alone and "\x00" not in text[:8000]
        old = None
        if d.status not in (DeltaStatus.ADDED, DeltaStatus.UNTRACKED) and d.old_file.mode != FileMode.COMMIT:
            if d.old_file.id not in repo:
                absent.append((d.old_file.path, str(d.old_file.id)))
                continue
            old = _text(repo, d.old_file.id, size, alone) or ""
        lines = _new_lines(text, old, size, alone)
        if lines:
            hits.append(MarkerHit(d.new_file.path, lines, size))
    if absent:
        raise AbsentObjectsError(f"the conflict-marker check of {str(h.id)[:12]}", absent, str(repo_path))
    return sorted(hits, key=lambda x: x.path)


def _head_diff(repo_path: str | Path, base: str, head: str):
    """``(repository, base commit, head commit, diff)``: what ``head`` changes since its merge base
    with ``base`` (base's tree where they share no history). :class:`RefError` as the callers say."""
    repo = _open(repo_path)
    b = _commit(repo, base, repo_path)
    h = _commit(repo, head, repo_path)
    mb = repo.merge_base(b.id, h.id)
    return repo, b, h, repo.diff(repo[mb].peel(pygit2.Tree) if mb is not None else b.tree, h.tree)


def _range(repo_path: str | Path, base: str, head: str):
    """``(repository, the commits of base..head oldest first)``; :class:`RefError` as the callers say."""
    repo = _open(repo_path)
    b = _commit(repo, base, repo_path)
    h = _commit(repo, head, repo_path)
    walker = repo.walk(h.id, SortMode.TOPOLOGICAL | SortMode.REVERSE)
    walker.hide(b.id)
    return repo, walker


def conflict_commits(repo_path: str | Path, base: str, head: str) -> list[tuple[str, str]]:
    """``(commit sha, upstream sha)`` for each commit in ``base..head`` (reachable from head, not
    from base) whose message carries ``Forksync-Conflict: <40-hex upstream sha>``, oldest first.
    Raises :class:`RefError` when ``base`` or ``head`` does not resolve."""
    _, walker = _range(repo_path, base, head)
    out = []
    for c in walker:
        up = conflict_upstream(c.message)
        if up:
            out.append((str(c.id), up))
    return out


def range_commits(repo_path: str | Path, base: str, head: str) -> list[dict]:
    """Every commit in ``base..head``, oldest first (topological, as GitHub lists a pull request's
    commits), shaped like GitHub's ``pulls/list-commits`` objects as far as the gate reads them:
    ``{"sha", "parents": [{"sha"}], "commit": {"message", "committer": {"date": ISO 8601 UTC}}}``. That
    endpoint lists at most 250 commits ("List commits on a pull request", GitHub REST docs); git
    has them all. Raises :class:`RefError` when ``base`` or ``head`` does not resolve."""
    _, walker = _range(repo_path, base, head)
    return [{"sha": str(c.id), "parents": [{"sha": str(p)} for p in c.parent_ids],
             "commit": {"message": c.message,
                        "committer": {"date": datetime.fromtimestamp(c.committer.time, timezone.utc)
                                      .strftime("%Y-%m-%dT%H:%M:%SZ")}}}
            for c in walker]


def merges_with_content(repo_path: str | Path, base: str, head: str) -> tuple[str, ...]:
    """The merge commits in ``base..head`` (oldest first) that bring content of their own: a
    merge of more than two parents, or one whose tree differs from what ``git merge-tree
    --write-tree <first parent> <second parent>`` (ort, as GitHub's ``Update branch`` merges)
    makes of its parents, or whose parents git cannot merge cleanly (a hand resolution). A clean
    merge of the base into a sync branch is not one: what it brings is already on the base.
    Raises :class:`RefError` when ``base`` or ``head`` does not resolve and
    :class:`bot.git.repo.GitIOError` when git cannot run the merge (objects missing)."""
    repo, walker = _range(repo_path, base, head)
    out = []
    for c in walker:
        if len(c.parent_ids) < 2:
            continue
        if len(c.parent_ids) > 2:
            out.append(str(c.id))
            continue
        p = subprocess.run(["git", f"--git-dir={repo.path}", *NO_LAZY_FETCH, "merge-tree", "--write-tree", "--no-messages",
                            str(c.parent_ids[0]), str(c.parent_ids[1])], env=git_env(), capture_output=True, text=True)
        if p.returncode not in (0, 1):
            raise GitIOError(f"git merge-tree of merge {str(c.id)[:12]}'s parents failed in {repo_path} "
                             f"({p.returncode}): {p.stderr.strip()[:300]}")
        if p.returncode == 1 or p.stdout.split("\n", 1)[0].strip() != str(c.tree_id):
            out.append(str(c.id))
    return tuple(out)
