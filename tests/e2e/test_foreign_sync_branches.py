"""A PR whose branch is only *named* like a sync branch is not forksync's: forksync's own sync PR
has its head on the fork itself and was opened by the App or is on a branch forksync recorded.
A contributor's PR from a fork of the fork, or a person's branch on the fork, called
``forksync/chain-…`` or ``forksync/bundle-…``, is an ordinary PR: forksync never lands it as a
unit, closes nothing, deletes no branch, folds nothing into the real chain, and never merges it
by itself — the gate's summary says why."""
from __future__ import annotations

import subprocess

import pytest

from bot.github.client import token_client
from bot.sync import store as sync_store
from tests.support.e2e import adopt_and_move_upstream, open_sync_prs
from tests.support.github import FAST_RETRY, commit_files, git
from tests.support.validation_world import close_world, gate_failing, make_world


def notes_of(fork_path, sha: str) -> str:
    p = subprocess.run(["git", f"--git-dir={fork_path}", "notes", "--ref", "refs/notes/forksync", "show", sha],
                       capture_output=True, text=True)
    return p.stdout


async def test_a_contributors_pr_named_like_an_open_chain_touches_nothing_of_forksyncs(world, tmp_path):
    """eve, a writer, forks the fork and opens a PR from ``eve:forksync/chain-<c2>``, the
    name of forksync's open chain; she pushes to it and closes it. forksync's chain keeps its
    branch, its PR, its row and its upstream commit's disposition; eve's PR gets no reply."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, chain = await open_sync_prs(alice)
    branch = f"forksync/chain-{c2[:12]}"
    assert chain["head"]["ref"] == branch
    tip = git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[0]
    row = sync_store.branch_row(bot.store, "meta/triton", branch)

    mine = fake.create_repo("eve/triton", source=fork.path, fork_of=fork)
    fake.add_collaborator(fork, "eve", "write")
    fake.add_token("eve-token", "eve")
    eve = token_client(bot.session, "eve-token", base_url=fake.url, retry=FAST_RETRY)
    wt = tmp_path / "eve"
    git(tmp_path, "clone", "-q", str(mine.path), str(wt))
    git(wt, "checkout", "-q", "-b", branch, "origin/main")
    commit_files(wt, {"third_party/amd/x.cpp": "int x = 3;\n"}, "My take on x")
    git(wt, "push", "-q", "-f", "origin", f"{branch}:refs/heads/{branch}")       # her fork copied forksync's
    pr = await eve.post("/repos/meta/triton/pulls", data={"title": "x", "head": f"eve:{branch}", "base": "main"})
    await bot.settle()
    commit_files(wt, {"third_party/amd/x.cpp": "int x = 4;\n"}, "Another take")
    git(wt, "push", "-q", "origin", f"{branch}:refs/heads/{branch}")
    await bot.settle()
    await eve.patch(f"/repos/meta/triton/pulls/{pr['number']}", data={"state": "closed"})
    await bot.settle()

    assert bot.deliveries("dead") == []
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[0] == tip
    assert [p["number"] for p in await open_sync_prs(alice)] == [bundle["number"], chain["number"]]
    assert sync_store.branch_row(bot.store, "meta/triton", branch) == row
    assert notes_of(fork.path, c2) == ""
    replies = [c async for c in alice.getiter(f"/repos/meta/triton/issues/{pr['number']}/comments")]
    assert replies == []


@pytest.fixture
async def vworld(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path)
    yield w
    await close_world(w)


async def test_a_writers_own_branch_named_like_a_bundle_is_not_merged_by_itself(vworld):
    """alice pushes ``forksync/bundle-mine`` herself and opens its PR: green suites and nothing
    owned touched, which merges a sync PR, leave hers open, with the gate saying why."""
    w = vworld
    head = w.push_branch("forksync/bundle-mine", {"NOTES.md": "a note\n"}, "Add a note", forksync=False)
    pr = await w.open_pr("forksync/bundle-mine")
    await w.bot.settle()
    assert w.run_of(head, "forksync/L1/unit").conclusion == "success"
    assert (await w.pr(pr["number"]))["merged"] is False
    assert w.fake.requests_for("pulls/merge") == []
    gate = w.run_of(head, "forksync/gate")
    assert (gate.conclusion, gate_failing(w, head)) == ("success", [])
    assert ("Not forksync's sync PR, although its branch is named `forksync/bundle-mine`: opened by @alice on a "
            "branch forksync did not push") in gate.output["text"]
    await w.alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "/forksync merge"})
    await w.bot.settle()
    assert (await w.pr(pr["number"]))["merged"] is True


async def test_a_writers_second_pr_from_forksyncs_branch_into_another_base_closes_nothing_of_the_unit(world):
    """alice opens a second PR from forksync's open bundle branch into ``release`` (to look at
    the diff against it) and closes it: forksync's bundle keeps its branch, its PR and its
    upstream commits' dispositions — only the unit's own PR lands or closes the unit."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, chain = await open_sync_prs(alice)
    branch = bundle["head"]["ref"]
    tip = git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[0]
    row = sync_store.branch_row(bot.store, "meta/triton", branch)
    base = (await alice.getitem("/repos/meta/triton/branches/main"))["commit"]["sha"]
    await alice.post("/repos/meta/triton/git/refs", data={"ref": "refs/heads/release", "sha": base})
    pr = await alice.post("/repos/meta/triton/pulls", data={"title": "look", "head": branch, "base": "release"})
    await bot.settle()
    await alice.patch(f"/repos/meta/triton/pulls/{pr['number']}", data={"state": "closed"})
    await bot.settle()

    assert bot.deliveries("dead") == []
    assert notes_of(fork.path, c1) == ""
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[:1] == [tip]
    assert [p["number"] for p in await open_sync_prs(alice)] == [bundle["number"], chain["number"]]
    assert sync_store.branch_row(bot.store, "meta/triton", branch) == row


@pytest.mark.parametrize("branch, recorded, failing", [
    ("forksync/chain-mine", True, ["approval-missing"]),    # forksync's chain: a writer must approve it
    ("forksync/chain-mine", False, []),                     # alice's branch with the name: what its labels say
    ("feature/x", False, []),                               # an ordinary PR
])
async def test_the_gate_asks_once_per_evaluation_whether_the_pr_is_forksyncs(vworld, monkeypatch, branch, recorded,
                                                                           failing):
    """One evaluation asks :func:`bot.sync.prs.foreign_reason` once: the answer that makes a
    ``forksync/chain-…`` PR a chain (gather) is the one that lets it merge by itself and says on
    the gate why it does not (evaluate)."""
    from bot.sync import prs as sync_prs
    from tests.support.validation_world import tick_ctx

    w = vworld
    head = w.push_branch(branch, {"NOTES.md": "a note\n"}, "Add a note", forksync=recorded)
    pr = await w.open_pr(branch)
    await w.bot.settle()
    asked, real = [], sync_prs.foreign_reason
    monkeypatch.setattr(sync_prs, "foreign_reason", lambda *a, **kw: asked.append(a[2]["number"]) or real(*a, **kw))
    notes = await w.svc.evaluate(await tick_ctx(w), "meta/triton", pr["number"])
    assert asked == [pr["number"]]
    assert gate_failing(w, head) == failing
    foreign = [n for n in notes if "not forksync's sync PR" in n]
    assert foreign == ([f"#{pr['number']}: not forksync's sync PR (opened by @alice on a branch forksync did not push)"]
                       if branch.startswith("forksync/") and not recorded else [])
