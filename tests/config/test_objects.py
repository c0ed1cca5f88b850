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
