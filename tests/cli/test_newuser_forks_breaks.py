"""A release engineer's first commands on forks the docs do not show (ROCm/triton `main_perf`,
openxla/triton `llvm-head`, torch-spyre/triton `main`), each with the `forksync.yml` such a user
writes beside it: what they ran, on a small real repository of the same shape, and what they
should be told."""
from __future__ import annotations

import json

import pytest

from bot.demo.repobuilder import RepoBuilder
from bot.sync.ingest import near_refs
from tests.support.cli import run

T0 = 1_775_000_000          # 2026-03-31
DAY = 86_400

SPYRE_CONFIG = """\
upstream: {url: triton, ref: main}
fork: {url: spyre, ref: main}
areas:
  - {name: spyre, paths: ["third_party/spyre/**"], divergent: true, owners: [kcirred]}
suites:
  - name: spyre-lit
    command: lit -v test/Spyre --xunit-xml-output out/lit.xml
    report: {format: junit, path: out/lit.xml}
    min_tests: 40
"""


@pytest.fixture
def spyre(tmp_path, monkeypatch):
    """torch-spyre/triton's shape: the fork branched off upstream and added its backend; a sync
    branch picks one upstream commit. ``./forksync.yml`` names one required L1 suite."""
    up = RepoBuilder.init(tmp_path / "triton")
    up.commit("[BACKEND] Add multicast flag (#9974)", {"lib/a.cpp": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "spyre")
    fork.commit("Add initial Spyre backend for Triton", {"third_party/spyre/b.py": "b\n"}, when=T0 + DAY)
    u1 = up.commit("[AMD] Support padded shared layout (#10021)", {"lib/a.cpp": "a1\n"}, when=T0 + 2 * DAY)
    fork.add_remote("upstream", up.path)
    fork.checkout("main", new_branch="forksync/bundle-x")
    fork.cherry_pick(u1, when=T0 + 3 * DAY, trailer=f"Upstream-Commit: {u1}")
    fork.checkout("main")
    (tmp_path / "forksync.yml").write_text(SPYRE_CONFIG)
    (tmp_path / "results").mkdir()
    monkeypatch.chdir(tmp_path)
    return fork


def test_gate_explain_reads_the_forksync_yml_of_the_current_folder(spyre, capsys):
    """`forksync --help`: "--config FILE  forksync.yml to read (default: ./forksync.yml if present)".

    What the user saw, in the folder of a forksync.yml naming the suite `spyre-lit`, after `gate
    explain --repo spyre --base main --head forksync/bundle-x --results results`: "no suites are
    configured and no required check exists: forksync never merges with none" — the file was not
    read, only `--config forksync.yml` was.
    What they should see: the gate of their configuration, the suite's result missing."""
    argv = ["gate", "explain", "--repo", "spyre", "--base", "main", "--head", "forksync/bundle-x",
            "--results", "results", "--json"]
    rc, out, _ = run(capsys, argv)
    assert rc == 1
    blocking = [(f["code"], f["subject"]) for f in json.loads(out)["blocking"]]
    assert blocking == [("missing-result", "spyre-lit/cpu")]
    # the same as naming the file
    assert run(capsys, ["--config", "forksync.yml", *argv]) == (rc, out, "")


def test_near_refs_names_a_short_branch_one_typo_away():
    """A short branch name typed with two letters swapped, or one wrong (`mian`, `mqin` for
    `main`), is as far from it by difflib's ratio (0.75) as names that share half their letters,
    so the cut at 0.8 that finds `main_perf` for `main-perf` named nothing for them."""
    names = ["llvm-head", "llvm-head-staging", "main", "main_perf", "release/internal/3.2.x", "storeshared"]
    assert near_refs("mian", names) == ["main"]
    assert near_refs("mqin", names) == ["main"]
    assert near_refs("man", names) == ["main"]
    assert near_refs("main-perf", names) == ["main_perf"]
    assert near_refs("llvm-haed", names) == ["llvm-head"]
    assert near_refs("nightly", names) == []


def test_a_fork_ref_typed_with_swapped_letters_names_the_branch(spyre, tmp_path, capsys):
    """`fork: {ref: mian}` in forksync.yml: "ref 'mian' not found in repository fork (…) (check
    the branch or sha, or fetch it: `git fetch <remote> mian`); fork.ref at forksync.yml:2:…" with
    no word of `main`, the branch meant."""
    (tmp_path / "forksync.yml").write_text(SPYRE_CONFIG.replace("fork: {url: spyre, ref: main}",
                                                                 "fork: {url: spyre, ref: mian}"))
    rc, out, err = run(capsys, ["status"])
    assert (rc, out) == (2, "")
    assert "ref 'mian' not found in repository fork" in err
    assert "did you mean `main`?" in err
    assert "fork.ref at forksync.yml:2:" in err
