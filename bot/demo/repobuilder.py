"""Build real git repositories step by step (used by ``forksync demo`` and the tests).

Every commit gets explicit author/committer identities and dates, so a scripted history is
byte-for-byte reproducible (same shas on every machine). Dates are epoch seconds UTC.

Example::

    up = RepoBuilder.init(tmp / "upstream")
    a = up.commit("Add kernel (#12)", {"lib/k.cpp": "int f() { return 1; }\\n"}, when=T0)
    fork = up.clone(tmp / "fork")
    fork.cherry_pick(a, trailer=f"Upstream-Commit: {a}", when=T0 + 60)
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

DEFAULT_AUTHOR = ("Upstream Dev", "dev@upstream.example")


class GitError(RuntimeError):
    """A git command failed; ``args``, ``returncode`` and ``stderr`` say which and why."""

    def __init__(self, argv: list[str], returncode: int, stderr: str):
        self.argv, self.returncode, self.stderr = argv, returncode, stderr
        super().__init__(f"git {' '.join(argv)} failed ({returncode}): {stderr.strip()}")


def run_git(cwd: str | Path, *argv: str, env: dict[str, str] | None = None, input: str | None = None,
            check: bool = True) -> str:
    """Run ``git argv…`` in ``cwd`` and return stdout; raise :class:`GitError` on failure."""
    full_env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
                "LC_ALL": "C", **(env or {})}
    full_env.pop("GIT_DIR", None)
    p = subprocess.run(["git", *argv], cwd=str(cwd), env=full_env, input=input,
                       capture_output=True, text=True)
    if check and p.returncode != 0:
        raise GitError(list(argv), p.returncode, p.stderr)
    return p.stdout


@dataclass
class RepoBuilder:
    path: Path
    author: tuple[str, str] = DEFAULT_AUTHOR

    @classmethod
    def init(cls, path: str | Path, branch: str = "main", bare: bool = False) -> "RepoBuilder":
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        run_git(path, "init", "-q", "-b", branch, *(["--bare"] if bare else []))
        b = cls(path)
        b._config()
        return b

    def _config(self) -> None:
        run_git(self.path, "config", "user.name", self.author[0])
        run_git(self.path, "config", "user.email", self.author[1])
        run_git(self.path, "config", "commit.gpgsign", "false")

    def git(self, *argv: str, when: int | None = None, author: tuple[str, str] | None = None,
            check: bool = True, input: str | None = None) -> str:
        env = {}
        if when is not None:
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{int(when)} +0000"
        if author is not None:
            env["GIT_AUTHOR_NAME"], env["GIT_AUTHOR_EMAIL"] = author
        return run_git(self.path, *argv, env=env, check=check, input=input)

    def head(self, ref: str = "HEAD") -> str:
        return self.git("rev-parse", ref).strip()

    def write(self, files: dict[str, str | None]) -> None:
        """Write (or, for None, delete) files in the work tree."""
        for rel, text in files.items():
            p = self.path / rel
            if text is None:
                if p.exists():
                    self.git("rm", "-q", "--", rel)
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
            self.git("add", "--", rel)

    def commit(self, message: str, files: dict[str, str | None] | None = None, *, when: int,
               author: tuple[str, str] | None = None, allow_empty: bool = False) -> str:
        """Commit ``files`` (path → text, None deletes) with ``message``; return the new sha."""
        if files:
            self.write(files)
        argv = ["commit", "-q", "--no-verify", "-F", "-"]
        if allow_empty or not files:
            argv.append("--allow-empty")
        self.git(*argv, when=when, author=author or self.author, input=message)
        return self.head()

    def rename(self, old: str, new: str) -> None:
        (self.path / new).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", old, new)

    def cherry_pick(self, sha: str, *, when: int, trailer: str | None = None, message: str | None = None,
                    x: bool = False) -> str:
        """Cherry-pick ``sha`` (keeping its author) and optionally rewrite the message / add a trailer."""
        self.git("cherry-pick", *(["-x"] if x else []), "--allow-empty", "--keep-redundant-commits", sha, when=when)
        if message is not None or trailer is not None:
            msg = message if message is not None else self.git("log", "-1", "--format=%B").rstrip("\n")
            if trailer:
                msg = msg.rstrip("\n") + ("\n" if _has_trailer_block(msg) else "\n\n") + trailer
            self.git("commit", "-q", "--amend", "--allow-empty", "--no-verify", "-F", "-", when=when, input=msg + "\n")
        return self.head()

    def revert(self, sha: str, *, when: int, message: str | None = None) -> str:
        self.git("revert", "--no-edit", sha, when=when)
        if message is not None:
            self.git("commit", "-q", "--amend", "--no-verify", "-F", "-", when=when, input=message)
        return self.head()

    def merge(self, ref: str, *, when: int, message: str | None = None) -> str:
        self.git("merge", "-q", "--no-ff", "-m", message or f"Merge {ref}", ref, when=when)
        return self.head()

    def clone(self, path: str | Path, bare: bool = False) -> "RepoBuilder":
        path = Path(path)
        run_git(path.parent, "clone", "-q", *(["--bare"] if bare else []), str(self.path), str(path))
        b = RepoBuilder(path, self.author)
        b._config()
        return b

    def add_remote(self, name: str, url: str | Path, fetch: bool = True) -> None:
        self.git("remote", "add", name, str(url))
        if fetch:
            self.git("fetch", "-q", name)

    def checkout(self, ref: str, new_branch: str | None = None) -> None:
        if new_branch:
            self.git("checkout", "-q", "-b", new_branch, ref)
        else:
            self.git("checkout", "-q", ref)

    def add_note(self, sha: str, text: str, ref: str = "refs/notes/forksync", *, when: int) -> None:
        self.git("notes", "--ref", ref, "append", "-m", text, sha, when=when)


def _has_trailer_block(msg: str) -> bool:
    last = msg.rstrip("\n").split("\n\n")[-1]
    lines = [ln for ln in last.splitlines() if ln.strip()]
    return bool(lines) and all(":" in ln and not ln.startswith(" ") and ln.split(":", 1)[0].replace("-", "").replace(" ", "").isalnum()
                               for ln in lines) and len(msg.rstrip("\n").split("\n\n")) > 1
