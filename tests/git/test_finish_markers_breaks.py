"""A chain stopped at a conflict in a file whose ``conflict-marker-size`` the fork sets (git's own
advice for AsciiDoc/Markdown with ``=======`` heading rules: ``*.md conflict-marker-size=32``):
the markers forksync writes into it, and whether the check that guards the fold (and the merge
gate, the same rule) still sees them (real git repositories)."""
from __future__ import annotations

import pygit2

from bot.git import repo as gitio
from bot.git import resolution
from bot.git.apply import apply_unit
from bot.git.markers import files_with_markers
from bot.model import PlanItem, Unit
from tests.git.test_resolution import commit
from tests.support.github import git

DOC = "# Guide\n\nintro\n\nstep one\n\nouttro\n"


def test_markers_forksync_writes_into_a_file_with_a_larger_marker_size_are_seen_and_never_folded(tmp_path):
    """The fork's ``.gitattributes`` says ``*.md conflict-marker-size=32``. Upstream and the fork
    both changed ``docs/guide.md``'s step line, and ``src/a.cpp``: the chain stops with both
    files conflicted. forksync writes git's default 7-character markers into both (``git
    merge-tree`` in a bare repository reads no ``.gitattributes``; ``git merge-file`` is not
    told the size), while the marker rule reads ``guide.md`` at its attribute's size, 32: its
    markers are invisible. alice resolves ``a.cpp`` only and pushes; the check passes, the fold
    makes a ``[RESOLVED]`` pick whose ``guide.md`` still holds ``<<<<<<< fork`` / ``>>>>>>>
    upstream``, and the gate's identical rule lets it land. What she should see: "conflict
    markers remain in `docs/guide.md`" and nothing folded — either forksync writes markers of
    the size the attribute asks for (as git does in a work tree), or the rule finds the ones it
    wrote."""
    r = tmp_path / "r"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    commit(r, {".gitattributes": "*.md conflict-marker-size=32\n", "docs/guide.md": DOC,
               "src/a.cpp": "int a = 1;\n"}, "base")
    git(r, "checkout", "-q", "-b", "up")
    up = commit(r, {"docs/guide.md": DOC.replace("step one", "step one, upstream's way"),
                    "src/a.cpp": "int a = 2;\n"}, "Docs and a (#5)", author=("Up Dev", "up@example.com"))
    git(r, "checkout", "-q", "main")
    fork = commit(r, {"docs/guide.md": DOC.replace("step one", "step one, the fork's way"),
                      "src/a.cpp": "int a = 10;\n"}, "fork: own guide and a")
    repo = pygit2.Repository(str(r / ".git"))
    info = gitio.commit_info(repo, up)
    unit = Unit(id=f"chain-{up[:12]}", kind="chain", items=(PlanItem(up, "test"),))
    res = apply_unit(str(r / ".git"), unit, base=fork, commits={up: info}, when=1_800_000_000)
    assert res.conflict == up and set(res.conflict_files) == {"docs/guide.md", "src/a.cpp"}
    branch = f"forksync/{unit.id}"
    guide = git(r, "show", f"{branch}:docs/guide.md")
    assert "fork's way" in guide and "upstream's way" in guide          # both sides, between markers
    git(r, "checkout", "-q", branch)
    # alice resolves a.cpp, and only a.cpp
    head = commit(r, {"src/a.cpp": "int a = 12;\n"}, "resolve a.cpp", author=("Alice", "alice@example.com"))
    hits = {h.path for h in files_with_markers(str(r), fork, head)}
    chk = resolution.check(str(r), fork, head)
    assert "docs/guide.md" in hits, (
        "forksync's own markers in docs/guide.md are invisible to the marker rule:\n" + guide)
    assert not chk.ok and "docs/guide.md" in chk.marker_files, chk
