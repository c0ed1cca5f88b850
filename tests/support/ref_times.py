"""Back-dating a repository's refs, for the tests of "upstream as of" (``bot.git.repo.refs_updated_at``
reads when a local copy's refs last changed from their files' modification times)."""
from __future__ import annotations

import os
from pathlib import Path


def set_ref_times(git_dir: str | Path, when: float) -> None:
    """Set the modification time of every ref file of ``git_dir`` to ``when`` (epoch s): loose refs,
    their reflogs, ``packed-refs`` and ``FETCH_HEAD`` — as if nothing had been fetched since then."""
    for sub in ("refs", "logs"):
        for root, _, names in os.walk(os.path.join(git_dir, sub)):
            for n in names:
                os.utime(os.path.join(root, n), (when, when))
    for n in ("packed-refs", "FETCH_HEAD"):
        if os.path.exists(os.path.join(git_dir, n)):
            os.utime(os.path.join(git_dir, n), (when, when))
