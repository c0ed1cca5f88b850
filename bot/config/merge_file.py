"""One file's 3-way merge with diff3 markers, as git writes it (an edge: runs ``git merge-file``).

The one implementation that apply's conflict commits (:func:`bot.git.apply.conflict_tree`), the
resolve rules' hunk input (:mod:`bot.resolve.replay`) and the conflict agent's prompt
(:func:`bot.agents.conflict_git.conflict_case`) share, so that the text the resolve benchmark
scores the rules and the agent on is the text a live pick shows them. It lives here, below all
three, because ``bot.agents`` may import neither ``bot.git`` nor ``bot.resolve``.

The planner's file merge (:func:`bot.plan.predict._file_merge`) is deliberately not this one: it
asks libgit2 in process (the planner may run no processes; a ``git merge-file`` costs about 3 ms,
as much as the whole planner's merge of a pick) whether ``merge_trees`` would merge the file and
with which mode, and never needs markers.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from bot.config.attributes import DEFAULT_MARKER_SIZE

#: the labels of :func:`diff3_text`'s markers (ours, base, theirs): the names the resolve rules
#: and the agent's prompt give the sides (``relabel`` later names the upstream commit)
TEXT_LABELS = ("fork", "base", "upstream")


class MergeFileError(RuntimeError):
    """``git merge-file`` failed (killed, or refused its input); the message carries git's exit
    status and its stderr (first 300 characters)."""


def _env() -> dict[str, str]:
    # the same process environment as apply's git commands: no system config, git's messages in
    # English, and no repository of the caller's (a hook's GIT_DIR) read by merge-file
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(k, None)
    return env


def merge_file_diff3(base: bytes, ours: bytes, theirs: bytes, labels: tuple[str, str, str],
                     marker_size: int = DEFAULT_MARKER_SIZE) -> tuple[bytes, int]:
    """``git merge-file -p --diff3`` of three contents: ``(merged bytes with diff3 markers, number
    of conflicts)`` — git's exit status, which git caps at 127; 0 when the merge is clean.
    ``labels``: the markers' labels, ours, base, theirs (``<<<<<<< ours``, ``||||||| base``,
    ``>>>>>>> theirs``); ``marker_size``: the markers' length (the path's ``conflict-marker-size``,
    which git merge-file is never told otherwise). An absent base is passed as ``b""``, as git
    merges an add/add conflict. ``merge.conflictStyle`` in any config is overridden by
    ``--diff3``. Raises :class:`MergeFileError` when git fails (a signal, or an
    error such as binary content)."""
    with tempfile.TemporaryDirectory(prefix="forksync-merge-") as d:
        paths = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            p = Path(d) / name
            p.write_bytes(data)
            paths.append(str(p))
        r = subprocess.run(["git", "merge-file", "-p", "--diff3", f"--marker-size={int(marker_size)}",
                            "-L", labels[0], "-L", labels[1], "-L", labels[2], *paths], env=_env(), capture_output=True)
    # git's exit status counts conflicts (up to 127); a signal or a negative status (255) is a failure
    if r.returncode < 0 or r.returncode > 127:
        raise MergeFileError(f"git merge-file failed ({r.returncode}): {r.stderr.decode(errors='replace').strip()[:300]}")
    return r.stdout, r.returncode


def diff3_text(base: str | None, ours: str, theirs: str) -> str:
    """:func:`merge_file_diff3` of three texts (UTF-8), labelled :data:`TEXT_LABELS` with markers
    of git's default length: the merged text with diff3 markers. ``base`` None (the file is new on
    both sides) merges as empty. The text the resolve rules read and the agent is shown. Raises
    :class:`MergeFileError` (a RuntimeError) when git fails."""
    out, _ = merge_file_diff3((base or "").encode("utf-8"), ours.encode("utf-8"), theirs.encode("utf-8"), TEXT_LABELS)
    return out.decode("utf-8")
