"""A realistic upstream/fork pair, built as real git repositories (``forksync demo`` and tests).

The upstream is a miniature Triton (C++ passes, Python frontend, MLIR lit tests, TableGen attribute
definitions, an LLVM pin); the fork carries its own warp-specialization code (a ``divergent`` area)
and has ingested part of upstream in every way real forks do. Each upstream commit's true
disposition is known by construction (``Scenario.expected``), so the scenario doubles as an
end-to-end test of the ledger.

Dates: the upstream history starts on 2026-01-05 00:00 UTC, one commit per hour; the fork's sync
work happens on the following days. Shas are deterministic (fixed identities and dates).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bot.demo.repobuilder import RepoBuilder
from bot.model import Disposition

T0 = 1767571200  # 2026-01-05T00:00:00Z
HOUR = 3600
DAY = 24 * HOUR

ALICE = ("Alice Upstream", "alice@upstream.example")
BOB = ("Bob Upstream", "bob@upstream.example")
FORKDEV = ("Fiona Fork", "fiona@fork.example")

DEMO_CONFIG = """\
# forksync.yml for the demo fork (see README: Configuration)
upstream: {url: upstream, ref: main}
fork: {url: fork, ref: main}
cache_dir: .forksync-cache
bundle_size_cap: 50
areas:
  - name: warp-specialization
    paths: ["lib/Dialect/TritonGPU/Transforms/WarpSpecialization*.cpp", "third_party/tlx/**"]
    symbols: ["^WarpSpec", "^tlx"]
    owners: [fiona]
    divergent: true
  - name: llvm-pin
    paths: ["cmake/llvm-hash.txt"]
    owners: [fiona]
    requires_l3: true
  - name: frontend
    paths: ["python/triton/**"]
  - name: backend
    paths: ["lib/**", "include/**", "third_party/nvidia/**"]
"""

COALESCE = """\
#include "triton/Dialect/TritonGPU/Transforms/Passes.h"

namespace mlir::triton::gpu {

static unsigned getNumElementsPerThread(Operation *op, unsigned numThreads) {
  unsigned elems = 4;
  return elems;
}

static void setCoalescedEncoding(Operation *op, unsigned numWarps) {
  unsigned perThread = getNumElementsPerThread(op, numWarps * 32);
  (void)perThread;
}

struct CoalescePass {
  void runOnOperation() {
    setCoalescedEncoding(nullptr, 4);
  }
};

} // namespace mlir::triton::gpu
"""

ELEMENTWISE = """\
#include "PatternTritonGPUOpToLLVM.h"

namespace {

struct FAddOpConversion {
  int lower(int a, int b) const { return a + b; }
};

struct FMulOpConversion {
  int lower(int a, int b) const { return a * b; }
};

} // namespace
"""

WARPSPEC = """\
#include "triton/Dialect/TritonGPU/Transforms/Passes.h"

namespace mlir::triton::gpu {

void WarpSpecializePartition(Operation *loop, int numPartitions) {
  // upstream partitioning
  int stages = 2;
  (void)stages;
}

void WarpSpecializeInsertBarriers(Operation *loop) {
  int barriers = 1;
  (void)barriers;
}

} // namespace mlir::triton::gpu
"""

CORE_PY = """\
from __future__ import annotations


def cdiv(x, div):
    return (x + div - 1) // div


def next_power_of_2(n: int) -> int:
    n -= 1
    n |= n >> 1
    n |= n >> 2
    n |= n >> 4
    n |= n >> 8
    n |= n >> 16
    return n + 1


def zeros(shape, dtype):
    return [0] * shape[0]
"""

COMPILER_PY = """\
class CUDABackend:
    ptx_version = 83

    def make_ttir(self, mod):
        return mod

    def make_ptx(self, mod):
        return mod
"""

ATTRDEFS = """\
include "mlir/IR/AttrTypeBase.td"

def TritonGPU_BlockedEncodingAttr : DistributedEncoding<"BlockedEncoding"> {
  let parameters = (ins
    ArrayRefParameter<"unsigned">:$sizePerThread,
    ArrayRefParameter<"unsigned">:$threadsPerWarp
  );
}

def TritonGPU_SharedEncodingAttr : SharedEncoding<"SharedEncoding"> {
  let parameters = (ins "unsigned":$vec);
}
"""

COALESCE_MLIR = """\
// RUN: triton-opt %s -tritongpu-coalesce | FileCheck %s

// CHECK-LABEL: @load_1d
tt.func @load_1d(%arg0: !tt.ptr<f32>) {
  tt.return
}
"""


@dataclass
class Scenario:
    root: Path
    upstream: RepoBuilder
    fork: RepoBuilder
    sha: dict[str, str] = field(default_factory=dict)       # label → upstream sha
    fork_sha: dict[str, str] = field(default_factory=dict)  # label → fork commit sha
    expected: dict[str, Disposition] = field(default_factory=dict)  # label → true disposition
    config_path: Path | None = None

    def label_of(self, sha: str) -> str | None:
        for k, v in self.sha.items():
            if v == sha:
                return k
        return None


def build_scenario(root: str | Path) -> Scenario:
    """Create ``root/upstream`` and ``root/fork`` (non-bare) and ``root/forksync.yml``.

    Returns the :class:`Scenario` with every upstream commit's label, sha and true disposition.
    Raises ``FileExistsError`` when ``root`` already holds a scenario.
    """
    root = Path(root)
    if (root / "upstream").exists() or (root / "fork").exists():
        raise FileExistsError(f"{root} already holds a demo scenario; choose an empty folder")
    up = RepoBuilder.init(root / "upstream")
    s = Scenario(root=root, upstream=up, fork=None)  # type: ignore[arg-type]
    t = T0

    def ucommit(label: str, msg: str, files: dict | None, author=ALICE, expected=None, allow_empty=False) -> str:
        nonlocal t
        t += HOUR
        sha = up.commit(msg, files, when=t, author=author, allow_empty=allow_empty)
        s.sha[label] = sha
        if expected is not None:
            s.expected[label] = expected
        return sha

    # --- the shared base -------------------------------------------------------------------
    base = up.commit("Initial import of the compiler (#100)", {
        "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp": COALESCE,
        "lib/Conversion/TritonGPUToLLVM/ElementwiseOpToLLVM.cpp": ELEMENTWISE,
        "lib/Dialect/TritonGPU/Transforms/WarpSpecialization.cpp": WARPSPEC,
        "python/triton/language/core.py": CORE_PY,
        "third_party/nvidia/backend/compiler.py": COMPILER_PY,
        "include/triton/Dialect/TritonGPU/IR/TritonGPUAttrDefs.td": ATTRDEFS,
        "test/TritonGPU/coalesce.mlir": COALESCE_MLIR,
        "cmake/llvm-hash.txt": "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678\n",
    }, when=t, author=ALICE)
    s.sha["base"] = base

    # --- the fork branches off and diverges --------------------------------------------------
    fork = up.clone(root / "fork")
    s.fork = fork
    ft = T0 + 2 * HOUR

    def fcommit(label: str, msg: str, files: dict | None, **kw) -> str:
        nonlocal ft
        ft += 600
        sha = fork.commit(msg, files, when=ft, author=FORKDEV, **kw)
        s.fork_sha[label] = sha
        return sha

    fcommit("tlx", "[TLX] Add the TLX frontend (fork feature)", {
        "third_party/tlx/language/tlx.py": "def tlx_async_load(ptr):\n    return ptr\n",
    })
    fcommit("ws-fork", "[autoWS] Fork's own warp specialization partitioner", {
        "lib/Dialect/TritonGPU/Transforms/WarpSpecialization.cpp": WARPSPEC.replace(
            "  // upstream partitioning\n  int stages = 2;", "  // fork: autoWS partitioning\n  int stages = 3;"),
    })
    fcommit("attr-fork", "[Layout] Fork's shared encoding carries a swizzle", {
        "include/triton/Dialect/TritonGPU/IR/TritonGPUAttrDefs.td": ATTRDEFS.replace(
            '(ins "unsigned":$vec)', '(ins "unsigned":$vec, "unsigned":$swizzle)'),
    })

    # --- upstream moves on --------------------------------------------------------------------
    ucommit("u1", "[FRONTEND] Document cdiv (#101)", {
        "python/triton/language/core.py": CORE_PY.replace(
            "def cdiv(x, div):\n", 'def cdiv(x, div):\n    """Ceiling division."""\n')},
        expected=Disposition.PICKED)
    ucommit("u2", "[BACKEND] Coalesce: 8 elements per thread (#102)", {
        "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp": COALESCE.replace("unsigned elems = 4;", "unsigned elems = 8;")},
        author=BOB, expected=Disposition.PICKED)
    ucommit("u3", "[NVIDIA] Bump PTX version to 84 (#103)", {
        "third_party/nvidia/backend/compiler.py": COMPILER_PY.replace("ptx_version = 83", "ptx_version = 84")},
        expected=Disposition.PICKED)
    ucommit("u4", "[TESTS] Check the 1D coalesce layout (#104)", {
        "test/TritonGPU/coalesce.mlir": COALESCE_MLIR.replace("  tt.return\n", "  // CHECK: #blocked\n  tt.return\n")},
        expected=Disposition.PICKED)
    ucommit("u5", "[DOCS] Describe the coalesce pass (#105)", {
        "docs/passes/coalesce.md": "# Coalesce\n\nPicks a blocked layout per memory access.\n"},
        expected=Disposition.PICKED)
    ucommit("u6", "[BACKEND] Fuse FAdd lowering (#106)", {
        "lib/Conversion/TritonGPUToLLVM/ElementwiseOpToLLVM.cpp": ELEMENTWISE.replace(
            "return a + b;", "return __fadd_rn(a, b);")},
        author=BOB, expected=Disposition.REVERTED)
    ucommit("u7", "[WS] Partition loops by cost model (#107)", {
        "lib/Dialect/TritonGPU/Transforms/WarpSpecialization.cpp": WARPSPEC.replace(
            "  int stages = 2;\n", "  int stages = 2;\n  int cost = numPartitions * 3;\n  (void)cost;\n")},
        expected=Disposition.DEFERRED_BLOCKED)
    ucommit("u8", "[CI] Trigger a rebuild (#108)", None, allow_empty=True, expected=Disposition.NO_OP)
    ucommit("u9", "[AMD] Drop the gfx90a workaround (#109)", {
        "third_party/amd/backend/gfx90a.py": "WORKAROUND = True\n"}, expected=Disposition.WONT_PORT)

    # --- the fork ingests part of it ----------------------------------------------------------
    ft = T0 + 1 * DAY
    fork.git("fetch", "-q", "origin")

    def fpick(label: str, upstream_label: str, *, trailer: str | None = None, x: bool = False,
              message: str | None = None) -> str:
        nonlocal ft
        ft += 600
        sha = fork.cherry_pick(s.sha[upstream_label], when=ft, trailer=trailer, x=x, message=message)
        s.fork_sha[label] = sha
        return sha

    fpick("p1", "u1", trailer=f"Upstream-Commit: {s.sha['u1']}")                 # forksync's own trailer
    fpick("p2", "u2", x=True)                                                    # git cherry-pick -x
    fpick("p3", "u3", message="Bump PTX to 84 for the new toolchain\n")          # no provenance: patch-id
    # a bundle commit that squashes two upstream PRs and cites them (common in real forks)
    ft += 600
    fork.git("cherry-pick", "--no-commit", s.sha["u4"], when=ft)
    fork.git("cherry-pick", "--no-commit", s.sha["u5"], when=ft)
    s.fork_sha["bundle"] = fork.commit(
        "[BUNDLE] Cherry-pick 2 upstream commits (#104, #105) (#7)", None, when=ft, author=FORKDEV, allow_empty=True)
    p6 = fpick("p6", "u6", trailer=f"Upstream-Commit: {s.sha['u6']}")
    ft += 600
    s.fork_sha["backout"] = fork.revert(p6, when=ft, message=(
        f'Revert "[BACKEND] Fuse FAdd lowering (#106)"\n\nThis reverts commit {p6}.\n'
        "It broke fp32 accuracy on the fork's kernels.\n"))
    # decisions that land no commit: a note (defer) and a trailer on a sync commit (won't-port)
    ft += 600
    fork.add_note(s.sha["u7"], "forksync-decision: DEFERRED_BLOCKED waits for the autoWS rebase\n"
                  "forksync-by: fiona", when=ft)
    ft += 600
    s.fork_sha["wontport"] = fork.commit(
        "[forksync] Record decisions\n\n"
        f"Upstream-Wont-Port: {s.sha['u9']} the fork dropped gfx90a support\n",
        None, when=ft, author=FORKDEV, allow_empty=True)

    # --- upstream keeps moving: the pending work the plan partitions ---------------------------
    ucommit("u10", "[FRONTEND] Add next_power_of_2 fast path (#110)", {
        "python/triton/language/core.py": up_file(up, "python/triton/language/core.py").replace(
            "    n -= 1\n", "    if n & (n - 1) == 0:\n        return n\n    n -= 1\n")},
        expected=Disposition.PENDING)
    ucommit("u11", "[BACKEND] Coalesce: respect numWarps (#111)", {
        "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp": up_file(up, "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp").replace(
            "numWarps * 32", "numWarps * 32 /* threads */")},
        author=BOB, expected=Disposition.PENDING)
    ucommit("u12", "[WS] Insert named barriers (#112)", {
        "lib/Dialect/TritonGPU/Transforms/WarpSpecialization.cpp": up_file(up, "lib/Dialect/TritonGPU/Transforms/WarpSpecialization.cpp").replace(
            "  int barriers = 1;", "  int barriers = 2;")},
        expected=Disposition.PENDING)
    ucommit("u13", "[WS] Fix barrier count for 1 partition (#113)", {
        "lib/Dialect/TritonGPU/Transforms/WarpSpecialization.cpp": up_file(up, "lib/Dialect/TritonGPU/Transforms/WarpSpecialization.cpp").replace(
            "  int barriers = 2;", "  int barriers = 2; // >= 1")},
        expected=Disposition.PENDING)
    ucommit("u14", "[Layout] Shared encoding gains a maxPhase (#114)", {
        "include/triton/Dialect/TritonGPU/IR/TritonGPUAttrDefs.td": up_file(up, "include/triton/Dialect/TritonGPU/IR/TritonGPUAttrDefs.td").replace(
            '(ins "unsigned":$vec)', '(ins "unsigned":$vec, "unsigned":$maxPhase)')},
        author=BOB, expected=Disposition.PENDING)
    ucommit("u15", 'Revert "[BACKEND] Coalesce: 8 elements per thread (#102)" (#115)', {
        "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp": up_file(up, "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp").replace(
            "unsigned elems = 8;", "unsigned elems = 4;")},
        expected=Disposition.PENDING)
    ucommit("u16", "[LLVM] Bump LLVM to 9f8e7d6 (#116)", {"cmake/llvm-hash.txt": "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432\n"},
        expected=Disposition.PENDING)
    ucommit("u17", "[FRONTEND] zeros() takes a full shape (#117)", {
        "python/triton/language/core.py": up_file(up, "python/triton/language/core.py").replace(
            "return [0] * shape[0]", "n = 1\n    for d in shape:\n        n *= d\n    return [0] * n")},
        expected=Disposition.PICKED)  # picked early as an urgent isolated pick
    ucommit("u18", "[NVIDIA] Add make_cubin stage (#118)", {
        "third_party/nvidia/backend/compiler.py": up_file(up, "third_party/nvidia/backend/compiler.py")
        + "\n    def make_cubin(self, mod):\n        return mod\n"},
        expected=Disposition.PENDING)

    # an urgent isolated pick of u17 (does not move the frontier)
    ft = T0 + 2 * DAY
    fork.git("fetch", "-q", "origin")
    fpick("p17", "u17", trailer=f"Upstream-Commit: {s.sha['u17']}\nUpstream-Urgent: fixes a crash in production kernels")

    (root / "forksync.yml").write_text(DEMO_CONFIG)
    s.config_path = root / "forksync.yml"
    return s


def up_file(b: RepoBuilder, rel: str) -> str:
    return (b.path / rel).read_text()
