"""The git side of deterministic resolution (an edge: pygit2, ``git merge-file``, ``git log``).

* :func:`find_resolved_picks` — the fork commits that landed one upstream commit whose conflicts a
  person resolved, found by the fork's own markers (``resolve.picks`` of the config) and mapped
  to their upstream commit with the ledger's provenance rules (:mod:`bot.core.provenance`).
* :func:`replay` — each such upstream commit picked again onto the first parent of the fork
  commit that landed it (``merge_trees`` of the upstream parent, that commit and the upstream
  commit, as ``git cherry-pick`` does), with per conflicted file the
  :class:`~bot.resolve.rules.FileConflict` and the file the fork landed.
* :func:`resolve_conflicts` — the same for a live pick, and the configured rules' decisions;
  :func:`history_memory` — what the fork's earlier resolutions teach the memory rules.

Missing objects (a partial clone or snapshot) never stop a run: a pick whose merge needs a missing
object, or a file whose blob is missing, is skipped and counted with the reason.
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Iterable

import pygit2
from pygit2.enums import SortMode

from bot.config.forksync import ForksyncConfig, glob_match
from bot.core.provenance import claims, reverted_targets
from bot.resolve.rules import Decision, Declined, FileConflict, Memory, resolve_file

_PR = re.compile(r"\(#(\d+)\)\s*$")


@dataclass(frozen=True)
class ResolvedPick:
    """A fork commit (``fork_commit``, committed at ``time``, epoch seconds) that landed the one
    upstream commit ``upstream`` with resolved conflicts; ``onto`` is its first parent, the
    commit the pick was made on; ``marker`` the marker that found it."""

    fork_commit: str
    onto: str
    upstream: str
    time: int
    subject: str
    marker: str


@dataclass(frozen=True)
class Skipped:
    """Something the replay could not use, and why (``what``: a fork commit, or ``commit:path``)."""

    what: str
    why: str


@dataclass(frozen=True)
class ReplayedFile:
    """One conflicted file of a replayed pick and what the fork landed (``landed`` None: deleted)."""

    conflict: FileConflict
    landed: str | None
    kind: str


@dataclass
class PickReplay:
    """A replayed pick: ``files`` conflicted again (empty when the pick now applies cleanly)."""

    pick: ResolvedPick
    files: list[ReplayedFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    set_aside: tuple[str, ...] = ()     # files missing from the repository, merged without (see _Merger)


# -- finding the resolved picks --------------------------------------------------------------
def _marker(message: str, cfg: ForksyncConfig) -> str | None:
    m = cfg.resolve.picks
    subject = message.split("\n", 1)[0]
    for p in m.subject_patterns:
        if re.search(p, subject):
            return f"subject {p}"
    for p in m.body_patterns:
        if re.search(p, message):
            return f"body {p}"
    if m.trailer and re.search(rf"(?mi)^{re.escape(m.trailer)}:", message):
        return f"trailer {m.trailer}"
    return None


def _pr_index(repo: pygit2.Repository, upstream_tip: str, fork_tip: str) -> dict[int, list[str]]:
    """Upstream PR number (trailing ``(#N)`` of the subject) → upstream commits not in the fork's
    ancestry (an empty index when the two tips are one: no upstream to tell apart)."""
    out: dict[int, list[str]] = {}
    if upstream_tip == fork_tip:
        return out
    w = repo.walk(upstream_tip, SortMode.NONE)
    w.hide(fork_tip)
    for c in w:
        m = _PR.search(c.message.split("\n", 1)[0])
        if m:
            out.setdefault(int(m.group(1)), []).append(str(c.id))
    return out


def _commit(repo: pygit2.Repository, ref: str) -> pygit2.Commit | None:
    try:
        return repo.revparse_single(ref).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def find_resolved_picks(repo: pygit2.Repository, fork_tip: str, upstream_tip: str, cfg: ForksyncConfig,
                        since: int | None = None) -> tuple[list[ResolvedPick], list[Skipped]]:
    """``(picks, skipped)``: the fork's resolved picks on its first-parent history from
    ``fork_tip`` (committed at or after ``since``, epoch seconds), oldest first.

    A marked commit is skipped, with the reason, when it is a merge, a revert or back-out, names
    no upstream commit that can be found, or names more than one (a bundle). Upstream commits are
    named by the provenance rules of the config: shas (trailers, ``cherry picked from``) when the
    message has any, else PR citations resolved against upstream's subjects."""
    picks: list[ResolvedPick] = []
    skipped: list[Skipped] = []
    prs: dict[int, list[str]] | None = None
    w = repo.walk(fork_tip, SortMode.TOPOLOGICAL)
    w.simplify_first_parent()
    for c in w:
        if since is not None and c.commit_time < since:
            break
        msg = c.message
        marker = _marker(msg, cfg)
        if marker is None:
            continue
        sha = str(c.id)
        if len(c.parent_ids) != 1:
            skipped.append(Skipped(sha, "a merge commit"))
            continue
        shas, subjects = reverted_targets(msg)
        if shas or subjects:
            skipped.append(Skipped(sha, "a revert or back-out"))
            continue
        found: set[str] = set()
        cited: set[str] = set()
        for cl in claims(msg, cfg.provenance):
            if cl.kind != "pick" or cl.weak:
                continue
            if cl.ref.startswith("#"):
                if prs is None:
                    prs = _pr_index(repo, upstream_tip, fork_tip)
                hits = prs.get(int(cl.ref[1:]), [])
                if len(hits) == 1:
                    cited.add(hits[0])
            else:
                up = _commit(repo, cl.ref)
                if up is not None:
                    found.add(str(up.id))
        # a sha (trailer, cherry-pick -x) names the commit exactly; PR numbers only when there is
        # none — a reland's or revert's subject cites the original PR too
        found = found or cited
        if not found:
            skipped.append(Skipped(sha, "names no upstream commit found in the repository"))
            continue
        if len(found) > 1:
            skipped.append(Skipped(sha, f"names {len(found)} upstream commits (a bundle)"))
            continue
        up = repo[found.pop()]
        if len(up.parent_ids) != 1:
            skipped.append(Skipped(sha, f"upstream {up.id} is a merge commit"))
            continue
        picks.append(ResolvedPick(sha, str(c.parent_ids[0]), str(up.id), c.commit_time,
                                  msg.split("\n", 1)[0], marker))
    picks.reverse()
    return picks, skipped


# -- replaying -------------------------------------------------------------------------------
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


def _text(repo: pygit2.Repository, oid) -> tuple[str | None, bool]:
    """(text, binary) of a blob; KeyError when the object is missing."""
    data = repo[oid].data
    if b"\0" in data[:8000]:
        return None, True
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return None, True


def merge_file_diff3(base: str | None, ours: str, theirs: str) -> str:
    """``git merge-file -p --diff3`` of three texts (labels fork / base / upstream); an absent base
    is empty, as git does for an add/add conflict. Raises RuntimeError when git fails."""
    with tempfile.TemporaryDirectory(prefix="forksync-merge-") as d:
        paths = []
        for name, text in (("ours", ours), ("base", base or ""), ("theirs", theirs)):
            p = os.path.join(d, name)
            with open(p, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            paths.append(p)
        r = subprocess.run(["git", "merge-file", "-p", "--diff3", "-L", "fork", "-L", "base", "-L", "upstream", *paths],
                           capture_output=True)
    if r.returncode < 0 or r.returncode > 127:
        raise RuntimeError(f"git merge-file failed ({r.returncode}): {r.stderr.decode(errors='replace').strip()}")
    return r.stdout.decode("utf-8")


def upstream_versions(git_dir: str, base: str, upstream_tip: str, paths: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    """path → ``[(upstream commit, blob sha), …]`` for every upstream first-parent commit after
    ``base`` up to ``upstream_tip`` that changed the path (one ``git log --raw`` pass; a deleted
    path records the zero sha)."""
    paths = sorted(set(paths))
    out: dict[str, list[tuple[str, str]]] = {}
    if not paths:
        return out
    r = subprocess.run(["git", f"--git-dir={git_dir}", "log", "--first-parent", "--no-renames", "--raw", "--no-abbrev",
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


def _areas_of(path: str, cfg: ForksyncConfig) -> tuple[tuple[str, ...], bool, bool]:
    hits = [a for a in cfg.areas if a.matches_path(path)]
    keep = (any(a.name in cfg.resolve.keep_fork_areas for a in hits)
            or any(glob_match(path, g) for g in cfg.resolve.keep_fork_paths))
    return tuple(a.name for a in hits), any(a.divergent for a in hits), keep


@dataclass
class _Raw:
    path: str
    anc: object
    ours: object
    theirs: object


class _Merger:
    """``merge_trees`` that survives missing blobs. libgit2's rename detection reads every added
    and deleted file, so one missing blob anywhere in the fork's tree (a partial snapshot) fails
    the whole merge; so trees that hold missing blobs are merged without those files, rewritten in
    a scratch repository whose alternates point at the real one (nothing is written there). The
    files set aside are recorded per upstream commit; the merged result never names them."""

    def __init__(self, repo: pygit2.Repository):
        self.repo = repo
        self._scratch: pygit2.Repository | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._memo: dict[str, tuple[str, ...]] = {}
        self.set_aside: dict[str, tuple[str, ...]] = {}    # upstream commit → paths merged without

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = self._scratch = None

    def _missing(self, tree: pygit2.Tree, prefix: str = "") -> tuple[str, ...]:
        key = str(tree.id)
        hit = self._memo.get(key)
        if hit is None:
            odb, out = self.repo.odb, []
            for e in tree:
                if e.type_str == "tree":
                    out += [f"{e.name}/{p}" for p in self._missing(self.repo[e.id])]
                elif e.type_str == "blob" and e.id not in odb:
                    out.append(e.name)
            hit = self._memo[key] = tuple(out)
        return hit

    def _without(self, tree: pygit2.Tree, paths: tuple[str, ...]) -> pygit2.Tree:
        if self._scratch is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="forksync-replay-")
            self._scratch = pygit2.init_repository(self._tmp.name, bare=True)
            with open(os.path.join(self._tmp.name, "objects", "info", "alternates"), "w") as f:
                f.write(os.path.realpath(os.path.join(self.repo.path, "objects")) + "\n")
            self._scratch = pygit2.Repository(self._tmp.name)
        sc = self._scratch
        if not paths:
            return sc[tree.id]
        by_dir: dict[str, list[str]] = {}
        for p in paths:
            head, _, rest = p.partition("/")
            by_dir.setdefault(head, []).append(rest)
        tb = sc.TreeBuilder(sc[tree.id])
        for head, rests in by_dir.items():
            if "" in rests:
                tb.remove(head)
            else:
                sub = self._without(sc[tree[head].id], tuple(rests))
                tb.insert(head, sub.id, pygit2.enums.FileMode.TREE)
        return sc[tb.write()]

    def conflicts(self, onto: pygit2.Commit, up: pygit2.Commit) -> tuple[list[_Raw], list[str]]:
        """``(conflicts, affected)`` of picking ``up`` onto ``onto``. Files with a missing blob are
        left out of all three trees alike; ``affected`` names those the pick needs (upstream
        changes them), which the caller skips and counts. Raises KeyError/GitError when a
        tree itself is missing."""
        trees = (up.parents[0].tree, onto.tree, up.tree)
        missing = [self._missing(t) for t in trees]      # memoized per subtree: cheap after the first pick
        if not any(missing):
            return _raws(self.repo.merge_trees(*trees)), []
        gone = tuple(sorted(set().union(*missing)))
        # the pick needs a file only where upstream changes it; elsewhere the fork's side stands
        affected = [p for p in gone if _entry_id(trees[0], p) != _entry_id(trees[2], p)]
        self.set_aside[str(up.id)] = gone
        stripped = [self._without(t, tuple(p for p in gone if _entry_id(t, p) is not None)) for t in trees]
        return _raws(self._scratch.merge_trees(*(t.id for t in stripped))), affected


def _entry_id(tree: pygit2.Tree, path: str) -> str | None:
    try:
        return str(tree[path].id)
    except KeyError:
        return None


def _raws(idx: pygit2.Index) -> list[_Raw]:
    if idx.conflicts is None:
        return []
    out = []
    for anc, ours, theirs in idx.conflicts:
        path = next(e.path for e in (ours, theirs, anc) if e is not None)
        out.append(_Raw(path, anc, ours, theirs))
    return out


class _Facts:
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

    def lines(self, blobs: Iterable[str]) -> frozenset[str]:
        """Every stripped line of the given blobs (missing or binary blobs add nothing)."""
        out: set[str] = set()
        for b in blobs:
            hit = self._lines.get(b)
            if hit is None:
                try:
                    text, binary = _text(self.repo, b)
                except KeyError:
                    text, binary = None, True
                hit = self._lines[b] = frozenset() if binary or text is None else frozenset(ln.strip() for ln in text.splitlines())
            out |= hit
        return frozenset(out)


def _file_conflict(repo: pygit2.Repository, raw: _Raw, cfg: ForksyncConfig, facts: _Facts, up: pygit2.Commit,
                   merge_base: str | None, known_at: int | None = None) -> FileConflict:
    """Raises KeyError when a blob is missing."""
    texts, binary = [], False
    for e in (raw.anc, raw.ours, raw.theirs):
        if e is None:
            texts.append(None)
            continue
        t, b = _text(repo, e.id)
        binary = binary or b
        texts.append(t)
    base, ours, theirs = texts
    merged = None
    if not binary and ours is not None and theirs is not None:
        merged = merge_file_diff3(base, ours, theirs)
    areas, divergent, keep = _areas_of(raw.path, cfg)
    blobs = facts.blobs(raw.path, up, merge_base)
    fuv = None if blobs is None or raw.ours is None else str(raw.ours.id) in blobs
    up_lines = None if blobs is None else facts.lines(blobs)
    later = facts.later_blobs(raw.path, up, known_at)
    ahead = None if later is None or raw.ours is None else str(raw.ours.id) in later
    if binary:
        base = ours = theirs = None
    return FileConflict(raw.path, base, ours, theirs, merged, binary, areas, divergent, keep, fuv,
                        fork_is_later_upstream_version=ahead, upstream_lines=up_lines)


def replay(repo: pygit2.Repository, picks: list[ResolvedPick], cfg: ForksyncConfig, upstream_tip: str) -> list[PickReplay]:
    """Replay each pick and read the fork's landed files. One ``git log`` pass gathers upstream's
    versions of every conflicted path; a missing object skips only the pick or file it hits."""
    git_dir = repo.path
    merger = _Merger(repo)
    stage: list[tuple[PickReplay, pygit2.Commit, pygit2.Commit, list[_Raw], str | None]] = []
    paths: set[str] = set()
    bases: set[str] = set()
    for p in picks:
        rep = PickReplay(p)
        onto, up = repo[p.onto], repo[p.upstream]
        try:
            raws, affected = merger.conflicts(onto, up)
        except (KeyError, pygit2.GitError) as e:
            rep.skipped.append(Skipped(p.fork_commit, f"the merge needs a missing object ({e})"))
            stage.append((rep, onto, up, [], None))
            continue
        mb = repo.merge_base(onto.id, up.id)
        mb_s = str(mb) if mb else None
        if mb_s:
            bases.add(mb_s)
        paths.update(r.path for r in raws)
        stage.append((rep, onto, up, raws, mb_s))
        rep.skipped += [Skipped(f"{p.fork_commit}:{a}", "a blob the pick needs is missing; the file was left out")
                        for a in affected]
        if p.upstream in merger.set_aside:
            rep.set_aside = merger.set_aside[p.upstream]
    merger.close()
    # the oldest merge base bounds the one log pass (each pick then reads only its own range)
    base = None
    for b in bases:
        if base is None or repo.descendant_of(base, b):
            base = b
    facts = _Facts(repo, git_dir, upstream_tip, paths, base)
    out = []
    for rep, onto, up, raws, mb in stage:
        landed_tree = repo[rep.pick.fork_commit].tree
        for raw in raws:
            try:
                # what the fork could know when it made the pick: upstream up to the pick's parent's date
                fc = _file_conflict(repo, raw, cfg, facts, up, mb, known_at=onto.commit_time)
                landed_entry = _entry(landed_tree, raw)
                landed = None
                if landed_entry is not None:
                    landed, lb = _text(repo, landed_entry.id)
                    if lb:
                        landed = "\0binary:" + str(landed_entry.id)
            except KeyError as e:
                rep.skipped.append(Skipped(f"{rep.pick.fork_commit}:{raw.path}", f"a blob is missing ({e})"))
                continue
            rep.files.append(ReplayedFile(fc, landed, file_kind(raw.path)))
        out.append(rep)
    return out


def _entry(tree: pygit2.Tree, raw: _Raw):
    for e in (raw.ours, raw.theirs):
        if e is not None:
            try:
                return tree[e.path]
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
    repo = pygit2.Repository(repo_path)
    onto, up = _commit(repo, onto_sha), _commit(repo, upstream_sha)
    if onto is None or up is None:
        raise ValueError(f"{repo_path}: unknown revision {onto_sha if onto is None else upstream_sha!r}")
    if len(up.parent_ids) != 1:
        raise ValueError(f"upstream {up.id} has {len(up.parent_ids)} parents; only single-parent commits are picked")
    merger = _Merger(repo)
    try:
        raws, affected = merger.conflicts(onto, up)
    finally:
        merger.close()
    mb = repo.merge_base(onto.id, up.id)
    mb_s = str(mb) if mb else None
    tip = _commit(repo, upstream_tip) if upstream_tip else up
    if tip is None:
        raise ValueError(f"{repo_path}: unknown revision {upstream_tip!r}")
    facts = _Facts(repo, repo.path, str(tip.id), [r.path for r in raws], mb_s)
    out: list[tuple[str, Decision | Declined]] = [(a, Declined((), "a blob the pick needs is missing")) for a in affected]
    for raw in raws:
        try:
            fc = _file_conflict(repo, raw, cfg, facts, up, mb_s)
        except KeyError as e:
            out.append((raw.path, Declined((), f"a blob is missing ({e})")))
            continue
        if fc.binary:
            out.append((raw.path, Declined((), "a binary file")))
            continue
        if memory is not None:
            fc = memory.apply(fc)
        out.append((raw.path, resolve_file(fc, cfg.resolve.rules)))
    return sorted(out, key=lambda x: x[0])


def history_memory(replays: Iterable[PickReplay]) -> Memory:
    """What the fork's resolved picks teach the memory rules, learned in landing order (pass the
    result of :func:`replay` over :func:`find_resolved_picks`; compute it once per sync)."""
    memory = Memory()
    for rep in sorted(replays, key=lambda r: (r.pick.time, r.pick.fork_commit)):
        for f in rep.files:
            memory = memory.learn(f.conflict, f.landed)
    return memory
