"""A real upstream/fork pair exercising every ledger rule (shared by the ledger, pins and CLI tests).

Upstream commits are one day apart (u1 at T0 + 1 day …); the fork's sync commits land after them.
``EXPECTED`` is the true disposition of each upstream commit, by construction.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bot.demo.repobuilder import RepoBuilder

DAY = 86400
T0 = 1_767_225_600          # 2026-01-01T00:00:00Z
FORK_AUTHOR = ("Fork Dev", "dev@fork.example")


@dataclass
class Scenario:
    up: RepoBuilder
    fork: RepoBuilder
    base: str
    u: dict[str, str] = field(default_factory=dict)       # name -> upstream sha
    f: dict[str, str] = field(default_factory=dict)       # name -> fork sha

    def cfg_overrides(self) -> dict[str, str]:
        return {"upstream.url": str(self.up.path), "fork.url": str(self.fork.path),
                "upstream.ref": "main", "fork.ref": "main"}


EXPECTED = {
    "u1": "PICKED",      # Upstream-Commit trailer
    "u2": "PICKED",      # cherry-pick -x
    "u3": "PICKED",      # user trailer (Reactor Cherry-pick Revision)
    "u4": "PICKED",      # bundle citing #104, #108 (fork PR #19 is not upstream #19)
    "u5": "NO_OP",       # empty upstream commit
    "u6": "NO_OP",       # upstream commit + its upstream revert, both absent from the fork
    "u7": "NO_OP",
    "u8": "PICKED",      # bundle
    "u9": "IN_FLIGHT",   # on forksync/chain-… ; its PR number #19 equals the bundle's own PR
    "u10": "PICKED",     # patch-id only
    "u11": "REVERTED",   # picked, then backed out in the fork
    "u12": "PICKED",     # picked, backed out, back-out reverted (re-landed)
    "u13": "PENDING",    # deferred by a note, then reconsidered
    "u14": "WONT_PORT",  # note
    "u15": "PENDING",
    "u16": "SKIP_FOR_CURRENT_BASE",   # Upstream-Skipped trailer on a sync commit
    "u17": "PENDING",
    "u18": "PICKED",     # urgent isolated pick (Upstream-Urgent)
}


def build(tmp: Path) -> Scenario:
    up = RepoBuilder.init(tmp / "upstream")
    base = up.commit("Initial import (#100)", {"README.md": "upstream\n", "lib/core.cpp": "int core() { return 0; }\n"},
                     when=T0)
    fork = up.clone(tmp / "fork")
    fork.author = FORK_AUTHOR
    s = Scenario(up, fork, base)
    prs = {f"u{i}": 100 + i for i in range(1, 19)}
    prs["u9"] = 19
    for i in range(1, 19):
        name, when = f"u{i}", T0 + i * DAY
        if name == "u5":
            s.u[name] = up.commit(f"Empty marker (#{prs[name]})", when=when, allow_empty=True)
        elif name == "u7":
            s.u[name] = up.revert(s.u["u6"], when=when,
                                  message=f'Revert "Change six (#106)" (#{prs[name]})\n\nThis reverts commit {s.u["u6"]}.\n')
        else:
            word = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                    "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen"][i]
            s.u[name] = up.commit(f"Change {word} (#{prs[name]})", {f"lib/{name}.cpp": f"int {name}() {{ return {i}; }}\n"},
                                  when=when)
    fork.add_remote("upstream", up.path)
    F = T0 + 30 * DAY
    u = s.u
    s.f["p1"] = fork.cherry_pick(u["u1"], when=F + 1, trailer=f"Upstream-Commit: {u['u1']}")
    s.f["p2"] = fork.cherry_pick(u["u2"], when=F + 2, x=True)
    s.f["p3"] = fork.cherry_pick(u["u3"], when=F + 3, trailer=f"Reactor Cherry-pick Revision: {u['u3']}")
    # a bundle commit carrying two upstream changes, citing their PRs, with the fork's own PR #19
    fork.write({"lib/u4.cpp": "int u4() { return 4; }\n", "lib/u8.cpp": "int u8() { return 8; }\n"})
    s.f["bundle"] = fork.commit("[Cherry-pick][BUNDLE] Cherry-pick 2 upstream commits (#104, #108) (#19)",
                                when=F + 4)
    # a pick without provenance: only patch-id can find it
    s.f["p10"] = fork.cherry_pick(u["u10"], when=F + 5, message="Port change ten to the fork\n")
    s.f["p11"] = fork.cherry_pick(u["u11"], when=F + 6, trailer=f"Upstream-Commit: {u['u11']}")
    s.f["p12"] = fork.cherry_pick(u["u12"], when=F + 7, trailer=f"Upstream-Commit: {u['u12']}")
    s.f["r11"] = fork.revert(s.f["p11"], when=F + 8)
    s.f["r12"] = fork.revert(s.f["p12"], when=F + 9)
    s.f["rr12"] = fork.revert(s.f["r12"], when=F + 10)
    s.f["skip16"] = fork.commit("Record sync decisions\n\nUpstream-Skipped: " + u["u16"] + " needs the new base\n",
                                {"SYNC.md": "decisions\n"}, when=F + 11)
    s.f["p18"] = fork.cherry_pick(u["u18"], when=F + 12,
                                  trailer=f"Upstream-Commit: {u['u18']}\nUpstream-Urgent: security fix")
    fork.add_note(u["u13"], "forksync-decision: DEFERRED_BLOCKED needs #115 first\nforksync-by: alice\n"
                            "forksync-date: 2026-02-01T00:00:00Z", when=F + 13)
    fork.add_note(u["u14"], "forksync-decision: WONT_PORT CI only\nforksync-by: bob\nforksync-date: 2026-02-01T00:00:00Z",
                  when=F + 14)
    fork.add_note(u["u13"], "forksync-decision: RECONSIDER base moved\nforksync-by: alice\n"
                            "forksync-date: 2026-02-02T00:00:00Z", when=F + 15)
    # an open forksync branch carrying u9
    fork.checkout("main", new_branch=f"forksync/chain-{u['u9'][:12]}")
    s.f["inflight9"] = fork.cherry_pick(u["u9"], when=F + 16, trailer=f"Upstream-Commit: {u['u9']}")
    fork.checkout("main")
    return s
