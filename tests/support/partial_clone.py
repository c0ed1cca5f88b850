"""A blob-less partial clone whose promisor remote is gone, for the tests of lazy fetches.

``git clone --mirror --filter=blob:none --no-local file://SRC`` of a real repository, optionally
completed with every blob but a chosen few (fetched while the remote is still there, as git's own
lazy fetch does), then cut off: the promisor remote's URL names a path that does not exist and its
``uploadpack`` is a script that records each call and fails. Any git command that reads an absent
blob without ``bot.git.repo.NO_LAZY_FETCH`` then tries the remote and leaves a line in
``attempts``, where a real clone would block on the network or fail offline.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pygit2


def _git(cwd: Path, *argv: str, input: str | None = None) -> str:
    p = subprocess.run(["git", *argv], cwd=str(cwd), capture_output=True, text=True, input=input)
    if p.returncode != 0:
        raise RuntimeError(f"git {' '.join(argv)} failed in {cwd}: {p.stderr.strip()}")
    return p.stdout


@dataclass
class PartialClone:
    path: Path              # the bare git dir
    attempts_file: Path     # one line per fetch attempt from the promisor remote

    def attempts(self) -> list[str]:
        """The promisor fetches tried since the clone was cut off (none is what a test wants)."""
        return self.attempts_file.read_text().splitlines() if self.attempts_file.exists() else []

    def objects(self) -> int:
        return len(list(pygit2.Repository(str(self.path)).odb))


def blobless_clone(src: Path, dest: Path, *, missing: Iterable[str] | None = None) -> PartialClone:
    """A partial clone of every ref of the repository at ``src`` into the bare ``dest``.

    ``missing``: the blob shas it lacks; None → every blob (a fresh ``--filter=blob:none``
    clone), else all the others are fetched first. ``src`` is configured to serve filters and
    any sha. Returns the clone, its promisor remote already unreachable."""
    _git(src, "config", "uploadpack.allowFilter", "true")
    _git(src, "config", "uploadpack.allowAnySHA1InWant", "true")
    _git(dest.parent, "clone", "-q", "--mirror", "--no-local", "--filter=blob:none", f"file://{src}", str(dest))
    if missing is not None:
        gone = set(missing)
        listing = _git(dest, "rev-list", "--objects", "--all", "--missing=print")
        want = [ln[1:].split()[0] for ln in listing.splitlines() if ln.startswith("?") and ln[1:].split()[0] not in gone]
        if want:
            _git(dest, "-c", "fetch.negotiationAlgorithm=noop", "fetch", "-q", "origin", "--no-tags",
                 "--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none", "--stdin",
                 input="\n".join(want) + "\n")
    attempts = dest.parent / f"{dest.name}.fetch-attempts"
    recorder = dest.parent / f"{dest.name}.upload-pack"
    recorder.write_text(f'#!/bin/sh\necho "upload-pack $*" >> "{attempts}"\nexit 1\n')
    recorder.chmod(0o755)
    _git(dest, "config", "remote.origin.url", str(dest.parent / "promisor-gone.git"))
    _git(dest, "config", "remote.origin.uploadpack", str(recorder))
    return PartialClone(dest, attempts)
