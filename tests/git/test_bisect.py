"""Bisection on real git histories: an injected failing commit, an injected slowdown with noisy
timings, skips, infrastructure retries, a landed merge, and the evidence/back-out texts."""
from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bot.git.bisect import BAD, GOOD, INFRA, SKIP, BisectError, Outcome, bisect, command_test, landed_commits, perf_test
from bot.l2.detection import SeriesKey, alerts, confirm
from bot.l2.report import Evidence, backout_message, plot_figure, plot_svg, render_backout_pr, render_issue, upstream_sha_of, write_plot

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@x", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
       "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def git(repo, *args) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=ENV).stdout.strip()


def upstream(i: int) -> str:
    return f"{i:040x}".replace("0", "a", 8)[:40]


def make_history(tmp_path, n: int, inject: dict[int, str], merge_at: int | None = None):
    """A fork trunk of ``n`` sync commits after a root; commit i (1-based) writes file
    ``inject[i]`` when given. Commit ``merge_at`` lands as a merge of a 3-commit side branch.
    Returns (repo, root sha, [commit shas in landing order, side commits included])."""
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    (repo / "README").write_text("fork\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "root")
    root = git(repo, "rev-parse", "HEAD")
    shas = []
    for i in range(1, n + 1):
        if i == merge_at:
            git(repo, "checkout", "-q", "-b", "side")
            for j in range(3):
                (repo / f"side{j}.txt").write_text(f"{j}\n")
                if inject.get(1000 + j):
                    (repo / inject[1000 + j]).write_text("x\n")
                git(repo, "add", "-A")
                git(repo, "commit", "-q", "-m", f"side pick {j}\n\nUpstream-Commit: {upstream(1000 + j)}")
                shas.append(git(repo, "rev-parse", "HEAD"))
            git(repo, "checkout", "-q", "main")
            git(repo, "merge", "-q", "--no-ff", "-m", f"Merge bundle {i}", "side")
            shas.append(git(repo, "rev-parse", "HEAD"))
            continue
        (repo / f"f{i}.txt").write_text(f"{i}\n")
        if i in inject:
            (repo / inject[i]).write_text("x\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"[sync] upstream change {i}\n\nUpstream-Commit: {upstream(i)}")
        shas.append(git(repo, "rev-parse", "HEAD"))
    return str(repo), root, shas


def bound(n):
    return math.ceil(math.log2(n)) + 2


@pytest.mark.parametrize("n,culprit", [(40, 23), (40, 1), (40, 40), (17, 9), (2, 2), (1, 1)])
def test_injected_failing_commit(tmp_path, n, culprit):
    repo, root, shas = make_history(tmp_path, n, {culprit: "broken"})
    cands = landed_commits(repo, root, shas[-1])
    assert cands == shas
    r = bisect(cands, root, command_test(repo, "test ! -f broken"))
    assert r.culprit == shas[culprit - 1]
    assert r.verified
    assert r.test_steps <= bound(n)
    assert [s.phase for s in r.steps][-2:] == ["verify", "verify"]
    assert r.steps[-2].outcome.verdict == BAD and r.steps[-1].outcome.verdict == GOOD
    assert r.steps[-1].sha == (shas[culprit - 2] if culprit > 1 else root)


def test_skip_exit_125_is_stepped_around(tmp_path):
    # commit 30 cannot be tested (exit 125): the search steps to its neighbour; the culprit is 21
    repo, root, shas = make_history(tmp_path, 40, {21: "broken"})
    cmd = "if [ -f f30.txt ] && [ ! -f f31.txt ]; then exit 125; fi; test ! -f broken"
    r = bisect(landed_commits(repo, root, shas[-1]), root, command_test(repo, cmd))
    assert r.culprit == shas[20] and r.verified
    assert [(s.index, s.outcome.verdict) for s in r.steps if s.phase == "search"][:3] == [
        (19, GOOD), (29, SKIP), (30, BAD)]
    assert r.steps[1].outcome.detail == "exit 125 (cannot test)"


def test_skipped_parent_leaves_two_suspects(tmp_path):
    # commit 20 cannot be built; 21 breaks: like git bisect, both remain suspects
    repo, root, shas = make_history(tmp_path, 40, {20: "unbuildable", 21: "broken"})
    cmd = "if [ -f unbuildable ] && [ ! -f broken ]; then exit 125; fi; test ! -f broken"
    r = bisect(landed_commits(repo, root, shas[-1]), root, command_test(repo, cmd))
    assert r.culprit is None and r.suspects == (shas[19], shas[20])
    assert r.note == "2 suspects: the commits between could not be tested (skip)"


def test_all_skipped_leaves_suspects(tmp_path):
    repo, root, shas = make_history(tmp_path, 6, {})
    r = bisect(shas, root, lambda sha: Outcome(SKIP, detail="exit 125"))
    assert r.culprit is None
    assert r.suspects == tuple(shas)
    assert r.note == "6 suspects: the commits between could not be tested (skip)"


def test_infra_errors_are_retried_not_blamed(tmp_path):
    repo, root, shas = make_history(tmp_path, 16, {11: "broken"})
    real = command_test(repo, "test ! -f broken")
    flaky = {shas[7]}    # the first midpoint hits a broken runner once

    def test(sha):
        if sha in flaky:
            flaky.discard(sha)
            return Outcome(INFRA, detail="no CUDA-capable device is detected")
        return real(sha)

    r = bisect(shas, root, test)
    assert r.culprit == shas[10] and r.verified
    assert r.steps[0].sha == shas[7] and r.steps[0].attempts == 2 and r.steps[0].outcome.verdict == GOOD
    assert r.test_steps <= bound(16)


def test_infra_pattern_in_command_output_is_infra(tmp_path):
    repo, root, shas = make_history(tmp_path, 2, {})
    t = command_test(repo, "echo 'RuntimeError: No space left on device' >&2; exit 1")
    o = t(shas[0])
    assert o.verdict == INFRA and o.detail == "exit 1: disk-full: RuntimeError: No space left on device"


PIP_HASHES = ("ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the "
              "package versions, please update the hashes. Otherwise, examine the package contents carefully; someone "
              "may have tampered with them.\n    triton from https://example.org/triton.whl:\n"
              "        Expected sha256 1111\n             Got        2222\n")


def test_a_download_hash_failure_that_persists_is_the_commits(tmp_path):
    """pip's hash check fails the same on a cut download and on a pin a commit left stale: the
    retries tell them apart, so one that fails every attempt is blamed, not skipped."""
    repo, root, shas = make_history(tmp_path, 5, {3: "stale-pin"})
    t = command_test(repo, f"if [ -f stale-pin ]; then printf '%s' '{PIP_HASHES}' >&2; exit 1; fi")
    r = bisect(shas, root, t)
    assert r.culprit == shas[2] and r.verified
    bad = [s for s in r.steps if s.sha == shas[2]][0]
    assert bad.attempts == 3 and bad.outcome.verdict == BAD
    assert bad.outcome.detail.startswith("exit 1: download-corrupt: ERROR: THESE PACKAGES DO NOT MATCH THE HASHES")


def test_a_download_hash_failure_that_a_retry_clears_is_retried(tmp_path):
    repo, root, shas = make_history(tmp_path, 4, {3: "broken"})
    real = command_test(repo, "test ! -f broken")
    cut = {shas[1]}    # the first midpoint's wheel download was cut once

    def test(sha):
        if sha in cut:
            cut.discard(sha)
            return command_test(repo, f"printf '%s' '{PIP_HASHES}' >&2; exit 1")(sha)
        return real(sha)

    r = bisect(shas, root, test)
    assert r.culprit == shas[2] and r.verified
    assert r.steps[0].sha == shas[1] and r.steps[0].attempts == 2 and r.steps[0].outcome.verdict == GOOD


def test_landed_merge_is_descended_into(tmp_path):
    # bundle 5 landed as a merge of three picks; the middle pick (1001) breaks
    repo, root, shas = make_history(tmp_path, 10, {1001: "broken"}, merge_at=5)
    cands = landed_commits(repo, root, shas[-1])
    assert len(cands) == 13 and cands == shas
    r = bisect(cands, root, command_test(repo, "test ! -f broken"),
               parent_of=lambda s: git(repo, "rev-parse", f"{s}^"))
    side1 = shas[5]
    assert r.culprit == side1 and r.verified
    assert upstream_sha_of(git(repo, "log", "-1", "--format=%B", side1)) == upstream(1001)


def test_good_must_be_ancestor(tmp_path):
    repo, root, shas = make_history(tmp_path, 3, {})
    with pytest.raises(BisectError, match="is not an ancestor of bad"):
        landed_commits(repo, shas[-1], root)
    with pytest.raises(BisectError, match="rev-parse"):
        landed_commits(repo, "deadbeef", shas[-1])


def test_injected_slowdown_with_noise(tmp_path):
    """Trunk of 60 commits; commit 37 slows a kernel by 9 % (3σ at 3 % noise). L2 points are
    medians of 5 noisy repeats; the detector alerts, confirmation re-runs last-good vs first-bad
    (10 repeats each), bisection with noisy timings finds commit 37 within the bound."""
    n, slow = 60, 37
    repo, root, shas = make_history(tmp_path, n, {slow: "slow"})
    rng = np.random.default_rng(7)
    cv = 0.03

    def has_slow(sha):
        return subprocess.run(["git", "-C", repo, "cat-file", "-e", f"{sha}:slow"], capture_output=True).returncode == 0

    def measure(sha, k=5):
        level = 100.0 * (0.91 if has_slow(sha) else 1.0)
        return list(level * (1 + cv * rng.standard_normal(k)))

    series = [float(np.median(measure(s))) for s in shas]
    found = alerts(series)
    assert len(found) == 1 and abs(found[0].index - (slow - 1)) <= 5
    cp = found[0]
    last_good, first_bad = shas[cp.index - 1], shas[cp.index]
    conf = confirm(measure(last_good, 10), measure(first_bad, 10), sigma=cp.sigma)
    # the detector may place the change a few points late; bisect over the whole window between
    # a good point before it and the bad point
    good = shas[max(0, cp.index - 8)]
    cands = landed_commits(repo, good, shas[-1])
    test = perf_test(lambda s: measure(s, 10), measure(good, 10), measure(shas[-1], 10))
    r = bisect(cands, good, test)
    assert r.culprit == shas[slow - 1] and r.verified
    assert r.test_steps <= bound(len(cands))
    assert all(s.outcome.value is not None for s in r.steps)

    ev = Evidence("Slowdown in matmul 4096³ bf16", SeriesKey("matmul", "4096x4096x4096", "bf16", "h200"),
                  tuple(series), tuple(shas), cp, conf, r,
                  culprit_subject=git(repo, "log", "-1", "--format=%s", r.culprit),
                  upstream_sha=upstream_sha_of(git(repo, "log", "-1", "--format=%B", r.culprit)),
                  plot_path="regression.svg")
    assert conf.confirmed, conf.reason
    body = render_issue(ev)
    assert f"**Culprit:** `{shas[slow - 1]}` — [sync] upstream change {slow}" in body
    assert f"Upstream commit: `{upstream(slow)}`" in body
    assert "| alert threshold max(2 %, 3σ) |" in body and "![series](regression.svg)" in body
    msg = backout_message(ev)
    assert msg.startswith(f'Revert "[sync] upstream change {slow}"\n\nThis reverts commit {shas[slow - 1]}.\n\n')
    trailer = msg.strip().splitlines()[-1]
    assert trailer.startswith(f"Upstream-Reverted: {upstream(slow)} L2 regression -")
    assert trailer.endswith("% on matmul:4096x4096x4096:bf16@h200")
    pr = render_backout_pr(ev, issue_number=12)
    assert "Evidence: #12." in pr and trailer in pr
    fig = plot_figure(ev.values, ev.change.index, ev.title, "ms")
    assert len(fig.data[0].y) == n and fig.layout.shapes[0].line.color == "#d62728"      # the change point
    assert [s.line.dash for s in fig.layout.shapes[1:]] == ["dash", "dash"]                  # each side's mean
    if Path("/usr/bin/chromium").exists():          # the SVG export goes through Debian's Chromium (.ci/run installs it)
        svg = write_plot(ev, tmp_path / "out" / "regression.svg").read_text()
        assert svg.startswith('<svg class="main-svg" xmlns="http://www.w3.org/2000/svg"') and svg.count('class="point"') == n


def test_no_backout_for_unverified_or_foreign_culprit(tmp_path):
    repo, root, shas = make_history(tmp_path, 4, {3: "broken"})
    r = bisect(shas, root, command_test(repo, "test ! -f broken"))
    ev = Evidence("L1 kernels broken", None, (), (), None, None, r, upstream_sha=None, command="pytest")
    with pytest.raises(ValueError, match="not a sync pick"):
        backout_message(ev)
    assert "Not a sync pick" in render_issue(ev)
    with pytest.raises(ValueError, match="empty series"):
        plot_svg([])


def test_no_candidates():
    with pytest.raises(BisectError, match="nothing to bisect"):
        bisect([], "a" * 40, lambda s: Outcome(GOOD))


@pytest.mark.parametrize("crash", ["kill -SEGV $$", "kill -ABRT $$", "python3 -c 'import os; os.abort()'"])
def test_a_crash_of_the_code_under_test_is_bad_not_infra(tmp_path, crash):
    """A compiler that segfaults or aborts on an assertion is the regression itself (triage files
    it as a real crash): bisection must be able to blame the commit that brought it."""
    repo, root, shas = make_history(tmp_path, 8, {5: "broken"})
    t = command_test(repo, f"if [ -f broken ]; then {crash}; else exit 0; fi")
    o = t(shas[4])
    assert o.verdict == BAD, o
    r = bisect(shas, root, t)
    assert r.culprit == shas[4] and r.verified


def test_the_oom_killer_is_still_infra(tmp_path):
    repo, root, shas = make_history(tmp_path, 2, {})
    assert command_test(repo, "kill -KILL $$")(shas[0]).verdict == INFRA


def test_a_command_that_fails_on_the_good_end_too_says_so_not_flaky(tmp_path):
    """A command that cannot pass anywhere (a missing dependency in its environment, a typo'd
    path) fails on every commit: the search walks down to the first candidate and its verification
    tests the good end bad. That was reported as "flaky test or noise"; it is the command."""
    repo, root, shas = make_history(tmp_path, 6, {})
    r = bisect(landed_commits(repo, root, shas[-1]), root, command_test(repo, "test -f never-there"))
    assert (r.culprit, r.verified) == (None, False)
    assert r.note == (f"the good end {root[:12]} fails too: the command does not pass where the range starts "
                      "(check the command and what its environment provides, or pick an older good commit); "
                      "no commit is blamed")


def test_a_command_that_fails_on_the_good_end_too_names_no_culprit_or_suspect(tmp_path):
    """Its note says "no commit is blamed", yet the result still named the first candidate as its
    culprit and only suspect: the CLI printed "culprit <sha> (NOT verified: … no commit is
    blamed)" and the regression issue "Suspect (unverified): <sha>", a commit the command did
    not fail any differently on than on the good end."""
    repo, root, shas = make_history(tmp_path, 6, {})
    r = bisect(landed_commits(repo, root, shas[-1]), root, command_test(repo, "test -f never-there"))
    assert r.note.startswith(f"the good end {root[:12]} fails too")
    assert (r.culprit, r.suspects) == (None, ())
