"""A fork that deleted a file upstream keeps changing: upstream ``base`` holds ``lib/Legacy.cpp``;
the fork deletes it (its only commit); upstream then changes it three times (``u1``..``u3``, each
a delete/modify conflict on the fork, one chain ``chain-<u1[:12]>``). Nothing in the fork's landed
history resolved a pick yet, so the memory rules have nothing to go on until the chain's own first
pick is resolved."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.demo.repobuilder import RepoBuilder

T0 = 1_767_225_600          # 2026-01-01T00:00:00Z
LEGACY = "int legacy(int x) {{\n  return x{v};\n}}\n"
PATH = "lib/Legacy.cpp"


@dataclass
class DeletedChain:
    up: RepoBuilder
    fork: RepoBuilder
    fork_tip: str
    u: dict[str, str]          # u1..u3 → sha

    @property
    def unit(self) -> str:
        return f"chain-{self.u['u1'][:12]}"


def build_deleted_chain(tmp: Path) -> DeletedChain:
    up = RepoBuilder.init(tmp / "upstream")
    up.commit("Initial import", {PATH: LEGACY.format(v=""), "README.md": "upstream\n"}, when=T0)
    fork = up.clone(tmp / "fork")
    fork.commit("[fork] drop the legacy backend", {PATH: None}, when=T0 + 100, author=("Fork Dev", "dev@fork.example"))
    u = {}
    for i in (1, 2, 3):
        u[f"u{i}"] = up.commit(f"[legacy] tweak {i} (#10{i})", {PATH: LEGACY.format(v=" + 1" * i)}, when=T0 + 1000 + 10 * i)
    fork.add_remote("upstream", up.path)
    return DeletedChain(up, fork, fork.head(), u)
