"""Runner backends as the bot uses them (the runner itself is :mod:`gpu_runner`).

* :class:`LocalBackend` — ``local``: keeps a bare mirror of the fork
  (``<workdir>/validation/<owner>+<repo>.git``; branches and ``refs/pull/*/head``), writes the
  *trusted* ``forksync.yml`` text (the default branch's) to a file and runs
  ``python -m gpu_runner run --suite S --commit SHA --repo <mirror> --config <file>`` in a
  subprocess; the runner checks the commit out in its own worktree. Exit 0/1 → the result JSON;
  exit 2 (bad input), a runner that leaves no file or cannot be started → a red result (``runner-crashed``): silence
  is not green.
* :class:`ActionsBackend` — ``github-actions``: dispatches ``forksync-gpu.yml`` on the fork's
  default branch (:func:`gpu_runner.github_actions.dispatch`); the result comes back with the
  ``workflow_run.completed`` webhook (:func:`gpu_runner.github_actions.collect`).

Which one: ``settings.runner_backend`` when the serve settings carry it, else the environment
variable ``FORKSYNC_RUNNER_BACKEND`` (``local`` by default).
"""
from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bot.config.suites import RUNNER_BACKENDS
from bot.git import repo as gitio
from bot.github.claims import Claims
from gpu_runner.github_actions import Dispatch, Forksync, dispatch
from gpu_runner.result import Environment, Reason, RunResult
from gpu_runner.runner import SECRET_NAME
from gpu_runner.shards import merge_suite

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = RUNNER_BACKENDS


def backend_name(settings=None) -> str:
    name = getattr(settings, "runner_backend", None) or os.environ.get("FORKSYNC_RUNNER_BACKEND") or "local"
    if name not in BACKENDS:
        raise ValueError(f"runner backend {name!r} is not known; use one of {', '.join(BACKENDS)} "
                         "(FORKSYNC_RUNNER_BACKEND)")
    return name


def runner_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment handed to ``gpu_runner`` (and so to the PR's code): the bot's own, minus
    anything secret-looking (names with TOKEN, SECRET, PASSWORD, CREDENTIAL, PRIVATE, API_KEY, or
    ending in _KEY) and every ``FORKSYNC_*``/``GITHUB_*``/``GH_*`` variable — code under test
    must never see the App's key, tokens or the webhook secret."""
    src = os.environ if environ is None else environ
    return {k: v for k, v in src.items()
            if not SECRET_NAME.search(k) and not k.startswith(("FORKSYNC_", "GITHUB_", "GH_"))}


def crashed_result(suite, sha: str, platform: str, detail: str, backend: str = "local") -> RunResult:
    """A red result standing in for a run that produced none."""
    now = int(time.time())
    return RunResult(suite=suite.name, level=suite.level, commit=sha, platform=platform, backend=backend,
                     verdict="red", outcome="error", reasons=[Reason(code="runner-crashed", detail=detail[:2000])],
                     environment=Environment(runner_id="forksync-local"), started_at=now, finished_at=now)


class LocalBackend:
    """``remote_url(full_name) -> (url, secrets)`` (awaitable) gives the fork's clone URL (with a
    token for https); secrets are scrubbed from error texts. ``claims``: the worker process's
    (:mod:`bot.github.claims`; the validation service passes the sync service's), None: its own
    on ``<workdir>/locks``."""

    name = "local"

    def __init__(self, workdir: str | Path, remote_url, *, python: str = sys.executable, runner_id: str = "forksync-local",
                 claims: Claims | None = None):
        self.root = Path(workdir) / "validation"
        self.remote_url = remote_url
        self.python = python
        self.runner_id = runner_id
        # the mirror's fetches, one at a time across the worker processes sharing the workdir
        # (``serve --workers N``): the claim ``validation-mirror`` of the fork (bot.github.claims)
        self.claims = claims if claims is not None else Claims(Path(workdir) / "locks")

    def mirror(self, full: str) -> Path:
        return self.root / (full.replace("/", "+") + ".git")

    async def _git(self, d: Path, *argv: str, secrets=(), check: bool = True) -> str:
        code, out, err = await gitio.run_locked_git(d, *argv)      # under the claim validation-mirror
        if check and code != 0:
            text = err.decode(errors="replace")
            for s in secrets:
                text = text.replace(s, "***")
            raise RuntimeError(f"git {argv[0]} failed for {d.name}: {text.strip()[:500]}")
        return out.decode(errors="replace")

    async def fetch(self, full: str, sha: str | None = None) -> Path:
        """Bring the mirror up to date (and make sure ``sha`` is there). Returns its path. Its
        fetches hold the fork's claim ``validation-mirror``, so a git lock file in its refs found
        under the claim was left by a fetch killed mid-run (a worker stopped or crashed): removed
        first (logged) — all of them, unless a gc of the mirror may be running (``gc.pid``; a
        suite's or back-out's worktree commits there and may start one), then those older than
        :data:`bot.git.repo.STALE_LOCK_S`."""
        d = self.mirror(full)
        async with self.claims.hold(full, "validation-mirror"):
            left = gitio.clear_stale_locks(d, time.time(), None if not (d / "gc.pid").exists() else gitio.STALE_LOCK_S)
            if left:
                log.warning("%s: removed git lock file(s) a fetch killed mid-run left in the validation mirror: %s",
                            full, ", ".join(left))
            if not (d / "HEAD").exists():
                d.mkdir(parents=True, exist_ok=True)
                await self._git(d, "init", "--bare", "-q")
            if sha and await self.has(d, sha):
                return d
            url, secrets = await self.remote_url(full)
            await self._git(d, "fetch", "-q", "--prune", "--no-tags", url, "+refs/heads/*:refs/heads/*",
                            "+refs/pull/*/head:refs/pull/*/head", secrets=secrets)
            if sha and not await self.has(d, sha):
                await self._git(d, "fetch", "-q", "--no-tags", url, sha, secrets=secrets, check=False)
        return d

    async def has(self, d: Path, sha: str) -> bool:
        proc = await asyncio.create_subprocess_exec("git", f"--git-dir={d}", "cat-file", "-e", f"{sha}^{{commit}}",
                                                    stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        return await proc.wait() == 0

    async def run(self, full: str, sha: str, suite, platform: str, config_text: str) -> RunResult:
        """Run ``suite`` on ``sha`` now; always returns a result (red when the runner fails)."""
        try:
            d = await self.fetch(full, sha)
        except RuntimeError as e:
            return crashed_result(suite, sha, platform, f"could not fetch the fork: {e}")
        return await asyncio.to_thread(self.run_sync, d, sha, suite, platform, config_text)

    def run_sync(self, mirror: Path, sha: str, suite, platform: str, config_text: str) -> RunResult:
        """Blocking: one ``python -m gpu_runner run`` subprocess (used by bisection steps too); a
        suite with ``shards: N`` runs as N such processes side by side (``--shard i/N``), merged
        into one result by :func:`gpu_runner.shards.merge_suite` (a shard that left no result is red)."""
        import subprocess

        if getattr(suite, "shards", 1) > 1:
            return self._run_shards(mirror, sha, suite, platform, config_text)
        with tempfile.TemporaryDirectory(prefix="forksync-run-") as tmp:
            cfg = Path(tmp) / "forksync.yml"
            cfg.write_text(config_text)
            out = Path(tmp) / "result.json"
            argv = [self.python, "-m", "gpu_runner", "run", "--suite", suite.name, "--commit", sha,
                    "--repo", str(mirror), "--config", str(cfg), "--out", str(out), "--platform", platform,
                    "--runner-id", self.runner_id, "--logs", str(Path(tmp) / "logs")]
            try:
                p = subprocess.run(argv, cwd=str(ROOT), capture_output=True, text=True, env=runner_env(),
                                   timeout=suite.run_limit_s + 120)
            except subprocess.TimeoutExpired:
                return crashed_result(suite, sha, platform, "the runner process did not finish in time")
            except OSError as e:
                return crashed_result(suite, sha, platform, _not_started(self.python, e))
            if p.returncode in (0, 1) and out.is_file():
                try:
                    return RunResult.from_json(out.read_text())
                except ValueError as e:
                    return crashed_result(suite, sha, platform, f"unreadable result JSON: {e}")
            return crashed_result(suite, sha, platform, f"gpu_runner exited {p.returncode} without a result: "
                                                        f"{(p.stderr or p.stdout).strip()[-1500:]}")


    def _run_shards(self, mirror: Path, sha: str, suite, platform: str, config_text: str) -> RunResult:
        import subprocess

        n = suite.shards
        with tempfile.TemporaryDirectory(prefix="forksync-run-") as tmp:
            cfg = Path(tmp) / "forksync.yml"
            cfg.write_text(config_text)
            procs: dict[int, subprocess.Popen] = {}
            results: dict[int, RunResult | None] = {}
            for i in range(1, n + 1):
                argv = [self.python, "-m", "gpu_runner", "run", "--suite", suite.name, "--commit", sha,
                        "--repo", str(mirror), "--config", str(cfg), "--out", str(Path(tmp) / f"result-{i}.json"),
                        "--platform", platform, "--runner-id", f"{self.runner_id}-shard{i}",
                        "--logs", str(Path(tmp) / f"logs-{i}"), "--shard", f"{i}/{n}"]
                try:
                    procs[i] = subprocess.Popen(argv, cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                                text=True, env=runner_env())
                except OSError as e:
                    for p in procs.values():
                        p.kill()
                        p.communicate()
                    return crashed_result(suite, sha, platform, _not_started(self.python, e))
            deadline = time.monotonic() + suite.run_limit_s + 120
            for i, p in procs.items():
                try:
                    p.communicate(timeout=max(1.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.communicate()
                out = Path(tmp) / f"result-{i}.json"
                try:
                    results[i] = RunResult.from_json(out.read_text()) if p.returncode in (0, 1) and out.is_file() else None
                except ValueError:
                    results[i] = None
            return merge_suite(results, suite, sha, platform, "local")


def _not_started(python: str, e: OSError) -> str:
    """The ``runner-crashed`` detail for a runner process that could not be started: the bot's
    interpreter moved or lost its exec bit under a running worker (a rebuilt venv, an upgrade)."""
    return f"could not start the runner with {python}: {e.strerror or e}; restart the bot on a working Python"


def forksync_identity(environ=None) -> Forksync:
    """The forksync the GPU workflow must install: ``FORKSYNC_REPOSITORY`` (``owner/name``,
    default ``forksync/forksync``) at ``FORKSYNC_REVISION`` (the image sets it at build time), else
    the commit of the git checkout this code runs from; "" when neither is known (dispatch then
    refuses: a runner must not run other code than the bot's)."""
    import subprocess

    env = os.environ if environ is None else environ
    rev = env.get("FORKSYNC_REVISION", "").strip()
    if not rev and (ROOT / ".git").exists() and (ROOT / "pyproject.toml").is_file():
        p = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
        rev = p.stdout.strip() if p.returncode == 0 else ""
    return Forksync(env.get("FORKSYNC_REPOSITORY", "").strip() or Forksync.repository, rev)


class ActionsBackend:
    """Dispatch-only: :meth:`dispatch` asks for the workflow run and returns the request id; the
    result arrives through ``workflow_run.completed``. The run installs :func:`forksync_identity`'s
    commit and spreads the suite over ``suite.shards`` runners."""

    name = "github-actions"

    async def dispatch(self, gh, full: str, sha: str, suite, platform: str, default_branch: str) -> str:
        request_id = uuid.uuid4().hex[:16]
        owner, repo = full.split("/", 1)
        await dispatch(gh, owner, repo, Dispatch(suite.name, sha, platform, request_id, getattr(suite, "shards", 1)),
                       ref=default_branch, forksync=forksync_identity())
        return request_id
