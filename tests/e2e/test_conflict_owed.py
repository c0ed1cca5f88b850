"""The picks after a chain's conflict stop stay the chain's, across re-plans, on the local GitHub.

A chain of three upstream commits to one function stops at its second (a conflict with the fork):
its draft PR carries the first pick and the conflict commit. Upstream then pushes a commit
elsewhere, so the fork is planned again before anyone resolves the conflict. The third commit is
still owed to the chain: no unit of its own, nothing of the chain lands before the resolution, and
after it the third commit is picked on the same branch, in upstream order, and lands in the same PR
— one fork commit per upstream commit."""
from __future__ import annotations

import json

import pytest

from bot.app import schedules
from bot.sync import store as sync_store
from tests.support.github import commit_files, git
from tests.support.sync_world import CONFIG, fork_git, open_prs, upstream_files, validated_world
from tests.support.validation_world import tick_ctx

BODY = "".join(f"  step({i});\n" for i in range(8))


def source(x: str = "0", z: str = "0") -> str:
    """x.cpp: one function whose first and last lines the commits change."""
    return f"void tune() {{\n  int x = {x};\n{BODY}  int z = {z};\n}}\n"


@pytest.fixture
async def world(fake_github, tmp_path):
    async with validated_world(fake_github, tmp_path, CONFIG,
                               files=upstream_files(**{"third_party/amd/x.cpp": source()}),
                               fork_commits=(({"third_party/amd/x.cpp": source(x="10")}, "fork: tune x"),)) as w:
        yield w


def picked(w, rev: str) -> list[str]:
    """The upstream commits named by ``Upstream-Commit`` trailers in ``rev``, oldest first."""
    return fork_git(w, "log", "--reverse", "--format=%(trailers:key=Upstream-Commit,valueonly)", rev).split()


async def stop_at_the_second(w, up_src, upstream) -> tuple[str, str, str, dict]:
    """Upstream's three commits to the function the fork tuned, pushed and synced: the chain stops
    at the second's conflict. ``(c1, c2, c3, the chain's PR)``."""
    c1 = commit_files(up_src, {"third_party/amd/x.cpp": source(z="1")}, "AMD: set z (#101)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": source(x="2", z="1")}, "AMD: new x (#102)")
    c3 = commit_files(up_src, {"third_party/amd/x.cpp": source(x="2", z="3")}, "AMD: z again (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [chain] = await open_prs(w.alice)
    return c1, c2, c3, chain


async def test_the_picks_after_a_conflict_stop_stay_in_the_chain_across_a_replan_and_land_with_it(world, tmp_path):
    w, up_src, upstream = world
    c1, c2, c3, chain = await stop_at_the_second(w, up_src, upstream)
    unit = f"chain-{c1[:12]}"
    branch = f"forksync/{unit}"
    assert chain["head"]["ref"] == branch and chain["draft"] is True
    assert f"## ⚠️ Stopped at a conflict: upstream `{c2[:12]}`" in chain["body"]
    assert picked(w, f"main..{branch}") == [c1]
    assert f"Forksync-Conflict: {c2}" in fork_git(w, "log", "-1", "--format=%B", branch)
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert json.loads(row["shas_json"]) == [c1, c2, c3] and row["conflict_sha"] == c2

    # upstream moves elsewhere before anyone resolves the conflict: the fork is planned again
    c4 = commit_files(up_src, {"python/a.py": "a = 4\n"}, "Speed up a (#104)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    prs = await open_prs(w.alice)
    assert [p["head"]["ref"] for p in prs] == [f"forksync/bundle-{c4[:12]}", branch], \
        "the picks after the conflict were planned as a unit of their own"
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert c3 in json.loads(row["shas_json"]) and row["conflict_sha"] == c2, row["shas_json"]
    after = next(p for p in prs if p["head"]["ref"] == branch)
    assert after["number"] == chain["number"] and after["draft"] is True
    assert f"`{c3[:12]}`" in after["body"], "the chain's PR no longer lists the pick it still owes"

    # the bundle elsewhere lands by itself; nothing of the chain lands before the resolution
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert (await w.pr(chain["number"]))["merged"] is False
    assert picked(w, "main") == [c4]

    # the resolution: the chain goes on with the third pick, on the same branch, in upstream order
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    commit_files(wt, {"third_party/amd/x.cpp": source(x="12", z="1")},
                 "resolve x\n\nFile: third_party/amd/x.cpp\nReason: keeps the fork's tuning on upstream's new x\n")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    assert [p["head"]["ref"] for p in await open_prs(w.alice)] == [branch]
    assert picked(w, f"main..{branch}") == [c1, c2, c3], fork_git(w, "log", "--format=%h %s", "-6", branch)
    assert "Forksync-Conflict" not in fork_git(w, "log", "--format=%B", f"main..{branch}")
    assert fork_git(w, "show", f"{branch}:third_party/amd/x.cpp") == source(x="12", z="3").rstrip("\n")

    # it lands in the same PR: one fork commit per upstream commit
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert (await w.pr(chain["number"]))["merged"] is True
    assert await open_prs(w.alice) == []
    assert picked(w, "main") == [c4, c1, c2, c3]
    assert "Forksync-Conflict" not in fork_git(w, "log", "--format=%B", "main")


K0 = "def f():\n    return 0\ndef g():\n    return 0\n"


@pytest.fixture
async def stacked_world(fake_github, tmp_path):
    async with validated_world(fake_github, tmp_path, CONFIG,
                               files=upstream_files(**{"third_party/amd/x.cpp": source(), "python/h.py": "h = 0\n",
                                                       "python/k.py": K0})) as w:
        yield w


async def test_a_pick_that_needs_the_stopped_chain_stays_in_it_across_a_replan(stacked_world, tmp_path):
    """The chain's second pick needs an open bundle's pick (predicted on it, it stops at a conflict on
    the fork tip); its third conflicts without the chain (a line beside the second's, in another
    function) and picks cleanly after it. The plan alone, made again, would stack the third on the
    open branch as a chain of its own — a second PR stopping at a conflict that the chain's own
    picks resolve; it stays the chain's, and lands with it once the bundle landed."""
    w, up_src, upstream = stacked_world
    b0 = commit_files(up_src, {"python/h.py": "h = 1\n"}, "Speed up h (#100)")
    c1 = commit_files(up_src, {"third_party/amd/x.cpp": source(z="1")}, "AMD: set z (#101)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": source(z="2"), "python/h.py": "h = 2\n",
                               "python/k.py": K0.replace("return 0", "return 2", 1)}, "AMD: z, h and f (#102)")
    c3 = commit_files(up_src, {"python/k.py": "def f():\n    return 2\ndef g(n=3):\n    return n\n"}, "g (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    unit = f"chain-{c1[:12]}"
    branch = f"forksync/{unit}"
    bundle = f"forksync/bundle-{b0[:12]}"
    prs = await open_prs(w.alice)
    assert [p["head"]["ref"] for p in prs] == [bundle, branch]
    chain = prs[1]
    assert chain["draft"] is True and f"## ⚠️ Stopped at a conflict: upstream `{c2[:12]}`" in chain["body"]
    assert picked(w, f"main..{branch}") == [c1]
    assert json.loads(sync_store.branch_row(w.bot.store, "meta/triton", branch)["shas_json"]) == [c1, c2, c3]

    # upstream moves elsewhere: planned again while the chain is stopped
    c4 = commit_files(up_src, {"python/a.py": "a = 4\n"}, "Speed up a (#104)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    refs = [p["head"]["ref"] for p in await open_prs(w.alice)]
    assert f"forksync/chain-{c3[:12]}" not in refs, "the pick after the conflict was planned as a unit of its own"
    assert branch in refs and bundle in refs
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert c3 in json.loads(row["shas_json"]) and row["conflict_sha"] == c2, row["shas_json"]
    assert f"`{c3[:12]}`" in (await w.pr(chain["number"]))["body"]

    # a second re-plan keeps it too (the row now holds the plan that kept it)
    c5 = commit_files(up_src, {"python/e.py": "e = 5\n"}, "Add e (#105)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    assert f"forksync/chain-{c3[:12]}" not in [p["head"]["ref"] for p in await open_prs(w.alice)]
    assert c3 in json.loads(sync_store.branch_row(w.bot.store, "meta/triton", branch)["shas_json"])

    # the bundles land; the chain is built again on the new fork tip, past its conflict, with all three picks
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    await w.bot.settle()
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert picked(w, f"main..{branch}") == [c1, c2, c3], fork_git(w, "log", "--format=%h %s", "-6", branch)
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert (await w.pr(chain["number"]))["merged"] is True
    assert await open_prs(w.alice) == []
    got = picked(w, "main")
    assert sorted(got) == sorted([b0, c1, c2, c3, c4, c5]) and got.index(c1) < got.index(c2) < got.index(c3)


async def test_a_stopped_chain_rebuilt_on_the_moved_fork_keeps_the_picks_before_its_conflict(stacked_world):
    """The chain picked its first commit cleanly and stopped at its second, which needs an open
    bundle's pick; the landing of that bundle plans again, and the plan extends the open chain with
    its third commit (same function as the second). Built again on the new fork tip, the chain
    holds all three picks, in upstream order — not the second and third alone, which stop at a
    conflict again without the first and leave the chain waiting for a resolution it never needed."""
    w, up_src, upstream = stacked_world
    b0 = commit_files(up_src, {"python/h.py": "h = 1\n"}, "Speed up h (#100)")
    c1 = commit_files(up_src, {"third_party/amd/x.cpp": source(z="1")}, "AMD: set z (#101)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": source(z="2"), "python/h.py": "h = 2\n"}, "AMD: z and h (#102)")
    c3 = commit_files(up_src, {"third_party/amd/x.cpp": source(z="3")}, "AMD: z again (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    branch = f"forksync/chain-{c1[:12]}"
    bundle, chain = await open_prs(w.alice)
    assert (bundle["head"]["ref"], chain["head"]["ref"]) == (f"forksync/bundle-{b0[:12]}", branch)
    assert picked(w, f"main..{branch}") == [c1] and chain["draft"] is True

    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert (await w.pr(bundle["number"]))["merged"] is True
    assert picked(w, f"main..{branch}") == [c1, c2, c3], fork_git(w, "log", "--format=%h %s", "-6", branch)
    assert "Forksync-Conflict" not in fork_git(w, "log", "--format=%B", f"main..{branch}")
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert (await w.pr(chain["number"]))["merged"] is True
    assert picked(w, "main") == [b0, c1, c2, c3]


async def test_a_replanned_stopped_chain_lists_every_pick_its_branch_carries(world):
    """A re-plan adds the third commit to the chain stopped at its second: the plan's unit holds the
    commits it still owes, but the unit forksync publishes is the whole chain — the clean pick its
    branch carries, the conflicted one and the one after it, in upstream order — in the PR body and
    in the row the gate (picks-missing, picks-squashed) and landing (a squash merge's lost picks) read."""
    w, up_src, upstream = world
    c1, c2, c3, chain = await stop_at_the_second(w, up_src, upstream)
    branch = f"forksync/chain-{c1[:12]}"
    assert "so far the branch holds 1 pick, then the conflict commit below" in chain["body"]

    commit_files(up_src, {"python/a.py": "a = 4\n"}, "Speed up a (#104)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert json.loads(row["shas_json"]) == [c1, c2, c3] and row["conflict_sha"] == c2
    body = (await w.pr(chain["number"]))["body"]
    assert "This chain brings 3 upstream commits" in body, body
    assert "so far the branch holds 1 pick, then the conflict commit below" in body, body
    assert all(f"`{c[:12]}`" in body for c in (c1, c2, c3)), body
    assert picked(w, f"main..{branch}") == [c1]


async def test_a_relisted_stopped_chain_still_lands_after_the_bundle_it_needs(stacked_world):
    """The chain stops at a pick that needs an open bundle's pick, so its PR says it lands after that
    bundle's PR. Upstream moves elsewhere and the fork is planned again; the plan adds nothing to
    the chain, which is re-listed as in flight: it still lands after the bundle — its PR still says
    so — until the bundle landed."""
    w, up_src, upstream = stacked_world
    b0 = commit_files(up_src, {"python/h.py": "h = 1\n"}, "Speed up h (#100)")
    c1 = commit_files(up_src, {"third_party/amd/x.cpp": source(z="1")}, "AMD: set z (#101)")
    commit_files(up_src, {"third_party/amd/x.cpp": source(z="2"), "python/h.py": "h = 2\n"}, "AMD: z and h (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    bundle, chain = await open_prs(w.alice)
    assert (bundle["head"]["ref"], chain["head"]["ref"]) == (f"forksync/bundle-{b0[:12]}", f"forksync/chain-{c1[:12]}")
    lands_after = f"**Lands after** #{bundle['number']} (`bundle-{b0[:12]}`)"
    assert lands_after in chain["body"] and chain["draft"] is True

    commit_files(up_src, {"python/e.py": "e = 5\n"}, "Add e (#105)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    assert lands_after in (await w.pr(chain["number"]))["body"], "the re-listed chain forgot what it lands after"

    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert (await w.pr(bundle["number"]))["merged"] is True
    assert "**Lands after**" not in (await w.pr(chain["number"]))["body"]


async def test_a_chain_resolved_by_hand_waits_for_the_bundle_it_lands_after(stacked_world, tmp_path):
    """A person resolves the chain's conflict by hand while the bundle its pick needs is still open
    (upstream moved meanwhile, re-listing the chain). Approved, it is not merged before that bundle:
    the gate holds it (``lands-after``), and the bundle lands first — upstream's changes of h.py in
    upstream order."""
    w, up_src, upstream = stacked_world
    b0 = commit_files(up_src, {"python/h.py": "h = 1\n"}, "Speed up h (#100)")
    commit_files(up_src, {"third_party/amd/x.cpp": source(z="1")}, "AMD: set z (#101)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": source(z="2"), "python/h.py": "h = 2\n"}, "AMD: z and h (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    bundle, chain = await open_prs(w.alice)
    branch = chain["head"]["ref"]
    commit_files(up_src, {"python/e.py": "e = 5\n"}, "Add e (#105)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()

    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    commit_files(wt, {"python/h.py": "h = 2\n"}, "resolve h\n\nFile: python/h.py\nReason: upstream's h\n")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert (await w.pr(chain["number"]))["merged"] is False, "merged before the bundle it lands after"
    head = (await w.pr(chain["number"]))["head"]["sha"]
    summary = w.run_of(head, "forksync/gate").output["summary"]
    assert "`lands-after`" in summary and f"`bundle-{b0[:12]}`" in summary, summary

    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert (await w.pr(bundle["number"]))["merged"] is True
    got = picked(w, "main")
    assert b0 in got and (c2 not in got or got.index(b0) < got.index(c2)), got
