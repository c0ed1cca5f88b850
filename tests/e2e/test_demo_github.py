"""The GitHub demo end to end: the real app against the local
GitHub, real git, the real local runner running the reference kernels under TRITON_INTERPRET=1.
Asserts what the demo left on the local GitHub and in the fork's git history."""
import io

from rich.console import Console

from bot.demo.github import Outcome, run_github_demo
from bot.store import Store
from bot.sync import store as sync_store

BUNDLE, CHAIN = "forksync:bundle", "forksync:chain"


class CanarySecrets:
    """Stands in for the ``secrets`` module in the demo's world: its webhook secret and the
    maintainer's token become recognisable canaries."""

    def __init__(self):
        self.issued: list[str] = []

    def token_hex(self, n: int) -> str:
        value = f"CANARY{len(self.issued)}" + "c0ffee" * n
        self.issued.append(value[: 2 * n])
        return value[: 2 * n]


def test_the_github_demo_plays_the_whole_loop(tmp_path, monkeypatch, caplog):
    import bot.demo.github_world as github_world
    canaries = CanarySecrets()
    monkeypatch.setattr(github_world, "secrets", canaries)
    text = io.StringIO()
    out = Outcome()
    rc = run_github_demo(Console(file=text, width=120, color_system=None), tmp_path / "demo", out)
    shown = text.getvalue()
    assert rc == 0, shown
    assert out.ok
    sha = out.shas

    # upstream moved → a bundle and a chain opened, with labels and templated titles
    assert out.prs[2]["title"] == f"[forksync] bundle: 5 upstream commits ({sha['u10'][:12]}..{sha['u18'][:12]})"
    assert out.prs[2]["labels"] == ["area:backend", "area:frontend", "area:llvm-pin", BUNDLE]
    assert out.prs[3]["title"] == f"[forksync] chain: 2 upstream commits ({sha['u12'][:12]}..{sha['u13'][:12]})"
    assert out.prs[3]["labels"] == ["area:backend", "area:warp-specialization", CHAIN]
    assert out.status_issue == 1
    # the layout chain stops at its first pick (u14): a draft PR whose branch ends with the conflict commit
    assert out.prs[4]["ref"] == f"forksync/chain-{sha['u14'][:12]}" and out.drafts == {4: sha["u14"][:12]}
    assert (out.status["installed"]["upstream head"], out.status["installed"]["Backlog"]) == (
        sha["u9"][:12], "2 commits behind the frontier not handled (DEFERRED_BLOCKED 1, REVERTED 1)")
    # the maintainer defers the conflicting layout commit: the draft #4 carried nothing else, so
    # forksync closes it (saying why) and the status issue no longer lists it as needing a resolution
    assert [u.split(" ", 1)[0] for u in out.units["upstream moved"]] == [
        f"bundle-{sha['u10'][:12]}", f"chain-{sha['u12'][:12]}", f"chain-{sha['u14'][:12]}"]
    assert [u.split(" ", 1)[0] for u in out.units["deferred"]] == [f"bundle-{sha['u10'][:12]}", f"chain-{sha['u12'][:12]}"]
    assert (out.prs[4]["state"], out.prs[4]["merged"]) == ("closed", False)
    assert out.closed[4] == [(sha["u14"][:12], "DEFERRED_BLOCKED")]
    # then the bundle lands by rebase
    landed = out.ledger["bundle landed"]
    assert {k: landed[k] for k in ("u10", "u11", "u15", "u16", "u17", "u18")} == dict.fromkeys(
        ("u10", "u11", "u15", "u16", "u17", "u18"), "PICKED")
    assert (landed["u12"], landed["u13"], landed["u14"]) == ("IN_FLIGHT", "IN_FLIGHT", "DEFERRED_BLOCKED")
    assert out.status["bundle landed"]["upstream head"] == sha["u18"][:12]
    assert out.status["bundle landed"]["frontier pin"] == sha["u18"][:12]
    assert (out.prs[2]["merged"], out.prs[3]["state"]) == (True, "open")

    # the kernels bundle is validated by the local runner, gated and merged by the bot
    assert out.step_pr == {"kernels added": 5, "softmax broken": 6, "tests dropped": 7}
    assert out.checks["kernels added"] == {"forksync/L1/kernels-cpu": ("success", "10 passed"),
                                           "forksync/gate": ("success", "Ready to merge")}
    assert out.gate["kernels added"] == []
    assert out.prs[5] == {"title": f"[forksync] bundle: 1 upstream commit ({sha['u19'][:12]})", "labels": [BUNDLE],
                          "ref": f"forksync/bundle-{sha['u19'][:12]}", "state": "closed", "merged": True}
    # a broken kernel: L1 red, the gate holds the PR; closed with "defer: …" → DEFERRED_BLOCKED
    assert out.checks["softmax broken"] == {"forksync/L1/kernels-cpu": ("failure", "2 failing of 10"),
                                            "forksync/gate": ("failure", "Blocked: 1 condition not met")}
    assert out.gate["softmax broken"] == ["new-failure"]
    assert (out.prs[6]["state"], out.prs[6]["merged"]) == ("closed", False)
    assert "test_softmax[narrow-fp32]" in shown and "test_softmax[wide-fp32]" in shown
    # a suite that silently ran fewer tests: red, the gate blocks
    assert out.checks["tests dropped"] == {"forksync/L1/kernels-cpu": ("failure", "Red: count-mismatch"),
                                           "forksync/gate": ("failure", "Blocked: 1 condition not met")}
    assert out.gate["tests dropped"] == ["suite-error"]
    flat = " ".join(shown.split())          # the console wraps long lines at its width
    assert ("7 tests ran, the suite expects exactly 10 (fewer: tests went missing; "
            "if they were removed on purpose, set expected_tests: 7)") in flat
    # which tests went missing, as the gate names them: the demo shows the whole finding
    assert "3 test(s) ran on the base (" in flat
    assert ("and not on the head: "
            "examples.kernels.test_kernels::test_matmul[ragged-128x128x64-g8-w4-s3-fp32], "
            "examples.kernels.test_kernels::test_matmul[ragged-128x256x64-g8-w8-s3-fp32], "
            "examples.kernels.test_kernels::test_matmul[ragged-256x128x64-g8-w8-s3-fp32]") in flat
    assert (out.prs[7]["state"], out.prs[7]["merged"]) == ("open", False)

    end = out.ledger["end"]
    assert (end["u19"], end["u20"], end["u21"]) == ("PICKED", "DEFERRED_BLOCKED", "IN_FLIGHT")
    assert out.status["end"]["upstream head"] == sha["u21"][:12]
    # the ledger the App stored for the dashboard is the fork's as it is now: u21, pushed by the
    # sync that computed it, is IN_FLIGHT there too
    stored, _ = sync_store.ledger_summary(Store(tmp_path / "demo" / "app" / "forksync.db"), "meta/triton")
    assert stored == {d: n for d in set(end.values()) if (n := list(end.values()).count(d))}
    # no delivery fails
    assert out.dead == []
    # the canary webhook secret and token appear in no output, log record or stored row
    assert len(canaries.issued) == 2
    rows = b"".join(p.read_bytes() for p in (tmp_path / "demo" / "app").glob("forksync.db*")).decode("latin-1")
    leaks = [(c, where) for c in canaries.issued for where, hay in (("output", shown), ("logs", caplog.text), ("rows", rows))
             if c in hay]
    assert leaks == []
