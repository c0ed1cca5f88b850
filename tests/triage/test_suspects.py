"""Suspect ranking (pure, over CommitInfo values) and the author mention."""
from __future__ import annotations

from bot.config.forksync import Area
from bot.model import CommitInfo, FileChange
from bot.triage.suspects import FailureContext, author_mention, rank_suspects, upstream_of


def c(n: int, *paths: str, msg: str = "", hunks: tuple[str, ...] = (), email: str = "dev@example.com") -> CommitInfo:
    return CommitInfo(sha=f"{n:040x}", parents=(f"{n - 1:040x}",), message=msg or f"commit {n}",
                      author_name=f"Dev {n}", author_email=email,
                      files=tuple(FileChange(p, hunk_headers=hunks) for p in paths))


PASS_FAIL = ("/tmp/k.py:88:0: note: Pipeline failed while executing [`TritonGPURemoveLayoutConversions` on "
             "'builtin.module' operation]")
ASSERT = ("python: /project/lib/Tools/LinearLayout.cpp:503: mlir::triton::LinearLayout "
          "mlir::triton::LinearLayout::reshapeOuts(llvm::ArrayRef<int>) const: Assertion `x' failed.")


def test_rank_by_pass_file_symbol_test_and_subsystem():
    commits = [
        c(1, "docs/index.md"),
        c(2, "lib/Dialect/TritonGPU/Transforms/RemoveLayoutConversions.cpp"),
        c(3, "lib/Tools/LinearLayout.cpp", hunks=("LinearLayout LinearLayout::reshapeOuts(",)),
        c(4, "python/test/unit/language/test_core.py"),
        c(5, "python/triton/language/semantic.py"),
    ]
    ranked = rank_suspects(commits, FailureContext(("python/test/unit/language/test_core.py::test_dot",),
                                                   (PASS_FAIL, ASSERT)))
    assert [(int(s.sha, 16), s.score) for s in ranked] == [(3, 10), (4, 5), (2, 5), (5, 2), (1, 0)]   # ties: newest first
    assert ranked[0].reasons == ("changes LinearLayout.cpp named in the error", "touches reshapeOuts named in the error")
    assert ranked[2].reasons == ("changes the failing pass's file RemoveLayoutConversions.cpp",)
    assert ranked[1].reasons == ("changes the failing test file python/test/unit/language/test_core.py",
                                 "touches the tests' subsystem language")


def test_areas_count_as_subsystem():
    areas = [Area(name="kernels", paths=["examples/kernels/**"])]
    ranked = rank_suspects([c(1, "README.md"), c(2, "examples/kernels/matmul.py")],
                           FailureContext(("examples/kernels/test_kernels.py::test_matmul",)), areas=areas)
    assert [(int(s.sha, 16), s.score) for s in ranked] == [(2, 2), (1, 0)]


def test_upstream_and_mention():
    pick = c(7, "a.cpp", msg="[X] fix (#1)\n\nUpstream-Commit: " + "d" * 40, email="98765+bob@users.noreply.github.com")
    assert upstream_of(pick) == "d" * 40 and upstream_of(c(8, "a")) is None
    assert author_mention(pick) == "@bob"
    assert author_mention(c(9, "a", email="carol@corp.example")) == "Dev 9"          # never the e-mail
    assert author_mention(c(9, "a", email="carol@corp.example"), {"carol@corp.example": "carol-gh"}) == "@carol-gh"
