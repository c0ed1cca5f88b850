"""A fork that syncs into another branch than GitHub's default one (``fork.ref: fork-main`` while
the repository's default branch stays ``main``, where its ``.github/forksync.yml`` is read): sync
PRs go into ``fork-main``, and the gate acts on them there — suites, gate check run, merge by
itself, landing — while ``main`` is left as it is."""
from __future__ import annotations

import pytest

from bot.app import schedules
from bot.sync import store as sync_store
from tests.support.e2e import move_upstream, open_sync_prs
from tests.support.github import git
from tests.support.sync_world import CONFIG, validated_world
from tests.support.validation_world import gate_failing, tick_ctx

FORK_MAIN = CONFIG.replace("fork:\n  ref: main\n", "fork:\n  ref: fork-main\n")
NO_FORK_REF = CONFIG.replace("fork:\n  ref: main\n", "")


@pytest.fixture
async def world(fake_github, tmp_path):
    assert FORK_MAIN != CONFIG
    async with validated_world(fake_github, tmp_path, FORK_MAIN, branches=("fork-main",)) as w:
        yield w



def tip(w, branch: str) -> str | None:
    return w.fake.state.repo("meta", "triton").git.ref(f"refs/heads/{branch}")


async def sync_into(world, trunk: str):
    """Upstream moves by a bundle's commit and a chain's; both sync PRs open into ``trunk``:
    ``(w, main's tip before, c1, c2, bundle PR, chain PR)``."""
    w, up_src, upstream = world
    main = tip(w, "main")
    c1, c2 = move_upstream(up_src, upstream)
    await w.bot.settle()
    bundle, chain = await open_sync_prs(w.alice)
    assert [p["base"]["ref"] for p in (bundle, chain)] == [trunk, trunk]
    return w, main, c1, c2, bundle, chain


async def test_sync_prs_into_the_configured_fork_ref_are_gated_and_merged(world):
    w, main, c1, c2, bundle, chain = await sync_into(world, "fork-main")

    notes = await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert any("gate: Ready to merge" in n for n in notes), notes
    assert w.run_of(bundle["head"]["sha"], "forksync/L1/unit").conclusion == "success"
    assert (await w.pr(bundle["number"]))["merged"] is True
    assert gate_failing(w, chain["head"]["sha"]) == ["approval-missing"]       # carol owns amd
    assert tip(w, f"forksync/bundle-{c1[:12]}") is None                        # landed: its branch deleted
    st = sync_store.load_status(w.bot.store, "meta/triton")
    assert (st.fork_head, st.frontier) == (tip(w, "fork-main"), c1)

    await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert (await w.pr(chain["number"]))["merged"] is True
    assert [u["status"] for u in w.fake.requests_for("pulls/update-branch")] == [202]   # fork-main merged in
    assert await open_sync_prs(w.alice) == []
    st = sync_store.load_status(w.bot.store, "meta/triton")
    assert (st.backlog, st.frontier) == (0, c2)
    assert tip(w, "main") == main
    assert w.bot.deliveries("dead") == []


async def test_a_pr_into_the_default_branch_is_not_the_gates_when_the_fork_syncs_elsewhere(world):
    """The gate acts on PRs into the branch units land on: a PR into ``main`` here is turned away
    with the note saying where forksync merges, as a PR into any other base is."""
    w, _, _ = world
    w.work = w.work / "clone"
    git(w.work.parent, "clone", "-q", str(w.fork.path), str(w.work))
    head = w.push_branch("feature/x", {"NOTES.md": "a note\n"}, "Add a note", forksync=False)
    pr = await w.open_pr("feature/x")
    await w.bot.settle()
    assert (w.run_of(head, "forksync/gate"), w.run_of(head, "forksync/L1/unit")) == (None, None)
    note = (f"#{pr['number']}: not validated: into `main`, not `fork-main`, the branch forksync syncs (fork.ref); "
            "forksync runs, updates and merges only PRs into it")
    assert [d.outcome for d in w.bot.deliveries("done") if d.event == "pull_request"] == [note]
    assert await w.svc.evaluate(await tick_ctx(w), "meta/triton", pr["number"]) == [note]
    assert w.run_of(head, "forksync/gate") is None


async def test_a_units_row_without_a_recorded_base_stands_for_the_configured_fork_ref(world):
    """Rows written before the unit's base was recorded (``base`` empty) stand for the branch
    forksync syncs, ``fork.ref`` of the configuration (``fork-main``), never GitHub's default
    branch (``main``, into which no sync PR ever went): the bundle the gate merges lands (its
    branch deleted, its row ended), ``/forksync resolve`` asks of the chain, a person's push to
    the chain is checked as its resolution, and closing the chain unmerged ends it, a person's
    commits kept."""
    w, up_src, upstream = world
    c1, c2 = move_upstream(up_src, upstream)
    await w.bot.settle()
    bundle, chain = await open_sync_prs(w.alice)
    branches = (f"forksync/bundle-{c1[:12]}", f"forksync/chain-{c2[:12]}")
    assert (bundle["head"]["ref"], chain["head"]["ref"]) == branches

    def forget_base(branch: str) -> None:
        """Make the branch's row one written before the column (a sync writes it again)."""
        row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
        sync_store.save_branch(w.bot.store, **{**row, "base": ""})

    assert [sync_store.branch_row(w.bot.store, "meta/triton", b)["base"] for b in branches] == ["fork-main"] * 2
    forget_base(branches[0])
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert (await w.pr(bundle["number"]))["merged"] is True
    assert tip(w, branches[0]) is None
    assert sync_store.branch_row(w.bot.store, "meta/triton", branches[0])["state"] == "merged"

    forget_base(branches[1])
    await w.comment(chain["number"], "/forksync resolve")
    replies = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{chain['number']}/comments")]
    assert [r.splitlines()[1] for r in replies if r.startswith("<!-- forksync:reply:")] == [
        "@alice `/forksync resolve`: this chain is not stopped at a conflict; nothing to resolve."]

    w.work = w.work / "clone"
    git(w.work.parent, "clone", "-q", str(w.fork.path), str(w.work))
    head = w.push_branch(branches[1], {"third_party/amd/y.cpp": "int y;\n"}, "Add y beside x",
                         base=branches[1], forksync=False)
    await w.bot.settle()
    replies = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{chain['number']}/comments")]
    assert [r for r in replies if r.startswith(f"<!-- forksync:resolution:{head} -->")] == [
        f"<!-- forksync:resolution:{head} -->\nResolution on `{head[:12]}` verified: no conflict markers, all 1 "
        "`Upstream-Commit` trailers kept. The chain continues.\n"]

    await w.comment(chain["number"], "defer: until the AMD backend is reworked")
    forget_base(branches[1])
    await w.alice.patch(f"/repos/meta/triton/pulls/{chain['number']}", data={"state": "closed"})
    await w.bot.settle()
    row = sync_store.branch_row(w.bot.store, "meta/triton", branches[1])
    assert (row["state"], row["pr"]) == ("closed", chain["number"])
    assert tip(w, branches[1]) is None
    # the person's commit is kept (under the head the branch had: the gate merged fork-main in)
    [(kept, at)] = [(r, s) for r, s in w.fake.state.repo("meta", "triton").git.refs().items()
                    if r.startswith(f"refs/forksync/closed/chain-{c2[:12]}/")]
    assert kept == f"refs/forksync/closed/chain-{c2[:12]}/{at[:12]}"
    assert git(w.fork.path, "merge-base", head, at) == head
    assert w.bot.deliveries("dead") == []


async def test_without_fork_ref_forksync_syncs_into_the_forks_default_branch(fake_github, tmp_path):
    """``fork.ref`` left out of forksync.yml is the fork's default branch on GitHub (``master``
    here, with a ``main`` beside it): sync PRs go into it, the gate merges there, the ledger's
    fork tip is its tip, and ``main`` is left as it is."""
    assert "fork:" in CONFIG and "fork:" not in NO_FORK_REF
    async with validated_world(fake_github, tmp_path, NO_FORK_REF, branches=("master",), default_branch="master") as world:
        w, main, c1, c2, bundle, chain = await sync_into(world, "master")
        assert [sync_store.branch_row(w.bot.store, "meta/triton", p["head"]["ref"])["base"]
                for p in (bundle, chain)] == ["master", "master"]
        notes = await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
        assert any("gate: Ready to merge" in n for n in notes), notes
        assert (await w.pr(bundle["number"]))["merged"] is True
        st = sync_store.load_status(w.bot.store, "meta/triton")
        assert (st.fork_head, st.frontier) == (tip(w, "master"), c1)
        assert tip(w, "main") == main
        assert w.bot.deliveries("dead") == []
