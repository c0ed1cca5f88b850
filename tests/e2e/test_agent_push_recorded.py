"""The conflict agent's pick, once pushed, is forksync's own on the chain's row whatever GitHub
answers next: a failure after the push must not leave the agent's commit on the branch looking
like a person's."""
from __future__ import annotations

from contextlib import asynccontextmanager

import pytest

from bot.app import queue as q
from bot.fakeanthropic import FakeAnthropic, Reply
from bot.sync import store as sync_store
from tests.support.crash import Killed, restart
from tests.support.github import commit_files, git
from tests.support.sync_world import CONFIG, MIDDLE, chain_world


@asynccontextmanager
async def agent_resolves_x(fake_github, tmp_path, monkeypatch):
    """The conflicting chain's world (:func:`tests.support.sync_world.chain_world`: the fork tuned
    ``x``) with the conflict agent on, the local Anthropic server answering once with a resolution
    that takes upstream's ``x = 2``, and upstream's commit of that ``x`` made in its source
    checkout but not pushed yet. Yields ``(world, upstream source checkout, upstream repo, the
    Anthropic server, the upstream commit)``."""
    monkeypatch.setenv("FORKSYNC_ANTHROPIC_KEY", "k")
    resolved = "int x = 2;\n" + MIDDLE + "int z;\n"
    answer = Reply.tool("resolve_conflicts", {
        "files": [{"path": "third_party/amd/x.cpp", "content": resolved, "action": "took upstream's x",
                   "reason": "upstream's value supersedes the fork's tuning"}],
        "summary": "took upstream's x"})
    async with FakeAnthropic([answer], api_key="k") as ant:
        config = CONFIG + f"agents:\n  base_url: {ant.base_url}\n  max_retries: 0\n"
        async with chain_world(fake_github, tmp_path, config) as (w, up_src, upstream):
            c2 = commit_files(up_src, {"third_party/amd/x.cpp": resolved}, "AMD: x = 2 (#102)")
            yield w, up_src, upstream, ant, c2


async def test_a_github_failure_after_the_agents_push_still_records_its_pick_as_forksyncs(
        fake_github, tmp_path, monkeypatch):
    """The agent resolves the chain's conflict and its pick is pushed; GitHub then refuses the
    PR body's update (a 422 here; a 5xx or a lost answer alike). Seen: the note says the agent's
    resolution failed and the row's ``pushed_tip`` stays the conflict commit, while the branch on
    GitHub ends in the agent's commit — which every later sync takes for a person's commit on
    forksync's branch. Should be: the row records the pushed pick as forksync's own."""
    async with agent_resolves_x(fake_github, tmp_path, monkeypatch) as (w, up_src, upstream, ant, c2):
        git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
        fake_github.faults.unprocessable("/repos/meta/triton/pulls/*", "PATCH")
        await w.bot.settle()
        assert len(ant.requests) == 1
        branch = f"forksync/chain-{c2[:12]}"
        ref = await w.alice.getitem(f"/repos/meta/triton/git/ref/heads/{branch}")
        tip = ref["object"]["sha"]
        msg = (await w.alice.getitem(f"/repos/meta/triton/git/commits/{tip}"))["message"]
        assert "Agent-Resolved" in msg, msg                # the agent's pick reached GitHub
        row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
        assert row["pushed_tip"] == tip


async def test_killed_between_the_agents_push_and_recording_it_the_restart_knows_its_pick_as_forksyncs(
        fake_github, tmp_path, monkeypatch):
    """The worker dies right after the agent's pick reached GitHub, before the chain's row records
    it as forksync's push (the death raised where ``pushed_tip`` would be saved, as nothing runs
    in a process killed with SIGKILL). Seen: the restarted worker finds the branch at the agent's
    commit, takes it for a person's commit on forksync's branch (``pushed_tip`` stays the
    conflict commit), and so refuses to rebuild or fold the chain. Should be: the push was
    written down before it was made, as the service's own pushes are
    (:func:`bot.sync.store.begin_push`), and the restarted worker records the agent's pick as
    forksync's own, without asking the agent again."""
    async with agent_resolves_x(fake_github, tmp_path, monkeypatch) as (w, up_src, upstream, ant, c2):
        branch = f"forksync/chain-{c2[:12]}"
        save_branch = sync_store.save_branch
        conflict, killed = [], []

        def dies_after_the_agents_push(store, **row):
            tip = row.get("pushed_tip")
            if row.get("branch") == branch and tip and not conflict:
                conflict.append(tip)                     # the conflict commit forksync pushed
            elif row.get("branch") == branch and tip and tip != conflict[0] and not killed:
                killed.append(tip)
                raise Killed()
            save_branch(store, **row)

        monkeypatch.setattr(sync_store, "save_branch", dies_after_the_agents_push)
        git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
        with pytest.raises(Killed):
            await w.bot.settle()
        assert len(ant.requests) == 1
        ref = await w.alice.getitem(f"/repos/meta/triton/git/ref/heads/{branch}")
        assert ref["object"]["sha"] == killed[0]                   # the agent's pick is on GitHub
        msg = (await w.alice.getitem(f"/repos/meta/triton/git/commits/{killed[0]}"))["message"]
        assert "Agent-Resolved" in msg, msg
        assert sync_store.branch_row(w.bot.store, "meta/triton", branch)["pushed_tip"] == conflict[0]

        monkeypatch.setattr(sync_store, "save_branch", save_branch)
        assert await restart(w, tmp_path)
        await w.bot.settle()
        row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
        assert row["pushed_tip"] == killed[0]                     # forksync's own push
        assert sync_store.begun_push(w.bot.store, "meta/triton", branch) is None
        assert len(ant.requests) == 1                              # not asked again
        [pr] = [p async for p in w.alice.getiter("/repos/meta/triton/pulls?state=open")]
        assert pr["head"]["sha"] == killed[0]
        said = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{pr['number']}/comments")]
        assert not any("not forksync's own" in b for b in said), said     # no person's commits
        assert q.counts(w.bot.store)["dead"] == 0
