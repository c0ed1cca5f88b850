"""A person's resolution of a chain conflict is folded, and the chain's next pick then fails
without a conflict (docs/github.md, "A pick that fails without a conflict"): the fold is kept and
pushed — a person's resolution is never lost — and the unit is blocked at step ``apply`` as a
sync's publish blocks it (row, status issue line), end to end on the local GitHub."""
from __future__ import annotations

import pygit2

from bot.git import apply as apply_mod
from bot.sync import store as sync_store
from tests.support.sync_world import bot_comments, fork_git, push_resolution, status_body, stop_chain, world  # noqa: F401 (the fixture)

TOKEN = "ghs_" + "FinishApplyCanary" * 3


async def alice_resolves(w, tmp_path, branch: str, c2: str) -> str:
    """alice clones the chain ``branch`` stopped at c2's conflict, resolves it, pushes, and the bot
    handles the push: the fold reached GitHub (the branch's one commit past main, the pick of
    ``c2``) and her commits are kept under refs/forksync/resolutions. Returns the fold's sha."""
    _, good = push_resolution(w, tmp_path, branch)
    await w.bot.settle()
    unit_id = branch.removeprefix("forksync/")
    assert fork_git(w, "rev-parse", f"refs/forksync/resolutions/{unit_id}/{good[:12]}") == good
    [pick] = fork_git(w, "log", "--no-merges", "--format=%H", f"main..{branch}").split()
    assert f"Upstream-Commit: {c2}" in fork_git(w, "log", "-1", "--format=%B", pick)
    return pick


async def test_a_fold_whose_next_pick_apply_refuses_is_pushed_and_the_unit_blocked(world, tmp_path, monkeypatch):  # noqa: F811
    """alice resolves c2; applying the rest of the chain (c3) raises (:class:`ApplyError`: here,
    upstream objects apply cannot fetch). What she saw: the error left the handler before the
    push — her resolution folded nowhere, nothing said, the unit not blocked, the delivery failed
    again on every retry. What she should see: the fold pushed (and her commits kept under
    refs/forksync/resolutions), the unit blocked at ``apply`` with apply's words (scrubbed) on
    its row and the status issue."""
    w, up_src, upstream = world
    chain, branch, c2, c3 = await stop_chain(w, up_src, upstream, then_z=True)
    unit_id = branch.removeprefix("forksync/")
    real = apply_mod.apply_unit

    def apply_unit(git_dir, unit, **kw):
        if unit.id == unit_id:
            raise apply_mod.ApplyError(f"could not fetch upstream commit {c3} from https://x:{TOKEN}@h/up.git")
        return real(git_dir, unit, **kw)

    monkeypatch.setattr(apply_mod, "apply_unit", apply_unit)
    pick = await alice_resolves(w, tmp_path, branch, c2)
    assert fork_git(w, "log", "-1", "--format=%B", pick).startswith("[RESOLVED] AMD: new x (#102)\n")
    [said] = [c for c in await bot_comments(w, chain["number"]) if "checked and folded" in c]
    assert f"pick of upstream `{c3[:12]}` failed without a conflict: applying {unit_id} failed" in said, said
    assert TOKEN not in said
    # the unit is blocked at apply with apply's words, on its row and the status issue
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert (row["blocked_step"], row["pushed_tip"]) == ("apply", pick), row
    assert f"applying {unit_id} failed: could not fetch upstream commit {c3}" in row["blocked_reason"]
    assert TOKEN not in row["blocked_reason"]
    body = await status_body(w)
    assert f"`{unit_id}` ([#{chain['number']}](" in body and "failed" in body and TOKEN not in body, body
    assert w.bot.deliveries("dead") == [] and w.bot.deliveries("failed") == []


async def test_a_fold_whose_next_pick_cannot_be_merged_is_pushed_and_the_unit_blocked(world, tmp_path, monkeypatch):  # noqa: F811
    """alice resolves c2; libgit2 cannot merge c3 (an object it needs is unreadable). What she
    should see: the fold pushed, the unit blocked at ``apply`` naming c3 and the cause, on its
    row and the status issue."""
    w, up_src, upstream = world
    chain, branch, c2, c3 = await stop_chain(w, up_src, upstream, then_z=True)
    real = apply_mod._Merger.merge

    def merge(self, commit, ours):
        if str(commit.id) == c3:
            raise pygit2.GitError("object not found - no match for id (0badc0de)")
        return real(self, commit, ours)

    monkeypatch.setattr(apply_mod._Merger, "merge", merge)
    pick = await alice_resolves(w, tmp_path, branch, c2)
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert (row["blocked_step"], row["conflict_sha"], row["pushed_tip"]) == ("apply", c3, pick), row
    assert f"cannot merge {c3[:12]}: object not found" in row["blocked_reason"]
    body = await status_body(w)
    assert f"its pick of upstream `{c3[:12]}` failed" in body, body
    assert w.bot.deliveries("dead") == [] and w.bot.deliveries("failed") == []
