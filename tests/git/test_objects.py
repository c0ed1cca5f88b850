"""Object writes held in memory and stored as one pack: git reads the pack as any other."""
from __future__ import annotations

import subprocess

import pygit2
import pytest

from bot.demo.repobuilder import RepoBuilder, run_git
from bot.git.objects import open_buffered, write_pack

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


def test_write_pack_refuses_an_unknown_type(tmp_path):
    with pytest.raises(ValueError, match="type 7"):
        write_pack(tmp_path, {"0" * 40: (7, b"")})
