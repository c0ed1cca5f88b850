"""The git layer (an edge): repositories, refs, ranges and per-commit analysis.

pygit2 reads objects, refs and walks history; the git CLI is used where it is the right tool:
``git clone --mirror``/``fetch`` and the one ``git log -p | git patch-id --stable`` pass that
yields, in a single stream, every commit's changed files, hunks and patch-id (pygit2's
``Diff.patchid`` disagreed with ``git patch-id --stable`` on 197 of 1709 real Triton commits and
its per-commit diffs were ~4× slower than git's log pass, so git's pipeline is the source).

API (stable; see docs/core.md):

* :func:`open_remote` — a URL or local path → a git dir (local paths are used in place,
  URLs are mirrored into ``cache_dir``).
* :func:`open_pair` — upstream + fork git dirs → one :class:`pygit2.Repository` that sees both
  object stores (the same repo when they are the same; else a cache repo with alternates).
* :func:`resolve` — any ref/sha → full sha, :class:`RefError` naming the ref and the repo.
* :func:`upstream_range` — merge base and the upstream first-parent commits since it.
* :func:`commit_infos` / :func:`commit_info` — :class:`bot.model.CommitInfo` per sha; missing
  objects are reported in ``CommitInfo.missing``, never raised.
* :func:`in_flight_branches` — open ``forksync/*`` branches → :class:`bot.model.InFlightBranch`
  (:func:`built_for`: one built for another fork branch of the repository is not in flight).
* :func:`sync_branch_for` — the branch a unit gets for a fork ref (:func:`default_branch` keeps
  ``forksync/<unit>``, another fork ref ``forksync/<fork ref>/<unit>``).
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import logging
import os
import re
import signal
import subprocess
import threading
from pathlib import Path
from typing import Callable, Iterable, Iterator

import pygit2
from pygit2.enums import SortMode

from bot.config.objects import open_repository
from bot.model import CommitInfo, FileChange, InFlightBranch, short_branch, sync_branch, sync_branch_ref

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]   # (done, total)


class GitIOError(RuntimeError):
    """A git operation failed (clone, fetch, log); the message names the command and repository.
    ``side`` ("fork", "upstream" or "") says which configured repository it was, where known, so
    that a caller can say where that repository's location was given."""

    side: str = ""


class AbsentObjectsError(GitIOError):
    """A step needs blobs the repository lacks (a partial clone or snapshot; forksync never
    fetches them, :data:`NO_LAZY_FETCH`): ``what`` names the step, ``absent`` the blobs as
    ``(path, blob sha)``, so that a caller can say exactly what to fetch."""

    def __init__(self, what: str, absent: Iterable[tuple[str, str]], repo: str):
        self.what, self.absent, self.repo = what, tuple(absent), repo
        super().__init__(f"the repository {repo} lacks objects {what} needs: {name_blobs(self.absent)}")


def name_blobs(absent: Iterable[tuple[str, str]]) -> str:
    """``(path, blob sha)`` pairs as an error names them: ``path (blob <sha12>), …``."""
    return ", ".join(f"{p} (blob {b[:12]})" for p, b in absent)


def fetch_advice(git_dir: str, blobs: list[str]) -> str:
    """What to do about blobs the repository ``git_dir`` lacks (``blobs``: their shas; empty where
    git named none): ``(a partial clone or snapshot?); in a partial clone … else use a complete
    clone``. The one blob a single ``cat-file -e`` fetches is named; forksync itself never fetches
    them (:data:`NO_LAZY_FETCH`)."""
    how = ("fetching them" if not blobs else f"`git -C {git_dir} cat-file -e {blobs[0]}` fetches it" if len(blobs) == 1
           else f"`git -C {git_dir} cat-file -e <blob>` fetches one")
    return (f"(a partial clone or snapshot?); in a partial clone {how} from its promisor remote (a plain `git fetch` "
            "keeps the clone's filter), else use a complete clone")


class RefError(ValueError):
    """A ref or sha that does not resolve; ``ref`` and ``repo`` say which and where. ``advice``
    replaces the generic "check the branch or sha, or fetch it" where the caller knows the fetch
    that gets it (a remote-tracking ref); ``side`` ("fork", "upstream" or "") says which setting
    named the ref, so that a caller can say where that setting was given."""

    def __init__(self, ref: str, repo: str, why: str = "not found", hint: str = "", *, advice: str = "", side: str = ""):
        self.ref, self.repo, self.why, self.side, self.advice = ref, repo, why, side, advice
        advice = advice or f"check the branch or sha, or fetch it: `git fetch <remote> {ref}`"
        super().__init__(f"ref {ref!r} {why} in repository {repo} ({advice})" + (f"; {hint}" if hint else ""))


def ref_names(repo: pygit2.Repository) -> list[str]:
    """The names a person passes as a ref: local branches (``main_perf``), remote-tracking branches
    (``origin/main``) and tags, without GitHub's ``refs/pull/…`` (thousands in a mirror of a
    busy fork), sorted."""
    out = []
    for name in repo.references:
        for prefix in ("refs/heads/", "refs/remotes/", "refs/tags/"):
            if name.startswith(prefix) and not name.endswith("/HEAD"):
                out.append(name[len(prefix):])
    return sorted(out)


def repo_dir(repo: pygit2.Repository) -> str:
    """The folder a person passes to ``git -C``: the work tree of a checkout (``…/spyre`` for
    ``…/spyre/.git``, or a linked worktree for its ``.git/worktrees/<name>``), else the git
    directory. libgit2 takes a bare snapshot whose config it does not read as bare for the work
    tree of its parent folder, where git would not look."""
    git_dir, work = repo.path.rstrip("/"), (repo.workdir or "").rstrip("/")
    return work if work and _git_dir_of(work) == os.path.realpath(git_dir) else git_dir


def _git_dir_of(work: str) -> str | None:
    """The git directory of work tree ``work``, real path: its ``.git`` folder, or where its
    ``.git`` file (a linked worktree's, ``gitdir: …``) points; None when it has neither."""
    dot = os.path.join(work, ".git")
    if os.path.isdir(dot):
        return os.path.realpath(dot)
    try:
        with open(dot, encoding="utf-8") as f:
            line = f.readline().strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    return os.path.realpath(os.path.join(work, line[len("gitdir:"):].strip()))


def branch_work_tree(repo: pygit2.Repository, branch: str) -> str | None:
    """The work tree where ``branch`` is checked out, of the checkout ``repo`` belongs to (its
    main work tree or any linked worktree, ``git worktree list``); None when none has it (or the
    repository is bare). git refuses to update a branch checked out in a work tree other than by
    a merge run there (``git fetch . origin/main:main`` is refused)."""
    want = f"ref: refs/heads/{branch.removeprefix('refs/heads/')}"
    git_dir = repo.path.rstrip("/")
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as f:
            common = os.path.normpath(os.path.join(git_dir, f.read().strip()))
    except OSError:
        common = git_dir
    dirs = [common]
    try:
        dirs += [os.path.join(common, "worktrees", n) for n in sorted(os.listdir(os.path.join(common, "worktrees")))]
    except OSError:
        pass
    for d in dirs:
        try:
            with open(os.path.join(d, "HEAD"), encoding="utf-8") as f:
                head = f.read().strip()
            if d == common:
                work = os.path.dirname(common) if os.path.basename(common) == ".git" else None
            else:
                with open(os.path.join(d, "gitdir"), encoding="utf-8") as f:
                    work = os.path.dirname(f.read().strip())
        except OSError:
            continue
        if head == want and work and _git_dir_of(work) == os.path.realpath(d):
            return work
    return None


def promisor_remotes(repo: pygit2.Repository) -> list[str]:
    """The remotes a partial clone fetches its absent objects from, sorted: each
    ``remote.<name>.promisor`` that is true (``git clone --filter=…`` sets it for ``origin``, a
    ``git fetch --filter=… <name>`` for that remote) and the older ``extensions.partialclone``.
    Empty for a complete clone, or a snapshot that lacks objects with nothing to fetch them from."""
    names = set()
    for entry in repo.config:
        # a bare key (``promisor`` with no ``=``) has no value and is true to git; ``promisor =`` is false
        key, value = entry.name, "true" if entry.value is None else entry.value.strip()
        low = key.lower()
        if low.startswith("remote.") and low.endswith(".promisor") and value.lower() in ("true", "yes", "on", "1"):
            names.add(key[len("remote."):-len(".promisor")])
        elif low == "extensions.partialclone" and value:
            names.add(value)
    return sorted(names)


def other_remote_branches(repo: pygit2.Repository, branch: str, avoid: str) -> list[str]:
    """Remote-tracking branches that may hold upstream's tip in a fork's clone: ``<remote>/<name>``
    for every remote but the one ``branch`` tracks (``branch.<branch>.remote``, else ``origin``),
    with ``name`` the fork's branch name, ``main`` or ``master``, and not at the commit ``avoid``
    (the fork's tip); ``upstream/…`` first, then sorted. ``git remote add upstream <url>`` and
    ``git fetch upstream`` make ``upstream/main``."""
    name = branch.removeprefix("refs/heads/")
    try:
        own = str(repo.config[f"branch.{name}.remote"])
    except (KeyError, ValueError, pygit2.GitError):
        own = "origin"
    # a remote's name may hold slashes (``triton-lang/triton``): a remote-tracking ref belongs to
    # the longest configured remote its path starts with, else (a mirror's copied refs, whose
    # remotes are not configured here) to its first component
    remotes = sorted(repo.remotes.names(), key=len, reverse=True)
    out = []
    for ref in repo.references:
        if not ref.startswith("refs/remotes/") or ref.endswith("/HEAD"):
            continue
        path = ref[len("refs/remotes/"):]
        remote = next((r for r in remotes if path.startswith(f"{r}/")), path.partition("/")[0])
        rest = path[len(remote) + 1:]
        if remote == own or rest not in (name, "main", "master"):
            continue
        try:
            if str(repo.references[ref].peel(pygit2.Commit).id) != avoid:
                out.append(f"{remote}/{rest}")
        except (KeyError, ValueError, pygit2.GitError):
            continue
    return sorted(out, key=lambda r: (not r.startswith("upstream/"), r))


def behind_tracked(repo: pygit2.Repository, ref: str) -> tuple[str, int] | None:
    """``(remote-tracking branch, commits)`` when ``ref`` names a local branch strictly behind the
    branch it tracks (``branch.<name>.remote`` / ``.merge``, as ``git status`` reads them): a clone
    refreshed by ``git fetch`` but never pulled. None for a sha, a remote-tracking ref, a branch
    that tracks nothing, is level with it or has commits of its own."""
    name = ref.removeprefix("refs/heads/")
    if f"refs/heads/{name}" not in repo.references:
        return None
    try:
        remote, merge = str(repo.config[f"branch.{name}.remote"]), str(repo.config[f"branch.{name}.merge"])
    except (KeyError, ValueError, pygit2.GitError):
        return None
    tracking = f"{remote}/{merge.removeprefix('refs/heads/')}"
    try:
        local = repo.references[f"refs/heads/{name}"].peel(pygit2.Commit).id
        theirs = repo.references[f"refs/remotes/{tracking}"].peel(pygit2.Commit).id
        ahead, behind = repo.ahead_behind(local, theirs)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return (tracking, behind) if behind and not ahead else None


def head_branch(repo: pygit2.Repository) -> str | None:
    """The branch ``HEAD`` names (``master`` for ``refs/heads/master``): in a bare clone, the
    remote's default branch. None for a detached or missing ``HEAD``."""
    try:
        target = repo.references["HEAD"].target
    except (KeyError, pygit2.GitError):
        return None
    return target.removeprefix("refs/heads/") if isinstance(target, str) and target.startswith("refs/heads/") else None


# ---------------------------------------------------------------------------------------------
# git CLI helper

def git_env() -> dict[str, str]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1"}
    env.pop("GIT_DIR", None)
    return env


#: for every git command that reads object contents (``log -p``, ``patch-id``, ``merge-tree``,
#: ``worktree add``, ``checkout`` …) and does not itself talk to a remote: in a partial clone
#: (``--filter=blob:none``) git would fetch each absent blob from the promisor remote as it
#: reaches it, one round trip per commit (8 minutes instead of 11 s on the Intel fork), hanging
#: or failing offline, and writing into a repository that a local path promises to leave alone;
#: with every transport refused the fetch fails at once and the blob is reported missing like
#: any other (git 2.44's ``--no-lazy-fetch`` does the same, but git 2.39 does not know it).
#: The one way forksync does it: never duplicate the setting. Commands that fetch or push on
#: purpose (``fetch``, ``push``, ``clone``, ``ls-remote``) must not carry it.
NO_LAZY_FETCH = ("-c", "protocol.allow=never")


def absent_entries(repo: pygit2.Repository, tree: pygit2.Tree) -> Iterator[tuple[str, int, str]]:
    """``(path, file mode, sha)`` of every blob of ``tree`` (recursively, in tree order) that the
    repository lacks: what a checkout of it would have to fetch (a partial clone or snapshot).
    Reads trees only; a missing subtree is its path with a trailing ``/``, its mode and sha."""
    for e in tree:
        if e.type_str == "tree":
            try:
                sub = repo[e.id]
            except KeyError:
                yield f"{e.name}/", e.filemode, str(e.id)
                continue
            yield from ((f"{e.name}/{p}", m, s) for p, m, s in absent_entries(repo, sub))
        elif e.type_str == "blob" and e.id not in repo:
            yield e.name, e.filemode, str(e.id)


def tree_paths(repo: pygit2.Repository, tree: pygit2.Tree) -> Iterator[str]:
    """The path of every file (blob or submodule) of ``tree``, recursively, from the repository
    root. Reads trees only (a partial clone's absent blobs are listed); an absent subtree is
    skipped."""
    for e in tree:
        if e.type_str == "tree":
            try:
                sub = repo[e.id]
            except KeyError:
                continue
            yield from (f"{e.name}/{p}" for p in tree_paths(repo, sub))
        else:
            yield e.name


def absent_blobs(repo: pygit2.Repository, tree: pygit2.Tree, limit: int = 3) -> list[tuple[str, str]]:
    """``(path, blob sha)`` of the first ``limit`` of :func:`absent_entries`."""
    return [(p, s) for p, _, s in itertools.islice(absent_entries(repo, tree), limit)]


def git(git_dir: str | Path, *argv: str, input: str | bytes | None = None, check: bool = True,
        text: bool = True) -> str | bytes:
    """Run ``git --git-dir=<git_dir> argv…`` in ``git_dir`` (where it exists: a git given --git-dir
    takes the folder it runs in for the work tree and reads its ``.gitattributes``, so a patch it
    shows would depend on where forksync was started); raise :class:`GitIOError` on failure."""
    cwd = os.path.abspath(git_dir) if os.path.isdir(git_dir) else None
    p = subprocess.run(["git", f"--git-dir={cwd or git_dir}", *argv], env=git_env(), input=input,
                       capture_output=True, text=text, cwd=cwd)
    if check and p.returncode != 0:
        err = p.stderr if text else p.stderr.decode(errors="replace")
        raise GitIOError(f"git {' '.join(argv[:4])} failed in {git_dir} ({p.returncode}): {err.strip()}")
    return p.stdout


# ---------------------------------------------------------------------------------------------
# repositories

#: A git lock file older than this was left by a git process that was killed (a worker stopped
#: mid-fetch): a live git holds a ref, index or config lock for moments, not minutes.
STALE_LOCK_S = 600.0

#: For every git command forksync runs in a repository it clears the locks of
#: (:func:`clear_stale_locks` with ``max_age_s=None``): the automatic gc a fetch may start runs
#: before the command returns, never detached beyond it (``gc.autoDetach``; and
#: ``maintenance.autoDetach``, git 2.46's own switch): a detached gc still running after the lock
#: every writer holds was released would hold ``packed-refs.lock`` and ref locks unguarded.
NO_DETACHED_GC = ("-c", "gc.autoDetach=false", "-c", "maintenance.autoDetach=false")


def _prctl():
    """libc's ``prctl``, looked up once in the parent (a child between fork and exec must not load
    libraries: another thread may hold the loader's lock); None off Linux."""
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()


def die_with_parent() -> None:
    """``preexec_fn`` of a git that writes a repository under a lock its parent holds: the git gets
    SIGKILL when the thread that started it ends (Linux ``PR_SET_PDEATHSIG``), so a worker killed
    (OOM, SIGKILL) takes its git along. Left running, the git would go on writing the repository
    after the OS released the dead worker's ``flock``, beside the next holder, which takes every
    lock file it finds for a dead git's (:func:`clear_stale_locks` with ``max_age_s=None``).
    Nothing elsewhere (no ``prctl``)."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL)           # PR_SET_PDEATHSIG = 1


async def run_locked_git(git_dir: str | Path, *argv: str, env: dict[str, str] | None = None,
                         timeout_s: float | None = None) -> tuple[int, bytes, bytes]:
    """``(exit status, stdout, stderr)`` of ``git --git-dir=<git_dir> <argv>`` for a caller holding
    the lock every git writing ``git_dir`` holds: in the foreground (:data:`NO_DETACHED_GC`),
    killed with its worker (:func:`die_with_parent`), and killed when the wait ends early — past
    ``timeout_s`` (None: no limit; ``asyncio.TimeoutError``) or cancelled — so no git of it writes
    there once the lock is released. ``env``: git's environment (None: this process's)."""
    proc = await asyncio.create_subprocess_exec(
        "git", f"--git-dir={git_dir}", *NO_DETACHED_GC, *argv, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, preexec_fn=die_with_parent)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout_s)
    except BaseException:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        raise
    return proc.returncode, out, err

def clear_stale_locks(git_dir: str | Path, now: float, max_age_s: float | None = STALE_LOCK_S) -> list[str]:
    """Remove the lock files (``*.lock``: of refs, ``packed-refs``, ``shallow``, ``index``,
    ``config``, ``HEAD``) in ``git_dir`` last modified more than ``max_age_s`` seconds before
    ``now`` (epoch s); with ``max_age_s=None`` every one, whatever its age — only for a caller
    holding a lock that every git writing ``git_dir`` holds too (and whose gits run
    :data:`NO_DETACHED_GC`): then no live git holds one. git never removes a lock its killed
    process left, and refuses to touch what it guards until a person does ("Unable to create
    '….lock': File exists"). Returns the paths removed, relative to ``git_dir``; a lock that
    vanishes meanwhile is skipped."""
    root = Path(git_dir)
    candidates = [*root.glob("*.lock"), *(root / "refs").rglob("*.lock")] if root.is_dir() else []
    removed = []
    for p in candidates:
        try:
            if max_age_s is None or now - p.stat().st_mtime > max_age_s:
                p.unlink()
                removed.append(str(p.relative_to(root)))
        except FileNotFoundError:
            continue
    return sorted(removed)


_REF_LINE = re.compile(rb"^(?:[0-9a-f]{40}|[0-9a-f]{64}|ref: refs/\S+)\n?$")
_PACKED_LINE = re.compile(rb"^(?:#.*|\^?[0-9a-f]{40}(?: \S+)?|\^?[0-9a-f]{64}(?: \S+)?)$")
_LOOSE_OBJECT = re.compile(r"^[0-9a-f]{38}$|^[0-9a-f]{62}$")


def damaged_files(git_dir: str | Path) -> tuple[list[str], list[str]]:
    """``(refs, others)``: the files of ``git_dir`` that a power loss can leave empty or cut short,
    found so, as paths relative to ``git_dir``, sorted. git writes loose refs and loose objects
    (and libgit2 by default everything) without an fsync: the rename that names a file can reach
    the disk before its data, so after a power loss a name may hold nothing, and every later fetch
    fails on it ("fatal: bad object refs/heads/main"; "object file … is empty").

    ``refs``: loose refs under ``refs/`` that hold no object name nor ``ref: …``, and a
    ``packed-refs`` with a line that is neither; removing them loses only what a fetch brings
    back. ``others``: what removing cannot mend in place — ``HEAD`` or ``config`` unreadable, a
    loose object (``objects/xx/…``) empty, not a whole zlib stream, or whose header disagrees with
    its length, and a loose ref naming an object the repository does not have. Reads every loose
    object whole (a fetch below ``fetch.unpackLimit`` objects leaves them loose, ``gc.auto`` packs
    them past 6,700): tens of milliseconds; packs are not read (git and
    :func:`bot.config.objects.write_pack` fsync them). A missing ``git_dir`` gives ``([], [])``."""
    import zlib

    root = Path(git_dir)
    if not (root / "HEAD").exists() and not (root / "objects").is_dir():
        return [], []
    refs: list[str] = []
    others: list[str] = []
    head = _read(root / "HEAD")
    if head is None or not _REF_LINE.match(head):
        others.append("HEAD")
    try:
        if (root / "config").exists():
            pygit2.Config(str(root / "config"))["core.bare"]
    except KeyError:
        pass                                # no such key: it parsed
    except (pygit2.GitError, ValueError):
        others.append("config")
    named: dict[str, str] = {}
    for p in sorted((root / "refs").rglob("*")) if (root / "refs").is_dir() else []:
        if not p.is_file() or p.name.endswith(".lock"):
            continue
        rel = str(p.relative_to(root))
        data = _read(p)
        if data is None or not _REF_LINE.match(data):
            refs.append(rel)
        elif not data.startswith(b"ref: "):
            named[rel] = data.strip().decode()
    packed = _read(root / "packed-refs")
    if packed is not None and not all(_PACKED_LINE.match(line) for line in packed.splitlines()):
        refs.append("packed-refs")
    objects = root / "objects"
    for sub in sorted(objects.glob("[0-9a-f][0-9a-f]")) if objects.is_dir() else []:
        for p in sorted(sub.iterdir()):
            if not _LOOSE_OBJECT.match(p.name):
                continue                    # git's own tmp_obj_* files: git prune removes them
            data = _read(p)
            if data is None or not _whole_object(data, zlib):
                others.append(str(p.relative_to(root)))
    if named and not others:
        try:
            odb = open_repository(str(root)).odb
            others += sorted(rel for rel, sha in named.items() if sha not in odb)
        except (pygit2.GitError, KeyError, ValueError):
            others.append("objects")
    return sorted(refs), sorted(others)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return None


def _whole_object(data: bytes, zlib) -> bool:
    """Whether ``data`` is a whole loose object: one complete zlib stream holding
    ``<type> <size>\0`` and exactly ``size`` bytes after it."""
    d = zlib.decompressobj()
    try:
        raw = d.decompress(data) + d.flush()
    except zlib.error:
        return False
    if not d.eof:
        return False
    header, sep, body = raw.partition(b"\0")
    kind, _, size = header.partition(b" ")
    return bool(sep) and kind in (b"blob", b"tree", b"commit", b"tag") and size.isdigit() and int(size) == len(body)


def is_local(url: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.\-]*://|^[\w.\-]+@[\w.\-]+:", url)


def _own_ref_dir(rel: str) -> bool:
    """Is ``rel`` (a folder under ``refs/``) one only forksync writes refs into: its branches
    (``heads/forksync/``, ``remotes/<r>/forksync/``) or its kept commits (``forksync/``)?"""
    parts = rel.split("/")
    return parts == ["forksync"] or parts == ["heads", "forksync"] or (len(parts) == 3 and parts[0] == "remotes"
                                                                        and parts[2] == "forksync")


def ref_name(repo: pygit2.Repository, ref: str) -> str | None:
    """The full name of the reference ``ref`` names, tried as :func:`resolve` tries it (as given,
    ``refs/heads/``, ``refs/remotes/origin|upstream/``, ``refs/tags/``); None for a rev that names
    no reference — a sha, ``main~3``, ``v1^{}``: a pinned commit, which no fetch moves."""
    candidates = [ref] if ref.startswith("refs/") else [ref, f"refs/heads/{ref}", f"refs/remotes/origin/{ref}",
                                                        f"refs/remotes/upstream/{ref}", f"refs/tags/{ref}"]
    for cand in candidates:
        try:
            return repo.lookup_reference_dwim(cand).name
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            continue
    return None


def _fetch_url(url: str) -> str:
    """``url`` as a FETCH_HEAD line names where it fetched from: no credentials, no trailing
    ``/`` and no trailing ``.git`` (git's own shortening of the URL it records)."""
    url = re.sub(r"^([a-z][a-z0-9+.-]*://)[^/@]*@", r"\1", url.strip())
    url = url.rstrip("/")
    return url[:-4] if url.endswith(".git") else url


def _ref_remote_urls(repo: pygit2.Repository, name: str) -> set[str] | None:
    """The URLs (as :func:`_fetch_url` writes them) a fetch that updates ``name`` comes from:
    for ``refs/remotes/<remote>/…``, that remote's; None where no configured remote says (any
    fetch listing the commit then counts, as a fetch of a mirror's own refs does)."""
    if not name.startswith("refs/remotes/"):
        return None
    rest = name[len("refs/remotes/"):]
    for remote in sorted(repo.remotes, key=lambda r: -len(r.name or "")):
        if remote.name and rest.startswith(remote.name + "/"):
            urls = {remote.url or ""}
            try:
                urls.add(repo.config[f"remote.{remote.name}.url"])
            except KeyError:
                pass
            urls = {_fetch_url(u) for u in urls if u}
            return urls or None
    return None


def _fetch_head_lists(fetch_head: Path, sha: str, urls: set[str] | None = None) -> bool:
    """Does ``FETCH_HEAD`` list ``sha`` (the fetch it records brought that commit, or saw it
    unchanged) — fetched from one of ``urls`` when given? A fetch of another remote may list the
    same commit (a fork's copy of upstream's branch) and says nothing about upstream."""
    try:
        lines = fetch_head.read_text(errors="replace").splitlines()
    except OSError:
        return False
    for line in lines:
        if not line.startswith(sha):
            continue
        if urls is None or line.rsplit(" of ", 1)[-1].strip() in urls:
            return True
    return False


def refs_updated_at(git_dir: str | Path, ref: str | None = None, own_notes: str = "refs/notes/forksync") -> float | None:
    """When a repository's refs last changed (epoch s), or None when nothing says so. For a copy
    that is not fetched here (a local path, a snapshot) this is as of when it knows its upstream.

    ``ref``: where the fork and upstream are one repository, upstream's ref (a name git resolves:
    ``upstream/main``, ``refs/remotes/upstream/main``): only that ref counts — its loose file or its
    reflog, which only an update of that ref writes — and ``FETCH_HEAD`` when a line of it lists
    the commit the ref points to, fetched from the ref's own remote (``refs/remotes/<remote>/…``):
    a fetch that saw upstream; a fetch of the fork's own remote does not, even where it lists the
    same commit (the fork's copy of upstream's branch).
    ``packed-refs`` does not count then: git rewrites it whenever any packed ref is deleted or
    packed (``branch -d``, ``pack-refs``, ``gc``), so its time moves with writes that say nothing
    about upstream; a ref found only there is None (unknown), never a time that moves. A ``ref``
    that names no reference (a sha: a pinned commit) is None too: no ref's time says when
    upstream was last seen. Without ``ref`` (a repository of upstream's alone): ``FETCH_HEAD``,
    ``packed-refs`` and every loose ref but those forksync writes itself (its branches and kept
    commits, :func:`_own_ref_dir`, and its notes ``own_notes``)."""
    root = Path(git_dir)

    def mtimes(*paths: Path) -> list[float]:
        return [p.stat().st_mtime for p in paths if p.is_file()]

    if ref is not None:
        try:
            repo = open_repository(str(root))
        except pygit2.GitError:
            return None
        name = ref_name(repo, ref)
        if name is None:
            return None
        own = mtimes(root / name, root / "logs" / name)
        target = str(repo.references[name].resolve().target)
        fetched = (mtimes(root / "FETCH_HEAD")
                   if _fetch_head_lists(root / "FETCH_HEAD", target, _ref_remote_urls(repo, name)) else [])
        return max(own + fetched, default=None)
    times = mtimes(root / "FETCH_HEAD", root / "packed-refs")
    for d, dirs, names in os.walk(root / "refs"):
        rel = Path(d).relative_to(root / "refs").as_posix()          # "." at refs/ itself
        under = "" if rel == "." else f"{rel}/"
        dirs[:] = [x for x in dirs if not _own_ref_dir(under + x)]
        times += mtimes(*(Path(d, n) for n in names if f"refs/{under}{n}" != own_notes))
    return max(times, default=None)


def git_dir_of(path: str | Path) -> str:
    """The git dir of a local repository (work tree or bare). Raises :class:`GitIOError`."""
    p = Path(path)
    if not p.exists():
        raise GitIOError(f"repository path {p} does not exist")
    found = pygit2.discover_repository(str(p))
    if found is None:
        raise GitIOError(f"{p} is not a git repository")
    return os.path.normpath(found)


def open_remote(url: str, cache_dir: str | Path, *, fetch: bool = True) -> str:
    """Make ``url`` readable locally and return its git dir.

    A local path (work tree or bare repo) is used in place, read-only. A URL is mirrored with
    ``git clone --mirror`` into ``cache_dir/mirrors/<slug>.git`` (``git fetch --prune`` when the
    mirror exists and ``fetch`` is true). Raises :class:`GitIOError` with git's message.
    """
    if not url:
        url = "."
    if is_local(url):
        return git_dir_of(url)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "+", re.sub(r"^[a-z+]+://|\.git$", "", url)).strip("+")
    dest = Path(cache_dir) / "mirrors" / f"{slug}.git"
    if (dest / "HEAD").exists():
        if fetch:
            git(dest, "fetch", "--prune", "--quiet", "origin")
        return str(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["git", "clone", "--mirror", "--quiet", url, str(dest)], env=git_env(),
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise GitIOError(f"git clone --mirror {url} failed ({p.returncode}): {p.stderr.strip()}")
    return str(dest)


def open_pair(upstream_dir: str, fork_dir: str, cache_dir: str | Path) -> tuple[pygit2.Repository, str]:
    """One repository that sees both object stores, and its git dir.

    Same git dir → that repository. Otherwise a bare cache repo ``cache_dir/combined-<hash>.git``
    whose ``objects/info/alternates`` lists both object dirs (no objects are copied; refs are
    resolved in each source repository, see :func:`resolve`).
    """
    if os.path.realpath(upstream_dir) == os.path.realpath(fork_dir):
        return open_repository(fork_dir), fork_dir
    key = hashlib.sha1(f"{os.path.realpath(upstream_dir)}\0{os.path.realpath(fork_dir)}".encode()).hexdigest()[:12]
    dest = Path(cache_dir) / f"combined-{key}.git"
    if not (dest / "HEAD").exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        pygit2.init_repository(str(dest), bare=True)
    alt = dest / "objects" / "info" / "alternates"
    want = "\n".join(os.path.realpath(os.path.join(d, "objects")) for d in (fork_dir, upstream_dir)) + "\n"
    if not alt.exists() or alt.read_text() != want:
        alt.parent.mkdir(parents=True, exist_ok=True)
        alt.write_text(want)
    return pygit2.Repository(str(dest)), str(dest)


def resolve(repo: pygit2.Repository, ref: str, label: str | None = None) -> str:
    """Resolve a branch, tag, remote branch or (abbreviated) sha to a full commit sha.

    Tries ``ref`` as given, then ``refs/heads/``, ``refs/remotes/origin/``, ``refs/remotes/upstream/``.
    Raises :class:`RefError` naming the ref and the repository (``label`` or its path): ``why``
    "not found", "does not name a commit", or "is ambiguous" (a sha prefix several objects
    share, or shorter than git's 4 digits).
    """
    where = label or repo.path
    candidates = [ref] if ref.startswith("refs/") else [ref, f"refs/heads/{ref}", f"refs/remotes/origin/{ref}",
                                                        f"refs/remotes/upstream/{ref}", f"refs/tags/{ref}"]
    ambiguous = False
    for cand in candidates:
        try:
            obj = repo.revparse_single(cand)
        except pygit2.AmbiguousError:
            # a sha prefix several objects share, or one under git's 4 digits: "not found, fetch
            # it" would send a person after a commit the repository holds
            ambiguous = True
            continue
        except (KeyError, ValueError, pygit2.GitError):
            continue
        try:
            commit = obj.peel(pygit2.Commit)
        except (pygit2.GitError, ValueError, KeyError):
            raise RefError(ref, where, "does not name a commit") from None
        return str(commit.id)
    if ambiguous:
        raise RefError(ref, where, "is ambiguous", advice=f"more than one object's sha begins with it, or it has fewer than 4 "
                       f"hex digits: give more of the sha; `git -C {repo_dir(repo)} rev-parse --disambiguate={ref}` lists "
                       "the candidates")
    raise RefError(ref, where)


def merge_base(repo: pygit2.Repository, a: str, b: str) -> str | None:
    mb = repo.merge_base(a, b)
    return str(mb) if mb else None


def rev_list(repo: pygit2.Repository, tip: str, hide: Iterable[str] = (), *, first_parent: bool = False) -> list[str]:
    """Commits reachable from ``tip`` and not from any of ``hide``, oldest first (topological,
    like ``git rev-list --reverse --topo-order [--first-parent] tip ^hide…``)."""
    w = repo.walk(tip, SortMode.TOPOLOGICAL | SortMode.REVERSE)
    for h in hide:
        if h:
            w.hide(h)
    if first_parent:
        w.simplify_first_parent()
    return [str(c.id) for c in w]


def upstream_range(repo: pygit2.Repository, upstream_tip: str, fork_tip: str,
                   since: str | None = None) -> tuple[str | None, list[str]]:
    """``(base, shas)``: the upstream first-parent commits after ``base`` up to ``upstream_tip``,
    oldest first. ``base`` is ``since`` when given (a sha), else the merge base of the two tips
    (None when they share no history: then the whole first-parent history is the range)."""
    base = since or merge_base(repo, upstream_tip, fork_tip)
    return base, rev_list(repo, upstream_tip, [base] if base else [], first_parent=True)


# ---------------------------------------------------------------------------------------------
# per-commit analysis

_PR_RE = re.compile(r"\(#(\d+)\)\s*$")


def parse_pr(subject: str) -> int | None:
    """The upstream PR number from a trailing ``(#N)`` in a subject (GitHub's squash-merge form)."""
    m = _PR_RE.search(subject.strip())
    return int(m.group(1)) if m else None


def _meta(repo: pygit2.Repository, sha: str) -> CommitInfo:
    c = repo[sha]
    msg = c.message
    return CommitInfo(
        sha=sha, parents=tuple(str(p) for p in c.parent_ids), message=msg,
        author_name=c.author.name, author_email=c.author.email, author_time=int(c.author.time),
        committer_time=int(c.committer.time), pr=parse_pr(msg.split("\n", 1)[0]))


_HUNK_RE = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_UNQUOTE = {b"n": b"\n", b"t": b"\t", b'"': b'"', b"\\": b"\\", b"a": b"\a", b"b": b"\b",
            b"f": b"\f", b"r": b"\r", b"v": b"\v"}


def _unquote(p: bytes) -> str:
    """git's C-style quoted path (``"a/sp\\303\\251cial"``) → str."""
    if not p.startswith(b'"'):
        return p.decode("utf-8", "surrogateescape")
    s, out, i = p[1:-1], bytearray(), 0
    while i < len(s):
        ch = s[i:i + 1]
        if ch == b"\\":
            nxt = s[i + 1:i + 2]
            if nxt.isdigit():
                out.append(int(s[i + 1:i + 4], 8))
                i += 4
                continue
            out += _UNQUOTE.get(nxt, nxt)
            i += 2
            continue
        out += ch
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _strip_prefix(p: str, prefix: str) -> str:
    return p[len(prefix):] if p.startswith(prefix) else p


def _split_diff_git(line: bytes) -> tuple[str, str]:
    rest = line[len(b"diff --git "):]
    if rest.startswith(b'"'):
        end = rest.index(b'"', 1)
        while rest[end - 1:end] == b"\\":
            end = rest.index(b'"', end + 1)
        a, b = rest[:end + 1], rest[end + 2:]
    else:
        # unquoted: "a/X b/X" — X may contain spaces; for non-renames both halves are equal
        half = (len(rest) - 1) // 2
        if rest[:half].removeprefix(b"a/") == rest[half + 1:].removeprefix(b"b/"):
            a, b = rest[:half], rest[half + 1:]
        else:
            a, _, b = rest.partition(b" b/")
            b = b"b/" + b
    return _strip_prefix(_unquote(a), "a/"), _strip_prefix(_unquote(b), "b/")


_HEADER_LINE = re.compile(
    rb"^(?:commit ([0-9a-f]{40})|(diff --git .*)|@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)"
    rb"|(new file mode|deleted file mode).*|(rename from|rename to|copy from|copy to) (.*)|(Binary files) .*)$",
    re.MULTILINE)


# a run of changed lines in a hunk body: ``-``/``+`` lines (and git's ``\ No newline`` marks among them)
_EDIT_RUN = re.compile(rb"^[-+].*(?:\n[-+\\].*)*", re.MULTILINE)


def _hunk_edits(data: bytes, start: int, end: int, old: int, new: int, out: list) -> None:
    """Append the zero-context hunks of one hunk body ``data[start:end]`` to ``out``: each run
    of changed lines is ``(old_start, old_lines, new_start, new_lines)`` in git's ``-U0``
    numbering (a side with no lines starts at the line before). ``old``/``new`` are the body's
    first line numbers. Context lines are what git's diff left unchanged, so the runs between
    them are the very hunks libgit2's zero-context diff of the same texts gives (the edit script
    does not depend on the context width as long as there is some: ``git diff -U0`` itself may
    place a sliding change elsewhere, see :func:`_log_patch`'s ``-U3``; checked against libgit2 on
    the file changes of 11,442 Triton commits)."""
    pos = start
    for m in _EDIT_RUN.finditer(data, start, end):
        ctx = data.count(b"\n", pos, m.start())      # context lines (each ends in a newline) before the run
        old += ctx
        new += ctx
        run = m.group()
        minus = run.count(b"\n-") + (run[0] == 45)
        plus = run.count(b"\n+") + (run[0] == 43)
        out.append((old if minus else old - 1, minus, new if plus else new - 1, plus))
        old += minus
        new += plus
        pos = m.end() + 1


def parse_patch_stream(data: bytes) -> dict[str, list[FileChange]]:
    """Parse ``git log -p --format='commit %H'`` output into changed files per commit sha.

    Handles adds/deletes/renames/copies, binary files and quoted paths. Hunks give
    ``(start, count)`` old/new ranges and git's function-context header text, and the
    zero-context hunks inside them (``FileChange.edits``, :func:`_hunk_edits`). Header lines are
    matched (patch content lines start with ``+``, ``-``, space or ``\\``, so they never match);
    a hunk's body is the text between its header and the next header line.
    """
    result: dict[str, list[FileChange]] = {}
    files: list[FileChange] | None = None
    cur: list | None = None      # [old, new, status, o, n, h, edits]
    body: tuple[int, int, int] | None = None     # the open hunk: (body start, old line, new line)

    def flush():
        if cur is not None and files is not None:
            old, new, status, o, n, h, e = cur
            files.append(FileChange(path=new if status != "D" else old, status=status,
                                    old_path=old if status in ("R", "C") else None,
                                    old_ranges=tuple(o), new_ranges=tuple(n), hunk_headers=tuple(h),
                                    edits=None if e is None else tuple(e)))

    for m in _HEADER_LINE.finditer(data):
        if body is not None:
            _hunk_edits(data, body[0], m.start(), body[1], body[2], cur[6])
            body = None
        if m.group(1):
            flush()
            cur = None
            files = result.setdefault(m.group(1).decode(), [])
        elif m.group(2):
            flush()
            old, new = _split_diff_git(m.group(2))
            cur = [old, new, "M", [], [], [], []]
        elif cur is None:
            continue
        elif m.group(3):
            o, oc, n, nc = int(m.group(3)), m.group(4), int(m.group(5)), m.group(6)
            cur[3].append((o, int(oc) if oc is not None else 1))
            cur[4].append((n, int(nc) if nc is not None else 1))
            cur[5].append(m.group(7).decode("utf-8", "replace"))
            # an empty side is numbered from the line before it (``-0,0``): its lines would start at 1
            body = (m.end() + 1, o + (oc == b"0"), n + (nc == b"0"))
        elif m.group(8):
            cur[2] = "A" if m.group(8).startswith(b"new") else "D"
        elif m.group(9):
            kind, path = m.group(9), _unquote(m.group(10))
            if kind == b"rename from":
                cur[2], cur[0] = "R", path
            elif kind == b"copy from":
                cur[2], cur[0] = "C", path
            else:
                cur[1] = path
        elif m.group(11):
            # git tells no lines (a NUL byte, a ``-diff``/``binary`` attribute, core.bigFileThreshold):
            # no edits known, not "none changed" (symbols then diff the two texts themselves)
            cur[6] = None
    if body is not None:
        _hunk_edits(data, body[0], len(data), body[1], body[2], cur[6])
    flush()
    return result


_MISSING_RE = re.compile(r"(?:unable to read|missing blob object|could not read|bad object)\s+'?([0-9a-f]{40})")


#: bytes read from ``git log -p`` at a time
READ_CHUNK = 1 << 20


def _log_patch(git_dir: str, shas: list[str], renames: bool, tick: Callable[[int], None] | None = None) -> tuple[bytes, dict[str, str], int, str]:
    """One ``git log -p --no-walk=unsorted`` over ``shas`` teed into ``git patch-id --stable``,
    parsed while it streams. Returns (files by sha, patch ids by sha, log return code, log stderr)."""
    env = git_env()
    env.pop("GIT_DIFF_OPTS", None)      # its --unified=N would beat -U3 below
    # run in the git dir: a git given --git-dir takes the folder it runs in for the work tree and
    # reads its .gitattributes (`-diff` there made every file "Binary files differ": no hunks, another
    # patch id), so what a commit changed would depend on where forksync was started
    git_dir = os.path.abspath(git_dir)
    log = subprocess.Popen(
        ["git", f"--git-dir={git_dir}", *NO_LAZY_FETCH, "-c", "core.quotePath=true", "log", "-p", "--no-walk=unsorted",
         "--stdin", "--no-color", "--no-ext-diff", "--no-textconv", "--format=commit %H",
         # every changed path, named as the parser reads it, whatever the user's config: diff.ignoreSubmodules=all
         # leaves submodule changes out (the predictor decides a pick's merge over these paths), diff.noprefix
         # drops the a/ b/ prefixes (a path a/x.txt would read as x.txt)
         "--ignore-submodules=none", "--src-prefix=a/", "--dst-prefix=b/", "-M" if renames else "--no-renames",
         # git's default diff, whatever diff.algorithm / diff.indentHeuristic say: the zero-context hunks read
         # from it (FileChange.edits) must be those of symbols.diff_hunks, libgit2 with the same two settings
         "--diff-algorithm=myers", "--indent-heuristic",
         # and 3 lines of context whatever diff.context / GIT_DIFF_OPTS say: with none, git first trims the
         # texts' common tail (xdiff-interface.c, trim_common_tail), so a change that slides (a repeated
         # line) is placed elsewhere than in libgit2's diff of the whole texts; patch ids need it too
         "-U3"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=git_dir)
    pid = subprocess.Popen(["git", f"--git-dir={git_dir}", *NO_LAZY_FETCH, "patch-id", "--stable"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=git_dir)
    out_pid: list[bytes] = []
    err_log: list[bytes] = []
    t1 = threading.Thread(target=lambda: out_pid.append(pid.stdout.read()))
    t2 = threading.Thread(target=lambda: err_log.append(log.stderr.read()))
    t1.start(), t2.start()

    def feed():
        log.stdin.write(("\n".join(shas) + "\n").encode())
        log.stdin.close()
    t3 = threading.Thread(target=feed)
    t3.start()
    parsed: dict[str, list[FileChange]] = {}
    # the unparsed output as chunks, joined only when a commit boundary arrives: one commit's patch
    # of hundreds of MB (a vendored cache, a generated file) is then copied and searched once, not
    # once per chunk read (which grew with the square of its size)
    chunks: list[bytes] = []
    size = 0
    marker = b"\ncommit "
    while True:
        b = log.stdout.read(READ_CHUNK)
        if not b:
            break
        pid.stdin.write(b)
        tail = chunks[-1][-(len(marker) - 1):] if chunks else b""
        found = (tail + b).rfind(marker)
        chunks.append(b)
        size += len(b)
        cut = size - len(b) - len(tail) + found if found >= 0 else -1
        if cut > 0:        # parse whole commits while git produces the next ones
            pending = b"".join(chunks)
            parsed.update(parse_patch_stream(pending[:cut + 1]))
            chunks = [pending[cut + 1:]]
            size = len(chunks[0])
            if tick:
                tick(len(parsed))
    parsed.update(parse_patch_stream(b"".join(chunks)))
    pid.stdin.close()
    rc = log.wait()
    t3.join(), t1.join(), t2.join()
    pid.wait()
    ids = {}
    for ln in out_pid[0].decode().splitlines():
        parts = ln.split()
        if len(parts) == 2:
            ids[parts[1]] = parts[0]
    return parsed, ids, rc, err_log[0].decode(errors="replace") if err_log else ""


def missing_object_commits(git_dir: str, shas: list[str]) -> dict[str, list[str]]:
    """Commits among ``shas`` whose diff against the first parent needs an absent object.

    One ``git log --raw --no-renames`` pass (it reads trees, never blobs) names the old and new
    blob of every changed path; those the object database lacks are the absent ones. Both sides
    count: in a blobless partial clone the old blob is absent too, and it belongs to a parent that
    may be outside ``shas`` (on a fork that merges upstream most parents are merges), so a walk
    of the objects the commits introduce would miss it and ``git log -p`` would stop on each such
    commit in turn. Returns ``{sha: ["blob <id> (<path>)", …]}``.
    """
    if not shas:
        return {}
    odb = open_repository(git_dir).odb
    p = subprocess.run(["git", f"--git-dir={git_dir}", *NO_LAZY_FETCH, "log", "--raw", "--no-renames", "--no-abbrev",
                        "--format=commit %H", "--no-walk=unsorted", "--stdin"],
                       input="\n".join(shas) + "\n", capture_output=True, text=True, env=git_env())
    out: dict[str, list[str]] = {}
    known: dict[str, bool] = {}
    cur = None
    for ln in p.stdout.splitlines():
        if ln.startswith("commit "):
            cur = ln[7:47]
        elif ln.startswith(":") and cur:
            meta, _, path = ln.partition("\t")
            parts = meta.split()
            for mode, oid in ((parts[0][1:], parts[2]), (parts[1], parts[3])):
                if mode == "160000" or not oid.strip("0"):      # a submodule's commit, or no blob on this side
                    continue
                if oid not in known:
                    known[oid] = oid in odb
                if not known[oid]:
                    out.setdefault(cur, []).append(f"blob {oid} ({path})")
    return out


def _fallback_files(repo: pygit2.Repository, sha: str) -> tuple[list[FileChange], list[str]]:
    """Files of one commit whose objects are (partly) missing: names and status from the trees
    (no rename detection), hunks only for files whose both blobs are present."""
    c = repo[sha]
    missing: list[str] = []
    if not c.parents:
        return [], missing
    files: list[FileChange] = []
    try:
        diff = repo.diff(c.parents[0].tree, c.tree)
    except (KeyError, pygit2.GitError) as e:
        return [], [f"tree ({e})"]
    letters = {1: "A", 2: "D", 3: "M", 4: "R", 5: "C", 8: "T"}
    odb = repo.odb
    for d in diff.deltas:
        status = letters.get(int(d.status), "M")
        if pygit2.enums.FileMode.COMMIT in (d.old_file.mode, d.new_file.mode):
            # a submodule: its id names a commit (perhaps of this very repository), never a blob to read
            files.append(FileChange(path=d.new_file.path if status != "D" else d.old_file.path, status=status))
            continue
        old_ok = status == "A" or odb.exists(d.old_file.id)
        new_ok = status == "D" or odb.exists(d.new_file.id)
        if not old_ok:
            missing.append(f"blob {d.old_file.id} ({d.old_file.path})")
        if not new_ok:
            missing.append(f"blob {d.new_file.id} ({d.new_file.path})")
        o, n, h = [], [], []
        if old_ok and new_ok:
            try:
                patch = pygit2.Patch.create_from(
                    repo[d.old_file.id] if status != "A" else None,
                    repo[d.new_file.id] if status != "D" else None, context_lines=3)
                for hk in patch.hunks:
                    o.append((hk.old_start, hk.old_lines))
                    n.append((hk.new_start, hk.new_lines))
                    h.append(hk.header.split("@@", 2)[-1].strip())
            except (KeyError, pygit2.GitError):
                pass
        path = d.new_file.path if status != "D" else d.old_file.path
        files.append(FileChange(path=path, status=status, old_ranges=tuple(o), new_ranges=tuple(n),
                                hunk_headers=tuple(h)))
    return files, missing


def commit_infos(repo: pygit2.Repository, shas: Iterable[str], *, renames: bool = True,
                 progress: Progress | None = None, git_dir: str | None = None) -> dict[str, CommitInfo]:
    """:class:`CommitInfo` for each sha (any order; result keyed by sha).

    Files/hunks/patch-ids come from one ``git log -p | git patch-id --stable`` pass (``-M`` when
    ``renames``). Merges get no files and ``patch_id=None`` (git shows no diff for them). When git
    stops on a missing object (partial clone, snapshot without large blobs), the commit it was on
    is analysed from the trees with pygit2, its ``missing`` lists the absent objects, the other
    affected commits are found at once (:func:`missing_object_commits`) and analysed the same
    way, and the pass resumes after it: missing objects are reported, never raised. Nothing is
    scanned when nothing is missing.
    """
    shas = list(dict.fromkeys(shas))
    git_dir = git_dir or repo.path
    metas = {s: _meta(repo, s) for s in shas}
    total = len(shas)
    files: dict[str, list[FileChange]] = {}
    pids: dict[str, str] = {}
    missing: dict[str, list[str]] = {}
    todo = [s for s in shas if len(metas[s].parents) <= 1]
    scanned = False
    while todo:
        base_done = total - len(todo)
        parsed, ids, rc, err = _log_patch(
            git_dir, todo, renames, (lambda n: progress(base_done + n, total)) if progress else None)
        if rc == 0:
            files.update(parsed)
            pids.update(ids)
            break
        # git died mid-stream on a missing object: the commit it was on is the last one whose
        # header it printed, or (when it died computing renames, before the header) the next one
        last = max((i for i, s in enumerate(todo) if s in parsed), default=-1)
        candidates = [i for i in (last, last + 1) if 0 <= i < len(todo)]
        bad, fb_files, miss = candidates[-1], [], []
        for i in candidates:
            fb_files, miss = _fallback_files(repo, todo[i])
            if miss:
                bad = i
                break
        if not miss:
            fb_files, _ = _fallback_files(repo, todo[bad])
            miss = [m.group(0) for m in _MISSING_RE.finditer(err)] or [f"unreadable: {err.strip()[:200]}"]
        for s in todo[:bad]:
            files[s] = parsed.get(s, [])
            if s in ids:
                pids[s] = ids[s]
        files[todo[bad]] = fb_files
        missing[todo[bad]] = miss
        todo = todo[bad + 1:]
        if not scanned and todo:
            # objects are missing: find the other affected commits at once instead of letting git
            # stop on each of them (a blobless partial clone would mean one restart per commit)
            scanned = True
            rest = missing_object_commits(git_dir, todo)
            for s in rest:
                files[s], found = _fallback_files(repo, s)
                missing[s] = found or rest[s]
            todo = [s for s in todo if s not in rest]
        if progress:
            progress(total - len(todo), total)
    out = {}
    for s in shas:
        m = metas[s]
        is_merge = len(m.parents) > 1
        out[s] = CommitInfo(
            sha=m.sha, parents=m.parents, message=m.message, author_name=m.author_name,
            author_email=m.author_email, author_time=m.author_time, committer_time=m.committer_time,
            files=tuple(files.get(s, ())) if not is_merge else (),
            patch_id=None if (is_merge or s in missing) else pids.get(s),
            pr=m.pr, missing=tuple(missing.get(s, ())))
    if progress:
        progress(total, total)
    return out


def commit_info(repo: pygit2.Repository, sha: str, *, renames: bool = True) -> CommitInfo:
    """:class:`CommitInfo` of one commit (see :func:`commit_infos`)."""
    return commit_infos(repo, [sha], renames=renames)[sha]


# ---------------------------------------------------------------------------------------------
# in-flight branches

_TRAILER_UPSTREAM = re.compile(r"^Upstream-Commit:\s*([0-9a-f]{7,40})\b", re.MULTILINE | re.IGNORECASE)
# a chain stopped at a conflict carries the unresolved pick as a conflict commit: its upstream
# commit is in flight on that branch (never picked: the trailer is not Upstream-Commit)
_TRAILER_CONFLICT = re.compile(r"^Forksync-Conflict:\s*([0-9a-f]{40})\b", re.MULTILINE | re.IGNORECASE)
_BRANCH_RE = re.compile(r"^(?:refs/heads/|refs/remotes/[^/]+/)(forksync/.+)$")


def in_flight_branches(repo: pygit2.Repository, fork_tip: str, *, prefix: str = "forksync/",
                       with_paths: bool = True, fork_ref: str | None = None,
                       default: str | None = None) -> list[InFlightBranch]:
    """Open forksync branches: local ``refs/heads/forksync/*`` and remote-tracking
    ``refs/remotes/*/forksync/*`` whose tips are not yet in ``fork_tip``. The upstream commits
    they carry come from ``Upstream-Commit:`` trailers of the branch's own commits
    (``branch ^fork_tip``), and from ``Forksync-Conflict:`` trailers of a conflict commit (the
    unresolved pick a stopped chain carries); ``paths`` is the union of the changed files of those above the
    branch's base (:func:`sync_base`; fork commits under it that a force push dropped from the fork tip
    are the fork's, not the unit's). A local branch
    wins over a remote-tracking one of the same name. Sorted by name.

    A branch built for another fork branch of the same repository is left out
    (:func:`built_for`: ROCm/triton keeps ``main_perf``, ``release/internal/3.2.x`` and
    ``triton-mlir`` in one repository, and a chain applied for ``main_perf`` is not in flight on the
    others); ``fork_ref`` is the name ``fork_tip`` was read from (``main_perf``,
    ``origin/main_perf``), never taken for such another branch. Its commits are not analysed.
    Both names are read (:func:`bot.model.sync_branch`): ``forksync/<unit>`` (the default
    branch's, and every branch made before names carried the fork ref) as above, and
    ``forksync/<fork ref>/<unit>`` by its name alone: in flight for that fork ref only (for any,
    as above, when ``fork_ref`` is not given). For a ``fork_ref`` other than the default branch
    (``default``, else :func:`default_branch`), a ``forksync/<unit>`` branch whose base the default
    branch holds is the default branch's (a fork branch cut from it holds that base too).
    """
    seen: dict[str, InFlightBranch] = {}
    fork_name = _fork_name(repo, fork_ref)
    dflt = short_branch(default) or default_branch(repo)
    dflt_tip = None
    if fork_name is not None and dflt and dflt != fork_name:
        full = ref_name(repo, dflt)
        if full is not None and full.startswith(("refs/heads/", "refs/remotes/")):
            dflt_tip = str(repo.references[full].peel(pygit2.Commit).id)
    for ref in sorted(repo.references, key=lambda r: (not r.startswith("refs/heads/"), r)):
        m = _BRANCH_RE.match(ref)
        parsed = sync_branch_ref(m.group(1)) if m else None
        if not parsed or not m.group(1).startswith(prefix) or m.group(1) in seen:
            continue
        named_for, unit = parsed
        if named_for and fork_name is not None and named_for != fork_name:
            continue   # another fork ref's, by its name
        try:
            tip = str(repo.references[ref].peel(pygit2.Commit).id)
        except (KeyError, pygit2.GitError, ValueError):
            continue
        own = rev_list(repo, tip, [fork_tip])
        if not own:
            continue   # merged (or empty): not in flight
        messages = {s: repo[s].message for s in own}
        if not named_for and dflt_tip is not None and _held_by(repo, dflt_tip, sync_base(repo, own, messages)):
            log.debug("%s is not in flight for %s: its base is on the default branch %s", m.group(1), fork_name, dflt)
            continue
        other = None if named_for and fork_name is not None else \
            built_for(repo, own, messages, fork_tip, fork_ref=fork_ref, prefix=prefix)
        if other is not None:
            log.debug("%s is not in flight for the fork tip %s: it was built on %s", m.group(1), fork_tip[:12], other)
            continue
        ups: list[str] = []
        paths: set[str] = set()
        for s in own:
            msg = messages[s]
            ups += [u for u in _TRAILER_UPSTREAM.findall(msg) + _TRAILER_CONFLICT.findall(msg) if u not in ups]
        if with_paths:
            # the branch's work is what grows from its base: fork commits under it that the fork
            # tip no longer has (a force push dropped them) are the fork's old work, not the unit's
            base = sync_base(repo, own, messages)
            built = rev_list(repo, tip, [fork_tip, base]) if base in set(own) else own
            for ci in commit_infos(repo, built).values():
                paths |= ci.paths
        seen[m.group(1)] = InFlightBranch(name=m.group(1), unit_id=unit, kind=unit.partition("-")[0],
                                          upstream_shas=tuple(ups), paths=frozenset(paths), tip=tip)
    return [seen[k] for k in sorted(seen)]


#: the trailers forksync writes on the commits it makes on a sync branch (bot.git.apply: a pick
#: carries Upstream-Commit and Forksync-Unit, a conflict commit Forksync-Conflict and Forksync-Unit)
_TRAILER_FORKSYNC = re.compile(r"^(?:Upstream-Commit|Forksync-Conflict|Forksync-Unit):", re.MULTILINE | re.IGNORECASE)


_branch_short = short_branch


def _fork_name(repo: pygit2.Repository, fork_ref: str | None) -> str | None:
    """The branch name of ``fork_ref`` (``main_perf`` for ``origin/main_perf``; a sha as given),
    None when no fork ref is given."""
    if not fork_ref:
        return None
    full = ref_name(repo, fork_ref)
    return short_branch(full) if full else fork_ref


def default_branch(repo: pygit2.Repository) -> str | None:
    """The fork repository's default branch, which keeps today's sync branch names
    (:func:`bot.model.sync_branch`). In a checkout, whose ``HEAD`` is whatever is checked out: the
    branch ``refs/remotes/origin/HEAD`` names where that branch exists (a dangling one — the remote
    renamed its default branch and a fetch pruned the old name — names none), else ``main`` or
    ``master`` (GitHub's and git's default names) where ``origin`` or the clone has one, else the
    branch checked out. In a bare clone: the one ``HEAD`` names (the remote's default branch). None
    when none of these names a branch."""
    if not repo.is_bare:
        try:
            target = repo.references["refs/remotes/origin/HEAD"].target
        except (KeyError, pygit2.GitError):
            target = None
        if isinstance(target, str) and target.startswith("refs/remotes/origin/") and target in repo.references:
            return target[len("refs/remotes/origin/"):]
        refs = repo.references
        for name in ("main", "master"):
            if f"refs/remotes/origin/{name}" in refs or f"refs/heads/{name}" in refs:
                return name
    return head_branch(repo)


def sync_branch_for(repo: pygit2.Repository, unit_id: str, fork_ref: str | None) -> str:
    """The sync branch a new unit ``unit_id`` gets for ``fork_ref`` in ``repo``
    (:func:`bot.model.sync_branch`, the default branch by :func:`default_branch`): ``forksync/<unit>``
    for the default branch or a fork ref that names no branch (a sha), else
    ``forksync/<fork ref>/<unit>``. A unit already in flight keeps its branch's name (the caller's:
    :func:`in_flight_branches`)."""
    full = ref_name(repo, fork_ref) if fork_ref else None
    if full is not None and not full.startswith(("refs/heads/", "refs/remotes/")):
        full = None        # a tag: a pinned commit, no branch
    return sync_branch(unit_id, full, default=default_branch(repo))


def built_for(repo: pygit2.Repository, own: list[str], messages: dict[str, str], fork_tip: str, *,
              fork_ref: str | None = None, prefix: str = "forksync/") -> str | None:
    """The other fork branch a sync branch was built for, or None when it is in flight for ``fork_tip``.

    ``own``: the sync branch's commits not in ``fork_tip`` (``branch ^fork_tip``, oldest first),
    ``messages`` their messages. The branch's *base* is the first parent of its oldest commit that
    forksync made (a ``Upstream-Commit:``, ``Forksync-Conflict:`` or ``Forksync-Unit:`` trailer,
    :mod:`bot.git.apply`). None (in flight) when the base is in ``fork_tip``'s history (the
    common case: no git work beyond the messages), when no commit carries such a trailer, when the
    base was rewritten into ``fork_tip``'s history (:func:`_rewritten_into`: a fork that rebases,
    rewords or squashes its branch, openxla/triton's ``llvm-head``, whose old sync branches still
    have open PRs), when the fork ref's reflog once held it (:func:`_was_on`: a force push dropped
    it since), or when no other branch holds it. Else the short name of the
    first local or remote-tracking branch (``git for-each-ref --contains``, one git run) that holds
    the base but not ``fork_tip``, is no ``prefix`` branch and is not ``fork_ref`` under any remote
    (real case: ROCm/triton's ``main_perf`` for a chain applied there, seen from ``triton-mlir``).
    A branch that holds the oldest forksync commit too took the sync branch (merged it, or was
    built on it): it was built for it only when the base is on its first-parent line, as on the
    fork branch that merged its sync branch and kept it (GitHub leaves a merged PR's branch), a
    second ``for-each-ref``; a branch that merged it from elsewhere holds the base only through
    it."""
    own_set = set(own)
    first = next((s for s in own if _TRAILER_FORKSYNC.search(messages[s])), None)
    if first is None:
        return None
    base = sync_base(repo, own, messages)
    if base is None or base not in own_set:
        return None        # built on a commit of the fork tip's history
    fork_name = _fork_name(repo, fork_ref)
    out = git(repo.path, "for-each-ref", "--format=%(refname)", f"--contains={base}", f"--no-contains={fork_tip}",
              "refs/heads", "refs/remotes", check=False)
    holders = [r for r in str(out).split() if not r.endswith("/HEAD") and not _branch_short(r).startswith(prefix)
               and _branch_short(r) != fork_name]
    if not holders:
        return None
    took = set(str(git(repo.path, "for-each-ref", "--format=%(refname)", f"--contains={first}", *holders,
                       check=False)).split())
    other = next((r for r in holders if r not in took or _on_first_parent_line(repo, r, base)), None)
    if other is None:
        return None
    if _rewritten_into(repo, base, fork_tip):
        return None        # the base, rewritten into the fork tip's history
    if _was_on(repo, fork_name, base):
        return None        # the fork ref's own, dropped from it since (a force push)
    return _branch_short(other)


def _was_on(repo: pygit2.Repository, fork_name: str | None, base: str) -> bool:
    """Whether the fork ref ``fork_name`` (its local branch, or its remote-tracking one under any
    remote) once held ``base``, by its reflog: a tip it had was ``base`` or descends from it. A
    sync branch built on the fork tip of then, whose commit a force push dropped from the fork ref
    while another branch (a person's, cut from the old tip) still holds it, is the fork ref's,
    not that branch's. False where no reflog is kept (a bare clone, ``core.logAllRefUpdates``
    off): the base is then judged by the branches alone."""
    if not fork_name:
        return False
    names = [f"refs/heads/{fork_name}"] + [r for r in repo.references if r.startswith("refs/remotes/")
                                            and r[len("refs/remotes/"):].partition("/")[2] == fork_name]
    oid = pygit2.Oid(hex=base)
    for name in names:
        try:
            entries = list(repo.references[name].log())
        except (KeyError, pygit2.GitError, ValueError):
            continue
        for e in entries:
            new = e.oid_new
            # a deleted ref's entry names no commit (all zeros)
            if new == oid or (new.raw != bytes(20) and new in repo and repo.descendant_of(new, oid)):
                return True
    return False


_BACKPORT = re.compile(r"^\(cherry picked from commit ([0-9a-f]{7,40})\)$", re.MULTILINE)


def _rewritten_into(repo: pygit2.Repository, base: str, fork_tip: str) -> bool:
    """Whether ``base`` (not in ``fork_tip``'s history) was rewritten into it: a commit of ``base
    ^fork_tip`` has the author and author time of one of ``fork_tip ^base`` — rebase, reword and
    squash keep both (git's author date; a commit folded into the one below by ``rebase -i`` leaves
    that one's) — and is no backport of one (``git cherry-pick -x``'s "(cherry picked from commit
    …)" naming a commit of ``fork_tip``: a release branch's backports keep their authors and times
    too). A release branch that backports without ``-x`` reads as rewritten: the sync branch then
    stays in flight, the cautious side (its upstream commits are not planned twice)."""
    walk = repo.walk(fork_tip, SortMode.NONE)
    walk.hide(base)
    keys = {(x.author.email, x.author.time) for x in walk}
    if not keys:
        return False
    walk = repo.walk(base, SortMode.NONE)
    walk.hide(fork_tip)
    for c in walk:
        if (c.author.email, c.author.time) not in keys:
            continue
        m = _BACKPORT.search(c.message)
        if m:
            try:
                if _held_by(repo, fork_tip, str(repo.revparse_single(m.group(1)).id)):
                    continue
            except (KeyError, ValueError):
                pass
        return True
    return False


def sync_base(repo: pygit2.Repository, own: list[str], messages: dict[str, str]) -> str | None:
    """A sync branch's *base*: the first parent of the oldest of ``own`` (oldest first) that
    forksync made (:data:`_TRAILER_FORKSYNC`); None when none did, or it has no parent."""
    first = next((s for s in own if _TRAILER_FORKSYNC.search(messages[s])), None)
    parents = repo[first].parent_ids if first is not None else ()
    return str(parents[0]) if parents else None


def _held_by(repo: pygit2.Repository, tip: str, sha: str | None) -> bool:
    """Whether ``sha`` is ``tip`` or in its history."""
    return sha is not None and (sha == tip or repo.descendant_of(tip, sha))


def _on_first_parent_line(repo: pygit2.Repository, ref: str, sha: str) -> bool:
    """Whether ``sha`` is on the first-parent line of ``ref`` (the walk stops at ``sha``'s parents)."""
    walk = repo.walk(repo.references[ref].peel(pygit2.Commit).id, SortMode.NONE)
    walk.simplify_first_parent()
    for p in repo[sha].parent_ids:
        walk.hide(p)
    return any(str(c.id) == sha for c in walk)
