"""The textual pre-check of shared symbols (``may_share_symbols``) never says "none shared" wrongly."""
from __future__ import annotations

import random

from bot.model import FileChange
from bot.plan.symbols import MAX_SYMBOL_LINES, TOP_LEVEL, may_share_symbols, symbols_of_change


def python_text(rnd: random.Random, n: int) -> str:
    """A Python module of ``n`` pieces: functions, classes with methods, long functions, decorators,
    strings holding ``def`` lines, non-ASCII names, statements at column 0."""
    out = ["import os\n\n\n"]
    for i in range(n):
        k = rnd.randrange(7)
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
        else:
            out.append(f"def outer{i % 3}():\n    def inner():\n        return {i}\n    return inner\n\n\n")
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
            got = symbols_of_change(fc, base.encode(), new.encode())
            changes.append((fc, base.encode(), new.encode(), got))
        (fa, oa, na, mine), (fb, ob, nb, theirs) = changes
        assert mine is not None and theirs is not None
        for names in (mine, theirs, mine | {"f1", "C0.n", "mlir::S1::get"}, {TOP_LEVEL}):
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
    assert may_share_symbols(fc, old, new, {"Other.near"})               # the same last word: maybe


def test_a_non_ascii_name_is_found_in_the_text():
    old = "def naïve():\n    return 'é'\n".encode()
    new = "def naïve():\n    return 'è'\n".encode()
    fc = FileChange("m.py", "M")
    assert symbols_of_change(fc, old, new) == {"naïve"}
    assert may_share_symbols(fc, old, new, {"naïve"})


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
