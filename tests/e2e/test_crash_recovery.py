"""A worker that dies at a chosen point of a sync, then a restarted one on the same database and
workdir: nothing is lost, nothing is done twice, and what forksync pushed is still known as
forksync's (a person's resolution of a conflict it pushed is folded after the restart).

The death and the restart are :mod:`tests.support.crash`'s."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.app import queue as q
from bot.sync import store as sync_store
from tests.support.crash import Killed, dies_saving_branch, restart
from tests.support.github import commit_files, git
from tests.support.sync_world import MIDDLE, chain_world, fork_git, push_resolution
from tests.support.validation_world import tick_ctx


@pytest.fixture
async def world(fake_github, tmp_path):
    async with chain_world(fake_github, tmp_path) as w:
        yield w


async def test_killed_between_pushing_a_chain_and_recording_it_still_folds_the_resolution(world, tmp_path, monkeypatch):
    """The worker dies right after the push of a chain stopped at a conflict, before the branch's
    row records that tip as forksync's push. After the restart the chain has one PR, and a
    person's resolution on top of the conflict commit forksync pushed is checked and folded — not
    silently ignored as a branch whose conflict commit forksync never pushed."""
    w, up_src, upstream = world
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n"}, "AMD: new x (#102)")
    branch = f"forksync/chain-{c2[:12]}"
    killed = dies_saving_branch(monkeypatch, branch, "pushed_tip")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    with pytest.raises(Killed):
        await w.bot.settle()
    assert fork_git(w, "rev-parse", branch) == killed[0]          # pushed, not recorded, no PR
    assert [p async for p in w.alice.getiter("/repos/meta/triton/pulls?state=open")] == []

    assert await restart(w, tmp_path)
    await w.bot.settle()
    prs = [p async for p in w.alice.getiter("/repos/meta/triton/pulls?state=open")]
    assert [p["head"]["ref"] for p in prs] == [branch]            # one PR, not zero or two
    [chain] = prs
    assert chain["head"]["sha"] == killed[0]
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert row["pushed_tip"] == killed[0]                          # still known as forksync's own push

    push_resolution(w, tmp_path, branch)
    await w.bot.settle()
    comments = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{chain['number']}/comments")
                if c["user"]["login"] == "forksync[bot]"]
    assert len([c for c in comments if "checked and folded" in c]) == 1, comments
    assert "Forksync-Conflict" not in fork_git(w, "log", "--format=%B", f"main..{branch}")
    assert q.counts(w.bot.store)["dead"] == 0


@pytest.mark.parametrize("first", ["delivery", "poll"])
async def test_killed_between_pushing_a_fold_and_recording_it_reports_the_fold_once(world, tmp_path, monkeypatch, first):
    """The worker dies right after pushing the fold of a person's resolution, before the branch's
    row records it. After the restart, whichever comes first — the re-run of the person's push, or
    the poller's sync of the fork — finds the branch at the fold: forksync's push is recorded as
    such (the status issue no longer shows the chain stopped at its conflict) and the person is
    told once that their resolution was folded."""
    w, up_src, upstream = world
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n"}, "AMD: new x (#102)")
    branch = f"forksync/chain-{c2[:12]}"
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [chain] = [p async for p in w.alice.getiter("/repos/meta/triton/pulls?state=open")]
    killed = dies_saving_branch(monkeypatch, branch, "verified_tip")
    _, good = push_resolution(w, tmp_path, branch)
    with pytest.raises(Killed):
        await w.bot.settle()
    assert fork_git(w, "rev-parse", branch) == killed[0]          # the fold is on GitHub, not recorded

    assert await restart(w, tmp_path)
    if first == "poll":
        await w.bot.svc.sync(await tick_ctx(w), "meta/triton", reason="poll")
    await w.bot.settle()
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert (row["pushed_tip"], row["verified_tip"], row["conflict_sha"]) == (killed[0], good, "")
    comments = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{chain['number']}/comments")
                if c["user"]["login"] == "forksync[bot]"]
    assert len([c for c in comments if "checked and folded" in c]) == 1, comments
    assert not [c for c in comments if "is not complete" in c], comments      # the folded head is not checked again
    issue = [i async for i in w.alice.getiter("/repos/meta/triton/issues?state=open")
             if "<!-- forksync:status-issue -->" in (i.get("body") or "")][0]
    assert "stopped at a conflict" not in issue["body"]
    assert q.counts(w.bot.store)["dead"] == 0


async def test_a_restart_moments_after_a_fetch_was_killed_syncs_past_its_lock_files(world, tmp_path):
    """A worker killed mid-fetch leaves git's lock files in the fork's working repository (git
    never removes a lock its killed process held). The worker restarted a moment later syncs
    through them — under the fork lock no git of forksync's runs there, so every lock is a dead
    one's — instead of failing "File exists" on every attempt until the delivery is dead."""
    w, up_src, upstream = world
    work = tmp_path / "work" / "meta+triton.git"
    assert (work / "HEAD").exists()                     # the adoption's sync made it
    left = [work / "refs" / "remotes" / "upstream" / "main.lock", work / "packed-refs.lock"]
    for p in left:
        p.write_text("")                                # written by the killed git just now
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await restart(w, tmp_path)
    await w.bot.settle()
    prs = [p["head"]["ref"] async for p in w.alice.getiter("/repos/meta/triton/pulls?state=open")]
    assert prs == [f"forksync/bundle-{c1[:12]}"]
    assert q.counts(w.bot.store)["dead"] == 0
    assert not any(p.exists() for p in left)


async def test_killed_between_opening_a_pr_and_recording_it_keeps_one_pr(world, tmp_path, monkeypatch):
    """The worker dies right after GitHub opened a unit's PR, before the branch's row records its
    number. After the restart the unit still has one PR — found by its branch, not opened again —
    and the row names it. (This held before the crash tests were written.)"""
    w, up_src, upstream = world
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    branch = f"forksync/bundle-{c1[:12]}"
    killed = dies_saving_branch(monkeypatch, branch, "pr", keep="pr")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    with pytest.raises(Killed):
        await w.bot.settle()
    assert await restart(w, tmp_path)
    await w.bot.settle()
    prs = [(p["number"], p["head"]["ref"]) async for p in w.alice.getiter("/repos/meta/triton/pulls?state=all")]
    assert prs == [(killed[0], branch)]
    assert sync_store.branch_row(w.bot.store, "meta/triton", branch)["pr"] == killed[0]
    assert q.counts(w.bot.store)["dead"] == 0


async def test_killed_right_after_a_merge_lands_it_at_the_restart_and_the_status_issue_agrees(world, tmp_path,
                                                                                             monkeypatch):
    """``forksync serve`` (web and worker) dies right after GitHub merged a bundle's PR: the
    ``pull_request.closed`` GitHub sends meanwhile finds nobody, and GitHub does not send it again.
    Upstream does not move. Today nothing lands the unit until upstream's next push: the status
    issue lists the merged PR as open, the numbers count its commits as pending. Expected: the
    worker's first poll pass after the start catches up (a sync of each fork holding open units,
    which lands the PRs GitHub shows closed): the row says merged, the status issue lists no open
    unit, the fork holds the pick once."""
    from bot.app import schedules
    from bot.sync.upstream import poll_once
    from bot.validation import service as validation_service

    w, up_src, upstream = world
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    branch = f"forksync/bundle-{c1[:12]}"
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [pr] = [p async for p in w.alice.getiter("/repos/meta/triton/pulls?state=open")]
    merge_pr = validation_service.merge_pr

    async def dies_after_the_merge(*a, **kw):
        await merge_pr(*a, **kw)
        raise Killed()

    monkeypatch.setattr(validation_service, "merge_pr", dies_after_the_merge)
    w.fake.webhooks.url = None                  # serve is down: what GitHub sends now reaches nobody
    with pytest.raises(Killed):
        await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert (await w.pr(pr["number"]))["merged"] is True
    monkeypatch.setattr(validation_service, "merge_pr", merge_pr)
    await restart(w, tmp_path)
    await w.bot.settle()
    assert [d.statuses for d in w.fake.webhooks.of("pull_request", "closed")] == [[]]     # lost
    notes = await poll_once(w.bot.store, w.bot.svc, lambda inst: tick_ctx(w), catch_up=True)
    assert sync_store.branch_row(w.bot.store, "meta/triton", branch)["state"] == "merged", notes
    issue = [i async for i in w.alice.getiter("/repos/meta/triton/issues?state=open")
             if "<!-- forksync:status-issue -->" in (i.get("body") or "")][0]
    units = issue["body"].split("## Open bundles and chains", 1)[1].strip().split("\n")[0]
    assert units == "None.", issue["body"]
    trailers = fork_git(w, "log", "--format=%(trailers:key=Upstream-Commit,valueonly)", "main").split()
    assert trailers.count(c1) == 1
    assert q.counts(w.bot.store)["dead"] == 0


async def test_a_restart_after_a_worker_killed_between_a_packs_two_renames_removes_what_it_left(world, tmp_path):
    """A worker killed (SIGKILL: no cleanup runs) while it wrote a pack leaves a ``tmp_pack_…``
    file, or a pack renamed into place without its index (killed between the two renames), in the
    working repository or in its planner's scratch repository. git never reads either and nothing
    removes them before ``git gc``. The restarted worker removes them, under the fork lock (no
    writer of forksync's is in either repository then), and only those older than its start: a
    ``tmp_pack_…`` written since is another live writer's and is kept."""
    import hashlib
    import os
    import time

    from bot.config.objects import write_pack

    w, up_src, upstream = world
    work = tmp_path / "work" / "meta+triton.git"
    [scratch] = (tmp_path / "work" / "cache").glob("predict-*.git")       # the adoption's plan made it
    made = write_pack(tmp_path / "made", {hashlib.sha1(b"blob 1\0x").hexdigest(): (3, b"x")})
    pack_bytes = Path(made).read_bytes()
    past = time.time() - 60
    left = []
    for repo in (work, scratch):
        packs = repo / "objects" / "pack"
        packs.mkdir(parents=True, exist_ok=True)
        for name, data in ((Path(made).name, pack_bytes), ("tmp_pack_k1ll3d", Path(made).with_suffix(".idx").read_bytes()[:100])):
            (packs / name).write_bytes(data)
            os.utime(packs / name, (past, past))
            left.append(packs / name)
    whole_before = sorted(p.name for p in (work / "objects" / "pack").glob("pack-*.idx"))
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await restart(w, tmp_path)
    live = work / "objects" / "pack" / "tmp_pack_l1v3"
    live.write_bytes(b"PACK")                           # another worker's write, begun after this one started
    future = time.time() + 3600
    os.utime(live, (future, future))
    await w.bot.settle()
    prs = [p["head"]["ref"] async for p in w.alice.getiter("/repos/meta/triton/pulls?state=open")]
    assert prs == [f"forksync/bundle-{c1[:12]}"]
    assert [p for p in left if p.exists()] == []
    assert live.exists()
    # every pack left is whole (has its index), and those there before still are
    packs = work / "objects" / "pack"
    assert sorted(p.stem for p in packs.glob("pack-*.pack")) == sorted(p.stem for p in packs.glob("pack-*.idx"))
    assert set(whole_before) <= {p.name for p in packs.glob("pack-*.idx")}
    assert "error" not in fork_git(w, "fsck", "--connectivity-only", "--no-progress").lower()


@pytest.mark.parametrize("damaged", ["ref", "object"])
async def test_a_ref_or_object_a_power_loss_emptied_in_the_working_repository_is_fetched_again(world, tmp_path,
                                                                                                damaged):
    """A power loss empties a file that git or libgit2 wrote in the working repository without an
    fsync (a loose ref moved by apply or a fetch, a loose object a fetch unpacked): every fetch
    then fails (``fatal: bad object refs/heads/main``; ``object file … is empty``) and each
    delivery ends dead until a person removes the repository. The working repository is a copy
    of what GitHub holds: the restarted worker finds the damage under the fork lock, removes the
    damaged refs (fetched again) or, for a damaged object, the whole repository (cloned again),
    syncs, and says so on the status issue."""
    w, up_src, upstream = world
    work = tmp_path / "work" / "meta+triton.git"
    if damaged == "ref":
        hit = "refs/heads/main"
    else:
        tip = fork_git(w, "rev-parse", "main")
        tip_here = subprocess.run(["git", f"--git-dir={work}", "rev-parse", "refs/heads/main"], capture_output=True,
                                  text=True, check=True).stdout.strip()
        assert tip_here == tip
        hit = f"objects/{tip[:2]}/{tip[2:]}"
        assert (work / hit).is_file()               # the adoption's fetch left it loose
        (work / hit).chmod(0o644)
    (work / hit).write_bytes(b"")
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await restart(w, tmp_path)
    await w.bot.settle()
    prs = [p["head"]["ref"] async for p in w.alice.getiter("/repos/meta/triton/pulls?state=open")]
    assert prs == [f"forksync/bundle-{c1[:12]}"]
    assert q.counts(w.bot.store)["dead"] == 0
    check = subprocess.run(["git", f"--git-dir={work}", "fsck", "--no-progress"], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    issue = [i async for i in w.alice.getiter("/repos/meta/triton/issues?state=open")
             if "<!-- forksync:status-issue -->" in (i.get("body") or "")][0]
    assert "working repository was repaired" in issue["body"], issue["body"]
    assert hit in issue["body"], issue["body"]
