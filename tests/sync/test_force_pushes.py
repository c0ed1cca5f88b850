"""The sync service's force pushes, read from its source: exactly two, each a lease on a commit
forksync checked (docs/github.md, "Finishing a conflicted chain"), never a bare ``--force``."""
from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "bot" / "sync" / "service.py"


def _force_strings(tree) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(p.value if isinstance(p, ast.Constant) else "{" + ast.unparse(p.value) + "}" for p in node.values)
            if "--force" in text:
                out.append(text)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip() in ("-f", "--force"):
            out.append(node.value)
    return out


def test_only_two_force_pushes_each_with_a_lease_on_a_checked_commit():
    found = _force_strings(ast.parse(SRC.read_text()))
    assert sorted(found) == sorted([
        # the fold of a conflict resolution: the lease is the person's head that was checked
        "--force-with-lease={ref}:{head}",
        # a retry rebuild from the status issue: only a branch holding nothing but forksync's
        # commits, the lease on the tip whose commits were checked (not on GitHub's tip of the moment)
        "--force-with-lease=refs/heads/{branch}:{checked_tip}",
    ])


def test_the_fold_keeps_the_originals_in_the_same_atomic_push():
    src = SRC.read_text()
    fold = src[src.index("async def finish_conflict"):src.index("async def agent_resolve")]
    assert '"--atomic", f"--force-with-lease={ref}:{head}", url,' in fold
    assert 'f"{ref}:{ref}", f"{keep}:{keep}"' in fold
    assert "resolution.keep_ref(unit_id, head)" in fold
