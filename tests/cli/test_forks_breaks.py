"""`forksync status` / `ledger` on the shapes of real Triton forks other than the two docs/real-fork.md
studies: ROCm/triton (release branches cut from upstream's own release/3.x branches, IFU merges,
a git submodule pointing into the repository itself), a CI checkout of a fork. Each test builds
the smallest repository with the real shape; the real commits are named in the docstrings.
"""
from __future__ import annotations

import json
import os
import subprocess

import pygit2

from bot.demo.repobuilder import RepoBuilder, run_git
from tests.support.cli import run
from tests.support.partial_clone import blobless_clone

T0 = 1_767_225_600          # 2026-01-01T00:00:00Z
DAY = 86_400


def _by_pr(doc) -> dict[int, dict]:
    return {e["pr"]: e for e in doc["entries"]}


def test_a_submodule_pointing_into_the_repository_beside_an_absent_blob_is_no_crash(tmp_path, capsys, monkeypatch):
    """ROCm/triton's `third_party/amd` was a git submodule whose commit (5f0fa3a703a1) is a commit
    of ROCm/triton itself, so the object database holds it. Upstream e6e5d5468e92 "[AMD] move AMD
    backend in tree (#2967)" removes that gitlink and adds `third_party/amd/backend/lib/
    libamdhip64.so`, a blob the snapshot lacks. `forksync status --fork-ref triton-mlir` on the
    ROCm snapshot dies with `TypeError: a bytes-like object is required, not '_pygit2.Commit'`
    (bot/git/repo.py `_fallback_files`: the analysis of a commit with an absent blob hands the
    gitlink's *commit* to `pygit2.Patch.create_from`). Release branches release/2.3.x,
    release/internal/2.3.x and rocm_triton_backend_8 crash the same way.

    A user should see what a missing blob gets everywhere else: exit 0, the numbers, and the blob
    named under `missing_objects` (a submodule's commit is no blob, and not missing)."""
    up = RepoBuilder.init(tmp_path / "up")
    base = up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[ROCm] fork work", {"f.txt": "f\n"}, when=T0 + DAY)
    # the submodule records a commit the repository itself holds (ROCm's own backend commit)
    up.git("update-index", "--add", "--cacheinfo", f"160000,{base},third_party/amd")
    up.write({".gitmodules": '[submodule "third_party/amd"]\n\tpath = third_party/amd\n\turl = ../triton\n'})
    add = up.commit("[AMD] add the AMD backend as a submodule (#2900)", when=T0 + 2 * DAY)
    up.git("rm", "-q", "--cached", "third_party/amd")
    (up.path / "third_party" / "amd").mkdir(parents=True, exist_ok=True)
    move = up.commit("[AMD] move AMD backend in tree (#2967)",
                     {".gitmodules": None, "third_party/amd/backend/lib/libamdhip64.so": "ELF" + "x" * 4000,
                      "third_party/amd/backend/compiler.py": "def f():\n    return 1\n"}, when=T0 + 3 * DAY)
    blob = str(pygit2.Repository(str(up.path / ".git"))[move].tree["third_party/amd/backend/lib/libamdhip64.so"].id)
    os.remove(up.path / ".git" / "objects" / blob[:2] / blob[2:])
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, ["--upstream", str(up.path), "--fork", str(fork.path), "status", "--json"])
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["commits_in_range"] == 2 and doc["counts"]["PENDING"] == 2
    assert doc["missing_objects"] == {move: [f"blob {blob} (third_party/amd/backend/lib/libamdhip64.so)"]}
    assert add not in doc["missing_objects"]


def test_a_shallow_checkout_of_the_fork_is_a_clear_error_not_a_traceback(tmp_path, capsys, monkeypatch):
    """`actions/checkout` fetches one commit by default (`fetch-depth: 1`), and so does
    `git clone --depth N` with N below the fork's own commit count: on a `--depth 10` clone of
    torch-spyre/triton's main (tip 661d116f7621, 29 own commits since upstream bceeb9ed7c0a),
    `forksync --upstream <triton> --fork <shallow clone> status` prints a Python traceback ending
    in `_pygit2.GitError: object not found - no match for id (63f977ebf221…)` (bot/git/repo.py
    `merge_base`, called from `upstream_range`): the merge base lies below the shallow boundary.

    The README promises exit 2 on bad input with a message naming what and where; a user should
    read that the fork's copy is shallow (its history is cut) and how to get the rest
    (`git fetch --unshallow`), not a libgit2 lookup error."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    for i in range(3):
        fork.commit(f"Spyre work {i} (#{80 + i})", {f"spyre/{i}.py": f"{i}\n"}, when=T0 + (i + 1) * DAY)
    up.commit("Two (#2)", {"b.txt": "b\n"}, when=T0 + 2 * DAY)
    shallow = tmp_path / "shallow"
    run_git(tmp_path, "clone", "-q", "--depth", "1", f"file://{fork.path}", str(shallow))
    assert (shallow / ".git" / "shallow").exists()
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, ["--upstream", str(up.path), "--fork", str(shallow), "status"])
    assert rc == 2 and out == ""
    assert "shallow" in err and "Traceback" not in err


def test_a_branch_off_forks_revert_of_an_upstream_commit_before_the_base_is_not_called_contained(
        tmp_path, capsys, monkeypatch):
    """ROCm/triton's release/internal/3.2.x branched from upstream at 152ef2deb8 (#4983,
    2024-10-24), never merges upstream, takes upstream commits by `cherry-pick -x`, and has
    35c6c7c628 `Revert "[BACKEND] Optimize code generation for load with other arg (#4582)"` /
    "This reverts commit 78af5c9fd5dfa…" — #4582 is an upstream commit *before* the branch point.

    `ledger show '#4582'` answers PICKED, evidence `ancestry`: "at or before the merge base …: the
    fork contains it (the fork branched after it)" — the fork does not contain it, it took it back
    out; status's Backlog does not count it. The same revert on a fork that merges upstream is a
    REVERTED hole of the Backlog (bot/core/merged.py); the README defines the Backlog as upstream
    commits older than the frontier that are not handled, whatever the sync style. A user should
    see #4582 REVERTED with the fork's revert as evidence, and counted in the Backlog."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#4500)", {"lib/load.cpp": "int load() { return 0; }\n", "a.txt": "a\n"}, when=T0)
    opt = up.commit("[BACKEND] Optimize code generation for load with other arg (#4582)",
                    {"lib/load.cpp": "int load() { return other(); }\n"}, when=T0 + DAY)
    up.commit("[AMD] Enable shared->MFMA dot operand conversion through LinearLayout (#4983)",
              {"a.txt": "a2\n"}, when=T0 + 2 * DAY)
    rel = up.clone(tmp_path / "rel")                 # the release branch is cut here
    u1 = up.commit("[BACKEND] Fix ProgramPoint passing in AxisInfoAnalysis (#5181)", {"b.txt": "b\n"},
                   when=T0 + 3 * DAY)
    up.commit("[FRONTEND] Something newer (#5200)", {"c.txt": "c\n"}, when=T0 + 4 * DAY)
    rel.git("fetch", "-q", "origin")
    rel.cherry_pick(u1, when=T0 + 5 * DAY, x=True)
    rv = rel.revert(opt, when=T0 + 6 * DAY)
    argv = ["--upstream", str(up.path), "--fork", str(rel.path)]
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, [*argv, "ledger", "show", "#4582", "--json"])
    assert rc == 0, err
    [e] = json.loads(out)["entries"]
    assert (e["sha"], e["disposition"], e["fork_commit"]) == (opt, "REVERTED", rv)
    assert [x["rule"] for x in e["evidence"]][-1] == "revert"
    rc, out, err = run(capsys, [*argv, "status", "--json"])
    doc = json.loads(out)
    assert doc["counts"]["PICKED"] == 1 and doc["frontier"]["pr"] == 5181
    assert doc["backlog"]["total"] == 1 and [h["sha"] for h in doc["backlog"]["holes"]] == [opt]


def _release_branch(tmp_path, upstream_commits):
    """An upstream with a base and ``upstream_commits`` [(subject, files, body)], a fork branch cut
    at the base (as upstream's release/3.0.x was); returns (up, fork, {pr: sha})."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("[FRONTEND] Fix wrong livein set in loop codegen (#4018)", {"base.txt": "0\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    shas = {}
    for i, (subject, files, body) in enumerate(upstream_commits):
        shas[int(subject.rsplit("(#", 1)[1].rstrip(")"))] = up.commit(subject + ("\n\n" + body if body else ""), files,
                                                                      when=T0 + (i + 1) * DAY)
    return up, fork, shas


def test_a_body_bullet_cherry_picking_a_full_upstream_sha_is_a_pick(tmp_path, capsys, monkeypatch):
    """triton-lang/triton's own release/3.0.x (ROCm/triton release/internal/3.0.x and 3.1.x carry
    it): 757b6a61e7 "[AMD] Cherry-pick commits from mainline to support Flex attention on AMD gpus
    (#4569)" says, in its body,
    "* Cherry-pick 06e6799f4eba6035ec35c528e8fefd3d4d724b6f to 3.0.x to fix build issue" and
    "* Cherry-pick cf2ad02324fc253970c3ab2666e775406405f213 to fix hang …" — full 40-hex upstream
    shas (#4216, #4176) under a cherry-pick subject. The ledger has #4216 PENDING, and #4176 with
    upstream's later revert #4631 NO_OP both, evidence "revert-pair: … neither is in the fork" —
    but the fork holds #4176, so upstream's revert of it is something the fork has not taken.
    A user should see both picks PICKED (fork commit 757b6a61e7's stand-in) and #4631 not NO_OP."""
    up, fork, u = _release_branch(tmp_path, [
        ("[AMD] Disable block merging to avoid block argument explosion (#4176)", {"amd/merge.cpp": "off\n"}, ""),
        ("[BUILD] update URL for LLVM tarballs (#4216)", {"setup.py": "url = 'new'\n"}, ""),
    ])
    u[4631] = up.commit('Revert "[AMD] Disable block merging to avoid block argument explosion" (#4631)\n\n'
                        f"This reverts commit {u[4176]}.\n", {"amd/merge.cpp": None}, when=T0 + 3 * DAY)
    pick = fork.commit(
        "[AMD] Cherry-pick commits from mainline to support Flex attention on AMD gpus (#4569)\n\n"
        f"* Cherry-pick {u[4216]} to 3.0.x to fix\nbuild issue\n"
        f"* Cherry-pick {u[4176]} to fix hang while\nrunning flex attention on AMD gpus\n"
        f"* Fix build issue with cherry-pick of\n{u[4176]}\n\n---------\n\n"
        "Co-authored-by: Philippe Tillet <phil@openai.com>\n",
        {"amd/merge.cpp": "off\n", "setup.py": "url = 'new'\n"}, when=T0 + 2 * DAY + 3600)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, ["--upstream", str(up.path), "--fork", str(fork.path), "ledger", "export", "--json"])
    assert rc == 0, err
    e = _by_pr(json.loads(out))
    assert (e[4216]["disposition"], e[4216]["fork_commit"]) == ("PICKED", pick)
    assert (e[4176]["disposition"], e[4176]["fork_commit"]) == ("PICKED", pick)
    assert e[4631]["disposition"] == "PENDING"


def test_commit_urls_under_a_cherry_pick_subject_are_picks(tmp_path, capsys, monkeypatch):
    """triton-lang/triton's release/3.1.x (in ROCm/triton release/internal/3.1.x): cf34004b8a "AMD
    requested cherry-picks for release/3.1.x (#4794)" names its picks only as commit URLs,
    `https://github.com/triton-lang/triton/commit/e0613c64b9bb872e4fa47dbce15ffa6770a1032b`
    (#4520) and `…/commit/0a66c1bd16313690c1eb5440cb89eaa072f1827b` (#4197), one per bullet. The
    ledger leaves both PENDING (a PR URL `…/pull/N` under a heading is read, a commit URL never).
    A user should see them PICKED by that commit."""
    up, fork, u = _release_branch(tmp_path, [
        ("[AMD] Skip mfma layout in maybeDuplicate (#4197)", {"amd/dup.cpp": "skip\n"}, ""),
        ("[AMD] Get libamdhip64.so loaded in process first (#4520)", {"amd/driver.py": "load()\n"}, ""),
    ])
    pick = fork.commit(
        "AMD requested cherry-picks for release/3.1.x (#4794)\n\nPer @jataylo :\n\n"
        "* libamdhip64.so discovery:\n*\n"
        f"https://github.com/triton-lang/triton/commit/{u[4520]}\n"
        "* mfma:\n"
        f"https://github.com/triton-lang/triton/commit/{u[4197]}\n\n---------\n\n"
        "Co-authored-by: Lixun Zhang <Lixun.Zhang@amd.com>\n",
        {"amd/dup.cpp": "skip\n", "amd/driver.py": "load()\n"}, when=T0 + 3 * DAY)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, ["--upstream", str(up.path), "--fork", str(fork.path), "ledger", "export", "--json"])
    assert rc == 0, err
    e = _by_pr(json.loads(out))
    assert [(e[n]["disposition"], e[n]["fork_commit"]) for n in (4197, 4520)] == [("PICKED", pick)] * 2


def test_a_list_of_upstream_sha_prefixes_and_subjects_under_a_cherry_pick_subject_is_picks(
        tmp_path, capsys, monkeypatch):
    """triton-lang/triton's release/3.0.x (in ROCm/triton release/internal/3.0.x and 3.1.x):
    21eae954ef "[RELEASE] [AMD] Additional AMD cherry-picks (#4175)" lists its picks as
    `- 9a0a7c2cc [AMD] Add basic verification to MFMA encoding (#4117)` — upstream's abbreviated
    sha, its exact subject and PR — under "General:", "for RDNA:", "Proton HIP PRs:". All seven
    (#3674 #4056 #4090 #4117 #4119 #4126 #4135) lie in release/internal/3.0.x's range (base
    513f38c47a, #4018); the ledger leaves all seven PENDING and in its Backlog. (The same
    release branch's 3d1da66574 "… (#4161)" says "Cherry pick #3816 and #3790 for release/3.0.x."
    in prose; #3790, PENDING, holds its contiguous pin.) A user should see each listed commit
    PICKED by that commit (the sha prefix and the subject both name it)."""
    up, fork, u = _release_branch(tmp_path, [
        ("[PROTON] Refactor GPU profilers (#4056)", {"proton/gpu.cpp": "1\n"}, ""),
        ("[AMD] Add basic verification to MFMA encoding (#4117)", {"amd/mfma.cpp": "1\n"}, ""),
        ("[AMD][gfx11] Fix BF16 wmma instr generation (#4135)", {"amd/wmma.cpp": "1\n"}, ""),
    ])
    pick = fork.commit(
        "[RELEASE] [AMD] Additional AMD cherry-picks (#4175)\n\nCherry picks for release/3.0.x\n\n"
        f"General:\n- {u[4117][:9]} [AMD] Add basic verification to MFMA encoding (#4117)\n \n"
        f"for RDNA:\n- {u[4135][:9]} [AMD][gfx11] Fix BF16 wmma instr generation (#4135)\n \n"
        f"Proton HIP PRs:\n- {u[4056][:9]} [PROTON] Refactor GPU profilers (#4056)\n\n---------\n\n"
        "Co-authored-by: Lei Zhang <antiagainst@gmail.com>\n",
        {"proton/gpu.cpp": "1\n", "amd/mfma.cpp": "1\n", "amd/wmma.cpp": "1\n"}, when=T0 + 4 * DAY)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, ["--upstream", str(up.path), "--fork", str(fork.path), "ledger", "export", "--json"])
    assert rc == 0, err
    e = _by_pr(json.loads(out))
    assert {n: (e[n]["disposition"], e[n]["fork_commit"]) for n in (4056, 4117, 4135)} == {
        n: ("PICKED", pick) for n in (4056, 4117, 4135)}


def test_a_commit_object_missing_from_the_fork_is_a_clear_error_not_a_traceback(tmp_path, capsys, monkeypatch):
    """A damaged copy: one commit object of the fork's history is gone (a loose object deleted, a
    pack lost, an interrupted copy) and no `shallow` file says the history was cut. On a copy of
    the Triton snapshot without the object of `6440b589d1f9` (the #1921 bundle, in the middle of the
    fork's 2364 own commits), `forksync status` prints a Python traceback ending in
    `_pygit2.GitError: object not found - no match for id (6440b589d1f9…)` (bot/git/repo.py
    `merge_base`, from `upstream_range`).

    A user should read that the repository lacks that commit, which repository, and what to do
    (exit 2, nothing on stdout), not a libgit2 lookup error."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    shas = [fork.commit(f"Fork work {i} (#{80 + i})", {f"w/{i}.py": f"{i}\n"}, when=T0 + (i + 1) * DAY)
            for i in range(3)]
    up.commit("Two (#2)", {"b.txt": "b\n"}, when=T0 + 2 * DAY)
    os.remove(fork.path / ".git" / "objects" / shas[1][:2] / shas[1][2:])
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, ["--upstream", str(up.path), "--fork", str(fork.path), "status"])
    assert rc == 2 and out == ""
    assert shas[1] in err and str(fork.path) in err and "fsck" in err
    assert "Traceback" not in err


def test_a_fork_rebased_past_an_upstream_commit_it_had_picked_and_reverted_keeps_the_hole(
        tmp_path, capsys, monkeypatch):
    """A fork that syncs by rebasing (openxla/triton's `llvm-head` is rebased onto upstream and
    force-pushed) picked upstream u1 (`Upstream-Commit:`), then reverted that pick with `git
    revert` ('Revert "One (#11)"', "This reverts commit <the pick>"). Rebased onto an upstream tip
    that holds u1, git drops the pick (its change is already upstream) and replays the revert,
    which now takes u1 out of the rebased branch; its line still names the pick's old sha, which
    no branch holds any more. b.txt is gone from the fork's tree.

    A user sees: Backlog 0, Days Behind 0, no hole — the fork looks level with upstream. Before the
    rebase u1 was REVERTED; the rebase changed no file the fork holds. They should see u1 as a
    REVERTED hole of the Backlog, as a revert of u1 by its sha makes it (docs/core.md)."""
    up, fork, u1, pick = _rebased_past_a_reverted_pick(tmp_path)
    assert "b.txt" not in set(fork.git("ls-files").split())
    assert fork.git("cat-file", "-t", pick, check=False).strip() != "commit"
    assert _holes_and_backlog(tmp_path, up, fork, capsys, monkeypatch) == ([u1], 1)


def _rebased_past_a_reverted_pick(tmp_path, *, before_u1: str = "") -> tuple[RepoBuilder, RepoBuilder, str, str]:
    """``(up, fork, u1, pick)``: the fork picked upstream u1 "One (#11)" (``Upstream-Commit:``),
    reverted the pick with `git revert`, then rebased onto an upstream tip past u1 and dropped the
    pick's objects (reflog expired, gc: as in a fresh clone). ``before_u1``: the subject of an
    upstream commit landed just before u1 (adding o.txt), none when empty."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[XLA] fork work (#500)", {"f.txt": "f\n"}, when=T0 + DAY // 2)
    if before_u1:
        up.commit(before_u1, {"o.txt": "o\n"}, when=T0 + DAY - 60)
    u1 = up.commit("One (#11)", {"b.txt": "b\n"}, when=T0 + DAY)
    fork.add_remote("upstream", up.path)
    pick = fork.cherry_pick(u1, when=T0 + 2 * DAY, trailer=f"Upstream-Commit: {u1}")
    fork.revert(pick, when=T0 + 3 * DAY)
    up.commit("Two (#12)", {"c.txt": "c\n"}, when=T0 + 4 * DAY)
    fork.git("fetch", "-q", "upstream")
    fork.git("rebase", "-q", "upstream/main", when=T0 + 5 * DAY)
    fork.git("reflog", "expire", "--expire=now", "--all")
    fork.git("gc", "-q", "--prune=now")
    return up, fork, u1, pick


def _holes_and_backlog(tmp_path, up: RepoBuilder, fork: RepoBuilder, capsys, monkeypatch) -> tuple[list[str], int]:
    """``forksync status --json`` of the pair: the Backlog's holes (shas) and its total."""
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, ["--upstream", str(up.path), "--fork", str(fork.path), "status", "--json"])
    assert rc == 0, err
    doc = json.loads(out)
    return [h["sha"] for h in doc["backlog"]["holes"]], doc["backlog"]["total"]


def test_a_pick_found_only_by_patch_id_on_a_blobless_clone_is_not_pending_silently(tmp_path, capsys, monkeypatch):
    """A fork took upstream u1 with `git cherry-pick` and reworded it ("Port the b fix for
    XLA"): no trailer, no `cherry picked from` line, no cited PR; only the patch-id says it is u1.
    On a full copy u1 is PICKED (`patch-id`). On a `git clone --filter=blob:none` of the same
    repository (CI's cheap clone; a blobless clone of the Triton snapshot analyses 4068 of its
    4073 commits without a patch-id) u1 is PENDING, the Backlog counts it, and the one warning says
    objects are missing without saying that a disposition may be wrong or what to do.

    A user should see, for each such PENDING entry, that it was not checked by patch-id (the
    entry's reason, `status --json`'s `pending_unchecked`), and a warning that says how many and
    how to get the blobs — never a PENDING that looks like any other."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n", "b.txt": "b\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[XLA] fork work (#500)", {"f.txt": "f\n"}, when=T0 + DAY // 2)
    u1 = up.commit("Fix the b path (#11)", {"b.txt": "b fixed\n"}, when=T0 + DAY)
    u2 = up.commit("Two (#12)", {"c.txt": "c\n"}, when=T0 + 2 * DAY)
    fork.add_remote("upstream", up.path)
    fork.cherry_pick(u1, when=T0 + 3 * DAY, message="Port the b fix for XLA\n")
    fork.git("branch", "upstream-main", "upstream/main")
    monkeypatch.chdir(tmp_path)
    full = ["--fork", str(fork.path), "--upstream-ref", "upstream-main"]
    rc, out, err = run(capsys, [*full, "ledger", "show", u1, "--json"])
    assert rc == 0, err
    [e] = json.loads(out)["entries"]
    assert (e["disposition"], [x["rule"] for x in e["evidence"]]) == ("PICKED", ["patch-id"])
    part = blobless_clone(fork.path / ".git", tmp_path / "blobless.git")
    (tmp_path / "ci").mkdir()
    monkeypatch.chdir(tmp_path / "ci")             # a fresh cache: CI's checkout has none
    rc, out, err = run(capsys, ["--fork", str(part.path), "--upstream-ref", "upstream-main", "status", "--json"])
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["counts"]["PENDING"] + doc["counts"]["PICKED"] == 2
    if doc["counts"]["PICKED"] == 0:          # not matched: then it must say so, for u1 and u2
        assert sorted(doc["pending_unchecked"]) == sorted([u1, u2])
        assert "patch-id" in err and "2 PENDING" in err and f"git -C {part.path} fetch" in err
        rc, out, err = run(capsys, ["--fork", str(part.path), "--upstream-ref", "upstream-main", "ledger", "show",
                                    u1, "--json"])
        [e] = json.loads(out)["entries"]
        assert e["disposition"] == "PENDING" and "patch-id" in e["reason"]
    assert part.attempts() == []


def test_a_rebased_forks_dropped_pick_revert_takes_out_only_the_upstream_commit_its_subject_cites(
        tmp_path, capsys, monkeypatch):
    """As above (a pick of u1 reverted, then the fork rebased past u1), but upstream landed an
    earlier commit under the same words: "One (#5)" before "One (#11)" (Triton's history repeats
    subjects: "[BACKEND] Update LLVM version", "Fix lit test"). The revert quotes "One (#11)",
    which names u1 by its PR.

    A user sees: both as REVERTED holes of the Backlog (Backlog 2), the older one though the fork
    holds its file. They should see u1 alone: the quoted subject cites PR #11."""
    up, fork, u1, _pick = _rebased_past_a_reverted_pick(tmp_path, before_u1="One (#5)")
    assert "b.txt" not in set(fork.git("ls-files").split()) and "o.txt" in set(fork.git("ls-files").split())
    assert _holes_and_backlog(tmp_path, up, fork, capsys, monkeypatch) == ([u1], 1)


def _backticked_git(err: str) -> list[list[str]]:
    """The `git …` commands a warning tells a person to run, in order, as argv lists."""
    import re
    import shlex
    return [shlex.split(c) for c in re.findall(r"`(git [^`]+)`", err)]


def test_the_refetch_a_blobless_clone_is_told_to_run_gets_the_blobs_of_every_promisor_remote(
        tmp_path, capsys, monkeypatch):
    """A merge-based fork (intel/intel-xpu-backend-for-triton: "Merge OpenAI Triton commit …")
    checked out as CI or a newcomer does: `git clone --filter=blob:none` of the fork, then
    `git remote add upstream …` and `git fetch --filter=blob:none upstream`, which makes
    `upstream` a promisor remote too. The fork merged upstream's u1 and took u3 ahead of the next
    merge with a reworded `git cherry-pick` (only its patch-id says so); u2 is not taken.

    Without blobs neither u2 nor u3 can be checked by patch-id, and the warning says how to get
    the blobs. Running exactly the commands it prints must get them: u3 is then PICKED (an
    isolated pick) and no PENDING entry is left unchecked. The advice named only `origin`, whose
    refetch never brings upstream's own blobs (u2's and u3's new files live only there)."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n", "b.txt": "b\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[XPU] backend work (#500)", {"xpu.txt": "x\n"}, when=T0 + DAY // 2)
    u1 = up.commit("One (#11)", {"a.txt": "a1\n"}, when=T0 + DAY)
    fork.add_remote("upstream", up.path)
    fork.merge(u1, when=T0 + DAY + 3600, message="Merge OpenAI Triton commit `u1` (#501)")
    u2 = up.commit("Two (#12)", {"c.txt": "c only upstream\n"}, when=T0 + 2 * DAY)
    u3 = up.commit("Three (#13)", {"d.txt": "d only upstream\n"}, when=T0 + 3 * DAY)
    fork.git("fetch", "-q", "upstream")
    fork.cherry_pick(u3, when=T0 + 4 * DAY, message="[XPU] take the d file early\n")
    for src in (up.path, fork.path):
        run_git(src, "config", "uploadpack.allowFilter", "true")
        run_git(src, "config", "uploadpack.allowAnySHA1InWant", "true")
    ci = tmp_path / "ci"
    run_git(tmp_path, "clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{fork.path}", str(ci))
    run_git(ci, "remote", "add", "upstream", f"file://{up.path}")
    run_git(ci, "fetch", "-q", "--filter=blob:none", "upstream")
    monkeypatch.chdir(tmp_path)
    argv = ["--fork", str(ci), "--fork-ref", "main", "--upstream-ref", "upstream/main", "status", "--json"]
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    doc = json.loads(out)
    assert sorted(doc["pending_unchecked"]) == sorted([u2, u3])
    commands = _backticked_git(err[err.index("not checked by patch-id"):].split("\n")[0])
    assert commands, err
    for c in commands:
        assert c[:2] == ["git", "-C"] and c[2] in (str(ci), str(ci / ".git")), c
        run_git(tmp_path, *c[1:])
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["pending_unchecked"] == [] and "not checked by patch-id" not in err
    assert (doc["counts"]["PENDING"], doc["counts"]["PICKED"], doc["merge_based"]) == (1, 1, True)
    assert doc["isolated_picks"] == [u3]
    rc, out, err = run(capsys, [*argv[:-2], "ledger", "export", "--json"])
    by = {e["sha"]: e for e in json.loads(out)["entries"]}
    assert (by[u2]["disposition"], by[u3]["disposition"]) == ("PENDING", "PICKED")
    assert [x["rule"] for x in by[u3]["evidence"]] == ["patch-id"]


def test_a_pick_that_cannot_be_predicted_names_whole_missing_blobs_and_how_many_more(tmp_path, capsys, monkeypatch):
    """A blobless clone of a merge-based fork (Intel's shape): upstream's next commit changes five
    files deep in the tree (as #11358 changes `python/triton_kernels/tests/test_matmul.py` and
    `python/triton_kernels/triton_kernels/matmul_details/…`), none of whose blobs the clone has,
    so `plan` cannot predict its pick and says which objects are missing. The list was cut at
    300 characters in the middle of an entry — "blob 15b8153d085e… (python" — which reads as
    a folder named `python`. Every entry it names must be whole (a blob of the commit, at its
    real path), and the ones left out counted."""
    paths = [f"python/triton_kernels/triton_kernels/matmul_details/opt_flags_details/part_{i}.py" for i in range(5)]
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {p: f"head\n{p} v0\nmiddle\n\n\ntail\n" for p in paths}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[XPU] backend work (#500)", {paths[0]: f"head\n{paths[0]} v0\nmiddle\n\n\nxpu tail\n"},
                when=T0 + DAY // 2)
    u1 = up.commit("[KERNELS] Fix tile selection (#11)", {p: f"head\n{p} v1\nmiddle\n\n\ntail\n" for p in paths},
                   when=T0 + DAY)
    fork.add_remote("upstream", up.path)
    fork.git("branch", "upstream-main", "upstream/main")
    part = blobless_clone(fork.path / ".git", tmp_path / "blobless.git")
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, ["--fork", str(part.path), "--upstream-ref", "upstream-main", "plan", "--json"])
    assert rc == 0, err
    [unit] = json.loads(out)["units"]
    [item] = unit["items"]
    assert item["sha"] == u1
    import re
    named = re.findall(r"blob ([0-9a-f]{40}) \(([^)]*)\)", item["reason"])
    repo = pygit2.Repository(str(fork.path))
    blobs = {str(repo.revparse_single(f"{rev}:{p}").id): p for rev in (u1, f"{u1}^") for p in paths}
    assert named and all(blobs.get(b) == p for b, p in named), item["reason"]
    more = re.search(r"(\d+) more\)", item["reason"])
    assert len(named) + (int(more.group(1)) if more else 0) == len(blobs), item["reason"]
    assert part.attempts() == []


def test_a_pick_unpredictable_for_missing_blobs_is_predicted_once_the_blobs_are_fetched(tmp_path, capsys, monkeypatch):
    """`plan` on a blobless clone cannot predict a pick whose merge reads blobs the clone lacks,
    and `status` tells the user to refetch them. Once they are fetched, the same `plan` (same
    cache folder, same fork and upstream tips) must predict the pick from the blobs, not repeat
    the stored "cannot be predicted (missing objects …)" of the earlier run: the missing blobs
    were part of the answer, and they are no longer missing."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"lib/a.cpp": "head\na v0\nmiddle\n\n\ntail\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[XPU] backend work (#500)", {"lib/a.cpp": "head\na v0\nmiddle\n\n\nxpu tail\n"}, when=T0 + DAY // 2)
    u1 = up.commit("[BACKEND] Fix a (#11)", {"lib/a.cpp": "head\na v1\nmiddle\n\n\ntail\n"}, when=T0 + DAY)
    fork.add_remote("upstream", up.path)
    fork.git("branch", "upstream-main", "upstream/main")
    part = blobless_clone(fork.path / ".git", tmp_path / "blobless.git")
    monkeypatch.chdir(tmp_path)
    argv = ["--fork", str(part.path), "--upstream-ref", "upstream-main", "plan", "--json"]
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    [unit] = json.loads(out)["units"]
    assert unit["items"][0]["reason"].startswith("pick cannot be predicted (missing objects: ")
    listing = run_git(fork.path, "rev-list", "--objects", "--all")
    for oid in {ln.split()[0] for ln in listing.splitlines()}:
        if run_git(fork.path, "cat-file", "-t", oid).strip() == "blob":
            data = subprocess.run(["git", "cat-file", "blob", oid], cwd=str(fork.path), capture_output=True,
                                  check=True).stdout
            subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=str(part.path), input=data, check=True,
                           capture_output=True)
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    [unit] = json.loads(out)["units"]
    assert (unit["kind"], unit["items"][0]["sha"]) == ("bundle", u1), unit["items"][0]["reason"]
    assert unit["items"][0]["reason"] == "predicted clean pick onto the fork tip + 0 earlier bundle picks"
    assert part.attempts() == []


def test_status_in_a_forks_clone_without_upstream_ref_names_the_upstream_remotes_branch(tmp_path, capsys, monkeypatch):
    """The first command a newcomer runs: `forksync status` inside their clone of a merge-based
    fork (intel/intel-xpu-backend-for-triton), where `git remote add upstream …` and `git fetch
    upstream` put upstream's branch at `upstream/main`. No config, so both sides default to the
    fork's own `main`: nothing to ingest, and the warning says to name upstream's ref. It must
    name the one this clone has — `--upstream-ref upstream/main` — and that ref must then give the
    real range, not leave the newcomer to guess the spelling of a remote-tracking branch."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[XPU] backend work (#500)", {"xpu.txt": "x\n"}, when=T0 + DAY // 2)
    u1 = up.commit("One (#11)", {"a.txt": "a1\n"}, when=T0 + DAY)
    fork.add_remote("upstream", up.path)
    fork.merge(u1, when=T0 + DAY + 3600, message="Merge OpenAI Triton commit `u1` (#501)")
    up.commit("Two (#12)", {"b.txt": "b\n"}, when=T0 + 2 * DAY)
    fork.git("fetch", "-q", "upstream")
    monkeypatch.chdir(fork.path)
    rc, out, err = run(capsys, ["status", "--json"])
    assert rc == 0, err
    assert json.loads(out)["commits_in_range"] == 0
    assert "resolve to the same commit" in err and "`--upstream-ref upstream/main`" in err, err
    rc, out, err = run(capsys, ["--upstream-ref", "upstream/main", "status", "--json"])
    doc = json.loads(out)
    assert (rc, doc["commits_in_range"], doc["merge_based"], doc["frontier"]["sha"]) == (0, 1, True, u1)


def test_a_fork_branch_behind_the_remote_branch_it_tracks_is_warned(tmp_path, capsys, monkeypatch):
    """A newcomer's clone of a merge-based fork, refreshed with `git fetch` (as every sync
    script does) but never pulled: `origin/main` has the fork's newest upstream merge, the local
    `main` that `fork.ref: main` names does not. Every figure is of the stale local branch (here
    Days Behind 2.00 where the fork, at `origin/main`, is 0.00 behind) and nothing said so. The
    figures stay those of the ref named, and a warning says that it is behind the branch it tracks,
    by how many commits, and the two ways to measure the fork as pushed."""
    clone, u1, u2 = _stale_clone(tmp_path)
    monkeypatch.chdir(tmp_path)
    argv = ["--fork", str(clone.path), "--fork-ref", "main", "--upstream-ref", "upstream/main", "status", "--json"]
    rc, out, err = run(capsys, argv)
    doc = json.loads(out)
    assert (rc, doc["frontier"]["sha"], doc["days_behind"]) == (0, u1, 2.0)
    assert "main is 2 commit(s) behind origin/main, the branch it tracks" in err, err
    assert f"`git -C {clone.path} merge --ff-only origin/main`" in err and "--fork-ref origin/main" in err
    rc, out, err = run(capsys, [*argv[:3], "origin/main", *argv[4:]])
    doc = json.loads(out)
    assert (rc, doc["frontier"]["sha"], doc["days_behind"]) == (0, u2, 0.0) and "behind origin/main" not in err


def test_the_refetch_advice_names_the_promisor_remote_of_a_separate_blobless_upstream_clone(
        tmp_path, capsys, monkeypatch):
    """A newcomer keeps upstream in its own clone, made with `git clone --filter=blob:none` of
    triton-lang/triton to save space, and passes it with `--upstream` beside a complete clone of
    the fork. Upstream's pending u2 and u3 (new files only upstream has) cannot be checked by
    patch-id, and the warning must name the refetch that gets their blobs: that of the upstream
    clone's `origin`. The fork and upstream are then read through a combined repository of both
    object stores (cache_dir/combined-….git), which has no remote at all, so the advice read
    "no promisor remote can fetch them here … use a complete clone" of a clone that can."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n", "b.txt": "b\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[XPU] backend work (#500)", {"xpu.txt": "x\n"}, when=T0 + DAY // 2)
    u1 = up.commit("One (#11)", {"a.txt": "a1\n"}, when=T0 + DAY)
    fork.add_remote("upstream", up.path)
    fork.merge(u1, when=T0 + DAY + 3600, message="Merge OpenAI Triton commit `u1` (#501)")
    u2 = up.commit("Two (#12)", {"c.txt": "c only upstream\n"}, when=T0 + 2 * DAY)
    u3 = up.commit("Three (#13)", {"d.txt": "d only upstream\n"}, when=T0 + 3 * DAY)
    run_git(up.path, "config", "uploadpack.allowFilter", "true")
    run_git(up.path, "config", "uploadpack.allowAnySHA1InWant", "true")
    part = tmp_path / "triton"
    run_git(tmp_path, "clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{up.path}", str(part))
    monkeypatch.chdir(tmp_path)
    argv = ["--fork", str(fork.path), "--fork-ref", "main", "--upstream", str(part), "--upstream-ref", "origin/main",
            "status", "--json"]
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    assert sorted(json.loads(out)["pending_unchecked"]) == sorted([u2, u3])
    warning = err[err.index("not checked by patch-id"):].split("\n")[0]
    commands = _backticked_git(warning)
    assert commands, warning
    for c in commands:
        run_git(tmp_path, *c[1:])
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    assert json.loads(out)["pending_unchecked"] == [] and "not checked by patch-id" not in err, err


def _copy_blobs(src, dest) -> None:
    """Write every blob of ``src`` into ``dest`` (what the advised refetch brings a partial clone)."""
    listing = run_git(src, "rev-list", "--objects", "--all")
    for oid in {ln.split()[0] for ln in listing.splitlines()}:
        if run_git(src, "cat-file", "-t", oid).strip() == "blob":
            data = subprocess.run(["git", "cat-file", "blob", oid], cwd=str(src), capture_output=True, check=True).stdout
            subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=str(dest), input=data, check=True,
                           capture_output=True)


def test_a_replan_after_the_blobs_are_fetched_detects_renames_as_a_plan_from_scratch_does(tmp_path, capsys, monkeypatch):
    """Upstream moves `lib/a.cpp` to `lib/core/a.cpp` and edits its head; the fork changed its tail.
    In a blobless clone libgit2's rename detection cannot read the blobs and, without an error,
    pairs nothing: `plan` predicts a modify/delete conflict in `lib/a.cpp` and stores it under the
    whole running tree's key. Once the blobs are fetched (the refetch status advises), a plan with
    a fresh cache detects the rename and predicts a clean pick. The same plan with the first run's
    cache must say the same — a plan's answer may not depend on what an earlier run's repository
    lacked, the reason unknown answers are no longer stored — yet it serves the stored conflict."""
    body = "".join(f"line {i}\n" for i in range(20))
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"lib/a.cpp": "head\n" + body + "tail\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[XPU] backend work (#500)", {"lib/a.cpp": "head\n" + body + "xpu tail\n"}, when=T0 + DAY // 2)
    u1 = up.commit("[BACKEND] Move a (#11)", {"lib/a.cpp": None, "lib/core/a.cpp": "new head\n" + body + "tail\n"},
                   when=T0 + DAY)
    fork.add_remote("upstream", up.path)
    fork.git("branch", "upstream-main", "upstream/main")
    part = blobless_clone(fork.path / ".git", tmp_path / "blobless.git")
    (tmp_path / "again").mkdir()
    (tmp_path / "fresh").mkdir()
    argv = ["--fork", str(part.path), "--upstream-ref", "upstream-main", "plan", "--json"]
    monkeypatch.chdir(tmp_path / "again")
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    [unit] = json.loads(out)["units"]
    assert (unit["kind"], unit["items"][0]["sha"], unit["items"][0]["conflicts"]) == ("chain", u1, ["lib/a.cpp"])
    _copy_blobs(fork.path, part.path)
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    again = json.loads(out)["units"]
    monkeypatch.chdir(tmp_path / "fresh")
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    fresh = json.loads(out)["units"]
    assert [(u["kind"], u["items"][0]["reason"]) for u in fresh] == [
        ("bundle", "predicted clean pick onto the fork tip + 0 earlier bundle picks")], fresh
    assert again == fresh


def _stale_clone(tmp_path):
    """Upstream, the fork (one upstream merge since a clone was made) and that clone, fetched
    (origin and upstream) but never pulled: its `main` is 2 commits behind `origin/main`."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[XPU] backend work (#500)", {"xpu.txt": "x\n"}, when=T0 + DAY // 2)
    u1 = up.commit("One (#11)", {"a.txt": "a1\n"}, when=T0 + DAY)
    fork.add_remote("upstream", up.path)
    fork.merge(u1, when=T0 + DAY + 3600, message="Merge OpenAI Triton commit `u1` (#501)")
    clone = fork.clone(tmp_path / "clone")
    clone.add_remote("upstream", up.path)
    u2 = up.commit("Two (#12)", {"b.txt": "b\n"}, when=T0 + 3 * DAY)
    fork.git("fetch", "-q", "upstream")
    fork.merge(u2, when=T0 + 3 * DAY + 3600, message="Merge OpenAI Triton commit `u2` (#502)")
    clone.git("fetch", "-q", "origin")
    clone.git("fetch", "-q", "upstream")
    return clone, u1, u2


def test_the_fast_forward_a_stale_branch_in_a_linked_worktree_is_told_to_run_brings_it_up_to_date(
        tmp_path, capsys, monkeypatch):
    """The newcomer works in a linked worktree (`git worktree add ../work main`, the clone's own
    checkout on another branch) and passes it as --fork. Its `main` is behind `origin/main`, and
    the warning's fast-forward must work when run as printed. It named `git -C <clone>/.git/
    worktrees/work merge --ff-only origin/main`: the worktree's git directory, where git answers
    "this operation must be run in a work tree"."""
    clone, u1, u2 = _stale_clone(tmp_path)
    clone.git("checkout", "-q", "-b", "dev")
    work = tmp_path / "work"
    clone.git("worktree", "add", "-q", str(work), "main")
    monkeypatch.chdir(tmp_path)
    argv = ["--fork", str(work), "--fork-ref", "main", "--upstream-ref", "upstream/main", "status", "--json"]
    rc, out, err = run(capsys, argv)
    assert (rc, json.loads(out)["frontier"]["sha"]) == (0, u1), err
    warning = err[err.index("behind origin/main"):].split("\n")[0]
    [command] = [c for c in _backticked_git(warning) if "--ff-only" in c or "fetch" in c]
    run_git(tmp_path, *command[1:])
    rc, out, err = run(capsys, argv)
    assert (rc, json.loads(out)["frontier"]["sha"]) == (0, u2) and "behind origin/main" not in err, err


def test_a_replan_after_a_missing_gitattributes_blob_is_fetched_reads_its_merge_attribute(
        tmp_path, capsys, monkeypatch):
    """`lib/a.cpp merge=binary` in `.gitattributes`: git's cherry-pick of upstream's edit of
    `lib/a.cpp` onto the fork's own edit of it stops on a conflict. In a partial clone that has
    every blob but the `.gitattributes` one, libgit2 reads no attribute (without an error), so
    `plan` predicts a clean pick, and stores it under a key holding the `.gitattributes` blob's
    id. Once the blob is fetched, a plan with a fresh cache predicts the conflict; the same plan
    with the first run's cache must too, not serve the answer made without the attribute."""
    body = "".join(f"line {i}\n" for i in range(30))
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {".gitattributes": "lib/a.cpp merge=binary\n", "lib/a.cpp": "head\n" + body + "tail\n"},
              when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[XPU] backend work (#500)", {"lib/a.cpp": "xpu head\n" + body + "tail\n"}, when=T0 + DAY // 2)
    u1 = up.commit("[BACKEND] Fix a (#11)", {"lib/a.cpp": "head\n" + body + "new tail\n"}, when=T0 + DAY)
    fork.add_remote("upstream", up.path)
    fork.git("branch", "upstream-main", "upstream/main")
    attr = run_git(fork.path, "rev-parse", "main:.gitattributes").strip()
    part = blobless_clone(fork.path / ".git", tmp_path / "partial.git", missing=[attr])
    (tmp_path / "again").mkdir()
    (tmp_path / "fresh").mkdir()
    argv = ["--fork", str(part.path), "--upstream-ref", "upstream-main", "plan", "--json"]
    monkeypatch.chdir(tmp_path / "again")
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    _copy_blobs(fork.path, part.path)
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    again = json.loads(out)["units"]
    monkeypatch.chdir(tmp_path / "fresh")
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    fresh = json.loads(out)["units"]
    assert [(u["kind"], u["items"][0]["sha"], u["items"][0]["conflicts"]) for u in fresh] == [
        ("chain", u1, ["lib/a.cpp"])], fresh
    assert again == fresh


def test_the_fast_forward_of_a_stale_branch_checked_out_in_another_worktree_is_run_there(
        tmp_path, capsys, monkeypatch):
    """The clone's own checkout is on `dev` and is passed as --fork with --fork-ref main, while
    `main` is checked out in a linked worktree (`git worktree add ../work main`). git refuses
    `git fetch . origin/main:main` into a branch checked out in any work tree, so the warning must
    name the fast-forward in the work tree that has it checked out."""
    clone, u1, u2 = _stale_clone(tmp_path)
    clone.git("checkout", "-q", "-b", "dev")
    work = tmp_path / "work"
    clone.git("worktree", "add", "-q", str(work), "main")
    monkeypatch.chdir(tmp_path)
    argv = ["--fork", str(clone.path), "--fork-ref", "main", "--upstream-ref", "upstream/main", "status", "--json"]
    rc, out, err = run(capsys, argv)
    assert (rc, json.loads(out)["frontier"]["sha"]) == (0, u1), err
    warning = err[err.index("behind origin/main"):].split("\n")[0]
    [command] = [c for c in _backticked_git(warning) if "--ff-only" in c or "fetch" in c]
    run_git(tmp_path, *command[1:])
    rc, out, err = run(capsys, argv)
    assert (rc, json.loads(out)["frontier"]["sha"]) == (0, u2) and "behind origin/main" not in err, err


def test_a_bare_promisor_key_makes_its_remote_named_in_the_refetch_advice(tmp_path, capsys, monkeypatch):
    """`[remote "origin"] promisor` with no value is true to git (a bare boolean key), and git
    fetches the clone's absent blobs from it. The refetch advice must name `origin` then as for
    `promisor = true`, not call the clone a snapshot nothing can fetch from."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[XPU] backend work (#500)", {"xpu.txt": "x\n"}, when=T0 + DAY // 2)
    u1 = up.commit("One (#11)", {"a.txt": "a1\n"}, when=T0 + DAY)
    fork.add_remote("upstream", up.path)
    fork.merge(u1, when=T0 + DAY + 3600, message="Merge OpenAI Triton commit `u1` (#501)")
    u2 = up.commit("Two (#12)", {"c.txt": "c only upstream\n"}, when=T0 + 2 * DAY)
    fork.git("fetch", "-q", "upstream")
    fork.git("branch", "upstream-main", "upstream/main")
    run_git(fork.path, "config", "uploadpack.allowFilter", "true")
    run_git(fork.path, "config", "uploadpack.allowAnySHA1InWant", "true")
    ci = tmp_path / "ci"
    run_git(tmp_path, "clone", "-q", "--no-checkout", "--filter=blob:none", "--no-single-branch",
            f"file://{fork.path}", str(ci))
    config = ci / ".git" / "config"
    config.write_text(config.read_text().replace("promisor = true", "promisor"))
    assert "\tpromisor\n" in config.read_text()
    monkeypatch.chdir(tmp_path)
    argv = ["--fork", str(ci), "--fork-ref", "main", "--upstream-ref", "origin/upstream-main", "status", "--json"]
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    assert json.loads(out)["pending_unchecked"] == [u2]
    commands = _backticked_git(err[err.index("not checked by patch-id"):].split("\n")[0])
    assert commands, err
    for c in commands:
        run_git(tmp_path, *c[1:])
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    assert json.loads(out)["pending_unchecked"] == [] and "not checked by patch-id" not in err, err


def test_status_without_upstream_ref_names_the_branch_of_a_remote_whose_name_has_a_slash(
        tmp_path, capsys, monkeypatch):
    """`git remote add triton-lang/triton <url>` is a valid remote name, and `git fetch` puts its
    branch at `triton-lang/triton/main`. When upstream and the fork resolve to the same commit
    (no --upstream-ref), the warning must name that ref as it names `upstream/main`."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[XPU] backend work (#500)", {"xpu.txt": "x\n"}, when=T0 + DAY // 2)
    u1 = up.commit("One (#11)", {"a.txt": "a1\n"}, when=T0 + DAY)
    fork.add_remote("triton-lang/triton", up.path)
    fork.merge(u1, when=T0 + DAY + 3600, message="Merge OpenAI Triton commit `u1` (#501)")
    up.commit("Two (#12)", {"b.txt": "b\n"}, when=T0 + 2 * DAY)
    fork.git("fetch", "-q", "triton-lang/triton")
    monkeypatch.chdir(fork.path)
    rc, out, err = run(capsys, ["status", "--json"])
    assert rc == 0, err
    assert "resolve to the same commit" in err and "`--upstream-ref triton-lang/triton/main`" in err, err
    rc, out, err = run(capsys, ["--upstream-ref", "triton-lang/triton/main", "status", "--json"])
    doc = json.loads(out)
    assert (rc, doc["commits_in_range"], doc["frontier"]["sha"]) == (0, 1, u1)


def test_a_fork_branch_that_tracks_upstreams_branch_is_not_told_to_measure_upstream_as_the_fork(
        tmp_path, capsys, monkeypatch):
    """A local branch made with `git checkout -b start upstream/main` tracks `upstream/main`; before
    any own commit it is an older upstream commit, and being behind `upstream/main` is the very
    lag status measures against `--upstream-ref upstream/main`, not a stale copy of the fork. The
    warning told them to name `--fork-ref upstream/main`, which measures upstream as the fork."""
    clone, u1, u2 = _stale_clone(tmp_path)
    clone.git("branch", "-q", "start", u1)
    clone.git("branch", "-q", "-u", "upstream/main", "start")
    monkeypatch.chdir(tmp_path)
    argv = ["--fork", str(clone.path), "--fork-ref", "start", "--upstream-ref", "upstream/main", "status", "--json"]
    rc, out, err = run(capsys, argv)
    assert (rc, json.loads(out)["commits_in_range"]) == (0, 1), err
    assert "--fork-ref upstream/main" not in err and "behind upstream/main" not in err, err



def _alpha_omega_blobless(tmp_path):
    """Upstream's u1 edits `alpha` in `lib/a.cpp` and the fork's divergent `third_party/xpu/` (a
    risky chain), u2 then `omega` in the same file; a blobless clone of the fork holding both, and
    a config naming it in `again/` and `fresh/`. Returns ``(fork, blobless clone, u1, u2)``."""
    pad = "".join(f"int pad{i}() {{ return {i}; }}\n" for i in range(12))
    src = "int alpha(int x) {\n  return x + 1;\n}\n" + pad + "int omega(int y) {\n  return y * 2;\n}\n"
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"lib/a.cpp": src, "third_party/xpu/x.txt": "x\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("[XPU] backend work (#500)", {"third_party/xpu/x.txt": "xpu\n"}, when=T0 + DAY // 2)
    src1 = src.replace("x + 1", "x + 2")
    u1 = up.commit("[XPU] Fix alpha (#11)", {"lib/a.cpp": src1, "third_party/xpu/y.txt": "y\n"}, when=T0 + DAY)
    u2 = up.commit("[BACKEND] Fix omega (#12)", {"lib/a.cpp": src1.replace("y * 2", "y * 3")}, when=T0 + 2 * DAY)
    fork.add_remote("upstream", up.path)
    fork.git("branch", "upstream-main", "upstream/main")
    part = blobless_clone(fork.path / ".git", tmp_path / "blobless.git")
    config = (f"upstream: {{url: '{part.path}', ref: upstream-main}}\nfork: {{url: '{part.path}', ref: main}}\n"
              "areas:\n  - {name: xpu, paths: [\"third_party/xpu/**\"], divergent: true}\n")
    for d in ("again", "fresh"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "forksync.yml").write_text(config)
    return fork, part, u1, u2


def test_a_replan_after_the_blobs_are_fetched_reads_the_symbols_a_plan_from_scratch_does(tmp_path, capsys, monkeypatch):
    """Upstream's u1 edits `alpha` in `lib/a.cpp` and the fork's divergent `third_party/xpu/`, so
    it is a risky chain; u2 then edits `omega` in the same file. With the blobs, u2 shares no
    symbol with the chain and is bundled. In a blobless clone neither text can be read: the
    chain's overlap check asks u2's and u1's symbols of `lib/a.cpp`, gets None (unknown: file
    level) and stores that None in `plan_symbols`, immutable per commit. Once the blobs are
    fetched, a plan with a fresh cache bundles u2; the same plan with the first run's cache must
    too, as it does for the merge answers a partial clone no longer stores — yet it serves the
    stored None and chains u2 "like" u1 at file level."""
    fork, part, u1, u2 = _alpha_omega_blobless(tmp_path)
    argv = ["--config", "forksync.yml", "plan", "--json"]
    monkeypatch.chdir(tmp_path / "again")
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    _copy_blobs(fork.path, part.path)
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    again = json.loads(out)["units"]
    monkeypatch.chdir(tmp_path / "fresh")
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    fresh = json.loads(out)["units"]
    assert [(u["kind"], [i["sha"] for i in u["items"]]) for u in fresh] == [("chain", [u1]), ("bundle", [u2])], fresh
    assert again == fresh


def test_a_replan_after_the_blobs_are_fetched_ignores_the_unknowns_an_earlier_release_stored(tmp_path, capsys, monkeypatch):
    """As above, but the blobless plan ran under the release before symbols read without their
    blobs were kept out of ``plan_symbols``: its stored None for u1's and u2's ``lib/a.cpp``
    (symbols version 7) stays in the cache, so every plan after the blobs are fetched chains u2
    at file level unless those rows are read as stale (:data:`bot.plan.store.SYMBOLS_VERSION` 8
    retires them)."""
    fork, part, u1, u2 = _alpha_omega_blobless(tmp_path)
    argv = ["--config", "forksync.yml", "plan", "--json"]
    monkeypatch.chdir(tmp_path / "again")
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    # what the earlier release stored for the texts it could not read, under its symbols version (7)
    from bot.store import Store
    [db] = [f for f in (tmp_path / "again").rglob("*") if f.suffix in (".sqlite", ".db")]
    store = Store(str(db))
    with store.lock:
        store.db["plan_symbols"].upsert_all([{"key": f"{sha}:lib/a.cpp", "version": 7, "symbols": None}
                                             for sha in (u1, u2)], pk="key")
    _copy_blobs(fork.path, part.path)
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    again = json.loads(out)["units"]
    monkeypatch.chdir(tmp_path / "fresh")
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    fresh = json.loads(out)["units"]
    assert [(u["kind"], [i["sha"] for i in u["items"]]) for u in fresh] == [("chain", [u1]), ("bundle", [u2])], fresh
    assert again == fresh
