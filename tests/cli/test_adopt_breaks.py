"""A team adopting forksync for its own Triton fork from the README alone: the errors its first
commands meet and the status lines it reads, on the shapes of real forks (torch-spyre/triton: a
checkout of the fork with upstream as a second remote; ROCm/triton: the fork on `main_perf`
beside a `main` that mirrors upstream). Each test builds the smallest repository with the shape;
the real case is named in the docstring.
"""
from __future__ import annotations

from collections import Counter

from bot.demo.repobuilder import RepoBuilder
from tests.support.cli import run

T0 = 1_775_000_000          # 2026-03-31
DAY = 86_400


def _spyre(tmp_path):
    """``(upstream, checkout of the fork)``: torch-spyre/triton branched off upstream #9974 and
    added its own backend; the fork is checked out, as a team has it, with only ``origin``."""
    up = RepoBuilder.init(tmp_path / "triton")
    up.commit("[BACKEND] Add multicast flag to tcgen05 scaled_mma (#9974)", {"a.py": "a\n"}, when=T0)
    fork_origin = up.clone(tmp_path / "spyre.git", bare=True)
    up.commit("[AMD] Support padded shared layouts (#10021)", {"b.py": "b\n"}, when=T0 + DAY)
    fork = fork_origin.clone(tmp_path / "spyre")
    fork.commit("Add initial Spyre backend for Triton", {"third_party/spyre/x.py": "x\n"}, when=T0 + 2 * DAY)
    return up, fork


def test_an_upstream_ref_of_a_remote_the_checkout_lacks_says_to_add_the_remote(tmp_path, capsys, monkeypatch):
    """torch-spyre/triton: a checkout of the fork whose forksync.yml follows `upstream/main`, as
    docs/config-reference.md allows for a repository holding both, before `upstream` was added
    as a remote. `status` said `ref 'upstream/main' not found … fetch it: `git fetch <remote>
    upstream/main``, a command that fails (no remote has a branch named `upstream/main`), and
    did not say which key of which file set the ref."""
    _, fork = _spyre(tmp_path)
    (fork.path / "forksync.yml").write_text("upstream:\n  ref: upstream/main\n")
    monkeypatch.chdir(fork.path)
    rc, out, err = run(capsys, ["status"])
    assert (rc, out) == (2, "")
    assert "`git fetch <remote> upstream/main`" not in err
    assert "this repository has no remote `upstream` (its remotes: origin)" in err
    assert f"`git -C {fork.path} remote add upstream <upstream URL>` then `git -C {fork.path} fetch upstream main`" in err
    assert "upstream.ref at forksync.yml:2:8" in err


def test_an_upstream_ref_of_a_remote_not_yet_fetched_says_which_fetch(tmp_path, capsys, monkeypatch):
    """The same checkout once `git remote add upstream …` ran and before any fetch: the remote is
    there, its branch is not; the fetch that gets it is named, not a made-up remote."""
    up, fork = _spyre(tmp_path)
    fork.add_remote("upstream", up.path, fetch=False)
    (fork.path / "forksync.yml").write_text("upstream:\n  ref: upstream/main\n")
    monkeypatch.chdir(fork.path)
    rc, _, err = run(capsys, ["status"])
    assert rc == 2
    assert "has no remote" not in err and "`git fetch <remote>" not in err
    assert f"the remote `upstream` is there but its branch `main` was never fetched: `git -C {fork.path} fetch upstream main`" in err
    fork.git("fetch", "-q", "upstream")
    rc, out, err = run(capsys, ["status", "--json"])
    assert rc == 0, err


def test_a_mistyped_fork_ref_names_the_branch_it_meant_and_the_flag(tmp_path, capsys, monkeypatch):
    """ROCm/triton's fork branch is `main_perf`; `--fork-ref main-perf` said only "not found"
    among 1300 refs, without the near name or where the ref was given."""
    up = RepoBuilder.init(tmp_path / "triton")
    up.commit("[CI] bump yapf version (#4997)", {"a.py": "a\n"}, when=T0)
    rocm = up.clone(tmp_path / "rocm")
    rocm.checkout("main", new_branch="main_perf")
    rocm.commit("Add gemm tuning configs for weekly tuning CI (#662)", {"tune.py": "t\n"}, when=T0 + DAY)
    monkeypatch.chdir(tmp_path)
    rc, _, err = run(capsys, ["--upstream", "rocm", "--upstream-ref", "main", "--fork", "rocm", "--fork-ref", "main-perf", "status"])
    assert rc == 2
    assert "ref 'main-perf' not found in repository fork" in err
    assert "did you mean `main_perf`?" in err
    assert "given by --fork-ref" in err
    # from a file: the key, the file, its line and column
    (tmp_path / "rocm.yml").write_text("upstream:\n  ref: main\nfork:\n  ref: main-perf\n")
    rc, _, err = run(capsys, ["--config", "rocm.yml", "--upstream", "rocm", "--fork", "rocm", "status"])
    assert rc == 2
    assert "did you mean `main_perf`?" in err and "fork.ref at rocm.yml:4:8" in err


def test_a_relative_upstream_url_naming_nothing_says_the_key_its_line_and_what_it_is_relative_to(tmp_path, capsys, monkeypatch):
    """A team keeps forksync.yml in a `ci/` folder of its checkout and writes `url: ../triton`
    meaning the clone beside the checkout; forksync resolves it against the file's folder, as
    docs/config-reference.md says, and said only "repository path …/triton does not exist
    (upstream.url or --upstream)"."""
    _, fork = _spyre(tmp_path)
    (fork.path / "ci").mkdir()
    (fork.path / "ci" / "forksync.yml").write_text("upstream:\n  url: ../triton\n")
    monkeypatch.chdir(fork.path)
    rc, _, err = run(capsys, ["--config", "ci/forksync.yml", "status"])
    assert rc == 2
    assert f"repository path {fork.path}/triton does not exist" in err
    assert "upstream.url at ci/forksync.yml:2:8" in err
    assert f"`../triton` is relative to the configuration file's folder, {fork.path}/ci" in err


def test_a_long_subject_holding_the_contiguous_pin_is_cut_with_a_mark(tmp_path, capsys, monkeypatch):
    """torch-spyre/triton's sync branch merged upstream #10568; the next upstream commit, "[*SAN]
    Avoid reading instrumentation_mode from knobs in the compiler (#10591)", holds the pin and
    `status` printed its subject cut at 70 characters as "… in the compiler (", a cut nothing
    marks (`plan` ends its cut subjects with "…")."""
    up = RepoBuilder.init(tmp_path / "triton")
    up.commit("[AMD][gfx1250] Verify TDM descriptor/shared layout consistency (#10568)", {"a.py": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "spyre")
    fork.commit("Add initial Spyre backend for Triton", {"s.py": "s\n"}, when=T0 + DAY)
    subject = "[*SAN] Avoid reading instrumentation_mode from knobs in the compiler (#10591)"
    up.commit(subject, {"b.py": "b\n"}, when=T0 + 2 * DAY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "400")
    rc, out, err = run(capsys, ["--upstream", "triton", "--fork", "spyre", "status"])
    assert rc == 0, err
    held = next(line for line in out.splitlines() if "contiguous pin held by" in line)
    assert subject[:69] + "…" in held
    assert subject[:70] + " " not in held


def test_resolve_with_a_mistyped_fork_ref_or_a_missing_fork_is_a_clear_error_not_a_traceback(tmp_path, capsys, monkeypatch):
    """openxla/triton's fork branch is `llvm-head`; `forksync --fork-ref llvm-haed resolve
    chain-2626f2f1281c` (a chain `plan` printed on that fork) died with a traceback ending in
    `bot.git.repo.RefError`, where `status`, `plan` and `apply` say it in one line (exit 2); a
    --fork path that does not exist did the same with `GitIOError`."""
    up = RepoBuilder.init(tmp_path / "triton")
    up.commit("Use `get_current_target` function to select the device to run tutorials on (#5286)", {"a.py": "a\n"}, when=T0)
    ox = up.clone(tmp_path / "openxla")
    ox.checkout("main", new_branch="llvm-head")
    ox.commit("OpenXLA-specific changes", {"x.py": "x\n"}, when=T0 + DAY)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, ["--upstream", "triton", "--fork", "openxla", "--fork-ref", "llvm-haed", "resolve", "chain-2626f2f1281c"])
    assert (rc, out) == (2, "")
    assert err.startswith("forksync: ref 'llvm-haed' not found in repository fork") and "Traceback" not in err
    assert "did you mean `llvm-head`?" in err and "given by --fork-ref" in err
    rc, out, err = run(capsys, ["--upstream", "triton", "--fork", "openxla-nope", "resolve", "chain-2626f2f1281c"])
    assert (rc, out) == (2, "")
    assert f"repository path {tmp_path}/openxla-nope does not exist" in err and "given by --fork" in err


def test_an_ambiguous_or_too_short_sha_is_said_as_such_not_as_a_ref_to_fetch(tmp_path, capsys, monkeypatch):
    """The docs pin upstream by an abbreviated sha (`--upstream-ref a4ce9c2a2`); a team shortening
    it to `a4ce` (three objects of the Triton snapshot begin so) or `a4c` was told "ref 'a4ce' not
    found … fetch it: `git fetch <remote> a4ce`": the sha is there, it is only too short."""
    up = RepoBuilder.init(tmp_path / "triton")
    for i in range(80):
        up.commit(f"[AMD] Revert AMD buffer soffset optimization series (#{10700 + i})", {f"f{i % 7}.py": f"{i}\n"}, when=T0 + i)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[Spyre] own pass", {"s.py": "s\n"}, when=T0 + DAY)
    objects = up.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split()
    shared = next(p for p, n in Counter(o[:4] for o in objects).items() if n > 1)   # these 80 commits have one
    monkeypatch.chdir(tmp_path)
    tip = up.head()
    for short, why in ((shared, f"ref '{shared}' is ambiguous"), (tip[:3], f"ref '{tip[:3]}' is ambiguous")):
        rc, out, err = run(capsys, ["--upstream", "triton", "--fork", "fork", "--upstream-ref", short, "status"])
        assert (rc, out) == (2, ""), err
        assert why in err and "not found" not in err and "git fetch" not in err
        assert f"`git -C {up.path} rev-parse --disambiguate={short}`" in err


def test_an_upstream_url_naming_a_remote_of_the_fork_says_how_to_name_the_remote(tmp_path, capsys, monkeypatch):
    """torch-spyre/triton's checkout has upstream as the remote `upstream`; a team writes
    `upstream.url: upstream` meaning that remote, and was told only that the folder
    `…/spyre/upstream` does not exist."""
    up, fork = _spyre(tmp_path)
    fork.add_remote("upstream", up.path)
    (fork.path / "forksync.yml").write_text("upstream:\n  url: upstream\n  ref: main\n")
    monkeypatch.chdir(fork.path)
    rc, out, err = run(capsys, ["status"])
    assert (rc, out) == (2, "")
    assert f"repository path {fork.path}/upstream does not exist" in err
    assert ("`upstream` is a remote of the fork's repository, not a folder: to read upstream's branches fetched there, "
            "leave upstream.url out and set upstream.ref: upstream/main; or set upstream.url to the remote's URL, "
            f"{up.path}") in err
    (fork.path / "forksync.yml").write_text("upstream:\n  ref: upstream/main\n")
    rc, out, err = run(capsys, ["status", "--json"])
    assert rc == 0, err


def test_ledger_show_of_the_forks_own_commit_or_pr_says_it_is_the_forks(tmp_path, capsys, monkeypatch):
    """A team asks `ledger show '#82'` about its own PR (torch-spyre/triton's `661d116f7` "Add
    UnaliasLinalgOuts fix pass (#82)") or its own commit's sha, and was told only that it "names no
    upstream commit in the range … nor before it", as for a typo."""
    _, fork = _spyre(tmp_path)
    own = fork.commit("Add UnaliasLinalgOuts fix pass (#82)", {"third_party/spyre/u.py": "u\n"}, when=T0 + 3 * DAY)
    monkeypatch.chdir(tmp_path)
    for ref in ("#82", own[:9]):
        rc, out, err = run(capsys, ["--upstream", "triton", "--fork", "spyre", "ledger", "show", ref])
        assert (rc, out) == (2, "")
        assert (f"forksync: {ref!r} names the fork's own commit {own[:12]} 'Add UnaliasLinalgOuts fix pass (#82)', "
                "not an upstream commit") in err
