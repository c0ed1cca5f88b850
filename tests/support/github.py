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


R = {"owner": "meta", "repo": "triton"}


def pr_world(fake_github, github_app, tmp_path: Path):
    """``(fake, fork, gh, src, base)``: ``meta/triton`` on the local GitHub from a working repo ``src``
    (two files on ``main``, whose sha is ``base``), no required checks, and an installation client."""
    src = tmp_path / "src"
    base = make_source_repo(src, [{"a.txt": "1\n", "b.txt": "b\n"}])
    fork = fake_github.create_repo("meta/triton", source=src, required_checks=[])
    inst = fake_github.install("meta")
    gh = github_app.installation(inst.id)
    return fake_github, fork, gh, src, base[0]


def push_branch(src: Path, fork, branch: str, commits, *, start: str = "main") -> list[str]:
    """Commit ``[(files, message, author)]`` on a new branch of the working repo and push it."""
    git(src, "checkout", "-q", "-B", branch, start)
    shas = []
    for files, message, author in commits:
        for name, content in files.items():
            (src / name).write_text(content)
        git(src, "add", "-A")
        git(src, "-c", f"user.name={author}", "-c", f"user.email={author}@example.com", "commit", "-q",
            "--author", f"{author} <{author}@example.com>", "-m", message)
        shas.append(git(src, "rev-parse", "HEAD"))
    git(src, "push", "-q", "-f", str(fork.path), f"{branch}:refs/heads/{branch}")
    git(src, "checkout", "-q", "main")
    return shas


async def open_pr(gh, head: str, title: str = "sync") -> dict:
    return await gh.post("/repos/{owner}/{repo}/pulls", R, data={"title": title, "head": head, "base": "main",
                                                                  "body": "body"})
