"""GitHub's refusals, classified (a table of GitHub's words and what forksync makes of them), and
the fake's rewrite of git's report so the refused ref carries GitHub's reason."""
import pytest

from bot.fakegithub.githttp import _pkt, _pkt_lines, rewrite_reject_reason
from bot.sync.blocked import CLEAR, Refusal, as_dict, classify, retried_by_sync, rewritten_under, row_fields
from bot.templating import render

WF = ("refusing to allow a GitHub App to create or update workflow `.github/workflows/ci.yml` "
      "without `workflows` permission")


@pytest.mark.parametrize("stderr, expected", [
    (f"git push -q failed (1): To http://x/meta/triton.git\n ! [remote rejected] forksync/chain-1 -> forksync/chain-1 "
     f"({WF})\nerror: failed to push some refs to 'http://x/meta/triton.git'",
     Refusal(WF, "workflows", ".github/workflows/ci.yml")),
    ("git push -q failed (128): remote: Permission to push denied to the integration.\nfatal: unable to access",
     Refusal("remote: Permission to push denied to the integration.; fatal: unable to access", "contents")),
    ("git push failed (1): ! [remote rejected] main -> main (protected branch hook declined)\nerror: failed to push",
     Refusal("protected branch hook declined", "protection")),
    # a repository ruleset over forksync/* (GitHub's words for a ruleset refusal): not transient, a person must act
    ("git push -q failed (1): remote: error: GH013: Repository rule violations found for refs/heads/forksync/b.\n"
     "remote: - Cannot update this protected ref.\n ! [remote rejected] forksync/b -> forksync/b "
     "(push declined due to repository rule violations)\nerror: failed to push some refs",
     Refusal("push declined due to repository rule violations", "protection")),
    ("422 Resource not accessible by integration", Refusal("422 Resource not accessible by integration", "permission")),
    ("git push failed (1): ! [rejected] forksync/b -> forksync/b (fetch first)\nerror: failed to push some refs",
     Refusal("! [rejected] forksync/b -> forksync/b (fetch first); error: failed to push some refs", "", transient=True)),
    ("git push -q failed (128): fatal: the remote end hung up unexpectedly",
     Refusal("fatal: the remote end hung up unexpectedly", "", transient=True)),
])
def test_classify(stderr, expected):
    assert classify(stderr) == expected


def test_rewrite_reject_reason_side_band():
    inner = _pkt(b"unpack ok\n") + _pkt(b"ng refs/heads/x pre-receive hook declined\n") + _pkt(None)
    payload = _pkt(b"\x02remote: hi\n") + _pkt(b"\x01" + inner) + _pkt(None)
    out = rewrite_reject_reason(payload, WF)
    [progress, band1, flush] = _pkt_lines(out)
    assert progress == b"\x02remote: hi\n" and flush is None
    assert _pkt_lines(band1[1:]) == [b"unpack ok\n", b"ng refs/heads/x " + WF.encode() + b"\n", None]


def test_rewrite_reject_reason_without_side_band():
    payload = _pkt(b"unpack ok\n") + _pkt(b"ng refs/heads/x pre-receive hook declined\n") + _pkt(None)
    assert _pkt_lines(rewrite_reject_reason(payload, "why")) == [b"unpack ok\n", b"ng refs/heads/x why\n", None]


def test_a_poll_retries_only_refused_pushes_and_prs_that_may_pass_on_their_own():
    rows = [{"branch": "forksync/a", "blocked_step": "push", "blocked_requires": ""},
            {"branch": "forksync/b", "blocked_step": "pr", "blocked_requires": ""},
            {"branch": "forksync/c", "blocked_step": "push", "blocked_requires": "workflows"},
            {"branch": "forksync/d", "blocked_step": "push", "blocked_requires": "person"},
            {"branch": "forksync/e", "blocked_step": "merge", "blocked_requires": ""},
            # a pick that failed (a missing object) is applied again by the next sync of another
            # cause; a poll running a whole plan for it every few minutes costs minutes of CPU each
            {"branch": "forksync/f", "blocked_step": "apply", "blocked_requires": ""}]
    assert [r["branch"] for r in retried_by_sync(rows)] == ["forksync/a", "forksync/b"]


@pytest.mark.parametrize("foreign, by_hand, folded", [
    (0, True, True),        # only forksync's pick folding their resolution: no commit of theirs to rebase
    (2, True, False),       # their commits are on it too: those are what a person rebases
    (2, False, False),
])
def test_a_rewritten_fork_under_a_folded_resolution_is_told_apart_from_a_persons_commits(foreign, by_hand, folded):
    r = rewritten_under(3, "main", foreign, resolved_by_hand=by_hand)
    assert (r.requires, r.folded) == ("rebase", folded)
    # kept on the unit's row, read back for the hint on the status issue and the PR; cleared with the block
    row = {"unit_id": "chain-01d3c87a74a2", "branch": "forksync/chain-01d3c87a74a2", "pr": 412, "shas_json": "[]",
           **row_fields(r, step="push", at=1.0, tip="a" * 40)}
    assert as_dict(row, "meta/triton")["folded"] is folded
    assert as_dict({**row, **CLEAR}, "meta/triton")["folded"] is False


def test_a_rewritten_fork_under_a_persons_commits_and_a_folded_resolution_says_both():
    """Their commits and forksync's pick folding their resolution: a rebase carries both, and the
    hint (the status issue, the PR) names both."""
    r = rewritten_under(3, "main", 2, resolved_by_hand=True)
    assert (r.requires, r.folded, r.by_hand) == ("rebase", False, True)
    assert "2 commit(s) of a person" in r.reason and "conflict resolution made by hand" in r.reason, r.reason
    row = {"unit_id": "chain-01d3c87a74a2", "branch": "forksync/chain-01d3c87a74a2", "pr": 412, "shas_json": "[]",
           **row_fields(r, step="push", at=1.0, tip="a" * 40)}
    b = as_dict(row, "meta/triton")
    assert (b["folded"], b["by_hand"]) == (False, True)
    assert as_dict({**row, **CLEAR}, "meta/triton")["by_hand"] is False
    hint = render("github/blocked_hint.md.j2", b=b, config_path=".github/forksync.yml")
    assert "a person's commits are on `forksync/chain-01d3c87a74a2`" in hint and "`Resolved-by:`" in hint, hint
    # only their commits: the hint as before, with no pick of theirs to name
    r = rewritten_under(3, "main", 2)
    assert r.by_hand is False and "made by hand" not in r.reason
