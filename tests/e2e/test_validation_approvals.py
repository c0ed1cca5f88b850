"""An owner's approval counts only for the content it approved: a person's merge commit on a sync
branch keeps it only when the merge adds nothing of its own (git's clean automatic merge of its
parents, what ``Update branch`` makes); content written into the merge itself voids it."""
import pytest

from tests.support.github import commit_files, git
from tests.support.validation_world import CONFIG, approved_and_held, close_world, fork_files, gate_failing, make_world


@pytest.fixture
async def world(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path)
    yield w
    await close_world(w)


def merge_main(w, *, extra: dict[str, str] | None = None) -> str:
    """A person merges the fork's moved main into the sync branch and pushes; ``extra`` files are
    written into the merge commit itself (an edit made while committing the merge)."""
    w.push_main({"elsewhere.txt": "landed meanwhile\n"}, "Another unit landed")
    git(w.work, "checkout", "-q", "forksync/bundle-amd")
    git(w.work, "merge", "-q", "--no-ff", "--no-commit", "origin/main")
    if extra:
        commit_files(w.work, extra, "Merge main into the sync branch")
    else:
        git(w.work, "commit", "-q", "-m", "Merge main into the sync branch")
    merge = git(w.work, "rev-parse", "HEAD")
    git(w.work, "push", "-q", "origin", "forksync/bundle-amd:refs/heads/forksync/bundle-amd")
    return merge


async def unhold_and_ask(w, pr: dict, issue: int) -> None:
    """Lift the hold and ask the gate to check now (``/forksync merge``)."""
    await w.alice.post(f"/repos/meta/triton/issues/{issue}/comments", data={"body": "/forksync unhold"})
    await w.bot.settle()
    await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync merge"})
    await w.bot.settle()


async def test_a_merge_commit_with_content_of_its_own_voids_the_approval(world):
    w = world
    pr, _head, issue = await approved_and_held(w)
    merge = merge_main(w, extra={"amd/kernel.txt": "v3, never reviewed\n"})
    mc = await w.alice.getitem(f"/repos/meta/triton/commits/{merge}")
    assert len(mc["parents"]) == 2
    await w.bot.settle()
    await unhold_and_ask(w, pr, issue)
    assert (await w.pr(pr["number"]))["merged"] is False
    assert gate_failing(w, merge) == ["approval-missing"]


async def test_a_clean_merge_of_main_keeps_the_approval(world):
    """The same merge without an edit of its own is what ``Update branch`` makes: the owner's
    approval of the unit still holds (main's content is already on the base)."""
    w = world
    pr, _head, issue = await approved_and_held(w)
    merge = merge_main(w)
    await w.bot.settle()
    await unhold_and_ask(w, pr, issue)
    assert (await w.pr(pr["number"]))["merged"] is True
    assert w.run_of(merge, "forksync/gate").conclusion == "success"


async def test_a_commit_past_the_250_github_lists_voids_the_approval(world):
    """GitHub's ``pulls/list-commits`` lists at most 250 commits of a pull request (the rest are
    only in git); a commit pushed past them changes the unit like any other, so the owner's
    approval of the shorter branch no longer counts."""
    w = world
    issue = await w.alice.post("/repos/meta/triton/issues", data={"title": "ops", "body": "x"})
    await w.alice.post(f"/repos/meta/triton/issues/{issue['number']}/comments", data={"body": "/forksync hold"})
    await w.bot.settle()
    git(w.work, "fetch", "-q", "origin")
    git(w.work, "checkout", "-q", "-B", "forksync/bundle-amd", "origin/main")
    commit_files(w.work, {"amd/kernel.txt": "v2\n"}, "Touch amd")
    for i in range(254):
        git(w.work, "commit", "-q", "--allow-empty", "-m", f"Step {i}")
    git(w.work, "push", "-q", "-f", "origin", "forksync/bundle-amd:refs/heads/forksync/bundle-amd")
    pr = await w.open_pr("forksync/bundle-amd")
    await w.bot.settle()
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    head = commit_files(w.work, {"amd/kernel.txt": "v3, never reviewed\n"}, "Past the list")
    git(w.work, "push", "-q", "origin", "forksync/bundle-amd:refs/heads/forksync/bundle-amd")
    listed = [c["sha"] async for c in w.alice.getiter(f"/repos/meta/triton/pulls/{pr['number']}/commits")]
    assert len(listed) == 250 and head not in listed
    await w.bot.settle()
    await unhold_and_ask(w, pr, issue["number"])
    assert (await w.pr(pr["number"]))["merged"] is False
    assert gate_failing(w, head) == ["approval-missing"]


async def test_an_approval_given_before_forksync_first_looked_does_not_cover_a_later_push(world):
    """The first time forksync reads a PR it has no earlier look to compare with. The owner
    approved the branch before that (the sync PR's own ``opened`` event is the bot's and is
    dropped; the reconcile tick, or suites still running, come later), and a commit made an hour
    ago was pushed after the approval: its committer date is older than the approval, yet the
    owner never saw it. Committer dates are the pusher's to set, so they cannot tell."""
    import os
    import subprocess
    import time

    from tests.support.github import GIT_ENV

    w = world
    w.fake.webhooks.auto_deliver = False       # nothing reaches forksync yet
    w.push_branch("forksync/bundle-amd", {"amd/kernel.txt": "v2\n"}, "Touch amd")
    pr = await w.open_pr("forksync/bundle-amd")
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
    (w.work / "amd" / "kernel.txt").write_text("v3, never reviewed\n")
    git(w.work, "add", "-A")
    hour_ago = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600))
    subprocess.run(["git", "commit", "-q", "-m", "Made earlier, pushed after the approval"], cwd=w.work, check=True,
                   capture_output=True,
                   env={**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": hour_ago, "GIT_AUTHOR_DATE": hour_ago})
    later = git(w.work, "rev-parse", "HEAD")
    git(w.work, "push", "-q", "origin", "forksync/bundle-amd:refs/heads/forksync/bundle-amd")
    await w.fake.refresh()
    w.fake.webhooks.auto_deliver = True
    await w.fake.webhooks.flush()
    await w.bot.settle()
    assert w.run_of(later, "forksync/L1/unit").conclusion == "success"
    assert (await w.pr(pr["number"]))["merged"] is False
    assert gate_failing(w, later) == ["approval-missing"]


async def test_a_signoff_delivered_after_a_push_it_never_saw_does_not_count(world):
    """GitHub does not deliver in order: the owner's ``/forksync signoff`` was written before a
    commit was pushed, and its delivery reaches forksync after the push's. The sign-off is dated
    when the owner wrote it, not when forksync read it, so it does not cover the new commit."""
    w = world
    w.push_branch("forksync/bundle-llvm", {"llvm/pin.txt": "llvm 21\n"}, "Bump the LLVM pin")
    pr = await w.open_pr("forksync/bundle-llvm")
    await w.bot.settle()
    w.fake.webhooks.auto_deliver = False
    await w.people["carol"].post(f"/repos/meta/triton/issues/{pr['number']}/comments",
                                 data={"body": "/forksync signoff llvm"})
    later = w.push_branch("forksync/bundle-llvm", {"llvm/pin.txt": "llvm 22, never signed off\n"}, "Bump again",
                          base="forksync/bundle-llvm")
    await w.fake.refresh()
    w.fake.webhooks.auto_deliver = True
    await w.fake.webhooks.flush(order="reverse")        # the push's events first, then the comment
    await w.bot.settle()
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert w.run_of(later, "forksync/L1/unit").conclusion == "success"
    assert (await w.pr(pr["number"]))["merged"] is False
    assert gate_failing(w, later) == ["l3-signoff-missing"]


async def test_a_chain_whose_label_was_removed_still_needs_a_writers_approval(world):
    """A chain (a resolved conflict, an agent's pick) merges only with a writer's approval. Its
    ``forksync:chain`` label is not what makes it one: anyone with triage access can remove a label
    (and the removal itself makes forksync evaluate the gate), while the sync branch's name says
    what forksync built."""
    w = world
    head = w.push_branch("forksync/chain-0123456789ab", {"docs/guide.md": "resolved by hand\n"}, "[RESOLVED] Pick")
    pr = await w.open_pr("forksync/chain-0123456789ab")
    await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/labels", data={"labels": ["forksync:chain"]})
    await w.bot.settle()
    assert gate_failing(w, head) == ["approval-missing"]
    await w.alice.delete(f"/repos/meta/triton/issues/{pr['number']}/labels/forksync:chain")
    await w.bot.settle()
    assert (await w.pr(pr["number"]))["merged"] is False
    assert gate_failing(w, head) == ["approval-missing"]


async def test_a_file_past_the_3000_github_lists_still_brings_its_areas_owner(world):
    """GitHub's ``pulls/list-files`` lists at most 3000 files of a pull request; a unit touching
    an owned area in a file past them still needs that area's owner (the files are read from git)."""
    w = world
    bulk = {f"aaa/f{i:04}.txt": f"{i}\n" for i in range(3000)}
    head = w.push_branch("forksync/bundle-wide", {**bulk, "amd/kernel.txt": "v2, past the list\n"}, "A wide unit")
    pr = await w.open_pr("forksync/bundle-wide")
    listed = [f["filename"] async for f in w.alice.getiter(f"/repos/meta/triton/pulls/{pr['number']}/files")]
    assert len(listed) == 3000 and "amd/kernel.txt" not in listed
    await w.bot.settle()
    assert (await w.pr(pr["number"]))["merged"] is False
    assert gate_failing(w, head) == ["approval-missing"]


async def test_an_owner_written_in_another_case_approves_and_signs_off(fake_github, tmp_path):
    """forksync.yml names the owner ``Carol``; GitHub gives her reviews and comments as ``carol``,
    the account's own spelling, and takes either for the same account. Her approval covers both
    areas she owns and her ``/forksync signoff`` of the one that requires L3 is hers to give, so
    the gate merges."""
    config = CONFIG.replace("owners: [carol]", "owners: [Carol]")
    assert config.count("owners: [Carol]") == 2
    w = await make_world(fake_github, tmp_path, files=fork_files(config=config))
    try:
        head = w.push_branch("forksync/bundle-llvm", {"llvm/pin.txt": "llvm 21\n", "amd/kernel.txt": "v2\n"},
                             "Bump the LLVM pin, touch amd")
        pr = await w.open_pr("forksync/bundle-llvm")
        await w.bot.settle()
        assert gate_failing(w, head) == ["approval-missing", "approval-missing", "l3-signoff-missing"]
        await w.comment(pr["number"], "/forksync signoff llvm", who="carol")
        replies = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{pr['number']}/comments")]
        assert any(f"sign-off of `llvm` recorded on `{head[:12]}`" in r for r in replies), replies
        await w.people["carol"].post(f"/repos/meta/triton/pulls/{pr['number']}/reviews", data={"event": "APPROVE"})
        await w.bot.settle()
        assert (await w.pr(pr["number"]))["merged"] is True
        assert w.run_of(head, "forksync/gate").conclusion == "success"
    finally:
        await close_world(w)
