"""The ``local`` backend's edges: an isolated git worktree of one commit, and a shell step run
in its own process group with a deadline (the whole group is killed at the deadline, so a hung
compiler or test child cannot outlive the run)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


class CheckoutError(RuntimeError):
    """The commit could not be resolved or checked out (message says which and what git said)."""


def _git(repo: Path, *args: str) -> str:
    p = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise CheckoutError(f"git {' '.join(args)} in {repo} failed: {p.stderr.strip() or p.stdout.strip()}")
    return p.stdout.strip()


def is_git_repo(path: Path) -> bool:
    """True when ``git`` is installed and ``path`` is inside a work tree or is a bare repository."""
    if not shutil.which("git"):
        return False
    p = subprocess.run(["git", "-C", str(path), "rev-parse", "--git-dir"], capture_output=True)
    return p.returncode == 0


def resolve_commit(repo: Path, commit: str) -> str:
    """The full sha of ``commit`` (any commit-ish) in ``repo``. Raises :class:`CheckoutError`."""
    if not (repo / ".git").exists() and not (repo / "HEAD").exists():
        raise CheckoutError(f"{repo} is not a git repository (give --repo the repository holding the commit)")
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    except CheckoutError:
        raise CheckoutError(f"commit {commit!r} not found in {repo}; fetch it first") from None


class Worktree:
    """``git worktree add --detach`` of ``sha`` in a fresh temporary folder; removed on exit
    (``keep=True`` leaves it for inspection). Isolated: the caller's checkout is never touched."""

    def __init__(self, repo: Path, sha: str, parent: str | None = None, keep: bool = False):
        self.repo, self.sha, self.keep = repo, sha, keep
        self._tmp = tempfile.mkdtemp(prefix="forksync-wt-", dir=parent)
        self.path = Path(self._tmp) / "checkout"

    def __enter__(self) -> Path:
        _git(self.repo, "worktree", "add", "--detach", "--quiet", str(self.path), self.sha)
        return self.path

    def __exit__(self, *exc) -> None:
        if self.keep:
            return
        subprocess.run(["git", "-C", str(self.repo), "worktree", "remove", "--force", str(self.path)],
                       capture_output=True)
        subprocess.run(["git", "-C", str(self.repo), "worktree", "prune"], capture_output=True)
        shutil.rmtree(self._tmp, ignore_errors=True)


@dataclass(frozen=True)
class StepResult:
    """``exit_code``: the status, negative for a signal, None when killed at the deadline."""

    exit_code: int | None
    timed_out: bool
    duration_s: float
    stdout: str
    stderr: str


def run_step(command: str, cwd: Path, env: dict[str, str], deadline: float, log_prefix: Path) -> StepResult:
    """Run ``command`` with ``bash -o pipefail -c`` in ``cwd``; stdout/stderr go to
    ``<log_prefix>.out`` / ``.err`` (the full logs) and are returned as text. ``deadline`` is a
    ``time.monotonic()`` instant; at it the process group gets SIGTERM, then SIGKILL 10 s later."""
    t0 = time.monotonic()
    out_path, err_path = Path(f"{log_prefix}.out"), Path(f"{log_prefix}.err")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(["bash", "-o", "pipefail", "-c", command], cwd=str(cwd), env=env,
                                stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
        timed_out = False
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _kill_group(proc, signal.SIGKILL)
                proc.wait()
    return StepResult(None if timed_out else proc.returncode, timed_out, time.monotonic() - t0,
                      out_path.read_text(errors="replace"), err_path.read_text(errors="replace"))


def _kill_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
