"""The workdir's volume fills while a sync writes a unit's new objects (one pack and its index,
``bot.config.objects``): the unit is blocked with the error on the status issue, the other units
go on, nothing half-written is left in the working repository, and the next sync, the volume
freed, publishes the unit."""
from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from bot.config import objects as objects_mod
from bot.sync import store as sync_store
from tests.support.e2e import install_on_fork, job_context, open_sync_prs, status_issue
from tests.support.github import commit_files, git

FORK = "meta/triton"


@pytest.fixture
def full_volume(monkeypatch):
    """``full(True)``: every pack index written from now on fails with ENOSPC after its pack was
    written whole (the volume filled while the sync wrote), until ``full(False)``. Returns the
    pack directories written to."""
    real_fdopen = os.fdopen
    state = {"full": False, "dirs": set()}

    class Full:
        def __init__(self, f):
            self.f = f

        def write(self, data):
            if state["full"] and bytes(data[:4]) == b"\377tOc":
                raise OSError(errno.ENOSPC, "No space left on device")
            return self.f.write(data)

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    def fdopen(fd, *a, **k):
        f = real_fdopen(fd, *a, **k)
        path = os.readlink(f"/proc/self/fd/{fd}")
        if Path(path).name.startswith("tmp_pack_"):
            state["dirs"].add(Path(path).parent)
            return Full(f)
        return f

    monkeypatch.setattr(objects_mod.os, "fdopen", fdopen)

    def full(on: bool):
        state["full"] = on
        return state["dirs"]
    return full


async def test_a_full_volume_while_a_unit_is_written_blocks_it_and_leaves_no_file(world, full_volume):
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    await bot.settle()
    # a chain with many new trees: its pick's objects go to disk as one pack
    files = {f"third_party/amd/d{i}/x{i}.cpp": f"int x{i} = 2;\n" for i in range(300)}
    c1 = commit_files(up_src, files, "AMD: many new files (#102)")
    dirs = full_volume(True)
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    assert dirs, "no pack was written: the test would prove nothing"
    left = sorted(p.name for d in dirs for p in d.iterdir() if p.name.startswith("tmp_pack_")
                  or (p.suffix == ".pack" and not p.with_suffix(".idx").exists()))
    assert left == [], f"half-written files left in the working repository: {left}"
    chain = f"chain-{c1[:12]}"
    row = sync_store.branch_row(bot.store, FORK, f"forksync/{chain}")
    assert (row["state"], row["blocked_step"]) == ("blocked", "apply")
    assert sync_store.load_status(bot.store, FORK).degraded() == (
        f"1 unit(s) blocked: {chain}: applying {chain} failed: [Errno 28] No space left on device")
    [issue] = await status_issue(alice)
    [line] = [x for x in issue["body"].splitlines() if x.startswith(f"- `{chain}`: its pick of upstream `{c1[:12]}` failed ")]
    assert line.endswith(f"ago: applying {chain} failed: [Errno 28] No space left on device"), line
    full_volume(False)
    await bot.svc.sync(await job_context(bot)(inst.id), FORK, reason="test: again")
    await bot.settle()
    assert [p["head"]["ref"] for p in await open_sync_prs(alice)] == [f"forksync/{chain}"]
    assert sync_store.load_status(bot.store, FORK).degraded() == ""
