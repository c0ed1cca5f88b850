"""What people really do to a chain PR stopped at a conflict, end to end on the local GitHub, and
how the chain lands: a squash of the branch, and — one cause, four faces — a sync that pushed
nothing recording the person's head as the tip forksync pushed (``sync_branches.pushed_tip``): a
conflict commit rewritten by hand then folded, a close that keeps nothing, forksync's own advice
after a rebase rejected, and a resolution whose ``synchronize`` came after a sync dropped unseen.

The rules these tests hold forksync to (docs/github.md, "Finishing a conflicted chain"): nothing
with a conflict marker lands; a person's commits are never overwritten except by the fold of a
resolution into forksync's *own* conflict commit (the one it pushed); sync PRs land one fork
commit per upstream commit, never squashed."""
from __future__ import annotations

import os
import subprocess

from bot.app import schedules
from bot.git.apply import COMMITTER
from tests.support.github import GIT_ENV, commit_files, git
from tests.support.sync_world import MIDDLE, bot_comments, fork_git, stop_chain, world  # noqa: F401 (the fixture)
from tests.support.validation_world import tick_ctx


async def upstream_moves(w, up_src, upstream, path: str, text: str, subject: str) -> str:
    """An unrelated upstream commit: forksync syncs (a bundle for it), touching nothing of the chain."""
    sha = commit_files(up_src, {path: text}, subject)
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    return sha


async def test_a_chain_branch_a_person_squashed_into_one_commit_is_not_merged(world, tmp_path):  # noqa: F811
    """alice resolves the chain's conflict; forksync folds it and goes on with the next pick, so
    the branch holds two picks (c2, c3). She then squashes the branch into one commit — git's
    squash message keeps both ``Upstream-Commit`` trailers — and force-pushes. forksync answers
    "verified: all 2 Upstream-Commit trailers kept", and once carol approves the gate merges it:
    the fork gets ONE commit for two upstream commits (no longer bisectable one by one), the very
    squash forksync refuses as a merge method. What she should see: the push refused as a
    resolution and the gate holding the PR, because each upstream commit needs its own commit."""
    w, up_src, upstream = world
    chain, branch, c2, c3 = await stop_chain(w, up_src, upstream, then_z=True)
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    commit_files(wt, {"third_party/amd/x.cpp": "int x = 12;\n" + MIDDLE + "int z;\n"},
                 "resolve x\n\nFile: third_party/amd/x.cpp\nReason: keeps the fork's tuning\n")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    picks = fork_git(w, "log", "--reverse", "--format=%H", f"main..{branch}").split()
    assert len(picks) == 2                                    # [RESOLVED] c2, then c3: folded and gone on
    # alice squashes the two picks into one commit, keeping both messages (git's squash message)
    git(wt, "fetch", "-q", "origin")
    git(wt, "reset", "-q", "--hard", f"origin/{branch}")
    msgs = "\n".join(fork_git(w, "log", "-1", "--format=%B", p) for p in picks)
    git(wt, "reset", "-q", "--soft", "origin/main")
    git(wt, "commit", "-q", "-m", msgs)
    squashed = git(wt, "rev-parse", "HEAD")
    git(wt, "push", "-q", "-f", "origin", f"HEAD:{branch}")
    await w.bot.settle()
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    # one fork commit per upstream commit: no commit on main claims two picks
    for sha in fork_git(w, "log", "--no-merges", "--format=%H", "main").split():
        named = [ln.split(":", 1)[1].strip() for ln in fork_git(w, "log", "-1", "--format=%B", sha).splitlines()
                 if ln.startswith("Upstream-Commit:")]
        assert len(named) <= 1, f"{sha[:12]} landed as one fork commit for upstream {named}"
    assert (await w.pr(chain["number"]))["merged"] is False
    comments = await bot_comments(w, chain["number"])
    assert not any(f"Resolution on `{squashed[:12]}` verified" in c for c in comments), comments


async def test_a_rewritten_conflict_commit_is_not_folded_once_a_sync_has_run(world, tmp_path):  # noqa: F811
    """As tests/e2e/test_chain_conflict.py's rewritten conflict commit (a commit with forksync's
    committer — a name anyone sets — and an unrelated change to ``python/a.py``), except that
    upstream moves before alice pushes her resolution on it, as it does every few minutes. The
    sync that follows pushes nothing to the chain yet records alice's head as the tip forksync
    pushed (``sync_branches.pushed_tip``), so her rewritten commit now passes for forksync's own
    conflict commit: her resolution is folded, her commit rewritten, and her unrelated change
    lands inside a ``[RESOLVED]`` pick under the upstream author. What she should see: nothing
    folded, as without the sync."""
    w, up_src, upstream = world
    chain, branch, c2, _ = await stop_chain(w, up_src, upstream)
    conflict = fork_git(w, "rev-parse", branch)
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    (wt / "python/a.py").write_text("a = 99  # not part of the resolution\n")
    env = {**os.environ, **GIT_ENV, "GIT_COMMITTER_NAME": COMMITTER[0], "GIT_COMMITTER_EMAIL": COMMITTER[1]}
    subprocess.run(["git", "commit", "-q", "-a", "--amend", "--no-edit"], cwd=wt, env=env, check=True)
    git(wt, "push", "-q", "-f", "origin", f"HEAD:{branch}")
    await w.bot.settle()
    assert any(f"the conflict commit `{conflict[:12]}` (upstream `{c2[:12]}`) is no longer on the branch" in c
               for c in await bot_comments(w, chain["number"]))
    await upstream_moves(w, up_src, upstream, "python/b.py", "b = 1\n", "Add b (#110)")
    mine = commit_files(wt, {"third_party/amd/x.cpp": "int x = 12;\n" + MIDDLE + "int z;\n"}, "resolve x")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    comments = await bot_comments(w, chain["number"])
    assert not any("checked and folded" in c for c in comments), comments
    assert fork_git(w, "rev-parse", branch) == mine                      # the person's commits stay as they are
    assert "a = 99" not in fork_git(w, "log", "-p", "--format=%H", f"main..{branch}", "--grep", "Upstream-Commit")


async def test_a_persons_commits_on_a_chain_closed_after_a_sync_are_kept(world, tmp_path):  # noqa: F811
    """alice pushes a first try at the resolution (a marker left: forksync says so and waits);
    upstream moves and forksync syncs; then carol closes the chain PR ("we'll redo it"). forksync
    deletes the branch — and since the sync recorded alice's head as the tip forksync pushed, it
    takes her commit for its own and keeps nothing under ``refs/forksync/closed/…``: her work is
    gone from the fork's branches and the closing comment names no place it is kept. What she
    should see: her head kept under ``refs/forksync/closed/<unit>/<sha12>``, as without the sync."""
    w, up_src, upstream = world
    chain, branch, c2, _ = await stop_chain(w, up_src, upstream)
    unit = branch.removeprefix("forksync/")
    marked = fork_git(w, "show", f"{branch}:third_party/amd/x.cpp")
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    half = commit_files(wt, {"third_party/amd/x.cpp": marked.replace("int x = 10;", "int x = 12;") + "\n"},
                        "resolve x, half way")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    assert any("conflict markers remain in `third_party/amd/x.cpp`" in c for c in await bot_comments(w, chain["number"]))
    await upstream_moves(w, up_src, upstream, "python/b.py", "b = 1\n", "Add b (#110)")
    await w.people["carol"].post(f"/repos/meta/triton/issues/{chain['number']}/comments",
                                 data={"body": "we'll redo this one"})
    await w.people["carol"].patch(f"/repos/meta/triton/pulls/{chain['number']}", data={"state": "closed"})
    await w.bot.settle()
    kept = f"refs/forksync/closed/{unit}/{half[:12]}"
    refs = fork_git(w, "for-each-ref", "--format=%(refname) %(objectname)", "refs/forksync/closed/")
    assert f"{kept} {half}" in refs.splitlines(), refs
    closing = [c for c in await bot_comments(w, chain["number"]) if f"forksync:closed:{chain['number']}" in c]
    assert closing and kept in closing[0], closing


async def test_following_forksyncs_advice_after_a_rebase_folds_the_resolution(world, tmp_path):  # noqa: F811
    """The bundle lands and main moves; alice rebases the stopped chain onto the new main and
    force-pushes (her rebase rewrites the conflict commit). forksync answers: "the conflict commit
    … is no longer on the branch; push the resolution as commits on top of it — it is kept as
    `refs/forksync/resolutions/…`". Upstream moves and forksync syncs. alice does exactly that:
    resets the branch to the kept conflict commit, commits her resolution on it, force-pushes.
    forksync rejects it — "Upstream-Commit trailers missing" — and never folds it: the sync took
    her rebased head for its own last push, so its own conflict commit is no longer "the one it
    pushed". The chain stays stopped although it holds a good resolution in the documented shape.
    What she should see: her resolution folded into the pick, as without the sync."""
    w, up_src, upstream = world
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    chain, branch, c2, _ = await stop_chain(w, up_src, upstream, bundles=1)
    unit = branch.removeprefix("forksync/")
    conflict = fork_git(w, "rev-parse", branch)
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")      # the bundle of c1 lands
    await w.bot.settle()
    assert f"Upstream-Commit: {c1}" in fork_git(w, "log", "--format=%B", "main")
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    git(wt, "rebase", "-q", "origin/main")
    git(wt, "push", "-q", "-f", "origin", f"HEAD:{branch}")
    await w.bot.settle()
    keep = f"refs/forksync/resolutions/{unit}/{conflict[:12]}"
    assert any("is no longer on the branch" in c and keep in c for c in await bot_comments(w, chain["number"]))
    await upstream_moves(w, up_src, upstream, "python/b.py", "b = 1\n", "Add b (#110)")
    # the advice, to the letter
    git(wt, "fetch", "-q", "origin", f"{keep}:{keep}")
    git(wt, "reset", "-q", "--hard", keep)
    good = commit_files(wt, {"third_party/amd/x.cpp": "int x = 12;\n" + MIDDLE + "int z;\n"}, "resolve x")
    git(wt, "push", "-q", "-f", "origin", f"HEAD:{branch}")
    await w.bot.settle()
    comments = await bot_comments(w, chain["number"])
    assert any("checked and folded" in c for c in comments), [c for c in comments if good[:12] in c]
    # main moved under the chain (the bundle landed), so the gate merges it into the branch once
    # the conflict is folded away (stale-base → update-branch): the pick is the last non-merge
    msg = fork_git(w, "log", "-1", "--no-merges", "--format=%B", branch)
    assert msg.startswith("[RESOLVED] AMD: new x (#102)\n") and f"Upstream-Commit: {c2}" in msg


async def test_a_resolution_a_sync_saw_before_its_synchronize_is_still_checked_and_folded(world, tmp_path):  # noqa: F811
    """alice pushes a good resolution onto the conflict commit. Before the worker handles her
    ``pull_request.synchronize``, a sync runs — upstream moved (the worker's poll loop syncs on
    its own schedule; GitHub does not order deliveries). That sync pushes nothing to the chain,
    yet records her head as the tip forksync pushed; her ``synchronize`` is then taken for
    forksync's own push ("own push") and dropped: no check, no fold, no comment. The chain sits
    stopped at its conflict with a good resolution on it and nothing says why. What she should
    see: her resolution checked and folded, as when no sync came first."""
    w, up_src, upstream = world
    chain, branch, c2, _ = await stop_chain(w, up_src, upstream)
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    w.fake.webhooks.auto_deliver = False
    commit_files(wt, {"third_party/amd/x.cpp": "int x = 12;\n" + MIDDLE + "int z;\n"}, "resolve x")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.fake.refresh()                               # GitHub's synchronize for her push, not handled yet
    commit_files(up_src, {"python/b.py": "b = 1\n"}, "Add b (#110)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.fake.refresh()                               # upstream's push
    w.fake.webhooks.auto_deliver = True
    await w.fake.webhooks.flush("reverse")               # the sync runs first
    await w.bot.settle()
    comments = await bot_comments(w, chain["number"])
    assert any("checked and folded" in c for c in comments), [c[:200] for c in comments]
    msg = fork_git(w, "log", "-1", "--format=%B", branch)
    assert msg.startswith("[RESOLVED] AMD: new x (#102)\n") and f"Upstream-Commit: {c2}" in msg
    assert w.bot.deliveries("dead") == []
