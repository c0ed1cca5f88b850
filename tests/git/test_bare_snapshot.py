"""A bare snapshot without a ``config`` file (``HEAD``, ``objects/``, ``refs/``, ``packed-refs``: the
shape of a mirror copied without its config). git reads it as bare; libgit2 reads a missing
``core.bare`` as "not bare" and takes the parent folder for its work tree, so its merges read that
folder's ``.gitattributes``: every forksync reading of such a repository must see it as git does."""
from __future__ import annotations

import subprocess

import pygit2
import pytest

from bot.agents.conflict_git import conflict_case
from bot.demo.repobuilder import RepoBuilder
from bot.git import repo as gitio
from bot.git.apply import checked_out_in

T0 = 1_750_000_000
LINES = "".join(f"{i}\n" for i in range(1, 9))


@pytest.fixture
def snapshot(tmp_path):
    """``tmp/snap/repo``: a bare mirror whose config was not copied, with ``main`` (the fork: line
    1 changed) and ``up`` (upstream: line 8 changed) from one base — a pick git merges cleanly —
    and a ``.gitattributes`` in the parent folder that would make every file unmergeable."""
    b = RepoBuilder.init(tmp_path / "src")
    b.commit("base", {"f": LINES}, when=T0)
    b.git("branch", "base")
    b.commit("ours", {"f": LINES.replace("1\n", "1x\n", 1)}, when=T0 + 1)
    b.git("checkout", "-q", "-b", "up", "base")
    b.commit("up", {"f": LINES.replace("8\n", "8y\n")}, when=T0 + 2)
    dest = tmp_path / "snap" / "repo"
    subprocess.run(["git", "clone", "-q", "--mirror", str(tmp_path / "src"), str(dest)], check=True)
    (dest / "config").unlink()
    (tmp_path / "snap" / ".gitattributes").write_text("* -merge\n")
    assert subprocess.run(["git", "-C", str(dest), "rev-parse", "--is-bare-repository"], capture_output=True,
                          text=True).stdout.strip() == "true"
    return dest


def test_a_pick_into_a_bare_snapshot_merges_as_git_does(snapshot):
    # `git merge-tree` in the snapshot: clean (the parent folder is no work tree of it)
    assert conflict_case(str(snapshot), "main", "up") is None


def test_one_repository_for_fork_and_upstream_is_opened_bare(snapshot, tmp_path):
    repo, git_dir = gitio.open_pair(str(snapshot), str(snapshot), tmp_path / "cache")
    assert (repo.is_bare, repo.workdir) == (True, None)
    up = repo.revparse_single("up").peel(pygit2.Commit)
    assert not repo.merge_trees(up.parents[0].tree, repo.revparse_single("main").peel(pygit2.Commit).tree, up.tree).conflicts


def test_a_bare_snapshot_has_no_branch_checked_out(snapshot):
    # HEAD names a branch (the source's `up`), but no work tree has it: apply and resolve may move it
    head = (snapshot / "HEAD").read_text().removeprefix("ref: ").strip()
    assert head == "refs/heads/up"
    assert checked_out_in(snapshot, head) is None


def test_a_checkout_keeps_its_work_tree(tmp_path):
    b = RepoBuilder.init(tmp_path / "co")
    b.commit("base", {"f": LINES}, when=T0)
    head = b.git("symbolic-ref", "HEAD").strip()
    assert checked_out_in(tmp_path / "co" / ".git", head) == str(tmp_path / "co")
    assert gitio.repo_dir(gitio.open_pair(str(tmp_path / "co" / ".git"), str(tmp_path / "co" / ".git"),
                                          tmp_path / "cache")[0]) == str(tmp_path / "co")


def test_a_commit_reads_the_same_from_any_folder(snapshot, tmp_path, monkeypatch):
    """`git --git-dir=<repository> log -p` takes the folder it runs in for the work tree and reads
    its `.gitattributes`: run from a project whose attributes mark files `-diff` (a lock file, an
    image), every pick's files had no hunks and another patch-id ("Binary files differ")."""
    repo = pygit2.Repository(str(snapshot), pygit2.enums.RepositoryOpenFlag.BARE)
    sha = str(repo.revparse_single("up").id)
    want = gitio.commit_infos(repo, [sha])[sha]
    elsewhere = tmp_path / "project"
    elsewhere.mkdir()
    (elsewhere / ".gitattributes").write_text("* -diff\n")
    monkeypatch.chdir(elsewhere)
    got = gitio.commit_infos(repo, [sha])[sha]
    assert (got.patch_id, got.files) == (want.patch_id, want.files)
    assert [f.edits for f in got.files] == [((8, 1, 8, 1),)]


def test_a_patch_git_shows_reads_the_same_from_any_folder(snapshot, tmp_path, monkeypatch):
    """:func:`bot.git.repo.git` (nightly triage's `git show --patch` of a suspect) likewise."""
    want = gitio.git(snapshot, "show", "--format=", "--patch", "up")
    elsewhere = tmp_path / "project"
    elsewhere.mkdir()
    (elsewhere / ".gitattributes").write_text("* -diff\n")
    monkeypatch.chdir(elsewhere)
    assert gitio.git(snapshot, "show", "--format=", "--patch", "up") == want
    assert "+8y" in want
