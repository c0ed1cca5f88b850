"""Object writes held in memory and stored as one pack (edge): what apply and the planner's
predictions write, written once.

A loose object costs a file (``mkdir``, temporary file, ``link``, ``unlink``) and, before that,
an object-database refresh (libgit2 re-reads every pack directory, alternates included, for each
new object): ≈ 0.5 ms per object, where a pick writes a commit and a tree per directory level —
more than the pick's merge itself on the real Triton fork. :func:`open_buffered` opens a
repository whose **new objects go to memory** (a pygit2 ``OdbBackend``) while every existing
object is read from the repository's own store (packs, loose objects, alternates — all on disk,
as libgit2 reads them); :meth:`MemoryObjects.flush` then writes the new objects as **one pack and
its index** (pack format v2, https://git-scm.com/docs/pack-format), which git and libgit2 read as
any other pack. Nothing reaches the disk before a flush: an apply that fails halfway leaves no
objects behind. Kept beside :mod:`bot.config.trees` (the tree edits these writes serve): the one
layer both edges, apply (``bot/git``) and the planner (``bot/plan``), import.
"""
from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import zlib
from pathlib import Path

import pygit2

#: object type numbers shared by libgit2's ``git_object_t`` and the pack format
_PACK_TYPES = {1, 2, 3, 4}


class MemoryObjects(pygit2.OdbBackend):
    """An object-database backend that keeps written objects in a dict (``hex → (type, data)``)."""

    def __init__(self, objects_dir: str):
        super().__init__()
        self.objects_dir = objects_dir
        self.objs: dict[str, tuple[int, bytes]] = {}

    # libgit2 asks every backend; a miss is KeyError (pygit2 maps it to "not found")
    def read_cb(self, oid):
        return self.objs[str(oid)]

    def read_prefix_cb(self, oid):
        t, data = self.objs[str(oid)]
        return t, data, oid

    def read_header_cb(self, oid):
        t, data = self.objs[str(oid)]
        return t, len(data)

    def write_cb(self, oid, data, typ):
        self.objs[str(oid)] = (int(typ), bytes(data))

    def exists_cb(self, oid):
        return str(oid) in self.objs

    def exists_prefix_cb(self, oid):
        if str(oid) in self.objs:
            return oid
        raise KeyError(str(oid))

    def refresh_cb(self):
        pass

    def flush(self, loose_below: int = 0) -> str | None:
        """Write the objects held as one pack + index in the repository's ``objects/pack`` and
        forget them. Returns the pack's path (None when there was nothing to write, or when fewer
        than ``loose_below`` objects were held: those are written as loose objects instead, so
        that frequent small flushes — a re-plan after a push — do not pile up packs, each of which
        every later lookup searches)."""
        if not self.objs:
            return None
        if len(self.objs) < loose_below:
            odb = pygit2.Odb(self.objects_dir)
            for typ, data in self.objs.values():
                odb.write(typ, data)
            self.objs.clear()
            return None
        path = write_pack(self.objects_dir, self.objs)
        self.objs.clear()
        return path


def open_repository(path: str | os.PathLike) -> pygit2.Repository:
    """The repository at ``path`` (a git dir, or a work tree holding ``.git``) as git reads it.

    git takes a git dir it is given or finds directly (not as a work tree's ``.git``) for bare
    when its config does not set ``core.bare`` (a snapshot copied without its ``config``: ``HEAD``,
    ``objects/``, ``refs/``); libgit2 reads the missing key as "not bare" and takes the parent
    folder for the work tree, where its merges then read that folder's ``.gitattributes``
    (``merge_trees`` conflicting where ``git merge-tree`` does not) and a branch ``HEAD`` names
    looks checked out there. Such a repository is opened bare (``RepositoryOpenFlag.BARE``): no
    work tree, no index. A checkout (``<work tree>/.git``), a linked worktree (its git dir has
    ``commondir``) and a config that sets ``core.bare`` or ``core.worktree`` are opened as libgit2
    opens them. Raises ``pygit2.GitError`` where ``path`` is no repository."""
    repo = pygit2.Repository(str(path))
    if repo.is_bare or not repo.workdir:
        return repo
    git_dir = repo.path.rstrip("/")
    if os.path.join(repo.workdir.rstrip("/"), ".git") == git_dir or os.path.exists(os.path.join(git_dir, "commondir")):
        return repo
    cfg = repo.config
    if "core.bare" in cfg or "core.worktree" in cfg:
        return repo
    return pygit2.Repository(git_dir, pygit2.enums.RepositoryOpenFlag.BARE)


def open_buffered(git_dir: str | os.PathLike) -> tuple[pygit2.Repository, MemoryObjects]:
    """``(repository, memory)``: the repository at ``git_dir`` (refs, config as usual) whose new
    objects go to ``memory`` until :meth:`MemoryObjects.flush`."""
    repo = open_repository(git_dir)
    objects_dir = os.path.join(repo.path, "objects")
    odb = pygit2.Odb()
    odb.add_disk_alternate(objects_dir)     # reads: the repository's packs, loose objects, alternates
    mem = MemoryObjects(objects_dir)
    odb.add_backend(mem, 0)                 # the only writable backend (alternates are never written)
    repo.set_odb(odb)
    return repo, mem


def _header(typ: int, size: int) -> bytes:
    out = bytearray()
    b = (typ << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(b | 0x80)
        b = size & 0x7F
        size >>= 7
    out.append(b)
    return bytes(out)


def write_pack(objects_dir: str | os.PathLike, objs: dict[str, tuple[int, bytes]]) -> str:
    """Write ``objs`` (``hex → (type, data)``) as ``objects/pack/pack-<sum>.pack`` and its
    version-2 ``.idx``. Objects are stored whole (no deltas) in zlib streams of level 0 (stored,
    not compressed: compressing a pick's large directory trees cost more than its merge; ``git gc``
    or the next ``git repack`` compresses and deltifies them like any pack); both files are
    fsynced before the index is renamed into place after the pack (a reader never sees a pack
    without its index, and a power loss never leaves a named file that is not whole), then the
    directory. Returns the pack's path. Raises ``ValueError`` for an unknown type, ``OSError`` as
    the write or rename failed (``ENOSPC``: the volume is full), having removed what it wrote."""
    pack_dir = Path(objects_dir) / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)
    body = bytearray(b"PACK" + struct.pack(">II", 2, len(objs)))
    entries = []            # (raw sha, crc32, offset)
    for hexsha, (typ, data) in objs.items():
        if typ not in _PACK_TYPES:
            raise ValueError(f"object {hexsha} has type {typ}, which a pack cannot hold")
        rec = _header(typ, len(data)) + zlib.compress(data, 0)
        entries.append((bytes.fromhex(hexsha), zlib.crc32(rec) & 0xFFFFFFFF, len(body)))
        body += rec
    pack_sum = hashlib.sha1(body).digest()
    body += pack_sum
    entries.sort()
    fanout = [0] * 256
    for sha, _, _ in entries:
        fanout[sha[0]] += 1
    total = 0
    for i in range(256):
        total += fanout[i]
        fanout[i] = total
    if any(off >= 0x80000000 for _, _, off in entries):
        raise ValueError("a pack over 2 GiB needs 64-bit offsets; write it with git instead")
    idx = bytearray(b"\377tOc" + struct.pack(">I", 2) + struct.pack(">256I", *fanout))
    idx += b"".join(sha for sha, _, _ in entries)
    idx += b"".join(struct.pack(">I", crc) for _, crc, _ in entries)
    idx += b"".join(struct.pack(">I", off) for _, _, off in entries)
    idx += pack_sum
    idx += hashlib.sha1(idx).digest()
    name = f"pack-{pack_sum.hex()}"
    final = pack_dir / f"{name}.pack"
    # both files whole on the disk before either name appears: a rename can reach the disk before
    # the data it names (ext4 without auto_da_alloc for a new file, XFS), and a power loss would
    # leave a named index of zeros that every later read of the repository fails on. A write that
    # fails (a full volume) removes what it wrote: git never reads a tmp_pack_ file nor a pack
    # without its index, but nothing else would remove them before `git gc`, and each retry of
    # the sync would add its own (a writer killed here cleans nothing: remove_partial_packs) to the full volume
    tmps: list[str] = []
    renamed: list[Path] = []
    try:
        for data in (body, idx):
            fd, tmp = tempfile.mkstemp(prefix="tmp_pack_", dir=pack_dir)
            tmps.append(tmp)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o444)
        for tmp, suffix in zip(tmps, (".pack", ".idx")):
            os.replace(tmp, pack_dir / f"{name}{suffix}")       # the index last: never a pack a reader sees without it
            renamed.append(pack_dir / f"{name}{suffix}")
        _fsync_dir(pack_dir)                                    # the names themselves
    except BaseException:
        for path in tmps:
            _remove(path)
        if len(renamed) == 1 and not (pack_dir / f"{name}.idx").exists():
            _remove(renamed[0])             # a pack without its index: nobody reads or removes it
        raise
    return str(final)


def remove_partial_packs(objects_dir: str | os.PathLike, before: float) -> list[str]:
    """Remove from ``objects_dir/pack`` what a pack writer killed mid-write (SIGKILL, an OOM kill:
    no cleanup of :func:`write_pack`'s runs) left, last modified before ``before`` (epoch s, wall
    clock): its temporary files (``tmp_*``: :func:`write_pack`'s ``tmp_pack_*``, and git's own
    ``tmp_pack_*``/``tmp_idx_*``/``tmp_rev_*`` of a killed fetch) and a pack renamed into place
    without its index (``pack-<sum>.pack`` and no ``pack-<sum>.idx``: killed between the two
    renames). git reads neither and nothing but ``git gc`` (two weeks later: ``gc.pruneExpire``)
    removes them; on a full volume each retry of a sync would add its own. Only for a caller that
    excludes every writer of the repository begun before ``before`` (the fork lock, taken by a
    worker started at ``before``): a newer file may be a live writer's and is kept. Returns the
    names removed, sorted; a file that vanishes meanwhile is skipped; a folder without ``pack``
    gives []."""
    pack_dir = Path(objects_dir) / "pack"
    try:
        names = os.listdir(pack_dir)
    except (FileNotFoundError, NotADirectoryError):
        return []
    have = set(names)
    removed = []
    for name in names:
        partial = name.startswith("tmp_") or (name.startswith("pack-") and name.endswith(".pack")
                                               and f"{name[:-len('.pack')]}.idx" not in have)
        if not partial:
            continue
        path = pack_dir / name
        try:
            if path.stat().st_mtime < before:
                path.unlink()
                removed.append(name)
        except FileNotFoundError:
            continue
    return sorted(removed)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove(path: str | Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
