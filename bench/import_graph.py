"""The import graph of the ``bot`` package, in numbers.

Usage: ``python bench/import_graph.py [ROOT]`` (ROOT defaults to the repository root; ``--json``
for machine output, ``--edges`` to list the imports that run back up, ``--skip bot.fakegithub``
to leave the local GitHub out).

Counts, over every ``bot/**/*.py`` module and ``app.py``:

- ``top_level_modules``: modules directly in ``bot/`` (not in a subpackage, ``__init__`` excluded);
- ``levels``: the longest import chain in the graph of strongly connected components (a module that
  imports nothing of the project is level 1);
- ``cycles``: strongly connected components of more than one module, with the largest's size;
- ``back_up_imports``: imports whose target sits at the same or a higher level than the importer,
  i.e. the imports inside a cycle (each one has to be cut to make the graph a DAG of levels);
- ``function_imports``: imports of the project's own modules inside functions or methods, except
  those marked ``# lazy: <why>`` on their line (a heavy part loaded on purpose only when used);
- ``lazy_imports``: the imports so marked;
- ``private_imports``: ``from X import _name`` across modules.

An import of a package (``from bot import x``) counts as an import of ``bot.x``; an import of
``bot.pkg`` resolves to ``bot/pkg/__init__.py``.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path


def module_files(root: Path) -> dict[str, Path]:
    """Map dotted module names to files for ``bot/**`` and ``app.py`` under *root*."""
    mods: dict[str, Path] = {}
    for path in sorted((root / "bot").rglob("*.py")):
        rel = path.relative_to(root).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    if (root / "app.py").exists():
        mods["app"] = root / "app.py"
    return mods


def _resolve(name: str, mods: dict[str, Path]) -> str | None:
    while name:
        if name in mods:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(mod: str, path: Path, mods: dict[str, Path]):
    """Yield ``(target module, in_function, private_names)`` for each project import in *path*;
    ``in_function`` is ``"lazy"`` for a function-level import marked ``# lazy:`` on its line."""
    text = path.read_text()
    lines = text.splitlines()
    tree = ast.parse(text, str(path))
    is_pkg = path.name == "__init__.py"
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node

    def in_function(node: ast.AST) -> bool | str:
        start = node
        while node in parents:
            node = parents[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                marked = "# lazy:" in lines[start.lineno - 1] or "# lazy:" in lines[start.lineno - 2]
                return "lazy" if marked else True
        return False

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _resolve(alias.name, mods)
                if target and target != mod:
                    yield target, in_function(node), []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                full = ".".join(base + ([node.module] if node.module else []))
            else:
                full = node.module or ""
            for alias in node.names:
                sub = f"{full}.{alias.name}"
                target = sub if sub in mods else _resolve(full, mods)
                if target and target != mod:
                    private = [alias.name] if alias.name.startswith("_") and sub not in mods else []
                    yield target, in_function(node), private


def sccs(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(sorted(comp))
    return out


def measure(root: Path, skip: tuple[str, ...] = ()) -> dict:
    """The numbers of the module docstring; modules whose name starts with one of ``skip`` are left out."""
    mods = {m: p for m, p in module_files(root).items() if not m.startswith(skip)} if skip else module_files(root)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    function_imports = lazy_imports = 0
    private: list[str] = []
    for mod, path in mods.items():
        for target, in_fn, names in imports_of(mod, path, mods):
            graph[mod].add(target)
            function_imports += in_fn is True
            lazy_imports += in_fn == "lazy"
            private += [f"{mod} -> {target}.{n}" for n in names]
    comps = sccs(graph)
    comp_of = {m: i for i, c in enumerate(comps) for m in c}
    # Tarjan emits components in reverse topological order: dependencies first.
    level: dict[int, int] = {}
    for i, comp in enumerate(comps):
        deps = {comp_of[t] for m in comp for t in graph[m]} - {i}
        level[i] = 1 + max((level[d] for d in deps), default=0)
    back_up = sorted(
        f"{m} -> {t}" for m in graph for t in graph[m] if comp_of[m] == comp_of[t]
    )
    cycles = [c for c in comps if len(c) > 1]
    top = [m for m in mods if m.count(".") == 1 and not (root / "bot" / m.split(".")[1]).is_dir()]
    return {
        "modules": len(mods),
        "top_level_modules": len(top),
        "levels": max(level.values(), default=0),
        "cycles": len(cycles),
        "largest_cycle": max((len(c) for c in cycles), default=0),
        "back_up_imports": len(back_up),
        "function_imports": function_imports,
        "lazy_imports": lazy_imports,
        "private_imports": len(private),
        "cycle_members": cycles,
        "back_up_edges": back_up,
        "private_edges": private,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", default=str(Path(__file__).resolve().parent.parent))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--edges", action="store_true")
    ap.add_argument("--skip", action="append", default=[], metavar="PREFIX",
                    help="leave out modules starting with PREFIX (e.g. bot.fakegithub, the local GitHub)")
    args = ap.parse_args(argv)
    m = measure(Path(args.root), tuple(args.skip))
    if args.json:
        print(json.dumps(m, indent=2))
        return 0
    for key in ("modules", "top_level_modules", "levels", "cycles", "largest_cycle",
                "back_up_imports", "function_imports", "lazy_imports", "private_imports"):
        print(f"{key}: {m[key]}")
    if args.edges:
        for c in m["cycle_members"]:
            print("cycle:", " ".join(c))
        for e in m["back_up_edges"]:
            print("back up:", e)
        for e in m["private_edges"]:
            print("private:", e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
