"""A unit whose dependency lands, on the local GitHub: the chain a person resolved by hand while the
bundle its pick needs was open is held by the gate (``lands-after``); once that bundle lands, the
chain's gate is decided again at once — its check, its PR and the status issue say it is no longer
waiting — and the person's resolution is neither lost nor overwritten."""
from __future__ import annotations

from bot.app import schedules
from bot.sync import store as sync_store
from tests.e2e.test_conflict_owed import picked, source, stacked_world  # noqa: F401
from tests.support.e2e import status_issue
from tests.support.github import commit_files, git
from tests.support.sync_world import fork_git, open_prs
from tests.support.validation_world import tick_ctx


async def resolved_by_hand(w, up_src, upstream, tmp_path, h: str = "h = 2\n"):
    """The chain stops at a pick that needs the open bundle's pick; upstream moves (a re-plan); alice
    resolves the conflict on the branch (``h``: what python/h.py holds after) and carol approves.
    ``(b0, c1, c2, bundle PR, chain PR)``."""
    b0 = commit_files(up_src, {"python/h.py": "h = 1\n"}, "Speed up h (#100)")
    c1 = commit_files(up_src, {"third_party/amd/x.cpp": source(z="1")}, "AMD: set z (#101)")
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
    commit_files(wt, {"python/h.py": h}, "resolve h\n\nFile: python/h.py\nReason: upstream's h\n")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert (await w.pr(chain["number"]))["merged"] is False, "merged before the bundle it lands after"
    return b0, c1, c2, bundle, chain


async def test_the_chain_resolved_by_hand_lands_once_its_bundle_lands_without_another_event(stacked_world, tmp_path):  # noqa: F811
    w, up_src, upstream = stacked_world
    b0, c1, c2, bundle, chain = await resolved_by_hand(w, up_src, upstream, tmp_path)
    branch = chain["head"]["ref"]
    held = (await w.pr(chain["number"]))["head"]["sha"]
    assert "`lands-after`" in w.run_of(held, "forksync/gate").output["summary"]
    assert fork_git(w, "show", f"{branch}:python/h.py") == "h = 2"
    kept = fork_git(w, "for-each-ref", "--format=%(refname)", "refs/forksync/resolutions/")
    assert kept, "the person's resolution commits are kept nowhere"
    # the status issue says on the chain's line what it waits for, and on the bundle's that one waits
    [issue] = await status_issue(w.alice)
    bundle_id = bundle["head"]["ref"].rsplit("/", 1)[-1]
    lines = {n: next(x for x in issue["body"].splitlines() if f"[#{n}]" in x) for n in (bundle["number"], chain["number"])}
    assert lines[chain["number"]].endswith(f"; waits for #{bundle['number']} (`{bundle_id}`))"), lines
    assert lines[bundle["number"]].endswith("; 1 unit waits for it)"), lines

    # the bundle lands (the tick merges it); the landing alone decides the chain's gate again
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert (await w.pr(bundle["number"]))["merged"] is True
    await w.bot.settle()
    pr = await w.pr(chain["number"])
    run = w.run_of(pr["head"]["sha"], "forksync/gate")
    assert run is not None and run.status == "completed", "the chain's gate was not decided again"
    assert "`lands-after`" not in run.output["summary"], run.output["summary"]
    # the status issue lists the chain as open and waiting on nothing: the landed bundle is gone from it
    [issue] = await status_issue(w.alice)
    line = next(x for x in issue["body"].splitlines() if f"#{chain['number']}]" in x)
    assert f"`{branch.rsplit('/', 1)[-1]}` (chain, " in line and line.endswith(", open)"), line
    assert "closed unmerged" not in line and "lands after" not in line, line
    assert bundle["head"]["ref"].rsplit("/", 1)[-1] not in issue["body"] and f"#{bundle['number']}]" not in issue["body"], issue["body"]
    # the fork now has what the resolution stood in for: the chain is built again on it, each pick
    # as upstream made it, with the person's h.py; their commits stay kept
    assert picked(w, f"main..{branch}") == [c1, c2], fork_git(w, "log", "--format=%h %s", "-4", branch)
    assert "[RESOLVED]" not in fork_git(w, "log", "--format=%s", f"main..{branch}")
    assert fork_git(w, "merge-base", "--is-ancestor", "main", branch) == ""
    assert fork_git(w, "show", f"{branch}:python/h.py") == "h = 2"
    assert fork_git(w, "for-each-ref", "--format=%(refname)", "refs/forksync/resolutions/") == kept
    # a new head: approved again, it lands — the bundle first
    assert "`approval-missing`" in run.output["summary"], run.output["summary"]
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert (await w.pr(chain["number"]))["merged"] is True
    got = picked(w, "main")
    assert got.index(b0) < got.index(c2), got
    assert fork_git(w, "show", "main:python/h.py") == "h = 2"
    assert sync_store.branch_row(w.bot.store, "meta/triton", branch)["state"] == "merged"


async def test_a_resolution_the_landed_bundle_does_not_reproduce_is_left_to_the_person(stacked_world, tmp_path):  # noqa: F811
    """The person's resolution is their own (h = 3, not upstream's h = 2): built again on the fork
    that now has the bundle, the chain would say h = 2 — so it is not taken. The branch keeps the
    folded resolution, the gate is decided again at once and says why it cannot merge (the fork
    merged into the branch conflicts), and nothing lands."""
    w, up_src, upstream = stacked_world
    b0, c1, c2, bundle, chain = await resolved_by_hand(w, up_src, upstream, tmp_path, h="h = 3\n")
    branch = chain["head"]["ref"]
    held = (await w.pr(chain["number"]))["head"]["sha"]
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert (await w.pr(bundle["number"]))["merged"] is True
    await w.bot.settle()
    pr = await w.pr(chain["number"])
    assert pr["head"]["sha"] == held and pr["merged"] is False
    assert fork_git(w, "show", f"{branch}:python/h.py") == "h = 3"
    run = w.run_of(held, "forksync/gate")
    summary = run.output["summary"]
    assert "`lands-after`" not in summary and "`stale-base`" in summary, summary
    assert run.conclusion == "failure", summary


async def merged_unseen(w, bundle: dict, chain: dict) -> None:
    """carol merges the bundle and every other open PR but the chain's herself, and their
    ``pull_request.closed`` events are lost on the way: only a poll finds the landings."""
    others = [p for p in await open_prs(w.alice) if p["number"] not in (bundle["number"], chain["number"])]
    w.fake.webhooks.auto_deliver = False
    for p in others + [bundle]:
        await w.people["carol"].put(f"/repos/meta/triton/pulls/{p['number']}/merge", data={"merge_method": "rebase"})
    w.fake.webhooks.held.clear()
    w.fake.webhooks.auto_deliver = True


async def test_a_landing_found_by_the_poll_decides_the_waiting_gate_at_the_next_reconcile(stacked_world, tmp_path):  # noqa: F811
    """carol merges the bundle herself and GitHub's ``pull_request.closed`` never reaches forksync:
    the poller's sync lands it (``land_closed``), and the reconcile tick that follows decides the
    chain's gate again — its ``lands-after`` no longer holds — instead of leaving it red until an
    unrelated event. (alice's own h = 3 keeps the chain from being built again, whose push would
    decide the gate anyway.)"""
    w, up_src, upstream = stacked_world
    b0, c1, c2, bundle, chain = await resolved_by_hand(w, up_src, upstream, tmp_path, h="h = 3\n")
    held = (await w.pr(chain["number"]))["head"]["sha"]
    assert "`lands-after`" in w.run_of(held, "forksync/gate").output["summary"]
    await merged_unseen(w, bundle, chain)
    assert (await w.pr(bundle["number"]))["merged"] is True
    await w.bot.svc.sync(await tick_ctx(w), "meta/triton", reason="poll")
    assert sync_store.branch_row(w.bot.store, "meta/triton", bundle["head"]["ref"])["state"] == "merged"
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    await w.bot.settle()
    pr = await w.pr(chain["number"])
    assert pr["head"]["sha"] == held
    run = w.run_of(held, "forksync/gate")
    assert "`lands-after`" not in run.output["summary"] and "`stale-base`" in run.output["summary"], run.output["summary"]


async def test_a_rebuild_that_does_not_keep_the_resolution_is_tried_once_per_fork_tip(stacked_world, tmp_path, monkeypatch):  # noqa: F811
    """Building the chain again (every pick, then a merge compared with the branch's) is refused for
    alice's own h = 3 at this fork tip; the syncs that follow while neither the fork nor the branch
    moved do not try it again. The fork moving tries it again."""
    from bot.git import resolution
    w, up_src, upstream = stacked_world
    b0, c1, c2, bundle, chain = await resolved_by_hand(w, up_src, upstream, tmp_path, h="h = 3\n")
    branch = chain["head"]["ref"]
    held = (await w.pr(chain["number"]))["head"]["sha"]
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    assert (await w.pr(bundle["number"]))["merged"] is True
    await w.bot.settle()
    assert (await w.pr(chain["number"]))["head"]["sha"] == held
    tried: list[str] = []
    real = resolution.rebuild_keeps

    def counted(git_dir, resolved, fork, rebuilt):
        tried.append(fork)
        return real(git_dir, resolved, fork, rebuilt)

    monkeypatch.setattr(resolution, "rebuild_keeps", counted)
    for _ in range(2):
        await w.bot.svc.sync(await tick_ctx(w), "meta/triton", reason="poll")
    assert tried == [], f"built again {len(tried)} times at the fork tip it was refused at"
    assert (await w.pr(chain["number"]))["head"]["sha"] == held
    # the fork moves (an unrelated commit lands): tried again, once, at the new tip
    commit_files(up_src, {"python/e.py": "e = 6\n"}, "Add e again (#106)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    await w.bot.settle()
    main = fork_git(w, "rev-parse", "main")
    await w.bot.svc.sync(await tick_ctx(w), "meta/triton", reason="poll")
    assert tried.count(main) <= 1 and fork_git(w, "show", f"{branch}:python/h.py") == "h = 3", tried


async def test_the_reconcile_tick_finds_the_held_gate_from_its_data_not_its_words(stacked_world, tmp_path, monkeypatch):  # noqa: F811
    """The summary is text a person reads, its words the template's: reworded (here ``lands-after``
    shown as ``waits-for-landing``), the tick still finds the gate that held the chain for the
    bundle — from the check run's data — and decides it again once the poll found the bundle landed."""
    from bot.validation import checks

    shown = checks.render_summary
    monkeypatch.setattr(checks, "render_summary",
                        lambda decision, pr: shown(decision, pr).replace("`lands-after`", "`waits-for-landing`"))
    w, up_src, upstream = stacked_world
    b0, c1, c2, bundle, chain = await resolved_by_hand(w, up_src, upstream, tmp_path, h="h = 3\n")
    held = (await w.pr(chain["number"]))["head"]["sha"]
    summary = w.run_of(held, "forksync/gate").output["summary"]
    assert "`waits-for-landing`" in summary and "`lands-after`" not in summary, summary
    await merged_unseen(w, bundle, chain)
    await w.bot.svc.sync(await tick_ctx(w), "meta/triton", reason="poll")
    notes = await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    await w.bot.settle()
    assert f"#{chain['number']}: the units it lands after have landed since the gate" in notes, notes
    summary = w.run_of(held, "forksync/gate").output["summary"]
    assert "`waits-for-landing`" not in summary and "`stale-base`" in summary, summary
