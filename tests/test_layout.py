"""The package layout holds: import-linter's contracts (pyproject.toml) pass, ruff is clean, and
outside the local GitHub no project import hides inside a function (unless marked ``# lazy:`` with
its reason) or runs in a cycle."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("import_graph", ROOT / "bench" / "import_graph.py")
import_graph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(import_graph)


def _tool(name: str) -> str:
    found = Path(sys.executable).with_name(name)
    return str(found) if found.exists() else (shutil.which(name) or name)


def test_import_contracts_are_kept():
    p = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    assert "0 broken" in p.stdout


def test_ruff_is_clean():
    p = subprocess.run([_tool("ruff"), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]


def test_import_graph_outside_the_local_github():
    m = import_graph.measure(ROOT)
    assert m["top_level_modules"] == 3                      # model, store, templating: the base layer
    assert m["private_imports"] == 0
    assert [c for c in m["cycle_members"] if not all(x.startswith("bot.fakegithub.") for x in c)] == []
    graph_files = import_graph.module_files(ROOT)
    inside = [f"{mod} -> {target}" for mod, path in graph_files.items() if not mod.startswith("bot.fakegithub")
              for target, in_function, _ in import_graph.imports_of(mod, path, graph_files) if in_function is True]
    assert inside == []                                     # a lazy one says why, marked "# lazy:"
