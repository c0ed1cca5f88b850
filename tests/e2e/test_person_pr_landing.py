"""Landing a PR a person opened on a unit's branch (the unit's PR from then on, docs/github.md
"sync PR title and body"), end to end on the local GitHub with the real bot: merged or closed,
their title, words and commits are theirs — never overwritten, never closed by forksync, their
commits in the fork's history or kept on the fork before the branch goes."""
from __future__ import annotations

import json
import subprocess

import pytest

from bot.sync import store as sync_store
from tests.e2e.test_other_base import unit_without_its_pr
from tests.support.e2e import adopt_and_move_upstream, job_context, open_sync_prs, status_issue
from tests.support.github import commit_files, git

TITLE = "Port the AMD rework (carol's, reviewed by the AMD team)"
BODY = "I opened this one myself: the AMD team reviews it on Thursday."


def _ancestor(git_dir, sha: str, of: str) -> bool:
    return subprocess.run(["git", f"--git-dir={git_dir}", "merge-base", "--is-ancestor", sha, of]).returncode == 0


def _notes(git_dir, sha: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", "notes", "--ref", "refs/notes/forksync", "show", sha],
                          capture_output=True, text=True).stdout


async def _persons_pr_with_a_commit(world, tmp_path):
    """alice's PR from the chain's branch into main (forksync's own was refused), and a commit of
    hers pushed on the branch; synced since. Returns ``(pr, row, her commit, the unit's shas)``."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    shas, row = await unit_without_its_pr(fake, bot, alice, up_src, upstream, fork, inst, kind="chain")
    branch = row["branch"]
    pr = await alice.post("/repos/meta/triton/pulls", data={"title": TITLE, "body": BODY, "head": branch, "base": "main"})
    await bot.settle()
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(fork.path), str(wt))
    mine = commit_files(wt, {"python/amd_glue.py": "glue = 1\n"}, "AMD glue the port needs (alice)")
    git(wt, "push", "-q", "origin", "HEAD")
    await bot.settle()
    await bot.svc.sync(await job_context(bot)(inst.id), "meta/triton", reason="test: again")
    await bot.settle()
    got = sync_store.branch_row(bot.store, "meta/triton", branch)
    assert (got["pr"], got["state"]) == (pr["number"], "open")
    now = await alice.getitem(f"/repos/meta/triton/pulls/{pr['number']}")
    assert (now["state"], now["title"], now["head"]["sha"]) == ("open", TITLE, mine)
    assert now["body"].startswith(BODY)
    return now, got, mine, shas


async def _said_by_bot(gh, number: int) -> list[str]:
    return [c["body"] async for c in gh.getiter(f"/repos/meta/triton/issues/{number}/comments")
            if c["user"]["login"] == "forksync[bot]"]


@pytest.mark.parametrize("method", ["merge", "rebase"])
async def test_a_persons_pr_merged_lands_the_unit_with_their_commits_and_words(world, tmp_path, method):
    """alice merges her PR. The unit lands (its commits PICKED, no new PR for them), her commit is
    on main as hers, the branch is retired, and nothing of her PR is rewritten by the landing."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    pr, row, mine, shas = await _persons_pr_with_a_commit(world, tmp_path)
    before = await _said_by_bot(alice, pr["number"])
    await alice.put(f"/repos/meta/triton/pulls/{pr['number']}/merge", data={"merge_method": method})
    await bot.settle()
    assert bot.deliveries("dead") == []
    after = await alice.getitem(f"/repos/meta/triton/pulls/{pr['number']}")
    assert (after["merged"], after["title"], after["body"], after["user"]["login"]) == \
        (True, TITLE, pr["body"], "alice")
    assert sync_store.branch_row(bot.store, "meta/triton", row["branch"])["state"] == "merged"
    main = git(up_src, "ls-remote", str(fork.path), "refs/heads/main").split()[0]
    subjects = git(up_src, "--git-dir", str(fork.path), "log", "--format=%s", main).splitlines()
    assert "AMD glue the port needs (alice)" in subjects
    if method == "merge":
        assert _ancestor(fork.path, mine, main)
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{row['branch']}") == ""
    # the unit's commits landed: no PR asks for them again
    assert not [p for p in await open_sync_prs(alice) if set(shas) & set(json.loads(
        sync_store.branch_row(bot.store, "meta/triton", p["head"]["ref"])["shas_json"]))]
    assert [_notes(fork.path, s) for s in shas] == ["" for _ in shas]
    # the landing said nothing on her PR (a merge needs no explanation)
    assert await _said_by_bot(alice, pr["number"]) == before
    [issue] = await status_issue(alice)
    assert f"#{pr['number']}" not in issue["body"]


async def test_a_persons_pr_closed_keeps_their_commits_and_words(world, tmp_path):
    """alice closes her PR, saying to defer it. Her PR stays as she left it (title, words, closed
    by her), her commit is kept on the fork under refs/forksync/closed/… before the branch goes
    (the comment names it), and the unit's commits are deferred with her reason — no new PR."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    pr, row, mine, shas = await _persons_pr_with_a_commit(world, tmp_path)
    await alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments",
                     data={"body": "defer: the AMD team wants the next ROCm first"})
    await alice.patch(f"/repos/meta/triton/pulls/{pr['number']}", data={"state": "closed"})
    await bot.settle()
    assert bot.deliveries("dead") == []
    after = await alice.getitem(f"/repos/meta/triton/pulls/{pr['number']}")
    assert (after["state"], after["merged"], after["title"], after["body"]) == ("closed", False, TITLE, pr["body"])
    kept = f"refs/forksync/closed/{row['unit_id']}/{mine[:12]}"
    assert git(up_src, "ls-remote", str(fork.path), kept).split()[:1] == [mine]
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{row['branch']}") == ""
    [said] = [b for b in await _said_by_bot(alice, pr["number"]) if kept in b]
    assert "DEFERRED" in said or "defer" in said.lower()
    assert all("the AMD team wants the next ROCm first" in _notes(fork.path, s) for s in shas)
    assert [p for p in await open_sync_prs(alice) if p["head"]["ref"] == row["branch"]] == []


async def test_a_pr_closed_because_its_commits_were_decided_is_never_left_without_its_reason(world):
    """Every upstream commit of a chain is deferred while its PR is open: forksync closes the PR and
    says why. GitHub fails the comment (a 502 past the client's retries) after the close went
    through. What the person saw: their PR closed by forksync with no word on it, for ever — the
    row already said ``decided``, so no later sync looked at it again. What they should see: the
    PR never closed without its reason — the sync fails (retried), and the next one says why and
    closes it."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, chain = await open_sync_prs(alice)
    [issue] = await status_issue(alice)
    fake.faults.add("POST", f"/repos/meta/triton/issues/{chain['number']}/comments", 502, "Bad Gateway",
                            times=10_000)
    await alice.post(f"/repos/meta/triton/issues/{issue['number']}/comments",
                     data={"body": f"/forksync defer {c2[:12]} waits for the LLVM bump"})
    await bot.settle()
    pr = await alice.getitem(f"/repos/meta/triton/pulls/{chain['number']}")
    # while GitHub fails the comment the PR may stay open; closed, it must say why
    assert pr["state"] == "open" or await _said_by_bot(alice, chain["number"]), "closed without a word"
    fake.faults.clear()
    await bot.svc.sync(await job_context(bot)(inst.id), "meta/triton", reason="test: later")
    await bot.settle()
    [said] = await _said_by_bot(alice, chain["number"])
    assert f"`{c2[:12]}`" in said and "waits for the LLVM bump" in said
    assert (await alice.getitem(f"/repos/meta/triton/pulls/{chain['number']}"))["state"] == "closed"
