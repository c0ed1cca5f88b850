"""What upstream's history says about a path (an edge: one ``git log --raw`` pass, pygit2).

:class:`UpstreamHistory` answers, per conflicted path of a pick, which blobs upstream had there
between the merge base and the picked commit's parent (``fork_is_upstream_version``,
``upstream_lines``) and after the picked commit (``fork_is_later_upstream_version``).
"""
from __future__ import annotations

import subprocess
from typing import Iterable

import pygit2
from pygit2.enums import SortMode

from bot.git.repo import NO_LAZY_FETCH
from bot.resolve.merge import read_text


def upstream_versions(git_dir: str, base: str, upstream_tip: str, paths: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    """path → ``[(upstream commit, blob sha), …]`` for every upstream first-parent commit after
    ``base`` up to ``upstream_tip`` that changed the path (one ``git log --raw`` pass; a deleted
    path records the zero sha)."""
    paths = sorted(set(paths))
    out: dict[str, list[tuple[str, str]]] = {}
    if not paths:
        return out
    r = subprocess.run(["git", f"--git-dir={git_dir}", *NO_LAZY_FETCH, "log", "--first-parent", "--no-renames", "--raw", "--no-abbrev",
                        "--format=%x00%H", f"{base}..{upstream_tip}", "--", *paths], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError(f"git log --raw failed in {git_dir}: {r.stderr.decode(errors='replace').strip()}")
    commit = ""
    for line in r.stdout.decode("utf-8", errors="replace").splitlines():
        if line.startswith("\0"):
            commit = line[1:]
        elif line.startswith(":"):
            meta, _, path = line.partition("\t")
            out.setdefault(path, []).append((commit, meta.split()[3]))
    return out


class UpstreamHistory:
    """Which blobs upstream had for each path, in upstream first-parent order (for
    ``fork_is_upstream_version``, ``fork_is_later_upstream_version`` and ``upstream_lines``)."""

    def __init__(self, repo: pygit2.Repository, git_dir: str, upstream_tip: str, paths: Iterable[str], base: str | None):
        self.repo = repo
        self.order: dict[str, int] = {}
        self.time: dict[str, int] = {}
        self.versions: dict[str, list[tuple[str, str]]] = {}
        self._lines: dict[str, frozenset[str]] = {}
        if base is None:
            return
        w = repo.walk(upstream_tip, SortMode.TOPOLOGICAL | SortMode.REVERSE)
        w.hide(base)
        w.simplify_first_parent()
        self.order, self.time = {}, {}
        for i, c in enumerate(w):
            self.order[str(c.id)] = i
            self.time[str(c.id)] = c.commit_time
        self.versions = upstream_versions(git_dir, base, upstream_tip, paths)

    def blobs(self, path: str, up: pygit2.Commit, merge_base: str | None) -> list[str] | None:
        """The blob shas upstream had at ``path`` from the merge base up to the picked commit's
        parent (None when the pick's parent is not on upstream's first-parent line after the base)."""
        parent = str(up.parent_ids[0])
        if merge_base is None or (parent not in self.order and parent != merge_base):
            return None
        limit = self.order.get(parent, -1)
        low = self.order.get(merge_base, -1)
        out = []
        try:
            out.append(str(self.repo[merge_base].tree[path].id))
        except KeyError:
            pass
        out += [b for c, b in self.versions.get(path, ()) if low < self.order.get(c, 1 << 30) <= limit and set(b) != {"0"}]
        return out

    def later_blobs(self, path: str, up: pygit2.Commit, known_at: int | None) -> set[str] | None:
        """The blob shas upstream gave ``path`` in commits after the picked one that were committed
        by ``known_at`` (epoch seconds; None: any) — None when the picked commit is not on
        upstream's first-parent line."""
        at = self.order.get(str(up.id))
        if at is None:
            return None
        return {b for c, b in self.versions.get(path, ())
                if self.order.get(c, -1) > at and (known_at is None or self.time.get(c, 1 << 62) <= known_at)}

    def latest_blob(self, path: str, up: pygit2.Commit, known_at: int | None) -> str | None:
        """The blob sha of the newest version upstream gave ``path`` after the picked commit, among
        those committed by ``known_at`` (epoch seconds; None: any) — None when there is none, the
        path was deleted then, or the picked commit is not on upstream's first-parent line."""
        at = self.order.get(str(up.id))
        if at is None:
            return None
        best = None
        for c, b in self.versions.get(path, ()):
            o = self.order.get(c, -1)
            if o > at and (known_at is None or self.time.get(c, 1 << 62) <= known_at) and (best is None or o > best[0]):
                best = (o, b)
        return None if best is None or set(best[1]) == {"0"} else best[1]

    def lines(self, blobs: Iterable[str]) -> frozenset[str]:
        """Every stripped line of the given blobs (missing or binary blobs add nothing)."""
        out: set[str] = set()
        for b in blobs:
            hit = self._lines.get(b)
            if hit is None:
                try:
                    text, binary = read_text(self.repo, b)
                except KeyError:
                    text, binary = None, True
                hit = self._lines[b] = frozenset() if binary or text is None else frozenset(ln.strip() for ln in text.splitlines())
            out |= hit
        return frozenset(out)
