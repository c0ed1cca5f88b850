"""Helpers for tests that talk to the local GitHub (its fixtures, ``fake_github`` and
``github_app``, are in ``tests/conftest.py``).

- ``WEBHOOK_SECRET``, ``FAST_RETRY``: the fake's webhook secret and a retry policy without waits;
- ``git(cwd, *args)``, ``commit_files(path, files, message)``;
- ``make_source_repo(path, commits)``: a real non-bare git repository to seed a fake repository.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from bot.github.client import RetryPolicy

WEBHOOK_SECRET = "fake-webhook-secret"
FAST_RETRY = RetryPolicy(max_attempts=4, base_delay_s=0.01, max_delay_s=0.05, secondary_min_wait_s=0.02,
                         max_wait_s=120.0, write_interval_s=0.0)
GIT_ENV = {"GIT_AUTHOR_NAME": "Upstream Dev", "GIT_AUTHOR_EMAIL": "dev@upstream.example",
           "GIT_COMMITTER_NAME": "Upstream Dev", "GIT_COMMITTER_EMAIL": "dev@upstream.example",
           "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, **GIT_ENV)
    env.setdefault("HOME", str(cwd))
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {p.stderr}")
    return p.stdout.strip()


def make_source_repo(path: Path, commits: list[dict[str, str]], *, branch: str = "main") -> list[str]:
    """Create a git repository at ``path`` with one commit per ``{file: content}`` mapping
    (messages "commit 1", …). Returns the commit shas, oldest first."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    shas = []
    for n, files in enumerate(commits, 1):
        for name, content in files.items():
            f = path / name
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(content)
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"commit {n}")
        shas.append(git(path, "rev-parse", "HEAD"))
    return shas


def commit_files(path: Path, files: dict[str, str], message: str) -> str:
    """Commit ``files`` in the working repository ``path``; returns the new sha."""
    for name, content in files.items():
        f = path / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(content)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message)
    return git(path, "rev-parse", "HEAD")
