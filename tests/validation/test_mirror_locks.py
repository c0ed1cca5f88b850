"""The local backend's mirror of a fork (``<workdir>/validation/<owner>+<repo>.git``) after a
worker was killed while fetching into it: the lock files the killed git left never stop a later
fetch, however soon the worker was restarted."""
from __future__ import annotations

import os
import subprocess
import time

from bot.validation.backends import LocalBackend
from tests.support.github import commit_files, make_source_repo


def rev(d, ref: str) -> str:
    return subprocess.run(["git", f"--git-dir={d}", "rev-parse", ref], capture_output=True, text=True,
                          check=True).stdout.strip()


async def test_lock_files_a_killed_fetch_left_in_the_mirror_never_stop_the_next_fetch(tmp_path):
    src = tmp_path / "src"
    make_source_repo(src, [{"README.md": "r1\n"}])

    async def remote_url(full):
        return str(src), []

    backend = LocalBackend(tmp_path / "work", remote_url)
    d = await backend.fetch("meta/triton")
    old, new = d / "refs" / "heads" / "main.lock", d / "packed-refs.lock"
    old.write_text("")                       # a worker killed mid-fetch an hour ago
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    new.write_text("")                       # and one killed a moment ago, the worker restarted since
    sha = commit_files(src, {"README.md": "r2\n"}, "two")
    await backend.fetch("meta/triton", sha)
    assert rev(d, "refs/heads/main") == sha
    assert not old.exists() and not new.exists()

