"""Bisection on trunks that misbehave as real ones do: a failure that does not reproduce (a flaky
test that passes on retry), commits that cannot be tested (the answer is one of several), and
the issue a person reads (the range, the culprit's author and its upstream commit)."""
from __future__ import annotations

import pytest

from bot.cli.main import main
from bot.git.bisect import bisect_command
from bot.l2.report import Evidence, render_issue
from tests.git.test_bisect import git, make_history, upstream

UPSTREAM_URL = "https://github.com/triton-lang/triton.git"


def test_a_failure_that_does_not_reproduce_on_bad_names_no_suspect(tmp_path, capsys):
    """The nightly failed on trunk's tip, but the test is flaky: run again on every landed commit,
    the tip included, it passes. What a person sees today: the search never tests the bad end,
    walks to it, and the issue (and ``forksync bisect``) names the tip's pick as "Suspect
    (unverified)" — an innocent commit and its author blamed for a flake. What they should see: no
    culprit and no suspect; the answer says the failure did not reproduce on the bad commit (a
    flaky test or a runner problem), so nothing is bisected as a regression, nor hidden."""
    repo, root, shas = make_history(tmp_path, 12, {})
    r = bisect_command(repo, root, shas[-1], "true")
    assert (r.culprit, r.suspects, r.verified) == (None, (), False)
    assert "did not reproduce" in r.note and shas[-1][:12] in r.note
    body = render_issue(Evidence("Bisection: true", None, (), (), None, None, r, command="true"))
    assert "Suspect" not in body and f"`{shas[-1]}`" not in body.split("### Bisection")[0]
    assert "did not reproduce" in body
    issue = tmp_path / "issue.md"
    assert main(["bisect", "--repo", repo, "--good", root, "--bad", shas[-1], "--cmd", "true",
                 "--issue-out", str(issue)]) == 1
    out = capsys.readouterr().out
    assert "culprit" not in out and "did not reproduce" in out


def test_forksync_bisect_names_every_suspect_left_by_untestable_commits(tmp_path, capsys):
    """Commit 5 does not build (exit 125) and commit 6 breaks the test: like ``git bisect``, the
    culprit is one of the two. What a person sees today on the terminal: "2 suspects: the commits
    between could not be tested (skip)" — and not which two. What they should see: both shas, so
    they can look at them without re-running the bisection with ``--issue-out``."""
    repo, root, shas = make_history(tmp_path, 10, {6: "broken"})
    cmd = "if [ -f f5.txt ] && [ ! -f f6.txt ]; then exit 125; fi; test ! -f broken"
    assert main(["bisect", "--repo", repo, "--good", root, "--bad", shas[-1], "--cmd", cmd]) == 1
    out = capsys.readouterr().out
    assert "2 suspects" in out
    assert shas[4] in out and shas[5] in out


def test_the_issue_names_the_range_the_upstream_commit_with_its_link_and_its_author(tmp_path):
    """A verified culprit that is a sync pick (``Upstream-Commit:``, the upstream author kept).
    What a person reads today in the issue: the fork sha and the subject, the upstream sha as
    bare text — no link to the upstream commit, no author to ask, and not the range that was
    bisected (last good .. first bad). What they should read: the range, the upstream commit as a
    link into the upstream repository, and its author."""
    repo, root, shas = make_history(tmp_path, 8, {})
    work = tmp_path / "fork"
    (work / "broken").write_text("x\n")
    git(work, "add", "-A")
    git(work, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--author",
        "Ada Upstream <ada@upstream.example>", "-m", f"[AMD] Tune fp8 matmul (#9301)\n\nUpstream-Commit: {upstream(77)}")
    culprit = git(work, "rev-parse", "HEAD")
    (work / "later").write_text("x\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "later")
    bad = git(work, "rev-parse", "HEAD")
    issue = tmp_path / "issue.md"
    assert main(["bisect", "--repo", repo, "--good", root, "--bad", bad, "--cmd", "test ! -f broken",
                 "--issue-out", str(issue), "--upstream", UPSTREAM_URL]) == 0
    body = issue.read_text()
    assert f"**Culprit:** `{culprit}` — [AMD] Tune fp8 matmul" in body
    assert f"https://github.com/triton-lang/triton/commit/{upstream(77)}" in body
    assert "Ada Upstream" in body
    assert f"`{root[:12]}`..`{bad[:12]}`" in body


@pytest.mark.parametrize("data", ['{"points": [1, 2, 3]}', '{"points": "x"}'])
def test_l2_detect_refuses_malformed_points_with_a_message(tmp_path, capsys, data):
    """``forksync l2 detect`` on a points file whose items are not ``{"sha", "value"}`` objects.
    What a person sees today: a Python traceback (``AttributeError: 'int' object has no attribute
    'get'``). What they should see: exit 2 and the message naming the shapes it accepts."""
    f = tmp_path / "series.json"
    f.write_text(data)
    assert main(["l2", "detect", str(f)]) == 2
    assert "expected a list of positive numbers" in capsys.readouterr().err
