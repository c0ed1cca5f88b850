"""The symbols a change touches: enclosing function / class / op / record names of each hunk.

Used by the risk partition (``bot/plan/partition.py``) to tell "same file, different functions" (independent)
from "same function" (a dependency). Two layers:

* **pure**: :func:`definitions` (tree-sitter parse → named definitions with line spans) and
  :func:`tree_symbols` (hunk line ranges → the innermost definitions covering them), plus the
  fallback :func:`symbols_from_hunk_headers` over git's ``@@ … @@ <context>`` text;
* **edge**: :class:`bot.plan.symbol_index.SymbolIndex` reads blobs through pygit2, caches parsed trees
  (and re-parses a new version of a file incrementally) and answers by ``(commit, path)``. It is
  *lazy*: the planner asks only for files that already overlap at the file level.

Languages (tree-sitter): C++ (``.cpp .cc .cxx .h .hpp .hh .cu .cuh``), Python (``.py``), MLIR
(``.mlir``, grammar from the ``tree_sitter_mlir`` wheel), TableGen (``.td``); grammars for C++,
Python and TableGen come from ``tree-sitter-language-pack`` 0.13.0. Other files fall back to git's
hunk headers. Measured (docs/plan.md, runtime-facts): tree-sitter finds the enclosing definition on
≈ 97 % of real hunks against 55–70 % (and 0 % on ``.mlir``) for hunk headers; ≈ 3 ms per parse.

Python, MLIR and C++ texts are parsed by **top-level parts** when a change touches a few of them
(:func:`top_level_parts`: a Python ``def``/``class`` after a blank line, a method of a large class,
an MLIR ``// -----`` split, a column-0 C++ definition after a blank line or a namespace line): the
definitions a whole-file parse gives there, at the cost of the parts; a part that does not parse
cleanly is answered from the whole file.

Symbol names are qualified by their enclosing definitions (``Foo::matchAndRewrite``,
``Cls.method``, ``@kernel``, ``TT_AddPtrOp``); C++ namespaces do not qualify (they are too wide).
Lines outside any definition (includes, imports, lit ``RUN:`` lines) give :data:`TOP_LEVEL`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from cachetools import LRUCache

from bot.model import FileChange

#: The symbol of lines that lie outside every definition (file scope).
TOP_LEVEL = "<top-level>"

#: Files larger than this (bytes) are not parsed; their changes count at file level.
MAX_PARSE_BYTES = 2_000_000

#: A definition longer than this (lines) is too wide to tell edits apart (Triton's
#: ``init_gluon_ir`` pybind registry spans ~1,500 lines and every binding lands in it): lines it
#: owns count as :data:`TOP_LEVEL`, i.e. left to the textual 3-way merge like file-scope lines.
MAX_SYMBOL_LINES = 400

_EXT_LANG = {
    ".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".c": "cpp", ".h": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".cu": "cpp", ".cuh": "cpp", ".inc": None,
    ".py": "python", ".pyi": "python",
    ".mlir": "mlir",
    ".td": "tablegen",
}


def language_for(path: str) -> str | None:
    """The tree-sitter language of ``path`` by extension (``cpp``/``python``/``mlir``/``tablegen``),
    or None (then git's hunk headers are the fallback)."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    return _EXT_LANG.get(path[dot:].lower())


@lru_cache(maxsize=None)
def parser_for(lang: str):
    """A cached tree-sitter parser for ``lang``. Raises ``LookupError`` for an unknown language."""
    import tree_sitter as ts

    if lang == "mlir":
        import tree_sitter_mlir

        return ts.Parser(ts.Language(tree_sitter_mlir.language()))
    if lang in ("cpp", "python", "tablegen"):
        from tree_sitter_language_pack import get_parser

        return get_parser(lang)
    raise LookupError(f"no tree-sitter grammar for {lang!r}")


@dataclass(frozen=True)
class Definition:
    """A named definition: ``name`` (qualified), 0-based inclusive rows ``start``..``end``, ``depth``."""

    name: str
    start: int
    end: int
    depth: int


def _text(node) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _cpp_declarator_name(node) -> str | None:
    # function_definition → declarator (possibly pointer/reference) → function_declarator → declarator
    d = node.child_by_field_name("declarator")
    for _ in range(8):
        if d is None:
            return None
        if d.type in ("identifier", "qualified_identifier", "field_identifier", "destructor_name",
                      "operator_name", "template_function"):
            return _text(d)
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            named = [c for c in d.named_children if c.type not in ("parameter_list", "type_qualifier")]
            nxt = named[0] if named else None
        d = nxt
    return None


# a macro's name: capitals, digits and underscores (gtest's ``TEST_F``, pybind11's ``PYBIND11_MODULE``)
_CPP_MACRO_NAME = re.compile(r"[A-Z][A-Z0-9_]*\Z")


def _cpp_macro_definition_name(node) -> str | None:
    """``TEST_F(Suite, Name)`` for a function a macro defines at namespace scope — no return type,
    a name in capitals, arguments that are bare names (gtest's ``TEST``, ``TEST_F``, ``TEST_P``,
    ``TYPED_TEST``, pybind11's ``PYBIND11_MODULE``) — else None. Every test of a gtest file is such
    a definition; named by the macro alone, two edits to different tests would share a symbol."""
    if node.child_by_field_name("type") is not None or node.parent is not None and \
            node.parent.type == "field_declaration_list":      # a class's constructor or method
        return None
    d = node.child_by_field_name("declarator")
    if d is None or d.type != "function_declarator":
        return None
    ident, params = d.child_by_field_name("declarator"), d.child_by_field_name("parameters")
    if ident is None or ident.type != "identifier" or params is None:
        return None
    name = _text(ident)
    if not _CPP_MACRO_NAME.match(name):
        return None
    args = []
    for p in params.named_children:
        if p.type == "comment":
            continue
        if p.type != "parameter_declaration" or p.named_child_count != 1 or \
                p.named_children[0].type not in ("type_identifier", "identifier"):
            return None
        args.append(_text(p.named_children[0]))
    return f"{name}({', '.join(args)})" if args else None


def _name_of(node, lang: str) -> tuple[str | None, bool]:
    """(name, is_definition) for a tree-sitter node; qualifies nested definitions."""
    t = node.type
    if lang == "cpp":
        if t == "function_definition":
            return _cpp_macro_definition_name(node) or _cpp_declarator_name(node) or "<anonymous>", True
        if t in ("class_specifier", "struct_specifier", "union_specifier", "enum_specifier"):
            body = node.child_by_field_name("body")
            if body is None:       # a forward declaration or a use of the type
                return None, False
            return _text(node.child_by_field_name("name")) or "<anonymous>", True
        if t == "preproc_function_def" or t == "preproc_def":
            return _text(node.child_by_field_name("name")), True
        return None, False
    if lang == "python":
        if t == "decorated_definition":
            inner = node.child_by_field_name("definition")
            return (_text(inner.child_by_field_name("name")) if inner is not None else None), True
        if t in ("function_definition", "class_definition"):
            if node.parent is not None and node.parent.type == "decorated_definition":
                return None, False      # named by its decorated_definition (which spans the decorators)
            return _text(node.child_by_field_name("name")), True
        return None, False
    if lang == "tablegen":
        if t in ("def", "defm", "defvar", "defset"):
            for c in node.named_children:
                if c.type == "value":
                    ident = next((x for x in c.named_children if x.type == "identifier"), None)
                    return (_text(ident) if ident is not None else _text(c)), True
                if c.type == "identifier":
                    return _text(c), True
            return "<anonymous>", True
        if t in ("class", "multiclass"):
            ident = node.child_by_field_name("name")
            if ident is None:
                ident = next((x for x in node.named_children if x.type == "identifier"), None)
            return _text(ident), True
        return None, False
    if lang == "mlir":
        if t in ("custom_operation", "generic_operation", "func_operation") or t.endswith("_operation"):
            ref = next((c for c in node.named_children if c.type == "symbol_ref_id"), None)
            if ref is None:
                for c in node.named_children:
                    if c.type.endswith("_operation"):
                        ref = next((x for x in c.named_children if x.type == "symbol_ref_id"), None)
                        if ref is not None:
                            break
            if ref is not None and any(c.type == "region" for c in node.named_children) or (
                    ref is not None and t == "func_operation"):
                return _text(ref), True
        return None, False
    return None, False


_SEP = {"cpp": "::", "python": ".", "tablegen": ".", "mlir": "::"}


def _walk(root, lang: str, lo: int | None = None, hi: int | None = None, parent: str = "",
          depth0: int = 0) -> list[Definition]:
    """Named definitions under ``root`` (outer before inner); with ``lo``/``hi`` (0-based rows,
    inclusive) only those intersecting that span — the walk never enters other subtrees, so a
    small hunk in a large file costs a few nodes, not the whole tree."""
    out: list[Definition] = []
    sep = _SEP[lang]
    stack = [(root, parent, depth0)]
    while stack:
        node, parent, depth = stack.pop()
        name, is_def = _name_of(node, lang)
        if is_def and name:
            qualified = f"{parent}{sep}{name}" if parent and not name.startswith(parent + sep) else name
            end = node.end_point.row
            if node.end_point.column == 0 and end > node.start_point.row:
                end -= 1                # the node ends with its newline (preprocessor lines)
            out.append(Definition(qualified, node.start_point.row, end, depth))
            parent, depth = qualified, depth + 1
        for c in reversed(node.named_children):
            if lo is not None and (c.end_point.row < lo or c.start_point.row > hi):
                continue
            stack.append((c, parent, depth))
    out.sort(key=lambda d: (d.depth, d.start))
    return out


#: node types that can be definitions (``_name_of`` decides), per language with a query walk
#: (MLIR: every named ``*_operation`` kind of the grammar, read from the grammar itself)
_DEF_TYPES = {
    "cpp": ("function_definition", "class_specifier", "struct_specifier", "union_specifier",
            "enum_specifier", "preproc_function_def", "preproc_def"),
    "python": ("decorated_definition", "function_definition", "class_definition"),
    "tablegen": ("def", "defm", "defvar", "defset", "class", "multiclass"),
}


def _def_types(lang: str) -> tuple[str, ...]:
    """The node kinds a definition of ``lang`` can have that its grammar knows (named, visible)."""
    language = parser_for(lang).language
    if lang == "mlir":
        kinds = {language.node_kind_for_id(i) for i in range(language.node_kind_count)
                 if language.node_kind_is_named(i) and language.node_kind_is_visible(i)}
        return tuple(sorted(k for k in kinds if k and k.endswith("_operation")))
    return tuple(t for t in _DEF_TYPES.get(lang, ()) if language.id_for_node_kind(t, True))


@lru_cache(maxsize=None)
def _def_query(lang: str):
    """A tree-sitter query capturing every node kind of :func:`_def_types` (kinds the grammar
    lacks are left out: looked up in the grammar's symbol table, compiling one query per kind
    cost 0.14 s for C++), or None when there is none."""
    import tree_sitter as ts

    ok = _def_types(lang)
    if not ok:
        return None
    return ts.Query(parser_for(lang).language, "[" + " ".join(f"({t})" for t in ok) + "] @d")


def _walk_query(root, lang: str, lo: int, hi: int, parent: str, depth0: int) -> list[Definition] | None:
    """:func:`_walk` with a span, by a tree-sitter query (the node visit runs in C): the same
    definitions (a node of ``root``'s subtree is visited by ``_walk`` exactly when its rows
    intersect ``lo..hi``, since its ancestors contain it), names and depths. None: no query."""
    query = _def_query(lang)
    if query is None:
        return None
    import tree_sitter as ts

    cursor = ts.QueryCursor(query)
    cursor.set_point_range((max(lo - 1, 0), 0), (hi + 2, 0))
    nodes = cursor.captures(root).get("d", [])
    sep = _SEP[lang]
    out: list[tuple[int, int, int, Definition]] = []
    seen: set[int] = set()
    root_id = root.id
    for node in nodes:
        if node.end_point.row < lo or node.start_point.row > hi or node.id in seen:
            continue
        seen.add(node.id)
        name, is_def = _name_of(node, lang)
        if not (is_def and name):
            continue
        chain = []                         # named definitions from root down to (excluding) node
        up = node
        while up.id != root_id:
            up = up.parent
            if up is None:
                break
            n, d = _name_of(up, lang)
            if d and n:
                chain.append(n)
        q, depth = parent, depth0
        for n in reversed(chain):
            q = f"{q}{sep}{n}" if q and not n.startswith(q + sep) else n
            depth += 1
        qualified = f"{q}{sep}{name}" if q and not name.startswith(q + sep) else name
        end = node.end_point.row
        if node.end_point.column == 0 and end > node.start_point.row:
            end -= 1
        out.append((depth, node.start_point.row, node.start_byte, Definition(qualified, node.start_point.row, end, depth)))
    out.sort(key=lambda t: t[:3])
    return [t[3] for t in out]


def definitions(source: bytes, lang: str) -> list[Definition]:
    """All named definitions of ``source`` in ``lang``, outer before inner.

    Names are qualified by enclosing definitions (``Outer::inner``). Errors in the source are
    tolerated (tree-sitter recovers); raises ``LookupError`` for an unknown language."""
    return _walk(parser_for(lang).parse(source).root_node, lang)


def _defs_around(root, lang: str, lo: int, hi: int) -> list[Definition]:
    """The definitions intersecting rows ``lo..hi``: the smallest node spanning them, its
    enclosing definitions (walking up), and the definitions inside it (walking down, pruned)."""
    node = root.named_descendant_for_point_range((lo, 0), (hi, 1 << 30)) or root
    chain = []
    up = node.parent
    while up is not None:
        chain.append(up)
        up = up.parent
    sep = _SEP[lang]
    parent, depth, out = "", 0, []
    for anc in reversed(chain):                       # outermost first, to qualify names
        name, is_def = _name_of(anc, lang)
        if is_def and name:
            qualified = f"{parent}{sep}{name}" if parent and not name.startswith(parent + sep) else name
            end = anc.end_point.row
            if anc.end_point.column == 0 and end > anc.start_point.row:
                end -= 1
            out.append(Definition(qualified, anc.start_point.row, end, depth))
            parent, depth = qualified, depth + 1
    inner = _walk_query(node, lang, lo, hi, parent, depth)
    return out + (inner if inner is not None else _walk(node, lang, lo, hi, parent, depth))


def tree_symbols(root, lang: str, ranges: Iterable[tuple[int, int]],
                 max_lines: int = MAX_SYMBOL_LINES) -> frozenset[str]:
    """The symbols covering hunk ranges ``(start, count)`` (1-based) in a parsed tree: for each
    line, its innermost definition, or :data:`TOP_LEVEL` (also for a definition longer than
    ``max_lines``). Ranges with ``count == 0`` are skipped (a pure insertion: the other side of
    the hunk carries it).

    Hunks less than :data:`_CLUSTER_GAP` rows apart share one definition lookup over their joint
    span: the definitions around a span include every definition intersecting a row inside it
    (the smallest node covering the span's full rows contains or encloses each of them), so
    filtering them per hunk gives the same answer as one lookup per hunk."""
    out: set[str] = set()
    n_rows = root.end_point.row + 1
    spans: list[tuple[int, int]] = []
    for start, count in ranges:
        if count <= 0:
            continue
        lo = max(start - 1, 0)
        hi = lo + count - 1
        if lo >= n_rows:
            out.add(TOP_LEVEL)
            continue
        spans.append((lo, hi))
    spans.sort()
    i = 0
    while i < len(spans):
        j, c_lo, c_hi = i, spans[i][0], spans[i][1]
        while j + 1 < len(spans) and spans[j + 1][0] - c_hi <= _CLUSTER_GAP:
            j += 1
            c_hi = max(c_hi, spans[j][1])
        around = _defs_around(root, lang, c_lo, c_hi)
        for lo, hi in spans[i:j + 1]:
            defs = [d for d in around if d.end >= lo and d.start <= hi]
            # the rows between two consecutive definition boundaries share their innermost
            # definition: one answer per such segment, not per row (a hunk may span hundreds)
            cuts = {lo, hi + 1}
            for d in defs:
                cuts.add(max(d.start, lo))
                cuts.add(min(d.end, hi) + 1)
            for row in sorted(cuts):
                if row > hi:
                    break
                best = None
                for d in defs:
                    if d.start <= row <= d.end and (best is None or d.depth > best.depth):
                        best = d
                out.add(best.name if best and best.end - best.start < max_lines else TOP_LEVEL)
        i = j + 1
    return frozenset(out)


#: hunks closer than this (rows) share one definition lookup in :func:`tree_symbols`
_CLUSTER_GAP = 40


_NOT_NAMES = frozenset({"if", "for", "while", "switch", "return", "catch", "sizeof", "elif", "else", "with"})
_HDR_CALL = re.compile(r"([A-Za-z_~][\w:.~]*)\s*\(")
_HDR_KW = re.compile(r"\b(?:class|struct|def|multiclass|defm|func|function|fn|union|enum)\s+([@\w:.]+)")


def symbols_from_hunk_headers(headers: Iterable[str]) -> frozenset[str]:
    """The fallback: an identifier from each of git's hunk headers (``@@ … @@ int foo(int x)`` →
    ``foo``; ``class Bar:`` → ``Bar``); an empty header is :data:`TOP_LEVEL`. Coarser than
    tree-sitter: git names the definition *before* the hunk, which may not enclose it."""
    out: set[str] = set()
    for h in headers:
        h = h.strip()
        if not h:
            out.add(TOP_LEVEL)
            continue
        m = _HDR_KW.search(h)
        if m is None:
            m = next((x for x in _HDR_CALL.finditer(h) if x.group(1) not in _NOT_NAMES), None)
        out.add(m.group(1).rstrip(":.") if m else h[:80])
    return frozenset(out)


def changed_ranges(old_source: bytes | None, new_source: bytes | None,
                   edits: tuple[tuple[int, int, int, int], ...] | None = None
                   ) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """Zero-context hunk ranges ``(old_ranges, new_ranges)`` between two texts: ``edits`` (a file
    change's own, ``FileChange.edits``, read from the commit analysis' patch) when given, else
    :func:`diff_hunks`. Git's default 3 context lines would make a hunk reach into the
    neighbouring function, so symbols are computed from these exact ranges instead of the
    ``FileChange`` ones when both texts are at hand."""
    if edits is None:
        edits = diff_hunks(old_source, new_source)
    else:                # the same pair's incremental re-parse then finds its edits without a diff
        _DIFF_MEMO[_diff_key(old_source, new_source)] = edits
    return tuple((h[0], h[1]) for h in edits), tuple((h[2], h[3]) for h in edits)


_DIFF_MEMO: "LRUCache[tuple, tuple]" = LRUCache(8)


def _diff_key(old_source: bytes | None, new_source: bytes | None) -> tuple:
    return len(old_source or b""), hash(old_source), len(new_source or b""), hash(new_source)


def diff_hunks(old_source: bytes | None, new_source: bytes | None) -> tuple[tuple[int, int, int, int], ...]:
    """``(old_start, old_lines, new_start, new_lines)`` of each zero-context hunk (libgit2, Myers
    with the indent heuristic: git's default diff, the one the commit analysis reads its
    ``FileChange.edits`` from, so both give the same hunks). The last few answers are memoized:
    symbols and the incremental re-parse ask for the same pair."""
    import pygit2

    key = _diff_key(old_source, new_source)
    got = _DIFF_MEMO.get(key)
    if got is None:
        got = tuple((h.old_start, h.old_lines, h.new_start, h.new_lines)
                    for h in pygit2.Patch.create_from(old_source, new_source, context_lines=0,
                                                      flag=pygit2.enums.DiffOption.INDENT_HEURISTIC).hunks)
        _DIFF_MEMO[key] = got
    return got


def symbols_of_change(fc: FileChange, old_source: bytes | None, new_source: bytes | None,
                      parse=None, parse_part=None, part_share=None, errors_unknown: bool = True) -> frozenset[str] | None:
    """The symbols one file change touches, from its old and new text (None for the side of an
    added/deleted file). Supported languages: tree-sitter over the zero-context ranges of
    :func:`changed_ranges` (the change's own ``edits`` when it has them); others: git's hunk
    headers. Returns None when they cannot be known (a text is missing or too large, a C++ parse in
    error around a changed row, or no hunk headers) — the caller then works at file level. ``parse(source, lang) -> root node`` may be
    given to reuse parsed trees; ``parse_part``, ``part_share`` and ``errors_unknown``: see
    :func:`source_symbols`."""
    lang = language_for(fc.path)
    if lang is None:
        return symbols_from_hunk_headers(fc.hunk_headers) if fc.hunk_headers else None
    if (fc.status != "A" and old_source is None) or (fc.status != "D" and new_source is None):
        return None
    if len(old_source or b"") > MAX_PARSE_BYTES or len(new_source or b"") > MAX_PARSE_BYTES:
        return None
    old_ranges, new_ranges = changed_ranges(old_source, new_source, fc.edits)
    out: set[str] = set()
    for src, ranges in ((old_source, old_ranges), (new_source, new_ranges)):
        if src is None or not any(c > 0 for _, c in ranges):
            continue
        got = source_symbols(src, lang, ranges, parse, parse_part, part_share, errors_unknown)
        if got is None:
            return None
        out |= got
    return frozenset(out)


# the last run of word characters of a symbol that ends with one (``Foo::bar`` → ``bar``)
_FINAL_WORD = re.compile(r"\w+\Z")


def may_share_symbols(fc: FileChange, old_source: bytes | None, new_source: bytes | None,
                      names: Iterable[str]) -> bool:
    """False only when :func:`symbols_of_change` of ``fc`` (old and new text as there, with
    ``errors_unknown=False``: the parser's definitions even where its C++ parse is in error) is a set
    holding none of ``names`` but :data:`TOP_LEVEL`: a textual pre-check that never parses and
    never says False wrongly. True whenever it cannot tell (the symbols would be None: a text
    missing or too large, an unsupported language; a name that does not end with a word character).

    Why it is exact: a symbol other than :data:`TOP_LEVEL` is the (qualified) name of the innermost
    definition around a changed row ``r`` that spans fewer than :data:`MAX_SYMBOL_LINES` rows
    (:func:`tree_symbols`; by parts the same definition, parsed from the rows of its part), and it
    ends with the definition's own name, text read verbatim from the source inside the
    definition's rows (UTF-8 decoded: a run of word characters never holds a replacement character,
    so it encodes back to the source's bytes). That run — the symbol's last run of word
    characters — therefore lies in the rows ``r - MAX_SYMBOL_LINES + 1 .. r + MAX_SYMBOL_LINES - 1``
    of the old or new text; if no such run of any of ``names`` occurs there, no symbol is shared.
    In Python, each part of a qualified name must also be defined in the top-level statement
    around a changed row (:func:`_python_may_define`): ``test_a.kernel`` is not ``test_b.kernel``.
    For text that is not valid Python the parser's error recovery is not modelled. Where a C++
    parse is in error around the change (its symbols are then unknown, file level) a False still
    says that no name of ``names`` lies within :data:`MAX_SYMBOL_LINES` rows of a changed row:
    the change lies in none of those definitions, wherever the recovery put it (docs/plan.md,
    "Symbols")."""
    if language_for(fc.path) is None:
        return True
    if (fc.status != "A" and old_source is None) or (fc.status != "D" and new_source is None):
        return True
    if len(old_source or b"") > MAX_PARSE_BYTES or len(new_source or b"") > MAX_PARSE_BYTES:
        return True
    words = set()
    for name in names:
        if name == TOP_LEVEL:
            continue
        m = _FINAL_WORD.search(name)
        if m is None:
            return True
        words.add(m.group().encode("utf-8"))
    if not words:
        return False
    old_ranges, new_ranges = changed_ranges(old_source, new_source, fc.edits)
    sides = ((old_source, old_ranges), (new_source, new_ranges))
    if not any(_near_a_change(src, ranges, words) for src, ranges in sides):
        return False
    if language_for(fc.path) == "python":
        return any(_python_may_define(src, ranges, names) for src, ranges in sides)
    return True


def _near_a_change(src: bytes | None, ranges, words: set[bytes]) -> bool:
    """Whether one of ``words`` occurs in ``src`` within ``MAX_SYMBOL_LINES - 1`` rows of a row of
    hunk ``ranges`` (``(start, count)``, 1-based; :func:`may_share_symbols`)."""
    # the rows (0-based) where a symbol's last word may lie, around each changed row
    windows = [(max(start - 1, 0) - MAX_SYMBOL_LINES + 1, max(start - 1, 0) + count + MAX_SYMBOL_LINES - 2)
               for start, count in ranges if count > 0]
    if src is None or not windows:
        return False
    last = max(hi for _, hi in windows)
    for word in words:      # each occurrence's row (a word holds no newline): no table of rows
        at, row, counted = src.find(word), 0, 0
        while at >= 0:
            row += src.count(b"\n", counted, at)
            counted = at
            if row > last:
                break
            if any(lo <= row <= hi for lo, hi in windows):
                return True
            at = src.find(word, at + 1)
    return False


# the keywords whose column-0 lines start a top-level statement (not ``async``: an async
# comprehension's ``async for`` may start a line inside brackets), each after a newline
_PY_TOP_KEYWORDS = (b"\ndef", b"\nclass")
# what may lie between ``def``/``class`` and the name it defines (blanks, a line continued by ``\``)
_PY_DEF_GAP = b" \t\f\r\n\\"


def _python_top_defs(src: bytes) -> list[int]:
    """Byte offsets of the column-0 lines of ``src`` that start with ``def`` or ``class`` (then a
    blank or ``\\``), do not continue a line ended by a backslash (:func:`_continues`) and lie outside
    every string spanning lines (:func:`_python_long_strings`): in valid
    Python each starts a top-level statement, since those keywords cannot continue an expression
    or a line. Kept by text object."""
    def compute():
        found = [0]                      # the text's start: no statement encloses it
        for kw in _PY_TOP_KEYWORDS:      # literal searches (a regex stops at every newline)
            at = src.find(kw)
            while at >= 0:
                if src[at + len(kw):at + len(kw) + 1] in (b" ", b"\t", b"\\") and not _continues(src, at):
                    found.append(at + 1)
                at = src.find(kw, at + 1)
        found.sort()
        inside, out, k = _long_strings_of(src), [], 0
        for at in found:
            hidden, k = _inside_string(inside, at, k)
            if not hidden:
                out.append(at)
        return out
    return _by_text(_TOP_DEFS_MEMO, id(src), src, compute)


_TOP_DEFS_MEMO: "LRUCache[int, tuple]" = LRUCache(8)


def _continues(src: bytes, nl: int) -> bool:
    """Whether the line after the newline at ``src[nl]`` continues the line before it (which ends
    with an odd run of backslashes): code there is not a statement's start, and a short string
    continued that way is not among :func:`_python_long_strings`' spans."""
    end = nl - 1 if nl >= 1 and src[nl - 1] == 0x0D else nl
    return end >= 1 and src[end - 1] == 0x5C and _odd_backslashes(src, end - 1)


def _defines(src: bytes, name: bytes, lo: int, hi: int) -> bool:
    """Whether ``src[lo:hi]`` holds ``name`` as the name of a ``def`` or ``class``: the whole
    identifier, after those keywords and blanks only."""
    at = src.find(name, lo, hi)
    while at >= 0:
        end = at + len(name)
        whole = end >= len(src) or not (src[end:end + 1].isalnum() or src[end] == 0x5F or src[end] >= 0x80)
        head = src[max(0, at - 256):at].rstrip(_PY_DEF_GAP)
        if whole and (len(head) < 5 or head.endswith(b"def") or head.endswith(b"class")):
            return True
        at = src.find(name, at + 1, hi)
    return False


def _python_stretches(src: bytes, ranges) -> list[tuple[int, int]]:
    """``[(first, last)]`` byte spans of ``src``, one per changed span of hunk ``ranges``: the
    top-level statement around it, from the last column-0 ``def``/``class`` line at or before it
    (:func:`_python_top_defs`) to the end of the first such line after it (a changed row may be a
    decorator of that definition), with the lines a backslash continues that line onto (its name
    may be there). Every definition enclosing a changed row is named inside its span
    (:func:`_python_may_define` says why)."""
    import bisect

    spans = [(max(start - 1, 0), max(start - 1, 0) + count - 1) for start, count in ranges if count > 0]
    if not spans:
        return []
    offs, starts = _line_offsets(src), _python_top_defs(src)
    n_rows = len(offs) - 1
    out = []
    for lo, hi in spans:
        a = int(offs[min(lo, n_rows)])
        b = int(offs[min(hi + 1, n_rows)])
        k = bisect.bisect_right(starts, a) - 1
        first = starts[k] if k >= 0 else 0
        k = bisect.bisect_left(starts, b)
        last = len(src) if k >= len(starts) else src.find(b"\n", starts[k])
        while 0 <= last < len(src) and _continues(src, last):     # ``def \`` names it on the next line
            last = src.find(b"\n", last + 1)
        out.append((first, len(src) if last < 0 else max(last, b)))
    return out


def _python_may_define(src: bytes | None, ranges, names: Iterable[str]) -> bool:
    """False only when no name of ``names`` can be a symbol of hunk ``ranges`` in the Python text
    ``src`` (:func:`may_share_symbols`). Why: a symbol ``A.B.c`` around a changed row ``r`` is the
    chain of definitions enclosing ``r``, each named after ``def``/``class`` in its own first line
    (a decorated definition's decorators come before that line). In valid Python every such line
    lies inside the top-level statement holding ``r``: it starts at or after the last column-0
    ``def``/``class`` line before ``r`` (:func:`_python_top_defs`) and ends before the next
    one after ``r`` (whose own line is taken in too: ``r`` may be a decorator of it). So each of
    ``A``, ``B``, ``c`` is defined in that stretch of text, or the symbol is not there. (A text
    that is not valid Python may parse otherwise; tree-sitter's recovery is not modelled.)"""
    if src is None:
        return False
    names = [n for n in names if n != TOP_LEVEL]
    if not names:
        return False
    for first, last in _python_stretches(src, ranges):
        for name in names:
            parts = name.split(".")
            if all(parts) and all(_defines(src, part.encode("utf-8"), first, last) for part in parts):
                return True
    return False


def source_symbols(src: bytes, lang: str, ranges, parse=None, parse_part=None, part_share=None,
                   errors_unknown: bool = True) -> frozenset[str] | None:
    """Symbols of hunk ``ranges`` in ``src``. Given ``parse_part``, Python, MLIR and C++ are parsed one
    *top-level part* at a time (:func:`top_level_parts`): only the parts holding a changed row, each as a text of its
    own. A part starts where the whole file is at top level, so nothing outside it encloses its
    rows and its parse gives the definitions a whole-file parse gives there, at the cost of the
    part instead of the file. A part that does not parse cleanly (``has_error``), and the other
    languages, are answered from the whole file. (Windows around the hunks that ignore the syntax
    were tried on Triton and lost accuracy, docs/plan.md.) ``parse(source, lang) -> root node``
    and ``parse_part(text, lang) -> root node`` may cache trees; ``part_share(source, lang) -> float``
    bounds the parts' share of the text (at most ``1/part_share``; default :data:`PART_SHARE`) —
    it changes only what is parsed, never the answer. None (unknown: the caller works at file
    level) for C++ whose whole-file parse is in error around a changed row
    (:func:`_recovered_around`): the definition the parser's recovery puts there may not be the
    real one. ``errors_unknown=False`` gives the parser's definitions there all the same (what
    :func:`may_share_symbols` models)."""
    parse = parse or (lambda s, lg: parser_for(lg).parse(s).root_node)
    if parse_part is not None and lang in _PART_STARTS:
        got = _part_symbols(src, lang, ranges, parse_part,
                            PART_SHARE if part_share is None else part_share(src, lang))
        if got is not None:
            return got
    root = parse(src, lang)
    if errors_unknown and lang == "cpp" and root.has_error and _recovered_around(root, lang, ranges, src):
        return None
    return tree_symbols(root, lang, ranges)


def _recovered_around(root, lang: str, ranges, src: bytes) -> bool:
    """Whether tree-sitter's error recovery may have put the wrong definition around a changed row
    of ``ranges`` (``(start, count)``, 1-based) of ``src`` (the text ``root`` was parsed from). For
    each hunk, the smallest node spanning the text of its rows (:func:`_text_span`: from the first
    row's first non-blank column to the last row's last one) lies in an ``ERROR`` node, or the
    innermost definition around it holds an ``ERROR`` or ``MISSING`` node (``has_error``), or — no
    definition around it: a top-level row, or a hunk across definitions — an ``ERROR`` or
    ``MISSING`` node, or a definition holding one, lies on the hunk's span (:func:`_error_on`).
    An error elsewhere in the file does not count: the span, not the rows' full width, picks the
    node, so a definition's closing ``}``, a blank row or a top-level comment is not taken for the
    whole file. In Triton's ``python/src/passes.cc`` macro calls taking types as arguments
    (``ADD_PASS_OPTION_WRAPPER_2("…", createX, int, bool);``) put the parser in error and one
    function swallowed the two after it (docs/plan.md, "Symbols")."""
    lines = src.split(b"\n")
    for start, count in ranges:
        if count <= 0:
            continue
        lo = max(start - 1, 0)
        a, b = _text_span(lines, lo, lo + count - 1)
        node = root.named_descendant_for_point_range(a, b) or root
        up = node
        while up is not None:
            if up.type == "ERROR":
                return True
            if _name_of(up, lang)[1]:
                break
            up = up.parent
        if up is not None and up.has_error or up is None and _error_on(node, lang, a, b):
            return True
    return False


def _text_span(lines: list[bytes], lo: int, hi: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The points (row, byte column) from row ``lo``'s first non-blank byte to just past row ``hi``'s
    last one (0-based rows of ``lines``); a blank row (or one past the text) gives its start."""
    first = lines[lo] if lo < len(lines) else b""
    last = lines[hi] if hi < len(lines) else b""
    stripped = first.lstrip()
    return (lo, len(first) - len(stripped) if stripped else 0), (hi, len(last.rstrip()))


def _error_on(node, lang: str, a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether a child of ``node`` (or a child of such a child, down to a definition) that touches
    the points ``a..b`` is an ``ERROR`` or ``MISSING`` node or a definition holding one."""
    if not node.has_error:
        return False
    for child in node.children:
        if tuple(child.end_point) < a or tuple(child.start_point) > b:
            continue
        if child.type == "ERROR" or child.is_missing:
            return True
        if child.has_error and (_name_of(child, lang)[1] or _error_on(child, lang, a, b)):
            return True
    return False


# a top-level ``def``/``class``/decorator after a blank line: where a Python part may start
_PY_PART_START = re.compile(rb"\n[ \t\f\r]*\n(?=@|def[ \t]|class[ \t]|async[ \t]+def[ \t])")
# a line of code at column 0 that is not a closing bracket: a statement's first line (or a line of
# a string's text, which only ever makes parts coarser)
_PY_STATEMENT = re.compile(rb"\n[^\s#)\]}]")
# where a token that can hide a triple quote may start: a comment or a quote
_PY_QUOTE_OR_COMMENT = re.compile(rb"[#\"']")
_PY_LONG = (b'"""', b"'''")
_PY_PREFIX_CHARS = frozenset(b"rRbBuUfF")
# a short string's body: a backslash escapes the next byte, or a CRLF line end (a continued line)
_PY_SHORT_BODY = {q: re.compile(rb"(?:[^" + q + rb"\\\n]|\\\r\n|\\[\s\S])*") for q in (b'"', b"'")}
_PY_F_SPECIAL = re.compile(rb"[\\{}\"'\n:()\[\]]")
# lit's ``-split-input-file`` marker (``// -----`` alone on its line): each split is a module of its own
_MLIR_SPLIT = re.compile(rb"\n// -----[ \t]*\r?(?=\n|\Z)")


def _python_long_strings(src: bytes) -> list[tuple[int, int]]:
    """Byte spans ``[start, end)`` of the strings of a Python text that span lines (triple-quoted
    ones, and short ones continued by a backslash or holding a long string in an f-string's
    field): the only tokens that can hold a line that looks like a top-level ``def``. Only logical lines
    holding a triple quote are lexed, from their start (a line continued by a backslash is lexed
    from the line it continues): a comment or a string there may hide the triple quote; strings
    are read by :func:`_python_string_end` (escapes, prefixes, f-strings' nested strings). An
    unterminated string runs to the end of its line (a short one) or of the text (a long one)."""
    spans: list[tuple[int, int]] = []
    pos, n = 0, len(src)
    nxt = {quote: -1 for quote in _PY_LONG}      # the next occurrence of each kind (n + 1: none)
    while True:
        # the next triple quote: literal searches (a regex alternation scans ten times slower),
        # each kind searched again only once passed
        for quote, at in nxt.items():
            if at < pos:
                got = src.find(quote, pos)
                nxt[quote] = n + 1 if got < 0 else got
        q = min(nxt.values())
        if q > n:
            return spans
        at = src.rfind(b"\n", 0, q) + 1
        while at >= 1 and _continues(src, at - 1):         # (LF or CRLF line ends)
            at = src.rfind(b"\n", 0, at - 1) + 1           # the line continues the one before
        at = max(at, pos)
        while True:
            t = _PY_QUOTE_OR_COMMENT.search(src, at)
            if t is None or t.start() > q:                 # (not reached: q is a quote)
                pos = q + 1 if t is None else t.start()
                break
            if t.group() == b"#":
                end = src.find(b"\n", t.start())
                at = n if end < 0 else end
                if at > q:                                 # the triple quote is in a comment
                    pos = at
                    break
                continue
            end, long = _python_string_end(src, t.start())
            if long or src.find(b"\n", t.start(), end) >= 0:    # (an f-string's field may hold one)
                spans.append((t.start(), end))
                pos = end
                break
            at = end
            if at > q:                                     # the triple quote is in a short string
                pos = at
                break


def _odd_backslashes(src: bytes, i: int) -> bool:
    """Whether the run of backslashes ending at ``src[i]`` is of odd length (the last escapes)."""
    k = i
    while k >= 0 and src[k] == 0x5C:
        k -= 1
    return (i - k) % 2 == 1


def _python_string_end(src: bytes, i: int) -> tuple[int, bool]:
    """``(end, is triple-quoted)`` of the string literal whose opening quote is at ``src[i]``;
    its prefix (``r``, ``b``, ``f``, ``rb``, …) is read from the bytes before it. A backslash
    escapes the next byte (raw strings included: ``r"\\""`` is one string). In an f-string, the
    replacement fields (``{…}``, not ``{{``) may hold strings of any quotes (PEP 701), read the
    same way, up to a field's format spec: the text after its first ``:`` outside brackets, where
    a quote is text (``f"{x:'>10}"`` pads with ``'``) and a ``{…}`` is a field again (the
    ``format_spec`` of Python's grammar, docs.python.org/3/reference/lexical_analysis.html#f-strings);
    a short string ends at an unescaped newline outside them."""
    quote = src[i:i + 3] if src[i:i + 3] in _PY_LONG else src[i:i + 1]
    long, n, j = len(quote) == 3, len(src), i + len(quote)
    k = i
    while k > 0 and i - k < 2 and src[k - 1] in _PY_PREFIX_CHARS:
        k -= 1
    prefix = src[k:i] if k == 0 or not (src[k - 1:k].isalnum() or src[k - 1:k] == b"_") else b""
    if b"f" not in prefix.lower():
        if long:
            return _long_string_end(src, quote, j), True
        m = _PY_SHORT_BODY[quote].match(src, j)
        end = m.end()
        return (end + 1 if src[end:end + 1] == quote else end), False
    # the open replacement fields, innermost last: [brackets open in its expression, in its format spec]
    fields: list[list] = []
    while True:                          # an f-string: jump from one byte that matters to the next
        m = _PY_F_SPECIAL.search(src, j)
        if m is None:
            return n, long
        j, c = m.start(), src[m.start()]
        if not fields or fields[-1][1]:                    # literal text, or a format spec
            if c == 0x5C:                                  # a backslash (before a CRLF: both)
                j += 3 if src[j + 1:j + 3] == b"\r\n" else 2
            elif c in (0x22, 0x27) and src.startswith(quote, j):
                return j + len(quote), long
            elif c == 0x0A and not long:
                return j, long
            elif c == 0x7B and (fields or src[j + 1:j + 2] != b"{"):   # a field opens ("{{" is a brace)
                fields.append([0, False])
                j += 1
            elif c == 0x7D and fields:                     # the spec's field closes
                fields.pop()
                j += 1
            else:
                j += 2 if c in (0x7B, 0x7D) and src[j + 1:j + 2] == bytes((c,)) else 1
        elif c in (0x22, 0x27):                            # a string inside a field
            j = _python_string_end(src, j)[0]
        elif c == 0x3A and fields[-1][0] == 0:             # a colon outside brackets: the format spec
            fields[-1][1] = True                           # (its quotes are text: ``{x:'>10}``)
            j += 1
        elif c == 0x7D and fields[-1][0] == 0:
            fields.pop()
            j += 1
        else:
            fields[-1][0] += 1 if c in (0x28, 0x5B, 0x7B) else -1 if c in (0x29, 0x5D, 0x7D) else 0
            j += 1


def _long_string_end(src: bytes, quote: bytes, at: int) -> int:
    """The end of the long string whose body starts at ``at`` (after its opening ``quote``): past
    the first ``quote`` not escaped by an odd run of backslashes; the text's end if none."""
    i = at
    while True:
        j = src.find(quote, i)
        if j < 0:
            return len(src)
        if j == at or not _odd_backslashes(src, j - 1):
            return j + 3
        i = j + 1


def _inside_string(strings, at: int, k: int) -> tuple[bool, int]:
    """``(inside, k)``: whether offset ``at`` lies inside one of ``strings`` (sorted spans),
    scanning from index ``k`` (offsets asked in increasing order); the index to go on from."""
    while k < len(strings) and strings[k][1] <= at:
        k += 1
    return k < len(strings) and strings[k][0] < at, k


def _follows_decorator(statements: list[int], src: bytes, at: int, indent: bytes) -> bool:
    """Whether the statement before the line at ``at`` is a decorator (``statements``: sorted
    offsets of the lines of code at ``indent`` that are not a closing bracket): a part must not
    start between a decorator and the definition it decorates, which blank lines may separate."""
    import bisect

    k = bisect.bisect_left(statements, at) - 1
    return k >= 0 and src.startswith(indent + b"@", statements[k])


_STRINGS_MEMO: "LRUCache[int, tuple]" = LRUCache(8)


def _long_strings_of(src: bytes) -> list[tuple[int, int]]:
    """:func:`_python_long_strings`, the last few answers kept by text object."""
    return _by_text(_STRINGS_MEMO, id(src), src, lambda: _python_long_strings(src))


def _by_text(memo, key, src: bytes, compute):
    """``compute()``, a function of the text ``src``, kept in ``memo`` under ``key`` (an id of
    ``src`` in it is safe: an entry holds its text, so the id is not reused while it is kept)."""
    got = memo.get(key)
    if got is not None and got[0] is src:
        return got[1]
    out = compute()
    memo[key] = (src, out)
    return out


# a decorator at column 0: a statement (``_PY_STATEMENT``) that starts with ``@``
_PY_DECORATOR = re.compile(rb"\n@")


def _python_part_starts(src: bytes) -> list[int]:
    starts = [m.end() for m in _PY_PART_START.finditer(src)]
    if not starts:
        return [0]
    inside = _long_strings_of(src)
    # a start follows a decorator when no statement lies between the last decorator before it and
    # it: one short search each, instead of listing every column-0 line of the text (a tenth of
    # the text's lines, and most of this function's time)
    decorators = [m.start() + 1 for m in _PY_DECORATOR.finditer(src)]
    out, k = [0], 0
    for s in starts:
        hidden, k = _inside_string(inside, s, k)
        if not hidden and not _after_decorator(decorators, src, s):
            out.append(s)
    return out


def _after_decorator(decorators: list[int], src: bytes, at: int) -> bool:
    """:func:`_follows_decorator` at column 0, from the sorted offsets of the column-0 decorator
    lines only: the statement before ``at`` is a decorator exactly when the last decorator line
    before ``at`` is followed by no statement start before ``at`` (a match of ``_PY_STATEMENT``
    ending by ``at``: its statement starts before ``at``)."""
    import bisect

    k = bisect.bisect_left(decorators, at) - 1
    return k >= 0 and _PY_STATEMENT.search(src, decorators[k], at) is None


def _mlir_part_starts(src: bytes) -> list[int]:
    out, at = [0], src.find(b"\n// -----")     # a literal search: a multi-line regex is ten times slower
    while at >= 0:
        if _MLIR_SPLIT.match(src, at):
            out.append(at + 1)
        at = src.find(b"\n// -----", at + 1)
    return out


# C++ (LLVM style: namespaces not indented, definitions at column 0, bodies indented): a line at
# column 0 after a blank line that starts an identifier or a comment (not an access specifier or
# a label, which lie inside a class or function) ...
# (one pattern, the second lookahead rejecting those: no match can start inside another — its
# bytes are blanks and its last newline is followed by code — so rejecting one leaves the rest as
# a separate check of each match would, at a tenth less of this function's time)
_CPP_PART_START = re.compile(rb"\n[ \t\r]*\n(?=[A-Za-z_~]|//|/\*)(?![A-Za-z_]\w*[ \t]*:(?!:))")
# ... and a namespace's (or ``extern "C"``'s) opening and closing lines, each a part of its own: the
# definitions between them then parse without the braces that a part alone could not match
_CPP_BRACE_LINE = re.compile(rb"(?:(?:inline[ \t]+)?namespace\b[^\n;{]*\{|extern[ \t]+\"C\"[ \t]*\{"
                             rb"|\}[ \t]*//[^\n]*namespace)[^\n]*(?:\n|\Z)")
# where such a line may be: every match holds ``namespace`` or starts with ``extern`` (literal
# searches for these rare words, then the pattern at the start of their line: a search for each
# line's first bytes stops at every ``}`` at column 0, and a multi-line pattern tried at every line
# is ten times slower still)
_CPP_BRACE_WORDS = (b"namespace", b"extern")


def _cpp_part_starts(src: bytes) -> list[int]:
    out = {m.end() for m in _CPP_PART_START.finditer(src)}
    out.add(0)
    lines: set[int] = set()
    for word in _CPP_BRACE_WORDS:
        at = src.find(word)
        while at >= 0:
            lines.add(src.rfind(b"\n", 0, at) + 1)
            at = src.find(word, at + len(word))
    for line in lines:
        m = _CPP_BRACE_LINE.match(src, line)
        if m is not None:
            out.add(m.start())
            out.add(m.end())
    out.discard(len(src))
    return sorted(out)


_PART_STARTS = {"python": _python_part_starts, "mlir": _mlir_part_starts, "cpp": _cpp_part_starts}
_PARTS_MEMO: "LRUCache[tuple, tuple]" = LRUCache(8)


def top_level_parts(src: bytes, lang: str) -> list[int]:
    """Byte offsets where the top-level parts of a text start (0 first; ``[0]`` for a language
    without parts). Python: each top-level ``def``, ``class``, ``async def`` or decorator line
    that follows a blank line, lies outside every string that spans lines
    (:func:`_python_long_strings`) and does not follow a decorator (stacked decorators stay in one
    part, blank lines between them or not; a statement between two definitions stays in the part
    before it). MLIR: each ``// -----`` line alone on its line (lit's ``-split-input-file``: the
    text between two markers is parsed as a module of its own). C++ (LLVM style): each column-0
    line after a blank line that starts an identifier or a comment and is not an access specifier
    or a label, and each namespace (or ``extern "C"``) opening line and ``} // namespace`` line
    and the line after it. The last few answers are kept by text object (a commit's new text
    is the next commit's old text)."""
    find = _PART_STARTS.get(lang)
    return [0] if find is None else _by_text(_PARTS_MEMO, (id(src), lang), src, lambda: find(src))


#: parts are parsed only while the parts holding changed rows are at most 1/PART_SHARE of the text
PART_SHARE = 4
#: the same bound when no earlier tree of the file is at hand (a whole parse would start from scratch):
#: on the Triton fork's cold plan as of 2026-04-15, 1.5 parses 2,885 texts instead of 2,242 in ≈ 6 %
#: less symbol CPU (medians of six interleaved runs: 2.83 s against 3.00 s; the same plan)
PART_SHARE_FRESH = 1.5


def _part_symbols(src: bytes, lang: str, ranges, parse_part, share: float = PART_SHARE) -> frozenset[str] | None:
    """:func:`tree_symbols` over the top-level parts of ``src`` that hold a changed row; None (the
    caller parses the whole file) when one of them does not parse cleanly, or when they make up
    more than 1/:data:`PART_SHARE` of the text (a file of one part, a change across most of it:
    re-parsing the whole file incrementally from its last version then costs less)."""
    starts = top_level_parts(src, lang)
    offs = _line_offsets(src)
    part_rows = (offs.searchsorted(starts, side="right") - 1).tolist()
    by_part = _cut_at_rows(part_rows, [(max(start - 1, 0), max(start - 1, 0) + count - 1)
                                       for start, count in ranges if count > 0])
    todo = []
    for k, spans in by_part.items():
        a, b = starts[k], starts[k + 1] if k + 1 < len(starts) else len(src)
        pieces = _pieces_of(src, a, b, part_rows[k], offs) if lang == "python" and b - a > PART_SPLIT else None
        todo += _spans_by_piece(pieces or (_Piece(a, b, part_rows[k]),), spans)
    if sum(p.end - p.start for p, _ in todo) * share > len(src):
        return None             # most of the text: an incremental re-parse of the file costs less
    out: set[str] = set()
    for piece, piece_spans in todo:
        root = parse_part(piece.head + src[piece.start:piece.end], lang)
        if root.has_error:
            return None
        r0 = piece.row - piece.head.count(b"\n")
        got = tree_symbols(root, lang, [(lo - r0 + 1, hi - lo + 1) for lo, hi in piece_spans])
        if piece.owner:
            got = frozenset(TOP_LEVEL if g == piece.owner else g for g in got)
        out |= got
    return frozenset(out)


#: a Python class part larger than this (bytes) is parsed one method at a time (:func:`_class_pieces`)
PART_SPLIT = 16_384


@dataclass(frozen=True)
class _Piece:
    """What :func:`_part_symbols` parses: ``src[start:end]`` (first row ``row``) after the text
    ``head``; ``owner``: a class name that, answered alone, means the class's own rows."""

    start: int
    end: int
    row: int
    head: bytes = b""
    owner: str = ""


def _cut_at_rows(rows: list[int], spans) -> dict[int, list[tuple[int, int]]]:
    """``{k: [(lo, hi)…]}``: ``spans`` (rows, inclusive) cut where the consecutive pieces whose
    first rows are ``rows`` (sorted) begin, by piece index (a span across a boundary: one per piece)."""
    import bisect

    got: dict[int, list[tuple[int, int]]] = {}
    for lo, hi in spans:
        k = max(bisect.bisect_right(rows, lo) - 1, 0)
        while lo <= hi:
            end = min(hi, rows[k + 1] - 1) if k + 1 < len(rows) else hi
            got.setdefault(k, []).append((lo, end))
            lo, k = end + 1, k + 1
    return got


def _spans_by_piece(pieces, spans):
    """``[(piece, [(lo, hi)…])]``: ``spans`` (rows, inclusive) cut at the pieces' first rows."""
    got = _cut_at_rows([p.row for p in pieces], spans)
    return [(pieces[k], got[k]) for k in sorted(got)]


_PY_CLASS_HEADER = re.compile(rb"^class[ \t]+(\w+)[^\n]*:[ \t]*(?:#[^\n]*)?\r?$", re.M)
_PY_COLUMN0_CODE = re.compile(rb"\n\f*[^\s#]")      # (a form feed resets the column: code after it is at 0)
_PY_INDENTED_CODE = re.compile(rb"\n([ \t]+)[^\s#]")
# after a blank line, an indented ``def``/``async def``/decorator: where a method piece may start
_PY_METHOD_START = re.compile(rb"\n[ \t\f\r]*\n([ \t]+)(?=@|def[ \t]|async[ \t]+def[ \t])")


_PIECES_MEMO: "LRUCache[tuple, tuple]" = LRUCache(8)


def _pieces_of(src: bytes, a: int, b: int, row: int, offs) -> tuple[_Piece, ...] | None:
    """:func:`_class_pieces`, the last few answers kept by text object and part."""
    return _by_text(_PIECES_MEMO, (id(src), a, b), src, lambda: _class_pieces(src, a, b, row, offs))


def _class_pieces(src: bytes, a: int, b: int, row: int, offs) -> tuple[_Piece, ...] | None:
    """A large top-level Python part ``src[a:b]`` (first row ``row``) that is one class, cut before
    each method (a ``def``/``async def``/decorator line at the class body's indentation after a
    blank line, outside strings that span lines, not after a decorator): the first piece is parsed as it is (decorators,
    header, the body up to the first cut), each other piece after the line ``class Name:``, so its
    definitions get the names they have in the file (``Name.method``). Only for a class of at
    least :data:`MAX_SYMBOL_LINES` rows: its own rows (outside every method) are then
    :data:`TOP_LEVEL` in the file, which is what ``Name`` alone is mapped to. None (parse the part
    whole) when the part is not one such class: no one-line header, anything but decorators and
    blank lines before it, code at column 0 (or after a form feed) after it, fewer rows."""
    import bisect

    hdr = _PY_CLASS_HEADER.search(src, a, b)
    if hdr is None or _PY_COLUMN0_CODE.search(src, hdr.end(), b) is not None:
        return None
    if any(src[i:i + 1] not in (b"@", b" ", b"\t", b")", b"\n", b"\r") for i in _line_starts(src, a, hdr.start())):
        return None                      # only decorators (and blank lines) before the header
    first = _PY_INDENTED_CODE.search(src, hdr.end(), b)
    if first is None:
        return None
    indent = first.group(1)
    last = b
    while True:                          # the last row with code (indented: nothing at column 0 follows the header)
        nl = src.rfind(b"\n", hdr.end(), last - 1)
        if nl < 0:
            return None
        line = src[nl + 1:last].strip()
        if line and not line.startswith(b"#"):
            break
        last = nl + 1
    if int(bisect.bisect_right(offs, nl + 1)) - 1 - row < MAX_SYMBOL_LINES:
        return None
    strings = _long_strings_of(src)
    members = re.compile(rb"\n" + re.escape(indent) + rb"[^\s#)\]}]")
    statements = [m.start() + 1 for m in members.finditer(src, hdr.end() - 1, b)]
    cuts, k = [], bisect.bisect_left(strings, (hdr.end(), 0))
    for m in _PY_METHOD_START.finditer(src, hdr.end(), b):
        at = m.start(1)
        hidden, k = _inside_string(strings, at, k)
        if m.group(1) == indent and not hidden and not _follows_decorator(statements, src, at, indent):
            cuts.append(at)
    if not cuts:
        return None
    name = hdr.group(1).decode("utf-8", "replace")
    head = b"class " + hdr.group(1) + b":\n"
    pieces = [_Piece(a, cuts[0], row, owner=name)]
    for i, c in enumerate(cuts):
        pieces.append(_Piece(c, cuts[i + 1] if i + 1 < len(cuts) else b, int(bisect.bisect_right(offs, c)) - 1,
                             head, name))
    return tuple(pieces)


def _line_starts(src: bytes, a: int, b: int):
    """Offsets of the lines starting in ``src[a:b]``."""
    i = a
    while i < b:
        yield i
        nl = src.find(b"\n", i, b)
        if nl < 0:
            return
        i = nl + 1


_OFFSETS_MEMO: "LRUCache[int, tuple]" = LRUCache(8)


def _line_offsets(src: bytes):
    """Row -> byte offset of its start (the end of the text last). The last few answers are kept
    by object (a re-parse's new text is the next re-parse's old text)."""
    return _by_text(_OFFSETS_MEMO, id(src), src, lambda: _compute_offsets(src))


def _compute_offsets(src: bytes):
    import numpy as np

    offs = np.concatenate(([0], np.flatnonzero(np.frombuffer(src, dtype=np.uint8) == 10) + 1))
    if offs[-1] != len(src):
        offs = np.append(offs, len(src))
    return offs      # row -> byte offset of its start (and the end of the text last)


def reparse(parser, old_src: bytes, old_tree, new_src: bytes):
    """Parse ``new_src`` incrementally from ``old_tree`` (the tree of ``old_src``): the line
    edits between the two texts (zero-context diff) are applied to a copy of the tree, last hunk
    first, so each edit's positions are valid in the partly edited text."""
    tree = old_tree.copy()
    o_off, n_off = _line_offsets(old_src), _line_offsets(new_src)
    o_last, n_last = len(o_off) - 1, len(n_off) - 1
    hunks = diff_hunks(old_src, new_src)
    for old_start, old_lines, new_start, new_lines in reversed(hunks):
        row = old_start if old_lines == 0 else old_start - 1
        nrow = new_start if new_lines == 0 else new_start - 1
        row, nrow = min(row, o_last), min(nrow, n_last)
        start = int(o_off[row])
        old_end = int(o_off[min(row + old_lines, o_last)])
        new_len = int(n_off[min(nrow + new_lines, n_last)] - n_off[nrow])
        tree.edit(start_byte=start, old_end_byte=old_end, new_end_byte=start + new_len,
                  start_point=(row, 0), old_end_point=(row + old_lines, 0), new_end_point=(row + new_lines, 0))
    return parser.parse(new_src, tree)
