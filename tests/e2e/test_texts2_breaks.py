"""What the status issue and the sync PR bodies say about the fork's numbers and its commits, read
on the local GitHub after the real bot synced real git repositories: every number beside the
others it must agree with, and every claim about the branch borne out by its commits."""
from __future__ import annotations

import re
import time

from bot.sync import store as sync_store
from tests.support.e2e import install_on_fork, open_sync_prs, status_command, status_issue, sync_world
from tests.support.github import commit_files, git
from tests.support.sync_world import CONFIG, upstream_files, validated_world

# the real Triton fork's shape (docs/real-fork.md): a pick, a version bump never taken, and the
# fork caught up with upstream's tip 292.62 days later
BASE_AT = "2025-09-01T08:00:00+00:00"
PIN_AT = "2025-09-05T13:49:13+00:00"
HOLDER_AT = "2025-09-05T13:54:26+00:00"
TIP_AT = "2026-06-25T04:47:31+00:00"


def _dated(monkeypatch, when: str) -> None:
    monkeypatch.setenv("GIT_AUTHOR_DATE", when)
    monkeypatch.setenv("GIT_COMMITTER_DATE", when)


def _row(body: str, name: str) -> str:
    """The text of the status issue's table row ``| name | … |`` ("" when there is none)."""
    return next((line for line in body.splitlines() if line.startswith(f"| {name} |")), "")


async def test_a_contiguous_pin_far_behind_a_caught_up_frontier_reads_with_its_date_and_lag(
        fake_github, tmp_path, monkeypatch):
    """The fork picked upstream's tip but never took an old version bump, as on the real Triton
    fork. The on-call sees "Days Behind 0.0" beside a bare contiguous pin sha that is 292 days old
    and reads the two as a contradiction. They should see the pin with its commit date, how far it
    lags upstream's head and what holds it, the Days Behind row saying it is the frontier's lag,
    the Backlog saying what it counts (behind the frontier, by disposition), and the upstream head
    these are measured to ("upstream as of")."""
    _dated(monkeypatch, BASE_AT)
    async with sync_world(fake_github, tmp_path) as (fake, bot, alice, up_src, upstream, fork, inst):
        _dated(monkeypatch, PIN_AT)
        c0 = commit_files(up_src, {"python/b.py": "b = 2\n"}, "Fix b (#100)")
        _dated(monkeypatch, HOLDER_AT)
        c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Advance version 3.4.0->3.5.0 (#101)")
        _dated(monkeypatch, TIP_AT)
        c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: new x (#102)")
        git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
        fork_src = tmp_path / "forksrc"
        git(fork_src, "fetch", "-q", str(up_src), "main")
        git(fork_src, "cherry-pick", "-x", c0)
        git(fork_src, "cherry-pick", "-x", c2)
        git(fork_src, "push", "-q", str(fork.path), "HEAD:refs/heads/main")
        await install_on_fork(fake, bot, fork, inst.id)
        st = sync_store.load_status(bot.store, "meta/triton")
        assert (st.frontier, st.contiguous_pin, st.days_behind, st.backlog) == (c2, c0, 0.0, 1)
        [issue] = await status_issue(alice)
        body = issue["body"]
    pin = _row(body, "contiguous pin")
    assert f"`{c0[:12]}`" in pin, pin
    assert "committed 2025-09-05 13:49 UTC" in pin, pin
    assert "292.6 days behind upstream head" in pin, pin
    assert f"`{c1[:12]}`" in pin and "IN_FLIGHT" in pin, pin        # what holds it: its bundle is open
    days = _row(body, "Days Behind")
    assert days.startswith("| Days Behind | 0.0 ") and "frontier" in days, days
    seen = time_of(st.upstream_seen_at)
    assert f"upstream as of {seen}" in body, body
    backlog = _row(body, "Backlog")
    assert "1 commit behind the frontier" in backlog and "IN_FLIGHT 1" in backlog, backlog


def time_of(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ts))


async def test_a_sync_prs_body_does_not_list_the_whole_forks_deferred_commits(world):
    """alice defers an AMD commit; the bundle that opens next brings only a Python commit. Its PR
    body lists the deferred AMD commit under "### Deferred" (on a real fork: every deferred and
    won't-port commit of the fork, on every PR), burying what the PR brings. She should see the
    unit's own commits only, and at most a one-line count that points to the status issue."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    await install_on_fork(fake, bot, fork, inst.id)
    [issue] = await status_issue(alice)
    n = issue["number"]
    assert "on hold" in await status_command(alice, bot, n, "/forksync hold")
    c1 = commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: new x (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await bot.settle()
    reply = await status_command(alice, bot, n, f"/forksync defer {c2[:10]} waits for the ROCm 7 bump")
    assert "DEFERRED_BLOCKED" in reply
    assert "hold lifted" in await status_command(alice, bot, n, "/forksync unhold")
    [issue] = await status_issue(alice)
    await alice.patch(f"/repos/meta/triton/issues/{n}",
                      data={"body": issue["body"].replace("- [ ] <!-- replan -->", "- [x] <!-- replan -->")})
    await bot.settle()
    [pr] = await open_sync_prs(alice)
    assert pr["head"]["ref"] == f"forksync/bundle-{c1[:12]}"
    body = pr["body"]
    assert c2[:12] not in body and "waits for the ROCm 7 bump" not in body, body
    assert "### Deferred" not in body, body
    assert re.search(r"1 upstream commit .*deferred.*status issue", body), body


MIDDLE = "".join(f"// line {i}\n" for i in range(8))
X0 = "int x;\n" + MIDDLE + "int z;\n"


async def test_a_stopped_chains_body_says_truly_what_its_commits_carry(fake_github, tmp_path):
    """A chain picks c1 and stops at c2's conflict; c3 waits behind it. The engineer reads "This
    chain brings 3 upstream commits … one fork commit per upstream commit (each carries
    `Upstream-Commit: <sha>`)" and, under Provenance, "Every commit on this branch carries the
    trailer `Upstream-Commit: <full sha>`" — but the branch holds one pick and the conflict commit,
    which carries `Forksync-Conflict:` and no `Upstream-Commit:`. They should read what the branch
    holds: the picks carry `Upstream-Commit:`, the conflict commit `Forksync-Conflict:` (not a pick)."""
    async with validated_world(fake_github, tmp_path, CONFIG, files=upstream_files(**{"third_party/amd/x.cpp": X0}),
                               fork_commits=(({"third_party/amd/x.cpp": "int x = 10;\n" + MIDDLE + "int z;\n"},
                                              "fork: tune x"),)) as (w, up_src, upstream):
        c1 = commit_files(up_src, {"third_party/amd/y.cpp": "int y = 1;\n"}, "AMD: add y (#101)")
        c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n"}, "AMD: new x (#102)")
        commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z = 3;\n"}, "AMD: set z (#103)")
        git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
        await w.bot.settle()
        [chain] = await open_sync_prs(w.alice)
        messages = [c["commit"]["message"] async for c in
                    w.alice.getiter(f"/repos/meta/triton/pulls/{chain['number']}/commits")]
    body = chain["body"]
    # what the branch holds: one pick, then the conflict commit
    assert [("Upstream-Commit:" in m, "Forksync-Conflict:" in m) for m in messages] == [(True, False), (False, True)]
    assert f"Upstream-Commit: {c1}" in messages[0] and f"Forksync-Conflict: {c2}" in messages[1]
    provenance = body.split("### Provenance", 1)[1].split("\n\n", 1)[0]
    assert "Every commit on this branch carries" not in provenance, provenance
    assert "Forksync-Conflict:" in provenance, provenance
    intro = body.split("\n", 2)[1]
    assert "each carries `Upstream-Commit: <sha>`" not in intro, intro


async def test_an_urgent_pick_in_the_fork_is_not_counted_as_not_yet_reached_without_saying_so(world, tmp_path):
    """The fork took upstream's crash fix ahead of order (an isolated pick, `Upstream-Urgent:`).
    The on-call reads "not yet reached: 2 commits newer than the frontier" and Days Behind
    unchanged, and concludes the fix is not in the fork. They should read that one of the two is
    already in the fork as an isolated pick, which moves neither the frontier nor Days Behind."""
    fake, bot, alice, up_src, upstream, fork, inst = world
    commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)")
    c2 = commit_files(up_src, {"python/b.py": "b = 9\n"}, "Fix crash in b (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    fork_src = tmp_path / "forksrc"
    git(fork_src, "fetch", "-q", str(up_src), "main")
    git(fork_src, "cherry-pick", "-x", c2)
    git(fork_src, "commit", "-q", "--amend", "-m",
        git(fork_src, "log", "-1", "--format=%B") + "\nUpstream-Urgent: crash in production\n")
    git(fork_src, "push", "-q", str(fork.path), "HEAD:refs/heads/main")
    await install_on_fork(fake, bot, fork, inst.id)
    st = sync_store.load_status(bot.store, "meta/triton")
    assert (st.not_reached, st.backlog) == (2, 0)
    [issue] = await status_issue(alice)
    row = _row(issue["body"], "not yet reached")
    assert "2 commits newer than the frontier" in row, row
    assert "1 of them already in the fork" in row and "isolated pick" in row, row
