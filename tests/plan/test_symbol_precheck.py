"""The textual pre-check of shared symbols (``may_share_symbols``) never says "none shared" wrongly
(against the parser's own definitions: ``errors_unknown=False``)."""
from __future__ import annotations

import random

from bot.model import FileChange
from bot.plan.symbols import MAX_SYMBOL_LINES, TOP_LEVEL, may_share_symbols, symbols_of_change


def python_text(rnd: random.Random, n: int) -> str:
    """A Python module of ``n`` pieces: functions, classes with methods, long functions, decorators,
    strings holding ``def`` lines, non-ASCII names, statements at column 0."""
    out = ["import os\n\n\n"]
    for i in range(n):
        k = rnd.randrange(11)
        if k == 0:
            out.append(f"def f{i % 5}(x):\n    y = x + {i}\n    return y\n\n\n")
        elif k == 1:
            out.append(f"class C{i % 3}:\n    def m{i % 4}(self):\n        return {i}\n\n    def n(self):\n"
                       f"        return f{i % 5}\n\n\n")
        elif k == 2:       # longer than MAX_SYMBOL_LINES: its rows are file scope
            out.append(f"def long{i}():\n" + "".join(f"    a{j} = {j}\n" for j in range(MAX_SYMBOL_LINES + 5)) + "\n\n")
        elif k == 3:
            out.append(f"@decorator\ndef g{i % 4}():\n    '''\ndef fake{i}():\n    '''\n    return 1\n\n\n")
        elif k == 4:
            out.append(f"def naïve{i % 2}():\n    return 'é'\n\n\n")
        elif k == 5:
            out.append(f"X{i} = [\n    {i},\n]\n\n\n")
        elif k == 6:
            out.append(f"def outer{i % 3}():\n    def inner():\n        return {i}\n    return inner\n\n\n")
        elif k == 7:       # the same nested name under several outer definitions, decorated
            out.append(f"@mark({i})\n@other\ndef test{i % 4}(n):\n    @jit\n    def kernel(x):\n"
                       f"        return x + {i}\n\n    return kernel\n\n\n")
        elif k == 8:       # definitions inside a top-level statement that is not a definition
            out.append(f"if FLAG{i % 2}:\n    def guarded{i % 3}():\n        return {i}\n\n    class G{i % 2}:\n"
                       f"        def m{i % 4}(self):\n            return 0\n\n\n")
        elif k == 9:       # a string that spans lines and holds column-0 ``def``/``class`` lines
            out.append(f"class K{i % 3}:\n    doc = '''\nclass K{(i + 1) % 3}:\ndef m{i % 4}(self):\n'''\n\n"
                       f"    def m{i % 4}(self):\n        return {i}\n\n\n")
        else:              # a line continued by a backslash after ``def``; ``async for`` at column 0
            out.append(f"def \\\n    spaced{i % 2}(x):\n    return x\n\n\nasync def coro{i % 2}():\n"
                       f"    return [y\nasync for y in z]\n\n\n")
    return "".join(out)


def cpp_text(rnd: random.Random, n: int) -> str:
    out = ["#include <vector>\n\nnamespace mlir {\n\n"]
    for i in range(n):
        k = rnd.randrange(6)
        if k == 0:
            out.append(f"int helper{i % 5}(int a) {{\n  return a + {i};\n}}\n\n")
        elif k == 1:
            out.append(f"struct S{i % 3} {{\n  int get() {{\n    return {i};\n  }}\n}};\n\n")
        elif k == 2:
            out.append(f"bool operator==(const S0 &a, const S0 &b) {{\n  return {i} == 0;\n}}\n\n")
        elif k == 3:
            out.append(f"template <typename T> int tpl{i % 2}(T t) {{\n  return t;\n}}\n\n")
        elif k == 4:
            out.append(f"void Pat{i % 2}::matchAndRewrite() const {{\n  int x = {i};\n}}\n\n")
        else:
            out.append(f"struct {{\n  int v{i};\n}} anon{i};\n\n")
    out.append("} // namespace mlir\n")
    return "".join(out)


def edited(rnd: random.Random, text: str) -> str:
    """``text`` with a few lines replaced, inserted or deleted."""
    lines = text.splitlines(keepends=True)
    for _ in range(rnd.randrange(1, 4)):
        at = rnd.randrange(len(lines))
        k = rnd.randrange(3)
        if k == 0:
            lines[at] = lines[at].rstrip("\n") + "  # changed\n" if lines[at].strip() else "z = 1\n"
        elif k == 1:
            lines.insert(at, "    w = 2\n")
        elif len(lines) > 1:
            del lines[at]
    return "".join(lines)


def check(path: str, make, seed: int, rounds: int) -> tuple[int, int]:
    """``(said no, cases)``: for pairs of changes to one file, the pre-check against the symbols
    of one change, asked about the other's names (and some names of neither)."""
    rnd = random.Random(seed)
    no = cases = 0
    for _ in range(rounds):
        base = make(rnd, rnd.randrange(3, 40))
        changes = []
        for _ in range(2):
            new = edited(rnd, base)
            fc = FileChange(path, "M")
            got = symbols_of_change(fc, base.encode(), new.encode(), errors_unknown=False)
            changes.append((fc, base.encode(), new.encode(), got))
        (fa, oa, na, mine), (fb, ob, nb, theirs) = changes
        assert mine is not None and theirs is not None
        for names in (mine, theirs, mine | {"f1", "C0.n", "mlir::S1::get"}, {TOP_LEVEL},
                      {"test1.kernel", "test2.kernel", "C1.m1", "K0.m0", "G1.m2", "guarded0", "spaced1", "coro1"}):
            said = may_share_symbols(fb, ob, nb, names)
            cases += 1
            if not said:
                no += 1
                assert not (names & theirs) - {TOP_LEVEL}, (names, theirs)
    return no, cases


def test_python_never_says_no_where_a_symbol_is_shared():
    no, cases = check("pkg/mod.py", python_text, 1, 150)
    assert 0 < no < cases          # it does rule some out, and not all


def test_cpp_never_says_no_where_a_symbol_is_shared():
    no, cases = check("lib/Ops.cpp", cpp_text, 2, 150)
    assert 0 < no < cases


def test_names_that_end_without_a_word_character_and_unreadable_texts_are_maybe():
    old = b"bool operator==(int a, int b) {\n  return a == b;\n}\n"
    new = b"bool operator==(int a, int b) {\n  return a != b;\n}\n"
    fc = FileChange("a.cpp", "M")
    assert symbols_of_change(fc, old, new) == {"operator=="}
    assert may_share_symbols(fc, old, new, {"operator=="})
    assert may_share_symbols(fc, old, new, {"tpl<int>"})
    assert may_share_symbols(fc, None, new, {"x"})                       # the old text is missing
    assert may_share_symbols(FileChange("a.txt", "M"), b"a\n", b"b\n", {"x"})   # no parser
    assert not may_share_symbols(fc, old, new, {"unrelated"})
    assert not may_share_symbols(fc, old, new, {TOP_LEVEL})


def test_a_name_far_from_every_change_is_ruled_out_and_a_near_one_is_not():
    far = "def far():\n    return 0\n\n\n" + "".join(f"X{i} = {i}\n" for i in range(MAX_SYMBOL_LINES + 10))
    old = (far + "\n\ndef near():\n    return 1\n").encode()
    new = (far + "\n\ndef near():\n    return 2\n").encode()
    fc = FileChange("m.py", "M")
    assert symbols_of_change(fc, old, new) == {"near"}
    assert not may_share_symbols(fc, old, new, {"far"})
    assert may_share_symbols(fc, old, new, {"near"})
    # the same last word, but no ``Other`` defined around the change: ruled out in Python ...
    assert not may_share_symbols(fc, old, new, {"Other.near"})
    cold = b"struct Other {\n  int near() {\n    return 1;\n  }\n};\n"
    cnew = cold.replace(b"return 1", b"return 2")
    cfc = FileChange("m.cpp", "M")
    assert symbols_of_change(cfc, cold, cnew) == {"Other::near"}
    assert may_share_symbols(cfc, cold, cnew, {"Mine::near"})            # ... and a maybe in C++


def test_the_same_nested_name_under_another_outer_definition_is_ruled_out():
    # Triton's tests define a ``kernel`` inside many test functions; classes share method names
    old = (b"import triton\n\n\n@pytest.mark.parametrize('n', [1])\ndef test_a(n):\n    @triton.jit\n"
           b"    def kernel(X):\n        pass\n\n    kernel[(1,)](n)\n\n\n"
           b"def test_b(n):\n    @triton.jit\n    def kernel(X):\n        x = 1\n\n    kernel[(1,)](n)\n\n\n"
           b"class A:\n    def _set_name(self):\n        return 1\n\n\nclass B:\n    def _set_name(self):\n"
           b"        return 2\n")
    fc = FileChange("test_x.py", "M")
    new = old.replace(b"        x = 1\n", b"        x = 2\n").replace(b"        return 2\n", b"        return 3\n")
    assert symbols_of_change(fc, old, new) == {"test_b.kernel", "B._set_name"}
    assert not may_share_symbols(fc, old, new, {"test_a.kernel", "A._set_name"})
    assert may_share_symbols(fc, old, new, {"test_b.kernel"})
    assert may_share_symbols(fc, old, new, {"B._set_name"})
    assert not may_share_symbols(fc, old, new, {"test_b.kernel.inner"})
    # a changed decorator row belongs to the definition below it
    new = old.replace(b"def test_b(n):\n    @triton.jit\n", b"def test_b(n):\n    @triton.jit(debug=True)\n")
    assert symbols_of_change(fc, old, new) == {"test_b.kernel"}
    assert may_share_symbols(fc, old, new, {"test_b.kernel"})
    new = old.replace(b"@pytest.mark.parametrize('n', [1])\n", b"@pytest.mark.parametrize('n', [2])\n")
    assert symbols_of_change(fc, old, new) == {"test_a"}
    assert may_share_symbols(fc, old, new, {"test_a"})
    assert not may_share_symbols(fc, old, new, {"test_b"})
    # a column-0 ``def`` inside a short string continued by a backslash starts no statement
    old = b'def outer():\n    x = "abc\\\ndef fake(): pass"\n    y = 1\n'
    new = old.replace(b"y = 1", b"y = 2")
    assert symbols_of_change(fc, old, new) == {"outer"}
    assert may_share_symbols(fc, old, new, {"outer"})
    assert may_share_symbols(fc, old.replace(b"\n", b"\r\n"), new.replace(b"\n", b"\r\n"), {"outer"})


def test_a_non_ascii_name_is_found_in_the_text():
    old = "def naïve():\n    return 'é'\n".encode()
    new = "def naïve():\n    return 'è'\n".encode()
    fc = FileChange("m.py", "M")
    assert symbols_of_change(fc, old, new) == {"naïve"}
    assert may_share_symbols(fc, old, new, {"naïve"})


def test_a_changed_decorator_of_a_definition_named_on_a_continued_line_may_share_its_name():
    # the definition below a changed decorator is taken in up to its name, wherever a backslash puts it
    old = b"x = 1\n\n\n@deco(1)\ndef \\\n        named():\n    return 1\n\n\ndef other():\n    return 2\n"
    new = old.replace(b"@deco(1)", b"@deco(2)")
    fc = FileChange("m.py", "M")
    assert symbols_of_change(fc, old, new) == {"named"}
    assert may_share_symbols(fc, old, new, {"named"})
    assert not may_share_symbols(fc, old, new, {"other"})
    crlf = (old.replace(b"\n", b"\r\n"), new.replace(b"\n", b"\r\n"))
    assert symbols_of_change(fc, *crlf) == {"named"}
    assert may_share_symbols(fc, *crlf, {"named"})


def test_commit_overlap_asks_no_parse_of_a_chain_commit_that_shares_no_symbol(tmp_path):
    import pygit2

    from bot.git.repo import commit_info
    from bot.plan.chains import Chain, commit_overlap
    from bot.plan.symbol_index import SymbolIndex

    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    sig = pygit2.Signature("t", "t@example.com", 1_700_000_000, 0)
    pad = "".join(f"X{i} = {i}\n" for i in range(MAX_SYMBOL_LINES + 10))
    v0 = "def first():\n    return 0\n\n\n" + pad + "\n\ndef second():\n    return 0\n"
    v1 = v0.replace("def first():\n    return 0", "def first():\n    return 1")
    v2 = v1.replace("def second():\n    return 0", "def second():\n    return 2")
    v3 = v2.replace("def second():\n    return 2", "def second():\n    return 3")
    parent, infos = [], []
    for i, text in enumerate((v0, v1, v2, v3)):
        tb = repo.TreeBuilder()
        tb.insert("mod.py", repo.create_blob(text.encode()), pygit2.GIT_FILEMODE_BLOB)
        sha = repo.create_commit(None, sig, sig, f"v{i}", tb.write(), parent)
        parent = [sha]
        infos.append(commit_info(repo, str(sha), renames=False))
    c1, c2, c3 = infos[1:]
    index = SymbolIndex(repo)
    chain = Chain("chain-1", 1, commits=[c1], by_path={"mod.py": [c1]})
    assert commit_overlap(c2, chain, index) is None
    assert index.parsed_files == 1                   # c2's own file only: c1 touches `first`, far away
    assert index(c1, "mod.py") == {"first"}          # what the pre-check ruled out
    chain = Chain("chain-2", 2, commits=[c2], by_path={"mod.py": [c2]})
    assert commit_overlap(c3, chain, index) == f"mod.py (second) like {c2.sha[:12]}"


def test_a_quote_in_an_f_string_format_spec_hides_no_long_string():
    # ``'>10`` is a format spec (fill ``'``, right-aligned), not a string: the long string opened
    # after it holds ``}"`` and a column-0 ``def`` line, which starts no statement
    old = (b"def outer(x):\n    s = f\"{x:'>10}\" + '''\n}\"\ndef fake():\n'''\n    return s\n\n\n"
           b"def other():\n    return f\"{x!r:'^{width}}\" + '''\ndef fake2():\n'''\n")
    new = old.replace(b"    return s\n", b"    return s + s\n")
    fc = FileChange("m.py", "M")
    assert symbols_of_change(fc, old, new) == {"outer"}
    assert may_share_symbols(fc, old, new, {"outer"})
    assert not may_share_symbols(fc, old, new, {"fake2"})
    new = old.replace(b"+ '''\ndef fake2", b"+ ''' \ndef fake2")
    assert symbols_of_change(fc, old, new) == {"other"}
    assert may_share_symbols(fc, old, new, {"other"})


def test_a_short_string_continued_by_a_backslash_before_crlf_hides_no_long_string():
    # the continued string holds a triple quote: the long string opens after it, and its
    # column-0 ``def`` line starts no statement (CRLF line ends, as LF ones)
    for prefix in (b"", b"f", b"r"):
        old = (b'def outer(x):\n    s = ' + prefix + b'"abc \\\n\'\'\' " + \'\'\'\ndef fake():\n\'\'\'\n'
               b'    return s\n').replace(b"\n", b"\r\n")
        new = old.replace(b"    return s\r\n", b"    return s + s\r\n")
        fc = FileChange("m.py", "M")
        assert symbols_of_change(fc, old, new) == {"outer"}, prefix
        assert may_share_symbols(fc, old, new, {"outer"}), prefix


def test_a_change_whose_cpp_symbols_are_unknown_is_judged_the_same_cached_or_not(tmp_path):
    """A chain commit whose C++ change lies in a definition tree-sitter recovered from errors has
    unknown symbols (file level). Whether the index has computed them yet (a re-plan: cached) or
    not (a plan from scratch: the text search first) must not change the link: otherwise a re-plan
    after a landing differs from the plan from scratch."""
    import pygit2

    from bot.git.repo import commit_info
    from bot.plan.chains import Chain, commit_overlap
    from bot.plan.symbol_index import SymbolIndex
    from tests.plan.test_symbols import PASSES_CC, TYPED_WRAPPERS

    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    sig = pygit2.Signature("t", "t@example.com", 1_700_000_000, 0)
    pad = "".join(f"int pad_{i} = {i};\n" for i in range(MAX_SYMBOL_LINES + 10))
    tail = "\nint far_away(int x) {\n  return x;\n}\n"
    v0 = PASSES_CC.format(wrappers=TYPED_WRAPPERS, c="", include="") + pad + tail
    v1 = v0.replace("  using namespace mlir;\n", "  using namespace mlir::triton;\n", 1)   # in init_passes_a
    v2 = v1.replace("  return x;\n", "  return x + 1;\n")
    parent, infos = [], []
    for i, text in enumerate((v0, v1, v2)):
        tb = repo.TreeBuilder()
        tb.insert("passes.cc", repo.create_blob(text.encode()), pygit2.GIT_FILEMODE_BLOB)
        sha = repo.create_commit(None, sig, sig, f"v{i}", tb.write(), parent)
        parent = [sha]
        infos.append(commit_info(repo, str(sha), renames=False))
    c1, c2 = infos[1:]
    chain = Chain("chain-1", 1, commits=[c1], by_path={"passes.cc": [c1]})
    fresh = SymbolIndex(repo)
    assert fresh(c2, "passes.cc") == {"far_away"}
    scratch = commit_overlap(c2, chain, fresh)
    cached = SymbolIndex(repo)
    assert cached(c1, "passes.cc") is None           # in the recovered definition: unknown
    assert commit_overlap(c2, chain, cached) == scratch is None
