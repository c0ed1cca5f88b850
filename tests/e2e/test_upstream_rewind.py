"""Upstream's branch moved back (a rewind): its new tip is an ancestor of the tip forksync last
synced — a ``git push --force`` of an old commit by mistake, a mirror that lagged, a mis-set
``upstream.ref``. The open sync PRs that carry the commits it took away are held, not closed or
rebuilt (their reviews and resolutions are worth more than waiting costs), until upstream either
builds on the rewound history (the rewind was meant: the dropped-commit handling of
docs/github.md, "A unit whose commits are decided while its PR is open", closes them) or returns
(nothing was dropped). Real git repositories, the local GitHub, the real bot and store."""
from __future__ import annotations

from bot.app import schedules
from bot.sync import store as sync_store
from tests.support.e2e import adopt_and_move_upstream, job_context, open_sync_prs, status_issue
from tests.support.github import commit_files, git


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
