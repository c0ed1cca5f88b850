"""``forksync resolve --continue`` on a blob-less partial clone whose worktree leaves README.md out
(its blob absent; chain u2 neither conflicts in it nor changes it) under git's skip-worktree bit:
what the person did to that path in the index is what the resolution holds, as with ``git
commit``. A deletion stays a deletion, refused as on a full clone (a resolution changes only the
conflicted files) with the command that takes it back; an entry moved or copied to another path
carries a blob the repository lacks and is refused, named, before anything is written; a path
whose file is merely absent (the bit cleared) is no deletion and the fold keeps it; an entry
staged with `update-index --cacheinfo` and no file written counts as staged. Nothing is fetched
and nothing the person did is undone."""
from __future__ import annotations

import re
import subprocess
from types import SimpleNamespace

import pygit2
import pytest

from bot.cli.main import main
from bot.demo.repobuilder import run_git
from tests.support.partial_clone import blobless_clone
from tests.support.plan_repos import build_pair

FIX = "  return r + 1 + 0 /* fork */;\n"


def blob_of(repo_path, rev: str, path: str) -> str:
    """The blob id at ``path`` in ``rev``'s tree (the tree read, never the blob)."""
    return str(pygit2.Repository(str(repo_path)).revparse_single(rev).peel(pygit2.Tree)[path].id)


def person_git(wt, *argv: str) -> None:
    """A person's own git in the worktree: plain git, lazy fetches allowed (the clone records them)."""
    subprocess.run(["git", *argv], cwd=str(wt), check=True, capture_output=True)


def status(wt) -> list[str]:
    return run_git(wt, "status", "--porcelain", "--untracked-files=no").splitlines()


@pytest.fixture
def left_out(tmp_path, monkeypatch, capsys):
    """Chain u2 at its conflict, its worktree made without README.md and its conflict resolved."""
    pair = build_pair(tmp_path / "repos")
    monkeypatch.chdir(tmp_path)
    readme = blob_of(pair.fork.path, "main", "README.md")
    part = blobless_clone(pair.fork.path, tmp_path / "part.git", missing=[readme])
    g = ["--upstream", str(part.path), "--upstream-ref", "upstream/main", "--fork", str(part.path)]
    chain = f"chain-{pair.u['u2'][:12]}"
    wt = tmp_path / ".forksync-resolve" / chain
    assert main([*g, "apply", chain]) == 1
    assert main([*g, "resolve", chain]) == 0
    assert not (wt / "README.md").exists()
    ops = wt / "lib/Dialect/Ops.cpp"
    ops.write_text(re.sub(r"<<<<<<< fork\n.*?>>>>>>> [^\n]*\n", FIX, ops.read_text(), flags=re.S))
    capsys.readouterr()
    return SimpleNamespace(part=part, g=g, chain=chain, wt=wt, readme=readme,
                           tip=run_git(part.path, "rev-parse", f"forksync/{chain}").strip())


def branch(s) -> str:
    return run_git(s.part.path, "rev-parse", f"forksync/{s.chain}").strip()


def folded_keeps_readme(s, capsys) -> None:
    """--continue folds the resolution (then stops at u4's conflict) with README.md's blob kept."""
    assert main([*s.g, "resolve", s.chain, "--continue"]) == 1
    out, err = capsys.readouterr()
    assert "stopped again at a conflict" in out and "Traceback" not in out + err, out + err
    assert run_git(s.part.path, "log", "-1", "--format=%s", f"forksync/{s.chain}~1").strip() \
        == "[RESOLVED] [dialect] fold mul overflow (#102)"
    assert blob_of(s.part.path, f"forksync/{s.chain}~1", "README.md") == s.readme
    assert FIX in run_git(s.part.path, "show", f"forksync/{s.chain}~1:lib/Dialect/Ops.cpp")


@pytest.mark.parametrize("steps", [
    [("rm", "-q", "--sparse", "README.md")],
    [("rm", "-q", "--cached", "--sparse", "README.md")],
    [("update-index", "--no-skip-worktree", "README.md"), ("add", "-A")],
], ids=["rm", "rm-cached", "no-skip-worktree-then-add-all"])
def test_a_left_out_file_deleted_in_the_index_stays_deleted_and_is_refused_with_the_way_back(left_out, capsys, steps):
    """The deletion is the person's, staged: the resolution holds it (the fold does not put the
    blob back), and the rule every resolution meets refuses it, naming README.md and the command
    that takes it back; the branch does not move and the index keeps the deletion. Taken back,
    the same --continue folds with README.md as the conflict commit has it."""
    s = left_out
    for argv in steps:
        person_git(s.wt, *argv)
    assert "D  README.md" in status(s.wt)
    assert main([*s.g, "resolve", s.chain, "--continue"]) == 1
    out, err = capsys.readouterr()
    assert err == ("forksync: the resolution is not complete; nothing was changed:\n"
                   "  - the resolution changes files the conflict did not need: `README.md` — put other changes in a "
                   "PR of their own\n"
                   "  - deleted in the index, though left out of the worktree (the repository lacks their blobs): "
                   f"`README.md`; `git -C {s.wt} reset -q -- README.md` takes the deletion back\n"), err
    assert branch(s) == s.tip and "D  README.md" in status(s.wt)
    person_git(s.wt, "reset", "-q", "--", "README.md")
    folded_keeps_readme(s, capsys)
    assert s.part.attempts() == []


def test_a_left_out_file_moved_in_the_index_is_refused_and_named_before_anything_is_written(left_out, capsys):
    """`git mv --sparse README.md DOC.md` stages DOC.md with README.md's blob, which the
    repository lacks: forksync can neither check nor fold it, so it refuses at once (not with
    advice to fetch the blob), naming both paths and the way back; the index keeps the move."""
    s = left_out
    person_git(s.wt, "mv", "--sparse", "README.md", "DOC.md")
    assert "R  README.md -> DOC.md" in status(s.wt)
    assert main([*s.g, "resolve", s.chain, "--continue"]) == 1
    out, err = capsys.readouterr()
    assert err == ("forksync: the resolution is not complete; nothing was changed:\n"
                   "  - staged with blobs the repository lacks (a file left out of the worktree, moved or copied "
                   "there): `DOC.md` — the resolution may change only the conflicted files, and forksync can read "
                   f"none of these; `git -C {s.wt} reset -q -- DOC.md` unstages them\n"
                   "  - deleted in the index, though left out of the worktree (the repository lacks their blobs): "
                   f"`README.md`; `git -C {s.wt} reset -q -- README.md` takes the deletion back\n"), err
    assert branch(s) == s.tip and "R  README.md -> DOC.md" in status(s.wt)
    person_git(s.wt, "reset", "-q", "--", "DOC.md", "README.md")
    folded_keeps_readme(s, capsys)
    assert "DOC.md" not in run_git(s.part.path, "ls-tree", "--name-only", f"forksync/{s.chain}~1")
    assert s.part.attempts() == []


def test_a_left_out_file_merely_absent_is_no_deletion_and_the_fold_keeps_it(left_out, capsys):
    """With the skip-worktree bit cleared, `git status` shows README.md deleted in the worktree,
    but nothing was staged and no file was ever written there: the fold keeps it."""
    s = left_out
    person_git(s.wt, "update-index", "--no-skip-worktree", "README.md")
    assert " D README.md" in status(s.wt)
    folded_keeps_readme(s, capsys)
    assert s.part.attempts() == []


def test_an_edit_of_a_left_out_file_is_refused_and_kept(left_out, capsys):
    """The bit cleared and README.md written (not staged): the edit cannot be folded (the
    resolution may change only the conflicted files), so it is refused, named, and kept."""
    s = left_out
    person_git(s.wt, "update-index", "--no-skip-worktree", "README.md")
    (s.wt / "README.md").write_text("the person's own words\n")
    assert main([*s.g, "resolve", s.chain, "--continue"]) == 1
    out, err = capsys.readouterr()
    assert err.startswith("forksync: the resolution is not complete; nothing was changed:\n") and "`README.md`" in err
    assert branch(s) == s.tip and (s.wt / "README.md").read_text() == "the person's own words\n"
    assert s.part.attempts() == []


def test_a_file_written_where_a_folder_of_left_out_files_was_is_refused_not_dropped(tmp_path, monkeypatch, capsys):
    """test/ops.mlir is left out (its blob absent); the person puts a file ``test`` where the
    folder ``test/`` was. `git add -A` would stage ``test`` in place of test/ops.mlir, and putting
    the left-out entry back dropped the person's file from the fold unsaid: it is refused, named,
    and kept, and the branch does not move."""
    pair = build_pair(tmp_path / "repos")
    monkeypatch.chdir(tmp_path)
    mlir = blob_of(pair.fork.path, "main", "test/ops.mlir")
    part = blobless_clone(pair.fork.path, tmp_path / "part.git", missing=[mlir])
    g = ["--upstream", str(part.path), "--upstream-ref", "upstream/main", "--fork", str(part.path)]
    chain = f"chain-{pair.u['u2'][:12]}"
    wt = tmp_path / ".forksync-resolve" / chain
    assert main([*g, "apply", chain]) == 1
    assert main([*g, "resolve", chain]) == 0
    assert not (wt / "test/ops.mlir").exists()
    ops = wt / "lib/Dialect/Ops.cpp"
    ops.write_text(re.sub(r"<<<<<<< fork\n.*?>>>>>>> [^\n]*\n", FIX, ops.read_text(), flags=re.S))
    if (wt / "test").exists():
        (wt / "test").rmdir()
    (wt / "test").write_text("the person's file\n")
    tip = run_git(part.path, "rev-parse", f"forksync/{chain}").strip()
    capsys.readouterr()
    assert main([*g, "resolve", chain, "--continue"]) == 1
    out, err = capsys.readouterr()
    assert err == ("forksync: the resolution is not complete; nothing was changed:\n"
                   "  - files left out of the worktree (the repository lacks their blobs) were written or staged: "
                   f"`test` — the resolution may change only the conflicted files; remove them from {wt} "
                   "(`git update-index --skip-worktree` keeps git's bit) or put other changes in a PR of their own\n"), err
    assert run_git(part.path, "rev-parse", f"forksync/{chain}").strip() == tip
    assert (wt / "test").read_text() == "the person's file\n"


def stage_blob(wt, path: str, text: str) -> str:
    """Stage ``text`` at ``path`` as a person does in a sparse worktree: the blob written with
    `git hash-object -w`, the entry with `git update-index --cacheinfo` (no file written, no
    skip-worktree bit); returns the blob id."""
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=str(wt), check=True, capture_output=True,
                          text=True, input=text).stdout.strip()
    person_git(wt, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    return blob


def test_a_resolution_staged_with_cacheinfo_and_no_file_is_what_the_fold_holds(left_out, capsys):
    """The person resolves Ops.cpp in the index only (`update-index --cacheinfo`) and takes the
    marked file out of the worktree: git would commit the staged blob, and so does the fold; it
    is neither read as a deletion of the conflicted file nor lost."""
    s = left_out
    resolved = (s.wt / "lib/Dialect/Ops.cpp").read_text()
    person_git(s.wt, "checkout", "--", "lib/Dialect/Ops.cpp")
    blob = stage_blob(s.wt, "lib/Dialect/Ops.cpp", resolved)
    (s.wt / "lib/Dialect/Ops.cpp").unlink()
    folded_keeps_readme(s, capsys)
    assert blob_of(s.part.path, f"forksync/{s.chain}~1", "lib/Dialect/Ops.cpp") == blob
    assert s.part.attempts() == []


def test_a_resolution_staged_with_cacheinfo_beside_the_untouched_marked_file_is_what_the_fold_holds(left_out, capsys):
    """The marked file stays in the worktree as the conflict commit has it and the resolution is
    staged with `update-index --cacheinfo`: the staged blob is the person's resolution, where `git
    add -A` put the markers back over it in the index."""
    s = left_out
    resolved = (s.wt / "lib/Dialect/Ops.cpp").read_text()
    person_git(s.wt, "checkout", "--", "lib/Dialect/Ops.cpp")
    assert "<<<<<<< fork" in (s.wt / "lib/Dialect/Ops.cpp").read_text()
    blob = stage_blob(s.wt, "lib/Dialect/Ops.cpp", resolved)
    folded_keeps_readme(s, capsys)
    assert blob_of(s.part.path, f"forksync/{s.chain}~1", "lib/Dialect/Ops.cpp") == blob


def test_a_new_path_staged_with_cacheinfo_is_refused_and_named_not_dropped(left_out, capsys):
    """A path the conflict did not touch, staged with `update-index --cacheinfo` and no file: it
    counts as the person's change, so the rule every resolution meets refuses it by name, and the
    index keeps it; unstaged, the same --continue folds."""
    s = left_out
    blob = stage_blob(s.wt, "docs/NOTES.md", "the person's notes\n")
    assert main([*s.g, "resolve", s.chain, "--continue"]) == 1
    out, err = capsys.readouterr()
    assert err == ("forksync: the resolution is not complete; nothing was changed:\n"
                   "  - the resolution changes files the conflict did not need: `docs/NOTES.md` — put other changes "
                   "in a PR of their own\n"), err
    assert branch(s) == s.tip
    assert run_git(s.wt, "ls-files", "-s", "docs/NOTES.md").split()[1] == blob
    person_git(s.wt, "rm", "-q", "--cached", "docs/NOTES.md")
    folded_keeps_readme(s, capsys)
