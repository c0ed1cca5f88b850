"""Upstream's branch moved back (a rewind): its new tip is an ancestor of the tip forksync last
synced — a ``git push --force`` of an old commit by mistake, a mirror that lagged, a mis-set
``upstream.ref``. The open sync PRs that carry the commits it took away are held, not closed or
rebuilt (their reviews and resolutions are worth more than waiting costs), until upstream either
builds on the rewound history (the rewind was meant: the dropped-commit handling of
docs/github.md, "A unit whose commits are decided while its PR is open", closes them) or returns
(nothing was dropped). Real git repositories, the local GitHub, the real bot and store."""
from __future__ import annotations

import pytest

from bot.app import schedules
from bot.sync import store as sync_store
from tests.support.e2e import adopt_and_move_upstream, job_context, open_sync_prs, status_issue
from tests.support.github import commit_files, git
from tests.support.sync_world import MIDDLE, RESOLVED_X, chain_world, fork_git, open_prs, push_resolution
from tests.support.sync_world import bot_comments as comments_on
from tests.support.validation_world import tick_ctx


async def bot_comments(gh, number: int) -> list[str]:
    return [c["body"] async for c in gh.getiter(f"/repos/meta/triton/issues/{number}/comments")
            if c["user"]["login"] == "forksync[bot]"]


def rewind_upstream(up_src, upstream, to: str) -> None:
    """Upstream's ``main`` force-pushed back to ``to``, an older commit of its own history."""
    git(up_src, "reset", "-q", "--hard", to)
    git(up_src, "push", "-q", "-f", str(upstream.path), "HEAD:refs/heads/main")


async def opened(alice) -> dict[int, str]:
    """The open sync PRs: number → head sha."""
    return {p["number"]: p["head"]["sha"] for p in await open_sync_prs(alice)}


async def gate_codes(alice, sha: str) -> list[str]:
    """The blocking finding codes of the ``forksync/gate`` check run on ``sha`` (its ❌ rows)."""
    runs = [r async for r in alice.getiter(f"/repos/meta/triton/commits/{sha}/check-runs", iterable_key="check_runs")
            if r["name"] == "forksync/gate"]
    summary = runs[0]["output"]["summary"] if runs else ""
    return [line.split("`")[1] for line in summary.splitlines() if line.startswith("| ❌")]


async def test_upstream_reset_to_an_older_commit_holds_the_open_sync_prs_until_it_returns(world, tmp_path):
    """Upstream's ``main`` is reset to the commit before the two the open bundle and chain carry.
    Neither PR is closed or rebuilt, nothing is said on them; the status issue says upstream moved
    back, from which tip to which, and which units are held; the gate holds both PRs. Upstream then
    pushes the same commits again: everything goes on as before, and the status issue no longer
    says it."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    before = await opened(alice)
    assert len(before) == 2, before
    said = {n: await bot_comments(alice, n) for n in before}
    rewind_upstream(up_src, upstream, f"{c1}~1")
    await bot.settle()
    assert await opened(alice) == before
    assert {n: await bot_comments(alice, n) for n in before} == said
    [issue] = await status_issue(alice)
    body = issue["body"]
    assert "moved back" in body and f"`{c2[:12]}`" in body, body
    for n in before:
        assert f"#{n}" in body.split("moved back", 1)[1].split("##", 1)[0], body
    st = sync_store.load_status(bot.store, "meta/triton")
    assert st.rewound and st.rewound["from"] == c2, st.rewound
    assert "moved back" in st.degraded(), st.degraded()
    await schedules.reconcile_tick(await job_context(bot)(inst.id), "meta/triton")
    for n, head in before.items():
        assert "upstream-rewound" in await gate_codes(alice, head), (n, await gate_codes(alice, head))
    git(up_src, "reset", "-q", "--hard", c2)
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    assert await opened(alice) == before
    assert {n: await bot_comments(alice, n) for n in before} == said
    [issue] = await status_issue(alice)
    assert "moved back" not in issue["body"], issue["body"]
    assert not sync_store.load_status(bot.store, "meta/triton").rewound
    assert bot.deliveries("dead") == []


async def test_upstream_that_builds_on_the_rewound_history_has_dropped_the_commits(world, tmp_path):
    """Upstream's ``main`` is reset to the commit before the two open units' commits, then a new
    commit is pushed on top of it: the rewind was meant. Each PR is closed saying its commit is no
    longer in upstream's history (``NOT_UPSTREAM``), the new commit gets a PR, and the status
    issue no longer says upstream moved back."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    before = await opened(alice)
    rewind_upstream(up_src, upstream, f"{c1}~1")
    await bot.settle()
    c3 = commit_files(up_src, {"python/b.py": "b = 2\n"}, "Set b (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    for n in before:
        assert (await alice.getitem(f"/repos/meta/triton/pulls/{n}"))["state"] == "closed"
        assert "no longer has it" in "\n".join(await bot_comments(alice, n))
    carried = set()
    for pr in await open_sync_prs(alice):
        messages = [c["commit"]["message"] async for c in alice.getiter(f"/repos/meta/triton/pulls/{pr['number']}/commits")]
        carried |= {line.split()[-1] for m in messages for line in m.splitlines() if line.startswith("Upstream-Commit:")}
    assert c3 in carried and not {c1, c2} & carried, carried
    [issue] = await status_issue(alice)
    assert "moved back" not in issue["body"], issue["body"]
    assert bot.deliveries("dead") == []


@pytest.fixture
async def chain(fake_github, tmp_path):
    async with chain_world(fake_github, tmp_path) as w:
        yield w


async def test_a_resolution_pushed_while_upstream_moved_back_is_kept_and_folded_when_it_returns(chain, tmp_path):
    """A chain stopped at a conflict in upstream's newest commit; upstream's ``main`` is reset to
    the commit before it, and the chain is held. A person pushes their resolution meanwhile: it is
    kept as it is (not folded, not overwritten), and the reply says upstream's branch moved back
    and that the resolution is folded when upstream returns. Upstream pushes the commit again: the
    next sync folds the resolution as the push would have, with nothing pushed again by the person."""
    w, up_src, upstream = chain
    before = git(up_src, "rev-parse", "HEAD")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n"}, "AMD: new x (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [pr] = await open_prs(w.alice)
    branch = f"forksync/chain-{c2[:12]}"
    assert pr["head"]["ref"] == branch
    rewind_upstream(up_src, upstream, before)
    await w.bot.settle()
    st = sync_store.load_status(w.bot.store, "meta/triton")
    assert st.rewound and [u["branch"] for u in st.rewound["units"]] == [branch], st.rewound
    _, good = push_resolution(w, tmp_path, branch)
    await w.bot.settle()
    comments = await comments_on(w, pr["number"])
    assert not any("checked and folded" in c for c in comments), comments
    assert not any("no longer in upstream's history" in c for c in comments), comments
    [said] = [c for c in comments if "moved back" in c]
    assert f"`{good[:12]}`" in said and "folded when upstream" in said and f"`{c2[:12]}`" in said, said
    assert fork_git(w, "rev-parse", branch) == good           # the person's push is kept as it is
    assert (await w.pr(pr["number"]))["state"] == "open"

    git(up_src, "reset", "-q", "--hard", c2)
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    assert not sync_store.load_status(w.bot.store, "meta/triton").rewound
    comments = await comments_on(w, pr["number"])
    assert len([c for c in comments if "checked and folded" in c]) == 1, comments
    assert fork_git(w, "rev-parse", f"refs/forksync/resolutions/chain-{c2[:12]}/{good[:12]}") == good
    [pick] = fork_git(w, "log", "--no-merges", "--format=%H", f"main..{branch}").split()
    msg = fork_git(w, "log", "-1", "--format=%B", pick)
    assert msg.startswith("[RESOLVED] AMD: new x (#102)\n") and f"Upstream-Commit: {c2}" in msg, msg
    assert fork_git(w, "show", f"{branch}:third_party/amd/x.cpp") == RESOLVED_X.rstrip("\n")
    assert w.bot.deliveries("dead") == []


async def test_a_resolution_pushed_while_upstream_moved_back_is_kept_when_upstream_builds_on(chain, tmp_path):
    """As above, but upstream then builds on the rewound history: the rewind was meant, the
    chain's only commit is no longer upstream's, and the chain is closed as any unit whose commits
    upstream dropped — the person's commit kept on the fork, never folded or rebuilt away."""
    w, up_src, upstream = chain
    before = git(up_src, "rev-parse", "HEAD")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n"}, "AMD: new x (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [pr] = await open_prs(w.alice)
    branch = f"forksync/chain-{c2[:12]}"
    rewind_upstream(up_src, upstream, before)
    await w.bot.settle()
    _, good = push_resolution(w, tmp_path, branch)
    await w.bot.settle()
    commit_files(up_src, {"python/a.py": "a = 3\n"}, "Unrelated (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    comments = await comments_on(w, pr["number"])
    assert not any("checked and folded" in c for c in comments), comments
    after = await w.pr(pr["number"])
    assert (after["merged"], after["state"]) == (False, "closed")
    kept = fork_git(w, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/forksync/closed")
    assert f" {good}" in kept, kept
    assert f"Upstream-Commit: {c2}" not in fork_git(w, "log", "--format=%B", "--all")
    assert w.bot.deliveries("dead") == []


async def landed_then_rewound(w, up_src, upstream) -> tuple[str, str]:
    """Upstream's new commit is picked and lands in the fork (its bundle merged); then upstream's
    ``main`` is reset to the commit before it. Returns ``(the commit before, the landed commit)``."""
    before = git(up_src, "rev-parse", "HEAD")
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [bundle] = await open_prs(w.alice)
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert (await w.pr(bundle["number"]))["merged"] is True
    await w.bot.settle()
    assert await open_prs(w.alice) == []
    rewind_upstream(up_src, upstream, before)
    await w.bot.settle()
    return before, c1


async def test_a_rewind_past_a_landed_pick_holds_nothing_and_is_said_until_upstream_returns(chain):
    """No open unit carries what upstream took back, but the fork already landed a pick of it: the
    status issue says upstream moved back and names the landed commit, with upstream as of when;
    syncing is degraded (the fork ships a change upstream no longer has). Upstream pushes the
    commit again: nothing is said any more."""
    w, up_src, upstream = chain
    before, c1 = await landed_then_rewound(w, up_src, upstream)
    st = sync_store.load_status(w.bot.store, "meta/triton")
    assert st.rewound and st.rewound["units"] == [] and st.rewound["from"] == c1 and st.rewound["to"] == before
    assert st.rewound["landed"] == [{"sha": c1, "subject": "Speed up a (#101)"}], st.rewound
    assert "landed 1 pick(s)" in st.degraded(), st.degraded()
    [issue] = await status_issue(w.alice)
    body = issue["body"]
    assert "moved back" in body and "**already landed**" in body and f"- `{c1[:12]}` Speed up a (#101)" in body, body
    assert "(upstream as of " in body.split("moved back", 1)[1]
    git(up_src, "reset", "-q", "--hard", c1)
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    st = sync_store.load_status(w.bot.store, "meta/triton")
    assert not st.rewound and st.degraded() == "", st.rewound
    [issue] = await status_issue(w.alice)
    assert "moved back" not in issue["body"], issue["body"]
    assert w.bot.deliveries("dead") == []


async def test_a_rewind_that_holds_nothing_ends_when_upstream_builds_on_it(chain):
    """As above, then upstream builds on the rewound history: the rewind was meant, and the status
    issue no longer says upstream moved back."""
    w, up_src, upstream = chain
    await landed_then_rewound(w, up_src, upstream)
    assert sync_store.load_status(w.bot.store, "meta/triton").rewound
    commit_files(up_src, {"python/b.py": "b = 2\n"}, "Set b (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    assert not sync_store.load_status(w.bot.store, "meta/triton").rewound
    [issue] = await status_issue(w.alice)
    assert "moved back" not in issue["body"], issue["body"]
    assert w.bot.deliveries("dead") == []
