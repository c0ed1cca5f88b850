"""The ledger and the metrics (Days Behind, Backlog, holes) on forks that sync by MERGING upstream,
and on forks that mix merges and picks, on small real git repositories.

Each scenario is modelled on what git itself writes (``git revert -m 1``, ``git merge --squash``)
or on real commits of intel/intel-xpu-backend-for-triton (named in the docstrings). The truth is
what the fork's tree holds, checked with ``git ls-files`` in every test before forksync is asked.
"""
from __future__ import annotations

import pytest

from bot.config.forksync import load_config
from bot.demo.repobuilder import RepoBuilder
from bot.model import Disposition as D
from bot.store import Store
from bot.sync.ingest import load_state
from tests.support.ledger_scenario import DAY, T0


def _cfg(tmp_path, up: RepoBuilder, fork: RepoBuilder):
    cfg = load_config(None, {"upstream.url": str(up.path), "fork.url": str(fork.path)})
    return cfg.model_copy(update={"cache_dir": str(tmp_path / "cache")})


def _merged_fork(tmp_path):
    """Upstream u0 (base), u1 (b.txt), u2 (c.txt); the fork branches at u0, adds f.txt, merges
    upstream at day 3. Returns (up, fork, u0, u1, u2)."""
    up = RepoBuilder.init(tmp_path / "up")
    u0 = up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("Fork feature (#500)", {"f.txt": "f\n"}, when=T0 + DAY // 2)
    u1 = up.commit("One (#11)", {"b.txt": "b\n"}, when=T0 + DAY)
    u2 = up.commit("Two (#12)", {"c.txt": "c\n"}, when=T0 + 2 * DAY)
    fork.add_remote("upstream", up.path)
    fork.merge("upstream/main", when=T0 + 3 * DAY)
    return up, fork, u0, u1, u2


def _files(repo: RepoBuilder) -> set[str]:
    return set(repo.git("ls-files").split())


# ---- reverts of merge commits ----------------------------------------------------------------------

def test_a_reverted_merge_puts_the_merged_commits_in_the_backlog(tmp_path):
    """The fork merges upstream (u1, u2), the merge breaks its CI, and it backs the merge out the way
    git documents (``git revert -m 1 <merge>``: "This reverts commit <merge>, reversing changes
    made to <parent>"). The fork's tree no longer holds u1 or u2 — and a later re-merge will not
    bring them back (git's "revert a faulty merge" gotcha), so they are exactly the merged commits
    the fork took back out that docs/core.md counts as holes of the Backlog.

    A user sees: Backlog 0, no holes, contiguous pin at u2 (everything handled) — the fork looks
    fully synced up to u2. They should see u1 and u2 as REVERTED holes (Backlog 2), the contiguous
    pin back at u0 until the fork reverts the revert."""
    up, fork, u0, u1, u2 = _merged_fork(tmp_path)
    merge = fork.head()
    fork.git("revert", "--no-edit", "-m", "1", merge, when=T0 + 4 * DAY)
    up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 5 * DAY)
    assert _files(fork) == {"a.txt", "f.txt"}                # u1's b.txt and u2's c.txt are gone
    p = load_state(_cfg(tmp_path, up, fork), store=Store()).pins
    assert p.merge_based
    assert set(p.holes) == {u1, u2}
    assert p.backlog == 2 and p.backlog_by_disposition == {"REVERTED": 2}
    assert p.contiguous.sha == u0
    # the fork reverts its revert ("reapply the merge"): both are back, no hole
    fork.git("revert", "--no-edit", fork.head(), when=T0 + 6 * DAY)
    assert _files(fork) == {"a.txt", "b.txt", "c.txt", "f.txt"}
    p2 = load_state(_cfg(tmp_path, up, fork), store=Store()).pins
    assert p2.holes == () and p2.backlog == 0


def test_reverting_the_pr_merge_that_held_the_forks_revert_closes_the_hole(tmp_path):
    """The fork reverts merged upstream u1 on a PR branch (``This reverts commit <u1>``), lands it
    with a merge commit ("Merge pull request #600 …", the usual GitHub merge), then backs the PR out
    (``git revert -m 1 <PR merge>``). u1's b.txt is back in the fork's tree.

    A user sees: u1 still a REVERTED hole, Backlog 1, the contiguous pin held at u0 "since the
    fork's revert". They should see no hole: the revert of the PR merge undid the fork's revert."""
    up, fork, u0, u1, u2 = _merged_fork(tmp_path)
    fork.checkout("main", "revert-one")
    fork.revert(u1, when=T0 + 4 * DAY)
    fork.checkout("main")
    pm = fork.merge("revert-one", when=T0 + 4 * DAY + 60, message="Merge pull request #600 from org/revert-one")
    fork.git("revert", "--no-edit", "-m", "1", pm, when=T0 + 5 * DAY)
    up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 6 * DAY)
    assert "b.txt" in _files(fork)
    p = load_state(_cfg(tmp_path, up, fork), store=Store()).pins
    assert p.holes == () and p.backlog == 0
    assert p.contiguous.sha == u2


# ---- holes the fork got back ------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["upstream-commit-trailer", "same-subject-repick"])
def test_a_hole_relanded_by_a_pick_is_closed(tmp_path, how):
    """The fork reverts merged upstream u1 (``git revert``: "This reverts commit <u1>"), then lands
    it again as a pick — with forksync's own ``Upstream-Commit: <u1>`` trailer (what `apply` writes),
    or as the Intel fork does, a commit with u1's exact subject and patch (`83caa5824d` "[BACKEND]
    Simplify `applyLinearLayout` (#7417)" relands #7417 after the fork's revert `57a5e0dd43`: same
    patch-id; forksync still lists #7417 among Intel's 29 holes). b.txt is back in the tree.

    A user sees: u1 a REVERTED hole, Backlog 1, the contiguous pin held at u0. They should see no
    hole: the ledger's own pick evidence (trailer, cited PR with the upstream subject, patch-id)
    says the fork got it back."""
    up, fork, u0, u1, u2 = _merged_fork(tmp_path)
    fork.revert(u1, when=T0 + 4 * DAY)
    if how == "upstream-commit-trailer":
        fork.cherry_pick(u1, when=T0 + 5 * DAY, trailer=f"Upstream-Commit: {u1}")
    else:
        fork.cherry_pick(u1, when=T0 + 5 * DAY, message="One (#11)\n")
    up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 6 * DAY)
    assert "b.txt" in _files(fork)
    p = load_state(_cfg(tmp_path, up, fork), store=Store()).pins
    assert p.holes == () and p.backlog == 0
    assert p.contiguous.sha == u2


@pytest.mark.parametrize("how", ["subject-only", "sha-on-next-line-as-url"])
def test_a_hole_whose_revert_was_reverted_is_closed(tmp_path, how):
    """The fork reverts merged upstream u1, then reverts that revert. On the Intel fork both forms
    below are real and forksync keeps the hole open on both:
    `26781e49cc` 'Revert "Revert "Add back barrier after asserts (#5043)"" (#2657)' (no "This
    reverts commit" line: a squash-merged PR; #5043's change is back: the upstream patch
    reverse-applies on 26781e49cc's tree) and `1bd6d4375b` whose body is "This reverts commit\\n
    https://github.com/intel/intel-xpu-backend-for-triton/commit/230399d847…" (the sha as a URL on
    the next line). b.txt is back in the tree.

    A user sees: u1 a REVERTED hole, Backlog 1. They should see no hole (the ledger's own revert
    rule reads `Revert "…"` subjects; docs/core.md says a revert of the fork's revert closes it)."""
    up, fork, u0, u1, u2 = _merged_fork(tmp_path)
    rv = fork.revert(u1, when=T0 + 4 * DAY)
    if how == "subject-only":
        msg = 'Revert "Revert "One (#11)"" (#2657)\n\nCloses #2644\n'
    else:
        msg = (f'Revert "Revert "One (#11)"" (#2929)\n\nThis reverts commit\n'
               f"https://github.com/org/fork/commit/{rv}.\n")
    fork.revert(rv, when=T0 + 5 * DAY, message=msg)
    up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 6 * DAY)
    assert "b.txt" in _files(fork)
    p = load_state(_cfg(tmp_path, up, fork), store=Store()).pins
    assert p.holes == () and p.backlog == 0


def test_a_hole_upstream_reverted_too_by_githubs_revert_button_is_closed(tmp_path):
    """The fork merges upstream u1 and reverts it; upstream reverts u1 as well, with the message
    GitHub's revert button writes (no "This reverts commit" line: 'Revert "…" (#N)' and
    "Reverts owner/repo#<u1's PR>"), and the fork merges that. Neither holds b.txt: upstream took
    u1 out too. Real cases on intel/intel-xpu-backend-for-triton: #5707 (fork revert
    `f66eab1711`, upstream's `23719b7c8a` "Reverts triton-lang/triton#5707" merged by `0c3aa91a9b`
    the same day), #6850 (`ca77a334ee`, upstream #6966) and #9080 (`1e49bba3b1`, upstream #9090).

    A user sees: u1 a REVERTED hole, Backlog 1. They should see no hole (docs/core.md: the hole
    closes when upstream's own revert of it is merged)."""
    up, fork, u0, u1, u2 = _merged_fork(tmp_path)
    fork.revert(u1, when=T0 + 4 * DAY)
    up.revert(u1, when=T0 + 4 * DAY + 60,
              message='Revert "One" (#14)\n\nReverts triton-lang/triton#11\n\nIt breaks the A100 runs\n')
    fork.git("fetch", "-q", "upstream")
    fork.merge("upstream/main", when=T0 + 5 * DAY)
    up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 6 * DAY)
    assert "b.txt" not in _files(fork) and "b.txt" not in _files(up)
    p = load_state(_cfg(tmp_path, up, fork), store=Store()).pins
    assert p.holes == () and p.backlog == 0


def test_upstreams_revert_of_a_later_commit_of_the_same_words_leaves_the_hole_open(tmp_path):
    """The fork merges upstream u1 "One (#11)" and reverts it. Upstream later lands another commit
    under the same words, "One (#14)" (Triton's history repeats subjects: "[BACKEND] Update LLVM
    version", "Fix lit test"), and reverts that one with `git revert` ('Revert "One (#14)"',
    "This reverts commit <u14>."); the fork merges it all. u1's b.txt is in upstream's tree and
    not in the fork's.

    A user sees: no hole, Backlog 0 — upstream's revert of #14 read as its revert of u1, by the
    subject without its (#N). They should see u1 as a REVERTED hole: the revert names u14 by
    its sha and its PR, neither of them u1's."""
    up, fork, u0, u1, u2 = _merged_fork(tmp_path)
    fork.revert(u1, when=T0 + 4 * DAY)
    u14 = up.commit("One (#14)", {"e.txt": "e\n"}, when=T0 + 4 * DAY + 30)
    up.revert(u14, when=T0 + 4 * DAY + 60)
    fork.git("fetch", "-q", "upstream")
    fork.merge("upstream/main", when=T0 + 5 * DAY)
    up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 6 * DAY)
    assert "b.txt" not in _files(fork) and "b.txt" in _files(up)
    p = load_state(_cfg(tmp_path, up, fork), store=Store()).pins
    assert p.holes == (u1,) and p.backlog == 1


@pytest.mark.parametrize("how", ["reland-upstream-commit-sha", "reland-unquoted-subject-sha-in-body",
                                 "reland-upstream-commit-prs"])
def test_a_hole_relanded_by_the_forks_own_reland_is_closed(tmp_path, how):
    """The fork reverts merged upstream u1 and u2, then relands them, adapted (so no patch-id
    matches), in the words the Intel fork uses:
    `70e57ab43e` "Reland upstream commit 6915ba7 (#6316)" (#9632, reverted by `dfaf06bc2a`);
    `7358f79c43` "Reland [TUTORIAL] persistent softmax kernel (#1495)", body "Reland
    01c3e984490c…," (#3766, reverted by `9c6423658a`: the subject unquoted, the sha in the body);
    `6744eea9d4` "Reland upstream commit #6007 and #6004 (#3575)" (both reverted, `688c17d8b7`
    and `3796f3f4ab`). b.txt and c.txt are back in the tree.

    A user sees: the relanded commits as REVERTED holes of the Backlog. They should see no hole:
    the fork says it relanded them, by sha, by subject or by PR."""
    up, fork, u0, u1, u2 = _merged_fork(tmp_path)
    fork.revert(u1, when=T0 + 4 * DAY)
    fork.revert(u2, when=T0 + 4 * DAY + 60)
    if how == "reland-upstream-commit-sha":
        fork.commit(f"Reland upstream commit {u1[:7]} (#6316)\n\nAdapted for XPU.\n",
                    {"b.txt": "b\nxpu\n"}, when=T0 + 5 * DAY)
        fork.commit(f"Reland upstream commit {u2[:7]} (#6317)\n", {"c.txt": "c\nxpu\n"}, when=T0 + 5 * DAY + 60)
    elif how == "reland-unquoted-subject-sha-in-body":
        fork.commit(f"Reland One (#1495)\n\nReland {u1},\n{u2} and\n{'0' * 40}.\n\nTuned for XPU.\n",
                    {"b.txt": "b\nxpu\n", "c.txt": "c\nxpu\n"}, when=T0 + 5 * DAY)
    else:
        fork.commit('Reland upstream commit #11 and #12 (#3575)\n\nReland "One (#11)"\nand "Two\n(#12)\n',
                    {"b.txt": "b\nxpu\n", "c.txt": "c\nxpu\n"}, when=T0 + 5 * DAY)
    up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 6 * DAY)
    assert {"b.txt", "c.txt"} <= _files(fork)
    p = load_state(_cfg(tmp_path, up, fork), store=Store()).pins
    assert p.holes == () and p.backlog == 0


def test_a_hole_relanded_by_a_bracketed_reland_subject_is_closed(tmp_path):
    """The fork reverts merged upstream u1, then relands it adapted under a subject opening with
    ``[Reland]`` ("[Reland] One (#6320)"), one of the three openings docs/core.md names for the
    fork's own reland. A user sees: u1 a REVERTED hole, Backlog 1 (``\\b`` after ``]`` needs a
    word character, so no ``[Reland] …`` subject is read as a reland). They should see no hole."""
    up, fork, u0, u1, u2 = _merged_fork(tmp_path)
    fork.revert(u1, when=T0 + 4 * DAY)
    fork.commit("[Reland] One (#6320)\n\nAdapted for XPU.\n", {"b.txt": "b\nxpu\n"}, when=T0 + 5 * DAY)
    up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 6 * DAY)
    p = load_state(_cfg(tmp_path, up, fork), store=Store()).pins
    assert p.holes == () and p.backlog == 0


def test_a_reland_quoting_a_later_commit_of_the_same_words_leaves_the_older_hole_open(tmp_path):
    """Upstream lands u1 "One (#11)" and later "One (#14)" (Triton's history repeats subjects);
    the fork merges both and reverts both, then relands only the later one, 'Reland "One (#14)"
    (#600)'. u1's b.txt is still out of the fork.

    A user sees: no hole, Backlog 0 — the reland read as u1's too, by the subject without its
    (#N). They should see u1 as a REVERTED hole: the quoted subject cites PR #14, not #11."""
    up, fork, u0, u1, u2 = _merged_fork(tmp_path)
    u14 = up.commit("One (#14)", {"e.txt": "e\n"}, when=T0 + 3 * DAY + 60)
    fork.git("fetch", "-q", "upstream")
    fork.merge("upstream/main", when=T0 + 3 * DAY + 120)
    fork.revert(u1, when=T0 + 4 * DAY)
    fork.revert(u14, when=T0 + 4 * DAY + 60)
    fork.commit('Reland "One (#14)" (#600)\n\nAdapted for XPU.\n', {"e.txt": "e\nxpu\n"}, when=T0 + 5 * DAY)
    up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 6 * DAY)
    assert "b.txt" not in _files(fork)
    p = load_state(_cfg(tmp_path, up, fork), store=Store()).pins
    assert p.holes == (u1,) and p.backlog == 1


def test_a_partial_reland_leaves_the_hole_open(tmp_path):
    """`a9cbb0e3f3` 'Reland partial "Rewrite block pointer to be python-only (#9668)" (#6552)' on
    the Intel fork brought back part of #9668: the hole stays open until the full `Reland "…"`
    (`d5123dd644`). A partial reland cites the PR too; it must not close the hole."""
    up, fork, u0, u1, u2 = _merged_fork(tmp_path)
    fork.revert(u1, when=T0 + 4 * DAY)
    fork.commit('Reland partial "One (#11)" (#6552)\n', {"b.txt": "b-part\n"}, when=T0 + 5 * DAY)
    up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 6 * DAY)
    p = load_state(_cfg(tmp_path, up, fork), store=Store()).pins
    assert p.holes == (u1,) and p.backlog == 1


def test_an_abbreviated_revert_of_a_merged_commit_is_a_hole(tmp_path):
    """The fork reverts merged upstream u1 with a hand-written message naming it by a short sha
    ("This reverts commit 1a2b3c4d5e." — the Intel fork writes such lines, e.g. `473e293493`
    "This reverts commit afe1e9da"). b.txt is gone from the tree.

    A user sees: no hole, Backlog 0, the contiguous pin at u2 — as if nothing were reverted (an
    abbreviated sha is accepted when it closes a hole, docs/core.md, but not when it opens one).
    They should see u1 as a REVERTED hole, Backlog 1."""
    up, fork, u0, u1, u2 = _merged_fork(tmp_path)
    fork.revert(u1, when=T0 + 4 * DAY, message=f'Revert "One (#11)"\n\nThis reverts commit {u1[:10]}.\n')
    up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 6 * DAY)
    assert "b.txt" not in _files(fork)
    p = load_state(_cfg(tmp_path, up, fork), store=Store()).pins
    assert p.holes == (u1,) and p.backlog == 1


# ---- merges that do not carry what ancestry says ------------------------------------------------------

def test_upstreams_revert_of_a_commit_picked_ahead_does_not_take_effect_on_merge(tmp_path):
    """A merge-based fork cherry-picks u3 ahead of the next merge (an isolated pick, as the docs
    describe). Upstream then reverts u3 (u4 = Revert "Three") and the fork merges upstream. git's
    3-way merge keeps the fork's pick (the fork side changed d.txt, upstream's side u3+u4 nets to
    nothing), so the fork still holds d.txt though upstream backed it out: upstream's revert u4
    never took effect in the fork.

    A user sees: Backlog 0, no hole, u4 handled by ancestry — the fork looks level with upstream.
    They should see u4 (upstream's revert) as not in the fork: a hole of the Backlog."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("Fork feature (#500)", {"f.txt": "f\n"}, when=T0 + DAY // 2)
    up.commit("One (#11)", {"b.txt": "b\n"}, when=T0 + DAY)
    fork.add_remote("upstream", up.path)
    fork.merge("upstream/main", when=T0 + 2 * DAY)
    up.commit("Two (#12)", {"c.txt": "c\n"}, when=T0 + 3 * DAY)
    u3 = up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 4 * DAY)
    fork.git("fetch", "-q", "upstream")
    fork.cherry_pick(u3, when=T0 + 5 * DAY, x=True)
    u4 = up.revert(u3, when=T0 + 6 * DAY)
    up.commit("Five (#15)", {"e.txt": "e\n"}, when=T0 + 7 * DAY)
    fork.git("fetch", "-q", "upstream")
    fork.merge("upstream/main", when=T0 + 8 * DAY)
    assert "d.txt" in _files(fork) and "d.txt" not in _files(up)
    up.commit("Six (#16)", {"g.txt": "g\n"}, when=T0 + 9 * DAY)
    p = load_state(_cfg(tmp_path, up, fork), store=Store()).pins
    assert p.backlog == 1
    assert u4 in p.holes


# ---- picks and merges in one fork ------------------------------------------------------------------

def test_a_fork_that_merged_once_then_picks_in_sequence_is_measured_by_its_picks(tmp_path):
    """A fork merged upstream once (u1, day 2) and has since synced by `git cherry-pick -x`, one
    upstream commit after another: u2..u9 all picked in order, u10 and u11 not yet. Its newest
    sequentially ingested commit is u9 (README: the frontier is "the newest upstream commit reached
    by sequential ingestion"); Days Behind = u11 (day 11) − u9 (day 9) = 2.0.

    A user sees: the one old merge makes forksync treat the fork as merge-based forever — frontier
    u1, Days Behind 10.0, and all eight sequential picks listed as "isolated picks" (while the
    contiguous pin, u9, sits 8 commits past the frontier). They should see frontier u9, Days
    Behind 2.0, no isolated picks."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("Fork feature (#500)", {"f.txt": "f\n"}, when=T0 + DAY // 2)
    up.commit("One (#11)", {"b.txt": "b\n"}, when=T0 + DAY)
    fork.add_remote("upstream", up.path)
    fork.merge("upstream/main", when=T0 + 2 * DAY)
    us = [up.commit(f"Change {i} (#{10 + i})", {f"u{i}.txt": f"{i}\n"}, when=T0 + i * DAY) for i in range(2, 12)]
    fork.git("fetch", "-q", "upstream")
    for j, u in enumerate(us[:8]):                                   # u2..u9, in order
        fork.cherry_pick(u, when=T0 + (13 + j) * DAY, x=True)
    st = load_state(_cfg(tmp_path, up, fork), store=Store())
    p = st.pins
    assert p.contiguous.sha == us[7]
    assert p.frontier.sha == us[7]
    assert p.days_behind == 2.0
    assert p.isolated == ()


def test_a_squash_merge_of_upstream_picks_every_commit_it_names(tmp_path):
    """The fork takes upstream u1..u4 in one commit with `git merge --squash upstream/main` and
    git's own message ("Squashed commit of the following:" then "commit <40-hex sha>" for each
    squashed commit). The fork's tree holds all four changes.

    A user sees: u1..u4 PENDING, Days Behind 4.0, 4 "not yet reached" — the fork reported four days
    behind an upstream it is level with. They should see u1..u4 PICKED (by the fork commit that
    names each of them) and Days Behind 0."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("Fork feature (#500)", {"f.txt": "f\n"}, when=T0 + DAY // 2)
    us = [up.commit(f"Change {i} (#{10 + i})", {f"u{i}.txt": f"{i}\n"}, when=T0 + i * DAY) for i in range(1, 5)]
    fork.add_remote("upstream", up.path)
    fork.git("merge", "--squash", "upstream/main", when=T0 + 5 * DAY)
    fork.git("commit", "-q", "--no-edit", when=T0 + 5 * DAY)
    squash = fork.head()
    msg = fork.git("log", "-1", "--format=%B")
    assert msg.startswith("Squashed commit of the following:") and all(f"commit {u}" in msg for u in us)
    assert {f"u{i}.txt" for i in range(1, 5)} <= _files(fork)
    st = load_state(_cfg(tmp_path, up, fork), store=Store())
    assert [st.ledger.by_sha[u].disposition for u in us] == [D.PICKED] * 4
    assert {st.ledger.by_sha[u].fork_commit for u in us} == {squash}
    assert st.pins.days_behind == 0.0 and st.pins.not_reached == 0


def test_as_of_before_the_fork_was_merged_into_upstreams_line(tmp_path):
    """Someone brought the fork up to date by merging it INTO upstream's line (``git checkout -B
    main upstream/main && git merge <old fork main>``) on day 10 and pushed that as the fork's
    main: the merge's first parent is upstream's u5, its second the fork's own f1 (branched at
    u0). Before day 10 the fork's main was f1, 3 days behind on 2026-01-04 (upstream's tip then
    u3, day 3; the fork had u0, day 0).

    A user sees (`status --as-of 2026-01-04`, and every `--series` point before the merge): the
    fork's tip is upstream's own u3 — a commit the fork's branch never pointed at — and Days
    Behind 0.00. They should see the fork's own tip f1 and Days Behind 3.00."""
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    f1 = fork.commit("Fork feature (#500)", {"f.txt": "f\n"}, when=T0 + DAY // 2)
    for i in range(1, 6):
        up.commit(f"Change {i} (#{10 + i})", {f"u{i}.txt": f"{i}\n"}, when=T0 + i * DAY)
    fork.add_remote("upstream", up.path)
    fork.git("checkout", "-q", "-B", "main", "upstream/main")
    fork.git("merge", "-q", "--no-ff", "-m", "Merge fork work into upstream", f1, when=T0 + 10 * DAY)
    fork.commit("More fork work (#501)", {"g.txt": "g\n"}, when=T0 + 11 * DAY)
    up.commit("Change 6 (#16)", {"u6.txt": "6\n"}, when=T0 + 12 * DAY)
    st = load_state(_cfg(tmp_path, up, fork), store=Store(), as_of="2026-01-04")
    assert st.fork_tip == f1
    assert st.pins.days_behind == 3.0


# ---- what `status` prints ---------------------------------------------------------------------------

def test_status_lists_each_holes_revert_in_a_log(tmp_path, capsys, monkeypatch):
    """`forksync status` run in CI (stdout not a terminal: Rich's 80 columns) on a merge-based fork
    with a hole whose upstream subject is as long as a real Triton one (Intel's holes: e.g.
    "[AMD][Backend] Add general `permlane_swap` pattern for `ConvertLayoutOp` (#7825)").

    A user sees the holes table with its PR, committed, "reverted by" and "reverted" columns
    squeezed to nothing ("│ b39a… ││ │ … │ │ [BACKEND] clean-up …" on the Intel snapshot): the
    fork's revert and the dates are not in the log at all. They should see, as docs/core.md
    promises, each hole with its PR, the fork's revert and its date."""
    from bot.cli.main import main
    monkeypatch.delenv("COLUMNS", raising=False)
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("Fork feature (#500)", {"f.txt": "f\n"}, when=T0 + DAY // 2)
    u1 = up.commit("[AMD][Backend] Add general `permlane_swap` pattern for `ConvertLayoutOp` (#7825)",
                   {"b.txt": "b\n"}, when=T0 + DAY)
    up.commit("Two (#12)", {"c.txt": "c\n"}, when=T0 + 2 * DAY)
    fork.add_remote("upstream", up.path)
    fork.merge("upstream/main", when=T0 + 3 * DAY)
    rv = fork.revert(u1, when=T0 + 4 * DAY)
    fork.commit("More fork work (#501)", {"g.txt": "g\n"}, when=T0 + 4 * DAY + 60)
    up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 5 * DAY)
    cfg = tmp_path / "forksync.yml"
    cfg.write_text(f"cache_dir: {tmp_path / 'cache'}\n")
    rc = main(["--config", str(cfg), "--upstream", str(up.path), "--fork", str(fork.path), "--quiet", "status"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "Backlog Commits" in out and "REVERTED 1" in out           # the hole is counted …
    table = out[out.index("then reverted by the fork (before the range"):]
    assert rv[:12] in table                                           # … its revert listed,
    assert "#7825" in table and "2026-01-05" in table                 # with the PR and the revert's date
