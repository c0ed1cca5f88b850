"""Apply (edge, local mode): materialize a plan unit as a local branch of the fork.

``forksync/<unit id>`` (``forksync/bundle-<sha12>``, ``forksync/chain-<sha12>``) gets **one fork
commit per upstream commit**, made by a real ``git cherry-pick`` in a temporary worktree
(``git worktree add --detach``; removed in ``finally``). Each commit keeps the upstream author
and author date, is committed by forksync's identity, and its message comes from
``templates/commit/pick.txt.j2`` (the upstream message + ``Upstream-Commit: <sha>``, plus
``Upstream-Urgent: <reason>`` for an isolated urgent pick, plus ``Forksync-Unit: <id>``).

Safety rules:

* a conflicting pick stops the unit at that commit: the pick is aborted, the branch keeps the
  clean prefix (a new branch is created at the base when the very first pick conflicts, so a
  person has a branch to resolve on) and the result names the commit and the conflicted files —
  nothing half-applied;
* the branch ref moves only at the end, with a compare-and-swap ``git update-ref`` against the
  value read at the start;
* applying again never rewrites the branch: it continues after its tip, skips upstream commits the
  branch already carries (by ``Upstream-Commit`` trailer) and reports the commits forksync did
  not write (no trailer or another committer), which stay as they are;
* a branch checked out in another worktree is refused (moving it would change that checkout).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from bot.model import CommitInfo, PlanItem, Unit
from bot.templating import render

COMMITTER = ("forksync", "forksync@users.noreply.github.com")

_UPSTREAM_TRAILER = re.compile(r"^Upstream-Commit:\s*([0-9a-f]{7,40})\b", re.MULTILINE | re.IGNORECASE)


class ApplyError(RuntimeError):
    """Apply cannot start (bad repository, branch checked out elsewhere, missing commits …)."""


@dataclass(frozen=True)
class ApplyResult:
    """What one apply did.

    ``picked``: ``(upstream sha, new fork sha)`` in order. ``already``: upstream commits the
    branch carried before. ``kept``: branch commits forksync did not write (left untouched).
    ``conflict``: the upstream sha the unit stopped at, with ``conflict_files``; ``error`` a
    non-conflict failure of that pick (e.g. missing objects). ``tip``: the branch tip after
    (None when the branch does not exist)."""

    unit_id: str
    branch: str
    base: str
    start: str
    created: bool
    picked: tuple[tuple[str, str], ...] = ()
    already: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    conflict: str | None = None
    conflict_files: tuple[str, ...] = ()
    error: str = ""
    tip: str | None = None
    remaining: tuple[str, ...] = field(default=())

    @property
    def stopped(self) -> bool:
        return self.conflict is not None


def _env(committer: tuple[str, str], when: int | None) -> dict[str, str]:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C",
           "GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1],
           "GIT_EDITOR": "true"}
    for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(k, None)
    if when is not None:
        env["GIT_COMMITTER_DATE"] = f"@{int(when)} +0000"
    return env


def _git(cwd, *argv, env, check=True, input=None) -> subprocess.CompletedProcess:
    p = subprocess.run(["git", *argv], cwd=str(cwd), env=env, capture_output=True, text=True, input=input)
    if check and p.returncode != 0:
        raise ApplyError(f"git {' '.join(argv)} failed in {cwd} ({p.returncode}): {p.stderr.strip()[:500]}")
    return p


def render_pick_message(commit: CommitInfo, *, unit_id: str | None = None, urgent_reason: str | None = None) -> str:
    """The fork commit message for a pick of ``commit`` (``templates/commit/pick.txt.j2``)."""
    msg = commit.message.rstrip("\n")
    return render("commit/pick.txt.j2", message=msg, sha=commit.sha, has_trailer_block=_has_trailer_block(msg),
                  urgent_reason=urgent_reason or "", unit_id=unit_id or "").rstrip("\n") + "\n"


_TRAILER_LINE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*:\s")


def _has_trailer_block(msg: str) -> bool:
    parts = msg.rstrip("\n").split("\n\n")
    if len(parts) < 2:
        return False
    lines = [ln for ln in parts[-1].splitlines() if ln.strip()]
    return bool(lines) and all(_TRAILER_LINE.match(ln) or ln.startswith((" ", "\t")) for ln in lines) \
        and bool(_TRAILER_LINE.match(lines[0]))


def urgent_unit(commit: CommitInfo, reason: str) -> Unit:
    """A one-commit unit for an isolated urgent pick (``chain-<sha12>``); apply it with
    ``apply_unit(..., urgent_reason=reason)`` so the commit carries ``Upstream-Urgent:`` and does
    not move the frontier."""
    if not reason.strip():
        raise ValueError("an urgent pick needs a reason (it is written into Upstream-Urgent:)")
    return Unit(id=f"chain-{commit.sha[:12]}", kind="chain",
                items=(PlanItem(commit.sha, f"urgent isolated pick: {reason}"),),
                reason=f"urgent isolated pick: {reason}")


def _checked_out_elsewhere(git_dir: str, ref: str, env) -> str | None:
    out = _git(git_dir, "worktree", "list", "--porcelain", env=env).stdout
    path = None
    for line in out.splitlines():
        if line.startswith("worktree "):
            path = line[len("worktree "):]
        elif line == f"branch {ref}":
            return path
    return None


def _resolve(git_dir: str, ref: str, env) -> str | None:
    p = _git(git_dir, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}", env=env, check=False)
    return p.stdout.strip() if p.returncode == 0 else None


def _branch_commits(git_dir: str, tip: str, base: str, env) -> list[tuple[str, str, str]]:
    """``[(sha, committer email, message)]`` of ``tip ^base``, oldest first."""
    out = _git(git_dir, "log", "--reverse", "--format=%H%x00%ce%x00%B%x1e", tip, f"^{base}", env=env).stdout
    res = []
    for rec in out.split("\x1e"):
        rec = rec.strip("\n")
        if not rec:
            continue
        sha, email, msg = rec.split("\x00", 2)
        res.append((sha, email, msg))
    return res


def _unmerged(wt: Path, env) -> tuple[str, ...]:
    out = _git(wt, "diff", "--name-only", "--diff-filter=U", "-z", env=env, check=False).stdout
    return tuple(sorted(p for p in out.split("\0") if p))


def apply_unit(fork_git_dir: str | os.PathLike, unit: Unit, *, base: str,
               commits: Mapping[str, CommitInfo], upstream_git_dir: str | os.PathLike | None = None,
               urgent_reason: str | None = None, committer: tuple[str, str] = COMMITTER,
               when: int | None = None) -> ApplyResult:
    """Materialize ``unit`` as ``refs/heads/forksync/<unit.id>`` in the fork repository.

    ``base``: the fork tip sha a new branch starts from. ``commits``: ``CommitInfo`` for every
    upstream sha of the unit (author, message, parents). ``upstream_git_dir``: where the upstream
    objects live when not in the fork repository (they are fetched into it, no refs written).
    ``when``: committer time (epoch s; None = now), for reproducible tests.
    Returns an :class:`ApplyResult`; raises :class:`ApplyError` when apply cannot start.
    """
    git_dir = str(Path(fork_git_dir).resolve())
    env = _env(committer, when)
    branch = f"forksync/{unit.id}"
    ref = f"refs/heads/{branch}"
    missing_info = [s for s in unit.shas if s not in commits]
    if missing_info:
        raise ApplyError(f"no commit data for {missing_info[0]} of {unit.id}; re-plan and try again")
    where = _checked_out_elsewhere(git_dir, ref, env)
    if where:
        raise ApplyError(f"{branch} is checked out in {where}; switch that worktree to another branch first "
                         "(apply never moves a checked-out branch)")
    if _resolve(git_dir, base, env) is None:
        raise ApplyError(f"the fork tip {base} is not in {git_dir}")
    old = _resolve(git_dir, ref, env)
    start = old or base
    already: list[str] = []
    kept: list[str] = []
    if old:
        for sha, email, msg in _branch_commits(git_dir, old, base, env):
            ups = _UPSTREAM_TRAILER.findall(msg)
            if not ups or email.lower() != committer[1].lower():
                kept.append(sha)
            for u in ups:
                full = next((s for s in unit.shas if s.startswith(u.lower())), None)
                if full and full not in already:
                    already.append(full)
    todo = [s for s in unit.shas if s not in already]
    if not todo:
        return ApplyResult(unit.id, branch, base, start, created=False, already=tuple(already), kept=tuple(kept),
                           tip=old)
    _ensure_objects(git_dir, upstream_git_dir, todo, env)

    picked: list[tuple[str, str]] = []
    conflict = None
    conflict_files: tuple[str, ...] = ()
    error = ""
    tmp = Path(tempfile.mkdtemp(prefix="forksync-apply-"))
    wt = tmp / "wt"
    try:
        _git(git_dir, "worktree", "add", "--detach", "-q", str(wt), start, env=env)
        for sha in todo:
            c = commits[sha]
            argv = ["cherry-pick", "--no-commit", "--allow-empty"]
            if len(c.parents) > 1:
                argv += ["-m", "1"]
            p = _git(wt, *argv, sha, env=env, check=False)
            if p.returncode != 0:
                conflict = sha
                conflict_files = _unmerged(wt, env)
                if not conflict_files:
                    error = p.stderr.strip()[:500]
                _git(wt, "cherry-pick", "--abort", env=env, check=False)
                _git(wt, "reset", "--hard", "-q", "HEAD", env=env, check=False)
                break
            msg = render_pick_message(c, unit_id=unit.id, urgent_reason=urgent_reason)
            author_env = {**env, "GIT_AUTHOR_NAME": c.author_name or "unknown",
                          "GIT_AUTHOR_EMAIL": c.author_email or "unknown@example.invalid",
                          "GIT_AUTHOR_DATE": f"@{int(c.author_time)} +0000"}
            _git(wt, "commit", "-q", "--no-verify", "--allow-empty", "-F", "-", env=author_env, input=msg)
            picked.append((sha, _git(wt, "rev-parse", "HEAD", env=env).stdout.strip()))
        new = _git(wt, "rev-parse", "HEAD", env=env).stdout.strip()
        # a branch that does not exist yet is created even when the first pick conflicts (at the
        # base): the person resolving the conflict needs it; an existing one moves only forward
        if picked or (old is None and conflict is not None):
            _git(git_dir, "update-ref", "-m", f"forksync apply {unit.id}", ref, new, old or "0" * 40, env=env)
        tip = new if (picked or old is None and conflict is not None) else old
    finally:
        _git(git_dir, "worktree", "remove", "--force", str(wt), env=env, check=False)
        shutil.rmtree(tmp, ignore_errors=True)
        _git(git_dir, "worktree", "prune", env=env, check=False)
    remaining = tuple(todo[len(picked):])
    return ApplyResult(unit.id, branch, base, start, created=old is None and tip is not None, picked=tuple(picked),
                       already=tuple(already), kept=tuple(kept), conflict=conflict, conflict_files=conflict_files,
                       error=error, tip=tip, remaining=remaining)


def apply_urgent(fork_git_dir: str | os.PathLike, commit: CommitInfo, reason: str, *, base: str,
                 upstream_git_dir: str | os.PathLike | None = None, committer: tuple[str, str] = COMMITTER,
                 when: int | None = None) -> ApplyResult:
    """Pick one upstream commit out of sequence (``chain-<sha12>``, ``Upstream-Urgent: <reason>``)."""
    return apply_unit(fork_git_dir, urgent_unit(commit, reason), base=base, commits={commit.sha: commit},
                      upstream_git_dir=upstream_git_dir, urgent_reason=reason, committer=committer, when=when)


def _ensure_objects(git_dir: str, upstream_git_dir, shas: list[str], env) -> None:
    """Fetch upstream commits into the fork repository when it lacks them (objects only)."""
    lacking = [s for s in shas if _resolve(git_dir, s, env) is None]
    if not lacking:
        return
    if upstream_git_dir is None:
        raise ApplyError(f"upstream commit {lacking[0]} is not in the fork repository {git_dir}; "
                         "give the upstream repository (--upstream) so apply can fetch it")
    p = _git(git_dir, "-c", "uploadpack.allowAnySHA1InWant=true", "fetch", "-q", "--no-tags",
             str(Path(upstream_git_dir).resolve()), *lacking, env=env, check=False)
    still = [s for s in lacking if _resolve(git_dir, s, env) is None]
    if still:
        raise ApplyError(f"could not fetch upstream commit {still[0]} from {upstream_git_dir} into {git_dir}: "
                         f"{p.stderr.strip()[:300]}")
