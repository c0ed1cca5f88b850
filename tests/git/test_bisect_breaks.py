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


def _trunk_with_revert_and_reland(tmp_path, fork: bool):
    """A trunk where a slowdown lands, is reverted, and lands again (upstream Triton's "Revert"
    and "Reland" pairs often fall between two nightlies): ``root, P1, C, P2, R, C2, P3``; C and
    C2 write ``slow``, R (``git revert C``) removes it. ``fork``: each commit is a pick with its
    ``Upstream-Commit`` trailer, R's "This reverts commit" naming C's upstream commit (the text
    upstream wrote); else R names C's own sha, as ``git revert`` on trunk writes it."""
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    (repo / "README").write_text("fork\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "root")
    shas = {"root": git(repo, "rev-parse", "HEAD")}

    def pick(name: str, i: int, write: dict[str, str | None], body: str = "") -> None:
        for f, text in write.items():
            if text is None:
                (repo / f).unlink()
            else:
                (repo / f).write_text(text)
        git(repo, "add", "-A")
        trailer = f"\n\nUpstream-Commit: {upstream(i)}" if fork else ""
        subject = {"R": 'Revert "Faster matmul"', "C": "Faster matmul", "C2": "Reland \"Faster matmul\""}.get(name, name)
        git(repo, "commit", "-q", "-m", subject + (f"\n\n{body}" if body else "") + trailer)
        shas[name] = git(repo, "rev-parse", "HEAD")

    pick("P1", 1, {"p1.txt": "1\n"})
    pick("C", 2, {"slow": "x\n"})
    pick("P2", 3, {"p2.txt": "2\n"})
    pick("R", 4, {"slow": None}, f"This reverts commit {upstream(2) if fork else shas['C']}.")
    pick("C2", 5, {"slow": "x\n"})
    pick("P3", 6, {"p3.txt": "3\n"})
    return str(repo), shas


@pytest.mark.parametrize("fork", [True, False], ids=["fork-picks", "trunk-revert"])
def test_a_culprit_reverted_and_relanded_in_the_range_is_the_reland(tmp_path, fork):
    """Between the last good and the first bad nightly, a commit that slows trunk lands (C), is
    reverted (R) and relanded (C2). The search tests P2 (bad), then P1 (good): it names C, verified
    (C bad, its parent good). What a person sees: the issue blames C, which R already reverted,
    and the back-out reverts C again — on a trunk whose slowdown comes from C2, the back-out of an
    upstream commit already backed out, naming the wrong upstream commit. What they should see:
    C2, the commit after which trunk stays bad (R, which reverts the commit found, is tested: it is
    good, so the search goes on after it)."""
    repo, shas = _trunk_with_revert_and_reland(tmp_path, fork)
    r = bisect_command(repo, shas["root"], shas["P3"], "test ! -f slow")
    assert (r.culprit, r.verified) == (shas["C2"], True), (r.note, [(s.sha[:8], s.outcome.verdict) for s in r.steps])
    tested = {s.sha: s.outcome.verdict for s in r.steps}
    assert tested[shas["R"]] == "good"


def test_a_trunk_commit_merged_into_a_sync_branch_is_blamed_not_the_merge_that_brought_it(tmp_path):
    """The fork lands sync PRs with merge commits (``merge_method: merge``); while one is open a
    person's change T1 lands on trunk and slows it, and the gate's ``update-branch`` merges trunk
    into the sync branch (U) before the PR merges (M). Candidates, oldest first: T1, S1, S2 (the
    picks, made on the older trunk), U, M, P. The search tests S2 (good: it lacks T1), then U (bad)
    and names U, "verified" against its first parent S2. What a person sees: the regression issue
    blames "Merge branch 'main' into forksync/bundle-x" — a clean merge forksync made — and no
    back-out can be opened (no upstream commit). What they should see: T1; a merge is the culprit
    only when each of its parents tests good, and a parent that tests bad is searched instead."""
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    (repo / "README").write_text("fork\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "root")
    (repo / "g.txt").write_text("g\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "G")
    good = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "forksync/bundle-x")
    git(repo, "checkout", "-q", "main")
    (repo / "slow").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "T1: a person's change")
    t1 = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "forksync/bundle-x")
    for i in (1, 2):
        (repo / f"s{i}.txt").write_text(f"{i}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"S{i}\n\nUpstream-Commit: {upstream(i)}")
    git(repo, "merge", "-q", "--no-edit", "-m", "Merge branch 'main' into forksync/bundle-x", "main")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge pull request #5 from forksync/bundle-x", "forksync/bundle-x")
    (repo / "p.txt").write_text("p\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "P")
    bad = git(repo, "rev-parse", "HEAD")
    r = bisect_command(str(repo), good, bad, "test ! -f slow")
    assert (r.culprit, r.verified) == (t1, True), (r.note, [(s.sha[:8], s.phase, s.outcome.verdict) for s in r.steps])
