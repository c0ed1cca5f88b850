"""Benchmark: the shared-symbol pre-check (``symbols.may_share_symbols``) on real pairs of changes —
how often it says "none shared" without a parse, and that it is never wrong (docs/plan.md,
"A Python name's outer definitions" and "A C++ name's enclosing blocks").

For every file of ``--languages`` that a commit among the last ``--commits`` first-parent,
single-parent commits of ``--ref`` modifies, the changes to that file are paired (each with up to
``--partners`` others, drawn with a fixed seed); for each pair ``(A, B)`` the pre-check is asked
whether B's change may share a symbol with A's symbols (``symbols_of_change``), and every "no" is
checked against B's parsed symbols (the parser's definitions even where its C++ parse is in error:
``errors_unknown=False``, what the pre-check models), both as a whole-file parse gives them and as the planner's parse
by top-level parts does (parts up to ``PART_SHARE_FRESH`` of the text, the most the planner parses
that way). Prints the pairs, the "no"s, the wrong "no"s and the pre-check's own CPU; exits 1 on a
wrong one.

    PYTHONPATH=. .venv/bin/python bench/bench_symbol_precheck.py \\
        --repo /work/.mirror/facebookexperimental+triton/repo --ref a4ce9c2a2 --languages python,cpp

``--parse-errors`` instead compares, on the pairs where either change's whole-file parse
has an ERROR or MISSING node around a changed row (:func:`error_rows`), tree-sitter's symbols with
the text's brace blocks (C++, :func:`brace_functions`: the outermost function-like block around each
changed row, below namespaces and classes): a *missed link* is a pair whose symbols share nothing
but whose rows sit in one such block, an *over-link* the reverse (docs/plan.md, "Symbols"). For
Python it counts the distinct texts tree-sitter parses in error and compares each change's symbols
where a parse is in error with CPython's own parser (:func:`python_symbols`, the ``ast`` of the
Python running the bench), the same pairs' missed links and over-links by those (docs/plan.md,
"Python texts parsed in error").
For C++ it also counts the changes the planner's rule makes unknown (``symbols_of_change``: a parse
error around a changed row, ``symbols._recovered_around``) and, over the pairs whose changes are
both known and where a text of either is in error anywhere, the missed links by the brace blocks.
"""
from __future__ import annotations

import argparse
import ast
import os
import random
import re
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import pygit2  # noqa: E402

from bot.git.repo import commit_info  # noqa: E402
from bot.plan.symbols import (  # noqa: E402
    MAX_SYMBOL_LINES,
    PART_SHARE_FRESH,
    TOP_LEVEL,
    Definition,
    _recovered_around,
    changed_ranges,
    language_for,
    may_share_symbols,
    parser_for,
    symbols_of_change,
)


def by_parts(fc, old: bytes, new: bytes):
    """The symbols of ``fc`` as the planner's parse by top-level parts gives them."""
    return symbols_of_change(fc, old, new, parse_part=lambda text, lang: parser_for(lang).parse(text).root_node,
                             part_share=lambda text, lang: PART_SHARE_FRESH, errors_unknown=False)


# what holds no code for the brace reader: comments, string and character literals (raw strings
# too, simply), preprocessor lines with their continuations
_NO_CODE = re.compile(rb"//[^\n]*|/\*[\s\S]*?\*/"
                      rb"|R\"([^()\\\s\"]{0,16})\([\s\S]*?\)\1\""
                      rb"|\"(?:[^\"\\\n]|\\[\s\S])*\"|'(?:[^'\\\n]|\\[\s\S]){1,4}'"
                      rb"|^[ \t]*\#(?:[^\n\\]|\\[\s\S])*", re.M)
_TRANSPARENT = re.compile(rb"\b(?:namespace|class|struct|union|enum)\b|extern\s*$|^\s*$")
_CONTROL = re.compile(rb"^\s*(?:if|for|while|switch|catch|do|else|try)\b")


def brace_functions(src: bytes, rows) -> list[str | None] | None:
    """For each 0-based row of ``rows``: the head (whitespace collapsed, after those of the
    namespace, class, struct, union or enum blocks around it) of the outermost function-like ``{``
    block around it — a block whose head holds ``(`` and is no control
    statement, below any namespace, class, struct, union or enum blocks — or None (no such block,
    or one of :data:`MAX_SYMBOL_LINES` rows or more, which the planner leaves to the textual merge
    too). None for the whole text when its braces do not balance."""
    code = bytearray(src)
    macro_rows: set[int] = set()        # a ``#define``'s rows: tree-sitter names the macro there, rightly
    for m in _NO_CODE.finditer(src):
        if re.match(rb"[ \t]*#[ \t]*define\b", m.group()):
            r0 = src.count(b"\n", 0, m.start())
            macro_rows.update(range(r0, r0 + m.group().count(b"\n") + 1))
        for k in range(m.start(), m.end()):
            if code[k] != 10:
                code[k] = 32
    code = bytes(code)
    stack: list[tuple[int, int, bool, bytes]] = []   # (open, row, function-like or inside one, head)
    blocks: list[tuple[int, int, bytes]] = []      # function blocks: (open row, close row, head)
    last_delim = 0
    row = 0
    for k, ch in enumerate(code):
        if ch == 10:
            row += 1
        elif ch == 59:                              # ';'
            last_delim = k + 1
        elif ch == 123:                             # '{'
            head = code[last_delim:k]
            inside = bool(stack) and stack[-1][2]
            fn = not inside and b"(" in head and not _CONTROL.match(head) and not _TRANSPARENT.search(head.split(b"(")[0])
            head = b" ".join(head.split())
            if fn:       # named with the heads around it: one ``runOnOperation`` per pass class
                blocks.append((row, -1, b" / ".join([h for *_, h in stack if h] + [head])))
            stack.append((k, row, inside or fn, head if _TRANSPARENT.search(head) and b"(" not in head else b""))
            last_delim = k + 1
        elif ch == 125:                             # '}'
            if not stack:
                return None
            _, r0, is_fn, _ = stack.pop()
            if is_fn and not (stack and stack[-1][2]):
                i = max(i for i, b in enumerate(blocks) if b[0] == r0 and b[1] < 0)
                blocks[i] = (r0, row, blocks[i][2])
            last_delim = k + 1
    if stack:
        return None
    out: list[str | None] = []
    for r in rows:
        got = None
        for r0, r1, head in blocks if r not in macro_rows else ():
            if r0 <= r <= r1 and r1 - r0 < MAX_SYMBOL_LINES:
                got = head.decode("utf-8", "replace")
        out.append(got)
    return out


def python_symbols(src: bytes, ranges) -> frozenset[str] | None:
    """The symbols of hunk ``ranges`` (1-based ``(start, count)``) in ``src`` as CPython's parser
    (``ast``) gives them, by :func:`~bot.plan.symbols.tree_symbols`' rules: each changed row's
    innermost ``def``/``async def``/``class`` (from its first decorator to its last statement),
    qualified by those around it, :data:`TOP_LEVEL` outside them or for one of
    :data:`MAX_SYMBOL_LINES` rows or more. None when ``ast`` cannot read the text (a syntax error,
    or syntax newer than the running Python). Rows of comments after a definition's last statement
    are :data:`TOP_LEVEL` here but the definition's for tree-sitter."""
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError):
        return None
    defs: list[Definition] = []
    todo: list[tuple[ast.AST, str, int]] = [(tree, "", 0)]
    while todo:
        node, parent, depth = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{parent}.{child.name}" if parent else child.name
                start = min([d.lineno for d in child.decorator_list] + [child.lineno]) - 1
                defs.append(Definition(name, start, child.end_lineno - 1, depth))
                todo.append((child, name, depth + 1))
            else:
                todo.append((child, parent, depth))
    out: set[str] = set()
    for start, count in ranges:
        for r in range(max(start - 1, 0), max(start - 1, 0) + count):
            best = max((d for d in defs if d.start <= r <= d.end), key=lambda d: d.depth, default=None)
            out.add(best.name if best is not None and best.end - best.start < MAX_SYMBOL_LINES else TOP_LEVEL)
    return frozenset(out)


def python_parse_errors(by_path: dict, partners: int) -> None:
    """The ``--parse-errors`` measurement for Python (module docstring); prints the counts and each
    change whose symbols differ from CPython's where a parse is in error."""
    parser = parser_for("python")
    roots: dict[bytes, object] = {}

    def root(src: bytes):
        if src not in roots:
            roots[src] = parser.parse(src).root_node
        return roots[src]

    rnd = random.Random(0)
    changes_n = err_changes = differ = unreadable = pairs = err_pairs = missed = over = 0
    for path, changes in sorted(by_path.items()):
        if language_for(path) != "python":
            continue
        facts = []
        for fc, old, new, sha in changes:
            changes_n += 1
            sides = list(zip((old, new), changed_ranges(old, new, fc.edits)))
            err = any(root(src).has_error and _recovered_around(root(src), "python", ranges, src) for src, ranges in sides)
            syms = symbols_of_change(fc, old, new, parse=lambda src, lang: root(src), errors_unknown=False)
            truth = None
            if err:
                err_changes += 1
                got = [python_symbols(src, ranges) for src, ranges in sides]
                if None in got:
                    unreadable += 1
                    print(f"unreadable by ast: {path} {sha[:12]} {sorted(syms or ())[:3]}")
                else:
                    truth = got[0] | got[1]
                    if truth != syms:
                        differ += 1
                        print(f"differs: {path} {sha[:12]} tree-sitter {sorted(syms or ())[:3]} / ast {sorted(truth)[:3]}")
            facts.append((syms, err, truth, sha))
        for i in range(len(changes)):
            for j in rnd.sample(range(len(changes)), min(partners, len(changes))):
                if i >= j:
                    continue
                (si, ei, ti, _), (sj, ej, tj, _) = facts[i], facts[j]
                if si is None or sj is None:
                    continue
                pairs += 1
                if not (ei or ej) or (ei and ti is None) or (ej and tj is None):
                    continue
                err_pairs += 1
                ts_link = bool((si & sj) - {TOP_LEVEL})
                ast_link = bool(((ti or si) & (tj or sj)) - {TOP_LEVEL})
                missed += ast_link and not ts_link
                over += ts_link and not ast_link
    in_error = sum(1 for r in roots.values() if r.has_error)
    print(f"parse errors: {len(roots)} distinct Python texts, {in_error} parsed in error; {changes_n} changes, "
          f"{err_changes} with an error around a changed row ({unreadable} unreadable by ast, {differ} with other "
          f"symbols than ast's); {pairs} pairs, {err_pairs} with an error read by ast: {missed} missed links, "
          f"{over} over-links")


def error_rows(src: bytes, ranges) -> bool:
    """Whether the whole-file C++ parse of ``src`` has an ERROR or MISSING node in the innermost
    definition around a changed row of ``ranges`` (1-based ``(start, count)``), or the row lies in an
    ERROR node outside every definition."""
    root = parser_for("cpp").parse(src).root_node
    if not root.has_error:
        return False
    for start, count in ranges:
        for r in range(max(start - 1, 0), max(start - 1, 0) + count):
            node = root.named_descendant_for_point_range((r, 0), (r, 1 << 20))
            while node is not None:
                if node.type == "ERROR" or node.type in ("function_definition", "class_specifier", "struct_specifier",
                                                         "union_specifier", "enum_specifier"):
                    if node.has_error:
                        return True
                    if node.type != "ERROR":
                        break
                node = node.parent
    return False


def parse_error_pairs(by_path: dict, partners: int) -> int:
    """The ``--parse-errors`` measurement (module docstring); prints the counts and each missed link."""
    if any(language_for(path) == "python" for path in by_path):
        python_parse_errors(by_path, partners)
    if not any(language_for(path) == "cpp" for path in by_path):
        return 0
    rnd = random.Random(0)
    pairs = err_pairs = missed = over = unreadable = 0
    changes_n = unknown = kept = kept_missed = file_pairs = file_missed = 0
    roots: dict[bytes, object] = {}

    def root(src: bytes, lang: str):      # the two texts of the change at hand, parsed once for both asks
        if src not in roots:
            if len(roots) >= 4:
                roots.pop(next(iter(roots)))
            roots[src] = parser_for(lang).parse(src).root_node
        return roots[src]

    for path, changes in sorted(by_path.items()):
        if language_for(path) != "cpp":
            continue
        facts = []
        for fc, old, new, sha in changes:
            syms = symbols_of_change(fc, old, new, parse=root, errors_unknown=False)
            # the planner's rule: unknown where the parse is in error around a changed row (_recovered_around)
            known = symbols_of_change(fc, old, new, parse=root) is not None
            changes_n += 1
            unknown += syms is not None and not known
            in_error = any(src is not None and root(src, "cpp").has_error for src in (old, new))
            old_r, new_r = changed_ranges(old, new, fc.edits)
            err = error_rows(old, old_r) or error_rows(new, new_r)
            heads: set[str] | None = set()
            for src, ranges in ((old, old_r), (new, new_r)):
                rows = [r for s, c in ranges for r in range(max(s - 1, 0), max(s - 1, 0) + c)]
                got = brace_functions(src, rows)
                if got is None:
                    heads = None
                    break
                heads |= {h for h in got if h is not None}
            facts.append((syms, err, heads, sha, known, in_error))
        for i in range(len(changes)):
            for j in rnd.sample(range(len(changes)), min(partners, len(changes))):
                if i >= j:
                    continue
                (si, ei, hi, shai, ki, fi), (sj, ej, hj, shaj, kj, fj) = facts[i], facts[j]
                if si is None or sj is None:
                    continue
                pairs += 1
                if ki and kj and (fi or fj) and hi is not None and hj is not None:
                    # both known to the planner, a text in error somewhere: do its symbols miss a link?
                    file_pairs += 1
                    if hi & hj and not (si & sj) - {TOP_LEVEL}:
                        file_missed += 1
                        print(f"missed (known): {path} {shai[:12]} {sorted(si)[:3]} / {shaj[:12]} {sorted(sj)[:3]}")
                if not (ei or ej):
                    continue
                err_pairs += 1
                if hi is None or hj is None:
                    unreadable += 1
                    continue
                ts_link = bool((si & sj) - {TOP_LEVEL})
                brace_link = bool(hi & hj)
                kept += ki and kj
                kept_missed += ki and kj and brace_link and not ts_link
                if brace_link and not ts_link:
                    missed += 1
                    print(f"missed: {path} {shai[:12]} {sorted(si)[:3]} / {shaj[:12]} {sorted(sj)[:3]}: {sorted(hi & hj)[0][:90]}")
                elif ts_link and not brace_link:
                    over += 1
    print(f"parse errors: {pairs} C++ pairs, {err_pairs} with a parse error around a changed row, {unreadable} of them "
          f"with unbalanced braces; {missed} missed links, {over} over-links (symbols shared, no common brace function)")
    print(f"the planner's rule: {unknown} of {changes_n} C++ changes unknown (a parse error around a changed row, "
          f"_recovered_around); {kept} of the pairs with a parse error keep both changes' symbols, {kept_missed} "
          f"of them missed links; {file_pairs} pairs of known changes with a text in error anywhere, {file_missed} "
          f"of them missed links")
    return 0


def changes_by_path(repo: pygit2.Repository, ref: str, commits: int, languages: set[str]) -> dict[str, list]:
    """``{path: [(FileChange, old text, new text, commit sha)]}`` of the modified files of ``languages``."""
    walker = repo.walk(repo.revparse_single(ref).peel(pygit2.Commit).id, pygit2.enums.SortMode.TOPOLOGICAL)
    walker.simplify_first_parent()
    out: dict[str, list] = defaultdict(list)
    for i, c in enumerate(walker):
        if i >= commits:
            break
        if len(c.parents) != 1:
            continue
        for fc in commit_info(repo, str(c.id), renames=False).files:
            if fc.status == "M" and language_for(fc.path) in languages:
                out[fc.path].append((fc, c.parents[0].tree[fc.path].data, c.tree[fc.path].data, str(c.id)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, help="a repository holding the commits (bare or not)")
    ap.add_argument("--ref", required=True, help="the newest commit; its first-parent history is read")
    ap.add_argument("--commits", type=int, default=2500)
    ap.add_argument("--partners", type=int, default=6)
    ap.add_argument("--languages", default="python", help="comma-separated: python, cpp, mlir, tablegen")
    ap.add_argument("--parse-errors", action="store_true",
                    help="where the parse has errors: tree-sitter's symbols against the brace blocks (C++), "
                         "against CPython's ast (Python)")
    args = ap.parse_args(argv)
    repo = pygit2.Repository(args.repo)
    t0 = time.perf_counter()
    by_path = changes_by_path(repo, args.ref, args.commits, set(args.languages.split(",")))
    if args.parse_errors:
        return parse_error_pairs(by_path, args.partners)
    rnd = random.Random(0)
    pairs = no = wrong = 0
    cpu = 0.0
    by_lang: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for path, changes in sorted(by_path.items()):
        syms = [symbols_of_change(fc, old, new, errors_unknown=False) for fc, old, new, _ in changes]
        parts: dict[int, frozenset | None] = {}
        for i in range(len(changes)):
            for j in rnd.sample(range(len(changes)), min(args.partners, len(changes))):
                if i == j or syms[i] is None or syms[j] is None:
                    continue
                fc, old, new, sha = changes[j]
                pairs += 1
                by_lang[language_for(path)][0] += 1
                c0 = time.process_time()
                maybe = may_share_symbols(fc, old, new, syms[i])
                cpu += time.process_time() - c0
                if not maybe:
                    no += 1
                    by_lang[language_for(path)][1] += 1
                    if j not in parts:
                        parts[j] = by_parts(fc, old, new)
                    for theirs in (syms[j], parts[j]):
                        if theirs is None or (syms[i] & theirs) - {TOP_LEVEL}:
                            wrong += 1
                            print(f"wrong: {path} {sha[:12]}: {sorted(syms[i])[:4]} against {sorted(theirs or ())[:4]}")
                            break
    langs = ", ".join(f"{lang} {n} pairs, {k} none shared" for lang, (n, k) in sorted(by_lang.items()))
    print(f"{args.ref} ({args.languages}): {len(by_path)} files, {pairs} pairs ({langs}), {no} said none shared, "
          f"{wrong} wrong; pre-check CPU {cpu:.1f} s; {time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.2f}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
