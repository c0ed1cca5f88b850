"""Object writes held in memory and stored as one pack: git reads the pack as any other."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from bot.config.objects import open_buffered, write_pack
from bot.demo.repobuilder import RepoBuilder, run_git

T0 = 1_767_225_600


def test_buffered_objects_reach_disk_only_at_flush_as_one_verified_pack(tmp_path):
    b = RepoBuilder.init(tmp_path / "r")
    base = b.commit("base", {"a/x.txt": "x\n", "b.txt": "b\n"}, when=T0)
    repo, mem = open_buffered(b.path)
    blob = repo.create_blob(b"new content\n" * 100)
    tb = repo.TreeBuilder(repo[base].peel(pygit2.Commit).tree)
    tb.insert("c.bin", repo.create_blob(bytes(range(256)) * 40), pygit2.enums.FileMode.BLOB)
    tb.insert("n.txt", blob, pygit2.enums.FileMode.BLOB)
    sig = pygit2.Signature("t", "t@example.invalid", T0, 0)
    commit = str(repo.create_commit(None, sig, sig, "more\n", tb.write(), [base]))
    # readable through the buffered repository, absent from disk
    assert repo[commit].message == "more\n" and len(mem.objs) == 4
    assert subprocess.run(["git", "cat-file", "-e", commit], cwd=b.path).returncode != 0
    pack = mem.flush()
    assert mem.objs == {} and mem.flush() is None
    run_git(b.path, "verify-pack", pack.replace(".pack", ".idx"))
    assert run_git(b.path, "cat-file", "-p", f"{commit}:n.txt") == "new content\n" * 100
    run_git(b.path, "update-ref", "refs/heads/more", commit)
    run_git(b.path, "fsck", "--strict", "--no-dangling")
    assert pygit2.Repository(str(b.path))[commit].peel(pygit2.Commit).parents[0].id == repo[base].id


def test_a_small_flush_writes_loose_objects_instead_of_a_pack(tmp_path):
    b = RepoBuilder.init(tmp_path / "r")
    base = b.commit("base", {"a/x.txt": "x\n"}, when=T0)
    repo, mem = open_buffered(b.path)
    tb = repo.TreeBuilder(repo[base].peel(pygit2.Commit).tree)
    tb.insert("n.txt", repo.create_blob(b"n\n"), pygit2.enums.FileMode.BLOB)
    tree = str(tb.write())
    loose = int(run_git(b.path, "count-objects").split()[0])
    assert len(mem.objs) == 2
    assert mem.flush(loose_below=3) is None and mem.objs == {}
    assert not list((Path(repo.path) / "objects" / "pack").glob("*.pack"))
    assert int(run_git(b.path, "count-objects").split()[0]) == loose + 2
    assert run_git(b.path, "cat-file", "-p", f"{tree}:n.txt") == "n\n"
    run_git(b.path, "fsck", "--strict", "--no-dangling")


def test_write_pack_refuses_an_unknown_type(tmp_path):
    with pytest.raises(ValueError, match="type 7"):
        write_pack(tmp_path, {"0" * 40: (7, b"")})


def _blobs(n: int, size: int) -> dict[str, tuple[int, bytes]]:
    import hashlib
    out = {}
    for i in range(n):
        data = bytes([i]) * size
        out[hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()] = (3, data)
    return out


def test_a_pack_and_its_index_reach_the_disk_before_their_names_do(tmp_path, monkeypatch):
    """A rename is journalled before the data it names reaches the disk (ext4 ``data=ordered``
    without ``auto_da_alloc`` for a new file, XFS): a power loss after ``os.replace`` could leave
    ``pack-….idx`` empty or zero-filled, and every later read of the working repository fails on
    it. Each file is fsynced before its rename, and the directory after the renames (so the
    names themselves survive)."""
    import os as _os

    events: list[tuple[str, str]] = []
    real_fsync, real_replace = _os.fsync, _os.replace

    def fsync(fd):
        events.append(("fsync", _os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(src, dst):
        events.append(("replace", str(src)))
        real_replace(src, dst)

    monkeypatch.setattr(_os, "fsync", fsync)
    monkeypatch.setattr(_os, "replace", replace)
    objects = tmp_path / "objects"
    pack = Path(write_pack(objects, _blobs(3, 1000)))
    replaced = [path for what, path in events if what == "replace"]
    assert len(replaced) == 2, events
    for src in replaced:
        at = events.index(("replace", src))
        assert ("fsync", src) in events[:at], f"{src} renamed before it was fsynced: {events}"
    assert events[-1] == ("fsync", str(pack.parent)), f"the pack directory was not fsynced after the renames: {events}"


def test_a_full_disk_while_writing_a_pack_leaves_nothing_behind(tmp_path, monkeypatch):
    """The volume fills while the index is written (measured on a 120 KiB tmpfs: the 120 KB pack
    was renamed into place, then the index's write failed with ENOSPC, leaving a pack without an
    index and an empty ``tmp_pack_…``; on a 100 KiB one a 100 KiB ``tmp_pack_…``). Git never reads
    either, but nothing removes them until ``git gc`` two weeks later: each retry of the sync adds
    its own and the volume stays full. The error is raised as it was, and nothing is left."""
    import errno
    import os as _os

    real_fdopen = _os.fdopen

    class Full:
        def __init__(self, f):
            self.f = f

        def write(self, data):
            if bytes(data[:4]) == b"\377tOc":       # the index: the pack before it fitted
                raise OSError(errno.ENOSPC, "No space left on device")
            return self.f.write(data)

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    monkeypatch.setattr(_os, "fdopen", lambda fd, *a, **k: Full(real_fdopen(fd, *a, **k)))
    objects = tmp_path / "objects"
    with pytest.raises(OSError) as err:
        write_pack(objects, _blobs(3, 1000))
    assert err.value.errno == errno.ENOSPC
    assert sorted(p.name for p in (objects / "pack").iterdir()) == []
