"""The fold of a person's resolution loses the race with their next push (the lease on the head it
checked fails): nothing on GitHub changes, and the push forksync wrote down before pushing
(``sync_pushes``) is ended once GitHub's branch (ls-remote) shows it never arrived — it is no
push of forksync's left for a later event to take for one it made."""
from __future__ import annotations

from bot.sync import store as sync_store
from bot.sync.errors import SyncError
from bot.sync.service import SyncService
from tests.support.github import commit_files, git
from tests.support.sync_world import bot_comments, fork_git, push_resolution, stop_chain, world  # noqa: F401 (the fixture)


async def test_a_fold_that_lost_the_race_leaves_no_push_of_forksyncs_behind(world, tmp_path, monkeypatch):  # noqa: F811
    w, up_src, upstream = world
    chain, branch, c2, _ = await stop_chain(w, up_src, upstream)
    wt, good = push_resolution(w, tmp_path, branch)
    real = SyncService._git
    raced = []

    async def git_racing(self, git_dir, *argv, **kw):
        if argv and argv[0] == "push" and any(a.startswith(f"--force-with-lease=refs/heads/{branch}:") for a in argv) \
                and not raced:
            # alice pushes again (not a resolution: it touches a file the conflict did not need)
            raced.append(commit_files(wt, {"python/a.py": "a = 7\n"}, "tweak a"))
            git(wt, "push", "-q", "origin", "HEAD")
        return await real(self, git_dir, *argv, **kw)

    monkeypatch.setattr(SyncService, "_git", git_racing)
    await w.bot.settle()
    assert raced and fork_git(w, "rev-parse", branch) == raced[0], "the fold was pushed over alice's newer push"
    said = await bot_comments(w, chain["number"])
    assert any(f"checked the resolution on `{good[:12]}` but could not update" in c for c in said), said
    assert sync_store.begun_push(w.bot.store, "meta/triton", branch) is None, \
        "the fold that never reached GitHub is still written down as forksync's push"
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert row["verified_tip"] != good and row["conflict_sha"] == c2, row


async def test_a_fold_push_whose_answer_was_lost_is_recorded_as_the_fold(world, tmp_path, monkeypatch):  # noqa: F811
    """git reports the fold's push failed, but GitHub has it (the answer was lost on the way back):
    ls-remote shows the branch at the fold, so it is recorded and said as the fold it is — not
    "could not update" over a branch that was updated."""
    w, up_src, upstream = world
    chain, branch, c2, _ = await stop_chain(w, up_src, upstream)
    wt, good = push_resolution(w, tmp_path, branch)
    real = SyncService._git
    lost = []

    async def answer_lost(self, git_dir, *argv, **kw):
        out = await real(self, git_dir, *argv, **kw)
        if argv and argv[0] == "push" and any(a.startswith(f"--force-with-lease=refs/heads/{branch}:") for a in argv) \
                and not lost:
            lost.append(True)
            raise SyncError("git push: the remote end hung up unexpectedly")
        return out

    monkeypatch.setattr(SyncService, "_git", answer_lost)
    await w.bot.settle()
    assert lost
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert (row["pushed_tip"], row["verified_tip"], row["conflict_sha"]) == (fork_git(w, "rev-parse", branch), good, ""), row
    assert sync_store.begun_push(w.bot.store, "meta/triton", branch) is None
    said = await bot_comments(w, chain["number"])
    assert len([c for c in said if "checked and folded" in c]) == 1, said
    assert not [c for c in said if "could not update" in c], said
