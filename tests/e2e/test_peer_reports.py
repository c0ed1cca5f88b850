"""Public bug reports of bots that do forksync's kind of work (fork-sync apps and actions, merge
bots, dependency-update bots), each replayed against forksync end to end: real git repositories,
the real bot and store, the local GitHub. The list, with each report's address and what forksync
does, is in docs/github.md, "Peers' bug reports"; each test names the report it replays."""
from __future__ import annotations

import json
import subprocess

from bot.sync import store as sync_store
from tests.support.e2e import adopt_and_move_upstream, open_sync_prs, status_command, status_issue
from tests.support.github import commit_files, git


def holding_refs(fork, sha: str) -> list[str]:
    """The fork's refs (outside GitHub's ``refs/pull/``) whose history holds ``sha``."""
    refs = subprocess.run(["git", f"--git-dir={fork.path}", "for-each-ref", "--format=%(objectname) %(refname)"],
                          capture_output=True, text=True, check=True).stdout.splitlines()
    return [name for obj, name in (r.split() for r in refs) if not name.startswith("refs/pull/")
            and subprocess.run(["git", f"--git-dir={fork.path}", "merge-base", "--is-ancestor", sha, obj],
                               capture_output=True).returncode == 0]


def branch_tip(fork, branch: str) -> str:
    return subprocess.run(["git", f"--git-dir={fork.path}", "rev-parse", f"refs/heads/{branch}"],
                          capture_output=True, text=True, check=True).stdout.strip()


def upstream_commit(up_src, upstream, files: dict[str, str], message: str) -> str:
    sha = commit_files(up_src, files, message)
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    return sha


async def bot_comments(gh, number: int) -> list[str]:
    return [c["body"] async for c in gh.getiter(f"/repos/meta/triton/issues/{number}/comments")
            if c["user"]["login"] == "forksync[bot]"]


async def a_persons_commit_on(tmp_path, fork, branch: str, files: dict[str, str], message: str) -> tuple[str, object]:
    wt = tmp_path / "person"
    git(tmp_path, "clone", "-q", "-b", branch, str(fork.path), str(wt))
    mine = commit_files(wt, files, message)
    git(wt, "push", "-q", "origin", "HEAD")
    return mine, wt


async def test_wei_pull_607_a_persons_commit_on_a_sync_branch_is_not_force_pushed_away(world, tmp_path):
    """wei/pull#607: the sync bot hard-reset a branch a person had committed to, deleting their
    work. alice commits on the bundle's branch; upstream then moves twice more (one commit for the
    same bundle's files, one elsewhere). Her commit stays on the branch."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, _chain = await open_sync_prs(alice)
    branch = bundle["head"]["ref"]
    mine, _ = await a_persons_commit_on(tmp_path, fork, branch, {"python/a.py": "a = 2  # ours\n"}, "fork: tune a")
    await bot.settle()
    upstream_commit(up_src, upstream, {"python/a.py": "a = 3\n"}, "Speed up a again (#104)")
    upstream_commit(up_src, upstream, {"python/b.py": "b = 2\n"}, "Set b (#105)")
    await bot.settle()
    assert f"refs/heads/{branch}" in holding_refs(fork, mine)
    assert bot.deliveries("dead") == []


async def test_renovate_2391_closing_and_reopening_a_sync_pr_keeps_a_persons_commit(world, tmp_path):
    """renovatebot/renovate#2391: a person added a commit to the bot's PR, closed it by accident
    and reopened it; the bot deleted the branch with their commit. alice does the same on the
    bundle PR: her commit is never lost (kept under ``refs/forksync/closed/`` when forksync
    retires the branch, and named in its reply)."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, _chain = await open_sync_prs(alice)
    branch = bundle["head"]["ref"]
    mine, _ = await a_persons_commit_on(tmp_path, fork, branch, {"python/a.py": "a = 2  # ours\n"}, "fork: tune a")
    await bot.settle()
    await alice.patch(f"/repos/meta/triton/pulls/{bundle['number']}", data={"state": "closed"})
    await bot.settle()      # forksync retires the branch before she reopens (the report's race)
    try:
        await alice.patch(f"/repos/meta/triton/pulls/{bundle['number']}", data={"state": "open"})
    except Exception:       # GitHub refuses to reopen a PR whose branch is gone: the same for us
        pass
    await bot.settle()
    assert holding_refs(fork, mine) == [f"refs/forksync/closed/{branch.removeprefix('forksync/')}/{mine[:12]}"]
    assert bot.deliveries("dead") == []


async def test_dependabot_10019_a_unit_closed_as_decided_keeps_the_commit_a_person_pushed(world, tmp_path):
    """dependabot/dependabot-core#10019: Dependabot closed, as "no longer needed", a PR a person
    had pushed fixes to. Here every commit of the bundle is deferred while alice's commit is on
    its branch: forksync closes the PR (its commits are decided), and her commit is kept under
    ``refs/forksync/closed/`` and named in the closing comment."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, _c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, _chain = await open_sync_prs(alice)
    branch = bundle["head"]["ref"]
    mine, _ = await a_persons_commit_on(tmp_path, fork, branch, {"python/b.py": "b = 9\n"}, "fork: fix the tests")
    await bot.settle()
    [issue] = await status_issue(alice)
    await status_command(alice, bot, issue["number"], f"/forksync defer {c1} waiting for the new ABI")
    pr = await alice.getitem(f"/repos/meta/triton/pulls/{bundle['number']}")
    kept = holding_refs(fork, mine)
    said = "\n".join(await bot_comments(alice, bundle["number"]))
    assert pr["state"] == "closed"
    assert kept == [f"refs/forksync/closed/{branch.removeprefix('forksync/')}/{mine[:12]}"], kept
    assert mine[:12] in said and c1[:12] in said, said
    assert bot.deliveries("dead") == []


async def test_create_pull_request_926_a_sync_pr_a_person_closed_is_planned_again_once_not_on_every_sync(world, tmp_path):
    """peter-evans/create-pull-request#926 (a new PR on every run for a branch whose PR was
    closed): alice closes the bundle PR with no reason given. forksync's rule (docs/github.md,
    `landing`) is that a reason-less close sends its commits back to PENDING and says so on the
    PR, with the ``/forksync defer`` that keeps them out: one fresh PR, at once. Upstream then
    moves three more times: still exactly that one PR for the commit, never one per sync."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, _c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, _chain = await open_sync_prs(alice)
    await alice.patch(f"/repos/meta/triton/pulls/{bundle['number']}", data={"state": "closed"})
    await bot.settle()
    [reply] = await bot_comments(alice, bundle["number"])
    assert "They will be planned again. To defer them instead, comment `/forksync defer <sha> <reason>`." in reply
    for i in range(3):
        upstream_commit(up_src, upstream, {f"python/n{i}.py": f"n = {i}\n"}, f"Add n{i} (#11{i})")
        await bot.settle()
    carrying = []
    for pr in [p async for p in alice.getiter("/repos/meta/triton/pulls?state=all")]:
        messages = [c["commit"]["message"] async for c in alice.getiter(f"/repos/meta/triton/pulls/{pr['number']}/commits")]
        if any(f"Upstream-Commit: {c1}" in m for m in messages):
            carrying.append((pr["state"], pr["head"]["ref"]))
    assert sorted(carrying) == [("closed", bundle["head"]["ref"]), ("open", bundle["head"]["ref"])], carrying
    assert bot.deliveries("dead") == []


async def test_imgbot_21_duplicated_webhooks_open_one_pr_per_unit(world, tmp_path):
    """imgbot/Imgbot#21 (two PRs for the same branch at the same time) and
    python/bugs.python.org#12 (replayed webhook deliveries made duplicate links): every event of
    the upstream push is delivered twice, then redelivered once more by hand. One PR per unit, one
    status issue, no comment twice."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    fake.webhooks.duplicate_next = 50
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    for d in list(fake.webhooks.of("push")):
        await fake.webhooks.redeliver(d.guid)
    await bot.settle()
    prs = [p async for p in alice.getiter("/repos/meta/triton/pulls?state=all")]
    heads = [p["head"]["ref"] for p in prs]
    assert len(heads) == len(set(heads)) == 2, heads
    assert len(await status_issue(alice)) == 1
    for p in prs:
        said = await bot_comments(alice, p["number"])
        assert len(said) == len(set(said)), said
    assert bot.deliveries("dead") == []


async def test_renovate_2032_a_pr_body_past_65536_characters_is_cut_not_refused(world, tmp_path):
    """renovatebot/renovate#2032 and #14551 (and its dashboard, #16208): GitHub refused the PR
    with 422 "body is too long (maximum is 65536 characters)" and no PR was opened. An upstream
    commit whose subject alone is 70,000 characters: the PR opens, its title within 256 characters
    and its body within 65,536, and the local GitHub (which refuses both past the limit, as GitHub
    does) saw no call outside GitHub's contract."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    long = upstream_commit(up_src, upstream, {"python/long.py": "x = 1\n"}, "Add long " + "y" * 70_000 + " (#120)")
    await bot.settle()
    mine = []
    for pr in await open_sync_prs(alice):
        messages = [c["commit"]["message"] async for c in alice.getiter(f"/repos/meta/triton/pulls/{pr['number']}/commits")]
        if any(f"Upstream-Commit: {long}" in m for m in messages):
            mine.append(pr)
    [pr] = mine
    assert len(pr["title"]) <= 256 and len(pr["body"]) <= 65_536
    assert long[:12] in pr["body"]
    assert bot.deliveries("dead") == []


async def test_create_pull_request_855_a_secondary_rate_limit_on_pr_create_opens_the_pr_once(world, tmp_path):
    """peter-evans/create-pull-request#855 (and Financial-Times/nori#155): creating the PR got
    403 "You have exceeded a secondary rate limit", which the client did not retry, and the run
    failed. GitHub answers forksync's first two creates the same way: the PRs open, each once."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    fake.faults.secondary_limit("/repos/meta/triton/pulls", "POST", times=2)
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    assert [f.name for f in fake.faults.fired] == ["secondary-403", "secondary-403"]
    heads = [p["head"]["ref"] async for p in alice.getiter("/repos/meta/triton/pulls?state=all")]
    assert len(heads) == len(set(heads)) == 2, heads
    assert bot.deliveries("dead") == []


async def test_renovate_7367_an_exhausted_primary_rate_limit_is_waited_out_not_a_failure(world, tmp_path):
    """renovatebot/renovate#7367 and palantir/policy-bot#136: the bot kept calling through
    GitHub's 403 rate-limit answers (and PRs went unhandled). GitHub answers forksync's listing of
    the fork's pull requests with an exhausted primary limit (``x-ratelimit-remaining: 0``) three
    times: the sync still opens its PRs, once each, and nothing is dead-lettered."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    fake.faults.primary_limit("/repos/meta/triton/pulls", "GET", times=3)
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    assert [f.name for f in fake.faults.fired].count("primary-403") == 3
    heads = [p["head"]["ref"] async for p in alice.getiter("/repos/meta/triton/pulls?state=all")]
    assert len(heads) == len(set(heads)) == 2, heads
    assert bot.deliveries("dead") == []


async def test_scala_steward_2152_upstream_rewrote_its_history_under_open_sync_prs(world, tmp_path):
    """scala-steward-org/scala-steward#2152 and fluxcd/flux#696 ("unable to fast-forward after
    force-push"): the bot did not follow an upstream that force-pushed. Upstream drops the two
    commits the open bundle and chain carry (amending the first into a different change, dropping
    the second) and force-pushes. No open PR may still carry a commit upstream's history no longer
    has — merged, it would land a change upstream took back: each is closed saying why, and the
    amended commit gets a PR of its own; upstream's next commit is synced as usual."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, chain = await open_sync_prs(alice)
    git(up_src, "reset", "-q", "--hard", "HEAD~2")
    c1b = commit_files(up_src, {"python/a.py": "a = 20\n"}, "Speed up a, amended (#101)")
    git(up_src, "push", "-q", "-f", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    c3 = upstream_commit(up_src, upstream, {"python/b.py": "b = 2\n"}, "Set b (#103)")
    await bot.settle()
    carried = set()
    for pr in await open_sync_prs(alice):
        messages = [c["commit"]["message"] async for c in alice.getiter(f"/repos/meta/triton/pulls/{pr['number']}/commits")]
        carried |= {line.split()[-1] for m in messages for line in m.splitlines() if line.startswith("Upstream-Commit:")}
    assert {c1b, c3} <= carried and not {c1, c2} & carried, (carried, c1, c2)
    for pr, gone in ((bundle, c1), (chain, c2)):
        assert (await alice.getitem(f"/repos/meta/triton/pulls/{pr['number']}"))["state"] == "closed"
        said = "\n".join(await bot_comments(alice, pr["number"]))
        assert f"`{gone[:12]}`" in said and "no longer has it" in said, said
    assert bot.deliveries("dead") == []


async def test_release_please_6105_forksyncs_own_events_never_start_another_sync(world, tmp_path):
    """arcjet/arcjet-js#6105 (a bot force-pushing its own branch once a minute, each push
    triggering it again), OnToology/OnToology#27 and pre-commit-ci/issues#15: a bot's own events
    fed back into it. After forksync's sync, every event its pushes, PRs, labels and comments
    emitted is delivered: each of forksync's own ends ``ignored``, and the loop is quiet — one
    more round delivers nothing and moves no branch."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    own = [d for d in bot.deliveries() if d.sender == "forksync[bot]"]
    assert own and all(d.state == "done" and d.outcome.startswith("ignored") for d in own), \
        [(d.event, d.action, d.state, d.outcome) for d in own]
    tips = {p["head"]["ref"]: p["head"]["sha"] for p in await open_sync_prs(alice)}
    emitted = len(fake.webhooks.emitted)
    assert await bot.settle() == 0
    assert len(fake.webhooks.emitted) == emitted
    assert {p["head"]["ref"]: p["head"]["sha"] for p in await open_sync_prs(alice)} == tips


async def test_mergify_3334_a_persons_comments_on_a_sync_pr_get_no_repeated_bot_comment(world, tmp_path):
    """clash-lang/clash-compiler#3334 (Mergify posting its message again after every new comment)
    and caffeinelabs/motoko#3763 (a bot adding and removing a label 14,000 times): alice comments
    five times on the bundle PR and takes a label off it. forksync writes no comment and moves no
    label in answer to any of it."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, _chain = await open_sync_prs(alice)
    n = bundle["number"]
    before = await bot_comments(alice, n)
    labels = sorted(lb["name"] for lb in bundle["labels"])
    emitted = len(fake.webhooks.emitted)
    for i in range(5):
        await alice.post(f"/repos/meta/triton/issues/{n}/comments", data={"body": f"looks fine to me ({i})"})
        await bot.settle()
    await alice.delete(f"/repos/meta/triton/issues/{n}/labels/{labels[0]}")
    await bot.settle()
    assert await bot_comments(alice, n) == before
    after = sorted([lb["name"] async for lb in alice.getiter(f"/repos/meta/triton/issues/{n}/labels")])
    assert after == labels[1:]
    answered = [(d.event, d.action) for d in fake.webhooks.emitted[emitted:]
                if json.loads(d.body)["sender"]["login"] == "forksync[bot]"]
    # no comment, no label; the gate's one re-evaluation (a check run) is all
    assert [e for e in answered if e[0] != "check_run"] == [] and len(answered) <= 2, answered


async def test_renovate_17746_a_sync_pr_a_person_merged_is_not_opened_again(world, tmp_path):
    """renovatebot/renovate#17746: the bot re-created a PR whose change a person had already
    merged. alice merges the bundle PR herself while forksync works (the fork's own merge, not
    the gate's); upstream then moves twice. No PR carries the merged commit again, and the ledger
    counts it picked."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    c1, _c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, _chain = await open_sync_prs(alice)
    await alice.put(f"/repos/meta/triton/pulls/{bundle['number']}/merge", data={"merge_method": "merge"})
    upstream_commit(up_src, upstream, {"python/b.py": "b = 2\n"}, "Set b (#103)")
    await bot.settle()
    upstream_commit(up_src, upstream, {"python/n.py": "n = 1\n"}, "Add n (#104)")
    await bot.settle()
    for pr in [p async for p in alice.getiter("/repos/meta/triton/pulls?state=all")]:
        if pr["number"] == bundle["number"]:
            continue
        messages = [c["commit"]["message"] async for c in alice.getiter(f"/repos/meta/triton/pulls/{pr['number']}/commits")]
        assert not any(f"Upstream-Commit: {c1}" in m for m in messages), (pr["number"], pr["state"])
    [issue] = await status_issue(alice)
    assert f"`{c1[:12]}`" not in issue["body"].split("## Open bundles and chains")[1]
    assert bot.deliveries("dead") == []


async def test_dependabot_274_a_landed_pick_a_force_push_removed_from_the_fork_is_planned_again(world, tmp_path):
    """dependabot/feedback#274 and renovatebot/config-help#663: after the base branch was
    force-pushed back past a merged update, the bot would not raise it again (it remembered the
    merged PR). The bundle lands; the fork's owners then force-push ``main`` back to before the
    merge. forksync's ledger is rebuilt from git, so the next sync finds the commit PENDING and
    opens a PR for it again."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    before = branch_tip(fork, "main")
    c1, _c2 = await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, _chain = await open_sync_prs(alice)
    await alice.put(f"/repos/meta/triton/pulls/{bundle['number']}/merge", data={"merge_method": "merge"})
    await bot.settle()
    assert branch_tip(fork, "main") != before
    wt = tmp_path / "owners"
    git(tmp_path, "clone", "-q", str(fork.path), str(wt))
    git(wt, "reset", "-q", "--hard", before)
    git(wt, "push", "-q", "-f", "origin", "HEAD:main")
    await bot.settle()
    upstream_commit(up_src, upstream, {"python/n.py": "n = 1\n"}, "Add n (#104)")
    await bot.settle()
    carrying = []
    for pr in await open_sync_prs(alice):
        messages = [c["commit"]["message"] async for c in alice.getiter(f"/repos/meta/triton/pulls/{pr['number']}/commits")]
        if any(f"Upstream-Commit: {c1}" in m for m in messages):
            carrying.append(pr["number"])
    assert len(carrying) == 1 and carrying[0] != bundle["number"], carrying
    assert bot.deliveries("dead") == []


async def test_fork_sync_112_an_upstream_push_the_fork_already_has_opens_no_empty_pr(world, tmp_path):
    """tgymnich/fork-sync#112 (422 "No commits between master and master" on every run) and
    backstrokeapp/server#91 (a PR listing commits the fork already had): the fork picks upstream's
    first commit by hand (``git cherry-pick -x``) before upstream's push reaches forksync. No PR
    carries it, no PR is asked of GitHub with nothing in it (the local GitHub would answer 422
    and record a contract violation), and only the other commit gets a PR."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    from tests.support.e2e import install_on_fork
    await install_on_fork(fake, bot, fork, inst.id)
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: new x (#102)")
    wt = tmp_path / "owners"
    git(tmp_path, "clone", "-q", str(fork.path), str(wt))
    git(wt, "fetch", "-q", str(up_src), "HEAD")
    git(wt, "-c", "user.name=alice", "-c", "user.email=alice@example.com", "cherry-pick", "-x", c1)
    git(wt, "push", "-q", "origin", "HEAD:main")
    await bot.settle()
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    prs = [p async for p in alice.getiter("/repos/meta/triton/pulls?state=all")]
    assert [p["head"]["ref"] for p in prs] == [f"forksync/chain-{c2[:12]}"]
    assert not [f for f in fake.faults.fired]
    assert bot.deliveries("dead") == []


async def test_fork_sync_action_76_pushes_github_refuses_are_shown_per_unit_and_retried(fake_github, tmp_path):
    """aormsby/Fork-Sync-With-Upstream-action#76 ("GH006: Protected branch update failed"; the
    run failed and nothing said which branch) and gautamkrishnar/keepalive-workflow#12: GitHub
    refuses every push of forksync's branches (a rule covering them). Each unit is blocked with
    git's words, the status issue says so per unit, and once the rule is lifted the next upstream
    push opens both PRs."""
    from tests.support.e2e import install_on_fork, sync_world
    async with sync_world(fake_github, tmp_path, git_http=True) as w:
        fake, bot, alice, up_src, upstream, fork, inst = w
        await install_on_fork(fake, bot, fork, inst.id)
        fake.faults.add("POST", "*.git/git-receive-pack", 403,
                        "GH006: Protected branch update failed for refs/heads/forksync.", times=1000)
        c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
        c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: new x (#102)")
        git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
        await bot.settle()
        blocked = {b["branch"]: b for b in sync_store.blocked_branches(bot.store, "meta/triton")}
        assert sorted(blocked) == sorted([f"forksync/bundle-{c1[:12]}", f"forksync/chain-{c2[:12]}"]), blocked
        assert all("403" in b["blocked_reason"] and b["blocked_step"] == "push" for b in blocked.values())
        assert await open_sync_prs(alice) == []
        [issue] = await status_issue(alice)
        assert "**Syncing is degraded: 2 unit(s) blocked.**" in issue["body"], issue["body"]
        fake.faults.clear()
        upstream_commit(up_src, upstream, {"python/n.py": "n = 1\n"}, "Add n (#104)")
        await bot.settle()
        heads = {p["head"]["ref"] for p in await open_sync_prs(alice)}
        assert {f"forksync/bundle-{c1[:12]}", f"forksync/chain-{c2[:12]}"} <= heads, heads
        assert sync_store.blocked_branches(bot.store, "meta/triton") == []


async def test_renovate_9376_the_retry_box_never_force_pushes_away_a_persons_commits(world, tmp_path):
    """renovatebot/renovate#9376: ticking "rebase/retry this PR" force-pushed the branch and lost
    the commits a person had added. alice commits on the bundle's branch, then ticks the bundle's
    retry box on the status issue. Her commit stays on the branch."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst)
    await bot.settle()
    bundle, _chain = await open_sync_prs(alice)
    branch = bundle["head"]["ref"]
    unit = branch.removeprefix("forksync/")
    mine, _ = await a_persons_commit_on(tmp_path, fork, branch, {"python/a.py": "a = 2  # ours\n"}, "fork: tune a")
    await bot.settle()
    [issue] = await status_issue(alice)
    box = f"- [ ] <!-- retry:{unit} -->"
    assert box in issue["body"]
    await alice.patch(f"/repos/meta/triton/issues/{issue['number']}",
                      data={"body": issue["body"].replace(box, box.replace("[ ]", "[x]"))})
    await bot.settle()
    assert f"refs/heads/{branch}" in holding_refs(fork, mine)
    assert bot.deliveries("dead") == []


async def test_flux_696_a_bundle_keeps_the_commits_upstream_kept_after_a_force_push(world, tmp_path):
    """fluxcd/flux#696, the partial case: upstream force-pushes without the second of a bundle's
    two commits. forksync's own branch is rebuilt without it (the PR stays, one commit per
    upstream commit still there), and the PR says which commit went and why."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    from tests.support.e2e import install_on_fork
    await install_on_fork(fake, bot, fork, inst.id)
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    c3 = upstream_commit(up_src, upstream, {"python/b.py": "b = 2\n"}, "Set b (#103)")
    await bot.settle()
    [bundle] = await open_sync_prs(alice)
    git(up_src, "reset", "-q", "--hard", "HEAD~1")
    c4 = commit_files(up_src, {"python/n.py": "n = 1\n"}, "Add n (#104)")
    git(up_src, "push", "-q", "-f", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    pr = await alice.getitem(f"/repos/meta/triton/pulls/{bundle['number']}")
    assert pr["state"] == "open"
    messages = [c["commit"]["message"] async for c in alice.getiter(f"/repos/meta/triton/pulls/{pr['number']}/commits")]
    carried = [line.split()[-1] for m in messages for line in m.splitlines() if line.startswith("Upstream-Commit:")]
    assert c3 not in carried and c1 in carried, carried
    said = "\n".join(await bot_comments(alice, bundle["number"]))
    assert f"`{c3[:12]}`" in said and "no longer in upstream's history" in said, said
    everywhere = set()
    for p in await open_sync_prs(alice):
        everywhere |= {line.split()[-1] for c in [c async for c in alice.getiter(f"/repos/meta/triton/pulls/{p['number']}/commits")]
                       for line in c["commit"]["message"].splitlines() if line.startswith("Upstream-Commit:")}
    assert c4 in everywhere and c3 not in everywhere
    assert bot.deliveries("dead") == []


async def test_slashdeploy_97_upstream_pushes_delivered_newest_first_end_at_the_newest_head(world, tmp_path):
    """remind101/slashdeploy#97 and rancher/fleet#4000 (a push event for an older commit arriving
    after the newer one, the newer state overwritten by the old): upstream pushes twice and the
    two ``push`` events reach forksync newest first. forksync ends at upstream's newest head —
    the status issue says so — with both commits in PRs, and the older event changes nothing."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    from tests.support.e2e import install_on_fork
    await install_on_fork(fake, bot, fork, inst.id)
    fake.webhooks.auto_deliver = False
    c1 = upstream_commit(up_src, upstream, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    await fake.refresh()
    c3 = upstream_commit(up_src, upstream, {"python/b.py": "b = 2\n"}, "Set b (#103)")
    await fake.refresh()
    fake.webhooks.auto_deliver = True
    await fake.webhooks.flush(order="reverse")
    await bot.settle()
    [issue] = await status_issue(alice)
    assert f"| upstream head | `{c3[:12]}`" in issue["body"], issue["body"][:600]
    carried = set()
    for pr in await open_sync_prs(alice):
        messages = [c["commit"]["message"] async for c in alice.getiter(f"/repos/meta/triton/pulls/{pr['number']}/commits")]
        carried |= {line.split()[-1] for m in messages for line in m.splitlines() if line.startswith("Upstream-Commit:")}
    assert carried == {c1, c3}
    st = sync_store.load_status(bot.store, "meta/triton")
    assert st.upstream_head == c3
    assert bot.deliveries("dead") == []
