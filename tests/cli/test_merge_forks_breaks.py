"""The read-only CLI (`status`, `status --series`, `bisect`) on the shapes of Triton forks that sync
by merging upstream or track it from another repository — intel/intel-xpu-backend-for-triton
(merge PRs that hold a `Merge commit '<upstream sha>'`), openxla/triton's llvm-head and
torch-spyre/triton (upstream in a separate repository, pinned to a sha). Each test builds the
smallest repository with the real shape; the real commits are named in the docstrings.
"""
from __future__ import annotations

import json
import re

from bot.demo.repobuilder import RepoBuilder
from tests.support.cli import run

T0 = 1_767_225_600          # 2026-01-01T00:00:00Z
DAY = 86_400


def test_bisect_descends_into_the_upstream_merge_inside_a_merge_pr(tmp_path, capsys, monkeypatch):
    """intel/intel-xpu-backend-for-triton lands each sync as a PR merge, 384c721ece "Merge OpenAI
    Triton commit ` d4882a3` (#7694)", whose branch holds 78ae2df787 "Merge commit 'd4882a37…'"
    (the upstream merge, four upstream commits on its side) and a fix. `forksync bisect --good
    85375895e4 --bad 384c721ece --cmd '! git merge-base --is-ancestor 7b337f1c51 HEAD'` (the
    culprit is upstream 7b337f1c51, #11169) tests 3 candidates and names the merge commit
    78ae2df787 as the verified culprit: only the PR's first-parent line is descended into.

    docs/validation.md promises "a merge is descended into (its side's own commits, then the
    merge), so the culprit is one upstream commit": a user should be shown the upstream commit
    that broke the test, not the merge that brought it."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    good = fork.commit("[XPU] fork work", {"xpu.txt": "x\n"}, when=T0 + DAY)
    up.commit("[CI] Warm compile-heavy tests in parallel (#11098)", {"b.txt": "b\n"}, when=T0 + 2 * DAY)
    culprit = up.commit("[AMD][LAYOUTS] Restrict low-vector swizzle reorder to <=32 banks (#11169)",
                        {"broken": "x\n"}, when=T0 + 3 * DAY)
    tip = up.commit("[CI] Simplify compile warmup and lazy-load cuBLAS (#11173)", {"c.txt": "c\n"}, when=T0 + 4 * DAY)
    fork.git("fetch", "-q", "origin")
    fork.checkout("main", new_branch="merge-pr")
    fork.merge(tip, when=T0 + 5 * DAY, message=f"Merge commit '{tip}'")
    fork.commit("[CI] Keep python/ from shadowing the installed triton wheel", {"ci.txt": "c\n"}, when=T0 + 5 * DAY)
    fork.checkout("main")
    bad = fork.merge("merge-pr", when=T0 + 6 * DAY, message="Merge OpenAI Triton commit `d4882a3` (#7694)")
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, ["bisect", "--repo", str(fork.path), "--good", good, "--bad", bad,
                                "--cmd", "test ! -f broken"])
    assert rc == 0, out + err
    assert f"culprit {culprit} (verified)" in out, out


def _merging_fork(tmp_path):
    """An upstream and a fork that merged upstream's #2 (a merge commit); upstream then moved on
    to #3. Returns (up, fork, {pr: sha})."""
    up = RepoBuilder.init(tmp_path / "up")
    shas = {1: up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)}
    fork = up.clone(tmp_path / "fork")
    fork.commit("[XPU] fork work", {"xpu.txt": "x\n"}, when=T0 + DAY)
    shas[2] = up.commit("[BACKEND] Perform constant propagation using APInt (#2)", {"b.txt": "b\n"}, when=T0 + 2 * DAY)
    fork.git("fetch", "-q", "origin")
    fork.merge(shas[2], when=T0 + 3 * DAY, message=f"Merge OpenAI Triton commit `{shas[2][:7]}` (#70)")
    shas[3] = up.commit("[GSan] Add gsan.reset() (#3)", {"c.txt": "c\n"}, when=T0 + 4 * DAY)
    return up, fork, shas


def test_a_frontier_at_the_merge_base_keeps_its_pr_and_subject(tmp_path, capsys, monkeypatch):
    """On intel/intel-xpu-backend-for-triton (`--upstream-ref 1d2da15d2b`) the frontier is the
    newest merged upstream commit, the merge base 63068fcc274c "[…] (#11355)" — as on every fork
    that syncs by merging. `status` shows it as "63068fcc274c    2026-08-19T03:52:12Z  (merge
    base)" with no PR, and `status --json` gives `frontier.pr` null and `frontier.subject` "" —
    while the contiguous pin before it (4b44478c6c8d) has both. The upstream tip loses them the
    same way when the fork is level with it (Intel against triton-lang's a4ce9c2a2: "a4ce9c2a223a
    2026-06-25T04:47:31Z", no #10715).

    A user should see which upstream PR the fork has reached: the merge base's PR and subject,
    as for any other pin."""
    up, fork, shas = _merging_fork(tmp_path)
    monkeypatch.chdir(tmp_path)
    argv = ["--upstream", str(up.path), "--fork", str(fork.path)]
    rc, out, err = run(capsys, [*argv, "status", "--json"])
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["merge_based"] is True
    f = doc["frontier"]
    assert (f["sha"], f["is_base"], f["pr"], f["subject"]) == (
        shas[2], True, 2, "[BACKEND] Perform constant propagation using APInt (#2)")
    assert doc["contiguous_pin"]["pr"] == 2
    rc, out, err = run(capsys, [*argv, "--upstream-ref", shas[2], "status", "--json"])
    assert rc == 0, err
    tip = json.loads(out)["upstream"]["tip"]
    assert (tip["sha"], tip["pr"], tip["subject"]) == (shas[2], 2, "[BACKEND] Perform constant propagation using APInt (#2)")
    rc, out, err = run(capsys, [*argv, "status"])
    assert rc == 0, err
    [frontier_row] = [line for line in out.splitlines() if [c.strip() for c in line.split("│")][1:2] == ["frontier"]]
    assert shas[2][:12] in frontier_row and "#2" in frontier_row, out


def test_a_series_against_an_upstream_pinned_to_a_sha_does_not_say_none(tmp_path, capsys, monkeypatch):
    """torch-spyre/triton against triton-lang's tip a4ce9c2a2 (upstream pinned to a sha, as
    docs/real-fork.md runs it): `status` says "upstream as of unknown (upstream pinned to
    a4ce9c2a223a, …)", but `status --series 2026-03-01 2026-08-07 --step 30` ends its table with
    the caption "upstream as of None at the last point" — Python's None, not a date.

    A user should read that when upstream was seen is unknown, and why, as `status` says it."""
    up, fork, shas = _merging_fork(tmp_path)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, ["--upstream", str(up.path), "--fork", str(fork.path), "--upstream-ref", shas[3],
                                "status", "--series", "2026-01-02", "2026-01-05", "--step", "1"])
    assert rc == 0, err
    text = " ".join(out.split())
    assert "None" not in text, out
    assert "upstream as of unknown" in text and f"pinned to {shas[3][:12]}" in text, out


def test_a_repository_path_that_does_not_exist_says_whether_it_is_upstream_or_the_fork(tmp_path, capsys, monkeypatch):
    """A new user's forksync.yml for openxla/triton with a typo in one path
    (`upstream: {url: /work/mirrors/triton-lang}` where the clone is `…/triton`): `status`
    answers "forksync: git failed: repository path /work/mirrors/triton-lang does not exist" — not
    which of the two repositories it is, nor the key to fix, while a bad ref is "ref 'mian' not
    found in repository fork (…)".

    The README promises exit 2 with a message naming what and where: a user should read that
    it is upstream's repository (`upstream.url`), or the fork's (`fork.url`), that is missing."""
    up, fork, shas = _merging_fork(tmp_path)
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "nothere"
    cfg = tmp_path / "forksync.yml"
    cfg.write_text(f"upstream:\n  url: {missing}\n  ref: main\nfork:\n  url: {fork.path}\n  ref: main\n")
    rc, out, err = run(capsys, ["--config", str(cfg), "status"])
    assert rc == 2 and out == "" and "Traceback" not in err
    said = err.replace(str(missing), "PATH").removeprefix("forksync:")
    assert "upstream.url" in said and "PATH" in said, err
    cfg.write_text(f"upstream:\n  url: {up.path}\n  ref: main\nfork:\n  url: {missing}\n  ref: main\n")
    rc, out, err = run(capsys, ["--config", str(cfg), "status"])
    assert rc == 2 and out == ""
    said = err.replace(str(missing), "PATH").removeprefix("forksync:")
    assert "fork.url" in said and "PATH" in said, err
    rc, out, err = run(capsys, ["--upstream", str(up.path), "--fork", str(missing), "status"])
    assert rc == 2 and out == ""
    said = err.replace(str(missing), "PATH").removeprefix("forksync:")
    assert re.search(r"\bfork\b", said) and "PATH" in said, err
