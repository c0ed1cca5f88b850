"""The git layer on real repositories built with fixed dates (deterministic shas)."""
from __future__ import annotations

import os
import subprocess

import pygit2
import pytest

from bot.demo.repobuilder import RepoBuilder
from bot.git import repo as gitio
from bot.model import FileChange
from tests.support.ref_times import set_ref_times

T0 = 1_750_000_000
A_CPP = "int a() {\n" + "".join(f"  int v{i} = {i};\n" for i in range(8)) + "  return 1;\n}\n"


def _git_patch_id(path, sha) -> str | None:
    out = subprocess.run(f"set -o pipefail; git -C {path} show {sha} | git -C {path} patch-id --stable",
                         shell=True, executable="/bin/bash", capture_output=True, text=True, check=True).stdout
    return out.split()[0] if out.strip() else None


@pytest.fixture
def up(tmp_path):
    b = RepoBuilder.init(tmp_path / "up")
    b.commit("Initial (#1)", {"lib/a.cpp": A_CPP, "README": "r\n",
                              "py/m.py": "def f():\n    return 1\n"}, when=T0)
    return b


def test_commit_info_files_hunks_renames_and_patch_id(up):
    base = up.head()
    c1 = up.commit("Change a and add b (#12)", {"lib/a.cpp": A_CPP.replace("return 1", "return 2"), "lib/b.h": "x\n"},
                   when=T0 + 100)
    up.rename("py/m.py", "py/n.py")
    c2 = up.commit("Move m to n (#13)", {"py/n.py": "def f():\n    return 1\n# x\n"}, when=T0 + 200)
    c3 = up.commit("Drop README", {"README": None}, when=T0 + 300)
    c4 = up.commit("Empty marker", when=T0 + 400, allow_empty=True)
    repo = pygit2.Repository(str(up.path / ".git"))
    infos = gitio.commit_infos(repo, [c1, c2, c3, c4])
    i1 = infos[c1]
    assert i1.pr == 12 and i1.parents == (base,) and i1.committer_time == T0 + 100
    assert i1.author_name == "Upstream Dev"
    assert i1.files == (
        # git's ranges, 3 lines of context; the one line changed, without them
        FileChange("lib/a.cpp", "M", None, ((7, 5),), ((7, 5),), ("int a() {",), edits=((10, 1, 10, 1),)),
        FileChange("lib/b.h", "A", None, ((0, 0),), ((1, 1),), ("",), edits=((0, 0, 1, 1),)),
    )
    assert infos[c2].files == (FileChange("py/n.py", "R", "py/m.py", ((1, 2),), ((1, 3),), ("",), edits=((2, 0, 3, 1),)),)
    assert infos[c2].paths == frozenset({"py/m.py", "py/n.py"})
    assert infos[c3].files == (FileChange("README", "D", None, ((1, 1),), ((0, 0),), ("",), edits=((1, 1, 0, 0),)),)
    assert infos[c4].files == () and infos[c4].patch_id is None and infos[c4].pr is None
    for c in (c1, c2, c3):
        assert infos[c].patch_id == _git_patch_id(up.path, c)
        assert infos[c].missing == ()


def test_resolve_range_and_errors(up, tmp_path):
    base = up.head()
    fork = up.clone(tmp_path / "fork")
    u1 = up.commit("U1 (#2)", {"lib/a.cpp": "1\n"}, when=T0 + 10)
    u2 = up.commit("U2 (#3)", {"lib/c.cpp": "1\n"}, when=T0 + 20)
    f1 = fork.commit("Fork only", {"fork.txt": "f\n"}, when=T0 + 15)
    fork.add_remote("upstream", up.path)
    repo = pygit2.Repository(str(fork.path / ".git"))
    assert gitio.resolve(repo, "upstream/main") == u2
    assert gitio.resolve(repo, u1[:9]) == u1
    assert gitio.resolve(repo, "main") == f1
    with pytest.raises(gitio.RefError) as e:
        gitio.resolve(repo, "no-such-branch", label="fork (x)")
    assert "'no-such-branch'" in str(e.value) and "fork (x)" in str(e.value)
    b, shas = gitio.upstream_range(repo, u2, f1)
    assert b == base and shas == [u1, u2]
    b2, shas2 = gitio.upstream_range(repo, u2, f1, since=u1)
    assert b2 == u1 and shas2 == [u2]
    assert gitio.rev_list(repo, f1, [u2]) == [f1]


def test_open_pair_uses_alternates_for_two_local_repos(up, tmp_path):
    fork = up.clone(tmp_path / "fork")
    u1 = up.commit("U1 (#2)", {"lib/a.cpp": "1\n"}, when=T0 + 10)
    f1 = fork.commit("Fork only", {"fork.txt": "f\n"}, when=T0 + 15)
    up_dir = gitio.open_remote(str(up.path), tmp_path / "cache")
    fork_dir = gitio.open_remote(str(fork.path), tmp_path / "cache")
    repo, gd = gitio.open_pair(up_dir, fork_dir, tmp_path / "cache")
    assert gd.startswith(str(tmp_path / "cache")) and os.path.isfile(os.path.join(gd, "objects/info/alternates"))
    assert str(repo.merge_base(u1, f1)) == up.head("HEAD~1")
    infos = gitio.commit_infos(repo, [u1, f1], git_dir=gd)
    assert infos[u1].files[0].path == "lib/a.cpp" and infos[f1].files[0].path == "fork.txt"
    with pytest.raises(gitio.GitIOError, match="does not exist"):
        gitio.open_remote(str(tmp_path / "nope"), tmp_path / "cache")


def test_open_remote_mirrors_a_url(up, tmp_path):
    url = f"file://{up.path}"
    d = gitio.open_remote(url, tmp_path / "cache")
    assert d.endswith(".git") and "mirrors" in d
    up.commit("Later (#9)", {"z": "z\n"}, when=T0 + 50)
    d2 = gitio.open_remote(url, tmp_path / "cache")           # fetch into the existing mirror
    assert d2 == d and gitio.resolve(pygit2.Repository(d), "main") == up.head()


def test_missing_blob_is_reported_not_fatal(up):
    c1 = up.commit("Add big (#5)", {"big.bin": "B" * 1000 + "\n", "lib/a.cpp": "2\n"}, when=T0 + 10)
    c2 = up.commit("Small (#6)", {"lib/a.cpp": "3\n"}, when=T0 + 20)
    repo = pygit2.Repository(str(up.path / ".git"))
    blob = str(repo[c1].tree["big.bin"].id)
    os.remove(up.path / ".git" / "objects" / blob[:2] / blob[2:])
    repo = pygit2.Repository(str(up.path / ".git"))
    infos = gitio.commit_infos(repo, [c1, c2])
    assert infos[c1].missing == (f"blob {blob} (big.bin)",)
    assert infos[c1].patch_id is None
    assert [f.path for f in infos[c1].files] == ["big.bin", "lib/a.cpp"]
    assert infos[c1].files[1].new_ranges == ((1, 1),)      # the readable file still has its hunks
    assert infos[c2].missing == () and infos[c2].patch_id == _git_patch_id(up.path, c2)


def test_in_flight_branches(up, tmp_path):
    fork = up.clone(tmp_path / "fork")
    u1 = up.commit("U1 (#2)", {"lib/x.cpp": "1\n"}, when=T0 + 10)
    fork.add_remote("upstream", up.path)
    fork.checkout("main", new_branch="forksync/bundle-" + u1[:12])
    fork.cherry_pick(u1, when=T0 + 20, trailer=f"Upstream-Commit: {u1}")
    fork.checkout("main")
    repo = pygit2.Repository(str(fork.path / ".git"))
    [br] = gitio.in_flight_branches(repo, fork.head())
    assert br.name == f"forksync/bundle-{u1[:12]}" and br.kind == "bundle" and br.unit_id == f"bundle-{u1[:12]}"
    assert br.upstream_shas == (u1,) and br.paths == frozenset({"lib/x.cpp"})


def _two_fork_branches(up, tmp_path):
    """A fork repository with two long-lived branches off upstream (``main`` and ``release``, each
    with an own commit), upstream's U1 fetched, and a sync branch for ``main`` built on its tip."""
    fork = up.clone(tmp_path / "fork")
    fork.checkout("main", new_branch="release")
    fork.commit("[release] pin the toolchain", {"ci/toolchain.txt": "7\n"}, when=T0 + 5)
    fork.checkout("main")
    fork.commit("[main] tune the scheduler", {"lib/sched.cpp": "fast\n"}, when=T0 + 6)
    u1 = up.commit("U1 (#2)", {"lib/x.cpp": "1\n"}, when=T0 + 10)
    fork.add_remote("upstream", up.path)
    fork.checkout("main", new_branch="forksync/chain-" + u1[:12])
    fork.cherry_pick(u1, when=T0 + 20, trailer=f"Upstream-Commit: {u1}\nForksync-Unit: chain-{u1[:12]}")
    fork.checkout("main")
    return fork, u1


def test_a_sync_branch_built_for_another_fork_branch_is_not_in_flight_for_this_one(up, tmp_path):
    # real case: ROCm/triton keeps main_perf, release/internal/3.2.x and triton-mlir in one
    # repository; a chain applied for main_perf counted as in flight on the other two, and its
    # own commits (`branch ^fork_tip`) brought main_perf's files into their plans
    fork, u1 = _two_fork_branches(up, tmp_path)
    repo = pygit2.Repository(str(fork.path / ".git"))
    assert gitio.in_flight_branches(repo, fork.head("release"), fork_ref="release") == []
    assert gitio.in_flight_branches(repo, fork.head("release")) == []     # no fork ref named: the same
    [br] = gitio.in_flight_branches(repo, fork.head("main"), fork_ref="main")
    assert br.upstream_shas == (u1,) and br.paths == frozenset({"lib/x.cpp"})
    # a person's commit on the sync branch after forksync's pick: still built on main's tip
    fork.checkout("forksync/chain-" + u1[:12])
    fork.commit("fix the pick by hand", {"lib/x.cpp": "2\n"}, when=T0 + 30)
    fork.checkout("main")
    assert gitio.in_flight_branches(repo, fork.head("release"), fork_ref="release") == []
    assert [b.upstream_shas for b in gitio.in_flight_branches(repo, fork.head("main"), fork_ref="main")] == [(u1,)]


def test_a_sync_branch_built_on_a_newer_tip_of_the_fork_ref_stays_in_flight(up, tmp_path):
    # the fork tip read from a remote-tracking ref that lags the local branch the sync branch was
    # built on: that branch is the fork ref itself (by name), and it contains the fork tip
    fork, u1 = _two_fork_branches(up, tmp_path)
    repo = pygit2.Repository(str(fork.path / ".git"))
    old = fork.head("main~1")
    assert [b.upstream_shas for b in gitio.in_flight_branches(repo, old, fork_ref="main")] == [(u1,)]
    assert [b.upstream_shas for b in gitio.in_flight_branches(repo, old)] == [(u1,)]


def test_a_rebased_forks_old_sync_branch_stays_in_flight(up, tmp_path):
    # openxla/triton rebases llvm-head onto upstream: a sync branch built on the pre-rebase tip has
    # a base no branch holds any more; its upstream commits are still on an open PR
    fork, u1 = _two_fork_branches(up, tmp_path)
    fork.git("reset", "-q", "--hard", "main~1")
    fork.commit("[main] tune the scheduler (rebased)", {"lib/sched.cpp": "fast\n"}, when=T0 + 40)
    repo = pygit2.Repository(str(fork.path / ".git"))
    [br] = gitio.in_flight_branches(repo, fork.head("main"), fork_ref="main")
    assert br.upstream_shas == (u1,)
    # a branch that took the sync branch (merged it) holds its base too, but it was not built for it
    fork.checkout("main", new_branch="dev")
    fork.merge("forksync/chain-" + u1[:12], when=T0 + 50)
    fork.checkout("main")
    assert [b.upstream_shas for b in gitio.in_flight_branches(repo, fork.head("main"), fork_ref="main")] == [(u1,)]


def test_a_rebased_forks_old_sync_branch_stays_in_flight_beside_a_backup_of_the_old_tip(up, tmp_path):
    # the pre-rebase tip kept as a branch (openxla/triton keeps llvm-head-<sha> branches): the sync
    # branch's base is in that branch, but the rebase copied it (author, author time, subject) into
    # the fork's history: built for the fork, not for the backup
    fork, u1 = _two_fork_branches(up, tmp_path)
    old = fork.head("main")
    fork.git("branch", "-q", "main-backup", old)
    fork.git("reset", "-q", "--hard", "main~1")
    fork.commit("[main] an earlier change, moved below", {"lib/early.cpp": "e\n"}, when=T0 + 40)
    fork.cherry_pick(old, when=T0 + 41)
    repo = pygit2.Repository(str(fork.path / ".git"))
    assert [b.upstream_shas for b in gitio.in_flight_branches(repo, fork.head("main"), fork_ref="main")] == [(u1,)]
    # the same backup, with the fork's own line not holding the copy: built for the backup
    assert gitio.in_flight_branches(repo, fork.head("release"), fork_ref="release") == []


def test_a_sync_branch_merged_into_its_fork_branch_and_kept_is_not_in_flight_on_another(up, tmp_path):
    # GitHub leaves a merged PR's branch unless someone deletes it: main's chain, merged into main
    # (a merge commit, or fast-forward), holds commits release lacks, and main, which holds its
    # base, holds its first pick too
    fork, u1 = _two_fork_branches(up, tmp_path)
    branch = "forksync/chain-" + u1[:12]
    repo = pygit2.Repository(str(fork.path / ".git"))
    fork.merge(branch, when=T0 + 30)
    assert gitio.in_flight_branches(repo, fork.head("main"), fork_ref="main") == []
    assert gitio.in_flight_branches(repo, fork.head("release"), fork_ref="release") == []
    fork.git("reset", "-q", "--hard", branch)               # fast-forward instead
    assert gitio.in_flight_branches(repo, fork.head("main"), fork_ref="main") == []
    assert gitio.in_flight_branches(repo, fork.head("release"), fork_ref="release") == []


def test_a_sync_branch_named_for_a_fork_ref_is_in_flight_for_that_ref_only(up, tmp_path):
    # forksync/<fork ref>/<unit>: release's own sync branch for a unit main has too (both start at
    # U1), read for release and never for main; main's forksync/<unit> is main's
    fork, u1 = _two_fork_branches(up, tmp_path)
    fork.checkout("release", new_branch="forksync/release/chain-" + u1[:12])
    fork.cherry_pick(u1, when=T0 + 21, trailer=f"Upstream-Commit: {u1}\nForksync-Unit: chain-{u1[:12]}")
    fork.checkout("main")
    repo = pygit2.Repository(str(fork.path / ".git"))
    [rel] = gitio.in_flight_branches(repo, fork.head("release"), fork_ref="release")
    assert (rel.name, rel.unit_id, rel.kind, rel.upstream_shas) == \
        ("forksync/release/chain-" + u1[:12], "chain-" + u1[:12], "chain", (u1,))
    [main] = gitio.in_flight_branches(repo, fork.head("main"), fork_ref="main")
    assert (main.name, main.unit_id, main.upstream_shas) == ("forksync/chain-" + u1[:12], "chain-" + u1[:12], (u1,))
    # the name alone says it: release's branch is not main's even where its base cannot tell
    fork.git("branch", "-q", "-f", "forksync/release/chain-" + u1[:12], "forksync/chain-" + u1[:12])
    assert [b.name for b in gitio.in_flight_branches(repo, fork.head("main"), fork_ref="origin/main")] == \
        ["forksync/chain-" + u1[:12]]
    # a fork ref with slashes (ROCm's release/internal/3.2.x) is named whole
    fork.git("branch", "-q", "internal/3.2.x", "release")
    fork.git("branch", "-q", "forksync/internal/3.2.x/bundle-" + u1[:12], "forksync/release/chain-" + u1[:12])
    assert [b.name for b in gitio.in_flight_branches(repo, fork.head("release"), fork_ref="internal/3.2.x")] == \
        ["forksync/internal/3.2.x/bundle-" + u1[:12]]



def test_a_default_branch_sync_branch_is_not_in_flight_on_a_fork_branch_cut_from_it(up, tmp_path):
    # release cut from main after main's chain was applied holds the chain's base too: a
    # forksync/<unit> branch whose base the default branch holds is the default branch's
    fork, u1 = _two_fork_branches(up, tmp_path)
    fork.checkout("main", new_branch="rel-cut")
    fork.commit("[rel-cut] pin the version", {"VERSION": "3.2\n"}, when=T0 + 25)
    fork.checkout("main")
    repo = pygit2.Repository(str(fork.path / ".git"))
    assert gitio.default_branch(repo) == "main"            # origin/HEAD of the checkout
    assert gitio.in_flight_branches(repo, fork.head("rel-cut"), fork_ref="rel-cut") == []
    assert [b.name for b in gitio.in_flight_branches(repo, fork.head("main"), fork_ref="main")] == \
        ["forksync/chain-" + u1[:12]]
    # the App follows one fork ref and names its branches forksync/<unit>: that ref is its default
    assert [b.name for b in gitio.in_flight_branches(repo, fork.head("rel-cut"), fork_ref="rel-cut",
                                                     default="rel-cut")] == ["forksync/chain-" + u1[:12]]

def test_sync_branch_names():
    from bot.model import sync_branch, sync_branch_ref
    assert sync_branch("chain-0123456789ab") == "forksync/chain-0123456789ab"
    assert sync_branch("chain-0123456789ab", "release") == "forksync/chain-0123456789ab"    # no default known
    assert sync_branch("chain-0123456789ab", "main", default="main") == "forksync/chain-0123456789ab"
    assert sync_branch("chain-0123456789ab", "refs/heads/main", default="main") == "forksync/chain-0123456789ab"
    assert sync_branch("bundle-0123456789ab", "release/internal/3.2.x", default="main_perf") == \
        "forksync/release/internal/3.2.x/bundle-0123456789ab"
    assert sync_branch("bundle-0123456789ab", "refs/remotes/origin/triton-mlir", default="main_perf") == \
        "forksync/triton-mlir/bundle-0123456789ab"
    assert sync_branch_ref("forksync/chain-0123456789ab") == ("", "chain-0123456789ab")
    assert sync_branch_ref("forksync/release/internal/3.2.x/bundle-0123456789ab") == \
        ("release/internal/3.2.x", "bundle-0123456789ab")
    assert sync_branch_ref("forksync/backout-0123456789ab") is None


def test_parse_pr():
    assert gitio.parse_pr("Fix thing (#123)") == 123
    assert gitio.parse_pr("Fix (#12) thing") is None
    assert gitio.parse_pr("No pr") is None


def test_parse_patch_stream_quoted_paths():
    data = (b"commit " + b"a" * 40 + b"\n\n"
            b'diff --git "a/sp ace\\303\\251.txt" "b/sp ace\\303\\251.txt"\n'
            b"index 1..2 100644\n--- a/x\n+++ b/x\n@@ -3 +3,2 @@ ctx\n-a\n+b\n+c\n"
            b"diff --git a/p q.txt b/p q.txt\nnew file mode 100644\nBinary files /dev/null and b/p q.txt differ\n")
    files = gitio.parse_patch_stream(data)["a" * 40]
    assert files[0] == FileChange("sp aceé.txt", "M", None, ((3, 1),), ((3, 2),), ("ctx",), edits=((3, 1, 3, 2),))
    assert files[1] == FileChange("p q.txt", "A")        # binary to git: its edits are not known


def test_missing_old_blob_found_when_git_stops_mid_stream(up):
    """The pre-scan only sees objects the commits introduce; a missing *old* blob makes `git log -p`
    die mid-stream, and the commit it was on is then analysed from its trees."""
    c0 = up.commit("Add big (#5)", {"big.txt": "old\n" * 50}, when=T0 + 10)
    c1 = up.commit("Grow big (#6)", {"big.txt": "old\n" * 50 + "new\n"}, when=T0 + 20)
    c2 = up.commit("Small (#7)", {"lib/a.cpp": "3\n"}, when=T0 + 30)
    repo = pygit2.Repository(str(up.path / ".git"))
    blob = str(repo[c0].tree["big.txt"].id)
    os.remove(up.path / ".git" / "objects" / blob[:2] / blob[2:])
    repo = pygit2.Repository(str(up.path / ".git"))
    infos = gitio.commit_infos(repo, [c2, c1])
    assert infos[c1].missing == (f"blob {blob} (big.txt)",) and infos[c1].files[0].path == "big.txt"
    assert infos[c2].missing == () and infos[c2].patch_id == _git_patch_id(up.path, c2)


def test_several_commits_with_missing_blobs(up):
    c1 = up.commit("Big one (#5)", {"b1.bin": "1" * 500}, when=T0 + 10)
    c2 = up.commit("Ok (#6)", {"lib/a.cpp": "2\n"}, when=T0 + 20)
    c3 = up.commit("Big two (#7)", {"b2.bin": "2" * 500}, when=T0 + 30)
    c4 = up.commit("Ok again (#8)", {"lib/a.cpp": "3\n"}, when=T0 + 40)
    repo = pygit2.Repository(str(up.path / ".git"))
    gone = {c: str(repo[c].tree[name].id) for c, name in ((c1, "b1.bin"), (c3, "b2.bin"))}
    for blob in gone.values():
        os.remove(up.path / ".git" / "objects" / blob[:2] / blob[2:])
    repo = pygit2.Repository(str(up.path / ".git"))
    infos = gitio.commit_infos(repo, [c1, c2, c3, c4])
    assert {s for s, i in infos.items() if i.missing} == {c1, c3}
    assert infos[c3].missing == (f"blob {gone[c3]} (b2.bin)",) and infos[c3].files[0].status == "A"
    for c in (c2, c4):
        assert infos[c].patch_id == _git_patch_id(up.path, c) and infos[c].files[0].path == "lib/a.cpp"


def test_changed_paths_do_not_depend_on_the_users_diff_config(up):
    """``diff.noprefix`` (git names ``a/x.txt`` as ``a/x.txt a/x.txt``, which reads as ``x.txt``)
    and ``diff.ignoreSubmodules=all`` (a submodule bump is not shown) in the repository's config
    change nothing: the analysis names every changed path as git's defaults do."""
    repo = pygit2.Repository(str(up.path))
    repo.config["diff.noprefix"] = "true"
    repo.config["diff.ignoreSubmodules"] = "all"
    c = up.commit("Touch a/ and b/ (#2)", {"a/x.txt": "x\n", "b/y.txt": "y\n"}, when=T0 + 60)
    info = gitio.commit_infos(repo, [c], renames=False)[c]
    assert info.paths == {"a/x.txt", "b/y.txt"}


def test_stale_lock_files_of_a_killed_git_are_cleared_and_live_ones_kept(up, tmp_path):
    bare = tmp_path / "work.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(up.path), str(bare)], check=True)
    now = 1_800_000_000.0
    stale = [bare / "refs" / "heads" / "main.lock", bare / "packed-refs.lock"]
    live = bare / "refs" / "heads" / "other.lock"
    for p in [*stale, live]:
        p.write_text("")
    for p in stale:
        os.utime(p, (now - gitio.STALE_LOCK_S - 1, now - gitio.STALE_LOCK_S - 1))
    os.utime(live, (now - 5, now - 5))
    up.commit("Next (#2)", {"README": "r2\n"}, when=T0 + 60)
    # what a killed fetch leaves: git refuses the ref until someone removes the lock
    fetch = ["git", "--git-dir", str(bare), "fetch", "-q", str(up.path), "+refs/heads/*:refs/heads/*"]
    failed = subprocess.run(fetch, capture_output=True, text=True)
    assert failed.returncode != 0 and "main.lock" in failed.stderr
    assert gitio.clear_stale_locks(bare, now) == ["packed-refs.lock", "refs/heads/main.lock"]
    assert live.exists() and not any(p.exists() for p in stale)
    subprocess.run(fetch, check=True)
    assert gitio.clear_stale_locks(tmp_path / "absent.git", now) == []


def test_commits_missing_only_an_old_blob_are_found_in_one_scan(up, monkeypatch):
    """A blobless partial clone lacks the *old* blobs too, whose commit (a parent outside the set:
    on a fork that merges upstream, most parents are merges) holds them: the scan finds those
    commits at once, instead of `git log -p` stopping on each in turn (one restart per commit:
    hours on the Intel fork's 5,373 commits)."""
    shas = []
    for k in range(3):
        c = up.commit(f"Add big{k} (#{10 + k})", {f"big{k}.txt": "old\n" * 50}, when=T0 + 10 + 20 * k)
        shas.append(up.commit(f"Grow big{k} (#{20 + k})", {f"big{k}.txt": "old\n" * 50 + "new\n"},
                              when=T0 + 20 + 20 * k))
        blob = str(pygit2.Repository(str(up.path / ".git"))[c].tree[f"big{k}.txt"].id)
        os.remove(up.path / ".git" / "objects" / blob[:2] / blob[2:])
    calls = []
    real = gitio._log_patch
    monkeypatch.setattr(gitio, "_log_patch", lambda *a, **k: calls.append(1) or real(*a, **k))
    infos = gitio.commit_infos(pygit2.Repository(str(up.path / ".git")), shas)
    assert all(infos[s].missing for s in shas) and all(infos[s].files[0].path.startswith("big") for s in shas)
    assert len(calls) == 1


def test_forksyncs_own_refs_do_not_make_a_local_upstream_look_fetched(up):
    """"Upstream as of" for a local copy is when its refs last changed; the branches, resolutions
    and decision notes forksync writes into the same repository (fork and upstream in one) say
    nothing about upstream and must not move it."""
    git_dir = gitio.git_dir_of(up.path)
    set_ref_times(git_dir, 1_000_000)
    assert gitio.refs_updated_at(git_dir) == 1_000_000
    repo = pygit2.Repository(git_dir)
    head = repo.head.target
    for ref in ("refs/heads/forksync/chain-0123456789ab", "refs/forksync/resolutions/chain-0123456789ab/abc",
                "refs/notes/forksync", "refs/remotes/origin/forksync/bundle-0123456789ab"):
        repo.references.create(ref, head, force=True)
    assert gitio.refs_updated_at(git_dir) == 1_000_000
    repo.references.create("refs/notes/commits", head)              # notes of others count
    assert gitio.refs_updated_at(git_dir) > 1_000_000


def test_upstream_as_of_in_one_repository_is_when_upstreams_own_ref_moved(up):
    """Fork and upstream in one repository (upstream fetched as ``upstream/main``): a commit on the
    fork's own branch must not make upstream look freshly seen; only upstream's ref (its file or
    reflog, else packed-refs) and FETCH_HEAD count."""
    git_dir = gitio.git_dir_of(up.path)
    repo = pygit2.Repository(git_dir)
    repo.references.create("refs/remotes/upstream/main", repo.head.target)
    set_ref_times(git_dir, 1_000_000)
    repo.references.create("refs/heads/fork-work", repo.head.target)    # the fork's own commit or branch
    assert gitio.refs_updated_at(git_dir, ref="upstream/main") == 1_000_000
    assert gitio.refs_updated_at(git_dir) > 1_000_000                   # as a separate repository reads it
    moved = repo.head.peel(pygit2.Commit).tree_id                       # any other object: the ref is rewritten
    repo.references["refs/remotes/upstream/main"].set_target(moved, "fetched")
    assert gitio.refs_updated_at(git_dir, ref="refs/remotes/upstream/main") > 1_000_000
    assert gitio.refs_updated_at(git_dir, ref="0" * 40) is None         # a sha is no ref: no ref's time is its


def _git(git_dir, *argv) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", *argv], check=True, capture_output=True, text=True).stdout


def test_upstream_as_of_of_a_pinned_sha_is_unknown_whatever_the_refs_do(up, tmp_path):
    """``--upstream-ref <sha>`` on a bare clone that holds fork and upstream: a sha is no ref, so
    nothing says when upstream was last seen — not packed-refs (written at the clone, rewritten
    by a branch deletion), not the fork's branches."""
    up.commit("Two (#2)", {"README": "r2\n"}, when=T0 + 10)
    bare = str(tmp_path / "copy.git")
    subprocess.run(["git", "clone", "-q", "--bare", "--shared", str(up.path), bare], check=True)
    sha = _git(bare, "rev-parse", "HEAD").strip()
    _git(bare, "branch", "old-work", "HEAD~1")
    _git(bare, "pack-refs", "--all")
    set_ref_times(bare, 1_000_000)
    assert gitio.refs_updated_at(bare, ref=sha[:9]) is None
    assert gitio.ref_name(pygit2.Repository(bare), sha[:9]) is None
    assert gitio.ref_name(pygit2.Repository(bare), "main") == "refs/heads/main"
    _git(bare, "branch", "-D", "old-work")                               # rewrites packed-refs
    assert os.stat(os.path.join(bare, "packed-refs")).st_mtime > 1_000_000
    assert gitio.refs_updated_at(bare, ref=sha[:9]) is None
    assert gitio.refs_updated_at(bare, ref=f"{sha}~1") is None          # any rev that names no ref


def test_upstream_ref_only_in_packed_refs_is_unknown_not_the_time_of_the_last_deletion(up, tmp_path):
    """Fork and upstream in one bare repository, upstream's ref packed and no reflog (bare clones
    keep none): packed-refs' time moves whenever any packed ref is deleted or packed, so it is no
    answer for upstream's ref; its reflog is, and so is a FETCH_HEAD that lists its commit (a
    fetch of another remote is not)."""
    bare = str(tmp_path / "one.git")
    subprocess.run(["git", "clone", "-q", "--bare", str(up.path), bare], check=True)
    head = _git(bare, "rev-parse", "HEAD").strip()
    _git(bare, "update-ref", "refs/remotes/upstream/main", head)
    _git(bare, "branch", "fork-old", head)
    _git(bare, "pack-refs", "--all")
    assert not os.path.exists(os.path.join(bare, "refs/remotes/upstream/main"))
    assert not os.path.exists(os.path.join(bare, "logs/refs/remotes/upstream/main"))
    set_ref_times(bare, 1_000_000)
    assert gitio.refs_updated_at(bare, ref="upstream/main") is None
    _git(bare, "branch", "-D", "fork-old")                               # the fork's write rewrites packed-refs
    assert gitio.refs_updated_at(bare, ref="upstream/main") is None
    # FETCH_HEAD of a fetch that saw upstream's commit dates it; one of other commits does not
    fh = os.path.join(bare, "FETCH_HEAD")
    with open(fh, "w") as f:
        f.write(f"{'1' * 40}\t\tbranch 'main' of /elsewhere/fork\n")
    os.utime(fh, (2_000_000, 2_000_000))
    assert gitio.refs_updated_at(bare, ref="upstream/main") is None
    with open(fh, "w") as f:
        f.write(f"{head}\tnot-for-merge\tbranch 'main' of /elsewhere/upstream\n")
    os.utime(fh, (2_000_000, 2_000_000))
    assert gitio.refs_updated_at(bare, ref="upstream/main") == 2_000_000
    # a reflog of upstream's ref dates it, and no other ref's deletion moves it
    os.remove(fh)
    os.makedirs(os.path.join(bare, "logs/refs/remotes/upstream"))
    log = os.path.join(bare, "logs/refs/remotes/upstream/main")
    with open(log, "w") as f:
        f.write(f"{'0' * 40} {head} A <a@x> 3000000 +0000\tfetch: fast-forward\n")
    os.utime(log, (3_000_000, 3_000_000))
    _git(bare, "branch", "fork-new", head)
    _git(bare, "pack-refs", "--all")
    _git(bare, "branch", "-D", "fork-new")
    assert gitio.refs_updated_at(bare, ref="upstream/main") == 3_000_000


def test_a_fetch_of_the_forks_own_remote_does_not_date_upstream_even_when_it_lists_its_commit(tmp_path):
    """A non-bare clone of the fork with upstream as a second remote, upstream's ref packed (gc).
    The fork on GitHub keeps a copy of upstream's main (as "Sync fork" leaves it), so a plain
    `git fetch` of origin alone lists upstream's commit in FETCH_HEAD — and says nothing about
    upstream, which nobody fetched for days. Only a FETCH_HEAD line fetched from upstream's own
    remote dates it; `git fetch upstream` still does (its ref unchanged, so only FETCH_HEAD says so)."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x"}

    def run(cwd, *argv):
        subprocess.run(["git", *argv], cwd=str(cwd), check=True, capture_output=True, env=env)

    up, fork, clone = tmp_path / "up", tmp_path / "fork", tmp_path / "clone"
    run(tmp_path, "init", "-q", "-b", "main", str(up))
    run(up, "commit", "-q", "--allow-empty", "-m", "u1")
    run(tmp_path, "clone", "-q", str(up), str(fork))             # its main: a copy of upstream's
    run(fork, "checkout", "-q", "-b", "downstream")
    run(fork, "commit", "-q", "--allow-empty", "-m", "f1")
    run(tmp_path, "clone", "-q", str(fork), str(clone))
    run(clone, "remote", "add", "upstream", f"file://{up}/.git/")   # FETCH_HEAD names it without /.git/
    run(clone, "fetch", "-q", "upstream")
    run(clone, "gc", "-q")
    git_dir = str(clone / ".git")
    set_ref_times(git_dir, 1_000_000)
    run(clone, "fetch", "-q", "origin")
    assert gitio.refs_updated_at(git_dir, ref="upstream/main") == 1_000_000
    run(clone, "fetch", "-q", "upstream")
    assert gitio.refs_updated_at(git_dir, ref="upstream/main") > 1_000_000


# texts whose zero-context hunks are easy to get wrong: several runs in one 3-context hunk, runs at
# either end, "\ No newline at end of file" on either side, emptied and filled files, CRLF lines,
# a Python function added between two others, and an insertion the indent heuristic slides (git's t4061)
PY_OLD = "def a():\n    return 1\n\n\ndef c():\n    return 3\n"
PY_NEW = "def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n"
EDIT_PAIRS = [
    ("runs.txt", "".join(f"{i}\n" for i in range(20)),
     "".join(f"{i}\n" if i not in (3, 5, 6, 19) else f"x{i}\n" for i in range(20)) + "tail\n"),
    ("head.txt", "a\nb\nc\nd\ne\nf\ng\n", "new\na\nc\nd\ne\nf\nG\n"),
    ("noeol.txt", "a\nb\nc", "a\nb\nc\nd"),
    ("noeol2.txt", "a\nb\nc\n", "a\nB\nc"),
    ("emptied.txt", "a\nb\n", ""),
    ("filled.txt", "", "a\nb\n"),
    ("crlf.txt", "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\nd\r\n"),
    ("mod.py", PY_OLD, PY_NEW),
    ("slid.txt", "1\n2\na\n\nb\n3\n4\n", "1\n2\na\n\nb\na\n\nb\n3\n4\n"),
]


def _libgit2_edits(old: bytes | None, new: bytes | None) -> tuple:
    return tuple((h.old_start, h.old_lines, h.new_start, h.new_lines) for h in pygit2.Patch.create_from(
        old, new, context_lines=0, flag=pygit2.enums.DiffOption.INDENT_HEURISTIC).hunks)


def test_edits_are_the_zero_context_hunks_of_git_default_diff_whatever_the_user_config(up, tmp_path, monkeypatch):
    """``FileChange.edits`` read from ``git log -p`` (3 lines of context) equal libgit2's zero-context
    diff with the indent heuristic (symbols.diff_hunks) on every pair, also for a user whose global
    config asks for another algorithm and no indent heuristic."""
    up.commit("Olds", {p: o for p, o, _ in EDIT_PAIRS}, when=T0 + 10)
    c = up.commit("News (#9)", {p: n for p, _, n in EDIT_PAIRS}, when=T0 + 20)
    d = up.commit("Drop two", {"runs.txt": None, "crlf.txt": None}, when=T0 + 30)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[diff]\n\talgorithm = histogram\n\tindentHeuristic = false\n")
    monkeypatch.setenv("HOME", str(home))
    # the case is one the setting changes: git without the pinned diff gives other hunks
    plain = subprocess.run(["git", "-C", str(up.path), "diff", "-U0", f"{c}~1", c, "--", "slid.txt"],
                           capture_output=True, text=True, check=True).stdout
    assert "@@ -5,0 +6,3 @@" in plain
    repo = pygit2.Repository(str(up.path / ".git"))
    infos = gitio.commit_infos(repo, [c, d])
    got = {f.path: f.edits for f in infos[c].files}
    want = {p: _libgit2_edits(o.encode(), n.encode()) for p, o, n in EDIT_PAIRS}
    assert got == want
    assert got["slid.txt"] == ((4, 0, 5, 3),) and got["mod.py"] == ((4, 0, 5, 4),)
    assert got["head.txt"] == ((0, 0, 1, 1), (2, 1, 2, 0), (7, 1, 7, 1))
    assert got["noeol.txt"] == ((3, 1, 3, 2),) and got["filled.txt"] == ((0, 0, 1, 2),)
    assert {f.path: f.edits for f in infos[d].files} == {
        "runs.txt": ((1, 21, 0, 0),), "crlf.txt": ((1, 4, 0, 0),)}


# an insertion that slides over a long repeated tail: git with no context trims the texts' common
# tail first and places it ~500 lines earlier than libgit2's (or git's own -U3) diff of the whole texts
TAIL_OLD = "x\n" + "a\n" * 600
TAIL_NEW = "x\n" + "a\n" * 601


@pytest.mark.parametrize("setting", ["diff.context", "GIT_DIFF_OPTS"])
def test_edits_and_patch_ids_do_not_follow_the_users_context_width(up, tmp_path, monkeypatch, setting):
    up.commit("Tail", {"tail.txt": TAIL_OLD}, when=T0 + 10)
    c = up.commit("Longer tail (#4)", {"tail.txt": TAIL_NEW}, when=T0 + 20)
    repo = pygit2.Repository(str(up.path / ".git"))
    want = gitio.commit_infos(repo, [c])[c]
    assert want.files[0].edits == _libgit2_edits(TAIL_OLD.encode(), TAIL_NEW.encode()) == ((601, 0, 602, 1),)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    if setting == "diff.context":
        (home / ".gitconfig").write_text("[diff]\n\tcontext = 0\n")
    else:
        monkeypatch.setenv("GIT_DIFF_OPTS", "--unified=0")
    plain = subprocess.run(["git", "-C", str(up.path), "diff", f"{c}~1", c], capture_output=True, text=True, check=True).stdout
    assert "@@ -90,0 +91 @@" in plain           # the setting is in force, and changes git's hunk
    got = gitio.commit_infos(repo, [c])[c]
    assert got.files[0].edits == ((601, 0, 602, 1),) and got.patch_id == want.patch_id


def test_a_change_git_shows_as_binary_has_no_edits_and_its_symbols_come_from_its_texts(up):
    """A text git shows as binary (a ``-diff`` attribute here, a NUL byte, core.bigFileThreshold) has no
    lines in the patch: its edits are unknown (None), not "nothing changed", so its symbols are those
    of the texts' own diff (an empty ``edits`` would say it touches none, and poison the re-parse)."""
    from bot.plan.symbols import symbols_of_change

    (up.path / ".git" / "info").mkdir(exist_ok=True)
    (up.path / ".git" / "info" / "attributes").write_text("m.py -diff\n")
    up.commit("Olds", {"m.py": PY_OLD, "n.bin": "a\0b\n"}, when=T0 + 10)
    c = up.commit("News (#9)", {"m.py": PY_NEW, "n.bin": "a\0c\n"}, when=T0 + 20)
    repo = pygit2.Repository(str(up.path / ".git"))
    files = {f.path: f for f in gitio.commit_infos(repo, [c])[c].files}
    assert files["m.py"].edits is None and files["n.bin"].edits is None and files["m.py"].old_ranges == ()
    syms = symbols_of_change(files["m.py"], PY_OLD.encode(), PY_NEW.encode())
    assert syms == symbols_of_change(FileChange("m.py", "M"), PY_OLD.encode(), PY_NEW.encode()) and "b" in syms


@pytest.mark.parametrize("chunk", [1, 7, 8, 9, 4096])
def test_the_patch_stream_reads_the_same_in_any_chunk_size(up, monkeypatch, chunk):
    """git's output is parsed while it streams, a commit whenever the next one's ``commit`` line
    has arrived; the answer must not depend on where the reads cut it (a boundary inside the
    ``\ncommit `` marker itself, a read of one byte)."""
    shas = [up.commit(f"Change {i} (#{i + 2})", {"lib/a.cpp": A_CPP.replace("1;", f"{i + 10};"), f"f{i}.txt": "commit x\n" * i},
                      when=T0 + i) for i in range(1, 6)]
    repo = pygit2.Repository(str(up.path))
    whole = gitio.commit_infos(repo, shas)
    monkeypatch.setattr(gitio, "READ_CHUNK", chunk)
    assert gitio.commit_infos(repo, shas) == whole
    assert [len(whole[s].files) for s in shas] == [2] * 5


@pytest.mark.parametrize("damage,want", [
    ("none", ([], [])),
    ("empty ref", (["refs/heads/main"], [])),
    ("cut ref", (["refs/heads/main"], [])),
    ("cut packed-refs", (["packed-refs"], [])),
    ("empty object", ([], ["OBJ"])),
    ("cut object", ([], ["OBJ"])),
    ("ref to an absent object", ([], ["refs/heads/main"])),
    ("empty HEAD", ([], ["HEAD"])),
])
def test_damaged_files_finds_what_a_power_loss_empties_or_cuts(up, tmp_path, damage, want):
    """What a power loss leaves of files written without an fsync: empty or cut short."""
    bare = tmp_path / "work.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(up.path), str(bare)], check=True)
    subprocess.run(["git", f"--git-dir={bare}", "unpack-objects", "-q"], check=True,
                   input=subprocess.run(["git", f"--git-dir={bare}", "pack-objects", "--all", "--stdout", "-q"],
                                        check=True, capture_output=True).stdout)
    for p in (bare / "objects" / "pack").iterdir():
        p.unlink()                                      # every object loose, as a small fetch leaves them
    tip = subprocess.run(["git", f"--git-dir={bare}", "rev-parse", "main"], capture_output=True, text=True,
                         check=True).stdout.strip()
    (bare / "refs" / "heads" / "main").write_text(tip + "\n")     # loose, as a fetch or apply moves it
    obj = bare / "objects" / tip[:2] / tip[2:]
    obj.chmod(0o644)
    if damage == "empty ref":
        (bare / "refs/heads/main").write_bytes(b"")
    elif damage == "cut ref":
        (bare / "refs/heads/main").write_bytes(tip[:17].encode())
    elif damage == "cut packed-refs":
        (bare / "packed-refs").write_bytes(f"# pack-refs with: peeled\n{tip} refs/heads/x\n{tip[:9]}".encode())
    elif damage == "empty object":
        obj.write_bytes(b"")
    elif damage == "cut object":
        obj.write_bytes(obj.read_bytes()[:20])
    elif damage == "ref to an absent object":
        obj.unlink()
    elif damage == "empty HEAD":
        (bare / "HEAD").write_bytes(b"")
    refs, others = gitio.damaged_files(bare)
    assert (refs, [o.replace(f"objects/{tip[:2]}/{tip[2:]}", "OBJ") for o in others]) == want
    assert gitio.damaged_files(tmp_path / "absent.git") == ([], [])


@pytest.mark.parametrize("first, second", [
    # an autosquash (`git rebase -i --autosquash`) folds a "fixup!" commit into the one it names
    ("[main] tune the scheduler", "fixup! [main] tune the scheduler"),
    # openxla/triton's llvm-head keeps its own changes as one commit ("OpenXLA-specific changes") and
    # folds what was pushed on top into it at the next rebase: `rebase -i`'s `fixup` verb on a commit
    # with an ordinary subject
    ("[main] OpenXLA-specific changes", "[main] make the scheduler faster")])
def test_a_forks_old_sync_branch_stays_in_flight_when_a_squash_folded_its_base_away(up, tmp_path, first, second):
    # The fork folds its newest commit into the one before while a sync PR built on it is open, and
    # a person's feature branch still starts at the old tip. The sync branch's base is rewritten
    # into the fork tip's history (the commit it was folded into keeps its author and author time):
    # in flight. Compared alone, the base had no copy there, the feature branch holding it was taken
    # for the branch the sync branch was built for, and its upstream commit was planned a second
    # time while its PR was open.
    fork = up.clone(tmp_path / "fork")
    fork.commit(first, {"lib/sched.cpp": "fast\n"}, when=T0 + 6)
    fork.commit(second, {"lib/sched.cpp": "faster\n"}, when=T0 + 7)
    u1 = up.commit("U1 (#2)", {"lib/x.cpp": "1\n"}, when=T0 + 10)
    fork.add_remote("upstream", up.path)
    fork.checkout("main", new_branch="alice/feature")
    fork.commit("[alice] a feature on the old tip", {"lib/feature.cpp": "f\n"}, when=T0 + 15)
    fork.checkout("main", new_branch="forksync/chain-" + u1[:12])
    fork.cherry_pick(u1, when=T0 + 20, trailer=f"Upstream-Commit: {u1}\nForksync-Unit: chain-{u1[:12]}")
    fork.checkout("main")
    repo = pygit2.Repository(str(fork.path / ".git"))
    assert [b.upstream_shas for b in gitio.in_flight_branches(repo, fork.head("main"), fork_ref="main")] == [(u1,)]
    # the squash: one commit, the first one's subject and author time
    fork.git("reset", "-q", "--soft", "main~2")
    fork.git("commit", "-q", "-m", first, when=T0 + 6)
    assert [b.upstream_shas for b in gitio.in_flight_branches(repo, fork.head("main"), fork_ref="main")] == [(u1,)]

def test_a_sync_branch_built_for_a_fork_branch_that_backported_a_commit_is_not_in_flight_on_the_other(up, tmp_path):
    # A release branch backports one of main's commits (git cherry-pick keeps its author and author
    # time) and a sync branch named forksync/<unit> (made before names carried the fork ref) is built
    # on it. Seen from main, that backport and its original share (author email, author time), so
    # built_for takes release's history for "rewritten into main's" and the branch is in flight on
    # main: its commits (release's own) are planned and analysed as main's. Real case: the
    # facebookexperimental/triton fork's ws-amd shares 9 such commits with main (upstream commits
    # cherry-picked onto both). The earlier rule compared the base commit alone.
    fork = up.clone(tmp_path / "fork")
    fork.checkout("main", new_branch="release")
    fork.commit("[release] pin the toolchain", {"ci/toolchain.txt": "7\n"}, when=T0 + 5)
    fork.checkout("main")
    fork.commit("[main] tune the scheduler", {"lib/sched.cpp": "fast\n"}, when=T0 + 6)
    tune = fork.head("main")
    fork.checkout("release")
    fork.git("cherry-pick", "-x", tune)         # a backport: the author and author time kept
    fork.commit("[release] bump the version", {"VERSION": "3.2.1\n"}, when=T0 + 8)
    u1 = up.commit("U1 (#2)", {"lib/x.cpp": "1\n"}, when=T0 + 10)
    fork.add_remote("upstream", up.path)
    fork.checkout("release", new_branch="forksync/chain-" + u1[:12])
    fork.cherry_pick(u1, when=T0 + 20, trailer=f"Upstream-Commit: {u1}\nForksync-Unit: chain-{u1[:12]}")
    fork.checkout("main")
    repo = pygit2.Repository(str(fork.path / ".git"))
    assert [b.upstream_shas for b in gitio.in_flight_branches(repo, fork.head("release"), fork_ref="release")] == [(u1,)]
    assert gitio.in_flight_branches(repo, fork.head("main"), fork_ref="main") == []


def test_a_dangling_origin_head_is_not_the_default_branch(tmp_path):
    # The fork renamed its default branch master → main (GitHub's own rename). A clone made before
    # keeps refs/remotes/origin/HEAD → refs/remotes/origin/master, which `git fetch --prune` deletes
    # while leaving the symbolic ref dangling (git 2.39). default_branch reads the name it points
    # to without asking whether that branch exists, so the CLI in this clone takes `master` (gone)
    # for the default and names main's units forksync/main/<unit>, while the App, following main,
    # names them forksync/<unit>: two branches, and two PRs, for one unit.
    fork = RepoBuilder.init(tmp_path / "fork", branch="master")
    fork.commit("Initial (#1)", {"README": "r\n"}, when=T0)
    clone = fork.clone(tmp_path / "clone")
    fork.git("branch", "-m", "master", "main")
    clone.git("fetch", "-q", "--prune", "origin")
    clone.git("checkout", "-q", "-b", "main", "origin/main")
    assert clone.git("symbolic-ref", "refs/remotes/origin/HEAD").strip() == "refs/remotes/origin/master"
    repo = pygit2.Repository(str(clone.path / ".git"))
    assert gitio.default_branch(repo) == "main"
    assert gitio.sync_branch_for(repo, "chain-0123456789ab", "main") == "forksync/chain-0123456789ab"


def test_a_dangling_origin_head_does_not_make_the_checked_out_fork_branch_the_default(tmp_path):
    # The fork renamed master → main; this clone's refs/remotes/origin/HEAD dangles after
    # `git fetch --prune`, and the person has release checked out. default_branch now skips the
    # dangling name but falls back to HEAD, which in a checkout is whatever is checked out (its own
    # docstring: "its HEAD is whatever is checked out"): release becomes "the default branch", and
    # `apply --fork-ref release` names release's chain forksync/<unit>, the name the App gives
    # main's chain on the same remote (before, release's was forksync/release/<unit>).
    fork = RepoBuilder.init(tmp_path / "fork", branch="master")
    fork.commit("Initial (#1)", {"README": "r\n"}, when=T0)
    fork.checkout("master", new_branch="release")
    fork.commit("[release] pin", {"VERSION": "3.2\n"}, when=T0 + 5)
    fork.checkout("master")
    clone = fork.clone(tmp_path / "clone")
    fork.git("branch", "-m", "master", "main")
    clone.git("fetch", "-q", "--prune", "origin")
    clone.git("checkout", "-q", "-b", "release", "origin/release")
    assert clone.git("symbolic-ref", "refs/remotes/origin/HEAD").strip() == "refs/remotes/origin/master"
    repo = pygit2.Repository(str(clone.path / ".git"))
    assert gitio.default_branch(repo) != "release"
    assert gitio.sync_branch_for(repo, "chain-0123456789ab", "release") == "forksync/release/chain-0123456789ab"


def test_a_sync_branch_on_a_fork_commit_the_fork_dropped_carries_only_its_own_paths(up, tmp_path):
    # The fork force-pushes its branch without its newest commit while a sync branch built on that
    # commit is open: the branch is still in flight for the fork ref (its PR is open; the App
    # rebuilds it, bot.git.apply.rewritten_base), but the dropped commit under it is the fork's old
    # work, not the unit's: its files are no paths of the unit (they joined fork commits touching
    # them to the chain in the plan), as on a branch built on the tip.
    fork = up.clone(tmp_path / "fork")
    fork.commit("[main] tune the scheduler", {"lib/sched.cpp": "fast\n"}, when=T0 + 6)
    u1 = up.commit("U1 (#2)", {"lib/x.cpp": "1\n"}, when=T0 + 10)
    fork.add_remote("upstream", up.path)
    fork.checkout("main", new_branch="forksync/chain-" + u1[:12])
    fork.cherry_pick(u1, when=T0 + 20, trailer=f"Upstream-Commit: {u1}\nForksync-Unit: chain-{u1[:12]}")
    fork.commit("fix the pick by hand", {"lib/x.cpp": "2\n", "lib/y.cpp": "y\n"}, when=T0 + 30)
    fork.checkout("main")
    repo = pygit2.Repository(str(fork.path / ".git"))
    [on_tip] = gitio.in_flight_branches(repo, fork.head("main"), fork_ref="main")
    fork.git("reset", "-q", "--hard", "main~1")                          # the fork drops its tune
    [dropped] = gitio.in_flight_branches(repo, fork.head("main"), fork_ref="main")
    assert (dropped.name, dropped.upstream_shas, dropped.paths) == \
        (on_tip.name, (u1,), frozenset({"lib/x.cpp", "lib/y.cpp"})) == (on_tip.name, on_tip.upstream_shas, on_tip.paths)


def test_a_sync_branch_on_a_fork_commit_dropped_since_is_the_fork_refs_not_a_person_branchs(up, tmp_path):
    # The fork force-pushes its branch without its newest commit, then goes on, while a sync
    # branch built on that commit is open and a person's feature branch cut from the old tip still
    # holds it. The fork ref's reflog held the commit: the sync branch is the fork ref's, in flight
    # (its upstream commit is not planned a second time while its PR is open), not one built for
    # the feature branch.
    fork = up.clone(tmp_path / "fork")
    fork.commit("[main] tune the scheduler", {"lib/sched.cpp": "fast\n"}, when=T0 + 6)
    u1 = up.commit("U1 (#2)", {"lib/x.cpp": "1\n"}, when=T0 + 10)
    fork.add_remote("upstream", up.path)
    fork.checkout("main", new_branch="alice/feature")
    fork.commit("[alice] a feature on the old tip", {"lib/feature.cpp": "f\n"}, when=T0 + 15)
    fork.checkout("main", new_branch="forksync/chain-" + u1[:12])
    fork.cherry_pick(u1, when=T0 + 20, trailer=f"Upstream-Commit: {u1}\nForksync-Unit: chain-{u1[:12]}")
    fork.checkout("main")
    fork.git("reset", "-q", "--hard", "main~1")                          # the fork drops its tune
    fork.commit("[main] another tune", {"lib/sched.cpp": "faster\n"}, when=T0 + 30)
    repo = pygit2.Repository(str(fork.path / ".git"))
    assert [(b.name, b.upstream_shas, b.paths) for b in
            gitio.in_flight_branches(repo, fork.head("main"), fork_ref="main")] == \
        [("forksync/chain-" + u1[:12], (u1,), frozenset({"lib/x.cpp"}))]
    # a bare clone keeps no reflog: the feature branch holding the commit is all git says there
    fork.git("clone", "-q", "--bare", str(fork.path), str(tmp_path / "bare.git"))
    bare = pygit2.Repository(str(tmp_path / "bare.git"))
    assert gitio.in_flight_branches(bare, fork.head("main"), fork_ref="main") == []
