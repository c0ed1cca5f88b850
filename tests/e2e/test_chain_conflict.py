"""A chain stopped at its first pick on the local GitHub: it opens as a draft PR with the conflict
commit; a resolution that leaves markers is refused; a good one is checked and folded into one
pick commit (the originals kept under refs/forksync/resolutions), the chain goes on with its next
pick, L1 runs on the new head, and after the owner's approval it lands — one fork commit per
upstream commit, no marker anywhere in the fork's history."""
from __future__ import annotations

import os
import subprocess

import pytest

from bot.app import schedules
from bot.git.apply import COMMITTER
from bot.sync import store as sync_store
from tests.support.github import GIT_ENV, commit_files, git
from tests.support.sync_world import (
    CONFIG,
    MIDDLE,
    X0,
    bot_comments,
    chain_world,
    fork_git,
    open_prs,
    stop_chain,
    the_rules_resolve_the_amd_chain,
    upstream_files,
    validated_world,
)
from tests.support.validation_world import tick_ctx


@pytest.fixture
async def world(fake_github, tmp_path):
    async with chain_world(fake_github, tmp_path) as w:
        yield w


async def test_a_chain_stopped_at_its_first_pick_is_finished_on_github_and_lands(world, tmp_path):
    w, up_src, upstream = world
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    chain, branch, c2, c3 = await stop_chain(w, up_src, upstream, then_z=True, bundles=1)
    bundle, _ = await open_prs(w.alice)
    assert (bundle["head"]["ref"], branch) == (f"forksync/bundle-{c1[:12]}", f"forksync/chain-{c2[:12]}")

    # the chain reached GitHub: a draft whose one commit is the conflict commit
    assert chain["draft"] is True
    body = chain["body"]
    assert f"## ⚠️ Stopped at a conflict: upstream `{c2[:12]}`" in body
    assert "1. `third_party/amd/x.cpp` (content), 1 conflicting hunk" in body
    assert f"forksync resolve chain-{c2[:12]}" in body
    [msg] = fork_git(w, "log", "--format=%B%x00", f"main..{branch}").strip("\x00\n").split("\x00")
    assert f"Forksync-Conflict: {c2}" in msg and "Upstream-Commit" not in msg and "(#102)" not in msg
    marked = fork_git(w, "show", f"{branch}:third_party/amd/x.cpp")
    assert marked.startswith("<<<<<<< ") and "\n||||||| " in marked and "\nint x = 10;\n" in marked
    issue = [i async for i in w.alice.getiter("/repos/meta/triton/issues?state=open")
             if "<!-- forksync:status-issue -->" in (i.get("body") or "")][0]
    assert f"stopped at a conflict in upstream `{c2[:12]}`" in issue["body"]

    # the bundle lands by itself; the chain does not
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert (await w.pr(bundle["number"]))["merged"] is True
    assert (await w.pr(chain["number"]))["merged"] is False

    # a resolution that leaves a marker is refused, and nothing is rewritten
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    half = marked.replace("int x = 10;", "int x = 12;")
    bad = commit_files(wt, {"third_party/amd/x.cpp": half}, "resolve x, half way")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    comments = await bot_comments(w, chain["number"])
    assert any("is not complete:\n- conflict markers remain in `third_party/amd/x.cpp`" in c for c in comments)
    assert fork_git(w, "rev-parse", branch) == bad       # no base merge on top of a conflict commit either

    # a good resolution is folded into one pick, and the chain goes on with its next pick
    good = commit_files(wt, {"third_party/amd/x.cpp": "int x = 12;\n" + MIDDLE + "int z;\n"},
                        "resolve x\n\nFile: third_party/amd/x.cpp\nReason: keeps the fork's tuning on upstream's new x\n")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    comments = await bot_comments(w, chain["number"])
    folded = [c for c in comments if "checked and folded" in c]
    assert len(folded) == 1 and f"`refs/forksync/resolutions/chain-{c2[:12]}/{good[:12]}`" in folded[0]
    assert "| `third_party/amd/x.cpp` | merged by hand | keeps the fork's tuning on upstream's new x |" in folded[0]
    assert fork_git(w, "rev-parse", f"refs/forksync/resolutions/chain-{c2[:12]}/{good[:12]}") == good
    picks = fork_git(w, "log", "--reverse", "--no-merges", "--format=%H", f"main..{branch}").split()
    assert len(picks) == 2, fork_git(w, "log", "--format=%h %s", "-5", branch)
    first, second = (fork_git(w, "log", "-1", "--format=%B", p) for p in picks)
    assert first.startswith("[RESOLVED] AMD: new x (#102)\n")
    assert f"Upstream-Commit: {c2}" in first and "Resolved-by: Upstream Dev <dev@upstream.example>" in first
    assert "- File: third_party/amd/x.cpp\n  Action: merged by hand\n  Reason: keeps the fork's tuning" in first
    assert f"Upstream-Commit: {c3}" in second
    assert fork_git(w, "show", f"{branch}:third_party/amd/x.cpp") == "int x = 12;\n" + MIDDLE.rstrip("\n") + "\nint z = 3;"
    assert fork_git(w, "log", "-1", "--format=%an", picks[0]) == "Upstream Dev"

    # the new head is validated; the whole chain leaves draft on green L1, and lands after the owner approves
    after = await w.pr(chain["number"])
    assert after["draft"] is False
    assert w.run_of(after["head"]["sha"], "forksync/L1/unit").conclusion == "success"
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert (await w.pr(chain["number"]))["merged"] is True
    assert await open_prs(w.alice) == []
    # nothing with a marker landed, and the fork has exactly one commit per upstream commit
    landed = fork_git(w, "log", "--format=%H", "main").split()
    for sha in landed:
        for path in fork_git(w, "diff-tree", "--no-commit-id", "--name-only", "-r", "--root", sha).split():
            text = subprocess.run(["git", f"--git-dir={w.fork.path}", "show", f"{sha}:{path}"], capture_output=True,
                                  text=True).stdout
            assert "<<<<<<<" not in text and ">>>>>>>" not in text, (sha, path)
    trailers = fork_git(w, "log", "--format=%(trailers:key=Upstream-Commit,valueonly)", "main").split()
    assert sorted(trailers) == sorted([c1, c2, c3])
    assert "Forksync-Conflict" not in fork_git(w, "log", "--format=%B", "main")


async def test_a_resolution_on_github_that_keeps_the_fork_lands_as_no_op_with_who_decided(world, tmp_path):
    """A person keeps the fork's x.cpp as it is: the folded pick changes nothing, lands as it is
    (one fork commit per upstream commit), and the ledger the App stores for the dashboard records
    the upstream commit NO_OP, naming that commit and the person."""
    w, up_src, upstream = world
    chain, branch, c2, c3 = await stop_chain(w, up_src, upstream, then_z=True)
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    commit_files(wt, {"third_party/amd/x.cpp": "int x = 10;\n" + MIDDLE + "int z;\n"},
                 "keep the fork's x\n\nFile: third_party/amd/x.cpp\nReason: the fork's tuning stays\n")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    assert len(fork_git(w, "log", "--no-merges", "--format=%H", f"main..{branch}").split()) == 2
    [folded] = [c for c in await bot_comments(w, chain["number"]) if "checked and folded" in c]
    pick = fork_git(w, "log", "--reverse", "--format=%H", f"main..{branch}").split()[0]
    assert (f"The pick `{pick[:12]}` changes nothing in the fork: once this PR lands, the ledger records upstream "
            f"`{c2[:12]}` NO_OP, naming this pick and who resolved it.") in folded
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert (await w.pr(chain["number"]))["merged"] is True
    second, up3, first, up2 = fork_git(w, "log", "--no-merges", "--format=%H %(trailers:key=Upstream-Commit,valueonly)",
                                       "-2", "main").split()
    assert (up2, up3) == (c2, c3)
    assert fork_git(w, "diff-tree", "--no-commit-id", "--name-only", "-r", first) == ""     # the empty pick landed
    assert "Resolved-by: Upstream Dev <dev@upstream.example>" in fork_git(w, "log", "-1", "--format=%B", first)
    _, rows = sync_store.query_ledger(w.bot.store, "meta/triton", limit=1000)
    got = {r["sha"]: r for r in rows}
    assert (got[c2]["disposition"], got[c2]["fork_commit"]) == ("NO_OP", first)
    assert got[c2]["reason"] == (f"its pick {first[:12]} changes nothing in the fork "
                                 "(resolved by Upstream Dev <dev@upstream.example>)")
    assert got[c3]["disposition"] == "PICKED"



async def test_a_conflict_a_rule_decides_opens_as_a_draft_and_lands_after_l1_and_approval(ahead_world):
    w, up_src, upstream = ahead_world
    c2, c3, chain = await the_rules_resolve_the_amd_chain(w, up_src, upstream)
    branch = f"forksync/chain-{c2[:12]}"
    assert chain["head"]["ref"] == branch and chain["draft"] is True
    assert "## Resolved by forksync's rules" in chain["body"]
    assert (f"Upstream `{c2[:12]}` — folded into pick `{fork_git(w, 'rev-parse', branch + '~1')[:12]}`\n\n"
            "| File | Action | Reason | Rule |\n|---|---|---|---|\n"
            "| `third_party/amd/x.cpp` | kept the fork's file | the fork's file is upstream's own file from after this "
            "commit: the fork already has this change (and later ones) | `fork-ahead` |") in chain["body"]
    picks = fork_git(w, "log", "--reverse", "--format=%H", f"main..{branch}").split()
    first, second = (fork_git(w, "log", "-1", "--format=%B", p) for p in picks)
    assert first.startswith("[RESOLVED] AMD: x = 2 (#102)\n") and f"Upstream-Commit: {c2}" in first
    assert "Resolved-by: forksync rules (fork-ahead)" in first and "(rule `fork-ahead`)" in first
    assert "  Action: kept fork\n" in first
    assert f"Upstream-Commit: {c3}" in second and "Forksync-Conflict" not in fork_git(w, "log", "--format=%B", branch)
    # L1 on the head, then a person's approval: it lands
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    after = await w.pr(chain["number"])
    assert after["draft"] is False and after["merged"] is False
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert (await w.pr(chain["number"]))["merged"] is True
    trailers = fork_git(w, "log", "--format=%(trailers:key=Upstream-Commit,valueonly)", "main").split()
    assert sorted(trailers) == sorted([c2, c3])


async def test_a_later_sync_keeps_what_the_rules_did_and_why_on_the_chain_pr(ahead_world):
    # the next sync (a poll after upstream moved elsewhere, or the catch-up after a restart)
    # finds the rules' pick already on the branch: the PR still says which files the rules
    # decided and why the unit is a chain, as the branch's commits still do
    w, up_src, upstream = ahead_world
    c2, _, chain = await the_rules_resolve_the_amd_chain(w, up_src, upstream)
    assert chain["head"]["ref"] == f"forksync/chain-{c2[:12]}" and "## Resolved by forksync's rules" in chain["body"]
    assert "Why a chain: " in chain["body"]
    await w.bot.svc.sync(await tick_ctx(w), "meta/triton", reason="poll: catching up after a start")
    await w.bot.settle()
    again = await w.pr(chain["number"])
    assert again["head"]["sha"] == chain["head"]["sha"]
    assert again["body"] == chain["body"]


async def test_a_push_that_drops_the_conflict_commit_keeps_it_and_waits(world, tmp_path):
    w, up_src, upstream = world
    chain, branch, c2, _ = await stop_chain(w, up_src, upstream)
    conflict = fork_git(w, "rev-parse", branch)
    # a person replaces the conflict commit by their own commit (a force push): nothing is folded,
    # the bot says why, and the conflict commit is kept on the fork
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    git(wt, "reset", "-q", "--hard", "HEAD~1")
    mine = commit_files(wt, {"third_party/amd/x.cpp": "int x = 12;\n" + MIDDLE + "int z;\n"}, "my own x")
    git(wt, "push", "-q", "-f", "origin", f"HEAD:{branch}")
    await w.bot.settle()
    comments = await bot_comments(w, chain["number"])
    keep = f"refs/forksync/resolutions/chain-{c2[:12]}/{conflict[:12]}"
    assert any(f"the conflict commit `{conflict[:12]}` (upstream `{c2[:12]}`) is no longer on the branch" in c
               and f"it is kept as `{keep}`" in c for c in comments), comments
    assert fork_git(w, "rev-parse", keep) == conflict
    assert fork_git(w, "rev-parse", branch) == mine           # the person's commit is not rewritten
    assert (await w.pr(chain["number"]))["merged"] is False


async def test_forksync_resolve_from_a_clone_pushes_the_resolution_for_the_app_to_fold(world, tmp_path, monkeypatch, capsys):
    from bot.cli.main import main

    w, up_src, upstream = world
    chain, _, c2, _ = await stop_chain(w, up_src, upstream)
    unit = f"chain-{c2[:12]}"
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(w.fork.path), str(clone))
    git(clone, "fetch", "-q", "origin", f"forksync/{unit}:forksync/{unit}")
    monkeypatch.chdir(tmp_path)
    assert main(["resolve", unit, "--fork", str(clone)]) == 0
    wt = tmp_path / ".forksync-resolve" / unit
    out = capsys.readouterr().out
    assert "third_party/amd/x.cpp: 1 conflicting hunk(s)" in out, out
    (wt / "third_party/amd/x.cpp").write_text("int x = 12;\n" + MIDDLE + "int z;\n")
    assert main(["resolve", unit, "--continue", "--reason", "third_party/amd/x.cpp=the fork's value on upstream's type",
                 "--push", "origin", "--fork", str(clone)]) == 0
    assert "the App checks it and folds it" in capsys.readouterr().out
    await w.bot.settle()
    comments = await bot_comments(w, chain["number"])
    assert any("checked and folded" in c and "| `third_party/amd/x.cpp` | merged by hand | the fork's value on upstream's type |"
               in c for c in comments), comments
    msg = fork_git(w, "log", "-1", "--format=%B", f"forksync/{unit}")
    assert msg.startswith("[RESOLVED] AMD: new x (#102)\n") and f"Upstream-Commit: {c2}" in msg


OPS = "".join(f"line {i}\n" for i in range(1, 21))
OPS_RESOLVED = OPS.replace("line 3\n", "line 3 fork + upstream\n")


async def test_the_agent_is_asked_only_about_what_the_rules_declined_and_the_pick_lands_once(fake_github, tmp_path,
                                                                                              monkeypatch):
    """One upstream commit conflicts in two files: ``fork-ahead`` decides x.cpp, the agent is asked
    only about ops.py; its pick (both answers, both trailers) takes the place of the conflict and
    rule commits, stays a draft until L1 passes on its head, and lands after a person approves."""
    from bot.fakeanthropic import FakeAnthropic, Reply
    answer = Reply.tool("resolve_conflicts", {
        "files": [{"path": "python/ops.py", "content": OPS_RESOLVED, "action": "kept both changes",
                   "reason": "the fork's and upstream's line 3 edits are independent"}],
        "summary": "kept the fork's and upstream's line 3"})
    monkeypatch.setenv("FORKSYNC_ANTHROPIC_KEY", "k")
    async with FakeAnthropic([answer], api_key="k") as ant:
        config = CONFIG + f"agents:\n  base_url: {ant.base_url}\n  max_retries: 0\n"
        async with validated_world(fake_github, tmp_path, config,
                                   files=upstream_files(**{"third_party/amd/x.cpp": X0, "python/ops.py": OPS}),
                                   fork_commits=(({"third_party/amd/x.cpp": "int x = 3;\n" + MIDDLE + "int z;\n",
                                                   "python/ops.py": OPS.replace("line 3\n", "line 3 fork\n")},
                                                  "fork: x = 3 ahead of upstream, ops line 3"),)) as (w, up_src, upstream):
            c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n",
                                       "python/ops.py": OPS.replace("line 3\n", "line 3 upstream\n")}, "AMD: x = 2 (#102)")
            c3 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 3;\n" + MIDDLE + "int z;\n"}, "AMD: x = 3 (#103)")
            git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
            await w.bot.settle()
            # one request, about ops.py alone: x.cpp, which the rule decided, is not in it
            [prompt] = [str(b) for b in ant.bodies]
            assert "python/ops.py" in prompt and "third_party/amd/x.cpp" not in prompt
            [chain] = await open_prs(w.alice)
            branch = f"forksync/chain-{c2[:12]}"
            assert chain["head"]["ref"] == branch and (await w.pr(chain["number"]))["merged"] is False
            text = chain["body"]
            assert ("forksync's deterministic rules decided 1 of the 2 conflicted files; the agent was asked only about "
                    "the other 1 (python/ops.py) and could not change the rules' files.") in text
            assert "| `third_party/amd/x.cpp` | kept the fork's file | the fork's file is upstream's own file" in text
            assert "## Resolved by forksync's rules" in text          # kept when the chain went on after the agent
            assert "| `python/ops.py` | kept both changes | the fork's and upstream's line 3 edits are independent |" in text
            picks = fork_git(w, "log", "--reverse", "--format=%H", f"main..{branch}").split()
            msgs = [fork_git(w, "log", "-1", "--format=%B", p) for p in picks]
            assert msgs[0].startswith("AMD: x = 2 (#102)\n") and f"Upstream-Commit: {c2}" in msgs[0]
            assert "Resolved-by: forksync rules (fork-ahead)\nAgent-Resolved: claude-sonnet-4-6 " in msgs[0]
            assert all("Forksync-Conflict" not in m and "Forksync-Rules" not in m for m in msgs)
            assert fork_git(w, "show", f"{picks[0]}:python/ops.py") + "\n" == OPS_RESOLVED
            assert fork_git(w, "show", f"{picks[0]}:third_party/amd/x.cpp") + "\n" == "int x = 3;\n" + MIDDLE + "int z;\n"
            kept = fork_git(w, "for-each-ref", "--format=%(refname)", f"refs/forksync/resolutions/chain-{c2[:12]}")
            assert kept, "the replaced conflict and rule commits are kept"
            # it left draft only with L1 green on its head; a person's approval lands it, one fork commit per upstream commit
            await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
            after = await w.pr(chain["number"])
            assert after["draft"] is False and after["merged"] is False
            assert w.run_of(after["head"]["sha"], "forksync/L1/unit").conclusion == "success"
            assert fork_git(w, "rev-list", "--count", f"main..{after['head']['sha']}") == "2"
            await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
            await w.bot.settle()
            assert (await w.pr(chain["number"]))["merged"] is True
            trailers = fork_git(w, "log", "--format=%(trailers:key=Upstream-Commit,valueonly)", "main").split()
            assert sorted(trailers) == sorted([c2, c3])         # the chain went on with c3 after the agent's pick
            assert "Forksync-Conflict" not in fork_git(w, "log", "--format=%B", "main")
            assert len(ant.bodies) == 1


async def test_a_resolution_of_an_upstream_commit_a_force_push_removed_is_not_folded(world, tmp_path):
    """Upstream force-pushes its history without the chain's conflicted commit, and a person
    pushes a resolution of it before forksync has handled that force push (their push's event is
    handled first). The pick would land a commit upstream no longer has: it is not folded, and the
    sync of the force push then closes the chain (its only commit is no longer upstream's), the
    person's commit kept."""
    w, up_src, upstream = world
    before = git(up_src, "rev-parse", "HEAD")
    chain, branch, c2, _ = await stop_chain(w, up_src, upstream)
    w.fake.webhooks.auto_deliver = False
    # upstream force-pushes its history without that commit (reverted by a rewrite)
    git(up_src, "reset", "-q", "--hard", before)
    commit_files(up_src, {"python/a.py": "a = 3\n"}, "Unrelated (#103)")
    git(up_src, "push", "-q", "-f", str(upstream.path), "HEAD:refs/heads/main")
    # a person resolves the conflict the draft still shows: the pick would land a commit upstream no longer has
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    head = commit_files(wt, {"third_party/amd/x.cpp": "int x = 12;\n" + MIDDLE + "int z;\n"}, "resolve x")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.fake.refresh()
    w.fake.webhooks.auto_deliver = True
    await w.fake.webhooks.flush(order="reverse")            # the person's push first
    await w.bot.settle()
    comments = await bot_comments(w, chain["number"])
    assert not any("checked and folded" in c for c in comments), comments
    assert any(f"upstream commit `{c2[:12]}` is no longer in upstream's history" in c for c in comments), comments
    kept = fork_git(w, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/forksync/closed")
    assert f" {head}" in kept, kept
    assert f"Upstream-Commit: {c2}" not in fork_git(w, "log", "--format=%B", "--all")
    after = await w.pr(chain["number"])
    assert (after["merged"], after["state"]) == (False, "closed")


async def test_a_persons_commit_carrying_the_conflict_trailer_is_never_folded(world, tmp_path):
    """A person amends the conflict commit in place (``git commit --amend`` keeps its message, so its
    ``Forksync-Conflict:`` trailer) with their resolution and an unrelated change, then pushes one more
    commit on top. Their commit is no conflict commit forksync wrote: folding it would rewrite a
    person's commit and carry the unrelated change into a ``[RESOLVED]`` pick, under the upstream
    author, past the "only the conflicted files" check (which reads what follows the conflict
    commit, never the conflict commit's own changes)."""
    w, up_src, upstream = world
    chain, branch, c2, _ = await stop_chain(w, up_src, upstream)
    conflict = fork_git(w, "rev-parse", branch)
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    (wt / "third_party/amd/x.cpp").write_text("int x = 12;\n" + MIDDLE + "int z;\n")
    (wt / "python/a.py").write_text("a = 99  # not part of the resolution\n")
    git(wt, "commit", "-q", "-a", "--amend", "--no-edit")
    amended = git(wt, "rev-parse", "HEAD")
    assert f"Forksync-Conflict: {c2}" in git(wt, "log", "-1", "--format=%B")
    git(wt, "push", "-q", "-f", "origin", f"HEAD:{branch}")
    await w.bot.settle()
    mine = commit_files(wt, {"third_party/amd/x.cpp": "int x = 13;\n" + MIDDLE + "int z;\n"}, "x = 13")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    comments = await bot_comments(w, chain["number"])
    assert not any("checked and folded" in c for c in comments), comments
    assert any(f"the conflict commit `{conflict[:12]}` (upstream `{c2[:12]}`) is no longer on the branch" in c
               for c in comments), comments
    assert fork_git(w, "rev-parse", branch) == mine                      # the person's commits stay as they are
    assert fork_git(w, "rev-parse", f"{branch}~1") == amended
    assert f"Upstream-Commit: {c2}" not in fork_git(w, "log", "--format=%B", branch)
    assert (await w.pr(chain["number"]))["merged"] is False


async def test_a_rewritten_conflict_commit_with_forksyncs_committer_is_never_folded(world, tmp_path):
    """A committer is only a name a pusher sets (``git filter-repo`` keeps it; anyone can write it):
    a conflict commit with forksync's committer that is not the one forksync pushed is a person's,
    and a resolution on it is not folded."""
    w, up_src, upstream = world
    chain, branch, c2, _ = await stop_chain(w, up_src, upstream)
    conflict = fork_git(w, "rev-parse", branch)
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    (wt / "python/a.py").write_text("a = 99  # not part of the resolution\n")
    env = {**os.environ, **GIT_ENV, "GIT_COMMITTER_NAME": COMMITTER[0], "GIT_COMMITTER_EMAIL": COMMITTER[1]}
    subprocess.run(["git", "commit", "-q", "-a", "--amend", "--no-edit"], cwd=wt, env=env, check=True)
    git(wt, "push", "-q", "-f", "origin", f"HEAD:{branch}")
    mine = commit_files(wt, {"third_party/amd/x.cpp": "int x = 12;\n" + MIDDLE + "int z;\n"}, "resolve x")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    comments = await bot_comments(w, chain["number"])
    assert not any("checked and folded" in c for c in comments), comments
    assert any(f"the conflict commit `{conflict[:12]}` (upstream `{c2[:12]}`) is no longer on the branch" in c
               for c in comments), comments
    assert fork_git(w, "rev-parse", branch) == mine
    assert (await w.pr(chain["number"]))["merged"] is False


async def test_a_conflict_commit_forksync_never_pushed_is_not_folded_on_a_branch_without_one(world, tmp_path):
    """After a fold forksync's last push carries no conflict commit. A person then pushes a commit of
    their own with the ``Forksync-Conflict:`` trailer and forksync's committer (a name a pusher sets)
    and a "resolution" on top: forksync pushed no such commit, so nothing is folded and the person's
    commit's own changes never become part of a ``[RESOLVED]`` pick."""
    w, up_src, upstream = world
    chain, branch, c2, _ = await stop_chain(w, up_src, upstream)
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    commit_files(wt, {"third_party/amd/x.cpp": "int x = 12;\n" + MIDDLE + "int z;\n"}, "resolve x")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    assert len([c for c in await bot_comments(w, chain["number"]) if "checked and folded" in c]) == 1
    assert "Forksync-Conflict" not in fork_git(w, "log", "--format=%B", f"main..{branch}")

    git(wt, "fetch", "-q", "origin")
    git(wt, "reset", "-q", "--hard", f"origin/{branch}")
    (wt / "python/a.py").write_text("a = 99  # not part of any resolution\n")
    (wt / "third_party/amd/x.cpp").write_text("<<<<<<< fork\nint x = 12;\n=======\nint x = 2;\n>>>>>>> upstream\n"
                                              + MIDDLE + "int z;\n")
    env = {**os.environ, **GIT_ENV, "GIT_COMMITTER_NAME": COMMITTER[0], "GIT_COMMITTER_EMAIL": COMMITTER[1],
           "HOME": str(wt)}
    subprocess.run(["git", "commit", "-q", "-a", "-m", f"[CONFLICT] x\n\nForksync-Conflict: {c2}\n"],
                   cwd=wt, env=env, check=True)
    mine = commit_files(wt, {"third_party/amd/x.cpp": "int x = 13;\n" + MIDDLE + "int z;\n"}, "resolve x again")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    comments = await bot_comments(w, chain["number"])
    assert len([c for c in comments if "checked and folded" in c]) == 1, comments
    assert fork_git(w, "rev-parse", branch) == mine                      # the person's commits stay as they are
    assert (await w.pr(chain["number"]))["merged"] is False


async def test_a_chain_stopped_at_a_conflict_gets_a_ready_pr_where_github_has_no_drafts(world):
    """A private fork on GitHub Free has no draft pull requests: GitHub refuses ``"draft": true``
    (422 "Draft pull requests are not supported in this repository."), and the chain would never
    get its PR. It opens ready instead, says on the PR why it is not a draft, and the gate still
    keeps it from merging while its conflict commit is there."""
    w, up_src, upstream = world
    w.fake.state.repo("meta", "triton").drafts = False
    chain, _, c2, _ = await stop_chain(w, up_src, upstream)
    assert (chain["head"]["ref"], chain["draft"]) == (f"forksync/chain-{c2[:12]}", False)
    assert f"## ⚠️ Stopped at a conflict: upstream `{c2[:12]}`" in chain["body"]
    assert any("draft pull requests" in b for b in await bot_comments(w, chain["number"]))
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    after = await w.pr(chain["number"])
    assert after["merged"] is False
    assert "`conflict-commit`" in w.run_of(after["head"]["sha"], "forksync/gate").output["summary"]
    assert w.bot.deliveries("dead") == []
