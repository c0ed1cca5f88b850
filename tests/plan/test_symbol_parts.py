"""Symbols by top-level parts (Python, MLIR) give the whole-file answers, at the cost of the parts."""
from __future__ import annotations

import random
import re

from bot.plan.symbol_index import SymbolIndex
from bot.plan.symbols import PART_SPLIT, TOP_LEVEL, _python_long_strings, parser_for, source_symbols, top_level_parts, tree_symbols

_TREES: dict[tuple[bytes, str], object] = {}


def parsed(text: bytes, lang: str):
    """The root of ``text``'s tree (parsed once per test module: a row-by-row check asks often)."""
    if (text, lang) not in _TREES:
        _TREES[(text, lang)] = parser_for(lang).parse(text)
    return _TREES[(text, lang)].root_node


def whole(src: bytes, lang: str, ranges) -> frozenset[str]:
    return tree_symbols(parsed(src, lang), lang, ranges)


class Parts:
    """A ``parse_part`` that records the texts it was asked to parse."""

    def __init__(self):
        self.texts: list[bytes] = []

    def __call__(self, text: bytes, lang: str):
        self.texts.append(text)
        return parsed(text, lang)


def python_module(methods: int = 250) -> bytes:
    """A Python module with the shapes parts must get right: imports, stacked and multi-line
    decorators, a top-level statement between definitions, a triple-quoted string holding a
    column-0 ``def`` after a blank line, a nested function, and one class of more than
    ``MAX_SYMBOL_LINES`` rows and ``PART_SPLIT`` bytes (cut into methods)."""
    out = ["import os\nimport pytest\n\n\nX = 1\n\n\n"]
    out.append('SRC = """\nimport triton\n\n\ndef kernel_in_a_string(x):\n    return x\n"""\n\n\n')
    for i in range(6):
        out.append(f"@pytest.mark.parametrize('n', [\n    1,\n    2,\n])\n@pytest.mark.slow\ndef test_{i}(n):\n"
                   f"    def inner():\n        return n + {i}\n    # a comment\n    return inner()\n\n\n")
        if i == 2:
            out.append("Y = [\n    'def not_a_def',\n]\n\n\n")
    out.append("class Big:\n    '''A class of many methods.'''\n\n    attr = 3\n\n")
    for i in range(methods):
        out.append(f"    @property\n    def m{i}(self):\n        '''Method {i}.\n\n        def fake(): text\n        '''\n"
                   f"        x = {i}\n        y = x * 2\n        return x + y\n\n")
    out.append('    def with_doc(self):\n        """Looks like a method at the class body\'s indentation:\n\n'
               '    def fake_method(self):\n        pass\n        """\n        return 5\n\n')
    out.append("    def last(self):\n        return 0\n\n\nclass Small:\n    def a(self):\n        return 1\n\n\n"
               "def tail():\n    return 2\n")
    return "".join(out).encode()


def test_python_parts_start_at_top_level_definitions_outside_strings():
    src = python_module(methods=2)
    starts = top_level_parts(src, "python")
    heads = [src[s:src.index(b"\n", s)].decode() for s in starts[1:]]
    assert heads == ["@pytest.mark.parametrize('n', ["] * 6 + ["class Big:", "class Small:", "def tail():"]
    assert b"def kernel_in_a_string" not in b"".join(src[s:s + 40] for s in starts)


def test_python_symbols_by_parts_equal_the_whole_file_for_every_row():
    src = python_module()
    assert len(src) > 2 * PART_SPLIT
    rows = src.count(b"\n")
    for row in range(1, rows + 2):
        got = source_symbols(src, "python", [(row, 1)], parse_part=Parts())
        assert got == whole(src, "python", [(row, 1)]), row
    rnd = random.Random(7)
    for _ in range(200):            # hunks across parts and pieces, several per change
        ranges = [(rnd.randint(1, rows), rnd.randint(0, 30)) for _ in range(rnd.randint(1, 4))]
        assert source_symbols(src, "python", ranges, parse_part=Parts()) == whole(src, "python", ranges), ranges


def test_a_method_of_a_large_class_is_parsed_alone_and_named_by_its_class():
    src = python_module()
    row = src[:src.index(b"def m40(")].count(b"\n") + 1 + 6      # ``x = 40`` (1-based row)
    parts = Parts()
    assert source_symbols(src, "python", [(row, 1)], parse_part=parts) == {"Big.m40"}
    assert len(parts.texts) == 1 and parts.texts[0].startswith(b"class Big:\n    @property\n    def m40(self)")
    assert len(parts.texts[0]) < 300
    attr = src[:src.index(b"    attr = 3")].count(b"\n") + 1      # the class's own row: the class is too long
    assert source_symbols(src, "python", [(attr, 1)], parse_part=Parts()) == {TOP_LEVEL} == whole(src, "python", [(attr, 1)])


def test_a_string_that_looks_like_a_method_does_not_cut_the_class():
    src = python_module()
    row = src[:src.index(b"        return 5\n")].count(b"\n") + 1
    parts = Parts()
    assert source_symbols(src, "python", [(row, 1)], parse_part=parts) == {"Big.with_doc"}
    assert len(parts.texts) == 1 and parts.texts[0].startswith(b"class Big:\n    def with_doc(self):")
    assert not parsed(parts.texts[0], "python").has_error


def test_a_part_that_does_not_parse_cleanly_is_answered_from_the_whole_file():
    src = python_module(methods=2).replace(b"def tail():\n    return 2\n", b"def tail(:\n    return 2\n")
    row = src.count(b"\n")
    parts = Parts()
    assert source_symbols(src, "python", [(row, 1)], parse_part=parts) == whole(src, "python", [(row, 1)])
    assert parts.texts and parsed(parts.texts[-1], "python").has_error


def mlir_splits(n: int = 12) -> bytes:
    out = ["// RUN: triton-opt %s -split-input-file | FileCheck %s\n\n"]
    for i in range(n):
        out.append(f"#blocked{i} = #ttg.blocked<{{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}}>\n"
                   f"module attributes {{\"ttg.num-warps\" = 4 : i32}} {{\n"
                   f"  // CHECK-LABEL: @k{i}\n  tt.func @k{i}(%arg0: i32) {{\n"
                   f"    %0 = arith.addi %arg0, %arg0 : i32\n    tt.return\n  }}\n}}\n\n// -----\n\n")
    return "".join(out).encode()


def test_mlir_splits_are_parts_with_the_whole_file_answers():
    src = mlir_splits()
    assert len(top_level_parts(src, "mlir")) == 13
    rows = src.count(b"\n")
    for row in range(1, rows + 2):
        parts = Parts()
        got = source_symbols(src, "mlir", [(row, 1)], parse_part=parts)
        assert got == whole(src, "mlir", [(row, 1)]), row
        assert sum(map(len, parts.texts)) * 4 <= len(src)
    row = src[:src.index(b"arith.addi %arg0, %arg0 : i32\n    tt.return\n  }\n}\n\n// -----\n\n#blocked8")].count(b"\n") + 1
    assert source_symbols(src, "mlir", [(row, 1)], parse_part=Parts()) == {"@k7"}


def test_other_languages_and_no_part_parser_parse_the_whole_file():
    src = mlir_splits()
    assert top_level_parts(b"def A {\n  int x = 1;\n}\n\ndef B {\n  int x = 2;\n}\n", "tablegen") == [0]
    assert source_symbols(src, "mlir", [(5, 1)]) == whole(src, "mlir", [(5, 1)])


def test_the_index_parses_parts_and_answers_as_the_whole_file_index(tmp_path):
    import pygit2

    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    sig = pygit2.Signature("t", "t@example.com", 1_700_000_000, 0)
    v1 = python_module()
    v2 = v1.replace(b"x = 40\n", b"x = 40 + 1\n").replace(b"return inner()\n\n\nY", b"return inner() + 1\n\n\nY")
    v3 = v2.replace(b"def tail():\n    return 2\n", b"def tail():\n    return 3\n")
    parent, shas = [], []
    for i, text in enumerate((v1, v2, v3)):
        tb = repo.TreeBuilder()
        tb.insert("mod.py", repo.create_blob(text), pygit2.GIT_FILEMODE_BLOB)
        sha = repo.create_commit(None, sig, sig, f"v{i}", tb.write(), parent)
        parent, shas = [sha], shas + [str(sha)]
    from bot.git.repo import commit_info

    infos = [commit_info(repo, s, renames=False) for s in shas[1:]]
    by_parts, by_file = SymbolIndex(repo), SymbolIndex(repo, parts=False)
    for c in infos:
        fc = c.files[0]
        assert by_parts.file_symbols(c, fc) == by_file.file_symbols(c, fc)
    assert by_parts.file_symbols(infos[0], infos[0].files[0]) == {"Big.m40", "test_2"}
    assert by_parts.part_parses > 0 and by_file.part_parses == 0


def test_a_large_change_is_parsed_by_parts_only_when_no_earlier_tree_of_the_file_is_at_hand():
    from bot.plan.symbols import PART_SHARE, PART_SHARE_FRESH

    src = mlir_splits(12)
    starts = top_level_parts(src, "mlir")
    rows = [src[:s].count(b"\n") + 2 for s in starts[1:5]]      # a row in each of four of the 13 parts
    share = sum(starts[k + 1] - starts[k] for k in range(1, 5)) / len(src)
    assert 1 / PART_SHARE < share <= 1 / PART_SHARE_FRESH
    ranges = [(r, 1) for r in rows]
    expected = whole(src, "mlir", ranges)
    parts = Parts()
    assert source_symbols(src, "mlir", ranges, parse_part=parts) == expected and parts.texts == []
    assert source_symbols(src, "mlir", ranges, parse_part=parts, part_share=lambda s, lg: PART_SHARE_FRESH) == expected
    assert len(parts.texts) == 4

    class Index(SymbolIndex):      # the index's choice: no tree of the path yet, then one
        def __init__(self):
            super().__init__(repo=None)

    index = Index()
    assert index._part_share(src, "mlir", "t.mlir") == PART_SHARE_FRESH
    index._parse(src, "mlir", "t.mlir")
    assert index._part_share(src + b"\n", "mlir", "t.mlir") == PART_SHARE


def pad(n: int) -> str:
    """``n`` small top-level functions: parts then hold a small share of the text."""
    return "".join(f"\n\ndef pad{i}():\n    return {i}\n" for i in range(n))


def differing_rows(src: bytes, lang: str) -> list[int]:
    rows = src.count(b"\n") + 1
    return [r for r in range(1, rows + 1)
            if source_symbols(src, lang, [(r, 1)], parse_part=Parts()) != whole(src, lang, [(r, 1)])]


def test_strings_the_lexer_must_read_whole_hide_their_lines():
    # a short string continued by a backslash; then a docstring whose text looks like a def
    continued = 'x = "abc\\\ndef"""\n\ndef f():\n    """\n\ndef g():\n    return \'\'\'\n    """\n    return 1  # \'\'\'\n'
    # PEP 701: a triple-quoted string inside an f-string's replacement field
    nested = 'x = f"{"""\n\ndef g(): pass\n"""}"  # """\n'
    # a raw string's escaped quote, a comment holding a triple quote, both quote kinds
    mixed = 'a = r"\\""  # """\nb = \'\'\' "\n\ndef h():\n    pass\n\'\'\'\n'
    for head in (continued, nested, mixed):
        src = (head + pad(60)).encode()
        assert whole(src, "python", [(1, 1)]) is not None and not parsed(src, "python").has_error
        assert differing_rows(src, "python") == [], head


def test_a_decorator_and_its_definition_stay_in_one_part_across_blank_lines():
    body = "".join(f"    x{i} = {i}\n" for i in range(396))     # decorated: 402 rows; the def alone: 397
    src = ("import functools\n\n@functools.cache\n\n\n\n\ndef big():\n" + body + "    return 0\n" + pad(3000)).encode()
    assert whole(src, "python", [(20, 1)]) == {TOP_LEVEL}
    assert source_symbols(src, "python", [(20, 1)], parse_part=Parts()) == {TOP_LEVEL}


def reference_python_starts(src: bytes) -> list[int]:
    """The Python part starts by the rule of ``top_level_parts`` read literally: every top-level
    definition line after a blank line, outside long strings, whose previous column-0 statement
    (a line of code that is not a closing bracket) is not a decorator."""
    strings = _python_long_strings(src)
    statements = [m.start() + 1 for m in re.finditer(rb"\n[^\s#)\]}]", src)]
    out = [0]
    for m in re.finditer(rb"\n[ \t\f\r]*\n(?=@|def[ \t]|class[ \t]|async[ \t]+def[ \t])", src):
        s = m.end()
        before = [t for t in statements if t < s]
        if any(a < s < b for a, b in strings) or (before and src[before[-1]:before[-1] + 1] == b"@"):
            continue
        out.append(s)
    return out


def test_python_parts_never_start_between_a_decorator_and_its_definition():
    pieces = ["@dec\n", "@dec(\n    1,\n)\n", "\n", "\n\n", "# note\n", "    # indented note\n", "x = 1\n",
              "def f():\n    return 1\n", "class C:\n    pass\n", "async def g():\n    pass\n", ")\n",
              "\f\n", "  \n", '"""\n\ndef in_string():\n"""\n']
    rnd = random.Random(7)
    texts = [("".join(rnd.choice(pieces) for _ in range(rnd.randrange(2, 30)))).encode() for _ in range(3000)]
    src = b"x = 1\n@a\n\n@b\n\n# c\n\ndef f():\n    pass\n\n\ndef g():\n    pass\n"
    for text in texts + [b"@dec\n\ndef f():\n    pass\n", b"\n@dec\n\n\ndef f():\n    pass\n", src]:
        assert top_level_parts(text, "python") == reference_python_starts(text), text
    assert top_level_parts(src, "python") == [0, src.index(b"def g")]


def test_cpp_labels_and_access_specifiers_after_blank_lines_start_no_part():
    src = (b"int f() {\n  int x = 0;\n\nagain:\n  x++;\n}\n\nclass A {\n\npublic:\n  int y;\n\nprivate :\n};\n\n"
           b"std::vector<int> g();\n\nlabel:\n\n~A() {}\n\n// c\n\n/* d */\n\n  \nk\n")
    heads = [src[s:].split(b"\n", 1)[0] for s in top_level_parts(src, "cpp")]
    assert heads == [b"int f() {", b"class A {", b"std::vector<int> g();", b"~A() {}", b"// c", b"/* d */", b"k"]


def test_code_after_a_form_feed_ends_a_class():
    methods = "".join(f"    def m{i}(self):\n        return {i} + 0x{'f' * 120}\n\n" for i in range(120))
    tail = "\fX = [\n" + "".join(f"    {i},\n" for i in range(60)) + "    ]\n"
    src = ("import os\n\n\nclass C:\n    '''doc'''\n\n" + methods + tail + pad(3000)).encode()
    assert whole(src, "python", [(5, 1)]) == {"C"}                # the class is < 400 rows
    assert source_symbols(src, "python", [(5, 1)], parse_part=Parts()) == {"C"}


def test_mlir_aliases_of_the_next_split_are_not_in_the_function_before():
    # tree-sitter-mlir reads ``#l = …`` after a function as a trailing attribute of it, across
    # ``// -----`` (no parse error): the whole file names those lines after ``@a``; a split
    # parsed alone does not
    src = ("// RUN: triton-opt %s -split-input-file\ntt.func @a() {\n  tt.return\n}\n\n// -----\n\n// next test\n"
           "#l = #ttg.shared_memory\ntt.func @b() {\n  tt.return\n}\n"
           + "".join(f"\n// -----\n\ntt.func @pad{i}() {{\n  tt.return\n}}\n" for i in range(30))).encode()
    row = src[:src.index(b"#l = ")].count(b"\n") + 1
    assert not parsed(src, "mlir").has_error and whole(src, "mlir", [(row, 1)]) == {"@a"}
    assert source_symbols(src, "mlir", [(row, 1)], parse_part=Parts()) == {TOP_LEVEL}


def test_only_lits_own_marker_splits_mlir():
    src = b"module @m {\n// ------------- a banner\ntt.func @f() {\n  tt.return\n}\n}\n// -----\ntt.func @g() {\n}\n"
    assert top_level_parts(src, "mlir") == [0, src.index(b"// -----\n")]


def cpp_module(functions: int = 40) -> bytes:
    """A C++ file in LLVM's style with the shapes C++ parts must get right: includes, nested and
    anonymous namespaces (not indented) closed by ``} // namespace`` lines, a class whose access
    specifiers sit at column 0 after blank lines, a pattern struct with an out-of-line method, a
    template, a doc comment, a function body holding a column-0 comment and a preprocessor block
    after blank lines, a function-like macro."""
    out = ['#include "mlir/IR/PatternMatch.h"\n#include <vector>\n\nusing namespace mlir;\n\n',
           "namespace mlir {\nnamespace triton {\n\nnamespace {\n\n",
           "class Counter {\npublic:\n  Counter() = default;\n\npublic:\n  int next() {\n    return n++;\n  }\n\n"
           "private:\n  int n = 0;\n};\n\n",
           "struct FoldPattern : public OpRewritePattern<AddOp> {\n  using OpRewritePattern::OpRewritePattern;\n\n"
           "  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override;\n};\n\n"
           "} // namespace\n\n",
           "LogicalResult FoldPattern::matchAndRewrite(AddOp op, PatternRewriter &rewriter) const {\n"
           "  if (!op)\n    return failure();\n\n// a note at column 0 inside a body\n  rewriter.eraseOp(op);\n\n"
           "#ifdef TRITON_DEBUG\n  op.dump();\n#endif\n  return success();\n}\n\n",
           "/// Doc comment of a template.\ntemplate <typename T>\nstatic T twice(T x) {\n  return x + x;\n}\n\n",
           "#define FORKSYNC_CHECK(x)                                                    \\\n  do {                    "
           "                                                       \\\n    if (!(x))                                "
           "                                    \\\n      return failure();                                        "
           "              \\\n  } while (0)\n\n"]
    for i in range(functions):
        out.append(f"int helper{i}(int a, int b) {{\n  int c = a * {i};\n  return c + b;\n}}\n\n")
    out.append("} // namespace triton\n} // namespace mlir\n")
    return "".join(out).encode()


def test_cpp_parts_start_at_column_zero_definitions_and_namespace_lines():
    src = cpp_module(3)
    heads = [src[s:].split(b"\n", 1)[0].decode() for s in top_level_parts(src, "cpp")]
    assert heads == ['#include "mlir/IR/PatternMatch.h"', "using namespace mlir;", "namespace mlir {",
                     "namespace triton {", "", "namespace {", "", "class Counter {", "struct FoldPattern : public OpRewritePattern<AddOp> {",
                     "} // namespace", "", "LogicalResult FoldPattern::matchAndRewrite(AddOp op, PatternRewriter &rewriter) const {",
                     "// a note at column 0 inside a body", "/// Doc comment of a template.",
                     "int helper0(int a, int b) {", "int helper1(int a, int b) {", "int helper2(int a, int b) {",
                     "} // namespace triton", "} // namespace mlir"]
    assert not parsed(src, "cpp").has_error


def test_cpp_symbols_by_parts_equal_the_whole_file_for_every_row():
    src = cpp_module()
    assert differing_rows(src, "cpp") == []
    row = src[:src.index(b"  int c = a * 7;")].count(b"\n") + 1
    parts = Parts()
    assert source_symbols(src, "cpp", [(row, 1)], parse_part=parts) == {"helper7"}
    assert parts.texts == [b"int helper7(int a, int b) {\n  int c = a * 7;\n  return c + b;\n}\n\n"]
    inside = src[:src.index(b"  rewriter.eraseOp(op);")].count(b"\n") + 1
    parts = Parts()
    assert source_symbols(src, "cpp", [(inside, 1)], parse_part=parts) == {"FoldPattern::matchAndRewrite"}
    assert parsed(parts.texts[-1], "cpp").has_error      # the column-0 comment cut the body: whole file
    method = src[:src.index(b"    return n++;")].count(b"\n") + 1
    assert source_symbols(src, "cpp", [(method, 1)], parse_part=Parts()) == {"Counter::next"}
