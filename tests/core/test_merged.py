"""Forks that sync by merging upstream: holes (tables), the frontier by ancestry and isolated picks
(pins table and a property), and the whole path on real git repositories."""
from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bot.config.forksync import load_config
from bot.core.merged import merged_holes, reverted_candidates, syncs_by_merging
from bot.core.pins import compute_pins
from bot.model import CommitInfo, LedgerEntry
from bot.model import Disposition as D
from bot.store import Store
from bot.sync.ingest import load_state
from tests.support.ledger_scenario import DAY, T0

X, Y, Z = "1" * 40, "2" * 40, "3" * 40      # upstream commits merged before the range
UX = "9" * 40                                # upstream's own revert of X


def fc(i: int, message: str, parents: tuple[str, ...] = ()) -> CommitInfo:
    return CommitInfo(f"{i:x}".rjust(40, "f"), parents, message, committer_time=T0 + i)


def rv(sha: str) -> str:
    return f'Revert "something"\n\nThis reverts commit {sha}.\n'


def up(sha: str, message: str, pr: int | None = None) -> CommitInfo:
    return CommitInfo(sha, (), message, committer_time=T0 - DAY, pr=pr)


MERGED = {X: up(X, "Fix X (#10)", 10), Y: up(Y, "Add Y (#11)", 11), Z: up(Z, "Tune Z (#12)", 12)}


@pytest.mark.parametrize("fork, merged, holes", [
    ([fc(1, rv(X))], MERGED, (X,)),
    # a revert of the fork's revert (abbreviated sha, as git writes it when asked) gets it back
    ([fc(1, rv(X)), fc(2, rv(fc(1, "").sha[:8]))], MERGED, ()),
    # reverted again after that: a hole again
    ([fc(1, rv(X)), fc(2, rv(fc(1, "").sha)), fc(3, rv(X))], MERGED, (X,)),
    # re-picked with -x, or relanded by subject
    ([fc(1, rv(Y)), fc(2, f"Add Y again\n\n(cherry picked from commit {Y})")], MERGED, ()),
    ([fc(1, rv(Y)), fc(2, 'Reland "Add Y (#11)" (#4919)')], MERGED, ()),
    ([fc(1, rv(Y)), fc(2, 'Reapply "Add Y"')], MERGED, ()),
    # upstream's own revert of it is merged too
    ([fc(1, rv(Z))], {**MERGED, UX: up(UX, f'Revert "Tune Z (#12)"\n\nThis reverts commit {Z}.\n')}, ()),
    # a revert of a commit that is not a merged upstream commit is no hole
    ([fc(1, rv("4" * 40))], MERGED, ()),
    ([fc(1, rv(X)), fc(2, rv(Z))], MERGED, (X, Z)),
])
def test_merged_holes(fork, merged, holes):
    assert tuple(merged_holes(fork, merged)) == holes


def test_syncs_by_merging_and_candidates():
    a, b = fc(1, "Fork work"), fc(2, rv(X))
    m = fc(3, "Merge upstream", parents=(b.sha, X))
    assert not syncs_by_merging([a, b])
    assert syncs_by_merging([a, b, m])
    # a merge of the fork's own branch brings in nothing from upstream
    assert not syncs_by_merging([a, b, fc(4, "Merge branch", parents=(b.sha, a.sha))])
    # an abbreviation is a candidate too: the caller resolves it against the repository
    assert reverted_candidates([a, b, fc(5, rv(a.sha)), fc(6, rv("abcdef12")), fc(7, rv(a.sha[:10]))], {a.sha}) == {X, "abcdef12"}


def entries(*disps):
    return [LedgerEntry(sha=f"{i:040x}", index=i, disposition=d, pr=1000 + i, committer_time=T0 + (i + 1) * DAY)
            for i, d in enumerate(disps)]


def test_merge_based_frontier_is_by_ancestry_and_picks_ahead_are_isolated():
    es = entries(D.PICKED, D.PICKED, D.PENDING, D.PICKED, D.PENDING, D.PICKED)
    merged = {es[0].sha, es[1].sha}
    p = compute_pins(es, base_sha="b" * 40, base_time=T0, merged=merged, holes=(X, Y))
    assert p.merge_based and p.frontier.index == 1 and p.days_behind == 4.0
    assert p.isolated == (es[3].sha, es[5].sha) and p.not_reached == 4
    assert p.backlog == 2 and p.backlog_by_disposition == {"REVERTED": 2} and p.holes == (X, Y)
    # nothing of the range merged yet: the merge base is the frontier
    p = compute_pins(es, base_sha="b" * 40, base_time=T0, merged=set())
    assert p.frontier.before_range and p.days_behind == 6.0 and p.backlog == 0
    # without ``merged`` (a cherry-picking fork) the picks move the frontier as before
    assert compute_pins(es, base_sha="b" * 40, base_time=T0).frontier.index == 5


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([D.PICKED, D.PENDING, D.NO_OP, D.DEFERRED_BLOCKED]), min_size=1, max_size=30),
       st.data())
def test_picks_past_the_merged_frontier_change_neither_metric(disps, data):
    """Isolated picks never move the main metric of a merge-based fork: turning any entry past
    the newest merged one into a pick changes neither Days Behind nor Backlog."""
    es = entries(*disps)
    k = data.draw(st.integers(-1, len(es) - 1))
    merged = {e.sha for e in es[:k + 1]}
    es = [e if e.index > k or e.disposition is not D.PENDING else
          LedgerEntry(**{**e.__dict__, "disposition": D.PICKED}) for e in es]     # merged = handled
    before = compute_pins(es, base_sha="b" * 40, base_time=T0, merged=merged)
    j = data.draw(st.integers(0, len(es) - 1))
    picked = [LedgerEntry(**{**e.__dict__, "disposition": D.PICKED}) if e.index == j and j > k else e for e in es]
    after = compute_pins(picked, base_sha="b" * 40, base_time=T0, merged=merged)
    # picks that continue the merge in upstream order (min_run of them) make it a fork that syncs by picks
    assume(before.merge_based and after.merge_based)
    assert (after.frontier, after.days_behind, after.backlog) == (before.frontier, before.days_behind, before.backlog)
    assert after.frontier.index == k


def test_a_fork_that_merges_upstream_on_real_repositories(tmp_path):
    """Upstream u1..u5; the fork merges up to u2, reverts u1, cherry-picks u4 ahead of the next
    merge; later upstream reverts u1 itself (u5) and the fork merges that."""
    from bot.demo.repobuilder import RepoBuilder
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("Fork feature (#500)", {"f.txt": "f\n"}, when=T0 + DAY // 2)
    u1 = up.commit("One (#11)", {"b.txt": "b\n"}, when=T0 + DAY)
    u2 = up.commit("Two (#12)", {"c.txt": "c\n"}, when=T0 + 2 * DAY)
    fork.add_remote("upstream", up.path)
    fork.merge("upstream/main", when=T0 + 3 * DAY)
    fork.revert(u1, when=T0 + 4 * DAY)
    up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 5 * DAY)
    u4 = up.commit("Four (#14)", {"e.txt": "e\n"}, when=T0 + 6 * DAY)
    fork.git("fetch", "-q", "upstream")
    fork.cherry_pick(u4, when=T0 + 7 * DAY, x=True)
    cfg = load_config(None, {"upstream.url": str(up.path), "fork.url": str(fork.path)})
    cfg = cfg.model_copy(update={"cache_dir": str(tmp_path / "cache")})
    st1 = load_state(cfg, store=Store())
    p = st1.pins
    assert p.merge_based and st1.merge_base == u2 and p.frontier.sha == u2
    assert p.days_behind == 4.0                          # upstream tip u4 (day 6) − frontier u2 (day 2)
    assert p.isolated == (u4,) and st1.ledger.by_sha[u4].disposition is D.PICKED
    assert p.holes == (u1,) and p.backlog == 1 and p.backlog_by_disposition == {"REVERTED": 1}
    # upstream reverts u1 itself; the fork merges it: u4's merge is clean, u1 is gone upstream too
    up.revert(u1, when=T0 + 8 * DAY)
    fork.git("fetch", "-q", "upstream")
    fork.merge("upstream/main", when=T0 + 9 * DAY)
    st2 = load_state(cfg, store=Store())
    assert st2.pins.merge_based and st2.pins.days_behind == 0.0
    assert st2.pins.holes == () and st2.pins.backlog == 0 and st2.pins.isolated == ()
    # u4's "-x" line now names an upstream commit before the range: not dangling; a made-up one is
    assert st2.ledger.unresolved == ()
    fork.commit("Local pick\n\n(cherry picked from commit " + "7" * 40 + ")", {"g.txt": "g\n"}, when=T0 + 10 * DAY)
    assert load_state(cfg, store=Store()).ledger.unresolved == (("7" * 40, fork.head(), "cherry-picked-from"),)


def test_a_hole_behind_the_merge_holds_the_contiguous_pin(tmp_path):
    """The contiguous pin is the newest commit with every commit up to it handled: a merged
    upstream commit the fork reverted holds it (on the Intel fork #2977, out since 2024-01, not
    the first pending commit past the last merge), as a PENDING commit holds it on a pick fork."""
    from bot.demo.repobuilder import RepoBuilder
    up = RepoBuilder.init(tmp_path / "up")
    u0 = up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.commit("Fork feature (#500)", {"f.txt": "f\n"}, when=T0 + DAY // 2)
    u1 = up.commit("One (#11)", {"b.txt": "b\n"}, when=T0 + DAY)
    up.commit("Two (#12)", {"c.txt": "c\n"}, when=T0 + 2 * DAY)
    fork.add_remote("upstream", up.path)
    fork.merge("upstream/main", when=T0 + 3 * DAY)
    fork.revert(u1, when=T0 + 4 * DAY)
    up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 5 * DAY)
    cfg = load_config(None, {"upstream.url": str(up.path), "fork.url": str(fork.path)})
    cfg = cfg.model_copy(update={"cache_dir": str(tmp_path / "cache")})
    p = load_state(cfg, store=Store()).pins
    assert p.holes == (u1,) and p.days_behind == 3.0
    assert p.contiguous.sha == u0 and p.contiguous_lag_days == 5.0
    assert (p.holder.sha, p.holder.pr, p.holder_disposition) == (u1, 11, "REVERTED")
