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


def funcs(n: int, over: dict | None = None) -> str:
    """A Python file of ``n`` small functions ``f0..f{n-1}``; ``over`` replaces return values."""
    over = over or {}
    return "".join(f"def f{i}():\n    return {over.get(i, i)}\n\n\n" for i in range(n))


def test_apply_of_a_unit_that_waits_for_another_says_so(tmp_path, monkeypatch, capsys):
    """ROCm/triton `main_perf`: `plan` prints "chain-3549db850c7d … waits for: bundle-1d5fdfe9772c
    (earlier in this plan: apply and land it first)"; `apply chain-3549db850c7d` then built it on
    the fork tip without the bundle's picks, stopped at #5002 in include/triton/Analysis/Utility.h
    (a file the bundle changes) and said only "23 commit(s) not applied; finish it with `forksync
    resolve chain-3549db850c7d`": the user resolves a conflict the bundle's picks avoid.
    What they should see: that the unit waits for the bundle, built without its picks."""
    up = RepoBuilder.init(tmp_path / "triton")
    up.commit("Initial import (#1)", {"a.py": funcs(4)}, when=T0)
    fork = up.clone(tmp_path / "rocm")
    fork.commit("Add gemm tuning configs (#662)", {"tune.py": "t\n"}, when=T0 + DAY)
    up.commit("Add f4 (#2)", {"a.py": funcs(5)}, when=T0 + 2 * DAY)
    up.commit("Change f4 (#3)", {"a.py": funcs(5, {4: 44})}, when=T0 + 3 * DAY)
    (tmp_path / "forksync.yml").write_text("upstream: {url: triton, ref: main}\nfork: {url: rocm, ref: main}\n"
                                           "bundle_size_cap: 1\n")
    monkeypatch.chdir(tmp_path)
    rc, out, _ = run(capsys, ["plan", "--json"])
    assert rc == 0
    first, second = json.loads(out)["units"]
    assert second["depends_on"] == [first["id"]]

    rc, out, _ = run(capsys, ["apply", second["id"]])
    assert rc == 1 and "conflict (content, 1 hunk(s)): a.py" in out
    assert (f"  {second['id']} waits for {first['id']} (earlier in this plan: apply and land it first), "
            "built here on the fork tip without their picks: a conflict may be one they avoid") in out
    # the unit it waits for has none of that note (the branch just made deleted: in flight, it
    # would be the open unit the first one's commit touches)
    fork.git("branch", "-D", f"forksync/{second['id']}")
    rc, out, err = run(capsys, ["apply", first["id"]])
    assert rc == 0 and "waits for" not in out, err


def test_a_rocm_fork_names_the_amd_runners_its_own_ci_runs_on():
    """ROCm/triton `main_perf` runs its integration tests on `gfx942` and `gfx90a` runners, named
    "mi300x" and "mi210" in its workflow. Its release engineer's suite `platforms: [mi300]` was
    refused: "unknown platform label(s) ['mi300']; use some of ['cpu', 'h100', 'h200', 'b200',
    'mi350']" — no label for the machines the fork is built for."""
    from bot.config.forksync import parse_config_text
    from gpu_runner.fingerprint import wrong_gpu

    cfg = parse_config_text("suites:\n  - {name: lit, command: lit test, report: {format: junit, path: o.xml},\n"
                            "     min_tests: 1, platforms: [mi300, mi210]}\n")
    assert cfg.suites[0].platforms == ["mi300", "mi210"]
    # the runner's label check: an MI300X or MI300A is an mi300, an NVIDIA card is not
    assert wrong_gpu("mi300", "AMD Instinct MI300X") is None
    assert wrong_gpu("mi300", "AMD Instinct MI300A") is None
    assert wrong_gpu("mi210", "AMD Instinct MI210") is None
    assert "not platform mi300's (MI300)" in wrong_gpu("mi300", "NVIDIA H100 80GB HBM3")


def test_gate_explain_on_a_branch_says_it_is_a_dry_run_of_which_file(spyre, capsys):
    """The dry run's summary began "PR #0 · head `…` · base `…`" (there is no PR) and ended "Suites
    are read from `forksync.yml` on the fork's default branch, not from this PR. `/forksync merge`
    asks the gate to check now." — the App's words; here the suites came from the file given (or
    none), and no comment is read."""
    argv = ["gate", "explain", "--repo", "spyre", "--base", "main", "--head", "forksync/bundle-x", "--results", "results"]
    rc, out, _ = run(capsys, argv)
    assert rc == 1
    assert "PR #0" not in out and "/forksync merge" not in out
    assert out.splitlines()[2].startswith("Dry run (`forksync gate explain`) · head `")
    assert ("Dry run: missing results count as red; suites, areas and required checks from forksync.yml; "
            "reviews and other checks only as given by --approved-by and --check.") in out
    (spyre.path.parent / "forksync.yml").unlink()
    rc, out, _ = run(capsys, argv)
    assert "suites: each one with a result in --results (no configuration)" in out
