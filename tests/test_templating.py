"""Every template a person reads (PR and issue bodies, comments, check-run summaries) renders to
well-formed Markdown: lists stay lists, headings stay headings, no items run together, no
unrendered ``{{``, no empty code spans (tests/support/markdown_check.py).

Each template has a case here with data shaped like the Triton fork's (its real shas, subjects,
paths and PR numbers, from ``forksync plan`` on the snapshot); the e2e worlds render the same
templates again through the handlers, and tests/conftest.py checks every one of those renders too.
"""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace as NS

import pytest

from bot.agents import render as agents_render
from bot.config.agents import SCRIPTED_MODEL
from bot.dashboard.web import CSP
from bot.model import PlanItem, Unit
from bot.sync.status import SyncStatus
from bot.sync.status_issue import render_status
from bot.templating import TEMPLATES, render
from bot.validation.gate import Finding, GateDecision
from tests.support.markdown_check import problems, structure

# real commits of the Triton fork's pending upstream range (forksync plan on the snapshot)
UP = "https://github.com/triton-lang/triton"
S1 = "01d3c87a74a2e4d6a3f1bb0c2f7d6a9e8b1c2d3e"
S2 = "32fa3bb64b11c0ffee0a1b2c3d4e5f60718293a4"
S3 = "eeb77318eca0aa11bb22cc33dd44ee55ff667788"
S4 = "0a73259f61a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4"
FORK = "db4666f22c1f8e7d6c5b4a39281706f5e4d3c2b1"
COMMITS = [
    {"sha": S2, "subject": "[README] Add Triton Conference 2025 details to README (#8186)", "pr": 8186,
     "conflicts": ["README.md"]},
    {"sha": S3, "subject": "[NFC] Update README for conference materials (#9009)", "pr": 9009, "conflicts": []},
    {"sha": S4, "subject": "[AMD][NFC] Replace llvm instrinsic calls with rocdl ops (#9222)", "pr": 9222,
     "conflicts": ["test/Conversion/amd/cluster_load.mlir", "third_party/amd/lib/TritonAMDGPUToLLVM/BarrierOpToLLVM.cpp"]},
]
CHAIN = Unit(f"chain-{S2[:12]}", "chain", tuple(PlanItem(c["sha"], "r", tuple(c["conflicts"])) for c in COMMITS),
             areas=("amd",), reason="predicted cherry-pick conflicts in README.md; follows chain-01d3c87a74a2, which changes "
                                    "README.md", depends_on=(f"chain-{S1[:12]}", "chain-9c2cefdb65a4"))
HUNK = "<<<<<<< fork\n- [Triton Conference 2025](https://tritonconference.eventbuilder.com/TritonDeveloperConference)\n" \
       "||||||| upstream parent\n=======\n- Triton Conference 2025: slides and recordings\n>>>>>>> upstream"
STOPPED = {"sha": S2, "subject": COMMITS[0]["subject"], "pr": 8186, "commit": "c0" * 20, "error": "", "renames_skipped": "",
           "remaining": 3, "files": [{"path": "README.md", "kind": "content", "hunks": [HUNK, HUNK], "old_path": "",
                                      "hunks_total": 2},
                                     {"path": "docs/conf.py", "kind": "modify/delete", "hunks": [], "old_path": "",
                                      "hunks_total": 0},
                                     {"path": "python/triton/knobs.py", "kind": "content", "hunks": [HUNK],
                                      "old_path": "python/triton/_knobs.py", "hunks_total": 3}]}
# upstream commits decided while their sync PR was open (bot.sync.shrink.Decided, as dicts)
DECIDED = [{"sha": S2, "subject": COMMITS[0]["subject"], "disposition": "DEFERRED_BLOCKED",
            "reason": "conflicts with the fork's | README table; port by hand", "by": "fiona", "fork_commit": ""},
           {"sha": S3, "subject": COMMITS[1]["subject"], "disposition": "PICKED", "reason": "", "by": "",
            "fork_commit": FORK}]
SYNC_BODY = dict(unit=CHAIN, commits=COMMITS, upstream="triton-lang/triton", upstream_url=UP, by_rules=[
    {"sha": S4, "folded": "", "declined": ["third_party/amd/lib/TritonAMDGPUToLLVM/BarrierOpToLLVM.cpp"],
     "decided": [{"path": "test/Conversion/amd/cluster_load.mlir", "action": "kept the fork's file", "reason": "fork ahead",
                  "rule": "fork-ahead"}]}],
    deps=[{"id": f"chain-{S1[:12]}", "pr": 412, "blocked": "", "first": S1, "subject": "[README] added conference link (#8114)"},
          {"id": "chain-9c2cefdb65a4", "pr": 0, "blocked": "", "first": "9c2cefdb65a4" + "0" * 28,
           "subject": "[AMD][NFC] Use ROCDL ops for WaitAsyncCntOp/WaitTensorCntOp (#8820)"}],
    deferred=[{"sha": S3, "subject": COMMITS[1]["subject"], "reason": "waits for LLVM"}],
    wont_port=[{"sha": S4, "subject": COMMITS[2]["subject"], "reason": "the fork has its own ROCDL lowering"}],
    merge_method="rebase", stopped=STOPPED, branch=f"forksync/chain-{S2[:12]}", agents=True)
SUSPECTS = [{"sha": "5e6f7a8b9c0d" + "1" * 28, "subject": "[Kernels] Normalise softmax by the row maximum (#6021)",
             "author": "Alice Upstream", "upstream": "a1b2c3d4e5f6" + "2" * 28, "score": 0.91,
             "reasons": ["touches the failing kernel", "landed between green and red"]},
            {"sha": "6f7a8b9c0d1e" + "3" * 28, "subject": "Docs: nightly 1 | 2", "author": "Bob", "upstream": "",
             "score": 0.2, "reasons": ["in range"]}]
RESULT = NS(suite="kernels", level="L1", platform="h200", commit=FORK, backend="local", verdict="red", outcome="fail",
            environment=NS(runner_id="gpu-07", gpu_model="NVIDIA H200", driver="570.86", cuda="12.8", torch="2.13.0",
                           triton="3.7.1", python="3.11.7"),
            counts=NS(total=30, passed=28, failed=2, error=0, skipped=1, harness_total=31),
            durations=NS(tests=41.2, total=63.9, command=52.0, outside_tests=10.8, build=0.0), workers=1,
            triton_cache="/var/lib/forksync/runner/triton-cache", not_run=["test_softmax[512]"],
            reasons=[NS(code="failed", detail="2 tests failed"), NS(code="short", detail="ran 30 of 31 expected | fewer")])
BISECT = NS(culprit="5e6f7a8b9c0d", verified=True, good="0" * 40, bad="7" * 40, note="re-tested", suspects=["5e6f7a8b9c0d", "6f7a8b9c0d1e"],
            test_steps=4, bound=5, candidates=["a", "b", "c"],
            steps=[NS(phase="bisect", sha="5e6f7a8b9c0d" + "1" * 28, attempts=1, outcome=NS(verdict="bad", value=1.31, detail="slow | 1.31 ms")),
                   NS(phase="verify", sha="4d5e6f7a8b9c" + "1" * 28, attempts=2, outcome=NS(verdict="good", value=None, detail=""))])
EVIDENCE = NS(bisect=BISECT, title="L2 regression: matmul-fp8 +12.40 %", culprit_subject="[AMD] Tune fp8 matmul (#9301)",
              upstream_sha="a1b2c3d4e5f6" + "2" * 28, key=NS(unit="ms", __str__=lambda self: "matmul-fp8"),
              change=NS(index=1, before=1.17, after=1.31, rel_shift=0.124, sigma=0.01, threshold=0.03, pvalue=0.0004,
                        n_before=14, n_after=6),
              shas=["0" * 40, "5e6f7a8b9c0d" + "1" * 28], confirmation=NS(n_good=5, n_bad=5, reason="slower in 5 of 5 repeats"),
              plot_path="", command="python -m bench matmul-fp8", culprit_author="Alice <Upstream> @alice",
              upstream_url="https://github.com/triton-lang/triton/commit/" + "a1b2c3d4e5f6" + "2" * 28,
              backout_error="git revert of 5e6f7a8b9c0d does not apply on trunk: error: could not revert")

# the status issue's open units as the sync stores them (SyncService._open_units): a chain that lands after
# a bundle still open and after one closed unmerged its resolution was made on (bot.sync.store.unit_waits)
UNITS = ({"id": f"bundle-{S1[:12]}", "kind": "bundle", "pr": 411, "url": "https://github.com/meta/triton/pull/411",
          "state": "open", "agent": "", "waits_for": [], "waited_by": 2},
         {"id": CHAIN.id, "kind": "chain", "pr": 412, "url": "https://github.com/meta/triton/pull/412", "state": "open",
          "agent": "", "waited_by": 0,
          "waits_for": [{"id": "bundle-9c2cefdb65a4", "pr": 398, "state": "closed", "shas": ["9c2cefdb65a4" + "0" * 28, S3]},
                        {"id": f"bundle-{S1[:12]}", "pr": 411, "state": "open", "shas": []}]},
         {"id": "chain-ca003a09e8b2", "kind": "chain", "pr": 0, "url": "", "state": "open", "agent": "", "waited_by": 0,
          "waits_for": [{"id": f"bundle-{S1[:12]}", "pr": 411, "state": "open", "shas": []},
                        {"id": CHAIN.id, "pr": 412, "state": "open", "shas": []},
                        {"id": "chain-9c2cefdb65a4", "pr": 0, "state": "open", "shas": []},
                        {"id": "chain-0a73259f61a0", "pr": 415, "state": "open", "shas": []},
                        {"id": "chain-eeb77318eca0", "pr": 416, "state": "open", "shas": []}]})

# template name → context (agents/ templates render through bot.agents.render, with its filters)
CASES: dict[str, dict] = {
    "github/sync_pr_body.md.j2": SYNC_BODY,
    "github/config_invalid.md.j2": dict(ref="main", had_valid=True, problems=[
        ("areas[tlx].divergnt", "unknown key `divergnt`; did you mean `divergent`?", 41),
        ("", "not valid YAML: expected ',' or ']', but got '-'\n      - name: x\n      ^", 80),
        ("bundle_size_cap", "Input should be greater than or equal to 1 | or so", None)]),
    "github/status_issue.md.j2": None,      # rendered by render_status below
    "github/status_issue_duplicate.md.j2": dict(keep=7),
    "github/status_issue_elsewhere.md.j2": dict(closed=True, keep=7, actions=["replan", "retry:chain-0123456789ab"]),
    "github/backout_closed.md.j2": dict(branch="forksync/backout-x", kept="refs/forksync/closed/backout-x/" + S4[:12],
                                        head=S4, deleted=True),
    "github/branch_kept.md.j2": dict(branch="forksync/bundle-x", number=412, merged=True),
    "github/body_cut.md.j2": dict(cut=34_567, limit=65536),
    "github/no_drafts.md.j2": dict(),
    "github/blocked_hint.md.j2": dict(b={"requires": "workflows", "path": ".github/workflows/ci.yml", "branch": "forksync/x"},
                                      config_path=".github/forksync.yml"),
    "github/unit_waits.md.j2": dict(u=UNITS[1]),
    "github/unit_blocked.md.j2": dict(step="pr", tip=FORK, unit_id=CHAIN.id, config_path=".github/forksync.yml",
                                      b={"reason": "Resource not accessible by integration (403)", "requires": "permission",
                                         "path": "", "branch": "forksync/x"}),
    "github/closed_unmerged.md.j2": dict(branch="forksync/chain-x", shas=[S2, S3], disposition="PENDING", reason="",
                                         kept="refs/forksync/closed/chain-x/" + S4[:12], head=S4, deleted=True,
                                         kept_decided=[{"sha": S1, "disposition": "SKIP_FOR_CURRENT_BASE", "reason": "ours"}]),
    "github/command_denied.md.j2": dict(user="carol", line="/forksync merge", reason="only maintainers may merge",
                                        owners=["alice", "bob"]),
    "github/command_help.md.j2": dict(user="carol", line="/forksync mrege", message="unknown command `mrege`", verbs=[
        {"usage": "/forksync merge", "help": "ask the gate to check now and merge"},
        {"usage": "/forksync defer <sha> <reason>", "help": "defer an upstream commit"}]),
    "github/command_permission_unknown.md.j2": dict(user="carol", line="/forksync merge", problem="GitHub answered 502",
                                                    retrying=True),
    "github/command_failed.md.j2": dict(user="carol", line="/forksync retest", problem="GitHub answered 422",
                                        retrying=False),
    "github/l3_rerun_refused.md.j2": dict(user="carol", check="forksync/L3/heavy@h100",
                                          reason="@carol has `read` permission; an L3 run needs write or admin"),
    "github/command_reply.md.j2": dict(user="carol", line="/forksync plan", result="2 unit(s) planned",
                                      details="- `chain-32fa3bb64b11`\n- `bundle-ca003a09e8b2`"),
    "github/own_section.md.j2": dict(body="<!-- forksync:unit:bundle-x -->\nThis bundle brings 2 upstream commits.",
                                     title_digest="0123456789abcdef"),
    "github/issue_section.md.j2": dict(section="regression", body="## L2 regression on toy\n\n**Culprit:** `abc`"),
    "github/landed_squashed.md.j2": dict(merger="alice", landed=S4, head=S2, shas=[S2, S3], unit_id="bundle-x",
                                         number=12),
    "github/person_commits.md.j2": dict(unit_id=CHAIN.id, foreign=[S3, S4]),
    "github/decided_commits.md.j2": dict(decided=DECIDED),
    "github/unit_decided.md.j2": dict(branch="forksync/chain-x", decided=DECIDED, deleted=True,
                                      kept="refs/forksync/closed/chain-x/" + S4[:12], head=S4),
    "github/unit_shrunk.md.j2": dict(unit_id=CHAIN.id, branch=f"forksync/{CHAIN.id}", rebuilt=True, decided=DECIDED[:1],
                                     keep=[S4], base=S1, tip=FORK),
    "github/unit_retry_kept.md.j2": dict(unit_id=CHAIN.id, branch=f"forksync/{CHAIN.id}", tip=S4),
    "github/unit_rebuilt.md.j2": dict(branch="forksync/chain-x", fork_ref="main", base=S1, dropped=[S2, S3], tip=S4),
    "github/agent_not_reached.md.j2": dict(upstream_sha=S2, branch="forksync/chain-x", deadline_s=10800.0, cut=True),
    "github/plan_preview.md.j2": dict(user="carol", base=FORK, upstream_head=S4, units=[CHAIN, Unit(
        "bundle-ca003a09e8b2", "bundle", (PlanItem("ca003a09e8b2" + "0" * 28, "clean"),), areas=("amd",),
        reason="bundle 1 of 1: 1 commit predicted to pick cleanly in order (cap 50)")],
        no_ops=[PlanItem(S3, "its pick onto the fork changes nothing")], notes=["2 commits left out: in flight"]),
    "github/resolution_check.md.j2": dict(ok=False, head=FORK, kept=[S2], problems=[
        "conflict markers remain in `third_party/amd/x.cpp`", "the `Upstream-Commit` trailer of `eeb77318eca0` is gone"]),
    "github/resolution_held.md.j2": dict(head=FORK, sha=S2, ref="main", since=S4, tip=S1),
    "github/resolution_closed.md.j2": dict(state="merged", head=FORK, branch="forksync/chain-x"),
    "github/resolution_folded.md.j2": dict(raced=False, head=FORK, branch="forksync/chain-x", error="", tip=S4,
                                           fold=NS(stop=NS(conflict_commit="c0" * 20, after=[S3, S4]), commit="f0" * 20,
                                                   resolved_by=["Alice <alice@example.com>"],
                                                   files=[NS(path="README.md", action="merged both", reason="both lists")]),
                                           upstream=NS(sha=S2, subject=COMMITS[0]["subject"]), keep="refs/forksync/resolutions/x",
                                           picked=[S3], conflict=S4, empty=True, failed=""),
    "checks/gate.md.j2": dict(pr=NS(number=412, head_sha=FORK, base_sha=S1), decision=GateDecision(
        allowed=False, blocking=(Finding("suite-red", "2 tests failed | see the run", "kernels@h200"),
                                 Finding("l3-signoff", "needs a sign-off by @alice", "area llvm-pin")),
        passed=(Finding("approved", "approved by @bob on the head"),),
        pre_existing=(Finding("suite-red", "red on the base too", "lit@cpu"),),
        actions=("run-suites",), listed=(Finding("newly-skipped", "1 test newly skipped", "kernels@h200"),))),
    "checks/gate_note.md.j2": dict(notes=["`kernels` changes in this PR take effect after merge", "L3 pending"]),
    "checks/suite.md.j2": dict(title="kernels on h200: red (2 failed)", r=RESULT, expected=31,
                               failing=[NS(id="test_softmax[128]", outcome="failed", message="AssertionError: |x| > 1e-3\nmore"),
                                        NS(id="test_softmax[256]", outcome="failed", message=None)],
                               shown=None, skipped=["test_fp8[b200]"], skipped_shown=["test_fp8[b200]"],
                               earlier_red=[{"at": "2026-04-01T10:00:00Z", "outcome": "fail",
                                             "check_url": "https://github.com/meta/triton/runs/7"},
                                            {"at": None, "outcome": "error", "check_url": None}]),
    "checks/suite_started.md.j2": dict(suite="kernels", level="L1", platform="h200", sha=FORK, backend="local"),
    "issues/nightly_missing.md.j2": dict(missing=[NS(sha=FORK, suite="kernels", platform="h200", waited_s=9000),
                                                  NS(sha=FORK, suite="lit", platform="mi350", waited_s=9000)]),
    "issues/nightly_arrived.md.j2": dict(sha=FORK, waited_s=5400, at="2026-12-02 04:30 UTC"),
    "issues/regression.md.j2": dict(ev=EVIDENCE),
    "prs/backout.md.j2": dict(ev=EVIDENCE, reason="it slowed matmul-fp8 by 12.40 %", issue_number=77,
                              message="Revert \"[AMD] Tune fp8 matmul (#9301)\"\n\nUpstream-Commit: " + "a" * 40 + "\n"),
    "validation/l3_result.md.j2": dict(run=NS(workload="llama-70b-e2e", platform="h200", head_sha=FORK, requested_by="alice"),
                                       result=NS(verdict="red", reasons=[NS(code="slower", detail="3.1 % slower")]),
                                       title="3.1 % slower than the base", check="forksync/l3/llama-70b-e2e", url=""),
    "validation/l3_not_run.md.j2": dict(run=NS(workload="llama-70b-e2e", platform="h200", head_sha=FORK,
                                                requested_by="alice"),
                                        why="the head moved from `aaaaaaaaaaaa` to `bbbbbbbbbbbb`",
                                        next="`/forksync l3 llama-70b-e2e` runs it on the current head."),
    "triage/issue.md.j2": dict(marker="<!-- forksync:triage:softmax-accuracy -->", key="softmax-accuracy",
                               rule_title="Fused softmax exceeds its error bound", cls="real", crash=False,
                               signature="check | AssertionError: Tensor-likes are not close! | `x`", status="STATUS",
                               blame="BLAME", sample="E   AssertionError: Tensor-likes are not close!\n```\n",
                               suggested_rule={"id": "softmax", "title": 'Softmax "bound"', "pattern": "Tensor-likes",
                                               "type": "check", "stage": "test"}),
    "triage/blame.md.j2": dict(culprit=None, suspects=SUSPECTS, good="", bad=FORK, good_run="", bad_run="nightly-2"),
    "triage/status.md.j2": dict(runs=[{"run": f"nightly-{i}", "commit": FORK, "time": f"2026-12-0{i} 00:00"} for i in (1, 2)],
                                platforms=["cpu", "h200"], first_seen="2026-12-01", last_seen="2026-12-02", green_streak=0,
                                close_after=3, cases=2, tests=[{"test": "python/test/unit/kernels.py::test_softmax",
                                                                      "params": ["128", "256"], "of": 4}],
                                latest={"run": "nightly-2", "commit": FORK, "time": "2026-12-02 00:00", "result": "failed"},
                                last_green="", last_green_run=""),
    "triage/closed.md.j2": dict(streak=3, run="nightly-5", commit=FORK),
    "triage/culprit.md.j2": dict(culprit=SUSPECTS[0], mention="@alice"),
    "triage/flood.md.j2": dict(run="nightly-9", commit=FORK, cap=10, opened=[
        {"key": "a", "cls": "real", "runs": 2, "issue": 41, "title": "test_dot (4 cases): OutOfResources: out of resource: shared memory",
         "tests": "test_dot (4 cases)", "cases": 4, "signature": "OutOfResources|x"}], waiting=[
        {"key": "b", "cls": "real", "runs": 1, "issue": None, "title": "test_softmax: ValueError: arange's range must be a power of 2",
         "tests": "test_softmax", "cases": 1, "signature": "ValueError|y", "failed": True}]),
    "triage/flood_closed.md.j2": dict(run="nightly-12", commit=FORK),
    "triage/proposed_fix_comment.md.j2": dict(marker="<!-- forksync:proposed-fix:softmax-accuracy -->", key="softmax-accuracy",
                                              run="nightly-2", fix=None),
    "triage/reopened.md.j2": dict(run="nightly-7", commit=FORK),
    "agents/conflict_report.md.j2": dict(status="committed", upstream_sha=S2, paths=["README.md"], model=SCRIPTED_MODEL,
                                         commit="c1" * 20, summary="kept both conference lines", rails=["markers gone", "paths"],
                                         files=[NS(path="README.md", action="merged", reason="both | lists")], sanitized_notes=[]),
    "agents/proposed_fix.md.j2": dict(status="proposed", model="claude-sonnet-4-6", confidence="high", diagnosis="BK=128 needs "
                                      "262144 bytes of shared memory", patch="--- a/k.py\n+++ b/k.py\n@@\n-BK = 128\n+BK = 64\n",
                                      sanitized_notes=["a link was removed"]),
    "agents/test_summary.md.j2": dict(title="kernels", verdict="red", counts={"passed": 28, "failed": 2}, failing=["a", "b"],
                                      more_failing=3, summary="two softmax sizes fail", model=SCRIPTED_MODEL,
                                      sanitized_notes=[], reason=""),
    "agents/github/draft_verdict.md.j2": dict(ok=False, head=FORK, reason="L1 has not passed on c1c1c1c1c1c1 yet"),
    "agents/github/not_draft_comment.md.j2": dict(commit="c1" * 20),
    "agents/github/pr_section.md.j2": dict(report="### Conflict resolution by an agent\n\nThe pick conflicted."),
    "agents/github/rejected_comment.md.j2": dict(upstream_sha=S2, branch="forksync/chain-x", status="rejected", rail="paths",
                                                 report="- Rail: **paths**\n- Why: touched a file outside the conflict"),
    "agents/github/report_comment.md.j2": dict(upstream="a1" * 6, commit="c1" * 6, limit=65536,
                                               report="### Conflict resolution by an agent\n\nThe pick conflicted."),
    "agents/github/report_moved.md.j2": dict(upstream="a1" * 6, commit="c1" * 6, limit=65536,
                                             link="https://github.com/meta/triton/pull/7#issuecomment-1"),
}
CASES["checks/suite.md.j2"]["shown"] = CASES["checks/suite.md.j2"]["failing"]


def people_templates() -> list[str]:
    return sorted(str(p.relative_to(TEMPLATES)) for p in TEMPLATES.rglob("*.md.j2") if "prompts" not in p.parts)


def rendered(name: str) -> str:
    ctx = CASES[name]
    if name == "github/status_issue.md.j2":
        st = SyncStatus(repo="meta/triton", upstream_head=S4, frontier=S4, contiguous_pin=S1, days_behind=0.0, backlog=29,
                        upstream_seen_at=1000.0, last_fetch_error="403 Forbidden", held=True,
                        deferred=({"sha": S3, "subject": COMMITS[1]["subject"], "reason": "waits for LLVM"},),
                        units=UNITS,
                        blocked=({"id": "chain-9c2cefdb65a4", "branch": "forksync/chain-9c2cefdb65a4", "pr": 0, "url": "",
                                  "reason": "refusing to allow a GitHub App to create or update workflow", "requires": "workflows",
                                  "path": ".github/workflows/ci.yml", "step": "push", "at": 1000.0, "commits": 2},),
                        failing_jobs=({"job": "reconcile", "error": "GitHubAPIError: GitHub answered 502 | twice", "since": 1000.0,
                                       "at": 2000.0, "count": 3},),
                        rewound={"ref": "main", "from": S4, "to": S1,
                                 "commits": [{"sha": S2, "subject": COMMITS[0]["subject"]},
                                             {"sha": S3, "subject": COMMITS[1]["subject"]}],
                                 "units": [{"id": CHAIN.id, "branch": f"forksync/{CHAIN.id}", "pr": 412, "shas": [S2, S3]}],
                                 "at": 1000.0})
        return render_status(st, stale_after_s=86400, alarm_after_s=3 * 86400, now=1000.0 + 4 * 86400,
                             dead_letters=[{"id": "d-1", "event": "push", "action": "", "reason": "timeout", "at": 1000.0}],
                             login_unknown="token mode without FORKSYNC_BOT_LOGIN, and GET /user failed with 502 (Server Error)")
    if name == "triage/proposed_fix_comment.md.j2":
        ctx = {**ctx, "fix": rendered("agents/proposed_fix.md.j2")}
    if name == "triage/issue.md.j2":
        ctx = {**ctx, "status": rendered("triage/status.md.j2"), "blame": rendered("triage/blame.md.j2")}
    if name.startswith("agents/"):
        return agents_render.render(name.removeprefix("agents/"), **ctx)
    return render(name, **ctx)


def test_every_template_a_person_reads_has_a_case():
    assert people_templates() == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_template_renders_to_well_formed_markdown(name):
    assert problems(rendered(name)) == []


def test_sync_pr_body_lists_stay_lists():
    body = rendered("github/sync_pr_body.md.j2")
    # the chain's conflicted commits: one numbered item each, numbered 1, 2 (not 1, 3), on their own lines; the
    # pick it stopped at with the files git stopped on, the later ones with the plan's prediction
    assert f"order to resolve them:\n1. `{S2[:12]}` — `README.md`, `docs/conf.py`, `python/triton/knobs.py` (the conflict " \
           f"commit)\n2. `{S4[:12]}` — predicted: `test/Conversion/amd/cluster_load.mlir`, " \
           "`third_party/amd/lib/TritonAMDGPUToLLVM/BarrierOpToLLVM.cpp`\n" in body
    # the stopped pick's conflicted files: an ordered list of 3, its hunks fenced inside the items
    blocks = structure(body)
    assert blocks.count("ordered_list_open") == 2 and blocks.count("table_open") == 2
    assert "heading_open h2" in blocks and "heading_open h3" in blocks
    # what it lands after: a pull request where there is one, and the truth where there is none
    assert "**Lands after** #412 (`chain-01d3c87a74a2`), `chain-9c2cefdb65a4`: it changes files those chains change" in body
    assert ("- `chain-9c2cefdb65a4` has no pull request yet: its first pick (upstream `9c2cefdb65a4` [AMD][NFC] Use ROCDL ops "
            "for WaitAsyncCntOp/WaitTensorCntOp (#\u200d8820)) does not apply cleanly; the status issue says what it needs. This pull "
            "request waits for it.") in body


def test_sync_pr_body_of_a_chain_without_conflicts_or_dependencies():
    body = render("github/sync_pr_body.md.j2", **{**SYNC_BODY, "unit": Unit(CHAIN.id, "chain", CHAIN.items), "deps": [],
                                                  "commits": [{**c, "conflicts": []} for c in COMMITS], "stopped": None,
                                                  "by_rules": []})
    assert problems(body) == [] and "Lands after" not in body
    assert "**Land this chain in order; do not squash.**\n" in body and "order to resolve" not in body


def test_sync_pr_body_landing_after_a_bundle_says_unit():
    deps = [{"id": "bundle-01d3c87a74a2", "pr": 411, "blocked": "", "first": "", "subject": "", "kind": "bundle"}]
    body = render("github/sync_pr_body.md.j2", **{**SYNC_BODY, "deps": deps})
    assert problems(body) == []
    assert "**Lands after** #411 (`bundle-01d3c87a74a2`): it changes files that unit changes" in body


def test_the_status_issue_says_what_each_open_unit_waits_for_and_how_many_wait_for_it():
    """A maintainer asking why a unit has not landed reads it on the unit's line: the units it lands
    after not landed yet (the gate's `lands-after`), a closed unmerged one with what unblocks it, and
    at most three named — a real fork has tens of open units."""
    body = rendered("github/status_issue.md.j2")
    lines = {u["id"]: next(x for x in body.splitlines() if f"<!-- retry:{u['id']} -->" in x) for u in UNITS}
    assert lines[f"bundle-{S1[:12]}"].endswith("(bundle, [#411](https://github.com/meta/triton/pull/411), open; "
                                               "2 units wait for it)"), lines
    assert lines[CHAIN.id].endswith(
        "open; waits for #398 (`bundle-9c2cefdb65a4`), closed unmerged: `/forksync reconsider 9c2cefdb65a4` (and its other 1) "
        f"plans it again, or close #412 to plan its commits again on the fork as it is; #411 (`bundle-{S1[:12]}`))"), lines
    assert lines["chain-ca003a09e8b2"].endswith(
        f"(chain, open; waits for #411 (`bundle-{S1[:12]}`), #412 (`{CHAIN.id}`), `chain-9c2cefdb65a4` and 2 more)"), lines
    # a unit that waits for nothing, and none waits for, says neither
    plain = render("github/unit_waits.md.j2", u={"id": CHAIN.id, "pr": 412, "waits_for": [], "waited_by": 0})
    assert plain == "", plain
    one = render("github/unit_waits.md.j2", u={"id": CHAIN.id, "pr": 412, "waited_by": 1,
                                                "waits_for": [{"id": "bundle-x", "pr": 0, "state": "decided", "shas": []}]})
    assert one == ("; waits for `bundle-x`, closed unmerged by forksync (every commit decided): `/forksync reconsider` its "
                   "commits plans it again, or close #412 to plan its commits again on the fork as it is; 1 unit waits for it"), one


def test_the_rebase_hint_of_a_branch_folding_a_resolution_says_where_the_resolution_is():
    """Blocked after the fork's history was rewritten under a chain whose pick folds a person's
    conflict resolution, and no commit of a person on it (bot.sync.blocked.rewritten_under,
    ``resolved_by_hand``): there is no person's commit to rebase — the resolution is inside
    forksync's pick, whose ``Resolved-by:`` names them."""
    branch = f"forksync/{CHAIN.id}"
    b = {"requires": "rebase", "branch": branch, "folded": True}
    hint = render("github/blocked_hint.md.j2", b=b, config_path=".github/forksync.yml")
    assert problems(hint) == []
    assert "a person's commits are on" not in hint, hint
    assert "`Resolved-by:`" in hint and f"`{branch}`" in hint and "resolve" in hint, hint
    # a branch with a person's commits on it keeps the hint that says to rebase them
    theirs = render("github/blocked_hint.md.j2", b={**b, "folded": False}, config_path=".github/forksync.yml")
    assert f"a person's commits are on `{branch}`: rebase them" in theirs, theirs


def test_blame_without_a_green_nightly_names_no_empty_commit():
    assert "_Ranked suspects up to the first red nightly (`nightly-2` at `db4666f22c1f`): no green nightly of these tests " \
           "is known, so the range has no lower end; bisection needs one._" in rendered("triage/blame.md.j2")


def test_config_errors_table_has_one_row_per_problem():
    body = rendered("github/config_invalid.md.j2")
    assert "| 41 | `areas[tlx].divergnt` | unknown key `divergnt`; did you mean `divergent`? |" in body
    assert "| 80 | (the file) | not valid YAML: expected ',' or ']', but got '-' |" in body
    assert "| - | `bundle_size_cap` | Input should be greater than or equal to 1 \\| or so |" in body


@pytest.mark.parametrize("text, found", [
    ("1. a\n2. b\n", []),
    ("Conflicted:\n1. `a` — `x`2. `b` — `y`\n", ["list items run together on one line"]),
    ("Conflicted:\n1. `a`\n3. `b`\n", ["ordered list numbered [1, 3], not [1, 2]"]),
    ("text\n2. `b`\n", ["ordered item inside a paragraph"]),
    ("a ``\n", ["empty code span"]),
    ("x {{ y }}\n", ["unrendered template syntax '{{'"]),
    ("```cpp\nstd::vector<int> v{{1, 2}};\n```\n", []),
    ("para\n    ## not a heading\n", []),
    ("    indented\n", ["indented text became a code block"]),
    ("| a | b |\n|---|---|\n| 1 | 2 |\n", []),
])
def test_the_checker_finds_what_readers_would_see(text, found):
    got = problems(text)
    assert len(got) == len(found) and all(g.startswith(f) for g, f in zip(got, found)), got


def test_templates_dir_is_the_one_rendered():
    assert Path(TEMPLATES, "github", "sync_pr_body.md.j2").is_file()


@pytest.mark.parametrize("text", ["waits for the ROCm 7 bump", "keeps `tl.dot` as is, ask @carol", "`x`", "a ``b`` c",
                                  "ends in `", "two\nlines"])
def test_a_persons_text_echoed_as_a_code_span_shows_verbatim_and_pings_no_one(text):
    """A command line (with its reason) is echoed in the reply as one code span: backticks in it
    cannot end the span early, and an @mention in it is code, which GitHub does not notify."""
    from markdown_it import MarkdownIt

    from bot.templating import code_span

    [para] = [t for t in MarkdownIt("commonmark").parse(f"@bob {code_span(text)}: done") if t.type == "inline"]
    kinds = [(c.type, c.content) for c in para.children]
    assert kinds == [("text", "@bob "), ("code_inline", text.replace("\n", " ")), ("text", ": done")]


@pytest.mark.parametrize("text, shown", [
    ("[AMD] keep <!-- the old layout", "[AMD] keep <!-- the old layout"),
    ("Fix the MMA layout (#4567)", "Fix the MMA layout (#\u200d4567)"),
    ("Revert, cc @ptillet and @triton-lang/core", "Revert, cc @\u200dptillet and @\u200dtriton-lang/core"),
    ("a | b & c &lt; d", "a | b & c &lt; d"),
    ("use `a<b | @x #1` here, GH-12", "use a<b | @x #1 here, GH-\u200d12"),
    ("two\nlines", "two lines"),
])
def test_text_from_git_shows_as_written_and_acts_on_nothing(text, shown):
    """An upstream subject in a table cell (``inert``): shown as written (a zero-width joiner after
    the ``@`` of a mention and the ``#`` of an issue reference, which is what stops GitHub acting
    on them), no HTML comment or tag started, the table row kept to its cells, code spans as written."""
    from markdown_it import MarkdownIt

    from bot.templating import inert

    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(f"| n | subject |\n|---|---|\n| 1 | {inert(text, cell=True)} |\n\nafter")
    cells = [t for t in tokens if t.type == "inline"]
    assert [c.content for c in cells][:3] == ["n", "subject", "1"] and len(cells) == 5    # one row of two cells, "after"
    seen = "".join(c.content for c in cells[3].children if c.type in ("text", "code_inline"))
    assert seen == shown
    assert not [c for c in cells[3].children if c.type.startswith("html")]
    assert cells[-1].content == "after"


def test_a_stopped_chains_order_of_conflicts_names_the_files_git_stopped_on_not_the_prediction():
    """The Triton fork's chain-f7c6634776f6 (plan as of 2026-04-15): upstream #9077 was predicted
    to conflict in CMakeLists.txt and ProxFenceInsertion.cpp (a rename); applied, git stops on
    CMakeLists.txt alone. The engineer sees the stop list one file, and two lines below "Conflicted
    files and the order to resolve them" tell them to resolve both. They should see, for the pick
    the chain stopped at, the files git stopped on; a prediction only for the picks after it."""
    sha = "f7c6634776f66515a6543fc5adb9dbfc96f29f8e"
    later = "0d6a0508d431" + "0" * 28
    subject = "Correct the filename of ProxFenceInsertion (#9077)"
    cmake, fence = "lib/Dialect/TritonNvidiaGPU/Transforms/CMakeLists.txt", \
        "lib/Dialect/TritonNvidiaGPU/Transforms/ProxFenceInsertion.cpp"
    commits = [{"sha": sha, "subject": subject, "pr": 9077, "conflicts": [cmake, fence]},
               {"sha": later, "subject": "[NVIDIA] Fence proxies (#9100)", "pr": 9100, "conflicts": [fence]}]
    unit = Unit(f"chain-{sha[:12]}", "chain", tuple(PlanItem(c["sha"], "r", tuple(c["conflicts"])) for c in commits),
                reason=f"predicted cherry-pick conflicts in {cmake}, {fence}")
    stopped = {**STOPPED, "sha": sha, "subject": subject, "pr": 9077, "remaining": 2,
               "files": [{"path": cmake, "kind": "content", "hunks": [HUNK], "old_path": "",
                                  "hunks_total": 1}]}
    body = render("github/sync_pr_body.md.j2", **{**SYNC_BODY, "unit": unit, "commits": commits, "deps": [],
                                                  "by_rules": [], "stopped": stopped, "branch": f"forksync/{unit.id}"})
    assert problems(body) == []
    order = body[body.index("order to resolve them"):body.index("\n\n", body.index("order to resolve them") + 30)]
    first = next(line for line in order.splitlines() if line.startswith("1. "))
    assert sha[:12] in first and f"`{cmake}`" in first and fence not in first, order
    second = next(line for line in order.splitlines() if line.startswith("2. "))
    assert later[:12] in second and "predicted" in second and f"`{fence}`" in second, order


# What the CLI prints to a person comes from templates/cli/ (bot.cli.text); these calls may carry
# text of their own in code: none so far. Machine output (JSON, YAML, bare shas and ids) has no
# words of its own, and argparse's help strings are the CLI reference (docs/cli-reference.md).
CLI_TEXT_IN_CODE: set[str] = set()
#: the calls that put text in front of a person: print, a stream's or console's write/print, a
#: warning, an error the CLI prints as "forksync: <text>" (UserError and the CLI's subclasses of
#: it), the plain-text answer of a page the CLI serves (``app setup``'s redirect)
_SINKS = {"print", "write", "warn_once", "UserError", "Response"}


def _cli_modules():
    import ast

    paths = sorted((Path(__file__).resolve().parents[1] / "bot" / "cli").glob("*.py"))
    assert len(paths) > 10
    for path in paths:
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def _sinks(trees) -> set[str]:
    """:data:`_SINKS` and each class of ``trees`` derived from one of them (``class
    NotPemKey(UserError)``): raising it prints its message as UserError's is printed."""
    import ast

    sinks, grew = set(_SINKS), True
    classes = [n for tree in trees for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    while grew:
        new = {c.name for c in classes if any(isinstance(b, ast.Name) and b.id in sinks for b in c.bases)} - sinks
        sinks |= new
        grew = bool(new)
    return sinks


def _says_words(call, sinks) -> bool:
    """Does ``call`` put words of code's own in front of a person: a sink called with a string
    literal holding a letter in a positional argument (or, for a page's ``Response``, in its
    ``text``/``body``)?"""
    import ast

    name = call.func.id if isinstance(call.func, ast.Name) else call.func.attr if isinstance(call.func, ast.Attribute) else ""
    if name not in sinks:
        return False
    args = [*call.args, *(k.value for k in call.keywords if name == "Response" and k.arg in ("text", "body"))]
    return any(_words_in_code(a) for a in args)


def _words_in_code(node) -> bool:
    """Does ``node`` (a call's argument) hold a string literal with a letter in it, outside the
    calls it makes (``text("plan", "header", …)`` names a template block; its result is not code's)?"""
    import ast

    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Call):
            continue
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and any(c.isalpha() for c in n.value):
            return True
        stack.extend(ast.iter_child_nodes(n))
    return False


def test_the_cli_prints_no_words_of_its_own():
    """A message built in code (``print(f"stopped at {sha}")``) is a text no template holds: the
    CLI says it through bot.cli.text and a block of templates/cli/ instead."""
    import ast

    modules = list(_cli_modules())
    sinks = _sinks([tree for _, tree in modules])
    assert "NotPemKey" in sinks         # serve's error for a key file that is no PEM text
    found = set()
    for path, tree in modules:
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and _says_words(n, sinks):
                found.add(f"{path.name}:{n.lineno}: {ast.unparse(n)[:90]}")
    assert {f.split(":")[0] + ":" + f.split(": ", 1)[1] for f in found} - CLI_TEXT_IN_CODE == set(), sorted(found)


#: what bot/sync/service.py keeps as literals with words: its log lines (an operator's, never a
#: person's on GitHub), a regular expression, a git format, and a programming error's message
SERVICE_NOT_TEXTS = {
    "%s: planned %d pending commit(s) into %d unit(s): %d merge(s) computed, %d read from the cache, "
    "%d file change(s)' symbols computed, %.2f s",
    "%s: removed git lock file(s) a git killed mid-run left: %s",
    "%s: the working repository was damaged (%s); %s", "removed, to be cloned again",
    "the damaged refs removed, to be fetched again",
    "%s: removed what a pack writer killed mid-write left in %s: %s",
    "deterministic rules skipped on %s at %s: %s",
    "%s: %s is at the fold %s although its push failed (%s); recorded",
    "%s: %s held by a rewind could not be checked on its release: %s",
    "%s: %s is at %s, the fold a run that stopped before recording it pushed; recorded now",
    "^Resolved-by:[ \\t]*(.+?)[ \\t]*$", "--format=%H %s", "bot.sync.rebuild asked for an unknown fact ",
}


@pytest.mark.parametrize("code, found", [
    ('print(f"stopped at {sha}")', True),
    ('print("forksync: interrupted", file=sys.stderr)', True),
    ('console.print(t)', False),
    ('print(json.dumps(doc, indent=2))', False),
    ('out.write(json.dumps(o) + "\\n")', False),
    ('say("plan", "picked", upstream=u)', False),
    ('print(text("plan", "header", tip=t))', False),
    ('warn_once(records(xs) + " Was upstream rewritten?")', True),
    ('UserError(f"--port {port}: a TCP port is 0–65535")', True),
    ('UserError("App mode needs FORKSYNC_PRIVATE_KEY_FILE")', True),
    ('NotPemKey(f"{path} is not a PEM key")', True),
    ('UserError(text("serve", "port_in_use", port=port, host=host))', False),
    ('UserError(str(e))', False),
    ('UserError(f"{where}: {e}")', False),
    ('web.Response(status=409, text="this setup has already finished")', True),
    ('web.Response(status=409, text=text("app", "already_finished"))', False),
    ('web.Response(text=html, content_type="text/html")', False),
])
def test_the_check_finds_words_in_code(code, found):
    import ast

    call = ast.parse(code).body[0].value
    sinks = _sinks([ast.parse("class NotPemKey(UserError):\n    pass")])
    assert _says_words(call, sinks) == found


def test_every_cli_text_named_in_code_is_a_block_of_its_template_and_every_block_is_said():
    """``say("plan", "picked", …)`` and ``text(…)`` name a block of templates/cli/plan.txt.j2: a
    misspelt name would fail only when that message is due; a block no code names is dead text."""
    import ast

    from bot.templating import environment

    named = set()
    for _, tree in _cli_modules():
        for n in ast.walk(tree):
            if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
                continue
            # add_row(table, family, part, …) renders a table's row
            args = n.args[1:3] if n.func.id == "add_row" else n.args[:2] if n.func.id in ("say", "text", "cli_text") else []
            if len(args) == 2 and all(isinstance(a, ast.Constant) for a in args):
                named.add((args[0].value, args[1].value))
    blocks = {(p.name.removesuffix(".txt.j2"), b) for p in Path(TEMPLATES, "cli").glob("*.txt.j2")
              for b in environment().get_template(f"cli/{p.name}").blocks}
    assert named - blocks == set() and blocks - named == set(), (sorted(named - blocks), sorted(blocks - named))


# The gate's findings (templates/checks/findings.txt.j2) and a blocked unit's words
# (templates/github/blocked.txt.j2) are one-line blocks shown inside other texts: each block has a
# case with data shaped like the Triton fork's, rendered where a person reads it.
TESTS = [f"python/test/unit/language/test_core.py::test_dot[1-64-128-128-{w}-True-True-none-tf32-float32-float32-1-None]"
         for w in (1, 2, 4, 8)] + ["python/test/unit/language/test_matmul.py::test_simple_matmul[float8e5-128-256-64-4]"] * 8
FINDING_CASES: dict[str, dict] = {
    "config_invalid": dict(error="areas[tlx].divergnt: unknown key `divergnt`; did you mean `divergent`? (line 41)"),
    "conflict_markers": dict(files=("README.md", "third_party/amd/lib/TritonAMDGPUToLLVM/BarrierOpToLLVM.cpp")),
    "markers_unchecked": dict(error="git fetch origin refs/pull/412/head failed (128): fatal: couldn't find remote ref"),
    "conflict_commit": dict(commit="c0" * 20, upstream=S2),
    "picks_missing": dict(missing=(S2, S3, S4)),
    "lands_after": dict(units=((f"chain-{S1[:12]}", 412), ("chain-9c2cefdb65a4", 0))),
    "lands_after_closed": dict(unit=f"chain-{S1[:12]}", number=412, state="decided", upstream=(S1, S2)),
    "picks_squashed": dict(commit=FORK, upstream=(S2, S3)),
    "rewritten_base": dict(dropped=(S1, FORK)),
    "hold": dict(holds=("fiona", "@triton-lang/amd")),
    "draft": dict(),
    "base_current": dict(base=S1),
    "stale_base": dict(base=S1, conflict=True),
    "awaiting_retest": dict(author="outside-contributor"),
    "stale_result": dict(older=[S2[:12], S3[:12]], head=FORK),
    "missing_result": dict(head=FORK),
    "pending_result": dict(),
    "suite_green": dict(pre_existing=2),
    "pre_existing": dict(test=TESTS[0], base=S1),
    "new_failure": dict(tests=TESTS, compared=False),
    "fail_without_tests": dict(reason="short: ran 30 of 31 expected | fewer"),
    "infrastructure": dict(reason="no GPU: nvidia-smi found no device"),
    "suite_error": dict(reason="", verdict="'timeout'", gone=TESTS[:3], ran_on=S3, base=S1),
    "skipped": dict(tests=TESTS),
    "newly_skipped": dict(tests=TESTS[:3], ran_on=S3, base=S1, allowed=False),
    "checks_unread": dict(error="GitHub answered 404 Not Found for rules/branches/main"),
    "no_required_checks": dict(),
    "check_note": dict(app=15368, apps=[29110], unknown_app=True, status=True, rule="the ruleset `main` (rule 2)"),
    "check_failed": dict(states=[("check-run", "failure"), ("status", "error")], note=" — required by the ruleset `main`"),
    "check_running": dict(kind="status", note=""),
    "check_green": dict(conclusion="neutral"),
    "approved": dict(by=["alice", "bob"], chain=True),
    "approval_missing": dict(owners=["alice", "bob"], set_aside=["carol"], head=FORK),
    "changes_requested": dict(by=["alice"]),
    "l3_suite_gone": dict(workload="llama-70b-e2e"),
    "l3_pending": dict(workload="llama-70b-e2e", state="queued", head=FORK),
    "l3_green": dict(head=FORK),
    "l3_failed": dict(head=FORK, reason="", failing=TESTS, verdict="'fail'"),
    "l3_no_result": dict(head=FORK, verdict=""),
    "l3_stale": dict(older=[S2[:12]], head=FORK, workload="llama-70b-e2e"),
    "signed_off": dict(by="alice"),
    "signoff_missing": dict(target="llvm-pin", people=["alice", "bob"], owners=True, signed=["alice"], before="l3", head=FORK,
                            ask_l3=True, l3_suites=["heavy", "llama-70b"]),
    "title": dict(allowed=False, n=3),
}
BLOCKED_CASES: dict[str, dict] = {
    "held_for_person": dict(path=".github/workflows/integration-tests.yml"),
    "rewritten_under": dict(dropped=2, fork_ref="main", foreign=0, resolved_by_hand=True),
    "pick_failed": dict(),
    "refused": dict(),
    "what": dict(step="apply", sha=S2),
}
# The dashboard's own words inside its documents (templates/dashboard/texts.txt.j2): a unit's state
# (open, blocked, stopped at a conflict, planned), why numbers are stale, and why a query was refused.
DASHBOARD_CASES: dict[str, dict] = {
    "decided": dict(decided=DECIDED),
    "pick_failed": dict(what=f"its pick of upstream {S2[:12]} failed", reason=f"git cherry-pick {S2} failed (1): error: <img src=x> & co"),
    "conflict": dict(sha=S2, waiting=True, cut=True),
    "refused": dict(step="", reason="refusing to allow a GitHub App to create or update workflow `.github/workflows/ci.yml`"),
    "gone": dict(),
    "unknown_time": dict(),
    "l1": dict(gate="green"),
    "in_flight": dict(),
    "planned": dict(cap=4),
    "never_synced": dict(),
    "no_result": dict(),
    "hidden": dict(n=2, noun="problem"),
    "no_fork": dict(fork=repr("meta/<triton>")),
    "bad_date": dict(name="since", value=repr("2026-02-30")),
    "bad_count": dict(name="limit", value=repr("1_0")),
    "repeated": dict(name="limit", times=2),
    "bad_disposition": dict(value=repr("PICKED'<"), dispositions=("PICKED", "NO_OP", "DEFERRED_BLOCKED")),
    "out_of_range": dict(),
    "nul": dict(name="q", value=repr("a\x00")),
    "not_a_commit": dict(value=repr("zz<z")),
    "not_in_ledger": dict(sha=S2, fork="meta/triton"),
    "ambiguous": dict(sha=S2[:7], total=2),
    "not_readable": dict(fork=repr("meta/<triton>")),
    "unasked": dict(fork=repr("meta/<triton>")),
    "no_page": dict(page=repr("<img src=x>"), pages=("overview", "units")),
    "no_api_page": dict(page=repr("<img src=x>"), pages=("overview", "units")),
    "no_static_file": dict(name=repr("<img src=x>.js")),
    "no_path": dict(path="/forks/meta/<triton>"),
    "read_only": dict(method="POST", path="/api/v1/<img src=x>"),
    "not_built": dict(error="OperationalError"),
    "error_title": dict(status=404),
}
#: the unit states of the Units page (a table cell); the other blocks are a page's error message
DASHBOARD_UNIT_STATES = {"decided", "pick_failed", "conflict", "refused", "gone", "l1", "in_flight", "planned"}
# Words gathering the gate's input gives to what it read (templates/checks/inputs.txt.j2): each is
# the detail, or part of the detail, of a finding; the finding it goes into and under which name.
INPUTS_CASES: dict[str, tuple[dict, str, str]] = {
    "no_repository": (dict(), "markers_unchecked", "error"),
    "commits_unlisted": (dict(listed=250, error="git fetch origin refs/pull/412/head failed (128): fatal: couldn't find remote ref"),
                         "markers_unchecked", "error"),
    "held_by_command": (dict(), "hold", "holds"),
    "held_by_label": (dict(label="forksync:hold"), "hold", "holds"),
    "ruleset_rule": (dict(ruleset_id=4021, source_type="Repository", source="meta/triton"), "check_note", "rule"),
}

# A sync's own words (templates/github/sync_texts.txt.j2): its summary lines, the status issue's
# unit states, the problems a resolution check names, and the replies to /forksync commands.
CU = f"chain-{S2[:12]}"
SYNC_CASES: dict[str, dict] = {
    "issues_off": dict(repo="facebookexperimental/triton"),
    "no_upstream": dict(repo="facebookexperimental/triton"),
    "no_op_reason": dict(fork_head=FORK[:12]),
    "no_ops": dict(n=3),
    "planned": dict(repo="facebookexperimental/triton", reason="push to triton-lang/triton main", n=4),
    "in_flight": dict(),
    "rewound": dict(ref="main", since=S1[:12], tip=S3[:12], held=2, carried=5),
    "ended_while_planned": dict(unit=CU, state="landed", pr=412),
    "ended_while_running": dict(unit=CU, state="closed", pr=412),
    "held": dict(unit=CU, ref="main"),
    "released": dict(unit=CU, head=S2[:12], what="folded"),
    "units_wait": dict(n=3, cap=4),
    "waiting_state": dict(cap=4),
    "unclosed": dict(repo="facebookexperimental/triton", errors=f"#412 ({CU}): 502 Bad Gateway"),
    "retrying": dict(repo="facebookexperimental/triton", n=1, reasons=f"{CU}: GitHub answered 502 to the push"),
    "found_closed": dict(pr=412, merged=False, unit=CU),
    "moved_on_github": dict(unit=CU, branch=f"forksync/{CU}", tip=FORK[:12]),
    "nothing_applied": dict(unit=CU, conflict=S2[:12], error=None),
    "first_commit_blocked": dict(unit=CU, sha=S2[:12], files="third_party/amd/lib/TritonAMDGPUToLLVM/BarrierOpToLLVM.cpp, README.md"),
    "published": dict(unit=CU, pr=412, what="opened", conflict=S2[:12], reason=None, agent="conflict agent: committed"),
    "then": dict(note="PR #412 updated"),
    "decided_all": dict(unit=CU),
    "lands_after_retold": dict(unit=CU, pr=412, what="updated"),
    "rebuilt_without": dict(n=2),
    "decided_kept": dict(unit=CU, n=2, said=True),
    "agent_cut": dict(deadline="1800"),
    "agent_not_tried": dict(deadline="1800"),
    "blocked": dict(unit=CU, what=f"its pick of upstream {S2[:12]} failed", reason="git cherry-pick failed (1)"),
    "state_person": dict(),
    "state_rebase": dict(),
    "state_blocked": dict(what=f"its pick of upstream {S2[:12]} failed"),
    "state_draft": dict(person=True),
    "state_conflict": dict(sha=S2[:12]),
    "status_off": dict(),
    "status_issue": dict(number=7, what="updated"),
    "status_absent": dict(),
    "conflict_commit_gone": dict(commit=FORK[:12], upstream=S2[:12], keep=f"refs/forksync/keep/{CU}/{FORK[:12]}"),
    "upstream_rewritten": dict(sha=S2[:12], ref="main"),
    "folded_reason": dict(sha=S2[:12], branch=f"forksync/{CU}"),
    "agent_reason": dict(branch=f"forksync/{CU}"),
    "resolve_not_chain": dict(),
    "resolve_not_stopped": dict(),
    "resolve_no_agent": dict(),
    "no_plan": dict(user="fiona"),
    "pick_not_one": dict(target="#9012", n=3),
    "requested_by": dict(user="fiona"),
}


def _blocks(name: str) -> set[str]:
    from bot.templating import environment

    return set(environment().get_template(name).blocks)


def test_every_finding_and_blocked_text_has_a_case():
    assert set(FINDING_CASES) == _blocks("checks/findings.txt.j2")
    assert set(BLOCKED_CASES) == _blocks("github/blocked.txt.j2")
    assert set(DASHBOARD_CASES) == _blocks("dashboard/texts.txt.j2")
    assert set(INPUTS_CASES) == _blocks("checks/inputs.txt.j2")
    assert set(SYNC_CASES) == _blocks("github/sync_texts.txt.j2")


@pytest.mark.parametrize("block", sorted(FINDING_CASES))
def test_a_finding_renders_to_well_formed_markdown_in_the_gate_check(block):
    """Each finding in each place gate.md.j2 shows one: a blocking and a passed table's cell, and
    the listed and pre-existing list items."""
    from bot.templating import render_part

    detail = render_part("checks/findings.txt.j2", block, **FINDING_CASES[block])
    assert detail and "\n" not in detail
    f = Finding(block.replace("_", "-"), detail, "kernels/h200")
    body = render("checks/gate.md.j2", pr=NS(number=412, head_sha=FORK, base_sha=S1), decision=GateDecision(
        allowed=False, blocking=(f,), passed=(f,), pre_existing=(f,), listed=(f,)))
    assert problems(body) == []
    assert structure(body).count("table_open") == 2 and structure(body).count("bullet_list_open") == 2


@pytest.mark.parametrize("block", sorted(BLOCKED_CASES))
def test_a_blocked_units_words_render_to_well_formed_markdown_where_they_are_shown(block):
    from bot.templating import render_part

    reason = render_part("github/blocked.txt.j2", block, **BLOCKED_CASES[block])
    assert reason and "\n" not in reason
    body = render("github/unit_blocked.md.j2", step="push", tip=FORK, unit_id=CHAIN.id, config_path=".github/forksync.yml",
                  b={"reason": reason, "requires": "rebase", "path": "", "branch": f"forksync/{CHAIN.id}", "sha": ""})
    assert problems(body) == []


@pytest.mark.parametrize("block", sorted(DASHBOARD_CASES))
def test_the_dashboards_words_show_as_written_on_its_page(block):
    """Each block inserted where the dashboard shows it (a unit's state in the Units table, else an
    error page's message), through the pages' autoescape: data in it (GitHub's words, a query
    value) shows as written and makes no markup."""
    import markupsafe

    from bot.dashboard.web import age
    from bot.templating import render_html, render_part

    text = render_part("dashboard/texts.txt.j2", block, **DASHBOARD_CASES[block])
    assert text and "\n" not in text and "{{" not in text
    page = dict(utc=str, age=age, forks=[], fork="meta/triton", user="")
    if block in DASHBOARD_UNIT_STATES:
        unit = {"id": CHAIN.id, "kind": "chain", "url": None, "pr": 412, "pr_state": "open", "branch": f"forksync/{CHAIN.id}",
                "gate": "red", "state": text, "upstream": [S2], "depends_on": [], "suites": [], "age_s": 7200.0}
        html = render_html("dashboard/units.html.j2", page="units", doc={"github": None, "upstream_github": UP, "units": [unit]}, **page)
    else:
        html = render_html("dashboard/error.html.j2", page="", title="Not found", message=text, **page)
    assert str(markupsafe.escape(text)) in html and "<img" not in html and "<triton>" not in html


@pytest.mark.parametrize("block", sorted(INPUTS_CASES))
def test_the_gate_inputs_words_render_to_well_formed_markdown_in_the_finding_they_go_into(block):
    from bot.templating import render_part

    ctx, finding, name = INPUTS_CASES[block]
    words = render_part("checks/inputs.txt.j2", block, **ctx)
    assert words and "\n" not in words
    detail = render_part("checks/findings.txt.j2", finding, **{**FINDING_CASES[finding], name: (words,) if name == "holds" else words})
    assert words in detail
    f = Finding(finding.replace("_", "-"), detail)
    body = render("checks/gate.md.j2", pr=NS(number=412, head_sha=FORK, base_sha=S1), decision=GateDecision(
        allowed=False, blocking=(f,), passed=(), pre_existing=(), listed=()))
    assert problems(body) == []


#: the blocks of sync_texts.txt.j2 that are a unit's state on the status issue, and the problems a
#: resolution check names on a chain PR; the others are summary lines, reasons and command replies
SYNC_UNIT_STATES = {"state_person", "state_rebase", "state_blocked", "state_conflict", "waiting_state"}
SYNC_PROBLEMS = {"conflict_commit_gone", "upstream_rewritten"}


@pytest.mark.parametrize("block", sorted(SYNC_CASES))
def test_a_syncs_words_render_to_well_formed_markdown_where_they_are_shown(block):
    """Each block is one line; a unit's state renders in the status issue's unit list, a
    resolution check's problem in its comment, and the rest (summary lines, command replies) as
    Markdown of their own."""
    from bot.templating import render_part

    text = render_part("github/sync_texts.txt.j2", block, **SYNC_CASES[block])
    assert text and "\n" not in text and "{{" not in text
    if block in SYNC_UNIT_STATES:
        unit = {"id": CHAIN.id, "kind": "chain", "pr": 412, "url": "https://github.com/meta/triton/pull/412",
                "state": text, "agent": "", "waits_for": [], "waited_by": 0}
        body = render_status(SyncStatus(repo="meta/triton", upstream_head=S2, frontier=S1, units=(unit,)),
                             stale_after_s=86400, alarm_after_s=3 * 86400, now=1000.0)
    elif block in SYNC_PROBLEMS:
        body = render("github/resolution_check.md.j2", ok=False, head=FORK, kept=[], problems=[text])
    else:
        body = text
    assert text in body and problems(body) == []


def _named_blocks(module: str, template: str) -> set[str]:
    """The blocks of ``template`` that ``module``'s code names: the second argument of a
    ``render_part``/``_text`` call, or ``_text``'s first."""
    import ast

    tree = ast.parse(Path(__file__).resolve().parents[1].joinpath(module).read_text(encoding="utf-8"))
    named = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("render_part", "_text"):
            arg = n.args[0] if n.func.id == "_text" else n.args[1] if len(n.args) > 1 else None
            first = n.args[0]
            if n.func.id == "render_part" and not (isinstance(first, ast.Name) and first.id in ("FINDINGS", "TEXTS")):
                continue
            if isinstance(arg, ast.Constant):
                named.add(arg.value)
    return named


@pytest.mark.parametrize("module, template", [("bot/validation/gate.py", "checks/findings.txt.j2"),
                                              ("bot/sync/blocked.py", "github/blocked.txt.j2"),
                                              ("bot/dashboard/views.py bot/dashboard/web.py", "dashboard/texts.txt.j2"),
                                              ("bot/validation/gate_inputs.py", "checks/inputs.txt.j2"),
                                              ("bot/sync/service.py", "github/sync_texts.txt.j2")])
def test_every_finding_and_blocked_text_named_in_code_is_a_block_and_every_block_is_said(module, template):
    """``module``: the modules (space-separated) that say the template's blocks between them."""
    named, blocks = set().union(*(_named_blocks(m, template) for m in module.split())), _blocks(template)
    assert named - blocks == set() and blocks - named == set(), (sorted(named - blocks), sorted(blocks - named))


@pytest.mark.parametrize("module, call, arg", [("bot/validation/gate.py", "Finding", 1), ("bot/sync/blocked.py", "Refusal", 0)])
def test_the_gate_and_the_blocked_units_say_no_words_of_their_own(module, call, arg):
    """A finding's detail and a refusal's reason come from a template (or are data: GitHub's
    words, an error), never from a string built in code."""
    import ast

    tree = ast.parse(Path(__file__).resolve().parents[1].joinpath(module).read_text(encoding="utf-8"))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == call]
    assert len(calls) > 3
    worded = [ast.unparse(n)[:90] for n in calls if len(n.args) > arg and _words_in_code(n.args[arg])]
    assert worded == []


#: the units/1 document's ``gate`` values (docs/dashboard.md): an enumeration the plots colour by
#: and the page compares, kept in code as data; every other text of the module is a template's
DASHBOARD_GATES = {"blocked: a pick failed", "blocked at a conflict", "blocked by GitHub", "not opened",
                   "waiting on a check that never reported", "waiting for L1"}


def _phrases(source: str) -> list[str]:
    """The string literals of Python ``source`` holding two words or more (a phrase a person
    reads), docstrings left out."""
    import ast
    import re

    tree = ast.parse(source)
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [f"{n.lineno}: {n.value!r}" for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docs and n.value not in DASHBOARD_GATES and re.search(r"[^\W\d_]\W*\s+\W*[^\W\d_]", n.value)]


#: what the dashboard's routes keep in code: headers (a policy, a cache rule) and their log's lines
WEB_NOT_TEXTS = {CSP, "public, max-age=86400", "dashboard: %s %s failed", "dashboard: warming the validation page of %s failed"}


@pytest.mark.parametrize("module, kept", [("bot/dashboard/views.py", set()), ("bot/dashboard/web.py", WEB_NOT_TEXTS),
                                           ("bot/validation/gate_inputs.py", set()),
                                           ("bot/sync/service.py", SERVICE_NOT_TEXTS)])
def test_the_dashboard_the_gate_inputs_and_the_sync_say_no_words_of_their_own(module, kept):
    """The dashboard's unit states, stale reasons and refusals (of its documents and its routes),
    the words gathering gives to what the gate read, and the sync's summary lines, units' states
    on the status issue and command replies come from their templates (dashboard/texts.txt.j2,
    checks/inputs.txt.j2, github/sync_texts.txt.j2): no phrase is built in code but those
    ``kept`` (the sync's and the routes' log, a pattern, a format and the routes' headers)."""
    import ast

    found = {ast.literal_eval(p.split(": ", 1)[1]) for p in _phrases(
        Path(__file__).resolve().parents[1].joinpath(module).read_text(encoding="utf-8"))}
    assert found - kept == set(), sorted(found - kept)


@pytest.mark.parametrize("code, found", [
    ('x = "its pull request is gone"', True),
    ('x = f"GitHub refused the {step}: {reason}"', True),
    ('x = f"{hidden} {noun}s"', False),
    ('x = render_part(TEXTS, "gone")', False),
    ('x = "waiting for L1"', False),
    ('x = "; ".join(xs)', False),
    ('def f():\n    """A docstring says words."""', False),
])
def test_the_phrase_check_finds_phrases(code, found):
    assert bool(_phrases(code)) == found
