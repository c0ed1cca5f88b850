"""A PR from forksync's sync branch into another base than the fork's default branch (a person's
``release`` backport, say) is not something the gate acts on, whichever event brings it up: no
suites run for it, no ``update-branch`` merges ``release`` into forksync's branch, nothing is
merged into ``release``, and the ``forksync/gate`` check run on the branch's head (the unit's own
PR shows it) is not replaced by a decision about the other base. At most a note says why.

And ``publish`` never takes such a PR for the unit's: the unit's PR is found among the PRs into
the default branch only, so a person's PR into ``release`` keeps its title and body, and the
branch's row keeps naming the unit's PR."""
from __future__ import annotations

import json
import subprocess

import pytest

from bot.app import schedules
from bot.fakegithub.events import check_run_event as emit_check_run
from bot.sync import store as sync_store
from tests.support.e2e import adopt_and_move_upstream, job_context, open_sync_prs
from tests.support.github import commit_files, git
from tests.support.validation_world import L3_CONFIG, check_run_event, close_world, fork_files, gate_failing, make_world, tick_ctx

BRANCH = "forksync/bundle-rel"


@pytest.fixture
async def vworld(fake_github, tmp_path):
    w = await make_world(fake_github, tmp_path)
    yield w
    await close_world(w)


def tip(w, branch: str) -> str | None:
    return w.fake.state.repo("meta", "triton").git.ref(f"refs/heads/{branch}")


def gate_runs(w, sha: str) -> list:
    return [r for r in w.fake.state.repo("meta", "triton").check_runs.values()
            if r.head_sha == sha and r.name == "forksync/gate"]


async def release_pr(w, *, ahead: bool) -> dict:
    """``release`` (one commit ahead of main when ``ahead``: the release PR is then behind its
    base, which the gate would answer with ``update-branch``) and alice's PR from forksync's
    branch into it."""
    if ahead:
        w.push_branch("release", {"RELEASE.md": "r\n"}, "Release notes", forksync=False)
    else:
        await w.alice.post("/repos/meta/triton/git/refs", data={"ref": "refs/heads/release", "sha": tip(w, "main")})
    pr = await w.alice.post("/repos/meta/triton/pulls", data={"title": "backport", "head": BRANCH, "base": "release"})
    await w.bot.settle()
    return pr


async def unit_and_release_prs(w, *, ahead: bool = True) -> tuple[str, dict, dict]:
    """forksync's bundle touching carol's ``amd`` area (its gate waits for her approval), its PR
    into main recorded as the unit's, and alice's second PR from the branch into ``release``."""
    head = w.push_branch(BRANCH, {"amd/kernel.txt": "v2\n"}, "Touch amd")
    unit = await w.open_pr(BRANCH)
    sync_store.save_branch(w.bot.store, **{**sync_store.branch_row(w.bot.store, "meta/triton", BRANCH),
                                           "pr": unit["number"]})
    await w.bot.settle()
    assert gate_failing(w, head) == ["approval-missing"]
    return head, unit, await release_pr(w, ahead=ahead)


async def other_ci_completes(w, head: str) -> None:
    """Another App's check run completes on ``head``: GitHub lists every open PR with that head,
    whatever its base, in ``pull_requests``."""
    ci = w.fake.create_app(app_id=123, slug="ci-a", name="CI A")
    run = w.fake.add_check_run(w.fork, head, "ci/x", "success", app=ci)
    emit_check_run(w.fake, w.fake.state.repo("meta", "triton"), run, "completed", ci.bot)
    await w.bot.settle()


async def trigger(w, how: str, head: str, rel: dict) -> None:
    if how == "check-run":
        await other_ci_completes(w, head)
    elif how == "check-run-unlisted":            # a run GitHub did not associate: matched by branch name
        await check_run_event(w, head, BRANCH)
        await w.bot.settle()
    elif how == "review":
        await w.people["carol"].post(f"/repos/meta/triton/pulls/{rel['number']}/reviews", data={"event": "APPROVE"})
        await w.bot.settle()
    elif how in ("retest", "merge"):
        await w.comment(rel["number"], f"/forksync {how}")
    elif how == "signoff amd":                  # carol owns amd
        await w.people["carol"].post(f"/repos/meta/triton/issues/{rel['number']}/comments",
                                     data={"body": "/forksync signoff amd"})
        await w.bot.settle()
    elif how == "unhold":
        issue = await w.alice.post("/repos/meta/triton/issues", data={"title": "ops", "body": "x"})
        await w.comment(issue["number"], "/forksync unhold")
    elif how == "reconcile":
        await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
        await w.bot.settle()
    else:  # pragma: no cover
        raise AssertionError(how)


def assert_nothing_done(w, head: str, rel: dict, *, gate_before=None) -> None:
    assert w.bot.deliveries("dead") == []
    assert w.fake.requests_for("pulls/update-branch") == []
    assert w.fake.requests_for("pulls/merge") == []
    assert tip(w, BRANCH) == head
    assert w.fake.state.repo("meta", "triton").pulls[rel["number"]].merged is False
    if gate_before is None:
        assert gate_runs(w, head) == []
    else:       # the unit's gate run, as its own PR's evaluation left it
        [run] = gate_runs(w, head)
        assert (run.id, run.status, run.conclusion, run.output) == gate_before


def gate_state(w, head: str):
    [run] = gate_runs(w, head)
    return run.id, run.status, run.conclusion, dict(run.output)


@pytest.mark.parametrize("how", ["check-run", "check-run-unlisted", "review", "retest", "merge", "signoff amd",
                                 "unhold", "reconcile"])
async def test_a_second_pr_from_forksyncs_branch_into_another_base_gets_no_gate_action(vworld, how):
    """Whatever brings alice's PR into ``release`` up — another CI's check run listing it, a
    review, ``/forksync`` commands on it, a hold change, the reconcile tick — release is not
    merged into forksync's branch, nothing runs or merges, and the unit's gate run stays as the
    unit's PR left it."""
    w = vworld
    head, unit, rel = await unit_and_release_prs(w)
    before = gate_state(w, head)
    l1 = len([r for r in w.fake.state.repo("meta", "triton").check_runs.values() if r.name == "forksync/L1/unit"])
    await trigger(w, how, head, rel)
    assert_nothing_done(w, head, rel, gate_before=before)
    assert len([r for r in w.fake.state.repo("meta", "triton").check_runs.values()
                if r.name == "forksync/L1/unit"]) == l1
    assert (await w.pr(unit["number"]))["state"] == "open"


@pytest.mark.parametrize("how", ["check-run", "check-run-unlisted", "unhold", "merge", "retest"])
@pytest.mark.parametrize("ahead", [True, False], ids=["release-ahead", "release-behind"])
async def test_a_pr_into_another_base_on_a_recorded_branch_without_a_unit_pr_is_left_alone(vworld, how, ahead):
    """forksync recorded pushing the branch but has no PR for it yet (its row names none), and
    alice opens one into ``release``: it is still not a sync PR into the branch forksync syncs, so no
    event makes forksync update it from ``release`` (release ahead) or merge it there."""
    w = vworld
    head = w.push_branch(BRANCH, {"NOTES.md": "n\n"}, "Note")
    rel = await release_pr(w, ahead=ahead)
    await trigger(w, how, head, rel)
    assert_nothing_done(w, head, rel)
    assert not [r for r in w.fake.state.repo("meta", "triton").check_runs.values() if r.name.startswith("forksync/")]


async def test_the_commands_reply_why_and_the_check_run_delivery_notes_it(vworld):
    w = vworld
    head = w.push_branch(BRANCH, {"NOTES.md": "n\n"}, "Note")
    rel = await release_pr(w, ahead=False)
    await w.comment(rel["number"], "/forksync merge")
    replies = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{rel['number']}/comments")
               if "forksync:reply" in c["body"]]
    assert len(replies) == 1 and "into `release`, not `main`, the branch forksync syncs (fork.ref)" in replies[0], replies
    await other_ci_completes(w, head)
    [done] = [d.outcome for d in w.bot.deliveries("done") if d.event == "check_run" and "loop guard" not in d.outcome]
    assert f"#{rel['number']}: not validated: into `release`, not `main`, the branch forksync syncs (fork.ref)" in done, done


async def test_publish_does_not_adopt_a_persons_pr_into_another_base(world):
    """alice opens a PR from forksync's bundle branch into ``release`` (newer than the unit's own
    PR, so GitHub lists it first); the next sync refreshes the unit's PR into main and leaves
    hers as she wrote it, and the branch's row still names the unit's PR."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, chain = await open_sync_prs(alice)
    branch = bundle["head"]["ref"]
    base = (await alice.getitem("/repos/meta/triton/branches/main"))["commit"]["sha"]
    await alice.post("/repos/meta/triton/git/refs", data={"ref": "refs/heads/release", "sha": base})
    mine = await alice.post("/repos/meta/triton/pulls",
                            data={"title": "backport to release", "head": branch, "base": "release", "body": "mine"})
    await bot.settle()
    # the unit's PR body changed since (a person edited it): the sync writes it again
    await alice.patch(f"/repos/meta/triton/pulls/{bundle['number']}", data={"body": "edited"})
    await bot.settle()
    ctx = await job_context(bot)(inst.id)
    await bot.svc.sync(ctx, "meta/triton", reason="test")
    await bot.settle()

    assert bot.deliveries("dead") == []
    after = await alice.getitem(f"/repos/meta/triton/pulls/{mine['number']}")
    assert (after["title"], after["body"], after["state"]) == ("backport to release", "mine", "open")
    assert [lab["name"] for lab in after.get("labels") or []] == []
    unit = await alice.getitem(f"/repos/meta/triton/pulls/{bundle['number']}")
    assert (unit["title"], unit["state"]) == (bundle["title"], "open") and unit["body"] != "edited"
    assert sync_store.branch_row(bot.store, "meta/triton", branch)["pr"] == bundle["number"]
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[0] == bundle["head"]["sha"]


async def test_a_queued_l3_run_of_a_pr_moved_to_another_base_is_not_run(fake_github, tmp_path):
    """``/forksync l3`` was queued while the PR went into main; then its base is changed to
    ``release``. The tick cancels the run and says why on the PR: no L3 check run on forksync's
    head, and nothing of ``release`` merged into its branch."""
    w = await make_world(fake_github, tmp_path, files=fork_files(config=L3_CONFIG))
    try:
        head = w.push_branch("forksync/chain-llvm", {"llvm/pin.txt": "llvm 22\n"}, "Bump the LLVM pin")
        pr = await w.open_pr("forksync/chain-llvm")
        await w.bot.settle()
        await w.comment(pr["number"], "/forksync l3 heavy")
        w.push_branch("release", {"RELEASE.md": "r\n"}, "Release notes", forksync=False)
        await w.alice.patch(f"/repos/meta/triton/pulls/{pr['number']}", data={"base": "release"})
        await w.bot.settle()
        notes = await schedules.l3_tick(await tick_ctx(w), "meta/triton")
        await w.bot.settle()
        assert notes[0] == (f"L3 heavy@cpu on #{pr['number']}: not run, the PR is into release, not main, the branch "
                            "forksync syncs (fork.ref)")
        assert w.run_of(head, "forksync/L3/heavy") is None
        assert w.fake.requests_for("pulls/update-branch") == []
        assert tip(w, "forksync/chain-llvm") == head
        replies = [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{pr['number']}/comments")
                   if c["user"]["login"] == "forksync[bot]"]
        assert any("the PR is into `release`, not `main`, the branch forksync syncs (fork.ref)" in r for r in replies), replies
    finally:
        await close_world(w)


def notes_of(fork_path, sha: str) -> str:
    p = subprocess.run(["git", f"--git-dir={fork_path}", "notes", "--ref", "refs/notes/forksync", "show", sha],
                       capture_output=True, text=True)
    return p.stdout


async def unit_without_its_pr(fake, bot, alice, up_src, upstream, fork, inst, kind: str = "") -> tuple[list[str], dict]:
    """Upstream moves and forksync pushes both units (a bundle and a chain), but GitHub refuses
    their PRs (403): each unit's branch is forksync's, recorded, with no PR in its row yet.
    Returns the upstream commits and row of the unit of ``kind`` (the first when "")."""
    fake.faults.add("POST", "/repos/meta/triton/pulls", 403, "Resource not accessible by integration", name="pr-403",
                    times=2)
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    rows = [sync_store.branch_row(bot.store, "meta/triton", b)
            for b in (f"forksync/bundle-{c1[:12]}", f"forksync/chain-{c2[:12]}")]
    assert [(r["state"], r["pr"], r["blocked_step"]) for r in rows] == [("open", 0, "pr")] * 2
    row = next(r for r in rows if r["kind"] == (kind or r["kind"]))
    return json.loads(row["shas_json"]), row


@pytest.mark.parametrize("how", ["closed", "merged"])
async def test_a_pr_into_another_base_from_a_units_branch_without_its_pr_lands_and_closes_nothing(world, how):
    """forksync pushed a unit's branch but has no PR for it yet (GitHub refused it; a crash after
    the push leaves the same row), and alice opens one from that branch into ``release``, then
    closes or merges it. It was never the unit's PR: the unit's upstream commits get no decision
    in ``refs/notes/forksync``, forksync's branch stays where forksync pushed it, the row stays
    open, and the next sync opens the unit's own PR into main."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    shas, row = await unit_without_its_pr(fake, bot, alice, up_src, upstream, fork, inst)
    branch = row["branch"]
    base = (await alice.getitem("/repos/meta/triton/branches/main"))["commit"]["sha"]
    await alice.post("/repos/meta/triton/git/refs", data={"ref": "refs/heads/release", "sha": base})
    pr = await alice.post("/repos/meta/triton/pulls", data={"title": "backport", "head": branch, "base": "release"})
    await bot.settle()
    if how == "merged":
        await alice.put(f"/repos/meta/triton/pulls/{pr['number']}/merge", data={"merge_method": "merge"})
    else:
        await alice.post(f"/repos/meta/triton/issues/{pr['number']}/comments", data={"body": "not now"})
        await alice.patch(f"/repos/meta/triton/pulls/{pr['number']}", data={"state": "closed"})
    await bot.settle()

    assert bot.deliveries("dead") == []
    assert [notes_of(fork.path, s) for s in shas] == ["" for _ in shas]
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[:1] == [row["pushed_tip"]]
    assert sync_store.branch_row(bot.store, "meta/triton", branch) == row
    replies = [c async for c in alice.getiter(f"/repos/meta/triton/issues/{pr['number']}/comments")
               if c["user"]["login"] == "forksync[bot]"]
    assert replies == []
    [closed] = [d.outcome for d in bot.deliveries("done") if d.event == "pull_request" and d.action == "closed"]
    assert f"#{pr['number']}: {branch} is not forksync's sync branch (into `release`, not the unit's base `main`)" \
        in closed, closed
    await bot.svc.sync(await job_context(bot)(inst.id), "meta/triton", reason="test: again")
    await bot.settle()
    assert branch in [p["head"]["ref"] for p in await open_sync_prs(alice)]
    assert sync_store.branch_row(bot.store, "meta/triton", branch)["state"] == "open"


async def test_a_push_to_a_chain_without_its_pr_is_no_resolution_for_a_pr_into_another_base(world, tmp_path):
    """forksync's chain has no PR yet; alice opens one from its branch into ``release`` and pushes
    a commit to the branch. Her PR is not the chain's: forksync neither folds nor verifies her
    commit as the chain's resolution, comments nothing on her PR and records nothing in the row."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    _, row = await unit_without_its_pr(fake, bot, alice, up_src, upstream, fork, inst, kind="chain")
    branch = row["branch"]
    base = (await alice.getitem("/repos/meta/triton/branches/main"))["commit"]["sha"]
    await alice.post("/repos/meta/triton/git/refs", data={"ref": "refs/heads/release", "sha": base})
    pr = await alice.post("/repos/meta/triton/pulls", data={"title": "backport", "head": branch, "base": "release"})
    await bot.settle()
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(fork.path), str(wt))
    mine = commit_files(wt, {"third_party/amd/x.cpp": "int x = 3;\n"}, "Backport tweak")
    git(wt, "push", "-q", "origin", f"{branch}:refs/heads/{branch}")
    await bot.settle()

    assert bot.deliveries("dead") == []
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[:1] == [mine]   # nothing folded
    assert sync_store.branch_row(bot.store, "meta/triton", branch) == row
    replies = [c async for c in alice.getiter(f"/repos/meta/triton/issues/{pr['number']}/comments")
               if c["user"]["login"] == "forksync[bot]"]
    assert replies == []
    [pushed] = [d.outcome for d in bot.deliveries("done") if d.event == "pull_request" and d.action == "synchronize"]
    assert f"#{pr['number']}: {branch} is not forksync's sync branch (into `release`, not the unit's base `main`)" \
        in pushed, pushed


async def test_a_landed_units_branch_stays_while_a_persons_pr_into_another_base_uses_it(world):
    """alice moves the bundle's PR to ``release`` (GitHub lets a writer change a PR's base); the
    next sync opens the unit's own PR into main again, and it lands. Deleting forksync's branch
    now would make GitHub close her PR: the branch stays, and her PR says why and that it is hers
    to delete."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, _chain = await open_sync_prs(alice)
    branch = bundle["head"]["ref"]
    base = (await alice.getitem("/repos/meta/triton/branches/main"))["commit"]["sha"]
    await alice.post("/repos/meta/triton/git/refs", data={"ref": "refs/heads/release", "sha": base})
    await alice.patch(f"/repos/meta/triton/pulls/{bundle['number']}", data={"base": "release"})
    await bot.settle()
    await bot.svc.sync(await job_context(bot)(inst.id), "meta/triton", reason="test: again")
    await bot.settle()
    [unit] = [p for p in await open_sync_prs(alice) if p["head"]["ref"] == branch and p["base"]["ref"] == "main"]
    assert unit["number"] != bundle["number"]

    await alice.put(f"/repos/meta/triton/pulls/{unit['number']}/merge", data={"merge_method": "merge"})
    await bot.settle()

    assert bot.deliveries("dead") == []
    assert (await alice.getitem(f"/repos/meta/triton/pulls/{unit['number']}"))["merged"] is True
    mine = await alice.getitem(f"/repos/meta/triton/pulls/{bundle['number']}")
    assert (mine["state"], mine["base"]["ref"]) == ("open", "release")
    assert git(up_src, "ls-remote", str(fork.path), f"refs/heads/{branch}").split()[:1] == [bundle["head"]["sha"]]
    [note] = [c["body"] async for c in alice.getiter(f"/repos/meta/triton/issues/{bundle['number']}/comments")
              if c["user"]["login"] == "forksync[bot]"]
    assert f"#{unit['number']}" in note and f"`{branch}`" in note and "delete" in note, note
