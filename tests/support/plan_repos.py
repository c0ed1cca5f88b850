"""A scripted upstream/fork pair for the plan, predict and apply tests (real git repositories).

Upstream ``base`` holds C++, Python, MLIR and TableGen files; the fork changes ``foldMul`` in
``lib/Dialect/Ops.cpp`` and its own warp-specialization code (``lib/WS/``), and already carries
``include/util.h``. Then upstream commits, in order:

====  =====================================================  =========================
name  change                                                 expected place
====  =====================================================  =========================
u1    python/triton/language.py: ``add``                     bundle (clean)
u2    lib/Dialect/Ops.cpp: ``foldMul`` (the fork changed it)   chain u2 (conflict)
u3    lib/Dialect/Ops.cpp: ``foldAdd`` (same file, other fn)   bundle (clean)
u4    lib/Dialect/Ops.cpp: ``foldMul`` again                   chain u2 (same symbol)
u5    lib/WS/WarpSpec.cpp                                      chain u5 (divergent area)
u6    include/Ops.td: ``TT_AddOp``                             bundle (clean)
u7    test/ops.mlir: ``@add_kernel``                           bundle (clean)
u8    include/util.h, as the fork already has it              NO_OP candidate (empty)
u9    python/triton/language.py: ``add`` again (needs u1)      bundle (clean after u1)
====  =====================================================  =========================
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pygit2

from bot.config.forksync import Area
from bot.demo.repobuilder import RepoBuilder
from bot.git import repo as gitio

T0 = 1_767_225_600          # 2026-01-01T00:00:00Z

OPS_CPP = """#include "Ops.h"

namespace mlir {{
namespace triton {{

int foldAdd(int a, int b) {{
  int r = a + b;
  return r{add};
}}

int foldMul(int a, int b) {{
  int r = a * b;
  return r{mul};
}}

struct AddPattern {{
  int matchAndRewrite(int op) const {{
    return op{pat};
  }}
}};

}} // namespace triton
}} // namespace mlir
"""

LANG_PY = """import math


def add(x, y):
    return x + y{add}


def mul(x, y):
    return x * y
"""

OPS_TD = """include "mlir/IR/OpBase.td"

def TT_AddOp : TT_Op<"add", [Pure]> {{
  let summary = "{add}";
}}

def TT_MulOp : TT_Op<"mul", [Pure]> {{
  let summary = "mul";
}}
"""

OPS_MLIR = """// RUN: triton-opt %s | FileCheck %s

module {{
  tt.func @add_kernel(%arg0: i32) -> i32 {{
    %0 = arith.addi %arg0, %arg0 : i32{add}
    tt.return %0 : i32
  }}
  tt.func @mul_kernel(%arg0: i32) -> i32 {{
    %0 = arith.muli %arg0, %arg0 : i32
    tt.return %0 : i32
  }}
}}
"""

WS_CPP = """int warpSpecialize(int n) {{
  return n{ws};
}}
"""

UTIL_H = "#pragma once\nint util();\n"

AREAS = [Area(name="warp-spec", paths=["lib/WS/**"], divergent=True),
         Area(name="dialect", paths=["lib/Dialect/**", "include/**"]),
         Area(name="python", paths=["python/**"])]


def ops(add="", mul="", pat=""):
    return OPS_CPP.format(add=add, mul=mul, pat=pat)


@dataclass
class Pair:
    up: RepoBuilder
    fork: RepoBuilder
    base: str                  # upstream base commit (the merge base)
    fork_tip: str
    u: dict[str, str]          # u1..u9 → sha

    @property
    def repo(self) -> pygit2.Repository:
        return pygit2.Repository(str(self.fork.path))

    def infos(self, names=None):
        names = names or sorted(self.u, key=lambda n: int(n[1:]))
        shas = [self.u[n] for n in names]
        got = gitio.commit_infos(self.repo, shas)
        return [got[s] for s in shas]


def build_pair(tmp: Path) -> Pair:
    up = RepoBuilder.init(tmp / "upstream")
    base = up.commit("Initial import", {
        "lib/Dialect/Ops.cpp": ops(), "python/triton/language.py": LANG_PY.format(add=""),
        "include/Ops.td": OPS_TD.format(add="add"), "test/ops.mlir": OPS_MLIR.format(add=""),
        "lib/WS/WarpSpec.cpp": WS_CPP.format(ws=""), "README.md": "upstream\n"}, when=T0)
    fork = up.clone(tmp / "fork")
    fork.commit("[fork] tune foldMul", {"lib/Dialect/Ops.cpp": ops(mul=" + 0 /* fork */")}, when=T0 + 100,
                author=("Fork Dev", "dev@fork.example"))
    fork.commit("[fork] warp specialization v2", {"lib/WS/WarpSpec.cpp": WS_CPP.format(ws=" * 2"),
                                                 "include/util.h": UTIL_H}, when=T0 + 200,
                author=("Fork Dev", "dev@fork.example"))
    u = {}
    t = T0 + 1000
    u["u1"] = up.commit("[python] add: keep ints (#101)", {"python/triton/language.py": LANG_PY.format(add=" + 0")}, when=t)
    u["u2"] = up.commit("[dialect] fold mul overflow (#102)", {"lib/Dialect/Ops.cpp": ops(mul=" + 1")}, when=t + 10)
    u["u3"] = up.commit("[dialect] fold add overflow (#103)", {"lib/Dialect/Ops.cpp": ops(add=" + 1", mul=" + 1")},
                        when=t + 20, author=("Other Dev", "other@upstream.example"))
    u["u4"] = up.commit("[dialect] fold mul again (#104)", {"lib/Dialect/Ops.cpp": ops(add=" + 1", mul=" + 2")}, when=t + 30)
    u["u5"] = up.commit("[ws] upstream warp spec tweak (#105)", {"lib/WS/WarpSpec.cpp": WS_CPP.format(ws=" + 1")}, when=t + 40)
    u["u6"] = up.commit("[td] describe add (#106)", {"include/Ops.td": OPS_TD.format(add="addition")}, when=t + 50)
    u["u7"] = up.commit("[test] add kernel check (#107)", {"test/ops.mlir": OPS_MLIR.format(add="\n    // CHECK: arith.addi")}, when=t + 60)
    u["u8"] = up.commit("Add util header (#108)", {"include/util.h": UTIL_H}, when=t + 70)
    u["u9"] = up.commit("[python] add: more (#109)", {"python/triton/language.py": LANG_PY.format(add=" + 0 + 0")}, when=t + 80)
    fork.add_remote("upstream", up.path)
    return Pair(up, fork, base, fork.head(), u)


def file_becomes_directory(tmp: Path) -> tuple[pygit2.Repository, str, str]:
    """A repository whose second commit replaces file ``a`` by a directory ``a/`` (a shape the
    predictor's in-place tree edit leaves to the index): ``(repo, base sha, that commit's sha)``."""
    from bot.demo.repobuilder import run_git

    up = RepoBuilder.init(tmp / "fd")
    up.commit("init", {"a": "x\n", "keep/k.txt": "k\n"}, when=T0)
    base = up.head()
    run_git(up.path, "rm", "-q", "a")
    sha = up.commit("a becomes a directory", {"a/b.txt": "y\n"}, when=T0 + 1)
    return pygit2.Repository(str(up.path)), base, sha


def with_release_branch(tmp: Path, *, at: str = "main") -> tuple[Pair, list[str], list[str]]:
    """:func:`build_pair` with a second fork branch ``release`` cut at ``at`` (a rev of the fork;
    ``main`` its tip) and one commit of its own, two fork branches of one repository (ROCm/triton's
    ``main_perf`` and ``release/internal/3.2.x``). Returns ``(pair, args for main, args for
    release)``: the CLI's ``--fork``/``--upstream`` arguments, then those with ``--fork-ref release``."""
    pair = build_pair(tmp)
    fork = pair.fork
    fork.checkout(pair.base if at == "base" else at, new_branch="release")
    fork.commit("[release] pin the version", {"README.md": "release 3.2\n"}, when=T0 + 300)
    fork.checkout("main")
    g = ["--fork", str(fork.path), "--upstream", str(pair.up.path)]
    return pair, g, [*g, "--fork-ref", "release"]
